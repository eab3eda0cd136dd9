"""``--format ndjson`` and ``--format csv`` (issue 10, item 3) and the record stream under them
(:mod:`mathhammer.render.stream`): the NDJSON line is ``json.dumps`` of the document, compact;
the CSV row holds every leaf of the document under the one documented header; a record is never
cut in half, not by Ctrl-C, not by a stream that cannot encode it, not by a failed write.

References are independent of the writers under test: ``json.dumps`` of the library's complete
``to_dict`` document and the ``csv`` module.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mathhammer.api import build, run_attack
from mathhammer.cli import app
from mathhammer.errors import MathhammerError
from mathhammer.render import OutputFormat, stream
from mathhammer.render.records import (
    SCHEMA,
    WRITER,
    document,
    record,
    result_columns,
    rows_json,
    rows_pieces,
    stat_columns,
)
from mathhammer.render.stream import RawJSON, RecordWriter, csv_field, flatten, json_text, open_records
from mathhammer.result import DamageResult, Distribution

from .child_signals import sigint_as_ctrl_c

ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
MC = ["shoot", "railgun", "-t", "knight", "--trials", "2000", "--seed", "9"]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _results() -> dict[str, DamageResult]:
    """Results with every kind of block: exact, Monte Carlo with capped stages, both, a unit."""
    return {
        "exact": run_attack(build(["railgun"], "knight"), method="exact"),
        "capped": run_attack(build(["A 2D6 BS2+ S8 AP-6 D 6D6"], "T4 SV3+ W1 MODELS10 FNP5+", models=40), trials=300,
                             seed=3),
        "both": run_attack(build(["A4 BS3+ S4 AP0 D D3 [SUSTAINED HITS 1]"], "T4 SV3+ W2 MODELS5"), method="both",
                           trials=2000, seed=2),
        "unit": run_attack(build(["2x A2 BS3+ S4 AP-1 D1", "3x A1 BS4+ S8 AP-2 D D3"], "4x T4 SV3+ W1; 1x T4 SV3+ W3"),
                           trials=2000, seed=4),
        # the Hammerhead's overcharged ion cannon (Hazardous) at a Space Marines Rhino ("rhino" alone is
        # ambiguous: the Grey Knights have one too)
        "hazardous": run_attack(build(["ion cannon - overcharge"], "sm rhino"), trials=500, seed=1),
    }


@pytest.fixture(scope="module")
def results() -> dict[str, DamageResult]:
    return _results()


def _ndjson(result: DamageResult) -> str:
    out = io.StringIO()
    with open_records(OutputFormat.NDJSON, out, schema=SCHEMA) as writer:
        writer.write(record(result))
    return out.getvalue()


# --- NDJSON ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["exact", "capped", "both", "unit", "hazardous"])
def test_the_ndjson_line_is_the_compact_dump_of_the_document(results: dict[str, DamageResult], name: str) -> None:
    assert _ndjson(results[name]) == _compact(document(results[name])) + "\n"


def test_rows_json_is_the_dump_of_the_rows() -> None:
    cases = [Distribution(np.array([0.25, 0.5, 0.25])), Distribution(np.array([], dtype=np.float64)),
             Distribution(np.array([math.nan, math.inf, 0.25, -0.0, 5e-324, 1e16])),
             Distribution.from_counts(np.array([3, 0, 5, 1], dtype=np.int64))]
    for dist in cases:
        with np.errstate(all="ignore"):
            expected = _compact(dist.to_dict()["distribution"])
            assert rows_json(dist) == expected and isinstance(rows_json(dist), str)
            assert rows_json(dist, block=1) == expected
            for block in (1, 2, 4096):  # the command line's blocks: the same text, written piece by piece
                pieces = rows_pieces(dist, block=block)
                assert str(pieces) == expected
                assert json_text({"d": pieces}) == json_text({"d": rows_json(dist)}) == '{"d":' + expected + "}"
                assert flatten({"d": pieces}, ["d"]) == [expected]


def test_json_text_splices_raw_json_and_keeps_look_alike_strings() -> None:
    value = {"a": RawJSON('[{"x":1}]'), "b": ["mathhammer-raw-0", RawJSON("2")], "é": None}
    assert json.loads(json_text(value)) == {"a": [{"x": 1}], "b": ["mathhammer-raw-0", 2], "é": None}
    plain = {"k": [1, {"z": "⚔"}], "n": 1.5}
    assert json_text(plain) == _compact(plain)
    assert json_text(plain, indent=2) == json.dumps(plain, indent=2, ensure_ascii=False)


def test_the_command_line_ndjson_has_the_json_documents_keys_in_order() -> None:
    runner = CliRunner()
    as_json = runner.invoke(app, [*MC, "-f", "json"], env=ENV)
    as_ndjson = runner.invoke(app, [*MC, "-f", "ndjson"], env=ENV)
    assert as_json.exit_code == 0 and as_ndjson.exit_code == 0
    lines = as_ndjson.stdout.splitlines()
    assert len(lines) == 1
    doc, line = json.loads(as_json.stdout), json.loads(lines[0])
    assert list(line) == list(doc) and line["schema"] == "mathhammer.result/1"


# --- CSV -------------------------------------------------------------------------------------

def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    """The dotted paths of a document's values as result_columns flattens it: objects opened,
    lists and the open-keyed objects (``stages``, a modifier's ``parts``) kept whole."""
    if isinstance(value, dict) and path not in ("stages",) and not path.endswith(".parts") and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{path}.{k}" if path else k))
        return out
    return {path: value}


@pytest.mark.parametrize("name", ["exact", "capped", "both", "unit", "hazardous"])
def test_the_csv_columns_hold_every_value_of_the_document(results: dict[str, DamageResult], name: str) -> None:
    columns = result_columns()
    assert len(set(columns)) == len(columns)
    doc = document(results[name])
    # a null object (``hazardous`` of a weapon without Hazardous) is its columns all empty
    missing = [path for path, value in _leaves(doc).items() if path not in columns
               and not (value is None and any(c.startswith(path + ".") for c in columns))]
    assert not missing
    # and no column stops short of a leaf (a column naming an object would hold JSON text)
    for column in columns:
        value: Any = doc
        for part in column.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        assert not (isinstance(value, dict) and value and column != "stages" and not column.endswith(".parts"))


def test_stat_columns_follow_the_stat_block(results: dict[str, DamageResult]) -> None:
    block = results["capped"].stages["damage_before_fnp"].to_dict()
    assert "capped_at" in block
    assert [c.split(".", 1)[1] for c in stat_columns("damage")] == list(block)
    assert set(stat_columns("monte_carlo.damage")) < set(result_columns())


def _csv_rows(text: str) -> list[list[str]]:
    limit = csv.field_size_limit(2**31 - 1)
    try:
        return list(csv.reader(io.StringIO(text, newline="")))
    finally:
        csv.field_size_limit(limit)


@pytest.mark.parametrize("name", ["exact", "capped", "both", "unit", "hazardous"])
def test_the_csv_row_is_the_document_flattened(results: dict[str, DamageResult], name: str) -> None:
    out = io.StringIO()
    with open_records(OutputFormat.CSV, out, schema=SCHEMA, columns=result_columns()) as writer:
        writer.write(record(results[name]))
    header, row = _csv_rows(out.getvalue())
    assert header == list(result_columns())
    doc = document(results[name])
    cells = dict(zip(header, row, strict=True))
    # independent reference: each cell from the complete document, as the docs describe
    for column in header:
        value: Any = doc
        for part in column.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        expected = "" if value is None else value if isinstance(value, str) else _compact(value)
        assert cells[column] == expected, column
    assert float(cells["damage.mean"]) == results[name].damage.mean()
    assert json.loads(cells["damage.distribution"]) == doc["damage"]["distribution"]


def test_flatten_rules() -> None:
    rec = {"a": {"b": 1.5, "c": None, "d": True, "e": [1, "x"]}, "s": "text, \"quoted\"", "f": False, "n": 0}
    assert flatten(rec, ["a.b", "a.c", "a.d", "a.e", "s", "f", "n", "missing", "a.b.c", "a"]) == [
        "1.5", "", "true", '[1,"x"]', 'text, "quoted"', "false", "0", "", "", '{"b":1.5,"c":null,"d":true,"e":[1,"x"]}']


@given(st.lists(st.lists(st.text(), min_size=1, max_size=4), min_size=1, max_size=4))
def test_csv_fields_read_back_as_written(rows: list[list[str]]) -> None:
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    columns = [f"c{i}" for i in range(width)]
    out = io.StringIO()
    with RecordWriter(OutputFormat.CSV, out, schema="t/1", writer={}, columns=columns) as writer:
        for r in rows:
            writer.write(dict(zip(columns, r, strict=True)))
    expected = io.StringIO()
    csv.writer(expected, lineterminator="\n").writerows([columns, *rows])
    assert _csv_rows(out.getvalue()) == _csv_rows(expected.getvalue()) == [columns, *rows]


def test_csv_field_quotes_like_the_csv_module() -> None:
    for cell in ["plain", "a,b", 'say "hi"', "two\nlines", "", " spaced ", "é⚔"]:
        expected = io.StringIO()
        csv.writer(expected, lineterminator="\n").writerow([cell, "x"])
        assert csv_field(cell) + ",x\n" == expected.getvalue()


def test_a_csv_with_no_record_is_its_header_and_json_is_an_empty_document() -> None:
    out = io.StringIO()
    with open_records(OutputFormat.CSV, out, schema=SCHEMA, columns=("a", "b.c")):
        pass
    assert out.getvalue() == "a,b.c\n"
    out = io.StringIO()
    with open_records(OutputFormat.JSON, out, schema="mathhammer.compare/1"):
        pass
    assert json.loads(out.getvalue()) == {"schema": "mathhammer.compare/1", "writer": WRITER, "records": []}


@pytest.mark.parametrize("spool", [1 << 20, 64])
def test_the_json_document_is_json_dumps_of_the_records(monkeypatch: pytest.MonkeyPatch, spool: int) -> None:
    """Records kept as text (in memory, or in a temporary file past the spool size: 64 characters
    here) make the very document ``json.dumps(indent=2)`` makes of them all; a RawJSON is
    spliced in as its text, so that document reads back the same."""
    monkeypatch.setattr(stream, "_SPOOL_BYTES", spool)
    records = [{"name": 'Café ⚔ "Squad"\nline', "n": i, "nested": {"list": [1, 2.5, None, True], "empty": {}},
                "rows": [], "text": "a\\nb"} for i in range(5)]
    out = io.StringIO()
    with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={"name": "w"}) as writer:
        for rec in records:
            writer.write(rec)
    doc = {"schema": "t/1", "writer": {"name": "w"}, "records": records}
    assert out.getvalue() == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    out = io.StringIO()
    with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer:
        for rec in records:
            writer.write({**rec, "rows": RawJSON('[{"value":0,"p":1.0}]')})
    assert json.loads(out.getvalue())["records"] == [{**rec, "rows": [{"value": 0, "p": 1.0}]} for rec in records]


