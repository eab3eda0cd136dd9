"""Sweeps: one attack against every Toughness x Save in a grid (``mathhammer sweep``).

Each cell of the grid is an inline target, ``T5 SV3+ W3 MODELS1 INV4+`` (``SV-``: no armour
save, the 7+ column), so a cell is exactly what ``mathhammer shoot WEAPON -t 'T5 SV3+ W3
MODELS1 INV4+'`` computes: with a seed, each cell runs with a seed of its own derived from
the sweep's seed and the cell's target text (:func:`cell_seed`), and the record of the cell
carries both seeds, so any cell can be re-run alone and gives the same numbers.

Cells run side by side (:func:`mathhammer.batch.run_many`); what a cell gives does not depend
on how many run at once, and :func:`iter_cells` hands them back in grid order (Toughness by
Toughness, each Save from best to none), so outputs are the same byte for byte.
"""

from __future__ import annotations

import hashlib
import numbers
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .choices import DEFAULT_SAVES, DEFAULT_TOUGHNESS, DEFAULT_TRIALS, Metric
from .errors import InputError, MathhammerError, ProfileError
from .limits import MAX_ATTACKING_MODELS, MAX_CHARACTERISTIC, MAX_TARGET_MODELS, MAX_WOUNDS, check_count, whole
from .model import Method
from .render.records import stat_columns

if TYPE_CHECKING:  # numpy and the engines stay out of what --help imports
    from .batch import Task
    from .profiles import Library
    from .result import DamageResult, RowsHook

__all__ = ["COLUMNS", "DEFAULT_SAVES", "DEFAULT_TOUGHNESS", "DEFAULT_TRIALS", "NO_SAVE", "SCHEMA", "Cell", "Grid",
           "Metric", "Sweep", "SweepPlan", "cell_seed", "iter_cells", "parse_saves", "parse_toughness", "plan_sweep",
           "record", "run_sweep", "save_label", "warnings_of"]

SCHEMA = "mathhammer.sweep/1"
#: The Save value of "no armour save" (``SV-`` inline; 7+ only succeeds with a net +1).
NO_SAVE = 7
#: An exact sweep whose cells would all take less than this, at the pace of the first one, runs
#: them one after another: starting worker processes and sending results back costs more
#: (measured in benchmarks/bench_sweep.py: 84 cells of ~2 ms, 0.19 s serial, 0.32 s on two).
_SERIAL_SECONDS = 0.5


def save_label(save: int) -> str:
    """``Sv3+``; ``Sv -`` for no armour save."""
    return "Sv -" if save == NO_SAVE else f"Sv{save}+"


# -- axes --------------------------------------------------------------------------------------

_ITEM = re.compile(r"([0-9]+)\+?(?:\s*-\s*([0-9]+)\+?)?", re.ASCII)


def _values(text: str | int | Sequence[int], *, option: str, lo: int, hi: int, what: str,
            no_save: bool = False) -> tuple[int, ...]:
    """The values a range text spells: ``3-12``, ``4``, ``3,5,8`` or a mix (``1-3,8``), in
    increasing order; with ``no_save`` a lone ``-`` is 7 and ``3+`` reads as 3.

    Raises:
        InputError: an empty text, an item that is neither a number nor a range, a range that
            goes down, a value outside ``lo..hi``, a value given twice.
    """
    if isinstance(text, bool) or not isinstance(text, (numbers.Integral, str, Iterable)) or isinstance(text, bytes):
        raise InputError("expected a range like 3-12, a number or a list like 3,5,8", where=option, value=text)
    if isinstance(text, numbers.Integral):
        items: list[str] = [str(int(text))]
    elif isinstance(text, str):
        items = [part.strip() for part in text.split(",")]
    else:
        items = [str(v) for v in text]
    example = "2-6, 3, 2,4,- (- is no armour save)" if no_save else "3-12, 4 or 3,5,8"
    if not any(items):
        raise InputError("empty: give a range, a number or a list", where=option, value=str(text),
                         hint=f"e.g. {example}")
    out: list[int] = []
    for item in items:
        if no_save and item == "-":
            out.append(NO_SAVE)
            continue
        m = _ITEM.fullmatch(item)
        if m is None or (not no_save and "+" in item):
            raise InputError("expected a range like 3-12, a number or a list like 3,5,8", where=option, value=item,
                             hint=f"e.g. {example}")
        first = int(m[1]) if len(m[1]) < 6 else hi + 1
        last = first if m[2] is None else (int(m[2]) if len(m[2]) < 6 else hi + 1)
        if last < first:
            raise InputError("a range must go up", where=option, value=item, hint=f"write {last}-{first}")
        for v in (first, last):
            if not lo <= v <= hi:
                raise InputError(f"{what} must be from {lo} to {hi}", where=option, value=item)
        out.extend(range(first, last + 1))
    twice = sorted({v for v in out if out.count(v) > 1})
    if twice:
        raise InputError("a value is listed twice", where=option, value=",".join(str(v) for v in twice))
    return tuple(sorted(out))


