"""The effects layer (issue 12): For the Greater Good, Kauyon, Mont'ka, their stratagems and the
core ones, Firing Deck. Every expected value is derived here from the rules, by hand, with
fractions (the exact engine computes what the code under test produces).

The test weapon is mostly ``A1 BS4+ S8 AP-6 D1`` against ``T4 SV6+ W100``: it wounds on 2+ (5/6,
R-5.1) and no save is possible (6 + AP-6), so the mean damage is E[hits] x 5/6 with
E[hits] = P(hit) + X/6 for SUSTAINED HITS X (R-4.1).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from typer.testing import CliRunner

import mathhammer
from mathhammer.cli import app
from mathhammer.effects import catalogue
from mathhammer.effects.catalogue import read
from mathhammer.errors import MathhammerError, ProfileError

F = Fraction
GUN = "A1 BS4+ S8 AP-6 D1"
OPEN = "T4 SV6+ W100"
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


def mean(weapons: str | list[str], target: str = OPEN, **kw: object) -> float:
    return mathhammer.run(weapons, target, method="exact", **kw).damage.mean()


def close(a: float, b: Fraction) -> bool:
    return abs(a - float(b)) < 1e-12


def cli(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


# -- Kauyon: Patient Hunter -----------------------------------------------------------

def test_r11_4_no_sustained_hits_before_round_3() -> None:
    assert close(mean(GUN, detachment="kauyon", round=2), F(1, 2) * F(5, 6))


def test_r11_4_sustained_hits_1_from_round_3() -> None:
    for rnd in (3, 4, 5):
        assert close(mean(GUN, detachment="kauyon", round=rnd), (F(1, 2) + F(1, 6)) * F(5, 6))


def test_r11_4_sustained_hits_2_against_the_spotted_unit_when_guided() -> None:
    # Guided at the Spotted unit: BS 4+ -> 3+ (R-11.2) and SUSTAINED HITS 2: E[hits] = 2/3 + 2/6 = 1
    assert close(mean(GUN, detachment="kauyon", round=3, guided=True), F(1) * F(5, 6))


def test_r11_4_guided_at_another_unit_gets_sh1_and_worse_bs() -> None:
    # not the Spotted unit: BS 4+ -> 5+ (R-11.2), SUSTAINED HITS 1: 1/3 + 1/6
    assert close(mean(GUN, detachment="kauyon", round=3, guided=True, spotted=False), (F(1, 3) + F(1, 6)) * F(5, 6))


def test_r4_5_kauyon_sh2_replaces_the_weapons_sh1_never_3() -> None:
    got = mean(GUN + " [SUSTAINED HITS 1]", detachment="kauyon", round=3, guided=True)
    assert close(got, (F(2, 3) + F(2, 6)) * F(5, 6))  # SH2, not SH3 (which would be 35/36)
    attack = mathhammer.build(GUN + " [SUSTAINED HITS 2]", OPEN, detachment="kauyon", round=3)
    assert any("adds nothing (R-4.5)" in line for line in attack.explain)  # SH1 does not lower SH2


@pytest.mark.parametrize(("pair", "x_mean"), [
    (("SUSTAINED HITS D3", "SUSTAINED HITS 3"), F(3)),  # 3 outranks D3 (average 2), though both reach 3
    (("SUSTAINED HITS D6", "SUSTAINED HITS 4"), F(4)),  # 4 outranks D6 (average 7/2), though D6 reaches 6
    (("SUSTAINED HITS 1", "SUSTAINED HITS D3+1"), F(3)),
])
def test_r4_5_the_same_ability_twice_keeps_the_larger_average_in_either_order(pair, x_mean) -> None:
    # A1 BS4+: E[hits] = 1/2 + E[X]/6 (ruling M77); S8 v T4 wounds on 2+, AP-6 leaves no save
    for first, second in (pair, pair[::-1]):
        assert close(mean(f"{GUN} [{first}, {second}]"), (F(1, 2) + x_mean / 6) * F(5, 6)), (first, second)


def test_r4_5_equal_averages_keep_the_larger_roll_in_either_order() -> None:
    # SUSTAINED HITS D3 and 2 both average 2: D3 is kept (M77), so 4 hits happen: a 6 (1/6), then a 3 on the D3 (1/3)
    for abilities in ("SUSTAINED HITS D3, SUSTAINED HITS 2", "SUSTAINED HITS 2, SUSTAINED HITS D3"):
        hits = mathhammer.run(f"A1 BS4+ S8 AP-6 D1 [{abilities}]", OPEN, method="exact").stages["hits"]
        assert close(hits.p_at_least(4), F(1, 18)) and close(hits.mean(), F(1, 2) + F(2, 6)), abilities
    attack = mathhammer.build(GUN + " [SUSTAINED HITS D3]", OPEN, detachment="kauyon", round=3, guided=True)
    assert any("adds nothing (R-4.5)" in line for line in attack.explain)  # Kauyon's SH2 does not replace D3


def test_r4_5_anti_ranks_the_lower_threshold_higher() -> None:
    from mathhammer.notation import parse_ability

    low, high = parse_ability("ANTI-INFANTRY 2+"), parse_ability("ANTI-INFANTRY 4+")
    assert low.rank > high.rank
    w = mathhammer.build("A1 BS4+ S4 AP0 D1 [ANTI-INFANTRY 4+, ANTI-INFANTRY 2+]", OPEN).matchup.weapons[0].weapon
    assert w.get(low.ability) == low


def test_r5_5_the_output_names_the_anti_that_applies() -> None:
    weapon = "A4 BS4+ S4 AP0 D1 [ANTI-INFANTRY 4+, ANTI-VEHICLE 2+]"
    for keyword, named, crit in (("VEHICLE", "ANTI-VEHICLE 2+", 2), ("INFANTRY", "ANTI-INFANTRY 4+", 4)):
        result = cli("shoot", weapon, "-t", f"T4 SV7+ W1 MODELS10 [{keyword}]", "--exact", "-f", "json")
        wound = json.loads(result.stdout)["thresholds"]["wound"]
        assert (wound["anti"], wound["critical_on"]) == (named, crit)


def test_r11_4_the_observer_shooting_the_spotted_unit_gets_sh2() -> None:
    # ruling A14: the Observer shares "their Spotted unit"; it gets no BS change from FtGG itself
    assert close(mean(GUN, detachment="kauyon", round=3, observer=True), (F(1, 2) + F(2, 6)) * F(5, 6))


def test_r11_3_gunrig_railgun_sh1_in_kauyon_round_3_and_never_guided() -> None:
    # R-11.3's test values: 19/9 plain, 19/6 with SUSTAINED HITS 1 (E[hits] 1/3 -> 1/2)
    assert close(mean("railgun", "knight"), F(19, 9))
    assert close(mean("railgun", "knight", detachment="kauyon", round=3), F(19, 6))
    with pytest.raises(MathhammerError, match="FORTIFICATION"):
        mathhammer.build("railgun", "knight", detachment="kauyon", round=3, guided=True)
    with pytest.raises(MathhammerError, match="FORTIFICATION"):
        mathhammer.build("railgun", "knight", observer=True)


# -- For the Greater Good ---------------------------------------------------------------

def test_r11_2_guided_bs_improved_against_spotted_worsened_otherwise() -> None:
    assert close(mean(GUN, guided=True), F(2, 3) * F(5, 6))
    assert close(mean(GUN, guided=True, spotted=False), F(1, 3) * F(5, 6))
    assert close(mean(GUN, spotted=False), F(1, 2) * F(5, 6))  # not Guided: nothing changes


def test_r11_2_markerlight_ignores_cover_only_for_the_spotted_unit() -> None:
    gun, target = "A1 BS4+ S8 AP0 D1", "T4 SV4+ W100"
    # Guided (BS3+: 2/3), wound 5/6; in cover the 4+ save becomes 3+ (fails 1/3), ignored: 4+ (fails 1/2)
    assert close(mean(gun, target, guided=True, cover=True), F(2, 3) * F(5, 6) * F(1, 3))
    assert close(mean(gun, target, guided=True, markerlight=True, cover=True), F(2, 3) * F(5, 6) * F(1, 2))
    # not the Spotted unit: BS5+ and cover stands
    assert close(mean(gun, target, guided=True, markerlight=True, spotted=False, cover=True),
                 F(1, 3) * F(5, 6) * F(1, 3))


def test_r11_1_a_unit_without_the_ability_cannot_be_guided(library) -> None:
    with pytest.raises(MathhammerError, match="For the Greater Good"):
        mathhammer.build("intercessor squad", OPEN, guided=True)  # Space Marines
    # a Strike Team has the ability (its profile's rules); Guided, its pulse rifles hit on 3+
    strike = mathhammer.build("strike team/pulse rifle", OPEN, guided=True)
    assert strike.matchup.context.bs_improve == 1


def test_r11_6_an_observer_with_markerlight_in_its_profile(library) -> None:
    # Pathfinders have MARKERLIGHT: as the Observer using Coordinate to Engage their attacks at the
    # Spotted unit ignore cover without --markerlight
    attack = mathhammer.build("pathfinder team/pulse carbine", OPEN, observer=True, detachment="kauyon", round=1,
                              stratagem="coordinate to engage")
    assert "IGNORES COVER" in str(attack.matchup.weapon.abilities)
    assert attack.matchup.context.bs_improve == 1


def test_r11_1_guided_only_in_the_shooting_phase() -> None:
    with pytest.raises(MathhammerError, match="Shooting phase"):
        mathhammer.build(GUN, OPEN, guided=True, overwatch=True)
    r = cli("fight", "A1 WS4+ S4 AP0 D1", "-t", OPEN, "--guided")
    assert r.exit_code == 2  # fight has no --guided option at all


def test_markerlight_needs_a_guided_or_observer_unit() -> None:
    with pytest.raises(MathhammerError, match="Guided or Observer"):
        mathhammer.build(GUN, OPEN, markerlight=True)


def test_r11_1_every_attacking_unit_is_checked_not_only_a_lone_one(library) -> None:
    # several units firing together: each must have For the Greater Good to be Guided; the
    # Gunrig never is, so its railgun is not made BS4+ by another unit's ability
    with pytest.raises(MathhammerError, match="Tidewall Gunrig cannot be a Guided unit"):
        mathhammer.build(["railgun", "strike team"], OPEN, guided=True)
    with pytest.raises(MathhammerError, match="Intercessor Squad cannot be a Guided unit"):
        mathhammer.build(["intercessor squad", "assault intercessor squad"], OPEN, guided=True)
    with pytest.raises(MathhammerError, match="Tidewall Gunrig cannot be an Observer unit"):
        mathhammer.build("railgun", OPEN, observer=True)
    # two T'au units that both have it: every weapon group gains the BS improvement (+1, R-11.2)
    both = ["strike team/pulse rifle", "pathfinder team/pulse carbine"]
    assert mean(both, guided=True) == pytest.approx(mean(both, bs_improve=1), abs=1e-12)
    assert mean(both, guided=True) > mean(both) + 0.1


def test_r3_8_kroot_excluded_when_firing_beside_another_unit(library) -> None:
    with pytest.raises(MathhammerError, match="excludes KROOT units"):
        mathhammer.build(["kroot carnivores", "strike team"], OPEN, detachment="montka", round=2,
                         stratagem="pinpoint counter-offensive", range=6)


def test_an_inline_weapon_beside_a_unit_is_taken_to_have_ftgg(library) -> None:
    attack = mathhammer.build(["strike team/pulse rifle", GUN], OPEN, guided=True)
    assert any("an attacker is inline" in line for line in attack.explain)


def test_battle_options_that_nothing_looks_at_are_warned_about() -> None:
    # a typo or a misunderstanding must not pass in silence: each option names itself
    for kw, option in (({"trap": True}, "--trap"), ({"range": 6}, "--range"), ({"round": 2}, "--round"),
                       ({"spotted": False}, "--not-spotted")):
        notes = mathhammer.build(GUN, OPEN, **kw).notes
        assert any(n.startswith(option + ":") and "changes nothing" in n for n in notes), (kw, notes)
    # looked at: no warning
    assert not mathhammer.build(GUN, OPEN, detachment="kauyon", round=3).notes
    assert not mathhammer.build(GUN, OPEN, guided=True, spotted=False).notes
    assert not mathhammer.build(GUN, OPEN, detachment="kauyon", round=3, stratagem="point-blank ambush",
                                range=6).notes
    r = cli("shoot", GUN, "-t", OPEN, "--exact", "--trap")
    assert r.exit_code == 0 and "--trap: no army rule" in r.stderr


def test_an_option_pushed_out_of_range_by_an_effect_names_the_effect() -> None:
    with pytest.raises(MathhammerError, match="once For the Greater Good"):
        mathhammer.build(GUN, OPEN, guided=True, bs_improve=6)


def test_a17_the_codex_wording_of_ftgg_has_no_penalty_and_no_guided_unit_off_the_spotted_one() -> None:
    # A17: the index text is the default; the codex text is switchable. At the Spotted unit both
    # improve BS by 1 (4+ -> 3+: 2/3); at another unit the index text worsens BS by 1 (5+: 1/3)
    # while under the codex text the unit is not Guided at all (4+: 1/2).
    assert close(mean(GUN, guided=True, ftgg="codex"), F(2, 3) * F(5, 6))
    assert close(mean(GUN, guided=True, spotted=False, ftgg="index"), F(1, 3) * F(5, 6))
    assert close(mean(GUN, guided=True, spotted=False, ftgg="codex"), F(1, 2) * F(5, 6))
    # Mont'ka's Killing Blow is for a Guided unit: not off the Spotted unit under the codex text
    # (BS4+ plain: 1/2 x 5/6), with LETHAL HITS and BS5+ under the index text (a 6 wounds
    # automatically: 1/6 + (1/3 - 1/6) x 5/6)
    assert close(mean(GUN, guided=True, spotted=False, ftgg="codex", detachment="montka", round=1),
                 F(1, 2) * F(5, 6))
    assert close(mean(GUN, guided=True, spotted=False, detachment="montka", round=1),
                 F(1, 6) + F(1, 6) * F(5, 6))
    with pytest.raises(MathhammerError, match="--ftgg"):
        mathhammer.build(GUN, OPEN, guided=True, ftgg="rulebook")
    r = cli("shoot", GUN, "-t", OPEN, "--exact", "--guided", "--not-spotted", "--ftgg", "codex", "-f", "json")
    assert r.exit_code == 0, r.output
    assert close(json.loads(r.stdout)["damage"]["mean"], F(1, 2) * F(5, 6))
    assert "changes nothing" not in r.stderr  # --not-spotted and --ftgg were both looked at
    assert any(n.startswith("--ftgg:") for n in mathhammer.build(GUN, OPEN, ftgg="codex").notes)


# -- Mont'ka: Killing Blow --------------------------------------------------------------

def test_r11_5_lethal_hits_while_guided_in_rounds_1_to_3() -> None:
    # Guided, BS3+: a 6 (1/6) wounds automatically, a 3-5 (1/2) wounds on 2+ (5/6)
    for rnd in (1, 2, 3):
        assert close(mean(GUN, detachment="montka", round=rnd, guided=True), F(1, 6) + F(1, 2) * F(5, 6))
    assert close(mean(GUN, detachment="montka", round=4, guided=True), F(2, 3) * F(5, 6))  # no Lethal in round 4


def test_r11_5_assault_in_rounds_1_to_3_only() -> None:
    def abilities(rnd: int) -> str:
        return str(mathhammer.build(GUN, OPEN, detachment="montka", round=rnd).matchup.weapon.abilities)

    assert "ASSAULT" in abilities(3) and "ASSAULT" not in abilities(4)
    assert "LETHAL" not in abilities(2)  # Lethal Hits only while Guided


def test_detachment_needs_the_round_and_a_known_name() -> None:
    with pytest.raises(MathhammerError, match="battle round"):
        mathhammer.build(GUN, OPEN, detachment="kauyon")
    with pytest.raises(ProfileError, match="unknown detachment"):
        mathhammer.build(GUN, OPEN, detachment="ta'shiro", round=1)
    for name in ("Mont'ka", "MONTKA", "mont ka"):
        assert mathhammer.build(GUN, OPEN, detachment=name, round=1).explain


def test_a_detachment_is_for_its_own_faction(library) -> None:
    with pytest.raises(MathhammerError, match="T'au Empire"):
        mathhammer.build("intercessor squad", OPEN, detachment="kauyon", round=3)


# -- stratagems -------------------------------------------------------------------------------

def test_r7_4_point_blank_ambush_within_9_inches() -> None:
    gun, target = "A1 BS4+ S8 AP0 D1", "T4 SV4+ W100"
    plain = F(1, 2) * F(5, 6) * F(1, 2)
    assert close(mean(gun, target), plain)
    # AP0 -> AP-1: the 4+ save becomes 5+ (fails 2/3); round 3 of Kauyon also gives SUSTAINED HITS 1
    assert close(mean(gun, target, detachment="kauyon", round=3, stratagem="point-blank ambush", range=9),
                 (F(1, 2) + F(1, 6)) * F(5, 6) * F(2, 3))
    with pytest.raises(MathhammerError, match="within 9"):
        mathhammer.build(gun, target, detachment="kauyon", round=3, stratagem="Point-blank Ambush", range=10)
    with pytest.raises(MathhammerError, match="--range|range"):
        mathhammer.build(gun, target, detachment="kauyon", round=3, stratagem="Point-blank Ambush")
    for rnd in (1, 2):
        with pytest.raises(MathhammerError, match=f"battle round {rnd}"):
            mathhammer.build(gun, target, detachment="kauyon", round=rnd, stratagem="Point-blank Ambush", range=3)


def test_r7_4_focused_fire_refused_in_rounds_4_and_5() -> None:
    gun, target = "A1 BS4+ S8 AP0 D1", "T4 SV4+ W100"
    for rnd in (1, 2, 3):
        assert close(mean(gun, target, detachment="montka", round=rnd, stratagem=["FOCUSED-FIRE"]),
                     F(1, 2) * F(5, 6) * F(2, 3))
    for rnd in (4, 5):
        with pytest.raises(MathhammerError, match=f"round {rnd}"):
            mathhammer.build(gun, target, detachment="montka", round=rnd, stratagem="focused fire")
    with pytest.raises(MathhammerError, match="Mont'ka stratagem"):
        mathhammer.build(gun, target, detachment="kauyon", round=1, stratagem="focused fire")
    with pytest.raises(MathhammerError, match="Mont'ka stratagem"):
        mathhammer.build(gun, target, stratagem="focused fire")
    with pytest.raises(MathhammerError, match="Fight phase"):
        mathhammer.build("A1 WS4+ S8 AP0 D1", target, melee=True, detachment="montka", round=1,
                         stratagem="focused fire")


def test_r5_4_a_tempting_trap() -> None:
    gun = "A1 BS4+ S4 AP-6 D1"  # S4 vs T4: 4+ to wound; +1 -> 3+; round 3 of Kauyon: SUSTAINED HITS 1 too
    hits = F(1, 2) + F(1, 6)
    assert close(mean(gun, detachment="kauyon", round=3, stratagem="a tempting trap", trap=True), hits * F(2, 3))
    with pytest.raises(MathhammerError, match="Trap objective"):
        mathhammer.build(gun, OPEN, detachment="kauyon", round=3, stratagem="a tempting trap")
    with pytest.raises(MathhammerError, match="battle round 2"):
        mathhammer.build(gun, OPEN, detachment="kauyon", round=2, stratagem="a tempting trap", trap=True)
    # with a +1 from elsewhere the request is +2, applied +1
    assert close(mean(gun, detachment="kauyon", round=3, stratagem="a tempting trap", trap=True, wound_mod=1),
                 hits * F(2, 3))


def test_r5_4_the_modifier_is_named_after_its_source() -> None:
    """The +1 of A Tempting Trap is shown as the stratagem's, not as ``--wound-mod`` (which
    was not given); with ``--wound-mod 1`` too, both are listed and the clamp warning names both."""
    gun = "A1 BS4+ S4 AP-6 D1"
    args = ["shoot", gun, "-t", OPEN, "--detachment", "kauyon", "--round", "3", "--stratagem", "a tempting trap",
            "--trap", "--exact", "-f", "json"]
    r = cli(*args)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["thresholds"]["wound"]["modifier"] == {
        "requested": 1, "applied": 1, "clamped": False, "parts": {"A Tempting Trap": 1}}
    r = cli(*args, "--wound-mod", "1")
    doc = json.loads(r.stdout)
    assert doc["thresholds"]["wound"]["modifier"]["parts"] == {"--wound-mod": 1, "A Tempting Trap": 1}
    assert any("--wound-mod +1, A Tempting Trap +1: requested +2, clamped to +1" in w for w in doc["warnings"])


def test_r11_2_torrent_names_what_has_no_effect() -> None:
    """A Guided TORRENT weapon makes no Hit roll: the warning names For the Greater Good's BS
    change, and ``--bs-improve`` only when it was given."""
    flamer = "A D6 BS- S4 AP0 D1 [TORRENT]"
    r = cli("shoot", flamer, "-t", OPEN, "--guided", "--exact", "-f", "json")
    warnings = json.loads(r.stdout)["warnings"]
    assert any("For the Greater Good has no effect: TORRENT" in w for w in warnings), warnings
    assert not any("--bs-improve" in w for w in warnings), warnings
    r = cli("shoot", flamer, "-t", OPEN, "--guided", "--bs-improve", "1", "--exact", "-f", "json")
    warnings = json.loads(r.stdout)["warnings"]
    assert any("--bs-improve has no effect: TORRENT" in w for w in warnings), warnings
    assert any("For the Greater Good has no effect: TORRENT" in w for w in warnings), warnings


def test_r0_4_a_characteristic_change_names_its_sources() -> None:
    """The explain line of a BS or AP change names each part: the option's and the rule's."""
    r = cli("shoot", "A2 BS4+ S5 AP-1 D1", "-t", OPEN, "--guided", "--bs-improve", "1", "--exact", "-f", "json")
    assert ("R-0.4: BS4+ improved by 2 (--bs-improve +1, For the Greater Good +1) -> BS2+ (a characteristic change, "
            "not capped)") in json.loads(r.stdout)["explain"]
    r = cli("shoot", "A2 BS4+ S5 AP-1 D1", "-t", OPEN, "--detachment", "kauyon", "--round", "3", "--stratagem",
            "point-blank ambush", "--range", "6", "--exact", "-f", "json")
    assert "R-7.4: AP-1 improved by 1 (Point-blank Ambush +1) -> AP-2" in json.loads(r.stdout)["explain"]


def test_r11_6_coordinate_to_engage() -> None:
    assert close(mean(GUN, detachment="kauyon", round=1, observer=True, stratagem="coordinate to engage"),
                 F(2, 3) * F(5, 6))
    with pytest.raises(MathhammerError, match="Observer"):
        mathhammer.build(GUN, OPEN, detachment="kauyon", round=1, stratagem="coordinate to engage")
    with pytest.raises(MathhammerError, match="Spotted"):
        mathhammer.build(GUN, OPEN, detachment="kauyon", round=1, observer=True, spotted=False,
                         stratagem="coordinate to engage")


def test_r3_8_pinpoint_counter_offensive(library) -> None:
    # a full re-roll of the Hit roll, failures re-rolled: 1/2 + 1/2 x 1/2
    assert close(mean(GUN, detachment="montka", round=4, stratagem="pinpoint counter-offensive"), F(3, 4) * F(5, 6))
    # broadest permission: re-roll 1s and the stratagem's full re-roll give the full re-roll
    assert close(mean(GUN, detachment="montka", round=4, stratagem="pinpoint counter-offensive", reroll_hits="ones"),
                 F(3, 4) * F(5, 6))
    with pytest.raises(MathhammerError, match="KROOT"):
        mathhammer.build("kroot carnivores", OPEN, detachment="montka", round=1, stratagem="pinpoint counter-offensive")


def test_r8_4_counterfire_defence_systems_is_the_defenders() -> None:
    assert close(mean("A1 BS4+ S8 AP-6 D2", detachment="kauyon", round=1,
                      stratagem="counterfire defence systems"), F(1, 2) * F(5, 6) * 1)  # D2 - 1
    # the railgun's Devastating Wounds inflict D6+5: S20 vs T8 wounds on 2+ with the twin-linked
    # re-roll (35/36), no save at AP-5 vs Sv3+, so each wound inflicts 8.5 (7.5 + ... ) on average
    got = mean("railgun", "T8 SV3+ W100", stratagem="counterfire defence systems")
    assert close(got, F(1, 3) * F(35, 36) * F(17, 2))
    with pytest.raises(MathhammerError, match="T'au Empire stratagem"):
        mathhammer.build("railgun", "knight", stratagem="counterfire defence systems")
    with pytest.raises(MathhammerError, match="Fight phase"):
        mathhammer.build("A1 WS4+ S8 AP0 D1", OPEN, melee=True, stratagem="counterfire defence systems")


def test_r3_7_command_reroll_as_a_stratagem_lists_its_cp() -> None:
    r = mathhammer.run("railgun", "knight", method="exact", stratagem="command re-roll")
    hit = r.to_dict()["thresholds"]
    assert r.to_dict()["stratagems"] == [{"name": "Command Re-roll", "cp": 1, "side": "attacker", "detachment": None}]
    # P(hit) at BS5+ becomes 1/3 + 2/3 x 1/3 = 5/9, so the mean is 19/9 x 5/3
    assert close(r.damage.mean(), F(19, 9) * F(5, 3)), hit
    given = mathhammer.run("railgun", "knight", method="exact", command_reroll="hit")
    assert given.to_dict()["stratagems"] == r.to_dict()["stratagems"]


def test_r2_9_fire_overwatch_as_a_stratagem() -> None:
    r = mathhammer.run(GUN, OPEN, method="exact", stratagem="fire overwatch")
    assert close(r.damage.mean(), F(1, 6) * F(5, 6))
    assert [s["name"] for s in r.to_dict()["stratagems"]] == ["Fire Overwatch"]
    with pytest.raises(MathhammerError, match="TITANIC"):
        mathhammer.run(GUN, "T12 SV2+ W30 [TITANIC]", method="exact", stratagem="fire overwatch")


def test_stratagem_names_and_refusals() -> None:
    with pytest.raises(ProfileError, match="unknown stratagem") as e:
        mathhammer.build(GUN, OPEN, stratagem="focussed fire")
    assert "Focused Fire" in e.value.hint
    with pytest.raises(MathhammerError, match="twice"):
        mathhammer.build(GUN, OPEN, stratagem=["command re-roll", "Command Re-roll"])
    with pytest.raises(MathhammerError, match="its own command") as e:
        mathhammer.build(GUN, OPEN, stratagem="tank shock")
    assert "mathhammer tank-shock" in e.value.hint


def test_stratagems_add_up_their_cp_in_json() -> None:
    r = cli("shoot", GUN, "-t", OPEN, "--exact", "-f", "json", "--detachment", "montka", "--round", "2",
            "--stratagem", "focused fire", "--stratagem", "counterfire defence systems")
    assert r.exit_code == 0, r.output
    used = json.loads(r.stdout)["stratagems"]
    assert [(u["name"], u["cp"], u["side"]) for u in used] == [("Focused Fire", 1, "attacker"),
                                                              ("Counterfire Defence Systems", 2, "defender")]
    table = cli("shoot", GUN, "-t", OPEN, "--exact", "--detachment", "montka", "--round", "2",
                "--stratagem", "focused fire", "--stratagem", "counterfire defence systems")
    assert "3 CP in all" in table.stdout


def test_refusals_on_the_command_line_are_one_line() -> None:
    r = cli("shoot", "railgun", "-t", "knight", "--detachment", "montka", "--round", "4", "--stratagem",
            "focused fire", "--exact")
    assert r.exit_code == 1
    assert "Traceback" not in r.output and "round 4" in r.stderr
    r = cli("shoot", "railgun", "-t", "knight", "--guided", "--exact")
    assert r.exit_code == 1 and "cannot be a Guided unit" in r.stderr
    r = cli("shoot", "railgun", "-t", "knight", "--round", "6", "--exact")
    assert r.exit_code == 1 and "1 to 5" in r.stderr


def test_every_effect_names_its_rule_in_explain() -> None:
    attack = mathhammer.build(GUN, OPEN, detachment="kauyon", round=3, guided=True, markerlight=True,
                              stratagem=["point-blank ambush"], range=6)
    lines = [line for line in attack.explain if "R-" in line]
    assert any("R-11.2" in line for line in lines) and any("R-11.4" in line for line in lines)
    assert any("R-7.4" in line and "1 CP" in line for line in lines)


# -- Firing Deck ------------------------------------------------------------------------------

def test_firing_deck_adds_one_weapon_per_embarked_model(library) -> None:
    target = "T4 SV4+ W1000"  # so much W that the damage of the weapons adds up
    alone = mean("gunrig", target)
    rifles = mean("10x strike team/pulse rifle", target)
    assert abs(mean("gunrig", target, embarked=["strike team"]) - (alone + rifles)) < 1e-9
    attack = mathhammer.build("gunrig", target, embarked=["strike team"])
    assert [(g.weapon.name, g.count) for g in attack.matchup.weapons] == [
        ("Supremacy railgun", 1), ("Pulse rifle", 9), ("Pulse rifle", 1)]
    assert any("Firing Deck 11" in line for line in attack.explain)


def test_firing_deck_limits(library) -> None:
    with pytest.raises(MathhammerError, match="Firing Deck 11 allows at most 11"):
        mathhammer.build("gunrig", OPEN, embarked=["strike team", "2x breacher team"])
    with pytest.raises(MathhammerError, match="ONE SHOT"):
        mathhammer.build("gunrig", OPEN, embarked=["broadside battlesuits/seeker missile"])
    with pytest.raises(MathhammerError, match="no Firing Deck"):
        mathhammer.build("hammerhead gunship", OPEN, embarked=["strike team"])
    assert mathhammer.build("gunrig", OPEN, embarked=["5x strike team"]).matchup.weapons[1].count == 5
    # the transport is not its own passenger, a weapon's count is at most its unit's models, and
    # --models cannot multiply what the Firing Deck counts
    with pytest.raises(MathhammerError, match="cannot be embarked in itself"):
        mathhammer.build("gunrig", OPEN, embarked=["gunrig"])
    with pytest.raises(MathhammerError, match="cannot be embarked in itself"):
        mathhammer.build("gunrig", OPEN, embarked=["railgun"])
    for titanic in ("knight", "knight paladin/heavy stubber"):  # no transport carries a TITANIC unit
        with pytest.raises(MathhammerError, match="Knight Paladin is TITANIC: no transport carries it"):
            mathhammer.build("gunrig", OPEN, embarked=[titanic])
    with pytest.raises(MathhammerError, match="Strike Team has 10 models"):
        mathhammer.build("gunrig", OPEN, embarked=["11x strike team/pulse rifle"])
    with pytest.raises(MathhammerError, match="--models"):
        mathhammer.build("gunrig", OPEN, embarked=["strike team"], models=3)
    r = cli("shoot", "gunrig", "-t", OPEN, "--embarked", "bogus", "--exact")
    assert r.exit_code == 1 and r.stderr.startswith("Error: --embarked: unknown")
    for bad in (5, [5], [""]):
        with pytest.raises(MathhammerError, match="--embarked"):
            mathhammer.build("gunrig", OPEN, embarked=bad)  # type: ignore[arg-type]
    with pytest.raises(MathhammerError, match="--stratagem: must be a name"):
        mathhammer.build(GUN, OPEN, stratagem="")


def test_m71_embarked_weapons_are_the_transports_so_its_modifiers_apply(tmp_path) -> None:
    # the transport "counts as being equipped with" the embarked models' weapons: its +1 to hit
    # applies to them, the passengers' own re-roll does not. Each of 3 attacks: BS4+ with +1
    # (2/3), wounding on 2+ (5/6), no save (AP-6 vs 6+): 3 x 2/3 x 5/6 = 5/3.
    (tmp_path / "deck.yaml").write_text(
        "schema: 1\nunits:\n"
        "  - name: Deck Carrier\n    models: [{name: c, count: 1, T: 9, Sv: 3, W: 12}]\n"
        "    keywords: [VEHICLE, TRANSPORT]\n    firing_deck: 2\n    modifiers: {hit_mod: 1}\n"
        "    weapons:\n      - {name: Carrier gun, range: 24, A: '1', BS: 4, S: 8, AP: -6, D: '1', abilities: []}\n"
        "  - name: Deck Riders\n    models: [{name: r, count: 2, T: 3, Sv: 4, W: 1}]\n"
        "    modifiers: {reroll_hits: failed}\n"
        "    weapons:\n      - {name: Rider gun, range: 24, A: '1', BS: 4, S: 8, AP: -6, D: '1', abilities: []}\n",
        encoding="utf-8")
    lib = mathhammer.library([tmp_path], use_env=False)
    result = mathhammer.run("deck carrier", OPEN, embarked=["deck riders"], lib=lib, method="exact")
    assert close(result.damage.mean(), 3 * F(2, 3) * F(5, 6))


def test_compare_columns_for_the_battle(tmp_path) -> None:
    sheet = tmp_path / "rows.csv"
    sheet.write_text("name,weapon,detachment,round,stratagem,guided\n"
                     f"plain,{GUN},,,,\n"
                     f"guided,{GUN},kauyon,3,,true\n"
                     f"trap,{GUN},montka,2,focused fire & command re-roll,\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["compare", str(sheet), "-t", OPEN, "--exact", "-f", "json"], env=ENV)
    assert r.exit_code == 0, r.output
    records = {rec["label"]: rec for rec in json.loads(r.stdout)["records"]} if r.stdout.strip().startswith("{") \
        else {rec["label"]: rec for rec in json.loads(r.stdout)}
    assert close(records["plain"]["damage"]["mean"], F(1, 2) * F(5, 6))
    assert close(records["guided"]["damage"]["mean"], F(5, 6))
    # each record lists the stratagems its row used with their CP (1 CP each in the seed document)
    assert records["plain"]["stratagems"] == []
    assert [(u["name"], u["cp"]) for u in records["trap"]["stratagems"]] == [("Focused Fire", 1),
                                                                            ("Command Re-roll", 1)]


# -- the data ---------------------------------------------------------------------------------

def test_the_catalogue_reads_and_is_checked() -> None:
    c = catalogue()
    assert {d.id for d in c.detachments} == {"kauyon", "montka"}
    assert {s.name for s in c.stratagems} >= {"Point-blank Ambush", "Focused Fire", "A Tempting Trap",
                                              "Coordinate to Engage", "Pinpoint Counter-offensive",
                                              "Counterfire Defence Systems", "Command Re-roll", "Fire Overwatch",
                                              "Tank Shock"}
    bad = {"schema": 1, "stratagems": [{"id": "x", "name": "X", "cp": 1, "rule": "R-1", "phases": ["shooting"],
                                        "give": {"bs_improv": 1}, "says": "x"}]}
    with pytest.raises(ProfileError, match="unknown key") as e:
        read("t.yaml", bad)
    assert "stratagems[0].give" in e.value.where


#: Each stratagem of R-11.7: (name, its detachment, what else it needs, the battle rounds its
#: RESTRICTIONS rule out (seeds: Point-blank Ambush and A Tempting Trap "cannot [be used] during
#: the first or second battle rounds", Focused Fire not in the fourth or fifth; the others name
#: none), the mean's ratio to the same attack without it). The attack: A1 BS4+ S4 AP0 D2 at T4
#: Sv4+: hits, wounds and fails its save on 4+ each. Improving AP by 1 makes the save 5+ (2/3
#: fail, not 1/2: x 4/3); +1 to wound makes it 3+ (x 4/3); re-rolling the Hit roll (the whole
#: roll, or the one die of a Command Re-roll) hits on 1/2 + 1/2 x 1/2 = 3/4 (x 3/2); -1 Damage
#: turns D2 into D1 (x 1/2).
_R11_7 = [
    ("point-blank ambush", "kauyon", {"range": 3}, {1, 2}, F(4, 3)),
    ("a tempting trap", "kauyon", {"trap": True}, {1, 2}, F(4, 3)),
    ("focused fire", "montka", {}, {4, 5}, F(4, 3)),
    ("pinpoint counter-offensive", "montka", {}, set(), F(3, 2)),
    ("counterfire defence systems", "montka", {}, set(), F(1, 2)),
    ("command re-roll", "kauyon", {}, set(), F(3, 2)),
]


@pytest.mark.parametrize(("name", "detachment", "needs", "refused", "ratio"), _R11_7, ids=[s[0] for s in _R11_7])
def test_r11_7_each_stratagem_is_refused_in_the_rounds_its_restriction_names(
        name: str, detachment: str, needs: dict[str, object], refused: set[int], ratio: F) -> None:
    gun, target = "A1 BS4+ S4 AP0 D2", "T4 SV4+ W100"
    for rnd in range(1, 6):
        if rnd in refused:
            with pytest.raises(MathhammerError, match=f"round {rnd}"):
                mathhammer.build(gun, target, detachment=detachment, round=rnd, stratagem=name, **needs)
            continue
        without = mean(gun, target, detachment=detachment, round=rnd, **needs)
        assert close(mean(gun, target, detachment=detachment, round=rnd, stratagem=name, **needs), without * ratio), rnd


def test_r11_7_counterfire_also_lowers_devastating_wounds_mortal_damage() -> None:
    """R-11.7 / R-6.2: a Critical Wound of [DEVASTATING WOUNDS] inflicts mortal wounds equal to
    the Damage characteristic, which Counterfire has lowered. Every attack hits ([TORRENT]); S4
    vs T4 wounds on 4+: a 6 (1/6) is a Critical Wound, 3 mortal wounds (2 with Counterfire); a 4
    or 5 (2/6) a normal wound that Sv4+ fails on half, 3 damage (2)."""
    gun, target = "A1 BS N/A S4 AP0 D3 [TORRENT] [DEVASTATING WOUNDS]", "T4 SV4+ W100"
    assert close(mean(gun, target), F(1, 6) * 3 + F(2, 6) * F(1, 2) * 3)
    assert close(mean(gun, target, stratagem="counterfire defence systems"), F(1, 6) * 2 + F(2, 6) * F(1, 2) * 2)


def test_a1_skill_floor_on_the_command_line_and_in_compare(tmp_path) -> None:
    """--skill-floor reaches both engines (exact: 5/6 x 5/6 without it, 4/6 x 5/6 with it: BS2+
    improved by 1 with -1 to hit, S8 vs T4 wounds on 2+, AP-6 leaves no save), is shown in the
    JSON's context and thresholds, and a compare row takes it as a column."""
    args = ["shoot", "A1 BS2+ S8 AP-6 D1", "-t", OPEN, "--bs-improve", "1", "--hit-mod", "-1", "-f", "json"]
    free = json.loads(cli(*args, "--exact").stdout)
    floored = json.loads(cli(*args, "--exact", "--skill-floor", "2").stdout)
    assert close(free["damage"]["mean"], F(5, 6) * F(5, 6)) and free["context"]["skill_floor"] == 0
    assert close(floored["damage"]["mean"], F(4, 6) * F(5, 6)) and floored["context"]["skill_floor"] == 2
    assert (free["thresholds"]["hit"]["skill_applied"], floored["thresholds"]["hit"]["skill_applied"]) == (1, 2)
    sim = json.loads(cli(*args, "--skill-floor", "2", "--trials", "200000", "--seed", "5").stdout)["damage"]
    assert abs(sim["mean"] - float(F(4, 6) * F(5, 6))) < 5 * sim["sem"]  # 5/6 x 5/6 is 9 s.e. away
    bad = cli(*args, "--exact", "--skill-floor", "9")
    assert bad.exit_code == 1 and "--skill-floor" in bad.stderr and "Traceback" not in bad.output
    sheet = tmp_path / "rows.csv"
    sheet.write_text("name,weapon,bs_improve,hit_mod,skill_floor\nfree,A1 BS2+ S8 AP-6 D1,1,-1,\n"
                     "floored,A1 BS2+ S8 AP-6 D1,1,-1,2\n", encoding="utf-8")
    rows = json.loads(cli("compare", str(sheet), "-t", OPEN, "--exact", "-f", "json").stdout)
    means = {r["label"]: r["damage"]["mean"] for r in rows["records"]}
    assert close(means["free"], F(25, 36)) and close(means["floored"], F(20, 36))


