"""A BSData unit entry -> a YAML-ready unit of the profile schema, and what could not be read.

How a catalogue's entry is read (see docs/import.md for the why of each choice):

- **Models.** Every ``selectionEntry`` of type "model" inside the unit (through groups and
  entryLinks) is a model type; a unit entry of type "model" is itself its one model. Each model
  type with a default count gives one ``models:`` entry (named as the entry, with its "Unit"
  profile; the unit's own "Unit" profile when the model entry has none). A model type's default
  count is its ``min`` constraint (``field="selections" scope="parent"``) or ``defaultAmount``;
  when a group's models add up to less than the group's ``min``, the group's default entry (or
  else the model type with the largest ``max``, or else the first) makes up the difference.
- **Default loadout** (per model): the weapons of the upgrades the model must take (their ``min``,
  or ``defaultAmount``) and of each group's ``defaultSelectionEntryId`` entry (as many as the
  group's ``min``, at least one; a default naming another group's link, in the same file, to one
  of the group's entries takes that entry: ruling M83). A group that must be taken but names no
  default takes its first entry (an assumption, listed in the summary). An upgrade with several weapon profiles
  (``Reaper chainsword - strike`` / ``- sweep``, a kombi-weapon) counts with its "- strike"
  profile where it has one, else its first; the others are options. A pistol carried beside
  another ranged weapon, and a second melee weapon without EXTRA ATTACKS, are left out of the
  loadout (a model shoots with one and fights with one, R-1.5): they are options.
- **Options** of a statline: every other weapon its model entry can take, and the weapons of
  the optional model types (no default count) of the same group, or of a sub-group with no model
  of a default count of its own (a model that may replace it: the Pathfinders' "Special Weapons
  (0-3)"). An optional model type beside no model it could replace is reported as a problem and
  its weapons are options of the unit's most numerous statline (ruling M56).
- **Carriers**: a wargear entry without a weapon profile whose weapons are entries it must take
  once ("Gun Drone" -> its twin pulse carbine) gives its one weapon an alias of its name, so a
  roster line naming the drone fires the weapon (ruling M58; :func:`.build.import_files` drops
  an alias that would name different profiles).
- **Bearer defences**: an upgrade a model takes by default whose text gives its bearer an
  invulnerable save, Feel No Pain or Wounds (:func:`.convert.bearer_defences`: a Slabshield's
  "Wounds characteristic of 4") is named in that statline's ``wargear:`` and listed in the unit's,
  and the statline keeps its own characteristics: loading the profile gives it the wargear
  (:func:`mathhammer.model.give_bearer`), and a roster that lists other wargear for the model
  gives that instead (ruling M81).
- **Named abilities**: ``Firing Deck N`` -> ``firing_deck``, "For the Greater Good" -> ``rules``
  (ruling M57).
- **Points**: the entry's ``pts`` cost is the smallest size's; a ``set`` modifier of the cost
  under one condition "at least N (or more than N-1) selections" of the unit's models (or of a
  model type, or of the group holding them) is the size of N models. Other cost modifiers
  (per-wargear prices, detachment discounts) are not sizes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import dice
from ..errors import ProfileError
from ..model import give_bearer
from ..rules import fired_profiles, melee_weight, not_attacking_with
from .catalogue import Catalogue, Index
from .convert import (
    MELEE,
    RANGED,
    UNIT,
    bearer_defences,
    bearer_unit_keywords,
    characteristics,
    deadly_demise,
    defences,
    split_keywords,
    states_a_defence,
    statline_dict,
    unit_rule,
    weapon_dict,
)

__all__ = ["Problem", "UnitResult", "read_unit"]

_WEAPON_TYPES = (RANGED, MELEE)
_MAX_DEPTH = 12
_DEFENSIVE_ABILITIES = {"stealth": "Stealth"}
#: A wargear name that counts more than one of something ("Two twin volkite chargers"): no carrier alias.
_COUNTED = re.compile(r"(?:[2-9]|[1-9][0-9]+|two|three|four|five|six|seven|eight|nine|ten)\b")
#: Groups and entries that are not a unit's matched-play wargear: Crusade (narrative) upgrades,
#: army-level enhancements and similar; their weapons are neither loadouts nor options.
#: Groups of enhancements (a detachment's "Enhancements", "Biotide Enhancements"; ruling M85).
_ENHANCEMENTS = re.compile(r"enhancement", re.IGNORECASE)
_NOT_WARGEAR = re.compile(r"crusade|weapon modifications|weapon upgrades|enhancement|battle (?:traits|honours|scars)"
                          r"|relic|blackstone|territory control|headhunter|shadow operations|chivalric quest"
                          r"|mighty champions|specialisms", re.IGNORECASE)


def _skipped(node: ET.Element, link: ET.Element | None) -> bool:
    """A group of Crusade / army-level choices (a weapon entry is never skipped by its name: "Relic Blade")."""
    if node.tag != "selectionEntryGroup":
        return False
    return bool(_NOT_WARGEAR.search(node.get("name", "")) or
                (link is not None and _NOT_WARGEAR.search(link.get("name", ""))))


@dataclass(frozen=True)
class Problem:
    """Something of a unit that was not read, and why (listed in the import summary)."""

    unit: str
    what: str
    reason: str


@dataclass
class UnitResult:
    """A YAML-ready unit (None when the unit could not be read at all) and the problems met."""

    data: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)


def _clean(name: str) -> str:
    """A profile's name as shown: no leading ``➤`` marker, single spaces."""
    return " ".join(name.replace("\u27a4", " ").split())


