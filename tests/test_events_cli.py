"""Issue 12, items 6-8: ``mathhammer tank-shock`` and ``mathhammer deadly-demise`` on the command
line: table and JSON output (validated against schemas/), errors as one line with exit 1, and
numba never imported (these commands do not use the kernel). Expected numbers are derived here
with fractions, not read from the code under test."""

from __future__ import annotations

import json
import math
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from mathhammer.cli import app
from tests.test_startup import _probe

ROOT = Path(__file__).resolve().parent.parent
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
TS_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas" / "tank-shock-1.schema.json").read_text("utf-8")))
DD_SCHEMA = Draft202012Validator(json.loads((ROOT / "schemas" / "deadly-demise-1.schema.json").read_text("utf-8")))


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=ENV)


def ok_json(*args: str) -> dict[str, Any]:
    r = invoke(*args, "-f", "json")
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def tank_shock_mean(toughness: int) -> F:
    return sum((min(k, 6) * math.comb(toughness, k) * F(1, 3) ** k * F(2, 3) ** (toughness - k)
                for k in range(toughness + 1)), F(0))


def test_r10_2_tank_shock_table() -> None:
    r = invoke("tank-shock", "T10", "-t", "T4 SV3+ W2 MODELS5", "--exact", "--explain")
    assert r.exit_code == 0, r.output
    assert f"Mortal wounds: {float(tank_shock_mean(10)):.3f}" in r.stdout
    assert "stratagems: Tank Shock (1 CP); 1 CP in all" in r.stdout
    assert "Models destroyed (of 5)" in r.stdout and "P(destroy unit)" in r.stdout
    assert "R-10.2 Tank Shock" in r.stdout and "R-9.3" in r.stdout and "R-7.6" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("exact: ")


def test_r10_2_tank_shock_json_exact_and_monte_carlo() -> None:
    doc = ok_json("tank-shock", "gunrig", "-t", "intercessors", "--exact")
    TS_SCHEMA.validate(doc)
    assert doc["vehicle"] == {"unit": "Tidewall Gunrig", "model": "Tidewall Gunrig", "T": 8}
    assert abs(doc["mortal_wounds"]["mean"] - float(tank_shock_mean(8))) < 1e-12
    assert doc["trials"] is None and doc["seed"] is None and doc["method"] == "exact"
    doc = ok_json("tank-shock", "gunrig", "-t", "intercessors", "--trials", "20000", "--seed", "4")
    TS_SCHEMA.validate(doc)
    assert doc["trials"] == 20_000 and doc["seed"] == 4 and doc["method"] == "monte-carlo"
    se = doc["mortal_wounds"]["sd"] / math.sqrt(20_000)
    assert abs(doc["mortal_wounds"]["mean"] - float(tank_shock_mean(8))) <= 4.5 * se
    assert doc["stratagems"] == [{"name": "Tank Shock", "cp": 1, "side": "attacker", "detachment": None}]


def test_r10_2_method_both_and_a_drawn_seed() -> None:
    doc = ok_json("tank-shock", "T10", "-t", "T4 SV3+ W1 MODELS10 FNP6+", "--method", "both", "--trials", "20000")
    TS_SCHEMA.validate(doc)
    assert doc["method"] == "both" and isinstance(doc["seed"], int) and doc["agreement"]["agrees"]
    assert doc["monte_carlo"]["seed"] == doc["seed"]
    again = ok_json("tank-shock", "T10", "-t", "T4 SV3+ W1 MODELS10 FNP6+", "--method", "both", "--trials", "20000",
                    "--seed", str(doc["seed"]))
    assert again["monte_carlo"]["damage"] == doc["monte_carlo"]["damage"]
    r = invoke("tank-shock", "T10", "-t", "T4 SV3+ W1 MODELS10", "--method", "both", "--trials", "20000", "--seed", "1")
    assert r.exit_code == 0 and "Monte Carlo and exact agree" in r.stdout


def test_r10_1_deadly_demise_table_and_json() -> None:
    r = invoke("deadly-demise", "gunrig", "-t", "intercessors", "-t", "knight", "--exact")
    assert r.exit_code == 0, r.output
    assert "P(at least one explodes): 16.7%" in r.stdout
    assert "Mortal wounds on each unit within 6\": 0.333" in r.stdout
    assert "→ Intercessor Squad" in r.stdout and "→ Knight Paladin" in r.stdout and "By target" in r.stdout
    doc = ok_json("deadly-demise", "gunrig", "-t", "intercessors", "-t", "knight", "--exact")
    DD_SCHEMA.validate(doc)
    assert abs(doc["p_explode"] - 1 / 6) < 1e-12
    assert [row["p"] for row in doc["mortal_wounds"]["distribution"]] == pytest.approx([5 / 6, 1 / 18, 1 / 18, 1 / 18],
                                                                                      abs=1e-12)
    assert [t["target"]["name"] for t in doc["targets"]] == ["Intercessor Squad", "Knight Paladin"]


def test_r10_1_deadly_demise_without_a_target_and_with_models() -> None:
    doc = ok_json("deadly-demise", "D6", "--models", "3", "--trials", "5000", "--seed", "3")
    DD_SCHEMA.validate(doc)
    assert doc["targets"] == [] and doc["unit"] == {"name": None, "deadly_demise": "D6", "models": None,
                                                     "destroyed": 3}
    exact = ok_json("deadly-demise", "D6", "--models", "3", "--exact")
    assert abs(exact["p_explode"] - float(1 - F(5, 6) ** 3)) < 1e-12
    assert abs(exact["mortal_wounds"]["mean"] - 3 / 6 * 3.5) < 1e-9


