"""A whole unit against a mixed target, per attack simulated, against the single-weapon
reference scenario, in one run (issue 9: within 2x of it).

Unit: 10 models, 5 firing "A2 BS3+ S4 AP-1 D1" and 5 firing "A1 BS3+ S8 AP-2 D2" (15 attacks).
Target: 6 models, 5 of T4 Sv3+ W2 and a sergeant of T4 W3 with a 5+ invulnerable save, once
with Sv3+ (the same saves as the troopers against these weapons) and once with Sv2+ (his own).
Reference: 10 attacks BS3+ re-rolling Hit rolls of 1, Sustained Hits 1, S5 vs T4, AP-1 vs Sv3+,
D2, unlimited wounds (the fused fast path).

Run: python3 benchmarks/bench_units.py [--trials N] [--repeats R]
Prints trials and attacks per CPU-second of each, with and without the stage breakdown, and
the ratio of attacks per second (reference / unit).
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench_kernel import reference_inputs

from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.model import Matchup, Target, TargetUnit, WeaponGroup
from mathhammer.notation import parse_weapon


def unit_inputs(sergeant_save: int = 3):
    """The unit at the squad; with ``sergeant_save`` 2 the sergeant's saves differ from the
    troopers' (each save is then rolled for the model it lands on), with 3 they are alike
    (the 5+ invulnerable save is never better here), so the saves are a count."""
    weapons = (WeaponGroup(weapon=parse_weapon("A2 BS3+ S4 AP-1 D1"), count=5),
               WeaponGroup(weapon=parse_weapon("A1 BS3+ S8 AP-2 D2"), count=5))
    target = TargetUnit(name="squad", groups=(
        Target(name="trooper", toughness=4, save=3, wounds=2, models=5),
        Target(name="sergeant", toughness=4, save=sergeant_save, wounds=3, models=1, invulnerable=5)))
    return compile_matchup(Matchup(weapons=weapons, target=target)).unit


def cpu_rate(inputs, trials: int, repeats: int, stages: bool) -> tuple[float, float]:
    """Median trials per CPU-second (one thread) and the mean attacks per trial."""
    montecarlo.run(inputs, trials=1000, seed=0, threads=1, stages=stages)  # load / compile
    rates, attacks = [], 0.0
    for _ in range(repeats):
        start = time.process_time()
        r = montecarlo.run(inputs, trials=trials, seed=1, threads=1, stages=stages)
        rates.append(trials / (time.process_time() - start))
        if stages:
            attacks = r.stages["attacks"].mean()
    return statistics.median(rates), attacks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    ref = reference_inputs()
    print(f"median of {args.repeats} runs of {args.trials:,} trials, one thread, per CPU-second")
    for save, label in ((3, "saves alike"), (2, "saves differ")):
        print(f" sergeant Sv{save}+ ({label}):")
        compare(unit_inputs(save), ref, args)


def compare(unit, ref, args) -> None:
    for stages in (True, False):
        u_rate, u_attacks = cpu_rate(unit, args.trials, args.repeats, True)
        if not stages:
            u_rate, _ = cpu_rate(unit, args.trials, args.repeats, False)
        r_rate, r_attacks = cpu_rate(ref, args.trials, args.repeats, True)
        if not stages:
            r_rate, _ = cpu_rate(ref, args.trials, args.repeats, False)
        label = "with stages" if stages else "no stages"
        print(f"  {label:11s} unit {u_rate / 1e6:6.2f} M trials ({u_rate * u_attacks / 1e6:7.1f} M attacks), "
              f"reference {r_rate / 1e6:6.2f} M trials ({r_rate * r_attacks / 1e6:7.1f} M attacks): "
              f"reference / unit per attack {r_rate * r_attacks / (u_rate * u_attacks):.2f}x")


if __name__ == "__main__":
    main()
