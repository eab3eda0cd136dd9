"""The library of profiles: which folders and files are read, the names in them, and lookup.

Built-in profiles, then ``$MATHHAMMER_PROFILES``, then ``--profiles`` folders; every unit name
and alias names one profile across all of them, and every ``attached`` leader name one
CHARACTER unit; :class:`Library` finds a unit or weapon by alias, name or unique substring.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ProfileError
from ..model import Unit, Weapon
from ._yaml import _decode, _parse_yaml, _read_bytes, _show
from .cache import _entry_for, _read_entry, _write_entry
from .schema import _key, _units

ENV_VAR = "MATHHAMMER_PROFILES"


def load_file(path: Path, label: str | None = None) -> list[Unit]:
    """Load one profile file. ``label`` is how the file is named in errors (default: the path).

    Raises:
        ProfileError: naming the file (and the YAML path and value where there is one).
    """
    file = label or str(path)
    units = _units(_parse_yaml(_decode(_read_bytes(path, file), file), file), file)
    _check_unique([(u, file, i) for i, u in enumerate(units)])
    return units


def builtin_dirs() -> list[Path]:
    """The reference profiles: the wheel's data package, or profiles/ of a source checkout."""
    import importlib.util  # not importlib.resources: its import costs a start-up ~7 ms

    try:
        spec = importlib.util.find_spec("mathhammer.builtin_profiles")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return [Path(next(iter(spec.submodule_search_locations)))]
    return [Path(__file__).resolve().parents[2] / "profiles"]  # mathhammer/profiles/library.py -> root


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    aliases: tuple[str, ...]
    obj: Any
    label: str


class Library:
    """Every unit and weapon known, with case-insensitive lookup by alias, name or unique substring."""

    def __init__(self, units: Sequence[Unit]) -> None:
        self.units = tuple(units)
        self.weapons = tuple(w for u in self.units for w in u.weapons)

    def _entries(self, kind: str) -> list[_Entry]:
        if kind == "unit":
            return [_Entry(u.name, u.aliases, u, u.name) for u in self.units]
        return [_Entry(w.name, w.aliases, w, f"{w.unit}: {w.name}") for w in self.weapons]

    def find(self, query: str, kind: str, *, substring: bool = True) -> Any:
        """Find one unit or weapon. Declared aliases win over names, names over unique substrings;
        ``UNIT/WEAPON`` (or ``UNIT:WEAPON``) picks a weapon of one unit. With ``substring=False``
        only aliases and whole names match, and ``None`` is returned when nothing does.

        Raises:
            ProfileError: unknown (with the three closest names) or ambiguous (with the candidates).
        """
        q = " ".join(query.lower().split())
        if kind == "weapon" and ("/" in q or ":" in q):
            unit_q, _, weapon_q = q.replace(":", "/").partition("/")
            if not unit_q.strip() or not weapon_q.strip():
                raise ProfileError("expected UNIT/WEAPON, with both parts", where=kind, value=query,
                                   hint="e.g. hammerhead/railgun")
            unit = self.find(unit_q, "unit")
            return Library([unit]).find(weapon_q, "weapon")
        entries = self._entries(kind)
        tests: list[Callable[[_Entry], bool]] = [lambda e: q in (a.lower() for a in e.aliases),
                                                 lambda e: e.name.lower() == q]
        if substring:
            tests.append(lambda e: q in e.name.lower() or any(q in a.lower() for a in e.aliases))
        for test in tests:
            hits = [e for e in entries if test(e)]
            if hits:
                distinct = _distinct(hits)
                if len(distinct) == 1:
                    return distinct[0].obj
                shown = ", ".join(sorted(e.label for e in distinct)[:8]) + (", …" if len(distinct) > 8 else "")
                raise ProfileError(f"ambiguous {kind} name, matches {len(distinct)}: {shown}", where=kind, value=query,
                                   hint="type more of the name" + (", or UNIT/WEAPON" if kind == "weapon" else ""))
        if not substring:
            return None
        raise self.unknown(query, (kind,))

    def find_any(self, query: str) -> Unit | Weapon:
        """A unit or a weapon: whole names and aliases first (units before weapons), then unique
        parts of a unit's name, then of a weapon's.

        Raises:
            ProfileError: ambiguous (with the candidates) or unknown as either kind.
        """
        found = self.find(query, "unit", substring=False) or self.find(query, "weapon", substring=False)
        if found is not None:
            return found  # type: ignore[no-any-return]
        for kind in ("unit", "weapon"):
            try:
                return self.find(query, kind)  # type: ignore[no-any-return]
            except ProfileError as e:
                if not e.what.startswith("unknown"):
                    raise  # ambiguous: the candidates help more than "unknown"
        raise self.unknown(query, ("unit", "weapon"))

    def unknown(self, query: str, kinds: tuple[str, ...]) -> ProfileError:
        """The error for a name that matches nothing, with the three closest names."""
        import difflib

        q = " ".join(query.lower().split())
        lower = {n.lower(): n for kind in kinds for e in self._entries(kind) for n in (e.name, *e.aliases)}
        close = difflib.get_close_matches(q, sorted(lower), n=3, cutoff=0.4)
        kind = " or ".join(kinds)
        hint = f"did you mean {', '.join(repr(lower[c]) for c in close)}?" if close else \
            f"`mathhammer profiles list --kind {kinds[0]}` lists them"
        return ProfileError(f"unknown {kind}", where=kinds[0], value=query, hint=hint)

    def unit_named(self, name: str) -> Unit | None:
        """The unit with exactly this name."""
        return next((u for u in self.units if u.name == name), None)


