"""The notation players write: ability names and inline weapon / target profiles.

Examples:
    Weapon: ``A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS 1, Twin-linked]``; each token may also be
    written ``A 2``, ``A=2`` or ``A:2``; tokens are separated by spaces, commas or ``|``;
    ``WS3+`` makes it a melee weapon; ``BS N/A`` (or ``BS -``) only with TORRENT; the range is
    ``RANGE 24`` or ``24"``. ``D6`` is Damage 6 (with a warning, see :func:`parse_weapon_noted`);
    write ``D D6`` or ``D=D6`` for a D6 roll (likewise ``A D6``).

    Target: ``T4 SV3+ W2 MODELS10 INV4+ FNP5+ [INFANTRY, GRENADES]``; ``5++`` is an
    invulnerable save and ``5+++`` Feel No Pain. ``STEALTH``, ``HALF DAMAGE`` and ``-1 DAMAGE``
    among the bracketed words are the target's abilities; the other words are keywords.

    A target of several model groups (:func:`parse_target_unit`): groups separated by ``;``,
    each with an optional count of models, ``9x T5 SV5+ W1; 1x T5 SV5+ W2``; a group with the
    ``CHARACTER`` keyword is an attached Leader, the others its Bodyguard. ``WOUNDS-LEFT=3``
    in the group attacks go to first: its first model has 3 wounds left.

    Counts: ``2x``, ``2 x`` or ``2×`` before a weapon (models firing it) or a target group
    (its models), see :func:`split_count`.

Numbers are ASCII digits only, and every value is checked against :mod:`mathhammer.limits`:
nothing is read as something other than what was typed.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import replace

from . import dice
from .errors import MathhammerError, ProfileError
from .limits import MAX_AP, MAX_CHARACTERISTIC, MAX_RANGE, MAX_TARGET_MODELS, MAX_WOUNDS
from .model import PARAMETRISED, Ability, AbilitySpec, Allocation, DiceExpr, Target, TargetUnit, Weapon

__all__ = ["looks_inline", "parse_ability", "parse_target", "parse_target_unit", "parse_weapon", "parse_weapon_noted",
           "spelled_models", "split_count"]

_NAMES = {a.value: a for a in Ability}
_SPELLINGS = sorted(_NAMES, key=len, reverse=True)
_DASHES = "-\u2010\u2011\u2012\u2013\u2014"


def _normal(text: str) -> str:
    """Upper case, single spaces; a dash between letters is a space ('Twin-linked' -> 'TWIN LINKED').

    Any other dash is a minus sign and stays: ``SUSTAINED HITS -1`` / ``-D3`` must not read as 1 / D3.
    """
    upper = text.upper().replace("_", " ")
    upper = re.sub(rf"(?<=[A-Z'])[{_DASHES}](?=[A-Z])", " ", upper)
    return " ".join(upper.split())


def parse_ability(text: str, *, where: str = "ability") -> AbilitySpec:
    """Parse one ability as GW, BSData or Wahapedia spell it.

    ``Twin-linked``, ``TWIN-LINKED``, ``twin linked``; ``Sustained Hits D3``; ``Anti-Fly 2+``;
    ``Rapid Fire D6+3``; ``Melta 2``. Values are at least 1; Melta takes a number only (M19).

    Raises:
        ProfileError: unknown ability (with the closest names) or a bad value.
    """
    if not all(c.isascii() or c in _DASHES for c in text):
        raise ProfileError("abilities are written in ASCII letters and digits", where=where, value=text.strip())
    norm = _normal(text)
    for spelling in _SPELLINGS:
        key = _normal(spelling)
        if norm == key or norm.startswith(key + " ") or re.match(re.escape(key) + "[0-9]", norm, re.ASCII):
            return _with_value(_NAMES[spelling], norm[len(key):].strip(), text.strip(), where)
    by_normal = {_normal(s): s for s in _SPELLINGS}
    close = [by_normal[c] for c in difflib.get_close_matches(norm, list(by_normal), n=3, cutoff=0.5)]
    hint = (f"did you mean {', '.join(close)}?" if close
            else "known abilities: " + ", ".join(sorted(_NAMES)))
    raise ProfileError("unknown ability", where=where, value=text.strip(), hint=hint)


def _with_value(ability: Ability, rest: str, text: str, where: str) -> AbilitySpec:
    if ability is Ability.ANTI:
        return _anti(rest, text, where)
    if ability not in PARAMETRISED:
        if rest:
            raise ProfileError(f"{ability.value} takes no value", where=where, value=text)
        return AbilitySpec(ability=ability)
    example = f"{ability.value} 2" if ability is Ability.MELTA else f"{ability.value} 1 or {ability.value} D3"
    if not rest:
        raise ProfileError(f"{ability.value} needs a value", where=where, value=text, hint=f"e.g. {example}")
    if rest[0] in "+-" + _DASHES:
        raise ProfileError(f"{ability.value} X must be a positive number", where=where, value=text,
                           hint=f"e.g. {example}")
    try:
        value = dice.parse(rest, where=f"{where}: {ability.value}")
    except ProfileError as e:
        raise ProfileError(f"{ability.value} X: {e.what}", where=where, value=text, hint=f"e.g. {example}") from None
    if value.minimum < 1:
        raise ProfileError(f"{ability.value} X must be at least 1", where=where, value=text, hint=f"e.g. {example}")
    if ability is Ability.MELTA and not value.is_fixed:
        raise ProfileError("MELTA X must be a number, not dice (ruling M19)", where=where, value=text,
                           hint="every Melta weapon has a fixed value, e.g. MELTA 2")
    return AbilitySpec(ability=ability, value=value)


def _anti(rest: str, text: str, where: str) -> AbilitySpec:
    m = re.fullmatch(r"(?P<kw>[A-Z][A-Z ']*?)\s+(?P<x>\S+)", rest, re.ASCII)
    if not m:
        raise ProfileError("ANTI needs a keyword and a threshold like ANTI-VEHICLE 4+", where=where, value=text)
    x = re.fullmatch(r"([0-9]+)\+?", m["x"], re.ASCII)
    if not x or not 2 <= dice.bounded_int(x[1]) <= 6:
        raise ProfileError("ANTI threshold must be 2+ to 6+", where=where, value=text, hint="e.g. ANTI-VEHICLE 4+")
    return AbilitySpec(ability=Ability.ANTI, keyword=m["kw"].strip(), value=DiceExpr(plus=int(x[1])))


def looks_inline(text: str) -> bool:
    """True when ``text`` is written in the inline notation rather than as a profile name."""
    return bool(re.search(r"(^|[\s,|])(BS|WS|SV|AP|T|W)\s*[:=]?\s*-?[0-9]", text, re.IGNORECASE | re.ASCII)
                or re.search(r"(^|[\s,|])A\s*[:=]?\s*[0-9]*D?[0-9]+", text, re.IGNORECASE | re.ASCII)
                and " " in text.strip())


_WEAPON_KEYS = ("RANGE", "AP", "BS", "WS", "A", "S", "D")
_TARGET_KEYS = ("MODELS", "INV", "FNP", "SV", "T", "W")
#: A group of a target unit may also say its first model is wounded (before W: the longest key wins).
_GROUP_KEYS = ("WOUNDS-LEFT", *_TARGET_KEYS)

#: What may follow a key given alone (``BS 3+``): anything else means the key has no value.
_SKILL_VALUE = r"[0-9]+\+*|N/?A|-"
_VALUE_FORMS = {"RANGE": r'[0-9]+"?', "AP": r"[+-]?[0-9]+", "A": r"[0-9]*D?[0-9]+(\+[0-9]+)?",
                "D": r"[0-9]*D?[0-9]+(\+[0-9]+)?", "S": "[0-9]+", "T": "[0-9]+", "W": "[0-9]+",
                "MODELS": "[0-9]+", "WOUNDS-LEFT": "[0-9]+", "BS": _SKILL_VALUE, "WS": _SKILL_VALUE, "SV": _SKILL_VALUE,
                "INV": _SKILL_VALUE, "FNP": _SKILL_VALUE}


def _shown(text: str, limit: int = 100) -> str:
    """The profile as error messages quote it: stripped, and cut short if it is very long."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


