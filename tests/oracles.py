"""Independent exact oracle for the 10th-edition attack sequence (tests only).

Derived only from /work/shared/RULES.md (rule ids cited on every rule), never from the
``mathhammer`` package. Every die of the attack sequence is enumerated face by face with
``fractions.Fraction``:

    attacks dice (+ Rapid Fire dice, Blast, Command Re-roll) -> per attack: hit die (+ re-roll)
    -> Sustained D3 -> wound die (+ re-roll) -> save die (+ re-roll) -> damage dice (+ re-roll,
    modifiers) -> one Feel No Pain die per point -> allocation to the target, then the deferred
    Devastating-Wounds attacks (R-6.3).

The probability tree is kept as a distribution over a small state (see ``_State``) after each
attack, which is exact: the state holds everything later dice outcomes can depend on (the
allocation position, the number of deferred Devastating attacks, whether the one Command
Re-roll has been spent, and - for ``stage_distributions`` - the counter being tracked).

Interpretations taken here (beyond RULES.md) are marked "ORACLE CHOICE".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import NamedTuple

__all__ = [
    "Scenario",
    "STAGES",
    "damage_distribution",
    "models_destroyed_distribution",
    "joint_distribution",
    "stage_distributions",
    "hazardous_distribution",
    "mean",
    "variance",
    "dice_distribution",
    "attacks_distribution",
    "model_attacks_roll_distribution",
    "hit_roll_distribution",
    "p_hit",
    "p_critical_hit",
    "hits_per_attack_distribution",
    "expected_hits_per_attack",
    "wound_threshold",
    "wound_roll_distribution",
    "p_wound",
    "expected_wounds_per_attack",
    "p_save",
    "modified_damage",
    "damage_roll_distribution",
    "points_lost_per_unsaved_attack_distribution",
    "hit_outcome_values",
    "wound_outcome_values",
    "UnitWeapon",
    "ModelGroup",
    "UnitOutcome",
    "unit_attack",
    "unit_toughness",
    "unit_weapon_wounds",
]

D6_FACES = range(1, 7)
SIXTH = Fraction(1, 6)

# Hit-roll outcomes and wound-roll outcomes.
MISS, HIT, CRIT_HIT = "miss", "hit", "critical_hit"
FAIL, WOUND, CRIT_WOUND = "fail", "wound", "critical_wound"

_ROLL_POLICIES = ("none", "ones", "failed", "non_crit", "best")   # R-3.3/3.4/3.5, broadest last
_DAMAGE_POLICIES = ("none", "ones", "below_average")
_SAVE_POLICIES = ("none", "ones", "failed")
_COMMAND = ("none", "hit", "wound", "save", "damage", "attacks")


@dataclass(frozen=True)
class Scenario:
    attacks: str = "1"            # per firing model: "3", "D6", "2D6", "D3+1" (D3 = ceil(D6/2))
    models_firing: int = 1
    bs: int | None = 4             # BS/WS; None = TORRENT (auto-hit, no hit roll, no crits)
    hit_mod: int = 0               # requested net hit-roll modifier (clamped to [-1,+1])
    reroll_hits: str = "none"      # "none" | "ones" | "failed" | "non_crit" | "best"
    sustained: str = "0"           # "0" (none), "1", "2", "D3"
    lethal: bool = False
    strength: int = 4
    toughness: int = 4
    wound_mod: int = 0
    reroll_wounds: str = "none"    # "none" | "ones" | "failed" | "non_crit" | "best"
    twin_linked: bool = False      # re-roll failed wound rolls; most permissive re-roll wins
    devastating: bool = False
    ap: int = 0                    # 0 or negative
    save: int = 7                  # armour save characteristic (7+: passes only with a net +1, R-7.2)
    invuln: int | None = None
    cover: bool = False            # Benefit of Cover (+1 to ARMOUR saves only)
    ignores_cover: bool = False
    save_mod: int = 0              # generic saving-throw modifier, armour AND invulnerable
    damage: str = "1"              # "2", "D3", "D6", "D6+6", "2D6"
    fnp: int | None = None         # Feel No Pain X+
    target_models: int = 1
    target_wounds: int | None = None   # per model; None = unlimited wounds
    # ---- extensions (defaults = the behaviour above) ----
    crit_hit: int = 6              # unmodified Hit roll >= this is a Critical Hit (R-2.3, A7)
    crit_wound: int = 6            # unmodified Wound roll >= this is a Critical Wound
    anti: int | None = None        # ANTI-KEYWORD X+ against a target with the keyword
    bs_improve: int = 0            # characteristic change: needed roll = bs - bs_improve
    heavy_stationary: bool = False  # +1 to the Hit roll
    stealth: bool = False          # -1 to the Hit roll, ranged only
    indirect: bool = False         # Indirect Fire, target not visible
    overwatch: bool = False        # Fire Overwatch: hits only on an unmodified 6
    lance_charged: bool = False    # +1 to the Wound roll
    ap_improve: int = 0            # AP becomes ap - ap_improve, never above 0
    melee: bool = False            # no cover / stealth / heavy / indirect / overwatch
    invuln_ranged_only: bool = False   # the invulnerable save only works against ranged attacks
    melta: int = 0                 # +X Damage (addition modifier, R-8.2), half range assumed
    half_damage: bool = False      # divide the Damage characteristic by 2
    damage_reduction: int = 0      # subtract N from the Damage characteristic
    damage_mod: int = 0            # signed: >0 addition modifier, <0 subtraction modifier
    reroll_damage: str = "none"    # "none" | "ones" | "below_average"
    reroll_saves: str = "none"     # "none" | "ones" | "failed" (the defender's)
    command_reroll: str = "none"   # "none" | "hit" | "wound" | "save" | "damage" | "attacks"
    blast: bool = False            # + floor(target_models / 5) attacks per firing model
    rapid_fire: str = "0"          # + X attacks per firing model, half range assumed
    rules: str = "current"         # "current" | "2023" ([VERSION])

    def __post_init__(self) -> None:
        for name in ("reroll_hits", "reroll_wounds"):
            if getattr(self, name) not in _ROLL_POLICIES:
                raise ValueError(f"{name}: expected one of {_ROLL_POLICIES}, "
                                 f"got {getattr(self, name)!r}")
        if self.sustained not in ("0", "1", "2", "D3"):
            raise ValueError(f"sustained: expected 0/1/2/D3, got {self.sustained!r}")
        if self.ap > 0 or self.models_firing < 1 or self.target_models < 1:
            raise ValueError(f"invalid scenario: {self!r}")
        checks = {
            "reroll_damage": self.reroll_damage in _DAMAGE_POLICIES,
            "reroll_saves": self.reroll_saves in _SAVE_POLICIES,
            "command_reroll": self.command_reroll in _COMMAND,
            "rules": self.rules in ("current", "2023"),
            "crit_hit": 2 <= self.crit_hit <= 6,
            "crit_wound": 2 <= self.crit_wound <= 6,
            "anti": self.anti is None or 2 <= self.anti <= 6,
            "melta": self.melta >= 0,
            "damage_reduction": self.damage_reduction >= 0,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"{name}: invalid value {getattr(self, name)!r}")
        for name in ("attacks", "damage", "rapid_fire"):
            _parse_dice(getattr(self, name))
        if self.bs is None and self.indirect and not self.melee:
            # "Torrent weapons cannot use Indirect Fire".
            raise ValueError("R-1.6: a TORRENT weapon cannot use Indirect Fire")


def _add(dist: dict, key, p: Fraction) -> None:
    if p:
        dist[key] = dist.get(key, Fraction(0)) + p


# --------------------------------------------------------------------------------------------
# Dice
# --------------------------------------------------------------------------------------------

_DICE_RE = re.compile(r"^(?:(\d*)D([36]))?([+-]?\d+)?$")


def _parse_dice(expr: str) -> tuple[int, int, int]:
    """(number of dice, sides, constant) of "N", "D3", "D6", "2D6", "D3+1", "D6+6"."""
    text = expr.strip().upper().replace(" ", "")
    m = _DICE_RE.match(text)
    if not m or text == "":
        raise ValueError(f"not a dice expression: {expr!r}")
    count_txt, sides_txt, const_txt = m.groups()
    const = int(const_txt) if const_txt else 0
    if sides_txt is None:
        return 0, 6, const
    return (int(count_txt) if count_txt else 1), int(sides_txt), const


def _die_face_value(sides: int, d6_face: int) -> int:
    # a D3 is a D6 halved and rounded up (1,2->1; 3,4->2; 5,6->3).
    return d6_face if sides == 6 else (d6_face + 1) // 2


@cache
def _dice_total_items(expr: str) -> tuple[tuple[int, Fraction], ...]:
    """pmf of the dice part only (no constant; a D3 read as 1-3), every D6 face enumerated."""
    n_dice, sides, _ = _parse_dice(expr)
    dist: dict[int, Fraction] = {0: Fraction(1)}
    for _ in range(n_dice):
        new: dict[int, Fraction] = {}
        for total, p in dist.items():
            for face in D6_FACES:
                _add(new, total + _die_face_value(sides, face), p * SIXTH)
        dist = new
    return tuple(sorted(dist.items()))


def dice_distribution(expr: str) -> dict[int, Fraction]:
    """Exact pmf of "N", "D3", "D6", "2D6", "D3+1", "D6+6" by enumerating every D6 face.

    R-0.6: "xDy+N" is the sum of x dice plus N; R-8.1: the +N is part of the characteristic.
    """
    const = _parse_dice(expr)[2]
    return {total + const: p for total, p in _dice_total_items(expr)}


def _convolve(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for x, px in a.items():
        for y, py in b.items():
            _add(out, x + y, px * py)
    return out


def model_attacks_roll_distribution(s: Scenario) -> dict[int, Fraction]:
    """One firing model's Attacks roll: the weapon's A plus Rapid Fire X (R-1.2, R-1.4).

    ORACLE CHOICE (brief): Rapid Fire dice are part of the same model's roll (one roll for
    Command Re-roll purposes). Blast is a constant and is added in ``attacks_distribution``.
    """
    return _convolve(dice_distribution(s.attacks), dice_distribution(s.rapid_fire))


def attacks_distribution(s: Scenario) -> dict[int, Fraction]:
    """Total attacks of the unit: each firing model rolls its own Attacks (R-1.1, R-1.2),
    + Rapid Fire X (R-1.4), + Blast floor(M/5) per model (R-1.3, A19), and the Command Re-roll
    of the single lowest model roll when it is below a fresh roll's mean (R-3.7)."""
    per_model = model_attacks_roll_distribution(s)
    blast = s.target_models // 5 if s.blast else 0       # R-1.3 / A19: M at target selection
    if s.command_reroll == "attacks":
        fresh_mean = mean(per_model)
        # Track (sum of model rolls, lowest model roll) over the firing models.
        joint: dict[tuple[int, int], Fraction] = {(0, 10**9): Fraction(1)}
        for _ in range(s.models_firing):
            new: dict[tuple[int, int], Fraction] = {}
            for (total, low), p in joint.items():
                for a, pa in per_model.items():
                    _add(new, (total + a, min(low, a)), p * pa)
            joint = new
        total_dist: dict[int, Fraction] = {}
        for (total, low), p in joint.items():
            if low < fresh_mean:
                # re-roll all dice of that model's roll, once, final.
                for a, pa in per_model.items():
                    _add(total_dist, total - low + a, p * pa)
            else:
                _add(total_dist, total, p)
    else:
        total_dist = {0: Fraction(1)}
        for _ in range(s.models_firing):
            total_dist = _convolve(total_dist, per_model)
    shift = blast * s.models_firing
    return {k + shift: p for k, p in total_dist.items()}


