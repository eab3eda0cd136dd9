"""End-to-end figures of ``mathhammer sweep``, in fresh processes (warm kernel cache).

- the default 14 x 6 sweep (T1-T14 x Sv2+ to no save) with ``--exact``: table and ``-f json``,
  on every core and with ``--jobs 1``; issue 10's goal: <= 1 s end to end; also with Python's
  bytecode cached (in a temporary folder), as an installed copy has it: with
  PYTHONDONTWRITEBYTECODE=1 every process compiles the package's sources again;
- the same sweep by Monte Carlo at 1e5 trials per cell (the default);
- in one process: planning (building 84 attacks) and running the cells, serial vs parallel.

CPU time is that of the child process and its workers (resource.getrusage), wall time what a
user waits; median (quartiles) of the repeats, the machine being shared.

Run: python3 benchmarks/bench_sweep.py [--repeats R]
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
from pathlib import Path

_SCRIPT = Path(sys.executable).with_name("mathhammer")
#: The command line as a user runs it, when the root application registers ``sweep``; else
#: the same command on an application of its own, started the way the console script starts.
_STANDALONE = (
    "import sys, typer\n"
    "from mathhammer.cli import _startup\n"
    "from mathhammer.cli._command import Command, Group\n"
    "from mathhammer.cli.sweep import sweep\n"
    "_startup.install()\n"
    "app = typer.Typer(cls=Group, rich_markup_mode=None)\n"
    "app.callback()(lambda: None)\n"
    "app.command('sweep', cls=Command)(sweep)\n"
    "app()\n"
)


def _command() -> list[str]:
    base = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "mathhammer"]
    probe = subprocess.run(base + ["sweep", "--help"], capture_output=True, text=True)
    if probe.returncode == 0:
        return base + ["sweep"]
    return [sys.executable, "-c", _STANDALONE, "sweep"]


def _spread(values: list[float]) -> str:
    v = sorted(values)
    return f"{statistics.median(v):.3f} ({v[len(v) // 4]:.3f}-{v[(3 * len(v)) // 4]:.3f})"


def timed(cmd: list[str], args: list[str], repeats: int, env: dict[str, str] | None = None) -> str:
    """CPU and wall seconds of ``repeats`` runs: median (quartiles)."""
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wall.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return f"wall {_spread(wall)} s, CPU {_spread(cpu)} s"


def in_process(repeats: int) -> None:
    """Planning and running the 84 cells inside one warm process."""
    from mathhammer.api import library
    from mathhammer.sweep import iter_cells, plan_sweep

    lib = library(use_env=False)
    list(iter_cells(plan_sweep("railgun", method="exact", lib=lib), jobs=1))  # warm imports and caches
    for method, trials in (("exact", 0), ("monte-carlo", 100_000)):
        plans, runs = [], {1: [], 2: []}
        for _ in range(repeats):
            t = time.perf_counter()
            plan = plan_sweep("railgun", method=method, trials=max(1, trials), seed=1, lib=lib)
            plans.append(time.perf_counter() - t)
            for jobs in (1, 2):
                t = time.perf_counter()
                list(iter_cells(plan, jobs=jobs))
                runs[jobs].append(time.perf_counter() - t)
        print(f"in process, {method:<11}: plan {_spread(plans)} s; cells jobs=1 {_spread(runs[1])} s, "
              f"jobs=2 {_spread(runs[2])} s (ratio {statistics.median(runs[1]) / statistics.median(runs[2]):.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    n = args.repeats
    cmd = _command()
    exact = ["railgun", "--exact"]
    subprocess.run(cmd + ["railgun", "-T", "4", "-S", "3", "--seed", "1"], check=True,
                   stdout=subprocess.DEVNULL)  # warm the kernel cache
    print(f"command: {'mathhammer sweep' if cmd[0] != sys.executable or '-m' in cmd else 'standalone sweep app'}")
    print(f"median (quartiles) of {n} runs each; 14 x 6 = 84 cells")
    print(f"sweep railgun --exact (table):            {timed(cmd, exact, n)}   goal <= 1 s")
    with tempfile.TemporaryDirectory() as cache:
        # what an installed copy has: compiled bytecode (this environment may forbid writing it)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        subprocess.run(cmd + exact, check=True, stdout=subprocess.DEVNULL, env=env)
        print(f"  the same with bytecode cached:          {timed(cmd, exact, n, env)}")
    print(f"sweep railgun --exact -f json:            {timed(cmd, exact + ['-f', 'json'], n)}")
    print(f"sweep railgun --exact --jobs 1:           {timed(cmd, exact + ['--jobs', '1'], n)}")
    print(f"sweep '10x intercessors/bolt rifle' --exact -W 2 ...:  "
          f"{timed(cmd, ['10x intercessors/bolt rifle', '--exact', '-W', '2', '--models', '10'], n)}")
    mc = ["railgun", "--seed", "1"]
    print(f"sweep railgun (1e5 trials/cell):          {timed(cmd, mc, max(3, n // 2))}")
    print(f"sweep railgun (1e5 trials/cell) --jobs 1: {timed(cmd, mc + ['--jobs', '1'], max(3, n // 2))}")
    in_process(max(3, n // 2))


if __name__ == "__main__":
    main()
