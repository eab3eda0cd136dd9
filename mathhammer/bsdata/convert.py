"""One BSData profile -> the project's YAML-ready dicts: a weapon, a statline, a unit's defences.

The numbers are read exactly as printed (``24"``, ``3+``, ``-1``, ``D6+1``) and checked against
:mod:`mathhammer.limits` as the profile schema will check them, so a value the schema would refuse
is a :class:`ProfileError` here, with the reason, and the caller records the weapon as unreadable
instead of writing a file that does not load. A weapon's keywords that
:func:`mathhammer.notation.parse_ability` reads go to ``abilities`` (as printed); the others to
``unmodelled``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from xml.etree.ElementTree import Element

from .. import dice
from ..errors import ProfileError
from ..limits import MAX_AP, MAX_ATTACKING_MODELS, MAX_CHARACTERISTIC, MAX_RANGE, MAX_WOUNDS
from ..model import Ability
from ..notation import parse_ability

__all__ = ["RANGED", "MELEE", "UNIT", "NAMED_RULES", "characteristics", "deadly_demise", "defences", "statline_dict",
           "weapon_dict", "split_keywords", "unit_rule"]

#: BSData profile type names read by this module.
RANGED = "Ranged Weapons"
MELEE = "Melee Weapons"
UNIT = "Unit"

#: Spellings of "no value" in BSData characteristics.
_NONE = {"", "-", "\u2013", "\u2014", "n/a", "none"}


def _local(tag: object) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def characteristics(profile_elem: Element) -> dict[str, str]:
    """Name -> text (stripped) of a ``<profile>``'s characteristics, in document order.

    Works with or without the BattleScribe namespace on the tags.
    """
    out: dict[str, str] = {}
    for holder in profile_elem:
        if _local(holder.tag) != "characteristics":
            continue
        for c in holder:
            if _local(c.tag) == "characteristic":
                out[c.get("name", "")] = " ".join((c.text or "").split())
    return out


def _fail(what: str, key: str, value: str, name: str) -> ProfileError:
    return ProfileError(what, where=f"{name}: {key}" if key else name, value=value)


def _number(key: str, text: str, name: str, lo: int, hi: int) -> int:
    m = re.fullmatch(r"([0-9]{1,6})", text, re.ASCII)
    if not m or not lo <= int(m[1]) <= hi:
        raise _fail(f"expected a whole number from {lo} to {hi}", key, text, name)
    return int(m[1])


def _plus(key: str, text: str, name: str, lo: int = 2, hi: int = 6) -> int:
    m = re.fullmatch(r"([0-9]{1,3})\s*\+?", text, re.ASCII)
    if not m or not lo <= int(m[1]) <= hi:
        raise _fail(f"expected {lo}+ to {hi}+", key, text, name)
    return int(m[1])


def _inches(key: str, text: str, name: str) -> int:
    m = re.fullmatch(r"([0-9]{1,6})\s*\+?\s*(?:\"|''|\u201d|\u2033)?\s*\+?", text)
    if not m or int(m[1]) > MAX_RANGE:
        raise _fail(f"expected a distance in inches (0 to {MAX_RANGE})", key, text, name)
    return int(m[1])


def _dice(key: str, text: str, name: str) -> str:
    try:
        expr = dice.parse(text.replace(" ", ""), where=f"{name}: {key}")
    except ProfileError as e:
        raise _fail(e.what, key, text, name) from None
    return str(expr)


def split_keywords(text: str) -> list[str]:
    """A weapon's ``Keywords`` characteristic as a list (``-`` and blanks dropped, order kept)."""
    return [k for k in (" ".join(part.split()) for part in text.split(",")) if k.lower() not in _NONE]


