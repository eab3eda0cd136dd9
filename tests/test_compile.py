"""The compiled tables, read back exactly (Fractions over the 36 (die, re-roll die) pairs),
against the closed forms of RULES.md. Named after the rule ids."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from mathhammer.codes import Roll, RollFlag, Stage
from mathhammer.compile import compile_matchup
from mathhammer.errors import MatchupError
from mathhammer.model import CommandReroll, Context, Matchup, RerollPolicy, RulesVersion
from mathhammer.notation import parse_target, parse_weapon


def comp(weapon: str, target: str = "T4 SV3+ W2", **ctx: object):
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=parse_target(target), context=Context(**ctx)))  # type: ignore[arg-type]


def p(c, stage: Stage, bit: int) -> F:
    """P(stage value has ``bit``) for one roll with its re-roll."""
    return F(sum(1 for v in c.inputs.stages[stage] if v & bit), 36)


def p_hit(c) -> F:
    return p(c, Stage.HIT, 3)


def faces(c, stage: Stage, bit: int = 3) -> list[int]:
    """Faces of a lone die (no re-roll) that have ``bit``."""
    return [f for f in range(1, 7) if c.inputs.stages[stage][(f - 1) * 7] & bit]


def damage_values(c) -> dict[int, F]:
    """Distribution of one attack's damage by the raw dice sum, read from the tables."""
    from mathhammer.compile import _raw_pmf

    n6, n3 = c.inputs.rolls[Roll.DAMAGE]
    out: dict[int, F] = {}
    for raw, q in _raw_pmf(int(n6), int(n3)).items():
        v = int(c.inputs.roll_maps[Roll.DAMAGE, raw])
        out[v] = out.get(v, F(0)) + q
    return out


def test_R_0_4_bs_improve_stacks_with_heavy() -> None:
    c = comp("A1 BS4+ S4 AP0 D1 [HEAVY]", bs_improve=1, stationary=True)
    assert faces(c, Stage.HIT) == [2, 3, 4, 5, 6]


def test_R_0_4_bs_improve_is_not_capped() -> None:
    c = comp("A1 BS5+ S4 AP0 D1", bs_improve=2, hit_mod=1)
    assert faces(c, Stage.HIT) == [2, 3, 4, 5, 6]


def test_A1_no_floor_by_default_and_a_configurable_one() -> None:
    """A1: BS has no lower limit by default: BS2+ improved by 1 is BS1+, which with -1 to hit
    still hits on 2+ (an unmodified 1 fails anyway). ``skill_floor`` (--skill-floor) stops the
    changes at N+: BS2+ with -1 then hits on 3+. It limits the changes, not the weapon: a BS2+
    weapon keeps BS2+ under a floor of 3, and a BS4+ weapon improved by 1 under it is BS3+."""
    assert faces(comp("A1 BS2+ S4 AP0 D1", bs_improve=1, hit_mod=-1), Stage.HIT) == [2, 3, 4, 5, 6]
    assert faces(comp("A1 BS2+ S4 AP0 D1", bs_improve=1, hit_mod=-1, skill_floor=2), Stage.HIT) == [3, 4, 5, 6]
    assert faces(comp("A1 BS5+ S4 AP0 D1", bs_improve=3, hit_mod=-1, skill_floor=3), Stage.HIT) == [4, 5, 6]
    assert faces(comp("A1 BS2+ S4 AP0 D1", hit_mod=-1, skill_floor=3), Stage.HIT) == [3, 4, 5, 6]
    assert faces(comp("A1 BS4+ S4 AP0 D1", bs_improve=1, skill_floor=3), Stage.HIT) == [3, 4, 5, 6]
    assert faces(comp("A1 WS2+ S4 AP0 D1", bs_improve=1, hit_mod=-1, skill_floor=2, melee=True), Stage.HIT) == [3, 4, 5, 6]
    for bad in (-1, 7):
        with pytest.raises(MatchupError, match="--skill-floor"):
            comp("A1 BS2+ S4 AP0 D1", skill_floor=bad)


def test_R_2_3_crit_on_5_with_sustained() -> None:
    c = comp("A1 BS4+ S4 AP0 D1 [SUSTAINED HITS 1]", crit_hit=5)
    assert faces(c, Stage.HIT, 2) == [5, 6]
    e_hits = p_hit(c) + p(c, Stage.HIT, 2) * int(c.inputs.roll_maps[Roll.SUSTAINED, 0])
    assert e_hits == F(3, 6) + F(2, 6)