# --------------------------------------------------------------------------------------------
# Characteristics and modifiers (R-0.1, R-0.3, R-0.4, R-2.5 ..)
# --------------------------------------------------------------------------------------------

def _clamp_roll_mod(mod: int) -> int:
    # hit and wound roll modifiers are summed first, then clamped to [-1, +1].
    return max(-1, min(1, mod))


def _ranged(s: Scenario) -> bool:
    return not s.melee


def _indirect_active(s: Scenario) -> bool:
    return s.indirect and _ranged(s)                  # is a ranged-weapon ability


def _overwatch_active(s: Scenario) -> bool:
    return s.overwatch and _ranged(s)                 # ranged attacks only


def _net_hit_mod(s: Scenario) -> int:
    total = s.hit_mod
    if _ranged(s):
        total += 1 if s.heavy_stationary else 0       # Heavy
        total -= 1 if s.stealth else 0                # Stealth (ranged only)
        total -= 1 if _indirect_active(s) else 0      # Indirect Fire
    return _clamp_roll_mod(total)                     # sum, then clamp


def _hit_needed(s: Scenario) -> int:
    # R-0.4 / A1: characteristic change, uncapped, no floor (an unmodified 1 still fails).
    return s.bs - s.bs_improve


def _net_wound_mod(s: Scenario) -> int:
    return _clamp_roll_mod(s.wound_mod + (1 if s.lance_charged else 0))


def _crit_wound_threshold(s: Scenario) -> int:
    # Anti-KEYWORD X+ makes an unmodified X+ a Critical Wound.
    return min(s.crit_wound, s.anti if s.anti is not None else 7)


def _effective_ap(s: Scenario) -> int:
    # improve = one step more negative; worsening can never go above 0.
    return min(0, s.ap - s.ap_improve)


def _has_benefit_of_cover(s: Scenario) -> bool:
    # ranged attacks only; granted by cover or Indirect Fire, never twice;
    # removed by IGNORES COVER; denied to Save 3+ or better vs AP 0 (modified AP, A3).
    if not _ranged(s) or s.ignores_cover:
        return False
    if not (s.cover or _indirect_active(s)):
        return False
    return not (s.save <= 3 and _effective_ap(s) == 0)


def _invuln_available(s: Scenario) -> bool:
    return s.invuln is not None and not (s.melee and s.invuln_ranged_only)


# --------------------------------------------------------------------------------------------
# Re-roll decision shared by the Hit and Wound rolls (R-3.1 ..)
# --------------------------------------------------------------------------------------------

def _roll_with_policy(outcome_of: Callable[[int], str], policy: str, fail: str, crit: str,
                      values: Callable[[], dict[str, Fraction]] | None = None
                      ) -> dict[tuple[str, bool], Fraction]:
    """P(outcome, was the die re-rolled) for one die under a re-roll policy.

    R-3.3 "ones": an unmodified 1.  R-3.4 "failed": fails after modifiers.
    R-3.5 / A6 "non_crit": every result that is not a critical.  "best": re-roll iff the value
    of the result is strictly below the mean value of a fresh die (ties keep).
    R-3.1 / R-3.2: the re-rolled die replaces the first, is read unmodified, and is final.
    """
    if policy == "best":
        value = values()
        fresh_mean = sum((value[outcome_of(u)] for u in D6_FACES), Fraction(0)) * SIXTH
    dist: dict[tuple[str, bool], Fraction] = {}
    for first in D6_FACES:
        outcome = outcome_of(first)
        if policy == "none":
            again = False
        elif policy == "ones":
            again = first == 1
        elif policy == "failed":
            again = outcome == fail
        elif policy == "non_crit":
            again = outcome != crit
        elif policy == "best":
            again = value[outcome] < fresh_mean
        else:
            raise ValueError(f"unknown re-roll policy {policy!r}")
        if again:
            for second in D6_FACES:
                _add(dist, (outcome_of(second), True), SIXTH * SIXTH)
        else:
            _add(dist, (outcome, False), SIXTH)
    return dist


