"""Independent exact oracle for the 10th-edition attack sequence (tests only).

Derived only from /work/shared/RULES.md (rule ids cited on every rule), never from the
``mathhammer`` package. Every die of the attack sequence is enumerated face by face with
``fractions.Fraction``:

    attacks dice -> per attack: hit die (+ re-roll) -> Sustained D3 -> wound die (+ re-roll)
    -> save die -> damage dice -> one Feel No Pain die per point -> allocation to the target,
    then the deferred Devastating-Wounds attacks (R-6.3).

The probability tree is kept as a distribution over a small state (see ``_State``) after each
attack, which is exact: the state holds everything later dice outcomes can depend on.

Interpretations taken here (beyond RULES.md) are marked "ORACLE CHOICE".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "Scenario",
    "damage_distribution",
    "models_destroyed_distribution",
    "joint_distribution",
    "mean",
    "variance",
    "dice_distribution",
    "attacks_distribution",
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
    "points_lost_per_unsaved_attack_distribution",
]

D6_FACES = range(1, 7)
SIXTH = Fraction(1, 6)

# Hit-roll outcomes and wound-roll outcomes.
MISS, HIT, CRIT_HIT = "miss", "hit", "critical_hit"
FAIL, WOUND, CRIT_WOUND = "fail", "wound", "critical_wound"


@dataclass(frozen=True)
class Scenario:
    attacks: str = "1"            # per firing model: "3", "D6", "2D6", "D3+1" (D3 = ceil(D6/2))
    models_firing: int = 1
    bs: int | None = 4             # None = TORRENT (auto-hit, no hit roll, no crits)
    hit_mod: int = 0               # requested net hit-roll modifier (clamped to [-1,+1])
    reroll_hits: str = "none"      # "none" | "ones" | "failed"
    sustained: str = "0"           # "0" (none), "1", "2", "D3"
    lethal: bool = False
    strength: int = 4
    toughness: int = 4
    wound_mod: int = 0
    reroll_wounds: str = "none"    # "none" | "ones" | "failed"
    twin_linked: bool = False      # re-roll failed wound rolls; most permissive re-roll wins
    devastating: bool = False
    ap: int = 0                    # 0 or negative
    save: int = 7                  # armour save characteristic (7 = no save possible)
    invuln: int | None = None
    cover: bool = False            # Benefit of Cover (+1 to ARMOUR saves only)
    ignores_cover: bool = False
    save_mod: int = 0              # generic saving-throw modifier, armour AND invulnerable
    damage: str = "1"              # "2", "D3", "D6", "D6+6", "2D6"
    fnp: int | None = None         # Feel No Pain X+
    target_models: int = 1
    target_wounds: int | None = None   # per model; None = unlimited wounds

    def __post_init__(self) -> None:
        for name in ("reroll_hits", "reroll_wounds"):
            if getattr(self, name) not in ("none", "ones", "failed"):
                raise ValueError(f"{name}: expected none/ones/failed, got {getattr(self, name)!r}")
        if self.sustained not in ("0", "1", "2", "D3"):
            raise ValueError(f"sustained: expected 0/1/2/D3, got {self.sustained!r}")
        if self.ap > 0 or self.models_firing < 1 or self.target_models < 1:
            raise ValueError(f"invalid scenario: {self!r}")




def _add(dist: dict, key, p: Fraction) -> None:
    if p:
        dist[key] = dist.get(key, Fraction(0)) + p


# --------------------------------------------------------------------------------------------
# Dice
# --------------------------------------------------------------------------------------------

_DICE_RE = re.compile(r"^(?:(\d*)D([36]))?([+-]?\d+)?$")


def _die_face_value(sides: int, d6_face: int) -> int:
    # a D3 is a D6 halved and rounded up (1,2->1; 3,4->2; 5,6->3).
    return d6_face if sides == 6 else (d6_face + 1) // 2


def dice_distribution(expr: str) -> dict[int, Fraction]:
    """Exact pmf of "N", "D3", "D6", "2D6", "D3+1", "D6+6" by enumerating every D6 face.

    R-0.6: "xDy+N" is the sum of x dice plus N; R-8.1: the +N is part of the characteristic.
    """
    m = _DICE_RE.match(expr.strip().upper().replace(" ", ""))
    if not m or expr.strip() == "":
        raise ValueError(f"not a dice expression: {expr!r}")
    count_txt, sides_txt, const_txt = m.groups()
    const = int(const_txt) if const_txt else 0
    dist: dict[int, Fraction] = {const: Fraction(1)}
    if sides_txt is not None:
        n_dice = int(count_txt) if count_txt else 1
        for _ in range(n_dice):
            new: dict[int, Fraction] = {}
            for total, p in dist.items():
                for face in D6_FACES:
                    _add(new, total + _die_face_value(int(sides_txt), face), p * SIXTH)
            dist = new
    return dist


def attacks_distribution(s: Scenario) -> dict[int, Fraction]:
    """Total attacks of the unit: each firing model rolls its own Attacks (R-1.1, R-1.2)."""
    per_model = dice_distribution(s.attacks)
    total: dict[int, Fraction] = {0: Fraction(1)}
    for _ in range(s.models_firing):
        new: dict[int, Fraction] = {}
        for a, pa in total.items():
            for b, pb in per_model.items():
                _add(new, a + b, pa * pb)
        total = new
    return total


# --------------------------------------------------------------------------------------------
# Hit roll (R-0.3, R-0.5, R-1.6, R-2.1, R-2.2, R-3.1 ..)
# --------------------------------------------------------------------------------------------

def _clamp_roll_mod(mod: int) -> int:
    # hit and wound roll modifiers are summed first, then clamped to [-1, +1].
    return max(-1, min(1, mod))


def _hit_outcome(s: Scenario, unmodified: int) -> str:
    if unmodified == 6:           # unmodified 6 = Critical Hit, always succeeds
        return CRIT_HIT
    if unmodified == 1:           # unmodified 1 always fails
        return MISS
    # success iff unmodified + capped modifier >= BS
    return HIT if unmodified + _clamp_roll_mod(s.hit_mod) >= s.bs else MISS


def _rerolls(policy: str, unmodified: int, failed: bool) -> bool:
    # "ones" re-rolls only an unmodified 1. : "failed" re-rolls iff the roll
    # fails after modifiers. : only one re-roll per die (the caller never re-rolls twice).
    if policy == "none":
        return False
    if policy == "ones":
        return unmodified == 1
    if policy == "failed":
        return failed
    raise ValueError(f"unknown re-roll policy {policy!r}")


def hit_roll_distribution(s: Scenario) -> dict[str, Fraction]:
    """P(miss / hit / critical hit) of one attack's Hit roll, every die face enumerated."""
    if s.bs is None:
        # Torrent: automatic hit, no Hit roll, hence never a Critical Hit.
        return {HIT: Fraction(1)}
    dist: dict[str, Fraction] = {}
    for first in D6_FACES:
        outcome = _hit_outcome(s, first)
        if _rerolls(s.reroll_hits, first, outcome == MISS):
            # the re-rolled die replaces the first and is final (its 6 is a crit).
            for second in D6_FACES:
                _add(dist, _hit_outcome(s, second), SIXTH * SIXTH)
        else:
            _add(dist, outcome, SIXTH)
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
# Wound roll
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
    # "failed" is a superset of "ones" (an unmodified 1 always fails, R-5.2).
    rank = {"none": 0, "ones": 1, "failed": 2}
    policies = [s.reroll_wounds] + (["failed"] if s.twin_linked else [])
    return max(policies, key=lambda name: rank[name])