def _check_characters(text: str, what: str) -> None:
    """Control characters (other than whitespace) are never part of a profile."""
    for c in text:
        if unicodedata.category(c) == "Cc" and not c.isspace():
            raise ProfileError(f"control character U+{ord(c):04X} in the profile", where=what, value=_shown(text))


def _split(text: str, what: str) -> tuple[list[str], list[str]]:
    """Tokens outside brackets, and the comma-separated items inside ``[...]`` (one or more lists)."""
    _check_characters(text, what)
    groups = re.findall(r"\[([^\[\]]*)\]", text)
    body = re.sub(r"\[[^\[\]]*\]", " ", text)
    if "[" in body or "]" in body:
        raise ProfileError("unbalanced or nested brackets", where=what, value=_shown(text),
                           hint="abilities and keywords go in one list: [A, B, C]")
    items = [s.strip() for g in groups for s in g.split(",") if s.strip()]
    # Any Unicode space separates tokens (harmless); everything else must be ASCII (checked per token).
    return [t for t in re.split(r"[\s,|]+", body) if t], items


def _pairs(tokens: list[str], keys: tuple[str, ...], what: str) -> tuple[dict[str, str], set[str]]:
    """Key/value pairs: ``BS3+``, ``BS 3+``, ``BS=3+``, ``BS:3+``; ``5++``/``5+++`` and ``24"``
    shorthands. Also returns the keys written glued to their value (``D6``, not ``D 6``)."""
    key_re = re.compile(rf"({'|'.join(keys)})([:=]?)(.*)", re.IGNORECASE | re.ASCII | re.DOTALL)
    found: dict[str, str] = {}
    glued: set[str] = set()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok.isascii():
            raise ProfileError("only ASCII letters, digits and signs are understood", where=what, value=_shown(tok, 40),
                               hint=_ascii_hint(tok))
        short = re.fullmatch(r"([0-9]+\+)(\+\+?)", tok)
        m = key_re.fullmatch(tok)
        if short and "INV" in keys:
            key, val = ("FNP" if short[2] == "++" else "INV"), short[1]
        elif re.fullmatch(r'[0-9]+"', tok) and "RANGE" in keys:
            key, val = "RANGE", tok
        elif m:
            key, val = m[1].upper(), m[3]
            if val and not m[2]:
                glued.add(key)
            if not val:
                i = _next_value(tokens, i, key, what)
                val = tokens[i].lstrip(":=")
        else:
            raise ProfileError("unknown token", where=what, value=_shown(tok, 40),
                               hint=f"expected tokens like {' '.join(_example(keys))}")
        if key in found:
            if m and not re.fullmatch(_VALUE_FORMS[key], val, re.IGNORECASE | re.ASCII):  # WOUNDED=5: no second W
                raise ProfileError("unknown token", where=what, value=_shown(tok, 40),
                                   hint=f"expected tokens like {' '.join(_example(keys))}"
                                   + ("; a model that has lost wounds: WOUNDS-LEFT=N"
                                      if "WOUNDS-LEFT" in keys and tok.upper().startswith("WOUND") else ""))
            raise ProfileError(f"{key} given twice", where=what, value=tok)
        found[key] = val
        i += 1
    return found, glued


