"""Issue 8 item 5: short runs on two threads. Cache-line padding of the threads' rows, the
remembered tables, the quick argument check before a kernel call, and kernel caches that go
stale when any kernel source changes. No timings here (benchmarks/bench_kernel.py has them)."""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import numba
import numpy as np
import pytest

from mathhammer import kernel
from mathhammer.compile import as_unit, compile_matchup, histogram_widths, monte_carlo_bytes, padded_width
from mathhammer.engine import montecarlo
from mathhammer.errors import InputError
from mathhammer.kernel import _jit, binomial, placement
from mathhammer.model import Context, Matchup, RerollPolicy
from mathhammer.notation import parse_target, parse_weapon

LINE = 64  # bytes of a cache line


def _inputs(weapon: str = "A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", target: str = "T4 SV3+ W2 MODELS10") -> Any:
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=parse_target(target),
                                   context=Context(reroll_hits=RerollPolicy.ONES))).inputs


# --- padding ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [*range(1, 70), 1_000_001])
def test_padded_rows_never_share_a_cache_line(width: int) -> None:
    """Rows of 8-byte bins: the used part of one row ends at least a cache line before the next
    row's used part starts, wherever the array starts."""
    padded = padded_width(width)
    assert padded >= width and padded % 8 == 0
    gap = (padded - width) * 8
    assert gap >= LINE