def parse_toughness(text: str | int | Sequence[int]) -> tuple[int, ...]:
    """Toughness values: ``3-12``, ``4``, ``3,5,8`` (1 to 100), or the numbers themselves."""
    return _values(text, option="--toughness", lo=1, hi=MAX_CHARACTERISTIC, what="Toughness")


def parse_saves(text: str | int | Sequence[int]) -> tuple[int, ...]:
    """Save values: ``2-6``, ``3+``, ``2,4,-`` (2 to 7; ``-`` or 7 is no armour save)."""
    return _values(text, option="--save", lo=2, hi=NO_SAVE, what="Save", no_save=True)


def _whole(value: Any, lo: int, hi: int) -> int | None:
    """``value`` as a Python int when it is a whole number (numpy's integers too, not a bool) in
    ``lo..hi``, else None."""
    number = whole(value)
    return number if number is not None and lo <= number <= hi else None


def _defence(value: int | None, option: str) -> int | None:
    """An invulnerable save or Feel No Pain: 2 to 6 (``4`` means 4+), or None."""
    if value is None:
        return None
    number = _whole(value, 2, 6)
    if number is None:
        raise InputError("must be 2 to 6 (a 4+ save is 4)", where=option, value=value)
    return number


def _count(value: int, option: str, hi: int) -> int:
    number = _whole(value, 1, hi)
    if number is None:
        raise InputError(f"must be a whole number from 1 to {hi:,}", where=option, value=value)
    return number


_KEYWORD = re.compile(r"[A-Za-z0-9' -]+", re.ASCII)


def _keyword(word: str) -> str:
    """A keyword or ability for the inline target's brackets; the notation's separators (which
    would change what the target is) are refused here, the words themselves by the notation."""
    text = word.strip() if isinstance(word, str) else ""
    if not _KEYWORD.fullmatch(text):
        raise InputError("a keyword is letters, digits, spaces, ' and -", where="--keyword", value=word,
                         hint="one keyword per --keyword, e.g. --keyword VEHICLE --keyword STEALTH")
    from .notation import parse_target

    try:  # the notation's own check of the words, said of --keyword rather than of a cell's target
        parse_target(f"T1 SV7+ W1 [{text}]")
    except ProfileError as e:
        raise ProfileError(e.what, where="--keyword", value=word, hint=e.hint) from None
    return text.upper()