#: Signs a word processor or phone writes for the notation's ASCII ones.
_LOOKALIKES = {"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-", "\u2033": '"',
               "\u201c": '"', "\u201d": '"', "\uff0b": "+", "\u2795": "+"}


def _ascii_hint(token: str) -> str:
    """How to write ``token`` (not ASCII) as the notation reads it: its look-alike signs named."""
    signs = [f"{c!r} as {_LOOKALIKES[c]}" for c in dict.fromkeys(token) if c in _LOOKALIKES]
    return f"write {', '.join(signs)} (ASCII)" if signs else "write digits as 0-9 and signs as + - \" (ASCII)"


def _next_value(tokens: list[str], i: int, key: str, what: str) -> int:
    """Index of the value of a key written alone (``BS 3+``, ``BS = 3+``)."""
    j = i + 1
    if j < len(tokens) and tokens[j] in (":", "="):
        j += 1
    if j < len(tokens) and not tokens[j].isascii():
        raise ProfileError("only ASCII letters, digits and signs are understood", where=what,
                           value=_shown(tokens[j], 40), hint=_ascii_hint(tokens[j]))
    if j >= len(tokens) or not re.fullmatch(_VALUE_FORMS[key], tokens[j].lstrip(":="), re.IGNORECASE | re.ASCII):
        after = f"{tokens[j]!r} is not a value for {key}; " if j < len(tokens) else ""
        raise ProfileError(f"{key} has no value", where=what,
                           value=tokens[i] if j >= len(tokens) else f"{tokens[i]} {_shown(tokens[j], 40)}",
                           hint=f"{after}write e.g. {_example(_WEAPON_KEYS + _GROUP_KEYS, key)}")
    return j


