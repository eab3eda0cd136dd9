"""The kernel: its constants agree with codes.py, counts add up, results are reproducible
and independent of the thread count, and the dice are fair."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from mathhammer import codes
from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.kernel import rng, simulate, transition
from mathhammer.model import Context, Matchup
from mathhammer.notation import parse_target, parse_weapon


def _inputs(weapon: str = "A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", target: str = "T4 SV3+ W2 MODELS10",
            **ctx: object):
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=parse_target(target),
                                   context=Context(**ctx))).inputs  # type: ignore[arg-type]


def test_kernel_constants_match_codes() -> None:
    assert (simulate.HIT, simulate.WOUND, simulate.SAVE, simulate.FEEL_NO_PAIN) == tuple(codes.Stage)
    assert (simulate.ATTACKS, simulate.SUSTAINED, simulate.DAMAGE) == tuple(codes.Roll)
    assert (simulate.P_FLAGS, simulate.P_FIRING, simulate.P_MODELS, simulate.P_WOUNDS,
            simulate.P_COMMAND) == tuple(codes.Param)
    assert (simulate.F_TORRENT, simulate.F_LETHAL, simulate.F_DEVASTATING, simulate.F_SPILL, simulate.F_FNP,
            simulate.F_HAZARDOUS, simulate.F_STAGES, simulate.F_PRECISION, simulate.F_SAME_SAVES) == \
        tuple(int(f) for f in codes.Flag)
    assert (simulate.U_BODYGUARD, simulate.U_WOUNDS_LEFT) == tuple(codes.UnitParam)
    assert simulate.REROLLABLE_BIT == codes.REROLLABLE
    assert (simulate.C_HIT, simulate.C_WOUND, simulate.C_DAMAGE, simulate.C_SAVE, simulate.C_ATTACKS) == \
        tuple(codes.Command)[1:]
    assert (simulate.R_REROLL, simulate.R_BELOW_AVERAGE) == tuple(int(f) for f in codes.RollFlag)
    assert simulate.N_STAGES == len(codes.StageCount)
    assert int(simulate.PAIRS) == codes.PAIRS
    assert transition.MAX_POSITIONS == codes.MAX_QUEUE_POSITIONS
    assert (simulate.T_LOOP, simulate.T_ALIKE, simulate.T_MOVE) == (transition.LOOP, transition.ALIKE, transition.MOVE)


def test_compiled_arrays_are_typed_and_read_only() -> None:
    k = _inputs()
    for arr, dtype in ((k.stages, np.int8), (k.rolls, np.int64), (k.roll_maps, np.int64), (k.params, np.int64),
                       (k.roll_flags, np.int8), (k.stage_offsets, np.int64)):
        assert arr.dtype == dtype and arr.flags.c_contiguous and not arr.flags.writeable


def test_every_trial_is_counted_once() -> None:
    r = montecarlo.run(_inputs(), trials=12_345, seed=1)
    assert int(r.damage.counts.sum()) == 12_345 == int(r.models_destroyed.counts.sum())


def test_chunk_plan_depends_on_trials_only() -> None:
    for n in (1, 7, 16_384, 16_385, 1_000_000, 10**9):
        plan = montecarlo.chunk_plan(n)
        assert plan.sum() == n and plan.min() >= 1 and plan.size <= montecarlo.MAX_CHUNKS


def test_same_seed_identical_counts() -> None:
    a = montecarlo.run(_inputs(), trials=200_000, seed=42)
    b = montecarlo.run(_inputs(), trials=200_000, seed=42)
    assert np.array_equal(a.damage.counts, b.damage.counts)
    assert np.array_equal(a.models_destroyed.counts, b.models_destroyed.counts)


def test_different_seeds_differ() -> None:
    a = montecarlo.run(_inputs(), trials=200_000, seed=1)
    b = montecarlo.run(_inputs(), trials=200_000, seed=2)
    assert not np.array_equal(a.damage.counts, b.damage.counts)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs at least 2 numba threads")
def test_one_thread_vs_two_identical() -> None:
    inputs = _inputs("A D6 BS4+ S5 AP-1 D D3 [LETHAL HITS, SUSTAINED HITS D3, DEVASTATING WOUNDS]", "T4 SV3+ W2 MODELS10 FNP5+")
    one = montecarlo.run(inputs, trials=300_000, seed=9, threads=1)
    two = montecarlo.run(inputs, trials=300_000, seed=9, threads=2)
    assert np.array_equal(one.damage.counts, two.damage.counts)
    assert np.array_equal(one.models_destroyed.counts, two.models_destroyed.counts)


@numba.njit
def _d6_faces(seed: np.uint64, n: int) -> np.ndarray:
    counts = np.zeros(7, np.int64)
    buf = np.empty(rng.BUFFER, np.uint64)
    pos, s = rng.BUFFER, seed
    for _ in range(n):
        f, pos, s = rng.d6(buf, pos, s)
        counts[f] += 1
    return counts


@pytest.mark.statistical
def test_d6_faces_uniform_and_in_range() -> None:
    n = 6_000_000
    counts = _d6_faces(np.uint64(7), n)
    assert counts[0] == 0 and counts.sum() == n
    expected = n / 6
    chi2 = float(((counts[1:] - expected) ** 2 / expected).sum())
    assert chi2 < 35.9, chi2


def test_digit_is_exact_high_word() -> None:
    """floor(base * pool / 2**64) computed from 32-bit halves equals Python's big-int result."""
    @numba.njit
    def one(pool, base):
        return rng.digit(pool, base)

    gen = np.random.default_rng(0)
    for pool in list(gen.integers(0, 2**63, size=200, dtype=np.uint64) * np.uint64(2)) + [np.uint64(2**64 - 1), np.uint64(0)]:
        for base in (6, 33):
            d, nxt = one(np.uint64(pool), np.uint64(base))
            assert d == (int(pool) * base) >> 64
            assert int(nxt) == (int(pool) * base) % 2**64


def test_buffered_stream_is_the_splitmix64_sequence() -> None:
    @numba.njit
    def both(seed):
        buf = np.empty(rng.BUFFER, np.uint64)
        after = rng.refill(buf, seed)
        seq = np.empty(rng.BUFFER, np.uint64)
        s = seed
        for i in range(rng.BUFFER):
            s, seq[i] = rng.splitmix64(s)
        return buf, seq, after, s

    buf, seq, after, s = both(np.uint64(2**63 + 12345))
    assert np.array_equal(buf, seq) and after == s
    # splitmix64's published first output for seed 0 (Vigna's reference implementation)
    assert both(np.uint64(0))[0][0] == np.uint64(0xE220A8397B1DCDAF)


def test_only_the_kernel_package_imports_numba() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "mathhammer"
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if "kernel" not in p.relative_to(root).parts
                 and re.search(r"^\s*(import numba|from numba)", p.read_text(), re.MULTILINE)]
    assert offenders == []
