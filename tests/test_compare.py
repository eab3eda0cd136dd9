"""``compare``: reading the CSV, per-row seeds, records equal to single runs, order and worker
independence, the output formats against schemas/compare-1.schema.json, and the ranking."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from mathhammer import api
from mathhammer.cli._command import Command
from mathhammer.cli.compare import compare
from mathhammer.compare import RECORD_COLUMNS, Comparison, Computed, SortKey, read_rows, record, row_seed
from mathhammer.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "schemas" / "compare-1.schema.json").read_text())

app = typer.Typer()
app.command("compare", cls=Command, no_args_is_help=True)(compare)


@app.command("other")
def _other() -> None:  # a second command, so that typer keeps "compare" as a subcommand
    """Unused."""


runner = CliRunner()
ENV = {"NO_COLOR": "1", "COLUMNS": "160"}

# "fusion blaster" and "bolt rifle" alone are ambiguous in the generated library (the Coldstar
# Commander's and the Sunforges' fusion blaster; Space Marines' and Blood Angels' Bolt Rifles)
ROWS = """name,weapon,models,points,cover,hit_mod
Rails,2x heavy rail rifle,,180,,
Fusion,crisis sunforge/fusion blaster,3,,true,
Bolters,intercessors/bolt rifle,5,80,,-1
"""


def invoke(*args: str, stdin: str | None = None):
    return runner.invoke(app, ["compare", *args], input=stdin, env=ENV)


def write(tmp_path: Path, text: str, name: str = "rows.csv", encoding: str = "utf-8") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return str(path)


def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(SCHEMA)


def _record_validator():
    import jsonschema

    return jsonschema.Draft202012Validator({**SCHEMA["$defs"]["record"], "$defs": SCHEMA["$defs"]})


# --- seeds and single-run equality ---------------------------------------------------------------


def test_row_seed_is_sha256_of_seed_label_and_target_63_bits():
    digest = hashlib.sha256(b"7\x00Rails\x00knight").digest()
    assert row_seed(7, "Rails", "knight") == int.from_bytes(digest[:8], "big") >> 1
    assert row_seed(7, "Rails", "  Knight ") == row_seed(7, "Rails", "knight")  # case and spaces do not count
    assert row_seed(7, "Rails", "knight") != row_seed(8, "Rails", "knight")
    assert row_seed(7, "Rails", "knight") != row_seed(7, "Fusion", "knight")
    assert 0 <= row_seed(2**63 - 1, "x" * 1000, "t") < 2**63


def test_a_compare_row_equals_the_single_run_with_its_derived_seed(tmp_path):
    run = Comparison(write(tmp_path, ROWS), ["knight", "intercessors"], trials=20_000, seed=11, jobs=2)
    done = [d for d in run if isinstance(d, Computed)]
    assert len(done) == 6
    for d in done:
        situation = dict(d.row.options)
        single = api.run(list(d.row.weapons), d.target, trials=20_000, seed=row_seed(11, d.row.label, d.target),
                         stages=False, **situation)
        assert d.seed == row_seed(11, d.row.label, d.target)
        np.testing.assert_array_equal(d.result.damage.probabilities, single.damage.probabilities)
        np.testing.assert_array_equal(d.result.models_destroyed.probabilities, single.models_destroyed.probabilities)
        from mathhammer.render.records import document

        shoot_json = document(single)
        for block in ("damage", "models_destroyed", "p_destroy_unit"):
            assert record(d)[block] == shoot_json[block]


def test_a_target_given_twice_is_compared_once_with_a_warning(tmp_path):
    run = Comparison(write(tmp_path, "label,weapon\na,railgun\n"), ["knight", "Knight ", "boyz"],
                     method=api.Method.EXACT, jobs=1)
    assert run.targets == ("knight", "boyz") and run.total == 2
    assert run.warnings == ("--target 'Knight ' given more than once: compared once",)
    assert [d.target for d in run] == ["knight", "boyz"]


@pytest.mark.parametrize(("kwargs", "where", "value"), [
    ({"source": 5}, "FILE", "int"),  # an AttributeError ('int' object has no attribute 'read')
    ({"targets": [5]}, "--target", "int"),  # an AttributeError from target_key
    ({"targets": None}, "--target", "NoneType"),
    ({"seed": -1}, "--seed", -1),  # was taken, and written to a record the schema refuses
    ({"seed": 1.5}, "--seed", "1.5"),
    ({"seed": 2**63}, "--seed", 2**63),
    ({"seed": True}, "--seed", "True"),
    ({"jobs": "2"}, "--jobs", "2"),  # a TypeError comparing with 1
    ({"jobs": 1.5}, "--jobs", "1.5"),  # a TypeError from multiprocessing while iterating
    ({"jobs": True}, "--jobs", "True"),
    ({"jobs": 0}, "--jobs", 0),
    ({"keep_going": "no"}, "keep_going", "no"),  # was taken as true
    ({"method": "bogus"}, "--method", "bogus"),  # was said of the file's row 2
])
def test_arguments_of_the_wrong_kind_are_input_errors_naming_them(tmp_path, kwargs, where, value):
    options = {"source": write(tmp_path, "label,weapon\na,railgun\n"), "targets": ["knight"], "trials": 100,
               "seed": 1, **kwargs}
    with pytest.raises(InputError) as e:
        list(Comparison(**options))
    assert (e.value.where, e.value.value) == (where, value)


def test_one_target_text_is_one_target_and_numpy_integers_are_whole_numbers(tmp_path):
    # a text was read letter by letter: the targets 'k', 'n', 'i', ...
    path = write(tmp_path, "label,weapon\na,railgun\n")
    run = Comparison(path, "knight", trials=np.int64(1_000), seed=np.int64(3), jobs=np.int64(1))
    assert run.targets == ("knight",) and type(run.seed) is int and type(run.trials) is int
    [done] = list(run)
    assert isinstance(done, Computed) and record(done)["compare_seed"] == 3
    assert [d.target for d in Comparison(path, "knight", method="exact")] == ["knight"]


def test_exact_rows_equal_single_exact_runs_in_worker_processes(tmp_path):
    rows = "weapon,melee,charged\n" + "".join(
        f"{n}x A{a} WS3+ S{s} AP-2 D2,true,{c}\n" for n, a, s, c in
        [(1, 2, 8, "true"), (2, 3, 10, "false"), (3, 1, 6, ""), (1, 4, 12, "true"), (2, 2, 5, "")])
    run = Comparison(write(tmp_path, rows), ["knight", "boyz"], method=api.Method.EXACT, jobs=2)
    done = list(run)
    assert len(done) == 10 and all(isinstance(d, Computed) for d in done)
    for d in done:
        single = api.run(list(d.row.weapons), d.target, method="exact", **dict(d.row.options))
        assert d.seed is None
        np.testing.assert_array_equal(d.result.damage.probabilities, single.damage.probabilities)


def _by_key(path: str, targets: list[str], jobs: int, seed: int = 5) -> dict[tuple[str, str], list[float]]:
    run = Comparison(path, targets, trials=5_000, seed=seed, jobs=jobs)
    return {(d.row.label, d.target): d.result.damage.probabilities.tolist() for d in run if isinstance(d, Computed)}


def test_a_rows_result_depends_neither_on_the_other_rows_their_order_nor_jobs(tmp_path):
    lines = ROWS.splitlines()
    full = write(tmp_path, ROWS, "full.csv")
    reordered = write(tmp_path, "\n".join([lines[0], lines[3], lines[1]]) + "\n", "part.csv")
    one = _by_key(full, ["knight", "boyz"], jobs=1)
    two = _by_key(full, ["knight", "boyz"], jobs=2)
    part = _by_key(reordered, ["boyz", "knight"], jobs=2)
    assert one == two
    assert set(part) == {("Bolters", "knight"), ("Bolters", "boyz"), ("Rails", "knight"), ("Rails", "boyz")}
    assert all(part[k] == one[k] for k in part)
    assert _by_key(full, ["knight"], jobs=1, seed=6) != {k: v for k, v in one.items() if k[1] == "knight"}


# --- reading the file ----------------------------------------------------------------------------


def test_points_default_to_the_units_profile_points_times_models(library, tmp_path):
    sheet = read_rows(write(tmp_path, "unit,models,points\nbroadside,3,\nhammerhead,,150\n2x broadside,,\n"),
                      lib=library)
    broadside = library.find("broadside", "unit")
    assert [r.points for r in sheet.rows] == [3 * broadside.points, 150, 2 * broadside.points]
    assert sheet.rows[0].weapons == (f"1x {broadside.name}",)


def test_bom_crlf_quoted_commas_blank_lines_and_hyphenated_columns_are_read(library, tmp_path):
    text = ('\ufeffname,weapon,Half-Range,points\r\n"Melta, close","fusion blaster",yes,"120"\r\n\r\n'
            '"Inline","A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS 1]",no,\r\n')
    sheet = read_rows(write(tmp_path, text), lib=library)
    assert not sheet.errors and sheet.read == 2
    assert [r.label for r in sheet.rows] == ["Melta, close", "Inline"]
    assert dict(sheet.rows[0].options)["half_range"] is True and dict(sheet.rows[1].options)["half_range"] is False
    assert [r.line for r in sheet.rows] == [2, 4]  # the line each row is on in the file


def test_weapons_joined_by_ampersand_each_with_a_count(library, tmp_path):
    sheet = read_rows(write(tmp_path, "weapon\n2x heavy rail rifle & 3x twin plasma rifle\n"), lib=library)
    assert sheet.rows[0].weapons == ("2x heavy rail rifle", "3x twin plasma rifle")
    assert sheet.rows[0].label == "2x heavy rail rifle & 3x twin plasma rifle"


def test_blank_lines_before_the_header_are_skipped(library):
    # docs/compare.md: blank lines are skipped; one before the header read as "the file is empty"
    sheet = read_rows(io.StringIO("\n\n,,\nweapon,name\nrailgun,a\n"), lib=library, name="mine")
    assert [(r.label, r.weapons, r.line) for r in sheet.rows] == [("a", ("railgun",), 5)]


def test_a_stream_is_read_too(library):
    sheet = read_rows(io.StringIO("weapon\nrailgun\n"), lib=library, name="mine")
    assert sheet.where == "mine" and sheet.rows[0].weapons == ("railgun",)


# --- the command line: errors --------------------------------------------------------------------


@pytest.mark.parametrize(("text", "line"), [
    ("", "Error: {f}: the file is empty"),
    ("\n,,\n\n", "Error: {f}: the file is empty"),
    ("x" * 10_000_001, "Error: {f}: larger than 10,000,000 bytes: not a sheet of loadouts"),
    ("name,weapon\n", "Error: {f}: no rows after the header"),
    ("name\tweapon\nx\trailgun\n", "Error: {f} line 1: the header has tabs and no commas: this looks like a TSV "
                                   "(tab-separated) file"),
    ("name;weapon\nx;railgun\n", "Error: {f} line 1: the header has semicolons and no commas: this looks like a "
                                 "semicolon-separated file"),
    ("name,weapon,Name\nx,railgun,y\n", "Error: {f} line 1: duplicate column (columns 1 and 3) (got 'Name')"),
    ("weapon,covr\nrailgun,true\n", "Error: {f} line 1: unknown column (got 'covr')"),
    ("name,points\nx,3\n", "Error: {f} line 1: no weapon or unit column (got 'name,points')"),
    ("weapon,points\nrailgun,12,3\n", "Error: {f} row 2: 3 fields, the header has 2 (got 'railgun,12,3')"),
    ("weapon,points,cover\nrailgun,12\n", "Error: {f} row 2: 2 fields, the header has 3 (got 'railgun,12')"),
    ("weapon,points\nrailgun,cheap\n", "Error: {f} row 2, column points: not a number of points (got 'cheap')"),
    ("weapon,cover\nrailgun,maybe\n", "Error: {f} row 2, column cover: not true or false (got 'maybe')"),
    ("weapon,hit_mod\nrailgun,1.5\n", "Error: {f} row 2, column hit_mod: not a whole number (got '1.5')"),
    ("weapon,reroll_hits\nrailgun,sometimes\n",
     "Error: {f} row 2, column reroll_hits: not one of: none, ones, failed, non-crit, best (got 'sometimes')"),
    ("weapon,models\nrailgun,0\n", "Error: {f} row 2, column models: must be at least 1 (got '0')"),
    ("weapon,models\nrailgun,2000\n", "Error: {f} row 2, column models: must be at most 1,000 (got '2000')"),
    ("weapon,models\n2x railgun,600\n", "Error: {f} row 2, weapon: 2 x --models 600 = 1,200 models would fire"),
    ("name,weapon\nA,railgun\nA,crisis sunforge/fusion blaster\n",
     "Error: {f} row 3, column name: the same label as row 2 (got 'A')"),
    ("weapon,unit\nrailgun,hammerhead\n", "Error: {f} row 2, column weapon: give a weapon or a unit, not both "
                                          "(got 'railgun')"),
    ("weapon,target\nrailgun,nothing-like-this\n", "Error: {f} row 2, column target: "),
    ("name,weapon\n\x1b[31mred,railgun\n", "Error: {f} row 2, column name: a label of printable characters only"),
    ("weapon\n\x1b[31mrailgun\n", "Error: {f} row 2, column weapon: a label of printable characters only"),
    ("unit\nno-such-unit\n", "Error: {f} row 2, column unit: "),
])
def test_each_bad_file_is_one_error_line_with_row_and_column(tmp_path, text, line):
    path = write(tmp_path, text)
    result = invoke(path, "-t", "knight", "--trials", "100", "--seed", "1")
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith(line.format(f=path)), lines
    assert all(x.startswith("  hint:") for x in lines[1:]), lines
    assert "Traceback" not in result.output and result.stdout == ""


def test_unknown_column_suggests_the_close_name(tmp_path):
    result = invoke(write(tmp_path, "weapon,half_rnage\nrailgun,true\n"), "-t", "knight")
    assert result.exit_code == 1
    assert "hint: did you mean 'half_range'?" in result.stderr


def test_unknown_target_stops_before_any_work(tmp_path):
    result = invoke(write(tmp_path, ROWS), "-t", "knight", "-t", "no-such-target", "--trials", "100")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("Error: ") and "no-such-target" in result.stderr


def test_an_unknown_weapon_names_its_row(tmp_path):
    path = write(tmp_path, "name,weapon\nfine,railgun\nbad,rail-gunn-x\n")
    result = invoke(path, "-t", "knight", "--trials", "100", "--seed", "1", "-f", "ndjson")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].startswith(f"Error: {path} row 3, weapon: ")


def test_no_target_anywhere_is_an_error(tmp_path):
    result = invoke(write(tmp_path, "weapon\nrailgun\n"), "--trials", "100")
    assert result.exit_code == 1
    assert "row 2: no target for this row" in result.stderr


def test_keep_going_reports_every_bad_row_and_loses_no_good_row(tmp_path):
    text = ("name,weapon,points,target\n"
            "good1,railgun,90,\n"
            "bad-points,railgun,lots,\n"
            "good2,crisis sunforge/fusion blaster,,boyz\n"
            "bad-weapon,no-such-gun-at-all,,\n"
            "bad-target,railgun,,no-such-target\n"
            "good3,intercessors/bolt rifle,,\n")
    path = write(tmp_path, text)
    result = invoke(path, "-t", "knight", "--trials", "2000", "--seed", "3", "-f", "ndjson", "--keep-going")
    assert result.exit_code == 1
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted((r["label"], r["target"]) for r in records) == [("good1", "knight"), ("good2", "boyz"),
                                                                  ("good3", "knight")]
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert sorted(int(e.split(" row ")[1].split(",")[0].split(":")[0]) for e in errors) == [3, 5, 6]
    assert result.stderr.splitlines()[-1] == "compare: 6 rows read, 3 computed, 3 failed"


def test_without_keep_going_the_first_bad_row_stops_the_run(tmp_path):
    path = write(tmp_path, "name,weapon,points\ngood,railgun,\nbad,railgun,x\nworse,railgun,y\n")
    result = invoke(path, "-t", "knight", "--trials", "100", "-f", "ndjson")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == f"Error: {path} row 3, column points: not a number of points (got 'x')\n" \
        "  hint: a number such as 120, or leave it empty\n"


WARNED = ("name,weapon,charged,reroll_damage,round\n"
          "six,A2 BS3+ S4 AP0 D6,true,ones,3\n"
          "anti,A2 BS3+ S4 AP0 D1 [ANTI-VEHICLE 4+],,,\n"
          "quiet,A2 BS3+ S4 AP0 D1,,,\n")
D6 = "inline weapon 'A2 BS3+ S4 AP0 D6': D6 read as Damage 6 (a fixed value); write 'D D6' for a rolled D6"


@pytest.mark.parametrize("fmt", ["table", "json", "ndjson", "csv"])
def test_each_rows_warnings_are_said_on_stderr_once_a_row_in_every_format(tmp_path, fmt):
    # they were only in the records' "warnings": shoot said "D6 read as Damage 6" for this weapon, compare nothing
    path = write(tmp_path, WARNED)
    result = invoke(path, "-t", "T4 SV3+ W2 MODELS5", "-t", "T5 SV3+ W2 [VEHICLES]", "--exact", "-f", fmt)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == [
        f"Warning: {path} row 2: {D6}",
        f"Warning: {path} row 2: --round: no army rule, detachment rule or stratagem of this attack depends on it, "
        "so it changes nothing",
        f"Warning: {path} row 2: --reroll-damage ones has no effect: Damage 6 is not rolled",
        f"Warning: {path} row 2: --charged has no effect: the weapon has no LANCE",
        f"Warning: {path} row 3 against 'T5 SV3+ W2 [VEHICLES]': ANTI-VEHICLE 4+ has no effect: the target is not "
        "VEHICLE, but is VEHICLES (a misspelling of VEHICLE?)",
    ]  # each once a row, though both targets gave it; the target named where only one did
    assert result.stderr.splitlines()[-1] == "compare: 3 rows read, 3 computed, 0 failed"
    if fmt == "json":  # the records keep their own run's warnings
        recs = json.loads(result.stdout)["records"]
        assert [len(r["warnings"]) for r in recs] == [4, 4, 0, 1, 0, 0]


def test_a_row_stopped_by_an_error_still_says_its_warnings(tmp_path):
    # wounds_left 3 fits the first target (W4), not the second (W2): the run stops at the row's second target
    path = write(tmp_path, "name,weapon,wounds_left\nsix,A2 BS3+ S4 AP0 D6,3\n")
    for extra in ((), ("--keep-going",)):
        result = invoke(path, "-t", "T4 SV3+ W4", "-t", "T4 SV3+ W2", "--exact", "-f", "ndjson", *extra)
        assert result.exit_code == 1 and len(result.stdout.splitlines()) == 1
        lines = result.stderr.splitlines()
        assert f"Warning: {path} row 2: {D6}" in lines  # the weapon's: no target named, the other one failed
        assert lines.index(f"Warning: {path} row 2: {D6}") == (1 if extra else 0)
        assert any(line.startswith(f"Error: {path} row 2, wounds_left") for line in lines)


def test_row_warnings_name_the_row_and_only_the_targets_that_gave_them(tmp_path):
    from mathhammer.compare import row_warnings

    run = Comparison(write(tmp_path, WARNED), ["T4 SV3+ W2", "T5 SV3+ W2 [VEHICLES]"], method=api.Method.EXACT,
                     jobs=1, name="f.csv")
    runs = list(run)
    assert row_warnings(runs[2:4], "f.csv") == ["f.csv row 3 against 'T5 SV3+ W2 [VEHICLES]': ANTI-VEHICLE 4+ has no "
                                                "effect: the target is not VEHICLE, but is VEHICLES (a misspelling of "
                                                "VEHICLE?)"]
    assert row_warnings(runs[4:], "f.csv") == [] and row_warnings([], "f.csv") == []
    assert row_warnings(runs[:2], "f.csv")[0] == f"f.csv row 2: {D6}"
    assert run.new_warnings() == [*row_warnings(runs[:2], "f.csv"), *row_warnings(runs[2:4], "f.csv")]
    assert run.new_warnings() == []  # taken once


# --- the command line: outputs -------------------------------------------------------------------


def _csv_record(row: dict[str, str]) -> dict:
    """A CSV line read back into a record: types from the schema, dotted paths nested."""
    props = SCHEMA["$defs"]["record"]["properties"]
    out: dict = {}
    for column, cell in row.items():
        head, _, rest = column.partition(".")
        if not rest:
            text = props[head].get("type") == "string" or "enum" in props[head] or "const" in props[head]
            out[head] = cell if text else (None if cell == "" else json.loads(cell))
        else:
            out.setdefault(head, {})[rest] = None if cell == "" else json.loads(cell)
    if out["per_100_points"] == {"damage": None, "models_destroyed": None}:
        out["per_100_points"] = None
    if out["agreement"] == {"agrees": None}:  # CSV carries only the verdict
        out["agreement"] = None
    for block in ("damage", "models_destroyed"):  # optional: CSV cannot tell an empty cell from a missing key
        if out[block].get("capped_at") is None:
            out[block].pop("capped_at", None)
    return out


def test_json_ndjson_and_csv_carry_the_same_records_and_validate(tmp_path):
    path = write(tmp_path, ROWS)
    common = [path, "-t", "knight", "-t", "boyz", "--trials", "3000", "--seed", "9"]
    outs = {fmt: invoke(*common, "-f", fmt) for fmt in ("json", "ndjson", "csv")}
    for fmt, result in outs.items():
        assert result.exit_code == 0, (fmt, result.output)
    doc = json.loads(outs["json"].stdout)
    _validator().validate(doc)
    ndjson = [json.loads(line) for line in outs["ndjson"].stdout.splitlines()]
    rows = list(csv.DictReader(io.StringIO(outs["csv"].stdout)))
    assert list(rows[0]) == list(RECORD_COLUMNS)
    from_csv = [_csv_record(r) for r in rows]
    check = _record_validator()
    for r in ndjson + from_csv:
        check.validate(r)
    key = lambda r: (r["row"], r["target"])  # noqa: E731
    assert [r["row"] for r in doc["records"]] == [2, 2, 3, 3, 4, 4]  # file order, then target order
    assert sorted(doc["records"], key=key) == sorted(ndjson, key=key) == sorted(from_csv, key=key)
    assert all(r["schema"] == "mathhammer.compare/1" for r in ndjson)


def test_record_points_and_per_100_points(tmp_path):
    result = invoke(write(tmp_path, ROWS), "-t", "knight", "--trials", "2000", "--seed", "1", "-f", "json")
    recs = {r["label"]: r for r in json.loads(result.stdout)["records"]}
    assert recs["Rails"]["points"] == 180
    assert recs["Rails"]["per_100_points"]["damage"] == pytest.approx(100 * recs["Rails"]["damage"]["mean"] / 180)
    assert recs["Fusion"]["points"] is None and recs["Fusion"]["per_100_points"] is None
    assert recs["Rails"]["compare_seed"] == 1 and recs["Rails"]["seed"] == row_seed(1, "Rails", "knight")


def test_stdin_input(tmp_path):
    result = invoke("-", "-t", "knight", "--trials", "2000", "--seed", "2", "-f", "ndjson", stdin=ROWS)
    from_file = invoke(write(tmp_path, ROWS), "-t", "knight", "--trials", "2000", "--seed", "2", "-f", "ndjson")
    assert result.exit_code == 0, result.output
    key = lambda r: r["row"]  # noqa: E731
    assert sorted(map(json.loads, result.stdout.splitlines()), key=key) == \
        sorted(map(json.loads, from_file.stdout.splitlines()), key=key)
    assert result.stderr.splitlines()[-1] == "compare: 3 rows read, 3 computed, 0 failed"


def test_the_table_ranks_per_target_exact_gaps_say_exact(tmp_path):
    path = write(tmp_path, "name,weapon,melee,points\nsmall,A2 WS3+ S6 AP-1 D1,true,50\n"
                           "big,A6 WS3+ S8 AP-2 D2,true,200\n")
    result = invoke(path, "-t", "boyz", "-t", "knight", "--exact")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("vs Boyz") < out.index("vs Knight Paladin")  # the units the aliases name, in -t order
    for block in out.split("vs ")[1:]:
        assert block.index("big") < block.index("small")  # more damage ranks first
    assert "exact" in out and "best" in out


def test_sort_per_points_puts_rows_without_points_last(tmp_path):
    from mathhammer.render.ranking import order

    recs = [{"row": 2, "trials": 10, "method": "monte-carlo", "points": None, "per_100_points": None,
             "damage": {"mean": 9.0, "sem": 0.1}},
            {"row": 3, "trials": 10, "method": "monte-carlo", "points": 100, "per_100_points": {"damage": 1.0},
             "damage": {"mean": 1.0, "sem": 0.1}},
            {"row": 4, "trials": 10, "method": "monte-carlo", "points": 50, "per_100_points": {"damage": 4.0},
             "damage": {"mean": 2.0, "sem": 0.1}}]
    assert [r["row"] for r in order(recs, SortKey.PER_POINTS)] == [4, 3, 2]
    assert [r["row"] for r in order(recs, SortKey.MEAN)] == [2, 4, 3]


def test_svg_and_html_save_the_ranking(tmp_path):
    svg, html = tmp_path / "r.svg", tmp_path / "r.html"
    result = invoke(write(tmp_path, ROWS), "-t", "knight", "--trials", "500", "--seed", "1", "--svg", str(svg),
                    "--html", str(html))
    assert result.exit_code == 0, result.output
    assert "Rails" in html.read_text() and svg.read_text().lstrip().startswith("<svg")


def test_pictures_with_a_machine_format(tmp_path):
    """As shoot: the records on stdout, and the ranking they make saved as a picture."""
    html = tmp_path / "r.html"
    result = invoke(write(tmp_path, ROWS), "-t", "knight", "--exact", "-f", "csv", "--html", str(html))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("schema,") or "," in result.stdout.splitlines()[0]
    assert "Rails" in html.read_text()


def test_examples_run(tmp_path):
    for example in sorted((ROOT / "examples").glob("*.csv")):
        result = invoke(str(example), "-t", "knight", "--exact", "-f", "json")
        assert result.exit_code == 0, (example, result.output)
        doc = json.loads(result.stdout)
        _validator().validate(doc)
        assert len(doc["records"]) >= 4


def test_exact_compare_does_not_import_numba(tmp_path):
    import subprocess
    import sys

    path = write(tmp_path, "weapon,melee\n" + "".join(f"A{a} WS3+ S6 AP-1 D1,true\n" for a in range(1, 7)))
    code = ("import sys, typer\nfrom typer.testing import CliRunner\nfrom mathhammer.cli._command import Command\n"
            "from mathhammer.cli.compare import compare\napp = typer.Typer()\n"
            "app.command('compare', cls=Command)(compare)\napp.command('x')(lambda: None)\n"
            f"r = CliRunner().invoke(app, ['compare', {path!r}, '-t', 'boyz', '--exact', '-f', 'json'])\n"
            "assert r.exit_code == 0, r.output\nassert 'numba' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_a_record_equals_the_shoot_command_with_its_seed(tmp_path):
    """The issue's test: a compare row equals the matching `shoot` run exactly, through the real
    command line: `shoot <weapons> -t <target> --no-stages --seed <record seed>`."""
    from mathhammer.cli.root import app

    result = invoke(write(tmp_path, ROWS), "-t", "knight", "-t", "intercessors", "--trials", "3000", "--seed", "5",
                    "-f", "ndjson")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    rails = [r for r in records if r["label"] == "Rails"]
    assert len(rails) == 2
    for rec in rails:
        shot = CliRunner().invoke(app, ["shoot", *rec["weapons"], "-t", rec["target"], "--no-stages", "--seed",
                                        str(rec["seed"]), "--trials", "3000", "-f", "json"])
        assert shot.exit_code == 0, shot.output
        doc = json.loads(shot.stdout)
        for block in ("damage", "models_destroyed", "p_destroy_unit"):
            assert rec[block] == doc[block]
        with_stages = CliRunner().invoke(app, ["shoot", *rec["weapons"], "-t", rec["target"], "--seed",
                                               str(rec["seed"]), "--trials", "3000", "-f", "json"])
        assert json.loads(with_stages.stdout)["stages"] and not doc["stages"]


@pytest.mark.parametrize("method", ["monte-carlo", "exact"])
def test_output_is_the_same_bytes_for_any_jobs(tmp_path, method):
    rows = "name,weapon\n" + "".join(f"r{i},{1 + i % 3}x A{2 + i % 7} BS3+ S{4 + i % 6} AP-{i % 3} D{1 + i % 2}\n"
                                     for i in range(24))
    path = write(tmp_path, rows)
    outs = [invoke(path, "-t", "knight", "-t", "boyz", "--method", method, "--trials", "2000", "--seed", "4",
                   "-f", "ndjson", "--jobs", str(jobs)).stdout for jobs in (1, 2, 3)]
    assert outs[0] and outs[0] == outs[1] == outs[2]
    rows_seen = [json.loads(line)["row"] for line in outs[0].splitlines()]
    assert rows_seen == sorted(rows_seen)  # file order, then target order


def test_keep_going_names_the_column_in_file_order(tmp_path):
    rows = "name,weapon,target_models\nok,railgun,\nbad a,railgun,0\nalso ok,railgun,\nbad b,railgun,2000\n"
    result = invoke(write(tmp_path, rows), "-t", "intercessors", "--exact", "--keep-going", "--jobs", "2")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 2
    assert "row 3, target_models" in errors[0] and "row 5, target_models" in errors[1]



@pytest.mark.parametrize("name", ["rows.csv", "my row 9.csv"])
def test_keep_going_says_rows_that_could_not_be_read_in_file_order_with_runs_that_failed(tmp_path, name):
    # row 3 cannot be read (points); rows 2 and 5 are read but fail when built (target_models);
    # a file's own name may hold " row 9"
    rows = ("name,weapon,points,target_models\nfails,railgun,,2000\nunread,railgun,lots,\nok,railgun,,\n"
            "fails too,railgun,,0\n")
    result = invoke(write(tmp_path, rows, name), "-t", "intercessors", "--exact", "--keep-going", "--jobs", "1")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert [e.split(", ")[0].rsplit(" ", 1)[-1] for e in errors] == ["2", "3", "5"], errors
    assert "row 3, column points" in errors[1]


# --- --method both ---------------------------------------------------------------------------------

# One attack that hits on a 6, wounds S1 vs T2 on a 6 and gets past a 2+ save on a 1: p = 1/216 of
# 12 damage. One Monte Carlo trial that deals it is sqrt((1 - p) / p) = sqrt(215) standard errors
# above the exact mean (X = 12 B, B ~ Bernoulli(p)), far past the 5 SE bound.
LONG_SHOT = 'name,weapon\nLong shot,"A1 BS6+ S1 AP0 D12"\n'


def _one_trial_hits(tmp_path) -> int:
    """A seed whose one trial for the row deals damage (found with Monte Carlo alone, so the
    check below is against the exact engine, not against itself)."""
    path = write(tmp_path, LONG_SHOT)
    for seed in range(1, 20_000):
        done = next(iter(Comparison(path, ["T2 SV2+ W12"], trials=1, seed=seed)))
        if done.result.damage.mean() > 0:
            return seed
    raise AssertionError("no seed in 20,000 hit: p = 1/216 each")


def test_compare_method_both_disagreeing_exits_3_and_records_the_agreement(tmp_path):
    seed = _one_trial_hits(tmp_path)
    path = write(tmp_path, LONG_SHOT)
    result = invoke(path, "-t", "T2 SV2+ W12", "--method", "both", "--trials", "1", "--seed", str(seed), "-f", "json")
    assert result.exit_code == 3, result.output
    assert "Monte Carlo and exact disagree in 1 run(s), first at" in result.stderr
    assert "row 2 against 'T2 SV2+ W12'" in result.stderr
    doc = json.loads(result.stdout)
    _validator().validate(doc)
    (rec,) = doc["records"]
    assert rec["method"] == "both"
    assert rec["damage"]["mean"] == pytest.approx(12 / 216)  # the exact figures are the record's
    agreement = rec["agreement"]
    assert agreement["agrees"] is False
    assert agreement["mean_difference_se"] == pytest.approx((215) ** 0.5)


def test_compare_method_both_a_failed_row_exits_1_and_the_disagreement_is_still_said(tmp_path):
    seed = _one_trial_hits(tmp_path)
    path = write(tmp_path, 'name,weapon,target_models\nLong shot,"A1 BS6+ S1 AP0 D12",\nfails,"A1 BS6+ S1 AP0 D12",0\n')
    result = invoke(path, "-t", "T2 SV2+ W12", "--method", "both", "--trials", "1", "--seed", str(seed),
                    "--keep-going", "-f", "ndjson")
    assert result.exit_code == 1  # a failed row first
    assert "Monte Carlo and exact disagree in 1 run(s), first at" in result.stderr
    assert "row 3, target_models" in result.stderr


def test_compare_method_both_agreeing_exits_0_and_monte_carlo_records_no_agreement(tmp_path):
    path = write(tmp_path, ROWS)
    both = invoke(path, "-t", "knight", "--method", "both", "--trials", "20000", "--seed", "3", "-f", "ndjson")
    assert both.exit_code == 0, both.output
    recs = [json.loads(line) for line in both.stdout.splitlines()]
    assert [r["agreement"]["agrees"] for r in recs] == [True, True, True]
    mc = invoke(path, "-t", "knight", "--trials", "200", "--seed", "3", "-f", "ndjson")
    assert all(json.loads(line)["agreement"] is None for line in mc.stdout.splitlines())
    table = invoke(path, "-t", "knight", "--method", "both", "--trials", "20000", "--seed", "3")
    assert table.exit_code == 0 and "disagree" not in table.stderr


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_the_records_kept_for_the_table_and_pictures_hold_no_rows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                   fmt: str) -> None:
    """The ranking (table, --svg) gets every record's figures but no distribution rows: kept
    to the end, those would keep every run's distributions alive; the records written keep
    their rows."""
    from mathhammer.render import ranking

    seen: list[list[dict]] = []
    real = ranking.ranking_view

    def view(records: list[dict], *args: object, **kwargs: object) -> object:
        seen.append(records)
        return real(records, *args, **kwargs)

    monkeypatch.setattr(ranking, "ranking_view", view)
    path = tmp_path / "rows.csv"
    path.write_text("weapon\nA2 BS3+ S4 AP0 D1\nA3 BS4+ S5 AP-1 D2\n", encoding="utf-8")
    res = runner.invoke(app, ["compare", str(path), "-t", "T4 SV3+ W2", "--exact", "-f", fmt,
                              "--svg", str(tmp_path / "t.svg")])
    assert res.exit_code == 0, res.output
    (records,) = seen
    assert len(records) == 2 and "distribution" not in json.dumps(records)
    # 2 attacks, each unsaved with 2/3 * 1/2 * 1/3 = 1/9, D1; 3 attacks, each unsaved with
    # 1/2 * 2/3 * 1/2 = 1/6, D2 at one W2 model: 2 x P(any unsaved)
    assert sorted(r["damage"]["mean"] for r in records) == pytest.approx([2 / 9, 2 * (1 - (5 / 6) ** 3)])
    if fmt == "json":
        assert all(r["damage"]["distribution"] for r in json.loads(res.stdout)["records"])