def test_a_record_that_cannot_be_written_leaves_the_json_document_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record json.dumps refuses (first or later) changes nothing; close() writes once; an
    error inside the block writes no document and deletes the temporary file; a temporary file
    that cannot be written is one error naming TMPDIR."""
    from mathhammer.errors import InputError

    for bad_first in (True, False):
        out = io.StringIO()
        with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer:
            if not bad_first:
                writer.write({"n": 1})
            with pytest.raises(TypeError):
                writer.write({"n": object()})
            writer.write({"n": 2})
        records = [{"n": 1}, {"n": 2}] if not bad_first else [{"n": 2}]
        assert json.loads(out.getvalue())["records"] == records and writer.count == len(records)
        writer.close()
        assert json.loads(out.getvalue())["records"] == records  # a second close writes nothing
    out = io.StringIO()
    with pytest.raises(RuntimeError), RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer:
        writer.write({"n": 1})
        spool = writer._spool
        raise RuntimeError("stop")
    assert out.getvalue() == "" and spool is not None and spool.closed

    class Full(io.StringIO):
        def write(self, text: str, /) -> int:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr("tempfile.SpooledTemporaryFile", lambda **kw: Full())
    writer = RecordWriter(OutputFormat.JSON, io.StringIO(), schema="t/1", writer={})
    with pytest.raises(InputError, match="No space left on device") as e:
        writer.write({"n": 1})
    assert e.value.where == "TMPDIR" and writer._spool is None


class _Made:
    """A JSONPieces function that notes, as it makes each piece, how much of the record the
    writer's output held already; and stops with KeyboardInterrupt after ``stop`` pieces."""

    def __init__(self, held: Any, stop: int | None = None) -> None:
        self.held, self.stop, self.seen = held, stop, []

    def __call__(self) -> Any:
        yield "["
        for i in range(3):
            if i == self.stop:
                raise KeyboardInterrupt
            self.seen.append(self.held())
            yield ("," if i else "") + f'{{"block":{i}}}'
        yield "]"


