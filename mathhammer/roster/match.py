"""Text-export units -> the library's units, carrying the roster's loadout.

A unit is looked up by its name as :meth:`Library.find` looks names up (aliases, whole names,
then a unique part of a name; typographic quotes made plain), first among the units of the
roster's faction, then, by whole name only, in the whole library (an allied unit). A name that
finds nothing is reported as "not in the library", one that finds several as ambiguous with the
candidates: never guessed.

A matched unit keeps its library statlines and weapons; its models and loadout become the
roster's: each model group the export lists is given the statline of the same name (or the
unit's only statline), and its weapon totals are spread over its models (:func:`.loadout.spread`).
An item that is no weapon of the unit (a Shield Drone, a Homing beacon) is kept as wargear and
named in the unit's notes; it is not fired. What wargear and enhancements give the models that
bear them is :mod:`.wargear`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..errors import ProfileError
from ..model import Ability, ModelStats, Unit, Wargear, Weapon
from ..profiles import Library
from ..rules import fired_profiles
from .loadout import attacking, spread
from .model import Attachment, Note, Roster, RosterModel, RosterUnit
from .names import clean, key, singular_key
from .wargear import bear_listed, defaults_swapped, enhance, one_each

__all__ = ["match_roster", "match_unit"]


def match_roster(roster: Roster, lib: Library) -> Roster:
    """The roster with every unit matched to ``lib`` (or its notes saying why not); a War Organ
    file's attached units read from its headings (:func:`_named_groups`)."""
    scope, notes = _faction_scope(roster.faction, lib)
    entries = tuple(match_unit(e, lib, scope) for e in roster.entries)
    attachments = roster.attachments
    if roster.format == "war-organ":
        attachments += tuple(_named_groups(entries, notes))
    return replace(roster, entries=entries, attachments=attachments, notes=roster.notes + tuple(notes))


#: The headings War Organ files units under by battlefield role or keyword; any other heading
#: is a name it gives an attached unit (ruling M82).
WAR_ORGAN_SECTIONS = frozenset({
    "epic hero", "epic heroes", "character", "characters", "battleline", "infantry", "vehicle", "vehicles",
    "monster", "monsters", "mounted", "beast", "beasts", "swarm", "swarms", "dedicated transport",
    "dedicated transports", "transport", "transports", "fortification", "fortifications", "aircraft", "fly",
    "walker", "titanic", "allied units", "allies", "other", "others", "other datasheets", "units"})


def _named_groups(entries: tuple[RosterUnit, ...], notes: list[Note]) -> list[Attachment]:
    """War Organ lists an attached unit under a heading of its own ("Mean Command Clique":
    Commander Farsight, then Crisis Sunforge Battlesuits) where it lists the others under their
    role ("Epic Hero", "Other"): each run of units under a heading that is no role, once
    matched, attaches its CHARACTER units (the Leaders) to its one other unit (the Bodyguard);
    a note says so, or why not (ruling M82)."""
    out: list[Attachment] = []
    runs: list[list[int]] = []
    for i, e in enumerate(entries):  # a run: the units under one heading line
        if runs and (entries[runs[-1][0]].section, entries[runs[-1][0]].section_line) == (e.section, e.section_line):
            runs[-1].append(i)
        else:
            runs.append([i])
    for run in runs:
        heading = entries[run[0]].section
        if not heading or " ".join(heading.lower().split()) in WAR_ORGAN_SECTIONS:
            continue
        line = entries[run[0]].section_line or entries[run[0]].line
        if len(run) < 2:
            notes.append(Note(line, f"heading {heading!r}: {entries[run[0]].name} alone: nothing attached"))
            continue
        units = [entries[i].unit for i in run]
        leaders = tuple(i for i, u in zip(run, units, strict=True) if u is not None and u.character)
        guards = [i for i, u in zip(run, units, strict=True) if u is not None and not u.character]
        if leaders and len(guards) == 1 and all(u is not None for u in units):
            out.append(Attachment(leaders, guards[0], line))
            notes.append(Note(line, f"heading {heading!r} read as an attached unit: "
                                    f"{', '.join(entries[i].name for i in leaders)} leading {entries[guards[0]].name}"))
        else:
            notes.append(Note(line, f"heading {heading!r}: {', '.join(entries[i].name for i in run)}: not read as an "
                                    "attached unit (expected CHARACTER units and one other unit, each matched)"))
    return out


