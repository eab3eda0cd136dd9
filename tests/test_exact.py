"""The exact engine (mathhammer/engine/exact.py) against the independent Fraction oracle
(tests/oracles.py), to 1e-12, rule by rule; plus closed forms from RULES.md, its general path
against its fast path, its result contract, and that it never imports numba."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from mathhammer.codes import StageCount
from mathhammer.compile import compile_matchup
from mathhammer.engine import exact
from mathhammer.errors import MatchupError, NotExactError
from mathhammer.model import CommandReroll, Context, Matchup, ModelStats, RerollPolicy, RulesVersion, Target, Unit
from mathhammer.notation import parse_target, parse_weapon
from mathhammer.result import DamageResult

from . import oracles
from .oracles import Scenario as S
from .scenarios import matchup

TOL = 1e-12
STAGE_KEYS = ("attacks", "hits", "critical_hits", "wounds", "critical_wounds", "lethal", "devastating", "unsaved",
              "damage_before_fnp", "damage_after_fnp")


def _pmf(d: dict[int, Fraction]) -> np.ndarray:
    out = np.zeros(max(d) + 1)
    for k, p in d.items():
        out[k] = float(p)
    return out


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal to TOL, and the same support length (trailing zeros are trimmed on both sides)."""
    want = np.trim_zeros(want, "b") if want.any() else want[:1]
    assert got.size == want.size, f"{what}: support 0..{got.size - 1}, oracle 0..{want.size - 1}"
    gap = float(np.abs(got - want).max())
    assert gap <= TOL, f"{what}: max |exact - oracle| = {gap:.3g}"


def _run(s: S, stages: bool = True) -> DamageResult:
    return exact.run(compile_matchup(matchup(s)).inputs, stages=stages)


def _check_oracle(s: S, stages: bool = True) -> None:
    r = _run(s, stages)
    _same(r.damage.probabilities, _pmf(oracles.damage_distribution(s)), "damage")
    _same(r.models_destroyed.probabilities, _pmf(oracles.models_destroyed_distribution(s)), "models_destroyed")
    if stages:
        for key, dist in oracles.stage_distributions(s).items():
            _same(r.stages[key].probabilities, _pmf(dist), key)