def test_A7_crit_on_5_hits_even_when_the_5_would_miss() -> None:
    c = comp("A1 BS6+ S4 AP0 D1", crit_hit=5)
    assert faces(c, Stage.HIT) == [5, 6]


@pytest.mark.parametrize(("stationary", "stealth", "needed"), [(True, False, 3), (False, False, 4), (True, True, 4)])
def test_R_2_5_heavy(stationary: bool, stealth: bool, needed: int) -> None:
    target = "T4 SV3+ W2" + (" [STEALTH]" if stealth else "")
    c = comp("A1 BS4+ S4 AP0 D1 [HEAVY]", target, stationary=stationary)
    assert min(faces(c, Stage.HIT)) == needed


def test_R_2_6_stealth_ranged_only() -> None:
    assert min(faces(comp("A1 BS3+ S4 AP0 D1", "T4 SV3+ W2 [STEALTH]"), Stage.HIT)) == 4
    assert min(faces(comp("A1 WS3+ S4 AP0 D1", "T4 SV3+ W2 [STEALTH]", melee=True), Stage.HIT)) == 3


def test_R_2_7_indirect_fire() -> None:
    c = comp("A1 BS2+ S4 AP0 D1 [INDIRECT FIRE]", "T4 SV4+ W2", not_visible=True)
    assert faces(c, Stage.HIT) == [4, 5, 6]
    assert c.plan.save["cover"] == "applied" and faces(c, Stage.SAVE, 1) == [1, 2]  # 4+ save in cover: 3+


def test_R_2_7_indirect_fire_2023_text() -> None:
    c = comp("A1 BS2+ S4 AP0 D1 [INDIRECT FIRE]", "T4 SV4+ W2", not_visible=True, rules=RulesVersion.V2023)
    assert faces(c, Stage.HIT) == [3, 4, 5, 6]


def test_R_2_9_overwatch() -> None:
    c = comp("A1 BS3+ S4 AP0 D1 [HEAVY]", stationary=True, overwatch=True)
    assert p_hit(c) == F(1, 6) and p(c, Stage.HIT, 2) == F(1, 6)


@pytest.mark.parametrize(("option", "changes"), [("--hit-mod", {"hit_mod": -1}), ("--hit-mod", {"hit_mod": 1}),
                                                ("--bs-improve", {"bs_improve": 2}), ("--crit-hit", {"crit_hit": 5}),
                                                ("--skill-floor", {"skill_floor": 3}),
                                                ("--stationary", {"stationary": True})])
def test_R_2_9_options_overwatch_makes_useless_are_said_to_change_nothing(option: str, changes: dict[str, object]
                                                                         ) -> None:
    """Only an unmodified 6 hits, whatever the BS, modifiers or crit threshold (R-2.9, A7):
    1/6, every hit critical, and a warning names the option (M22: nothing is ignored silently)."""
    c = comp("A1 BS3+ S4 AP0 D1 [HEAVY]", overwatch=True, **changes)
    assert p_hit(c) == F(1, 6) and p(c, Stage.HIT, 2) == F(1, 6)
    assert [w for w in c.plan.warnings if "Fire Overwatch" in w] == [
        f"{option} has no effect in Fire Overwatch: only an unmodified 6 hits (R-2.9)"]
    assert not [w for w in comp("A1 BS3+ S4 AP0 D1 [HEAVY]", overwatch=True, reroll_hits=RerollPolicy.FAILED
                                ).plan.warnings if "Fire Overwatch" in w]  # a re-roll still can roll a 6


def test_A13_torrent_in_overwatch_hits_automatically() -> None:
    c = comp("A D6 BS N/A S4 AP0 D1 [TORRENT]", overwatch=True)
    assert c.plan.hit["automatic"] is True


def test_R_2_9_overwatch_refused_against_titanic() -> None:
    with pytest.raises(MatchupError, match="TITANIC"):
        comp("A1 BS3+ S4 AP0 D1", "T11 SV3+ W26 [TITANIC, VEHICLE]", overwatch=True)