def test_json_pieces_from_a_function_are_made_each_time_they_are_read() -> None:
    calls = []

    def make() -> Any:
        calls.append(1)
        yield from ("[1", ",2", "]")

    pieces = stream.JSONPieces(make)
    assert calls == [] and repr(pieces) == "JSONPieces(made when read)"
    assert str(pieces) == "[1,2]" and str(pieces) == "[1,2]" and len(calls) == 2
    assert json_text({"d": pieces}) == '{"d":[1,2]}' and flatten({"d": pieces}, ["d"]) == ["[1,2]"]
    assert repr(stream.JSONPieces(["[", "]"])) == "JSONPieces(2 pieces)"


def test_rows_pieces_formats_a_block_only_when_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's rows are formatted as they are written, so a cell's tens of megabytes
    of text are never held: making the pieces reads no row; each reading reads them all."""
    read = []
    real = Distribution.iter_rows

    def iter_rows(self: Distribution, block: int = 4096) -> Any:
        read.append(block)
        return real(self, block)

    monkeypatch.setattr(Distribution, "iter_rows", iter_rows)
    dist = Distribution.from_counts(np.array([3, 0, 5, 1], dtype=np.int64))
    pieces = rows_pieces(dist, block=2)
    assert read == []
    assert str(pieces) == rows_json(dist) and read == [2, 4096]  # (rows_json reads its own)
    assert str(pieces) == rows_json(dist, block=2)


@pytest.mark.parametrize("spool", [1 << 20, 16])
def test_a_json_record_goes_to_the_document_as_its_pieces_are_made(monkeypatch: pytest.MonkeyPatch,
                                                                    spool: int) -> None:
    """Each piece of a record is in the records' file (in memory, or a temporary file past 16
    characters) before the next is made: never the whole text in memory. A record stopped
    part-way (Ctrl-C while its rows are made), first or later, is cut off again, and the records
    after it make the same document as if it had never been."""
    monkeypatch.setattr(stream, "_SPOOL_BYTES", spool)
    out = io.StringIO()
    with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer:
        made = _Made(lambda: writer._spool.tell() if writer._spool is not None else -1)
        writer.write({"n": 1, "rows": stream.JSONPieces(made)})
        assert made.seen[0] > 0 and made.seen[1] > made.seen[0] and made.seen[2] > made.seen[1]
    assert json.loads(out.getvalue())["records"] == [{"n": 1, "rows": [{"block": 0}, {"block": 1}, {"block": 2}]}]
    for before in ([], [{"n": 0}]):
        out = io.StringIO()
        with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer:
            for rec in before:
                writer.write(rec)
            with pytest.raises(KeyboardInterrupt):
                writer.write({"n": 1, "rows": stream.JSONPieces(_Made(lambda: None, stop=2))})
            writer.write({"n": 2})
        assert out.getvalue() == json.dumps({"schema": "t/1", "writer": {}, "records": [*before, {"n": 2}]},
                                            indent=2) + "\n"
        assert writer.count == len(before) + 1
    out = io.StringIO()  # the only record, cut off: the empty document
    with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer, pytest.raises(KeyboardInterrupt):
        writer.write({"n": 1, "rows": stream.JSONPieces(_Made(lambda: None, stop=1))})
    assert out.getvalue() == json.dumps({"schema": "t/1", "writer": {}, "records": []}, indent=2) + "\n"


def test_an_ndjson_line_is_made_whole_before_any_of_it_is_written() -> None:
    """An NDJSON line is formatted whole first (every line on the stream a whole record, and a
    Ctrl-C waits only for the writing): a record whose pieces fail part-way, or that
    json.dumps refuses, writes nothing."""
    out = io.StringIO()
    with RecordWriter(OutputFormat.NDJSON, out, schema="t/1", writer={}) as writer:
        writer.write({"n": 0})
        made = _Made(lambda: len(out.getvalue()))
        writer.write({"n": 1, "rows": stream.JSONPieces(made)})
        with pytest.raises(KeyboardInterrupt):
            writer.write({"n": 2, "rows": stream.JSONPieces(_Made(lambda: None, stop=2))})
        with pytest.raises(TypeError):
            writer.write({"n": object(), "rows": stream.JSONPieces(_Made(lambda: None))})
    assert made.seen == [len('{"n":0}\n')] * 3
    assert out.getvalue() == '{"n":0}\n{"n":1,"rows":[{"block":0},{"block":1},{"block":2}]}\n'


def test_an_error_making_a_json_record_s_pieces_is_not_the_temporary_file_s() -> None:
    """An OSError raised while a record's pieces are made (a JSONPieces function reading a
    file, say) is that error: the record is cut off and the document kept, not reported as
    TMPDIR failing and every record dropped."""

    def failing() -> Any:
        yield "[1"
        raise OSError(5, "the pieces' own input failed")

    out = io.StringIO()
    with RecordWriter(OutputFormat.JSON, out, schema="t/1", writer={}) as writer:
        writer.write({"n": 0})
        with pytest.raises(OSError, match="the pieces' own input failed") as e:
            writer.write({"n": 1, "rows": stream.JSONPieces(failing)})
        assert not isinstance(e.value, MathhammerError)
    assert out.getvalue() == json.dumps({"schema": "t/1", "writer": {}, "records": [{"n": 0}]}, indent=2) + "\n"


def test_json_text_leaves_no_cycle_holding_the_raw_text() -> None:
    """The rows (a RawJSON of megabytes) are free when json_text returns, not kept by a
    reference cycle until a garbage collection (which the command line makes rare)."""
    import gc

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        json_text({"a": [RawJSON("[1,2]")], "b": {"c": RawJSON("[3]")}}, indent=2)
        json_text({"a": RawJSON("[4]")})
        gc.collect()
        assert not [o for o in gc.garbage if isinstance(o, RawJSON)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


# --- streams that cannot encode, or cannot be written ----------------------------------------

def _ascii_stream() -> tuple[io.TextIOWrapper, io.BytesIO]:
    data = io.BytesIO()
    return io.TextIOWrapper(data, encoding="ascii", write_through=True), data


def test_an_ascii_stream_gets_escapes_never_changed_data() -> None:
    rec = {"name": 'Café ⚔ "Squad"', "n": 1}
    out, data = _ascii_stream()
    with RecordWriter(OutputFormat.NDJSON, out, schema="t/1", writer={}) as writer:
        writer.write(rec)
    assert json.loads(data.getvalue().decode("ascii")) == rec and b"\\u2694" in data.getvalue()
    out, data = _ascii_stream()
    with RecordWriter(OutputFormat.CSV, out, schema="t/1", writer={}, columns=("name", "n")) as writer:
        writer.write(rec)
    assert data.getvalue().decode("ascii") == 'name,n\n"Caf\\xe9 \\u2694 ""Squad""",1\n'


