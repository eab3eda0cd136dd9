"""Self-checks of tests/oracles.py against the "Test:" lines of /work/shared/RULES.md,
closed forms, and an independent brute-force enumeration of every D6 sequence.

Nothing here imports the package under test.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction as F
from math import comb

import pytest

from .oracles import (
    STAGES,
    Scenario,
    attacks_distribution,
    damage_distribution,
    damage_roll_distribution,
    dice_distribution,
    expected_hits_per_attack,
    expected_wounds_per_attack,
    hazardous_distribution,
    hit_outcome_values,
    hit_roll_distribution,
    hits_per_attack_distribution,
    joint_distribution,
    mean,
    model_attacks_roll_distribution,
    models_destroyed_distribution,
    modified_damage,
    p_critical_hit,
    p_hit,
    p_save,
    p_wound,
    points_lost_per_unsaved_attack_distribution,
    stage_distributions,
    variance,
    wound_outcome_values,
    wound_roll_distribution,
    wound_threshold,
)

# Tidewall Gunrig Supremacy railgun against a Questoris Knight (T11 Sv3+ 5++ W26,
# statlines.yaml). Twin-linked is part of the railgun profile and is needed for 2/9 and 19/6.
RAILGUN_VS_KNIGHT = Scenario(
    attacks="1", bs=5, strength=20, toughness=11, ap=-5, save=3, invuln=5,
    damage="D6+6", devastating=True, twin_linked=True,
)


def _torrent(**kw) -> Scenario:
    return Scenario(bs=None, **kw)


def _p_needs(target: int) -> F:
    """P(D6 >= target) with 1 always failing (target clamped to 2..7)."""
    return F(7 - max(2, min(7, target)), 6)


# ============================================================================================
# Independent brute force: play the attack sequence literally with a D6 supplied by the
# enumerator, and enumerate every finite sequence of D6 faces (replay-by-prefix).
# ============================================================================================

class _NeedAnotherDie(Exception):
    pass


def enumerate_every_die(procedure) -> dict:
    """Outcome -> probability of ``procedure(d6)`` over every sequence of D6 faces."""
    results: dict = {}
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        used = 0

        def d6(prefix: tuple[int, ...] = prefix) -> int:  # bound now: the loop rebinds prefix
            nonlocal used
            if used == len(prefix):
                raise _NeedAnotherDie
            used += 1
            return prefix[used - 1]

        try:
            outcome = procedure(d6)
        except _NeedAnotherDie:
            stack.extend(prefix + (face,) for face in range(1, 7))
            continue
        results[outcome] = results.get(outcome, F(0)) + F(1, 6 ** len(prefix))
    return results


def play(s: Scenario, d6, defer_devastating: bool = True) -> tuple[int, int]:
    """One literal play of the attack sequence; returns (wounds lost, models destroyed)."""

    def roll(expr: str) -> int:
        expr = expr.upper()
        const = 0
        if "+" in expr:
            expr, const_txt = expr.split("+")
            const = int(const_txt)
        if "D" not in expr:
            return int(expr) + const
        n_txt, sides = expr.split("D")
        total = 0
        for _ in range(int(n_txt or 1)):
            face = d6()
            total += face if sides == "6" else -(-face // 2)   # D3 = ceil(D6 / 2)
        return total + const

    def capped(mod: int) -> int:
        return max(-1, min(1, mod))

    def hit_result(u: int) -> str:
        if u == 6:
            return "crit"
        if u == 1 or u + capped(s.hit_mod) < s.bs:
            return "miss"
        return "hit"

    def to_wound() -> int:
        if s.strength >= 2 * s.toughness:
            return 2
        if s.strength > s.toughness:
            return 3
        if s.strength == s.toughness:
            return 4
        return 6 if 2 * s.strength <= s.toughness else 5

    def wound_result(u: int) -> str:
        if u == 6:
            return "crit"
        if u == 1 or u + capped(s.wound_mod) < to_wound():
            return "fail"
        return "wound"

    wound_policy = "failed" if (s.twin_linked or s.reroll_wounds == "failed") else s.reroll_wounds

    def roll_wound() -> str:
        u = d6()
        if (wound_policy == "ones" and u == 1) or (
            wound_policy == "failed" and wound_result(u) == "fail"
        ):
            u = d6()
        return wound_result(u)

    # The save the defender picks: the lowest number needed on the die (1 always fails).
    cover = s.cover and not s.ignores_cover and not (s.save <= 3 and s.ap == 0)
    armour_needed = max(2, s.save - min(1, s.ap + int(cover) + s.save_mod))  # Sv7+ needs a net +1
    invuln_needed = 7 if s.invuln is None else max(2, s.invuln - min(1, s.save_mod))
    save_needed = min(armour_needed, invuln_needed)

    wounds_left = [s.target_wounds] * s.target_models if s.target_wounds is not None else None
    lost_total = 0

    def inflict(points: int) -> None:
        nonlocal lost_total
        if s.fnp is not None:
            points = sum(1 for _ in range(points) if d6() < s.fnp)
        if wounds_left is None:
            lost_total += points
            return
        alive = [i for i, w in enumerate(wounds_left) if w > 0]
        if not alive:
            return
        damaged = [i for i in alive if wounds_left[i] < s.target_wounds]
        model = damaged[0] if damaged else alive[0]
        lost = min(points, wounds_left[model])
        wounds_left[model] -= lost
        lost_total += lost

    def normal_wound() -> None:
        # a save that cannot succeed is not rolled (keeps the enumeration small, same result)
        if save_needed <= 6 and d6() >= save_needed:
            return
        inflict(roll(s.damage))

    deferred = 0

    def wound_roll_for_a_hit() -> None:
        nonlocal deferred
        result = roll_wound()
        if result == "crit" and s.devastating:
            if defer_devastating:
                deferred += 1
            else:
                inflict(roll(s.damage))
        elif result != "fail":
            normal_wound()

    n_attacks = sum(roll(s.attacks) for _ in range(s.models_firing))
    for _ in range(n_attacks):
        if s.bs is None:
            wound_roll_for_a_hit()
            continue
        u = d6()
        if (s.reroll_hits == "ones" and u == 1) or (
            s.reroll_hits == "failed" and hit_result(u) == "miss"
        ):
            u = d6()
        result = hit_result(u)
        if result == "hit":
            wound_roll_for_a_hit()
        elif result == "crit":
            if s.lethal:
                normal_wound()
            else:
                wound_roll_for_a_hit()
            extra = 0 if s.sustained == "0" else roll(s.sustained)
            for _ in range(extra):
                wound_roll_for_a_hit()
    for _ in range(deferred):
        inflict(roll(s.damage))
    destroyed = 0 if wounds_left is None else sum(1 for w in wounds_left if w == 0)
    return lost_total, destroyed


def brute_force_joint(s: Scenario, defer_devastating: bool = True) -> dict:
    return enumerate_every_die(lambda d6: play(s, d6, defer_devastating))


BRUTE_FORCE_CASES = {
    # every hit-pipeline feature in one attack: re-roll failed hits at -1, Sustained D3 + Lethal,
    # Devastating, twin-linked and re-roll ones together, wound modifier, 2 models W1.
    "pipeline_sustained_d3_lethal_dev": Scenario(
        bs=4, hit_mod=-1, reroll_hits="failed", sustained="D3", lethal=True,
        strength=5, toughness=4, wound_mod=1, reroll_wounds="ones", twin_linked=True,
        devastating=True, target_models=2, target_wounds=1,
    ),
    # two attacks, re-roll hit 1s, saves with AP/cover/invuln/save_mod, D2 vs 2 x W3.
    "two_attacks_saves": Scenario(
        attacks="2", bs=3, reroll_hits="ones", strength=4, toughness=8,
        wound_mod=1, ap=-1, save=4, cover=True, invuln=5, save_mod=1, damage="2",
        target_models=2, target_wounds=3,
    ),
    # deferred Devastating Wounds with random damage vs 5 x W3.
    "R_6_3_deferred_d3_vs_5xW3": _torrent(
        attacks="2", devastating=True, damage="D3", target_models=5, target_wounds=3,
    ),
    # R-9.6 / A11: Devastating D3 with FNP 5+ vs 5 x W3 (named case of ).
    "alloc_devastating_d3_fnp_vs_5xW3": _torrent(
        attacks="1", devastating=True, damage="D3", fnp=5, save=4,
        target_models=5, target_wounds=3,
    ),
    "two_attacks_d2_fnp_vs_W3": _torrent(
        attacks="2", strength=4, toughness=5, devastating=True, damage="2", fnp=5,
        target_models=1, target_wounds=3,
    ),
    # random attacks, the only model destroyed, further damage lost.
    "random_attacks_overkill": _torrent(
        attacks="D3", strength=8, damage="2", target_models=1, target_wounds=3,
    ),
    "two_firing_models_sh1_lethal": Scenario(
        attacks="1", models_firing=2, bs=4, sustained="1", lethal=True, devastating=True,
        strength=4, toughness=8, damage="D3", target_models=2, target_wounds=2,
    ),
    "unlimited_wounds_2d6_damage": Scenario(attacks="1", bs=3, strength=8, damage="2D6"),
    "armour_beats_invuln_save_mod": Scenario(
        attacks="2", bs=2, ap=0, save=2, invuln=4, save_mod=1, cover=True, damage="1",
        target_models=2, target_wounds=1,
    ),
}


@pytest.mark.parametrize("name", sorted(BRUTE_FORCE_CASES))
def test_oracle_equals_brute_force_every_die(name: str) -> None:
    s = BRUTE_FORCE_CASES[name]
    assert joint_distribution(s) == brute_force_joint(s)


def test_R_1_2_random_attacks_mixture_over_firing_models() -> None:
    """Several firing models with random A = mixture over the total number of attacks
    (Devastating Wounds deferred over the whole unit, R-6.3)."""
    s = Scenario(attacks="D3", models_firing=2, bs=3, sustained="1", devastating=True,
                 strength=4, toughness=5, save=5, damage="D3", fnp=6,
                 target_models=3, target_wounds=2)
    mixture: dict = {}
    for n, pn in attacks_distribution(s).items():
        fixed = replace(s, attacks=str(n), models_firing=1)
        for key, p in joint_distribution(fixed).items():
            mixture[key] = mixture.get(key, F(0)) + pn * p
    assert joint_distribution(s) == mixture


def test_R_6_3_deferral_cannot_change_a_single_profile_distribution() -> None:
    """FINDING: within one weapon profile, deferring Devastating-Wounds attacks (R-6.3) cannot
    change the distribution. Every wound token's surviving points are i.i.d. (a saved attack
    is 0 points, a no-op for allocation) and independent of whether the token is devastating,
    so reordering tokens by type leaves the sequence law unchanged. R-6.3 is only observable
    with several weapon profiles or damage that differs between the two paths."""
    for name in ("R_6_3_deferred_d3_vs_5xW3", "two_attacks_d2_fnp_vs_W3"):
        s = BRUTE_FORCE_CASES[name]
        assert brute_force_joint(s, defer_devastating=False) == joint_distribution(s)
    s = _torrent(attacks="3", devastating=True, damage="D3", target_models=2, target_wounds=3)
    assert brute_force_joint(s, defer_devastating=False) == joint_distribution(s)
    assert brute_force_joint(s) == joint_distribution(s)


# ============================================================================================
# Generic invariants and closed forms
# ============================================================================================

SUM_TO_ONE_CASES = [
    Scenario(),
    RAILGUN_VS_KNIGHT,
    Scenario(attacks="3", damage="D6", fnp=5, devastating=True, sustained="D3", lethal=True,
             target_models=3, target_wounds=3, save=4, ap=-1),
    Scenario(attacks="2D6", models_firing=2, bs=3, damage="D3", target_models=10,
             target_wounds=1, save=5),
]


@pytest.mark.parametrize("s", SUM_TO_ONE_CASES)
def test_probabilities_sum_to_exactly_one(s: Scenario) -> None:
    for dist in (damage_distribution(s), models_destroyed_distribution(s),
                 joint_distribution(s)):
        assert sum(dist.values()) == 1
        assert all(p > 0 for p in dist.values())


@pytest.mark.parametrize("n,bs,s_,t,sv,ap,d", [
    (1, 4, 4, 4, 7, 0, 1), (3, 3, 5, 4, 3, -1, 2), (6, 2, 8, 4, 5, 0, 3),
    (4, 5, 3, 7, 2, -2, 1), (10, 4, 4, 8, 6, -1, 2),
])
def test_no_ability_fixed_damage_is_binomial(n, bs, s_, t, sv, ap, d) -> None:
    """Closed form: damage = D * Binomial(N, p_hit * p_wound * p_fail_save)."""
    s = Scenario(attacks=str(n), bs=bs, strength=s_, toughness=t, save=sv, ap=ap, damage=str(d))
    p_w = _p_needs(wound_threshold(s_, t))
    p = _p_needs(bs) * p_w * (1 - _p_needs(sv - ap))
    expected = {d * k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}
    assert damage_distribution(s) == {k: v for k, v in expected.items() if v}
    assert mean(damage_distribution(s)) == n * p * d


def test_unlimited_wounds_destroys_no_models() -> None:
    s = Scenario(attacks="6", bs=2, strength=10, damage="D6")
    assert models_destroyed_distribution(s) == {0: 1}


def test_damage_one_mean_equals_expected_wounds_per_attack() -> None:
    s = Scenario(attacks="1", bs=3, reroll_hits="ones", sustained="2", lethal=True,
                 strength=4, toughness=9, twin_linked=True, devastating=True)
    assert mean(damage_distribution(s)) == expected_wounds_per_attack(s)


# ============================================================================================
# RULES.md "Test:" lines
# ============================================================================================

def test_R_0_3_hit_modifier_cap() -> None:
    # requested +2 to hit with BS4+ hits on 3+; -1 -1 with BS3+ hits on 4+
    assert p_hit(Scenario(bs=4, hit_mod=2)) == F(4, 6)
    assert p_hit(Scenario(bs=3, hit_mod=-2)) == F(3, 6)


def test_R_0_1_two_minus_ones_sum_before_cap() -> None:
    assert p_hit(Scenario(bs=3, hit_mod=-1 - 1)) == p_hit(Scenario(bs=3, hit_mod=-1))


def test_R_0_4_bs_improvement_plus_heavy_hits_on_2() -> None:
    # BS4+ improved to 3+ (characteristic) plus Heavy +1 (roll modifier) -> 2+
    assert p_hit(Scenario(bs=3, hit_mod=1)) == F(5, 6)


def test_R_0_5_natural_one_and_six() -> None:
    # BS2+ with -1 still hits on an unmodified 6 and misses on an unmodified 1
    d = hit_roll_distribution(Scenario(bs=2, hit_mod=-1))
    assert d == {"miss": F(2, 6), "hit": F(3, 6), "critical_hit": F(1, 6)}
    assert p_hit(Scenario(bs=2, hit_mod=1)) == F(5, 6)          # the 1 still misses
    assert p_wound(Scenario(strength=1, toughness=10, wound_mod=-1)) == F(1, 6)


def test_R_0_6_d3_uniform() -> None:
    assert dice_distribution("D3") == {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}
    assert dice_distribution("D3+1") == {2: F(1, 3), 3: F(1, 3), 4: F(1, 3)}


def test_R_1_1_fixed_attacks() -> None:
    assert attacks_distribution(Scenario(attacks="10")) == {10: 1}


def test_R_1_2_random_attacks_2d6_and_per_model() -> None:
    d = attacks_distribution(Scenario(attacks="2D6"))
    assert mean(d) == 7 and min(d) == 2 and max(d) == 12
    assert d[7] == F(6, 36)
    two = attacks_distribution(Scenario(attacks="D3", models_firing=2))
    assert two == {2: F(1, 9), 3: F(2, 9), 4: F(3, 9), 5: F(2, 9), 6: F(1, 9)}


def test_R_1_6_torrent_with_sustained_exactly_one_hit() -> None:
    s = _torrent(sustained="1", lethal=True)
    assert hits_per_attack_distribution(s) == {1: 1}
    assert p_critical_hit(s) == 0


def test_R_2_1_bs3() -> None:
    assert p_hit(Scenario(bs=3)) == F(4, 6)


def test_R_2_2_bs6_minus_one_crits_on_six() -> None:
    d = hit_roll_distribution(Scenario(bs=6, hit_mod=-1))
    assert d == {"miss": F(5, 6), "critical_hit": F(1, 6)}


def test_R_2_5_heavy_and_stealth() -> None:
    assert p_hit(Scenario(bs=4, hit_mod=1)) == F(4, 6)           # stationary -> 3+
    assert p_hit(Scenario(bs=4, hit_mod=0)) == F(3, 6)           # moved -> 4+
    assert p_hit(Scenario(bs=4, hit_mod=1 - 1)) == F(3, 6)       # stationary + Stealth -> 4+


def test_R_2_6_stealth_ranged_bs3() -> None:
    assert p_hit(Scenario(bs=3, hit_mod=-1)) == F(3, 6)


def test_R_2_8_fortification_and_stealth_still_minus_one() -> None:
    assert p_hit(Scenario(bs=3, hit_mod=-2)) == p_hit(Scenario(bs=3, hit_mod=-1))


def test_R_3_1_rerolled_six_is_critical_with_minus_one() -> None:
    # BS4+ -1, re-roll failed: crit on first 6, or on the re-roll of a failure (1..4)
    s = Scenario(bs=4, hit_mod=-1, reroll_hits="failed", sustained="1")
    assert p_critical_hit(s) == F(1, 6) + F(4, 6) * F(1, 6)
    assert p_hit(s) == F(2, 6) + F(4, 6) * F(2, 6)
    assert expected_hits_per_attack(s) == p_hit(s) + p_critical_hit(s)


def test_R_3_2_never_two_rerolls() -> None:
    # twin-linked + re-roll failed wounds on 4+: 3/4, not 7/8
    assert p_wound(Scenario(twin_linked=True, reroll_wounds="failed")) == F(3, 4)


def test_R_3_3_reroll_ones_bs3() -> None:
    assert p_hit(Scenario(bs=3, reroll_hits="ones")) == F(7, 9)


def test_R_3_4_reroll_failed_bs4() -> None:
    assert p_hit(Scenario(bs=4, reroll_hits="failed")) == F(3, 4)


def test_R_3_6_twin_linked_s5_vs_t6() -> None:
    assert p_wound(Scenario(strength=5, toughness=6, twin_linked=True)) == F(5, 9)


def test_R_3_9_broadest_reroll_wins() -> None:
    # re-roll 1s + re-roll failed (here: twin-linked) at 4+ -> 3/4, not more
    assert p_wound(Scenario(twin_linked=True, reroll_wounds="ones")) == F(3, 4)


def test_R_4_1_sustained_hits_expected_hits() -> None:
    assert expected_hits_per_attack(Scenario(bs=4, sustained="1")) == F(2, 3)
    assert expected_hits_per_attack(Scenario(bs=4, sustained="2")) == F(5, 6)


def test_R_4_2_sustained_d3_same_mean_larger_variance() -> None:
    sh2 = hits_per_attack_distribution(Scenario(bs=4, sustained="2"))
    shd3 = hits_per_attack_distribution(Scenario(bs=4, sustained="D3"))
    assert mean(shd3) == mean(sh2) == F(5, 6)
    assert variance(shd3) > variance(sh2)


def test_R_4_3_lethal_quarter_wound_per_attack() -> None:
    # Interpretation of the garbled Test line "(1/4 wounds per attack)": Lethal BS3+ vs a
    # 6+-to-wound target (the setting): 1/6 + 3/6 * 1/6 = 1/4.
    s = Scenario(bs=3, lethal=True, strength=4, toughness=8)
    assert expected_wounds_per_attack(s) == F(1, 4)
    assert mean(damage_distribution(s)) == F(1, 4)


def test_R_4_4_lethal_plus_sustained() -> None:
    s = Scenario(bs=3, lethal=True, sustained="1", strength=4, toughness=8)
    assert expected_wounds_per_attack(s) == F(10, 36)
    assert mean(damage_distribution(s)) == F(10, 36)


def test_R_5_1_wound_table() -> None:
    assert wound_threshold(20, 12) == 3
    assert wound_threshold(4, 8) == 6
    assert wound_threshold(6, 10) == 5
    table = {(8, 4): 2, (5, 4): 3, (4, 4): 4, (4, 5): 5, (4, 7): 5, (3, 7): 6, (3, 6): 6,
             (20, 11): 3, (20, 10): 2}
    for (s_, t), need in table.items():
        assert wound_threshold(s_, t) == need
        assert p_wound(Scenario(strength=s_, toughness=t)) == F(7 - need, 6)


def test_R_5_2_wound_modifier_and_naturals() -> None:
    assert p_wound(Scenario(strength=4, toughness=8, wound_mod=1)) == F(2, 6)
    d = wound_roll_distribution(Scenario(strength=4, toughness=8, wound_mod=-1))
    assert d == {"fail": F(5, 6), "critical_wound": F(1, 6)}
    assert p_wound(Scenario(strength=8, toughness=4, wound_mod=2)) == F(5, 6)


def test_R_5_3_and_R_5_4_plus_one_wound() -> None:
    assert p_wound(Scenario(strength=6, toughness=6, wound_mod=1)) == F(4, 6)       # Lance
    assert p_wound(Scenario(strength=6, toughness=6, wound_mod=2)) == F(4, 6)       # +2 -> +1


def test_R_5_6_reroll_wound_ones() -> None:
    assert p_wound(Scenario(reroll_wounds="ones")) == F(7, 12)


def test_R_6_1_devastating_ignores_all_saves() -> None:
    # vs 2+/4++, every wound-roll 6 inflicts its full D (torrent, S8 vs T4: wounds on 2+)
    s = _torrent(strength=8, save=2, invuln=4, damage="3", devastating=True)
    p_normal_unsaved = F(4, 6) * F(1, 6)
    assert damage_distribution(s) == {0: 1 - F(1, 6) - p_normal_unsaved,
                                      3: F(1, 6) + p_normal_unsaved}


def test_R_6_4_devastating_excess_lost_vs_5xW2() -> None:
    # one dev-wound crit of 6 mortal wounds vs 5 x W2 kills exactly 1 model
    s = _torrent(strength=4, toughness=4, save=2, damage="6", devastating=True,
                 target_models=5, target_wounds=2)
    crit, normal_unsaved = F(1, 6), F(2, 6) * F(1, 6)
    assert joint_distribution(s) == {(0, 0): 1 - crit - normal_unsaved,
                                     (2, 1): crit + normal_unsaved}


def test_R_6_5_railgun_bs4_vs_knight() -> None:
    s = replace(RAILGUN_VS_KNIGHT, bs=4)
    w = wound_roll_distribution(s)
    assert wound_threshold(20, 11) == 3
    assert w["critical_wound"] == F(2, 9)                              # mortal-wound path
    assert w["wound"] * (1 - p_save(s)) == F(4, 9)                     # unsaved save path
    assert mean(damage_distribution(s)) == F(19, 6)
    # without twin-linked the Test-line numbers are not reached (1/6, 1/3, 19/8)
    plain = replace(s, twin_linked=False)
    assert mean(damage_distribution(plain)) == F(19, 8)


def test_R_6_5_lethal_autowounds_never_devastate() -> None:
    # BS3+, Lethal + Devastating vs 6+ to wound, Sv2+ AP0: a lethal crit goes to the save.
    s = Scenario(bs=3, lethal=True, devastating=True, strength=4, toughness=8, save=2)
    mortal = F(3, 6) * F(1, 6)      # only rolled wound 6s (from non-critical hits)
    unsaved = F(1, 6) * F(1, 6)     # lethal auto-wound, then fails its 2+ save on a 1
    assert mean(damage_distribution(s)) == mortal + unsaved


def test_R_7_1_invulnerable_choice() -> None:
    s = Scenario(ap=-5, save=3, invuln=5)
    assert p_save(s) == F(2, 6)                                  # 5+ invulnerable
    assert p_save(Scenario(ap=-1, save=3, invuln=5)) == F(3, 6)  # armour 4+ is better


def test_R_7_2_armour_save_ap() -> None:
    assert p_save(Scenario(save=3, ap=-1)) == F(3, 6)


def test_R_7_3_benefit_of_cover() -> None:
    assert p_save(Scenario(save=3, ap=0, cover=True)) == F(4, 6)      # stays 3+
    assert p_save(Scenario(save=4, ap=0, cover=True)) == F(4, 6)      # becomes 3+
    assert p_save(Scenario(save=3, ap=-1, cover=True)) == F(4, 6)     # AP-1 -> cover applies
    assert p_save(Scenario(save=4, cover=True, ignores_cover=True)) == F(3, 6)
    # cover never improves an invulnerable save
    assert p_save(Scenario(save=7, invuln=4, cover=True)) == F(3, 6)


def test_R_7_2_save_7_plus_with_cover_or_modifier() -> None:
    # Sv7+ is an armour save like any other: a net +1 turns a 6 into a 7.
    assert p_save(Scenario(save=7, cover=True)) == F(1, 6)
    assert p_save(Scenario(save=7, save_mod=1)) == F(1, 6)
    assert p_save(Scenario(save=7, ap=-1, cover=True)) == F(0)
    assert p_save(Scenario(save=7)) == F(0)


def test_R_7_4_ap_improved() -> None:
    assert p_save(Scenario(save=3, ap=-1)) == F(3, 6)


def test_R_7_5_save_floor_and_net_cap() -> None:
    assert p_save(Scenario(save=2, ap=-1, cover=True)) == F(5, 6)     # 2+, never on a 1
    assert p_save(Scenario(save=2, ap=0, save_mod=1)) == F(5, 6)      # a 1 still fails
    assert p_save(Scenario(save=4, ap=0, cover=True, save_mod=1)) == F(4, 6)   # net capped +1
    assert p_save(Scenario(save=7, invuln=5, save_mod=2)) == F(3, 6)  # invuln: +1 max


def test_R_8_1_d6_plus_6_pmf_railgun_bs4() -> None:
    assert dice_distribution("D6+6") == {k: F(1, 6) for k in range(7, 13)}
    d = damage_distribution(replace(RAILGUN_VS_KNIGHT, bs=4))
    assert d == {0: F(2, 3), **{k: F(1, 18) for k in range(7, 13)}}


def test_R_8_5_fnp_binomial() -> None:
    assert points_lost_per_unsaved_attack_distribution(Scenario(damage="2", fnp=5)) == {
        k: comb(2, k) * F(2, 3) ** k * F(1, 3) ** (2 - k) for k in range(3)
    }
    # through the whole tree: torrent S8 vs T4 (2+), no save -> P(wound) 5/6
    s = _torrent(strength=8, damage="2", fnp=5)
    q = F(5, 6)
    assert damage_distribution(s) == {0: 1 - q + q * F(1, 9), 1: q * F(4, 9), 2: q * F(4, 9)}


def test_R_9_1_two_d2_wounds_kill_one_W3() -> None:
    s = _torrent(attacks="2", strength=8, damage="2", target_models=5, target_wounds=3)
    assert joint_distribution(s) == {(0, 0): F(1, 36), (2, 0): F(10, 36), (3, 1): F(25, 36)}


def test_R_9_1_alloc_10xD2_vs_5xW3() -> None:
    s = _torrent(attacks="10", strength=8, damage="2", target_models=5, target_wounds=3)
    expected: dict = {}
    for k in range(11):
        p = comb(10, k) * F(5, 6) ** k * F(1, 6) ** (10 - k)
        key = (3 * (k // 2) + 2 * (k % 2), k // 2)
        expected[key] = expected.get(key, F(0)) + p
    assert joint_distribution(s) == expected
    assert joint_distribution(s)[(15, 5)] == F(5, 6) ** 10


def test_R_9_2_heavy_bolters_vs_terminators() -> None:
    # Interpretation: a Devastator squad's 4 heavy bolters (A3 BS3+ S5 AP-1 D2 Sustained Hits 1)
    # vs 5 Terminators (T5 Sv2+ 4++ W3). Per attack: 5/6 hits * 1/2 * 1/3 unsaved * 2 = 5/18.
    s = Scenario(attacks="3", models_firing=4, bs=3, sustained="1", strength=5, toughness=5,
                 ap=-1, save=2, invuln=4, damage="2", target_models=5, target_wounds=3)
    assert mean(damage_distribution(replace(s, target_wounds=None))) == F(10, 3)
    kills = mean(models_destroyed_distribution(s))
    assert round(float(kills), 3) == 0.590


def test_R_9_5_knight_not_destroyed_by_one_railgun() -> None:
    s = replace(RAILGUN_VS_KNIGHT, target_models=1, target_wounds=26)
    assert models_destroyed_distribution(s) == {0: 1}
    unlimited = damage_distribution(RAILGUN_VS_KNIGHT)
    assert damage_distribution(s) == unlimited and max(unlimited) == 12


def test_R_9_6_fnp_vs_allocation_min_remaining() -> None:
    # one attack D6 vs a single W3 model, FNP 5+: lost = min(3, Binomial(D, 2/3))
    s = _torrent(strength=8, damage="D6", fnp=5, target_models=1, target_wounds=3)
    dist: dict = {0: F(1, 6)}
    for dmg in range(1, 7):
        for k in range(dmg + 1):
            p = F(5, 6) * F(1, 6) * comb(dmg, k) * F(2, 3) ** k * F(1, 3) ** (dmg - k)
            dist[min(3, k)] = dist.get(min(3, k), F(0)) + p
    assert damage_distribution(s) == dist


def test_R_11_3_railgun_bs5_mean() -> None:
    assert mean(damage_distribution(RAILGUN_VS_KNIGHT)) == F(19, 9)
    assert mean(damage_distribution(replace(RAILGUN_VS_KNIGHT, bs=4))) == F(19, 6)


# ============================================================================================
# Extensions: a second literal player (fast dice, batch order) covering every new field
# ============================================================================================
#
# ``LiteralPlayer`` is written independently of the oracle's tree: it rolls the whole batch of
# Attacks, then all Hit rolls, then all Wound rolls, then all saves (as with fast dice), spends
# the Command Re-roll on the first eligible die of the batch, and only then resolves damage
# attack by attack. The oracle resolves attack by attack; agreement checks that the two orders
# give the same law. Expected values needed by the "best"/"below_average" policies are
# obtained by enumerating the player's own sub-procedures.

def _split_dice(expr: str) -> tuple[int, int, int]:
    expr = expr.upper()
    const = 0
    if "+" in expr:
        expr, const_txt = expr.split("+")
        const = int(const_txt)
    if "D" not in expr:
        return 0, 6, int(expr) + const
    n_txt, sides = expr.split("D")
    return int(n_txt or 1), int(sides), const


def _roll(expr: str, d6) -> tuple[int, int]:
    """(dice total before +N with D3 read 1-3, value)."""
    n, sides, const = _split_dice(expr)
    total = 0
    for _ in range(n):
        face = d6()
        total += face if sides == 6 else -(-face // 2)
    return total, total + const


def exact_mean_of(procedure) -> F:
    return sum((k * p for k, p in enumerate_every_die(procedure).items()), F(0))


class LiteralPlayer:
    def __init__(self, s: Scenario) -> None:
        self.s = s
        self.ranged = not s.melee
        n_dice = _split_dice(s.damage)[0]
        self.damage_has_dice = n_dice > 0
        self.fresh_damage_mean = exact_mean_of(lambda d6: self.modified(_roll(s.damage, d6)[1]))
        self.model_roll_mean = exact_mean_of(
            lambda d6: _roll(s.attacks, d6)[1] + _roll(s.rapid_fire, d6)[1])
        self.wound_policy = max(
            [s.reroll_wounds] + (["failed"] if s.twin_linked else []),
            key=["none", "ones", "failed", "non_crit", "best"].index)
        # values, by enumerating the player's own procedures (unlimited wounds).
        self.wound_values = None
        self.hit_values = None
        if "best" in (self.wound_policy, s.reroll_hits):
            normal = exact_mean_of(self.unsaved_points_one_wound)
            crit = exact_mean_of(self.points_after_fnp) if s.devastating else normal
            self.wound_values = {"fail": F(0), "wound": normal, "crit": crit}
            if s.reroll_hits == "best":
                per_result = enumerate_every_die(lambda d6: self.wound_roll(d6)[0])
                hit = sum((p * self.wound_values[r] for r, p in per_result.items()), F(0))
                itself = normal if s.lethal else hit
                sus = F(0) if s.sustained == "0" else exact_mean_of(
                    lambda d6: _roll(s.sustained, d6)[1])
                self.hit_values = {"miss": F(0), "hit": hit, "crit": itself + sus * hit}

    # --- rolls -------------------------------------------------------------------------------
    def hit_result(self, u: int) -> str:
        s, ranged = self.s, self.ranged
        if s.overwatch and ranged:
            return "crit" if u == 6 else "miss"
        if u == 1:
            return "miss"
        if s.indirect and ranged and s.rules == "current" and u <= 3:
            return "miss"
        if u >= s.crit_hit:
            return "crit"
        mod = s.hit_mod
        if ranged:
            mod += int(s.heavy_stationary) - int(s.stealth) - int(s.indirect)
        mod = max(-1, min(1, mod))
        return "hit" if u + mod >= s.bs - s.bs_improve else "miss"

    def wound_result(self, u: int) -> str:
        s = self.s
        if u == 1:
            return "fail"
        if u >= min(s.crit_wound, s.anti or 7):
            return "crit"
        mod = max(-1, min(1, s.wound_mod + int(s.lance_charged)))
        need = wound_threshold(s.strength, s.toughness)
        return "wound" if u + mod >= need else "fail"

    @staticmethod
    def wants(policy, u, result, fail, crit, values, result_of) -> bool:
        if policy == "ones":
            return u == 1
        if policy == "failed":
            return result == fail
        if policy == "non_crit":
            return result != crit
        if policy == "best":
            fresh = sum((values[result_of(f)] for f in range(1, 7)), F(0)) / 6
            return values[result] < fresh
        return False

    def hit_roll(self, d6) -> tuple[str, bool]:
        u = d6()
        r = self.hit_result(u)
        if self.wants(self.s.reroll_hits, u, r, "miss", "crit", self.hit_values, self.hit_result):
            return self.hit_result(d6()), True
        return r, False

    def wound_roll(self, d6) -> tuple[str, bool]:
        u = d6()
        r = self.wound_result(u)
        if self.wants(self.wound_policy, u, r, "fail", "crit", self.wound_values,
                      self.wound_result):
            return self.wound_result(d6()), True
        return r, False

    def save_needed(self) -> int:
        s = self.s
        ap = min(0, s.ap - s.ap_improve)
        cover = (self.ranged and (s.cover or s.indirect) and not s.ignores_cover
                 and not (s.save <= 3 and ap == 0))
        armour = max(2, s.save - min(1, ap + int(cover) + s.save_mod))  # Sv7+ needs a net +1
        invuln_ok = s.invuln is not None and not (s.melee and s.invuln_ranged_only)
        invuln = max(2, s.invuln - min(1, s.save_mod)) if invuln_ok else 7
        return min(armour, invuln)

    def save_roll(self, d6) -> tuple[bool, bool]:
        need = self.save_needed()
        if need > 6:
            return False, True          # cannot pass: not rolled (same law), not re-rollable
        u = d6()
        if (self.s.reroll_saves == "ones" and u == 1) or (
                self.s.reroll_saves == "failed" and u < need):
            return d6() >= need, True
        return u >= need, False

    def modified(self, rolled: int) -> int:
        s = self.s
        v = F(rolled) / 2 if s.half_damage else F(rolled)
        v = v + s.melta + max(0, s.damage_mod) - s.damage_reduction - max(0, -s.damage_mod)
        out = -((-v.numerator) // v.denominator)      # ceil
        if s.damage_reduction or s.damage_mod < 0:
            out = max(1, out)
        return out

    def damage_roll(self, d6) -> tuple[int, bool]:
        dice, raw = _roll(self.s.damage, d6)
        value = self.modified(raw)
        if (self.s.reroll_damage == "ones" and self.damage_has_dice and dice == 1) or (
                self.s.reroll_damage == "below_average" and value < self.fresh_damage_mean):
            return self.modified(_roll(self.s.damage, d6)[1]), True
        return value, False

    def fnp(self, points: int, d6) -> int:
        if self.s.fnp is None:
            return points
        return sum(1 for _ in range(points) if d6() < self.s.fnp)

    def points_after_fnp(self, d6) -> int:
        return self.fnp(self.damage_roll(d6)[0], d6)

    def unsaved_points_one_wound(self, d6) -> int:
        return 0 if self.save_roll(d6)[0] else self.points_after_fnp(d6)

    # --- one whole play ----------------------------------------------------------------------
    def play(self, d6) -> tuple:
        s = self.s
        cmd = s.command_reroll
        rolls = [_roll(s.attacks, d6)[1] + _roll(s.rapid_fire, d6)[1]
                 for _ in range(s.models_firing)]
        if cmd == "attacks":
            i = rolls.index(min(rolls))
            if rolls[i] < self.model_roll_mean:
                rolls[i] = _roll(s.attacks, d6)[1] + _roll(s.rapid_fire, d6)[1]
        n = sum(rolls) + s.models_firing * (s.target_models // 5 if s.blast else 0)

        results = [("hit", True) if s.bs is None else self.hit_roll(d6) for _ in range(n)]
        if cmd == "hit":
            for i, (r, rr) in enumerate(results):
                if r == "miss" and not rr:
                    results[i] = (self.hit_result(d6()), True)
                    break
        hits = crits = 0
        tokens: list[str] = []           # "roll" (makes a Wound roll) or "auto" (Lethal)
        for r, _ in results:
            if r == "miss":
                continue
            hits += 1
            if r == "hit":
                tokens.append("roll")
                continue
            crits += 1
            tokens.append("auto" if s.lethal else "roll")
            extra = 0 if s.sustained == "0" else _roll(s.sustained, d6)[1]
            hits += extra
            tokens.extend(["roll"] * extra)

        wound_rolls = [self.wound_roll(d6) if t == "roll" else None for t in tokens]
        if cmd == "wound":
            for i, w in enumerate(wound_rolls):
                if w is not None and w[0] == "fail" and not w[1]:
                    wound_rolls[i] = (self.wound_result(d6()), True)
                    break
        wounds = crit_wounds = lethal = 0
        to_save: list[int] = []
        devastating = 0
        for t, w in zip(tokens, wound_rolls, strict=True):
            if t == "auto":
                wounds += 1
                lethal += 1
                to_save.append(1)
                continue
            if w[0] == "fail":
                continue
            wounds += 1
            if w[0] == "crit":
                crit_wounds += 1
                if s.devastating:
                    devastating += 1
                    continue
            to_save.append(1)

        saves = [self.save_roll(d6) for _ in to_save]
        if cmd == "save":
            need = self.save_needed()
            for i, (ok, rr) in enumerate(saves):
                if not ok and not rr:
                    saves[i] = (d6() >= need, True)
                    break
        unsaved = sum(1 for ok, _ in saves if not ok)

        wounds_left = ([s.target_wounds] * s.target_models
                       if s.target_wounds is not None else None)
        lost_total = before = after = 0
        command_free = cmd == "damage"
        for k in range(unsaved + devastating):
            value, rr = self.damage_roll(d6)
            if command_free and not rr and value < self.fresh_damage_mean:
                value, command_free = self.modified(_roll(s.damage, d6)[1]), False
            points = self.fnp(value, d6)
            before += value
            after += points
            spill = k >= unsaved and s.rules == "2023"
            if wounds_left is None:
                lost_total += points
                continue
            while points > 0:
                alive = [i for i, w in enumerate(wounds_left) if w > 0]
                if not alive:
                    break
                damaged = [i for i in alive if wounds_left[i] < s.target_wounds]
                model = damaged[0] if damaged else alive[0]
                lost = min(points, wounds_left[model])
                wounds_left[model] -= lost
                lost_total += lost
                points = points - lost if spill else 0
        destroyed = 0 if wounds_left is None else sum(1 for w in wounds_left if w == 0)
        return (lost_total, destroyed, n, hits, crits, wounds, crit_wounds, lethal, devastating,
                unsaved, before, after)


_STAGE_INDEX = {"attacks": 2, "hits": 3, "critical_hits": 4, "wounds": 5, "critical_wounds": 6,
                "lethal": 7, "devastating": 8, "unsaved": 9, "damage_before_fnp": 10,
                "damage_after_fnp": 11}


def literal_distributions(s: Scenario) -> tuple[dict, dict]:
    """(joint, stage pmfs) of the literal player over every sequence of D6 faces."""
    player = LiteralPlayer(s)
    outcomes = enumerate_every_die(player.play)
    joint: dict = {}
    stages: dict = {k: {} for k in _STAGE_INDEX}
    for out, p in outcomes.items():
        joint[out[:2]] = joint.get(out[:2], F(0)) + p
        for key, i in _STAGE_INDEX.items():
            stages[key][out[i]] = stages[key].get(out[i], F(0)) + p
    return joint, stages


EXTENDED_CASES = {
    # Enumeration cost grows as 6^(dice per play): every case is kept to a few thousand plays.
    "R_2_3_crit5_sustained_d3_lethal_anti_dev": Scenario(
        attacks="1", bs=4, crit_hit=5, sustained="D3", lethal=True, strength=4, toughness=8,
        anti=5, devastating=True, damage="2", target_models=2, target_wounds=3),
    "R_4_4_two_attacks_sh1_lethal_anti_dev": Scenario(
        attacks="2", bs=4, crit_hit=5, sustained="1", lethal=True, strength=4, toughness=8,
        anti=5, devastating=True, damage="2", target_models=2, target_wounds=3),
    "R_2_7_indirect_current_heavy_cover": Scenario(
        attacks="2", bs=3, indirect=True, heavy_stationary=True, crit_hit=3,
        strength=5, toughness=4, save=4, damage="2", target_models=2, target_wounds=3),
    "R_2_7_indirect_sustained_d3_damage": Scenario(
        attacks="1", bs=2, indirect=True, crit_hit=5, sustained="1", strength=8,
        toughness=4, damage="D3", target_models=2, target_wounds=2),
    "R_2_7_indirect_2023_stealth_ap_improve": Scenario(
        attacks="2", bs=2, indirect=True, stealth=True, rules="2023", strength=4,
        toughness=4, save=3, ap=0, ap_improve=1, damage="2", target_models=1,
        target_wounds=3),
    "R_2_9_overwatch_crit4_bs_improve_lethal_sh1": Scenario(
        attacks="2", bs=3, overwatch=True, heavy_stationary=True, crit_hit=4, bs_improve=1,
        reroll_hits="failed", sustained="1", lethal=True, strength=8, toughness=4,
        damage="1", target_models=3, target_wounds=1),
    "R_5_3_lance_melee_ranged_only_invuln": Scenario(
        attacks="2", bs=3, melee=True, lance_charged=True, wound_mod=1, stealth=True,
        cover=True, strength=6, toughness=6, save=5, invuln=4, invuln_ranged_only=True,
        ap=-1, damage="2", target_models=2, target_wounds=2),
    "R_8_3_half_melta_reduction": _torrent(
        attacks="2", strength=8, damage="D6+1", half_damage=True, melta=1,
        damage_reduction=1, target_models=2, target_wounds=3),
    "R_8_4_damage_mod_minus_one_reroll_ones": _torrent(
        attacks="2", strength=8, damage="D3", damage_mod=-1, reroll_damage="ones",
        target_models=2, target_wounds=2),
    "R_8_2_melta_below_average_reroll": _torrent(
        attacks="2", strength=8, damage="D3", melta=2, damage_mod=1,
        reroll_damage="below_average", target_models=1, target_wounds=7),
    "R_7_1_reroll_saves_ones_with_cover": _torrent(
        attacks="2", strength=8, save=4, cover=True, reroll_saves="ones", damage="2",
        target_models=2, target_wounds=3),
    "R_7_1_reroll_saves_failed_invuln": _torrent(
        attacks="2", strength=8, save=3, ap=-3, invuln=5, reroll_saves="failed", damage="2",
        target_models=2, target_wounds=3),
    "R_3_5_best_lethal_fishing": Scenario(
        attacks="2", bs=3, lethal=True, reroll_hits="best", strength=6, toughness=12,
        damage="2", target_models=2, target_wounds=2),
    "R_3_5_best_rerolls_crits_lethal_dev_vs_2plus": Scenario(
        attacks="1", bs=2, lethal=True, devastating=True, reroll_hits="best", save=2,
        damage="1", target_models=1, target_wounds=1),
    "R_3_5_non_crit_hits_and_best_wounds_dev": Scenario(
        attacks="1", bs=4, reroll_hits="non_crit", reroll_wounds="best", devastating=True,
        strength=4, toughness=5, save=3, ap=-1, damage="2", target_models=1,
        target_wounds=3),
    "R_3_7_command_hit_two_attacks_ones": Scenario(
        attacks="2", bs=5, reroll_hits="ones", command_reroll="hit", strength=8,
        damage="1", target_models=2, target_wounds=1),
    "R_3_7_command_wound_lethal_sustained": Scenario(
        attacks="2", bs=4, lethal=True, sustained="1", command_reroll="wound",
        strength=4, toughness=8, damage="1", target_models=3, target_wounds=1),
    "R_3_7_command_save_with_reroll_ones": _torrent(
        attacks="2", strength=8, save=3, reroll_saves="ones", command_reroll="save",
        damage="2", target_models=2, target_wounds=2),
    "R_3_7_command_damage_normal_then_devastating": _torrent(
        attacks="2", strength=4, toughness=4, anti=5, devastating=True, save=4,
        command_reroll="damage", damage="D3", target_models=2, target_wounds=3),
    "R_3_7_command_attacks_d3_torrent": _torrent(
        attacks="D3", command_reroll="attacks", strength=8, damage="1",
        target_models=2, target_wounds=1),
    "R_1_3_blast_and_rapid_fire_fixed": Scenario(
        attacks="1", rapid_fire="1", blast=True, bs=4, strength=8, damage="1",
        target_models=6, target_wounds=1),
    "R_6_4_2023_spill_two_attacks": _torrent(
        attacks="2", strength=4, toughness=4, devastating=True, save=2, damage="3",
        rules="2023", target_models=4, target_wounds=2),
    "R_6_4_2023_spill_with_fnp": _torrent(
        attacks="1", strength=4, toughness=4, devastating=True, save=2, damage="3", fnp=5,
        rules="2023", target_models=3, target_wounds=1),
}


def test_R_1_2_attacks_stage_equals_literal_rolls() -> None:
    """Rapid Fire dice, Blast and the Command Re-roll of the lowest model roll vs a literal
    roll of the Attacks step alone (the rest of the sequence would be too large to enumerate)."""
    for s in (Scenario(attacks="D3", models_firing=2, rapid_fire="D3", blast=True,
                       target_models=5, command_reroll="attacks"),
              Scenario(attacks="2", models_firing=3, rapid_fire="D3", command_reroll="attacks"),
              Scenario(attacks="D6", models_firing=2, rapid_fire="1", blast=True,
                       target_models=10)):
        player = LiteralPlayer(s)

        def attacks_only(d6, player=player, s=s) -> int:
            rolls = [_roll(s.attacks, d6)[1] + _roll(s.rapid_fire, d6)[1]
                     for _ in range(s.models_firing)]
            if s.command_reroll == "attacks":
                i = rolls.index(min(rolls))
                if rolls[i] < player.model_roll_mean:
                    rolls[i] = _roll(s.attacks, d6)[1] + _roll(s.rapid_fire, d6)[1]
            return sum(rolls) + s.models_firing * (s.target_models // 5 if s.blast else 0)

        assert attacks_distribution(s) == enumerate_every_die(attacks_only)


@pytest.mark.parametrize("name", sorted(EXTENDED_CASES))
def test_extended_oracle_equals_literal_fast_dice_player(name: str) -> None:
    s = EXTENDED_CASES[name]
    joint, stages = literal_distributions(s)
    assert joint_distribution(s) == joint
    assert stage_distributions(s) == stages


# ============================================================================================
# Extensions: closed forms derived by hand, named after the rule ids
# ============================================================================================

def _stage_mean(s: Scenario, key: str) -> F:
    return mean(stage_distributions(s)[key])


def test_defaults_of_the_new_fields_are_the_old_behaviour() -> None:
    s = Scenario()
    assert (s.crit_hit, s.crit_wound, s.anti, s.bs_improve, s.ap_improve) == (6, 6, None, 0, 0)
    assert not (s.heavy_stationary or s.stealth or s.indirect or s.overwatch or s.lance_charged
                or s.melee or s.invuln_ranged_only or s.half_damage or s.blast)
    assert (s.melta, s.damage_reduction, s.damage_mod, s.rapid_fire, s.rules) == (
        0, 0, 0, "0", "current")
    assert (s.reroll_damage, s.reroll_saves, s.command_reroll) == ("none", "none", "none")


@pytest.mark.parametrize("kw", [
    {"reroll_hits": "all"}, {"reroll_damage": "failed"}, {"reroll_saves": "best"},
    {"command_reroll": "charge"}, {"rules": "2022"}, {"crit_hit": 1}, {"anti": 7},
    {"rapid_fire": "X"}, {"bs": None, "indirect": True},
])
def test_invalid_extension_values_are_refused(kw) -> None:
    with pytest.raises(ValueError):
        Scenario(**kw)


def test_R_2_3_crit_on_5_sustained_1() -> None:
    # BS4+, Critical Hit on 5+, Sustained Hits 1 -> E[hits]/attack = 3/6 + 2/6
    s = Scenario(bs=4, crit_hit=5, sustained="1")
    assert hit_roll_distribution(s) == {"miss": F(3, 6), "hit": F(1, 6), "critical_hit": F(2, 6)}
    assert expected_hits_per_attack(s) == F(3, 6) + F(2, 6)
    assert _stage_mean(s, "hits") == F(5, 6)
    assert _stage_mean(s, "critical_hits") == F(2, 6)
    # A7 (no "successful" in the wording): a 5 that would miss at BS6+ still hits, as a crit
    assert hit_roll_distribution(Scenario(bs=6, crit_hit=5)) == {"miss": F(4, 6),
                                                                 "critical_hit": F(2, 6)}


def test_R_2_5_heavy_stationary_and_stealth() -> None:
    assert p_hit(Scenario(bs=4, heavy_stationary=True)) == F(4, 6)                 # 3+
    assert p_hit(Scenario(bs=4)) == F(3, 6)                                        # moved: 4+
    assert p_hit(Scenario(bs=4, heavy_stationary=True, stealth=True)) == F(3, 6)   # 4+
    assert p_hit(Scenario(bs=4, heavy_stationary=True, melee=True)) == F(3, 6)     # ranged only


def test_R_2_6_stealth_ranged_only() -> None:
    assert p_hit(Scenario(bs=3, stealth=True)) == F(3, 6)                          # 4+
    assert p_hit(Scenario(bs=3, stealth=True, melee=True)) == F(4, 6)              # unmodified
    assert p_hit(Scenario(bs=3, stealth=True, hit_mod=-1)) == F(3, 6)              # capped


def test_R_2_7_indirect_fire() -> None:
    # BS2+ indirect -> hits only on 4+ (1-3 always fail) and the target gets +1 save (cover)
    s = Scenario(bs=2, indirect=True, save=4)
    assert hit_roll_distribution(s) == {"miss": F(3, 6), "hit": F(2, 6), "critical_hit": F(1, 6)}
    assert p_save(s) == F(4, 6)
    # [VERSION] 2023 text: only -1 and cover -> BS2+ hits on 3+
    assert p_hit(replace(s, rules="2023")) == F(4, 6)
    # "always fails" beats a lower crit threshold: crit on 3+ still fails on a 3
    assert hit_roll_distribution(Scenario(bs=2, indirect=True, crit_hit=3)) == {
        "miss": F(3, 6), "critical_hit": F(3, 6)}
    # 2023 text: 3-6 crit; a 2 misses (2 - 1 < 2)
    assert hit_roll_distribution(Scenario(bs=2, indirect=True, crit_hit=3, rules="2023")) == {
        "miss": F(2, 6), "critical_hit": F(4, 6)}
    # cover from indirect: denied for Sv3+ vs AP0, removed by Ignores Cover, never doubled
    assert p_save(Scenario(indirect=True, save=3)) == F(4, 6)
    assert p_save(Scenario(indirect=True, save=4, ignores_cover=True)) == F(3, 6)
    assert p_save(Scenario(indirect=True, cover=True, save=5)) == F(3, 6)
    # a melee attack has no Indirect Fire
    assert p_hit(Scenario(bs=2, indirect=True, melee=True)) == F(5, 6)


def test_R_2_9_fire_overwatch() -> None:
    # BS3+ Heavy weapon in Overwatch: P(hit) = 1/6 and each hit is a crit
    s = Scenario(bs=3, heavy_stationary=True, overwatch=True)
    assert hit_roll_distribution(s) == {"miss": F(5, 6), "critical_hit": F(1, 6)}
    assert hit_roll_distribution(replace(s, crit_hit=4, bs_improve=2)) == \
        hit_roll_distribution(s)
    assert p_hit(replace(s, reroll_hits="failed")) == F(1, 6) + F(5, 6) * F(1, 6)
    assert hit_roll_distribution(_torrent(overwatch=True)) == {"hit": 1}         # A13
    assert p_hit(Scenario(bs=3, overwatch=True, melee=True)) == F(4, 6)          # not melee


def test_R_0_1_R_0_3_all_hit_modifiers_sum_then_clamp() -> None:
    # +1 (hit_mod) +1 (Heavy) -1 (Stealth) -1 (Indirect) = 0 -> BS3+ needs 3+ (2023 text)
    s = Scenario(bs=3, hit_mod=1, heavy_stationary=True, stealth=True, indirect=True,
                 rules="2023")
    assert p_hit(s) == F(4, 6)
    # -1 -1 -1 + 1 = -2 -> clamped -1
    assert p_hit(replace(s, hit_mod=-1)) == F(3, 6)
    # +1 +1 = +2 -> clamped +1: BS4+ hits on 3+
    assert p_hit(Scenario(bs=4, hit_mod=1, heavy_stationary=True)) == F(4, 6)


def test_R_0_4_bs_improve_is_a_characteristic_change() -> None:
    assert p_hit(Scenario(bs=4, bs_improve=1, heavy_stationary=True)) == F(5, 6)   # 2+
    assert p_hit(Scenario(bs=4, bs_improve=-1)) == F(2, 6)                         # worsened
    # no floor, not capped; an unmodified 1 still fails
    assert p_hit(Scenario(bs=2, bs_improve=1, hit_mod=-1)) == F(5, 6)
    assert p_hit(Scenario(bs=3, bs_improve=2, hit_mod=-1)) == F(5, 6)
    assert hit_roll_distribution(Scenario(bs=6, bs_improve=-1)) == {"miss": F(5, 6),
                                                                     "critical_hit": F(1, 6)}
    # Guided BS4+ vs Spotted 3+, vs non-Spotted 5+
    assert p_hit(Scenario(bs=4, bs_improve=1)) == F(4, 6)
    assert p_hit(Scenario(bs=4, bs_improve=-1)) == F(2, 6)


def test_R_5_3_lance_after_charging() -> None:
    assert p_wound(Scenario(strength=6, toughness=6, lance_charged=True)) == F(4, 6)   # 3+
    assert p_wound(Scenario(strength=6, toughness=6)) == F(3, 6)                       # 4+
    assert p_wound(Scenario(strength=6, toughness=6, lance_charged=True,
                            wound_mod=1)) == F(4, 6)                                   # +2->+1
    assert p_wound(Scenario(strength=6, toughness=6, lance_charged=True,
                            wound_mod=-1)) == F(3, 6)                                  # net 0


def test_R_5_5_anti_keyword() -> None:
    # S6 Anti-VEHICLE 4+ vs T10 (5+ to wound): every wound roll of 4-6 is a Critical Wound
    s = Scenario(strength=6, toughness=10, anti=4)
    assert wound_roll_distribution(s) == {"fail": F(3, 6), "critical_wound": F(3, 6)}
    assert wound_roll_distribution(replace(s, wound_mod=-1)) == wound_roll_distribution(s)
    assert wound_roll_distribution(replace(s, crit_wound=5)) == wound_roll_distribution(s)
    assert wound_roll_distribution(Scenario(strength=6, toughness=10, crit_wound=5)) == {
        "fail": F(4, 6), "critical_wound": F(2, 6)}
    # crits from Anti feed Devastating Wounds: torrent, D2 vs Sv2+ (1 attack)
    dev = _torrent(strength=6, toughness=10, anti=4, devastating=True, save=2, damage="2")
    assert stage_distributions(dev)["devastating"] == {0: F(1, 2), 1: F(1, 2)}
    assert mean(damage_distribution(dev)) == F(1, 2) * 2


def test_R_7_4_ap_improve_and_cover_uses_modified_ap() -> None:
    assert p_save(Scenario(save=3, ap=0, ap_improve=1)) == F(3, 6)            # AP-1: 4+
    assert p_save(Scenario(save=3, ap=-1, ap_improve=-2)) == F(4, 6)          # never above 0
    assert p_save(Scenario(save=3, ap=0, ap_improve=1, cover=True)) == F(4, 6)   # A3
    assert p_save(Scenario(save=3, ap=-1, ap_improve=-1, cover=True)) == F(4, 6)  # denied
    assert p_save(Scenario(save=4, ap=-1, ap_improve=-1, cover=True)) == F(4, 6)  # 3+


def test_R_7_3_melee_no_cover_and_ranged_only_invulnerable() -> None:
    assert p_save(Scenario(save=4, cover=True, melee=True)) == F(3, 6)
    assert p_save(Scenario(save=4, cover=True)) == F(4, 6)
    assert p_save(Scenario(save=7, invuln=4, invuln_ranged_only=True, melee=True)) == 0
    assert p_save(Scenario(save=7, invuln=4, invuln_ranged_only=True)) == F(3, 6)
    assert p_save(Scenario(save=5, ap=-1, invuln=4, invuln_ranged_only=True,
                           melee=True)) == F(1, 6)                            # armour 6+
    assert p_save(Scenario(save=7, invuln=4, melee=True)) == F(3, 6)


def test_R_8_2_melta() -> None:
    s = Scenario(damage="D6", melta=2)
    assert damage_roll_distribution(s) == {k: F(1, 6) for k in range(3, 9)}     # D6+2
    assert damage_roll_distribution(Scenario(damage="D6")) == dice_distribution("D6")
    t = _torrent(strength=8, damage="D6", melta=2)
    assert mean(damage_distribution(t)) == F(5, 6) * F(11, 2)


def test_R_8_3_half_damage() -> None:
    # D6+1 halved -> ceil((D6+1)/2); D6 with Melta 2 halved -> ceil(D6/2)+2
    half = damage_roll_distribution(Scenario(damage="D6+1", half_damage=True))
    assert half == {1: F(1, 6), 2: F(2, 6), 3: F(2, 6), 4: F(1, 6)}
    assert half == {k: v for k, v in _pmf_map(dice_distribution("D6"),
                                              lambda d: -(-(d + 1) // 2)).items()}
    melta = damage_roll_distribution(Scenario(damage="D6", melta=2, half_damage=True))
    assert melta == _pmf_map(dice_distribution("D6"), lambda d: -(-d // 2) + 2)
    assert melta == {3: F(2, 6), 4: F(2, 6), 5: F(2, 6)}


def _pmf_map(pmf: dict, f) -> dict:
    out: dict = {}
    for k, p in pmf.items():
        out[f(k)] = out.get(f(k), F(0)) + p
    return out


def test_R_0_2_half_damage_then_melta() -> None:
    # D6=5 halved with Melta 2 -> ceil(5/2 + 2) = 5, not ceil((5+2)/2) = 4
    assert modified_damage(Scenario(half_damage=True, melta=2), 5) == 5


def test_R_8_4_damage_reduction_minimum_one() -> None:
    assert damage_roll_distribution(Scenario(damage="D3", damage_reduction=1)) == {
        1: F(2, 3), 2: F(1, 3)}                                                     # 1,1,2
    assert damage_roll_distribution(Scenario(damage="D3", damage_mod=-1)) == {
        1: F(2, 3), 2: F(1, 3)}
    assert damage_roll_distribution(Scenario(damage="1", damage_reduction=2)) == {1: 1}
    assert damage_roll_distribution(Scenario(damage="D3", damage_mod=-3)) == {1: 1}
    assert damage_roll_distribution(Scenario(damage="D3", damage_mod=1)) == \
        dice_distribution("D3+1")


def test_A18_half_then_minus_one() -> None:
    s = Scenario(half_damage=True, damage_reduction=1)
    assert modified_damage(s, 6) == 2            # 6/2 - 1
    assert modified_damage(s, 3) == 1            # ceil(1.5 - 1) = 1
    assert modified_damage(s, 1) == 1            # ceil(0.5 - 1) = 0 -> minimum 1
    assert damage_roll_distribution(replace(s, damage="3")) == {1: 1}


def test_A5_half_damage_rounds_up_after_melta() -> None:
    assert modified_damage(Scenario(half_damage=True, melta=1), 3) == 3    # ceil(1.5+1)
    assert modified_damage(Scenario(half_damage=True, melta=1), 4) == 3    # 2+1


def test_R_6_2_devastating_mortal_wounds_are_the_modified_damage() -> None:
    # D6+6 with "-1 Damage" (Counterfire): every crit inflicts D6+5 mortal wounds
    s = _torrent(strength=20, toughness=11, anti=2, devastating=True, damage="D6+6",
                 damage_reduction=1, save=2, invuln=4)
    d = stage_distributions(s)["damage_before_fnp"]
    assert d == {0: F(1, 6), **{k: F(5, 36) for k in range(6, 12)}}
    assert damage_distribution(s) == d


def test_R_8_6_minus_one_damage_then_one_fnp_roll() -> None:
    # D2 with -1 damage vs FNP 5+: one FNP roll, lost with probability 2/3
    s = Scenario(damage="2", damage_reduction=1, fnp=5)
    assert points_lost_per_unsaved_attack_distribution(s) == {0: F(1, 3), 1: F(2, 3)}


def test_R_1_2_reroll_damage_policies() -> None:
    ones = damage_roll_distribution(Scenario(damage="D6", reroll_damage="ones"))
    assert ones == {1: F(1, 36), **{k: F(7, 36) for k in range(2, 7)}}
    assert mean(ones) == F(7, 2) + F(1, 6) * (F(7, 2) - 1)          # 47/12
    # a D3 showing 1 is re-rolled (D6 faces 1-2)
    assert damage_roll_distribution(Scenario(damage="D3", reroll_damage="ones")) == {
        1: F(1, 9), 2: F(4, 9), 3: F(4, 9)}
    # the +N is not part of "the dice total": D6+6 re-rolls a 7
    assert damage_roll_distribution(Scenario(damage="D6+6", reroll_damage="ones"))[7] == \
        F(1, 36)
    # 2D6 totals at least 2 and fixed damage has no dice: never re-rolled
    assert damage_roll_distribution(Scenario(damage="2D6", reroll_damage="ones")) == \
        dice_distribution("2D6")
    assert damage_roll_distribution(Scenario(damage="1", reroll_damage="ones")) == {1: 1}
    below = damage_roll_distribution(Scenario(damage="D6", reroll_damage="below_average"))
    assert below == {1: F(1, 12), 2: F(1, 12), 3: F(1, 12), 4: F(3, 12), 5: F(3, 12),
                     6: F(3, 12)}
    assert mean(below) == F(17, 4)
    # "below average" compares MODIFIED values: D6 halved = 1,1,2,2,3,3 (mean 2): re-roll the 1s
    assert damage_roll_distribution(Scenario(damage="D6", half_damage=True,
                                             reroll_damage="below_average")) == {
        1: F(1, 9), 2: F(4, 9), 3: F(4, 9)}


def test_R_7_1_defender_save_rerolls() -> None:
    assert p_save(Scenario(save=4, reroll_saves="ones")) == F(3, 6) + F(1, 6) * F(3, 6)
    assert p_save(Scenario(save=4, reroll_saves="failed")) == F(3, 4)
    # Devastating mortal wounds are never saved, re-roll or not
    s = _torrent(strength=4, toughness=4, devastating=True, save=2, reroll_saves="failed",
                 damage="1", anti=2)
    assert mean(damage_distribution(s)) == F(5, 6)


def test_R_1_3_blast() -> None:
    # D6 Blast vs 10 models -> D6+2 attacks; A19: the count at selection, per firing model
    assert attacks_distribution(Scenario(attacks="D6", blast=True, target_models=10)) == \
        dice_distribution("D6+2")
    assert attacks_distribution(Scenario(attacks="D6", blast=True, target_models=4)) == \
        dice_distribution("D6")
    assert attacks_distribution(Scenario(attacks="D6", models_firing=2, blast=True,
                                         target_models=11)) == dice_distribution("2D6+4")
    assert _stage_mean(Scenario(attacks="D6", blast=True, target_models=10), "attacks") == \
        F(7, 2) + 2


def test_R_1_4_rapid_fire() -> None:
    assert attacks_distribution(Scenario(attacks="2", rapid_fire="1")) == {3: 1}
    per_model = model_attacks_roll_distribution(Scenario(attacks="D3", rapid_fire="D6+3"))
    assert mean(per_model) == 2 + F(13, 2)
    assert min(per_model) == 5 and max(per_model) == 12
    assert attacks_distribution(Scenario(attacks="D3", rapid_fire="D6+3", models_firing=2,
                                         blast=True, target_models=5)) == {
        k + 2: p for k, p in _pmf_convolve(per_model, per_model).items()}


def _pmf_convolve(a: dict, b: dict) -> dict:
    out: dict = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, F(0)) + p * q
    return out


def test_R_3_5_lethal_fishing_non_crit_and_best() -> None:
    # lethal BS3+ vs 6+ to wound (S6 vs T12): 3/8 wounds per attack fishing, 1/3 with failed
    s = Scenario(bs=3, lethal=True, strength=6, toughness=12)
    assert _stage_mean(replace(s, reroll_hits="failed"), "wounds") == F(1, 3)
    assert _stage_mean(replace(s, reroll_hits="non_crit"), "wounds") == F(3, 8)
    assert _stage_mean(replace(s, reroll_hits="best"), "wounds") == F(3, 8)
    v = hit_outcome_values(replace(s, reroll_hits="best"))
    assert v == {"miss": 0, "hit": F(1, 6), "critical_hit": 1}
    assert hit_roll_distribution(replace(s, reroll_hits="best")) == \
        hit_roll_distribution(replace(s, reroll_hits="non_crit"))


def test_R_3_5_best_never_fishes_sustained_alone_nor_the_railgun() -> None:
    sus = Scenario(bs=4, sustained="1")
    assert hit_roll_distribution(replace(sus, reroll_hits="best")) == \
        hit_roll_distribution(replace(sus, reroll_hits="failed"))
    # tie: BS2+ SH1 -> fresh mean = 4/6 v + 1/6 2v = v = value of a normal hit: keep (strict <)
    tie = Scenario(bs=2, sustained="1")
    v = hit_outcome_values(replace(tie, reroll_hits="best"))
    assert v["critical_hit"] == 2 * v["hit"]
    assert hit_roll_distribution(replace(tie, reroll_hits="best")) == \
        hit_roll_distribution(replace(tie, reroll_hits="failed"))
    # railgun vs Knight: a normal wound is worth 2/3 E[D] > fresh 1/2 E[D]: do not fish
    best = replace(RAILGUN_VS_KNIGHT, reroll_wounds="best")
    v = wound_outcome_values(best)
    assert v["wound"] == F(2, 3) * F(19, 2) and v["critical_wound"] == F(19, 2)
    assert wound_roll_distribution(best) == wound_roll_distribution(RAILGUN_VS_KNIGHT)
    assert mean(damage_distribution(best)) == F(19, 9)


def test_R_3_5_best_rerolls_a_crit_worth_less_than_a_fresh_roll() -> None:
    # BS2+, Lethal + Devastating, S4 vs T4, Sv2+, D1: a normal hit is worth
    # 2/6*1/6 + 1/6*1 = 8/36 (it may roll a devastating 6), a lethal crit only 1/6 = 6/36
    # (it goes to the 2+ save); fresh mean = 4/6*8/36 + 1/6*6/36 = 38/216 > 36/216.
    s = Scenario(bs=2, lethal=True, devastating=True, save=2, damage="1")
    best, failed, non_crit = (replace(s, reroll_hits=p) for p in ("best", "failed", "non_crit"))
    assert hit_outcome_values(best) == {"miss": 0, "hit": F(8, 36), "critical_hit": F(6, 36)}
    assert hit_roll_distribution(best) == {"miss": F(2, 36), "hit": F(32, 36),
                                           "critical_hit": F(2, 36)}
    assert mean(damage_distribution(best)) == F(268, 1296)
    assert mean(damage_distribution(failed)) == F(266, 1296)
    assert mean(damage_distribution(non_crit)) == F(226, 1296)


def test_R_3_9_permission_order_with_twin_linked() -> None:
    # non_crit beats twin-linked's "failed"; "ones" does not
    base = Scenario(strength=4, toughness=4, twin_linked=True)
    assert wound_roll_distribution(replace(base, reroll_wounds="ones")) == \
        wound_roll_distribution(base)
    nc = wound_roll_distribution(replace(base, reroll_wounds="non_crit"))
    assert nc == {"fail": F(5, 6) * F(3, 6), "wound": F(5, 6) * F(2, 6),
                  "critical_wound": F(1, 6) + F(5, 6) * F(1, 6)}


def test_R_3_1_rerolled_six_is_critical_with_minus_one_non_crit() -> None:
    s = Scenario(bs=4, hit_mod=-1, reroll_hits="non_crit", sustained="1", lethal=True)
    assert p_critical_hit(s) == F(1, 6) + F(5, 6) * F(1, 6)
    assert _stage_mean(s, "lethal") == F(11, 36)


def test_R_3_7_command_reroll_hit() -> None:
    # BS5+ single attack: 1/3 + 2/3 * 1/3 = 5/9
    s = Scenario(bs=5, command_reroll="hit")
    assert stage_distributions(s)["hits"] == {1: F(5, 9), 0: F(4, 9)}
    # ONE die per unit: two attacks
    two = replace(s, attacks="2")
    assert stage_distributions(two)["hits"] == {0: F(8, 27), 1: F(12, 27), 2: F(7, 27)}
    # a die already re-rolled by "failed" cannot be re-rolled again
    failed = replace(two, reroll_hits="failed")
    assert stage_distributions(failed)["hits"] == stage_distributions(
        replace(failed, command_reroll="none"))["hits"]
    # torrent: there is no Hit roll to re-roll
    assert _stage_mean(_torrent(command_reroll="hit", attacks="2"), "hits") == 2


def test_R_3_7_command_reroll_wound_save_damage() -> None:
    # wound: S4 vs T4 one hit: 1/2 + 1/2 * 1/2
    assert _stage_mean(_torrent(command_reroll="wound"), "wounds") == F(3, 4)
    # lethal auto-wounds make no Wound roll: BS6+ (only crits), lethal -> nothing to re-roll
    lethal = Scenario(bs=6, lethal=True, strength=1, toughness=10, command_reroll="wound")
    assert stage_distributions(lethal)["wounds"] == {1: F(1, 6), 0: F(5, 6)}
    # save: Sv3+, every wound unsaved with prob 1/3 * 1/3 for a single wound
    save = _torrent(strength=8, save=3, command_reroll="save")
    assert _stage_mean(save, "unsaved") == F(5, 6) * F(1, 9)
    # damage: D6, the first roll below 3.5 is re-rolled -> 17/4 for a single attack
    dmg = _torrent(strength=8, damage="D6", command_reroll="damage")
    assert _stage_mean(dmg, "damage_before_fnp") == F(5, 6) * F(17, 4)
    # with "below_average" every eligible roll was already re-rolled: no effect
    below = replace(dmg, attacks="2", reroll_damage="below_average")
    assert stage_distributions(below) == stage_distributions(replace(below,
                                                                     command_reroll="none"))


def test_R_3_7_command_reroll_attacks() -> None:
    # D6 single model: 1-3 re-rolled -> 3/6 * 7/2 + (4+5+6)/6 = 17/4
    s = Scenario(attacks="D6", command_reroll="attacks")
    assert attacks_distribution(s) == {k: F(1, 12) if k <= 3 else F(3, 12) for k in range(1, 7)}
    assert mean(attacks_distribution(s)) == F(17, 4)
    assert attacks_distribution(Scenario(attacks="3", command_reroll="attacks")) == {3: 1}
    # two models D3: only the single lowest roll is re-rolled, and only if below 2
    two = attacks_distribution(Scenario(attacks="D3", models_firing=2,
                                        command_reroll="attacks"))
    brute: dict = {}
    for a in (1, 2, 3):
        for b in (1, 2, 3):
            if min(a, b) < 2:
                for c in (1, 2, 3):
                    k = max(a, b) + c
                    brute[k] = brute.get(k, F(0)) + F(1, 27)
            else:
                brute[a + b] = brute.get(a + b, F(0)) + F(1, 9)
    assert two == brute


def test_R_9_7_hazardous() -> None:
    # 5 tests -> 3 * Binomial(5, 1/6) mortal wounds, mean 2.5 (one big model: no cap)
    d = hazardous_distribution(5, 100, 1)
    assert d == {(3 * k, 0): comb(5, k) * F(1, 6) ** k * F(5, 6) ** (5 - k) for k in range(6)}
    assert sum(lost * p for (lost, _), p in d.items()) == F(5, 2)
    # W2 models: each failure kills one model, the third wound is lost
    d2 = hazardous_distribution(5, 2, 5)
    assert d2 == {(2 * k, k): comb(5, k) * F(1, 6) ** k * F(5, 6) ** (5 - k) for k in range(6)}
    # W4 x 2: failure 1 -> 3 on model A; failure 2 -> A takes 1 (dies), 2 lost
    assert hazardous_distribution(2, 4, 2) == {(0, 0): F(25, 36), (3, 0): F(10, 36),
                                               (4, 1): F(1, 36)}
    # FNP 5+ per point: one test, lost ~ Binomial(3, 2/3) on a failure
    d3 = hazardous_distribution(1, 10, 1, fnp=5)
    assert d3 == {(0, 0): F(5, 6) + F(1, 6) * F(1, 27),
                  **{(k, 0): F(1, 6) * comb(3, k) * F(2, 3) ** k * F(1, 3) ** (3 - k)
                     for k in (1, 2, 3)}}


def test_R_6_4_version_2023_devastating_spill() -> None:
    # one dev crit of 6 MW vs 5 x W2: current rules kill 1 model, 2023 rules kill 3
    s = _torrent(strength=4, toughness=4, save=2, damage="6", devastating=True,
                 target_models=5, target_wounds=2)
    crit, normal_unsaved = F(1, 6), F(2, 6) * F(1, 6)
    rest = 1 - crit - normal_unsaved
    assert joint_distribution(s) == {(0, 0): rest, (2, 1): crit + normal_unsaved}
    assert joint_distribution(replace(s, rules="2023")) == {
        (0, 0): rest, (6, 3): crit, (2, 1): normal_unsaved}
    # spill stops when the unit is destroyed
    small = replace(s, rules="2023", target_models=2)
    assert joint_distribution(small)[(4, 2)] == crit


def test_interaction_sustained_extra_hits_never_crit_nor_auto_wound() -> None:
    # BS4+, Lethal + SH2 vs 6+ to wound: crit 1/6 -> 1 lethal + 2 rolled; hit 2/6 -> rolled
    s = Scenario(bs=4, lethal=True, sustained="2", strength=4, toughness=8)
    st = stage_distributions(s)
    assert st["lethal"] == st["critical_hits"] == {0: F(5, 6), 1: F(1, 6)}
    assert mean(st["hits"]) == F(2, 6) + F(1, 6) * 3
    assert mean(st["wounds"]) == F(1, 6) * (1 + 2 * F(1, 6)) + F(2, 6) * F(1, 6)   # 5/18
    assert mean(st["critical_wounds"]) == (F(2, 6) + F(1, 6) * 2) * F(1, 6)


def test_interaction_lethal_never_triggers_devastating() -> None:
    s = Scenario(bs=2, crit_hit=2, lethal=True, devastating=True, strength=4, toughness=4)
    st = stage_distributions(s)
    assert st["devastating"] == {0: 1} and st["critical_wounds"] == {0: 1}
    assert st["lethal"] == {1: F(5, 6), 0: F(1, 6)}


def test_interaction_torrent_cannot_crit() -> None:
    s = _torrent(attacks="3", crit_hit=2, sustained="1", lethal=True)
    st = stage_distributions(s)
    assert st["hits"] == {3: 1} and st["critical_hits"] == {0: 1} and st["lethal"] == {0: 1}


def test_interaction_minus_one_damage_never_below_one() -> None:
    s = _torrent(attacks="2", strength=8, damage="D3", damage_reduction=1, damage_mod=-1)
    assert damage_roll_distribution(s) == {1: 1}
    assert _stage_mean(s, "damage_before_fnp") == 2 * F(5, 6)


def test_interaction_cover_denied_for_3plus_vs_ap0() -> None:
    assert p_save(Scenario(save=3, cover=True)) == F(4, 6)
    assert p_save(Scenario(save=3, indirect=True)) == F(4, 6)
    assert p_save(Scenario(save=3, ap=-1, indirect=True)) == F(4, 6)
    assert p_save(Scenario(save=4, indirect=True)) == F(4, 6)


def test_stage_distributions_closed_forms() -> None:
    # two attacks BS4+ SH1: per attack hits {0: 1/2, 1: 1/3, 2: 1/6}
    s = Scenario(attacks="2", bs=4, sustained="1", strength=8, toughness=4, save=7,
                 damage="2", target_models=1, target_wounds=1)
    per = {0: F(1, 2), 1: F(1, 3), 2: F(1, 6)}
    st = stage_distributions(s)
    assert set(st) == set(STAGES)
    assert st["attacks"] == {2: 1}
    assert st["hits"] == _pmf_convolve(per, per)
    assert st["unsaved"] == st["wounds"]                       # no save possible
    # uncapped damage: 2 per unsaved wound even though the W1 target dies at the first
    assert st["damage_before_fnp"] == {2 * k: p for k, p in st["unsaved"].items()}
    assert max(damage_distribution(s)) == 1
    for dist in st.values():
        assert sum(dist.values()) == 1


STAGE_CONSISTENCY_CASES = [
    Scenario(attacks="D3", bs=3, reroll_hits="best", sustained="D3", lethal=True,
             devastating=True, anti=5, save=4, damage="D3", fnp=5, command_reroll="save",
             reroll_saves="ones"),
    Scenario(attacks="2", bs=4, crit_hit=5, reroll_wounds="best", devastating=True,
             strength=5, toughness=6, save=3, ap=-1, damage="D6", half_damage=True, melta=1,
             reroll_damage="ones", command_reroll="damage"),
    _torrent(attacks="D6", blast=True, target_models=10, strength=4, toughness=4, save=5,
             damage="2", damage_reduction=1, command_reroll="attacks", rapid_fire="1"),
]


@pytest.mark.parametrize("s", STAGE_CONSISTENCY_CASES)
def test_unlimited_wounds_damage_equals_stage_damage_after_fnp(s: Scenario) -> None:
    st = stage_distributions(s)
    assert damage_distribution(s) == st["damage_after_fnp"]
    assert mean(st["wounds"]) >= mean(st["unsaved"]) + mean(st["devastating"])
    assert mean(st["damage_before_fnp"]) >= mean(st["damage_after_fnp"])


def test_every_option_at_once_is_a_distribution() -> None:
    # Every option together (the enumeration's worst case); its speed is a benchmark concern.
    s = Scenario(attacks="3", bs=3, hit_mod=-1, reroll_hits="best", sustained="D3", lethal=True,
                 strength=5, toughness=5, reroll_wounds="best", twin_linked=True,
                 devastating=True, ap=-1, save=3, invuln=5, cover=True, damage="D3+1", fnp=5,
                 target_models=5, target_wounds=3, crit_hit=5, anti=4, heavy_stationary=True,
                 stealth=True, lance_charged=True, ap_improve=1, melta=1, half_damage=True,
                 damage_reduction=1, damage_mod=1, reroll_damage="below_average",
                 reroll_saves="ones", command_reroll="save", rules="2023", bs_improve=1,
                 save_mod=0, invuln_ranged_only=True)
    joint = joint_distribution(s)
    assert sum(joint.values()) == 1
    assert all(p > 0 for p in joint.values())
