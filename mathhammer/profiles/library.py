"""The library of profiles: which folders and files are read, the names in them, and lookup.

Built-in profiles, then ``$MATHHAMMER_PROFILES``, then ``--profiles`` folders; every unit name
names one profile within its faction and every alias one across all of them, and every
``attached`` leader name one CHARACTER unit; :class:`Library` finds a unit or weapon by alias,
name or unique substring, within a faction when asked.
"""

from __future__ import annotations

import functools
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ProfileError
from ..model import Unit, Weapon
from ._yaml import _decode, _parse_yaml, _read_bytes, _show
from .cache import _entry_for, _read_entry, _write_entry
from .index import Index, StaleIndex, faction_key, name_key, weapon_stats
from .schema import _key, _units

_T = TypeVar("_T")

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
    return list(_builtin_dirs())


@functools.cache
def _builtin_dirs() -> tuple[Path, ...]:
    """:func:`builtin_dirs`, looked for once a process (35 us: every library loaded looks)."""
    import importlib.util  # not importlib.resources: its import costs a start-up ~7 ms

    try:
        spec = importlib.util.find_spec("mathhammer.builtin_profiles")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return (Path(next(iter(spec.submodule_search_locations))),)
    return (Path(__file__).resolve().parents[2] / "profiles",)  # mathhammer/profiles/library.py -> root