def _wound_outcome(s: Scenario, unmodified: int) -> str:
    if unmodified == 6:           # unmodified 6 = Critical Wound, always succeeds
        return CRIT_WOUND
    if unmodified == 1:           # unmodified 1 always fails
        return FAIL
    target = wound_threshold(s.strength, s.toughness)
    # net wound modifier clamped to [-1, +1]
    return WOUND if unmodified + _clamp_roll_mod(s.wound_mod) >= target else FAIL


def wound_roll_distribution(s: Scenario) -> dict[str, Fraction]:
    """P(fail / wound / critical wound) of one Wound roll, every die face enumerated."""
    policy = _wound_reroll_policy(s)
    dist: dict[str, Fraction] = {}
    for first in D6_FACES:
        outcome = _wound_outcome(s, first)
        if _rerolls(policy, first, outcome == FAIL):
            for second in D6_FACES:          # one re-roll, final
                _add(dist, _wound_outcome(s, second), SIXTH * SIXTH)
        else:
            _add(dist, outcome, SIXTH)
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
# Saving throw
# --------------------------------------------------------------------------------------------

def _cover_bonus(s: Scenario) -> int:
    # +1 to armour saves; denied to Save 3+ or better vs AP 0; removed by Ignores Cover.
    if s.cover and not s.ignores_cover and not (s.save <= 3 and s.ap == 0):
        return 1
    return 0


