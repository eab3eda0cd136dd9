"""The ``mathhammer.result/1`` JSON Schema (schemas/result-1.schema.json, draft 2020-12) against
what ``shoot`` and ``fight`` write (issue 10, item 3): every machine format validates, the CSV
row once read back and re-nested, and the three formats carry the same values.

CSV has no types and no nesting, so reading it back needs the schema (:func:`renest`): a column
is a dotted path; a cell is text where the schema has a string, else JSON text; an empty cell
(or a group of them) is null where the key is required and absent where it is optional (an
object that is never null is built from its own cells). CSV
cannot tell a null from a missing key, so the round trip compares documents with the optional
nulls left out (:func:`without_optional_nulls`); every other value must come back exactly.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from mathhammer.cli import app
from mathhammer.codes import StageCount
from mathhammer.model import CommandReroll, Context, DamageReroll, RerollPolicy, RulesVersion, SaveReroll
from mathhammer.render.records import result_columns

ROOT = Path(__file__).resolve().parent.parent
SCHEMA: dict[str, Any] = json.loads((ROOT / "schemas" / "result-1.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
_MISSING = object()

#: The requests the issue names (single weapon, unit with several weapons and mixed target
#: groups, --exact, --method both, one trial) and the blocks that only some requests have.
CASES: dict[str, list[str]] = {
    "single_weapon": ["shoot", "railgun", "-t", "knight", "--trials", "3000", "--seed", "1"],
    "exact": ["shoot", "railgun", "-t", "knight", "--exact"],
    "both": ["shoot", "A4 BS3+ S4 AP0 D D3 [SUSTAINED HITS 1]", "-t", "T4 SV3+ W2 MODELS5", "--method", "both",
             "--trials", "3000", "--seed", "2"],
    "one_trial": ["shoot", "railgun", "-t", "knight", "--trials", "1", "--seed", "3"],
    "unit_mixed_groups": ["shoot", "2x A2 BS3+ S4 AP-1 D1", "3x A1 BS4+ S8 AP-2 D D3", "-t",
                          "4x T4 SV3+ W1; 1x T4 SV3+ W3", "--trials", "3000", "--seed", "4"],
    "unit_mixed_groups_exact": ["shoot", "2x A2 BS3+ S4 AP-1 D1", "3x A1 BS4+ S8 AP-2 D D3", "-t",
                                "4x T4 SV3+ W1; 1x T4 SV3+ W3", "--exact"],
    "torrent_anti_leader_cover": ["shoot", "A D6 BS N/A S5 AP0 D1 [TORRENT, ANTI-INFANTRY 4+]", "-t",
                                  "intercessors + captain", "--cover", "--trials", "3000", "--seed", "5"],
    # the Hammerhead's weapon, so the attacking unit is known; "sm rhino": "rhino" alone is ambiguous
    # (Grey Knights and Space Marines)
    "hazardous_known_attacker": ["shoot", "ion cannon - overcharge", "-t", "sm rhino", "--trials", "3000",
                                 "--seed", "6"],
    "capped_stages_wounded": ["shoot", "A 2D6 BS2+ S8 AP-6 D 6D6", "-t", "T4 SV3+ W2 MODELS10 FNP5+", "-n", "40",
                              "--wounds-left", "1", "--trials", "300", "--seed", "7"],
    "fight": ["fight", "A4 WS3+ S6 AP-1 D2 [LANCE]", "-t", "knight", "--charged", "--hit-mod", "1", "--trials", "3000",
              "--seed", "8"],
    "fight_unit_exact": ["fight", "intercessors", "-t", "cadians", "--exact"],
    "stratagems": ["shoot", "A2 BS4+ S8 AP0 D2", "-t", "T4 SV4+ W3 MODELS5", "--detachment", "montka", "--round", "2",
                   "--stratagem", "focused fire", "--stratagem", "counterfire defence systems", "--exact"],
}


def invoke(args: list[str], fmt: str) -> str:
    r = CliRunner().invoke(app, [*args, "-f", fmt], env=ENV)
    assert r.exit_code == 0, r.output
    return r.stdout


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    """The schema of a value: ``$ref`` followed, a nullable object taken as its object."""
    while True:
        if "$ref" in node:
            node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]]
        elif "oneOf" in node and {"type": "null"} in node["oneOf"]:
            node = next(alt for alt in node["oneOf"] if alt != {"type": "null"})
        else:
            return node


def _types(node: dict[str, Any]) -> set[str]:
    if "oneOf" in node:
        return set().union(*(_types(alt) for alt in node["oneOf"]))
    node = _resolve(node)
    kinds = node.get("type")
    if kinds is not None:
        return {kinds} if isinstance(kinds, str) else set(kinds)
    values = node["enum"] if "enum" in node else [node["const"]]
    return {type(v).__name__.replace("str", "string") for v in values}


def _cells(tree: Any) -> list[str]:
    return [tree] if isinstance(tree, str) else [c for sub in tree.values() for c in _cells(sub)]


def _build(tree: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    node = _resolve(node)
    out = {}
    for key, sub in tree.items():
        child = node["properties"][key]  # a column the schema does not know fails here
        required = key in node.get("required", ())
        value: Any
        if not any(_cells(sub)):
            if not required:
                value = _MISSING
            elif "null" in _types(child) or not isinstance(sub, dict):
                value = None
            else:  # an object that is always there: its own keys say what they are
                value = _build(sub, child)
        elif isinstance(sub, dict):
            value = _build(sub, child)
        else:
            value = sub if "string" in _types(child) else json.loads(sub)
        if value is not _MISSING:
            out[key] = value
    return out


def renest(columns: list[str], cells: list[str]) -> dict[str, Any]:
    """One CSV row back into a document, by the schema (see the module docstring)."""
    tree: dict[str, Any] = {}
    for column, cell in zip(columns, cells, strict=True):
        *parents, leaf = column.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = cell
    return _build(tree, SCHEMA)


def read_csv(text: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows; a distribution cell may pass the csv module's default 128 KiB field limit."""
    limit = csv.field_size_limit(2**31 - 1)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    finally:
        csv.field_size_limit(limit)
    return rows[0], rows[1:]