def weapon_dict(name: str, type_name: str, chars: Mapping[str, str]) -> dict[str, Any]:
    """A YAML-ready weapon in the project's schema from a "Ranged Weapons"/"Melee Weapons" profile.

    Keys: name, range (inches or ``"melee"``), A, BS (ranged; ``None`` with TORRENT and a BS of
    ``N/A``) or WS (melee), S, AP, D, abilities, unmodelled. An AP of ``-`` is 0.

    Raises:
        ProfileError: a characteristic that is missing or outside the project's limits (S ``*``,
            D ``2D6+D3``, BS ``N/A`` without TORRENT, ...), naming the weapon and the characteristic.
    """
    if type_name not in (RANGED, MELEE):
        raise ProfileError(f"not a weapon profile (type {type_name!r})", where=name)
    melee = type_name == MELEE
    get = {k.strip().upper(): v.strip() for k, v in chars.items()}
    for key in ("A", "S", "AP", "D", "WS" if melee else "BS"):
        if key not in get:
            raise _fail("characteristic missing", key, "", name)
    abilities: list[str] = []
    unmodelled: list[str] = []
    for kw in split_keywords(get.get("KEYWORDS", "")):
        try:
            parse_ability(kw)
        except ProfileError:
            unmodelled.append(kw)
        else:
            abilities.append(kw)
    out: dict[str, Any] = {"name": name}
    if melee:
        out["range"] = "melee"
    else:
        rng = get.get("RANGE", "")
        if rng.lower() in _NONE:
            raise _fail("a ranged weapon without a range", "Range", rng, name)
        out["range"] = _inches("Range", rng, name)
    out["A"] = _dice("A", get["A"], name)
    skill_key = "WS" if melee else "BS"
    skill = get[skill_key]
    if skill.lower() in _NONE:
        torrent = any(parse_ability(a).ability is Ability.TORRENT for a in abilities)
        if melee or not torrent:
            raise _fail(f"{skill_key} {skill!r} is allowed only for a TORRENT weapon", skill_key, skill, name)
        out[skill_key] = None
    else:
        out[skill_key] = _plus(skill_key, skill, name)
    out["S"] = _number("S", get["S"], name, 1, MAX_CHARACTERISTIC)
    ap = get["AP"].replace("\u2212", "-").replace("\u2013", "-")
    if ap in ("-", "0", "+0", "-0"):
        out["AP"] = 0
    else:
        m = re.fullmatch(r"-\s*([0-9]{1,3})", ap, re.ASCII)
        if not m or int(m[1]) > MAX_AP:
            raise _fail(f"expected an AP from -{MAX_AP} to 0", "AP", get["AP"], name)
        out["AP"] = -int(m[1])
    out["D"] = _dice("D", get["D"], name)
    out["abilities"] = abilities
    out["unmodelled"] = unmodelled
    return out


def statline_dict(name: str, chars: Mapping[str, str]) -> dict[str, Any]:
    """``{name, M, T, Sv, W, Ld, OC}`` from a "Unit" profile (M ``-`` is left out; ``20"+`` is 20).

    Raises:
        ProfileError: T, SV or W missing or outside the project's limits, or an unreadable M/LD/OC.
    """
    get = {k.strip().upper(): v.strip() for k, v in chars.items()}
    for key in ("T", "SV", "W"):
        if key not in get:
            raise _fail("characteristic missing", key, "", name)
    out: dict[str, Any] = {"name": name}
    move = get.get("M", "-")
    if move.lower() not in _NONE:
        out["M"] = _inches("M", move, name)
    out["T"] = _number("T", get["T"], name, 1, MAX_CHARACTERISTIC)
    out["Sv"] = _plus("SV", get["SV"], name, 2, 7)
    out["W"] = _number("W", get["W"], name, 1, MAX_WOUNDS)
    if get.get("LD", "-").lower() not in _NONE:
        out["Ld"] = _plus("LD", get["LD"], name, 2, 12)
    if get.get("OC", "-").lower() not in _NONE:
        out["OC"] = _number("OC", get["OC"], name, 0, MAX_WOUNDS)
    return out


_INV_NAME = re.compile(r"invulnerable save\b", re.IGNORECASE)
_INV_TEXT = (re.compile(r"\b([2-6])\+\s*invulnerable save", re.IGNORECASE),
             re.compile(r"invulnerable save of\s*([2-6])\+", re.IGNORECASE))
_INV_IN_NAME = re.compile(r"invulnerable save\s*\(?\s*([2-6])\+\s*\)?\s*$", re.IGNORECASE)
_FNP_NAME = re.compile(r"feel no pain\s*([2-6])\+", re.IGNORECASE)
#: A description that states Feel No Pain and nothing else ("Models in this unit have the Feel No Pain 6+ ability.").
_FNP_TEXT = re.compile(r"(?:this model|this unit|models in this unit) (?:has|have) the feel no pain ([2-6])\+ "
                       r"ability\.?", re.IGNORECASE)


#: An unconditional "-1 Damage" or "halve the Damage" ability, as the whole description.
DAMAGE_TEXT = re.compile(r"Each time an attack is allocated to (?:this model|this fortification|a model in this unit), "
                          r"(subtract 1 from|halve) (?:the Damage characteristic of that attack|that attack['\u2019]s "
                          r"Damage characteristic)\.?", re.IGNORECASE)