def _example(keys: tuple[str, ...], key: str = "") -> list[str] | str:
    examples = {"A": "A2", "BS": "BS3+", "WS": "WS3+", "S": "S4", "AP": "AP-1", "D": "D1", "RANGE": 'RANGE 24 or 24"',
                "T": "T4", "SV": "SV3+", "W": "W2", "MODELS": "MODELS10", "INV": "INV4+", "FNP": "FNP5+",
                "WOUNDS-LEFT": "WOUNDS-LEFT=3"}
    if key:
        return examples[key]
    return ["A2", "BS3+", "S4", "AP-1", "D1"] if "BS" in keys else ["T4", "SV3+", "W2", "MODELS10"]


def _plus(key: str, val: str, what: str, lo: int = 2, hi: int = 6) -> int:
    m = re.fullmatch(r"([0-9]+)\+?", val, re.ASCII)
    if not m or not lo <= dice.bounded_int(m[1]) <= hi:
        raise ProfileError(f"{key} must be {lo}+ to {hi}+", where=what, value=f"{key}{val}")
    return int(m[1])


def _int(key: str, val: str, what: str, hi: int, lo: int = 1) -> int:
    if not re.fullmatch(r"[0-9]+", val, re.ASCII) or not lo <= dice.bounded_int(val) <= hi:
        shown = f"{key}={val}" if key == "WOUNDS-LEFT" else f"{key}{val}"  # as the notation writes it
        raise ProfileError(f"{key} must be a whole number from {lo} to {hi}", where=what, value=shown)
    return int(val)


def _ap(val: str, what: str) -> int:
    m = re.fullmatch(r"([+-]?)([0-9]+)", val, re.ASCII)
    if not m:
        raise ProfileError("AP must be a whole number like AP-1 or AP0", where=what, value=f"AP{val}")
    size = dice.bounded_int(m[2])
    if m[1] != "-" and size:
        raise ProfileError("AP must be 0 or negative", where=what, value=f"AP{val}",
                           hint="armour piercing is written AP-1, AP-2, ...")
    if size > MAX_AP:
        raise ProfileError(f"AP must be AP0 to AP-{MAX_AP}", where=what, value=f"AP{val}")
    return -size


