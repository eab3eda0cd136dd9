"""``mathhammer sweep`` on the command line: the heat map, json / ndjson / csv records validated
against schemas/sweep-1.schema.json, pictures, and every error as one line.

The command is tested on an application of its own (the root application registers it, but
these tests do not depend on that)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import typer
from typer.testing import CliRunner

from mathhammer.cli._command import Command, Group
from mathhammer.cli.sweep import sweep
from mathhammer.sweep import COLUMNS, cell_seed

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "schemas" / "sweep-1.schema.json").read_text(encoding="utf-8"))
RECORD = jsonschema.Draft202012Validator({"$ref": "#/$defs/record", "$defs": SCHEMA["$defs"]})
DOCUMENT = jsonschema.Draft202012Validator(SCHEMA)
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
BOLTER = "A2 BS3+ S4 AP-1 D1"

app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_show_locals=False)


@app.callback()
def _root() -> None:
    """The sweep command alone."""


app.command("sweep", cls=Command, no_args_is_help=True)(sweep)
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["sweep", *args], env=ENV, prog_name="mathhammer")


SMALL = (BOLTER, "-T", "3-5", "-S", "3,-", "--wounds", "2", "--models", "2", "--seed", "4", "--trials", "3000")


def _records(fmt: str, *args: str) -> list[dict]:
    r = run(*SMALL, *args, "-f", fmt)
    assert r.exit_code == 0, r.output
    if fmt == "json":
        doc = json.loads(r.stdout)
        DOCUMENT.validate(doc)
        return doc["records"]
    if fmt == "ndjson":
        return [json.loads(line) for line in r.stdout.splitlines()]
    return list(csv.DictReader(io.StringIO(r.stdout)))


def test_heat_map_table() -> None:
    r = run(*SMALL)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == f"{BOLTER} → Toughness × Save: mean damage"
    assert lines[1] == "each target: 2 models of W2"
    assert lines[2].startswith("monte-carlo: 3,000 trials per cell, sweep seed 4")
    header = next(ln for ln in lines if "Sv3+" in ln)
    assert header.split() == ["Sv3+", "no", "save"]
    rows = [ln.split() for ln in lines if ln.strip().startswith("T") and ln.split()[0][1:].isdigit()]
    assert [row[0] for row in rows] == ["T3", "T4", "T5"]
    # the numbers are the records' values, rounded
    values = {(rec["toughness"], rec["save"]): rec["value"] for rec in _records("json")}
    for row, t in zip(rows, (3, 4, 5), strict=True):
        assert row[1:] == [f"{values[(t, 3)]:.2f}", f"{values[(t, 7)]:.2f}"]
    assert lines[-1].startswith("mean damage: 0.00")


def test_probability_metric_is_shown_in_percent() -> None:
    r = run(*SMALL, "--metric", "p-kill-model", "--exact")
    assert r.exit_code == 0, r.output
    assert "P(at least one model destroyed)" in r.stdout and "exact distributions" in r.stdout
    assert "%" in r.stdout and r.stdout.rstrip().endswith("100%")


def test_json_ndjson_csv_hold_the_same_records() -> None:
    as_json, as_ndjson, as_csv = _records("json"), _records("ndjson"), _records("csv")
    assert as_json == as_ndjson and len(as_json) == 6
    for rec in as_ndjson:
        RECORD.validate(rec)
        assert rec["seed"] == cell_seed(4, rec["target"])
    for row, rec in zip(as_csv, as_json, strict=True):
        assert list(row) == list(COLUMNS)
        rebuilt = _unflatten(row)
        RECORD.validate({**rec, **{k: v for k, v in rebuilt.items() if k in rec and not isinstance(v, dict)},
                         "damage": {**rec["damage"], **rebuilt["damage"]}})
        for column in COLUMNS:
            assert _at(rebuilt, column) == _at(rec, column), column


def _unflatten(row: dict[str, str]) -> dict:
    """A CSV row back into a record: strings stay strings where the record has text, the rest
    is JSON (numbers, lists, true/false); an empty cell is null."""
    text = {"schema", "target", "metric", "method"}
    out: dict = {}
    for column, cell in row.items():
        value = cell if column in text else (None if cell == "" else json.loads(cell))
        node = out
        *parents, last = column.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    for block in ("damage", "models_destroyed"):  # optional: CSV cannot tell an empty cell from a missing key
        if out[block].get("capped_at") is None:
            out[block].pop("capped_at", None)
    return out


def _at(record: dict, column: str):
    value = record
    for part in column.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def test_csv_has_a_header_and_one_line_per_cell() -> None:
    r = run(*SMALL, "-f", "csv")
    lines = r.stdout.splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 7


def test_exact_records_and_jobs_do_not_change_the_output() -> None:
    one = run(*SMALL, "--exact", "-f", "ndjson", "--jobs", "1")
    two = run(*SMALL, "--exact", "-f", "ndjson", "--jobs", "2")
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout
    for line in one.stdout.splitlines():
        rec = json.loads(line)
        RECORD.validate(rec)
        assert rec["method"] == "exact" and rec["seed"] is None and rec["value_sem"] == 0


def test_method_both_carries_the_agreement() -> None:
    r = run(*SMALL, "--method", "both", "-f", "ndjson")
    assert r.exit_code == 0, r.output
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        RECORD.validate(rec)
        assert rec["method"] == "both" and rec["agreement"]["agrees"]


def test_pictures(tmp_path: Path) -> None:
    svg, html = tmp_path / "sweep.svg", tmp_path / "sweep.html"
    r = run(*SMALL, "--exact", "--svg", str(svg), "--html", str(html))
    assert r.exit_code == 0, r.output
    picture = svg.read_text(encoding="utf-8")
    assert picture.startswith("<svg") and "Toughness" in picture
    page = html.read_text(encoding="utf-8")
    assert "<html" in page and "Sv3+" in page and "background-color" in page


def test_pictures_with_a_machine_format(tmp_path: Path) -> None:
    """As shoot: the records on stdout, and the heat map they make saved as a picture."""
    svg = tmp_path / "sweep.svg"
    r = run(*SMALL, "--exact", "-f", "ndjson", "--svg", str(svg))
    assert r.exit_code == 0, r.output
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert records and svg.read_text(encoding="utf-8").startswith("<svg")
    assert f"{records[0]['value']:.2f}" in svg.read_text(encoding="utf-8").replace("&#160;", " ")


def test_melee_and_situation_options() -> None:
    r = run("A3 WS3+ S5 AP-1 D1 [LANCE]", "--melee", "--charged", "-T", "5", "-S", "3", "--wounds", "1",
            "--models", "5", "--exact", "-f", "ndjson")
    assert r.exit_code == 0, r.output
    # LANCE on the charge: S5 vs T5 wounds on 3+; hit 3+, save 4+ after AP-1: 3 x 4/6 x 4/6 x 3/6
    assert json.loads(r.stdout)["value"] == pytest.approx(3 * 4 / 6 * 4 / 6 * 3 / 6, abs=1e-12)


def test_warnings_are_said_once() -> None:
    r = run("A2 BS3+ S4 AP0 D1", "-T", "3-5", "-S", "3", "--exact", "--command-reroll", "damage")
    assert r.exit_code == 0, r.output
    assert r.stderr.count("--command-reroll damage has no effect") == 1


@pytest.mark.parametrize(("args", "code", "first"), [
    (("-T", "12-3"), 1, "Error: --toughness: a range must go up (got '12-3')"),
    (("-T", ""), 1, "Error: --toughness: empty: give a range, a number or a list (got '')"),
    (("-S", "1-6"), 1, "Error: --save: Save must be from 2 to 7 (got '1-6')"),
    (("-S", "3,3"), 1, "Error: --save: a value is listed twice (got '3')"),
    (("--invuln", "7"), 1, "Error: --invuln: must be between 2 and 6 (got 7)"),
    (("--fnp", "x"), 2, "Error: mathhammer sweep: Invalid value for '--fnp': 'x' is not a whole number"),
    (("--wounds", "0"), 1, "Error: --wounds: must be between 1 and 1,000 (got 0)"),
    (("--models", "1001"), 1, "Error: --models: must be between 1 and 1,000 (got 1001)"),
    (("--metric", "models"), 1, "Error: --metric: models needs the targets' Wounds (got 'models')"),
    (("--metric", "median"), 2, "Error: mathhammer sweep: Invalid value for '--metric': 'median' is not one of"),
    (("--keyword", "X]; 9x T1 SV- W1"), 1, "Error: --keyword: a keyword is letters"),
    (("--exact", "--method", "monte-carlo"), 1, "Error: --method: --exact means --method exact"),
    (("--melee", "--cover"), 1, "Error: --cover: a shooting situation"),
    (("--keyword", "-2 DAMAGE"), 1, "Error: --keyword: not a keyword nor a defensive ability mathhammer models"
                                    " (got '-2 DAMAGE')"),
    (("--svg", "no/such/folder/x.svg"), 1, "Error: --svg: "),
    (("-n", "1000", "--exact"), 1, "Error: --wounds: this attack can deal up to"),
    (("--trials", "0"), 1, "Error: --trials: must be between 1 and"),
    (("--seed", "-1"), 1, "Error: --seed: must be between 0 and 9,223,372,036,854,775,807 (got -1)"),
    (("--toughness", "4", "--toughness", "5"), 1, "Error: --toughness: given more than once"),
])
def test_errors_are_one_line(args: tuple[str, ...], code: int, first: str) -> None:
    r = run(BOLTER, *args)
    assert r.exit_code == code, r.output
    lines = r.stderr.splitlines()
    assert lines[0].startswith(first), r.stderr
    assert len(lines) <= 2 and (len(lines) == 1 or lines[1].startswith("  hint: "))
    assert "Traceback" not in r.output and r.stdout == ""


def test_unknown_weapon_and_bad_inline_target_word() -> None:
    r = run("no such gun", "-T", "4", "-S", "3")
    assert r.exit_code == 1 and r.stderr.startswith("Error: weapon")
    r = run(BOLTER, "-T", "4", "-S", "3", "--keyword", "FEEL NO PAIN")
    assert r.exit_code == 1 and "not a keyword nor a defensive ability" in r.stderr.splitlines()[0]


def test_no_arguments_show_the_help() -> None:
    r = runner.invoke(app, ["sweep"], env=ENV, prog_name="mathhammer")
    assert r.exit_code == 0 and "--toughness" in r.stdout and "--metric" in r.stdout


def test_help_and_exact_never_import_numba() -> None:
    code = (
        "import sys, typer\n"
        "from typer.testing import CliRunner\n"
        "from mathhammer.cli._command import Command, Group\n"
        "from mathhammer.cli.sweep import sweep\n"
        "app = typer.Typer(cls=Group)\n"
        "app.callback()(lambda: None)\n"
        "app.command('sweep', cls=Command)(sweep)\n"
        "r = CliRunner().invoke(app, ['sweep', '--help'])\n"
        "assert r.exit_code == 0 and 'numba' not in sys.modules, r.output\n"
        "r = CliRunner().invoke(app, ['sweep', 'A2 BS3+ S4 AP-1 D1', '-T', '1-14', '--exact', '-f', 'csv'])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert len(r.stdout.splitlines()) == 85, r.stdout\n"
        "assert 'numba' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_record_is_reproduced_by_shoot() -> None:
    from mathhammer.cli import app as root

    for rec in _records("ndjson")[::5]:
        r = runner.invoke(root, ["shoot", BOLTER, "-t", rec["target"], "--no-stages", "--seed", str(rec["seed"]), "--trials",
                                 str(rec["trials"]), "-f", "json"], env=ENV)
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert doc["damage"] == rec["damage"] and doc["models_destroyed"] == rec["models_destroyed"]
        assert doc["p_destroy_unit"] == rec["p_destroy_unit"]


def test_r11_4_battle_options_apply_to_every_cell() -> None:
    # Kauyon round 3, Guided at the Spotted unit: BS4+ -> 3+ (R-11.2) and SUSTAINED HITS 2
    # E[hits] = 2/3 + 2/6 = 1 per attack. S8 wounds T4 on 2+ and T8 on 4+; AP-6 leaves
    # no save against Sv6+ (R-5.1, R-6.1).
    r = run("A1 BS4+ S8 AP-6 D1", "-T", "4,8", "-S", "6", "--exact", "--detachment", "kauyon", "--round", "3",
            "--guided", "-f", "json")
    assert r.exit_code == 0, r.output
    means = [rec["damage"]["mean"] for rec in json.loads(r.stdout)["records"]]
    assert means == pytest.approx([5 / 6, 1 / 2], abs=1e-12)
    r = run("A1 BS4+ S8 AP-6 D1", "-T", "4", "-S", "6", "--exact", "--trap")
    assert r.exit_code == 0 and "--trap: no army rule" in r.stderr
    r = run("A1 WS4+ S8 AP-6 D1", "--melee", "-T", "4", "-S", "6", "--exact", "--guided")
    assert r.exit_code == 1 and "Shooting phase" in r.stderr
