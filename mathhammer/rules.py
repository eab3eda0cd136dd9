"""Game arithmetic of the 10th-edition attack sequence, as plain functions.

Each function names the rule of ``RULES.md`` it implements. Nothing here knows about arrays,
files or the command line. Die faces are indexed 1..6; tables have 7 entries, index 0 unused.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .model import RerollPolicy

__all__ = [
    "CRIT",
    "FAIL",
    "SUCCESS",
    "SaveChoice",
    "choose_save",
    "clamp_roll_modifier",
    "cover_applies",
    "hit_outcomes",
    "reroll_mask",
    "save_fails",
    "save_roll_modifier",
    "wound_outcomes",
    "wound_threshold",
]

FAIL, SUCCESS, CRIT = 0, 1, 2
FACES = range(1, 7)


def wound_threshold(strength: int, toughness: int) -> int:
    """R-5.1: the unmodified Wound roll needed for S against T."""
    if strength >= 2 * toughness:
        return 2
    if strength > toughness:
        return 3
    if strength == toughness:
        return 4
    if 2 * strength <= toughness:
        return 6
    return 5


def clamp_roll_modifier(requested: int) -> int:
    """R-0.1/R-0.3: Hit and Wound roll modifiers are summed, then clamped to [-1, +1]."""
    return max(-1, min(1, requested))


def save_roll_modifier(ap: int, cover_bonus: int, other: int) -> int:
    """R-0.3/A2: AP, cover and other save modifiers are summed; the net may not exceed +1."""
    return min(1, ap + cover_bonus + other)


def cover_applies(*, cover: bool, ignores_cover: bool, melee: bool, save: int, ap: int) -> bool:
    """R-7.3: +1 to armour saves against ranged attacks, unless IGNORES COVER, or Sv3+ or
    better against AP 0 (A3: the current Save and AP)."""
    return cover and not ignores_cover and not melee and not (save <= 3 and ap == 0)


def _roll_outcomes(target: int | None, modifier: int, crit_on: int) -> tuple[int, ...]:
    """R-0.5/R-2.1/R-5.2: unmodified 1 fails; unmodified crit_on+ is critical and succeeds;
    otherwise success iff unmodified + modifier >= target (``None``: can never succeed)."""
    out = [FAIL]
    for face in FACES:
        if face >= crit_on:
            out.append(CRIT)
        elif face == 1 or target is None:
            out.append(FAIL)
        else:
            out.append(SUCCESS if face + modifier >= target else FAIL)
    return tuple(out)


def hit_outcomes(skill: int, modifier: int, crit_on: int = 6) -> tuple[int, ...]:
    """R-2.1/R-2.2: FAIL/SUCCESS/CRIT for each face of the Hit roll (modifier already capped)."""
    return _roll_outcomes(skill, modifier, crit_on)


def wound_outcomes(threshold: int, modifier: int, crit_on: int = 6) -> tuple[int, ...]:
    """R-5.1/R-5.2: FAIL/SUCCESS/CRIT for each face of the Wound roll (modifier already capped)."""
    return _roll_outcomes(threshold, modifier, crit_on)


def reroll_mask(outcomes: tuple[int, ...], policy: RerollPolicy) -> tuple[int, ...]:
    """R-3.3/R-3.4: which faces are re-rolled. ``ones``: an unmodified 1; ``failed``: any face
    whose outcome is FAIL after modifiers. A die is re-rolled at most once (R-3.2)."""
    mask = [0]
    for face in FACES:
        if policy is RerollPolicy.ONES:
            mask.append(1 if face == 1 else 0)
        elif policy is RerollPolicy.FAILED:
            mask.append(1 if outcomes[face] == FAIL else 0)
        else:
            mask.append(0)
    return tuple(mask)


def broadest(*policies: RerollPolicy) -> RerollPolicy:
    """R-3.9: of several re-roll permissions the most permissive one applies (never chained)."""
    order = [RerollPolicy.NONE, RerollPolicy.ONES, RerollPolicy.FAILED]
    return max(policies, key=order.index)


def save_fails(needed: int | None) -> tuple[int, ...]:
    """R-7.2/R-7.5: 1 for each face that fails a save needing ``needed``+ on the unmodified die
    (an unmodified 1 always fails; ``None``: no save possible)."""
    return (0,) + tuple(1 if face == 1 or needed is None or face < needed else 0 for face in FACES)


@dataclass(frozen=True, slots=True)
class SaveChoice:
    """The saving throw a defender takes (R-7.1): ``needed`` is the unmodified roll required
    (``None`` = no save possible), ``kind`` is ``armour``, ``invulnerable`` or ``none``."""

    kind: str
    needed: int | None
    armour_needed: int | None
    invulnerable_needed: int | None


def _needed(characteristic: int, modifier: int) -> int | None:
    """Unmodified roll needed; a 1 always fails (R-7.5) so 2 is the floor; 7+ is impossible."""
    need = max(2, characteristic - modifier)
    return need if need <= 6 else None


def choose_save(*, save: int, armour_modifier: int, invulnerable: int | None,
                invulnerable_modifier: int) -> SaveChoice:
    """R-7.1: armour (modified by AP, cover, other) or invulnerable (not by AP/cover), whichever
    passes more often; ties go to armour. Both modifiers must already be capped at +1."""
    armour = _needed(save, armour_modifier) if save <= 6 else None
    inv = _needed(invulnerable, invulnerable_modifier) if invulnerable is not None else None

    def p(need: int | None) -> Fraction:
        return Fraction(0) if need is None else Fraction(7 - need, 6)

    if inv is not None and p(inv) > p(armour):
        return SaveChoice("invulnerable", inv, armour, inv)
    if armour is None:
        return SaveChoice("none", None, armour, inv)
    return SaveChoice("armour", armour, armour, inv)