def test_monte_carlo_bytes_counts_the_padding() -> None:
    inputs = _inputs()
    # damage 0..20, models 0..10, the stages, Hazardous (none: 1 bin each), the one group's
    # models 0..10, one weapon group's 2 sums; then the per-trial scratch (1 group + 1 weapon)
    widths = [*histogram_widths(as_unit(inputs)), 2]
    assert widths[:2] == [21, 11] and widths[3:] == [1, 1, 11, 2, 2]
    rows = sum((w + 7) // 8 * 8 + 8 for w in widths)
    over = (2 * 10 + 7) // 8 * 8 + 8
    assert monte_carlo_bytes(inputs, threads=2, chunks=3) == 8 * (2 * rows + 3 * over)


def test_padding_does_not_change_the_counts() -> None:
    """The padded columns stay out of the results: the damage histogram stops at the unit's
    20 wounds and the models at 10, and every trial is counted once."""
    r = montecarlo.run(_inputs(), trials=5_000, seed=3, threads=2)
    assert r.damage.counts.size <= 21 and r.models_destroyed.counts.size <= 11
    assert int(r.damage.counts.sum()) == int(r.models_destroyed.counts.sum()) == 5_000
    for name, stage in r.stages.items():
        assert int(stage.counts.sum()) == 5_000, name


# --- remembered tables --------------------------------------------------------------------------------

def _fresh_tables(inputs: Any, params: Any) -> tuple[Any, ...]:
    jt = kernel.joint_tables_for(inputs.stages, inputs.rolls, inputs.roll_maps, params, inputs.stage_offsets)
    kinds = ("save_fail", "fnp_lost") if kernel.takes_fast_path(params, jt[4]) else binomial.KINDS
    t, a = binomial.tables(inputs.stages, kinds)
    return (t[None, None], a[None, None], *jt[:3], jt[3][None], jt[4][None])


def _tables(inputs: Any, params: Any) -> tuple[Any, ...]:
    """kernel.simulation_tables for one pair's tables (stacked as one weapon group at one group)."""
    return kernel.simulation_tables(inputs.stages[None, None], inputs.rolls[None, None],
                                    inputs.roll_maps[None, None], params[None, None], inputs.stage_offsets)


@pytest.mark.parametrize("weapon", ["A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "A D6 BS4+ S8 AP-2 D3 [LETHAL HITS]",
                                    "A3 BS2+ S12 AP-3 D6 [DEVASTATING WOUNDS]"])
def test_remembered_tables_are_the_tables_built_afresh(weapon: str) -> None:
    inputs = _inputs(weapon)
    for flags in (inputs.params.copy(), inputs.params.copy()):
        got = _tables(inputs, flags)
        want = _fresh_tables(inputs, flags)
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_remembered_tables_are_copies_and_keyed_by_every_input() -> None:
    inputs = _inputs()
    first = _tables(inputs, inputs.params)
    first[0][...] = 0  # a caller scribbling on its tables
    second = _tables(inputs, inputs.params)
    assert second[0].any() and np.array_equal(second[0], _fresh_tables(inputs, inputs.params)[0])
    other = _inputs("A10 BS4+ S5 AP-1 D2 [SUSTAINED HITS 1]")  # other Hit odds, same shapes
    third = _tables(other, other.params)
    assert not all(np.array_equal(a, b) for a, b in zip(second, third, strict=True))


def test_table_sets_are_reused_and_only_a_few_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = kernel.tables

    def counting(*args: Any) -> Any:
        built.append(1)
        return real(*args)

    monkeypatch.setattr(kernel, "tables", counting)
    monkeypatch.setattr(kernel, "_TABLES", {})
    first = _inputs("A4 BS2+ S3 AP-1 D1")
    _tables(first, first.params)
    assert built == [1]
    _tables(first, first.params)
    assert built == [1]  # remembered
    for bs in range(2, 7):
        for s in range(3, 10):
            i = _inputs(f"A4 BS{bs}+ S{s} AP-1 D1")
            _tables(i, i.params)
    assert 0 < len(kernel._TABLES) <= kernel._TABLES_KEPT
    built.clear()
    _tables(first, first.params)
    assert built == [1]  # pushed out by the 34 others: built again


# --- the quick check before a call ----------------------------------------------------------------

def test_a_new_argument_layout_still_gets_its_own_machine_code() -> None:
    @numba.njit
    def total(a):  # pragma: no cover - compiled
        return a.sum()

    writable = np.arange(4, dtype=np.int64)
    kernel.prepare(total, (writable,))
    kernel.prepare(total, (writable,))  # known now: no second signature
    assert len(total.overloads) == 1
    readonly = writable.copy()
    readonly.flags.writeable = False  # numba types it apart (a readonly array)
    kernel.prepare(total, (readonly,))
    kernel.prepare(total, (writable.astype(np.int32),))
    assert len(total.overloads) == 3


# --- kernel caches go stale with any source of the package ---------------------------------------

_MAIN = '''import numba
import helper


@numba.njit(cache=True)
def value():
    return helper.number()
'''
_HELPER = '''import numba


@numba.njit
def number():
    return {n}
'''


def _load(folder: Path, n: int, stamp: bool) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_stale_main_{n}_{stamp}_{id(folder)}", folder / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if stamp:
        _jit.stamp_with_sources(module.value, _jit.sources_digest(folder))
    return module


@pytest.mark.parametrize("stamp", [True, False])
def test_a_changed_helper_file_compiles_the_kernel_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           stamp: bool) -> None:
    """With the sources' digest in the stamp, a change to a helper in another file is seen; plain
    numba (stamp False: the control) runs the stale machine code."""
    folder = tmp_path / f"pkg_{stamp}"
    folder.mkdir()
    (folder / "main.py").write_text(_MAIN)
    (folder / "helper.py").write_text(_HELPER.format(n=1))
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    # no .pyc: helper.py rewritten within the same second at the same size would pass Python's
    # own staleness check (time in seconds and size), and the old helper would be imported
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "helper", raising=False)
    first = _load(folder, 0, stamp).value
    kernel.prepare(first, ())
    assert first() == 1
    (folder / "helper.py").write_text(_HELPER.format(n=2))
    monkeypatch.delitem(sys.modules, "helper", raising=False)
    again = _load(folder, 1, stamp).value
    kernel.prepare(again, ())
    if not stamp and again() == 2:
        pytest.skip("this numba marks a cache stale when a helper's file changes: the control shows nothing")
    assert again() == (2 if stamp else 1)


def test_every_kernel_carries_the_package_digest() -> None:
    stamp = kernel.run_chunks._cache._cache_file._source_stamp
    if _jit.LOCATION.enabled:
        assert stamp[1] == _jit.SOURCES == _jit.sources_digest(Path(_jit.__file__).parent)


