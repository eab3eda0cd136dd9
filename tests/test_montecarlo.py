"""Monte Carlo against the independent exact oracle (tests/oracles.py), rule by rule.

Tolerances come from theory, never from tuning (N trials, fixed seeds):
- mean: |mc - exact| <= 5 * sd_exact / sqrt(N);
- CDF: max_k |F_mc(k) - F_exact(k)| <= sqrt(ln(2 / 1e-6) / (2N)) (DKW, fails by chance with
  probability 1e-6), for damage and for models destroyed.
Each scenario also carries a mutant (e.g. one BS worse): the same Monte Carlo sample must FAIL
the same checks against the mutant's exact distribution, which shows the test can catch a bug
of that size.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.limits import MAX_CHUNKS

from . import oracles
from .oracles import Scenario
from .scenarios import matchup

N = 200_000
DKW = math.sqrt(math.log(2 / 1e-6) / (2 * N))

MC = oracles.Scenario
CASES: dict[str, tuple[Scenario, dict]] = {
    "R_2_1_bs3": (MC(attacks="3", bs=3, strength=4, toughness=4, save=4), {"bs": 4}),
    "R_0_3_plus_two_to_hit_capped": (MC(attacks="3", bs=4, hit_mod=2, save=5), {"hit_mod": 0}),
    "R_0_3_minus_two_to_hit_capped": (MC(attacks="3", bs=3, hit_mod=-2, save=5), {"hit_mod": 0}),
    "R_0_5_bs2_minus_one": (MC(attacks="4", bs=2, hit_mod=-1, strength=8, toughness=4), {"bs": 3}),
    "R_3_3_reroll_hit_ones": (MC(attacks="3", bs=3, reroll_hits="ones", save=6), {"reroll_hits": "none"}),
    "R_3_4_reroll_failed_hits_minus_one": (MC(attacks="3", bs=3, hit_mod=-1, reroll_hits="failed", save=6),
                                           {"reroll_hits": "ones"}),
    "R_3_6_twin_linked_s5_t6": (MC(attacks="3", bs=3, strength=5, toughness=6, twin_linked=True), {"twin_linked": False}),
    "R_3_9_twin_linked_and_reroll_ones": (MC(attacks="3", bs=4, strength=4, toughness=8, twin_linked=True,
                                             reroll_wounds="ones"), {"strength": 5}),
    "R_4_1_sustained_1": (MC(attacks="3", bs=4, sustained="1", strength=5, toughness=5), {"sustained": "0"}),
    "R_4_2_sustained_d3": (MC(attacks="3", bs=3, sustained="D3", strength=5, toughness=5), {"sustained": "2"}),
    "R_4_3_lethal_vs_6_to_wound": (MC(attacks="3", bs=3, lethal=True, strength=4, toughness=8), {"lethal": False}),
    "R_4_4_lethal_and_sustained": (MC(attacks="3", bs=3, lethal=True, sustained="1", strength=4, toughness=8,
                                      save=4), {"sustained": "0"}),
    "R_5_2_wound_mod_plus_one_at_6": (MC(attacks="4", bs=3, strength=4, toughness=8, wound_mod=1), {"wound_mod": 0}),
    "R_5_2_wound_mod_minus_two": (MC(attacks="4", bs=3, strength=5, toughness=4, wound_mod=-2), {"wound_mod": 0}),
    "R_6_railgun_vs_knight": (MC(attacks="1", bs=5, strength=20, toughness=11, ap=-5, save=3, invuln=5,
                                 damage="D6+6", devastating=True, twin_linked=True, target_wounds=26), {"bs": 4}),
    "R_6_4_devastating_excess_lost": (MC(attacks="3", bs=3, strength=4, toughness=4, devastating=True, save=2, ap=0,
                                         damage="D6", target_models=5, target_wounds=2), {"devastating": False}),
    "R_6_5_lethal_never_devastating": (MC(attacks="3", bs=3, lethal=True, devastating=True, strength=4, toughness=8,
                                          save=3, damage="3"), {"lethal": False}),
    "R_7_1_invulnerable_chosen": (MC(attacks="3", bs=3, strength=8, toughness=4, ap=-4, save=2, invuln=4, damage="2"),
                                  {"invuln": None}),
    "R_7_3_cover_sv4_ap0": (MC(attacks="4", bs=3, save=4, cover=True), {"cover": False}),
    "R_7_3_cover_denied_sv3_ap0": (MC(attacks="4", bs=3, save=3, cover=True), {"save": 2}),
    "R_7_3_ignores_cover": (MC(attacks="4", bs=3, save=4, ap=-1, cover=True, ignores_cover=True),
                            {"ignores_cover": False}),
    "R_0_3_save_cap_with_save_mod": (MC(attacks="4", bs=3, save=4, ap=0, cover=True, save_mod=1),
                                     {"save": 2, "cover": False, "save_mod": 0}),  # uncapped: 2+
    "R_8_1_damage_2d6": (MC(attacks="2", bs=3, strength=8, toughness=4, damage="2D6"), {"damage": "2D6+1"}),
    "R_8_5_fnp_d2": (MC(attacks="3", bs=3, damage="2", fnp=5), {"fnp": 6}),
    "R_9_1_ten_d2_vs_five_w3": (MC(attacks="10", bs=2, strength=8, toughness=4, damage="2", target_models=5,
                                   target_wounds=3), {"damage": "3"}),
    "R_9_2_heavy_bolters_vs_terminators": (MC(attacks="3", models_firing=4, bs=3, sustained="1", strength=5,
                                              toughness=5, ap=-1, save=2, invuln=4, damage="2", target_models=5,
                                              target_wounds=3), {"sustained": "0"}),
    "R_9_6_fnp_and_allocation": (MC(attacks="4", bs=3, strength=5, toughness=4, damage="D3", fnp=5, save=5,
                                    target_models=5, target_wounds=3), {"fnp": None}),
    "R_1_2_random_attacks_three_models": (MC(attacks="D6", models_firing=3, bs=4, strength=4, toughness=4, save=5,
                                             damage="1", target_models=10, target_wounds=1), {"attacks": "D3"}),
    "R_1_6_torrent": (MC(attacks="D6", bs=None, sustained="1", strength=5, toughness=4, save=5), {"strength": 4}),
    "combined_everything": (MC(attacks="3", bs=3, reroll_hits="ones", sustained="D3", lethal=True, strength=5,
                               toughness=5, twin_linked=True, devastating=True, ap=-1, save=3, invuln=5, cover=True,
                               damage="D3", fnp=6, target_models=4, target_wounds=2), {"fnp": 5}),
}


def _pmf(d: dict[int, Fraction]) -> np.ndarray:
    out = np.zeros(max(d) + 1)
    for k, p in d.items():
        out[k] = float(p)
    return out


def _gap(mc: np.ndarray, exact: np.ndarray) -> float:
    n = max(mc.size, exact.size)
    a, b = np.pad(mc, (0, n - mc.size)), np.pad(exact, (0, n - exact.size))
    return float(np.abs(np.cumsum(a) - np.cumsum(b)).max())


def _agrees(mc_damage, mc_models, s: Scenario) -> tuple[bool, str]:
    exact_d = _pmf(oracles.damage_distribution(s))
    exact_m = _pmf(oracles.models_destroyed_distribution(s))
    support = np.arange(exact_d.size)
    mu = float(support @ exact_d)
    sd = math.sqrt(max(0.0, float(((support - mu) ** 2) @ exact_d)))
    mean_ok = abs(mc_damage.mean() - mu) <= 5 * sd / math.sqrt(N) + 1e-12
    gap_d = _gap(mc_damage.probabilities, exact_d)
    gap_m = _gap(mc_models.probabilities, exact_m)
    ok = mean_ok and gap_d <= DKW and gap_m <= DKW
    return ok, (f"mean mc {mc_damage.mean():.5f} exact {mu:.5f} (5 SE = {5 * sd / math.sqrt(N):.5f}); "
                f"CDF gaps {gap_d:.5f}/{gap_m:.5f} vs DKW {DKW:.5f}")


@pytest.mark.statistical
@pytest.mark.parametrize("name", sorted(CASES))
def test_monte_carlo_matches_exact(name: str) -> None:
    s, mutation = CASES[name]
    inputs = compile_matchup(matchup(s)).inputs
    seed = sum(map(ord, name))
    r = montecarlo.run(inputs, trials=N, seed=seed)
    ok, why = _agrees(r.damage, r.models_destroyed, s)
    assert ok, why
    mutant = replace(s, **mutation)
    caught, why_mutant = _agrees(r.damage, r.models_destroyed, mutant)
    assert not caught, f"the check could not tell {mutation} apart: {why_mutant}"


# --- issue 3: abilities, situations, re-rolls, Command Re-roll, rules versions -------------
CASES_3: dict[str, tuple[Scenario, dict]] = {
    "R_2_3_crit_hit_5_sustained": (MC(attacks="3", bs=4, crit_hit=5, sustained="1", save=5), {"crit_hit": 6}),
    "R_2_5_heavy_stationary": (MC(attacks="3", bs=4, heavy_stationary=True, save=5), {"heavy_stationary": False}),
    "R_2_6_stealth": (MC(attacks="4", bs=3, stealth=True, save=6), {"stealth": False}),
    "R_2_6_stealth_ignored_in_melee": (MC(attacks="4", bs=3, stealth=True, melee=True, save=6), {"bs": 4}),
    "R_2_7_indirect_fire": (MC(attacks="4", bs=2, indirect=True, save=4), {"rules": "2023"}),
    "R_2_7_indirect_fire_2023": (MC(attacks="4", bs=2, indirect=True, save=4, rules="2023"), {"indirect": False}),
    "R_2_9_overwatch": (MC(attacks="6", bs=3, overwatch=True, sustained="1", save=7), {"overwatch": False}),
    "R_0_4_bs_improve": (MC(attacks="3", bs=5, bs_improve=2, hit_mod=1, save=6), {"bs_improve": 1}),
    "R_3_5_non_crit_fishing": (MC(attacks="3", bs=3, lethal=True, reroll_hits="non_crit", strength=4, toughness=12),
                               {"reroll_hits": "failed"}),
    "R_3_5_best_wounds": (MC(attacks="3", bs=3, strength=5, toughness=5, devastating=True, reroll_wounds="best",
                             save=2, damage="2"), {"reroll_wounds": "failed"}),
    "R_3_7_command_reroll_hit": (MC(attacks="2", bs=5, command_reroll="hit", strength=8, toughness=4), {"command_reroll": "none"}),
    "R_3_7_command_reroll_wound": (MC(attacks="3", bs=3, command_reroll="wound", strength=4, toughness=8, save=5),
                                   {"command_reroll": "none"}),
    "R_3_7_command_reroll_save": (MC(attacks="3", bs=3, command_reroll="save", strength=6, toughness=4, save=3),
                                  {"command_reroll": "none"}),
    "R_3_7_command_reroll_damage": (MC(attacks="3", bs=3, strength=6, toughness=4, damage="D6", command_reroll="damage",
                                       target_models=3, target_wounds=3), {"command_reroll": "none"}),
    "R_3_7_command_reroll_attacks": (MC(attacks="D6", models_firing=2, bs=4, command_reroll="attacks", save=6),
                                     {"command_reroll": "none"}),
    "R_3_1_reroll_damage_ones": (MC(attacks="3", bs=3, damage="D6", reroll_damage="ones"), {"reroll_damage": "none"}),
    "R_3_1_reroll_damage_below_average": (MC(attacks="3", bs=3, damage="D6+1", reroll_damage="below_average", fnp=6,
                                             target_models=4, target_wounds=3), {"reroll_damage": "none"}),
    "R_3_1_reroll_saves": (MC(attacks="4", bs=3, save=3, reroll_saves="failed"), {"reroll_saves": "ones"}),
    "R_5_3_lance_charged": (MC(attacks="3", bs=3, melee=True, lance_charged=True, strength=6, toughness=6),
                            {"lance_charged": False}),
    "R_5_5_anti_feeds_devastating": (MC(attacks="3", bs=3, strength=4, toughness=10, anti=4, devastating=True, save=2,
                                        damage="2"), {"anti": 5}),
    "R_7_4_ap_improve": (MC(attacks="4", bs=3, save=3, ap_improve=1), {"ap_improve": 0}),
    "R_7_1_ranged_only_invulnerable_in_melee": (MC(attacks="4", bs=3, melee=True, ap=-3, save=3, invuln=4,
                                                   invuln_ranged_only=True, strength=5), {"melee": False}),
    "R_8_2_melta": (MC(attacks="2", bs=3, strength=9, toughness=8, damage="D6", melta=2, target_models=2, target_wounds=5),
                    {"melta": 0}),
    "A5_half_damage_after_melta": (MC(attacks="2", bs=3, strength=9, toughness=8, damage="D6", melta=2, half_damage=True),
                                   {"half_damage": False}),
    "R_8_4_minus_one_damage": (MC(attacks="3", bs=3, strength=6, toughness=4, damage="D3", damage_reduction=1),
                               {"damage_reduction": 0}),
    "R_0_2_damage_mod": (MC(attacks="3", bs=3, strength=6, toughness=4, damage="D3", damage_mod=1), {"damage_mod": 0}),
    "R_1_3_blast": (MC(attacks="D3", bs=4, blast=True, save=6, target_models=10, target_wounds=1), {"blast": False}),
    "R_1_4_rapid_fire": (MC(attacks="1", models_firing=2, bs=3, rapid_fire="D3", save=5), {"rapid_fire": "0"}),
    "R_6_4_devastating_spill_2023": (MC(attacks="2", bs=2, strength=8, toughness=4, devastating=True, crit_wound=4,
                                        damage="D6", save=2, target_models=4, target_wounds=2, rules="2023"),
                                     {"rules": "current"}),
}


def _check(name: str, s: Scenario, mutation: dict) -> None:
    inputs = compile_matchup(matchup(s)).inputs
    r = montecarlo.run(inputs, trials=N, seed=sum(map(ord, name)))
    ok, why = _agrees(r.damage, r.models_destroyed, s)
    assert ok, why
    caught, why_mutant = _agrees(r.damage, r.models_destroyed, replace(s, **mutation))
    assert not caught, f"the check could not tell {mutation} apart: {why_mutant}"


@pytest.mark.statistical
@pytest.mark.parametrize("name", sorted(CASES_3))
def test_issue3_monte_carlo_matches_exact(name: str) -> None:
    _check(name, *CASES_3[name])


STAGE_CASES = {
    "everything": MC(attacks="2", bs=3, reroll_hits="ones", sustained="D3", lethal=True, strength=5, toughness=5,
                     twin_linked=True, devastating=True, ap=-1, save=3, damage="D3", fnp=5, target_models=2,
                     target_wounds=2),
    "torrent_blast": MC(attacks="D3", bs=None, blast=True, strength=4, toughness=4, save=5, damage="1",
                        target_models=5, target_wounds=1),
    "command_wound": MC(attacks="2", bs=3, command_reroll="wound", strength=4, toughness=5, save=4, damage="2",
                        target_models=2, target_wounds=2),
}


@pytest.mark.statistical
@pytest.mark.parametrize("name", sorted(STAGE_CASES))
def test_stage_breakdown_matches_exact(name: str) -> None:
    s = STAGE_CASES[name]
    r = montecarlo.run(compile_matchup(matchup(s)).inputs, trials=N, seed=sum(map(ord, name)))
    exact = oracles.stage_distributions(s)
    for key, dist in exact.items():
        ex = _pmf(dist)
        gap = _gap(r.stages[key].probabilities, ex)
        assert gap <= DKW, f"{key}: CDF gap {gap:.5f} > {DKW:.5f}"


@pytest.mark.statistical
@pytest.mark.parametrize(("tests", "wounds", "fnp"), [(5, 1, None), (3, 2, 5), (2, 4, None)])
def test_R_9_7_hazardous_matches_exact(tests: int, wounds: int, fnp: int | None) -> None:
    from mathhammer.model import Context, Matchup, ModelStats, Unit
    from mathhammer.notation import parse_target, parse_weapon

    attacker = Unit(name="gunners", models=(ModelStats(name="g", count=tests, toughness=4, save=3, wounds=wounds),),
                    feel_no_pain=fnp)
    m = Matchup(weapon=parse_weapon("A1 BS3+ S8 AP-3 D2 [HAZARDOUS]"), target=parse_target("T4 SV3+ W2 MODELS5"),
                context=Context(firing_models=tests), attacker=attacker)
    r = montecarlo.run(compile_matchup(m).inputs, trials=N, seed=tests * 100 + wounds)
    joint = oracles.hazardous_distribution(tests, wounds, tests, fnp)
    lost: dict[int, Fraction] = {}
    dead: dict[int, Fraction] = {}
    for (w, d), p in joint.items():
        lost[w] = lost.get(w, Fraction(0)) + p
        dead[d] = dead.get(d, Fraction(0)) + p
    assert _gap(r.hazardous.probabilities, _pmf(lost)) <= DKW
    assert _gap(r.hazard_models.probabilities, _pmf(dead)) <= DKW
    mu = float(oracles.mean(lost))
    assert abs(r.hazardous.mean() - mu) <= 5 * math.sqrt(float(oracles.variance(lost)) / N)


# --- chunk seeds ----------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), n=st.integers(1, MAX_CHUNKS))
def test_chunk_seeds_are_numpys_seed_sequence_state(seed: int, n: int) -> None:
    """The chunks' seeds are numpy's SeedSequence(seed).generate_state(n, uint64), and so are
    the faster whole-array words used once checked: the reference is numpy's own."""
    sequence = np.random.SeedSequence(seed)
    expected = sequence.generate_state(n, dtype=np.uint64)
    assert np.array_equal(montecarlo._seed_words(sequence.pool, n), expected)
    got = montecarlo.chunk_seeds(seed, n)
    assert got.dtype == np.uint64 and np.array_equal(got, expected)