#: What wargear (or an enhancement) may give its bearer, clause by clause: an invulnerable save, a
#: Feel No Pain, a Wounds characteristic set or added to ("Storm shield", "Shield Drone").
_BEARER_CLAUSES = (
    ("invulnerable", re.compile(r"(?:the bearer|this model) has an? ([2-6])\+ invulnerable save", re.IGNORECASE)),
    ("feel_no_pain", re.compile(r"(?:the bearer|this model) has the feel no pain ([2-6])\+ ability", re.IGNORECASE)),
    ("W", re.compile(r"(?:the bearer|this model) has a wounds characteristic of ([1-9][0-9]?)", re.IGNORECASE)),
    ("add_W", re.compile(r"add ([1-9]) to the bearer['\u2019]s wounds characteristic", re.IGNORECASE)),
)
#: The keywords a piece of wargear is restricted to, as a first sentence ("**^^Orks^^** model only."):
#: a roster's bearer already is one.
_ONLY_FOR = re.compile(r"[^.]{1,80}? model only\.\s*", re.IGNORECASE)


def _plain(text: str) -> str:
    """An ability's text as the patterns read it: non-breaking spaces and runs of white space as one space."""
    return " ".join(text.replace("\xa0", " ").split())


def bearer_defences(text: str) -> dict[str, int] | None:
    """What a wargear ability whose whole text gives its bearer defences gives it, else None:
    ``invulnerable`` ("The bearer has a 4+ invulnerable save.": a Weavefield crest),
    ``feel_no_pain`` ("The bearer has the Feel No Pain 5+ ability."), ``W`` ("The bearer has a
    Wounds characteristic of 4.": a Storm shield) and ``add_W`` ("Add 1 to the bearer's Wounds
    characteristic.": a Shield Drone), one or several joined by "and" ("Add 1 to the bearer's
    Wounds characteristic and the bearer has the Feel No Pain 5+ ability."; "The bearer has the
    Feel No Pain 4+ ability and a Wounds characteristic of 5.": the subject said once), after an
    optional first sentence naming the models that may take it ("CHAOS LORD model only."). A text
    that says anything else (a condition, another characteristic) gives None: kept as text."""
    text = _plain(text).rstrip(".")
    only = _ONLY_FOR.match(text)
    if only and only.end() < len(text):
        text = text[only.end():]
    out: dict[str, int] = {}
    clauses = re.split(r",? and (?=the bearer|this model|add |an? |the feel no pain)", text, flags=re.IGNORECASE)
    for i, clause in enumerate(clauses):
        if i and not re.match(r"the bearer|this model|add ", clause, re.IGNORECASE):
            clause = "the bearer has " + clause  # "... and a Wounds characteristic of 5"
        found = next(((kind, m) for kind, rx in _BEARER_CLAUSES if (m := rx.fullmatch(clause))), None)
        if found is None or found[0] in out:
            return None
        out[found[0]] = int(found[1][1])
    return out or None


#: "The bearer's unit has the **^^Markerlight^^** keyword ..." (a Marker Drone), as the text begins.
_UNIT_KEYWORDS = re.compile(r"the bearer['\u2019]s unit has the ([^.;:]+?) keywords?(?=[ .:,;]|$)", re.IGNORECASE)
#: A keyword's name: capitals (or marked up) words, not prose ("the Deep Strike ability").
_KEYWORD_NAME = re.compile(r"[A-Z][A-Za-z'\u2019-]*(?: [A-Z][A-Za-z'\u2019-]*){0,3}")


def bearer_unit_keywords(text: str) -> tuple[str, ...]:
    """The keywords a wargear's text gives its bearer's unit, when it begins by saying so ("The
    bearer's unit has the **^^Markerlight^^** keyword and can act as an Observer unit ...": a
    Marker Drone gives MARKERLIGHT; "... the ^^**Smoke**^^ and ^^**Grenades**^^ keywords.");
    () for any other text."""
    m = _UNIT_KEYWORDS.match(_plain(text))
    if not m:
        return ()
    names = [" ".join(n.split()) for n in re.split(r"\s+and\s+|,\s*", re.sub(r"[*^]", "", m[1]))]
    if not all(_KEYWORD_NAME.fullmatch(n) for n in names):
        return ()  # prose, not a list of keywords: kept as text
    return tuple(n.upper() for n in names)


#: "Deadly Demise D3" (a unit ability's name, BattleScribe's modifier appended).
_DEADLY_DEMISE = re.compile(r"deadly demise\s+(\S+)$", re.IGNORECASE)


def deadly_demise(name: str) -> str | None:
    """The x of an ability named "Deadly Demise x" (``D3``, ``1``; R-10.1), else None."""
    m = _DEADLY_DEMISE.match(" ".join(name.split()))
    return m[1].upper() if m else None


