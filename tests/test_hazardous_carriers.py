"""R-9.7 / ruling M17: the mortal wounds of Hazardous tests go to the models that carry the
Hazardous weapons fired, as they are: a model with two such weapons makes two tests but is one
model, CHARACTERs take them last, each model with its own Wounds and Feel No Pain (found by an
independent audit: every test was treated as a model of one statline's W).

Expected values: closed forms by hand and :func:`tests.oracles.hazardous_queue_distribution`, a
brute-force enumeration written from the rules text."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from mathhammer.compile import compile_matchup, hazard_carriers
from mathhammer.engine import analyse, montecarlo
from mathhammer.model import Matchup, Method, ModelStats, Target, Unit, WeaponGroup
from mathhammer.notation import parse_weapon

from . import oracles

HAZ = replace(parse_weapon("A1 BS3+ S8 AP-3 D2 [HAZARDOUS]"), name="plasma gun")
OTHER = replace(parse_weapon("A1 BS4+ S7 AP-2 D1 [HAZARDOUS]"), name="plasma pistol")
TARGET = Target(name="t", toughness=4, save=3, wounds=2, models=3)
N = 200_000
DKW = math.sqrt(math.log(2 / 1e-6) / (2 * N))  # a CDF gap this large happens by chance with probability 1e-6


def _stats(name: str, count: int, wounds: int, loadout: tuple[tuple[str, int], ...], **kw: object) -> ModelStats:
    return ModelStats(name=name, count=count, toughness=4, save=3, wounds=wounds, loadout=loadout, **kw)  # type: ignore[arg-type]


def _marginals(joint: dict[tuple[int, int], Fraction]) -> tuple[np.ndarray, np.ndarray]:
    lost: dict[int, Fraction] = {}
    dead: dict[int, Fraction] = {}
    for (w, d), p in joint.items():
        lost[w] = lost.get(w, Fraction(0)) + p
        dead[d] = dead.get(d, Fraction(0)) + p
    return (np.array([float(lost.get(i, 0)) for i in range(max(lost) + 1)]),
            np.array([float(dead.get(i, 0)) for i in range(max(dead) + 1)]))


def _check(m: Matchup, joint: dict[tuple[int, int], Fraction], seed: int) -> None:
    lost, dead = _marginals(joint)
    ex = analyse(m, method=Method.EXACT)
    assert ex.hazardous is not None and ex.hazard_models is not None
    np.testing.assert_allclose(ex.hazardous.probabilities, lost, atol=1e-12)
    np.testing.assert_allclose(ex.hazard_models.probabilities, dead, atol=1e-12)
    u = compile_matchup(m).unit
    assert u is not None
    mc = montecarlo.run(u, trials=N, seed=seed)
    assert mc.hazardous is not None and mc.hazard_models is not None
    for got, want in ((mc.hazardous.probabilities, lost), (mc.hazard_models.probabilities, dead)):
        size = max(got.size, want.size)
        gap = np.abs(np.cumsum(np.pad(got, (0, size - got.size))) - np.cumsum(np.pad(want, (0, size - want.size))))
        assert gap.max() <= DKW


def test_R_9_7_a_model_with_two_hazardous_weapons_is_one_model() -> None:
    """2 models of W3, each with two Hazardous guns: 4 tests; a failure's 3 mortal wounds destroy
    a W3 model, so models lost = min(2, Binomial(4, 1/6)): 625/1296, 500/1296, 171/1296, and
    never 3 or 4 of a unit of 2 (the old answer)."""
    unit = Unit(name="duals", models=(_stats("dual", 2, 3, ((HAZ.name, 2),)),), weapons=(HAZ,))
    m = Matchup(weapons=(WeaponGroup(weapon=HAZ, count=4),), target=TARGET, attacker=unit)
    assert hazard_carriers(unit, [(HAZ.name, 4)]) == ((2, 3, 7),)
    joint = oracles.hazardous_queue_distribution(4, [(3, None), (3, None)])
    _, dead = _marginals(joint)
    assert dead.tolist() == pytest.approx([625 / 1296, 500 / 1296, 171 / 1296])
    _check(m, joint, seed=11)


def test_R_9_7_characters_take_hazardous_wounds_last() -> None:
    """A W5 CHARACTER listed first and two W1 troopers, one Hazardous gun each: the troopers take
    the first two failures; the third puts 3 mortal wounds on the CHARACTER, who survives."""
    unit = Unit(name="mixed", models=(_stats("sergeant", 1, 5, ((HAZ.name, 1),), keywords=frozenset({"CHARACTER"})),
                                      _stats("trooper", 2, 1, ((HAZ.name, 1),))), weapons=(HAZ,))
    m = Matchup(weapons=(WeaponGroup(weapon=HAZ, count=3),), target=TARGET, attacker=unit)
    assert hazard_carriers(unit, [(HAZ.name, 3)]) == ((2, 1, 7), (1, 5, 7))
    joint = oracles.hazardous_queue_distribution(3, [(1, None), (1, None), (5, None)])
    lost, _ = _marginals(joint)
    # 1 failure: 1 wound; 2: 2; 3: 1 + 1 + 3 = 5 (by hand)
    assert sum(i * p for i, p in enumerate(lost)) == pytest.approx((3 * 25 / 216) + 2 * (3 * 5 / 216) + 5 / 216)
    _check(m, joint, seed=12)


def test_R_9_7_each_carrier_with_its_own_wounds_and_feel_no_pain() -> None:
    """Two weapons on two statlines: W2 troopers with plasma, a W3 sergeant with Feel No Pain 4+
    and another Hazardous gun; the unit's models not carrying one (W1) take nothing."""
    unit = Unit(name="split", models=(_stats("trooper", 2, 2, ((HAZ.name, 1),)),
                                      _stats("sergeant", 1, 3, ((OTHER.name, 1),), feel_no_pain=4),
                                      _stats("spotter", 3, 1, ())), weapons=(HAZ, OTHER))
    m = Matchup(weapons=(WeaponGroup(weapon=HAZ, count=2), WeaponGroup(weapon=OTHER, count=1)), target=TARGET,
                attacker=unit)
    assert hazard_carriers(unit, [(HAZ.name, 2), (OTHER.name, 1)]) == ((2, 2, 7), (1, 3, 4))
    _check(m, oracles.hazardous_queue_distribution(3, [(2, None), (2, None), (3, 4)]), seed=13)