def _damage(val: str, glued: bool, what: str, notes: list[str]) -> DiceExpr:
    """Damage; ``D3``/``D6`` written glued are a fixed 3/6 (ruling M6), with a warning."""
    if glued and re.fullmatch(r"0*[36]\+[0-9]+", val, re.ASCII):
        rolled = "D" + val.lstrip("0")
        raise ProfileError("ambiguous damage", where=what, value=f"D{val}",
                           hint=f"write 'D {rolled}' for a rolled {rolled}, or the total for a fixed value")
    damage = dice.parse(val, where=f"{what}: D")
    if glued and damage.is_fixed and damage.plus in (3, 6):
        notes.append(f"{what}: D{val} read as Damage {damage.plus} (a fixed value); "
                     f"write 'D D{damage.plus}' for a rolled D{damage.plus}")
    return damage


#: The name of a weapon given inline (no profile name).
INLINE_WEAPON = "inline weapon"


#: Abilities only a ranged weapon has (their rules speak of range, visibility, the Shooting phase
#: or a unit's models in Engagement Range): refused in an inline melee (WS) weapon, as RANGE is.
_RANGED_ONLY = frozenset({Ability.ASSAULT, Ability.BLAST, Ability.HEAVY, Ability.IGNORES_COVER, Ability.INDIRECT_FIRE,
                          Ability.MELTA, Ability.ONE_SHOT, Ability.PISTOL, Ability.RAPID_FIRE, Ability.TORRENT})


def parse_weapon(text: str, *, name: str = "") -> Weapon:
    """Parse an inline weapon profile (see the module docstring); see :func:`parse_weapon_noted`."""
    return parse_weapon_noted(text, name=name)[0]


def parse_weapon_noted(text: str, *, name: str = "") -> tuple[Weapon, tuple[str, ...]]:
    """Parse an inline weapon profile; also return warnings about how ambiguous tokens were read
    (``D6`` is Damage 6, ruling M6).

    Raises:
        ProfileError: naming the token and the value, e.g. ``BS7+``, ``D D7``, ``AP+2``, a missing S.
    """
    what = f"inline weapon {_shown(text)!r}"
    tokens, items = _split(text, what)
    kv, glued = _pairs(tokens, _WEAPON_KEYS, what)
    for key, word in (("A", "attacks"), ("S", "strength"), ("D", "damage")):
        if key not in kv:
            raise ProfileError(f"missing {key} ({word})", where=what, value=_shown(text),
                               hint=f"e.g. {' '.join(_example(_WEAPON_KEYS))}")
    if ("BS" in kv) == ("WS" in kv):
        raise ProfileError("give exactly one of BS (ranged) or WS (melee)", where=what, value=_shown(text))
    abilities = tuple(parse_ability(s, where=what) for s in items)
    skill_key = "BS" if "BS" in kv else "WS"
    skill_val = kv[skill_key]
    skill = None if skill_val.upper() in ("N/A", "-", "NA") else _plus(skill_key, skill_val, what)
    if skill_key == "WS" and "RANGE" in kv:
        raise ProfileError("a melee weapon (WS) has no range", where=what, value=f"RANGE {kv['RANGE']}",
                           hint="give BS for a ranged weapon")
    ranged = [a for a in abilities if a.ability in _RANGED_ONLY]
    if skill_key == "WS" and ranged:
        raise ProfileError(f"a melee weapon (WS) has no {ranged[0].ability.value}: an ability of ranged weapons",
                           where=what, value=str(ranged[0]), hint="give BS for a ranged weapon")
    rng = None if skill_key == "WS" else (_int("RANGE", kv["RANGE"].removesuffix('"'), what, MAX_RANGE)
                                          if "RANGE" in kv else 0)
    notes: list[str] = _repeated_abilities(abilities)
    attacks = dice.parse(kv["A"], where=f"{what}: A")
    strength, ap = _int("S", kv["S"], what, MAX_CHARACTERISTIC), _ap(kv.get("AP", "0"), what)
    damage = _damage(kv["D"], "D" in glued, what, notes)
    try:
        weapon = Weapon(name=name or INLINE_WEAPON, attacks=attacks, skill=skill, strength=strength, ap=ap,
                        damage=damage, range_inches=rng, abilities=abilities)
    except ProfileError as e:  # name what the user typed, not the placeholder name
        raise ProfileError(e.what, where=what, value=e.value, hint=e.hint) from None
    return weapon, tuple(notes)


