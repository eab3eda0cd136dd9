"""Cold and warm first run of the command line: CPU time and peak memory, in a subprocess.

Runs ``python3 -m mathhammer shoot railgun --target knight`` with a fresh, empty
``NUMBA_CACHE_DIR`` (the kernels compile: a new user's first run), then again with that cache
(warm: the kernel's machine code comes from the native cache the cold run wrote under it,
mathhammer/kernel/native.py, without importing numba). CPU time is the child's user + system
time (resource.getrusage(RUSAGE_CHILDREN)), so a busy machine inflates the wall time but not
this figure; peak RSS is the child's ru_maxrss.
Targets (issue 8): cold <= 15 CPU-s and <= 400 MB; warm <= 0.45 CPU-s.

The runs measure what a user's machine does: ``PYTHONDONTWRITEBYTECODE`` is dropped from the
children's environment (an installed package's modules run from bytecode caches; without them
every warm run compiles ~50 modules from source, ~0.2 s), so the cold run also writes them.

Run: python3 benchmarks/bench_cold.py [--repeats R] [--warm-repeats W]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMAND = [sys.executable, "-m", "mathhammer", "shoot", "railgun", "--target", "knight"]


def measure(env: dict[str, str]) -> tuple[float, float, float]:
    """(CPU seconds, peak RSS in MB, wall seconds) of one run of COMMAND in a subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(COMMAND, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far (kB on Linux): each run is
    # measured in a fresh process of this script's, so run this script once per figure wanted.
    return cpu, after.ru_maxrss / 1024, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1, help="cold runs (each with a new empty cache)")
    ap.add_argument("--warm-repeats", type=int, default=5, help="warm runs after each cold run")
    ap.add_argument("--child", choices=["cold", "warm"], help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # one measurement in a fresh process, so ru_maxrss is this run's alone
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["NUMBA_CACHE_DIR"] = args.cache
        cpu, rss, wall = measure(env)
        print(f"{cpu:.3f} {rss:.1f} {wall:.3f}")
        return
    rows: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": []}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="mathhammer-bench-cold-") as cache:
            for kind in ("cold", *["warm"] * args.warm_repeats):
                out = subprocess.run([sys.executable, __file__, "--child", kind, "--cache", cache],
                                     capture_output=True, text=True, check=True).stdout.split()
                rows[kind].append((float(out[0]), float(out[1]), float(out[2])))
    print(f"{' '.join(COMMAND[1:])}, {args.repeats} cold run(s), {args.warm_repeats} warm after each; median")
    for kind, runs in rows.items():
        cpu = statistics.median(r[0] for r in runs)
        rss = statistics.median(r[1] for r in runs)
        wall = statistics.median(r[2] for r in runs)
        spread = f" (CPU {min(r[0] for r in runs):.2f}-{max(r[0] for r in runs):.2f} s)" if len(runs) > 1 else ""
        print(f"  {kind}: {cpu:6.2f} CPU-s  {rss:7.1f} MB peak RSS  {wall:6.2f} s wall{spread}")


if __name__ == "__main__":
    main()