class Library:
    """Every unit and weapon known, with case-insensitive lookup by alias, name or unique substring,
    optionally qualified by faction (``FACTION/UNIT``, ``FACTION/UNIT/WEAPON``) or limited to one
    (:meth:`only`).

    Lookup reads names only; a unit is rebuilt from the cache when it is found (see
    :mod:`.index`). :attr:`units` and :attr:`weapons` build every unit in scope: for listings.
    """

    def __init__(self, units: Sequence[Unit]) -> None:
        self._index = Index.of(list(units))
        self._scope: frozenset[int] | None = None

    @classmethod
    def _of(cls, index: Index, scope: frozenset[int] | None = None) -> Library:
        lib = cls.__new__(cls)
        lib._index, lib._scope = index, scope
        return lib

    @property
    def units(self) -> tuple[Unit, ...]:
        """Every unit in scope, in the order of the files."""
        return _again(lambda: tuple(self._index.unit(i) for i in self._unit_ids()))

    @property
    def weapons(self) -> tuple[Weapon, ...]:
        """Every weapon of every unit in scope."""
        return tuple(w for u in self.units for w in u.weapons)

    @property
    def factions(self) -> tuple[str, ...]:
        """The factions of the units in scope, sorted."""
        factions = self._index.unit_faction
        found = {faction_key(factions[i]): factions[i] for i in self._unit_ids() if factions[i].strip()}
        return tuple(sorted(found.values(), key=faction_key))

    def only(self, faction: str) -> Library:
        """The units of one faction (named as :meth:`find` takes it: case, spacing and apostrophes
        ignored, e.g. ``tau empire``) and their weapons.

        Raises:
            ProfileError: no faction of that name (with the closest, or the list).
        """
        name = self._faction(faction)
        if name is None:
            import difflib

            known = self._index.factions()
            close = difflib.get_close_matches(faction_key(faction), sorted(known), n=3, cutoff=0.5)
            hint = (f"did you mean {', '.join(repr(known[c]) for c in close)}?" if close else
                    f"known: {', '.join(sorted(known.values(), key=faction_key)) or 'none (no unit names one)'}")
            raise ProfileError("unknown faction", where="--faction", value=faction, hint=hint)
        key = faction_key(name)
        members = self._index.of_faction(key)
        return Library._of(self._index, members if self._scope is None else members & self._scope)

    def find(self, query: str, kind: str, *, substring: bool = True, faction: str | None = None) -> Any:
        """Find one unit or weapon. Declared aliases win over names, names over unique substrings;
        ``UNIT/WEAPON`` (or ``UNIT:WEAPON``) picks a weapon of one unit, and a first part that is
        a faction's name limits the rest to that faction: ``FACTION/UNIT``, ``FACTION/WEAPON``,
        ``FACTION/UNIT/WEAPON``. ``faction`` does the same as an argument. With
        ``substring=False`` only aliases and whole names match, and ``None`` is returned when
        nothing does.

        Raises:
            ProfileError: unknown (with the three closest names) or ambiguous (with the
                candidates, faction-qualified when they are of several factions).
        """
        if faction is not None:
            return self.only(faction).find(query, kind, substring=substring)
        return _again(lambda: self._find(query, kind, substring))

    def _find(self, query: str, kind: str, substring: bool) -> Any:
        q = name_key(query)
        if "/" in q or ":" in q:
            whole = self._match(q, query, kind, False)  # a name with a slash: "... (Skyreaver w/ pistol)"
            if whole is not None:
                return whole
        parts = _parts(q)
        faction = self._faction(parts[0]) if len(parts) > 1 else None
        if faction is not None:
            rest = _parts(q.replace(":", "/").split("/", 1)[1], kind == "unit")
            if not all(rest) or len(rest) > (2 if kind == "weapon" else 1):
                shape = "FACTION/UNIT/WEAPON or FACTION/WEAPON" if kind == "weapon" else "FACTION/UNIT"
                raise ProfileError(f"expected {shape}, with every part", where=kind, value=query,
                                   hint="e.g. 'space marines/intercessor squad/bolt rifle'")
            scoped = self.only(faction)
            if len(rest) == 2:
                return scoped._unit_weapon(rest[0], rest[1])
            return scoped._find(rest[0], kind, substring)
        if kind == "weapon" and len(parts) > 1:
            if not all(parts) or len(parts) > 2:
                raise ProfileError("expected UNIT/WEAPON, with both parts", where=kind, value=query,
                                   hint="e.g. hammerhead/railgun")
            return self._unit_weapon(parts[0], parts[1])
        return self._match(q, query, kind, substring)

    def _unit_weapon(self, unit_q: str, weapon_q: str) -> Weapon:
        unit: Unit = self._find(unit_q, "unit", True)
        own = Library([unit])  # the weapon part is one name, slashes and all
        weapon: Weapon = _again(lambda: own._match(name_key(weapon_q), weapon_q, "weapon", True))
        return weapon

    def _match(self, q: str, query: str, kind: str, substring: bool) -> Any:
        """Aliases, then whole names, then (with ``substring``) parts of either, of the rows in scope.
        A query without a letter (``0``, ``-1``) is never a part of a name: numbers and dashes
        are pieces of many names ("AX-1-0 Tiger Shark") and say nothing about which is meant."""
        index = self._index
        partial = substring and any(c.isalpha() for c in q)
        stages = [index.aliased, index.named, *((index.containing,) if partial else ())]
        # a plural of a name ("armiger warglaives", as players write a unit of several) when the
        # name itself finds nothing
        for key in (q, q[:-1]) if partial and len(q) > 2 and q.endswith("s") else (q,):
            for stage in stages:
                hits = _current(index, kind, self._in_scope(kind, stage(kind, key)))
                if hits:
                    # identical profiles found under one name in several units (a Meltagun) count once
                    first: dict[object, int] = {}
                    for k in hits:
                        first.setdefault(index.weapon_profile[k] if kind == "weapon" else k, k)
                    if len(first) == 1:
                        k = next(iter(first.values()))
                        return index.unit(k) if kind == "unit" else index.weapon(k)
                    raise self._ambiguous(kind, query, hits)
        if not substring:
            return None
        raise self.unknown(query, (kind,))

    def _ambiguous(self, kind: str, query: str, hits: list[int]) -> ProfileError:
        """The error for a name that finds several profiles: the candidates, one per profile and
        faction (an identical Meltagun of two factions is listed under each, so every player sees
        their own faction's unit); with more than eight of several factions, each faction's first
        candidate and how many more it has."""
        index = self._index
        per: dict[tuple[object, str], int] = {}
        for k in hits:
            owner = k if kind == "unit" else index.weapon_unit[k]
            profile = index.weapon_profile[k] if kind == "weapon" else k
            per.setdefault((profile, faction_key(index.unit_faction[owner])), k)
        labels = sorted(self._labels(kind, list(per.values())), key=str.lower)
        factions: dict[str, list[str]] = {}
        for label in labels:
            head, slash, _ = label.partition("/")
            factions.setdefault(head if slash else "", []).append(label)
        qualified = len(factions) > 1
        if len(labels) <= 8 or not qualified:
            shown = ", ".join(labels[:8]) + (", …" if len(labels) > 8 else "")
            what = f"ambiguous {kind} name, matches {len(labels)}: {shown}"
        else:
            shown = ", ".join(group[0] + (f" (+{len(group) - 1} more)" if len(group) > 1 else "")
                              for group in factions.values())
            what = f"ambiguous {kind} name, matches {len(labels)} in {len(factions)} factions: {shown}"
        return ProfileError(what, where=kind, value=query,
                            hint="type more of the name" + (", or UNIT/WEAPON" if kind == "weapon" else "")
                            + (", or FACTION/..." if qualified else ""))

    def _in_scope(self, kind: str, rows: list[int]) -> list[int]:
        if self._scope is None:
            return rows
        owner = self._index.weapon_unit
        return [k for k in rows if (k if kind == "unit" else owner[k]) in self._scope]

    def _labels(self, kind: str, hits: list[int]) -> list[str]:
        """How candidates are named: ``Unit`` / ``Unit: Weapon``, with the faction in front
        (``Faction/Unit``, ``Faction/Unit/Weapon``) when they are of several factions."""
        index = self._index
        names = index.names()
        owners = [k if kind == "unit" else index.weapon_unit[k] for k in hits]
        qualify = len({faction_key(index.unit_faction[i]) for i in owners}) > 1
        out = []
        for k, i in zip(hits, owners, strict=True):
            unit, faction = names.names["unit"][i], index.unit_faction[i]
            head = f"{faction}/{unit}" if qualify and faction else unit
            weapon = names.names["weapon"][k] if kind == "weapon" else ""
            out.append(head if kind == "unit" else f"{head}/{weapon}" if qualify and faction else f"{unit}: {weapon}")
        return out

    def find_any(self, query: str) -> Unit | Weapon:
        """A unit or a weapon: whole names and aliases first (units before weapons), then unique
        parts of a unit's name, then of a weapon's.

        Raises:
            ProfileError: ambiguous (with the candidates) or unknown as either kind.
        """
        found = self.find(query, "unit", substring=False) or self.find(query, "weapon", substring=False)
        if found is not None:
            return found  # type: ignore[no-any-return]
        retired: Unit | None = None
        for kind in ("unit", "weapon"):
            try:
                hit = self.find(query, kind)
            except ProfileError as e:
                if not e.what.startswith("unknown"):
                    raise  # ambiguous: the candidates help more than "unknown"
                continue
            if kind == "unit" and any(mark in hit.name.lower() for mark in _RETIRED):
                retired = hit  # a Legends unit only when no weapon matches either (ruling M52)
                continue
            return hit  # type: ignore[no-any-return]
        if retired is not None:
            return retired
        raise self.unknown(query, ("unit", "weapon"))

    def unknown(self, query: str, kinds: tuple[str, ...]) -> ProfileError:
        """The error for a name that matches nothing, with the three closest names."""
        import difflib

        q = name_key(query)
        index = self._index
        lower: dict[str, str] = {}
        for kind in kinds:
            for k, name, aliases in index.scan(kind):
                if self._scope is None or (k if kind == "unit" else index.weapon_unit[k]) in self._scope:
                    lower.update((n.lower(), n) for n in (name, *aliases))
        close = difflib.get_close_matches(q, sorted(lower), n=3, cutoff=0.4)
        kind = " or ".join(kinds)
        hint = f"did you mean {', '.join(repr(lower[c]) for c in close)}?" if close else \
            f"`mathhammer profiles list --kind {kinds[0]}` lists them"
        return ProfileError(f"unknown {kind}", where=kinds[0], value=query, hint=hint)

    def unit_named(self, name: str) -> Unit | None:
        """The first unit in scope with exactly this name (names repeat across factions: for the
        unit that carries a weapon, :meth:`owner`)."""
        index = self._index
        return _again(lambda: next((index.unit(i) for i in self._in_scope("unit", index.named("unit", name_key(name)))
                                    if index.names().names["unit"][i] == name), None))

    def owner(self, weapon: Weapon) -> Unit | None:
        """The unit that carries this weapon (one found by this library), else the unit named as
        its ``unit``."""
        return self._index.owner(weapon) or (self.unit_named(weapon.unit) if weapon.unit else None)

    def _unit_ids(self) -> Iterable[int]:
        return range(self._index.n_units) if self._scope is None else sorted(self._scope)

    def _faction(self, text: str) -> str | None:
        """The faction ``text`` names (case, spacing and apostrophes ignored), or None."""
        return self._index.factions().get(faction_key(text))