# --- the thread split reads the right arguments ----------------------------------------------------

def test_simulate_chunks_reads_streams_and_rows_by_name() -> None:
    """simulate_chunks finds the chunks and the threads' rows by position: the positions must
    be those of run_chunks' ``streams`` and ``out_damage`` (a shifted signature once made every
    run single-threaded without failing anything)."""
    names = kernel.run_chunks.py_func.__code__.co_varnames
    assert names[kernel._ARG_STREAMS] == "streams" and names[kernel._ARG_OUT_DAMAGE] == "out_damage"


def test_two_threads_run_both_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long enough run on two threads hands shares to both (rows 0 and 1), with one
    ``claims`` counter per call that both share."""
    seen: list[tuple[Any, int]] = []
    real_prepare = kernel.prepare_simulation

    def prepare(*args: Any, **kw: Any) -> Any:
        real = real_prepare(*args, **kw)  # the native kernel or numba's: the same calls

        def spy(*args: Any) -> int:
            seen.append((args[-2], args[-1]))  # the call's counters (kept alive) and the share's row
            return int(real(*args))

        return spy

    monkeypatch.setattr(kernel, "prepare_simulation", prepare)
    montecarlo.run(_inputs(), trials=200_000, seed=1, threads=2)
    # the call may end before the other thread starts its share (it finds no chunk left): a share
    # that waits for it, queued behind it on that thread, makes sure it has been seen
    streams = np.zeros((2, 2), dtype=np.uint64)
    args = [None] * 10
    args[kernel._ARG_STREAMS] = streams
    with kernel.worker_pool(2) as pool:
        assert pool is not None
        pool.run((*args, None), 2, lambda *a: 0)  # "no chunk finished" here: wait for the other share
    rows = [{slot for counter, slot in seen if counter is c} for c, _ in seen]
    assert {0, 1} in rows, seen


# --- chunks claimed one at a time -----------------------------------------------------------------

def test_fetch_add_is_atomic_across_threads() -> None:
    """Two threads taking numbers from one counter without the GIL, started together: every
    number is handed out exactly once and none is lost (a plain load-add-store in its place
    handed numbers out twice in this loop on a 2-core machine)."""
    import threading

    from mathhammer.kernel.claim import fetch_add

    @numba.njit(nogil=True)
    def take_many(counter: Any, n: int, hits: Any) -> None:
        for _ in range(n):
            hits[fetch_add(counter, 0, 1)] += 1

    n = 2_000_000
    counter = np.zeros(1, dtype=np.int64)
    hits = np.zeros(2 * n + 1, dtype=np.int64)
    take_many(counter, 1, hits)  # compiled outside the race
    counter[0], hits[:] = 0, 0
    start = threading.Barrier(2)

    def take() -> None:
        start.wait()
        take_many(counter, n, hits)

    threads = [threading.Thread(target=take) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter[0] == 2 * n
    assert (hits[:2 * n] == 1).all()


def test_each_chunk_runs_once_whoever_claims_it() -> None:
    """A thread that starts after the others have claimed every chunk runs none of them: the
    counter passes the chunk count once per thread and the rows hold each trial once, the
    same counts as one thread."""
    inputs = _inputs()
    calls: list[Any] = []
    real = kernel.simulate_chunks

    def spy(*args: Any, **kw: Any) -> None:
        calls.append(args)
        real(*args, **kw)

    one = montecarlo.run(inputs, trials=50_000, seed=5, threads=1)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(kernel, "simulate_chunks", spy)
        montecarlo.run(inputs, trials=50_000, seed=5, threads=2)  # a histogram row for each thread
    finally:
        mp.undo()
    args = calls[-1]
    n_chunks = args[kernel._ARG_STREAMS].shape[0]
    # replay the last call by hand: row 0 takes every chunk, then a late row 1 finds none left
    out = args[kernel._ARG_OUT_DAMAGE]
    before = out.copy()
    claims = np.zeros(2, dtype=np.int64)
    streams = args[kernel._ARG_STREAMS].copy()
    replay = list(args)
    replay[kernel._ARG_STREAMS] = streams
    assert kernel.run_chunks(*replay, claims, 0) == n_chunks  # every chunk finished, and it says so
    assert list(claims) == [n_chunks + 1, n_chunks]
    assert out.shape[0] == 2
    row1 = out[1].copy()
    added = out[0] - before[0]
    assert kernel.run_chunks(*replay, claims, 1) == n_chunks
    assert list(claims) == [n_chunks + 2, n_chunks]
    assert np.array_equal(out[0] - before[0], added) and np.array_equal(out[1], row1)
    assert int(added.sum()) == int(replay[9].sum())  # each chunk's batch of trials counted once
    assert np.array_equal(one.damage.counts, montecarlo.run(inputs, trials=50_000, seed=5, threads=2).damage.counts)


def test_the_call_ends_when_every_chunk_is_done() -> None:
    """The calling thread returns as soon as its share ends with every chunk finished, without
    waiting for a share that has not reported; when chunks are left unfinished it waits, and
    an error raised in another share is raised here."""
    import threading

    n_chunks = 4
    args: list[Any] = [None] * 10
    args[kernel._ARG_STREAMS] = np.zeros((n_chunks, 2), dtype=np.uint64)
    release, reported = threading.Event(), threading.Event()
    pool = kernel.Workers(1)

    def all_done_here(*a: Any) -> int:
        if a[-1] == 0:
            return n_chunks  # the calling thread: every chunk finished
        release.wait(10)  # the other share is held: it has not reported yet
        reported.set()
        return n_chunks

    pool.run((*args, None), 2, all_done_here)  # returns although the other share is still held
    assert not reported.is_set()
    release.set()
    assert reported.wait(10)

    def one_left_and_it_fails(*a: Any) -> int:
        if a[-1] == 0:
            return n_chunks - 1  # a chunk is still running on the other thread
        raise ZeroDivisionError("in the other share")

    with pytest.raises(ZeroDivisionError, match="other share"):
        pool.run((*args, None), 2, one_left_and_it_fails)


def test_an_error_in_another_share_keeps_no_run_alive_once_dropped() -> None:
    """The raised error's traceback holds the frames it passed through, not a cycle back to
    itself: once the caller drops it, the call's arrays go at once, without waiting for
    Python's cycle collector (switched off here)."""
    import gc
    import weakref

    streams = np.zeros((4, 2), dtype=np.uint64)
    args: list[Any] = [None] * 10
    args[kernel._ARG_STREAMS] = streams
    watched = weakref.ref(streams)
    pool = kernel.Workers(1)

    def one_left_and_it_fails(*a: Any) -> int:
        if a[-1] == 0:
            return 3  # a chunk is still running on the other thread
        raise ZeroDivisionError("in the other share")

    gc.collect()
    gc.disable()
    try:
        try:
            pool.run((*args, None), 2, one_left_and_it_fails)
        except ZeroDivisionError:
            pass
        del args, streams
        assert watched() is None
    finally:
        gc.enable()