def test_hazard_carriers_follow_the_weapons_fired() -> None:
    unit = Unit(name="duals", models=(_stats("dual", 2, 3, ((HAZ.name, 2),)),), weapons=(HAZ,))
    assert hazard_carriers(unit, [(HAZ.name, 8)]) == ((4, 3, 7),)  # --models 2: twice the models
    assert hazard_carriers(unit, [(HAZ.name, 2)]) == ((1, 3, 7),)  # 2 of the 4 guns: one model's
    assert hazard_carriers(unit, [(OTHER.name, 3)]) == ((3, 3, 7),)  # carried by nobody: a model a test
    assert hazard_carriers(None, [(HAZ.name, 5)]) == ((5, 0, 7),)  # no attacker: wounds, not models
    assert hazard_carriers(unit, []) == ()


def test_a_hazardous_option_goes_to_the_statline_that_may_take_it() -> None:
    """A plasma pistol only the W3 Tempestor Prime may take, fired as UNIT/WEAPON: its tests are
    the Prime's, not one of the four W1 Scions' (the most numerous statline)."""
    unit = Unit(name="command", models=(_stats("scion", 4, 1, (("hot-shot lasgun", 1),)),
                                        _stats("prime", 1, 3, (("hot-shot lasgun", 1),), options=(OTHER.name,))),
                weapons=(HAZ, OTHER))
    assert hazard_carriers(unit, [(OTHER.name, 1)]) == ((1, 3, 7),)