def test_a1_skill_floor_limits_what_army_rules_and_a_weapons_own_modifiers_give() -> None:
    """The floor holds wherever the change comes from. Guided at the Spotted unit (R-2.4: BS
    improved by 1): BS3+ would be 2+, with -1 to hit 3+ (4/6); under a floor of 3 it stays 3+
    and hits on 4+ (3/6). A weapon group with its own attacker side (a profile's modifiers):
    BS4+ improved by 3 is 1+, limited to 3+, so with its own -1 it hits on 4+ (3/6) beside a
    BS3+ group hitting on 4+ too. S8 vs T4 wounds on 2+ (5/6); SV7+: no save."""
    from dataclasses import replace

    from mathhammer.model import AttackerSide

    gun, target = "A1 BS3+ S8 AP-6 D1", "T4 SV7+ W100"
    assert close(mean(gun, target, hit_mod=-1, guided=True), F(4, 6) * F(5, 6))
    assert close(mean(gun, target, hit_mod=-1, guided=True, skill_floor=3), F(3, 6) * F(5, 6))
    for floor, second in ((0, F(5, 6)), (3, F(3, 6))):
        attack = mathhammer.build([gun, "A1 BS4+ S8 AP-6 D1"], target, hit_mod=-1, skill_floor=floor)
        first, other = attack.matchup.weapons
        own = replace(other, attacker=AttackerSide(bs_improve=3, hit_mod=-1))
        attack = replace(attack, matchup=replace(attack.matchup, weapons=(first, own)))
        got = mathhammer.run_attack(attack, method="exact").damage.mean()
        assert close(got, (F(3, 6) + second) * F(5, 6)), floor