def _broadest(*policies: str) -> str:
    # the most permissive permission applies; never chained.
    return max(policies, key=_ROLL_POLICIES.index)


# --------------------------------------------------------------------------------------------
# Hit roll (R-0.3, R-0.5, R-1.6, R-2.1 ..)
# --------------------------------------------------------------------------------------------

def _hit_outcome(s: Scenario, unmodified: int) -> str:
    if _overwatch_active(s):
        # R-2.9 / S4: only an unmodified 6 hits, whatever BS, modifiers or crit_hit; it crits.
        return CRIT_HIT if unmodified == 6 else MISS
    if unmodified == 1:           # unmodified 1 always fails
        return MISS
    if _indirect_active(s) and s.rules == "current" and unmodified <= 3:
        # R-2.7 (current text): unmodified 1-3 always fail; "always fails" beats crit_hit.
        return MISS
    if unmodified >= s.crit_hit:  # R-2.2 / R-2.3 / A7: Critical Hit, always succeeds
        return CRIT_HIT
    # success iff unmodified + capped modifier >= BS (after characteristic changes)
    return HIT if unmodified + _net_hit_mod(s) >= _hit_needed(s) else MISS


@cache
def _hit_roll_items(s: Scenario) -> tuple[tuple[str, bool, Fraction], ...]:
    """(outcome, re-rolled, p) of one attack's Hit roll (not for TORRENT)."""
    dist = _roll_with_policy(lambda u: _hit_outcome(s, u), s.reroll_hits, MISS, CRIT_HIT,
                             lambda: hit_outcome_values(s))
    return tuple((o, rr, p) for (o, rr), p in dist.items())


def hit_roll_distribution(s: Scenario) -> dict[str, Fraction]:
    """P(miss / hit / critical hit) of one attack's Hit roll, every die face enumerated."""
    if s.bs is None:
        # Torrent: automatic hit, no Hit roll, hence never a Critical Hit (A13: also in
        # Overwatch).
        return {HIT: Fraction(1)}
    dist: dict[str, Fraction] = {}
    for outcome, _, p in _hit_roll_items(s):
        _add(dist, outcome, p)
    return dist


def p_hit(s: Scenario) -> Fraction:
    """P(the Hit roll succeeds), critical hits included."""
    d = hit_roll_distribution(s)
    return d.get(HIT, Fraction(0)) + d.get(CRIT_HIT, Fraction(0))


def p_critical_hit(s: Scenario) -> Fraction:
    return hit_roll_distribution(s).get(CRIT_HIT, Fraction(0))


def _sustained_distribution(s: Scenario) -> dict[int, Fraction]:
    # Sustained Hits X = X extra hits per Critical Hit: "D3" rolled per crit.
    if s.sustained == "0":
        return {0: Fraction(1)}
    return dice_distribution(s.sustained)


def hits_per_attack_distribution(s: Scenario) -> dict[int, Fraction]:
    """Number of hits scored by one attack (the crit itself + Sustained extra hits, R-4.1)."""
    dist: dict[int, Fraction] = {}
    for outcome, p in hit_roll_distribution(s).items():
        if outcome == MISS:
            _add(dist, 0, p)
        elif outcome == HIT:
            _add(dist, 1, p)
        else:
            for extra, px in _sustained_distribution(s).items():
                _add(dist, 1 + extra, p * px)
    return dist


def expected_hits_per_attack(s: Scenario) -> Fraction:
    return mean(hits_per_attack_distribution(s))


# --------------------------------------------------------------------------------------------
# Wound roll (R-5.1 ..)
# --------------------------------------------------------------------------------------------

def wound_threshold(strength: int, toughness: int) -> int:
    """R-5.1: S >= 2T: 2+; S > T: 3+; S == T: 4+; S < T: 5+; 2S <= T: 6+."""
    if strength >= 2 * toughness:
        return 2
    if strength > toughness:
        return 3
    if strength == toughness:
        return 4
    if 2 * strength <= toughness:
        return 6
    return 5


def _wound_reroll_policy(s: Scenario) -> str:
    # Twin-linked lets the Wound roll be re-rolled; default policy re-rolls failures.
    # with several permissions the most permissive applies, never chained.
    return _broadest(s.reroll_wounds, *(["failed"] if s.twin_linked else []))


def _wound_outcome(s: Scenario, unmodified: int) -> str:
    if unmodified == 1:           # unmodified 1 always fails
        return FAIL
    if unmodified >= _crit_wound_threshold(s):
        return CRIT_WOUND         # Critical Wound, always succeeds
    target = wound_threshold(s.strength, s.toughness)
    # net wound modifier clamped to [-1, +1]
    return WOUND if unmodified + _net_wound_mod(s) >= target else FAIL


@cache
def _wound_roll_items(s: Scenario) -> tuple[tuple[str, bool, Fraction], ...]:
    dist = _roll_with_policy(lambda u: _wound_outcome(s, u), _wound_reroll_policy(s), FAIL,
                             CRIT_WOUND, lambda: wound_outcome_values(s))
    return tuple((o, rr, p) for (o, rr), p in dist.items())


def wound_roll_distribution(s: Scenario) -> dict[str, Fraction]:
    """P(fail / wound / critical wound) of one Wound roll, every die face enumerated."""
    dist: dict[str, Fraction] = {}
    for outcome, _, p in _wound_roll_items(s):
        _add(dist, outcome, p)
    return dist


def p_wound(s: Scenario) -> Fraction:
    """P(one Wound roll succeeds), critical wounds included."""
    d = wound_roll_distribution(s)
    return d.get(WOUND, Fraction(0)) + d.get(CRIT_WOUND, Fraction(0))


def expected_wounds_per_attack(s: Scenario) -> Fraction:
    """E[successful wounds per attack]: Lethal auto-wounds + successful Wound rolls (R-4.3/4.4)."""
    total = Fraction(0)
    pw = p_wound(s)
    for outcome, p in hit_roll_distribution(s).items():
        if outcome == HIT:
            total += p * pw
        elif outcome == CRIT_HIT:
            crit_itself = Fraction(1) if s.lethal else pw
            extra = mean(_sustained_distribution(s)) * pw
            total += p * (crit_itself + extra)
    return total


# --------------------------------------------------------------------------------------------
# Saving throw (R-7.1 ..)
# --------------------------------------------------------------------------------------------

def _cover_bonus(s: Scenario) -> int:
    return 1 if _has_benefit_of_cover(s) else 0


def _armour_passes(s: Scenario, unmodified: int) -> bool:
    if unmodified == 1:           # unmodified 1 always fails
        return False
    # R-7.2 + R-0.3 (A2): AP + cover + other modifiers summed; net may not exceed +1.
    net = min(1, _effective_ap(s) + _cover_bonus(s) + s.save_mod)
    return unmodified + net >= s.save


def _invuln_passes(s: Scenario, unmodified: int) -> bool:
    if not _invuln_available(s) or unmodified == 1:   # unmodified 1 always fails
        return False
    # never modified by AP: cover excluded; other save modifiers capped at +1.
    return unmodified + min(1, s.save_mod) >= s.invuln


def _single_roll_pass_probability(s: Scenario, passes) -> Fraction:
    return sum((SIXTH for face in D6_FACES if passes(s, face)), Fraction(0))


def _chosen_save(s: Scenario):
    """R-7.1: armour or invulnerable, whichever passes more often (chosen before rolling).

    The defender's re-roll (ones / failed) is monotone in the single-roll probability, so the
    same save is best with or without it."""
    best = _armour_passes
    if _invuln_available(s) and (_single_roll_pass_probability(s, _invuln_passes)
                                 > _single_roll_pass_probability(s, _armour_passes)):
        best = _invuln_passes
    return best


