"""End-to-end figures of the command line, measured in fresh processes.

- `mathhammer shoot railgun --target knight` on a warm kernel cache: CPU time (user + system,
  resource.getrusage of the child, so a busy machine inflates it less than wall time) and wall
  time, median with the quartiles as the noise; the same with -f json, --exact and --help;
- whether `--help` imports numba (it must not);
- peak memory (max RSS) of a 1e8-trial run.

Issue 8's goal for warm start-up: `shoot railgun --target knight` <= 0.45 CPU-seconds.

Run: python3 benchmarks/bench_cli.py [--repeats R] [--quick]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The installed console script next to this Python (what a user runs), else python -m.
_SCRIPT = Path(sys.executable).with_name("mathhammer")
CMD = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "mathhammer"]


def _spread(values: list[float]) -> str:
    """``median (q1-q3)`` of ``values``."""
    v = sorted(values)
    return f"{statistics.median(v):.3f} ({v[len(v) // 4]:.3f}-{v[(3 * len(v)) // 4]:.3f})"


def timed(args: list[str], repeats: int) -> str:
    """CPU and wall seconds of ``repeats`` runs: median (quartiles)."""
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(CMD + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return f"CPU {_spread(cpu)} s, wall {_spread(wall)} s"


def peak_rss_mb(args: list[str]) -> float:
    code = ("import resource, subprocess, sys\n"
            f"subprocess.run({CMD + args!r}, check=True, stdout=subprocess.DEVNULL)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return int(out.stdout.strip()) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="start-up figures only (no 1e8-trial runs)")
    args = ap.parse_args()
    n = args.repeats
    shoot = ["shoot", "railgun", "--target", "knight", "--seed", "1"]
    subprocess.run(CMD + shoot, check=True, stdout=subprocess.DEVNULL)  # warm the kernel cache
    print(f"median (quartiles) of {n} runs each")
    print(f"shoot railgun --target knight (table): {timed(shoot, n)}")
    print(f"shoot ... -f json:                     {timed(shoot + ['-f', 'json'], n)}")
    print(f"shoot ... --exact:                     {timed(shoot + ['--exact'], n)}")
    print(f"shoot ... --exact -f json:             {timed(shoot + ['--exact', '-f', 'json'], n)}")
    print(f"--help:                                {timed(['--help'], n)}")
    probe = ("import sys\nfrom typer.testing import CliRunner\nfrom mathhammer.cli import app\n"
             "CliRunner().invoke(app, ['--help']); CliRunner().invoke(app, ['shoot', '--help'])\n"
             "print('numba' in sys.modules)")
    imported = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.strip()
    print(f"--help imports numba:                  {imported}")
    if args.quick:
        return
    t = time.perf_counter()
    mb = peak_rss_mb(shoot + ["--trials", "100000000", "-f", "json", "--models", "1"])
    print(f"peak memory, 1e8 trials:               {mb:.0f} MB ({time.perf_counter() - t:.1f} s)")
    ref = ["shoot", "A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "--target", "T4 SV3+ W2 MODELS10",
           "--reroll-hits", "ones", "--trials", "100000000", "-f", "json"]
    t = time.perf_counter()
    mb = peak_rss_mb(ref)
    print(f"peak memory, 1e8 trials, reference weapon vs 10xW2: {mb:.0f} MB ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