@dataclass(frozen=True, slots=True, kw_only=True)
class Grid:
    """The targets of a sweep: every Toughness x Save, all with the same invulnerable save,
    Feel No Pain, Wounds, models and keywords. ``wounds_given`` is false when Wounds was
    chosen for the attack (enough that no damage is lost, see :func:`plan_sweep`)."""

    toughness: tuple[int, ...]
    saves: tuple[int, ...]
    wounds: int
    models: int = 1
    invulnerable: int | None = None
    feel_no_pain: int | None = None
    keywords: tuple[str, ...] = ()
    wounds_given: bool = True

    def target(self, toughness: int, save: int) -> str:
        """The cell's inline target, as ``shoot --target`` takes it: ``T5 SV3+ W3 MODELS1``."""
        text = f"T{toughness} SV{'-' if save == NO_SAVE else f'{save}+'} W{self.wounds} MODELS{self.models}"
        if self.invulnerable is not None:
            text += f" INV{self.invulnerable}+"
        if self.feel_no_pain is not None:
            text += f" FNP{self.feel_no_pain}+"
        if self.keywords:
            text += f" [{', '.join(self.keywords)}]"
        return text

    def cells(self) -> list[tuple[int, int]]:
        """(toughness, save) in grid order: by Toughness, then Save."""
        return [(t, sv) for t in self.toughness for sv in self.saves]