def _repeated_abilities(abilities: tuple[AbilitySpec, ...]) -> list[str]:
    """A note for each ability written more than once (ANTI: of one keyword): a weapon has it or
    not, and of several the largest counts (R-4.5, ruling M77)."""
    groups: dict[tuple[Ability, str], list[AbilitySpec]] = {}
    for a in abilities:
        groups.setdefault((a.ability, a.keyword), []).append(a)
    notes = []
    for found in groups.values():
        if len(found) > 1:
            kept = max(found, key=lambda a: a.rank)  # the first of equals, as Weapon.get
            same = len({str(a) for a in found}) == 1
            notes.append(f"{kept} written {len(found)} times: a weapon has an ability or not (R-4.5)" if same else
                         f"{', '.join(dict.fromkeys(str(a) for a in found))}: one ability written {len(found)} times; "
                         f"only the largest, {kept}, counts (R-4.5)")
    return notes


def parse_target(text: str, *, name: str = "") -> Target:
    """Parse an inline target profile of one model group (see the module docstring).

    Raises:
        ProfileError: naming the token and the value.
    """
    return _parse_target(text, name, _TARGET_KEYS)[0]


def _parse_target(text: str, name: str, keys: tuple[str, ...], what: str = "") -> tuple[Target, dict[str, str]]:
    """One model group, and its key/value tokens."""
    what = what or f"inline target {_shown(text)!r}"
    tokens, items = _split(text, what)
    kv, _ = _pairs(tokens, keys, what)
    for key, word in (("T", "toughness"), ("SV", "save"), ("W", "wounds")):
        if key not in kv:
            raise ProfileError(f"missing {key} ({word})", where=what, value=_shown(text),
                               hint=f"e.g. {' '.join(_example(_TARGET_KEYS))}")
    save = 7 if kv["SV"].upper() in ("-", "N/A", "NA") else _plus("SV", kv["SV"], what, hi=7)
    abilities, keywords = _target_words(items, what)
    try:
        return _target(name, kv, save, abilities, keywords, what), kv
    except ProfileError as e:
        if e.where == what:
            raise
        raise ProfileError(e.what, where=what, value=e.value, hint=e.hint) from None


#: ``2x``, ``2 x``, ``2×`` (also ``2 ×``) at the start, before what is counted.
_COUNT = re.compile(r"\s*(?P<sign>[+\-\u2212\u2013]?)(?P<n>[0-9]+)\s*(?:[xX](?=\s|$)|\u00d7)\s*(?P<rest>.*)",
                    re.ASCII | re.DOTALL)


#: The WOUNDS-LEFT token, left out of a group's name.
_WOUNDED = re.compile(r"(?<![^\s,|])WOUNDS-LEFT\s*[:=]?\s*[0-9]+", re.IGNORECASE | re.ASCII)


def split_count(text: str, *, what: str, hi: int, where: str,
                error: type[MathhammerError] = ProfileError) -> tuple[int | None, str]:
    """``"2x heavy rail rifle"`` -> ``(2, "heavy rail rifle")``; no count -> ``(None, text)``.

    ``what`` names the count in messages (``weapon count``, ``models``), ``hi`` is its limit.

    Raises:
        ``error``: a count below 1 or above ``hi``, or a count with nothing after it.
    """
    m = _COUNT.fullmatch(text)
    if m is None:
        return None, text
    shown = _shown(text, 60)
    if not m["rest"].strip():
        raise error(f"a {what} with nothing after it", where=where, value=shown,
                    hint="write the count before a profile, e.g. '2x heavy rail rifle'")
    n = dice.bounded_int(m["n"])
    if n < 1 or m["sign"] not in ("", "+"):
        raise error(f"a {what} must be at least 1", where=where, value=shown)
    if n > hi:
        raise error(f"a {what} must be at most {hi:,}", where=where, value=shown)
    return n, m["rest"].strip()