def test_a7_crit_successful_on_the_command_line() -> None:
    """BS6+ with Critical Hits on 5+ and Sustained Hits 1, S8 vs T4 (2+), AP-6 against Sv6+ (no
    save): 2/6 crits of 2 hits each = 4/6 hits, x 5/6 = 5/9; under the successful wording only
    the 6 hits (2 hits on 1/6 of the attacks), x 5/6 = 5/18. Both engines, JSON and explain."""
    args = ["shoot", "A1 BS6+ S8 AP-6 D1 [SUSTAINED HITS 1]", "-t", OPEN, "--crit-hit", "5", "-f", "json"]
    either = json.loads(cli(*args, "--exact").stdout)
    successful = json.loads(cli(*args, "--exact", "--crit-successful").stdout)
    assert close(either["damage"]["mean"], F(5, 9)) and close(successful["damage"]["mean"], F(5, 18))
    assert (either["context"]["crit_successful"], successful["context"]["crit_successful"]) == (False, True)
    assert successful["thresholds"]["hit"]["critical_on"] == 6
    assert any("A7: a successful unmodified 5+" in line for line in successful["explain"])
    sim = json.loads(cli(*args, "--crit-successful", "--trials", "200000", "--seed", "9").stdout)["damage"]
    assert abs(sim["mean"] - float(F(5, 18))) < 5 * sim["sem"]  # 5/9 is far outside
    fought = json.loads(cli("fight", "A1 WS6+ S8 AP-6 D1 [SUSTAINED HITS 1]", "-t", OPEN, "--crit-hit", "5",
                            "--crit-successful", "--exact", "-f", "json").stdout)
    assert close(fought["damage"]["mean"], F(5, 18))


def test_a7_crit_successful_that_changes_nothing_is_said_to() -> None:
    """The wording matters only where a roll its thresholds make critical could fail: not on its
    own, not for a BS2+ weapon with Critical Hits on 5+, not in Overwatch; it does for a Wound
    roll needing 6s with Critical Wounds on 5+."""
    def warned(*args: str) -> bool:
        d = json.loads(cli("shoot", *args, "--crit-successful", "--exact", "-f", "json").stdout)
        return any(w.startswith("--crit-successful has no effect") for w in d["warnings"])

    assert warned("A1 BS6+ S8 AP-6 D1", "-t", OPEN)
    assert warned("A1 BS2+ S8 AP-6 D1", "-t", OPEN, "--crit-hit", "5")
    assert warned("A1 BS4+ S8 AP-6 D1", "-t", OPEN, "--crit-hit", "5", "--overwatch")
    assert not warned("A1 BS4+ S4 AP-6 D1", "-t", "T8 SV6+ W100", "--crit-wound", "5")
    assert not warned("A1 BS6+ S8 AP-6 D1", "-t", OPEN, "--crit-hit", "5")
