"""``mathhammer roster show``: the table and JSON views, and bad files as one line with exit 1."""

from __future__ import annotations

import json
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
