"""``mathhammer roster show``: the table and JSON views, and bad files as one line with exit 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mathhammer.cli.roster import app as roster_app

ROSZ = Path(__file__).resolve().parents[2] / "shared" / "data" / "rosters-prettyscribe"

_app = typer.Typer()


@_app.callback()
def _root() -> None:
    """Stands for the root application (which the lead registers ``roster`` in)."""


_app.add_typer(roster_app, name="roster")

GW = """\
List (80 points)

Necrons
Incursion (1000 points)

CHARACTERS

Nobody Knows Me (80 points)
  • 1x Staff
"""


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(_app, ["roster", "show", *args], env={"COLUMNS": "160"})
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.skipif(not ROSZ.is_dir(), reason="the shared .rosz samples are not here")
def test_show_a_rosz_as_table_and_json() -> None:
    code, out, _ = _run(str(ROSZ / "necrons-10e.rosz"))
    assert code == 0 and "Tesseract Vault" in out and "4 of 4 units usable" in out and "4x Tesla sphere" in out
    code, out, _ = _run(str(ROSZ / "necrons-10e.rosz"), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "mathhammer.roster/1" and doc["points"] == 1205
    assert [u["name"] for u in doc["units"]] == ["Overlord", "Tesseract Vault", "The Silent King", "Doom Scythe"]


def test_an_unmatched_unit_is_shown_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text(GW, encoding="utf-8")
    code, out, _ = _run(str(path), "-f", "json")
    [unit] = json.loads(out)["units"]
    assert code == 0 and unit["unit"] is None and unit["notes"][0]["text"] == "Nobody Knows Me: not in the library"
    code, out, _ = _run(str(path))
    assert code == 0 and "NOT USED" in out


@pytest.mark.parametrize("content,what", [(b"PK\x03\x04junk", "corrupt"), (b"<catalogue/>", "not a BattleScribe roster"),
                                          (b"hello\nworld\n", "list.txt:1: not a roster")])
def test_bad_files_are_one_line_and_exit_1(tmp_path: Path, content: bytes, what: str) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes(content)
    code, out, err = _run(str(path))
    assert code == 1 and out == "" and what in err and "Traceback" not in err
    assert len(err.splitlines()) <= 2  # the error, and perhaps its hint


TEXT = ROSZ.parent / "text-exports-40kcompactor"


@pytest.mark.skipif(not TEXT.is_dir(), reason="the shared text exports are not here")
def test_a_unit_line_not_understood_is_said_wherever_the_roster_is_used(tmp_path: Path) -> None:
    # an indented unit line: the unit and its lines are "not understood (outside any unit)";
    # the headline said "17 of 17 units usable", compare ranked the rest without a word
    import mathhammer
    from mathhammer.compare import Comparison

    original = (TEXT / "gwapp-tau.txt").read_text(encoding="utf-8")
    assert "\nCrisis Sunforge Battlesuits (125 points)\n" in original
    path = tmp_path / "v.txt"
    path.write_text(original.replace("\nCrisis Sunforge Battlesuits (125 points)\n",
                                     "\n  Crisis Sunforge Battlesuits (125 points)\n", 1), encoding="utf-8")
    code, out, _ = _run(str(path))
    assert code == 0 and re.search(r"(\d+) of \1 units usable, \d+ lines not understood \(below\)", out)
    roster = mathhammer.read_roster(path)
    assert roster.not_understood()[0].text == "not understood (outside any unit): 'Crisis Sunforge Battlesuits (125 points)'"
    assert all(n.unread for n in roster.not_understood())
    # a note's flag says so, not its wording: a roster-level decision worded alike is no lost line
    from mathhammer.roster.model import Note, Roster

    notes = (Note(3, "not understood: 'x', taken as y"), Note(4, "line z", unread=True))
    assert Roster(file="f", format="gw-app", notes=notes).not_understood() == [notes[1]]
    lib = mathhammer.api.with_rosters(mathhammer.library(), [roster])
    attack = mathhammer.build("Crisis Sunforge Battlesuits", "knight", lib=lib)
    assert any("v.txt has" in n and "a unit there is missing" in n for n in attack.notes)
    sheet = Comparison(None, ("knight",), rosters=[path], trials=100)
    assert any("Crisis Sunforge Battlesuits (125 points)" in w and "not ranked" in w for w in sheet.warnings)


@pytest.mark.skipif(not TEXT.is_dir(), reason="the shared text exports are not here")
def test_a_unit_over_a_limit_is_noted_at_its_line_not_an_error_for_the_whole_file(tmp_path: Path) -> None:
    import mathhammer

    original = (TEXT / "gwapp-tau.txt").read_text(encoding="utf-8")
    listed = "  • 2x Crisis Sunforge Shas’ui\n    • 2x Battlesuit fists"
    assert listed in original
    path = tmp_path / "big.txt"
    path.write_text(original.replace(listed, listed.replace("2x Crisis", "1000x Crisis", 1), 1), encoding="utf-8")
    roster = mathhammer.read_roster(path)  # was: ProfileError "unit '...': the number of models must be at most
    bad = [e for e in roster.entries if e.unit is None and e.name == "Crisis Sunforge Battlesuits"]  # 1,000"
    assert len(bad) == 1 and bad[0].line > 0
    assert "cannot be used" in bad[0].notes[-1].text and "at most 1,000 (got 1001)" in bad[0].notes[-1].text


@pytest.mark.skipif(not TEXT.is_dir(), reason="the shared text exports are not here")
@pytest.mark.parametrize("cost", ["99999999999999999999", "7.5"])
def test_a_unit_line_with_a_bad_cost_in_a_real_export_is_one_line_and_exit_1(tmp_path: Path, cost: str) -> None:
    # the sample's second unit: after a valid unit it was read as a second model of that unit
    original = (TEXT / "gwapp-tau.txt").read_text(encoding="utf-8")
    lines = original.splitlines()
    assert lines[16] == "Crisis Sunforge Battlesuits (125 points)"  # line 17
    path = tmp_path / "bad.txt"
    path.write_text(original.replace(lines[16], f"Crisis Sunforge Battlesuits ({cost} points)", 1), encoding="utf-8")
    code, out, err = _run(str(path))
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.splitlines()[0] == (f"Error: {path}:17: 'Crisis Sunforge Battlesuits': a cost of points must be a "
                                   f"whole number from 0 to 1,000,000 (got '{cost}')")
    assert len(err.splitlines()) == 2 and err.splitlines()[1].startswith("  hint: ")
