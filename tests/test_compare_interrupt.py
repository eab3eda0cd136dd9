"""Ctrl-C during compare (issue 10 item 6): exit 130, and what was streamed so far is whole
records only: every NDJSON line parses, every CSV line has the header's fields."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .child_signals import sigint_as_ctrl_c

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")


def _rows(path: Path, n: int) -> Path:
    lines = ["name,weapon"] + [f"row {i},{1 + i % 3}x A{2 + i % 9} BS3+ S{4 + i % 8} AP-{i % 4} D{1 + i % 3}"
                               for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("fmt", "method"), [("ndjson", "monte-carlo"), ("csv", "monte-carlo"), ("ndjson", "exact")])
def test_ctrl_c_leaves_whole_records(tmp_path: Path, fmt: str, method: str) -> None:
    file = _rows(tmp_path / "rows.csv", 3000)
    args = [sys.executable, "-m", "mathhammer", "compare", str(file), "-t", "knight", "-t", "intercessors",
            "--method", method, "--trials", "20000", "--seed", "1", "-f", fmt]
    # unbuffered and binary: readline takes exactly one line, and communicate() (which reads
    # the pipe itself) gets every byte after it (a buffered reader would keep some back)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                            env={**os.environ, "NO_COLOR": "1"}, preexec_fn=sigint_as_ctrl_c)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the run is under way and streaming
    lines = [first] + ([proc.stdout.readline()] if fmt == "csv" else [])
    proc.send_signal(signal.SIGINT)
    rest, err_bytes = proc.communicate(timeout=120)
    err = err_bytes.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    text = (b"".join(lines) + rest).decode("utf-8")
    assert text.endswith("\n")
    if fmt == "ndjson":
        records = [json.loads(line) for line in text.splitlines()]
        assert records and all(r["schema"] == "mathhammer.compare/1" for r in records)
        assert len(records) < 6000  # it was stopped
    else:
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows)
        assert len(rows) - 1 < 6000
