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
    Scenario,
    attacks_distribution,
    damage_distribution,
    dice_distribution,
    expected_hits_per_attack,
    expected_wounds_per_attack,
    hit_roll_distribution,
    hits_per_attack_distribution,
    joint_distribution,
    mean,
    models_destroyed_distribution,
    p_critical_hit,
    p_hit,
    p_save,
    p_wound,
    points_lost_per_unsaved_attack_distribution,
    variance,
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

        def d6() -> int:
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
    armour_needed = 7 if s.save >= 7 else max(2, s.save - min(1, s.ap + int(cover) + s.save_mod))
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
