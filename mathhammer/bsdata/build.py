"""Import BSData files: every unit of the named catalogues, grouped by faction, with what was not read.

This is the library call behind ``mathhammer profiles import`` and ``scripts/build_profiles.py``:
:func:`import_files` loads the files (:mod:`.catalogue`), reads each unit (:mod:`.units`) and
returns the units per faction, sorted by name, with unique names inside a faction, and every
problem met (a unit without a statline, a weapon whose value is outside the project's limits),
never dropping anything silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ProfileError
from ..profiles.index import faction_key
from .catalogue import Catalogue, load
from .units import Problem, UnitResult, read_unit

__all__ = ["Faction", "Imported", "import_files"]


@dataclass
class Faction:
    """The units of one faction (one catalogue's name), sorted by name."""

    name: str
    catalogues: list[str] = field(default_factory=list)  # catalogue names, as in the files
    units: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)


@dataclass
class Imported:
    """What :func:`import_files` read."""

    factions: list[Faction]
    files: list[str]

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.factions for p in f.problems]


def import_files(paths: Sequence[Path], *, faction: str | None = None) -> Imported:
    """The units of the BSData files (or folders) ``paths``, per faction.

    Every catalogue named (or found in a named folder) contributes the units it owns (see
    :mod:`.catalogue`); catalogues loaded only because a named one needs them contribute
    nothing. ``faction`` keeps one faction (its name as in the output, case-insensitive).

    Raises:
        ProfileError: a file that cannot be read or is not BattleScribe data, a missing game
            system or linked catalogue, or a ``faction`` that none of the files holds.
    """
    loaded = load(paths)
    index = loaded.index
    named = {c.id for c in loaded.named}
    owners = index.owners()
    by_faction: dict[str, Faction] = {}
    seen: set[tuple[str, str]] = set()
    listing: dict[str, dict[str, tuple[Any, Any]]] = {}  # unit id -> catalogue id -> (entry, link)
    cats = sorted((c for c in index.catalogues.values() if not c.game_system), key=lambda c: (c.name, c.id))
    for cat in cats:
        for entry, link in index.units_of(cat):
            listing.setdefault(entry.get("id", ""), {}).setdefault(cat.id, (entry, link))
    for cat in cats:
        for uid, places in listing.items():
            if cat not in owners.get(uid, []) or cat.id not in named or (cat.faction, uid) in seen:
                continue
            seen.add((cat.faction, uid))
            entry, link = places.get(cat.id) or next(iter(places.values()))
            _add(by_faction, cat, read_unit(index, cat, entry, link))
    _named_only_libraries(loaded.named, by_faction, index, owners, named, seen)
    factions = sorted(by_faction.values(), key=lambda f: f.name.lower())
    if faction is not None:
        factions = [f for f in factions if faction_key(f.name) == faction_key(faction)]
        if not factions:
            have = ", ".join(sorted(by_faction)) or "none"
            raise ProfileError("no such faction in the files", where="--faction", value=faction,
                               hint=f"factions found: {have}")
    if not any(f.units for f in factions):
        raise ProfileError("no unit in the files", where=", ".join(str(p) for p in paths)[:200],
                           hint="give the faction catalogues (.cat) as well as the game system (.gst)")
    _shared_aliases(by_faction.values())
    for f in factions:
        _unique_names(f)
    return Imported(factions=factions, files=[c.file for c in loaded.named])


def _named_only_libraries(named_cats: list[Catalogue], by_faction: dict[str, Faction], index: Any,
                          owners: dict[str, list[Catalogue]], named: set[str], seen: set[tuple[str, str]]) -> None:
    """A library named on its own (its faction catalogue not given): its units under the library's faction."""
    linked = {cid for c in named_cats if not c.library for cid, _ in c.links}
    for cat in named_cats:
        if not cat.library or cat.id in linked:
            continue
        for entry, link in index.defined_units(cat):
            uid = entry.get("id", "")
            if any(o.id in named for o in owners.get(uid, [])) or (cat.faction, uid) in seen:
                continue
            seen.add((cat.faction, uid))
            _add(by_faction, cat, read_unit(index, cat, entry, link))


def _add(by_faction: dict[str, Faction], cat: Catalogue, result: UnitResult) -> None:
    f = by_faction.setdefault(cat.faction, Faction(name=cat.faction))
    label = f"{cat.name} rev {cat.root.get('revision', '?')}"
    if label not in f.catalogues:
        f.catalogues.append(label)
    f.problems.extend(result.problems)
    f.assumptions.extend(result.assumptions)
    if result.data is not None:
        f.units.append(result.data)


def _shared_aliases(factions: Any) -> None:
    """Keep a carrier's alias ("Gun Drone", see :func:`.units.read_unit`) only where it names the
    same weapon (name and profile) in every unit that has it, and no weapon of the import is
    called so: a weapon alias names one profile across the library."""
    def key(text: str) -> str:
        return " ".join(text.lower().split())

    weapons = [w for f in factions for u in f.units for w in u["weapons"]]
    names = {key(w["name"]) for w in weapons} | {key(w["name"].partition(" - ")[0]) for w in weapons}

    def needless(w: dict[str, Any], alias: str) -> bool:
        # "Missile pod (Missile Drone)": the name says its carrier already (rosters read that)
        return key(w["name"]).endswith(f"({key(alias)})")

    profiles: dict[str, set[str]] = {}
    for w in weapons:
        same = repr(sorted((k, repr(v)) for k, v in w.items() if k != "aliases"))
        for a in w.get("aliases", []):
            if not needless(w, a):
                profiles.setdefault(key(a), set()).add(same)
    clash = {a for a, seen in profiles.items() if len(seen) > 1 or a in names}
    for w in weapons:
        if any(key(a) in clash or needless(w, a) for a in w.get("aliases", [])):
            kept = [a for a in w["aliases"] if key(a) not in clash and not needless(w, a)]
            if kept:
                w["aliases"] = kept
            else:
                del w["aliases"]


def _unique_names(f: Faction) -> None:
    """Sort by name; a name given twice in a faction (a Legends re-issue, two catalogues' versions)
    keeps the first (by source) and the others get `` (2)``, `` (3)``... with a note in the summary."""
    f.units.sort(key=lambda u: (u["name"].lower(), u["source"]))
    counts: dict[str, int] = {}
    for u in f.units:
        key = " ".join(u["name"].lower().split())
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > 1:
            old = u["name"]
            u["name"] = f"{old} ({counts[key]})"
            f.assumptions.append(f"{old}: a second unit of this name in {f.name} ({u['source']}) "
                                 f"is named {u['name']!r}")