class Layered(Library):
    """Units of one's own (a roster's) over a library: a name finds them first.

    Whole names and aliases are tried in the roster, then in the library, then unique parts of a
    name in the roster, then in the library; a unit the library finds is the roster's unit of the
    same name when there is one (a roster unit keeps its datasheet's name), so the library's
    aliases find the roster's units too (``crisis sunforge``), while ``knight`` stays the Knight
    Paladin when the roster holds only a "Knight Warden".
    """

    def __init__(self, top: Library, base: Library, notes: Mapping[str, tuple[str, ...]] | None = None, *,
                 unusable: Mapping[str, str] | None = None) -> None:
        self._top, self._base = top, base
        self._notes = dict(notes or {})
        #: units the roster lists but could not give (by :func:`unit_key`), and why: a name that
        #: finds one of them in the library only is an error, never the library's unit in its place
        self._unusable = dict(unusable or {})
        self._index, self._scope = base._index, base._scope  # for what a subclass does not override

    @property
    def roster_units(self) -> tuple[Unit, ...]:
        """The units over the library (a roster's), in their order."""
        return self._top.units

    def roster_notes(self, unit: Unit) -> tuple[str, ...]:
        """What the roster says about one of its units (wargear it cannot fire, profiles chosen)."""
        return self._notes.get(unit.name, ()) if self._top.unit_named(unit.name) is unit else ()

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._top.units + self._base.units

    @property
    def factions(self) -> tuple[str, ...]:
        both = {faction_key(f): f for f in (*self._base.factions, *self._top.factions)}
        return tuple(sorted(both.values(), key=faction_key))

    def only(self, faction: str) -> Library:
        try:
            base = self._base.only(faction)
        except ProfileError:
            base = None
        try:
            top = self._top.only(faction)
        except ProfileError:
            if base is None:
                raise
            return base
        return top if base is None else Layered(top, base, self._notes, unusable=self._unusable)

    def find(self, query: str, kind: str, *, substring: bool = True, faction: str | None = None) -> Any:
        if faction is not None:
            return self.only(faction).find(query, kind, substring=substring)
        found = _or_none(lambda: self._top.find(query, kind, substring=False))
        if found is None:
            found = self._own(_or_none(lambda: self._base.find(query, kind, substring=False)), kind)
        if found is not None or not substring:
            return found
        found = _or_none(lambda: self._top.find(query, kind))
        return found if found is not None else self._own(self._base.find(query, kind), kind)

    def _own(self, found: Any, kind: str) -> Any:
        """The roster's unit of the same name as the library's ``found`` (a roster unit keeps its
        datasheet's name), so that the library's aliases (``crisis sunforge``) find it too."""
        if found is None or kind not in ("unit", "weapon"):
            return found
        owner = found if kind == "unit" else self._base.owner(found)
        name = owner.name if owner is not None else ""
        mine = [u.name for u in self._top.units if u.name == name or u.name.startswith((f"{name} (", f"{name} ["))]
        if owner is not None and not mine and unit_key(name) in self._unusable:
            raise ProfileError(f"the roster's {name} cannot be used ({self._unusable[unit_key(name)]})", where=kind,
                               value=name, hint="fix the roster, or leave it out to use the library's profile")
        if kind != "unit":
            return found
        if len(mine) > 1:
            raise ProfileError(f"ambiguous unit name, the roster has {len(mine)}: {', '.join(mine)}", where="unit",
                               value=name, hint=f"name one, e.g. {mine[1]!r}")
        return self._top.unit_named(mine[0]) if mine else found

    def unknown(self, query: str, kinds: tuple[str, ...]) -> ProfileError:
        return self._base.unknown(query, kinds)

    def unit_named(self, name: str) -> Unit | None:
        return self._top.unit_named(name) or self._base.unit_named(name)

    def owner(self, weapon: Weapon) -> Unit | None:
        return self._top._index.owner(weapon) or self._base.owner(weapon)


