"""Parsing a 2,000-point roster (issue 11: at most 0.5 s).

Times ``load_roster`` (read, parse, match, build the engine's units) on the shared samples: the
2,000-point GW-app and War Organ T'au exports matched to the built-in library (loaded once
beforehand, as a command does before it reads a roster), and the largest .rosz (its units built
from the profiles it carries). Prints the median and the worst of R runs per file, in ms of CPU.

Run: python3 benchmarks/bench_roster.py [--repeats R] [--data DIR]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from mathhammer.profiles import load_library
from mathhammer.roster import load_roster

LIMIT_S = 0.5


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = ap.parse_args()
    files = [args.data / "text-exports-40kcompactor" / n for n in ("gwapp-tau.txt", "warorgan-tau.txt",
                                                                   "newrecruit-gw-tau.txt")]
    files += sorted((args.data / "rosters-prettyscribe").glob("*.rosz"))
    files = [f for f in files if f.is_file()]
    if not files:
        raise SystemExit(f"no roster samples under {args.data}")
    lib = load_library()
    print(f"{'file':36} {'units':>5} {'median ms':>10} {'worst ms':>9}  (limit {LIMIT_S * 1000:.0f} ms)")
    for f in files:
        times = []
        for _ in range(args.repeats):
            t = time.process_time()
            roster = load_roster(f, lib)
            times.append(time.process_time() - t)
        verdict = "ok" if statistics.median(times) <= LIMIT_S else "TOO SLOW"
        print(f"{f.name:36} {len(roster.entries):5d} {statistics.median(times) * 1000:10.1f} {max(times) * 1000:9.1f}"
              f"  {verdict}")


if __name__ == "__main__":
    main()
