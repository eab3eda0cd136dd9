"""A whole unit against a mixed target, per attack simulated, against the single-weapon
reference scenario, in one run (issue 9: within 2x of it).

Unit: 10 models, 5 firing "A2 BS3+ S4 AP-1 D1" and 5 firing "A1 BS3+ S8 AP-2 D2" (15 attacks).
Target: 6 models, 5 of T4 Sv3+ W2 and a sergeant of T4 W3 with a 5+ invulnerable save, once
with Sv3+ (the same saves as the troopers against these weapons) and once with Sv2+ (his own).
Reference: 10 attacks BS3+ re-rolling Hit rolls of 1, Sustained Hits 1, S5 vs T4, AP-1 vs Sv3+,
D2, unlimited wounds (the fused fast path).

Run: python3 benchmarks/bench_units.py [--trials N] [--repeats R]
Prints trials and attacks per CPU-second of each, with and without the stage breakdown, and
the ratio of attacks per second (reference / unit). The unit's and the reference's runs
alternate, round by round: on a shared machine a burst of load then slows both, where timing
one block of unit runs and then one block of reference runs made the ratio swing by 25% from
one run to the next.
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


def cpu_seconds(inputs, trials: int, stages: bool) -> float:
    """CPU seconds of one run on one thread."""
    start = time.process_time()
    montecarlo.run(inputs, trials=trials, seed=1, threads=1, stages=stages)
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    ref = reference_inputs()
    print(f"{args.repeats} rounds of {args.trials:,} trials, one thread, per CPU-second; unit and reference runs "
          f"alternate, so that both see the same load on a shared machine: medians, and the median of the rounds' "
          f"ratios")
    for save, label in ((3, "saves alike"), (2, "saves differ")):
        print(f" sergeant Sv{save}+ ({label}):")
        compare(unit_inputs(save), ref, args)


def compare(unit, ref, args) -> None:
    attacks = {}
    for name, inputs in (("unit", unit), ("reference", ref)):
        attacks[name] = montecarlo.run(inputs, trials=10_000, seed=0, threads=1, stages=True).stages["attacks"].mean()
    for stages in (True, False):
        for inputs in (unit, ref):
            montecarlo.run(inputs, trials=1000, seed=0, threads=1, stages=stages)  # load / compile
        unit_rates, ref_rates, ratios = [], [], []
        for _ in range(args.repeats):
            u = args.trials / cpu_seconds(unit, args.trials, stages)
            r = args.trials / cpu_seconds(ref, args.trials, stages)
            unit_rates.append(u)
            ref_rates.append(r)
            ratios.append(r * attacks["reference"] / (u * attacks["unit"]))
        u_rate, r_rate = statistics.median(unit_rates), statistics.median(ref_rates)
        label = "with stages" if stages else "no stages"
        print(f"  {label:11s} unit {u_rate / 1e6:6.2f} M trials ({u_rate * attacks['unit'] / 1e6:7.1f} M attacks), "
              f"reference {r_rate / 1e6:6.2f} M trials ({r_rate * attacks['reference'] / 1e6:7.1f} M attacks): "
              f"reference / unit per attack {statistics.median(ratios):.2f}x "
              f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