def unit_key(name: str) -> str:
    """A unit's name as rosters and the library are compared: case and the apostrophe's spelling
    aside."""
    return " ".join(name.replace("\u2019", "'").lower().split())


def _or_none(lookup: Callable[[], Any]) -> Any:
    """``lookup()``, or None where it finds nothing (an ambiguous name is still an error)."""
    try:
        return lookup()
    except ProfileError as e:
        if e.what.startswith("unknown") or e.what.startswith("expected"):
            return None
        raise


#: Units kept for narrative play (BSData marks them in the name): a name that matches one of
#: them and a unit of today's datasheets means the latter.
_RETIRED = ("[legends]", "[crucible]")


def _current(index: Index, kind: str, hits: list[int]) -> list[int]:
    """``hits`` without those of Legends/Crucible units when any other is among them: such a unit
    (or its weapon) is found only by a name nothing else matches, or qualified (``UNIT/WEAPON``)."""
    if len(hits) < 2:
        return hits
    names = index.names().names["unit"]

    def retired(k: int) -> bool:
        name = names[k if kind == "unit" else index.weapon_unit[k]].lower()
        return any(mark in name for mark in _RETIRED)

    current = [k for k in hits if not retired(k)]
    return current or hits


def _parts(q: str, whole: bool = False) -> list[str]:
    """``q`` split at ``/`` (or ``:``) into at most UNIT and WEAPON: the weapon part keeps any
    further slash (BSData names hold some: "Shuriken Pistol (Skyreaver w/ pistol and blade)").
    ``whole``: one part (a unit name)."""
    if "/" not in q and ":" not in q:
        return [q]
    if whole:
        return [q.strip()]
    head, _, tail = q.replace(":", "/").partition("/")
    return [head.strip(), tail.strip()]