def _proc(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "mathhammer", *args], env={**os.environ, "NO_COLOR": "1", **(env or {})},
                          timeout=300, check=False, **kw)


@pytest.mark.parametrize("fmt", ["ndjson", "csv"])
def test_a_full_disk_is_one_line_and_exit_1(fmt: str) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        r = _proc(*MC, "-f", fmt, stdout=full, stderr=subprocess.PIPE)
    assert r.returncode == 1
    assert r.stderr.decode().strip().splitlines() == ["Error: stdout: cannot write the output: No space left on device"]


@pytest.mark.parametrize("fmt", ["ndjson", "csv"])
def test_a_reader_gone_is_a_quiet_exit_1(fmt: str) -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        r = _proc(*MC, "-f", fmt, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert r.returncode == 1 and r.stderr == b""


_CAFE = """\
schema: 1
units:
  - name: "Café ⚔ Squad"
    models:
      - {name: "Trooper", count: 5, M: 6, T: 4, Sv: 3, W: 2, Ld: 6, OC: 1}
    weapons:
      - {name: "Café ⚔ gun", range: 24, A: "2", BS: 3, S: 8, AP: -3, D: "2", abilities: []}
"""


@pytest.mark.parametrize("fmt", ["ndjson", "csv"])
def test_the_command_line_on_an_ascii_stdout(fmt: str, tmp_path: Path) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "cafe.yaml").write_text(_CAFE, encoding="utf-8")
    args = ["shoot", "café ⚔ gun", "-t", "T4 SV3+ W2 MODELS5", "--exact", "--profiles", str(folder), "-f", fmt]
    ascii_out = _proc(*args, capture_output=True, env={"PYTHONIOENCODING": "ascii"})
    utf8_out = _proc(*args, capture_output=True, env={"PYTHONIOENCODING": "utf-8"})
    assert ascii_out.returncode == 0 and utf8_out.returncode == 0, ascii_out.stderr
    text = ascii_out.stdout.decode("ascii")
    if fmt == "ndjson":
        strip = lambda d: {k: v for k, v in d.items() if k != "timing"}  # noqa: E731
        assert strip(json.loads(text)) == strip(json.loads(utf8_out.stdout.decode("utf-8")))
    else:
        assert "Caf\\xe9 \\u2694 gun" in text and "Café ⚔ gun" in utf8_out.stdout.decode("utf-8")


