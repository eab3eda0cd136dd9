"""The notation players write: ability names and inline weapon / target profiles.

Examples:
    Weapon: ``A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS 1, Twin-linked]``; each token may also be
    written ``A 2``, ``A=2`` or ``A:2``; tokens are separated by spaces, commas or ``|``;
    ``WS3+`` makes it a melee weapon; ``BS N/A`` (or ``BS -``) only with TORRENT. ``D6`` is
    Damage 6; write ``D D6`` or ``D=D6`` for a D6 roll (likewise ``A D6``).

    Target: ``T4 SV3+ W2 MODELS10 INV4+ FNP5+ [INFANTRY, GRENADES]``; ``5++`` is an
    invulnerable save and ``5+++`` Feel No Pain. ``STEALTH``, ``HALF DAMAGE`` and ``-1 DAMAGE``
    among the bracketed words are the target's abilities; the other words are keywords.
"""

from __future__ import annotations

import difflib
import re

from . import dice
from .errors import ProfileError
from .model import PARAMETRISED, Ability, AbilitySpec, Target, Weapon

__all__ = ["looks_inline", "parse_ability", "parse_target", "parse_weapon"]

_NAMES = {a.value: a for a in Ability}
_SPELLINGS = sorted(_NAMES, key=len, reverse=True)


def _normal(text: str) -> str:
    """Upper case, dashes/underscores as spaces, single spaces: 'Twin-linked' -> 'TWIN LINKED'."""
    return re.sub(r"\s+", " ", re.sub(r"[-_–]", " ", text.upper())).strip()


def parse_ability(text: str, *, where: str = "ability") -> AbilitySpec:
    """Parse one ability as GW, BSData or Wahapedia spell it.

    ``Twin-linked``, ``TWIN-LINKED``, ``twin linked``; ``Sustained Hits D3``; ``Anti-Fly 2+``;
    ``Rapid Fire D6+3``; ``Melta 2``.

    Raises:
        ProfileError: unknown ability (with the closest names) or a bad value.
    """
    norm = _normal(text)
    for spelling in _SPELLINGS:
        key = _normal(spelling)
        if norm == key or norm.startswith(key + " ") or (norm.startswith(key) and norm[len(key):][:1].isdigit()):
            ability = _NAMES[spelling]
            rest = norm[len(key):].strip()
            return _with_value(ability, rest, text, where)
    by_normal = {_normal(s): s for s in _SPELLINGS}
    close = [by_normal[c] for c in difflib.get_close_matches(norm, list(by_normal), n=3, cutoff=0.5)]
    hint = (f"did you mean {', '.join(close)}?" if close
            else "known abilities: " + ", ".join(sorted(_NAMES)))
    raise ProfileError("unknown ability", where=where, value=text.strip(), hint=hint)


def _with_value(ability: Ability, rest: str, text: str, where: str) -> AbilitySpec:
    if ability is Ability.ANTI:
        m = re.fullmatch(r"(?P<kw>[A-Z][A-Z ']*?)\s+(?P<x>[2-6])\+?", rest)
        if not m:
            raise ProfileError("ANTI needs a keyword and a threshold like ANTI-VEHICLE 4+", where=where,
                               value=text.strip())
        return AbilitySpec(ability=ability, keyword=m["kw"].strip(), value=dice.parse(m["x"], where=where))
    if ability in PARAMETRISED:
        if not rest:
            raise ProfileError(f"{ability.value} needs a value, e.g. {ability.value} 1", where=where,
                               value=text.strip())
        return AbilitySpec(ability=ability, value=dice.parse(rest, where=f"{where} {ability.value}"))
    if rest:
        raise ProfileError(f"{ability.value} takes no value", where=where, value=text.strip())
    return AbilitySpec(ability=ability)


def looks_inline(text: str) -> bool:
    """True when ``text`` is written in the inline notation rather than as a profile name."""
    return bool(re.search(r"(^|[\s,|])(BS|WS|SV|AP|T|W)\s*[:=]?\s*-?\d", text, re.IGNORECASE)
                or re.search(r"(^|[\s,|])A\s*[:=]?\s*\d*D?\d+", text, re.IGNORECASE) and " " in text.strip())


_WEAPON_KEYS = ("RANGE", "AP", "BS", "WS", "A", "S", "D")
_TARGET_KEYS = ("MODELS", "INV", "FNP", "SV", "T", "W")


def _split(text: str, what: str) -> tuple[list[str], list[str]]:
    """Tokens outside brackets, and the comma-separated items inside ``[...]``."""
    items: list[str] = []
    m = re.search(r"\[(.*)\]", text)
    body = text
    if m:
        items = [s.strip() for s in m[1].split(",") if s.strip()]
        body = text[: m.start()] + " " + text[m.end():]
    if "[" in body or "]" in body:
        raise ProfileError("unbalanced brackets", where=what, value=text)
    return [t for t in re.split(r"[\s,|]+", body) if t], items