def cell_seed(seed: int, target: str) -> int:
    """The seed of the cell whose inline target is ``target`` in a sweep run with ``seed``: a
    stable hash (BLAKE2b) of both, 63 bits like every seed. It depends on nothing else (not on
    the other cells, their number or order, nor the machine), so a cell is reproducible alone:
    ``mathhammer shoot WEAPON -t TARGET --seed <cell seed>``."""
    digest = hashlib.blake2b(f"{SCHEMA}\x00{seed}\x00{target}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


# -- planning and running ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPlan:
    """A sweep ready to run: every cell's attack built (so bad input fails before any output),
    with its seed. ``seed`` is the sweep's (None when exact); ``tasks`` follow ``grid.cells()``."""

    weapons: tuple[str, ...]
    grid: Grid
    metric: Metric
    method: Method
    trials: int
    seed: int | None
    melee: bool
    tasks: tuple[Task, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One cell's result and the metric's value (and its standard error, 0 when exact), with
    the run's warnings and whether Monte Carlo and the exact engine agreed (None unless both
    ran). ``result`` is None in a cell that :meth:`without_result` made."""

    toughness: int
    save: int
    target: str
    result: DamageResult | None
    value: float
    sem: float | None
    warnings: tuple[str, ...] = ()
    agrees: bool | None = None

    def without_result(self) -> Cell:
        """This cell without its result: what a table or a picture of the sweep needs. A cell's
        distributions can take megabytes (a target of 1,000 models of W1,000), so a caller that
        has written them out keeps hundreds of cells this way, not their results."""
        return replace(self, result=None)


def plan_sweep(weapons: str | Sequence[str], *, toughness: str | int | Sequence[int] = DEFAULT_TOUGHNESS,
               save: str | int | Sequence[int] = DEFAULT_SAVES, invulnerable: int | None = None,
               feel_no_pain: int | None = None, wounds: int | None = None, models: int = 1,
               keywords: Sequence[str] = (), metric: Metric | str = Metric.MEAN,
               method: Method | str = Method.MONTE_CARLO, trials: int = DEFAULT_TRIALS, seed: int | None = None,
               melee: bool = False, firing_models: int = 1, only: Sequence[str] = (), exclude: Sequence[str] = (),
               lib: Library | None = None, **situation: Any) -> SweepPlan:
    """Check the options and build every cell's attack.

    Args:
        weapons: what :func:`mathhammer.api.build` takes (names, units, inline, ``Nx`` counts).
        toughness, save: the axes (see :func:`parse_toughness`, :func:`parse_saves`).
        invulnerable, feel_no_pain: 2 to 6 (4 is a 4+), the same in every cell.
        wounds: each target model's Wounds. None: as many as the attack can deal at most (at
            most 1,000), so that no damage is lost and ``mean`` is the attack's whole damage;
            the ``models``, ``p-kill-model`` and ``p-destroy`` metrics need it given.
        models: models in each target unit.
        keywords: the targets' keywords and abilities (``VEHICLE``, ``STEALTH``...).
        metric: what the heat map shows.
        method, trials: as :func:`mathhammer.api.run_attack` (``trials`` per cell).
        seed: the sweep's seed (None draws one, unless exact); each cell derives its own.
        melee, firing_models, only, exclude, situation: as :func:`mathhammer.api.build`
            (``firing_models`` is its ``models``).
        lib: the profiles (default: :func:`mathhammer.api.library`).

    Raises:
        InputError: a bad axis, metric, count or seed; ProfileError, MatchupError as ``build``.
    """
    from .api import build, enum_value, library
    from .batch import Task
    from .engine.montecarlo import check_seed, check_trials, draw_seed

    chosen_metric: Metric = enum_value(Metric, metric, "--metric")
    chosen_method: Method = enum_value(Method, method, "--method")
    check_trials(trials)
    trials = int(trials)  # numpy's integers too: the plan and its records hold Python ints
    check_seed(seed)  # (as every Monte Carlo run checks it)
    seed = None if seed is None else int(seed)
    if wounds is None and chosen_metric is not Metric.MEAN:
        raise InputError(f"{chosen_metric.value} needs the targets' Wounds", where="--metric",
                         value=chosen_metric.value, hint="give --wounds W, e.g. --wounds 3")
    if "target" in situation:  # build()'s own argument: each cell's target is the sweep's
        raise InputError("a sweep makes its own targets, one for each Toughness and Save", where="target",
                         value=situation["target"] if isinstance(situation["target"], str)
                         else type(situation["target"]).__name__,
                         hint="give toughness=, save=, wounds=, models=, invulnerable=, feel_no_pain=, keywords=")
    from .api import checked_library, checked_names

    keywords = checked_names(keywords, "--keyword")  # as only and exclude: one text, or a list of them
    grid = Grid(toughness=parse_toughness(toughness), saves=parse_saves(save),
                wounds=1 if wounds is None else _count(wounds, "--wounds", MAX_WOUNDS),
                models=_count(models, "--models", MAX_TARGET_MODELS),
                invulnerable=_defence(invulnerable, "--invuln"), feel_no_pain=_defence(feel_no_pain, "--fnp"),
                keywords=tuple(dict.fromkeys(_keyword(k) for k in keywords)), wounds_given=wounds is not None)
    lib = library() if lib is None else checked_library(lib)
    texts = checked_names(weapons, "weapons")
    if not texts:
        raise InputError("no weapon given", where="weapon", value="")
    if not isinstance(melee, bool):
        raise InputError("must be true or false", where="melee", value=melee)
    only, exclude = checked_names(only, "--only"), checked_names(exclude, "--except")
    firing_models = _count(firing_models, "--firing-models", MAX_ATTACKING_MODELS)  # api.build says --models
    options: dict[str, Any] = {"melee": melee, "models": firing_models, "only": tuple(only),
                               "exclude": tuple(exclude), **situation}

    def attack(t: int, sv: int) -> Any:
        return build(texts, grid.target(t, sv), lib=lib, **options)

    if wounds is None:
        first = grid.cells()[0]
        grid = _with_enough_wounds(grid, attack(*first))
    if chosen_method is Method.EXACT:
        seed = None
    elif seed is None:
        seed = draw_seed()
    # no stage histograms: a cell shows none, and without them a run is ~20% quicker (shoot
    # --no-stages with the cell's seed repeats it)
    tasks = tuple(Task(attack(t, sv), method=chosen_method, trials=trials, stages=False,
                       seed=None if seed is None else cell_seed(seed, grid.target(t, sv)), tag=(t, sv))
                  for t, sv in grid.cells())
    return SweepPlan(weapons=texts, grid=grid, metric=chosen_metric, method=chosen_method, trials=trials, seed=seed,
                     melee=melee, tasks=tasks)


def _with_enough_wounds(grid: Grid, attack: Any) -> Grid:
    """``grid`` with Wounds equal to the most damage the attack can deal (its damage stage's
    largest count: attacks, extra hits and the damage dice; what the target's Toughness and
    Save change is how often, not how much), at least 1.

    Raises:
        InputError: that is more than MAX_WOUNDS (a model's Wounds at most): ``--wounds`` is needed.
    """
    from dataclasses import replace

    from .codes import StageCount
    from .compile import compile_matchup

    compiled = compile_matchup(attack.matchup)
    inputs = compiled.unit if compiled.unit is not None else compiled.inputs
    most = inputs.stage_largest[StageCount.DAMAGE_AFTER_FNP]
    if most > MAX_WOUNDS:  # capping would lose damage while the caption says none is lost
        raise InputError(f"this attack can deal up to {most:,} damage, more than a model's {MAX_WOUNDS:,} wounds "
                         "at most, so no target holds it all", where="--wounds", value=None,
                         hint="give --wounds (each target model's Wounds)")
    return replace(grid, wounds=max(1, most))


def iter_cells(plan: SweepPlan, *, jobs: int | None = None) -> Iterator[Cell]:
    """Run the plan on ``jobs`` workers (default: every core) and yield the cells in grid order,
    each as soon as it and every cell before it are done. The first two cells run here; by default
    an exact sweep that would be quick at the second's pace runs the rest here too (never a Monte Carlo
    one: threads cost little). Which way they run changes nothing in the results.

    Raises:
        MathhammerError: the first cell that failed (the exact engine refusing it, say).
    """
    if not isinstance(plan, SweepPlan):
        raise InputError("must be what plan_sweep() returns", where="plan", value=type(plan).__name__)
    if jobs is not None:
        check_count(jobs, name="jobs", lo=1, hi=None, where="--jobs", error=InputError)
    return _cells(plan, jobs)


def _cells(plan: SweepPlan, jobs: int | None) -> Iterator[Cell]:
    """:func:`iter_cells` once its arguments are checked."""
    import time

    from .batch import run_many, run_task

    here = min(2, len(plan.tasks))  # the first run in a process also pays for imports: the second is timed
    seconds = 0.0
    for index in range(here):
        start = time.perf_counter()
        outcome = run_task(plan.tasks[index], threads=1)  # no kernel threads left behind: workers may fork
        seconds = time.perf_counter() - start
        yield _cell(plan, index, outcome)
    rest = plan.tasks[here:]
    if jobs is None and plan.method is Method.EXACT and seconds * len(rest) < _SERIAL_SECONDS:
        jobs = 1  # worker processes would cost more than they save
    done: dict[int, Cell] = {}
    upto = 0
    runs = run_many(rest, jobs=jobs)
    try:
        for index, outcome in runs:
            done[index] = _cell(plan, index + here, outcome)
            while upto in done:
                yield done.pop(upto)
                upto += 1
    finally:
        close = getattr(runs, "close", None)  # a generator: stop the workers when the caller stops
        if close is not None:
            close()


def _cell(plan: SweepPlan, index: int, outcome: DamageResult | MathhammerError) -> Cell:
    """Cell ``index`` of the plan from its run's outcome (an error is raised)."""
    if isinstance(outcome, MathhammerError):
        raise outcome
    t, sv = plan.tasks[index].tag
    agreement = outcome.provenance.get("agreement")
    return Cell(toughness=t, save=sv, target=plan.grid.target(t, sv), result=outcome, value=plan.metric.of(outcome),
                sem=plan.metric.sem(outcome), warnings=tuple(outcome.provenance.get("warnings", [])),
                agrees=None if agreement is None else bool(agreement.agrees))


