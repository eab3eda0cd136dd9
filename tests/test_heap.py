"""The command line gives freed heap memory back after each cell or record of ``sweep`` and
``compare`` (mathhammer/cli/_heap.py): glibc keeps much of a freed block of megabytes in its
heap otherwise, and a sweep's results and records come and go by turns."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathhammer.cli import app
from mathhammer.cli import compare as compare_cli
from mathhammer.cli import sweep as sweep_cli

glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "malloc_trim"),
                           reason="needs glibc (malloc_trim), whose heap this is for")

#: Prints the MiB of resident memory above the start: with 94 MiB of heap blocks, after freeing
#: them (a small block allocated after each stays in use: the freed ones are holes, never the
#: heap's free top, which free() would give back itself), and after release_freed_memory; then
#: what it returned.
_PROBE = """
import os
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
from mathhammer.cli._heap import release_freed_memory
base = rss()
blocks, pins = [], []
for _ in range(1500):
    blocks.append(bytearray(64 << 10))
    pins.append(bytearray(1000))
grown = rss() - base
del blocks
freed = rss() - base
given = release_freed_memory()
print(grown, freed, rss() - base, given)
"""


@glibc
def test_release_freed_memory_gives_the_heap_s_free_pages_back() -> None:
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=300)
    grown, freed, released, given = proc.stdout.split()
    assert int(grown) >= 90 and int(freed) >= 60  # glibc kept them
    assert int(released) <= 20 and given == "True"  # (the pins hold a page each)


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(module, "release_freed_memory", lambda: calls.append(1) or True)
    return calls


@pytest.mark.parametrize("fmt", ["table", "json", "ndjson"])
def test_sweep_releases_after_each_cell(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    calls = _counted(monkeypatch, sweep_cli)
    res = CliRunner().invoke(app, ["sweep", "A2 BS3+ S4 AP0 D1", "-T", "3-5", "-S", "3-4", "--exact", "-f", fmt])
    assert res.exit_code == 0, res.output
    assert len(calls) == 6


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_compare_releases_after_each_record(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("weapon\nA2 BS3+ S4 AP0 D1\nA3 BS4+ S5 AP-1 D2\n", encoding="utf-8")
    calls = _counted(monkeypatch, compare_cli)
    res = CliRunner().invoke(app, ["compare", str(rows), "-t", "T4 SV3+ W2", "-t", "T8 SV2+ W10", "--exact",
                                   "-f", fmt])
    assert res.exit_code == 0, res.output
    assert len(calls) == 4
