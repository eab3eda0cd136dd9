"""The ``mathhammer.roster/1`` JSON Schema (schemas/roster-1.schema.json, draft 2020-12) against
what ``roster show --format json`` writes (``Roster.to_dict()``): the example rosters, every
sample roster of the shared data (skipped without it), and a hand-made roster with what the
samples lack (a unit not matched, a line outside any unit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import mathhammer

ROOT = Path(__file__).resolve().parent.parent
SCHEMA: dict[str, Any] = json.loads((ROOT / "schemas" / "roster-1.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
DATA = ROOT.parent / "shared" / "data"
SAMPLES = sorted([*(DATA / "rosters-prettyscribe").glob("*.ros*"), *(DATA / "text-exports-40kcompactor").glob("*.txt")])

HAND_MADE = """\
Odd List (300 points)

T’au Empire
Incursion (1000 points)

CHARACTERS

Nobody Knows Me (80 points)
  • 1x Staff

OTHER DATASHEETS

  Crisis Sunforge Battlesuits (125 points)

Tidewall Gunrig (90 points)
"""


def errors(document: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in VALIDATOR.iter_errors(document)]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["schema"]["const"] == "mathhammer.roster/1"


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.txt")), ids=lambda p: p.name)
def test_example_rosters_validate(path: Path) -> None:
    document = mathhammer.read_roster(path).to_dict()
    assert document["units"] and errors(document) == []


@pytest.mark.skipif(not SAMPLES, reason="the shared sample rosters (../shared/data) are not beside the project")
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_rosters_validate(path: Path) -> None:
    document = mathhammer.read_roster(path).to_dict()
    assert document["units"] and errors(document) == []


def test_a_roster_with_an_unmatched_unit_and_a_lost_line_validates(tmp_path: Path) -> None:
    path = tmp_path / "odd.txt"
    path.write_text(HAND_MADE, encoding="utf-8")
    document = mathhammer.read_roster(path).to_dict()
    assert [u["unit"] is None for u in document["units"]] == [True, False]  # nobody knows the first one
    # the indented unit line, outside any unit; then the file's total (300 points) against the
    # units read (80 + 90), short of the lost line's 125 points and 5 more
    assert [n["line"] for n in document["notes"]] == [13, 0]
    assert "its units add up to 170" in document["notes"][1]["text"]
    assert document["units"][0]["notes"]
    assert errors(document) == []


def test_the_schema_is_closed() -> None:
    """A key the contract does not list, or a renamed one, fails validation."""
    document = mathhammer.read_roster(ROOT / "examples" / "tau-army.txt").to_dict()
    assert errors({**document, "extra": 1}) and errors({**document, "units": [{**document["units"][0], "nam": "x"}]})
    missing = dict(document)
    del missing["attachments"]
    assert errors(missing)
