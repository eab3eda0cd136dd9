"""The command line: table and JSON output, options, and every error path."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathhammer import __version__
from mathhammer.cli import app

from .documents import without_timings

runner = CliRunner()
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
ROOT = Path(__file__).resolve().parent.parent


def run(*args: str):
    return runner.invoke(app, list(args), env=ENV)


def shoot_json(*args: str) -> dict:
    r = run("shoot", *args, "-f", "json", "--trials", "20000", "--seed", "5")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_version() -> None:
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"mathhammer {__version__}"


def test_help_lists_commands() -> None:
    r = run("--help")
    assert r.exit_code == 0
    for cmd in ("shoot", "profiles"):
        assert cmd in r.stdout


@pytest.mark.parametrize("args", [["shoot", "--help"], ["profiles", "--help"], ["profiles", "list", "--help"], ["profiles", "show", "--help"], ["-h"]])
def test_every_command_has_help(args: list[str]) -> None:
    r = run(*args)
    assert r.exit_code == 0 and "Usage" in r.stdout


def test_commands_appear_in_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for phrase in ("mathhammer shoot", "mathhammer profiles list", "mathhammer profiles show"):
        assert phrase in readme
    lines = [ln for ln in readme.splitlines() if ln.startswith("python3 -m pip install")]
    assert lines[:2] == ['python3 -m pip install . && mathhammer shoot railgun --target knight',
                         'python3 -m pip install ".[test]" && python3 -m pytest']


def test_help_does_not_import_numba() -> None:
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom mathhammer.cli import app\n"
            "r = CliRunner().invoke(app, ['shoot', '--help'])\nassert r.exit_code == 0\n"
            "r = CliRunner().invoke(app, ['--help'])\nassert r.exit_code == 0\n"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_shoot_table_railgun_vs_knight() -> None:
    r = run("shoot", "railgun", "--target", "knight", "--trials", "20000", "--seed", "7")
    assert r.exit_code == 0, r.output
    out = r.stdout
    # 'knight' is the Knight Paladin (profiles-src/overlay.yaml alias): T11 Sv3+, 5+ invulnerable against ranged attacks
    assert "Supremacy railgun" in out and "Knight Paladin" in out
    assert "hits on 5+, wounds on 3+ (re-roll: twin-linked), 5+ invulnerable save, devastating wounds on 6s" in out
    assert "P(=k)" in out and "P(≥k)" in out and "P(destroy unit)" in out
    assert "seed 7" in out and "20,000 trials" in out
    assert "\x1b[" not in out  # no colour when not a terminal


def test_shoot_json_contract() -> None:
    d = shoot_json("railgun", "--target", "knight")
    for key in ("schema", "writer", "method", "trials", "seed", "attacker", "target", "context", "thresholds",
                "damage", "models_destroyed", "p_destroy_unit"):
        assert key in d
    assert d["schema"] == "mathhammer.result/1" and d["method"] == "monte-carlo"
    assert d["writer"] == {"name": "mathhammer", "version": __version__}
    assert d["trials"] == 20000 and d["seed"] == 5
    for block in (d["damage"], d["models_destroyed"]):
        for key in ("mean", "sd", "sem", "median", "distribution"):
            assert key in block
        dist = block["distribution"]
        assert [row["value"] for row in dist] == list(range(len(dist)))
        assert abs(sum(row["p"] for row in dist) - 1) < 1e-12
        assert dist[0]["p_at_least"] == 1.0
        assert dist[-1]["p"] > 0  # ends at the largest value seen
        for a, b in zip(dist, dist[1:], strict=False):
            assert abs(a["p_at_least"] - a["p"] - b["p_at_least"]) < 1e-12


def test_same_seed_identical_json() -> None:
    a = run("shoot", "railgun", "-t", "knight", "-f", "json", "--trials", "50000", "--seed", "11")
    b = run("shoot", "railgun", "-t", "knight", "-f", "json", "--trials", "50000", "--seed", "11")
    strip = lambda s: {k: v for k, v in json.loads(s).items() if k != "timing"}  # noqa: E731
    assert strip(a.stdout) == strip(b.stdout)


def test_seed_is_drawn_and_reported() -> None:
    r = run("shoot", "railgun", "-t", "knight", "-f", "json", "--trials", "1000")
    assert isinstance(json.loads(r.stdout)["seed"], int)


def test_inline_weapon_models_and_cover() -> None:
    d = shoot_json("A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS 1]", "--models", "10", "--target", "intercessors", "--cover")
    assert d["attacker"]["models"] == 10 and d["target"]["models"] == 5
    assert d["thresholds"]["save"]["needed"] == 3 and d["thresholds"]["save"]["cover"] == "applied"
    assert d["context"]["cover"] is True


def test_inline_target() -> None:
    d = shoot_json("railgun", "--target", "T11 SV3+ W26 INV5+")
    assert d["target"]["T"] == 11 and d["target"]["invulnerable"] == 5


def test_unit_as_weapon_uses_its_only_ranged_weapon() -> None:
    assert shoot_json("gunrig", "-t", "knight")["attacker"]["weapon"]["name"] == "Supremacy railgun"


def test_modifier_options_reported() -> None:
    r = runner.invoke(app, ["shoot", "A4 BS3+ S4 AP0 D1", "-t", "T4 SV4+ W1 MODELS10", "--hit-mod", "-2", "--wound-mod", "2",
                            "--save-mod", "1", "--reroll-hits", "ones", "--reroll-wounds", "failed", "--trials", "1000",
                            "--seed", "1", "-f", "json", "--threads", "1"], env=ENV)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["thresholds"]["hit"]["modifier"]["requested"] == -2
    assert d["thresholds"]["hit"]["modifier"]["applied"] == -1 and d["thresholds"]["hit"]["modifier"]["clamped"]
    assert d["thresholds"]["wound"]["modifier"]["applied"] == 1
    assert d["thresholds"]["hit"]["needed"] == 4 and d["thresholds"]["wound"]["needed"] == 3
    assert d["context"]["reroll_hits"] == "ones" and d["context"]["reroll_wounds"] == "failed"
    assert "clamped" in r.stderr


def test_target_models_override() -> None:
    assert shoot_json("railgun", "-t", "intercessors", "--target-models", "10")["target"]["models"] == 10


def test_profiles_list_and_show() -> None:
    r = run("profiles", "list", "--kind", "unit", "knight")
    assert r.exit_code == 0 and "Knight Paladin" in r.stdout and "Tidewall" not in r.stdout
    r = run("profiles", "list", "--kind", "weapon", "rail")
    assert r.exit_code == 0 and "Supremacy railgun" in r.stdout
    r = run("profiles", "show", "gunrig")
    # 90 pts: <cost name="pts" value="90"/> of entry e412-ea81-6767-9974 (Tidewall Gunrig) in BSData tau-empire.cat
    assert r.exit_code == 0 and "Supremacy railgun" in r.stdout and "90 pts" in r.stdout
    # the seed datasheet's DEADLY DEMISE D3 and FIRING DECK 11, which shoot and deadly-demise use
    assert "Deadly Demise D3" in r.stdout and "Firing Deck 11" in r.stdout
    r = run("profiles", "show", "railgun", "-f", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["D"] == "D6+6"


LISTED = """\
schema: 1
units:
  - name: Zyqx Squad
    aliases: [zyqx]
    faction: Testers
    points: 90
    invulnerable: {save: 5, ranged_only: true}
    models:
      - {name: Trooper, count: 4, T: 4, Sv: 4, W: 1, feel_no_pain: 6, weapons: [Zyqx rifle]}
      - {name: Sarge, count: 1, T: 4, Sv: 3, W: 2, weapons: [Zyqx rifle]}
    weapons:
      - {name: Zyqx rifle, aliases: [zyqx gun], range: 30, A: "2", BS: 4, S: 5, AP: -1, D: "1"}
