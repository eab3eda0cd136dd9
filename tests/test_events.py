"""Issue 12, items 6-9: Tank Shock (R-10.2) and Deadly Demise (R-10.1) as library functions.

Every expected value is derived here, independently of mathhammer.events: closed forms and
brute-force enumeration with fractions.Fraction (the number of mortal wounds, then its spill
over the target's models by hand), or the exact engine for the Monte Carlo checks (whose
tolerance is 4.5 standard errors of the exact distribution).
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from mathhammer import deadly_demise, tank_shock
from mathhammer.errors import InputError, MatchupError, NotExactError, ProfileError
from mathhammer.events import TANK_SHOCK_CAP, deadly_demise_pmf, tank_shock_pmf
from mathhammer.model import DiceExpr, Target, TargetUnit
from mathhammer.profiles import load_library
from mathhammer.result import Distribution
from tests.profile_files import write_profile

ROOT = Path(__file__).resolve().parent.parent
TS_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas" / "tank-shock-1.schema.json").read_text("utf-8")))
DD_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas" / "deadly-demise-1.schema.json").read_text("utf-8")))
TOL = 1e-12

CONVOY = """\
schema: 1
units:
  - name: Test Convoy
    models:
      - {name: Light Truck, count: 2, T: 6, Sv: 4, W: 8}
      - {name: Heavy Truck, count: 1, T: 9, Sv: 3, W: 12}
      - {name: Escort Walker, count: 1, T: 5, Sv: 3, W: 4}
    keywords: [VEHICLE]
    deadly_demise: D6
    weapons: []
  - name: Test Rider Squad
    models:
      - {name: Rider, count: 3, T: 10, Sv: 3, W: 3}
      - {name: Bike Tank, count: 1, T: 7, Sv: 3, W: 6, keywords: [vehicle]}
    keywords: [MOUNTED]
    weapons: []
