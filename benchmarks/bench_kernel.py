"""Kernel speed against a straightforward vectorised numpy version, in one run.

Reference scenario (issue #2): 10 attacks, BS3+ re-rolling Hit rolls of 1, Sustained Hits 1,
S5 vs T4, AP-1 vs Sv3+, D2, a target with unlimited wounds.

Run: python3 benchmarks/bench_kernel.py [--trials N] [--repeats R]
Prints trials per CPU-second and per wall-second for the kernel on 1 thread without and with
the per-stage breakdown (what the command line shows), on 2 threads, for numpy, and the
ratios; the mean damage of each (exact value 350/54 = 6.4815) as a sanity check. Then the
wall time of short runs (1e5 trials) on 1 and 2 threads, whole library calls and their kernel
calls, beside the most two threads could give those whole calls and what this host gave two
threads on a loop of the same length with nothing shared (a shared virtual machine's second
core often wakes late or runs slow: read the kernel's ratio against that one).
"""

from __future__ import annotations

import argparse
import queue
import statistics
import threading
import time

import numba
import numpy as np

from mathhammer import kernel
from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.model import Context, Matchup, RerollPolicy, Target
from mathhammer.notation import parse_weapon

EXACT_MEAN = 350 / 54


def reference_inputs(wounds: int | None = None, models: int = 1):
    weapon = parse_weapon("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]")
    target = Target(name="unlimited" if wounds is None else f"{models}x W{wounds}", toughness=4, save=3,
                    wounds=wounds, models=models)
    ctx = Context(reroll_hits=RerollPolicy.ONES)
    return compile_matchup(Matchup(weapon=weapon, target=target, context=ctx)).inputs


def numpy_reference(trials: int, seed: int, batch: int = 1_000_000) -> float:
    """The same scenario, vectorised over trials x attacks with numpy's Generator."""
    rng = np.random.default_rng(seed)
    total = 0
    done = 0
    while done < trials:
        n = min(batch, trials - done)
        hit = rng.integers(1, 7, size=(n, 10), dtype=np.int8)
        reroll = rng.integers(1, 7, size=(n, 10), dtype=np.int8)
        hit = np.where(hit == 1, reroll, hit)
        hits = (hit >= 3).astype(np.int8) + (hit == 6)  # sustained hits 1: a 6 scores one more hit
        wound = rng.integers(1, 7, size=(n, 20), dtype=np.int8) >= 3  # S5 vs T4: 3+
        save_fail = rng.integers(1, 7, size=(n, 20), dtype=np.int8) < 4  # Sv3+ AP-1: 4+
        slots = np.arange(20) < (2 * 10)  # at most 20 hits per trial
        per_hit = wound & save_fail & slots
        # count only the first `hits` of the 20 hit slots of each trial
        n_hits = hits.sum(axis=1, dtype=np.int64)
        mask = np.arange(20)[None, :] < n_hits[:, None]
        dmg = 2 * (per_hit & mask).sum(axis=1, dtype=np.int64)
        total += int(dmg.sum())
        done += n
    return total / trials


def timed(fn, repeats: int) -> tuple[float, float, object]:
    """Median CPU seconds (``time.process_time``: the machine may be shared, so wall time is
    noisy) and median wall seconds of ``repeats`` calls, and the last result."""
    cpu, wall, out = [], [], None
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        out = fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall), out


@numba.njit(nogil=True)
def _busy_loop(n: int, seed: int, table: np.ndarray, hist: np.ndarray) -> int:
    """``n`` steps of a splitmix64 stream, each a table lookup and a histogram count: a loop
    with nothing to share between threads (its own row of ``hist``), to time what this host
    gives two threads."""
    s = np.uint64(seed)
    mask = np.uint64(table.size - 1)
    for _ in range(n):
        s = s + np.uint64(0x9E3779B97F4A7C15)
        z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        hist[table[np.int64((z ^ (z >> np.uint64(31))) & mask)] & 63] += 1
    return 0