@pytest.mark.parametrize(("charged", "needed"), [(True, 3), (False, 4)])
def test_R_5_3_lance(charged: bool, needed: int) -> None:
    c = comp("A1 WS3+ S6 AP0 D1 [LANCE]", "T6 SV3+ W2", melee=True, charged=charged)
    assert min(faces(c, Stage.WOUND)) == needed


def test_R_5_5_anti_vehicle() -> None:
    c = comp("A1 BS3+ S6 AP0 D1 [ANTI-VEHICLE 4+]", "T10 SV3+ W12 [VEHICLE]")
    assert faces(c, Stage.WOUND, 2) == [4, 5, 6] and faces(c, Stage.WOUND) == [4, 5, 6]
    c = comp("A1 BS3+ S6 AP0 D1 [ANTI-VEHICLE 4+]", "T10 SV3+ W12 [INFANTRY]")
    assert faces(c, Stage.WOUND, 2) == [6]


def test_R_5_5_a_misspelt_keyword_is_warned_of() -> None:
    """Target keywords are free text: one close to the Anti keyword (VEHICULE) leaves ANTI off,
    as written, with a warning; the right keyword or an unrelated one gives none."""
    c = comp("A1 BS3+ S6 AP0 D1 [ANTI-VEHICLE 4+]", "T10 SV3+ W12 [VEHICULE, INFANTRY]")
    assert faces(c, Stage.WOUND, 2) == [6]
    assert [w for w in c.plan.warnings if "VEHICULE" in w] == [
        "ANTI-VEHICLE 4+ has no effect: the target is not VEHICLE, but is VEHICULE (a misspelling of VEHICLE?)"]
    for target in ("T10 SV3+ W12 [VEHICLE]", "T10 SV3+ W12 [INFANTRY, FLY]"):
        assert not [w for w in comp("A1 BS3+ S6 AP0 D1 [ANTI-VEHICLE 4+]", target).plan.warnings if "ANTI" in w]


def test_R_7_4_ap_improve() -> None:
    c = comp("A1 BS3+ S4 AP0 D1", "T4 SV3+ W2", ap_improve=1)
    assert faces(c, Stage.SAVE, 1) == [1, 2, 3]  # saves on 4+


def test_R_7_4_worsen_never_above_zero() -> None:
    c = comp("A1 BS3+ S4 AP-1 D1", "T4 SV3+ W2", ap_improve=-3)
    assert c.plan.save["ap"] == 0


def test_R_7_1_ranged_only_invulnerable_ignored_in_melee() -> None:
    target = "T11 SV3+ W26"
    t = parse_target(target)
    from dataclasses import replace

    t = replace(t, invulnerable=5, invulnerable_ranged_only=True)
    w = parse_weapon("A1 WS3+ S12 AP-4 D6")
    c = compile_matchup(Matchup(weapon=w, target=t, context=Context(melee=True)))
    assert c.plan.save["kind"] == "none"
    c = compile_matchup(Matchup(weapon=parse_weapon("A1 BS3+ S12 AP-4 D6"), target=t))
    assert c.plan.save["kind"] == "invulnerable"


def test_R_8_2_melta() -> None:
    assert damage_values(comp("A1 BS3+ S9 AP-4 D D6 [MELTA 2]", half_range=True)) == {k: F(1, 6) for k in range(3, 9)}
    assert damage_values(comp("A1 BS3+ S9 AP-4 D D6 [MELTA 2]")) == {k: F(1, 6) for k in range(1, 7)}


def test_R_8_3_half_damage() -> None:
    c = comp("A1 BS3+ S9 AP-4 D D6+1", "T4 SV3+ W9 [HALF DAMAGE]")
    assert damage_values(c) == {1: F(1, 6), 2: F(2, 6), 3: F(2, 6), 4: F(1, 6)}  # ceil((D6+1)/2)
    c = comp("A1 BS3+ S9 AP-4 D D6 [MELTA 2]", "T4 SV3+ W9 [HALF DAMAGE]", half_range=True)
    assert damage_values(c) == {3: F(2, 6), 4: F(2, 6), 5: F(2, 6)}  # ceil(D6/2) + 2 (A5)


def test_R_0_2_half_damage_with_melta_on_a_5() -> None:
    c = comp("A1 BS3+ S9 AP-4 D D6 [MELTA 2]", "T4 SV3+ W9 [HALF DAMAGE]", half_range=True)
    assert int(c.inputs.roll_maps[Roll.DAMAGE, 5]) == 5  # ceil(5/2 + 2), not ceil((5+2)/2) = 4


