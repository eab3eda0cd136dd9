"""End-to-end figures of the command line, measured in fresh processes.

- `mathhammer shoot railgun --target knight` wall time on a warm kernel cache (median), and with --exact;
- `mathhammer --help` wall time, and whether it imports numba (it must not);
- peak memory (max RSS) of a 1e8-trial run.

Run: python3 benchmarks/bench_cli.py [--repeats R]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The installed console script next to this Python (what a user runs), else python -m.
_SCRIPT = Path(sys.executable).with_name("mathhammer")
CMD = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "mathhammer"]


def wall(args: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(CMD + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def peak_rss_mb(args: list[str]) -> float:
    code = ("import resource, subprocess, sys\n"
            f"subprocess.run({CMD + args!r}, check=True, stdout=subprocess.DEVNULL)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return int(out.stdout.strip()) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    shoot = ["shoot", "railgun", "--target", "knight", "--seed", "1"]
    subprocess.run(CMD + shoot, check=True, stdout=subprocess.DEVNULL)  # warm the kernel cache
    print(f"shoot railgun --target knight (table): {wall(shoot, args.repeats):.3f} s median of {args.repeats}")
    print(f"shoot railgun --target knight -f json: {wall(shoot + ['-f', 'json'], args.repeats):.3f} s")
    print(f"shoot ... --exact:                     {wall(shoot + ['--exact'], args.repeats):.3f} s")
    print(f"shoot ... --exact -f json:             {wall(shoot + ['--exact', '-f', 'json'], args.repeats):.3f} s")
    print(f"--help:                                {wall(['--help'], args.repeats):.3f} s")
    probe = ("import sys\nfrom typer.testing import CliRunner\nfrom mathhammer.cli import app\n"
             "CliRunner().invoke(app, ['--help']); CliRunner().invoke(app, ['shoot', '--help'])\n"
             "print('numba' in sys.modules)")
    imported = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.strip()
    print(f"--help imports numba:                  {imported}")
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