def states_a_defence(name: str, text: str) -> bool:
    """Whether :func:`defences` reads the ability (name, description) as a Feel No Pain or a
    damage reduction (so it is modelled, not listed as unmodelled). Invulnerable saves are
    named so and told apart by the caller."""
    text = _plain(text)
    return bool(_FNP_NAME.fullmatch(_plain(name)) or _FNP_TEXT.fullmatch(text) or DAMAGE_TEXT.fullmatch(text))


def defences(abilities: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The invulnerable save and Feel No Pain a unit's abilities state as such.

    ``abilities`` are (name, description) pairs of the unit's datasheet abilities (profiles of type
    "Abilities" and rules, with BattleScribe's name modifiers applied: ``Feel No Pain 5+``).

    - ``invulnerable: {save, ranged_only}`` from an ability named "Invulnerable Save..." whose name
      or description gives the save (``4+``, ``This model has a 4+ invulnerable save``);
      ``ranged_only`` when the text says "against ranged attacks" and names no other save. With
      different saves against ranged and melee attacks the worse one is taken for all attacks
      (one save is all the schema holds; a pessimistic choice). Several such abilities: the best.
    - ``feel_no_pain``: an ability named ``Feel No Pain X+``, or one whose whole description is
      "This model / This unit / Models in this unit ha(s|ve) the Feel No Pain X+ ability." (a
      conditional one, "against mortal wounds", "while leading", is not a Feel No Pain here).
    - ``damage_reduction: 1`` / ``abilities: [HALF DAMAGE]``: an ability whose whole description is
      "Each time an attack is allocated to this model (a model in this unit, this Fortification),
      subtract 1 from (halve) the Damage characteristic of that attack." (the C'tan Shards'
      Necrodermis; "... that attack's Damage characteristic", an Overlord's Implacable
      Resilience); one with a condition (a phase, a roll, a keyword) is not read, nor one that
      only its bearer has (wargear, an enhancement).
    """
    invulns: list[tuple[int, bool]] = []
    fnps: list[int] = []
    reduce = halve = False
    for name, text in abilities:
        name, text = _plain(name), _plain(text)
        if _INV_NAME.match(name):
            saves = [int(m[1]) for rx in _INV_TEXT for m in rx.finditer(text)]
            in_name = _INV_IN_NAME.search(name)
            if in_name:
                saves.append(int(in_name[1]))
            bare = re.fullmatch(r"([2-6])\+", text)
            if bare:
                saves.append(int(bare[1]))
            if saves:
                ranged = "against ranged attacks" in text.lower() and len(set(saves)) == 1
                invulns.append((max(saves), ranged))
            continue
        m = _FNP_NAME.fullmatch(name)
        if m:
            fnps.append(int(m[1]))
            continue
        m = _FNP_TEXT.fullmatch(text)
        if m:
            fnps.append(int(m[1]))
            continue
        m = DAMAGE_TEXT.fullmatch(text)
        if m:
            reduce |= m[1].lower() == "subtract 1 from"
            halve |= m[1].lower() == "halve"
    out: dict[str, Any] = {}
    if reduce:
        out["damage_reduction"] = 1
    if halve:
        out["abilities"] = ["HALF DAMAGE"]
    if invulns:
        # the best save; against all attacks beats ranged only at the same value
        save, ranged = min(invulns, key=lambda sr: (sr[0], sr[1]))
        out["invulnerable"] = {"save": save, "ranged_only": ranged}
    if fnps:
        out["feel_no_pain"] = min(fnps)
    return out


#: Datasheet abilities an army rule refers to, as the profile's ``rules:`` spells them (lower-case key).
NAMED_RULES = {"for the greater good": "For the Greater Good"}
_FIRING_DECK = re.compile(r"firing deck\s*([0-9]{1,4})", re.IGNORECASE)


def unit_rule(name: str) -> tuple[str, int | str] | None:
    """What a datasheet ability's name gives a profile: ``("firing_deck", N)`` for "Firing Deck N"
    (1 to MAX_ATTACKING_MODELS), ``("rules", NAME)`` for a rule of :data:`NAMED_RULES` ("For The
    Greater Good" -> "For the Greater Good"); None for any other (kept as text)."""
    text = " ".join(name.split())
    m = _FIRING_DECK.fullmatch(text)
    if m and 1 <= int(m[1]) <= MAX_ATTACKING_MODELS:
        return "firing_deck", int(m[1])
    rule = NAMED_RULES.get(text.lower())
    return ("rules", rule) if rule else None