def test_R_8_4_minus_one_damage_never_below_one() -> None:
    c = comp("A1 BS3+ S9 AP-4 D D3", "T4 SV3+ W9 [-1 DAMAGE]")
    assert [int(c.inputs.roll_maps[Roll.DAMAGE, r]) for r in (1, 2, 3)] == [1, 1, 2]


def test_A18_half_then_minus_one() -> None:
    c = comp("A1 BS3+ S9 AP-4 D D6", "T4 SV3+ W9 [HALF DAMAGE, -1 DAMAGE]")
    assert int(c.inputs.roll_maps[Roll.DAMAGE, 6]) == 2
    c = comp("A1 BS3+ S9 AP-4 D3", "T4 SV3+ W9 [HALF DAMAGE, -1 DAMAGE]")
    assert int(c.inputs.roll_maps[Roll.DAMAGE, 0]) == 1


def test_R_6_2_devastating_uses_modified_damage() -> None:
    c = comp("A1 BS5+ S20 AP-5 D D6+6 [DEVASTATING WOUNDS]", "T11 SV3+ W26 [-1 DAMAGE]")
    assert damage_values(c) == {k: F(1, 6) for k in range(6, 12)}  # D6+5


def test_R_1_3_blast() -> None:
    c = comp("A D6 BS3+ S4 AP0 D1 [BLAST]", "T4 SV3+ W1 MODELS10")
    assert [int(c.inputs.roll_maps[Roll.ATTACKS, r]) for r in range(1, 7)] == [3, 4, 5, 6, 7, 8]


def test_R_1_4_rapid_fire() -> None:
    assert int(comp("A2 BS3+ S4 AP0 D1 [RAPID FIRE 1]", half_range=True).inputs.roll_maps[Roll.ATTACKS, 0]) == 3
    assert int(comp("A2 BS3+ S4 AP0 D1 [RAPID FIRE 1]").inputs.roll_maps[Roll.ATTACKS, 0]) == 2


def test_R_1_4_rapid_fire_dice_joins_the_attacks_roll() -> None:
    c = comp("A D6+3 BS3+ S10 AP-1 D3 [BLAST, RAPID FIRE D6+3]", "T4 SV3+ W1 MODELS5", half_range=True)
    assert tuple(c.inputs.rolls[Roll.ATTACKS]) == (2, 0)
    assert int(c.inputs.roll_maps[Roll.ATTACKS, 2]) == 2 + 6 + 1


def test_R_3_5_fishing_for_crits_with_lethal() -> None:
    """Lethal BS3+ against a 6+-to-wound target: wounds per attack 3/8 when fishing, 1/3 with failed."""
    def wounds_per_attack(policy: RerollPolicy) -> F:
        c = comp("A1 BS3+ S6 AP0 D1 [LETHAL HITS]", "T12 SV3+ W2", reroll_hits=policy)
        p_normal = p(c, Stage.HIT, 1)
        p_crit = p(c, Stage.HIT, 2)
        p_wound = p(c, Stage.WOUND, 3)
        return p_crit + p_normal * p_wound

    assert wounds_per_attack(RerollPolicy.FAILED) == F(1, 3)
    assert wounds_per_attack(RerollPolicy.NON_CRIT) == F(3, 8)
    assert wounds_per_attack(RerollPolicy.BEST) == F(3, 8)


def test_R_3_5_sustained_alone_never_fishes() -> None:
    c = comp("A1 BS3+ S4 AP0 D1 [SUSTAINED HITS 1]", reroll_hits=RerollPolicy.BEST)
    assert faces(c, Stage.HIT) == [3, 4, 5, 6] and p_hit(c) == F(4, 6) + F(2, 6) * F(4, 6)  # only failures re-rolled


def test_R_3_5_railgun_does_not_fish_normal_wounds() -> None:
    c = comp("A1 BS5+ S20 AP-5 D D6+6 [DEVASTATING WOUNDS, TWIN-LINKED]", "T11 SV3+ W26 INV5+",
             reroll_wounds=RerollPolicy.BEST)
    table = c.inputs.stages[Stage.WOUND]
    rerolled_first_faces = [f for f in range(1, 7) if any(table[(f - 1) * 6 + g - 1] != table[(f - 1) * 7] for g in range(1, 7))]
    assert rerolled_first_faces == [1, 2]