def _faction_scope(faction: str, lib: Library) -> tuple[Library, list[Note]]:
    """The library's units of the roster's faction (names compared without case, apostrophes and
    prefixes such as ``Xenos -``); the whole library when the faction is not in it."""
    if not faction:
        return lib, [Note(0, "the roster names no faction: units are looked up in the whole library")]
    wanted = key(faction)
    for name in lib.factions:
        if key(name) == wanted or wanted.endswith(" " + key(name)):
            return lib.only(name), []
    return lib, [Note(0, f"faction {faction!r} has no unit in the library: units are looked up in the whole library")]


def _spellings(name: str) -> list[str]:
    """The name as written, with plain quotes, and with typographic ones (profiles use both)."""
    plain = clean(name)
    return list(dict.fromkeys([plain, name.strip(), plain.replace("'", "\u2019")]))


def _find(name: str, lib: Library, scope: Library) -> tuple[Unit | None, str]:
    """The library unit ``name`` names, or None and why."""
    for where, substring in ((scope, True), (lib, False)) if scope is not lib else ((lib, True),):
        for spelling in _spellings(name):
            try:
                found = where.find(spelling, "unit", substring=substring)
            except ProfileError as e:
                if e.what.startswith("ambiguous"):
                    return None, f"{e.what} (not guessed: rename the unit in the export or add an alias)"
                continue
            if found is not None:
                return found, ""
    return None, "not in the library"


def match_unit(entry: RosterUnit, lib: Library, scope: Library | None = None) -> RosterUnit:
    """``entry`` with ``unit`` set to its library unit carrying the roster's loadout, or with a
    note saying why it has none."""
    found, why = _find(entry.name, lib, scope or lib)
    if found is None:
        return replace(entry, notes=(Note(entry.line, f"{entry.name}: {why}"), *entry.notes))
    try:
        unit, notes = _loadout(entry, found)
    except ProfileError as e:  # the roster's models break a limit of the unit (1,001 models): not used, said where
        return replace(entry, notes=(*entry.notes, Note(entry.line, f"{entry.name}: cannot be used ({e.message()})")))
    if key(found.faction) and entry.faction and key(found.faction) != key(entry.faction) \
            and not key(entry.faction).endswith(key(found.faction)):
        notes.insert(0, Note(entry.line, f"matched {found.name!r} of {found.faction}, not of the roster's faction"))
    return replace(entry, unit=unit, matched=found.name, notes=entry.notes + tuple(notes),
                   given_keywords=tuple(sorted(unit.keywords - found.keywords)))