# --- placement of the idle threads ------------------------------------------------------------------

_PER_THREAD_AFFINITY = (hasattr(os, "sched_setaffinity") and placement.current_cpu() is not None
                        and len(os.sched_getaffinity(0)) >= 2)


@pytest.mark.skipif(not _PER_THREAD_AFFINITY, reason="needs per-thread CPU affinity (Linux) and two usable CPUs")
def test_idle_threads_wake_off_the_calling_threads_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before a share goes out, its thread may run anywhere the calling thread may except on the
    CPU the caller is on (Linux would often wake it there, where it waits for the caller); once
    awake, it gives itself the whole set back, so it wakes elsewhere and is then free to move.
    The calling thread's own affinity is never changed."""
    mine = os.sched_getaffinity(0)
    caller = threading.get_native_id()
    real = os.sched_setaffinity
    calls: list[tuple[int, int, frozenset[int], int | None]] = []

    def recorded(native_id: int, cpus: Any) -> None:
        calls.append((threading.get_native_id(), native_id, frozenset(cpus), placement.current_cpu()))
        real(native_id, cpus)

    monkeypatch.setattr(os, "sched_setaffinity", recorded)
    pool = kernel.Workers(1)
    worker = pool._placement._ids[0]
    args: list[Any] = [None] * 10
    args[kernel._ARG_STREAMS] = np.zeros((1, 2), dtype=np.uint64)
    pool.run((*args, None), 2, lambda *a: 0)  # no chunk finished here: waits for the other share
    pinned, released = calls
    assert pinned[:2] == (caller, worker) and pinned[3] is not None
    assert pinned[2] == frozenset(mine) - {pinned[3]}  # the CPU it was on when it placed the thread
    assert released[:3] == (worker, 0, frozenset(mine))  # the thread itself, once awake
    assert released[3] in pinned[2]  # it woke where it was placed
    assert os.sched_getaffinity(worker) == mine and os.sched_getaffinity(0) == mine