@cache
def _save_items(s: Scenario) -> tuple[tuple[bool, bool, Fraction], ...]:
    """(passed, re-rolled, p) of one saving throw with the defender's re-roll policy."""
    passes = _chosen_save(s)
    dist: dict[tuple[bool, bool], Fraction] = {}
    for first in D6_FACES:
        ok = passes(s, first)
        again = (s.reroll_saves == "ones" and first == 1) or (
            s.reroll_saves == "failed" and not ok)
        if again:                  # once, final
            for second in D6_FACES:
                _add(dist, (passes(s, second), True), SIXTH * SIXTH)
        else:
            _add(dist, (ok, False), SIXTH)
    return tuple((ok, rr, p) for (ok, rr), p in dist.items())


def p_save(s: Scenario) -> Fraction:
    """P(the saving throw passes): the defender's best save (R-7.1) with its re-roll."""
    return sum((p for ok, _, p in _save_items(s) if ok), Fraction(0))


def _p_fresh_save(s: Scenario) -> Fraction:
    """A fresh, final saving throw (Command Re-roll, R-3.7)."""
    return _single_roll_pass_probability(s, _chosen_save(s))


# --------------------------------------------------------------------------------------------
# Damage and Feel No Pain (R-0.2, R-8.1 .., A4, A5, A18)
# --------------------------------------------------------------------------------------------

def modified_damage(s: Scenario, rolled: int) -> int:
    """R-0.2 / R-8.6: the rolled value (profile +N included, R-8.1) -> divide (R-8.3) ->
    add (Melta R-8.2, positive damage_mod) -> subtract (R-8.4, negative damage_mod) -> round
    up once at the end; if anything was subtracted the result is at least 1 (A4)."""
    v = Fraction(rolled)
    if s.half_damage:
        v /= 2                                          # A5: the +N is halved, Melta is not
    v += s.melta + max(s.damage_mod, 0)
    subtracted = s.damage_reduction + max(-s.damage_mod, 0)
    v -= subtracted
    out = math.ceil(v)                                  # A18: one rounding, at the end
    if subtracted > 0:
        out = max(1, out)
    return out


@cache
def _fresh_damage_items(s: Scenario) -> tuple[tuple[int, int, Fraction], ...]:
    """(dice total before +N, modified damage, p) of one fresh Damage roll."""
    const = _parse_dice(s.damage)[2]
    return tuple((dice, modified_damage(s, dice + const), p)
                 for dice, p in _dice_total_items(s.damage))


@cache
def _expected_fresh_damage(s: Scenario) -> Fraction:
    return sum((v * p for _, v, p in _fresh_damage_items(s)), Fraction(0))


@cache
def _damage_roll_items(s: Scenario) -> tuple[tuple[int, bool, Fraction], ...]:
    """(modified damage, re-rolled, p) of one Damage roll with reroll_damage (R-1.2: all dice
    of the roll are re-rolled; the re-roll is final)."""
    has_dice = _parse_dice(s.damage)[0] > 0
    average = _expected_fresh_damage(s)
    dist: dict[tuple[int, bool], Fraction] = {}
    for dice, value, p in _fresh_damage_items(s):
        if s.reroll_damage == "ones":
            again = has_dice and dice == 1        # ORACLE CHOICE (brief): dice total is 1
        elif s.reroll_damage == "below_average":
            again = value < average
        else:
            again = False
        if again:
            for _, value2, p2 in _fresh_damage_items(s):
                _add(dist, (value2, True), p * p2)
        else:
            _add(dist, (value, False), p)
    return tuple((v, rr, p) for (v, rr), p in dist.items())


def damage_roll_distribution(s: Scenario) -> dict[int, Fraction]:
    """pmf of the modified Damage of one attack (re-roll policy included, no FNP)."""
    dist: dict[int, Fraction] = {}
    for v, _, p in _damage_roll_items(s):
        _add(dist, v, p)
    return dist


@cache
def _fnp_items(points: int, fnp: int | None) -> tuple[tuple[int, Fraction], ...]:
    """R-8.5: one D6 per point of damage; a roll >= X ignores that point."""
    dist: dict[int, Fraction] = {0: Fraction(1)}
    for _ in range(points):
        new: dict[int, Fraction] = {}
        for lost, p in dist.items():
            for face in D6_FACES:
                ignored = fnp is not None and face >= fnp
                _add(new, lost if ignored else lost + 1, p * SIXTH)
        dist = new
    return tuple(dist.items())


def _fnp_points_lost(points: int, fnp: int | None) -> dict[int, Fraction]:
    return dict(_fnp_items(points, fnp))


def points_lost_per_unsaved_attack_distribution(s: Scenario) -> dict[int, Fraction]:
    """R-8.1 then R-8.6: roll (and re-roll) Damage, modify, then FNP per point; before the
    model cap (R-9.2)."""
    dist: dict[int, Fraction] = {}
    for dmg, pd in damage_roll_distribution(s).items():
        for lost, pf in _fnp_items(dmg, s.fnp):
            _add(dist, lost, pd * pf)
    return dist


# --------------------------------------------------------------------------------------------
# Values for the EV-optimal ("best") re-roll policy
# --------------------------------------------------------------------------------------------

@cache
def _expected_points_after_fnp(s: Scenario) -> Fraction:
    return mean(points_lost_per_unsaved_attack_distribution(s))


@cache
def wound_outcome_values(s: Scenario) -> dict[str, Fraction]:
    """R-3.5 values of a Wound-roll result: expected damage after FNP, unlimited wounds.

    ORACLE CHOICE (brief): the defender's save re-roll and reroll_damage are included; the
    Command Re-roll is ignored."""
    normal = (1 - p_save(s)) * _expected_points_after_fnp(s)
    crit = _expected_points_after_fnp(s) if s.devastating else normal
    return {FAIL: Fraction(0), WOUND: normal, CRIT_WOUND: crit}


@cache
def hit_outcome_values(s: Scenario) -> dict[str, Fraction]:
    """R-3.5 values of a Hit-roll result: expected damage one hit produces (unlimited wounds,
    after FNP), through the Wound roll with its own re-roll policy and the save."""
    wound_values = wound_outcome_values(s)
    normal = sum((p * wound_values[o] for o, p in wound_roll_distribution(s).items()),
                 Fraction(0))
    itself = wound_values[WOUND] if s.lethal else normal
    crit = itself + mean(_sustained_distribution(s)) * normal
    return {MISS: Fraction(0), HIT: normal, CRIT_HIT: crit}


# --------------------------------------------------------------------------------------------
# Allocation state and the probability tree
# --------------------------------------------------------------------------------------------

STAGES = ("attacks", "hits", "critical_hits", "wounds", "critical_wounds", "lethal",
          "devastating", "unsaved", "damage_before_fnp", "damage_after_fnp")

# How deep the tree must go for a tracked quantity (None = the full joint distribution).
_DEPTH = {"attacks": 0, "hits": 1, "critical_hits": 1, "wounds": 2, "critical_wounds": 2,
          "lethal": 2, "devastating": 2, "unsaved": 3, "damage_before_fnp": 4,
          "damage_after_fnp": 4, None: 4}


class _State(NamedTuple):
    damage: int           # wounds lost by the target so far
    destroyed: int        # models destroyed so far
    current_lost: int     # wounds already lost by the (single) damaged model, 0 if none
    pending_dev: int      # Devastating-Wounds critical wounds waiting for
    command_used: bool = False   # the one Command Re-roll has been spent
    tally: int = 0        # stage_distributions: the tracked counter


_START = _State(0, 0, 0, 0)


def _count(st: _State, track: str | None, key: str, n: int = 1) -> _State:
    return st._replace(tally=st.tally + n) if track == key and n else st


