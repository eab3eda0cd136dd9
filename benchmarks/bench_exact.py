"""Speed of the exact engine (mathhammer/engine/exact.py), median compute time per scenario.

Targets: <= 0.1 ms for one weapon without allocation (the reference scenario: 10 attacks BS3+
re-rolling Hit rolls of 1, Sustained Hits 1, S5 vs T4, AP-1 vs Sv3+, D2, unlimited wounds) and
<= 2 ms with allocation (the Supremacy railgun vs a Knight; 2D6 attacks of D6+6 damage vs 5
models of W3 with FNP 5+).

Scaling (issue 8), median CPU time of ``exact.run`` with the stage breakdown, a few repeats:
10,000 attacks of D6+6 at unlimited wounds (target <= 100 ms); 1,000 and 10,000 attacks of
D6+6 allocated to 1,000 models of W99 (the issue's ``shoot "A10 BS3+ S5 AP-1 D=D6+6" -n 100 / -n 1000
-t "T4 SV3+ W99 MODELS1000" --exact``; targets <= 0.5 s and <= 5 s); the 2023 spill-over of
Devastating Wounds (20 models of 2D6 attacks at 20 models of W10), whose CPU time is now its
wall time (no multithreaded BLAS).

Run: python3 benchmarks/bench_exact.py [--repeats R] [--scaling-repeats S]
Prints, per scenario, the median wall time of ``exact.run`` (tables to DamageResult) without and
with the stage breakdown, and the mean damage; then the scaling scenarios' median CPU and wall
times. If icepool is importable it also times icepool on the reference scenario's damage
distribution (built from d6 faces, from scratch each repeat) and prints the ratio; otherwise
that line says it was skipped.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mathhammer.compile import KernelInputs, compile_matchup  # noqa: E402
from mathhammer.engine import exact  # noqa: E402
from mathhammer.model import Context, Matchup, RerollPolicy, RulesVersion, Target  # noqa: E402
from mathhammer.notation import parse_target, parse_weapon  # noqa: E402

REFERENCE_MEAN = 350 / 54


def _inputs(weapon: str, target: str | Target, **ctx: Any) -> KernelInputs:
    t = target if isinstance(target, Target) else parse_target(target)
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=t, context=Context(**ctx))).inputs


SCENARIOS: dict[str, tuple[KernelInputs, float]] = {
    "reference (10 attacks, unlimited wounds)": (
        _inputs("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", Target(name="unlimited", toughness=4, save=3, wounds=None),
                reroll_hits=RerollPolicy.ONES), 0.1),
    "railgun vs Knight (W26, allocation)": (
        _inputs("A1 BS5+ S20 AP-5 D D6+6 [DEVASTATING WOUNDS, TWIN-LINKED]", "T11 SV3+ W26 INV5+"), 2.0),
    "2D6 attacks D6+6 vs 5 x W3 FNP5+": (
        _inputs("A 2D6 BS3+ S8 AP-2 D D6+6", "T4 SV3+ W3 MODELS5 FNP5+"), 2.0),
}


_UNLIMITED = Target(name="unlimited", toughness=4, save=3, wounds=None)
#: name: (inputs, target in ms of median CPU time or None); issue 8's scaling requests.
SCALING: dict[str, tuple[KernelInputs, float | None]] = {
    "10,000 attacks D6+6, unlimited wounds": (
        _inputs("A10 BS3+ S5 AP-1 D D6+6", _UNLIMITED, firing_models=1000), 100.0),
    "7,000 (2D6 x 1000) attacks D6+6, unlimited": (
        _inputs("A 2D6 BS3+ S5 AP-1 D D6+6", _UNLIMITED, firing_models=1000), 100.0),
    "1,000 attacks D6+6 vs 1000 x W99": (
        _inputs("A10 BS3+ S5 AP-1 D D6+6", "T4 SV3+ W99 MODELS1000", firing_models=100), 500.0),
    "10,000 attacks D6+6 vs 1000 x W99": (
        _inputs("A10 BS3+ S5 AP-1 D D6+6", "T4 SV3+ W99 MODELS1000", firing_models=1000), 5000.0),
    "2023 spill-over: 20 x 2D6 D6+6 [DEV] vs 20 x W10": (
        _inputs("A 2D6 BS3+ S8 AP-2 D D6+6 [DEVASTATING WOUNDS]", "T4 SV3+ W10 MODELS20", firing_models=20,
                rules=RulesVersion.V2023), None),
}


def median_cpu_wall(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median CPU (all threads of the process) and wall milliseconds of ``fn``."""
    fn()  # warm-up
    cpu, wall = [], []
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu) * 1e3, statistics.median(wall) * 1e3


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def icepool_reference() -> Any:
    """The reference scenario's damage distribution with icepool, from d6 faces."""
    import icepool

    faces = range(1, 7)
    hit = icepool.Die([g if f == 1 else f for f in faces for g in faces])  # re-roll Hit rolls of 1
    n_hits = hit.map(lambda f: 0 if f < 3 else 2 if f == 6 else 1)  # 3+ hits, a 6 scores one more
    unsaved = icepool.Die([int(w >= 3 and s < 4) for w in faces for s in faces])  # 3+ wounds, 4+ saves
    per_attack = n_hits.map(lambda n: n @ unsaved)
    return (10 @ per_attack).map(lambda u: 2 * u)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--scaling-repeats", type=int, default=5)
    args = parser.parse_args()
    for name, (inputs, target) in SCENARIOS.items():
        plain = median_ms(lambda inputs=inputs: exact.run(inputs, stages=False), args.repeats)
        full = median_ms(lambda inputs=inputs: exact.run(inputs, stages=True), args.repeats)
        mean = exact.run(inputs).damage.mean()
        verdict = "ok" if plain <= target else "SLOWER than target"
        print(f"{name:44s} {plain:7.3f} ms (target {target} ms: {verdict}); with stages {full:7.3f} ms; "
              f"mean damage {mean:.6f}")
    for name, (inputs, target_ms) in SCALING.items():
        cpu, wall = median_cpu_wall(lambda inputs=inputs: exact.run(inputs), args.scaling_repeats)
        verdict = "" if target_ms is None else f" (target {target_ms:g} ms: {'ok' if cpu <= target_ms else 'SLOWER'})"
        print(f"{name:52s} CPU {cpu:9.1f} ms, wall {wall:9.1f} ms{verdict}; "
              f"mean damage {exact.run(inputs, stages=False).damage.mean():.6f}")
    try:
        import icepool  # noqa: F401
    except ImportError:
        print("icepool: not installed, comparison skipped")
        return
    ref = SCENARIOS["reference (10 attacks, unlimited wounds)"][0]
    ours = median_ms(lambda: exact.run(ref, stages=False), args.repeats)
    theirs = median_ms(icepool_reference, max(10, args.repeats // 100))
    die = icepool_reference()
    p = exact.run(ref, stages=False).damage.probabilities
    gap = max(abs(float(die.probability(k)) - (p[k] if k < p.size else 0.0)) for k in range(max(p.size, 41)))
    print(f"icepool reference: {theirs:.3f} ms vs exact {ours:.3f} ms: exact is {theirs / ours:.0f}x faster "
          f"(max |difference| {gap:.2g}; mean {REFERENCE_MEAN:.6f})")


if __name__ == "__main__":
    main()