@dataclass(frozen=True, slots=True, kw_only=True)
class Sweep:
    """A finished sweep: its plan and every cell, in grid order."""

    plan: SweepPlan
    cells: tuple[Cell, ...]

    def cell(self, toughness: int, save: int) -> Cell:
        """The cell at (toughness, save).

        Raises:
            InputError: a Toughness or Save the grid does not have (naming those it has).
        """
        grid = self.plan.grid
        for value, axis, where in ((toughness, grid.toughness, "--toughness"), (save, grid.saves, "--save")):
            if value not in axis:
                raise InputError(f"not in the sweep (it has {', '.join(map(str, axis))})", where=where, value=value)
        return self.cells[grid.toughness.index(toughness) * len(grid.saves) + grid.saves.index(save)]

    def matrix(self) -> list[list[float]]:
        """The metric's values: one row per Toughness, one column per Save."""
        width = len(self.plan.grid.saves)
        return [[c.value for c in self.cells[i:i + width]] for i in range(0, len(self.cells), width)]


def run_sweep(weapons: str | Sequence[str], *, jobs: int | None = None, **options: Any) -> Sweep:
    """:func:`plan_sweep` then every cell (``jobs`` workers): the whole grid.

        >>> from mathhammer.sweep import run_sweep
        >>> s = run_sweep("A1 BS2+ S8 AP-2 D3", toughness="4-5", save="3,-", wounds=3, method="exact")
        >>> round(s.cell(4, 3).value, 4)  # hit 5/6 x wound 5/6 x unsaved 4/6 (5+ save) x 3 damage
        1.3889
    """
    plan = plan_sweep(weapons, **options)
    return Sweep(plan=plan, cells=tuple(iter_cells(plan, jobs=jobs)))


