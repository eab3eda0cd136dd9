"""--exact and --method both on the command line (issue 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathhammer.cli import app

runner = CliRunner()
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


def run(*args: str):
    return runner.invoke(app, list(args), env=ENV)


def test_exact_json_contract() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--exact", "-f", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["method"] == "exact" and d["trials"] is None and d["seed"] is None
    assert d["damage"]["sem"] == 0
    # the Supremacy railgun (BS5+, S20 AP-5 D D6+6, twin-linked, devastating wounds) against 'knight',
    # the Knight Paladin (T11 Sv3+ W26, 5+ invulnerable against ranged attacks): hit 1/3; wound on 3+ with
    # re-roll, a 6 2/9 (mortal, no save), a 3-5 2/3 then the 5+ invulnerable fails 2/3; so damage lands with
    # 2/9 + 4/9 = 2/3 and the mean is 1/3 x 2/3 x 9.5 = 19/9
    assert abs(d["damage"]["mean"] - 19 / 9) < 1e-12
    dist = d["damage"]["distribution"]
    assert abs(sum(row["p"] for row in dist) - 1) < 1e-12
    assert abs(dist[0]["p"] - float(1 - Fraction(1, 3) * Fraction(2, 3))) < 1e-12  # P(0) = 1 - P(hit)P(damage)


def test_method_exact_equals_exact_flag() -> None:
    a = json.loads(run("shoot", "railgun", "-t", "knight", "--exact", "-f", "json").stdout)
    b = json.loads(run("shoot", "railgun", "-t", "knight", "--method", "exact", "-f", "json").stdout)
    strip = lambda d: {k: v for k, v in d.items() if k != "timing"}  # noqa: E731
    assert strip(a) == strip(b)


def test_exact_table() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--exact")
    assert r.exit_code == 0 and "exact:" in r.stdout and "±" not in r.stdout.split("Damage")[1].splitlines()[0]


def test_method_both_agrees() -> None:
    r = run("shoot", "A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "-t", "T4 SV3+ W2 MODELS10", "--reroll-hits", "ones",
            "--method", "both", "--trials", "200000", "--seed", "4", "-f", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["method"] == "both" and d["agreement"]["agrees"] is True
    assert d["monte_carlo"]["trials"] == 200000 and d["monte_carlo"]["seed"] == 4
    assert abs(d["agreement"]["mean_difference_se"]) <= 5
    table = run("shoot", "railgun", "-t", "knight", "--method", "both", "--trials", "100000", "--seed", "4")
    assert table.exit_code == 0 and "Monte Carlo check" in table.stdout and "agree" in table.stdout


def test_exact_and_method_conflict_is_an_error() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--exact", "--method", "both")
    assert r.exit_code == 1 and "--exact means --method exact" in r.stderr


def test_fight_exact() -> None:
    r = run("fight", "A4 WS3+ S6 AP-1 D2 [LANCE]", "-t", "T6 SV3+ W3 MODELS5", "--charged", "--exact", "-f", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["method"] == "exact"


def test_exact_never_imports_numba() -> None:
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom mathhammer.cli import app\n"
            "r = CliRunner().invoke(app, ['shoot', 'railgun', '-t', 'knight', '--exact', '-f', 'json'])\n"
            "assert r.exit_code == 0, r.output\nprint('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.statistical
def test_disagreement_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Monte Carlo engine with a planted bug (every Hit roll one step worse) must be caught."""
    from mathhammer.codes import Stage
    from mathhammer.engine import montecarlo

    real = montecarlo.run

    def buggy(inputs, **kw):
        import dataclasses

        import numpy as np
        stages = np.array(inputs.stages)
        stages[Stage.HIT] = np.where(np.isin(np.arange(36) // 6, [2]), 0, stages[Stage.HIT])  # 3s miss
        stages.setflags(write=False)  # same array type as compile.py's, so no new kernel compile
        return real(dataclasses.replace(inputs, stages=stages), **kw)

    monkeypatch.setattr(montecarlo, "run", buggy)
    r = run("shoot", "A10 BS3+ S5 AP-1 D2", "-t", "T4 SV3+ W2 MODELS10", "--method", "both", "--trials", "200000",
            "--seed", "4", "-f", "json")
    assert r.exit_code == 3, r.output
    assert "DISAGREE" in r.stderr and json.loads(r.stdout)["agreement"]["agrees"] is False


def test_not_exact_is_one_line_and_both_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer.engine import exact

    monkeypatch.setattr(exact, "_S_ROW", 1.0)  # make the 2023 spill-over "too large" (1 s per element)
    args = ["shoot", "A 2D6 BS3+ S8 AP-2 D D6 [DEVASTATING WOUNDS]", "-n", "3", "-t", "T4 SV3+ W3 MODELS10",
            "--rules", "2023"]
    r = run(*args, "--exact")
    assert r.exit_code == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith("Error: --method exact: R-6.4 (2023 text)") and lines[1:] == [
        "  hint: Monte Carlo (without --exact) estimates it"]  # the spill-over is no stage: no --no-stages
    r = run(*args, "--method", "both", "--trials", "20000", "--seed", "1", "-f", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["method"] == "monte-carlo"
    assert "Monte Carlo alone" in r.stderr


@pytest.mark.parametrize("extra", [["--cover"], ["--save-mod", "1"]])
def test_R_7_2_save_7_plus_saves_on_6_with_a_net_plus_1(extra: list[str]) -> None:
    # Per attack: hit 3+ (2/3), S4 vs T3 wounds on 3+ (2/3), Sv7+ with +1 fails on 1-5 (5/6),
    # FNP 5+ lets 2/3 of the 1 damage through; W1 models, 10 of them, so no attack is lost:
    # mean = 10 * 2/3 * 2/3 * 5/6 * 2/3 = 200/81.
    r = run("shoot", "A10 BS3+ S4 AP0 D1", "-t", "T3 SV7+ W1 MODELS10 FNP5+", *extra, "--exact", "-f", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert abs(d["damage"]["mean"] - 200 / 81) < 1e-12
    assert d["thresholds"]["save"]["needed"] == 6


def test_sampling_options_typed_with_exact_are_said_to_change_nothing() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--exact", "--trials", "5", "--seed", "3", "-f", "json")
    assert r.exit_code == 0, r.output
    assert "--trials, --seed have no effect with --exact: it samples nothing" in json.loads(r.stdout)["warnings"]
    r = run("shoot", "railgun", "-t", "knight", "--exact", "-f", "json")  # defaults are not "given"
    assert not any("samples nothing" in w for w in json.loads(r.stdout)["warnings"])
    r = run("shoot", "railgun", "-t", "knight", "--trials", "500", "--seed", "3", "-f", "json")  # Monte Carlo uses them
    assert not any("samples nothing" in w for w in json.loads(r.stdout)["warnings"])


def test_method_both_checks_the_hazardous_wounds_too() -> None:
    r = run("shoot", "A2 BS3+ S8 AP-3 D2 [HAZARDOUS]", "-n", "5", "-t", "T4 SV3+ W2 MODELS5", "--method", "both",
            "--trials", "200000", "--seed", "4", "-f", "json")
    assert r.exit_code == 0, r.output
    agreement = json.loads(r.stdout)["agreement"]
    assert agreement["agrees"] is True and 0 <= agreement["hazardous_max_cdf_gap"] <= agreement["dkw_bound"]
    plain = json.loads(run("shoot", "A2 BS3+ S8 AP-3 D2", "-t", "T4 SV3+ W2 MODELS5", "--method", "both", "--trials",
                           "20000", "--seed", "4", "-f", "json").stdout)
    assert plain["agreement"]["hazardous_max_cdf_gap"] is None


def test_a_hazardous_disagreement_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """Monte Carlo with a planted Hazardous bug (twice the tests) must be caught, the damage and
    models destroyed agreeing: 5 tests give 3 x Binomial(5, 1/6) wounds, 10 tests a CDF gap of
    P(no failure, 5 tests) - P(none, 10) = 0.40 - 0.16, far past the DKW bound."""
    import dataclasses

    from mathhammer.engine import montecarlo

    real = montecarlo.run

    def buggy(inputs, **kw):  # type: ignore[no-untyped-def]
        return real(dataclasses.replace(inputs, hazard_firing=2 * inputs.hazard_firing,
                                        hazard_max=2 * inputs.hazard_max), **kw)

    monkeypatch.setattr(montecarlo, "run", buggy)
    r = run("shoot", "A2 BS3+ S8 AP-3 D2 [HAZARDOUS]", "-n", "5", "-t", "T4 SV3+ W2 MODELS5", "--method", "both",
            "--trials", "20000", "--seed", "4", "-f", "json")
    assert r.exit_code == 3, r.output
    agreement = json.loads(r.stdout)["agreement"]
    assert agreement["agrees"] is False and agreement["hazardous_max_cdf_gap"] > 0.2
    assert agreement["max_cdf_gap"] <= agreement["dkw_bound"]


def test_a_hazardous_models_disagreement_exits_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Monte Carlo with the Hazardous carriers in the wrong order (the W6 CHARACTER first). 4
    tests, F ~ Binomial(4, 1/6) failures: the wounds lost are 3F either way (15 wounds absorb
    12), but P(no model lost) is (5/6)^4 = 0.482 in the right order (each failure kills a W3
    trooper) and 0.482 + 4/6 (5/6)^3 = 0.868 in the wrong one: a CDF gap of 0.386, caught."""
    import dataclasses

    from mathhammer.engine import montecarlo

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "haz.yaml").write_text("""\
schema: 1
units:
  - name: Haz Squad
    models:
      - {name: Trooper, count: 3, T: 4, Sv: 3, W: 3, weapons: [Haz gun]}
      - {name: Boss, count: 1, T: 4, Sv: 3, W: 6, keywords: [CHARACTER], weapons: [Haz gun]}
    keywords: [INFANTRY]
    weapons:
      - {name: Haz gun, range: 24, A: "1", BS: 3, S: 8, AP: -3, D: "2", abilities: [Hazardous]}
""", encoding="utf-8")
    real = montecarlo.run

    def buggy(inputs, **kw):  # type: ignore[no-untyped-def]
        return real(dataclasses.replace(inputs, hazard_groups=inputs.hazard_groups[::-1]), **kw)

    monkeypatch.setattr(montecarlo, "run", buggy)
    r = run("shoot", "haz squad", "--profiles", str(tmp_path / "p"), "-t", "T4 SV3+ W2 MODELS5", "--method", "both",
            "--trials", "20000", "--seed", "4", "-f", "json")
    assert r.exit_code == 3, r.output
    agreement = json.loads(r.stdout)["agreement"]
    assert agreement["hazardous_models_max_cdf_gap"] > 0.2 >= agreement["hazardous_max_cdf_gap"]