# --- Ctrl-C mid-stream -----------------------------------------------------------------------

#: Writes 200 KB records to stdout through a RecordWriter until interrupted, with the console
#: script's Ctrl-C handler (exit 130 at once). argv: format, "guarded" | "thread" (a second
#: thread that may be the one the signal is delivered to) | "unguarded" (the control: no hold).
_CHILD = """\
import contextlib, sys, threading, time
from mathhammer.cli import _take_over_ctrl_c
from mathhammer.render import OutputFormat, stream
_take_over_ctrl_c()
fmt, mode = sys.argv[1], sys.argv[2]
if mode == "thread":
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
if mode == "unguarded":
    stream.whole_record = contextlib.nullcontext
payload = "x" * 200_000
columns = ("row", "label", "damage.mean", "payload")
with stream.open_records(OutputFormat(fmt), sys.stdout, schema="test/1", columns=columns) as writer:
    for i in range(10**6):
        writer.write({"row": i, "label": f"row {i}, \\"quoted\\"", "damage": {"mean": i / 7}, "payload": [payload, i]})
"""


def _interrupt(fmt: str, mode: str) -> tuple[int, bytes]:
    """Start the writer, stop reading once a few records are out (so that it blocks in the
    middle of writing one), send SIGINT, then read everything it wrote."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, fmt, mode], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, preexec_fn=sigint_as_ctrl_c)
    assert child.stdout is not None
    out = b""
    while out.count(b"\n") < 4:
        chunk = child.stdout.read1(1 << 16)
        assert chunk, "the writer stopped early"
        out += chunk
    time.sleep(1.0)  # the writer fills the pipe and blocks inside the next record's write
    child.send_signal(signal.SIGINT)
    rest, _ = child.communicate(timeout=120)
    return child.returncode, out + rest


def _whole_records(fmt: str, data: bytes) -> bool:
    """Whether ``data`` is whole records only: every line complete and parsing."""
    if not data.endswith(b"\n"):
        return False
    text = data.decode("utf-8")
    if fmt == "ndjson":
        try:
            records = [json.loads(line) for line in text.splitlines()]
        except json.JSONDecodeError:
            return False
        return all(r["payload"][1] == r["row"] for r in records)
    rows = _csv_rows(text)
    if rows[0] != ["row", "label", "damage.mean", "payload"]:
        return False
    try:
        return all(len(r) == 4 and json.loads(r[3])[1] == int(r[0]) for r in rows[1:])
    except (json.JSONDecodeError, ValueError):
        return False


@pytest.mark.parametrize("mode", ["guarded", "thread"])
@pytest.mark.parametrize("fmt", ["ndjson", "csv"])
def test_ctrl_c_mid_stream_leaves_whole_records(fmt: str, mode: str) -> None:
    code, data = _interrupt(fmt, mode)
    assert code == 130
    assert _whole_records(fmt, data)
    assert data.count(b"\n") >= 4


@pytest.mark.parametrize("fmt", ["ndjson", "csv"])
def test_without_the_hold_ctrl_c_cuts_a_record(fmt: str) -> None:
    # the control: the same writer with whole_record() disabled leaves half a record, so the
    # test above would see one if the hold did not work
    code, data = _interrupt(fmt, "unguarded")
    assert code == 130
    assert not _whole_records(fmt, data)


def test_whole_record_defers_python_s_own_keyboard_interrupt() -> None:
    # a library user (Python's default handler): the KeyboardInterrupt comes after the block
    from mathhammer.render.stream import whole_record

    # Python's handler, whatever this process started with (a shell's background job starts with
    # SIGINT ignored, and Python then installs none: this test failed there)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        done = []
        with pytest.raises(KeyboardInterrupt), contextlib.ExitStack():
            with whole_record():
                signal.raise_signal(signal.SIGINT)
                done.append("written")
        assert done == ["written"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_whole_record_leaves_an_ignored_sigint_ignored() -> None:
    """With SIGINT ignored (a background job), the block neither installs a handler nor raises."""
    from mathhammer.render.stream import whole_record

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        done = []
        with whole_record():
            signal.raise_signal(signal.SIGINT)
            done.append("written")
        assert done == ["written"] and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
