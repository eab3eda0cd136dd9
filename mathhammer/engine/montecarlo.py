"""Monte Carlo engine: validate, derive chunk seeds, call the kernel, wrap the counts.

The kernel is called in short batches (a fraction of a second each) rather than once: a Ctrl-C
reaches Python only between numba calls. Each chunk's random stream carries over from batch to
batch, so the counts depend on the seed and the number of trials only, not on how the trials
were batched nor on the thread count. Threads run whole chunks side by side, each adding to
its own histogram row (so memory grows with threads, not chunks), and integer counts sum to
the same totals in any order.

The kernel of issue 8 draws counts of successes from binomial and joint tables instead of
rolling each die, so a given seed gives different (equally distributed) counts than releases
before it, and a run with the stage breakdown different ones than a run without.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import numpy.typing as npt

from ..codes import Flag, Param, StageCount, UnitParam
from ..compile import (
    STAGE_CAP,
    KernelInputs,
    UnitInputs,
    as_unit,
    check_monte_carlo,
    histogram_widths,
    monte_carlo_threads,
    padded_width,
    scratch_width,
)
from ..errors import InputError
from ..limits import MAX_CHUNKS, MAX_TRIALS, check_count, max_threads, threads_setting
from ..result import DamageResult, Distribution, GroupResult, WeaponShare
from . import _parts

__all__ = ["MAX_TRIALS", "bad_threads_setting", "check_seed", "check_threads", "check_trials", "chunk_plan",
           "chunk_seeds", "draw_seed", "live_compile_status", "run"]

#: Trials per chunk before the chunk count reaches MAX_CHUNKS: small, so that runs of a few
#: thousand trials already have chunks for every thread.
_CHUNK_TRIALS = 1_024
#: Aimed-at duration of one kernel call: how long a Ctrl-C may wait.
BATCH_SECONDS = 0.2
#: Most a batch may grow over the previous one. The first batch (a trial per chunk) includes
#: the fixed cost of a kernel call, so it overstates the time per trial and the next batch errs
#: short; a large growth lets a run of 1e5 trials take two calls, not five.
_MAX_GROWTH = 4096
#: A call may take up to this many batches' time when that finishes the run: on a busy machine
#: the first call's fixed cost made runs of 1e5 trials end with a call of a few thousand
#: trials, on one thread (too short to share), after the one on two.
_TAIL = 2
#: A kernel call expected to take less than this (on one thread) is not split across threads:
#: handing a share to the second thread and collecting it costs about 50 microseconds.
_PARALLEL_SECONDS = 0.0002

#: Flag.STAGES as a plain int (an enum's operators cost microseconds).
_STAGES = int(Flag.STAGES)

#: Whether a compile shows seconds elapsed on a terminal (set by :func:`live_compile_status`).
_LIVE: ContextVar[bool] = ContextVar("mathhammer_live_compile_status", default=False)


@contextmanager
def live_compile_status(enabled: bool = True) -> Iterator[None]:
    """Inside the block, a kernel compile counts its seconds on stderr when that is a terminal
    (the command line turns this on; library callers get one plain line unless they ask)."""
    token = _LIVE.set(enabled)
    try:
        yield
    finally:
        _LIVE.reset(token)


def draw_seed() -> int:
    """A fresh seed from OS entropy (recorded in every output so the run can be repeated)."""
    return secrets.randbits(63)


def chunk_plan(trials: int) -> npt.NDArray[np.int64]:
    """Trials per chunk. Depends on ``trials`` only, never on the thread count, so results are
    identical for any number of threads."""
    n = max(1, min(MAX_CHUNKS, -(-trials // _CHUNK_TRIALS)))
    sizes = np.full(n, trials // n, dtype=np.int64)
    sizes[: trials % n] += 1
    return sizes


def chunk_seeds(seed: int, n_chunks: int) -> npt.NDArray[np.uint64]:
    """The only place seeds are derived: one independent stream per chunk, numpy's
    ``SeedSequence(seed).generate_state(n_chunks, uint64)``. numpy works that out one 32-bit word
    at a time (30-40 us for 64 chunks, a tenth of a run of 1e5 trials on two threads); the same
    words come from a few whole-array operations (:func:`_seed_words`), used once the first
    state of MAX_CHUNKS seeds in the process came out the same both ways (a shorter state is
    the start of a longer one, both ways)."""
    sequence = np.random.SeedSequence(seed)
    if _FAST_SEEDS == [True] and n_chunks <= MAX_CHUNKS:
        return _seed_words(sequence.pool, n_chunks)
    state = sequence.generate_state(n_chunks, dtype=np.uint64).astype(np.uint64, copy=False)
    if not _FAST_SEEDS and n_chunks == MAX_CHUNKS:
        _FAST_SEEDS.append(bool(np.array_equal(_seed_words(sequence.pool, n_chunks), state)))
    return state


#: Whether :func:`_seed_words` gave numpy's state (empty: not compared yet in this process).
_FAST_SEEDS: list[bool] = []


# SeedSequence.generate_state (numpy/random/bit_generator.pyx): word i of the output, as 32-bit
# words, is v = pool[i % pool size] ^ h_i; v *= h_(i+1); v ^= v >> 16, where h_0 = 0x8b51f9dd and
# h_(i+1) = h_i * 0x58f38ded (mod 2^32); 64-bit values are pairs of words, low word first.
_WORDS = 2 * MAX_CHUNKS
_HASH_AFTER = np.cumprod(np.full(_WORDS, 0x58F38DED, dtype=np.uint32), dtype=np.uint32) * np.uint32(0x8B51F9DD)
_HASH_BEFORE = np.concatenate([np.array([0x8B51F9DD], dtype=np.uint32), _HASH_AFTER[:-1]])


def _seed_words(pool: npt.NDArray[np.uint32], n_chunks: int) -> npt.NDArray[np.uint64]:
    """``generate_state(n_chunks, uint64)`` of a SeedSequence whose entropy pool is ``pool``
    (n_chunks at most MAX_CHUNKS)."""
    words = 2 * n_chunks
    v = pool[np.arange(words) % pool.size]  # (a copy: numpy's pool is uint32)
    v ^= _HASH_BEFORE[:words]
    v *= _HASH_AFTER[:words]
    v ^= v >> np.uint32(16)
    return v.astype("<u4").view("<u8").astype(np.uint64)


def next_batch(trials: int, seconds: float) -> int:
    """Trials per chunk for the next batch, after a batch of ``trials`` per chunk took ``seconds``."""
    if seconds <= 0:
        return trials * _MAX_GROWTH
    return max(1, min(trials * _MAX_GROWTH, int(trials * BATCH_SECONDS / seconds)))


def _run_batches(args: tuple[Any, ...], sizes: npt.NDArray[np.int64], batch: npt.NDArray[np.int64],
                 threads: int, runs: Any) -> float:
    """Call the kernel ``runs`` until chunk c has run ``sizes[c]`` trials, each call about BATCH_SECONDS
    long, the last up to _TAIL times that (``batch`` is the kernel's trials-per-chunk argument in
    ``args``), on ``threads`` threads. Returns the seconds.

    The first calls are tiny (they measure the speed, so that a Ctrl-C is never far away); a call
    expected to take less than _PARALLEL_SECONDS runs on the calling thread alone, where handing
    it to a second thread would cost more than it saves.
    """
    from .. import kernel

    start = time.perf_counter()
    left = sizes.copy()
    per_chunk = 1  # the first batches measure the speed; KeyboardInterrupt propagates between calls
    trial_seconds = 0.0  # one thread's seconds per trial, as last measured
    with kernel.worker_pool(threads) as pool:
        if pool is not None and sizes.size > 1:  # the other threads wake while the first batch runs
            pool.wake(threads - 1, runs)
        while left.any():
            np.minimum(left, per_chunk, out=batch)
            trials = int(batch.sum())
            use = threads if trial_seconds * trials >= _PARALLEL_SECONDS else 1
            t0 = time.perf_counter()
            kernel.simulate_chunks(*args, threads=use, pool=pool, kernel=runs)
            seconds = time.perf_counter() - t0
            left -= batch
            trial_seconds = seconds * use / trials
            per_chunk = next_batch(per_chunk, seconds)
            if _TAIL * per_chunk >= left.max():  # the rest in one call, not a short one after this
                per_chunk = int(left.max())
    return time.perf_counter() - start


def check_trials(trials: int) -> None:
    """Raises InputError unless trials is a whole number (numpy's integers too, not a bool), 1 to
    MAX_TRIALS."""
    check_count(trials, name="trials", lo=None, hi=None, where="--trials", error=InputError)
    if not 1 <= trials <= MAX_TRIALS:
        raise InputError(f"must be between 1 and {MAX_TRIALS:,}", where="--trials", value=trials)


def check_seed(seed: int | None) -> None:
    """Raises InputError unless seed is None or a whole number (numpy's integers too, not a
    bool) from 0 to 2^63-1."""
    if seed is None:
        return
    check_count(seed, name="the seed", lo=None, hi=None, where="--seed", error=InputError)
    if not 0 <= seed < 2**63:
        raise InputError("must be from 0 to 2^63-1", where="--seed", value=seed)


def check_threads(threads: int | None) -> None:
    """Raises InputError unless threads is None or a whole number (numpy's integers too, not a
    bool) from 1 to the threads this machine has."""
    if threads is None:
        return
    check_count(threads, name="threads", lo=None, hi=None, where="--threads", error=InputError)
    if not 1 <= threads <= max_threads():  # (the kernel package is not imported: an exact run checks it too)
        raise InputError(f"must be between 1 and {max_threads()}", where="--threads", value=threads)


def bad_threads_setting() -> str | None:
    """``NUMBA_NUM_THREADS`` when it is set to anything but a whole number of at least 1, else
    None (:func:`~mathhammer.limits.threads_setting`: numba would print a traceback reading it,
    or fail)."""
    given = threads_setting()
    return given if isinstance(given, str) else None


def run(inputs: KernelInputs | UnitInputs, *, trials: int, seed: int | None = None, threads: int | None = None,
        stages: bool = True) -> DamageResult:
    """Simulate ``trials`` attack sequences.

    Args:
        inputs: compiled tables: a whole attack (UnitInputs) or one pair's (one weapon group at
            one group of identical models).
        trials: number of trials, 1..MAX_TRIALS.
        seed: None draws one (and records it).
        threads: kernel threads (None: all cores; at most one per chunk, and no more than fit
            the memory budget: each has its own histogram rows); the result does not depend on it.
        stages: also count the per-stage breakdown (several draws per trial instead of one:
            about a quarter of the speed on the reference scenario).

    Raises:
        InputError: trials, seed or threads out of range.
        MatchupError: histograms too large for the memory limit (before anything is allocated).
    """
    check_trials(trials)
    u = as_unit(inputs)
    check_monte_carlo(u)
    if seed is None:
        seed = draw_seed()
    check_seed(seed)
    from .. import kernel

    bad = bad_threads_setting()
    if bad is not None:  # numba would print a traceback reading it, or fail
        raise InputError("must be a whole number of at least 1", where="NUMBA_NUM_THREADS (environment)", value=bad,
                         hint="unset it for every core, or set it to the most threads to use")
    check_threads(threads)
    trials, seed = int(trials), int(seed)  # numpy's integers too: the result records Python ints
    threads = None if threads is None else int(threads)
    sizes = chunk_plan(trials)
    n = sizes.size
    slots = monte_carlo_threads(u, min(threads or max_threads(), n))  # a row each: memory
    widths = histogram_widths(u)
    out_damage, out_models, out_stages, out_hazard, out_hazard_models, out_groups, out_weapons = (
        _rows(slots, w, np.int64) for w in widths)
    out_over = _rows(n, 2 * len(StageCount), np.float64)  # per chunk: see the kernel
    params = u.params.copy()
    if stages:
        params[..., Param.FLAGS] |= _STAGES
    group_offsets = np.array([0, *itertools.accumulate(m + 1 for m in u.group_models)], dtype=np.int64)
    unit = np.zeros(len(UnitParam), dtype=np.int64)
    unit[UnitParam.BODYGUARD] = u.bodyguard_groups
    unit[UnitParam.WOUNDS_LEFT] = u.wounds_left
    # the Hazardous tests, then the models that take their mortal wounds (models, W, Feel No Pain)
    attacker = np.array([[u.hazard_firing, 0, 0], *(u.hazard_groups or ((0, 0, 7),))], dtype=np.int64)
    streams = kernel.new_streams(chunk_seeds(seed, n))
    batch = np.zeros(n, dtype=np.int64)
    tables = kernel.simulation_tables(u.stages, u.rolls, u.roll_maps, params, u.stage_offsets, u.single)
    track = _track_tables(u, params)
    scratch = _rows(slots, scratch_width(u), np.int64)
    args = (u.stages, u.rolls, u.roll_maps, u.roll_flags, params, u.groups, unit, attacker, streams, batch,
            out_damage, out_models, u.stage_offsets, out_stages, out_hazard, out_hazard_models, out_over, out_groups,
            group_offsets, out_weapons, *tables, *track, _rows(slots, kernel.BUFFER, np.uint64), scratch)
    # jchunk is the last of the joint tables; the queue's mode and start the first and third of its tables
    queue = not u.single and kernel.takes_queue_path(params, u.rolls, attacker, tables[-1], track[0], track[2],
                                                     scratch)  # one pair's track tables are no_tables: no queue
    runs = kernel.prepare_simulation(args, live=_LIVE.get(), kernel="run_queue_chunks" if queue else "run_chunks")
    seconds = _run_batches(args, sizes, batch, slots, runs)
    damage, models, stage_counts, hazard, hazard_models, group_counts, weapon_sums = (
        rows[:, :w].sum(axis=0) for rows, w in zip((out_damage, out_models, out_stages, out_hazard, out_hazard_models,
                                                    out_groups, out_weapons), widths, strict=True))
    breakdown = _breakdown(u, stage_counts, out_over[:, :2 * len(StageCount)].sum(axis=0)) if stages else {}
    hazardous = u.hazard_firing > 0
    damage_dist, models_dist = Distribution.from_counts(damage), Distribution.from_counts(models)
    groups, weapons = (_parts.single(u, damage_dist, models_dist) if u.single else
                       (_groups(u, group_counts), _weapons(u, weapon_sums, trials)))
    return DamageResult(method="monte-carlo", trials=trials, seed=seed, damage=damage_dist,
                        models_destroyed=models_dist, target_models=u.target_models, seconds=seconds, stages=breakdown,
                        hazardous=Distribution.from_counts(hazard) if hazardous else None,
                        hazard_models=Distribution.from_counts(hazard_models) if hazardous else None,
                        groups=groups, weapons=weapons)


def _track_tables(u: UnitInputs, params: npt.NDArray[np.int64]) -> tuple[npt.NDArray[Any], ...]:
    """The allocation transition tables of a whole unit (mathhammer.kernel.transition); tables
    that leave every weapon group to the wound-by-wound loop for one pair (the fast path or its
    loop) or where none applies."""
    from .. import kernel

    if u.single:  # (run() relies on it: no_tables never take the queue path)
        return kernel.no_tables(u.stages.shape[0], u.stages.shape[1])
    return kernel.track_tables(u.stages, u.rolls, u.roll_maps, params, u.groups, u.bodyguard_groups,
                               tuple(row[0].stage_largest[StageCount.WOUNDS] for row in u.pairs))


def _groups(u: UnitInputs, counts: npt.NDArray[np.int64]) -> tuple[GroupResult, ...]:
    """Models destroyed in each group, from the groups' histograms end to end."""
    out = []
    start = 0
    for name, n, leader in zip(u.group_names, u.group_models, u.group_leader, strict=True):
        hist = counts[start:start + n + 1]
        out.append(GroupResult(name=name, models=n, models_destroyed=Distribution.from_counts(hist), leader=leader))
        start += n + 1
    return tuple(out)


