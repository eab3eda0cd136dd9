"""Game arithmetic of the 10th-edition attack sequence, as plain functions.

Each function names the rule it implements (the ids of docs/rules.md). Nothing here knows about arrays,
files or the command line. Die faces are indexed 1..6; tables have 7 entries, index 0 unused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .model import DiceExpr, RerollPolicy

__all__ = [
    "fired_profiles",
    "melee_weight",
    "not_attacking_with",
    "CRIT",
    "FAIL",
    "SUCCESS",
    "SaveChoice",
    "choose_save",
    "clamp_roll_modifier",
    "cover_applies",
    "damage_value",
    "improved_ap",
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


def _roll_outcomes(target: int | None, modifier: int, crit_on: int, fails_upto: int = 1,
                   successful_on: int = 7) -> tuple[int, ...]:
    """R-0.5/R-2.1/R-5.2: an unmodified roll of ``fails_upto`` or less fails (1, or 1-3 for
    Indirect Fire, R-2.7, which wins over a critical threshold); otherwise an unmodified
    crit_on+ is critical and succeeds (A7); otherwise an unmodified ``successful_on``+ is
    critical if it succeeds (A7's "a *successful* unmodified roll of N+"); otherwise success iff
    unmodified + modifier >= target (``None``: can never succeed)."""
    out = [FAIL]
    for face in FACES:
        if face <= fails_upto:
            out.append(FAIL)
        elif face >= crit_on:
            out.append(CRIT)
        elif target is None:
            out.append(FAIL)
        elif face + modifier >= target:
            out.append(CRIT if face >= successful_on else SUCCESS)
        else:
            out.append(FAIL)
    return tuple(out)


def hit_outcomes(skill: int, modifier: int, crit_on: int = 6, *, overwatch: bool = False,
                 fails_upto: int = 1, successful_on: int = 7) -> tuple[int, ...]:
    """R-2.1/R-2.2/R-2.3: FAIL/SUCCESS/CRIT for each face of the Hit roll (modifier already
    capped; ``skill`` after characteristic changes, R-0.4); ``successful_on``: critical only
    when it hits (A7). Fire Overwatch (R-2.9): only an unmodified 6 hits, and it is critical."""
    if overwatch:
        return (FAIL, FAIL, FAIL, FAIL, FAIL, FAIL, CRIT)
    return _roll_outcomes(skill, modifier, crit_on, fails_upto, successful_on)


def wound_outcomes(threshold: int, modifier: int, crit_on: int = 6, successful_on: int = 7) -> tuple[int, ...]:
    """R-5.1/R-5.2: FAIL/SUCCESS/CRIT for each face of the Wound roll (modifier already capped);
    ``successful_on``: critical only when it wounds (A7)."""
    return _roll_outcomes(threshold, modifier, crit_on, successful_on=successful_on)


def reroll_mask(outcomes: tuple[int, ...], policy: RerollPolicy,
                values: tuple[float, float, float] = (0.0, 1.0, 1.0)) -> tuple[int, ...]:
    """Which faces are re-rolled; a die is re-rolled at most once (R-3.2).

    ``ones``: an unmodified 1 (R-3.3); ``failed``: a FAIL after modifiers (R-3.4); ``non-crit``:
    anything not critical; ``best``: a face whose outcome is worth less than a fresh roll on
    average, ``values`` giving the worth of FAIL, SUCCESS and CRIT (R-3.5).
    """
    fresh = sum(values[outcomes[f]] for f in FACES) / 6
    mask = [0]
    for face in FACES:
        o = outcomes[face]
        mask.append(int(
            (policy is RerollPolicy.ONES and face == 1)
            or (policy is RerollPolicy.FAILED and o == FAIL)
            or (policy is RerollPolicy.NON_CRIT and o != CRIT)
            or (policy is RerollPolicy.BEST and values[o] < fresh - 1e-12)))
    return tuple(mask)


_PERMISSIVE = [RerollPolicy.NONE, RerollPolicy.ONES, RerollPolicy.FAILED, RerollPolicy.NON_CRIT, RerollPolicy.BEST]


def broadest(*policies: RerollPolicy) -> RerollPolicy:
    """R-3.9: of several re-roll permissions the most permissive one applies (never chained).
    ``non-crit`` and ``best`` are ways of using a full re-roll, chosen explicitly."""
    return max(policies, key=_PERMISSIVE.index)


def improved_ap(ap: int, improve: int) -> int:
    """R-7.4: "improve AP by n" makes it n steps more negative; worsening stops at 0."""
    return min(0, ap - improve)


def damage_value(rolled: int, *, half: bool = False, add: int = 0, subtract: int = 0) -> int:
    """R-0.2/R-8.2-R-8.4 (A4, A5, A18): the Damage of one attack. ``rolled`` includes the
    profile's +N; halve, then add (Melta, +Damage), then subtract (-1 Damage), rounding up
    once at the end; a subtraction never takes Damage below 1."""
    value = Fraction(rolled, 2) if half else Fraction(rolled)
    value += add
    value -= subtract
    result = math.ceil(value)
    return max(1, result) if subtract else max(0, result)


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
    """Unmodified roll needed; a 1 always fails (R-7.5) so 2 is the floor; above 6 is impossible.

    A Save characteristic of 7 is an ordinary armour save (R-7.2): with a net +1 modifier (cover,
    R-7.3) a 6 becomes 7 >= 7, so it passes on 6+."""
    need = max(2, characteristic - modifier)
    return need if need <= 6 else None


def choose_save(*, save: int, armour_modifier: int, invulnerable: int | None,
                invulnerable_modifier: int) -> SaveChoice:
    """R-7.1: armour (modified by AP, cover, other) or invulnerable (not by AP/cover), whichever
    passes more often; ties go to armour. Both modifiers must already be capped at +1."""
    armour = _needed(save, armour_modifier)
    inv = _needed(invulnerable, invulnerable_modifier) if invulnerable is not None else None

    def p(need: int | None) -> Fraction:
        return Fraction(0) if need is None else Fraction(7 - need, 6)

    if inv is not None and p(inv) > p(armour):
        return SaveChoice("invulnerable", inv, armour, inv)
    if armour is None:
        return SaveChoice("none", None, armour, inv)
    return SaveChoice("armour", armour, armour, inv)


def not_attacking_with(carried: list[tuple[str, str]], *, pistols_beside_others: bool = False,
                       weight: Callable[[str], Fraction] | None = None) -> list[str]:
    """What a model carries but does not attack with (the Pistol rule; one melee weapon, R-1.5),
    from its weapons in the order it carries them, each with its kind: ``pistol``, ``ranged``,
    ``melee`` or ``extra`` (a melee weapon with EXTRA ATTACKS). A model shoots its Pistols or
    its other ranged weapons, so its Pistols beside another ranged weapon are left out, unless
    ``pistols_beside_others`` (a MONSTER or VEHICLE fires both); it fights with one melee
    weapon and those with EXTRA ATTACKS: the one of most ``weight`` (:func:`melee_weight`, the
    damage it does to a Space Marine; ties: the first), else the first (ruling M80)."""
    ranged = [name for name, kind in carried if kind in ("pistol", "ranged")]
    pistols = [name for name, kind in carried if kind == "pistol"]
    left = pistols if pistols and len(pistols) < len(ranged) and not pistols_beside_others else []
    melee = [name for name, kind in carried if kind == "melee"]
    if weight is None or not melee:
        kept = melee[:1]
    else:
        kept = [max(melee, key=lambda name: (weight(name), -melee.index(name)))]
    return left + [name for name in melee if name not in kept]


def melee_weight(attacks: DiceExpr, skill: int, strength: int, ap: int, damage: DiceExpr) -> Fraction:
    """The damage a melee profile does to a Space Marine (T4 Sv3+) on average, its abilities
    aside: what tells a model's best melee weapon (ruling M80). ``ap`` as printed (-2). Exact,
    so that two weapons that do as much weigh the same (ties go to the first)."""
    hit = Fraction(7 - skill, 6)
    wound = Fraction(7 - wound_threshold(strength, 4), 6)
    save = 3 - ap
    unsaved = Fraction(1) if save > 6 else Fraction(save - 1, 6)
    return attacks.mean * hit * wound * unsaved * damage.mean


def fired_profiles(profiles: Sequence[tuple[str, bool]], hazardous: Sequence[bool] = ()) -> list[int]:
    """Which profiles of one weapon a model carrying it attacks with, from its profiles in order,
    each as (name, whether it is a melee profile), and ``hazardous[i]``: whether profile i has
    [HAZARDOUS] (none when not given): the first ranged profile without [HAZARDOUS], else the
    first ranged one, to shoot with (a plasma gun's standard profile, whichever the catalogue
    lists first: ruling M86), and the melee profile whose name ends in ``- strike``, else the
    first melee one, to fight with (a Cerastus shock lance shoots and fights). The others are
    alternatives chosen instead (a plasma gun's supercharge, a sweep). Returns their indices, in
    order."""
    ranged = [i for i, (_, melee) in enumerate(profiles) if not melee]
    safe = [i for i in ranged if i < len(hazardous) and not hazardous[i]] if hazardous else ranged
    ranged = safe or ranged
    melee = [i for i, (_, m) in enumerate(profiles) if m]
    strike = [i for i in melee if " ".join(profiles[i][0].lower().split()).endswith("- strike")]
    return sorted(ranged[:1] + (strike or melee)[:1])