def _bound(node: ET.Element, link: ET.Element | None, kind: str, parent: str = "") -> int | None:
    """The ``min``/``max`` selections-per-parent constraint of an entry (its link's first);
    ``parent``: the id of the group holding the entry, a scope that means the same as "parent"."""
    for src in (link, node):
        if src is None:
            continue
        for holder in src:
            if holder.tag != "constraints":
                continue
            for c in holder:
                if (c.get("type") == kind and c.get("field") == "selections"
                        and (c.get("scope") == "parent" or (parent and c.get("scope") == parent))):
                    try:
                        return int(float(c.get("value", "0")))
                    except ValueError:
                        return None
    return None


def _default_amount(node: ET.Element, link: ET.Element | None, parent: str = "") -> int:
    low = _bound(node, link, "min", parent) or 0
    for src in (link, node):
        if src is not None and src.get("defaultAmount"):
            try:
                low = max(low, int(float(src.get("defaultAmount", "0"))))
            except ValueError:
                pass
            break
    return low


def _is_model(node: ET.Element) -> bool:
    return node.tag == "selectionEntry" and node.get("type") == "model"


@dataclass
class _Gear:
    """Weapons met while walking a model's entries: (profile, count chosen by default), in order."""

    #: (profile, count, name of the entry holding the weapon's entry, carrier): ``carrier`` is the
    #: wargear entry that comes with this weapon ("Gun Drone" -> its twin pulse carbine), set on
    #: the profile a loadout takes, "" for others
    items: list[tuple[ET.Element, int, str, str]] = field(default_factory=list)
    guessed: list[str] = field(default_factory=list)
    #: (entry name, what it gives, count chosen by default) of the wargear that gives its bearer
    #: defences (:func:`.convert.bearer_defences`: a Storm shield, a Weavefield crest)
    defences: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    #: (group id, the names of its members) of every choice met (what a model may take instead);
    #: while walking, a piece chosen in a group carries "alternatives" and "_group" in what it
    #: gives, which :meth:`_Walker._unambiguous` settles before :meth:`_Walker.gear` returns
    choices: list[tuple[str, list[str]]] = field(default_factory=list)