"""


@pytest.mark.parametrize("spelling", ["--format", "-f"])
def test_profiles_list_format_json_is_what_the_table_shows(tmp_path: Path, spelling: str) -> None:
    # docs/formats.md said profiles list takes --format table or json; it was "No such option"
    from jsonschema import Draft202012Validator

    from .profile_files import write_profile

    write_profile(tmp_path / "p", LISTED)
    r = run("profiles", "list", "zyqx", spelling, "json", "--profiles", str(tmp_path / "p"))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    schema = json.loads((ROOT / "schemas" / "profile-list-1.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(doc)
    assert doc == {
        "schema": "mathhammer.profile-list/1", "writer": {"name": "mathhammer", "version": __version__},
        "units": [{"name": "Zyqx Squad", "aliases": ["zyqx"], "faction": "Testers", "models": 5, "T": 4, "Sv": 4,
                   "W": 1, "invulnerable": 5, "invulnerable_ranged_only": True, "feel_no_pain": 6, "points": 90}],
        "weapons": [{"name": "Zyqx rifle", "aliases": ["zyqx gun"], "unit": "Zyqx Squad", "faction": "Testers",
                     "profile": '30" A2 BS4+ S5 AP-1 D1'}],
    }  # the most numerous model group's numbers, as the table's row: 5 5+* 6+ 90
    table = run("profiles", "list", "zyqx", "--profiles", str(tmp_path / "p"))
    assert "Zyqx Squad │ zyqx    │ Testers │ 5      │ 4 │ 4+ │ 1 │ 5+* │ 6+  │ 90" in table.stdout
    assert 'Zyqx rifle (zyqx gun) │ Zyqx Squad │ Testers │ 30" A2 BS4+ S5 AP-1 D1' in table.stdout
    r = run("profiles", "list", "zyqx", "--kind", "weapon", spelling, "json", "--profiles", str(tmp_path / "p"))
    assert r.exit_code == 0 and json.loads(r.stdout)["units"] is None  # not listed, not "none matched"
    whole = run("profiles", "list", "-f", "json")
    assert whole.exit_code == 0 and len(json.loads(whole.stdout)["units"]) > 1000
    r = run("profiles", "list", "-f", "ndjson")
    assert r.exit_code == 2 and "ndjson" in r.stderr  # a usage error: table or json


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_profiles_list_says_when_nothing_matched(fmt: str) -> None:
    # an empty table, and nothing said
    r = run("profiles", "list", "--kind", "unit", "zzzzzzzz", "-f", fmt)
    assert r.exit_code == 0
    assert r.stderr == "Warning: nothing listed: no unit has a name or alias containing 'zzzzzzzz'\n"
    r = run("profiles", "list", "zzzzzzzz", "--faction", "t'au empire", "-f", fmt)
    assert r.exit_code == 0 and r.stderr == ("Warning: nothing listed: no unit or weapon of faction \"t'au empire\" "
                                             "has a name or alias containing 'zzzzzzzz'\n")
    if fmt == "json":
        assert json.loads(r.stdout)["units"] == [] and json.loads(r.stdout)["weapons"] == []
    r = run("profiles", "list", "--kind", "unit", "knight", "-f", fmt)
    assert r.exit_code == 0 and r.stderr == ""


ERRORS = [
    (["shoot", "raiilgun", "-t", "knight"], "Error: weapon: unknown weapon or unit (got 'raiilgun')", "railgun"),
    # two distinct Plasma rifle profiles among current units: BS3+ (the T'au commanders) and BS4+ (Crisis Fireknife)
    (["shoot", "plasma rifle", "-t", "knight"], "Error: weapon: ambiguous weapon name",
     "Crisis Fireknife Battlesuits: Plasma rifle"),
    (["shoot", "railgun", "-t", "knigth"], "Error: --target: unknown unit (got 'knigth')", "hint"),
    # 'nite' is part of three units' names (Penitent Engines, Trazyn the Infinite, Ironkin Steeljacks with Heavy
    # Volkanite Disintegrators), of three factions
    (["shoot", "railgun", "-t", "nite"], "Error: --target: ambiguous unit name, matches 3", "Necrons/Trazyn the Infinite"),
    # a unit fires its loadout (issue 9); a unit without one and several weapons: tests/test_cli_units.py
    (["shoot", "hammerhead", "--only", "lascannon", "-t", "knight"],
     "Error: --only: unit 'Hammerhead Gunship' has no weapon of that name (got 'lascannon')", "Railgun"),
    (["shoot", "A2 BS7+ S4 AP-1 D1", "-t", "knight"], "BS must be 2+ to 6+ (got 'BS7+')", ""),
    (["shoot", "A2 BS3+ S4 AP-1 D D7", "-t", "knight"], "only D3 and D6 exist in 40k (got 'D7')", ""),
    (["shoot", "A2 BS3+ S4 AP+2 D1", "-t", "knight"], "AP must be 0 or negative (got 'AP+2')", ""),
    (["shoot", "A2 BS3+ AP-1 D1", "-t", "knight"], "missing S (strength)", ""),
    (["shoot", "A2 BS3+ S4 D1 [LETHAL HITZ]", "-t", "knight"], "unknown ability (got 'LETHAL HITZ')", "LETHAL HITS"),
    (["shoot", "railgun", "-t", "knight", "--trials", "0"], "Error: --trials: must be between 1 and 1,000,000,000 (got 0)", ""),
    (["shoot", "railgun", "-t", "knight", "--trials", "-5"], "Error: --trials: must be between 1 and 1,000,000,000 (got -5)", ""),
    (["shoot", "railgun", "-t", "knight", "--trials", "2000000000"], "(got 2000000000)", ""),
    (["shoot", "railgun", "-t", "knight", "--models", "0"], "Error: --models: at least one model must fire (got 0)", ""),
    (["shoot", "A3 WS3+ S4 AP0 D1", "-t", "knight"], "is a melee weapon", ""),
    (["profiles", "show", "zzzz"], "Error: unit: unknown unit or weapon (got 'zzzz')", ""),
    (["shoot", "railgun", "-t", "knight", "--profiles", "/no/such/dir"], "Error: --profiles: not a folder (got '/no/such/dir')", ""),
]


@pytest.mark.parametrize(("args", "first_line", "more"), ERRORS)
def test_bad_input_one_line_exit_1(args: list[str], first_line: str, more: str) -> None:
    r = run(*args)
    assert r.exit_code == 1, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2 and "Traceback" not in r.stderr
    assert first_line in lines[0]
    assert more in r.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (["shoot", "railgun", "-t", "knight", "--format", "xml"], "'xml'"),
    (["shoot", "railgun", "-t", "knight", "--reroll-hits", "sixes"], "'sixes'"),
    (["shoot", "railgun"], "--target"),
    (["shoot", "railgun", "-t", "knight", "--bogus"], "--bogus"),
    (["shoot", "railgun", "-t", "knight", "--trials", "lots"], "'lots'"),
    (["fire", "railgun"], "fire"),
])
def test_usage_errors_exit_2(args: list[str], fragment: str) -> None:
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert fragment in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.startswith("Error: ")


def test_bad_yaml_in_user_folder(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("schema: 1\nunits:\n  - name: X\n    models:\n      - {name: x, count: 1, T: 4, Sv: 3, W: two}\n")
    r = run("shoot", "railgun", "-t", "knight", "--profiles", str(tmp_path))
    assert r.exit_code == 1
    assert f"Error: {tmp_path / 'mine.yaml'}: units[0].models[0].W: expected int (got 'two')" in r.stderr


def test_python_dash_m() -> None:
    out = subprocess.run([sys.executable, "-m", "mathhammer", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"mathhammer {__version__}"


# --- issue 3: every option, fight, explain, stages, hazardous --------------------------------

def _json(*args: str) -> dict:
    r = run(*args, "-f", "json", "--trials", "20000", "--seed", "3")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize(("args", "path", "expected"), [
    (["--half-range"], ("thresholds", "damage", "values"), [3, 4, 5, 6, 7, 8]),
    (["--stationary"], ("thresholds", "hit", "needed"), 3),
    (["--charged"], ("thresholds", "wound", "needed"), 3),
    (["--bs-improve", "1"], ("thresholds", "hit", "needed"), 3),
    (["--ap-improve", "1"], ("thresholds", "save", "needed"), 6),
    (["--crit-hit", "5"], ("thresholds", "hit", "critical_on"), 5),
    (["--crit-wound", "5"], ("thresholds", "wound", "critical_on"), 5),
    (["--damage-mod", "1"], ("thresholds", "damage", "values"), [2, 3, 4, 5, 6, 7]),
    (["--damage-mod", "-1"], ("thresholds", "damage", "values"), [1, 2, 3, 4, 5]),
    (["--reroll-damage", "ones"], ("thresholds", "damage", "reroll"), "ones"),
    (["--reroll-saves", "failed"], ("thresholds", "save", "reroll"), "failed"),
    (["--reroll-hits", "non-crit"], ("thresholds", "hit", "reroll"), "non-crit"),
    (["--reroll-wounds", "best"], ("thresholds", "wound", "reroll"), "best"),
    (["--rules", "2023"], ("thresholds", "damage", "devastating_excess"), "spills"),
])
def test_each_option_reaches_the_thresholds(args: list[str], path: tuple[str, ...], expected: object) -> None:
    d = _json("shoot", "A2 BS4+ S6 AP-1 D D6 [HEAVY, LANCE, MELTA 2, DEVASTATING WOUNDS]", "-t", "T6 SV4+ W3 MODELS5", *args)
    node = d
    for key in path:
        node = node[key]
    assert node == expected


def test_not_visible_with_indirect_fire() -> None:
    d = _json("shoot", "A3 BS3+ S5 AP0 D1 [INDIRECT FIRE]", "-t", "T4 SV4+ W1 MODELS10", "--not-visible")
    assert d["thresholds"]["hit"]["needed"] == 4 and d["thresholds"]["save"]["cover"] == "applied"


def test_overwatch() -> None:
    d = _json("shoot", "A10 BS3+ S4 AP0 D1", "-t", "T4 SV7+ W1 MODELS20", "--overwatch")
    assert d["thresholds"]["hit"]["overwatch"] is True
    assert abs(d["stages"]["hits"]["mean"] - 10 / 6) < 5 * math.sqrt(10 * 5 / 36 / 20000)


def test_command_reroll_option() -> None:
    d = _json("shoot", "railgun", "-t", "knight", "--command-reroll", "hit")
    assert any("R-3.7" in line for line in d["explain"])


def test_fight_command_melee_profile() -> None:
    d = _json("fight", "A4 WS3+ S6 AP-1 D2 [LANCE]", "-t", "T11 SV3+ W26 INV5+ [TITANIC]", "--charged")
    assert d["attacker"]["weapon"]["type"] == "melee" and d["thresholds"]["wound"]["needed"] == 4


def test_fight_ignores_ranged_only_invulnerable() -> None:
    d = _json("fight", "knight paladin/reaper chainsword - strike", "-t", "knight")
    # AP-4 against Sv3+ leaves no armour save, and the Knight's 5+ invulnerable is ranged-only
    assert d["thresholds"]["save"]["kind"] == "none" and d["thresholds"]["save"]["invulnerable_needed"] is None


def test_fight_unit_name_uses_its_only_melee_weapon() -> None:
    assert _json("fight", "armiger helverin", "-t", "intercessors")["attacker"]["weapon"]["name"] == "Armoured feet"


def test_explain_in_table_and_json() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--explain", "--trials", "1000", "--seed", "1")
    assert r.exit_code == 0 and "Explain" in r.stdout and "R-6" in r.stdout
    d = _json("shoot", "railgun", "-t", "knight")
    assert isinstance(d["explain"], list) and any(line.startswith("R-5.1") for line in d["explain"])


def test_stages_in_table_and_json() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--trials", "1000", "--seed", "1")
    assert "Stage by stage" in r.stdout and "devastating" in r.stdout
    d = _json("shoot", "railgun", "-t", "knight")
    for key in ("attacks", "hits", "critical_hits", "wounds", "critical_wounds", "lethal", "devastating", "unsaved",
                "damage_before_fnp", "damage_after_fnp"):
        assert {"mean", "sd", "sem", "median", "distribution"} <= set(d["stages"][key])


def test_hazardous_block() -> None:
    d = _json("shoot", "hammerhead/ion cannon - overcharge", "-t", "intercessors")
    h = d["hazardous"]
    assert {"mean", "sd", "distribution", "p_lose_model", "models_lost"} <= set(h)
    assert abs(h["mean"] - 0.5) < 5 * math.sqrt(1.25) / math.sqrt(20000)  # 3 * Binomial(1, 1/6)
    assert d["hazardous"]["p_lose_model"] == 0.0  # a W14 Hammerhead never dies to 3 mortal wounds
    assert _json("shoot", "railgun", "-t", "knight")["hazardous"] is None


def test_hazardous_inline_weapon_has_no_models_lost() -> None:
    d = _json("shoot", "A1 BS3+ S8 AP-3 D3 [HAZARDOUS]", "-n", "5", "-t", "knight")
    assert "models_lost" not in d["hazardous"]
    assert abs(d["hazardous"]["mean"] - 2.5) < 5 * math.sqrt(5 * 9 * 5 / 36) / math.sqrt(20000)


def test_profile_modifiers_merge_and_cli_wins(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        "schema: 1\nunits:\n  - name: Sharp Shooters\n    models: [{name: s, count: 5, T: 4, Sv: 3, W: 2}]\n"
        "    modifiers: {reroll_hits: ones}\n    weapons:\n"
        "      - {name: Sharp gun, range: 24, A: '2', BS: 3, S: 4, AP: -1, D: '1', abilities: []}\n"
        "  - name: Sneaky Targets\n    models: [{name: t, count: 5, T: 4, Sv: 4, W: 1}]\n    abilities: [STEALTH]\n"
        "    modifiers: {save_mod: 1}\n")
    d = _json("shoot", "sharp gun", "-t", "sneaky targets", "--profiles", str(tmp_path))
    assert d["thresholds"]["hit"]["reroll"] == "ones" and d["thresholds"]["hit"]["needed"] == 4  # STEALTH
    assert d["thresholds"]["save"]["needed"] == 4  # AP-1 and +1: net 0
    assert any("reroll-hits ones from unit Sharp Shooters" in line for line in d["explain"])
    d = _json("shoot", "sharp gun", "-t", "sneaky targets", "--profiles", str(tmp_path), "--reroll-hits", "failed")
    assert d["thresholds"]["hit"]["reroll"] == "failed"
    assert any("--reroll-hits failed overrides ones" in line for line in d["explain"])


ERRORS_3 = [
    (["shoot", "A1 WS3+ S4 AP0 D1", "-t", "knight"], "melee weapon", "mathhammer fight"),
    (["fight", "railgun", "-t", "knight"], "ranged weapon", "mathhammer shoot"),
    (["shoot", "A D6 BS4+ S4 AP0 D1 [TORRENT]", "-t", "knight"], "TORRENT weapon makes no Hit roll", "BS N/A"),
    (["shoot", "A1 BS4+ S4 AP0 D1 [ANTI-VEHICLE]", "-t", "knight"], "ANTI needs a keyword and a threshold", ""),
    (["shoot", "A1 BS4+ S4 AP0 D1 [ANTI 4+]", "-t", "knight"], "ANTI needs a keyword and a threshold", ""),
    (["shoot", "railgun", "-t", "knight", "--crit-hit", "1"], "Error: --crit-hit: a critical threshold must be 2 to 6", "(got 1)"),
    (["shoot", "railgun", "-t", "knight", "--overwatch"], "cannot target a TITANIC unit", ""),
    (["shoot", "railgun", "-t", "knight", "--not-visible"], "INDIRECT FIRE", ""),
]


@pytest.mark.parametrize(("args", "first", "more"), ERRORS_3)
def test_issue3_bad_input(args: list[str], first: str, more: str) -> None:
    r = run(*args)
    assert r.exit_code == 1, r.output
    assert first in r.stderr.splitlines()[0] and more in r.stderr and "Traceback" not in r.stderr


# --- one command built alone (issue 8 item 4: typer converts only the command that runs) ----------

ALONE_CASES = [
    ["shoot"], ["shoot", "--help"], ["fight", "-h"], ["shoot", "railgun"], ["shoot", "--bogus"],
    ["shoot", "railgun", "--target", "nosuchunit"], ["shoot", "railgun", "-t", "knight", "--exact", "-f", "json"],
    ["compare", "--help"], ["sweep", "--help"], ["tank-shock", "--help"], ["deadly-demise", "--help"],
    ["shoot", "railgun", "-t", "knight", "--trials", "0"],
]


@pytest.mark.parametrize("argv", ALONE_CASES, ids=" ".join)
def test_a_command_built_alone_answers_as_the_whole_application(argv: list[str]) -> None:
    """The command line builds only the command named first; its help, errors, output and
    exit code are the whole application's."""
    from mathhammer.cli import root

    alone = root._for(["mathhammer", *argv])
    assert alone is not root.app
    runner = CliRunner()
    by_alone = runner.invoke(alone, argv, env={"NO_COLOR": "1", "COLUMNS": "100"})
    by_all = runner.invoke(root.app, argv, env={"NO_COLOR": "1", "COLUMNS": "100"})
    assert (by_alone.exit_code, by_alone.stderr) == (by_all.exit_code, by_all.stderr)
    if argv[-2:] == ["-f", "json"]:
        assert without_timings(json.loads(by_alone.stdout)) == without_timings(json.loads(by_all.stdout))
    else:
        assert by_alone.stdout == by_all.stdout


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["--debug", "shoot", "railgun", "-t", "knight"],
                                  ["profiles", "list"], ["shoto"]], ids=" ".join)