def _armour_passes(s: Scenario, unmodified: int) -> bool:
    if s.save >= 7:               # ORACLE CHOICE: Save 7 means "no armour save at all"
        return False
    if unmodified == 1:           # unmodified 1 always fails
        return False
    # R-7.2 + R-0.3 (A2): AP + cover + other modifiers summed; net may not exceed +1.
    net = min(1, s.ap + _cover_bonus(s) + s.save_mod)
    return unmodified + net >= s.save


def _invuln_passes(s: Scenario, unmodified: int) -> bool:
    if unmodified == 1:           # unmodified 1 always fails
        return False
    # never modified by AP: cover excluded; other save modifiers capped at +1.
    return unmodified + min(1, s.save_mod) >= s.invuln


def _save_pass_probability(s: Scenario, passes) -> Fraction:
    return sum((SIXTH for face in D6_FACES if passes(s, face)), Fraction(0))


def p_save(s: Scenario) -> Fraction:
    """R-7.1: the defender uses armour or invulnerable, whichever passes more often."""
    best = _save_pass_probability(s, _armour_passes)
    if s.invuln is not None:
        best = max(best, _save_pass_probability(s, _invuln_passes))
    return best


# --------------------------------------------------------------------------------------------
# Damage and Feel No Pain
# --------------------------------------------------------------------------------------------

def _fnp_points_lost(points: int, fnp: int | None) -> dict[int, Fraction]:
    """R-8.5: one D6 per point of damage; a roll >= X ignores that point."""
    dist: dict[int, Fraction] = {0: Fraction(1)}
    for _ in range(points):
        new: dict[int, Fraction] = {}
        for lost, p in dist.items():
            for face in D6_FACES:
                ignored = fnp is not None and face >= fnp
                _add(new, lost if ignored else lost + 1, p * SIXTH)
        dist = new
    return dist


def points_lost_per_unsaved_attack_distribution(s: Scenario) -> dict[int, Fraction]:
    """R-8.1 then R-8.6: roll Damage, then FNP per point; before the model cap (R-9.2)."""
    dist: dict[int, Fraction] = {}
    for dmg, pd in dice_distribution(s.damage).items():
        for lost, pf in _fnp_points_lost(dmg, s.fnp).items():
            _add(dist, lost, pd * pf)
    return dist


# --------------------------------------------------------------------------------------------
# Allocation state and the probability tree
# --------------------------------------------------------------------------------------------

class _State(NamedTuple):
    damage: int           # wounds lost by the target so far
    destroyed: int        # models destroyed so far
    current_lost: int     # wounds already lost by the (single) damaged model, 0 if none
    pending_dev: int      # Devastating-Wounds critical wounds waiting for


_START = _State(0, 0, 0, 0)


def _lose_wounds(s: Scenario, st: _State, points: int) -> _State:
    """Apply one attack's surviving points to one model (R-9.1, R-9.2, R-9.5)."""
    if s.target_wounds is None:
        # unlimited wounds: summed, no cap, no models destroyed.
        return st._replace(damage=st.damage + points)
    if st.destroyed == s.target_models:
        return st                 # the unit is gone: further damage is lost
    # the damaged model (if any) takes the attack, otherwise a fresh one.
    remaining = s.target_wounds - st.current_lost
    lost = min(points, remaining)            # excess damage is lost
    current = st.current_lost + lost
    destroyed = st.destroyed
    if current == s.target_wounds:           # the model reaches 0 wounds: destroyed
        destroyed, current = destroyed + 1, 0
    return _State(st.damage + lost, destroyed, current, st.pending_dev)


def _scale(dist: dict, p: Fraction) -> dict:
    return {k: v * p for k, v in dist.items() if v * p}


def _merge_into(target: dict, source: dict) -> None:
    for k, v in source.items():
        _add(target, k, v)