# -- records -----------------------------------------------------------------------------------

#: CSV columns (dotted paths into a record; the lists are written as JSON text).
COLUMNS: tuple[str, ...] = (
    "schema", "toughness", "save", "invulnerable", "feel_no_pain", "wounds", "models", "keywords", "target",
    "weapons", "metric", "value", "value_sem", "method", "trials", "seed", "sweep_seed",
    *stat_columns("damage"), *stat_columns("models_destroyed"),
    "p_destroy_unit", "agreement.agrees", "warnings",
)


def record(plan: SweepPlan, cell: Cell, rows: RowsHook | None = None) -> dict[str, Any]:
    """The ``mathhammer.sweep/1`` record of a cell: where it is (``toughness``, ``save`` with 7
    for no armour save, ``invulnerable``, ``feel_no_pain``, ``wounds``, ``models``,
    ``keywords``, ``target`` as ``shoot --target`` takes it), the metric and its value, how it
    was computed (``method``, ``trials``, the cell's ``seed`` and the ``sweep_seed``), and
    the ``damage``, ``models_destroyed`` and ``p_destroy_unit`` blocks of ``shoot``'s JSON.
    ``rows`` builds each ``distribution`` (:meth:`~mathhammer.result.Distribution.to_dict`; the
    command line writes them as JSON text, :func:`mathhammer.render.records.rows_json`, kept
    in blocks: ``rows_pieces``)."""
    r, grid = cell.result, plan.grid
    if r is None:
        raise ValueError("a cell without its result (Cell.without_result) has no record")
    agreement = r.provenance.get("agreement")
    return {
        "schema": SCHEMA,
        "toughness": cell.toughness,
        "save": cell.save,
        "invulnerable": grid.invulnerable,
        "feel_no_pain": grid.feel_no_pain,
        "wounds": grid.wounds,
        "models": grid.models,
        "keywords": list(grid.keywords),
        "target": cell.target,
        "weapons": list(plan.weapons),
        "metric": plan.metric.value,
        "value": cell.value,
        "value_sem": cell.sem,
        "method": r.method,
        "trials": r.trials,
        "seed": r.seed,
        "sweep_seed": plan.seed,
        "damage": r.damage.to_dict(rows),
        "models_destroyed": r.models_destroyed.to_dict(rows),
        "p_destroy_unit": r.p_destroy_unit(),
        "agreement": None if agreement is None else agreement.to_dict(),
        "warnings": list(r.provenance.get("warnings", [])),
    }


def warnings_of(cells: Sequence[Cell] | Mapping[Any, Cell]) -> list[str]:
    """Every distinct warning of the cells, in the order first met (a warning about the weapon
    would otherwise repeat once per cell)."""
    values = cells.values() if isinstance(cells, Mapping) else cells
    return list(dict.fromkeys(w for c in values for w in _warnings(c)))


def _warnings(cell: Cell) -> tuple[str, ...]:
    """A cell's warnings; a cell made by hand with its result only has them in the result."""
    if cell.warnings or cell.result is None:
        return cell.warnings
    return tuple(cell.result.provenance.get("warnings", []))
