"""Plain-data descriptions of a matchup for outputs: the JSON ``attacker``, ``target`` and
``context`` objects and their one-line texts. No arithmetic beyond formatting."""

from __future__ import annotations

from typing import Any

from .model import Context, Matchup, Target, Weapon

__all__ = ["attacker_dict", "context_dict", "target_dict", "target_line", "weapon_line"]


def weapon_dict(w: Weapon) -> dict[str, Any]:
    """A weapon profile as JSON data."""
    return {"name": w.name, "unit": w.unit or None, "range": None if w.melee else (w.range_inches or None),
            "type": "melee" if w.melee else "ranged", "A": str(w.attacks),
            ("WS" if w.melee else "BS"): w.skill, "S": w.strength, "AP": w.ap, "D": str(w.damage),
            "abilities": [str(a) for a in w.abilities]}


def attacker_dict(m: Matchup) -> dict[str, Any]:
    """The JSON ``attacker`` object."""
    out: dict[str, Any] = {"weapon": weapon_dict(m.weapon), "models": m.context.firing_models,
                           "unit": m.attacker.name if m.attacker else None}
    if m.attacker is not None:
        out["points"] = m.attacker.points
    return out


def target_dict(t: Target) -> dict[str, Any]:
    """The JSON ``target`` object."""
    return {"name": t.name, "models": t.models, "T": t.toughness, "Sv": t.save,
            "W": t.wounds, "invulnerable": t.invulnerable, "invulnerable_ranged_only": t.invulnerable_ranged_only,
            "feel_no_pain": t.feel_no_pain, "keywords": sorted(t.keywords)}


def context_dict(c: Context) -> dict[str, Any]:
    """The JSON ``context`` object: options as requested (the applied values are in thresholds)."""
    out: dict[str, Any] = {}
    for name in c.__slots__:
        value = getattr(c, name)
        out[name] = getattr(value, "value", value)
    return out


def weapon_line(w: Weapon) -> str:
    """``72" A1 BS5+ S20 AP-5 D D6+6 [DEVASTATING WOUNDS, TWIN-LINKED]``: inline notation that
    :func:`mathhammer.notation.parse_weapon` reads back to the same statistics (name aside).

    A fixed Damage of 3 or 6 is written ``D=3`` / ``D=6``: ``D3`` would read as a D3 roll to a
    player (and parses with a warning, ruling M6)."""
    skill = " N/A" if w.skill is None else f"{w.skill}+"
    attacks = f"A{w.attacks}" if w.attacks.is_fixed else f"A {w.attacks}"
    if w.damage.is_fixed:
        damage = f"D={w.damage}" if w.damage.plus in (3, 6) else f"D{w.damage}"
    else:
        damage = f"D {w.damage}"
    text = f"{attacks} {'WS' if w.melee else 'BS'}{skill} S{w.strength} AP{w.ap} {damage}"
    if w.range_inches:
        text = f'{w.range_inches}" ' + text
    return text + (f" [{', '.join(str(a) for a in w.abilities)}]" if w.abilities else "")


def target_line(t: Target) -> str:
    """``1 model, T11 Sv3+ W26, 5+ invulnerable (ranged only)``."""
    sv = f"Sv{t.save}+"
    text = f"{t.models} model{'s' if t.models != 1 else ''}, T{t.toughness} {sv} W{t.wounds if t.wounds else '∞'}"
    if t.invulnerable:
        text += f", {t.invulnerable}+ invulnerable" + (" (ranged only)" if t.invulnerable_ranged_only else "")
    if t.feel_no_pain:
        text += f", {t.feel_no_pain}+ Feel No Pain"
    return text