def _pairs(tokens: list[str], keys: tuple[str, ...], what: str, text: str) -> dict[str, str]:
    """Key/value pairs: ``BS3+``, ``BS 3+``, ``BS=3+``, ``BS:3+``; ``5++``/``5+++`` shorthands."""
    found: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        short = re.fullmatch(r"([2-6])\+(\+\+?)", tok)
        if short and "INV" in keys:
            key, val = ("FNP" if short[2] == "++" else "INV"), short[1] + "+"
        else:
            key = next((k for k in keys if tok.upper().startswith(k)), "")
            if not key:
                raise ProfileError("unknown token", where=what, value=tok,
                                   hint=f"expected tokens like {' '.join(_example(keys))}")
            val = tok[len(key):].lstrip(":=")
            if not val:
                if i + 1 >= len(tokens):
                    raise ProfileError(f"{key} has no value", where=what, value=text)
                i += 1
                val = tokens[i].lstrip(":=")
        if key in found:
            raise ProfileError(f"{key} given twice", where=what, value=text)
        found[key] = val
        i += 1
    return found


def _example(keys: tuple[str, ...]) -> list[str]:
    return ["A2", "BS3+", "S4", "AP-1", "D1"] if "BS" in keys else ["T4", "SV3+", "W2", "MODELS10"]


def _plus(key: str, val: str, what: str, lo: int = 2, hi: int = 6) -> int:
    m = re.fullmatch(r"(\d+)\+?", val)
    if not m or not lo <= int(m[1]) <= hi:
        raise ProfileError(f"{key} must be {lo}+ to {hi}+", where=what, value=f"{key}{val}")
    return int(m[1])


def _int(key: str, val: str, what: str, lo: int = 1) -> int:
    if not re.fullmatch(r"\d+", val) or int(val) < lo:
        raise ProfileError(f"{key} must be a whole number of at least {lo}", where=what, value=f"{key}{val}")
    return int(val)


def parse_weapon(text: str, *, name: str = "") -> Weapon:
    """Parse an inline weapon profile (see the module docstring).

    Raises:
        ProfileError: naming the token and the value, e.g. ``BS7+``, ``D D7``, ``AP+2``, a missing S.
    """
    what = f"inline weapon {text.strip()!r}"
    tokens, items = _split(text, what)
    kv = _pairs(tokens, _WEAPON_KEYS, what, text)
    for key in ("A", "S", "D"):
        if key not in kv:
            raise ProfileError(f"missing {key} ({ {'A': 'attacks', 'S': 'strength', 'D': 'damage'}[key]})",
                               where=what, value=text.strip())
    if ("BS" in kv) == ("WS" in kv):
        raise ProfileError("give exactly one of BS (ranged) or WS (melee)", where=what, value=text.strip())
    abilities = tuple(parse_ability(s, where=what) for s in items)
    skill_key = "BS" if "BS" in kv else "WS"
    skill_val = kv[skill_key]
    skill = None if skill_val.upper() in ("N/A", "-", "NA") else _plus(skill_key, skill_val, what)
    ap_val = kv.get("AP", "0")
    if not re.fullmatch(r"[+-]?\d+", ap_val):
        raise ProfileError("AP must be a whole number like AP-1 or AP0", where=what, value=f"AP{ap_val}")
    if int(ap_val) > 0:
        raise ProfileError("AP must be 0 or negative", where=what, value=f"AP{ap_val}",
                           hint="armour piercing is written AP-1, AP-2, ...")
    rng = None if skill_key == "WS" else (_int("RANGE", kv["RANGE"].rstrip('"'), what) if "RANGE" in kv else 0)
    return Weapon(name=name or "inline weapon", attacks=dice.parse(kv["A"], where=f"{what}: A"), skill=skill,
                  strength=_int("S", kv["S"], what), ap=int(ap_val),
                  damage=dice.parse(kv["D"], where=f"{what}: D"), range_inches=rng, abilities=abilities)


def parse_target(text: str, *, name: str = "") -> Target:
    """Parse an inline target profile (see the module docstring).

    Raises:
        ProfileError: naming the token and the value.
    """
    what = f"inline target {text.strip()!r}"
    tokens, items = _split(text, what)
    kv = _pairs(tokens, _TARGET_KEYS, what, text)
    for key, word in (("T", "toughness"), ("SV", "save"), ("W", "wounds")):
        if key not in kv:
            raise ProfileError(f"missing {key} ({word})", where=what, value=text.strip())
    save = 7 if kv["SV"] in ("-", "N/A") else _plus("SV", kv["SV"], what, hi=7)
    words = [_normal(k) if not k.strip().startswith("-") else "-" + _normal(k) for k in items]
    abilities = {w for w in words if w in _TARGET_ABILITIES}
    return Target(name=name or "inline target", toughness=_int("T", kv["T"], what), save=save,
                  wounds=_int("W", kv["W"], what), models=_int("MODELS", kv.get("MODELS", "1"), what),
                  invulnerable=_plus("INV", kv["INV"], what) if "INV" in kv else None,
                  feel_no_pain=_plus("FNP", kv["FNP"], what) if "FNP" in kv else None,
                  keywords=frozenset(w for w in words if w not in _TARGET_ABILITIES),
                  stealth="STEALTH" in abilities, half_damage="HALF DAMAGE" in abilities,
                  damage_reduction=1 if "-1 DAMAGE" in abilities else 0)


#: Defensive abilities written among an inline target's bracketed keywords.
_TARGET_ABILITIES = {"STEALTH", "HALF DAMAGE", "-1 DAMAGE"}
