"""Monte Carlo engine: validate, derive chunk seeds, call the kernel, wrap the counts.

The kernel is called in short batches (a fraction of a second each) rather than once: a Ctrl-C
reaches Python only between numba calls. Each chunk's random stream carries over from batch to
batch, so the counts depend on the seed and the number of trials only, not on how the trials
were batched nor on the thread count.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from ..codes import Flag, Param, StageCount
from ..compile import KernelInputs, check_monte_carlo
from ..errors import InputError
from ..limits import MAX_CHUNKS, MAX_TRIALS
from ..result import DamageResult, Distribution

__all__ = ["MAX_TRIALS", "chunk_plan", "chunk_seeds", "draw_seed", "run"]

#: Trials per chunk before the chunk count reaches MAX_CHUNKS.
_CHUNK_TRIALS = 16_384
#: Aimed-at duration of one kernel call: how long a Ctrl-C may wait.
BATCH_SECONDS = 0.2
#: Most a batch may grow over the previous one (timings of tiny batches are noisy).
_MAX_GROWTH = 16


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
    """The only place seeds are derived: one independent stream per chunk."""
    return np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64).astype(np.uint64, copy=False)


def next_batch(trials: int, seconds: float) -> int:
    """Trials per chunk for the next batch, after a batch of ``trials`` per chunk took ``seconds``."""
    if seconds <= 0:
        return trials * _MAX_GROWTH
    return max(1, min(trials * _MAX_GROWTH, int(trials * BATCH_SECONDS / seconds)))


def _run_batches(args: tuple[Any, ...], sizes: npt.NDArray[np.int64], batch: npt.NDArray[np.int64]) -> float:
    """Call the kernel until chunk c has run ``sizes[c]`` trials, each call about BATCH_SECONDS
    long (``batch`` is the kernel's trials-per-chunk argument in ``args``). Returns the seconds."""
    from .. import kernel

    start = time.perf_counter()
    left = sizes.copy()
    per_chunk = 1  # the first batches measure the speed; KeyboardInterrupt propagates between calls
    while left.any():
        np.minimum(left, per_chunk, out=batch)
        t0 = time.perf_counter()
        kernel.simulate_chunks(*args)
        left -= batch
        per_chunk = next_batch(per_chunk, time.perf_counter() - t0)
    return time.perf_counter() - start


def check_trials(trials: int) -> None:
    """Raises InputError unless 1 <= trials <= MAX_TRIALS."""
    if not 1 <= trials <= MAX_TRIALS:
        raise InputError(f"must be between 1 and {MAX_TRIALS:,}", where="--trials", value=trials)


def run(inputs: KernelInputs, *, trials: int, seed: int | None = None, threads: int | None = None,
        stages: bool = True) -> DamageResult:
    """Simulate ``trials`` attack sequences.

    Args:
        inputs: compiled tables.
        trials: number of trials, 1..MAX_TRIALS.
        seed: None draws one (and records it).
        threads: kernel threads (None: all cores); the result does not depend on it.
        stages: also count the per-stage breakdown (costs about a fifth of the speed).

    Raises:
        InputError: trials, seed or threads out of range.
        MatchupError: histograms too large for the memory limit (before anything is allocated).
    """
    check_trials(trials)
    check_monte_carlo(inputs)
    if seed is None:
        seed = draw_seed()
    if seed < 0:
        raise InputError("must be 0 or positive", where="--seed", value=seed)
    from .. import kernel

    if threads is not None and not 1 <= threads <= kernel.max_threads():
        raise InputError(f"must be between 1 and {kernel.max_threads()}", where="--threads", value=threads)
    sizes = chunk_plan(trials)
    n = sizes.size
    firing = int(inputs.params[Param.FIRING_MODELS])
    out_damage = np.zeros((n, inputs.damage_max + 1), dtype=np.int64)
    out_models = np.zeros((n, inputs.target_models + 1), dtype=np.int64)
    out_stages = np.zeros((n, int(inputs.stage_offsets[-1])), dtype=np.int64)
    out_hazard = np.zeros((n, inputs.hazard_max + 1), dtype=np.int64)
    out_hazard_models = np.zeros((n, firing + 1), dtype=np.int64)
    params = inputs.params.copy()
    if stages:
        params[Param.FLAGS] |= Flag.STAGES
    streams = kernel.new_streams(chunk_seeds(seed, n))
    batch = np.zeros(n, dtype=np.int64)
    args = (inputs.stages, inputs.rolls, inputs.roll_maps, inputs.roll_flags, params, streams, batch,
            out_damage, out_models, inputs.stage_offsets, out_stages, out_hazard, out_hazard_models)
    kernel.prepare(kernel.simulate_chunks, args)
    with kernel.threads(threads):
        seconds = _run_batches(args, sizes, batch)
    stage_counts = out_stages.sum(axis=0)
    off = inputs.stage_offsets
    breakdown = {name.lower(): Distribution.from_counts(stage_counts[off[i]:off[i + 1]])
                 for i, name in enumerate(StageCount.__members__)} if stages else {}
    hazardous = bool(inputs.params[Param.FLAGS] & Flag.HAZARDOUS)
    return DamageResult(method="monte-carlo", trials=trials, seed=seed,
                        damage=Distribution.from_counts(out_damage.sum(axis=0)),
                        models_destroyed=Distribution.from_counts(out_models.sum(axis=0)),
                        target_models=inputs.target_models, seconds=seconds, stages=breakdown,
                        hazardous=Distribution.from_counts(out_hazard.sum(axis=0)) if hazardous else None,
                        hazard_models=Distribution.from_counts(out_hazard_models.sum(axis=0)) if hazardous else None)