def _distinct(hits: list[_Entry]) -> list[_Entry]:
    """Identical profiles found under one name in several units (e.g. a Meltagun) count once."""
    seen: dict[Any, _Entry] = {}
    for e in hits:
        key = (e.obj.name.lower(), _stats(e.obj)) if isinstance(e.obj, Weapon) else id(e.obj)
        seen.setdefault(key, e)
    return list(seen.values())


def _stats(w: Weapon) -> tuple[object, ...]:
    return (w.attacks, w.skill, w.strength, w.ap, w.damage, w.range_inches, frozenset(map(str, w.abilities)))


def _check_unique(found: Sequence[tuple[Unit, str, int]]) -> None:
    """Every unit name and every alias names one profile across all loaded files.

    ``found`` is (unit, file, index in the file's ``units``). Unit names and unit aliases may not
    repeat; weapon aliases may repeat only on identical weapons (a Meltagun carried by several
    units). A weapon's *name* may repeat: ``UNIT/WEAPON`` tells them apart.

    Raises:
        ProfileError: at the second place, naming the first.
    """
    names: dict[str, str] = {}
    unit_aliases: dict[str, str] = {}
    weapon_aliases: dict[str, tuple[object, str]] = {}
    for unit, file, i in found:
        here = f"{file}: units[{i}]"
        _claim(names, _key(unit.name), f"{here}.name", "unit name", unit.name)
        own: set[str] = set()
        for k, alias in enumerate(unit.aliases):
            if _key(alias) not in own:
                own.add(_key(alias))
                _claim(unit_aliases, _key(alias), f"{here}.aliases[{k}]", "unit alias", alias)
        for j, w in enumerate(unit.weapons):
            same = (_key(w.name), _stats(w))
            for k, alias in enumerate(w.aliases):
                place = f"{here}.weapons[{j}].aliases[{k}]"
                first = weapon_aliases.setdefault(_key(alias), (same, place))
                if first[0] != same:
                    raise _duplicate("weapon alias", alias, place, first[1])


def _claim(seen: dict[str, str], key: str, place: str, what: str, value: str) -> None:
    first = seen.setdefault(key, place)
    if first != place:
        raise _duplicate(what, value, place, first)


def _duplicate(what: str, value: str, place: str, first: str) -> ProfileError:
    return ProfileError(f"duplicate {what}, also given at {first}", where=place, value=_show(value),
                        hint="names and aliases must be unique across all profile folders: rename or remove one")


