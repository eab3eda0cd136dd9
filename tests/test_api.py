"""The library API (mathhammer.api, docs/api.md): the same numbers as the command line for the
same seed, every documented example runs, keywords are checked, and no call leaves global state."""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

import mathhammer
from mathhammer import api
from mathhammer.cli.root import app
from mathhammer.errors import InputError, MathhammerError, ProfileError

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "api.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_docs_api_has_examples() -> None:
    assert len(_blocks()) >= 4


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_docs_api_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(_blocks()[index], f"docs/api.md block {index}", "exec"), {})
    out = capsys.readouterr().out
    assert out.strip()
    assert "False" not in out  # the examples print True where they check something


def test_readme_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_package_reexports_the_api() -> None:
    assert mathhammer.run is api.run and mathhammer.build is api.build
    with pytest.raises(AttributeError):
        mathhammer.no_such_thing  # noqa: B018


def _cli_json(*args: str) -> dict[str, object]:
    r = CliRunner().invoke(app, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize(("weapons", "target", "options", "cli"), [
    (["railgun"], "knight", {}, []),
    (["2x heavy rail rifle", "A2 BS4+ S7 AP-1 D2"], "boyz", {"cover": True, "reroll_hits": "ones"},
     ["--cover", "--reroll-hits", "ones"]),
    (["A4 WS3+ S6 AP-1 D2 [LANCE]"], "T5 SV4+ W3 MODELS3", {"melee": True, "charged": True}, ["--charged"]),
])
def test_api_equals_cli_for_the_same_seed(weapons: list[str], target: str, options: dict[str, object],
                                          cli: list[str]) -> None:
    command = "fight" if options.get("melee") else "shoot"
    doc = _cli_json(command, *weapons, "--target", target, "--trials", "20000", "--seed", "11", *cli)
    result = api.run(weapons, target, trials=20_000, seed=11, **options)  # type: ignore[arg-type]
    mine = result.to_dict()
    for key in ("damage", "models_destroyed", "p_destroy_unit", "weapons", "groups", "stages", "seed", "trials"):
        assert mine[key] == doc[key], key


def test_api_exact_agrees_with_a_closed_form() -> None:
    # 1 attack BS4+ S4 vs T4 (4+), Sv7+ (no save), D1: P(1 damage) = 1/2 * 1/2.
    r = api.run("A1 BS4+ S4 AP0 D1", "T4 SV- W1 MODELS5", method="exact")
    assert r.damage.mean() == pytest.approx(float(Fraction(1, 4)), abs=1e-12)
    assert r.method == "exact"


def test_build_once_run_many_is_the_same_as_run() -> None:
    attack = api.build("railgun", "knight", half_range=True)
    a = api.run_attack(attack, trials=5_000, seed=3)
    b = api.run("railgun", "knight", half_range=True, trials=5_000, seed=3)
    assert a.damage.counts.tolist() == b.damage.counts.tolist()  # type: ignore[union-attr]


def test_an_attack_run_again_is_compiled_once_and_its_results_stay_apart() -> None:
    from mathhammer import engine
    from mathhammer.compile import compile_matchup

    attack = api.build("railgun", "knight", half_range=True)
    first = api.run_attack(attack, method="exact")
    # an equal matchup built again finds the same compiled tables
    assert engine._compiled(api.build("railgun", "knight", half_range=True).matchup) is \
        engine._compiled(attack.matchup)
    fresh = compile_matchup(attack.matchup)  # what the cache must equal
    kept = engine._compiled(attack.matchup)
    assert kept.plan == fresh.plan
    assert kept.unit is not None and fresh.unit is not None
    for name in ("stages", "rolls", "roll_maps", "roll_flags", "params", "groups", "stage_offsets"):
        assert getattr(kept.unit, name).tolist() == getattr(fresh.unit, name).tolist(), name
        assert not getattr(kept.unit, name).flags.writeable, name  # shared: nothing may write to it
    # one result's provenance is its own: changing it changes no other result's
    first.provenance["thresholds"]["hit"]["needed"] = 99
    first.provenance["thresholds"]["damage"]["values"].append(99)
    second = api.run_attack(attack, method="exact")
    assert second.provenance["thresholds"] == fresh.plan.to_dict()
    assert second.provenance["thresholds"]["hit"]["needed"] != 99
    assert second.damage.mean() == pytest.approx(first.damage.mean(), abs=0)


def test_the_compiled_matchups_kept_are_the_last_few(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer import engine

    monkeypatch.setattr(engine, "_COMPILED", {})
    monkeypatch.setattr(engine, "_COMPILED_KEPT", 3)
    attacks = [api.build(f"A{n} BS3+ S5 AP-1 D2", "T4 SV3+ W2 MODELS5") for n in range(1, 6)]
    for attack in attacks:
        api.run_attack(attack, method="exact")
    assert list(engine._COMPILED) == [a.matchup for a in attacks[-3:]]
    api.run_attack(attacks[2], method="exact")  # used again: kept longest
    api.run_attack(attacks[0], method="exact")
    assert list(engine._COMPILED) == [attacks[4].matchup, attacks[2].matchup, attacks[0].matchup]


def test_a_matchup_that_cannot_be_hashed_is_compiled_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer import engine

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

    calls: list[object] = []
    monkeypatch.setattr(engine, "compile_matchup", lambda m: calls.append(m) or "compiled")
    monkeypatch.setattr(engine, "_COMPILED", {})
    thing = Unhashable()
    assert engine._compiled(thing) == "compiled"  # type: ignore[arg-type]
    assert engine._compiled(thing) == "compiled"  # type: ignore[arg-type]
    assert calls == [thing, thing] and engine._COMPILED == {}


def test_a_text_given_for_a_number_is_quoted_once() -> None:
    with pytest.raises(InputError) as e:
        api.run("railgun", "knight", seed="5")  # type: ignore[arg-type]
    assert e.value.message() == "--seed: the seed must be a whole number (got '5')"
    with pytest.raises(InputError) as e:
        api.run("railgun", "knight", trials=None)  # type: ignore[arg-type]
    assert e.value.message() == "--trials: trials must be a whole number (got 'None')"


def test_enum_values_as_text_or_enum() -> None:
    from mathhammer.model import RerollPolicy

    a = api.build("railgun", "knight", reroll_hits="ONES").matchup.context
    b = api.build("railgun", "knight", reroll_hits=RerollPolicy.ONES).matchup.context
    assert a == b and a.reroll_hits is RerollPolicy.ONES


@pytest.mark.parametrize(("kwargs", "where", "hint"), [
    ({"hit_mood": 1}, "keyword", "hit_mod"),
    ({"reroll_hits": "sometimes"}, "reroll_hits", ""),
    ({"cover": "yes"}, "cover", ""),
    ({"hit_mod": 1.5}, "hit_mod", ""),
    ({"models": "3"}, "--models", ""),
    ({"method": "guess"}, "method", ""),
    ({"allocation": "random"}, "allocation", ""),
])
def test_bad_keywords_are_input_errors(kwargs: dict[str, object], where: str, hint: str) -> None:
    run_keys = {"method"}
    with pytest.raises(InputError) as info:
        api.run("railgun", "knight", trials=10, seed=1, **kwargs)  # type: ignore[arg-type]
    assert info.value.where == where
    assert hint in info.value.hint
    assert not (set(kwargs) - run_keys) or "Traceback" not in info.value.message()


def test_a_melee_attack_cannot_be_in_cover() -> None:
    with pytest.raises(InputError, match="shooting situation"):
        api.build("A4 WS3+ S6 AP-1 D2", "knight", melee=True, cover=True)


def test_no_weapon_and_unknown_profiles_are_errors() -> None:
    with pytest.raises(InputError):
        api.build([], "knight")
    with pytest.raises(ProfileError):
        api.build("no such gun", "knight")
    assert issubclass(ProfileError, MathhammerError)


@pytest.mark.parametrize(("call", "where"), [
    (lambda: api.run("railgun", "knight", trials="100"), "--trials"),
    (lambda: api.run("railgun", "knight", trials=100.0), "--trials"),
    (lambda: api.run("railgun", "knight", trials=True), "--trials"),
    (lambda: api.run("railgun", "knight", trials=100, seed="1"), "--seed"),
    (lambda: api.run("railgun", "knight", trials=100, seed=2**63), "--seed"),  # the command line's range
    (lambda: api.run("railgun", "knight", trials=100, seed=True), "--seed"),
    (lambda: api.run("railgun", "knight", trials=100, threads="2"), "--threads"),
    (lambda: api.run("railgun", "knight", trials=100, target_models="5"), "--target-models"),
    (lambda: api.run("railgun", "knight", trials=100, only=123), "--only"),
    (lambda: api.run("railgun", "knight", trials=100, exclude=[None]), "--except"),
    (lambda: api.run("railgun", "knight", trials=100, lib="x"), "lib"),
    (lambda: api.run("railgun", "knight", trials=100, melee="no"), "melee"),
    (lambda: api.run("railgun", "knight", trials=100, stages="no"), "stages"),
    (lambda: api.target(None), "target"),
    (lambda: api.target("knight", lib=1), "lib"),
    (lambda: api.run_attack(None), "attack"),
    (lambda: api.library(123), "profiles"),
    (lambda: api.library(None), "profiles"),
    (lambda: api.library([None]), "profiles"),  # a None in the list was a TypeError from pathlib
    (lambda: api.library(["x", 5]), "profiles"),
    (lambda: api.library(""), "profiles"),  # Path('') is the current folder: refused as --profiles '' is
    (lambda: api.library([" "]), "profiles"),
    (lambda: api.libraries(rosters=""), "rosters"),
    (lambda: api.library(faction=5), "--faction"),  # an AttributeError from deep inside
    (lambda: api.libraries(faction=["tau"]), "--faction"),
    (lambda: api.library(use_env="no"), "use_env"),  # was taken as true
    (lambda: api.libraries(use_env=0), "use_env"),
    (lambda: api.libraries(rosters=[123]), "rosters"),
    (lambda: api.read_roster(None), "roster"),
])
def test_arguments_of_the_wrong_type_are_input_errors(call, where) -> None:
    # a raw TypeError or AttributeError before; a string seed of 2**64 and trials=True were taken
    with pytest.raises(InputError) as e:
        call()
    assert e.value.where == where


@pytest.mark.parametrize("method", ["exact", "both"])
@pytest.mark.parametrize(("kwargs", "where"), [
    ({"seed": "abc"}, "--seed"), ({"seed": -5}, "--seed"), ({"seed": 2**63}, "--seed"), ({"seed": 1.5}, "--seed"),
    ({"threads": "x"}, "--threads"), ({"threads": 0}, "--threads"), ({"threads": True}, "--threads"),
])
def test_seed_and_threads_are_checked_whatever_the_method(method: str, kwargs: dict[str, object], where: str) -> None:
    # method="exact" took any seed and threads: they change nothing there, but a bad value is an error
    with pytest.raises(InputError) as e:
        api.run("railgun", "knight", method=method, trials=100, **kwargs)  # type: ignore[arg-type]
    assert e.value.where == where
    attack = api.build("railgun", "knight")
    with pytest.raises(InputError):
        api.run_attack(attack, method=method, trials=100, **kwargs)  # type: ignore[arg-type]


def test_one_name_or_path_is_not_read_letter_by_letter(tmp_path: Path) -> None:
    # only="railgun" was the letters r, a, i, ...; library("/x/profiles") loaded "/" as a folder
    assert api.run("hammerhead", "knight", method="exact", only="railgun").damage.mean() == pytest.approx(
        float(Fraction(1, 2) * Fraction(19, 2) * Fraction(1, 2)), abs=1e-12)  # BS4+; 1/6 mortal + 1/2 * 2/3 unsaved
    with pytest.raises(ProfileError, match="not a folder") as e:
        api.library(str(tmp_path / "missing"))
    assert str(tmp_path / "missing") in e.value.message()


def test_objects_of_the_wrong_kind_are_input_errors_naming_them() -> None:
    from mathhammer.model import Target

    raw = Target(name="raw", toughness=4, save=3, wounds=2, models=5)  # not what api.target() returns
    with pytest.raises(InputError, match=r"target: .*mathhammer.target\(\).*\(got 'Target'\)"):
        api.build("railgun", raw)
    with pytest.raises(InputError, match=r"weapons: .*\(got 'int'\)"):
        api.build(["railgun", 3], "knight")
    with pytest.raises(InputError, match=r"weapons: .*\(got 'NoneType'\)"):
        api.run(None, "knight")
    assert api.run(("railgun",), "knight", method="exact").damage.mean() == pytest.approx(19 / 9, abs=1e-12)


def test_a_call_leaves_no_global_state() -> None:
    import numba

    env = dict(os.environ)
    threads = numba.get_num_threads()
    api.run("railgun", "knight", trials=50_000, seed=2, threads=1)
    api.run("railgun", "knight", method="exact")
    assert numba.get_num_threads() == threads
    assert dict(os.environ) == env


def test_a_target_resolved_once_builds_the_same_attack() -> None:
    squad = api.target("intercessors + captain", target_models=4)
    a = api.build("A4 BS3+ S5 AP-1 D1", squad)
    b = api.build("A4 BS3+ S5 AP-1 D1", "intercessors + captain", target_models=4)
    assert a.matchup == b.matchup and a.explain == b.explain
    with pytest.raises(InputError, match="resolved target"):
        api.build("A4 BS3+ S5 AP-1 D1", squad, wounds_left=1)


def test_numpy_integers_generators_sets_and_roster_objects_are_accepted() -> None:
    # the type checks must not refuse what worked before them: notebook loops pass numpy's
    # integers, and any iterable of names or paths is a list of them
    import numpy as np

    attack = api.build((w for w in ["railgun"]), "knight")
    by_np = api.run_attack(attack, trials=np.int64(2000), seed=np.int64(7), threads=np.int64(1))
    by_int = api.run_attack(attack, trials=2000, seed=7, threads=1)
    assert by_np.damage.mean() == by_int.damage.mean() and type(by_np.seed) is int and type(by_np.trials) is int
    assert api.target("knight", target_models=np.int64(1)).target.models == 1
    assert api.run("hammerhead", "knight", only={"railgun"}, method="exact").damage.mean() == pytest.approx(
        float(Fraction(1, 2) * Fraction(19, 2) * Fraction(1, 2)), abs=1e-12)
    from mathhammer.sweep import parse_saves, parse_toughness

    assert parse_toughness(range(3, 6)) == parse_toughness(np.arange(3, 6)) == (3, 4, 5)
    assert parse_saves(np.int64(4)) == (4,)


def test_numpy_integers_are_whole_numbers_for_models_modifiers_and_the_battle() -> None:
    # they were "must be a whole number (got 1)": the message said a whole number was not one
    import numpy as np

    i = np.int64
    for weapon, target, options in [
        ("railgun", "knight", {"models": 2, "hit_mod": 1, "wound_mod": -1, "save_mod": 1, "damage_mod": -1,
                               "bs_improve": 1, "ap_improve": 1, "crit_hit": 5, "crit_wound": 5}),
        ("crisis sunforge", "knight", {"detachment": "kauyon", "round": 3, "range": 6}),
    ]:
        given = api.build(weapon, target, **{k: i(v) if isinstance(v, int) else v for k, v in options.items()})
        plain = api.build(weapon, target, **options)
        assert given == plain
        assert api.run_attack(given, method="exact").damage.mean() == api.run_attack(plain, method="exact").damage.mean()
        assert all(type(getattr(given.matchup.context, k)) is int for k in options if k in api.SITUATION)
        assert type(given.matchup.context.firing_models) is int


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / "shared" / "data" / "rosters-prettyscribe").is_dir(),
                    reason="the shared .rosz samples are not here")