def test_anything_else_gets_the_whole_application(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer.cli import root

    assert root._for(["mathhammer", *argv]) is root.app
    monkeypatch.setenv("_MATHHAMMER_COMPLETE", "bash_complete")
    assert root._for(["mathhammer", "shoot"]) is root.app


def test_m81_profiles_show_names_the_wargear_each_statline_bears() -> None:
    # the built-in Bullgryn Squad (imperium-astra-militarum-library.cat): each model bears a
    # Slabshield (W4) by default; a Brute shield (4+ invulnerable) is its other choice
    r = run("profiles", "show", "bullgryn squad")
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert "wargear borne by default (in the statlines above): Bullgryn: Slabshield; Bullgryn Bone 'ead: Slabshield" in flat
    assert ("wargear, for the rosters that list it: Slabshield: a Wounds characteristic of 4 (its bearer); Brute "
            "shield: a 4+ invulnerable save (its bearer)") in flat


def test_m85_profiles_show_lists_the_enhancements_a_unit_may_take() -> None:
    # imperium-imperial-knights-library.cat: "Omnissian Champion" (Add 4 to the bearer's Wounds
    # characteristic) and "Sanctuary" (a 5+ invulnerable save), linked from the Knight Paladin
    r = run("profiles", "show", "knight paladin")
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert ("enhancements, for the rosters that list one: Omnissian Champion: +4 Wounds (its bearer); Sanctuary: a "
            "5+ invulnerable save (its bearer)") in flat


@pytest.mark.parametrize("spelled", ["non-crit", "non_crit", "NON-CRIT", "non crit", "best", "ev_optimal", "EV-OPTIMAL"])
def test_r3_5_fishing_under_every_spelling_of_its_choices(spelled: str) -> None:
    """R-3.5's test line: Lethal Hits at BS3+ against T12 (wounds on 6+) fishing for 6s gives 3/8
    wounds an attack (1/6 crits a die, re-rolling the other 5/6: 1/6 + 5/6 x 1/6 = 11/36 auto-wounds,
    and the normal hits of the re-rolls, 5/6 x 3/6, wound on 6s: 11/36 + 15/216 = 81/216 = 3/8),
    against 1/3 with `failed`. The specification calls the choices non_crit and ev_optimal; any
    case and `_` for `-` are read, and a name that is none of them is refused (exit 2)."""
    d = _json("shoot", "A1 BS3+ S4 AP0 D1 [LETHAL HITS]", "-t", "T12 SV7+ W100", "--reroll-hits", spelled, "--exact")
    assert abs(d["damage"]["mean"] - 3 / 8) < 1e-12
    assert d["context"]["reroll_hits"] in ("non-crit", "best")
    failed = _json("shoot", "A1 BS3+ S4 AP0 D1 [LETHAL HITS]", "-t", "T12 SV7+ W100", "--reroll-hits", "FAILED",
                   "--exact")
    assert abs(failed["damage"]["mean"] - 1 / 3) < 1e-12


def test_reroll_choices_read_alike_in_the_library_and_compare(tmp_path) -> None:
    import mathhammer

    gun, target = "A1 BS3+ S4 AP0 D1 [LETHAL HITS]", "T12 SV7+ W100"
    assert abs(mathhammer.run(gun, target, method="exact", reroll_hits="ev_optimal").damage.mean() - 3 / 8) < 1e-12
    sheet = tmp_path / "rows.csv"
    sheet.write_text(f"name,weapon,reroll_hits,reroll_damage\nfish,{gun},Non_Crit,below_average\n", encoding="utf-8")
    r = runner.invoke(app, ["compare", str(sheet), "-t", target, "--exact", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert abs(json.loads(r.stdout)["records"][0]["damage"]["mean"] - 3 / 8) < 1e-12
    bad = runner.invoke(app, ["shoot", gun, "-t", target, "--reroll-hits", "fish", "--exact"])
    assert bad.exit_code == 2 and "'fish' is not one of 'none', 'ones', 'failed', 'non-crit', 'best'" in bad.output
    assert "Traceback" not in bad.output