def load_library(extra_dirs: Sequence[Path] = (), *, use_env: bool = True) -> Library:
    """Built-in profiles, then ``$MATHHAMMER_PROFILES`` (os.pathsep-separated), then ``extra_dirs``.

    A folder (or file) reached twice, by the same path or another (a symlink), is read once.
    Files whose names start with ``.`` (editor back-ups and lock files) are skipped. The checked
    units are cached (see :func:`.cache._read_entry`): a start with unchanged files parses no YAML.

    Raises:
        ProfileError: a missing folder, any error in any file, a name given twice, or an
            ``attached`` name that does not find one CHARACTER unit.
    """
    files = [(label, _read_bytes(path, label)) for path, label in _library_files(extra_dirs, use_env)]
    entry, key = _entry_for(raw for _, raw in files)
    units = _read_entry(entry, key)
    if units is None:
        found: list[tuple[Unit, str, int]] = []
        for label, raw in files:
            found += [(u, label, i) for i, u in enumerate(_units(_parse_yaml(_decode(raw, label), label), label))]
        _check_unique(found)
        units = [u for u, _, _ in found]
        _check_attached(found, Library(units))
        _write_entry(entry, key, units)
    return Library(units)


def _check_attached(found: Sequence[tuple[Unit, str, int]], library: Library) -> None:
    """Every name in a unit's ``attached`` finds one CHARACTER unit of the library (as the command
    line looks units up), other than the unit itself and without leaders of its own, once.

    Raises:
        ProfileError: at ``FILE: units[i].attached[j]``, with what the name found or the candidates.
    """
    for unit, file, i in found:
        seen: set[int] = set()
        for j, name in enumerate(unit.attached):
            where = f"{file}: units[{i}].attached[{j}]"
            try:
                leader: Unit = library.find(name, "unit")
            except ProfileError as e:
                raise ProfileError(f"{e.what} (a leader attached to {unit.name!r})", where=where, value=_show(name),
                                   hint=e.hint) from None
            problem = ("is the unit itself" if leader is unit else
                       "is not a CHARACTER unit (only CHARACTER units lead other units)" if not leader.character else
                       "has leaders attached to it itself (attach every leader to the Bodyguard unit)"
                       if leader.attached else "is attached twice" if id(leader) in seen else "")
            if problem:
                raise ProfileError(f"the attached unit {leader.name!r} {problem}", where=where, value=_show(name))
            seen.add(id(leader))


def _library_files(extra_dirs: Sequence[Path], use_env: bool) -> list[tuple[Path, str]]:
    """(path, label) of every profile file to load, each folder and file once."""
    folders = [(d, "built-in profiles") for d in builtin_dirs()]
    if use_env and os.environ.get(ENV_VAR):
        folders += [(Path(p), ENV_VAR) for p in os.environ[ENV_VAR].split(os.pathsep) if p]
    folders += [(Path(d), "--profiles") for d in extra_dirs]
    seen: set[tuple[int, int]] = set()
    files: list[tuple[Path, str]] = []
    for n, (folder, origin) in enumerate(folders):
        try:
            st = os.stat(folder)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            raise ProfileError("not a folder", where=origin, value=str(folder))
        for path in _profile_files(folder, origin) if (st.st_dev, st.st_ino) not in seen else ():
            try:
                fst = os.stat(path)
            except OSError:  # a dangling link: reading it reports the error, naming the file
                fst = None
            if fst is None or (fst.st_dev, fst.st_ino) not in seen:
                files.append((path, f"profiles/{path.name}" if n == 0 else str(path)))
                seen.add((fst.st_dev, fst.st_ino) if fst else (-1, len(files)))
        seen.add((st.st_dev, st.st_ino))
    return files


def _profile_files(folder: Path, origin: str) -> list[Path]:
    """``*.yaml`` then ``*.yml`` in ``folder``, each sorted, without hidden files."""
    try:
        names = [e.name for e in os.scandir(folder)]
    except OSError as e:
        raise ProfileError(f"cannot list the folder: {e.strerror or e}", where=origin, value=str(folder)) from None
    visible = [name for name in names if not name.startswith(".")]
    return [folder / name for ext in (".yaml", ".yml") for name in sorted(n for n in visible if n.endswith(ext))]
