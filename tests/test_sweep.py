"""The sweep library (mathhammer.sweep): axes, cell targets and seeds, cells equal to single
runs, values against closed forms, records against the published schema."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from mathhammer import api
from mathhammer.errors import InputError, MatchupError, ProfileError
from mathhammer.notation import parse_target
from mathhammer.sweep import (
    NO_SAVE,
    SCHEMA,
    Grid,
    Metric,
    cell_seed,
    iter_cells,
    parse_saves,
    parse_toughness,
    plan_sweep,
    record,
    run_sweep,
)

ROOT = Path(__file__).resolve().parent.parent
SWEEP_SCHEMA = json.loads((ROOT / "schemas" / "sweep-1.schema.json").read_text(encoding="utf-8"))
RECORD_SCHEMA = {"$ref": "#/$defs/record", "$defs": SWEEP_SCHEMA["$defs"]}

BOLTER = "A2 BS3+ S4 AP-1 D1"


@pytest.fixture(scope="module")
def lib():
    return api.library(use_env=False)


# -- axes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("3-12", tuple(range(3, 13))), ("4", (4,)), ("3,5,8", (3, 5, 8)), ("8,3,5", (3, 5, 8)),
    ("1-3,8", (1, 2, 3, 8)), (" 4 - 6 ", (4, 5, 6)), ("100", (100,)), (7, (7,)), ([2, 9], (2, 9)),
])
def test_toughness_ranges(text, expected) -> None:
    assert parse_toughness(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("2-6", (2, 3, 4, 5, 6)), ("2-7", (2, 3, 4, 5, 6, NO_SAVE)), ("3+", (3,)), ("2+-4+", (2, 3, 4)),
    ("2,4,-", (2, 4, NO_SAVE)), ("-", (NO_SAVE,)), ("7", (NO_SAVE,)),
])
def test_save_ranges(text, expected) -> None:
    assert parse_saves(text) == expected


@pytest.mark.parametrize(("parse", "text", "what", "value"), [
    (parse_toughness, "", "empty", ""),
    (parse_toughness, " , ", "empty", " , "),
    (parse_toughness, "abc", "expected a range", "abc"),
    (parse_toughness, "3-", "expected a range", "3-"),
    (parse_toughness, "4+", "expected a range", "4+"),
    (parse_toughness, "-", "expected a range", "-"),
    (parse_toughness, "12-3", "a range must go up", "12-3"),
    (parse_toughness, "0-4", "Toughness must be from 1 to 100", "0-4"),
    (parse_toughness, "101", "Toughness must be from 1 to 100", "101"),
    (parse_toughness, "99999999999", "Toughness must be from 1 to 100", "99999999999"),
    (parse_toughness, "3-5,4", "listed twice", "4"),
    (parse_toughness, True, "expected a range", True),
    (parse_saves, "1-6", "Save must be from 2 to 7", "1-6"),
    (parse_saves, "8", "Save must be from 2 to 7", "8"),
    (parse_saves, "6-2", "a range must go up", "6-2"),
    (parse_saves, "7,-", "listed twice", "7"),
    (parse_saves, "x", "expected a range", "x"),
])
def test_bad_ranges_are_input_errors(parse, text, what, value) -> None:
    with pytest.raises(InputError) as e:
        parse(text)
    assert what in e.value.what and e.value.value == value
    assert e.value.where == ("--toughness" if parse is parse_toughness else "--save")


def test_cell_targets_read_back_as_the_cell(lib) -> None:
    grid = Grid(toughness=(5,), saves=(3, NO_SAVE), wounds=4, models=3, invulnerable=4, feel_no_pain=5,
                keywords=("VEHICLE", "STEALTH"))
    for sv in grid.saves:
        t = parse_target(grid.target(5, sv))
        assert (t.toughness, t.save, t.wounds, t.models, t.invulnerable, t.feel_no_pain) == (5, sv, 4, 3, 4, 5)
        assert t.keywords == frozenset({"VEHICLE"}) and t.stealth
    assert grid.target(5, NO_SAVE).startswith("T5 SV- W4 MODELS3")


# -- seeds --------------------------------------------------------------------------------------

def test_cell_seed_is_stable_and_depends_on_seed_and_target() -> None:
    # the documented derivation (docs/sweep.md): a changed one would silently change every
    # published sweep's numbers
    digest = hashlib.blake2b(b"mathhammer.sweep/1\x001\x00T4 SV3+ W1 MODELS1", digest_size=8).digest()
    assert cell_seed(1, "T4 SV3+ W1 MODELS1") == int.from_bytes(digest, "big") >> 1
    seeds = {cell_seed(s, f"T{t} SV3+ W1 MODELS1") for s in (1, 2) for t in range(1, 30)}
    assert len(seeds) == 58 and all(0 <= s < 2**63 for s in seeds)
    # the one-line formula docs/sweep.md gives computes the same seed
    text = (Path(__file__).resolve().parent.parent / "docs" / "sweep.md").read_text(encoding="utf-8")
    formula = next(part for part in text.split("`") if part.startswith("int.from_bytes(hashlib.blake2b("))
    for s, target in ((1, "T4 SV3+ W1 MODELS1"), (7, "T3 SV2+ W16 MODELS10 [VEHICLE]")):
        assert eval(formula, {"hashlib": hashlib, "S": s, "target": target}) == cell_seed(s, target)  # noqa: S307


def test_a_cell_does_not_depend_on_the_rest_of_the_grid(lib) -> None:
    small = run_sweep(BOLTER, toughness="4", save="3", wounds=2, trials=3000, seed=11, lib=lib)
    big = run_sweep(BOLTER, toughness="1-6", save="2-7", wounds=2, trials=3000, seed=11, lib=lib)
    a, b = small.cell(4, 3).result, big.cell(4, 3).result
    assert a.seed == b.seed == cell_seed(11, "T4 SV3+ W2 MODELS1")
    assert np.array_equal(a.damage.counts, b.damage.counts)


# -- cells equal single runs -----------------------------------------------------------------------

SITUATION = {"hit_mod": 1, "reroll_wounds": "ones", "cover": True}


@pytest.mark.parametrize("jobs", [1, 2])
def test_monte_carlo_cells_equal_single_runs(lib, jobs) -> None:
    s = run_sweep(BOLTER, toughness="3-5", save="3,-", wounds=2, models=3, invulnerable=5, trials=4000, seed=7,
                  firing_models=4, lib=lib, jobs=jobs, **SITUATION)
    assert len(s.cells) == 6
    for cell in s.cells:
        single = api.run(BOLTER, cell.target, models=4, trials=4000, seed=cell_seed(7, cell.target), lib=lib,
                         stages=False, **SITUATION)
        assert cell.result.seed == single.seed
        assert np.array_equal(cell.result.damage.counts, single.damage.counts)
        assert np.array_equal(cell.result.models_destroyed.counts, single.models_destroyed.counts)
        assert record(s.plan, cell)["damage"] == single.damage.to_dict()


def test_exact_cells_equal_single_runs(lib) -> None:
    s = run_sweep(["railgun", "2x A2 BS4+ S7 AP-1 D2"], toughness="4,10-12", save="2-7", wounds=8, feel_no_pain=6,
                  keywords=["VEHICLE"], method="exact", lib=lib, jobs=2)
    assert s.plan.seed is None and len(s.cells) == 24
    for cell in s.cells:
        single = api.run(["railgun", "2x A2 BS4+ S7 AP-1 D2"], cell.target, method="exact", lib=lib)
        assert cell.result.seed is None
        assert np.array_equal(cell.result.damage.probabilities, single.damage.probabilities)
        assert cell.result.p_destroy_unit() == single.p_destroy_unit()


def test_results_do_not_depend_on_jobs(lib) -> None:
    def records(jobs: int, method: str) -> list[dict]:
        plan = plan_sweep(BOLTER, toughness="2-5", save="2-7", wounds=2, trials=2000, seed=3, method=method, lib=lib)
        return [record(plan, c) for c in iter_cells(plan, jobs=jobs)]

    for method in ("monte-carlo", "exact"):
        one, two = records(1, method), records(2, method)
        assert [(r["toughness"], r["save"]) for r in two] == [(t, sv) for t in range(2, 6) for sv in range(2, 8)]
        assert one == two


def test_without_a_seed_one_is_drawn_and_recorded(lib) -> None:
    s = run_sweep(BOLTER, toughness="4", save="3,4", wounds=2, trials=1000, lib=lib)
    assert s.plan.seed is not None
    for cell in s.cells:
        assert cell.result.seed == cell_seed(s.plan.seed, cell.target)


# -- values against closed forms -------------------------------------------------------------------

def _wound(s: int, t: int) -> Fraction:
    """P(wound) of Strength s against Toughness t (R-3 table, from the rules)."""
    need = 2 if s >= 2 * t else 3 if s > t else 4 if s == t else 6 if 2 * s <= t else 5
    return Fraction(7 - need, 6)


def _unsaved(save: int, ap: int) -> Fraction:
    """P(save fails) of an armour save ``save`` (7: none) against AP ``ap`` (a 1 always fails)."""
    need = save + ap
    return Fraction(1) if need >= 7 else Fraction(need - 1, 6)


def test_exact_metrics_match_closed_forms(lib) -> None:
    # two W1 models, two D1 shots (A2 BS3+ S4 AP-1): each shot kills independently with p,
    # and a kill removes exactly one model, so damage = models destroyed ~ Binomial(2, p)
    sweeps = {m: run_sweep(BOLTER, toughness="1-9", save="2-7", wounds=1, models=2, metric=m, method="exact", lib=lib)
              for m in Metric}
    checked = 0
    for t in range(1, 10):
        for sv in range(2, 8):
            p = Fraction(4, 6) * _wound(4, t) * _unsaved(sv, 1)
            expected = {Metric.MEAN: 2 * p, Metric.MODELS: 2 * p, Metric.P_KILL_MODEL: 1 - (1 - p) ** 2,
                        Metric.P_DESTROY: p ** 2}
            for m, s in sweeps.items():
                assert s.cell(t, sv).value == pytest.approx(float(expected[m]), abs=1e-12), (m, t, sv)
                checked += 1
    assert checked == 9 * 6 * 4


def test_monte_carlo_mean_within_standard_errors(lib) -> None:
    s = run_sweep(BOLTER, toughness="3,4,8", save="2,5,-", wounds=2, trials=40_000, seed=5, lib=lib)
    for t in (3, 4, 8):
        for sv in (2, 5, NO_SAVE):
            p = Fraction(4, 6) * _wound(4, t) * _unsaved(sv, 1)
            mean, var = 2 * float(p), 2 * float(p) * (1 - float(p))
            assert abs(s.cell(t, sv).value - mean) <= 5 * (var / 40_000) ** 0.5


def test_default_wounds_take_all_the_damage(lib) -> None:
    # railgun: one shot of D6+6, at most 12; 3 models x 2 attacks of D2 with SUSTAINED HITS 1
    # (a critical hit is two hits): 3 x 2 x 2 hits x 2 damage = 24
    assert plan_sweep("railgun", toughness="4", save="3", method="exact", lib=lib).grid.wounds == 12
    plan = plan_sweep("A2 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", toughness="4", save="3", firing_models=3,
                      method="exact", lib=lib)
    assert plan.grid.wounds == 24 and not plan.grid.wounds_given
    s = run_sweep("railgun", toughness="4,12", save="3", method="exact", lib=lib)
    # nothing lost: the mean is hit (BS5+) x wound (S20: 2+ at T4, 3+ at T12, TWIN-LINKED
    # re-rolls a failure) x unsaved (AP-5: no save) x the mean of D6+6 (9.5)
    for t, need in ((4, 2), (12, 3)):
        once = Fraction(7 - need, 6)
        wound = once + (1 - once) * once
        assert s.cell(t, 3).value == pytest.approx(float(Fraction(2, 6) * wound * Fraction(19, 2)), abs=1e-12)


# -- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("options", "where", "what"), [
    ({"metric": "models"}, "--metric", "needs the targets' Wounds"),
    ({"metric": "p-destroy"}, "--metric", "needs the targets' Wounds"),
    ({"metric": "median", "wounds": 2}, "--metric", "not one of"),
    ({"wounds": 0}, "--wounds", "from 1 to 1,000"),
    ({"wounds": 1001}, "--wounds", "from 1 to 1,000"),
    ({"models": 0}, "--models", "from 1 to 1,000"),
    ({"invulnerable": 7}, "--invuln", "2 to 6"),
    ({"feel_no_pain": 1}, "--fnp", "2 to 6"),
    ({"keywords": ["VEHICLE]; 9x T1 SV7+ W1 [X"]}, "--keyword", "a keyword is"),
    ({"keywords": ["A+B"]}, "--keyword", "a keyword is"),
    ({"seed": -1}, "--seed", "from 0 to"),
    ({"seed": 2**63}, "--seed", "from 0 to"),
    ({"seed": True}, "--seed", "must be a whole number"),
    ({"seed": "7"}, "--seed", "must be a whole number"),
    ({"trials": 0}, "--trials", "between 1 and"),
    ({"method": "guess"}, "--method", "not one of"),
    ({"melee": True, "cover": True}, "--cover", "a shooting situation"),
    ({"toughness": "5-1"}, "--toughness", "a range must go up"),
])
def test_bad_options_are_input_errors(lib, options, where, what) -> None:
    with pytest.raises(InputError) as e:
        plan_sweep(BOLTER, lib=lib, **options)
    assert e.value.where == where and what in e.value.what


def test_bad_profiles_fail_before_anything_runs(lib) -> None:
    with pytest.raises(ProfileError):
        plan_sweep("no such gun", toughness="4", save="3", lib=lib)
    with pytest.raises(ProfileError):
        plan_sweep(BOLTER, keywords=["FEEL NO PAIN"], toughness="4", save="3", lib=lib)  # --fnp, not a keyword
    with pytest.raises(MatchupError):
        plan_sweep("A2 WS3+ S4 AP0 D1", toughness="4", save="3", lib=lib)  # a melee weapon shot


def test_melee_sweep(lib) -> None:
    s = run_sweep("A3 WS3+ S5 AP-1 D1 [LANCE]", melee=True, charged=True, toughness="5", save="3", wounds=1,
                  models=5, method="exact", lib=lib)
    p = Fraction(4, 6) * Fraction(4, 6) * _unsaved(3, 1)  # LANCE on the charge: S5 vs T5 wounds on 3+
    assert s.cell(5, 3).value == pytest.approx(float(3 * p), abs=1e-12)


# -- records ------------------------------------------------------------------------------------

def test_records_follow_the_schema(lib) -> None:
    plan = plan_sweep(BOLTER, toughness="4,5", save="3,-", wounds=2, models=2, invulnerable=5, feel_no_pain=6,
                      keywords=["infantry"], metric="p-kill-model", method="both", trials=2000, seed=9, lib=lib)
    records = [record(plan, c) for c in iter_cells(plan)]
    validator = jsonschema.Draft202012Validator(RECORD_SCHEMA)
    for r in records:
        validator.validate(r)
        assert r["schema"] == SCHEMA and r["keywords"] == ["INFANTRY"]
        assert r["value"] == r["models_destroyed"]["distribution"][1]["p_at_least"]
        assert r["agreement"]["agrees"] is True
        assert r["seed"] == cell_seed(9, r["target"]) and r["sweep_seed"] == 9
    document = {"schema": SCHEMA, "writer": {"name": "mathhammer", "version": "0"}, "records": records}
    jsonschema.Draft202012Validator(SWEEP_SCHEMA).validate(document)
    broken = dict(records[0], save=8)
    assert not jsonschema.Draft202012Validator(RECORD_SCHEMA).is_valid(broken)


def test_records_with_rows_as_json_text_read_back_the_same(lib) -> None:
    """The command line builds each distribution as JSON text (rows_json): the record reads
    back as the one of dicts; a cell without its result keeps the value, the warnings and
    the agreement (what the table, the pictures and the exit code need) and has no record."""
    from mathhammer.render.records import rows_json
    from mathhammer.render.stream import json_text

    plan = plan_sweep(BOLTER, toughness="4", save="3,-", wounds=2, models=2, method="both", trials=2000, seed=9,
                      lib=lib)
    for cell in iter_cells(plan, jobs=1):
        assert json.loads(json_text(record(plan, cell, rows_json))) == record(plan, cell)
        light = cell.without_result()
        assert light.result is None and (light.value, light.sem, light.target) == (cell.value, cell.sem, cell.target)
        assert light.agrees is True and light.warnings == tuple(cell.result.provenance.get("warnings", []))
        with pytest.raises(ValueError, match="without its result"):
            record(plan, light)


# -- documentation ------------------------------------------------------------------------------

def test_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    text = (ROOT / "docs" / "sweep.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/sweep.md", "exec"), {})  # noqa: S102 - the documented example
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1.3889"
    # hit 5/6 x wound 5/6 (T4) or 4/6 (T5) x unsaved 4/6 (Sv3+, AP-2) or 1 (no save) x 3
    rows = json.loads(out[1])
    assert [len(r) for r in rows] == [2, 2]
    assert [v for r in rows for v in r] == pytest.approx([25 / 18, 25 / 12, 10 / 9, 5 / 3], abs=1e-12)


def test_module_doctest() -> None:
    import doctest

    import mathhammer.sweep

    failed, tried = doctest.testmod(mathhammer.sweep)
    assert tried >= 2 and failed == 0


@pytest.mark.parametrize(("options", "where"), [
    ({"toughness": None}, "--toughness"), ({"keywords": [1]}, "--keyword"), ({"jobs": "2"}, "--jobs"),
    ({"jobs": 0}, "--jobs"), ({"trials": "10"}, "--trials"), ({"lib": "x"}, "lib"), ({"melee": "no"}, "melee"),
    ({"only": 5}, "--only"),
    ({"keywords": None}, "--keyword"), ({"keywords": 5}, "--keyword"),  # as only=None: not "no keywords"
    ({"target": "knight"}, "target"),  # build()'s argument: "got multiple values for argument 'target'"
])
def test_run_sweep_arguments_of_the_wrong_type_are_input_errors(options, where) -> None:
    # each was a raw TypeError, AttributeError or ValueError
    from mathhammer.sweep import run_sweep

    with pytest.raises(InputError) as e:
        run_sweep("A1 BS2+ S8 AP-2 D3", **{"toughness": "4", "save": "3", "method": "exact", **options})
    assert e.value.where == where


def test_a_target_keyword_says_the_sweep_makes_its_own() -> None:
    with pytest.raises(InputError, match="a sweep makes its own targets"):
        plan_sweep("A1 BS2+ S8 AP-2 D3", toughness=4, save=3, method="exact", target="knight")


def test_numpy_integers_are_whole_numbers_in_a_sweep() -> None:
    import numpy as np

    i = np.int64
    given = plan_sweep("A1 BS2+ S8 AP-2 D3", toughness=i(4), save=i(3), wounds=i(3), models=i(5), invulnerable=i(4),
                       feel_no_pain=i(6), firing_models=i(2), trials=i(1000), seed=i(5))
    plain = plan_sweep("A1 BS2+ S8 AP-2 D3", toughness=4, save=3, wounds=3, models=5, invulnerable=4,
                       feel_no_pain=6, firing_models=2, trials=1000, seed=5)
    assert given == plain and type(given.seed) is int and type(given.trials) is int


def test_a_cell_the_grid_lacks_and_a_plan_that_is_none_are_input_errors() -> None:
    """Sweep.cell(99, 3) was a bare ValueError (tuple.index), iter_cells("x") an AttributeError."""
    from mathhammer.sweep import iter_cells, run_sweep

    s = run_sweep("A1 BS2+ S8 AP-2 D3", toughness="4-5", save="3", method="exact")
    assert s.cell(5, 3) is s.cells[1]
    with pytest.raises(InputError, match=r"--toughness: not in the sweep \(it has 4, 5\) \(got 99\)"):
        s.cell(99, 3)
    with pytest.raises(InputError, match=r"--save: not in the sweep \(it has 3\) \(got 2\)"):
        s.cell(4, 2)
    with pytest.raises(InputError, match="plan: must be what plan_sweep"):
        iter_cells("x")  # type: ignore[arg-type]