def test_R_3_7_command_reroll_is_a_kernel_option() -> None:
    c = comp("A1 BS5+ S4 AP0 D1", command_reroll=CommandReroll.HIT)
    # every failed first die is marked re-rollable, so one Command Re-roll gives 1/3 + 2/3 * 1/3
    rerollable = F(sum(1 for v in c.inputs.stages[Stage.HIT] if v & 4), 36)
    assert rerollable == F(4, 6) and p_hit(c) + rerollable * F(2, 6) == F(5, 9)


def test_R_3_2_a_rerolled_die_is_not_rerollable_again() -> None:
    c = comp("A1 BS4+ S4 AP0 D1", reroll_hits=RerollPolicy.ONES)
    table = c.inputs.stages[Stage.HIT]
    assert all(not (table[g - 1] & 4) for g in range(1, 7))  # first die 1: re-rolled, never marked


def test_damage_reroll_flags() -> None:
    from mathhammer.model import DamageReroll

    c = comp("A1 BS3+ S4 AP0 D D6", reroll_damage=DamageReroll.ONES)
    assert [r for r in range(1, 7) if c.inputs.roll_flags[Roll.DAMAGE, r] & RollFlag.REROLL] == [1]
    c = comp("A1 BS3+ S4 AP0 D D6", reroll_damage=DamageReroll.BELOW_AVERAGE)
    assert [r for r in range(1, 7) if c.inputs.roll_flags[Roll.DAMAGE, r] & RollFlag.REROLL] == [1, 2, 3]


@pytest.mark.parametrize(("weapon", "ctx", "fragment"), [
    ("A1 WS3+ S4 AP0 D1", {}, "melee weapon"),
    ("A1 BS3+ S4 AP0 D1", {"melee": True}, "ranged weapon"),
    ("A1 BS3+ S4 AP0 D1", {"not_visible": True}, "INDIRECT FIRE"),
    ("A1 WS3+ S4 AP0 D1", {"melee": True, "overwatch": True}, "Overwatch"),
    ("A D6 BS N/A S4 AP0 D1 [TORRENT, INDIRECT FIRE]", {"not_visible": True}, "TORRENT"),
])
def test_impossible_matchups(weapon: str, ctx: dict, fragment: str) -> None:
    with pytest.raises(MatchupError, match=fragment):
        comp(weapon, **ctx)


@pytest.mark.parametrize("value", [1, 7, 0])
def test_crit_threshold_bounds(value: int) -> None:
    with pytest.raises(MatchupError, match="critical threshold"):
        Context(crit_hit=value)


def test_clamped_modifiers_are_warned_and_reported() -> None:
    c = comp("A1 BS4+ S4 AP0 D1 [HEAVY]", "T4 SV3+ W2 [STEALTH]", stationary=True, hit_mod=2)
    assert c.plan.hit["modifier"]["requested"] == 2 and c.plan.hit["modifier"]["applied"] == 1
    assert any("clamped" in w for w in c.plan.warnings)
    assert any("R-2.5" in line for line in c.plan.explain) and any("R-2.6" in line for line in c.plan.explain)


def test_options_without_effect_are_warned() -> None:
    c = comp("A1 BS4+ S4 AP0 D1", stationary=True, charged=True, half_range=True)
    text = " ".join(c.plan.warnings)
    assert "--stationary has no effect" in text and "--charged has no effect" in text and "--half-range has no effect" in text


def test_an_option_one_weapon_group_uses_is_not_warned_about_for_the_others() -> None:
    import mathhammer

    heavy, plain = "A1 BS4+ S4 AP0 D1 [HEAVY]", "A2 BS4+ S4 AP0 D1"
    target = "T4 SV7+ W100"
    both = mathhammer.build([heavy, plain], target, stationary=True)
    compiled = compile_matchup(both.matchup)
    assert not any("has no effect" in w for w in compiled.plan.warnings)
    assert any(line.endswith(": --stationary has no effect: the weapon has no HEAVY") for line in compiled.plan.explain)
    # and it did change the result: HEAVY hits on 3+ (2/3) instead of 4+ (1/2); wounds on 4+, no save
    got = mathhammer.run([heavy, plain], target, method="exact", stationary=True).damage.mean()
    assert got == pytest.approx(float(F(2, 3) * F(1, 2) + 2 * F(1, 2) * F(1, 2)), abs=1e-12)
    # an option no weapon group uses is still warned about, once
    none = compile_matchup(mathhammer.build([plain, plain], target, stationary=True).matchup)
    assert none.plan.warnings.count("--stationary has no effect: the weapon has no HEAVY") == 1


