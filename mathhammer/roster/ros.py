"""BattleScribe / New Recruit rosters (.ros, and .rosz: the same XML zipped).

A roster's selections carry their own profiles, so a .ros unit is self-contained: its statlines
come from the "Unit" profiles in it, its weapons from the "Ranged Weapons"/"Melee Weapons"
profiles (read by :mod:`mathhammer.bsdata.convert`, as the importer reads catalogues), its
invulnerable save and Feel No Pain from its "Abilities" profiles, and the engine's unit is built
through the profile schema, so it is checked like any profile. No library is needed.

What the file states, and nothing more:

- a selection's ``number`` is the total for the whole unit (``7x Hearthkyn Warrior`` carry
  ``7x Close combat weapon``); per-model loadouts come from :func:`.loadout.spread`. A weapon
  selection named with a count of its one profile (``2 Fragstorm Grenade Launchers``) counts that many;
- a model takes the "Unit" profile inside its own selection, else the unit's (by name when the
  unit has several);
- profiles of one selection named ``WEAPON - PROFILE`` (``➤ L7 missile launcher - blast`` /
  ``- focused``) are one weapon's alternative profiles: the loadout fires the first (a weapon
  that shoots and fights: its first ranged and its strike, else first, melee profile; ruling
  M79), all are in ``weapons``; profiles of other names in the selection are weapons of their own;
- profiles of another type that read like weapons (a Tesseract Vault's "C'tan Powers") are
  named in a note, not fired;
- a weapon selection without a profile takes the profile of that name elsewhere in the file;
- an enhancement is an upgrade that costs points and is not a weapon or a model;
- leaders are not linked to their Bodyguard units in a .ros, so none are attached.

The XML is parsed by :func:`mathhammer.bsdata.xmlsafe.parse_xml` (no DTD, no entities).
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from xml.etree.ElementTree import Element

from .. import dice
from ..bsdata import convert
from ..bsdata.xmlsafe import parse_xml
from ..errors import ProfileError
from ..limits import MAX_ATTACKING_MODELS, MAX_ROSTER_POINTS
from ..model import Unit, give_bearer
from ..profiles.schema import _Reader, _unit
from ..rules import fired_profiles
from .loadout import attacking, borne_each, spread
from .model import Note, Roster, RosterModel, RosterUnit
from .names import clean, key, singular_key

__all__ = ["parse_ros"]

_WEAPON_TYPES = (convert.RANGED, convert.MELEE)
#: A selection's ``number``: a whole number (BattleScribe may write "2.0").
_COUNT = re.compile(r"\d{1,9}(?:\.0*)?")
_NAMED_COUNT = re.compile(r"^(\d{1,3})\s*x?\s+(.+)$", re.IGNORECASE)
#: Category names that are no keyword of the unit.
_NOT_KEYWORDS = {"configuration", "uncategorised", "warlord"}


class _Lines:
    """Line numbers of selections, found by their ``id`` in the raw XML (ElementTree keeps none)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.starts = [m.end() for m in re.finditer(b"\n", raw)]

    def of(self, elem: Element) -> int:
        ident = elem.get("id")
        if not ident:
            return 0
        pos = self.raw.find(b'id="' + ident.encode("utf-8", "replace") + b'"')
        return 0 if pos < 0 else bisect.bisect_right(self.starts, pos) + 1


def _selections(elem: Element) -> list[Element]:
    return elem.findall("selections/selection")


def _profiles(elem: Element) -> list[Element]:
    return elem.findall("profiles/profile")


def _number(elem: Element, file: str, lines: _Lines) -> int:
    """A selection's ``number``: a whole number from 0 to MAX_ATTACKING_MODELS (what a profile's
    counts may add up to), else the file is damaged (BattleScribe writes whole numbers only)."""
    raw = elem.get("number", "1")
    if _COUNT.fullmatch(raw.strip()) and int(float(raw)) <= MAX_ATTACKING_MODELS:
        return int(float(raw))
    line = lines.of(elem)
    raise ProfileError(f"selection {clean(elem.get('name', ''))!r}: number must be a whole number from 0 to "
                       f"{MAX_ATTACKING_MODELS:,}", where=f"{file}:{line}" if line else file, value=raw)