def _lose_wounds(s: Scenario, st: _State, points: int, spill: bool = False) -> _State:
    """Apply one attack's surviving points to one model (R-9.1, R-9.2, R-9.5).

    spill=True (rules "2023" Devastating mortal wounds, R-6.4 [VERSION]): the excess carries on
    to the next model until the unit is destroyed (R-9.3)."""
    if s.target_wounds is None:
        # unlimited wounds: summed, no cap, no models destroyed.
        return st._replace(damage=st.damage + points)
    damage, destroyed, current = st.damage, st.destroyed, st.current_lost
    while destroyed < s.target_models and points > 0:
        # the damaged model (if any) takes the attack, otherwise a fresh one.
        lost = min(points, s.target_wounds - current)   # excess is lost
        damage, current, points = damage + lost, current + lost, points - lost
        if current == s.target_wounds:                   # the model reaches 0 wounds
            destroyed, current = destroyed + 1, 0
        if not spill:
            break
    return st._replace(damage=damage, destroyed=destroyed, current_lost=current)


def _merge_into(target: dict, source: dict) -> None:
    for k, v in source.items():
        _add(target, k, v)


def _scale(dist: dict, p: Fraction) -> dict:
    return {k: v * p for k, v in dist.items() if v * p}


# One step of the tree per die type; each returns (outcome, p, spends the Command Re-roll).
# ORACLE CHOICE: the Command Re-roll goes to the FIRST eligible die in resolution order
# (attack order; within an attack the crit's own wound before its Sustained hits; normal
# unsaved attacks before the deferred Devastating ones). With fast dice this equals rolling
# the whole batch and re-rolling its first failed die.

@cache
def _hit_step(s: Scenario, command: bool) -> tuple[tuple[str, Fraction, bool], ...]:
    out: dict[tuple[str, bool], Fraction] = {}
    for outcome, rerolled, p in _hit_roll_items(s):
        if command and outcome == MISS and not rerolled:
            for u in D6_FACES:                       # fresh roll, final
                _add(out, (_hit_outcome(s, u), True), p * SIXTH)
        else:
            _add(out, (outcome, False), p)
    return tuple((o, p, used) for (o, used), p in out.items())


@cache
def _wound_step(s: Scenario, command: bool) -> tuple[tuple[str, Fraction, bool], ...]:
    out: dict[tuple[str, bool], Fraction] = {}
    for outcome, rerolled, p in _wound_roll_items(s):
        if command and outcome == FAIL and not rerolled:
            for u in D6_FACES:
                _add(out, (_wound_outcome(s, u), True), p * SIXTH)
        else:
            _add(out, (outcome, False), p)
    return tuple((o, p, used) for (o, used), p in out.items())


@cache
def _save_step(s: Scenario, command: bool) -> tuple[tuple[bool, Fraction, bool], ...]:
    out: dict[tuple[bool, bool], Fraction] = {}
    fresh = _p_fresh_save(s)
    for passed, rerolled, p in _save_items(s):
        if command and not passed and not rerolled:
            _add(out, (True, True), p * fresh)
            _add(out, (False, True), p * (1 - fresh))
        else:
            _add(out, (passed, False), p)
    return tuple((ok, p, used) for (ok, used), p in out.items())


@cache
def _damage_step(s: Scenario, command: bool) -> tuple[tuple[int, Fraction, bool], ...]:
    out: dict[tuple[int, bool], Fraction] = {}
    average = _expected_fresh_damage(s)
    for value, rerolled, p in _damage_roll_items(s):
        if command and not rerolled and value < average:
            for _, value2, p2 in _fresh_damage_items(s):   # all dice, final
                _add(out, (value2, True), p * p2)
        else:
            _add(out, (value, False), p)
    return tuple((v, p, used) for (v, used), p in out.items())


def _command_available(s: Scenario, st: _State, kind: str) -> bool:
    return s.command_reroll == kind and not st.command_used


def _spend(st: _State, used: bool) -> _State:
    return st._replace(command_used=True) if used else st


# Every transition below starts from ONE state whose additive parts (damage, tally) are zero
# and is memoised; ``_push`` applies it to a whole distribution and adds those parts back.
# This is exact: nothing later depends on the damage already summed or on the tally.

Transition = Callable[[Scenario, "str | None", _State], tuple]


def _push(transition: Transition, s: Scenario, track: str | None, dist: dict) -> dict:
    out: dict = {}
    for st, p in dist.items():
        d0, t0 = st.damage, st.tally
        base = st._replace(damage=0, tally=0) if (d0 or t0) else st
        for st2, q in transition(s, track, base):
            if d0 or t0:
                st2 = st2._replace(damage=st2.damage + d0, tally=st2.tally + t0)
            _add(out, st2, p * q)
    return out


@cache
def _normal_damage_transition(s: Scenario, track: str | None, st: _State) -> tuple:
    return _damage_transition(s, track, st, devastating=False)


@cache
def _devastating_damage_transition(s: Scenario, track: str | None, st: _State) -> tuple:
    # the deferred attack's mortal wounds = its modified Damage (S6).
    return _damage_transition(s, track, st._replace(pending_dev=st.pending_dev - 1),
                              devastating=True)


def _damage_transition(s: Scenario, track: str | None, st: _State, devastating: bool) -> tuple:
    """One attack resolved with damage: Damage roll (+ re-roll) and modifiers (R-8) -> FNP per
    point (R-8.5, A11) -> allocation to one model (R-9.1), excess lost (R-9.2, R-6.4 / A10) or,
    for Devastating mortal wounds with rules "2023", spilling over (R-6.4 [VERSION])."""
    spill = devastating and s.rules == "2023"
    out: dict = {}
    for value, q, used in _damage_step(s, _command_available(s, st, "damage")):
        st1 = _count(_spend(st, used), track, "damage_before_fnp", value)
        for points, pf in _fnp_items(value, s.fnp):
            st2 = _count(st1, track, "damage_after_fnp", points)
            if track is None:
                st2 = _lose_wounds(s, st2, points, spill)
            _add(out, st2, q * pf)
    return tuple(out.items())


@cache
def _save_transition(s: Scenario, track: str | None, st: _State) -> tuple:
    """A normal (non-devastating) wound: saving throw (R-7), then damage if it fails."""
    out: dict = {}
    for passed, q, used in _save_step(s, _command_available(s, st, "save")):
        st1 = _spend(st, used)
        if passed:
            _add(out, st1, q)                       # saved: the attack ends
        elif _DEPTH[track] < 4:
            _add(out, _count(st1, track, "unsaved"), q)
        else:
            st1 = _count(st1, track, "unsaved")
            _merge_into(out, _push(_normal_damage_transition, s, track, {st1: q}))
    return tuple(out.items())


def _resolve_saving_throw(s: Scenario, track: str | None, dist: dict) -> dict:
    if _DEPTH[track] < 3:
        return dist
    return _push(_save_transition, s, track, dist)


@cache
def _wound_transition(s: Scenario, track: str | None, st: _State) -> tuple:
    """One hit that must roll to wound (R-5), then its consequence."""
    out: dict = {}
    for outcome, q, used in _wound_step(s, _command_available(s, st, "wound")):
        st1 = _spend(st, used)
        if outcome == FAIL:
            _add(out, st1, q)
            continue
        st1 = _count(st1, track, "wounds")
        if outcome == CRIT_WOUND:
            st1 = _count(st1, track, "critical_wounds")
            if s.devastating:
                # no save of any kind: deferred until all other attacks.
                st1 = _count(st1, track, "devastating")
                if _DEPTH[track] >= 4:
                    st1 = st1._replace(pending_dev=st1.pending_dev + 1)
                _add(out, st1, q)
                continue
        _merge_into(out, _resolve_saving_throw(s, track, {st1: q}))
    return tuple(out.items())


