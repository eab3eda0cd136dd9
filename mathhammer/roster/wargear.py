"""What a text roster's wargear and enhancements give the models that bear them (rulings M81,
M85): pieces listed for a model group, a statline's default pieces replaced or taken away, one
piece each, and an enhancement's bearer. The library records what each piece gives
(:class:`mathhammer.model.Wargear`); :func:`mathhammer.model.bear` gives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..model import WARGEAR_GIVES, ModelStats, Unit, Wargear, bear, describe_gives, worn
from .loadout import borne_each
from .model import Note, RosterModel, RosterUnit
from .names import key, singular_key, unaccented

__all__ = ["bear_listed", "defaults_swapped", "enhance", "one_each", "split_off"]


def split_off(groups: list[ModelStats], n: int) -> tuple[list[ModelStats], list[ModelStats]]:
    """The first ``n`` models of ``groups`` (statlines in order, each of ``count`` models) as
    statlines, and the rest: a statline split where the count falls inside it."""
    taken: list[ModelStats] = []
    rest: list[ModelStats] = []
    for g in groups:
        take = min(g.count, max(n, 0))
        n -= take
        if take:
            taken.append(replace(g, count=take))
        if g.count > take:
            rest.append(replace(g, count=g.count - take))
    return taken, rest


def bear_listed(groups: list[ModelStats], borne: list[tuple[Wargear, int]], m: RosterModel, unit: Unit,
                notes: list[Note], line: int) -> list[ModelStats]:
    """``groups`` (the statlines of roster model group ``m``) with what the wargear listed for
    it gives (``borne``: each piece and how many are listed): every model bears the same
    number of each, as :func:`mathhammer.model.give_bearer` gives it (ruling M81); notes say what is
    given, and what is left over (the roster does not say which models bear it)."""
    pieces, left_over = borne_each(((w.name, dict(w.gives), n) for w, n in borne if w.gives), m.count, m.name)
    notes += [Note(line, text) for text in left_over]
    if not pieces:
        return groups
    out: list[ModelStats] = []
    whys: dict[str, str] = {}
    for g in groups:
        stats, why = _bear(unit, g, pieces)
        whys.update(why)
        out.append(stats)
    notes += [Note(line, why) for why in sorted(whys.values())]
    for name, given, each in pieces:
        shown = _given(name, given, whys)
        if shown:
            notes.append(Note(line, f"{name}: {describe_gives(shown)} for {m.count}x {m.name}"
                                    f"{f' ({each} each)' if each > 1 else ''} (ruling M81)"))
    return out


def _bear(unit: Unit, stats: ModelStats, pieces: Sequence[tuple[str, Mapping[str, Any], int]]
          ) -> tuple[ModelStats, dict[str, str]]:
    """:func:`mathhammer.model.bear` against ``unit``'s own defences."""
    return bear(stats, pieces, invulnerable=unit.invulnerable, ranged_only=unit.invulnerable_ranged_only,
                feel_no_pain=unit.feel_no_pain)


def _given(name: str, given: Mapping[str, Any], withheld: Mapping[str, str]) -> list[tuple[str, int]]:
    """What piece ``name`` gave (``given``), less an invulnerable save ``withheld`` (by piece)
    says was not given: what the note that it was given names."""
    return [(k, v) for k, v in given.items() if k in WARGEAR_GIVES and not (name in withheld and k == "invulnerable")]


def defaults_swapped(groups: list[ModelStats], st: ModelStats, m: RosterModel, gear: dict[str, Wargear], unit: Unit,
                     notes: list[Note], line: int) -> list[ModelStats]:
    """``groups`` (roster model group ``m``, from statline ``st``, which bears default wargear)
    where items listed are what a model takes instead of a default piece (the piece's
    ``alternatives``: a Wolf Guard Battle Leader's Plasma pistol for his Storm Shield) and the
    piece is not listed: that many models bear it no more (the first ones), with a note."""
    listed = {key(item): n for item, n in m.weapons}
    # an alternative the statline carries by default anyway (another arm's weapon) says nothing
    carried = {key(w) for w, _ in st.loadout} | {key(w.partition(" - ")[0]) for w, _ in st.loadout}
    dropped: dict[str, int] = {}
    for name in dict.fromkeys(st.wargear):
        piece = gear.get(key(name))
        if piece is None or not piece.gives or key(name) in listed:
            continue
        instead = sum(n for a, n in listed.items() if a in {key(x) for x in piece.alternatives} - carried)
        if instead:
            dropped[name] = min(instead, m.count)
    if not dropped:
        return groups
    without = min(dropped.values())  # the models that took another choice of every dropped piece
    pieces = worn(gear[key(w)] for w in st.wargear if w not in dropped and key(w) in gear)
    assert st.bare is not None
    taken, rest = split_off(groups, without)
    out = [_bear(unit, replace(st.bare, name=g.name, count=g.count, loadout=g.loadout, options=g.options,
                                keywords=g.keywords), pieces)[0] for g in taken]
    out += rest
    for name in dropped:
        alts = [a for a in gear[key(name)].alternatives if key(a) in listed]
        notes.append(Note(line, f"{m.name}: {' and '.join(alts)} in place of the default {name} "
                                f"({without} of {m.count}; ruling M81)"))
    return out