def _points(elem: Element, file: str, lines: _Lines | None = None) -> int:
    """Points of a selection and everything in it (a cost that is no finite number: a damaged file)."""
    total = 0.0
    for cost in elem.iter("cost"):
        if cost.get("name", "").strip().lower() in ("pts", "points"):
            raw = cost.get("value", "0")
            try:
                value = float(raw)
            except ValueError:
                value = math.nan  # no number: refused below, as NaN is
            if not -MAX_ROSTER_POINTS <= value <= MAX_ROSTER_POINTS:  # NaN and infinities too (a swap may cost less)
                line = lines.of(elem) if lines else 0
                raise ProfileError(f"{clean(elem.get('name', '')) or 'the roster'}: a cost of points must be a number "
                                   f"from -{MAX_ROSTER_POINTS:,} to {MAX_ROSTER_POINTS:,}",
                                   where=f"{file}:{line}" if line else file, value=raw)
            total += value
    return round(total)


def _walk(elem: Element, *, into_models: bool = False) -> Iterator[Element]:
    """The selections under ``elem``, not entering nested model selections (unless asked), depth
    first in document order. A stack, not recursion: a file may nest selections thousands deep."""
    stack = [iter(_selections(elem))]
    while stack:
        s = next(stack[-1], None)
        if s is None:
            stack.pop()
            continue
        yield s
        if into_models or s.get("type") != "model":
            stack.append(iter(_selections(s)))


def _is_unit(sel: Element) -> bool:
    if sel.get("type") in ("unit", "model"):
        return True
    return any(p.get("typeName") == convert.UNIT for s in (sel, *_walk(sel, into_models=True)) for p in _profiles(s))


def parse_ros(raw: bytes, file: str, fmt: str = "ros") -> Roster:
    """The roster of a .ros document (the XML bytes; ``fmt`` "ros" or "rosz").

    Raises:
        ProfileError: naming the file: XML that is unsafe, not well-formed, or not a roster.
    """
    root = parse_xml(raw, file)
    if root.tag != "roster":
        raise ProfileError(f"not a BattleScribe roster (its root element is <{root.tag}>)", where=file,
                           hint="catalogues (.cat/.gst) are read by `mathhammer profiles import`")
    lines = _Lines(raw)
    library = _weapon_profiles(root)
    entries: list[RosterUnit] = []
    factions: list[str] = []
    for force in root.iter("force"):
        faction = re.sub(r"^(?:xenos|imperium|chaos|unaligned)\s*-\s*", "", force.get("catalogueName", ""),
                         flags=re.IGNORECASE)
        factions.append(faction)
        for sel in _selections(force):
            if _is_unit(sel):
                entries.append(_roster_unit(sel, faction, file, lines, library))
    if not entries:
        raise ProfileError("a roster with no unit", where=file)
    return Roster(file=file, format=fmt, name=root.get("name", ""), faction=", ".join(dict.fromkeys(factions)),
                  points=_total(root, file), entries=tuple(entries))


def _total(root: Element, file: str) -> int | None:
    """The roster's own total (its ``<costs>``), None when it states none."""
    costs = root.find("costs")
    return None if costs is None else _points(costs, file)


def _weapon_profiles(root: Element) -> dict[str, list[Element]]:
    """Every weapon profile of the file by name (for a weapon selection that carries none)."""
    out: dict[str, list[Element]] = {}
    for p in root.iter("profile"):
        if p.get("typeName") in _WEAPON_TYPES:
            out.setdefault(key(_weapon_name(p.get("name", ""))), []).append(p)
    return out


def _weapon_name(name: str) -> str:
    """A profile's name without BattleScribe's ``➤`` marker of alternative profiles."""
    return clean(name.replace("\u27a4", "")).strip()


