"""Monte Carlo against the exact engine for whole units (issue 9): generated attacks of one to
three weapon groups at one to three model groups (a Leader sometimes attached, a wounded first
model, either allocation policy). N Monte Carlo trials must agree with the exact distributions
of the damage, the models destroyed and each group's models destroyed (mean within 5 standard
errors, CDFs within the DKW bound at 1e-6), and per weapon group the mean damage within 5
standard errors of a bound on its spread. The same sample is checked against the exact
answer of a planted bug, Hit rolls of 3 missing in every weapon group: whenever that bug moves
the exact answer by more than twice the bounds, the check must reject it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathhammer.compile import UnitInputs, compile_matchup
from mathhammer.engine import exact_units, montecarlo
from mathhammer.engine.agreement import MEAN_BOUND_SE, compare, dkw_bound
from mathhammer.errors import NotExactError
from mathhammer.model import Allocation, Context, Matchup, RulesVersion, Target, TargetUnit, WeaponGroup
from mathhammer.notation import parse_weapon

from .planted_bug import catches, three_misses

N = 50_000
ABILITIES = ["SUSTAINED HITS 1", "LETHAL HITS", "DEVASTATING WOUNDS", "PRECISION", "TWIN-LINKED", "ANTI-INFANTRY 4+"]


@st.composite
def units(draw: st.DrawFn) -> Matchup:
    weapons = []
    for _ in range(draw(st.integers(1, 3))):
        abilities = draw(st.lists(st.sampled_from(ABILITIES), unique=True, max_size=2))
        text = (f"A {draw(st.sampled_from(['1', '2', 'D3']))} BS{draw(st.integers(2, 5))}+ S{draw(st.integers(3, 9))} "
                f"AP{draw(st.integers(-3, 0))} D {draw(st.sampled_from(['1', '2', 'D3', 'D6']))}"
                + (f" [{', '.join(abilities)}]" if abilities else ""))
        weapons.append(WeaponGroup(weapon=parse_weapon(text), count=draw(st.integers(1, 4))))
    groups = []
    for i in range(draw(st.integers(1, 3))):
        groups.append(Target(name=f"g{i}", toughness=draw(st.integers(3, 6)), save=draw(st.integers(2, 6)),
                             wounds=draw(st.integers(1, 3)), models=draw(st.integers(1, 4)),
                             invulnerable=draw(st.sampled_from([None, None, 4, 5])),
                             feel_no_pain=draw(st.sampled_from([None, None, 5, 6])),
                             keywords=frozenset({"INFANTRY"}) if draw(st.booleans()) else frozenset(),
                             leader=i > 0 and draw(st.integers(0, 2)) == 0))
    unit = TargetUnit(name="unit", groups=tuple(groups), allocation=draw(st.sampled_from(list(Allocation))))
    order = unit.allocation_order()
    wounds_left = draw(st.sampled_from([None, None, 1])) if (order[0].wounds or 0) > 1 else None
    unit = replace(unit, wounds_left=wounds_left)
    ctx = Context(rules=draw(st.sampled_from(list(RulesVersion))), cover=draw(st.booleans()))
    return Matchup(weapons=tuple(weapons), target=unit, context=ctx)


def _three_misses(u: UnitInputs) -> UnitInputs:
    stages = three_misses(u.stages)
    pairs = tuple(tuple(replace(p, stages=stages[g, j]) for j, p in enumerate(row)) for g, row in enumerate(u.pairs))
    return replace(u, stages=stages, pairs=pairs)


def _agrees_and_catches_the_bug(m: Matchup, seed: int, power: dict[str, int]) -> None:
    u = compile_matchup(m).unit
    assert u is not None
    try:
        ex = exact_units.run(u)
    except NotExactError:
        return
    mc = montecarlo.run(u, trials=N, seed=seed)
    a = compare(mc.damage, mc.models_destroyed, ex.damage, ex.models_destroyed, N)
    assert a.agrees, a.line()
    for key, d in ex.stages.items():  # every stage the exact engine gives (all ten against one group)
        gap = compare(mc.stages[key], mc.stages[key], d, d, N).max_cdf_gap
        assert gap <= dkw_bound(N), f"stage {key}: CDF gap {gap:.5f}"
    if u.n_groups == 1:
        assert set(ex.stages) == set(mc.stages)
    for got, want in zip(mc.groups, ex.groups, strict=True):
        gap = compare(got.models_destroyed, got.models_destroyed, want.models_destroyed, want.models_destroyed, N)
        assert gap.max_cdf_gap <= dkw_bound(N), f"group {want.name}: CDF gap {gap.max_cdf_gap:.5f}"
    # a weapon group's damage per trial lies in 0 .. the unit's wounds: sd <= half of that
    spread = u.damage_max / 2
    for got_w, want_w in zip(mc.weapons, ex.weapons, strict=True):
        assert abs(got_w.damage_mean - want_w.damage_mean) <= MEAN_BOUND_SE * spread / math.sqrt(N) + 1e-12
    catches(mc, ex, exact_units.run(_three_misses(u)), N, power)


@pytest.mark.statistical
def test_monte_carlo_agrees_with_exact_for_units() -> None:
    power = {"examples": 0, "mutant_testable": 0}

    @settings(max_examples=80, deadline=None, derandomize=True)
    @given(units(), st.integers(0, 2**32))
    def sweep(m: Matchup, seed: int) -> None:
        _agrees_and_catches_the_bug(m, seed, power)

    sweep()
    print(f"\nMonte Carlo vs exact, units: {power}")
    assert power["examples"] >= 60, power
    assert power["mutant_testable"] >= power["examples"] // 2, power