def _resolve_wound_roll(s: Scenario, track: str | None, dist: dict) -> dict:
    if _DEPTH[track] < 2:
        return dist
    return _push(_wound_transition, s, track, dist)


def _resolve_lethal_wound(s: Scenario, track: str | None, dist: dict) -> dict:
    # wounds automatically; not a Critical Wound (no Devastating, no Anti, R-6.5, A9).
    if _DEPTH[track] < 2:
        return dist
    counted = {_count(_count(st, track, "wounds"), track, "lethal"): p for st, p in dist.items()}
    return _resolve_saving_throw(s, track, counted)


@cache
def _attack_transition(s: Scenario, track: str | None, st: _State) -> tuple:
    """One attack from state ``st``: Hit roll (R-2, R-3) and Critical-Hit effects (R-4)."""
    if s.bs is None:
        # TORRENT: automatic hit, no Hit roll (A13: also in Fire Overwatch).
        return tuple(_resolve_wound_roll(s, track, {_count(st, track, "hits"): Fraction(1)})
                     .items())
    out: dict = {}
    for outcome, p, used in _hit_step(s, _command_available(s, st, "hit")):
        st1 = _spend(st, used)
        if outcome == MISS:
            _add(out, st1, p)
            continue
        st1 = _count(st1, track, "hits")
        if outcome == HIT:
            _merge_into(out, _resolve_wound_roll(s, track, {st1: p}))
            continue
        st1 = _count(st1, track, "critical_hits")
        # X extra hits; they are not Critical Hits, roll to wound,
        # never auto-wound.
        for extra, px in _sustained_distribution(s).items():
            sub = {_count(st1, track, "hits", extra): p * px}
            if s.lethal:
                sub = _resolve_lethal_wound(s, track, sub)
            else:
                sub = _resolve_wound_roll(s, track, sub)
            for _ in range(extra):
                sub = _resolve_wound_roll(s, track, sub)
            _merge_into(out, sub)
    return tuple(out.items())


def _resolve_attack(s: Scenario, track: str | None, dist: dict) -> dict:
    return _push(_attack_transition, s, track, dist)


def _resolve_devastating(s: Scenario, track: str | None, dist: dict) -> dict:
    """R-6.3: after every other attack, each deferred Devastating crit in turn."""
    out: dict = {}
    work = dict(dist)
    while work:
        done = {st: p for st, p in work.items() if st.pending_dev == 0}
        _merge_into(out, done)
        todo = {st: p for st, p in work.items() if st.pending_dev > 0}
        work = _push(_devastating_damage_transition, s, track, todo) if todo else {}
    return out


def _final_states(s: Scenario, track: str | None = None) -> dict:
    attacks = attacks_distribution(s)
    result: dict = {}
    dist: dict = {_START: Fraction(1)}          # state after n attacks have been resolved
    for n in range(max(attacks) + 1):
        if n > 0:
            dist = _resolve_attack(s, track, dist)
        if n in attacks:
            _merge_into(result, _scale(_resolve_devastating(s, track, dist), attacks[n]))
    return result


def joint_distribution(s: Scenario) -> dict[tuple[int, int], Fraction]:
    """P(total wounds lost by the target = d and models destroyed = m)."""
    joint: dict[tuple[int, int], Fraction] = {}
    for st, p in _final_states(s).items():
        _add(joint, (st.damage, st.destroyed), p)
    return joint


def damage_distribution(s: Scenario) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for (dmg, _), p in joint_distribution(s).items():
        _add(out, dmg, p)
    return out


def models_destroyed_distribution(s: Scenario) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for (_, killed), p in joint_distribution(s).items():
        _add(out, killed, p)
    return out


def stage_distributions(s: Scenario) -> dict[str, dict[int, Fraction]]:
    """Exact pmf of every counter of the attack sequence (uncapped, no allocation):

    attacks; hits (successful Hit rolls + Sustained extra hits; TORRENT: attacks);
    critical_hits (Hit rolls that were Critical Hits); wounds (successful Wound rolls incl.
    critical ones + Lethal auto-wounds); critical_wounds (Wound rolls that were Critical
    Wounds); lethal (Lethal auto-wounds); devastating (Critical Wounds of a Devastating
    weapon); unsaved (non-devastating wounds whose save failed); damage_before_fnp /
    damage_after_fnp (modified Damage summed over unsaved + devastating attacks, rolled even
    after the target would be destroyed)."""
    out: dict[str, dict[int, Fraction]] = {"attacks": attacks_distribution(s)}
    for key in STAGES[1:]:
        dist: dict[int, Fraction] = {}
        for st, p in _final_states(s, key).items():
            _add(dist, st.tally, p)
        out[key] = dist
    return out


# --------------------------------------------------------------------------------------------
# Hazardous
# --------------------------------------------------------------------------------------------

def hazardous_distribution(tests: int, model_wounds: int, models: int,
                           fnp: int | None = None) -> dict[tuple[int, int], Fraction]:
    """R-9.7: one test per Hazardous weapon used, after all attacks; D6, an unmodified 1 fails;
    each failure = 3 mortal wounds to ONE model (the already-wounded model first), FNP per
    point (R-8.5), excess lost. Returns P(wounds lost by the attacking unit, models lost).

    ORACLE CHOICE: every model of the unit carries a Hazardous weapon (no CHARACTER priority):
    :func:`hazardous_queue_distribution` with ``models`` alike."""
    return hazardous_queue_distribution(tests, [(model_wounds, fnp)] * models)


def mean(d: dict[int, Fraction]) -> Fraction:
    return sum((k * p for k, p in d.items()), Fraction(0))


def variance(d: dict[int, Fraction]) -> Fraction:
    mu = mean(d)
    return sum(((k - mu) ** 2 * p for k, p in d.items()), Fraction(0))


# --------------------------------------------------------------------------------------------
# Whole units: several weapon groups against several model groups (R-6.3, R-6.4, R-9.1, R-9.2,
# and the allocation ruling of issue 9)
# --------------------------------------------------------------------------------------------
#
# One unit's shooting (or fight): weapon groups fire in the order given. For each group its
# attacks are rolled, hit, wound against the UNIT's Toughness; the
# Critical Wounds of a DEVASTATING WOUNDS weapon are set aside; every other wound
# (Lethal automatic wounds included, R-4.3) is allocated one at a time to a model chosen
# as below, which rolls its own group's save, then Damage and Feel No Pain per
# point with its own group's FNP, and loses that many wounds, excess lost.
# After every weapon group the set-aside attacks are resolved weapon by weapon: no save
# Damage and FNP of the model they go to, excess lost (R-6.4; rules "2023": spilling
# on to the next model).
#
# Choosing the model (ruling of issue 9): the models form two queues, "tracks". Track 0 holds
# the Bodyguard groups (every group when the unit is not Attached), track 1 the Leader groups,
# each in the order given (the caller gives the groups in allocation order). Within a track the
# current model takes attacks until destroyed (R-9.1: a model that has lost wounds must take the
# attack), then the next model. A normal attack goes to track 0, or to track 1 once track 0 is
# empty; a PRECISION attack against an Attached unit goes to track 1 while a Leader model lives
# else to track 0. ``wounds_left`` is what the first model of track 0 has left.
#
# Exactness. A weapon group's dice that decide HOW MANY wounds it scores (attacks, hit, wound,
# Sustained) are independent of the allocation state, and every wound of one weapon group is
# treated alike once allocated (the model's save, damage and FNP depend only on its group). So
# the oracle computes, per weapon group, the exact joint pmf of (allocated wounds N, set-aside
# Devastating wounds K), and then pushes the exact distribution over allocation states through
# N single-wound steps. The i-th wound exists with probability P(N >= i), independent of the
# state it meets; that weights the per-weapon expected damage and kills by linearity.
#
# Planted-bug switches (for the tests' power checks only; defaults are the rules):
# ``defer_devastating=False`` resolves each group's Devastating wounds right after that group;
# ``carry_over=False`` heals the current (wounded) models before every weapon group but the first.


