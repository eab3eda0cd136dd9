"""Properties (Hypothesis, derandomised): round trips and monotonicity."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mathhammer import rules
from mathhammer.compile import compile_matchup
from mathhammer.describe import weapon_line
from mathhammer.engine import exact, montecarlo
from mathhammer.model import RerollPolicy
from mathhammer.notation import parse_target, parse_weapon

from . import oracles
from .scenarios import matchup

dice_text = st.sampled_from(["1", "2", "3", "D3", "D6", "D3+1", "2D6", "D6+6"])
abilities = st.lists(st.sampled_from(["SUSTAINED HITS 1", "SUSTAINED HITS D3", "LETHAL HITS", "TWIN-LINKED",
                                      "DEVASTATING WOUNDS", "IGNORES COVER"]), unique=True, max_size=4)


@st.composite
def weapon_texts(draw: st.DrawFn) -> str:
    a, d = draw(dice_text), draw(dice_text)
    skill = draw(st.integers(2, 6))
    s, ap = draw(st.integers(1, 20)), draw(st.integers(-6, 0))
    abil = draw(abilities)
    text = f"A {a} BS{skill}+ S{s} AP{ap} D {d}"
    return text + (f" [{', '.join(abil)}]" if abil else "")


@given(weapon_texts())
def test_weapon_notation_round_trip(text: str) -> None:
    w = parse_weapon(text)
    assert parse_weapon(weapon_line(w)) == w


@given(st.integers(1, 14), st.integers(2, 7), st.integers(1, 30), st.integers(1, 20), st.one_of(st.none(), st.integers(2, 6)),
       st.one_of(st.none(), st.integers(2, 6)))
def test_target_notation_parses_every_valid_statline(t: int, sv: int, w: int, n: int, inv: int | None, fnp: int | None) -> None:
    text = f"T{t} SV{sv if sv <= 6 else '-'}{'+' if sv <= 6 else ''} W{w} MODELS{n}"
    text += f" INV{inv}+" if inv else ""
    text += f" {fnp}+++" if fnp else ""
    target = parse_target(text)
    assert (target.toughness, target.save, target.wounds, target.models, target.invulnerable, target.feel_no_pain) == \
        (t, sv, w, n, inv, fnp)


@given(st.integers(2, 6), st.integers(-3, 3), st.sampled_from(list(RerollPolicy)))
def test_a_reroll_never_lowers_p_hit(skill: int, mod: int, policy: RerollPolicy) -> None:
    out = rules.hit_outcomes(skill, rules.clamp_roll_modifier(mod))
    mask = rules.reroll_mask(out, policy)
    p_plain = sum(1 for f in range(1, 7) if out[f]) / 6
    p_reroll = sum((sum(1 for g in range(1, 7) if out[g]) / 36) if mask[f] else (1 / 6 if out[f] else 0)
                   for f in range(1, 7))
    assert p_reroll >= p_plain - 1e-12


scenarios = st.builds(
    oracles.Scenario,
    attacks=st.sampled_from(["1", "2", "D3"]),
    bs=st.sampled_from([2, 3, 4, 5, 6, None]),
    hit_mod=st.integers(-2, 2),
    reroll_hits=st.sampled_from(["none", "ones", "failed"]),
    sustained=st.sampled_from(["0", "1", "D3"]),
    lethal=st.booleans(),
    strength=st.integers(3, 10),
    toughness=st.integers(3, 10),
    twin_linked=st.booleans(),
    devastating=st.booleans(),
    ap=st.integers(-3, 0),
    save=st.integers(2, 7),
    invuln=st.sampled_from([None, 4, 5]),
    cover=st.booleans(),
    damage=st.sampled_from(["1", "2", "D3"]),
    fnp=st.sampled_from([None, 5, 6]),
    target_models=st.integers(1, 3),
    target_wounds=st.sampled_from([None, 1, 2, 3]),
)


def _exact_mean(s: oracles.Scenario) -> float:
    """mathhammer's exact engine (not the oracle) on the scenario."""
    return exact.run(compile_matchup(matchup(s)).inputs).damage.mean()


@settings(max_examples=40)
@given(scenarios)
def test_better_bs_never_lowers_the_exact_mean(s: oracles.Scenario) -> None:
    if s.bs is None or s.bs == 2:
        return
    assert _exact_mean(replace(s, bs=s.bs - 1)) >= _exact_mean(s) - 1e-12


@settings(max_examples=40)
@given(scenarios)
def test_more_strength_never_lowers_the_exact_mean(s: oracles.Scenario) -> None:
    assert _exact_mean(replace(s, strength=s.strength + 1)) >= _exact_mean(s) - 1e-12


@settings(max_examples=40)
@given(scenarios)
def test_more_ap_never_lowers_the_exact_mean(s: oracles.Scenario) -> None:
    if s.ap <= -6:
        return
    assert _exact_mean(replace(s, ap=s.ap - 1)) >= _exact_mean(s) - 1e-12


@settings(max_examples=40)
@given(scenarios)
def test_exact_engine_is_a_distribution_matching_the_oracle(s: oracles.Scenario) -> None:
    d = exact.run(compile_matchup(matchup(s)).inputs).damage
    p = d.probabilities
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-12
    expected = oracles.damage_distribution(s)
    assert max(abs(float(expected.get(k, 0)) - p[k]) for k in range(p.size)) < 1e-12
    assert all(k < p.size for k, q in expected.items() if q > 0)


@settings(max_examples=40)
@given(scenarios, st.integers(0, 2**32))
def test_monte_carlo_distribution_is_a_distribution_within_bounds(s: oracles.Scenario, seed: int) -> None:
    inputs = compile_matchup(matchup(s)).inputs
    r = montecarlo.run(inputs, trials=2000, seed=seed)
    p = r.damage.probabilities
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-12
    assert p.size - 1 <= inputs.damage_max
    support = set(np.flatnonzero(r.damage.counts))
    possible = {k for k, q in oracles.damage_distribution(s).items() if q > 0}
    assert support <= possible  # never a value the rules cannot produce
    assert r.models_destroyed.probabilities.size <= s.target_models + 1