def without_optional_nulls(doc: Any, node: dict[str, Any] = SCHEMA) -> Any:
    """``doc`` less the null values of keys the schema does not require (what CSV cannot tell
    from a missing key)."""
    if not isinstance(doc, dict):
        return doc
    node = _resolve(node)
    required = node.get("required", ())
    props = node.get("properties", {})
    other = node.get("additionalProperties")
    return {k: without_optional_nulls(v, props.get(k, other if isinstance(other, dict) else {}))
            for k, v in doc.items() if v is not None or k in required}


def _timeless(doc: dict[str, Any]) -> dict[str, Any]:
    """The document less what differs between two runs of one request: the compute time."""
    doc = copy.deepcopy(doc)
    doc.pop("timing")
    doc.get("monte_carlo", {}).pop("simulate_seconds", None)
    return doc


@pytest.fixture(scope="module")
def outputs() -> dict[str, dict[str, str]]:
    return {name: {fmt: invoke(args, fmt) for fmt in ("json", "ndjson", "csv")} for name, args in CASES.items()}


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("case", CASES)
def test_json_output_validates(outputs: dict[str, dict[str, str]], case: str) -> None:
    VALIDATOR.validate(json.loads(outputs[case]["json"]))


@pytest.mark.parametrize("case", CASES)
def test_ndjson_output_is_one_valid_record(outputs: dict[str, dict[str, str]], case: str) -> None:
    text = outputs[case]["ndjson"]
    assert text.endswith("\n") and text.count("\n") == 1
    VALIDATOR.validate(json.loads(text))


@pytest.mark.parametrize("case", CASES)
def test_csv_output_read_back_validates(outputs: dict[str, dict[str, str]], case: str) -> None:
    header, rows = read_csv(outputs[case]["csv"])
    assert header == list(result_columns()) and len(rows) == 1
    VALIDATOR.validate(renest(header, rows[0]))


@pytest.mark.parametrize("case", CASES)
def test_the_three_formats_carry_the_same_values(outputs: dict[str, dict[str, str]], case: str) -> None:
    doc = json.loads(outputs[case]["json"])
    assert _timeless(json.loads(outputs[case]["ndjson"])) == _timeless(doc)
    header, rows = read_csv(outputs[case]["csv"])
    assert _timeless(renest(header, rows[0])) == without_optional_nulls(_timeless(doc))


def test_the_cases_reach_every_optional_block(outputs: dict[str, dict[str, str]]) -> None:
    # guards the sweep above: each optional or nullable part of the contract is exercised
    docs = {name: json.loads(out["json"]) for name, out in outputs.items()}
    assert "agreement" in docs["both"] and docs["exact"]["trials"] is None
    assert docs["one_trial"]["damage"]["sem"] is None
    assert "models_lost" in docs["hazardous_known_attacker"]["hazardous"]
    assert any("capped_at" in s for s in docs["capped_stages_wounded"]["stages"].values())
    assert docs["capped_stages_wounded"]["target"]["wounds_left"] == 1
    assert docs["unit_mixed_groups"]["attacker"]["weapon"] is None and len(docs["unit_mixed_groups"]["groups"]) == 2
    assert docs["torrent_anti_leader_cover"]["thresholds"]["hit"]["automatic"] is True
    assert docs["torrent_anti_leader_cover"]["attacker"]["weapon"]["BS"] is None
    assert docs["torrent_anti_leader_cover"]["target"]["attached"] is True
    assert "WS" in docs["fight"]["attacker"]["weapon"] and docs["fight"]["thresholds"]["hit"]["modifier"]["parts"]


