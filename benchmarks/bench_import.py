"""Importing a whole BSData snapshot (issue 11: all 47 files in at most 60 s).

Run: python3 benchmarks/bench_import.py [--bsdata DIR] [--repeats R]
Prints, per repeat, the CPU and wall seconds of the three stages: reading and parsing the XML
with the id index built (load), reading every unit (units), and writing the YAML text (write),
then the median of each and the units, weapons and bytes made. Nothing is written to disk.
Default DIR: the pinned snapshot ../shared/data/bsdata-wh40k-10e beside the repository.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from mathhammer.bsdata.build import import_files
from mathhammer.bsdata.catalogue import load
from mathhammer.bsdata.write import faction_files, source_text

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "bsdata-wh40k-10e"


def once(folder: Path) -> dict[str, tuple[float, float]]:
    """CPU and wall seconds of each stage of one import."""
    out: dict[str, tuple[float, float]] = {}
    c0, w0 = time.process_time(), time.perf_counter()
    load([folder])
    c1, w1 = time.process_time(), time.perf_counter()
    out["load"] = (c1 - c0, w1 - w0)
    imported = import_files([folder])  # load again + units: units = this less load
    c2, w2 = time.process_time(), time.perf_counter()
    out["units"] = (c2 - c1 - out["load"][0], w2 - w1 - out["load"][1])
    size = 0
    for f in imported.factions:
        for _name, data in faction_files(f, source_text(imported, f)):
            size += len(data)
    c3, w3 = time.process_time(), time.perf_counter()
    out["write"] = (c3 - c2, w3 - w2)
    out["total"] = (out["load"][0] + out["units"][0] + out["write"][0],
                    out["load"][1] + out["units"][1] + out["write"][1])
    units = sum(len(f.units) for f in imported.factions)
    weapons = sum(len(u["weapons"]) for f in imported.factions for u in f.units)
    print(f"  {units} units, {weapons} weapons, {size:,} bytes of YAML; "
          + ", ".join(f"{k} {c:.2f} s CPU / {w:.2f} s wall" for k, (c, w) in out.items()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bsdata", type=Path, default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.bsdata.is_dir():
        raise SystemExit(f"no BSData snapshot at {args.bsdata}: give --bsdata DIR, a checkout of BSData's wh40k-10e")
    files = sorted(p for p in args.bsdata.iterdir() if p.suffix in (".cat", ".gst"))
    if not files:
        raise SystemExit(f"no .cat or .gst file in {args.bsdata}: give --bsdata DIR, a checkout of BSData's wh40k-10e")
    print(f"{len(files)} files, {sum(p.stat().st_size for p in files):,} bytes in {args.bsdata}")
    runs = [once(args.bsdata) for _ in range(args.repeats)]
    for stage in ("load", "units", "write", "total"):
        cpu = statistics.median(r[stage][0] for r in runs)
        wall = statistics.median(r[stage][1] for r in runs)
        print(f"median {stage:5}: {cpu:6.2f} s CPU, {wall:6.2f} s wall")
    total = statistics.median(r["total"][1] for r in runs)
    print(f"whole import (load + units + write), median wall: {total:.2f} s (limit 60 s: {60 / total:.1f}x under)")


if __name__ == "__main__":
    main()
