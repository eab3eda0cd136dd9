"""Monte Carlo engine: validate, derive chunk seeds, call the kernel, wrap the counts."""

from __future__ import annotations

import secrets
import time

import numpy as np
import numpy.typing as npt

from ..codes import Flag, Param, StageCount
from ..compile import KernelInputs
from ..errors import InputError
from ..result import DamageResult, Distribution

__all__ = ["MAX_TRIALS", "chunk_plan", "chunk_seeds", "draw_seed", "run"]

#: Largest --trials accepted (about a minute on one core for a typical weapon).
MAX_TRIALS = 1_000_000_000
#: Trials per chunk before the chunk count reaches MAX_CHUNKS.
_CHUNK_TRIALS = 16_384
MAX_CHUNKS = 64


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
    return np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64)


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
    """
    check_trials(trials)
    if seed is None:
        seed = draw_seed()
    if seed < 0:
        raise InputError("must be 0 or positive", where="--seed", value=seed)
    from ..kernel import announce_compile, max_threads, set_threads, simulate_chunks

    if threads is not None:
        if not 1 <= threads <= max_threads():
            raise InputError(f"must be between 1 and {max_threads()}", where="--threads", value=threads)
        set_threads(threads)
    sizes = chunk_plan(trials)
    seeds = chunk_seeds(seed, sizes.size)
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
    args = (inputs.stages, inputs.rolls, inputs.roll_maps, inputs.roll_flags, params, seeds, sizes,
            out_damage, out_models, inputs.stage_offsets, out_stages, out_hazard, out_hazard_models)
    announce_compile(simulate_chunks, args)
    start = time.perf_counter()
    simulate_chunks(*args)
    seconds = time.perf_counter() - start
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
