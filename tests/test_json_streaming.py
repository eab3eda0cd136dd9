"""The JSON document is written piece by piece (issue 8, item 6: bounded memory for every legal
request): the same bytes as ``json.dumps(result.to_dict(WRITER), indent=2, ensure_ascii=False)``,
without ever holding a dict per row or the whole text.

The reference in every comparison is ``json.dumps`` of the library's complete ``to_dict`` (the
API contract, unchanged), never the streaming writer's own output.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mathhammer.cli import _io
from mathhammer.engine import analyse
from mathhammer.model import Context, Matchup, Method
from mathhammer.notation import parse_target, parse_weapon
from mathhammer.profiles import load_library
from mathhammer.render.records import WRITER, document, iter_json, to_json
from mathhammer.resolve import build_context, resolve_target, resolve_weapon
from mathhammer.result import DamageResult, Distribution

#: A unit whose names need escaping in JSON (quote, backslash) and on an ASCII terminal
#: (é, ⚔, ½, curly quotes, en dash), with a Hazardous weapon, so the attacker is known.
_PROFILE = """\
schema: 1
units:
  - name: "Café ⚔ \\"Squad\\" \\\\ ½"
    aliases: ["cafe squad"]
    models:
      - {name: "Trooper", count: 5, M: 6, T: 4, Sv: 3, W: 2, Ld: 6, OC: 1}
    keywords: [INFANTRY]
    weapons:
      - {name: "Plasma ‘gun’ – overcharge", aliases: ["cafe gun"], range: 24, A: "2", BS: 3, S: 8, AP: -3, D: "2",
         abilities: ["Rapid Fire 2", "Hazardous"]}