def test_r11_2_an_army_rule_one_weapon_group_uses_is_not_warned_about_for_a_torrent_beside_it() -> None:
    # For the Greater Good (--guided, at the Spotted unit) improves BS by 1: nothing for a TORRENT
    # weapon, which makes no Hit roll, but the other weapon hits on 3+ instead of 4+
    import mathhammer

    torrent, gun = "A4 BS- S4 AP0 D1 [TORRENT]", "A4 BS4+ S4 AP0 D1"
    target = "T4 SV7+ W100"
    both = compile_matchup(mathhammer.build([torrent, gun], target, guided=True).matchup)
    assert not any("has no effect" in w for w in both.plan.warnings)
    assert any(line.endswith(": For the Greater Good has no effect: TORRENT makes no Hit roll")
               for line in both.plan.explain)  # the explain line names the weapon it is about
    got = mathhammer.run([torrent, gun], target, method="exact", guided=True).damage.mean()
    assert got == pytest.approx(float(4 * F(1, 2) + 4 * F(2, 3) * F(1, 2)), abs=1e-12)
    # the torrent alone: warned about, once
    alone = compile_matchup(mathhammer.build([torrent, torrent], target, guided=True).matchup)
    assert alone.plan.warnings.count("For the Greater Good has no effect: TORRENT makes no Hit roll") == 1


def test_A7_the_successful_wording_of_a_critical_threshold() -> None:
    """A7: "Critical Hit on an unmodified 5+" makes a 5 a Critical Hit even where it would miss;
    "a *successful* unmodified 5+" (crit_successful) leaves a 5 that misses a miss, and one that
    hits critical. A natural 6 and ANTI's threshold are critical under either wording."""
    assert faces(comp("A1 BS6+ S4 AP0 D1", crit_hit=5), Stage.HIT, 2) == [5, 6]
    assert faces(comp("A1 BS6+ S4 AP0 D1", crit_hit=5, crit_successful=True), Stage.HIT, 2) == [6]
    assert faces(comp("A1 BS6+ S4 AP0 D1", crit_hit=5, crit_successful=True), Stage.HIT) == [6]
    assert faces(comp("A1 BS4+ S4 AP0 D1", crit_hit=5, crit_successful=True), Stage.HIT, 2) == [5, 6]
    assert faces(comp("A1 BS3+ S4 AP0 D1", crit_hit=2, hit_mod=-1, crit_successful=True), Stage.HIT, 2) == [4, 5, 6]
    # S4 vs T8 wounds on 6+: a 4 wounds only as a Critical Wound, and the successful wording says it does not
    assert faces(comp("A1 BS3+ S4 AP0 D1", "T8 SV3+ W2", crit_wound=4), Stage.WOUND, 2) == [4, 5, 6]
    assert faces(comp("A1 BS3+ S4 AP0 D1", "T8 SV3+ W2", crit_wound=4, crit_successful=True), Stage.WOUND, 2) == [6]
    anti = comp("A1 BS3+ S4 AP0 D1 [ANTI-VEHICLE 4+]", "T8 SV3+ W2 [VEHICLE]", crit_wound=5, crit_successful=True)
    assert faces(anti, Stage.WOUND, 2) == [4, 5, 6]


def test_M16_indirect_fire_reports_the_critical_hits_it_allows() -> None:
    """Under INDIRECT FIRE at a unit not visible an unmodified 1-3 fails whatever the critical
    threshold (M16): with Critical Hits on 3+ the first critical roll is a 4, and that is what
    the thresholds say."""
    c = comp("A1 BS4+ S4 AP0 D1 [INDIRECT FIRE]", crit_hit=3, not_visible=True)
    assert faces(c, Stage.HIT, 2) == [4, 5, 6]
    assert c.plan.hit["critical_on"] == 4 and "critical on 4+" in c.plan.words