class _Unit:
    """A unit selection being read: its weapons (one profile per name) and notes."""

    def __init__(self, sel: Element, file: str, lines: _Lines, library: dict[str, list[Element]]) -> None:
        self.sel, self.file, self.lines, self.library = sel, file, lines, library
        self.weapons: dict[str, dict[str, Any]] = {}
        self.notes: list[Note] = []
        self.line = lines.of(sel)

    def weapon(self, profile: Element, model: str) -> str | None:
        """The unit's name for ``profile``'s weapon (renamed ``NAME (MODEL)`` when another weapon of
        the unit has the name and other numbers); None when it cannot be read."""
        name = _weapon_name(profile.get("name", ""))
        try:
            w = convert.weapon_dict(name, profile.get("typeName", ""), convert.characteristics(profile))
        except ProfileError as e:
            self.notes.append(Note(self.lines.of(profile) or self.line, f"weapon {name!r} cannot be read "
                                   f"({e.message()}): not fired"))
            return None
        for candidate in (name, f"{name} ({model})"):
            have = self.weapons.get(candidate)
            if have is None:
                self.weapons[candidate] = {**w, "name": candidate}
                return candidate
            if {**have, "name": ""} == {**w, "name": ""}:
                return candidate
        self.notes.append(Note(self.line, f"two weapons called {name!r} with different numbers: the second "
                                          "is not fired"))
        return None

    def carried(self, holder: Element, model: str) -> list[tuple[str, int]]:
        """(weapon name, total) of the weapon selections under ``holder`` (not inside other models)."""
        out: list[tuple[str, int]] = []
        for s in _walk(holder):
            if s.get("type") == "model":
                continue
            profiles = [p for p in _profiles(s) if p.get("typeName") in _WEAPON_TYPES]
            self.unread(s)
            if not profiles:
                if any(p.get("typeName") for p in _profiles(s)) or _selections(s):
                    continue
                profiles = self.library.get(key(s.get("name", "")), [])[:1]
                if not profiles:
                    continue  # an option without a profile of its own ("Warlord", a container)
                self.notes.append(Note(self.lines.of(s), f"{s.get('name')!r} has no profile here: the file's "
                                                         "profile of that name is used"))
            count = _number(s, self.file, self.lines)
            if not count:
                self.notes.append(Note(self.lines.of(s), f"{s.get('name')!r}: number 0, left out"))
            named = _NAMED_COUNT.match(clean(s.get("name", "")))
            if named and len(profiles) == 1 and \
                    singular_key(named[2]) == singular_key(_weapon_name(profiles[0].get("name", ""))):
                count *= int(named[1])  # "2 Fragstorm Grenade Launchers": one profile, two of it
            # "L7 missile launcher" -> its "- blast", "- focused" profiles, each with whether it is melee
            weapons: dict[str, list[tuple[str, bool]]] = {}
            hazardous: dict[str, list[bool]] = {}
            for p in profiles:
                n = self.weapon(p, model)
                if n:
                    weapons.setdefault(key(n.partition(" - ")[0]), []).append((n, p.get("typeName") == convert.MELEE))
                    hazardous.setdefault(key(n.partition(" - ")[0]), []).append(any(
                        k.lower() == "hazardous"
                        for k in convert.split_keywords(convert.characteristics(p).get("Keywords", ""))))
            for k, group in weapons.items() if count else ():
                # one to shoot (not a Hazardous one, M86) and one to fight with (ruling M79)
                chosen = fired_profiles(group, hazardous[k])
                out += [(group[i][0], count) for i in chosen]
                if len(group) > len(chosen):
                    fired = " and ".join(group[i][0] for i in chosen)
                    self.notes.append(Note(self.lines.of(s), f"{s.get('name')}: profiles "
                                                             f"{', '.join(n for n, _ in group)}; the loadout fires "
                                                             f"{fired} (another fires as UNIT/WEAPON)"))
        return out

    def unread(self, sel: Element) -> None:
        """A note for the profiles of ``sel`` that read like weapons (a range, attacks and
        strength) but are of a kind no loadout fires (a Tesseract Vault's "C'tan Powers")."""
        odd: dict[str, list[str]] = {}
        for p in _profiles(sel):
            kind = p.get("typeName", "")
            if kind not in _WEAPON_TYPES and {"Range", "A", "S"} <= set(convert.characteristics(p)):
                odd.setdefault(kind, []).append(_weapon_name(p.get("name", "")))
        for kind, names in odd.items():
            self.notes.append(Note(self.lines.of(sel) or self.line, f"{sel.get('name')}: {kind!r} profiles "
                                                                    f"({', '.join(names)}) are not weapon profiles: "
                                                                    "not fired"))


def _bearer_defences(model: Element, u: _Unit) -> list[tuple[str, dict[str, int], int]]:
    """(ability, defences, bearers) of the wargear under a model selection that gives its bearer
    defences (:func:`convert.bearer_defences`: a Weavefield crest, a Storm shield, a Shield
    Drone), ``bearers`` the selection's number."""
    out = []
    for s in _walk(model):
        for p in _profiles(s):
            if p.get("typeName") == "Abilities":
                given = convert.bearer_defences(convert.characteristics(p).get("Description", ""))
                if given is not None:
                    out.append((clean(p.get("name", "")), given, _number(s, u.file, u.lines)))
    return out


