"""Regression tests for two review findings on whole units (issue 9), expected values derived
by hand from the rules."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

from mathhammer.compile import compile_matchup
from mathhammer.engine import analyse, montecarlo
from mathhammer.model import Matchup, Method, ModelStats, Target, TargetUnit, Unit, WeaponGroup
from mathhammer.notation import parse_weapon


def _hazard_by_hand(tests: int, w: int, fnp: int) -> tuple[Fraction, Fraction]:
    """R-9.7 with R-8.5 by enumeration: ``tests`` Hazardous tests; each 1 (1/6) is 3 mortal
    wounds, each lost unless Feel No Pain ``fnp``+ saves it, all on one model of W ``w`` (the
    wounded one first), excess lost. Returns (E[wounds lost], E[models lost])."""
    keep = Fraction(fnp - 1, 6)
    per_test = {0: Fraction(5, 6)}
    for k in range(4):
        p = Fraction(1, 6) * math.comb(3, k) * keep**k * (1 - keep) ** (3 - k)
        per_test[k] = per_test.get(k, Fraction(0)) + p
    lost = dead = Fraction(0)
    for outcome in product(per_test.items(), repeat=tests):
        p = Fraction(1)
        left, total, killed = w, 0, 0
        for value, q in outcome:
            p *= q
            take = min(value, left)
            total += take
            left -= take
            if left == 0:
                killed += 1
                left = w
        lost += p * total
        dead += p * killed
    return lost, dead


def test_R_9_7_hazardous_uses_the_attackers_profile_whichever_group_is_hazardous() -> None:
    """The Hazardous weapon listed second: its tests still use the attacking models' W2 and
    Feel No Pain 4+ (found in review: they were read from the first weapon group's tables)."""
    unit = Unit(name="squad", models=(ModelStats(name="trooper", count=5, toughness=4, save=3, wounds=2,
                                                 feel_no_pain=4),),
                weapons=(parse_weapon("A1 BS3+ S4 AP0 D1"), parse_weapon("A1 BS3+ S7 AP-2 D2 [HAZARDOUS]")))
    target = Target(name="t", toughness=4, save=3, wounds=None)
    lost, dead = _hazard_by_hand(2, 2, 4)
    for order in ((0, 1), (1, 0)):
        m = Matchup(weapons=tuple(WeaponGroup(weapon=unit.weapons[i], count=2) for i in order), target=target,
                    attacker=unit)
        ex = analyse(m, method=Method.EXACT)
        assert ex.hazardous is not None and ex.hazard_models is not None
        assert abs(ex.hazardous.mean() - float(lost)) < 1e-12 and abs(ex.hazard_models.mean() - float(dead)) < 1e-12
        u = compile_matchup(m).unit
        assert u is not None
        n = 400_000
        mc = montecarlo.run(u, trials=n, seed=5)
        assert mc.hazardous is not None and mc.hazard_models is not None
        assert abs(mc.hazardous.mean() - float(lost)) <= 5 * mc.hazardous.sd() / math.sqrt(n)
        assert abs(mc.hazard_models.mean() - float(dead)) <= 5 * mc.hazard_models.sd() / math.sqrt(n)


def test_anti_keyword_counts_the_leaders_keywords() -> None:
    """ANTI-CHARACTER 4+ against Intercessors led by a CHARACTER: the Attached unit is one unit
    and has the keyword, so S3 against T4 wounds on 4+ (a Critical Wound): 6 x 5/6 x 1/2, no
    save at AP-5, one damage each, never more than the Bodyguard's 8 wounds: mean 2.5."""
    target = TargetUnit(name="squad + captain", groups=(
        Target(name="intercessor", toughness=4, save=3, wounds=2, models=4, keywords=frozenset({"INFANTRY"})),
        Target(name="captain", toughness=4, save=3, wounds=5, models=1, keywords=frozenset({"CHARACTER"}),
               leader=True)))
    m = Matchup(weapons=(WeaponGroup(weapon=parse_weapon("A6 BS2+ S3 AP-5 D1 [ANTI-CHARACTER 4+]")),), target=target)
    r = analyse(m, method=Method.EXACT)
    assert abs(r.damage.mean() - 2.5) < 1e-12
    assert r.groups[1].models_destroyed.mean() == 0.0  # the Leader is never touched


def test_the_context_is_its_three_sides() -> None:
    """Context keeps flat fields (every caller builds it so); AttackerSide, TargetSide and
    Situation split them with nothing left over or counted twice, and round-trip."""
    from dataclasses import fields

    from mathhammer.model import AttackerSide, CommandReroll, Context, RerollPolicy, Situation, TargetSide

    sides = [{f.name for f in fields(c)} for c in (AttackerSide, TargetSide, Situation)]
    assert set().union(*sides) == {f.name for f in fields(Context)}
    assert sum(len(s) for s in sides) == len(fields(Context))
    ctx = Context(firing_models=3, cover=True, hit_mod=1, reroll_hits=RerollPolicy.ONES,
                  command_reroll=CommandReroll.HIT, save_mod=-1)
    assert Context.of(situation=ctx.situation, attacker=ctx.attacker_side, target=ctx.target_side) == ctx
    other = ctx.with_attacker(AttackerSide(wound_mod=-1))
    assert other.hit_mod == 0 and other.wound_mod == -1 and other.cover and other.firing_models == 3
