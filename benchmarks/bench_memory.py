"""Peak memory of the largest requests within the documented limits, each in a fresh process.

The attack ``"A 2D6 BS3+ S4 AP0 D D6+993" -n 1000`` at 1,000 models of W1000: its damage
distribution has hundreds of thousands of rows, the case that once took gigabytes for
``sweep -f json`` (docs/limits.md, "Memory and time"). Each figure is the child's peak RSS
(resource.getrusage(RUSAGE_CHILDREN).ru_maxrss, read in a fresh process of this script's so
that no earlier child counts: the largest of the process and its worker processes) and its
ratio to the 200 MB aim of issue 8; the sweeps of 4 and 40 cells show whether memory grows
with the number of cells (it should not).

Run: python3 benchmarks/bench_memory.py
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

ATTACK = ["A 2D6 BS3+ S4 AP0 D D6+993", "-n", "1000"]
BIG = ["--models", "1000", "-W", "1000", "--trials", "1000", "--seed", "1"]
REQUESTS = {
    "shoot -f json, 1e5 trials": ["shoot", *ATTACK, "-t", "T4 SV3+ W1000 MODELS1000", "--trials", "100000",
                                  "-f", "json"],
    "sweep -f json, 4 cells": ["sweep", *ATTACK, *BIG, "-T", "1-2", "-S", "2-3", "-f", "json", "--jobs", "1"],
    "sweep -f json, 40 cells": ["sweep", *ATTACK, *BIG, "-T", "1-20", "-S", "2-3", "-f", "json", "--jobs", "1"],
    "sweep -f ndjson, 40 cells": ["sweep", *ATTACK, *BIG, "-T", "1-20", "-S", "2-3", "-f", "ndjson", "--jobs", "1"],
    "sweep table, 84 cells, 2 jobs": ["sweep", *ATTACK, *BIG],
    # worker processes, 2.1 GB of JSON (kept in a temporary file in TMPDIR until the end): ~1.5 minutes
    "sweep -f json, 120 cells, 2 jobs": ["sweep", *ATTACK, *BIG, "-T", "1-20", "-S", "2-7", "-f", "json",
                                         "--jobs", "2"],
}
AIM_MB = 200


def child(args: list[str]) -> None:
    """Run one request (its output thrown away) and print its peak RSS in MB and wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mathhammer", *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {proc.stderr.strip()}")
    print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f} {wall:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child)
        return
    print(f"peak RSS of one request in a fresh process (aim: {AIM_MB} MB)")
    for label, request in REQUESTS.items():
        out = subprocess.run([sys.executable, __file__, "--child", *request], capture_output=True, text=True,
                             check=True).stdout.split()
        rss, wall = float(out[0]), float(out[1])
        print(f"  {label:32s} {rss:7.1f} MB  {rss / AIM_MB:4.2f}x the aim  {wall:6.2f} s")


if __name__ == "__main__":
    main()