# The tree calls these per-die distributions at every node; they depend only on the
# (frozen, hashable) Scenario, so they are computed once per Scenario.
@lru_cache(maxsize=None)
def _hit_roll_items(s: Scenario) -> tuple[tuple[str, Fraction], ...]:
    return tuple(hit_roll_distribution(s).items())


@lru_cache(maxsize=None)
def _wound_roll_items(s: Scenario) -> tuple[tuple[str, Fraction], ...]:
    return tuple(wound_roll_distribution(s).items())


@lru_cache(maxsize=None)
def _p_save_cached(s: Scenario) -> Fraction:
    return p_save(s)


@lru_cache(maxsize=None)
def _points_lost_items(s: Scenario) -> tuple[tuple[int, Fraction], ...]:
    return tuple(points_lost_per_unsaved_attack_distribution(s).items())


def _inflict_damage(s: Scenario, dist: dict) -> dict:
    """One attack that must be resolved with damage: Damage dice -> FNP -> allocation."""
    out: dict = {}
    for st, p in dist.items():
        for points, pp in _points_lost_items(s):
            _add(out, _lose_wounds(s, st, points), p * pp)
    return out


def _resolve_saving_throw(s: Scenario, dist: dict) -> dict:
    """A normal (non-devastating) wound: saving throw (R-7), then damage if it fails."""
    passed = _p_save_cached(s)
    out = _scale(dist, passed)                               # saved: the attack ends
    _merge_into(out, _inflict_damage(s, _scale(dist, 1 - passed)))
    return out


def _resolve_wound_roll(s: Scenario, dist: dict) -> dict:
    """One hit that must roll to wound (R-5), then its consequence."""
    out: dict = {}
    for outcome, p in _wound_roll_items(s):
        branch = _scale(dist, p)
        if outcome == FAIL:
            _merge_into(out, branch)
        elif outcome == CRIT_WOUND and s.devastating:
            # no save of any kind: deferred until all other attacks are resolved.
            deferred = {st._replace(pending_dev=st.pending_dev + 1): q for st, q in branch.items()}
            _merge_into(out, deferred)
        else:
            _merge_into(out, _resolve_saving_throw(s, branch))
    return out


def _resolve_attack(s: Scenario, dist: dict) -> dict:
    """One attack: Hit roll (R-2, R-3) and Critical-Hit effects (R-4)."""
    out: dict = {}
    for outcome, p in _hit_roll_items(s):
        branch = _scale(dist, p)
        if outcome == MISS:
            _merge_into(out, branch)
        elif outcome == HIT:
            _merge_into(out, _resolve_wound_roll(s, branch))
        else:  # Critical Hit
            if s.lethal:
                # wounds automatically; not a Critical Wound (no Devastating, R-6.5).
                branch = _resolve_saving_throw(s, branch)
            else:
                branch = _resolve_wound_roll(s, branch)
            # X extra (non-critical) hits, each rolls to wound.
            for extra, px in _sustained_distribution(s).items():
                sub = _scale(branch, px)
                for _ in range(extra):
                    sub = _resolve_wound_roll(s, sub)
                _merge_into(out, sub)
    return out


def _resolve_devastating(s: Scenario, dist: dict) -> dict:
    """R-6.2/6.3/6.4: each deferred crit = mortal wounds equal to its Damage roll, FNP per
    point (A11), all to one model (the damaged one first), excess lost (A10)."""
    out: dict = {}
    work = dict(dist)
    while work:
        nxt: dict = {}
        for st, p in work.items():
            if st.pending_dev == 0:
                _add(out, st, p)
            else:
                one_less = {st._replace(pending_dev=st.pending_dev - 1): p}
                _merge_into(nxt, _inflict_damage(s, one_less))
        work = nxt
    return out


def _final_states(s: Scenario) -> dict:
    attacks = attacks_distribution(s)
    result: dict = {}
    dist: dict = {_START: Fraction(1)}          # state after n attacks have been resolved
    for n in range(max(attacks) + 1):
        if n > 0:
            dist = _resolve_attack(s, dist)
        if n in attacks:
            _merge_into(result, _scale(_resolve_devastating(s, dist), attacks[n]))
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


def mean(d: dict[int, Fraction]) -> Fraction:
    return sum((k * p for k, p in d.items()), Fraction(0))


def variance(d: dict[int, Fraction]) -> Fraction:
    mu = mean(d)
    return sum(((k - mu) ** 2 * p for k, p in d.items()), Fraction(0))