@pytest.mark.parametrize("agree", [True, False])
def test_the_fast_seed_words_are_used_only_once_they_gave_numpys(agree: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first state of MAX_CHUNKS seeds in a process is numpy's, compared with the fast words;
    later ones are the fast words if those were the same, else numpy's again (a numpy whose
    SeedSequence changed)."""
    real = montecarlo._seed_words
    calls: list[int] = []

    def words(pool: np.ndarray, n: int) -> np.ndarray:
        calls.append(n)
        return real(pool, n) if agree else real(pool, n) ^ np.uint64(1)

    monkeypatch.setattr(montecarlo, "_FAST_SEEDS", [])
    monkeypatch.setattr(montecarlo, "_seed_words", words)
    numpys = np.random.SeedSequence(5).generate_state(MAX_CHUNKS, dtype=np.uint64)
    assert np.array_equal(montecarlo.chunk_seeds(5, 3), numpys[:3]) and calls == []  # not compared on a short one
    assert np.array_equal(montecarlo.chunk_seeds(5, MAX_CHUNKS), numpys) and calls == [MAX_CHUNKS]
    assert montecarlo._FAST_SEEDS == [agree]
    assert np.array_equal(montecarlo.chunk_seeds(5, 7), numpys[:7])
    assert calls == ([MAX_CHUNKS, 7] if agree else [MAX_CHUNKS])