def _broken(doc: dict[str, Any], path: str, change: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    *parents, leaf = path.split(".")
    node = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if change == "rename":
        node[leaf + "_renamed"] = node.pop(leaf)
    elif change == "drop":
        del node[leaf]
    elif change == "extra":
        node[leaf]["surprise"] = 1
    else:
        node[leaf] = change
    return doc


@pytest.mark.parametrize(("path", "change"), [
    ("damage.mean", "rename"), ("p_destroy_unit", "drop"), ("models_destroyed.distribution", "drop"),
    ("damage.distribution.0.p", "rename"), ("groups.0.models_destroyed", "extra"), ("weapons.0.damage", "extra"),
    ("target.T", "rename"), ("context.cover", "drop"), ("thresholds.hit", "extra"), ("attacker.weapon", "extra"),
    ("method", "monte carlo"), ("context.reroll_hits", "all"), ("stages.hits", "rename"), ("schema", "drop"),
    ("timing", "extra"), ("writer", "extra"),
])
def test_the_schema_catches_a_renamed_missing_or_extra_key(outputs: dict[str, dict[str, str]], path: str,
                                                           change: str) -> None:
    doc = json.loads(outputs["single_weapon"]["json"])
    VALIDATOR.validate(doc)
    assert not VALIDATOR.is_valid(_broken(doc, path, change))


def test_the_schema_catches_half_of_the_both_blocks_and_a_weapon_with_two_skills(
        outputs: dict[str, dict[str, str]]) -> None:
    both = json.loads(outputs["both"]["json"])
    assert not VALIDATOR.is_valid(_broken(both, "agreement", "drop"))
    single = json.loads(outputs["single_weapon"]["json"])
    two_skills = copy.deepcopy(single)
    two_skills["attacker"]["weapon"]["WS"] = 3
    assert not VALIDATOR.is_valid(two_skills)


def test_the_schema_follows_the_model() -> None:
    # the closed lists of the schema are the model's own (a new option or stage must be added there)
    defs = SCHEMA["$defs"]
    context = defs["context"]["properties"]
    assert list(context) == list(Context.__slots__)
    for name, enum in (("reroll_hits", RerollPolicy), ("reroll_wounds", RerollPolicy), ("reroll_damage", DamageReroll),
                       ("reroll_saves", SaveReroll), ("command_reroll", CommandReroll), ("rules", RulesVersion)):
        assert context[name]["enum"] == [e.value for e in enum], name
    assert SCHEMA["properties"]["stages"]["propertyNames"]["enum"] == [s.name.lower() for s in StageCount]


def test_renest_reads_types_and_absence_by_the_schema() -> None:
    # the reader itself: text for strings, JSON otherwise; empty is null if required, else absent
    columns = ["trials", "seed", "attacker.weapon.A", "attacker.weapon.name", "attacker.weapon.BS",
               "attacker.points", "hazardous.mean", "hazardous.models_lost.mean", "monte_carlo.trials"]
    doc = renest(columns, ["", "", "1", "gun, \"big\"", "", "", "0.5", "", ""])
    assert doc == {"trials": None, "seed": None, "attacker": {"weapon": {"A": "1", "name": 'gun, "big"'}},
                   "hazardous": {"mean": 0.5}}
    with pytest.raises(KeyError):
        renest(["damage.average"], ["1"])


@pytest.mark.parametrize("method", ["--exact", "--method=both"])
def test_an_exact_sum_rounded_past_one_is_still_a_probability(method: str) -> None:
    """Four Hazardous D6-attack weapons at one W24 model: the exact engine's P(no model
    destroyed) came out 1.0000000000000004, which the schema (and probability) forbids."""
    doc = json.loads(invoke(["shoot", "4x A D6 BS4+ S5 AP-1 D1 [HAZARDOUS]", "-t", "T4 SV3+ W24", method,
                             "--trials", "1000", "--seed", "1"], "json"))
    VALIDATOR.validate(doc)
    assert doc["models_destroyed"]["distribution"][0]["p"] == 1.0


def test_a_distribution_keeps_its_probabilities_within_zero_and_one() -> None:
    import numpy as np

    from mathhammer.result import Distribution

    d = Distribution(np.array([1.0000000000000004, -1e-19, 0.25]))
    assert d.probabilities.tolist() == [1.0, 0.0, 0.25]
    assert Distribution(np.array([1.5, -0.5])).probabilities.tolist() == [1.5, -0.5]  # no rounding: a bug to see
    kept = np.array([0.5, 0.5])
    assert Distribution(kept).probabilities is kept  # within bounds: the very array, not a copy