def _give_bearer_defences(u: _Unit, borne: list[tuple[list[dict[str, Any]], Element, int,
                                                      list[tuple[str, dict[str, int], int]]]],
                          unit: dict[str, Any]) -> set[str]:
    """Give each model group what the wargear its models bear gives them (``borne``: its
    statlines, its selection, its number of models and the pieces under it;
    :func:`mathhammer.model.give_bearer`, ``unit``: the unit's profile so far): every model bears the
    same number of each piece, the pieces of a name added up (two Shield Drones on each model
    give +2 Wounds); a note for what is left over (the roster does not say which models bear
    it) and where an invulnerable save cannot be given. Returns the keys of the abilities so
    modelled."""
    modelled: set[str] = set()
    for statlines, ms, n, given_by in borne:
        where = u.lines.of(ms) or u.line
        pieces, left_over = borne_each(given_by, n, ms.get("name", ""))
        u.notes += [Note(where, text) for text in left_over]
        whys: dict[str, str] = {}
        for m in statlines:
            whys.update(give_bearer(m, pieces, unit))
        u.notes += [Note(where, why) for why in sorted(whys.values())]
        modelled |= {key(name) for name, given, _ in pieces if len(given) > 1 or name not in whys}
    return modelled


def _statline(model: Element, unit_profiles: list[Element]) -> Element | None:
    own = [p for s in (model, *_walk(model)) for p in _profiles(s) if p.get("typeName") == convert.UNIT]
    if own:
        return own[0]
    if len(unit_profiles) <= 1:
        return unit_profiles[0] if unit_profiles else None
    k = singular_key(model.get("name", ""))
    return next((p for p in unit_profiles if singular_key(p.get("name", "")) == k), unit_profiles[0])


def _roster_unit(sel: Element, faction: str, file: str, lines: _Lines,
                 library: dict[str, list[Element]]) -> RosterUnit:
    u = _Unit(sel, file, lines, library)
    name = clean(sel.get("name", ""))
    categories = [clean(c.get("name", "")) for c in sel.findall("categories/category")]
    own_faction = next((c.split(":", 1)[1].strip() for c in categories if c.lower().startswith("faction:")), faction)
    keywords = sorted({c.upper() for c in categories if not c.lower().startswith("faction:")
                       and c.lower() not in _NOT_KEYWORDS})
    every = [sel, *_walk(sel, into_models=True)]
    warlord = any(s.get("name", "").strip().lower() == "warlord" or
                  any(c.get("name", "").strip().lower() == "warlord" for c in s.findall("categories/category"))
                  for s in every)
    enhancements = tuple(clean(s.get("name", "")) for s in every[1:]
                         if s.get("type") != "model" and not _selections(s) and _points(s, file, lines) > 0
                         and not any(p.get("typeName") in _WEAPON_TYPES for p in _profiles(s)))
    model_sels = [s for s in _walk(sel) if s.get("type") == "model"] if sel.get("type") != "model" else []
    unit_profiles = [p for s in [sel, *(s for s in _walk(sel) if s.get("type") != "model")]
                     for p in _profiles(s) if p.get("typeName") == convert.UNIT]
    groups: list[tuple[Element, Element, int, list[tuple[str, int]]]] = []
    for ms in model_sels or [sel]:
        prof = _statline(ms, unit_profiles)
        if prof is None:
            u.notes.append(Note(lines.of(ms) or u.line, f"model {ms.get('name')!r} has no Unit profile in the file"))
            continue
        n = _number(ms, file, lines) if ms is not sel else 1
        if not n:
            u.notes.append(Note(lines.of(ms) or u.line, f"model {ms.get('name')!r}: number 0, left out"))
            continue
        groups.append((ms, prof, n, u.carried(ms, clean(ms.get("name", "")))))
    if model_sels and groups:
        loose = u.carried(sel, clean(groups[0][0].get("name", "")))
        if loose:
            ms, prof, n, carried = groups[0]
            groups[0] = (ms, prof, n, carried + loose)
            u.notes.append(Note(u.line, f"weapons chosen for the whole unit given to {ms.get('name')}: "
                                        f"{', '.join(w for w, _ in loose)}"))
    models = tuple(RosterModel(clean(ms.get("name", "")), n, tuple(carried), lines.of(ms))
                   for ms, _, n, carried in groups)
    entry = RosterUnit(name=name, line=u.line, faction=own_faction, points=_points(sel, file, lines), models=models,
                       enhancements=enhancements, warlord=warlord, section=next(
                           (clean(c.get("name", "")) for c in sel.findall("categories/category")
                            if c.get("primary") == "true"), ""))
    unit = _build(u, entry, groups, keywords, every) if groups else None
    if unit is None and not any("Unit profile" in n.text or "cannot" in n.text for n in u.notes):
        u.notes.append(Note(u.line, f"{name}: no model with a Unit profile"))
    return replace(entry, unit=unit, notes=tuple(u.notes))