class _Walker:
    def __init__(self, index: Index) -> None:
        self.index = index
        #: the most models the last :meth:`models` call's unit may have (0 when unknown)
        self.max_total = 0
        #: (models in all, model entry id -> count) of each upgrade holding models ("20 Gretchin and 2 Runtherds")
        self.alternatives: list[tuple[int, dict[str, int]]] = []
        #: optional model entries of the last :meth:`models` call's unit that replace no model of it
        self.unplaced: list[ET.Element] = []

    # -- models --------------------------------------------------------------------------------

    def models(self, unit: ET.Element) -> list[tuple[ET.Element, ET.Element | None, int, list[ET.Element]]]:
        """(model entry, link, default count, optional model entries it may be replaced by) of a
        unit, in order. :attr:`unplaced` is set to the optional model entries that sit beside no
        model with a default count (nothing they could replace)."""
        out: list[tuple[ET.Element, ET.Element | None, int, list[ET.Element]]] = []
        self.max_total = 0
        self.alternatives = []
        self.unplaced = self._models_in(unit, None, out, 0, set())
        return out

    def _models_in(self, node: ET.Element, group: ET.Element | None,
                   out: list[tuple[ET.Element, ET.Element | None, int, list[ET.Element]]], depth: int,
                   seen: set[str], capped: bool = False) -> list[ET.Element]:
        """Model entries under ``node``; ``capped`` when an enclosing group's max already counts them.

        Returns the optional model entries (no default count) of ``node`` and its sub-groups that
        found no model with a default count beside them: the enclosing group gives them to its
        own models ("Pathfinders w/ ion rifle" in "Special Weapons (0-3)" inside "Pathfinders").
        """
        if depth > _MAX_DEPTH:
            return []
        loose: list[ET.Element] = []
        group_max = _bound(group, None, "max") if group is not None else None
        members: list[tuple[ET.Element, ET.Element | None, int]] = []
        # upgrades that hold models ("10 Gretchin and 1 Runtherd" in a "Unit Composition" group)
        containers: list[tuple[ET.Element, ET.Element | None]] = []
        for child, link in self.index.children(node):
            if _is_model(child):
                members.append((child, link, _default_amount(child, link, node.get("id", ""))))
            elif child.get("id", "") in seen or _skipped(child, link):
                continue
            elif child.tag == "selectionEntryGroup":
                loose += self._models_in(child, child, out, depth + 1, seen | {child.get("id", "")},
                                         capped or bool(group_max))
            elif any(_is_model(c) for c, _ in self.index.children(child)):
                containers.append((child, link))
        for cont, _ in containers:
            inside: list[tuple[ET.Element, ET.Element | None, int, list[ET.Element]]] = []
            self._models_in(cont, None, inside, depth + 1, seen | {cont.get("id", "")}, True)
            sizes: dict[str, int] = {}
            for m, _lk, n, _opt in inside:
                sizes[m.get("id", "")] = sizes.get(m.get("id", ""), 0) + n
            self.alternatives.append((sum(sizes.values()), sizes))
        if containers and not members:
            default = group.get("defaultSelectionEntryId", "") if group is not None else ""
            chosen = next((c for c in containers if default and default in (
                c[0].get("id"), c[1].get("id") if c[1] is not None else None)), None)
            chosen = chosen or next((c for c in containers if _default_amount(*c) > 0), containers[0])
            loose += self._models_in(chosen[0], None, out, depth + 1, seen | {chosen[0].get("id", "")}, capped)
        if not members:
            return loose
        if not capped:
            self.max_total += group_max if group_max else sum(_bound(m, lk, "max") or n for m, lk, n in members)
        if group is not None:
            need = (_bound(group, None, "min") or 0) - sum(n for _, _, n in members)
            if need > 0:
                default = group.get("defaultSelectionEntryId", "")
                pick = next((i for i, (m, lk, _) in enumerate(members)
                             if default and default in (m.get("id"), lk.get("id") if lk is not None else None)), None)
                if pick is None:
                    maxes = [_bound(m, lk, "max") or 0 for m, lk, _ in members]
                    pick = maxes.index(max(maxes))
                m, lk, n = members[pick]
                members[pick] = (m, lk, n + need)
        optional = [m for m, _, n in members if n == 0] + loose
        if not any(n > 0 for _, _, n in members):
            return optional
        for m, lk, n in members:
            if n > 0:
                out.append((m, lk, n, optional))
        return []

    # -- gear ----------------------------------------------------------------------------------

    def gear(self, entry: ET.Element, link: ET.Element | None, count: int = 1) -> _Gear:
        """The weapons reachable from an entry (not through other models), with default counts."""
        acc = _Gear()
        self._own_profiles(entry, link, count, acc, _clean(entry.get("name", "")))
        self._walk(entry, count, acc, 0, {entry.get("id", "")}, _clean(entry.get("name", "")))
        self._unambiguous(acc)
        return acc

    def around(self, unit: ET.Element, models: set[str], owner: str) -> _Gear:
        """The weapons and wargear of a unit entry outside its model entries (ids ``models``)."""
        acc = _Gear()
        self._walk(unit, 1, acc, 0, {unit.get("id", "")} | models, owner)
        self._unambiguous(acc)
        return acc

    @staticmethod
    def _unambiguous(acc: _Gear) -> None:
        """Keep, as a default piece's ``alternatives``, only the other choices of its own group
        that name nothing else of the model: not a weapon it carries by default, nor a choice of
        another of its groups (a Skathach's right arm offers the left arm's Inferno Lance too).
        A piece not taken by default has none."""
        carried = {" ".join(_clean(p.get("name", "")).partition(" - ")[0].lower().split())
                   for p, n, _o, _c in acc.items if n > 0}
        out = []
        for a, given, n in acc.defences:
            if "_group" in given:
                given = dict(given)
                group = given.pop("_group")
                # (a group that holds this piece too is one around its own: not elsewhere)
                elsewhere = {" ".join(x.lower().split()) for gid, names in acc.choices
                             if gid != group and a not in names for x in names}
                alternatives = [x for x in given.pop("alternatives", []) if " ".join(x.lower().split()) not in
                                carried | elsewhere]
                if n > 0 and alternatives:
                    given["alternatives"] = alternatives
            out.append((a, given, n))
        acc.defences[:] = out

    def _weapon_profiles(self, node: ET.Element, link: ET.Element | None) -> list[ET.Element]:
        return [p for p in self.index.profiles(node, link) if p.get("typeName") in _WEAPON_TYPES]

    def _own_profiles(self, node: ET.Element, link: ET.Element | None, count: int, acc: _Gear, owner: str,
                      carrier: str = "") -> None:
        """The weapon profiles of one entry; ``owner`` is the model or wargear entry carrying it,
        ``carrier`` the wargear entry that comes with it (if any)."""
        found = self._weapon_profiles(node, link)
        # the first ranged profile and the "- strike" (else the first) melee one (docs/profiles.md)
        chosen = fired_profiles([(_clean(p.get("name", "")), p.get("typeName") == MELEE) for p in found],
                                [_hazardous(p) for p in found])
        for i, p in enumerate(found):
            # the carrier names the first (a "Gun Drone" is its twin pulse carbine's alias)
            acc.items.append((p, count if i in chosen else 0, owner, carrier if chosen and i == chosen[0] else ""))

    def _bearer(self, entry: ET.Element, link: ET.Element | None, count: int, acc: _Gear) -> None:
        """The defences a wargear entry gives its bearer and the keywords it gives its unit (under
        ``keywords``), under the entry's name (what rosters list); ``count``: how many are taken
        by default."""
        name = _clean((link.get("name", "") if link is not None else "") or entry.get("name", ""))
        for p in self.index.profiles(entry, link):
            if p.get("typeName") == "Abilities":
                text = characteristics(p).get("Description", "")
                given: dict[str, Any] = dict(bearer_defences(text) or {})
                keywords = bearer_unit_keywords(text)
                if keywords:
                    given["keywords"] = list(keywords)
                if given:
                    acc.defences.append((name, given, count))

    def _choice_names(self, node: ET.Element, link: ET.Element | None) -> list[str]:
        """The names a roster lists a group's member under: an entry's (its link's), or those of
        the entries of a group inside the group."""
        if node.tag == "selectionEntry":
            return [_clean((link.get("name", "") if link is not None else "") or node.get("name", ""))]
        return [_clean((lk.get("name", "") if lk is not None else "") or c.get("name", ""))
                for c, lk in self.index.children(node) if c.tag == "selectionEntry" and not _is_model(c)
                and not _skipped(c, lk)]

    def _carrier(self, entry: ET.Element, link: ET.Element | None) -> str:
        """The name under which ``entry`` carries its weapons: a wargear entry without a weapon
        profile of its own whose weapons are all entries it must take once ("Gun Drone" -> 1 twin
        pulse carbine, "Recon drone" -> 1 drone burst cannon); "" for any other entry (one with a
        choice of weapons, or with two of one: "Two heavy flamers")."""
        if entry.get("type") != "upgrade" or self._weapon_profiles(entry, link):
            return ""
        for child, lk in self.index.children(entry):
            if _skipped(child, lk):
                continue
            if child.tag != "selectionEntry":
                return ""
            if self._weapon_profiles(child, lk) and (_default_amount(child, lk) != 1 or
                                                      (_bound(child, lk, "max") or 1) != 1):
                return ""
        return _clean((link.get("name", "") if link is not None else "") or entry.get("name", ""))

    def _walk(self, node: ET.Element, count: int, acc: _Gear, depth: int, stack: set[str], owner: str,
              carrier: str = "") -> None:
        """Weapons under ``node``; ``carrier``: ``node`` is a wargear entry whose required weapons it names."""
        if depth > _MAX_DEPTH:
            return
        for child, link in self.index.children(node):
            ident = child.get("id", "")
            if ident in stack or _is_model(child) or _skipped(child, link):
                continue
            if child.tag == "selectionEntry":
                amount = _default_amount(child, link)
                n = count * amount
                self._own_profiles(child, link, n, acc, owner, carrier if amount > 0 else "")
                self._bearer(child, link, n, acc)
                self._walk(child, n, acc, depth + 1, stack | {ident}, _clean(child.get("name", "")),
                           self._carrier(child, link))
            else:
                self._group(child, link, count, acc, depth, stack | {ident}, owner)

    def _group(self, group: ET.Element, link: ET.Element | None, count: int, acc: _Gear, depth: int,
               stack: set[str], owner: str) -> None:
        members = [(c, lk) for c, lk in self.index.children(group)
                   if not _is_model(c) and c.get("id", "") not in stack and not _skipped(c, lk)]
        low = _bound(group, link, "min") or 0
        amounts = [_default_amount(c, lk) if c.tag == "selectionEntry" else 0 for c, lk in members]
        default = group.get("defaultSelectionEntryId", "") or (link.get("defaultSelectionEntryId", "")
                                                                 if link is not None else "")
        pick = next((i for i, (c, lk) in enumerate(members)
                     if default and default in (c.get("id"), lk.get("id") if lk is not None else None,
                                                lk.get("targetId") if lk is not None else None)), None)
        if default and pick is None:
            # the default is another group's link in this file (a copied group kept its id; ruling M83):
            # the entry that link points to
            home = self.index.group_home.get(group.get("id", ""))
            linked = {target for file, target in self.index.links.get(default, ()) if file == home}
            pick = next((i for i, (c, _lk) in enumerate(members) if c.get("id") in linked), None)
        guess = None
        if pick is not None:
            amounts[pick] = max(amounts[pick], low - (sum(amounts) - amounts[pick]), 1)
        elif low > sum(amounts) and members and count > 0:
            amounts[0] += low - sum(amounts)
            guess = 0
            acc.guessed.append(f"{group.get('name', '')}: took {members[0][0].get('name', '')} (no default given)")
        names = [self._choice_names(c, lk) for c, lk in members]
        acc.choices.append((group.get("id", ""), [x for group_names in names for x in group_names]))
        for i, ((child, lk), n) in enumerate(zip(members, amounts, strict=True)):
            ident = child.get("id", "")
            if child.tag == "selectionEntry":
                found = len(acc.defences)
                self._own_profiles(child, lk, count * n, acc, owner)
                self._bearer(child, lk, count * n, acc)
                self._walk(child, count * n, acc, depth + 1, stack | {ident}, _clean(child.get("name", "")),
                           self._carrier(child, lk))
                if i == guess:  # a guessed choice fires, but gives no statline defences (it may well be another)
                    acc.defences[found:] = [(a, given, 0) for a, given, _n in acc.defences[found:]]
                others = list(dict.fromkeys(x for j, group_names in enumerate(names) if j != i for x in group_names))
                if others:  # what a model takes instead of it (a Storm Shield's Plasma pistol; ruling M81)
                    acc.defences[found:] = [(a, {**given, "alternatives": others, "_group": group.get("id", "")}, k)
                                            for a, given, k in acc.defences[found:]]
            else:
                self._group(child, lk, count * max(n, 1) if n else count, acc, depth + 1, stack | {ident}, owner)

    # -- abilities -----------------------------------------------------------------------------

    def enhancements(self, node: ET.Element, depth: int = 0, stack: frozenset[str] = frozenset(),
                     inside: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """(name, what it gives its bearer) of each enhancement the catalogue lets this unit take
        (the entries of groups named "... Enhancements" it links) whose whole text gives its
        bearer defences or its unit keywords, as :meth:`_bearer` reads wargear (ruling M85)."""
        if depth > _MAX_DEPTH:
            return
        for child, link in self.index.children(node):
            ident = child.get("id", "")
            if ident in stack:
                continue
            here = inside or (child.tag == "selectionEntryGroup" and bool(
                _ENHANCEMENTS.search(child.get("name", "")) or
                (link is not None and _ENHANCEMENTS.search(link.get("name", "")))))
            if here and child.tag == "selectionEntry" and not _is_model(child):
                acc = _Gear()
                self._bearer(child, link, 1, acc)
                for name, given, _n in acc.defences:
                    yield name, given
            elif child.tag == "selectionEntryGroup" or (child.tag == "selectionEntry" and not here):
                yield from self.enhancements(child, depth + 1, stack | {ident}, here)

    def abilities(self, nodes: list[tuple[ET.Element, ET.Element | None]]) -> Iterator[tuple[str, str]]:
        """(name, description) of the "Abilities" profiles and rules of the unit and its model entries."""
        for node, link in nodes:
            for p in self.index.profiles(node, link):
                if p.get("typeName") == "Abilities":
                    yield _clean(p.get("name", "")), " ".join(characteristics(p).get("Description", "").split())
            yield from self.index.rule_names(node, link)


def _hazardous(profile: ET.Element) -> bool:
    """Whether a weapon profile's keywords include Hazardous."""
    return any(" ".join(k.lower().split()) == "hazardous"
               for k in split_keywords(characteristics(profile).get("Keywords", "")))


def _keywords(index: Index, unit: ET.Element, link: ET.Element | None) -> list[str]:
    """The unit's categoryLinks in capitals; ``Faction: X`` markers become the keyword ``X``."""
    out: list[str] = []
    for node in (link, unit):
        if node is None:
            continue
        for holder in node:
            if holder.tag != "categoryLinks":
                continue
            for cl in holder:
                target = index.target(cl)
                name = cl.get("name") or (target.get("name") if target is not None else None) or ""
                name = " ".join(name.split())
                if name.lower().startswith("faction:"):
                    name = name.split(":", 1)[1].strip()
                if name and name.upper() not in out:
                    out.append(name.upper())
    return sorted(out)


def _points_type(index: Index) -> str:
    """The id of the game system's cost type named "pts" ('' when there is none)."""
    for cat in index.catalogues.values():
        if cat.game_system:
            for holder in cat.root:
                if holder.tag == "costTypes":
                    for ct in holder:
                        if ct.get("name", "").strip().lower() == "pts":
                            return ct.get("id", "")
    return ""


def _cost(node: ET.Element, link: ET.Element | None) -> int | None:
    for src in (link, node):
        if src is None:
            continue
        for holder in src:
            if holder.tag == "costs":
                for c in holder:
                    if c.get("name", "").strip().lower() == "pts":
                        try:
                            return int(float(c.get("value", "")))
                        except ValueError:
                            return None
    return None


def _sizes(unit: ET.Element, link: ET.Element | None, base: int | None, min_total: int, max_total: int,
           model_counts: dict[str, int], groups: set[str], cost_type: str,
           alternatives: list[tuple[int, dict[str, int]]]) -> list[dict[str, int]]:
    """[{models, points}] of each unit size the cost modifiers name, ascending.

    A modifier "from N models" sets the points of sizes N up to the next such N (or the unit's
    largest size): the size listed is the largest of that range (5 or 10 Intercessors, not 6).
    """
    starts: dict[int, int] = {}
    if base is not None:
        starts[min_total] = base
    for src in (unit, link):
        if src is None:
            continue
        for m in _modifiers(src):
            if m.get("type") != "set" or m.get("field") not in (cost_type, "pts"):
                continue
            conds = list(m.iter("condition"))
            if len(conds) != 1 or any(g.get("type") == "or" for g in m.iter("conditionGroup")):
                continue
            c = conds[0]
            if c.get("field") != "selections" or c.get("type") not in ("atLeast", "greaterThan", "equalTo"):
                continue
            try:
                n = int(float(c.get("value", ""))) + (1 if c.get("type") == "greaterThan" else 0)
                value = int(float(m.get("value", "")))
            except ValueError:
                continue
            child = c.get("childId", "")
            if child == "model" or child in groups or child == unit.get("id"):
                total = n
            elif any(counts.get(child) == n for _, counts in alternatives):
                total = next(t for t, counts in alternatives if counts.get(child) == n)
            elif child in model_counts:
                total = n + min_total - model_counts[child]
            else:
                continue
            if total > min_total and total not in starts:
                starts[total] = value
    first = sorted(starts)
    top = max(max_total, first[-1] if first else 0, *(t for t, _ in alternatives))
    out = []
    for i, n in enumerate(first):
        size = first[i + 1] - 1 if i + 1 < len(first) else top
        out.append({"models": size, "points": starts[n]})
    return out


def _modifiers(node: ET.Element) -> Iterator[ET.Element]:
    for holder in node:
        if holder.tag == "modifiers":
            yield from (m for m in holder if m.tag == "modifier")
        elif holder.tag == "modifierGroups":
            for g in holder:
                yield from _modifiers(g)


def _group_ids(index: Index, unit: ET.Element) -> set[str]:
    """Ids of the groups of a unit that hold its model entries."""
    out: set[str] = set()

    def visit(node: ET.Element, depth: int) -> None:
        for child, _ in index.children(node):
            if child.tag == "selectionEntryGroup" and depth < _MAX_DEPTH:
                if any(_is_model(c) for c, _ in index.children(child)):
                    out.add(child.get("id", ""))
                visit(child, depth + 1)

    visit(unit, 0)
    return out


def read_unit(index: Index, cat: Catalogue, unit: ET.Element, link: ET.Element | None) -> UnitResult:
    """The YAML-ready unit of one unit entry, with the problems met (never raises for bad data)."""
    walker = _Walker(index)
    name = _clean((link.get("name") if link is not None else None) or unit.get("name") or "")
    result = UnitResult(data=None)
    unit_profiles = [p for p in index.profiles(unit, link) if p.get("typeName") == UNIT]
    if _is_model(unit):
        model_list: list[tuple[ET.Element, ET.Element | None, int, list[ET.Element]]] = [(unit, link, 1, [])]
    else:
        model_list = walker.models(unit)
        if not model_list and unit_profiles:
            model_list = [(unit, link, 1, [])]
    if not model_list:
        result.problems.append(Problem(name, "unit", "no model entry with a default count and no statline"))
        return result
    carriers: dict[str, list[str]] = {}  # carrier name -> the weapons it comes with

    def carried_by(carrier: str, wname: str | None) -> None:
        """Note that ``carrier`` comes with ``wname`` ("" for a weapon that could not be read)."""
        if carrier and (wname or "") not in carriers.setdefault(carrier, []):
            carriers[carrier].append(wname or "")
    weapons: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    models: list[dict[str, Any]] = []
    #: each statline's wargear that gives its bearer defences, taken by every model by default
    borne: list[tuple[dict[str, Any], list[tuple[str, dict[str, Any], int]]]] = []
    #: such wargear a model may take (for rosters: ``wargear:``)
    optional_gear: list[tuple[str, dict[str, Any]]] = []

    def add_weapon(profile: ET.Element, owner: str) -> str | None:
        wname = _clean(profile.get("name", ""))
        try:
            w = weapon_dict(wname, profile.get("typeName", ""), characteristics(profile))
        except ProfileError as e:
            what = f"weapon {wname!r}"
            if not any(p.what == what for p in result.problems):
                result.problems.append(Problem(name, what, e.message()))
            return None
        key = wname.lower()
        if key in weapons and weapons[key] != w:
            alt = f"{wname} ({owner})"
            w["name"] = alt
            key = alt.lower()
            n = 2
            while key in weapons and weapons[key] != w:
                w["name"] = f"{wname} ({owner} {n})"
                key = w["name"].lower()
                n += 1
        if key not in weapons:
            weapons[key] = w
            order.append(key)
        return str(weapons[key]["name"])

    unit_keywords = _keywords(index, unit, link)
    ability_nodes: list[tuple[ET.Element, ET.Element | None]] = [(unit, link)]
    sibling_profiles = [p for entry, elink, _n, optional in model_list if entry is not unit
                        for node, lk in ((entry, elink), *((o, None) for o in optional))
                        for p in index.profiles(node, lk) if p.get("typeName") == UNIT]
    for entry, elink, count, optional in model_list:
        profs = [p for p in index.profiles(entry, elink) if p.get("typeName") == UNIT] if entry is not unit else []
        mname = _clean(entry.get("name", ""))
        if not profs:
            profs = unit_profiles
        if not profs and sibling_profiles:
            # a model entry without a statline of its own shares one given on another model of the unit
            profs = sibling_profiles
            result.assumptions.append(f"{name}: model {mname!r} has no statline of its own; it takes "
                                      f"{_clean(_pick(profs, mname).get('name', ''))!r} of the unit")
        if not profs:
            result.problems.append(Problem(name, f"model {mname!r}", "no statline (no 'Unit' profile)"))
            continue
        prof = _pick(profs, mname)
        try:
            stat = statline_dict(mname, characteristics(prof))
        except ProfileError as e:
            result.problems.append(Problem(name, f"model {mname!r}", e.message()))
            continue
        if entry is not unit:
            ability_nodes.append((entry, elink))
        stat["count"] = count
        gear = walker.gear(entry, elink) if entry is not unit else walker.gear(unit, link)
        result.assumptions.extend(f"{name}: {g}" for g in gear.guessed)
        loadout: dict[str, int] = {}
        options: list[str] = []
        for profile, n, owner, carrier in gear.items:
            wname = add_weapon(profile, owner)
            carried_by(carrier, wname)
            if wname is None:
                continue
            if n > 0:
                loadout[wname] = loadout.get(wname, 0) + n
            elif wname not in options:
                options.append(wname)
        others = [walker.gear(other, None) for other in optional]
        for other_gear in others:
            for profile, _n, owner, carrier in other_gear.items:
                wname = add_weapon(profile, owner)
                carried_by(carrier, wname)
                if wname is not None and wname not in options:
                    options.append(wname)
        own = _keywords(index, entry, elink) if entry is not unit else []
        loadout = _attacks_with(loadout, weapons, options,
                                pistols_beside_others=bool(_FIRE_BOTH & {*unit_keywords, *own}))
        options = [o for o in options if o not in loadout]
        stat_out: dict[str, Any] = {"name": mname, "count": count}
        stat_out.update({k: v for k, v in stat.items() if k not in ("name", "count")})
        if loadout:
            stat_out["weapons"] = [k if v == 1 else {"name": k, "count": v} for k, v in loadout.items()]
        if options:
            stat_out["options"] = options
        models.append(stat_out)
        every = [(a, given, n) for a, given, n in gear.defences if n > 0]
        if every:
            borne.append((stat_out, every))
        optional_gear += [(a, given) for a, given, n in gear.defences if n == 0]
        optional_gear += [(a, given) for other in others for a, given, _n in other.defences]
    if not models:
        if not result.problems:
            result.problems.append(Problem(name, "unit", "no readable statline"))
        return result
    # the rank and file first, then sergeants and champions (stable): the order models are listed
    # in, and the statline --target-models grows (docs/profiles.md)
    models.sort(key=lambda m: -m["count"])
    # unit-level wargear (outside the model entries), given to a one-model statline or as options
    if not _is_model(unit) and not (len(model_list) == 1 and model_list[0][0] is unit):
        top = walker.around(unit, {m.get("id", "") for m, *_ in model_list}, name)
        main = max(models, key=lambda m: m["count"])
        optional_gear += [(a, given) for a, given, _n in top.defences]
        for profile, n, owner, carrier in top.items:
            wname = add_weapon(profile, owner)
            carried_by(carrier, wname)
            if wname is None:
                continue
            each, rest = divmod(n, main["count"])
            if n > 0 and rest == 0:
                gear_list = main.setdefault("weapons", [])
                gear_list.append(wname if each == 1 else {"name": wname, "count": each})
            elif wname not in main.get("options", []) and not _carried(main, wname):
                main.setdefault("options", []).append(wname)
    # optional model types beside no model they could replace (a unit of 1-3 Broadsides): not a
    # statline (a statline has at least one model); their weapons are the main statline's options
    main = max(models, key=lambda m: m["count"])
    for other in walker.unplaced if not _is_model(unit) else ():
        other_gear = walker.gear(other, None)
        optional_gear += [(a, given) for a, given, _n in other_gear.defences]
        for profile, _n, owner, carrier in other_gear.items:
            wname = add_weapon(profile, owner)
            carried_by(carrier, wname)
            if wname is not None and wname not in main.get("options", []) and not _carried(main, wname):
                main.setdefault("options", []).append(wname)
        result.problems.append(Problem(name, f"model {_clean(other.get('name', ''))!r}",
                                       "an optional model type (none by default) that replaces no model of the "
                                       f"unit: not a statline; its weapons are options of {main['name']!r}"))
    abilities = list(dict.fromkeys(walker.abilities(ability_nodes)))
    data: dict[str, Any] = {"name": name, "faction": cat.faction}
    base = _cost(unit, link)
    data["points"] = base
    counts = {m.get("id", ""): n for m, _, n, _ in model_list}
    min_total = sum(m["count"] for m in models)
    sizes = _sizes(unit, link, base, min_total, max(walker.max_total, min_total), counts, _group_ids(index, unit),
                   _points_type(index), walker.alternatives)
    if len(sizes) > 1:
        data["sizes"] = sizes
    home = index.home.get(unit.get("id", ""), cat)
    data["source"] = f"BSData {Path(home.file).name} entry {unit.get('id', '')}"
    data["models"] = models
    data.update(defences(abilities))
    for stat_out, every in borne:  # a Storm shield's Wounds, a Weavefield crest's save (ruling M81)
        for why in give_bearer(dict(stat_out), every, data).values():  # (given when the profile is loaded)
            result.assumptions.append(f"{name}: model {stat_out['name']!r}: {why}")
        stat_out["wargear"] = [a for a, _given, n in every for _ in range(n)]
        given_keywords = [k for _, given, _n in every for k in given.get("keywords", ()) if k not in unit_keywords]
        if given_keywords:
            unit_keywords = sorted({*unit_keywords, *given_keywords})
            result.assumptions.append(f"{name}: model {stat_out['name']!r}: its wargear gives the unit "
                                      f"{', '.join(given_keywords)}")
    unmodelled: list[str] = []
    unit_abilities: list[str] = data.pop("abilities", [])
    rules: list[str] = []
    for aname, text in abilities:
        low = aname.lower()
        if states_a_defence(aname, text):
            continue  # read by defences(): feel_no_pain, damage_reduction / HALF DAMAGE
        demise = deadly_demise(aname)
        if demise and "deadly_demise" not in data:
            data["deadly_demise"] = demise
            continue
        if low.startswith("invulnerable save") and "invulnerable" in data:
            continue
        if low.startswith("feel no pain") and "feel_no_pain" in data:
            continue
        if low in _DEFENSIVE_ABILITIES:
            unit_abilities.append(_DEFENSIVE_ABILITIES[low].upper())
            continue
        read = unit_rule(aname)
        if read is not None and read[0] == "firing_deck" and "firing_deck" not in data:
            data["firing_deck"] = read[1]
            continue
        if read is not None and read[0] == "rules":
            if read[1] not in rules:
                rules.append(str(read[1]))
            continue
        if aname and aname not in unmodelled:
            unmodelled.append(aname)
    if "deadly_demise" in data:
        try:
            dice.parse(str(data["deadly_demise"]))
        except ProfileError:
            unmodelled.append(f"Deadly Demise {data.pop('deadly_demise')}")
    if rules:
        data["rules"] = rules
    if unit_abilities:
        data["abilities"] = sorted(set(unit_abilities))
    data["keywords"] = unit_keywords
    if unmodelled:
        data["unmodelled"] = unmodelled
    wargear = _wargear([(a, given) for _, every in borne for a, given, _n in every], optional_gear)
    if wargear:
        data["wargear"] = wargear
    enhancements: dict[str, dict[str, Any]] = {}
    for ename, given in walker.enhancements(unit):
        enhancements.setdefault(ename.lower(), {"name": ename, **given})
    if enhancements:
        data["enhancements"] = sorted(enhancements.values(), key=lambda e: e["name"].lower())
    _carrier_aliases(carriers, weapons)
    data["weapons"] = [weapons[k] for k in order]
    result.data = data
    return result


def _wargear(borne: list[tuple[str, dict[str, Any]]], optional: list[tuple[str, dict[str, Any]]]
             ) -> list[dict[str, Any]]:
    """The unit's ``wargear:`` (ruling M81): each piece of wargear that gives its bearer defences
    or its unit keywords, those the statlines bear by default (``borne``: their ``wargear:``)
    first, once by name (the first met where two of a name give different things). A piece's
    ``alternatives`` are those every statline that bears it by default agrees on (one that
    bears it with no choice, an Assault Terminator's Storm Shield beside his Sergeant's, leaves
    none: a roster never takes it away wrongly); a piece no statline bears has none."""
    out: dict[str, dict[str, Any]] = {}
    agreed: dict[str, list[str]] = {}
    for name, given in borne:
        k = name.lower()
        out.setdefault(k, {"name": name, **{x: v for x, v in given.items() if x != "alternatives"}})
        mine = given.get("alternatives", [])
        agreed[k] = [x for x in agreed[k] if x in mine] if k in agreed else list(mine)
    for k, alternatives in agreed.items():
        if alternatives:
            out[k]["alternatives"] = alternatives
    for name, given in optional:
        out.setdefault(name.lower(), {"name": name, **{x: v for x, v in given.items() if x != "alternatives"}})
    return list(out.values())


def _carrier_aliases(carriers: dict[str, list[str]], weapons: dict[str, dict[str, Any]]) -> None:
    """A wargear entry that comes with one weapon names it: "Gun Drone" becomes an alias of the
    drone's "Twin pulse carbine" (a text roster lists the drone, not its weapon). A carrier of
    several weapons, or named as a weapon of the unit, gives no alias (an alias names one weapon;
    :func:`.build.import_files` also drops one that would name different weapons in the library)."""
    names = {k for k in weapons} | {_base(w["name"]) for w in weapons.values()}
    for carrier, carried in carriers.items():
        key = " ".join(carrier.lower().split())
        if len(carried) != 1 or not carried[0] or key in names or _COUNTED.match(key):
            continue
        w = weapons[carried[0].lower()]
        aliases = [*w.get("aliases", [])]
        if key not in (a.lower() for a in aliases):
            aliases.append(carrier)
        rebuilt = {"name": w["name"], "aliases": aliases}
        rebuilt.update({k: v for k, v in w.items() if k not in ("name", "aliases")})
        w.clear()
        w.update(rebuilt)


def _base(name: str) -> str:
    """A weapon's name without its profile (``Plasma gun - supercharge`` -> ``plasma gun``), lower case."""
    return " ".join(name.partition(" - ")[0].lower().split())


def _pick(profiles: list[ET.Element], model: str) -> ET.Element:
    """The profile named as the model (case ignored), else the first."""
    return next((p for p in profiles if _clean(p.get("name", "")).lower() == model.lower()), profiles[0])


def _carried(model: dict[str, Any], wname: str) -> bool:
    return any((w if isinstance(w, str) else w["name"]) == wname for w in model.get("weapons", []))


#: Keywords of a model that fires its Pistols beside its other ranged weapons (the seed's Pistol rule).
_FIRE_BOTH = frozenset({"MONSTER", "VEHICLE"})


def _attacks_with(loadout: dict[str, int], weapons: dict[str, dict[str, Any]], options: list[str], *,
                  pistols_beside_others: bool) -> dict[str, int]:
    """The loadout a model attacks with (:func:`mathhammer.rules.not_attacking_with`): what it
    does not attack with moves to the options. ``pistols_beside_others``: the model is a MONSTER
    or VEHICLE (its unit's keywords or its own entry's say so), which fires its Pistols beside its
    other ranged weapons, as a roster's model does (mathhammer.roster.loadout)."""
    def kind(n: str) -> str:
        w = weapons[n.lower()]
        named = {a.strip().lower() for a in w["abilities"]}
        if w["range"] == "melee":
            return "extra" if "extra attacks" in named else "melee"
        return "pistol" if "pistol" in named else "ranged"

    def weight(n: str) -> Fraction:
        w = weapons[n.lower()]
        return melee_weight(dice.parse(str(w["A"])), int(w["WS"]), int(w["S"]), int(w["AP"]), dice.parse(str(w["D"])))

    drop = set(not_attacking_with([(n, kind(n)) for n in loadout], pistols_beside_others=pistols_beside_others,
                                  weight=weight))
    for n in loadout:
        if n in drop and n not in options:
            options.append(n)
    return {n: c for n, c in loadout.items() if n not in drop}