def _weapons(u: UnitInputs, sums: npt.NDArray[np.int64], trials: int) -> tuple[WeaponShare, ...]:
    """Each weapon group's mean wounds taken and models destroyed."""
    return tuple(WeaponShare(name=name, count=count, damage_mean=int(sums[2 * g]) / trials,
                             models_destroyed_mean=int(sums[2 * g + 1]) / trials)
                 for g, (name, count) in enumerate(zip(u.weapon_names, u.counts, strict=True)))


def _rows(n: int, width: int, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """Zeroed rows of at least ``width`` columns for the kernel's outputs, one per thread (or
    chunk), padded so that no two rows share a 64-byte cache line: threads adding to
    neighbouring bins of one line slowed two threads to the speed of one, by chance of where
    the array happened to start."""
    return np.zeros((n, padded_width(width)), dtype=dtype)


def _breakdown(inputs: UnitInputs, counts: npt.NDArray[np.int64],
               over: npt.NDArray[np.float64]) -> dict[str, Distribution]:
    """The stage distributions from the summed stage counts. A capped stage
    (KernelInputs.stage_capped) gets its exact mean and sd from the sums of the values in its
    last bin (``over``, summed over the chunks)."""
    off = inputs.stage_offsets
    fnp = (inputs.params[..., Param.FLAGS] & Flag.FEEL_NO_PAIN).any()
    if not fnp:  # the kernel counts it once: the same
        before, after = StageCount.DAMAGE_BEFORE_FNP, StageCount.DAMAGE_AFTER_FNP
        counts[off[after]:off[after + 1]] = counts[off[before]:off[before + 1]]
        over[2 * after:2 * after + 2] = over[2 * before:2 * before + 2]
    out = {}
    for i, name in enumerate(StageCount.__members__):
        row = counts[off[i]:off[i + 1]]
        if inputs.stage_capped(i):
            out[name.lower()] = Distribution.from_capped_counts(row, STAGE_CAP, float(over[2 * i]),
                                                                float(over[2 * i + 1]))
        else:
            out[name.lower()] = Distribution.from_counts(row)
    return out