def spelled_models(text: str) -> str | None:
    """How an inline target of one model group spells its number of models (``'5x'``,
    ``'MODELS5'``), or None when it leaves it to the default of one.

    Raises:
        ProfileError: as :func:`parse_target_unit`, for a malformed group.
    """
    count, body = split_count(text.strip(), what="count of models", hi=MAX_TARGET_MODELS, where="--target")
    if count is not None:
        return f"{count}x"
    _, kv = _parse_target(body, "inline target", _GROUP_KEYS)
    return f"MODELS{kv['MODELS']}" if "MODELS" in kv else None


def parse_target_unit(text: str, *, name: str = "", allocation: Allocation = Allocation.DURABLE) -> TargetUnit:
    """Parse an inline target of one or more model groups separated by ``;`` (see the module
    docstring); one group alone is the same as :func:`parse_target` (a count before it is its
    MODELS).

    Raises:
        ProfileError: an empty group, a count given twice, WOUNDS-LEFT given twice, out of
            range, or not in the group attacks go to first; or a malformed group.
    """
    _check_characters(text, f"inline target {_shown(text)!r}")
    parts = text.split(";")
    several = len(parts) > 1
    groups: list[Target] = []
    wounded: list[tuple[int, int]] = []  # (group index, wounds left)
    for i, part in enumerate(parts):
        what = f"inline target {_shown(text)!r}" + (f", group {i + 1}" if several else "")
        if not part.strip():
            raise ProfileError("empty model group", where=what, value=_shown(text),
                               hint="groups are separated by ';', e.g. '9x T5 SV5+ W1; 1x T5 SV5+ W2'")
        count, body = split_count(part, what="count of models", hi=MAX_TARGET_MODELS, where=what)
        label = " ".join(_WOUNDED.sub(" ", body).split()) if several else (name or "inline target")
        target, kv = _parse_target(body, label, _GROUP_KEYS, what)
        if count is not None:
            if "MODELS" in kv:
                raise ProfileError("the number of models is given twice", where=what,
                                   value=f"{count}x and MODELS{kv['MODELS']}", hint="give one of them")
            target = replace(target, models=count)
        if "WOUNDS-LEFT" in kv:
            left = _int("WOUNDS-LEFT", kv["WOUNDS-LEFT"], what, MAX_WOUNDS)
            if target.wounds is not None and left > target.wounds:
                raise ProfileError(f"WOUNDS-LEFT must be 1 to the model's W ({target.wounds})", where=what,
                                   value=f"WOUNDS-LEFT={left}")
            wounded.append((i, left))
        groups.append(target)
    if len(wounded) > 1:
        raise ProfileError("WOUNDS-LEFT given in two groups; only the first model attacks go to can be wounded",
                           where=f"inline target {_shown(text)!r}", value=f"groups {wounded[0][0] + 1} and "
                           f"{wounded[1][0] + 1}")
    characters = ["CHARACTER" in g.keywords for g in groups]
    if any(characters) and not all(characters):
        groups = [replace(g, leader=c) for g, c in zip(groups, characters, strict=True)]
    unit = TargetUnit(name=name or "inline target", groups=tuple(groups), allocation=allocation)
    if wounded:
        index, left = wounded[0]
        check_first_wounded(unit, groups[index], f"inline target {_shown(text)!r}", f"WOUNDS-LEFT={left}")
        unit = replace(unit, wounds_left=left)
    return unit