def one_each(groups: list[ModelStats], pieces: list[tuple[Wargear, int]], unit: Unit, notes: list[Note],
             m: RosterModel, line: int) -> list[ModelStats]:
    """``groups`` (roster model group ``m``, its statlines from the statline's bare one) where the
    defence-giving pieces listed add up to its models: each model bears one, given to the models
    in the order listed (the roster does not say which model bears which), a note says so."""
    out: list[ModelStats] = []
    left = groups
    for piece, n in pieces:
        taken, left = split_off(left, n)
        for g in taken:
            stats, whys = _bear(unit, g, worn([piece]))
            out.append(stats)
            notes.extend(Note(line, why) for why in whys.values() if Note(line, why) not in notes)
    notes.append(Note(line, f"{m.name}: " + ", ".join(f"{n}x {p.name} ({describe_gives(p.gives)})" for p, n in pieces)
                      + ": one each, given in the order listed (the roster does not say which model bears which; "
                        "ruling M81)"))
    return out


def enhance(groups: list[ModelStats], entry: RosterUnit, unit: Unit, given_keywords: dict[str, None],
            notes: list[Note]) -> list[ModelStats]:
    """``groups`` with the enhancements the roster lists for the unit (ruling M85): one the
    library's unit records (:attr:`Unit.enhancements`: what it gives its bearer) is given to the
    unit's CHARACTER model (its only model, else the one model of a statline with the CHARACTER
    keyword or named as the unit, split off its group), its keywords to the unit (``given_keywords``);
    any other is named in a note (its rules are not in the library)."""
    known = {key(e.name): e for e in unit.enhancements}
    out = list(groups)
    seen: set[str] = set()
    for name in entry.enhancements:
        if key(name) in seen:
            notes.append(Note(entry.line, f"Enhancement {name}: listed twice for the unit, given once"))
            continue
        seen.add(key(name))
        piece = known.get(key(name))
        if piece is None or not out:
            notes.append(Note(entry.line, f"Enhancement {name}: not modelled (the library knows an enhancement that "
                                          "gives its bearer an invulnerable save, Feel No Pain or Wounds, and this is "
                                          "none it knows for this unit; ruling M85)"))
            continue
        for kw in piece.keywords:
            if kw not in unit.keywords and kw not in given_keywords:
                given_keywords[kw] = None
                notes.append(Note(entry.line, f"Enhancement {name}: the unit has the {kw} keyword (ruling M85)"))
        if not piece.gives:
            continue
        i = _bearer(out, unit)
        bearer = out[i]
        stats, whys = _bear(unit, replace(bearer, count=1), worn([piece]))
        out[i:i + 1] = [stats] if bearer.count == 1 else [replace(bearer, count=bearer.count - 1), stats]
        notes += [Note(entry.line, f"Enhancement {why}") for why in whys.values()]
        shown = _given(piece.name, dict(piece.gives), whys)
        if shown:
            notes.append(Note(entry.line, f"Enhancement {piece.name}: {describe_gives(shown)} for its bearer, "
                                          f"{bearer.name} (ruling M85)"))
    return out


def _bearer(groups: list[ModelStats], unit: Unit) -> int:
    """Which of a roster unit's statlines an enhancement's bearer is: the first with the CHARACTER
    keyword, else the first named as the unit (accents aside: "Brokhyr Iron-master"), else the
    statline of one model with the most Wounds (the Rogue Trader of an Entourage, a Tempestor
    Prime; the first of equals), else the first."""
    for i, g in enumerate(groups):
        if "CHARACTER" in g.keywords:
            return i
    s = unaccented(singular_key(unit.name))
    named = next((i for i, g in enumerate(groups) if unaccented(singular_key(g.name)) == s), None)
    if named is not None:
        return named
    ones = [i for i, g in enumerate(groups) if g.count == 1]
    return max(ones, key=lambda i: (groups[i].wounds, -i)) if ones else 0
