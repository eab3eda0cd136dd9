"""The profile library at the size of every faction (~2,000 units, ~15,000 weapons).

Prints, for a big library given to ``$MATHHAMMER_PROFILES`` beside the built-in profiles:

- the cold load (an empty cache, as after an install or upgrade), split into reading the YAML
  (parse and check every unit) and the rest: the names checked across files, the index built
  and the cache entry written and verified;
- the warm load (from the cache entry), the same load again in this process (shared once the
  files have not changed for 3 seconds) and a warm lookup (``railgun``, a unit by its
  faction-qualified name, a weapon of a unit), in this process, median of many;
- ``mathhammer shoot railgun --target knight`` CPU time (user + system of the child) on warm
  caches with the big library and with today's library alone, interleaved in the same run, and
  the difference (issue 11's goal: at most 50 ms more).

The big library is ``--library DIR`` (e.g. a copy of profiles/bsdata/), else a synthetic one
written to a temporary folder: ``--units`` units in ``--factions`` factions, 7 to 8 weapons each
(so ~15,000 weapons for 2,000 units), with unit names repeated across factions as the real
catalogues repeat them.

Run: python3 benchmarks/bench_library.py [--library DIR] [--units N] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SCRIPT = Path(sys.executable).with_name("mathhammer")
CMD = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "mathhammer"]
_ABILITIES = ["Heavy", "Blast", "Twin-linked", "Lethal Hits", "Sustained Hits 1", "Anti-Infantry 4+", "Melta 2",
              "Rapid Fire 1", "Devastating Wounds", "Assault", "Ignores Cover", "Precision"]


def synthetic(folder: Path, units: int, factions: int, seed: int = 1) -> tuple[int, int, int]:
    """Write a library of ``units`` units to ``folder`` (a file per faction, split below the size
    limit as the generator splits); returns (units, weapons, bytes)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    n_weapons = n_bytes = 0
    shared = [f"Shared Squad {k}" for k in range(units // (4 * factions) + 1)]  # names in every faction
    per = units // factions
    for f in range(factions):
        faction = f"Synthetic Faction {f}" + ("'s" if f % 5 == 0 else "")
        chunks: list[list[str]] = [[]]
        for k in range(per + (1 if f < units % factions else 0)):
            name = shared[k] if k < len(shared) else f"Synthetic Unit {f}-{k}"
            guns = [f"Gun {j}" for j in range(rng.randint(4, 6))]
            blades = [f"Blade {j}" for j in range(rng.randint(2, 3))]
            points = 100 if k % 3 == 0 else rng.randint(4, 30) * 10  # a unit with sizes: the smallest size's
            lines = [f'  - name: "{name}"', f'    faction: "{faction}"', f"    points: {points}",
                     f'    source: "synthetic {f}-{k}"',
                     "    sizes: [{models: 5, points: 100}, {models: 10, points: 200}]" if k % 3 == 0 else "",
                     "    models:",
                     f'      - {{name: "Trooper", count: {rng.randint(1, 9)}, M: 6, T: {rng.randint(3, 12)}, Sv: 3, '
                     f'W: {rng.randint(1, 20)}, Ld: 6, OC: 2, weapons: ["{guns[0]}", "{blades[0]}"], '
                     f'options: ["{guns[1]}"]}}',
                     f'      - {{name: "Leader", count: 1, M: 6, T: 4, Sv: 3, W: 3, Ld: 6, OC: 2, '
                     f'weapons: ["{guns[1]}", "{blades[1]}"]}}',
                     "    keywords: [INFANTRY, SYNTHETIC]", '    unmodelled: ["Oath of Moment", "Deep Strike"]',
                     "    weapons:"]
            for g in guns:
                abilities = ", ".join(f'"{a}"' for a in rng.sample(_ABILITIES, 2))
                lines.append(f'      - {{name: "{g}", range: {rng.choice([12, 24, 36, 48])}, '
                             f'A: "{rng.choice(["2", "D6", "3"])}", '
                             f'BS: {rng.randint(2, 5)}, S: {rng.randint(3, 12)}, AP: -{rng.randint(0, 3)}, '
                             f'D: "{rng.choice(["1", "2", "D3", "D6+1"])}", abilities: [{abilities}], '
                             'unmodelled: ["Conversion"]}')
            for b in blades:
                lines.append(f'      - {{name: "{b}", range: "melee", A: "{rng.randint(1, 6)}", '
                             f'WS: {rng.randint(2, 5)}, '
                             f'S: {rng.randint(3, 12)}, AP: -{rng.randint(0, 3)}, D: "1", abilities: ["Lethal Hits"]}}')
            n_weapons += len(guns) + len(blades)
            if sum(len(x) + 1 for x in chunks[-1]) > 800_000:
                chunks.append([])
            chunks[-1] += [line for line in lines if line]
        for c, body in enumerate(chunks):
            text = 'schema: 1\nsource: "synthetic"\nunits:\n' + "\n".join(body) + "\n"
            (folder / f"faction-{f}{'' if c == 0 else f'-{c + 1}'}.yaml").write_text(text, encoding="utf-8")
            n_bytes += len(text.encode())
    return units, n_weapons, n_bytes


def _spread(values: list[float], unit: str = "ms", scale: float = 1000) -> str:
    v = sorted(values)
    return f"{statistics.median(v) * scale:.1f} {unit} ({v[len(v) // 4] * scale:.1f}-{v[3 * len(v) // 4] * scale:.1f})"


_CHILD = r"""
import sys, time
t0 = time.perf_counter()
from mathhammer.profiles import library as L, load_library
from mathhammer.profiles._yaml import _decode, _parse_yaml
from mathhammer.profiles.schema import _units
parse = [0.0]
real = L._units
def timed(data, file):
    t = time.perf_counter()
    try:
        return real(data, file)
    finally:
        parse[0] += time.perf_counter() - t
real_yaml = L._parse_yaml
def timed_yaml(text, file):
    t = time.perf_counter()
    try:
        return real_yaml(text, file)
    finally:
        parse[0] += time.perf_counter() - t
L._units, L._parse_yaml = timed, timed_yaml
t = time.perf_counter()
lib = load_library()
total = time.perf_counter() - t
print(total, parse[0], lib._index.rows("unit"), lib._index.rows("weapon"))
"""


def cold(env: dict[str, str]) -> tuple[float, float, int, int]:
    """(seconds of the whole load, of which reading YAML, units, weapons) with an empty cache."""
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=False, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"the cold load failed: {out.stderr}")
    total, parse, units, weapons = out.stdout.split()
    return float(total), float(parse), int(units), int(weapons)


def warm_in_process(env: dict[str, str], repeats: int) -> None:
    """Warm load and lookups, in this process (the cache written by :func:`cold`)."""
    os.environ.update(env)
    from mathhammer.profiles import library as module
    from mathhammer.profiles import load_library

    loads, shared, finds = [], [], []
    lib = load_library()
    for _ in range(repeats):
        module._LAST = {}  # from the cache entry, as a new process loads it
        t = time.perf_counter()
        lib = load_library()
        loads.append(time.perf_counter() - t)
        t = time.perf_counter()
        load_library()  # the same files again in this process: shared when they have settled
        shared.append(time.perf_counter() - t)
        t = time.perf_counter()
        lib.find("railgun", "weapon")
        lib.find("knight", "unit")
        finds.append(time.perf_counter() - t)
    print(f"warm load_library():                 {_spread(loads)}")
    print(f"  again in the same process:         {_spread(shared)} (files unchanged for 3 s: shared)")
    print(f"warm find railgun + knight:          {_spread(finds)}")
    faction = next(f for f in lib.factions if f.startswith("Synthetic")) if any(
        f.startswith("Synthetic") for f in lib.factions) else lib.factions[-1]
    unit = lib.only(faction).units[0]
    query = f"{faction.lower().replace(chr(39), '')}/{unit.name}"
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        lib.find(query, "unit")
        times.append(time.perf_counter() - t)
    print(f"warm find {query!r}: {_spread(times)}")
    t = time.perf_counter()
    n = len(lib.units)
    print(f"every unit rebuilt (lib.units, listings): {(time.perf_counter() - t) * 1000:.0f} ms for {n} units")


def shoot_cpu(env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(CMD + ["shoot", "railgun", "--target", "knight", "--seed", "1"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", type=Path, help="a folder of profile files (default: a synthetic library)")
    ap.add_argument("--units", type=int, default=2000)
    ap.add_argument("--factions", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mathhammer-bench-library-") as tmp:
        folder = args.library
        if folder is None:
            folder = Path(tmp) / "library"
            units, weapons, size = synthetic(folder, args.units, args.factions)
            print(f"synthetic library: {units} units, {weapons} weapons, {size / 1e6:.1f} MB of YAML "
                  f"in {len(list(folder.glob('*.yaml')))} files")
        base = {k: v for k, v in os.environ.items() if k != "MATHHAMMER_PROFILES"}
        big = {**base, "MATHHAMMER_PROFILES": str(folder), "MATHHAMMER_CACHE_DIR": str(Path(tmp) / "cache-big")}
        small = {**base, "MATHHAMMER_CACHE_DIR": str(Path(tmp) / "cache-small")}
        total, parse, n_units, n_weapons = cold(big)
        print(f"library loaded: {n_units} units, {n_weapons} weapons (with the built-in profiles)")
        print(f"cold load (empty cache): {total:.2f} s = reading YAML {parse:.2f} s + names checked, index built, "
              f"entry written and verified {total - parse:.2f} s")
        warm_in_process(big, args.repeats)
        for env in (big, small):
            shoot_cpu(env)  # warm the kernel and profile caches
        cpu: dict[str, list[float]] = {"big": [], "today": []}
        for _ in range(args.repeats):
            cpu["big"].append(shoot_cpu(big))
            cpu["today"].append(shoot_cpu(small))
        print(f"shoot railgun --target knight, warm, CPU, median (quartiles) of {args.repeats}:")
        print(f"  today's library:  {_spread(cpu['today'])}")
        print(f"  big library:      {_spread(cpu['big'])}")
        diffs = [b - t for b, t in zip(cpu["big"], cpu["today"], strict=True)]
        print(f"  difference:       {_spread(diffs)} (goal: at most 50 ms)")


if __name__ == "__main__":
    main()