def check_first_wounded(unit: TargetUnit, group: Target, where: str, value: str) -> None:
    """Only the first model attacks go to (R-9.1) may start wounded: ``group`` must lead the
    allocation order of ``unit``.

    Raises:
        ProfileError: naming the group that does lead, and how to put this one first.
    """
    first = unit.allocation_order()[0]
    if first is group:
        return
    if group.leader:
        raise ProfileError("a wounded Leader takes no attacks while a Bodyguard model lives, so only a Bodyguard "
                           "model can start wounded", where=where, value=value)
    hint = ("list this group first and use --allocation listed" if unit.allocation is Allocation.DURABLE
            else "list this group first")
    raise ProfileError(f"attacks go first to the {first.name!r} group ({unit.allocation.value} allocation); only its "
                       "first model can start wounded", where=where, value=value, hint=hint)


def _target(name: str, kv: dict[str, str], save: int, abilities: set[str], keywords: set[str], what: str) -> Target:
    return Target(name=name or "inline target", toughness=_int("T", kv["T"], what, MAX_CHARACTERISTIC), save=save,
                  wounds=_int("W", kv["W"], what, MAX_WOUNDS),
                  models=_int("MODELS", kv.get("MODELS", "1"), what, MAX_TARGET_MODELS),
                  invulnerable=_plus("INV", kv["INV"], what) if "INV" in kv else None,
                  feel_no_pain=_plus("FNP", kv["FNP"], what) if "FNP" in kv else None,
                  keywords=frozenset(keywords), stealth="STEALTH" in abilities,
                  half_damage="HALF DAMAGE" in abilities, damage_reduction=1 if "-1 DAMAGE" in abilities else 0)


#: A keyword: words of letters, an apostrophe inside a word (``T'AU EMPIRE``).
_KEYWORD = r"[A-Z]+(?:'[A-Z]+)?(?: [A-Z]+(?:'[A-Z]+)?)*"
#: Defensive abilities written among an inline target's bracketed keywords.
_TARGET_ABILITIES = ("STEALTH", "HALF DAMAGE", "-1 DAMAGE")
#: Words no keyword contains: an item with one is a defensive ability we do not model (or a typo).
_ABILITY_WORDS = frozenset({"DAMAGE", "DMG", "FNP", "FEEL", "PAIN", "INV", "INVULNERABLE", "INVUL", "SAVE", "SV",
                            "COVER", "WOUND", "WOUNDS", "HIT", "HITS", "TOUGHNESS", "AP", "REDUCTION"})


def _target_words(items: list[str], what: str) -> tuple[set[str], set[str]]:
    """Split bracketed words into the defensive abilities we model and keywords.

    A keyword is ASCII letters (with spaces, dashes, apostrophes): a word with a digit or a sign
    (``-2 DAMAGE``, ``5++``) or with a word such as DAMAGE or SAVE is never one, and is an error.
    """
    abilities: set[str] = set()
    keywords: set[str] = set()
    hint = (f"modelled: {', '.join(_TARGET_ABILITIES)}; write saves as tokens (INV4+, FNP5+) and other "
            "effects as options (--save-mod, --cover, --damage-mod, --hit-mod ...)")
    for item in items:
        word = _normal(item)
        if word in _TARGET_ABILITIES:
            abilities.add(word)
            continue
        close = difflib.get_close_matches(word, _TARGET_ABILITIES, n=1, cutoff=0.75)
        if _is_weapon_ability(word):
            raise ProfileError("a weapon ability, not a target keyword", where=what, value=item,
                               hint="weapon abilities go in the weapon's brackets")
        if (not item.isascii() or not re.fullmatch(_KEYWORD, word, re.ASCII)
                or close or _ABILITY_WORDS & set(word.split())):
            raise ProfileError("not a keyword nor a defensive ability mathhammer models", where=what, value=item,
                               hint=f"did you mean {close[0]}?" if close else hint)
        keywords.add(word)
    return abilities, keywords


def _is_weapon_ability(word: str) -> bool:
    """``LETHAL HITS``, ``MELTA 2``, ``ANTI-FLY 2+``: a weapon ability (with or without its value)."""
    for ability in Ability:
        name = _normal(ability.value)
        if word == name or (ability in PARAMETRISED and word.startswith(name + " ")):
            return True
    return False