def _build(u: _Unit, entry: RosterUnit, groups: list[tuple[Element, Element, int, list[tuple[str, int]]]],
           keywords: list[str], every: list[Element]) -> Unit | None:
    """The engine's unit, through the profile schema (so it is checked as any profile is)."""
    models: list[dict[str, Any]] = []
    borne: list[tuple[list[dict[str, Any]], Element, int, list[tuple[str, dict[str, int], int]]]] = []
    for ms, prof, n, carried in groups:
        try:
            stats = convert.statline_dict(clean(prof.get("name", "")), convert.characteristics(prof))
        except ProfileError as e:
            u.notes.append(Note(u.lines.of(ms) or u.line, f"statline cannot be read ({e.message()})"))
            return None
        mine = [{**stats, "name": clean(ms.get("name", "")), "count": k,
                 "weapons": [{"name": w, "count": c} for w, c in loadout]} for k, loadout in spread(n, carried)]
        models += mine
        bearer = _bearer_defences(ms, u)
        if bearer:
            borne.append((mine, ms, n, bearer))
    abilities = [(clean(p.get("name", "")), convert.characteristics(p).get("Description", ""))
                 for s in every for p in _profiles(s) if p.get("typeName") == "Abilities"]
    # a weapon's rules (Blast, Sustained Hits) are its keywords, which its profile gives: not the unit's
    rules = [(clean(r.get("name", "")), " ".join((r.findtext("description") or "").split()))
             for s in every if not any(p.get("typeName") in _WEAPON_TYPES for p in _profiles(s))
             for r in s.findall("rules/rule")]
    data: dict[str, Any] = {"name": entry.name, "faction": entry.faction, "points": entry.points, "models": models,
                            "keywords": keywords, "weapons": list(u.weapons.values())}
    data.update(convert.defences(abilities + rules))
    # wargear that gives the unit keywords (a Marker Drone: MARKERLIGHT; ruling M81)
    data["keywords"] = [*keywords, *dict.fromkeys(k for _, text in abilities for k in convert.bearer_unit_keywords(text)
                                                  if k not in keywords)]
    if any(key(n) == "stealth" for n, _ in rules + abilities):
        data["abilities"] = ["STEALTH"]
    modelled = {"stealth"} | ({"invulnerable save"} if "invulnerable" in data else set())
    modelled |= _give_bearer_defences(u, borne, data)
    for aname, _ in abilities + rules:  # "Deadly Demise D3", as the importer reads it
        demise = convert.deadly_demise(aname)
        if demise and "deadly_demise" not in data:
            try:
                dice.parse(demise)
            except ProfileError:
                continue  # kept as text
            data["deadly_demise"] = demise
            modelled.add(key(aname))
    named: list[str] = []
    for aname, _ in abilities + rules:  # "Firing Deck 2", "For the Greater Good": as the importer reads them
        read = convert.unit_rule(aname)
        if read is None or (read[0] == "firing_deck" and "firing_deck" in data):
            continue
        modelled.add(key(aname))
        if read[0] == "firing_deck":
            data["firing_deck"] = read[1]
        elif read[1] not in named:
            named.append(str(read[1]))
    if named:
        data["rules"] = named
    unmodelled = sorted({n for n, text in abilities + rules if key(n) not in modelled
                         and not convert.states_a_defence(n, text)
                         and not (key(n).startswith("feel no pain") and "feel_no_pain" in data)}, key=key)
    if unmodelled:
        data["unmodelled"] = unmodelled
    try:
        unit, cut = attacking(_unit(_Reader(u.file, f"unit {entry.name!r} (line {u.line})", data)))
    except ProfileError as e:
        u.notes.append(Note(u.line, f"{entry.name}: cannot be used ({e.message()})"))
        return None
    u.notes += [Note(u.line, line) for line in cut]
    return unit