def test_deadly_demise_method_both_json() -> None:
    doc = ok_json("deadly-demise", "D3", "-n", "2", "-t", "T4 SV3+ W1 MODELS5", "-t", "5x T4 SV3+ W2", "--method",
                  "both", "--trials", "20000", "--seed", "8")
    DD_SCHEMA.validate(doc)
    assert doc["agreement"]["agrees"] and len(doc["monte_carlo"]["targets"]) == 2
    assert doc["targets"][1]["target"]["models"] == 5


@pytest.mark.parametrize(("args", "fragment"), [
    (["tank-shock", "intercessors", "-t", "knight"], "VEHICLE: Intercessor Squad is not a VEHICLE unit"),
    (["tank-shock", "no such tank", "-t", "knight"], "VEHICLE: unknown"),
    (["tank-shock", "T0", "-t", "knight"], "VEHICLE: a Toughness must be"),
    (["tank-shock", "T-1", "-t", "knight"], "VEHICLE: a Toughness must be a whole number from 1 to 100 (got 'T-1')"),
    (["tank-shock", "T99999", "-t", "knight"], "(got 'T99999')"),
    (["deadly-demise", "D7"], "UNIT: Deadly Demise x is a number, D3, D6"),
    (["tank-shock", "T10", "-t", "no such target"], "--target: unknown"),
    (["tank-shock", "T10", "-t", "knight", "--exact", "--method", "monte-carlo"], "--method: --exact means"),
    (["deadly-demise", "intercessors"], "UNIT: Intercessor Squad has no Deadly Demise"),
    (["deadly-demise", "no such unit"], "UNIT: unknown"),
    (["deadly-demise", "gunrig", "--models", "2"], "--models: Tidewall Gunrig has 1 model (got 2)"),
    (["deadly-demise", "gunrig", "-t", "knight", "-t", "knight", "--target-models", "3"], "--target-models: applies"),
    (["deadly-demise", "gunrig", "--wounds-left", "1"], "--wounds-left: applies to a target"),
    (["deadly-demise", "gunrig", "--allocation", "listed"], "--allocation: applies to a target, and none is given"
                                                             " (got 'listed')"),
    (["deadly-demise", "gunrig", "--allocation", "durable"], "--allocation: applies to a target"),
    (["deadly-demise", "gunrig", "--faction", "space marines"], "UNIT: unknown"),
])
def test_errors_are_one_line_and_exit_1(args: list[str], fragment: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 1, r.output
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.startswith("Error: ") and fragment in r.stderr.splitlines()[0], r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2  # the error and its hint


@pytest.mark.parametrize(("args", "line"), [
    (["deadly-demise", "gunrig", "--models", "0"], "Error: --models: must be between 1 and 1,000 (got 0)"),
    (["tank-shock", "T10", "-t", "knight", "--trials", "0"], "Error: --trials: must be between 1 and 1,000,000,000"),
])
def test_option_values_out_of_range(args: list[str], line: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 1 and r.stderr.startswith(line) and "Traceback" not in r.stderr


@pytest.mark.parametrize("command", [["tank-shock", "T10", "-t", "knight"], ["deadly-demise", "D3", "-t", "knight"],
                                     ["deadly-demise", "D3"]])
def test_sampling_options_with_exact_are_said_to_change_nothing(command: list[str]) -> None:
    """As in shoot: nothing is ignored silently, on stderr and in the document's warnings."""
    said = "--trials, --seed have no effect with --exact: it samples nothing"
    r = invoke(*command, "--exact", "--trials", "1000", "--seed", "3", "-f", "json")
    assert r.exit_code == 0, r.output
    assert said in r.stderr and said in json.loads(r.stdout)["warnings"]
    r = invoke(*command, "--seed", "3", "--trials", "1000", "-f", "json")  # Monte Carlo: they are used
    assert r.exit_code == 0 and "no effect" not in r.stderr, r.output


def test_a_missing_target_is_a_usage_error() -> None:
    r = invoke("tank-shock", "T10")
    assert r.exit_code == 2 and "--target" in r.stderr and "Traceback" not in r.stderr


def test_help_lists_the_commands() -> None:
    r = invoke("--help")
    assert r.exit_code == 0 and "tank-shock" in r.stdout and "deadly-demise" in r.stdout
    for command in ("tank-shock", "deadly-demise"):
        r = invoke(command, "--help")
        assert r.exit_code == 0 and "--exact" in r.stdout and "--target" in r.stdout


@pytest.mark.parametrize("args", [
    ["tank-shock", "gunrig", "-t", "knight", "--exact", "-f", "json"],
    ["deadly-demise", "gunrig", "-t", "knight", "--exact", "-f", "json"],
    ["deadly-demise", "gunrig", "-t", "knight", "--trials", "1000", "--seed", "1", "-f", "json"],
    ["tank-shock", "--help"],
])
def test_exact_and_monte_carlo_never_load_numba(args: list[str], tmp_path: Path) -> None:
    found, r = _probe(args, tmp_path)
    assert found.get("sys.exit") == 0 and "os._exit" not in found, r.stderr
    assert found["loaded"] == [], args