def _fake_affinity(monkeypatch: pytest.MonkeyPatch, allowed: set[int], cpu: int,
                   refuse: int | None = None) -> list[tuple[int, frozenset[int]]]:
    """os.sched_getaffinity giving ``allowed``, a caller on ``cpu``, and os.sched_setaffinity
    recording its calls (refusing thread ``refuse``)."""
    calls: list[tuple[int, frozenset[int]]] = []

    def set_affinity(native_id: int, cpus: Any) -> None:
        calls.append((native_id, frozenset(cpus)))
        if native_id == refuse:
            raise OSError(3, "No such process")

    monkeypatch.setattr(os, "sched_setaffinity", set_affinity, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(allowed), raising=False)
    monkeypatch.setattr(placement, "current_cpu", lambda: cpu)
    return calls


def _placed(ids: list[int]) -> placement.Placement:
    made = placement.Placement(ids)
    made._enabled = True  # as on Linux, whatever this platform is
    return made


def test_placement_places_the_threads_that_get_a_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """The threads of the call's shares, on every call, on the caller's CPUs but its own; none
    when the caller has only one CPU; the whole set returned for the threads to take back."""
    calls = _fake_affinity(monkeypatch, {0, 1, 2}, cpu=1)
    made = _placed([7, 8, 9])
    assert made.away([0, 1]) == frozenset({0, 1, 2})
    assert made.away([0]) == frozenset({0, 1, 2})
    assert made.away([]) is None
    assert calls == [(7, frozenset({0, 2})), (8, frozenset({0, 2})), (7, frozenset({0, 2}))]
    calls = _fake_affinity(monkeypatch, {1}, cpu=1)
    assert made.away([0, 1]) is None and calls == []