# --- every rule and option the oracle supports, 1-3 attacks -----------------------------------
CASES: dict[str, S] = {
    "R_1_1_fixed_attacks": S(attacks="3", bs=3, strength=4, toughness=4, save=4),
    "R_1_2_random_attacks_two_models": S(attacks="D3", models_firing=2, bs=4, save=5, target_models=3, target_wounds=1),
    "R_1_2_d6_attacks": S(attacks="D6", bs=4, save=6),
    "R_1_3_blast": S(attacks="D3", bs=4, blast=True, save=6, target_models=10, target_wounds=1),
    "R_1_4_rapid_fire": S(attacks="1", models_firing=2, bs=3, rapid_fire="D3", save=5),
    "R_1_6_torrent_sustained_has_no_effect": S(attacks="D3", bs=None, sustained="1", strength=5, toughness=4, save=5),
    "R_1_6_torrent_blast": S(attacks="D3", bs=None, blast=True, strength=4, toughness=4, save=5, target_models=5,
                             target_wounds=1),
    "R_0_3_plus_two_to_hit_capped": S(attacks="3", bs=4, hit_mod=2, save=5),
    "R_0_3_minus_two_to_hit_capped": S(attacks="3", bs=3, hit_mod=-2, save=5),
    "R_0_3_save_cap_with_save_mod": S(attacks="3", bs=3, save=4, cover=True, save_mod=1),
    "R_0_4_bs_improve": S(attacks="3", bs=5, bs_improve=2, hit_mod=1, save=6),
    "R_0_5_bs2_minus_one": S(attacks="3", bs=2, hit_mod=-1, strength=8, toughness=4),
    "R_2_3_crit_hit_5_sustained": S(attacks="3", bs=4, crit_hit=5, sustained="1", save=5),
    "R_2_5_heavy_stationary": S(attacks="3", bs=4, heavy_stationary=True, save=5),
    "R_2_6_stealth": S(attacks="3", bs=3, stealth=True, save=6),
    "R_2_6_stealth_ignored_in_melee": S(attacks="3", bs=3, stealth=True, melee=True, save=6),
    "R_2_7_indirect_fire": S(attacks="3", bs=2, indirect=True, save=4),
    "R_2_7_indirect_fire_2023": S(attacks="3", bs=2, indirect=True, save=4, rules="2023"),
    "R_2_9_overwatch": S(attacks="3", bs=3, overwatch=True, sustained="1", save=7),
    "R_3_3_reroll_hit_ones": S(attacks="3", bs=3, reroll_hits="ones", save=6),
    "R_3_4_reroll_failed_hits": S(attacks="3", bs=3, hit_mod=-1, reroll_hits="failed", save=6),
    "R_3_5_non_crit_fishing": S(attacks="3", bs=3, lethal=True, reroll_hits="non_crit", strength=4, toughness=12),
    "R_3_5_best_hits": S(attacks="3", bs=4, sustained="2", reroll_hits="best", save=4),
    "R_3_5_best_wounds_devastating": S(attacks="3", bs=3, strength=5, toughness=5, devastating=True,
                                       reroll_wounds="best", save=2, damage="2"),
    "R_3_6_twin_linked": S(attacks="3", bs=3, strength=5, toughness=6, twin_linked=True),
    "R_3_9_twin_linked_and_reroll_ones": S(attacks="3", bs=4, strength=4, toughness=8, twin_linked=True,
                                           reroll_wounds="ones"),
    "R_3_1_reroll_damage_ones": S(attacks="3", bs=3, damage="D6", reroll_damage="ones", target_models=2,
                                  target_wounds=4),
    "R_3_1_reroll_damage_below_average": S(attacks="3", bs=3, damage="D6+1", reroll_damage="below_average", fnp=6,
                                           target_models=4, target_wounds=3),
    "R_3_1_reroll_saves_failed": S(attacks="3", bs=3, save=3, reroll_saves="failed"),
    "R_3_1_reroll_saves_ones": S(attacks="3", bs=3, save=4, ap=-1, reroll_saves="ones", damage="2", target_models=2,
                                 target_wounds=2),
    "R_3_7_command_reroll_hit": S(attacks="2", bs=5, command_reroll="hit", strength=8, toughness=4),
    "R_3_7_command_reroll_hit_sustained_lethal": S(attacks="3", bs=4, command_reroll="hit", sustained="D3",
                                                   lethal=True, reroll_hits="ones", save=4, damage="2",
                                                   target_models=3, target_wounds=2),
    "R_3_7_command_reroll_hit_torrent_no_effect": S(attacks="2", bs=None, command_reroll="hit", save=4),
    "R_3_7_command_reroll_wound": S(attacks="3", bs=3, command_reroll="wound", strength=4, toughness=8, save=5),
    "R_3_7_command_reroll_wound_devastating": S(attacks="3", bs=3, command_reroll="wound", devastating=True,
                                                sustained="1", strength=4, toughness=5, save=3, damage="D3",
                                                target_models=2, target_wounds=3),
    "R_3_7_command_reroll_wound_twin_linked": S(attacks="3", bs=3, command_reroll="wound", twin_linked=True,
                                                strength=4, toughness=5, save=4),
    "R_3_7_command_reroll_wound_with_reroll_ones": S(attacks="3", bs=3, command_reroll="wound", reroll_wounds="ones",
                                                     strength=4, toughness=4, save=6, lethal=True),
    "R_3_7_command_reroll_save": S(attacks="3", bs=3, command_reroll="save", strength=6, toughness=4, save=3),
    "R_3_7_command_reroll_save_lethal": S(attacks="3", bs=3, command_reroll="save", lethal=True, sustained="1",
                                          strength=4, toughness=8, save=4, invuln=5, ap=-2, damage="2",
                                          target_models=2, target_wounds=3),
    "R_3_7_command_reroll_save_rerolled_ones": S(attacks="3", bs=3, command_reroll="save", reroll_saves="ones",
                                                 save=3),
    "R_3_7_command_reroll_damage": S(attacks="3", bs=3, strength=6, toughness=4, damage="D6",
                                     command_reroll="damage", target_models=3, target_wounds=3),
    "R_3_7_command_reroll_damage_unlimited_fnp": S(attacks="3", bs=3, damage="D3+1", command_reroll="damage",
                                                   fnp=5),
    "R_3_7_command_reroll_damage_devastating_after_normal": S(attacks="3", bs=3, devastating=True, crit_wound=5,
                                                              damage="D6", command_reroll="damage", save=4,
                                                              target_models=2, target_wounds=4),
    "R_3_7_command_reroll_damage_policy_first": S(attacks="3", bs=3, damage="D6", command_reroll="damage",
                                                  reroll_damage="ones", target_models=2, target_wounds=5),
    "R_3_7_command_reroll_attacks": S(attacks="D6", models_firing=2, bs=4, command_reroll="attacks", save=6),
    "R_3_7_command_reroll_attacks_three_models": S(attacks="D3", models_firing=3, bs=4, command_reroll="attacks",
                                                   save=6, target_models=3, target_wounds=1),
    "R_3_7_command_reroll_attacks_blast_rapid_fire": S(attacks="D3", models_firing=2, bs=4, blast=True,
                                                       rapid_fire="1", command_reroll="attacks", save=6,
                                                       target_models=5, target_wounds=1),
    "R_4_1_sustained_1": S(attacks="3", bs=4, sustained="1", strength=5, toughness=5),
    "R_4_1_sustained_2": S(attacks="2", bs=4, sustained="2", strength=5, toughness=5, save=5, damage="2"),
    "R_4_2_sustained_d3": S(attacks="3", bs=3, sustained="D3", strength=5, toughness=5),
    "R_4_3_lethal_vs_6_to_wound": S(attacks="3", bs=3, lethal=True, strength=4, toughness=8),
    "R_4_4_lethal_and_sustained": S(attacks="3", bs=3, lethal=True, sustained="1", strength=4, toughness=8, save=4),
    "R_5_2_wound_mod_plus_one_at_6": S(attacks="3", bs=3, strength=4, toughness=8, wound_mod=1),
    "R_5_2_wound_mod_minus_two": S(attacks="3", bs=3, strength=5, toughness=4, wound_mod=-2),
    "R_5_3_lance_charged": S(attacks="3", bs=3, melee=True, lance_charged=True, strength=6, toughness=6),
    "R_5_5_anti_feeds_devastating": S(attacks="3", bs=3, strength=4, toughness=10, anti=4, devastating=True, save=2,
                                      damage="2"),
    "R_6_railgun_vs_knight": S(attacks="1", bs=5, strength=20, toughness=11, ap=-5, save=3, invuln=5,
                               damage="D6+6", devastating=True, twin_linked=True, target_wounds=26),
    "R_6_4_devastating_excess_lost": S(attacks="3", bs=3, strength=4, toughness=4, devastating=True, save=2,
                                       damage="D6", target_models=5, target_wounds=2),
    "R_6_4_devastating_spill_2023": S(attacks="2", bs=2, strength=8, toughness=4, devastating=True, crit_wound=4,
                                      damage="D6", save=2, target_models=4, target_wounds=2, rules="2023"),
    "R_6_4_devastating_spill_2023_fnp_command_damage": S(attacks="3", bs=3, devastating=True, crit_wound=5,
                                                         damage="D3+1", fnp=5, command_reroll="damage", save=4,
                                                         target_models=3, target_wounds=2, rules="2023"),
    "R_6_4_devastating_spill_2023_command_wound": S(attacks="3", bs=3, devastating=True, command_reroll="wound",
                                                    damage="D3", save=3, target_models=3, target_wounds=2,
                                                    rules="2023", lethal=True),
    "R_6_5_lethal_never_devastating": S(attacks="3", bs=3, lethal=True, devastating=True, strength=4, toughness=8,
                                        save=3, damage="3"),
    "R_7_1_invulnerable_chosen": S(attacks="3", bs=3, strength=8, toughness=4, ap=-4, save=2, invuln=4, damage="2"),
    "R_7_1_ranged_only_invulnerable_in_melee": S(attacks="3", bs=3, melee=True, ap=-3, save=3, invuln=4,
                                                 invuln_ranged_only=True, strength=5),
    "R_7_3_cover_sv4_ap0": S(attacks="3", bs=3, save=4, cover=True),
    "R_7_3_cover_denied_sv3_ap0": S(attacks="3", bs=3, save=3, cover=True),
    "R_7_3_ignores_cover": S(attacks="3", bs=3, save=4, ap=-1, cover=True, ignores_cover=True),
    "R_7_4_ap_improve": S(attacks="3", bs=3, save=3, ap_improve=1),
    "R_8_1_damage_2d6": S(attacks="2", bs=3, strength=8, toughness=4, damage="2D6"),
    "R_8_2_melta": S(attacks="2", bs=3, strength=9, toughness=8, damage="D6", melta=2, target_models=2,
                     target_wounds=5),
    "A5_half_damage_after_melta": S(attacks="2", bs=3, strength=9, toughness=8, damage="D6", melta=2,
                                    half_damage=True),
    "R_8_4_minus_one_damage": S(attacks="3", bs=3, strength=6, toughness=4, damage="D3", damage_reduction=1),
    "R_0_2_damage_mod": S(attacks="3", bs=3, strength=6, toughness=4, damage="D3", damage_mod=1),
    "R_0_2_damage_mod_minus": S(attacks="3", bs=3, strength=6, toughness=4, damage="D3+1", damage_mod=-1,
                                target_models=2, target_wounds=2),
    "R_8_5_fnp_d2": S(attacks="3", bs=3, damage="2", fnp=5),
    "R_9_1_d2_vs_w3": S(attacks="3", bs=2, strength=8, toughness=4, damage="2", target_models=5, target_wounds=3),
    "R_9_2_excess_lost": S(attacks="3", bs=3, sustained="1", strength=5, toughness=5, ap=-1, save=2, invuln=4,
                           damage="2", target_models=2, target_wounds=3),
    "R_9_5_unlimited_wounds": S(attacks="3", bs=3, damage="D6", save=5),
    "R_9_6_fnp_and_allocation": S(attacks="3", bs=3, strength=5, toughness=4, damage="D3", fnp=5, save=5,
                                  target_models=5, target_wounds=3),
    "R_9_1_every_model_destroyed": S(attacks="3", bs=2, strength=8, toughness=4, damage="D6+6", target_models=2,
                                     target_wounds=3),
    "combined_everything": S(attacks="2", bs=3, reroll_hits="ones", sustained="D3", lethal=True, strength=5,
                             toughness=5, twin_linked=True, devastating=True, ap=-1, save=3, invuln=5, cover=True,
                             damage="D3", fnp=6, target_models=4, target_wounds=2),
    "combined_stage_case": S(attacks="2", bs=3, reroll_hits="ones", sustained="D3", lethal=True, strength=5,
                             toughness=5, twin_linked=True, devastating=True, ap=-1, save=3, damage="D3", fnp=5,
                             target_models=2, target_wounds=2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_matches_oracle(name: str) -> None:
    _check_oracle(CASES[name])


def _random_scenario(rng: random.Random) -> S:
    bs = rng.choice([None, 2, 3, 4, 5, 6])
    melee = rng.random() < 0.1
    return S(
        attacks=rng.choice(["1", "2", "3", "D3"]), models_firing=rng.choice([1, 1, 1, 2]), bs=bs,
        hit_mod=rng.choice([-2, -1, 0, 0, 1]), reroll_hits=rng.choice(["none", "ones", "failed", "non_crit", "best"]),
        sustained=rng.choice(["0", "0", "1", "2", "D3"]), lethal=rng.random() < 0.3,
        strength=rng.choice([3, 4, 5, 8]), toughness=rng.choice([4, 5, 8, 10]), wound_mod=rng.choice([-1, 0, 0, 1]),
        reroll_wounds=rng.choice(["none", "ones", "failed", "non_crit", "best"]), twin_linked=rng.random() < 0.2,
        devastating=rng.random() < 0.35, ap=rng.choice([0, -1, -2, -4]), save=rng.choice([2, 3, 4, 5, 6, 7]),
        invuln=rng.choice([None, None, 4, 5]), cover=rng.random() < 0.3,
        damage=rng.choice(["1", "2", "D3", "D6", "D3+1", "2D3"]), fnp=rng.choice([None, None, 5, 6]),
        target_models=rng.choice([1, 2, 3, 5]), target_wounds=rng.choice([None, 1, 2, 3, 4]),
        crit_hit=rng.choice([6, 6, 5]), crit_wound=rng.choice([6, 6, 5]), anti=rng.choice([None, None, 4]),
        reroll_damage=rng.choice(["none", "ones", "below_average"]),
        reroll_saves=rng.choice(["none", "ones", "failed"]),
        command_reroll=rng.choice(["none", "hit", "wound", "save", "damage", "attacks"]), blast=rng.random() < 0.15,
        rapid_fire=rng.choice(["0", "0", "0", "1"]), rules=rng.choice(["current", "2023"]),
        half_damage=rng.random() < 0.1, damage_reduction=rng.choice([0, 0, 1]), melta=rng.choice([0, 0, 2]),
        overwatch=bs is not None and rng.random() < 0.1, stealth=rng.random() < 0.1,
        heavy_stationary=rng.random() < 0.1, save_mod=rng.choice([0, 0, 1, -1]), ignores_cover=rng.random() < 0.1,
        bs_improve=rng.choice([0, 0, 1]), indirect=bs is not None and not melee and rng.random() < 0.1,
        lance_charged=rng.random() < 0.1, ap_improve=rng.choice([0, 0, 1]), damage_mod=rng.choice([0, 0, 1, -1]),
        melee=melee, invuln_ranged_only=rng.random() < 0.2)


def _valid_random_scenario(rng: random.Random) -> S:
    """A random scenario that mathhammer accepts (a melee weapon cannot Overwatch, Blast, ...)."""
    while True:
        s = _random_scenario(rng)
        try:
            compile_matchup(matchup(s))
        except MatchupError:
            continue
        return s


@pytest.mark.parametrize("seed", range(80))
def test_exact_matches_oracle_random_scenarios(seed: int) -> None:
    """Random combinations of every option, abilities and Command Re-roll (deterministic)."""
    rng = random.Random(1000 + seed)
    _check_oracle(_valid_random_scenario(rng), stages=seed % 2 == 0)


def test_R_2_7_indirect_fire_is_ranged_only() -> None:
    """A melee weapon with INDIRECT FIRE and Context(melee=True, not_visible=True): the oracle
    ignores Indirect Fire in melee (a ranged ability); compile.py used to apply it (-1 to hit,
    unmodified 1-3 fail) and now refuses the matchup. Either is consistent; applying it is not."""
    s = S(attacks="2", bs=3, melee=True, indirect=True, save=4)
    try:
        compile_matchup(matchup(s))
    except MatchupError:
        return
    _check_oracle(s)


def test_general_path_equals_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast generating functions (no Command Re-roll) equal the general ones, on
    scenarios larger than the oracle can afford."""
    rng = random.Random(7)
    for _ in range(40):
        s = replace(_valid_random_scenario(rng), attacks=rng.choice(["D6", "2D6", "4"]),
                    models_firing=rng.choice([1, 3]), command_reroll=rng.choice(["none", "damage", "attacks"]))
        inputs = compile_matchup(matchup(s)).inputs
        fast = exact.run(inputs)
        monkeypatch.setattr(exact, "_FAST", False)
        general = exact.run(inputs)
        monkeypatch.setattr(exact, "_FAST", True)
        for a, b in [(fast.damage, general.damage), (fast.models_destroyed, general.models_destroyed)] + \
                [(fast.stages[k], general.stages[k]) for k in STAGE_KEYS]:
            assert a.probabilities.size == b.probabilities.size
            assert np.abs(a.probabilities - b.probabilities).max() <= TOL, s


def test_R_9_1_scattered_transitions_equal_matrices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large units use scattered transitions instead of matrices: the same numbers."""
    for s in (CASES["R_3_7_command_reroll_damage"], CASES["R_9_6_fnp_and_allocation"],
              CASES["R_6_4_devastating_excess_lost"]):
        inputs = compile_matchup(matchup(replace(s, attacks="D6", models_firing=3))).inputs
        dense = exact.run(inputs, stages=False)
        monkeypatch.setattr(exact, "_DENSE_STATES", 0)
        scattered = exact.run(inputs, stages=False)
        monkeypatch.setattr(exact, "_DENSE_STATES", 256)
        for a, b in ((dense.damage, scattered.damage), (dense.models_destroyed, scattered.models_destroyed)):
            assert a.probabilities.size == b.probabilities.size
            assert np.abs(a.probabilities - b.probabilities).max() <= TOL


# --- the result contract ----------------------------------------------------------------------
def test_result_contract() -> None:
    s = CASES["combined_everything"]
    r = _run(s)
    assert r.method == "exact" and r.trials is None and r.seed is None and r.seconds > 0
    assert r.target_models == 4 and r.hazardous is None and r.hazard_models is None
    assert tuple(r.stages) == STAGE_KEYS == tuple(name.lower() for name in StageCount.__members__)
    for d in [r.damage, r.models_destroyed, *r.stages.values()]:
        p = d.probabilities
        assert p.dtype == np.float64 and d.trials is None and d.sem() == 0.0
        assert abs(p.sum() - 1) <= TOL and (p >= 0).all() and p[-1] > 0
    assert _run(s, stages=False).stages == {}


def test_exact_distributions_sum_to_one_on_large_scenarios() -> None:
    """Scenarios far beyond the oracle: every distribution is a distribution."""
    for w, t, ctx in [("A 2D6 BS3+ S8 AP-2 D D6+6", "T4 SV3+ W3 MODELS5 FNP5+", {}),
                      ("A D6+2 BS3+ S5 AP-1 D D3 [SUSTAINED HITS D3, LETHAL HITS, DEVASTATING WOUNDS]",
                       "T5 SV3+ W2 MODELS10 FNP6+", {"firing_models": 5, "command_reroll": CommandReroll.DAMAGE}),
                      ("A3 BS4+ S4 AP0 D1 [TWIN-LINKED]", "T4 SV4+ W1 MODELS20",
                       {"firing_models": 20, "command_reroll": CommandReroll.WOUND}),
                      ("A 2D6 BS3+ S6 AP-1 D2 [DEVASTATING WOUNDS]", "T4 SV3+ W2 MODELS10",
                       {"firing_models": 3, "rules": RulesVersion.V2023, "command_reroll": CommandReroll.SAVE})]:
        r = exact.run(compile_matchup(Matchup(weapon=parse_weapon(w), target=parse_target(t),
                                              context=Context(**ctx))).inputs)  # type: ignore[arg-type]
        for d in [r.damage, r.models_destroyed, *r.stages.values()]:
            assert abs(d.probabilities.sum() - 1) <= 1e-9 and (d.probabilities >= 0).all()


def test_exact_never_imports_numba() -> None:
    code = ("import sys\n"
            "from mathhammer.compile import compile_matchup\n"
            "from mathhammer.engine import exact\n"
            "from mathhammer.model import Matchup\n"
            "from mathhammer.notation import parse_target, parse_weapon\n"
            "m = Matchup(weapon=parse_weapon('A 2D6 BS3+ S8 AP-2 D D6+6 [HAZARDOUS, DEVASTATING WOUNDS]'),\n"
            "            target=parse_target('T4 SV3+ W3 MODELS5 FNP5+'))\n"
            "r = exact.run(compile_matchup(m).inputs)\n"
            "assert r.damage.mean() > 0\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_not_exact_error_is_one_line_naming_the_rule() -> None:
    m = Matchup(weapon=parse_weapon("A 2D6 BS2+ S8 AP-2 D D6 [DEVASTATING WOUNDS, SUSTAINED HITS D3]"),
                target=parse_target("T4 SV3+ W5 MODELS20"),
                context=Context(firing_models=100, rules=RulesVersion.V2023))
    with pytest.raises(NotExactError) as e:
        exact.run(compile_matchup(m).inputs)
    assert "R-6.4" in e.value.message() and "\n" not in e.value.message()


# --- closed forms of RULES.md -----------------------------------------------------------------
def _knight_railgun(bs: int, **ctx: object) -> DamageResult:
    w = parse_weapon(f"A1 BS{bs}+ S20 AP-5 D D6+6 [DEVASTATING WOUNDS, TWIN-LINKED]")
    return exact.run(compile_matchup(Matchup(weapon=w, target=parse_target("T11 SV3+ W26 INV5+"),
                                             context=Context(**ctx))).inputs)  # type: ignore[arg-type]


def test_R_11_3_railgun_bs5_vs_knight_mean_19_9() -> None:
    r = _knight_railgun(5)
    assert abs(r.damage.mean() - 19 / 9) <= TOL
    assert abs(r.damage.probabilities[0] - (1 - Fraction(1, 3) * Fraction(2, 3))) <= TOL
    assert r.models_destroyed.probabilities.size == 1  # at most 12 damage vs W26: never destroyed


def test_R_6_5_railgun_bs4_vs_knight_mean_19_6() -> None:
    assert abs(_knight_railgun(4).damage.mean() - 19 / 6) <= TOL


def test_R_8_1_railgun_damage_pmf_1_18_at_bs4() -> None:
    """D6+6 -> uniform on 7..12; 1/18 each at BS4+ (devastating path) plus the unsaved path."""
    p = _knight_railgun(4).damage.probabilities
    assert p.size == 13 and np.allclose(p[7:], p[7], atol=TOL) and abs(p[7] - 19 / 6 / sum(range(7, 13))) <= TOL


def test_R_3_7_command_reroll_hit_railgun_5_9() -> None:
    r = _knight_railgun(5, command_reroll=CommandReroll.HIT)
    assert abs(r.stages["hits"].probabilities[1] - 5 / 9) <= TOL


def test_R_9_2_heavy_bolters_vs_terminators() -> None:
    """E[kills] = 0.590156... while the uncapped damage mean is 10/3."""
    w = parse_weapon("A3 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]")
    t = parse_target("T5 SV2+ W3 MODELS5 INV4+")
    r = exact.run(compile_matchup(Matchup(weapon=w, target=t, context=Context(firing_models=4))).inputs)
    assert abs(r.stages["damage_before_fnp"].mean() - 10 / 3) <= TOL
    s = S(attacks="3", models_firing=4, bs=3, sustained="1", strength=5, toughness=5, ap=-1, save=2, invuln=4,
          damage="2", target_models=5, target_wounds=3)
    kills = float(oracles.mean(oracles.models_destroyed_distribution(s)))
    assert abs(r.models_destroyed.mean() - kills) <= TOL
    assert round(r.models_destroyed.mean(), 6) == 0.590156


def test_R_8_5_fnp_d2_binomial() -> None:
    """D2 vs FNP 5+: wounds lost per unsaved attack ~ Binomial(2, 2/3)."""
    w = parse_weapon("A1 BS2+ S8 AP0 D2")
    t = Target(name="t", toughness=4, save=7, wounds=None, feel_no_pain=5)
    r = exact.run(compile_matchup(Matchup(weapon=w, target=t)).inputs)
    p_unsaved = Fraction(5, 6) * Fraction(5, 6)
    want = [1 - p_unsaved + p_unsaved / 9, p_unsaved * 4 / 9, p_unsaved * 4 / 9]
    assert np.abs(r.damage.probabilities - np.array([float(x) for x in want])).max() <= TOL


def test_R_1_2_two_d6_attacks_mean_7() -> None:
    r = exact.run(compile_matchup(Matchup(weapon=parse_weapon("A 2D6 BS3+ S4 AP0 D1"),
                                          target=parse_target("T4 SV3+ W1 MODELS5"))).inputs)
    a = r.stages["attacks"]
    assert abs(a.mean() - 7) <= TOL and a.probabilities[:2].sum() == 0 and a.probabilities.size == 13


def test_R_9_5_unlimited_wounds_fixed_damage() -> None:
    """Reference scenario: mean 350/54 with unlimited wounds; nothing is destroyed."""
    w = parse_weapon("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]")
    t = Target(name="unlimited", toughness=4, save=3, wounds=None)
    r = exact.run(compile_matchup(Matchup(weapon=w, target=t, context=Context(reroll_hits=RerollPolicy.ONES))).inputs)
    assert abs(r.damage.mean() - 350 / 54) <= TOL and r.models_destroyed.probabilities.tolist() == [1.0]
    assert r.damage.probabilities[1::2].sum() == 0  # D2: even totals only


# --- Hazardous (R-9.7) ------------------------------------------------------------------------
@pytest.mark.parametrize(("tests", "wounds", "fnp"), [(5, 1, None), (3, 2, 5), (2, 4, None), (4, 3, 4), (1, 1, 2)])
def test_R_9_7_hazardous_matches_oracle(tests: int, wounds: int, fnp: int | None) -> None:
    attacker = Unit(name="gunners", models=(ModelStats(name="g", count=tests, toughness=4, save=3, wounds=wounds),),
                    feel_no_pain=fnp)
    m = Matchup(weapon=parse_weapon("A1 BS3+ S8 AP-3 D2 [HAZARDOUS]"), target=parse_target("T4 SV3+ W2 MODELS5"),
                context=Context(firing_models=tests), attacker=attacker)
    r = exact.run(compile_matchup(m).inputs)
    lost: dict[int, Fraction] = {}
    dead: dict[int, Fraction] = {}
    for (w, d), p in oracles.hazardous_distribution(tests, wounds, tests, fnp).items():
        lost[w] = lost.get(w, Fraction(0)) + p
        dead[d] = dead.get(d, Fraction(0)) + p
    assert r.hazardous is not None and r.hazard_models is not None
    _same(r.hazardous.probabilities, _pmf(lost), "hazardous")
    _same(r.hazard_models.probabilities, _pmf(dead), "hazard_models")


def test_R_9_7_hazardous_five_weapons_mean_2_5() -> None:
    """Inline weapon (attacker unknown): 3 * Binomial(5, 1/6) wounds, no models counted."""
    m = Matchup(weapon=parse_weapon("A1 BS3+ S8 AP-3 D2 [HAZARDOUS]"), target=parse_target("T4 SV3+ W2 MODELS5"),
                context=Context(firing_models=5))
    r = exact.run(compile_matchup(m).inputs)
    assert r.hazardous is not None and r.hazard_models is not None
    want = [math.comb(5, k) * (1 / 6) ** k * (5 / 6) ** (5 - k) for k in range(6)]
    assert np.abs(r.hazardous.probabilities[::3] - want).max() <= TOL and abs(r.hazardous.mean() - 2.5) <= TOL
    assert r.hazard_models.probabilities.tolist() == [1.0]


# --- the kernel itself, beyond the oracle's reach ---------------------------------------------
MC_N = 200_000
DKW = math.sqrt(math.log(2 / 1e-6) / (2 * MC_N))  # fails by chance with probability 1e-6
MC_CASES = {
    "two_d6_attacks_d6_plus_6_vs_5_w3_fnp": ("A 2D6 BS3+ S8 AP-2 D D6+6", "T4 SV3+ W3 MODELS5 FNP5+", {}),
    "spill_2023_command_wound": ("A D6 BS3+ S5 AP-1 D D3+1 [DEVASTATING WOUNDS, SUSTAINED HITS 1]",
                                 "T5 SV3+ W2 MODELS6 FNP6+",
                                 {"firing_models": 3, "rules": RulesVersion.V2023,
                                  "command_reroll": CommandReroll.WOUND}),
    "command_attacks_blast": ("A D6 BS4+ S4 AP0 D1 [BLAST]", "T4 SV5+ W1 MODELS10",
                              {"firing_models": 4, "command_reroll": CommandReroll.ATTACKS}),
    "command_damage_devastating_lethal": ("A 2D3 BS3+ S6 AP-1 D D6 [DEVASTATING WOUNDS, LETHAL HITS]",
                                          "T6 SV3+ W4 MODELS3", {"firing_models": 2,
                                                                 "command_reroll": CommandReroll.DAMAGE}),
}


def _cdf_gap(a: np.ndarray, b: np.ndarray) -> float:
    n = max(a.size, b.size)
    return float(np.abs(np.cumsum(np.pad(a, (0, n - a.size))) - np.cumsum(np.pad(b, (0, n - b.size)))).max())


@pytest.mark.statistical
@pytest.mark.parametrize("name", sorted(MC_CASES))
def test_monte_carlo_kernel_matches_exact_on_large_scenarios(name: str) -> None:
    """The Monte Carlo kernel (the definition) against the exact engine where the oracle is too
    slow: every distribution within the DKW bound."""
    from mathhammer.engine import montecarlo

    w, t, ctx = MC_CASES[name]
    inputs = compile_matchup(Matchup(weapon=parse_weapon(w), target=parse_target(t),
                                     context=Context(**ctx))).inputs  # type: ignore[arg-type]
    ex = exact.run(inputs)
    mc = montecarlo.run(inputs, trials=MC_N, seed=sum(map(ord, name)))
    pairs = [("damage", ex.damage, mc.damage), ("models_destroyed", ex.models_destroyed, mc.models_destroyed)]
    pairs += [(k, ex.stages[k], mc.stages[k]) for k in STAGE_KEYS]
    for key, e, m in pairs:
        gap = _cdf_gap(e.probabilities, m.probabilities)
        assert gap <= DKW, f"{key}: CDF gap {gap:.5f} > {DKW:.5f}"


def test_a_stage_past_the_cap_is_capped_as_monte_carlo_caps_it_with_the_whole_moments() -> None:
    # 20 models x A999 BS3+: attacks exactly 19,980, hits Binomial(19980, 2/3). Written out in
    # full an exact stage can span tens of millions of values (a JSON document of gigabytes)
    import math

    import mathhammer
    from mathhammer.compile import STAGE_CAP

    r = mathhammer.run("A 999 BS3+ S4 AP0 D1", "T4 SV3+ W1000 MODELS1", models=20, method="exact")
    attacks, hits = r.stages["attacks"], r.stages["hits"]
    for d in (attacks, hits):
        assert d.capped_at == STAGE_CAP and d.probabilities.size == STAGE_CAP + 1
        assert d.probabilities[STAGE_CAP] == pytest.approx(1.0, abs=1e-12)  # every value is past 4,095
    assert attacks.mean() == pytest.approx(19980, abs=1e-6) and attacks.sd() == pytest.approx(0, abs=1e-6)
    assert hits.mean() == pytest.approx(13320, rel=1e-9)
    assert hits.sd() == pytest.approx(math.sqrt(19980 * 2 / 3 * 1 / 3), rel=1e-6)
    assert r.stages["critical_wounds"].capped_at is None  # 2,220 on average: within the cap, in full


def test_stages_of_several_weapon_groups_are_combined_whole_then_capped() -> None:
    # two groups of 100 x A10 hitting and wounding on 2+, AP-4 against Sv4+ (no save), D10: the
    # damage stage's mean is 2 x 1000 x 5/6 x 5/6 x 10; summing stages cut at 4,096 made it 8,192
    import mathhammer
    from mathhammer.compile import STAGE_CAP

    gun = "100x A10 BS2+ S8 AP-4 D10"
    r = mathhammer.run([gun, gun], "T4 SV4+ W1000", method="exact")
    for name in ("damage_before_fnp", "damage_after_fnp"):
        d = r.stages[name]
        assert d.capped_at == STAGE_CAP and d.mean() == pytest.approx(2 * 1000 * 25 / 36 * 10, rel=1e-9), name
    attacks = r.stages["attacks"]
    assert attacks.capped_at is None and attacks.probabilities.tolist() == [0.0] * 2000 + [1.0]