@dataclass(frozen=True)
class UnitWeapon:
    """One weapon group: ``count`` firing models each making ``attacks`` attacks."""
    attacks: str = "1"
    count: int = 1
    bs: int | None = 4             # None = TORRENT
    strength: int = 4
    ap: int = 0
    damage: str = "1"
    sustained: str = "0"           # "0", "1", "2", "D3"
    lethal: bool = False
    devastating: bool = False
    precision: bool = False
    twin_linked: bool = False
    name: str = "weapon"


@dataclass(frozen=True)
class ModelGroup:
    """``models`` identical models of the target unit."""
    models: int = 1
    wounds: int = 1
    toughness: int = 4
    save: int = 7
    invuln: int | None = None
    fnp: int | None = None
    leader: bool = False           # an attached Leader (CHARACTER) group
    name: str = "group"


@dataclass(frozen=True)
class UnitOutcome:
    """Exact results of one unit's attack.

    ``per_group``: P(per-group (models destroyed, wounds lost) tuple), groups as given.
    ``weapon_damage`` / ``weapon_kills``: per weapon group (as given), the expected wounds its
    attacks took off and the expected models whose last wound it took."""
    joint: dict[tuple[int, int], Fraction]
    per_group: dict[tuple[tuple[int, int], ...], Fraction]
    weapon_damage: tuple[Fraction, ...]
    weapon_kills: tuple[Fraction, ...]

    @property
    def damage(self) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for (dmg, _), p in self.joint.items():
            _add(out, dmg, p)
        return out

    @property
    def models_destroyed(self) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for (_, dead), p in self.joint.items():
            _add(out, dead, p)
        return out

    def group_destroyed(self, j: int) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for key, p in self.per_group.items():
            _add(out, key[j][0], p)
        return out

    def group_wounds_lost(self, j: int) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for key, p in self.per_group.items():
            _add(out, key[j][1], p)
        return out


class _UnitState(NamedTuple):
    pos: tuple[int, int]       # per track: models of the track destroyed so far (= current model's index)
    lost: tuple[int, int]      # per track: wounds already lost by the current model
    damage: int                # wounds lost by the unit in this attack
    pending: tuple[int, ...]   # per weapon group: Devastating wounds set aside


def unit_toughness(groups: tuple[ModelGroup, ...]) -> int:
    """The Toughness of every Wound roll against the unit (ruling of issue 9): the Bodyguard
    models' (the highest when they differ), every model's when the unit is not Attached."""
    return max(g.toughness for g in _tracks_of(groups)[0])


def _attached(groups: tuple[ModelGroup, ...]) -> bool:
    return any(g.leader for g in groups) and not all(g.leader for g in groups)


def _tracks_of(groups: tuple[ModelGroup, ...]) -> tuple[tuple[ModelGroup, ...], tuple[ModelGroup, ...]]:
    if not _attached(groups):
        return tuple(groups), ()
    return tuple(g for g in groups if not g.leader), tuple(g for g in groups if g.leader)


def _unit_scenario(w: UnitWeapon, grp: ModelGroup, toughness: int, models: int) -> Scenario:
    """The single-weapon building blocks for weapon ``w`` against a model of ``grp``, rolling to
    wound against the unit's ``toughness``."""
    return Scenario(attacks=w.attacks, models_firing=w.count, bs=w.bs, sustained=w.sustained,
                    lethal=w.lethal, strength=w.strength, toughness=toughness,
                    twin_linked=w.twin_linked, devastating=w.devastating, ap=w.ap,
                    save=grp.save, invuln=grp.invuln, damage=w.damage, fnp=grp.fnp,
                    target_models=models, target_wounds=grp.wounds)


def _wounds_per_attack(s: Scenario) -> dict[tuple[int, int], Fraction]:
    """One attack: P(allocated wounds n, set-aside Devastating wounds k) (R-2, R-4, R-5, R-6)."""
    rolled: dict[tuple[int, int], Fraction] = {}           # one Wound roll
    for outcome, p in wound_roll_distribution(s).items():
        if outcome == FAIL:
            _add(rolled, (0, 0), p)
        elif outcome == CRIT_WOUND and s.devastating:
            _add(rolled, (0, 1), p)
        else:
            _add(rolled, (1, 0), p)

    def conv(a: dict, b: dict) -> dict:
        out: dict = {}
        for (n1, k1), p1 in a.items():
            for (n2, k2), p2 in b.items():
                _add(out, (n1 + n2, k1 + k2), p1 * p2)
        return out

    dist: dict[tuple[int, int], Fraction] = {}
    for outcome, p in hit_roll_distribution(s).items():   # TORRENT: {HIT: 1}
        if outcome == MISS:
            _add(dist, (0, 0), p)
        elif outcome == HIT:
            for key, q in rolled.items():
                _add(dist, key, p * q)
        else:
            for extra, px in _sustained_distribution(s).items():
                sub = {(1, 0): Fraction(1)} if s.lethal else rolled
                for _ in range(extra):
                    sub = conv(sub, rolled)
                for key, q in sub.items():
                    _add(dist, key, p * px * q)
    return dist


def unit_weapon_wounds(w: UnitWeapon, toughness: int, models: int = 1) -> dict[tuple[int, int], Fraction]:
    """A whole weapon group: P(allocated wounds N, Devastating wounds K), every model rolling its
    own Attacks (R-1.2)."""
    s = _unit_scenario(w, ModelGroup(), toughness, models)
    per_attack = _wounds_per_attack(s)
    out: dict[tuple[int, int], Fraction] = {}
    power: dict[tuple[int, int], Fraction] = {(0, 0): Fraction(1)}   # the n-attack convolution
    attacks = attacks_distribution(s)
    for n in range(max(attacks) + 1):
        if n > 0:
            new: dict[tuple[int, int], Fraction] = {}
            for (a1, b1), p1 in power.items():
                for (a2, b2), p2 in per_attack.items():
                    _add(new, (a1 + a2, b1 + b2), p1 * p2)
            power = new
        if n in attacks:
            for key, p in power.items():
                _add(out, key, p * attacks[n])
    return out