def test_placement_of_chosen_threads_touches_only_those(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads to be woken are placed by position (those already awake are left alone: they would
    never take the whole set back)."""
    calls = _fake_affinity(monkeypatch, {0, 1, 2}, cpu=2)
    made = _placed([7, 8, 9])
    assert made.away([1]) == frozenset({0, 1, 2})
    assert made.away([0, 2]) == frozenset({0, 1, 2})
    assert calls == [(8, frozenset({0, 1})), (7, frozenset({0, 1})), (9, frozenset({0, 1}))]


def test_a_refused_placement_is_undone_and_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread that is gone (or a CPU set the system refuses) turns placement off without an
    error, the threads placed before it given the whole set back: it only ever saves time."""
    calls = _fake_affinity(monkeypatch, {0, 1}, cpu=0, refuse=8)
    made = _placed([7, 8])
    assert made.away([0, 1]) is None
    assert made.away([0, 1]) is None
    assert calls == [(7, frozenset({1})), (8, frozenset({1})), (7, frozenset({0, 1}))]


def test_restore_gives_placed_threads_their_set_back_from_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a thread that runs no Python once woken (one dozing in its wait for shares): the
    threads named get the set back, nothing happens without one, and a refusal turns placement
    off."""
    calls = _fake_affinity(monkeypatch, {0, 1, 2}, cpu=2, refuse=9)
    made = _placed([7, 8, 9])
    made.restore([0, 1], None)
    made.restore([], frozenset({0, 1, 2}))
    assert calls == []
    made.restore([1], frozenset({0, 1, 2}))
    assert calls == [(8, frozenset({0, 1, 2}))] and made._enabled
    made.restore([2], frozenset({0, 1, 2}))  # refused
    assert not made._enabled and made.away([0]) is None


def test_release_gives_the_calling_thread_its_set_back(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_affinity(monkeypatch, {0, 1}, cpu=0, refuse=0)
    placement.release(None)
    placement.release(frozenset({0, 1}))  # refused: left where it is, no error
    assert calls == [(0, frozenset({0, 1}))]


def test_placement_in_a_forked_child_touches_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A placement made before a fork names the parent's threads: in the child it does nothing."""
    calls = _fake_affinity(monkeypatch, {0, 1}, cpu=0)
    made = _placed([7])
    parent = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: parent + 1)
    assert made.away([0]) is None and calls == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_starts_idle_threads_of_its_own() -> None:
    """The parent's idle threads do not exist in a forked child: a child's two-thread run starts
    its own (before, it handed a share to a queue nobody served, which kept that run's arrays
    for ever), and gives the parent's counts."""
    import select
    import signal
    import warnings

    inputs = _inputs()
    expected = montecarlo.run(inputs, trials=100_000, seed=3, threads=2)
    assert kernel._WORKERS  # the parent's threads
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (3.12+: forking a process with threads)
        pid = os.fork()
    if pid == 0:  # the child: report, and never return into pytest
        try:
            got = montecarlo.run(inputs, trials=100_000, seed=3, threads=2)
            own = any(t.name == "mathhammer-kernel" for t in threading.enumerate())
            same = bool(np.array_equal(got.damage.counts, expected.damage.counts))
            os.write(write, bytes([own, same]))
        finally:
            os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 120)
        report = os.read(read, 2) if ready else b"timed out"
    finally:
        os.close(read)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert report == bytes([True, True])


def test_the_calling_thread_watches_the_count_of_finished_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its share done, the calling thread returns once the count says every chunk is finished,
    without waiting for the others' reports; a count that stays short sends it to wait for them."""
    monkeypatch.setattr(kernel, "_WATCH_SECONDS", 0.0002)
    claims = np.array([5, 4], dtype=np.int64)
    assert not kernel._finished_soon(claims, 5)
    claims[1] = 5
    assert kernel._finished_soon(claims, 5)
    assert not kernel._finished_soon(None, 5)  # (a call without counters: wait for the reports)
    monkeypatch.setattr(kernel, "_WATCH_SECONDS", 0.0)
    assert not kernel._finished_soon(claims, 5)


@pytest.mark.parametrize("value", ["", " ", "abc", "1.5", "0", "-3"])
def test_a_thread_count_numba_cannot_take_is_an_input_error(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """numba, once imported, prints a warning with a traceback for a NUMBA_NUM_THREADS it
    cannot read (an empty one too) and fails for one below 1; a run refuses it first, naming it."""
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    assert montecarlo.bad_threads_setting() == value
    with pytest.raises(InputError, match=r"NUMBA_NUM_THREADS \(environment\): must be a whole number of at least 1"):
        montecarlo.run(_inputs(), trials=100, seed=1)


@pytest.mark.parametrize(("value", "threads"), [("1", 1), (" 2 ", 2), ("+3", 3)])
def test_a_thread_count_numba_takes_is_the_default(value: str, threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    assert montecarlo.bad_threads_setting() is None and kernel.max_threads() == threads


def test_a_bad_thread_count_on_the_command_line_is_one_error_line(tmp_path: Path) -> None:
    """Whether the kernel would come from numba (which would print its traceback) or not."""
    import subprocess

    env = {**os.environ, "NUMBA_NUM_THREADS": "abc", "MATHHAMMER_NATIVE_KERNELS": "0",
           "NUMBA_CACHE_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "mathhammer", "shoot", "railgun", "-t", "knight", "--trials", "100"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines()[0] == ("Error: NUMBA_NUM_THREADS (environment): must be a whole number of at least 1"
                                        " (got 'abc')")
    assert "Traceback" not in r.stderr and "compiling" not in r.stderr