def _again(lookup: Callable[[], _T]) -> _T:
    """``lookup()``, once more if the cache entry proved damaged (:class:`.index.StaleIndex`): by
    then the index has been read again from the files."""
    try:
        return lookup()
    except StaleIndex:
        return lookup()


def _check_unique(found: Sequence[tuple[Unit, str, int]]) -> None:
    """Every unit name names one profile within its faction, and every alias one profile across
    all loaded files.

    ``found`` is (unit, file, index in the file's ``units``). A unit name may repeat only in
    another faction (``FACTION/UNIT`` tells them apart; a unit without a faction may share its
    name with none); unit aliases may not repeat; weapon aliases may repeat only on identical
    weapons (a Meltagun carried by several units). A weapon's *name* may repeat:
    ``UNIT/WEAPON`` tells them apart.

    Raises:
        ProfileError: at the second place, naming the first.
    """
    names: dict[str, dict[str, str]] = {}  # name -> faction -> place
    unit_aliases: dict[str, str] = {}
    weapon_aliases: dict[str, tuple[object, str]] = {}
    for unit, file, i in found:
        here = f"{file}: units[{i}]"
        factions = names.setdefault(_key(unit.name), {})
        faction = faction_key(unit.faction)
        clash = factions.get(faction) or (next(iter(factions.values()), None) if "" in factions or not faction
                                          else None)
        if clash is not None:
            raise _duplicate("unit name", unit.name, f"{here}.name", clash)
        factions[faction] = f"{here}.name"
        own: set[str] = set()
        for k, alias in enumerate(unit.aliases):
            if _key(alias) not in own:
                own.add(_key(alias))
                _claim(unit_aliases, _key(alias), f"{here}.aliases[{k}]", "unit alias", alias)
        for j, w in enumerate(unit.weapons):
            same = (_key(w.name), weapon_stats(w))
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
    Within a process (POSIX systems), a call finding the very files of the last load whose
    files had all settled (none changed in the 3 seconds before it), with the same sizes,
    inodes and times, shares that load's index and reads no file.

    Raises:
        ProfileError: a missing folder, any error in any file, a name given twice, or an
            ``attached`` name that does not find one CHARACTER unit.
    """
    listed = _library_files(extra_dirs, use_env)
    signature = _settled_signature(listed)
    kept = _LAST.get(signature) if signature is not None else None
    if kept is not None:
        return Library._of(kept)
    index = _load_index([(label, _read_bytes(path, label)) for path, label, _ in listed])
    if signature is not None:
        _remember(signature, index)
    return Library._of(index)


def _remember(signature: tuple[object, ...], index: Index) -> None:
    """Keep ``index`` as the last library's, in place of the one before (one store, so that
    neither a thread nor a fork ever sees a half-made change)."""
    global _LAST
    _LAST = {signature: index}


#: The index of the last library loaded from settled files (:func:`_settled_signature`), by
#: their signature: a script or notebook that calls mathhammer.run() without a library pays
#: 7 ms a call to read and hash the profile files again, 8 times the exact engine's time on the
#: railgun. One entry (about 7.5 MB with the built-in profiles), replaced by the next library
#: loaded from settled files. Its Index is shared by every library made from it, in every
#: thread, as one library's is by its calls (units built on first use, the same whoever asks).
_LAST: dict[tuple[object, ...], Index] = {}
#: A file changed less than this long ago is always read again: a file system may keep times
#: to 2 seconds (FAT) or a few milliseconds (ext4's clock tick), so an edit that keeps the size
#: within one tick would not show in the times.
_SETTLED_NS = 3_000_000_000


def _settled_signature(listed: Sequence[tuple[str, str, os.stat_result | None]]) -> tuple[object, ...] | None:
    """What identifies these files' contents without reading them (each file's path, label,
    device, inode, size, modification and change times), or None when one of them could not
    be examined or changed too recently for its times to tell (``_SETTLED_NS``), and on
    systems where the change time is not one (Windows: the creation time).

    A network file system may answer the times from its cache for a while (NFS: up to a
    minute) where opening the file would have checked them: an edit made on another machine
    may then be seen that much later within one process (a new process always reads it)."""
    if os.name != "posix":
        return None
    now = time.time_ns()
    signature: list[object] = []
    for path, label, st in listed:
        if st is None or now - max(st.st_mtime_ns, st.st_ctime_ns) < _SETTLED_NS:
            return None
        signature.append((path, label, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(signature)


def _load_index(files: list[tuple[str, bytes]]) -> Index:
    """The checked index of these files' units ((label, bytes) in reading order): from the
    cache of parsed profiles when it holds them, else parsed (and then cached)."""
    entry, key = _entry_for(raw for _, raw in files)

    def read_files() -> Index:
        found: list[tuple[Unit, str, int]] = []
        for label, raw in files:
            found += [(u, label, i) for i, u in enumerate(_units(_parse_yaml(_decode(raw, label), label), label))]
        _check_unique(found)
        library = Library([u for u, _, _ in found])
        _check_attached(found, library)
        _write_entry(entry, key, library._index)
        return library._index

    index = _read_entry(entry, key)
    return read_files() if index is None else index.with_reload(read_files)


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


def _library_files(extra_dirs: Sequence[Path], use_env: bool) -> list[tuple[str, str, os.stat_result | None]]:
    """(path, label, its os.stat or None) of every profile file to load, each folder and file once
    (paths as text: a library loaded without a change looks at every file again, and a Path
    costs more than the stat)."""
    folders = [(d, "built-in profiles") for d in _builtin_dirs()]
    if use_env and os.environ.get(ENV_VAR):
        folders += [(Path(p), ENV_VAR) for p in os.environ[ENV_VAR].split(os.pathsep) if p]
    folders += [(Path(d), "--profiles") for d in extra_dirs]
    seen: set[tuple[int, int]] = set()
    files: list[tuple[str, str, os.stat_result | None]] = []
    for n, (folder, origin) in enumerate(folders):
        try:
            st = os.stat(folder)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            raise ProfileError("not a folder", where=origin, value=str(folder))
        for name, path in _profile_files(folder, origin) if (st.st_dev, st.st_ino) not in seen else ():
            try:
                fst = os.stat(path)
            except OSError:  # a dangling link: reading it reports the error, naming the file
                fst = None
            if fst is None or (fst.st_dev, fst.st_ino) not in seen:
                files.append((path, f"profiles/{name}" if n == 0 else path, fst))
                seen.add((fst.st_dev, fst.st_ino) if fst else (-1, len(files)))
        seen.add((st.st_dev, st.st_ino))
    return files


def _profile_files(folder: Path, origin: str) -> list[tuple[str, str]]:
    """(name, path) of ``*.yaml``, ``*.yml``, then ``*.json`` (JSON is YAML) in ``folder``, each
    sorted by name, without hidden files."""
    try:
        entries = {e.name: e.path for e in os.scandir(folder) if not e.name.startswith(".")}
    except OSError as e:
        raise ProfileError(f"cannot list the folder: {e.strerror or e}", where=origin, value=str(folder)) from None
    return [(name, entries[name]) for ext in (".yaml", ".yml", ".json")
            for name in sorted(n for n in entries if n.endswith(ext))]
