"""The units path of the kernel (issue 9 item 8): stage counts that cannot vary are counted once
per kernel call, not per trial; each pair's fixed Damage is read from the scratch row; the
results stay the same for any thread count.

Expected values are closed forms from the profiles (R-2, R-5, R-7, R-8.5), not simulator output.
"""

from __future__ import annotations

import math

import numpy as np

from mathhammer.compile import compile_matchup, scratch_width
from mathhammer.engine import montecarlo
from mathhammer.model import Allocation, Matchup, Target, TargetUnit, WeaponGroup
from mathhammer.notation import parse_weapon

N = 40_000


def _squad(sergeant_save: int = 3, *, fnp: int | None = None, wounds: int = 2) -> TargetUnit:
    return TargetUnit(name="squad", groups=(
        Target(name="trooper", toughness=4, save=3, wounds=wounds, models=5, feel_no_pain=fnp),
        Target(name="sergeant", toughness=4, save=sergeant_save, wounds=3, models=1, invulnerable=5)),
        allocation=Allocation.LISTED)  # the troopers first


def _unit(target: TargetUnit, *weapons: tuple[str, int]):
    groups = tuple(WeaponGroup(weapon=parse_weapon(text), count=n) for text, n in weapons)
    u = compile_matchup(Matchup(weapons=groups, target=target)).unit
    assert u is not None and not u.single
    return u


def test_fixed_attacks_and_absent_abilities_are_counted_once_for_every_trial() -> None:
    """5 x A2 and 5 x A1: 15 attacks in every trial (R-1); no Lethal Hits, no Devastating Wounds:
    those stages are 0 in every trial; without Feel No Pain the damage after it is the damage
    before it (R-8.5)."""
    u = _unit(_squad(2), ("A2 BS3+ S4 AP-1 D1", 5), ("A1 BS3+ S8 AP-2 D2", 5))
    r = montecarlo.run(u, trials=N, seed=11, threads=1)
    attacks = r.stages["attacks"]
    assert attacks.counts[15] == N and attacks.counts.sum() == N
    for name in ("lethal", "devastating"):
        assert r.stages[name].counts[0] == N and r.stages[name].counts.sum() == N
    assert np.array_equal(r.stages["damage_after_fnp"].counts, r.stages["damage_before_fnp"].counts)
    # hits of 15 attacks at 2/3 (BS3+): mean 10, within 5 standard errors
    hits = r.stages["hits"]
    assert abs(hits.mean() - 10) <= 5 * math.sqrt(15 * (2 / 3) * (1 / 3) / N)


def test_random_attacks_are_still_counted_trial_by_trial() -> None:
    """D3 attacks per model (R-1.2): 3 models x D3 plus 2 x A1, mean 3 x 2 + 2 = 8."""
    u = _unit(_squad(), ("A D3 BS3+ S4 AP0 D1", 3), ("A1 BS3+ S4 AP0 D1", 2))
    r = montecarlo.run(u, trials=N, seed=12, threads=1)
    attacks = r.stages["attacks"]
    assert attacks.counts[:5].sum() == 0 and attacks.counts[12:].sum() == 0  # 3 x 1 + 2 .. 3 x 3 + 2
    sd = math.sqrt(3 * 2 / 3)  # a D3's variance is 2/3
    assert abs(attacks.mean() - 8) <= 5 * sd / math.sqrt(N)


def test_feel_no_pain_of_one_group_is_counted_per_trial() -> None:
    """Feel No Pain 5+ on the troopers only (they take every wound: 5 models of W100 are never
    all destroyed by 10 attacks of D1). Each unsaved D1 wound is ignored on a 5+: the damage
    after Feel No Pain has mean 2/3 of the damage before it (R-8.5), and the pair without Feel No
    Pain (the sergeant) does not make the kernel skip it."""
    u = _unit(_squad(fnp=5, wounds=100), ("A10 BS N/A S4 AP0 D1 [TORRENT]", 1))
    r = montecarlo.run(u, trials=N, seed=13, threads=1)
    before, after = r.stages["damage_before_fnp"], r.stages["damage_after_fnp"]
    # unsaved wounds: 10 attacks (TORRENT) x wound 4+ (1/2) x save 3+ failed (1/3)
    p = (1 / 2) * (1 / 3)
    assert abs(before.mean() - 10 * p) <= 5 * math.sqrt(10 * p * (1 - p) / N)
    q = p * 2 / 3  # and not ignored
    assert abs(after.mean() - 10 * q) <= 5 * math.sqrt(10 * q * (1 - q) / N)
    assert r.damage.mean() == after.mean()


def test_R_9_2_fixed_damage_per_pair_destroys_a_binomial_number_of_models() -> None:
    """Fixed D2 against the troopers: every unsaved wound destroys one W2 model (R-9.2). With
    5 x A1 S8 (wounds on 2+) AP-2 against Sv3+ (fails on 1-4: 2/3), TORRENT: the troopers
    destroyed are Binomial(5, 5/6 x 2/3)."""
    u = _unit(_squad(), ("A1 BS N/A S8 AP-2 D2 [TORRENT]", 5))
    r = montecarlo.run(u, trials=N, seed=14, threads=1)
    p = (5 / 6) * (2 / 3)
    troopers = r.groups[0].models_destroyed
    assert abs(troopers.mean() - 5 * p) <= 5 * math.sqrt(5 * p * (1 - p) / N)
    want = np.array([math.comb(5, k) * p**k * (1 - p) ** (5 - k) for k in range(6)])
    got = troopers.counts[:6] / N
    assert np.abs(got - want).max() <= 5 * math.sqrt(0.25 / N)
    assert r.groups[1].models_destroyed.counts[0] == N  # the sergeant is never reached


def test_counts_identical_for_one_and_two_threads() -> None:
    u = _unit(_squad(2), ("A2 BS3+ S4 AP-1 D1", 5), ("A1 BS3+ S8 AP-2 D D3", 5))
    one = montecarlo.run(u, trials=20_000, seed=15, threads=1)
    two = montecarlo.run(u, trials=20_000, seed=15, threads=2)
    assert np.array_equal(one.damage.counts, two.damage.counts)
    assert np.array_equal(one.models_destroyed.counts, two.models_destroyed.counts)
    for key, d in one.stages.items():
        assert np.array_equal(d.counts, two.stages[key].counts), key
    for a, b in zip(one.groups, two.groups, strict=True):
        assert np.array_equal(a.models_destroyed.counts, b.models_destroyed.counts)


def test_scratch_row_holds_the_per_trial_counts_and_each_pairs_damage() -> None:
    """Kills per model group and pending Devastating wounds per weapon group (2 + 2), each pair's
    fixed Damage (2 x 2), and on one queue of models the trials by where each weapon group left
    it: 5 troopers W2 and a sergeant W3 are 13 wounds, positions 0 .. 13 (2 x 14)."""
    u = _unit(_squad(), ("A2 BS3+ S4 AP-1 D1", 5), ("A1 BS3+ S8 AP-2 D2", 5))
    assert scratch_width(u) == 2 + 2 + 2 * 2 + 2 * 14
    # no queue when a Leader makes a second track: no positions
    led = TargetUnit(name="led", groups=(Target(name="trooper", toughness=4, save=3, wounds=2, models=5),
                                         Target(name="captain", toughness=4, save=2, wounds=5, models=1,
                                                keywords=frozenset({"CHARACTER"}), leader=True)))
    assert scratch_width(_unit(led, ("A2 BS3+ S4 AP-1 D1", 5))) == 2 + 1 + 1 * 2
