"""The command line's malloc setting (mathhammer/cli/_heap.py): ``sweep`` and ``compare`` keep
glibc's mmap threshold at 128 KiB, so that the blocks of megabytes their results and records
free go back to the system; the library leaves a user's process as it was.

Seen through glibc's own accounting (``mallinfo2``): once a 4 MiB block has been freed, glibc
by default serves the next 1 MiB block from its heap (no new mmapped bytes); with the threshold
kept, that block is mmapped. Each case runs in a fresh process (the setting is process-wide).
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "mallinfo2"),
    reason="needs glibc 2.33 or later (mallinfo2), whose malloc the setting is for")

#: After ``{before}``, prints how many bytes glibc mmapped for a 1 MiB block allocated once a
#: 4 MiB one was freed.
_PROBE = """
import ctypes, sys
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
{before}
big = bytearray(4 << 20)
del big
start = libc.mallinfo2().hblkhd
block = bytearray(1 << 20)
print(libc.mallinfo2().hblkhd - start)
"""


def _mmapped(before: str) -> int:
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(before=before)], capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1])


def test_by_default_glibc_keeps_a_freed_large_block_s_size_in_its_heap() -> None:
    assert _mmapped("") == 0


def test_return_large_blocks_keeps_the_threshold() -> None:
    assert _mmapped("from mathhammer.cli._heap import return_large_blocks\nassert return_large_blocks()") >= 1 << 20


@pytest.mark.parametrize("command", [
    ["sweep", "A2 BS3+ S4 AP0 D1", "-T", "4", "-S", "3", "--exact", "-f", "json"],
    ["compare", "{rows}", "-t", "T4 SV3+ W2", "--exact", "-f", "json"],
])
def test_sweep_and_compare_set_it_in_the_command_line_process(command: list[str], tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("weapon\nA2 BS3+ S4 AP0 D1\n", encoding="utf-8")
    argv = ["mathhammer", *(a.format(rows=rows) for a in command)]
    run = ("import contextlib, io, sys\nfrom mathhammer.cli.root import run\n"
           f"sys.argv = {argv!r}\n"
           "with contextlib.redirect_stdout(io.StringIO()):\n    code = run()\nassert code == 0, code")
    assert _mmapped(run) >= 1 << 20


def test_the_library_leaves_the_setting_alone() -> None:
    run = ("import mathhammer\nfrom mathhammer.sweep import run_sweep\n"
           "run_sweep('A2 BS3+ S4 AP0 D1', toughness='4', save='3', method='exact')\n"
           "mathhammer.run('A2 BS3+ S4 AP0 D1', 'T4 SV3+ W2', trials=1000, seed=1)")
    assert _mmapped(run) == 0