class _Weapons:
    """An export's item name -> the unit's weapons it stands for."""

    def __init__(self, unit: Unit) -> None:
        self.exact: dict[str, list[Weapon]] = {}
        self.single: dict[str, list[Weapon]] = {}
        self.carrier: dict[str, list[Weapon]] = {}
        #: the keys (exact and singular) that are a weapon's alias and no weapon's name: what
        #: carries a weapon ("Gun Drone", an alias the importer gives its twin pulse carbine)
        self.aliased: set[str] = set()
        #: a weapon's name without its profile (and without an owner) -> every weapon so named,
        #: in order: the profiles one item may stand for ("Cerastus shock lance" and its "- strike")
        self.family: dict[str, list[Weapon]] = {}
        names: set[str] = set()
        for w in unit.weapons:
            base = clean(w.name).partition(" - ")[0]
            for k in dict.fromkeys((singular_key(base), singular_key(base.partition(" (")[0]))):
                self.family.setdefault(k, []).append(w)
            names.update((key(w.name), singular_key(w.name)))
            for n in (w.name, *w.aliases):
                self.exact.setdefault(key(n), []).append(w)
                self.single.setdefault(singular_key(n), []).append(w)
                if n is not w.name:
                    self.aliased.update((key(n), singular_key(n)))
            head, paren, tail = clean(w.name).partition(" (")
            if paren and tail.endswith(")"):  # "Twin pulse carbine (Gun Drone)": the drone's weapon
                self.carrier.setdefault(singular_key(tail[:-1]), []).append(w)
        self.aliased -= names

    def by_carrier(self, item: str) -> bool:
        """Whether ``item`` names a weapon by what carries it (an alias that is no weapon's name)."""
        k, s = key(item), singular_key(item)
        if k in self.exact or s in self.single:
            return k in self.aliased or (k not in self.exact and s in self.aliased)
        carrier, with_, _ = clean(item).partition(" with ")
        return bool(with_) and self.by_carrier(carrier)

    def resolve(self, item: str, carried: frozenset[str] = frozenset()) -> tuple[list[str], str]:
        """The weapon names ``item`` stands for, and a note when a choice was made. ``carried``:
        the names the model's statline carries or may take, which pick among profiles named by
        their owner ("XV pulse pistol (Ri'Lantar)")."""
        k, s = key(item), singular_key(item)
        for table, probe in ((self.exact, k), (self.single, s)):
            if probe in table:
                return self._with_profiles(item, [table[probe][0]], carried)
        if s in self.family:  # "Ion cannon": its "- standard" and "- overcharge"; "Stikka": "Stikka (melee)", ...
            return self._with_profiles(item, [], carried)
        if s in self.carrier:
            return [w.name for w in self.carrier[s]], ""
        carrier, with_, inside = clean(item).partition(" with ")
        if with_:  # War Organ: "Gun drone with twin pulse carbine"
            for part in (carrier, inside):
                names, note = self.resolve(part, carried)
                if names:
                    return names, note
        return [], ""

    def _with_profiles(self, item: str, named: list[Weapon], carried: frozenset[str]) -> tuple[list[str], str]:
        """The profiles a model carrying ``item`` attacks with (:func:`mathhammer.rules.fired_profiles`):
        the weapon ``named`` so (if any) and, of the weapon's other profiles, a ranged one to shoot
        and a melee one to fight with, where it has them; a note names the alternatives left."""
        family = [w for w in self.family.get(singular_key(item), []) if w not in named]
        swapped = ""
        if named and carried and named[0].name not in carried:
            # the model's statline carries another profile of that name (a Neophyte Leader's BS3+
            # "Autopistol (...)", not the squad's BS4+ "Autopistol"): its own
            mine = next((w for w in family if w.name in carried and w.melee == named[0].melee), None)
            if mine is not None:
                swapped = f"{item}: fires {mine.name!r}, the profile of that name the model's statline carries"
                family = [w for w in family if w is not mine] + named
                named = [mine]
        own = [w for w in family if w.name in carried] or [w for w in family if " (" not in clean(w.name)]
        borrowed = not named and not own and bool(family)  # only other models' profiles ("Stikka (melee)")
        family = [*named, *(own or family)]
        if not family:
            return [], ""
        kinds = {w.melee for w in named}
        # the named profile is the only one of its kind left, so it is chosen
        family = [w for w in family if w in named or w.melee not in kinds]
        chosen = [family[i] for i in fired_profiles([(w.name, w.melee) for w in family],
                                                    [w.has(Ability.HAZARDOUS) for w in family])]
        rest = [w for w in family if w not in chosen and (borrowed or " (" not in clean(w.name))]
        said = [swapped] if swapped else []
        if rest or borrowed:  # a choice was made: say which, and what else there is
            said.append(f"{item}: fires {' and '.join(repr(w.name) for w in chosen)}"
                        + (" (the model's statline does not carry it; the unit's profiles of that name)"
                           if borrowed else "")
                        + (f" (the other profiles fire as UNIT/WEAPON: {', '.join(w.name for w in rest)})"
                           if rest else ""))
        note = "; ".join(said)
        return [w.name for w in family if w in chosen], note


