"""Batch rows -> attacks -> records: the library side of ``mathhammer compare``.

A CSV file has a header row and one loadout per row::

    name,weapon,models,points,stationary
    Broadsides,2x heavy rail rifle & 2x twin plasma rifle,1,180,true
    Hammerhead,hammerhead railgun,,145,

``weapon`` (profile names or inline notation, several joined by `` & ``, each with an optional
``Nx`` count) or ``unit`` (units whose loadout fires; their points are the default) is required;
every other column is optional: ``name`` (the row's label), ``models``, ``points``, ``target``
(this row's own target), ``melee``, ``target_models``, ``wounds_left``, ``allocation``, ``only``,
``except`` and every situation or modifier named like the command-line options (``cover``,
``half_range`` or ``half-range``, ``hit_mod``, ``reroll_hits``...). An unknown column is an
error (a misspelt ``cover`` must not be ignored); a blank line (or one of empty cells only) is skipped.

Each (row, target) runs with its own seed, derived from the run's seed, the row's label and the
target (:func:`row_seed`), so a row's numbers do not depend on the other rows, their order or the
number of workers; ``mathhammer shoot ... --seed <row seed>`` repeats them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import sys
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, Any, TypeVar

from .api import BATTLE, SITUATION
from .choices import SortKey
from .errors import InputError, MathhammerError
from .limits import MAX_ATTACKING_MODELS, MAX_SHEET_BYTES, check_count
from .model import Allocation, Context, FtggWording, Method
from .render.records import stat_columns
from .result import RowsHook

__all__ = ["COLUMNS", "RECORD_COLUMNS", "SCHEMA", "Comparison", "Computed", "Failed", "Row", "Sheet", "SortKey",
           "check_targets", "disagrees", "line_of", "read_rows", "record", "row_seed", "row_warnings", "run_rows",
           "target_key"]

SCHEMA = "mathhammer.compare/1"

#: Situation and modifier columns: what the API takes (``firing_models`` is ``models``, ``melee`` its own).
_SITUATION = SITUATION
_DEFAULTS = Context()
#: Every column a file may have (hyphens read as underscores), and the names they stand for.
_ALIASES = {"stratagems": "stratagem", "ws_improve": "bs_improve", "exclude": "except", "label": "name",
            "weapons": "weapon", "units": "unit"}
COLUMNS: tuple[str, ...] = ("name", "weapon", "unit", "models", "points", "target", "melee", "target_models",
                            "wounds_left", "allocation", "only", "except", *_SITUATION, *BATTLE,
                            "embarked")
#: The CSV columns of a record (dotted paths), in order; the stat blocks as shoot's CSV has them.
RECORD_COLUMNS: tuple[str, ...] = (
    "schema", "row", "label", "target", "target_name", "weapons", "points", "seed", "compare_seed", "method", "trials",
    *stat_columns("damage"), *stat_columns("models_destroyed"), "p_destroy_unit",
    "per_100_points.damage", "per_100_points.models_destroyed", "stratagems", "agreement.agrees", "warnings")
_TRUE, _FALSE = {"true", "yes", "y", "1"}, {"false", "no", "n", "0"}
_WHOLE = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"\d+(\.\d+)?")


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the file, checked: ``line`` is where it ends in the file (the header is line
    1, so in a spreadsheet it is the row number); ``weapons`` what ``api.build`` fires;
    ``targets`` the row's own target (empty: the run's); ``options`` the other build keywords."""

    line: int
    label: str
    weapons: tuple[str, ...]
    points: float | None
    targets: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Sheet:
    """A file read: its good rows, the bad rows' errors (each naming its row and column), how
    many rows it had and how errors name it (``where``)."""

    rows: tuple[Row, ...]
    errors: tuple[MathhammerError, ...]
    read: int
    where: str


@dataclass(frozen=True, slots=True)
class Computed:
    """One (row, target) run: ``seed`` its own, ``compare_seed`` the run's it was derived from."""

    row: Row
    target: str
    seed: int | None
    result: Any  # DamageResult (kept untyped here: the result module imports numpy)
    compare_seed: int | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """One (row, target) that could not run, with the error naming the row."""

    row: Row
    target: str
    error: MathhammerError = field(compare=False)


def target_key(target: str) -> str:
    """A target as the seed sees it: case and runs of spaces do not matter."""
    return " ".join(target.lower().split())