class HostReference:
    """What this host gives two threads on a loop of a given length: the loop split in two
    halves, one on the calling thread and one on an idle thread woken through a queue (as the
    kernel's worker threads are). On a shared virtual machine the second core may wake late or
    run slowly; this shows by how much, measured beside the kernel, in the same minutes."""

    def __init__(self) -> None:
        self.table = np.arange(4096, dtype=np.int64)
        self.hist = np.zeros((2, 128), dtype=np.int64)
        _busy_loop(10, 1, self.table, self.hist[0])  # compile
        start = time.perf_counter()
        _busy_loop(2_000_000, 1, self.table, self.hist[0])
        self.step = (time.perf_counter() - start) / 2_000_000
        self._todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            _busy_loop(self._todo.get(), 2, self.table, self.hist[1])
            self._done.put(None)

    def run(self, seconds: float, threads: int) -> float:
        """Wall seconds of a loop that takes about ``seconds`` on one thread, on ``threads``."""
        n = max(2, int(seconds / self.step))
        start = time.perf_counter()
        if threads == 1:
            _busy_loop(n, 1, self.table, self.hist[0])
        else:
            self._todo.put(n // 2)
            _busy_loop(n - n // 2, 3, self.table, self.hist[0])
            self._done.get()
        return time.perf_counter() - start


def small_runs(trials: int, calls: int, rounds: int = 5) -> None:
    """Whole library calls (tables, histograms, results: what a script pays) of ``trials``
    trials on 1 and 2 threads, alternating, for the reference scenario and a finite target;
    the median over ``rounds`` of each round's median wall time. Beside it, the wall time of the
    same calls' kernel calls alone (what two cores can share; the rest is Python on one), what
    two threads would give the whole calls if the kernel calls took exactly half as long (the
    Python before, between and after them stays on one thread), and what this host gave a
    loop with nothing shared, as long as the kernel calls on one thread, split over two threads
    in the same rounds (:class:`HostReference`)."""
    print(f"runs of {trials:,} trials, median wall time ({rounds} rounds of {calls}), whole montecarlo.run calls"
          " | their kernel calls | whole calls with the kernel exactly twice as fast | a loop as long as the"
          " kernel calls, nothing shared:")
    real = kernel.simulate_chunks
    in_kernel = [0.0]
    host = HostReference()

    def timed_kernel(*a, **kw):
        start = time.perf_counter()
        real(*a, **kw)
        in_kernel[0] += time.perf_counter() - start

    kernel.simulate_chunks = timed_kernel
    try:
        for label, inputs in (("unlimited wounds", reference_inputs()), ("10 models W2", reference_inputs(2, 10))):
            for stages in (True, False):
                medians: dict[int, list[float]] = {1: [], 2: []}
                kernel_medians: dict[int, list[float]] = {1: [], 2: []}
                host_medians: dict[int, list[float]] = {1: [], 2: []}
                for threads in (1, 2):
                    montecarlo.run(inputs, trials=trials, seed=1, threads=threads, stages=stages)
                loop = 0.0  # the kernel calls' seconds on one thread, as last measured
                for _ in range(rounds):
                    for threads in (1, 2):
                        walls, kernels, loops = [], [], []
                        for _ in range(calls):
                            in_kernel[0] = 0.0
                            start = time.perf_counter()
                            montecarlo.run(inputs, trials=trials, seed=1, threads=threads, stages=stages)
                            walls.append(time.perf_counter() - start)
                            kernels.append(in_kernel[0])
                            if loop:
                                loops.append(host.run(loop, threads))
                        medians[threads].append(statistics.median(walls))
                        kernel_medians[threads].append(statistics.median(kernels))
                        if threads == 1:
                            loop = statistics.median(kernels)
                        if loops:
                            host_medians[threads].append(statistics.median(loops))
                one, two = statistics.median(medians[1]), statistics.median(medians[2])
                k1, k2 = statistics.median(kernel_medians[1]), statistics.median(kernel_medians[2])
                h1, h2 = statistics.median(host_medians[1]), statistics.median(host_medians[2])
                print(f"  {label:17s} {'with stages' if stages else 'no stages':11s} 1 thread {one * 1e3:6.2f} ms,"
                      f" 2 threads {two * 1e3:6.2f} ms: {one / two:.2f}x | kernel {k1 * 1e3:6.2f} ms,"
                      f" {k2 * 1e3:6.2f} ms: {k1 / k2:.2f}x | at best {one / (one - k1 / 2):.2f}x"
                      f" | host {h1 / h2:.2f}x")
    finally:
        kernel.simulate_chunks = real


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--small", type=int, default=100_000, help="trials of the short runs on 1 and 2 threads")
    args = ap.parse_args()
    inputs = reference_inputs()
    for stages in (False, True):  # load / compile the kernel
        montecarlo.run(inputs, trials=1000, seed=0, stages=stages)
    rows = {}

    def kernel(threads: int, stages: bool):
        return lambda: montecarlo.run(inputs, trials=args.trials, seed=1, threads=threads, stages=stages)

    cpu, wall, res = timed(kernel(1, False), args.repeats)
    rows["kernel, 1 thread"] = (args.trials / cpu, args.trials / wall, res.damage.mean())
    cpu, wall, res = timed(kernel(1, True), args.repeats)
    rows["kernel + stages, 1"] = (args.trials / cpu, args.trials / wall, res.damage.mean())
    if numba.config.NUMBA_NUM_THREADS >= 2:
        cpu, wall, res = timed(kernel(2, False), args.repeats)
        rows["kernel, 2 threads"] = (args.trials / cpu, args.trials / wall, res.damage.mean())
    np_trials = max(1_000_000, args.trials // 10)
    cpu, wall, mean = timed(lambda: numpy_reference(np_trials, 1), max(1, args.repeats // 2))
    rows["numpy, vectorised"] = (np_trials / cpu, np_trials / wall, mean)
    print(f"reference scenario, median of {args.repeats} runs of {args.trials:,} trials; exact mean {EXACT_MEAN:.4f}")
    print(f"  {'':22s} {'per CPU-s':>16s} {'per wall-s':>16s}")
    for name, (rate, wall_rate, mean) in rows.items():
        print(f"  {name:22s} {rate / 1e6:8.2f} M trials {wall_rate / 1e6:8.2f} M trials   mean {mean:.4f}")
    one = rows["kernel, 1 thread"]
    if "kernel, 2 threads" in rows:
        print(f"  2 threads / 1 thread (wall): {rows['kernel, 2 threads'][1] / one[1]:.2f}x")
    print(f"  kernel 1 thread / numpy (CPU): {one[0] / rows['numpy, vectorised'][0]:.1f}x;"
          f" with stages: {rows['kernel + stages, 1'][0] / rows['numpy, vectorised'][0]:.1f}x")
    if numba.config.NUMBA_NUM_THREADS >= 2:
        small_runs(args.small, calls=40)


if __name__ == "__main__":
    main()