"""


# --- independent derivations ------------------------------------------------------------------
def binomial(n: int, p: F) -> dict[int, F]:
    return {k: math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def tank_shock_n(toughness: int) -> dict[int, F]:
    """N = min(6, number of 5+ among T dice), by enumerating the count of successes."""
    out: dict[int, F] = {}
    for k, p in binomial(toughness, F(1, 3)).items():
        out[min(k, 6)] = out.get(min(k, 6), F(0)) + p
    return out


def d3_faces() -> list[int]:
    return [(face + 1) // 2 for face in range(1, 7)]  # D3 = ceil(D6/2)


def demise_n_by_enumeration(models: int, x_faces: list[int]) -> dict[int, F]:
    """Every D6 of every destroyed model and every roll of x (one per model, used if it
    exploded): the mortal wounds one unit suffers."""
    out: dict[int, F] = {}
    weight = F(1, 6**models * len(x_faces) ** models)
    for d6 in itertools.product(range(1, 7), repeat=models):
        for xs in itertools.product(x_faces, repeat=models):
            n = sum(x for roll, x in zip(d6, xs, strict=True) if roll == 6)
            out[n] = out.get(n, F(0)) + weight
    return out


def mean(pmf: dict[int, F]) -> F:
    return sum((k * p for k, p in pmf.items()), F(0))


def push(pmf: dict[int, F], f: Any) -> dict[int, F]:
    """The pmf of f(N)."""
    out: dict[int, F] = {}
    for n, p in pmf.items():
        out[f(n)] = out.get(f(n), F(0)) + p
    return out


def thinned(pmf: dict[int, F], keep: F, cap: int | None = None) -> dict[int, F]:
    """Each of N mortal wounds is lost with probability ``keep`` (Feel No Pain fails), at most
    ``cap`` lost in all."""
    out: dict[int, F] = {}
    for n, p in pmf.items():
        for k, q in binomial(n, keep).items():
            v = k if cap is None else min(k, cap)
            out[v] = out.get(v, F(0)) + p * q
    return out


def assert_pmf(dist: Distribution, expected: dict[int, F]) -> None:
    size = max(max(expected) + 1, dist.probabilities.size)
    want = np.array([float(expected.get(k, 0)) for k in range(size)])
    got = np.pad(dist.probabilities, (0, size - dist.probabilities.size))
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)


# --- Tank Shock ------------------------------------------------------------------------
def test_r10_2_tank_shock_at_t10_has_mean_195446_over_59049() -> None:
    n = tank_shock_n(10)
    assert mean(n) == F(195446, 59049)
    assert tank_shock_pmf(10) == n
    r = tank_shock("T10", "T4 SV3+ W2 MODELS5", method="exact")
    assert abs(r.mortal_wounds.mean() - 195446 / 59049) < TOL
    assert_pmf(r.mortal_wounds, n)


@pytest.mark.parametrize("toughness", [1, 3, 6, 7, 12, 20])
def test_r10_2_tank_shock_is_capped_at_six(toughness: int) -> None:
    n = tank_shock_n(toughness)
    assert tank_shock_pmf(toughness) == n
    r = tank_shock(f"T{toughness}", "T4 SV3+ W10 MODELS10", method="exact")
    assert r.mortal_wounds.probabilities.size - 1 == min(toughness, TANK_SHOCK_CAP)
    assert_pmf(r.mortal_wounds, n)


def test_r10_2_t3_vehicle_rolls_three_dice() -> None:
    expected = {0: F(8, 27), 1: F(12, 27), 2: F(6, 27), 3: F(1, 27)}
    assert tank_shock_pmf(3) == expected
    r = tank_shock("T3", "T4 SV3+ W1 MODELS10", method="exact")
    assert_pmf(r.mortal_wounds, expected)
    assert_pmf(r.damage, expected)  # one wound per mortal wound, nothing saved
    assert_pmf(r.models_destroyed, expected)  # W1: each mortal wound is a model


def test_r10_2_a_named_vehicle_rolls_its_toughness() -> None:
    r = tank_shock("gunrig", "T4 SV3+ W1 MODELS10", method="exact")
    assert r.source == {"unit": "Tidewall Gunrig", "model": "Tidewall Gunrig", "T": 8}
    assert_pmf(r.mortal_wounds, tank_shock_n(8))
    assert r.stratagems == ({"name": "Tank Shock", "cp": 1, "side": "attacker", "detachment": None},)


def test_r10_2_the_vehicle_model_with_the_highest_toughness_is_selected(tmp_path: Path) -> None:
    lib = load_library([write_profile(tmp_path, CONVOY).parent], use_env=False)
    r = tank_shock("test convoy", "T4 SV3+ W1 MODELS10", lib=lib, method="exact")
    assert r.source == {"unit": "Test Convoy", "model": "Heavy Truck", "T": 9}
    assert_pmf(r.mortal_wounds, tank_shock_n(9))
    assert any("highest Toughness" in line for line in r.explain)
    # only the statline with VEHICLE counts, however tough the others are (R-10.2: a VEHICLE model)
    r = tank_shock("test rider squad", "T4 SV3+ W1 MODELS10", lib=lib, method="exact")
    assert r.source == {"unit": "Test Rider Squad", "model": "Bike Tank", "T": 7}


def test_r10_2_r9_3_mortal_wounds_spill_over_five_w2_models() -> None:
    n = tank_shock_n(10)  # at most 6 mortal wounds: at most 3 of the 5 models, never the unit
    r = tank_shock("T10", "T4 SV2+ W2 MODELS5 INV4+", method="exact")  # saves do nothing
    assert_pmf(r.damage, n)
    assert_pmf(r.models_destroyed, push(n, lambda k: k // 2))  # 6 mortal wounds: 3 models
    assert r.p_destroy_unit() == 0.0


def test_r9_3_wounds_beyond_the_unit_are_lost() -> None:
    n = tank_shock_n(10)
    r = tank_shock("T10", "T4 SV3+ W2 MODELS2", method="exact")
    assert_pmf(r.damage, push(n, lambda k: min(k, 4)))
    assert_pmf(r.models_destroyed, push(n, lambda k: min(k // 2, 2)))
    assert abs(r.p_destroy_unit() - float(sum(p for k, p in n.items() if k >= 4))) < TOL


def test_r9_3_a_wounded_first_model_takes_the_first_mortal_wound() -> None:
    n = tank_shock_n(10)
    r = tank_shock("T10", "T4 SV3+ W2 MODELS5", method="exact", wounds_left=1)
    assert_pmf(r.models_destroyed, push(n, lambda k: 0 if k == 0 else 1 + (k - 1) // 2))


def test_r8_5_feel_no_pain_is_rolled_for_each_mortal_wound() -> None:
    n = tank_shock_n(10)
    # one W10 model: no model can be destroyed by 6 mortal wounds; each lost 2 times in 3
    r = tank_shock("T10", "T5 SV3+ W10 FNP5+", method="exact")
    assert_pmf(r.mortal_wounds, n)
    assert_pmf(r.damage, thinned(n, F(2, 3)))
    assert r.models_destroyed.mean() == 0.0
    # three W1 models with FNP 5+: the unit is destroyed once 3 wounds are lost
    r = tank_shock("T10", "T4 SV3+ W1 MODELS3 FNP5+", method="exact")
    lost = thinned(n, F(2, 3), cap=3)
    assert_pmf(r.damage, lost)
    assert_pmf(r.models_destroyed, lost)
    assert abs(r.p_destroy_unit() - float(lost.get(3, F(0)))) < TOL


def test_r9_5_a_target_with_unlimited_wounds_loses_every_mortal_wound_fnp_aside() -> None:
    n = tank_shock_n(10)
    endless = Target(name="endless", toughness=12, save=2, wounds=None, models=1, feel_no_pain=6)
    for method in ("exact", "monte-carlo"):
        r = tank_shock("T10", endless, method=method, trials=20_000, seed=3)
        assert r.models_destroyed.mean() == 0.0 and r.p_destroy_unit() == 0.0
    r = tank_shock("T10", endless, method="exact")
    assert_pmf(r.damage, thinned(n, F(5, 6)))


def test_r9_4_leaders_take_mortal_wounds_only_after_their_bodyguard() -> None:
    # 2 W1 Bodyguard models and a W3 Leader: mortal wounds 1-2 kill Bodyguards, 3-5 wound the
    # Leader, 5 kills it (R-9.3 spill; M45 order)
    unit = TargetUnit(name="squad", groups=(
        Target(name="guard", toughness=4, save=3, wounds=1, models=2),
        Target(name="boss", toughness=4, save=3, wounds=3, models=1, leader=True, keywords=frozenset({"CHARACTER"}))))
    n = tank_shock_n(10)
    r = tank_shock("T10", unit, method="exact")
    assert_pmf(r.groups[0].models_destroyed, push(n, lambda k: min(k, 2)))
    assert_pmf(r.groups[1].models_destroyed, push(n, lambda k: 1 if k >= 5 else 0))
    assert abs(r.p_destroy_unit() - float(sum(p for k, p in n.items() if k >= 5))) < TOL


# --- Deadly Demise ---------------------------------------------------------------------
def test_r10_1_deadly_demise_d3_on_one_model() -> None:
    expected = {0: F(5, 6), 1: F(1, 18), 2: F(1, 18), 3: F(1, 18)}
    assert demise_n_by_enumeration(1, d3_faces()) == expected and mean(expected) == F(1, 3)
    r = deadly_demise("gunrig", method="exact")
    assert r.source == {"name": "Tidewall Gunrig", "deadly_demise": "D3", "models": 1, "destroyed": 1}
    assert abs(r.p_explode - 1 / 6) < TOL if r.p_explode is not None else False
    assert_pmf(r.mortal_wounds, expected)
    assert abs(r.mortal_wounds.mean() - 1 / 3) < TOL
    assert r.targets == ()


def test_r10_1_two_models_destroyed_by_enumeration() -> None:
    expected = demise_n_by_enumeration(2, d3_faces())
    np.testing.assert_allclose(deadly_demise_pmf(DiceExpr(count=1, sides=3), 2),
                               [float(expected.get(k, 0)) for k in range(7)], atol=TOL, rtol=0)
    r = deadly_demise("D3", "T4 SV3+ W1 MODELS10", models=2, method="exact")
    assert abs(r.p_explode - float(1 - F(25, 36))) < TOL if r.p_explode is not None else False
    assert_pmf(r.mortal_wounds, expected)
    assert_pmf(r.targets[0].mortal_wounds, expected)
    assert_pmf(r.targets[0].models_destroyed, expected)  # W1: one model per mortal wound
    assert r.explosions is not None
    assert_pmf(r.explosions, binomial(2, F(1, 6)))


def test_r10_1_fixed_x_and_d6_plus() -> None:
    assert_pmf(deadly_demise("1", models=3, method="exact").mortal_wounds, binomial(3, F(1, 6)))
    d6_plus_1 = [face + 1 for face in range(1, 7)]
    r = deadly_demise("deadly demise D6+1", models=2, method="exact")
    assert_pmf(r.mortal_wounds, demise_n_by_enumeration(2, d6_plus_1))


def test_r10_1_each_target_spills_its_own_mortal_wounds_with_fnp() -> None:
    n = demise_n_by_enumeration(2, [(f + 1) // 2 for f in range(1, 7)])
    r = deadly_demise("D3", ["T4 SV3+ W2 MODELS2 FNP5+", "T5 SV2+ W10"], models=2, method="exact")
    first, second = r.targets
    lost = thinned(n, F(2, 3), cap=4)
    assert_pmf(first.damage, lost)
    assert_pmf(first.models_destroyed, push(lost, lambda k: k // 2))
    assert_pmf(second.damage, n)
    assert second.models_destroyed.mean() == 0.0


def test_r10_1_a_named_unit_with_several_models(tmp_path: Path) -> None:
    lib = load_library([write_profile(tmp_path, CONVOY).parent], use_env=False)
    r = deadly_demise("test convoy", "T4 SV3+ W1 MODELS30", models=4, lib=lib, method="exact")
    assert r.source == {"name": "Test Convoy", "deadly_demise": "D6", "models": 4, "destroyed": 4}
    k = binomial(4, F(1, 6))
    assert abs((r.p_explode or 0) - float(1 - k[0])) < TOL
    # mean: E[K] x E[D6] = 4/6 x 7/2
    assert abs(r.mortal_wounds.mean() - 4 / 6 * 3.5) < 1e-9


# --- Monte Carlo against the exact engine -----------------------------------------------------
def _within(mc: Distribution, exact: Distribution, what: str) -> None:
    se = exact.sd() / math.sqrt(mc.trials or 1)
    assert abs(mc.mean() - exact.mean()) <= 4.5 * se + 1e-12, (what, mc.mean(), exact.mean(), se)


def _p_within(mc: float, exact: float, trials: int, what: str) -> None:
    se = math.sqrt(exact * (1 - exact) / trials)
    assert abs(mc - exact) <= 4.5 * se + 1e-12, (what, mc, exact, se)


def test_r10_2_monte_carlo_agrees_with_exact_against_an_attached_unit() -> None:
    target = "T4 SV3+ W2 MODELS3 FNP6+; 1x T4 SV3+ W4 FNP5+ [CHARACTER]"
    ex = tank_shock("T12", target, method="exact")
    mc = tank_shock("T12", target, method="monte-carlo", trials=200_000, seed=11)
    assert mc.seed == 11 and mc.trials == 200_000 and mc.method == "monte-carlo"
    for what in ("mortal_wounds", "damage", "models_destroyed"):
        _within(getattr(mc, what), getattr(ex, what), what)
    _p_within(mc.p_destroy_unit(), ex.p_destroy_unit(), 200_000, "p_destroy_unit")
    for g_mc, g_ex in zip(mc.groups, ex.groups, strict=True):
        _within(g_mc.models_destroyed, g_ex.models_destroyed, g_ex.name)
    assert mc.mortal_wounds.probabilities.size - 1 <= TANK_SHOCK_CAP


def test_r10_1_monte_carlo_agrees_with_exact_for_several_targets() -> None:
    targets = ["T4 SV3+ W1 MODELS5 FNP5+", "T9 SV3+ W3 MODELS3", "T4 SV3+ W2 MODELS2 WOUNDS-LEFT=1"]
    ex = deadly_demise("D6", targets, models=3, method="exact")
    mc = deadly_demise("D6", targets, models=3, method="monte-carlo", trials=200_000, seed=5)
    assert ex.p_explode is not None and mc.p_explode is not None
    _p_within(mc.p_explode, ex.p_explode, 200_000, "p_explode")
    _within(mc.mortal_wounds, ex.mortal_wounds, "mortal_wounds")
    for i, (t_mc, t_ex) in enumerate(zip(mc.targets, ex.targets, strict=True)):
        for what in ("mortal_wounds", "damage", "models_destroyed"):
            _within(getattr(t_mc, what), getattr(t_ex, what), f"targets[{i}].{what}")
        _p_within(t_mc.p_destroy_unit(), t_ex.p_destroy_unit(), 200_000, f"targets[{i}].p_destroy_unit")


def test_method_both_reports_exact_figures_and_the_agreement() -> None:
    r = tank_shock("T10", "T4 SV3+ W2 MODELS5", method="both", trials=50_000, seed=2)
    assert r.method == "both" and r.trials == 50_000 and r.seed == 2
    assert abs(r.mortal_wounds.mean() - 195446 / 59049) < TOL  # the exact figures
    assert r.monte_carlo is not None and r.monte_carlo.trials == 50_000
    assert r.agreement is not None and r.agreement.agrees
    assert {what for what, _ in r.agreement.checks} == {"mortal_wounds", "damage", "models_destroyed"}


def test_a_seed_repeats_a_run_and_a_drawn_seed_is_reported() -> None:
    a = deadly_demise("D3", ["T4 SV3+ W1 MODELS5"], models=2, trials=5_000, seed=9)
    b = deadly_demise("D3", ["T4 SV3+ W1 MODELS5"], models=2, trials=5_000, seed=9)
    assert np.array_equal(a.targets[0].damage.probabilities, b.targets[0].damage.probabilities)
    drawn = tank_shock("T8", "T4 SV3+ W1 MODELS5", trials=5_000)
    assert drawn.seed is not None
    again = tank_shock("T8", "T4 SV3+ W1 MODELS5", trials=5_000, seed=drawn.seed)
    assert np.array_equal(drawn.damage.probabilities, again.damage.probabilities)


# --- errors -----------------------------------------------------------------------------------
def test_r10_2_a_unit_that_is_not_a_vehicle_cannot_tank_shock() -> None:
    with pytest.raises(MatchupError) as e:
        tank_shock("intercessors", "knight", method="exact")
    assert "not a VEHICLE unit" in e.value.what and e.value.where == "VEHICLE"


def test_r10_1_a_unit_without_deadly_demise() -> None:
    with pytest.raises(MatchupError) as e:
        deadly_demise("intercessors", method="exact")
    assert "has no Deadly Demise" in e.value.what and e.value.where == "UNIT"


def test_models_above_the_unit_size() -> None:
    with pytest.raises(MatchupError) as e:
        deadly_demise("gunrig", models=2, method="exact")
    assert e.value.where == "--models" and e.value.value == 2 and "1 model" in e.value.what


@pytest.mark.parametrize("call", [
    lambda: tank_shock("no such tank", "knight"),
    lambda: deadly_demise("no such unit"),
    lambda: tank_shock("T10", "no such target"),
    lambda: deadly_demise("gunrig", ["knight", "no such target"]),
])
def test_unknown_names(call: Any) -> None:
    with pytest.raises(ProfileError) as e:
        call()
    assert e.value.what.startswith("unknown")


@pytest.mark.parametrize(("call", "where"), [
    (lambda: tank_shock("T0", "knight"), "VEHICLE"),
    (lambda: tank_shock("T101", "knight"), "VEHICLE"),
    (lambda: tank_shock("T10", "knight", method="fast"), "method"),
    (lambda: tank_shock("T10", "knight", trials=0), "--trials"),
    (lambda: tank_shock("T10", "knight", seed=-1), "--seed"),
    (lambda: deadly_demise("D3", models=0), "--models"),
    (lambda: deadly_demise("D3", ["knight", "knight"], target_models=2), "--target-models"),
    (lambda: deadly_demise("D3", wounds_left=1), "--wounds-left"),
    # values of the wrong kind are InputErrors too, never a raw TypeError or AttributeError
    (lambda: tank_shock(10, "knight"), "VEHICLE"),  # type: ignore[arg-type]
    (lambda: tank_shock("T10", "knight", trials=1.5), "--trials"),  # type: ignore[arg-type]
    (lambda: deadly_demise(None), "UNIT"),  # type: ignore[arg-type]
    (lambda: deadly_demise("D3", models=2.0), "--models"),  # type: ignore[arg-type]
    (lambda: deadly_demise("D7"), "UNIT"),
    (lambda: deadly_demise("2D2"), "UNIT"),
    (lambda: deadly_demise("D0"), "UNIT"),
])
def test_bad_values(call: Any, where: str) -> None:
    with pytest.raises(InputError) as e:
        call()
    assert e.value.where == where


@pytest.mark.parametrize(("call", "where", "value"), [
    # not a library: checked as mathhammer.build() checks it, never a TypeError from deep inside
    (lambda: tank_shock("gunrig", "intercessors", lib="x", method="exact"), "lib", "str"),  # type: ignore[arg-type]
    (lambda: tank_shock("gunrig", "intercessors", target_lib="x", method="exact"), "target_lib", "str"),  # type: ignore[arg-type]
    (lambda: deadly_demise("gunrig", lib=5, method="exact"), "lib", "int"),  # type: ignore[arg-type]
    (lambda: deadly_demise("gunrig", "knight", target_lib=5, method="exact"), "target_lib", "int"),  # type: ignore[arg-type]
    # targets that are neither one target nor a list of them
    (lambda: deadly_demise("gunrig", None, method="exact"), "--target", "NoneType"),  # type: ignore[arg-type]
    (lambda: deadly_demise("gunrig", 5, method="exact"), "--target", "int"),  # type: ignore[arg-type]
    (lambda: deadly_demise("gunrig", Path("knight"), method="exact"), "--target", "PosixPath"),  # type: ignore[arg-type]
    # target models and wounds left checked as mathhammer.target() checks them
    (lambda: tank_shock("gunrig", "intercessors", target_models="3", method="exact"), "--target-models", "3"),  # type: ignore[arg-type]
    (lambda: tank_shock("gunrig", "intercessors", target_models=2.0, method="exact"), "--target-models", "2.0"),  # type: ignore[arg-type]
    (lambda: tank_shock("gunrig", "intercessors", target_models=True, method="exact"), "--target-models", "True"),
    (lambda: deadly_demise("gunrig", "intercessors", wounds_left=1.0, method="exact"), "--wounds-left", "1.0"),  # type: ignore[arg-type]
])
def test_arguments_of_the_wrong_kind_name_the_argument(call: Any, where: str, value: str) -> None:
    with pytest.raises(InputError) as e:
        call()
    assert (e.value.where, e.value.value) == (where, value)


def test_numpy_integers_are_whole_numbers() -> None:
    one, n = np.int64(1), np.int64(2_000)
    r = deadly_demise("gunrig", "intercessors", models=one, trials=n, seed=np.int64(3))
    assert r.to_dict() == deadly_demise("gunrig", "intercessors", models=1, trials=2_000, seed=3).to_dict() | {
        "timing": r.to_dict()["timing"]}
    assert type(r.seed) is int and type(r.trials) is int
    t = tank_shock("gunrig", "intercessors", target_models=np.int64(3), wounds_left=one, trials=n, seed=np.uint8(3))
    assert t.seed == 3 and sum(g.models for g in t.targets[0].target.groups) == 3
    json.dumps(t.to_dict())


# --- the JSON documents -----------------------------------------------------------------------
@pytest.mark.parametrize("method", ["exact", "monte-carlo", "both"])
def test_json_documents_match_their_schemas(method: str) -> None:
    doc = tank_shock("gunrig", "intercessors + captain", method=method, trials=3_000, seed=1).to_dict()
    TS_SCHEMA.validate(doc)
    assert doc["schema"] == "mathhammer.tank-shock/1" and doc["method"] == method
    assert doc["stratagems"][0]["name"] == "Tank Shock" and doc["stratagems"][0]["cp"] == 1
    assert set(doc["mortal_wounds"]) == set(Distribution(np.ones(1)).to_dict())  # shoot's stat block
    for targets in ([], ["intercessors", "knight"]):
        doc = deadly_demise("gunrig", targets, method=method, trials=3_000, seed=1).to_dict()
        DD_SCHEMA.validate(doc)
        assert doc["schema"] == "mathhammer.deadly-demise/1" and len(doc["targets"]) == len(targets)
        assert ("agreement" in doc) == (method == "both")


def test_method_both_falls_back_to_monte_carlo_when_the_exact_engine_refuses() -> None:
    with pytest.raises(NotExactError):
        deadly_demise("12D6", models=1000, method="exact")
    r = deadly_demise("12D6", ["T4 SV3+ W1 MODELS10"], models=1000, method="both", trials=1_000, seed=1)
    assert r.method == "monte-carlo" and r.agreement is None
    assert any("--method both ran Monte Carlo alone" in w for w in r.warnings)
    # 1000 models: at least one of them explodes but for (5/6)^1000; 10 W1 models always die
    assert r.targets[0].p_destroy_unit() == 1.0


def test_a_deadly_demise_without_a_target_has_no_damage_to_show() -> None:
    result = deadly_demise("D3", method="exact")
    assert result.mortal_wounds.mean() == pytest.approx(2 / 6)  # a 6 (1/6) then D3 (mean 2)
    for read in (lambda: result.damage, lambda: result.models_destroyed, lambda: result.groups,
                 result.p_destroy_unit):
        with pytest.raises(InputError, match="no target"):
            read()
