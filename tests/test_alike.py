"""Model groups that defend alike are simulated as one group (engine/alike.py): the merged run's
per-group results equal the allocation chain over the unmerged groups, and only neighbours in
the allocation order with the same defensive profile merge."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from mathhammer import api
from mathhammer.compile import compile_matchup
from mathhammer.engine import alike, exact_units
from mathhammer.model import Allocation, Target, TargetUnit
from mathhammer.notation import parse_target_unit
from mathhammer.result import Distribution


def _unmerged_exact(weapons: str, target: str):  # the allocation chain, groups kept apart
    matchup = api.build(weapons, target).matchup
    return exact_units.run(compile_matchup(matchup).unit)


@pytest.mark.parametrize(("weapons", "target"), [
    ("A10 BS3+ S5 AP-1 D2", "intercessors"),
    ("A6 BS3+ S5 AP-1 D1", "3x T4 SV3+ W1; 2x T4 SV3+ W1; 1x T4 SV2+ W1"),
    ("A8 BS4+ S8 AP-2 D3", "2x T5 SV4+ W3 FNP6+; 2x T5 SV4+ W3; 1x T5 SV4+ W3"),
])
def test_R_9_1_merged_groups_split_back_to_the_unmerged_chain(weapons: str, target: str) -> None:
    assert alike.merge(api.build(weapons, target).matchup.target) is not None
    merged = api.run(weapons, target, method="exact")
    chain = _unmerged_exact(weapons, target)
    assert merged.damage.mean() == pytest.approx(chain.damage.mean(), abs=1e-9)
    np.testing.assert_allclose(merged.models_destroyed.probabilities, chain.models_destroyed.probabilities,
                               atol=1e-10)
    assert [(g.name, g.models) for g in merged.groups] == [(g.name, g.models) for g in chain.groups]
    for mine, theirs in zip(merged.groups, chain.groups, strict=True):
        a, b = mine.models_destroyed.probabilities, theirs.models_destroyed.probabilities
        n = max(a.size, b.size)
        np.testing.assert_allclose(np.pad(a, (0, n - a.size)), np.pad(b, (0, n - b.size)), atol=1e-10)


def test_only_neighbours_that_defend_alike_merge() -> None:
    boyz = parse_target_unit("9x T5 SV5+ W1; 1x T5 SV5+ W2")
    assert alike.merge(boyz) is None
    split_by_a_different_one = parse_target_unit("2x T4 SV3+ W1; 1x T4 SV3+ W1 FNP5+; 2x T4 SV3+ W1",
                                                 allocation=Allocation.LISTED)
    assert alike.merge(split_by_a_different_one) is None
    assert alike.merge(parse_target_unit("2x T4 SV3+ W1; 1x T5 SV3+ W1")) is None  # the unit's T is the highest
    found = alike.merge(parse_target_unit("2x T4 SV3+ W1; 1x T4 SV3+ W1"))
    assert found is not None and [g.models for g in found.target.groups] == [3]


def test_a_leader_never_merges_with_its_bodyguard() -> None:
    bodyguard = Target(name="Intercessor", toughness=4, save=3, wounds=2, models=4)
    leader = Target(name="Lieutenant", toughness=4, save=3, wounds=2, models=1, leader=True,
                    keywords=frozenset({"CHARACTER"}))
    assert alike.merge(TargetUnit(name="squad", groups=(bodyguard, leader))) is None


def test_clipping_is_exact_with_fractions() -> None:
    # K models destroyed of a merged 2 + 3: the first group loses min(K, 2), the second min(max(K - 2, 0), 3)
    p = [Fraction(1, 10), Fraction(2, 10), Fraction(3, 10), Fraction(1, 10), Fraction(2, 10), Fraction(1, 10)]
    assert sum(p) == 1
    d = Distribution(probabilities=np.array([float(x) for x in p]), trials=None)
    first = alike._clipped(d, 0, 2).probabilities
    second = alike._clipped(d, 2, 3).probabilities
    assert first.tolist() == pytest.approx([0.1, 0.2, 0.7])
    assert second.tolist() == pytest.approx([0.6, 0.1, 0.2, 0.1])


def test_monte_carlo_split_keeps_every_trial() -> None:
    r = api.run("A10 BS3+ S5 AP-1 D2", "intercessors", trials=20_000, seed=4)
    for g in r.groups:
        assert g.models_destroyed.counts is not None and int(g.models_destroyed.counts.sum()) == 20_000
    # the Sergeant is destroyed exactly in the trials that destroy all five models
    assert r.groups[1].p_destroyed() == pytest.approx(r.models_destroyed.p_at_least(5), abs=0)
