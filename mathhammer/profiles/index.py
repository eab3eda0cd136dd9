"""The name index of a library: every unit's and weapon's names and faction, and the units
themselves, rebuilt only when looked up.

A library of ~2,000 units and ~15,000 weapons is too large to rebuild through the model's
constructors on every start (half a second), and a command needs two or three of its units.
So the cache keeps each unit's checked data as a blob of its own, and the names as one text
per kind: a row per unit (or weapon), ``\\n`` + its name + ``\\t`` + each alias + ``\\t``, in
lookup's spelling (:func:`name_key`). A query never holds a tab or line break, so finding
``\\nQ\\t`` finds rows named Q, ``\\tQ\\t`` rows with the alias Q, and Q itself rows with Q in a
name or alias, at the speed of :meth:`str.find`, with nothing to build at start-up. Integer
columns are :mod:`array` bytes, which load without a Python object per value.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..model import Unit, Weapon

#: Characters a faction name may or may not have for lookup: ``tau empire`` is ``T'au Empire``.
_APOSTROPHES = str.maketrans("", "", "'’‘`")
KINDS = ("unit", "weapon")


def name_key(name: str) -> str:
    """A name as lookup compares it: case-insensitive, single spaces."""
    return " ".join(name.lower().split())


def faction_key(name: str) -> str:
    """A faction name as lookup compares it: also without apostrophes."""
    return name_key(name.translate(_APOSTROPHES))


def weapon_stats(w: Weapon) -> tuple[object, ...]:
    """What makes two weapons of one name the same profile (a Meltagun carried by several units)."""
    return (w.attacks, w.skill, w.strength, w.ap, w.damage, w.range_inches, frozenset(map(str, w.abilities)),
            frozenset(w.unmodelled))


class StaleIndex(Exception):
    """A unit of the index could not be rebuilt (a damaged or planted cache entry): the index
    has been read again from the profile files, so the lookup must start again."""


class _Names:
    """The names as the profiles spell them (for messages and listings), per kind and row."""

    def __init__(self, names: dict[str, list[str]], aliases: dict[str, list[tuple[str, ...]]]) -> None:
        self.names, self.aliases = names, aliases


class Index:
    """Units (built, or blobs rebuilt on first use) and the name texts and columns lookup reads."""

    def __init__(self, columns: dict[str, Any], units: list[Unit | None], blob: Callable[[int], bytes],
                 names: Callable[[], _Names], rebuild: Callable[[bytes], Unit] | None = None) -> None:
        self._set(columns, units, blob, names, rebuild)
        self._reload: Callable[[], Index] | None = None

    def _set(self, columns: dict[str, Any], units: list[Unit | None], blob: Callable[[int], bytes],
             names: Callable[[], _Names], rebuild: Callable[[bytes], Unit] | None) -> None:
        self.text: dict[str, str] = {kind: columns[f"{kind} text"] for kind in KINDS}
        self.starts: dict[str, array[int]] = {kind: columns[f"{kind} starts"] for kind in KINDS}
        self.weapon_unit: array[int] = columns["weapon unit"]
        self.weapon_slot: array[int] = columns["weapon slot"]
        self.weapon_profile: array[int] = columns["weapon profile"]
        self.unit_faction: list[str] = columns["unit faction"]
        self._columns = columns
        self._units, self._blob, self._load_names, self._rebuild = units, blob, names, rebuild
        self._names: _Names | None = None
        self._factions: dict[str, str] | None = None
        self._members: dict[str, frozenset[int]] | None = None
        self._owners: dict[int, int] = {}  # id(weapon) -> unit, for the units built so far
        for i, unit in enumerate(units):
            if unit is not None:
                self._owned(i, unit)

    @property
    def n_units(self) -> int:
        return len(self.unit_faction)

    def rows(self, kind: str) -> int:
        """How many units, or weapons."""
        return len(self.starts[kind])

    @classmethod
    def of(cls, units: Sequence[Unit]) -> Index:
        """The index of units already built (files just read, or units given in code)."""
        profiles: dict[tuple[str, tuple[object, ...]], int] = {}
        weapons = [(i, j, w) for i, u in enumerate(units) for j, w in enumerate(u.weapons)]
        names = _Names({"unit": [u.name for u in units], "weapon": [w.name for _, _, w in weapons]},
                       {"unit": [u.aliases for u in units], "weapon": [w.aliases for _, _, w in weapons]})
        columns: dict[str, Any] = {"unit faction": [u.faction for u in units],
                                   "weapon unit": array("i", (i for i, _, _ in weapons)),
                                   "weapon slot": array("i", (j for _, j, _ in weapons)),
                                   "weapon profile": array("i", (profiles.setdefault(
                                       (w.name.lower(), weapon_stats(w)), len(profiles)) for _, _, w in weapons))}
        for kind in KINDS:
            rows = ["\n" + "\t".join(name_key(n) for n in (name, *aliases)) + "\t"
                    for name, aliases in zip(names.names[kind], names.aliases[kind], strict=True)]
            starts, at = array("i"), 0
            for row in rows:
                starts.append(at)
                at += len(row)
            columns[f"{kind} text"], columns[f"{kind} starts"] = "".join(rows) + "\n", starts

        def no_blob(i: int) -> bytes:
            raise AssertionError("units given in code are built already")

        return cls(columns, list(units), no_blob, lambda: names)

    # --- plain data, for the cache -------------------------------------------------------------

    def plain(self, blob: Callable[[Unit], bytes]) -> dict[str, Any]:
        """The index as marshal-able data; ``blob`` turns a unit into its stored form."""
        blobs = [blob(self.unit(i)) for i in range(self.n_units)]
        starts, at = array("i"), 0
        for b in blobs:
            starts.append(at)
            at += len(b)
        starts.append(at)
        names = self.names()
        return {"units": b"".join(blobs), "unit blob starts": starts.tobytes(),
                "names": marshal.dumps([names.names["unit"], [list(a) for a in names.aliases["unit"]],
                                        names.names["weapon"], [list(a) for a in names.aliases["weapon"]]]),
                "unit faction": list(self.unit_faction),
                **{key: value.tobytes() if isinstance(value, array) else value for key, value in self._columns.items()
                   if key != "unit faction"}}

    @classmethod
    def from_plain(cls, doc: dict[str, Any], rebuild: Callable[[bytes], Unit]) -> Index:
        """The index of :meth:`plain` data, every value type-checked (raises on anything else);
        units are rebuilt by ``rebuild`` when first asked for, names decoded when first needed."""
        columns: dict[str, Any] = {}
        for key in ("weapon unit", "weapon slot", "weapon profile", "unit starts", "weapon starts"):
            columns[key] = array("i", _of(doc[key], bytes))
        for key in ("unit text", "weapon text"):
            columns[key] = _of(doc[key], str)
        columns["unit faction"] = factions = _of(doc["unit faction"], list)
        if not all(type(f) is str for f in factions):
            raise TypeError("a faction is not a string")
        blobs, blob_starts = _of(doc["units"], bytes), array("i", _of(doc["unit blob starts"], bytes))
        names_blob = _of(doc["names"], bytes)
        n, w = len(factions), len(columns["weapon unit"])
        if len(blob_starts) != n + 1 or len(columns["unit starts"]) != n or any(
                len(columns[k]) != w for k in ("weapon slot", "weapon profile", "weapon starts")) or (
                w and not 0 <= min(columns["weapon unit"]) <= max(columns["weapon unit"]) < n):
            raise ValueError("the columns do not match the units")

        def blob(i: int) -> bytes:
            part: bytes = blobs[blob_starts[i]:blob_starts[i + 1]]
            return part

        def names() -> _Names:
            unit_names, unit_aliases, weapon_names, weapon_aliases = marshal.loads(names_blob)
            return _Names({"unit": unit_names, "weapon": weapon_names},
                          {"unit": [tuple(a) for a in unit_aliases], "weapon": [tuple(a) for a in weapon_aliases]})

        return cls(columns, [None] * n, blob, names, rebuild)

    def with_reload(self, reload: Callable[[], Index]) -> Index:
        """This index, which reads the profile files again (``reload``) if a unit cannot be rebuilt."""
        self._reload = reload
        return self

    # --- units ---------------------------------------------------------------------------------

    def unit(self, i: int) -> Unit:
        """Unit ``i``, rebuilt from its blob the first time.

        Raises:
            StaleIndex: the blob does not give back the unit its row names (the index is then
                read again from the files, so every row number the caller holds is void).
        """
        unit = self._units[i]
        if unit is None:
            try:
                assert self._rebuild is not None
                unit = self._rebuild(self._blob(i))
                row = self.text["unit"][self.starts["unit"][i]:].split("\t", 1)[0]
                if (name_key(unit.name), unit.faction) != (row[1:], self.unit_faction[i]):
                    raise ValueError("the unit is not the one its row names")
            except Exception:  # noqa: BLE001 - a damaged entry: read the files instead
                self._recover()
                raise StaleIndex from None
            self._units[i] = unit
            self._owned(i, unit)
        return unit

    def weapon(self, k: int) -> Weapon:
        """The weapon of weapon row ``k``."""
        unit = self.unit(self.weapon_unit[k])
        slot = self.weapon_slot[k]
        if not 0 <= slot < len(unit.weapons):
            self._recover()
            raise StaleIndex
        return unit.weapons[slot]

    def owner(self, weapon: Weapon) -> Unit | None:
        """The unit of this index that carries this very weapon object (None if none does)."""
        i = self._owners.get(id(weapon))
        return None if i is None else self._units[i]

    def _owned(self, i: int, unit: Unit) -> None:
        for w in unit.weapons:
            self._owners[id(w)] = i

    def _recover(self) -> None:
        if self._reload is None:
            raise RuntimeError("a unit of the index cannot be rebuilt and there are no files to read")
        fresh = self._reload()
        self._set(fresh._columns, fresh._units, fresh._blob, fresh._load_names, fresh._rebuild)
        self._reload = None

    # --- names ---------------------------------------------------------------------------------

    def named(self, kind: str, q: str) -> list[int]:
        """Rows of that kind whose name is ``q`` (a :func:`name_key`)."""
        return self._rows_at(kind, f"\n{q}\t")

    def aliased(self, kind: str, q: str) -> list[int]:
        """Rows of that kind with the alias ``q``."""
        return self._rows_at(kind, f"\t{q}\t")

    def containing(self, kind: str, q: str) -> list[int]:
        """Rows of that kind with ``q`` in their name or an alias."""
        return self._rows_at(kind, q) if q else list(range(self.rows(kind)))

    def _rows_at(self, kind: str, needle: str) -> list[int]:
        text, starts = self.text[kind], self.starts[kind]
        rows: dict[int, None] = {}
        at = text.find(needle)
        while at >= 0:
            rows[bisect_right(starts, at) - 1] = None  # the row whose text holds the match
            at = text.find(needle, at + 1)
        return list(rows)

    def names(self) -> _Names:
        """The names and aliases as spelled, per kind and row."""
        if self._names is None:
            self._names = self._load_names()
        return self._names

    def factions(self) -> dict[str, str]:
        """Faction key -> the faction's name as the profiles spell it (its first spelling)."""
        if self._factions is None:
            found: dict[str, str] = {}
            for faction in dict.fromkeys(self.unit_faction):
                if faction.strip():
                    found.setdefault(faction_key(faction), faction)
            self._factions = found
        return self._factions

    def of_faction(self, key: str) -> frozenset[int]:
        """The units of the faction with this :func:`faction_key`."""
        if self._members is None:
            members: dict[str, set[int]] = {}
            for i, faction in enumerate(self.unit_faction):
                members.setdefault(faction, set()).add(i)
            self._members = {}
            for faction, units in members.items():
                k = faction_key(faction)
                self._members[k] = self._members.get(k, frozenset()) | units
        return self._members.get(key, frozenset())

    def scan(self, kind: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
        """(row, name, aliases) of every row of that kind."""
        names = self.names()
        return ((k, name, aliases) for k, (name, aliases) in
                enumerate(zip(names.names[kind], names.aliases[kind], strict=True)))


def unit_blob(plain: Callable[[Unit], Any]) -> Callable[[Unit], bytes]:
    """A unit as the cache stores it: the marshal bytes of its plain data."""
    return lambda u: marshal.dumps(plain(u))


def _of(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value