def test_roster_objects_are_accepted_where_roster_files_are() -> None:
    path = Path(__file__).resolve().parents[2] / "shared" / "data" / "rosters-prettyscribe" / "necrons-10e.rosz"
    roster = api.read_roster(path)
    for lib in (api.library(rosters=[roster]), api.libraries(rosters=(r for r in [roster]))[0]):
        assert lib.unit_named("Overlord") is not None


def test_ws_improve_is_bs_improve_as_fight_spells_it() -> None:
    """`fight --ws-improve` and compare's `ws_improve` column take it; so does the library. WS3+
    improved by 1 is WS2+: 2 attacks, each 5/6 x 1/2 x 1/3 = 5/36 to kill the one W1 model."""
    from fractions import Fraction

    expected = float(1 - (1 - Fraction(5, 36)) ** 2)
    for spelled in ("ws_improve", "bs_improve"):
        got = api.run("A2 WS3+ S4 AP0 D1", "T4 SV3+ W1", melee=True, method="exact", **{spelled: 1}).damage.mean()
        assert abs(got - expected) < 1e-12
    with pytest.raises(InputError, match="given twice: as ws_improve and as bs_improve"):
        api.run("A2 WS3+ S4 AP0 D1", "T4 SV3+ W1", melee=True, method="exact", ws_improve=1, bs_improve=1)
    for spelled in ("ws_improve", "bs_improve"):  # a bad value is named as it was given
        with pytest.raises(InputError) as e:
            api.run("A2 WS3+ S4 AP0 D1", "T4 SV3+ W1", melee=True, method="exact", **{spelled: 1.5})
        assert e.value.where == spelled