"""


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("profiles")
    (folder / "cafe.yaml").write_text(_PROFILE, encoding="utf-8")
    return folder


def _analyse(weapon: str, target: str, *, n: int = 1, method: Method = Method.EXACT, trials: int = 2_000,
             seed: int = 1, folder: Path | None = None, **options: Any) -> DamageResult:
    """What ``shoot`` computes for these arguments (profile lookup and modifier merge included)."""
    lib = load_library([folder] if folder else ())
    w, unit, notes = resolve_weapon(lib, weapon)
    t, target_unit, target_notes = resolve_target(lib, target)
    ctx, merged = build_context({"firing_models": n, "melee": False, **options}, weapon=w, attacker=unit,
                                target_unit=target_unit)
    return analyse(Matchup(weapon=w, target=t, context=ctx, attacker=unit), method=method, trials=trials, seed=seed,
                   threads=1, notes=notes + target_notes, merged=merged)


def _reference(result: DamageResult) -> str:
    # the whole document: to_dict, with the weapons and groups lists (issue 9)
    return json.dumps(document(result), indent=2, ensure_ascii=False)


def _assert_streams_the_same_bytes(result: DamageResult) -> None:
    expected = _reference(result)
    for block in (1, 3, 4096):
        pieces = list(iter_json(result, block=block))
        assert "".join(pieces) == expected
        # no piece holds more than one block of rows
        assert max(piece.count('"value": ') for piece in pieces) <= block
    assert to_json(result) == expected


CASES: dict[str, dict[str, Any]] = {
    "exact_fnp": dict(weapon="A10 BS3+ S5 AP-1 D D6+6", target="T4 SV3+ W9 MODELS10 FNP5+", n=2),
    "exact_big_damage": dict(weapon="A 2D6 BS3+ S4 AP0 D D6+993", target="T4 SV3+ W1000 MODELS3", n=2),
    "monte_carlo_one_trial": dict(weapon="A4 BS3+ S4 AP0 D1", target="T4 SV3+ W1 MODELS5",
                                  method=Method.MONTE_CARLO, trials=1),
    "monte_carlo_two_trials": dict(weapon="A4 BS3+ S4 AP0 D1", target="T4 SV3+ W1 MODELS5",
                                   method=Method.MONTE_CARLO, trials=2),
    # stages above the 4,096-value cap: their last row holds "that value or more" (capped_at)
    "monte_carlo_capped_stages": dict(weapon="A 2D6 BS2+ S8 AP-6 D 6D6", target="T4 SV3+ W1 MODELS10 FNP5+", n=40,
                                      method=Method.MONTE_CARLO, trials=300),
    "both": dict(weapon="A4 BS3+ S4 AP0 D D3 [SUSTAINED HITS 1]", target="T4 SV3+ W2 MODELS5",
                 method=Method.BOTH, trials=3_000),
    "lethal_devastating_cover": dict(weapon="A6 BS3+ S6 AP-1 D2 [LETHAL HITS, DEVASTATING WOUNDS]",
                                     target="T5 SV3+ INV5+ W3 MODELS5", n=3, cover=True),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_streamed_document_is_the_dumped_document(case: dict[str, Any]) -> None:
    _assert_streams_the_same_bytes(_analyse(**case))


@pytest.mark.parametrize("method", [Method.EXACT, Method.MONTE_CARLO, Method.BOTH])
def test_hazardous_with_a_known_attacker_and_names_to_escape(profiles: Path, method: Method) -> None:
    result = _analyse("cafe gun", "cafe squad", n=3, method=method, folder=profiles, half_range=True)
    doc = result.to_dict(WRITER)
    assert doc["hazardous"]["models_lost"]["distribution"] and doc["attacker"]["unit"] == 'Café ⚔ "Squad" \\ ½'
    _assert_streams_the_same_bytes(result)


def test_the_capped_case_does_cover_capped_stages() -> None:
    # guards the sweep above: the case must keep producing capped stages, or it tests nothing
    result = _analyse(**CASES["monte_carlo_capped_stages"])
    assert {d.capped_at for d in result.stages.values()} > {None}


def test_unlimited_wounds_library_target() -> None:
    # R-9.5 (API only): damage summed with no cap, so the damage distribution is as long as it gets
    target = replace(parse_target("T4 SV3+ W1"), wounds=None)
    m = Matchup(weapon=parse_weapon("A10 BS3+ S5 AP-1 D D6+6"), target=target, context=Context(firing_models=20))
    result = analyse(m, method=Method.EXACT)
    assert result.damage.probabilities.size > 1_000  # up to 200 x 12, less the negligible tail
    _assert_streams_the_same_bytes(result)


def _handmade(p: list[float], **kw: Any) -> Distribution:
    return Distribution(np.array(p, dtype=np.float64), **kw)


def test_non_finite_numbers_empty_lists_and_hostile_strings() -> None:
    # NaN and infinities are spelled NaN / Infinity / -Infinity as json.dumps does; an empty
    # distribution is "[]"; a string that looks like the writer's placeholder stays a string.
    weird = _handmade([math.nan, math.inf, 0.25, -0.0, 5e-324, 1e16], trials=1)
    hostile = 'mathhammer-rows-0 "mathhammer-rows-1" \\ \x01 \u2028 é ⚔ \ud800'
    result = DamageResult(
        method="monte-carlo", trials=1, seed=None, damage=weird, models_destroyed=_handmade([]), target_models=1,
        stages={"attacks": _handmade([-math.inf, 1.0]), "hits": _handmade([1.0], capped_at=0, moments=(3.5, 0.5))},
        hazardous=_handmade([0.5, 0.5]), hazard_models=_handmade([1.0]),
        provenance={"attacker_known": True, "attacker": {hostile: [hostile, {}, []]}, "warnings": [hostile],
                    "explain": ["mathhammer-rows-"]},
    )
    with np.errstate(all="ignore"):  # the statistics of such a distribution are NaN too
        expected = _reference(result)
        streamed = "".join(iter_json(result, block=2))
    assert "NaN" in expected and "-Infinity" in expected and '"distribution": []' in expected
    assert streamed == expected


def test_library_to_dict_still_lists_every_row() -> None:
    # the API contract: to_dict() is the complete document, one dict per row
    d = _handmade([0.25, 0.5, 0.25])
    assert d.to_dict()["distribution"] == [{"value": 0, "p": 0.25, "p_at_least": 1.0},
                                           {"value": 1, "p": 0.5, "p_at_least": 0.75},
                                           {"value": 2, "p": 0.25, "p_at_least": 0.25}]
    assert [row for block in d.iter_rows(2) for row in block] == [(0, 0.25, 1.0), (1, 0.5, 0.75), (2, 0.25, 0.25)]


class _Stdout(io.TextIOWrapper):
    """A terminal whose encoding is ``encoding``, keeping what is written."""

    def __init__(self, encoding: str) -> None:
        super().__init__(io.BytesIO(), encoding=encoding, write_through=True)

    def data(self) -> bytes:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue()


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_a_terminal_that_cannot_encode_a_name_gets_the_same_escapes(profiles: Path, encoding: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    result = _analyse("cafe gun", "cafe squad", n=2, folder=profiles)
    old, new = _Stdout(encoding), _Stdout(encoding)
    monkeypatch.setattr(sys, "stdout", old)
    _io.emit_json(to_json(result))  # what the command line wrote before streaming
    monkeypatch.setattr(sys, "stdout", new)
    _io.emit_json_pieces(iter_json(result, block=3))
    assert new.data() == old.data()
    assert json.loads(new.data().decode(encoding)) == json.loads(_reference(result))
    if encoding == "ascii":
        assert b"\\u2694" in new.data()


def test_the_command_line_on_an_ascii_terminal(profiles: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    out = subprocess.run([sys.executable, "-m", "mathhammer", "shoot", "cafe gun", "-t", "cafe squad", "-n", "2",
                          "--exact", "-f", "json", "--profiles", str(profiles)],
                         capture_output=True, env=env, check=True).stdout
    result = _analyse("cafe gun", "cafe squad", n=2, folder=profiles)
    expected = json.dumps(document(result), indent=2, ensure_ascii=True) + "\n"
    # the run's own compute time is the one thing that differs
    timing = re.compile(rb'"compute_seconds": [0-9.e-]+')
    assert timing.sub(b"T", out) == timing.sub(b"T", expected.encode("ascii"))


class _NullSink:
    def __init__(self) -> None:
        self.chars = 0

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def test_writing_a_400k_row_document_takes_little_memory() -> None:
    # 400,000 damage rows and a 400,000-row stage (about 90 MB of JSON): before, a dict per row
    # and the whole string (hundreds of MB); now a block of rows at a time (and the tail array).
    rng = np.random.default_rng(7)
    p = rng.random(400_000)
    p /= p.sum()
    d = Distribution(p, trials=10**8)
    result = DamageResult(method="monte-carlo", trials=10**8, seed=1, damage=d, models_destroyed=_handmade([1.0]),
                          target_models=1, stages={"damage_before_fnp": d})
    sink = _NullSink()
    tracemalloc.start()
    try:
        for piece in iter_json(result):
            sink.write(piece)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sink.chars > 80_000_000
    assert peak < 16 * 2**20


#: Runs the command line in this process and reports the process's peak RSS (VmHWM: of this
#: program alone; a child's rusage would include the pytest process it was forked from).
_PEAK = """\
import sys
from mathhammer.cli.root import run
sys.argv = ["mathhammer", *sys.argv[1:]]
code = run()
sys.stdout.flush()
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
sys.stderr.write(f"exit {code} {peak}")
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_the_command_line_writes_a_large_document_within_the_memory_goal() -> None:
    # Issue 8 item 6: <= 200 MB peak within the documented limits. This request writes about
    # 45 MB of JSON (120,001 damage rows, two stages of 139,520); written as one string of
    # dicts it peaked near 500 MB.
    args = ["shoot", "-n", "20", "A 2D6 BS3+ S4 AP0 D D6+993", "-t", "T4 SV3+ W1000 MODELS1000", "--exact", "-f",
            "json"]
    child = subprocess.run([sys.executable, "-c", _PEAK, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, check=True)
    match = re.search(r"exit (\d+) VmHWM:\s+(\d+) kB", child.stderr)
    assert match is not None and match.group(1) == "0", child.stderr
    assert int(match.group(2)) * 1024 <= 200 * 10**6