def _statline(name: str, unit: Unit) -> tuple[ModelStats, str]:
    """The unit's statline for a model group called ``name``, and a note when it is a fallback."""
    k, s = key(name), singular_key(name)
    probes: list[Callable[[ModelStats], bool]] = [
        lambda m: key(m.name) == k, lambda m: singular_key(m.name) == s,
        lambda m: s in singular_key(m.name) or singular_key(m.name) in s]
    for probe in probes:
        hits = [m for m in unit.models if probe(m)]
        if len(hits) == 1:
            return hits[0], ""
    if len(unit.models) == 1:
        return unit.models[0], ""
    words = set(s.split())
    scored = sorted(unit.models, key=lambda m: -len(words & set(singular_key(m.name).split())))
    return scored[0], (f"model {name!r} has no statline of that name in {unit.name!r}: "
                       f"given {scored[0].name!r}'s")


def _is_model(name: str, unit: Unit) -> bool:
    """Whether a bare item of a unit names one of its models (``8x Kroot Carnivores``) or the unit."""
    s = singular_key(name)
    return s == singular_key(unit.name) or any(singular_key(m.name) == s for m in unit.models)


def _loadout(entry: RosterUnit, found: Unit) -> tuple[Unit, list[Note]]:
    """``found`` with the roster's models and weapons."""
    notes: list[Note] = []
    weapons = _Weapons(found)
    models = list(entry.models)
    loose = list(entry.wargear)
    rest = []
    for item, n in loose:  # a bare item: a model group without a list ("8x Kroot Carnivores"), or wargear
        if _is_model(item, found) and not weapons.resolve(item)[0]:
            models.append(RosterModel(item, n, (), entry.line))
        else:
            rest.append((item, n))
    loose = rest
    if not models and (entry.size == 0 or entry.zero_models or any(
            _is_model(i, found) and not weapons.resolve(i)[0] for i in entry.zero_items)):
        # "0x Fire Warrior Shas'ui" its only model line: no models, not the library's default (M87)
        raise ProfileError("its models are counted 0: the unit has no models, not the library's default; ruling M87")
    if models and loose:  # items beside the model groups: the unit's
        if rest:
            first = models[0]
            models[0] = replace(first, weapons=first.weapons + tuple(rest))
            notes.append(Note(entry.line, f"items listed for the whole unit given to {first.name}: "
                                          f"{', '.join(i for i, _ in rest)}"))
        loose = []
    groups: list[ModelStats] = []
    unfired: dict[str, None] = {}
    gear = {key(w.name): w for w in found.wargear}
    given_keywords: dict[str, None] = {}  # what the wargear listed gives the unit (a Marker Drone: MARKERLIGHT)
    if not models:
        if len(found.models) == 1 or not loose:
            st = found.models[0] if len(found.models) == 1 else None
            if st is None:  # several statlines, nothing listed
                groups = list(found.models)
                notes.append(Note(entry.line, "no models or weapons listed: the library's default loadout"))
            else:
                models = [RosterModel(st.name, entry.size or st.count, tuple(loose), entry.line)]
        else:
            groups = list(found.models)
            notes.append(Note(entry.line, f"weapons listed without models for a unit of {len(found.models)} "
                                          f"statlines: the library's default loadout is used, the list "
                                          f"({', '.join(i for i, _ in loose)}) is not"))
    for m in models:
        st, why = _statline(m.name, found)
        if why:
            notes.append(Note(m.line or entry.line, why))
        if not m.weapons:
            groups.append(replace(st, name=clean(m.name), count=m.count))
            if st.loadout:
                notes.append(Note(m.line or entry.line, f"{m.count}x {m.name}: no weapons listed, the library's "
                                                        "default loadout"))
            continue
        totals: list[tuple[str, int]] = []
        by_carrier: list[tuple[str, str, int]] = []  # (item, weapon, copies) named by what carries it
        carried = frozenset([*(n for n, _ in st.loadout), *st.options])
        # the carriers listed since the last other item ("Recon drone", "2x Gun Drone"), whose
        # weapons may follow them
        under: list[tuple[str, list[str], int]] = []
        repeated: list[tuple[str, str, list[str]]] = []  # (item, its carrier, weapons) listed under it
        borne: dict[str, tuple[Wargear, int]] = {}  # wargear that changes its bearers' defences (ruling M81)
        for item, n in m.weapons:
            names, note = weapons.resolve(item, carried)
            if note:
                notes.append(Note(m.line or entry.line, note))
            piece = gear.get(key(item))
            if piece is not None:  # (a Tarsis buckler is also a weapon: it fires too)
                borne[piece.name] = (piece, borne.get(piece.name, (piece, 0))[1] + n)
                if not names:
                    continue
            if not names:
                unfired[clean(item)] = None
            if names and weapons.by_carrier(item):
                by_carrier += [(clean(item), w, n) for w in names]
                under.append((clean(item), names, n))
                continue
            holder = next((c for c in under if names and c[1] == names and c[2] == n), None)
            if holder is not None:
                # New Recruit lists a drone's weapon again under it ("MV15 Gun Drone", "1x Twin
                # pulse blaster"): the drone's own, not another copy
                repeated.append((clean(item), holder[0], names))
                under.remove(holder)
            else:
                totals += [(w, n) for w in names]
                if names:  # another weapon: what follows is no carrier's (wargear does not count)
                    under = []
        named = {w for w, _ in totals}
        for item, carrier, names in repeated:  # said once: by the carrier's note below when it has one
            if not named & set(names):
                notes.append(Note(m.line or entry.line, f"{item} listed under {carrier}: the {carrier}'s, "
                                                        "counted once"))
        for item, w, n in by_carrier:  # "Gun Drone" and its "Twin pulse carbine" both listed: counted once
            if w in named:
                notes.append(Note(m.line or entry.line, f"{item}: its {w} is listed as well, counted once"))
            else:
                totals.append((w, n))
        start = st
        giving = [(piece, n) for piece, n in borne.values() if piece.gives]
        if st.bare is not None and giving:
            # the wargear listed replaces what the statline bears by default (a Brute shield listed:
            # not the default Slabshield's Wounds too)
            start = st.bare
            listed = {key(p.name) for p, _n in giving}
            replaced = [w for w in dict.fromkeys(st.wargear)
                        if gear.get(key(w)) and gear[key(w)].gives and key(w) not in listed]
            if replaced:
                notes.append(Note(m.line or entry.line, f"{m.name}: the wargear listed replaces the default "
                                                        f"{', '.join(replaced)} (ruling M81)"))
        mine = [replace(start, name=clean(m.name), count=k, loadout=loadout) for k, loadout in spread(m.count, totals)]
        if st.bare is not None and not giving:
            mine = defaults_swapped(mine, st, m, gear, found, notes, m.line or entry.line)
        if start is not st and len(giving) > 1 and sum(n for _, n in giving) == m.count:
            # one of them each, in place of the default ("2x Slabshield, 1x Brute shield" for 3 Bullgryn)
            mine = one_each(mine, giving, found, notes, m, m.line or entry.line)
        elif borne:
            mine = bear_listed(mine, list(borne.values()), m, found, notes, m.line or entry.line)
        if borne:
            for piece, _n in borne.values():
                for kw in piece.keywords:
                    if kw not in found.keywords and kw not in given_keywords:
                        given_keywords[kw] = None
                        notes.append(Note(m.line or entry.line, f"{piece.name}: the unit has the {kw} keyword "
                                                                "(ruling M81)"))
        groups += mine
    if unfired:
        notes.append(Note(entry.line, f"not weapons of {found.name} in the library, kept as wargear (not fired): "
                                      f"{', '.join(unfired)}"))
    groups = enhance(groups, entry, found, given_keywords, notes)
    total = sum(g.count for g in groups)
    if entry.size is not None and total != entry.size:
        notes.append(Note(entry.line, f"the unit line says {entry.size} models, the models listed are {total}"))
    unit, cut = attacking(replace(found, models=tuple(groups), aliases=(), points=entry.points, attached=(),
                                  keywords=found.keywords | set(given_keywords)))
    notes += [Note(entry.line, line) for line in cut]
    return unit, notes
