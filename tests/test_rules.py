"""Game arithmetic, against the RULES.md test lines and exhaustive tables."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from mathhammer import rules
from mathhammer.dice import parse as parse_dice
from mathhammer.model import RerollPolicy


def _p(outcomes: tuple[int, ...], mask: tuple[int, ...] = (0,) * 7, ok=(rules.SUCCESS, rules.CRIT)) -> F:
    """P(outcome in ok) for one die with its re-roll, by enumerating both dice."""
    total = F(0)
    for first in range(1, 7):
        if mask[first]:
            total += sum(F(1, 36) for second in range(1, 7) if outcomes[second] in ok)
        elif outcomes[first] in ok:
            total += F(1, 6)
    return total


def _table(s: int, t: int) -> int:
    """R-5.1 spelled out independently as a lookup on the ratio."""
    if s >= 2 * t:
        return 2
    if 2 * s <= t:
        return 6
    return 3 if s > t else 4 if s == t else 5


@pytest.mark.parametrize("s", range(1, 25))
@pytest.mark.parametrize("t", range(1, 25))
def test_R_5_1_wound_table_exhaustive(s: int, t: int) -> None:
    assert rules.wound_threshold(s, t) == _table(s, t)


@pytest.mark.parametrize(("s", "t", "need"), [(20, 12, 3), (4, 8, 6), (6, 10, 5), (20, 11, 3), (5, 4, 3), (8, 4, 2)])
def test_R_5_1_examples(s: int, t: int, need: int) -> None:
    assert rules.wound_threshold(s, t) == need


@pytest.mark.parametrize(("requested", "applied"), [(-3, -1), (-2, -1), (-1, -1), (0, 0), (1, 1), (2, 1), (5, 1)])
def test_R_0_3_roll_modifier_clamp(requested: int, applied: int) -> None:
    assert rules.clamp_roll_modifier(requested) == applied


def test_R_0_1_two_minus_ones_sum_before_the_cap() -> None:
    assert rules.clamp_roll_modifier(-1 + -1) == -1
    assert rules.clamp_roll_modifier(-1 + 1) == 0  # summed first: a +1 cancels a -1


def test_R_0_3_plus_two_to_hit_with_bs4_hits_on_3() -> None:
    out = rules.hit_outcomes(4, rules.clamp_roll_modifier(2))
    assert min(f for f in range(1, 7) if out[f]) == 3


def test_R_0_3_minus_two_with_bs3_hits_on_4() -> None:
    out = rules.hit_outcomes(3, rules.clamp_roll_modifier(-2))
    assert min(f for f in range(1, 7) if out[f]) == 4


def test_R_0_5_bs2_minus_one_natural_six_hits_natural_one_misses() -> None:
    out = rules.hit_outcomes(2, -1)
    assert out[6] == rules.CRIT and out[1] == rules.FAIL
    assert rules.hit_outcomes(2, +1)[1] == rules.FAIL  # 1 + 1 >= 2 still fails


def test_R_2_1_bs3_p_hit() -> None:
    assert _p(rules.hit_outcomes(3, 0)) == F(4, 6)


def test_R_2_2_bs6_minus_one_crits_on_every_six() -> None:
    out = rules.hit_outcomes(6, -1)
    assert out[6] == rules.CRIT and all(out[f] == rules.FAIL for f in range(1, 6))


def test_R_3_3_reroll_ones_bs3() -> None:
    out = rules.hit_outcomes(3, 0)
    assert _p(out, rules.reroll_mask(out, RerollPolicy.ONES)) == F(7, 9)


def test_R_3_4_reroll_failed_bs4() -> None:
    out = rules.hit_outcomes(4, 0)
    assert _p(out, rules.reroll_mask(out, RerollPolicy.FAILED)) == F(3, 4)


def test_R_3_4_failed_means_after_modifiers() -> None:
    out = rules.hit_outcomes(3, -1)  # a 3 fails after -1, so it is re-rolled
    mask = rules.reroll_mask(out, RerollPolicy.FAILED)
    assert mask[1:] == (1, 1, 1, 0, 0, 0)


def test_R_3_1_rerolled_six_is_critical_with_minus_one() -> None:
    out = rules.hit_outcomes(3, -1)
    mask = rules.reroll_mask(out, RerollPolicy.FAILED)
    assert _p(out, mask, ok=(rules.CRIT,)) == F(1, 6) + F(3, 6) * F(1, 6)


@pytest.mark.parametrize("policies", [(RerollPolicy.ONES, RerollPolicy.FAILED), (RerollPolicy.FAILED, RerollPolicy.ONES)])
def test_R_3_9_broadest_reroll_wins(policies) -> None:
    out = rules.hit_outcomes(4, 0)
    assert _p(out, rules.reroll_mask(out, rules.broadest(*policies))) == F(3, 4)


def test_R_3_6_twin_linked_s5_vs_t6() -> None:
    out = rules.wound_outcomes(rules.wound_threshold(5, 6), 0)
    assert _p(out, rules.reroll_mask(out, RerollPolicy.FAILED)) == F(5, 9)


def test_R_5_6_reroll_wound_ones_at_4() -> None:
    out = rules.wound_outcomes(4, 0)
    assert _p(out, rules.reroll_mask(out, RerollPolicy.ONES)) == F(7, 12)


def test_R_5_2_s4_vs_t8_with_modifiers() -> None:
    base = rules.wound_threshold(4, 8)
    plus = rules.wound_outcomes(base, +1)
    minus = rules.wound_outcomes(base, -1)
    assert [f for f in range(1, 7) if plus[f]] == [5, 6]
    assert [f for f in range(1, 7) if minus[f]] == [6] and minus[6] == rules.CRIT


@pytest.mark.parametrize(("save", "ap", "cover", "ignores", "expected"), [
    (3, 0, True, False, False),   # Sv3+ vs AP0 in cover stays 3+
    (4, 0, True, False, True),    # Sv4+ vs AP0 becomes 3+
    (3, -1, True, False, True),
    (2, 0, True, False, False),
    (4, -1, True, True, False),   # IGNORES COVER
    (4, -1, False, False, False),
])
def test_R_7_3_cover(save: int, ap: int, cover: bool, ignores: bool, expected: bool) -> None:
    assert rules.cover_applies(cover=cover, ignores_cover=ignores, melee=False, save=save, ap=ap) is expected


def test_R_7_3_cover_never_in_melee() -> None:
    assert not rules.cover_applies(cover=True, ignores_cover=False, melee=True, save=5, ap=0)


def test_R_7_2_sv3_vs_ap1_saves_on_4() -> None:
    choice = rules.choose_save(save=3, armour_modifier=rules.save_roll_modifier(-1, 0, 0), invulnerable=None,
                               invulnerable_modifier=0)
    assert (choice.kind, choice.needed) == ("armour", 4)


def test_R_7_1_ap5_vs_3_and_5_invulnerable() -> None:
    choice = rules.choose_save(save=3, armour_modifier=-5, invulnerable=5, invulnerable_modifier=0)
    assert (choice.kind, choice.needed) == ("invulnerable", 5)


def test_R_7_1_armour_kept_when_better() -> None:
    choice = rules.choose_save(save=2, armour_modifier=-1, invulnerable=4, invulnerable_modifier=0)
    assert (choice.kind, choice.needed) == ("armour", 3)


def test_R_7_5_sv2_in_cover_vs_ap1_passes_on_2_never_on_1() -> None:
    mod = rules.save_roll_modifier(-1, 1, 0)
    choice = rules.choose_save(save=2, armour_modifier=mod, invulnerable=None, invulnerable_modifier=0)
    assert choice.needed == 2
    assert rules.save_fails(choice.needed)[1:] == (1, 0, 0, 0, 0, 0)


def test_R_7_5_save_never_better_than_2_plus() -> None:
    mod = rules.save_roll_modifier(0, 1, 1)  # capped at +1 (A2)
    assert mod == 1
    choice = rules.choose_save(save=2, armour_modifier=mod, invulnerable=None, invulnerable_modifier=0)
    assert choice.needed == 2


@pytest.mark.parametrize(("ap", "cover", "other", "net"), [(0, 1, 1, 1), (-1, 1, 1, 1), (-2, 1, 0, -1), (-3, 0, 2, -1), (0, 0, 3, 1)])
def test_R_0_3_save_net_cap(ap: int, cover: int, other: int, net: int) -> None:
    assert rules.save_roll_modifier(ap, cover, other) == net


def test_no_save_possible() -> None:
    choice = rules.choose_save(save=6, armour_modifier=-2, invulnerable=None, invulnerable_modifier=0)
    assert choice.kind == "none" and choice.needed is None
    assert rules.save_fails(None)[1:] == (1,) * 6


@pytest.mark.parametrize(("ap", "cover", "other", "needed"), [
    (0, 1, 0, 6),     # cover on a 7+ save: a 6 + 1 = 7 >= 7
    (0, 0, 1, 6),     # a +1 save modifier does the same (net capped at +1, R-0.3)
    (0, 1, 1, 6),     # never better than +1 net
    (-1, 1, 0, None),  # AP-1 cancels the cover: a 6 is 6 < 7
    (0, 0, 0, None),  # unmodified: no die reaches 7
])
def test_R_7_2_save_7_plus_passes_only_with_a_net_plus_1(ap: int, cover: int, other: int, needed: int | None) -> None:
    choice = rules.choose_save(save=7, armour_modifier=rules.save_roll_modifier(ap, cover, other), invulnerable=None,
                               invulnerable_modifier=0)
    assert choice.needed == needed
    assert choice.kind == ("none" if needed is None else "armour")


def test_m79_a_weapon_shoots_with_its_first_ranged_profile_and_fights_with_its_strike() -> None:
    lance = [("Lance", False), ("Lance - strike", True), ("Lance - sweep", True)]
    assert rules.fired_profiles(lance) == [0, 1]
    assert rules.fired_profiles(lance[::-1]) == [1, 2]  # the strike wherever it stands
    assert rules.fired_profiles([("Claw - sweep", True), ("Claw - Strike", True)]) == [1]
    assert rules.fired_profiles([("Gun - standard", False), ("Gun - supercharge", False)]) == [0]
    assert rules.fired_profiles([("Axe", True), ("Axe (Champion)", True)]) == [0]  # no strike: the first
    assert rules.fired_profiles([("Spear", True), ("Spear", False)]) == [0, 1]
    assert rules.fired_profiles([]) == []


def test_m86_a_weapon_shoots_with_its_first_profile_without_hazardous() -> None:
    # a plasma pistol listed supercharge (Hazardous) first: the standard profile, wherever it stands
    assert rules.fired_profiles([("Gun - supercharge", False), ("Gun - standard", False)], [True, False]) == [1]
    assert rules.fired_profiles([("Gun - standard", False), ("Gun - supercharge", False)], [False, True]) == [0]
    # every ranged profile Hazardous (or none known): the first, as before
    assert rules.fired_profiles([("Gun - a", False), ("Gun - b", False)], [True, True]) == [0]
    assert rules.fired_profiles([("Gun - a", False), ("Gun - b", False)]) == [0]
    # melee profiles are chosen as before, Hazardous or not
    assert rules.fired_profiles([("Gun - hot", False), ("Gun - strike", True), ("Gun", False)], [True, True, False]) == [1, 2]


def test_m80_melee_weight_is_the_mean_damage_to_a_space_marine() -> None:
    d = parse_dice
    # a power fist A3 WS3+ S8 AP-2 D2 against T4 Sv3+: hits 4/6, wounds on 2+ (S8 = 2 x T4) 5/6,
    # saves on 5+ (fails 4/6), 2 damage each
    assert rules.melee_weight(d("3"), 3, 8, -2, d("2")) == 3 * F(4, 6) * F(5, 6) * F(4, 6) * 2
    # a chainsword A4 WS3+ S4 AP-1 D1: wounds on 4+, saves on 4+
    assert rules.melee_weight(d("4"), 3, 4, -1, d("1")) == 4 * F(4, 6) * F(3, 6) * F(3, 6)
    # AP-4 leaves no save (7+); S2 wounds T4 on 6+; AP0 fails a 3+ save on 1-2
    assert rules.melee_weight(d("1"), 2, 2, -4, d("1")) == F(5, 6) * F(1, 6)
    assert rules.melee_weight(d("1"), 2, 4, 0, d("1")) == F(5, 6) * F(3, 6) * F(2, 6)
    # dice by their means: A D6+2 (11/2), D D3 (2, R-0.6)
    assert rules.melee_weight(d("D6+2"), 2, 4, 0, d("D3")) == F(11, 2) * F(5, 6) * F(3, 6) * F(2, 6) * 2
    assert (d("D6+2").mean, d("2D3").mean, d("3").mean, d("D6").mean) == (F(11, 2), 4, 3, F(7, 2))


def test_m80_the_best_melee_weapon_is_fought_with_ties_go_to_the_first() -> None:
    carried = [("ccw", "melee"), ("fist", "melee"), ("horn", "extra"), ("sword", "melee")]
    weights = {"ccw": 0.5, "fist": 2.0, "sword": 2.0}
    assert rules.not_attacking_with(carried, weight=weights.__getitem__) == ["ccw", "sword"]
    assert rules.not_attacking_with(carried) == ["fist", "sword"]  # without weights: the first
    # A3 WS2+ S5 AP-2 D2 and A3 WS3+ S8 AP-2 D2 do as much (20/9): weighed exactly, the first is kept
    sword = rules.melee_weight(parse_dice("3"), 2, 5, -2, parse_dice("2"))
    fist = rules.melee_weight(parse_dice("3"), 3, 8, -2, parse_dice("2"))
    assert sword == fist == F(20, 9)
    assert rules.not_attacking_with([("sword", "melee"), ("fist", "melee")],
                                    weight={"sword": sword, "fist": fist}.__getitem__) == ["fist"]


def test_pistol_rule_and_one_melee_weapon_with_its_extra_attacks() -> None:
    carried = [("pistol", "pistol"), ("rifle", "ranged"), ("sword", "melee"), ("horn", "extra"), ("fist", "melee")]
    assert rules.not_attacking_with(carried) == ["pistol", "fist"]
    assert rules.not_attacking_with(carried, pistols_beside_others=True) == ["fist"]  # a MONSTER or VEHICLE
    assert rules.not_attacking_with([("pistol", "pistol"), ("knife", "melee")]) == []  # pistols alone shoot
    assert rules.not_attacking_with([("horn", "extra"), ("claws", "extra")]) == []