def unit_attack(weapons: tuple[UnitWeapon, ...] | list[UnitWeapon],
                groups: tuple[ModelGroup, ...] | list[ModelGroup], *,
                toughness: int | None = None, wounds_left: int | None = None, rules: str = "current",
                defer_devastating: bool = True, carry_over: bool = True) -> UnitOutcome:
    """Exact distributions of one unit's attack with ``weapons`` (firing order) at a unit of
    ``groups`` (allocation order: the Bodyguard groups, then the Leader groups). ``toughness``
    defaults to :func:`unit_toughness`. See the comment above for the procedure."""
    weapons, groups = tuple(weapons), tuple(groups)
    if rules not in ("current", "2023"):
        raise ValueError(f"rules: {rules!r}")
    attached = _attached(groups)
    # The models of each track, one by one: the group index of each.
    in_track = ([j for j, g in enumerate(groups) if not (attached and g.leader)],
                [j for j, g in enumerate(groups) if attached and g.leader])
    flat = tuple(tuple(j for j in track for _ in range(groups[j].models)) for track in in_track)
    n_models = sum(g.models for g in groups)
    T = unit_toughness(groups) if toughness is None else toughness
    initial_lost = 0
    if wounds_left is not None:
        first = groups[flat[0][0]]
        if not 1 <= wounds_left <= first.wounds:
            raise ValueError(f"wounds_left {wounds_left} vs W{first.wounds}")
        initial_lost = first.wounds - wounds_left

    scen = [[_unit_scenario(w, g, T, n_models) for g in groups] for w in weapons]
    p_saved = [[p_save(s) for s in row] for row in scen]
    points = [[tuple(points_lost_per_unsaved_attack_distribution(s).items()) for s in row]
              for row in scen]
    exp_damage = [Fraction(0)] * len(weapons)
    exp_kills = [Fraction(0)] * len(weapons)

    def choose(pos: tuple[int, int], precision: bool) -> int | None:
        alive0, alive1 = pos[0] < len(flat[0]), pos[1] < len(flat[1])
        if precision and attached and alive1:      # Precision picks the Leader
            return 1
        if alive0:
            return 0
        if alive1:
            return 1
        return None                                 # the unit is destroyed

    def lose(st: _UnitState, track: int, pts: int, precision: bool, spill: bool
             ) -> tuple[_UnitState, int, int]:
        """``pts`` wounds to the current model of ``track``; excess lost (R-9.2, R-6.4) or, with
        ``spill``, carried on to the next model chosen the same way. -> (state, taken, killed)."""
        taken = killed = 0
        t: int | None = track
        while t is not None and pts > 0:
            j = flat[t][st.pos[t]]
            room = groups[j].wounds - st.lost[t]
            hit = min(pts, room)
            taken, pts = taken + hit, pts - hit
            pos, lost = list(st.pos), list(st.lost)
            if hit == room:                          # the model is destroyed
                pos[t], lost[t] = pos[t] + 1, 0
                killed += 1
            else:
                lost[t] += hit
            st = st._replace(pos=(pos[0], pos[1]), lost=(lost[0], lost[1]), damage=st.damage + hit)
            if not (spill and hit == room):
                break
            t = choose(st.pos, precision)
        return st, taken, killed

    memo: dict[tuple, tuple] = {}

    def transition(g: int, st: _UnitState, devastating: bool) -> tuple:
        """One wound of weapon group ``g`` (a normal one, or a set-aside Devastating one):
        ((next state, p, wounds taken, models killed), ...)."""
        key = (g, st, devastating)
        if key in memo:
            return memo[key]
        w = weapons[g]
        t = choose(st.pos, w.precision)
        out: dict[tuple[_UnitState, int, int], Fraction] = {}
        if t is None:
            out[(st, 0, 0)] = Fraction(1)
        else:
            j = flat[t][st.pos[t]]
            p_fail = Fraction(1) if devastating else 1 - p_saved[g][j]    # no save
            _add(out, (st, 0, 0), 1 - p_fail)
            spill = devastating and rules == "2023"                        # R-6.4 [VERSION]
            for pts, pp in points[g][j]:
                _add(out, lose(st, t, pts, w.precision, spill), p_fail * pp)
        result = tuple((s2, p, taken, killed) for (s2, taken, killed), p in out.items())
        memo[key] = result
        return result

    def step(g: int, dist: dict, weight: Fraction, devastating: bool) -> dict:
        new: dict = {}
        for st, p in dist.items():
            if devastating:
                st = st._replace(pending=st.pending[:g] + (st.pending[g] - 1,) + st.pending[g + 1:])
            for st2, q, taken, killed in transition(g, st, devastating):
                _add(new, st2, p * q)
                exp_damage[g] += weight * p * q * taken
                exp_kills[g] += weight * p * q * killed
        return new

    def resolve_devastating(g: int, dist: dict) -> dict:
        out: dict = {}
        work = dist
        while work:
            _merge_into(out, {st: p for st, p in work.items() if st.pending[g] == 0})
            todo = {st: p for st, p in work.items() if st.pending[g] > 0}
            work = step(g, todo, Fraction(1), True) if todo else {}
        return out

    start = _UnitState((0, 0), (initial_lost, 0), 0, (0,) * len(weapons))
    dist: dict[_UnitState, Fraction] = {start: Fraction(1)}
    for g in range(len(weapons)):
        if not carry_over and g > 0:                  # planted bug: wounds do not carry over
            healed: dict = {}
            for st, p in dist.items():
                _add(healed, st._replace(lost=(0, 0)), p)
            dist = healed
        nk = unit_weapon_wounds(weapons[g], T, n_models)
        max_n = max(n for n, _ in nk)
        at_least = [sum((p for (n, _), p in nk.items() if n >= i), Fraction(0)) for i in range(max_n + 1)]
        by_n: dict[int, list[tuple[int, Fraction]]] = {}
        for (n, k), p in nk.items():
            by_n.setdefault(n, []).append((k, p))
        after: dict = {}
        cur = dist                                   # the state after i allocated wounds
        for i in range(max_n + 1):
            if i > 0:
                cur = step(g, cur, at_least[i], False)
            for k, p in by_n.get(i, ()):
                for st, q in cur.items():
                    pend = st.pending[:g] + (st.pending[g] + k,) + st.pending[g + 1:]
                    _add(after, st._replace(pending=pend), p * q)
        dist = after
        if not defer_devastating:                     # planted bug: not deferred
            dist = resolve_devastating(g, dist)
    for g in range(len(weapons)):                     # after every other attack
        dist = resolve_devastating(g, dist)

    joint: dict[tuple[int, int], Fraction] = {}
    per_group: dict[tuple[tuple[int, int], ...], Fraction] = {}
    for st, p in dist.items():
        dead = [0] * len(groups)
        lost = [0] * len(groups)
        for t in (0, 1):
            for m in range(st.pos[t]):
                dead[flat[t][m]] += 1
                lost[flat[t][m]] += groups[flat[t][m]].wounds
            if st.pos[t] < len(flat[t]):
                lost[flat[t][st.pos[t]]] += st.lost[t]
        if flat[0]:
            lost[flat[0][0]] -= initial_lost         # the first model had lost these before
        if carry_over and sum(lost) != st.damage:
            raise AssertionError(f"oracle bookkeeping: {st} vs {lost}")
        _add(joint, (st.damage, sum(dead)), p)
        _add(per_group, tuple(zip(dead, lost, strict=True)), p)
    if sum(joint.values()) != 1:
        raise AssertionError("oracle: probabilities do not sum to 1")
    return UnitOutcome(joint, per_group, tuple(exp_damage), tuple(exp_kills))


def hazardous_queue_distribution(tests: int, queue: list[tuple[int, int | None]]) -> dict[tuple[int, int], Fraction]:
    """R-9.7 with models that differ: ``queue`` is the models carrying Hazardous weapons, (W, Feel
    No Pain) each, in the order a careful player gives them the mortal wounds (models that are
    not CHARACTERs before CHARACTERs); a model that has lost wounds always takes the next ones.
    Each failed test (an unmodified 1) is 3 mortal wounds to one model, Feel No Pain per point,
    excess lost. Returns P(wounds lost by the attacking unit, models lost)."""
    # state: (wounds lost, models lost, wounds already on the current model)
    dist: dict[tuple[int, int, int], Fraction] = {(0, 0, 0): Fraction(1)}
    for _ in range(tests):
        new: dict[tuple[int, int, int], Fraction] = {}
        for (lost, dead, current), p in dist.items():
            _add(new, (lost, dead, current), p * Fraction(5, 6))
            if dead == len(queue):
                _add(new, (lost, dead, current), p * SIXTH)
                continue
            wounds, fnp = queue[dead]
            for points, pf in _fnp_items(3, fnp):
                q = p * SIXTH * pf
                taken = min(points, wounds - current)
                if current + taken == wounds:
                    _add(new, (lost + taken, dead + 1, 0), q)
                else:
                    _add(new, (lost + taken, dead, current + taken), q)
        dist = new
    out: dict[tuple[int, int], Fraction] = {}
    for (lost, dead, _), p in dist.items():
        _add(out, (lost, dead), p)
    return out
