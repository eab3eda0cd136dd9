"""Profile files in JSON syntax: JSON is YAML, so such a file is the same data, read by the
json module (the generated library is written that way); anything the YAML path would judge
with a line number (a repeated key, a huge number, deep nesting, NaN) is left to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mathhammer.limits import MAX_YAML_DEPTH
from mathhammer.profiles import load_file
from mathhammer.profiles._yaml import _json_document, _parse_yaml

from .profile_files import profile_error, write_profile

UNIT_YAML = """\
schema: 1
source: "test"
units:
  - name: Test Squad
    faction: "T'au Empire"
    points: 90
    models:
      - {name: Trooper, count: 4, T: 4, Sv: 4, W: 1, weapons: [Pulse rifle]}
      - {name: Shas'ui, count: 1, T: 4, Sv: 4, W: 2, weapons: [Pulse rifle]}
    keywords: [INFANTRY]
    weapons:
      - {name: Pulse rifle, range: 30, A: "1", BS: 4, S: 5, AP: 0, D: "1", abilities: [Rapid Fire 1]}
"""


def _yaml_data(text: str) -> object:
    import yaml

    return yaml.safe_load(text)


def test_a_json_file_is_the_same_data_as_its_yaml(tmp_path: Path) -> None:
    data = _yaml_data(UNIT_YAML)
    text = json.dumps(data, ensure_ascii=False, indent=1)
    assert _json_document(text) == data
    assert _parse_yaml(text, "x.yaml") == data
    from_yaml = load_file(write_profile(tmp_path / "a", UNIT_YAML))
    from_json = load_file(write_profile(tmp_path / "b", text))
    assert from_json == from_yaml


def test_yaml_text_is_not_taken_for_json() -> None:
    assert _json_document(UNIT_YAML) is None
    assert _json_document("{schema: 1, units: []}") is None  # a YAML flow mapping, not JSON


@pytest.mark.parametrize(("text", "message"), [
    ('{"schema": 1, "schema": 1, "units": []}', "duplicate key at line 1"),
    ('{"schema": 1, "units": [], "source": ' + "9" * 31 + "}", "more than 30 digits at line 1"),
])
def test_json_that_yaml_would_refuse_gets_the_yaml_error(tmp_path: Path, text: str, message: str) -> None:
    assert _json_document(text) is None
    assert message in profile_error(write_profile(tmp_path, text)).what


def test_deep_json_is_left_to_the_depth_limit(tmp_path: Path) -> None:
    deep = '{"schema": 1, "units": [], "source": ' + "[" * (MAX_YAML_DEPTH + 5) + "]" * (MAX_YAML_DEPTH + 5) + "}"
    assert _json_document(deep) is None
    assert f"nested more than {MAX_YAML_DEPTH} levels deep" in profile_error(write_profile(tmp_path, deep)).what


def test_nan_is_not_json_data_here() -> None:
    assert _json_document('{"schema": NaN}') is None