def row_seed(seed: int, label: str, target: str) -> int:
    """The seed of one (row, target): the first 63 bits of SHA-256 of the run's seed, the row's
    label and the target (:func:`target_key`), joined by NUL bytes. Stable across versions,
    machines and Python's hash randomisation."""
    digest = hashlib.sha256(f"{seed}\0{label}\0{target_key(target)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def read_rows(source: str | Path | IO[str], *, lib: Any, name: str | None = None) -> Sheet:
    """Read and check a file: ``source`` is a path, ``-`` (stdin) or a text stream.

    A UTF-8 byte order mark (Excel writes one) and CRLF line ends are accepted; quoted fields
    may hold commas and line breaks. A row that cannot be used is an error in :attr:`Sheet.errors`
    (every row is read, so a caller may stop at the first or report them all).

    Raises:
        InputError: the file cannot be read, is empty, has no row after its header, is not
            comma-separated (tabs or semicolons: said so), or its header has an unknown, empty
            or duplicate column, or neither ``weapon`` nor ``unit``.
    """
    text, where = _text(source, name)
    lines = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next((cells for cells in lines if any(c.strip() for c in cells)), None)  # blank lines before it
        if header is None:
            raise InputError("the file is empty", where=where, hint="the first line names the columns: name,weapon,...")
        columns = _columns(header, where)
        rows: list[Row] = []
        errors: list[MathhammerError] = []
        labels: dict[str, int] = {}
        read = 0
        for cells in lines:
            if not any(c.strip() for c in cells):
                continue  # a blank line (or one of empty cells, as spreadsheets write at the end)
            read += 1
            try:
                row = _row(cells, columns, lines.line_num, where, lib)
                if row.label in labels:
                    raise _cell_error(where, lines.line_num, "name", row.label,
                                      f"the same label as row {labels[row.label]}",
                                      "labels name rows in the output and seed them: give each row its own name")
                labels[row.label] = row.line
                rows.append(row)
            except MathhammerError as e:
                errors.append(e)
    except csv.Error as e:
        raise InputError(f"not a readable CSV file: {e}", where=f"{where} line {lines.line_num}") from None
    if not read:
        raise InputError("no rows after the header", where=where, hint="add a row per loadout: e.g. 'railgun' "
                         "under the weapon column")
    return Sheet(tuple(rows), tuple(errors), read, where)


def _text(source: str | Path | IO[str], name: str | None) -> tuple[str, str]:
    """The file's text (without a UTF-8 BOM) and how errors name it; at most MAX_SHEET_BYTES
    are read (``/dev/zero`` is refused, not read until memory runs out)."""
    if not isinstance(source, (str, Path)):
        where = name or str(getattr(source, "name", "<stream>"))
        return _strip_bom(_capped(source.read(MAX_SHEET_BYTES + 1), where)), where
    if str(source) == "-":
        where = name or "<stdin>"
        stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
        data = stream.read(MAX_SHEET_BYTES + 1) if stream is not None else sys.stdin.read(MAX_SHEET_BYTES + 1).encode()
        return _decode(_capped(data, where), where), where
    where = name or str(source)
    try:
        with open(source, "rb") as f:
            data = f.read(MAX_SHEET_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read the file: {e.strerror or e}", where=where) from None
    return _decode(_capped(data, where), where), where


_T = TypeVar("_T", str, bytes)


def _capped(data: _T, where: str) -> _T:
    if len(data) > MAX_SHEET_BYTES:
        unit = "characters" if isinstance(data, str) else "bytes"
        raise InputError(f"larger than {MAX_SHEET_BYTES:,} {unit}: not a sheet of loadouts", where=where,
                         hint="a row per loadout; split a larger sheet into several files")
    return data


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", where=where,
                         hint="save the file as 'CSV UTF-8'") from None


def _strip_bom(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def _columns(header: list[str], where: str) -> list[str]:
    """The header's column names, checked (case, spaces and hyphens do not matter)."""
    joined = ",".join(header)
    if len(header) == 1 and "\t" in joined:
        raise InputError("the header has tabs and no commas: this looks like a TSV (tab-separated) file",
                         where=f"{where} line 1", hint="save it as CSV (comma-separated)")
    if len(header) == 1 and ";" in joined:
        raise InputError("the header has semicolons and no commas: this looks like a semicolon-separated file",
                         where=f"{where} line 1", hint="save it as CSV with commas between fields")
    names: list[str] = []
    for i, raw in enumerate(header, start=1):
        key = re.sub(r"[\s-]+", "_", raw.strip().lower())
        key = _ALIASES.get(key, key)
        if not key:
            raise InputError(f"column {i} has no name", where=f"{where} line 1", value=raw)
        if key not in COLUMNS:
            from difflib import get_close_matches

            close = get_close_matches(key, COLUMNS, n=1)
            raise InputError("unknown column", where=f"{where} line 1", value=raw.strip(),
                             hint=f"did you mean {close[0]!r}?" if close else "columns: " + ", ".join(COLUMNS))
        if key in names:
            raise InputError(f"duplicate column (columns {names.index(key) + 1} and {i})", where=f"{where} line 1",
                             value=raw.strip())
        names.append(key)
    if "weapon" not in names and "unit" not in names:
        raise InputError("no weapon or unit column", where=f"{where} line 1", value=joined,
                         hint="name the weapons in a 'weapon' column (or units in a 'unit' column)")
    return names


def _cell_error(where: str, line: int, column: str, value: Any, what: str, hint: str = "") -> InputError:
    return InputError(what, where=f"{where} row {line}, column {column}", value=value, hint=hint)


def _row(cells: list[str], columns: list[str], line: int, where: str, lib: Any) -> Row:
    """One row, every cell checked (the names it gives are resolved when it runs)."""
    if len(cells) != len(columns):
        more = len(cells) > len(columns)
        raise InputError(f"{len(cells)} fields, the header has {len(columns)}", where=f"{where} row {line}",
                         value=",".join(cells), hint="quote a field that holds a comma: \"A3, D2\"" if more else
                         "leave a field empty, but keep its comma")
    given = {c: v.strip() for c, v in zip(columns, cells, strict=True) if v.strip()}
    cell = _Cells(given, where, line)
    weapon, unit = given.get("weapon"), given.get("unit")
    if bool(weapon) == bool(unit):
        raise _cell_error(where, line, "weapon" if "weapon" in columns else "unit", weapon or unit or "",
                          "give a weapon or a unit" if not weapon else "give a weapon or a unit, not both")
    models = cell.whole("models", lo=1, hi=MAX_ATTACKING_MODELS) or 1
    points = cell.number("points")
    if unit:
        weapons, unit_points = _units(unit, lib, where, line)
        if points is None and unit_points is not None:
            points = unit_points * models
    else:
        weapons = _parts(weapon or "", "weapon", where, line)
    options: dict[str, Any] = {"models": models}
    for name in ("melee", *_SITUATION):
        value = cell.situation(name)
        if value is not None:
            options[name] = value
    for name in ("target_models", "wounds_left"):
        if name in given:
            options[name] = cell.whole(name, lo=None)
    if "allocation" in given:
        options["allocation"] = cell.choice("allocation", Allocation)
    for column, option in (("only", "only"), ("except", "exclude"), ("stratagem", "stratagem"),
                           ("embarked", "embarked")):
        if column in given:
            options[option] = _parts(given[column], column, where, line)
    for name in ("round", "range"):
        if name in given:
            options[name] = cell.whole(name, lo=None)
    for name in ("guided", "observer", "spotted", "markerlight", "trap"):
        if name in given:
            options[name] = cell.flag(name)
    if "detachment" in given:
        options["detachment"] = given["detachment"]
    if "ftgg" in given:
        options["ftgg"] = cell.choice("ftgg", FtggWording)
    targets = (given["target"],) if "target" in given else ()
    label = given.get("name") or " & ".join(weapons if weapon else (unit or "",))
    if not all(c.isprintable() or c.isspace() for c in label):  # an escape sequence would reach the terminal
        column = "name" if given.get("name") else "weapon" if weapon else "unit"
        raise _cell_error(where, line, column, label, "a label of printable characters only",
                          "a control character (such as ESC) in a label would be written to the terminal")
    return Row(line, " ".join(label.split()), weapons, points, targets, tuple(options.items()))


def _parts(text: str, column: str, where: str, line: int) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in re.split(r"\s+&\s+", f" {text} "))
    if not all(parts):
        raise _cell_error(where, line, column, text, "an empty name between ' & '")
    return parts


def _units(text: str, lib: Any, where: str, line: int) -> tuple[tuple[str, ...], float | None]:
    """The units of a ``unit`` cell (``2x broadside & hammerhead``) as texts ``api.build`` fires
    (each its profile's full name, so it cannot be read as a weapon), and their points (None
    when a unit has none)."""
    from .limits import MAX_ATTACKING_MODELS
    from .notation import split_count

    texts, total = [], 0
    known = True
    for part in _parts(text, "unit", where, line):
        try:
            count, body = split_count(part, what="unit count", hi=MAX_ATTACKING_MODELS, where="unit",
                                      error=InputError)
            unit = lib.find(body, "unit")
        except MathhammerError as e:
            raise InputError(e.what, where=f"{where} row {line}, column unit", value=part, hint=e.hint) from None
        n = 1 if count is None else count
        texts.append(f"{n}x {unit.name}")
        if unit.points is None:
            known = False
        else:
            total += unit.points * n
    return tuple(texts), (total if known else None)


def roster_rows(units: Sequence[Any], where: str) -> Sheet:
    """The rows ``compare --roster`` ranks: every roster unit that reached the engine (as
    :func:`mathhammer.api.with_rosters` names them), in the files' order, once for its shooting
    (if its loadout has a ranged weapon) and once for its fighting (a melee weapon), each at the
    points the roster lists for it (ruling M55)."""
    rows: list[Row] = []
    for unit in units:
        carried = {name for name, _ in unit.loadout()}
        kinds = {w.range_inches is None for w in unit.weapons if w.name in carried}
        for melee in (False, True):
            if melee in kinds:
                rows.append(Row(len(rows) + 1, f"{unit.name}: {'fight' if melee else 'shoot'}",
                                (f"1x {unit.name}",), unit.points, options=(("models", 1), ("melee", melee))))
    return Sheet(tuple(rows), (), len(rows), where)


class _Cells:
    """A row's non-empty cells, read as the kinds their columns hold."""

    def __init__(self, given: dict[str, str], where: str, line: int) -> None:
        self.given, self.where, self.line = given, where, line

    def _error(self, column: str, what: str, hint: str = "") -> InputError:
        return _cell_error(self.where, self.line, column, self.given[column], what, hint)

    def whole(self, column: str, *, lo: int | None, hi: int | None = None) -> int | None:
        text = self.given.get(column)
        if text is None:
            return None
        if not _WHOLE.fullmatch(text):
            raise self._error(column, "not a whole number")
        value = int(text)
        if lo is not None and value < lo:
            raise self._error(column, f"must be at least {lo}")
        if hi is not None and value > hi:
            raise self._error(column, f"must be at most {hi:,}")
        return value

    def number(self, column: str) -> float | None:
        text = self.given.get(column)
        if text is None:
            return None
        if not _NUMBER.fullmatch(text):
            raise self._error(column, "not a number of points", "a number such as 120, or leave it empty")
        value = float(text)
        return int(value) if value.is_integer() else value

    def choice(self, column: str, kind: type[Enum]) -> Any:
        try:
            return kind(self.given[column].lower())
        except ValueError:
            raise self._error(column, "not one of: " + ", ".join(str(m.value) for m in kind)) from None

    def flag(self, column: str) -> bool:
        text = self.given[column].lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise self._error(column, "not true or false", "true/false, yes/no or 1/0")

    def situation(self, column: str) -> Any:
        """A Context field's value: flag, whole number or choice (None: not given)."""
        if column not in self.given:
            return None
        default = False if column == "melee" else getattr(_DEFAULTS, column)
        if isinstance(default, Enum):
            return self.choice(column, type(default))
        if isinstance(default, bool):
            return self.flag(column)
        return self.whole(column, lo=None)


def _row_error(row: Row, target: str, e: MathhammerError, where: str) -> MathhammerError:
    """``e`` (from building or running the row) with the row named, and the column for the
    option it names (``--target-models`` is the ``target_models`` column): the same kind of error."""
    if e.where in ("--target", "target", ""):
        column = f"target {target!r}" if e.where else ""
    elif e.where.startswith("--"):
        column = e.where[2:].replace("-", "_")
    else:
        column = e.where
    place = f"{where} row {row.line}" + (f", {column}" if column else "")
    return type(e)(e.what, where=place, value=e.value, hint=e.hint)


def run_rows(rows: Sequence[Row], targets: Sequence[str], *, method: Method = Method.MONTE_CARLO,
             trials: int = 100_000, seed: int | None = None, jobs: int | None = None,
             profiles: Sequence[str | Path] = (), where: str = "file", rosters: Sequence[str | Path] = (),
             target_rosters: Sequence[str | Path] = ()) -> Generator[Computed | Failed, None, None]:
    """Run every row against its targets (its own ``target`` column, else ``targets``), yielding
    each (row, target) in file order, then target order, as soon as it and every one before it
    are done (so the output is the same whatever ``jobs`` is). ``seed``: the run's seed (each row's is
    :func:`row_seed`; None draws one for Monte Carlo); exact runs have no seed.

    Raises:
        InputError: a row without a target when ``targets`` is empty.
    """
    from .batch import Recipe, Task, run_many

    if method is not Method.EXACT and seed is None:
        from .engine.montecarlo import draw_seed

        seed = draw_seed()
    pairs: list[tuple[Row, str, int | None]] = []
    for row in rows:
        row_targets = row.targets or tuple(targets)
        if not row_targets:
            raise InputError("no target for this row", where=f"{where} row {row.line}",
                             hint="give --target, or a target column")
        for target in row_targets:
            pairs.append((row, target, None if seed is None or method is Method.EXACT
                          else row_seed(seed, row.label, target)))
    tasks = [Task(Recipe.of(row.weapons, target, dict(row.options), profiles, rosters, target_rosters), method=method,
                  trials=trials,
                  seed=s, stages=False, slim=True) for row, target, s in pairs]
    runs = run_many(tasks, jobs=jobs)
    done: dict[int, Computed | Failed] = {}
    upto = 0
    try:
        for i, outcome in runs:
            row, target, s = pairs[i]
            if isinstance(outcome, MathhammerError):
                done[i] = Failed(row, target, _row_error(row, target, outcome, where))
            else:
                done[i] = Computed(row, target, s, outcome, None if s is None else seed)
            while upto in done:
                yield done.pop(upto)
                upto += 1
    finally:
        runs.close()


def record(done: Computed, rows: RowsHook | None = None) -> dict[str, Any]:
    """The ``mathhammer.compare/1`` record of one (row, target): the row, its label, target,
    points and seed, then the ``damage``, ``models_destroyed`` and ``p_destroy_unit`` blocks of
    ``shoot``'s JSON, damage and models destroyed per 100 points (None without points), the
    stratagems used (with their CP) and the run's warnings. ``rows`` builds each
    ``distribution`` (:meth:`~mathhammer.result.Distribution.to_dict`; the command line writes
    them as JSON text, :func:`mathhammer.render.records.rows_json`, kept in blocks:
    ``rows_pieces``). ``agreement``: with method both, the Monte Carlo run checked against the
    exact one (shoot's ``agreement`` object); else None."""
    result = done.result
    prov = result.provenance
    # the blocks of DamageResult.to_dict (shoot's JSON), without its stage histograms: making
    # those cost more than an exact run
    doc = {"damage": result.damage.to_dict(rows), "models_destroyed": result.models_destroyed.to_dict(rows),
           "p_destroy_unit": result.p_destroy_unit(), "warnings": list(prov.get("warnings", []))}
    points = done.row.points
    per = None
    if points:
        per = {"damage": 100 * doc["damage"]["mean"] / points,
               "models_destroyed": 100 * doc["models_destroyed"]["mean"] / points}
    return {"schema": SCHEMA, "row": done.row.line, "label": done.row.label, "target": done.target,
            "target_name": prov["target"]["name"], "weapons": list(done.row.weapons), "points": points,
            "seed": done.seed, "compare_seed": done.compare_seed, "method": result.method, "trials": result.trials,
            "damage": doc["damage"],
            "models_destroyed": doc["models_destroyed"], "p_destroy_unit": doc["p_destroy_unit"],
            "per_100_points": per, "stratagems": list(prov.get("stratagems", [])),
            "agreement": None if (agreement := prov.get("agreement")) is None else agreement.to_dict(),
            "warnings": list(doc["warnings"])}


def row_warnings(runs: Sequence[Computed | Failed], where: str) -> list[str]:
    """The warnings of one row's runs (its targets, in order) for stderr: each distinct one once,
    in the order first met, after the row it comes from (``FILE row N: ``, as the row's errors
    name it) and, when some of the row's targets that ran did not give it, the targets that did
    (``FILE row N against 'knight': ``). A run that failed gives none (its error is said)."""
    ran = [done for done in runs if isinstance(done, Computed)]
    given: dict[str, list[str]] = {}
    for done in ran:
        for message in done.result.provenance.get("warnings", ()):
            targets = given.setdefault(message, [])
            if done.target not in targets:
                targets.append(done.target)
    lines = []
    for message, targets in given.items():
        against = "" if len(targets) == len(ran) else " against " + ", ".join(map(repr, targets))
        lines.append(f"{where} row {ran[0].row.line}{against}: {message}")
    return lines


def disagrees(done: Computed | Failed) -> bool:
    """A run with method both whose Monte Carlo estimate and exact figures disagree."""
    agreement = None if isinstance(done, Failed) else done.result.provenance.get("agreement")
    return agreement is not None and not agreement.agrees


def check_targets(targets: Sequence[str], rows: Sequence[Row], *, lib: Any, where: str
                  ) -> tuple[tuple[Row, ...], tuple[MathhammerError, ...]]:
    """Resolve each distinct target once, before any work: the rows whose own ``target`` is
    fine, and an error (naming the row) for each row whose own target is not.

    Raises:
        ProfileError, InputError, MatchupError: an unknown or malformed target in ``targets``
            (the ``--target`` options): nothing could run against it.
    """
    from .resolve import resolve_target_unit

    for target in dict.fromkeys(targets):
        resolve_target_unit(lib, target)
    seen: dict[str, MathhammerError | None] = {}
    good: list[Row] = []
    errors: list[MathhammerError] = []
    for row in rows:
        for target in row.targets:
            if target not in seen:
                try:
                    resolve_target_unit(lib, target)
                    seen[target] = None
                except MathhammerError as e:
                    seen[target] = e
        bad = next((seen[t] for t in row.targets if seen[t] is not None), None)
        if bad is None:
            good.append(row)
        else:
            errors.append(type(bad)(bad.what, where=f"{where} row {row.line}, column target", value=row.targets[0],
                                    hint=bad.hint))
    return tuple(good), tuple(errors)


class Comparison:
    """A whole ``compare`` run: the file read and checked, then each (row, target) as it finishes.

    Args:
        source: a path, ``-`` (stdin) or a text stream; ``name`` names it in errors.
        targets: the targets of every row without its own ``target``.
        keep_going: report every bad row (:attr:`errors` for rows that never ran, a
            :class:`Failed` for a run that failed) and run every good one; without it the first
            bad row raises its error.
        method, trials, seed, jobs, profiles: as :func:`run_rows`.

    Raises (without ``keep_going``, here or while iterating):
        MathhammerError: the first bad row's error (naming its row and column).
        InputError: whatever ``keep_going``, a file with no row after its header, or ``rosters``
            and no ``source`` with no unit to rank (none matched to a profile with a weapon).
    """

    def __init__(self, source: str | Path | IO[str] | None, targets: Sequence[str], *,
                 method: Method = Method.MONTE_CARLO, trials: int = 100_000, seed: int | None = None,
                 jobs: int | None = None, profiles: Sequence[str | Path] = (), keep_going: bool = False,
                 name: str | None = None, rosters: Sequence[str | Path] = (),
                 target_rosters: Sequence[str | Path] = ()) -> None:
        from .api import checked_names, enum_value, library, read_roster, with_rosters
        from .engine.montecarlo import check_seed, check_trials
        from .profiles import Layered

        if source is not None and not isinstance(source, (str, os.PathLike)) and not hasattr(source, "read"):
            raise InputError("must be a CSV file's path, '-' (stdin) or a text stream", where="FILE",
                             value=type(source).__name__)
        if isinstance(source, os.PathLike) and not isinstance(source, Path):
            source = Path(source)
        targets = checked_names(targets, "--target")  # one text is one target, not its letters
        method = enum_value(Method, method, "--method")  # said of the argument, not of a row
        check_trials(trials)
        trials = int(trials)  # numpy's integers too: the records hold Python ints
        check_seed(seed)  # as shoot --seed: a record's compare_seed is a whole number in this range
        seed = None if seed is None else int(seed)
        if jobs is not None:
            check_count(jobs, name="jobs", lo=1, hi=None, where="--jobs", error=InputError)
            jobs = int(jobs)
        if not isinstance(keep_going, bool):
            raise InputError("must be true or false", where="keep_going", value=keep_going)
        if seed is None and method is not Method.EXACT:
            from .engine.montecarlo import draw_seed

            seed = draw_seed()
        base = library(profiles)
        armies = [read_roster(p, lib=base) for p in rosters]
        lib = with_rosters(base, armies)
        if source is None:
            if not rosters:
                raise InputError("give a CSV file, or --roster to rank the units of a roster", where="compare")
            units = lib.roster_units if isinstance(lib, Layered) else ()
            sheet = roster_rows(units, " + ".join(army.file for army in armies))
        else:
            sheet = read_rows(source, lib=lib, name=name)
        #: units of the rosters that cannot be ranked (not matched to a profile), with the reason
        self.warnings = tuple(f"{army.file}: line {e.line}: {e.name}: not ranked: "
                              + ("; ".join(n.text for n in e.notes) or "not matched to a profile")
                              for army in armies for e in army.entries if e.unit is None) + tuple(
            f"{army.file}: line {lost[0].line}: {lost[0].text}"
            + (f" and {len(lost) - 1} more lines" if lost[1:] else "")
            + ": a unit there is not ranked (mathhammer roster show lists them)"
            for army in armies if (lost := army.not_understood()))
        if source is None and not sheet.rows:  # as a file with no row after its header: nothing to rank
            listed = sum(len(army.entries) for army in armies)
            raise InputError(f"no unit to rank: {listed} listed, none matched to a profile with a weapon",
                             where=sheet.where, hint=f"'mathhammer roster show {armies[0].file}' says why "
                             "each unit cannot be used")
        self.where = sheet.where
        kept: dict[str, str] = {}
        for t in targets:
            if target_key(t) in kept:  # ranked twice in one table, two records of one key: once is meant
                self.warnings += (f"--target {t!r} given more than once: compared once",)
            kept.setdefault(target_key(t), t)
        targets = tuple(kept.values())
        rows, target_errors = check_targets(targets, sheet.rows, lib=with_rosters(base, target_rosters),
                                            where=self.where)
        errors = sorted((*sheet.errors, *target_errors), key=line_of)
        if errors and not keep_going:
            raise errors[0]
        self.errors: tuple[MathhammerError, ...] = tuple(errors)
        self.rows, self.targets, self.read = rows, tuple(targets), sheet.read
        self.method, self.trials, self.seed, self.jobs = method, trials, seed, jobs
        self.profiles, self.keep_going = tuple(profiles), keep_going
        self.rosters, self.target_rosters = tuple(rosters), tuple(target_rosters)
        for row in rows:
            if not row.targets and not targets:
                raise InputError("no target for this row", where=f"{self.where} row {row.line}",
                                 hint="give --target, or a target column")
        self.total = sum(len(r.targets or self.targets) for r in rows)
        self._failed_rows: set[int] = set()
        self._row_runs: list[Computed | Failed] = []  # the runs so far of the row being run
        self._said: list[str] = []  # the warnings of the rows run whole, not yet taken

    def new_warnings(self) -> list[str]:
        """The warnings of the rows whose every target has run since the last call (none before
        then: a warning given for several targets of a row is one line, :func:`row_warnings`),
        for stderr; each record keeps its own run's under ``warnings``."""
        said, self._said = self._said, []
        return said

    def __iter__(self) -> Iterator[Computed | Failed]:
        runs = run_rows(self.rows, self.targets, method=self.method, trials=self.trials, seed=self.seed,
                        jobs=self.jobs, profiles=self.profiles, where=self.where, rosters=self.rosters,
                        target_rosters=self.target_rosters)
        self._row_runs = []
        try:
            for done in runs:
                self._row_runs.append(done)
                if isinstance(done, Failed):
                    if not self.keep_going:  # the row's earlier targets ran: their warnings are due
                        self._said += row_warnings(self._row_runs, self.where)
                        raise done.error
                    self._failed_rows.add(done.row.line)
                if len(self._row_runs) == len(done.row.targets or self.targets):  # the row's last target
                    self._said += row_warnings(self._row_runs, self.where)
                    self._row_runs = []
                yield done
        finally:
            runs.close()

    @property
    def failed(self) -> int:
        """Rows that could not be read or computed (so far)."""
        return len(self.errors) + len(self._failed_rows)

    def summary(self) -> str:
        """``rows read N, computed N, failed N``."""
        return f"compare: {self.read} rows read, {self.read - self.failed} computed, {self.failed} failed"


def line_of(e: MathhammerError) -> int:
    """The row an error names (``FILE row N[, column]``: the last such, as a file's name may hold
    one), 0 when it names none."""
    found = re.findall(r" row (\d+)", e.where)
    return int(found[-1]) if found else 0
