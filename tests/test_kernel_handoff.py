"""Issue 8 item 5: kernel shares handed to threads that are already awake
(mathhammer.kernel.handoff). The functions are built here from the same IR the native files
carry, beside an entry point of the tests' own that counts its calls and can be held up, and
driven through every state a box goes through. No timings (benchmarks/bench_kernel.py has them):
the waits below only bound how long a broken protocol may hang the test."""

from __future__ import annotations

import platform
import threading
import time
from typing import Any

import numpy as np
import pytest

from mathhammer import kernel
from mathhammer.kernel import handoff
from mathhammer.kernel.handoff import (
    ASLEEP,
    BOX,
    CALL,
    DOZING,
    FLAT,
    GO,
    LINGER,
    POSTING,
    RESULT,
    RUNNING,
    SHARES,
    STATE,
    WAITING,
)

pytestmark = pytest.mark.skipif(not handoff.supported_triple(platform.machine()),
                                reason="the handoff functions are generated for x86-64 only")

#: Fields of the test entry point's flat arguments: calls so far, hold (the call waits while it
#: is not 0), the value it returns.
CALLS, HOLD, VALUE = 0, 1, 2
#: Long enough never to end on its own in a test, short enough not to hang a broken one for ever.
FOREVER = 10.0


class Built:
    """The handoff functions and a test entry point, loaded by LLVM (kept alive with this)."""

    def __init__(self) -> None:
        import llvmlite.binding as ll
        from llvmlite import ir

        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        ll.initialize_native_asmparser()  # (the futex call is inline assembly)
        module = ir.Module(name="handoff_test")
        module.triple = ll.get_default_triple()
        handoff.add_functions(module)
        i64 = ir.IntType(64)
        entry = ir.Function(module, ir.FunctionType(i64, [i64.as_pointer()]), name="counting_entry")
        start, wait, done = (entry.append_basic_block(n) for n in ("start", "wait", "done"))
        b = ir.IRBuilder(start)
        flat = entry.args[0]
        b.atomic_rmw("add", b.gep(flat, [ir.Constant(i64, CALLS)]), ir.Constant(i64, 1), "seq_cst")
        b.branch(wait)
        b = ir.IRBuilder(wait)
        held = b.load_atomic(b.gep(flat, [ir.Constant(i64, HOLD)]), "acquire", 8)
        b.cbranch(b.icmp_signed("!=", held, ir.Constant(i64, 0)), wait, done)
        b = ir.IRBuilder(done)
        b.ret(b.load(b.gep(flat, [ir.Constant(i64, VALUE)])))
        self._context = ll.create_context()
        parsed = ll.parse_assembly(str(module), context=self._context)
        parsed.verify()
        target = ll.Target.from_default_triple().create_target_machine(jit=True)
        self._engine = ll.create_mcjit_compiler(parsed, target)
        self._engine.finalize_object()
        addresses = {name: int(self._engine.get_function_address(name)) for name in handoff.FUNCTIONS}
        self.functions = handoff.Handoff(addresses)
        self.entry = int(self._engine.get_function_address("counting_entry"))
        self.functions.ticks_per_second()
        time.sleep(handoff._CALIBRATION_SECONDS * 1.2)
        self.rate = self.functions.ticks_per_second()


@pytest.fixture(scope="module")
def built() -> Built:
    return Built()


def _box(built: Built, state: int = WAITING, linger: float = FOREVER) -> Any:
    box = np.zeros(BOX, dtype=np.int64)
    box[STATE] = state
    box[LINGER] = int(linger * built.rate)
    return box


def _serving(built: Built, box: Any) -> tuple[threading.Thread, list[int]]:
    """A thread waiting on ``box`` (its serve's result in the list once it returns)."""
    returned: list[int] = []
    thread = threading.Thread(target=lambda: returned.append(int(built.functions.serve(box.ctypes.data))), daemon=True)
    thread.start()
    return thread, returned


def _until(test: Any) -> None:
    deadline = time.monotonic() + FOREVER
    while not test():
        assert time.monotonic() < deadline, "the box never got there"
        time.sleep(0.0005)


def _collect(built: Built, box: Any) -> None:
    """Take the share back, or wait for it to end."""
    if not built.functions.take_back(box.ctypes.data):
        _until(lambda: built.functions.wait(box.ctypes.data, int(0.001 * built.rate)))


def test_a_posted_share_runs_once_on_the_waiting_thread_which_then_waits_for_the_next(built: Built) -> None:
    box = _box(built)
    thread, returned = _serving(built, box)
    flat = np.array([0, 0, 42], dtype=np.int64)
    for n in (1, 2):
        assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 1
        _until(lambda n=n: box[SHARES] == n)  # (collecting it sooner would take it back)
        _collect(built, box)
        assert flat[CALLS] == n and box[SHARES] == n and box[RESULT] == 42
        assert box[STATE] == WAITING
    assert built.functions.stop(box.ctypes.data) == 1
    thread.join(FOREVER)
    assert returned == [0] and box[STATE] == ASLEEP and flat[CALLS] == 2


@pytest.mark.parametrize("state", [ASLEEP, GO, RUNNING])
def test_a_share_is_posted_only_to_a_waiting_thread_never_over_another(built: Built, state: int) -> None:
    box = _box(built, state)
    box[CALL], box[FLAT] = 11, 12  # a share posted before, or none
    flat = np.zeros(3, dtype=np.int64)
    assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 0
    assert box.tolist()[:3] == [state, 11, 12]
    assert built.functions.stop(box.ctypes.data) == 0 and box[STATE] == state  # stop asks only a waiting one


def test_a_share_its_thread_has_not_started_is_taken_back_and_never_runs(built: Built) -> None:
    box = _box(built, linger=0.001)
    flat = np.zeros(3, dtype=np.int64)
    assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 1  # the thread is not there yet
    assert box[STATE] == GO
    assert built.functions.take_back(box.ctypes.data) == 1
    assert box[STATE] == WAITING
    assert built.functions.take_back(box.ctypes.data) == 0  # nothing posted any more
    thread, returned = _serving(built, box)  # it comes now: nothing to run, and it dozes after its linger
    _until(lambda: box[STATE] == DOZING)
    assert flat[CALLS] == 0 and box[SHARES] == 0
    assert built.functions.stop(box.ctypes.data) == 1
    thread.join(FOREVER)
    assert returned == [0] and box[STATE] == ASLEEP and flat[CALLS] == 0


def test_collect_waits_for_a_share_that_is_running(built: Built) -> None:
    box = _box(built)
    thread, _ = _serving(built, box)
    flat = np.array([0, 1, 7], dtype=np.int64)  # held until HOLD is 0
    assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 1
    _until(lambda: flat[CALLS] == 1)
    assert box[STATE] == RUNNING
    assert built.functions.take_back(box.ctypes.data) == 0  # started: it cannot be taken back
    assert built.functions.wait(box.ctypes.data, int(0.001 * built.rate)) == 0  # still running: not done
    assert box[STATE] == RUNNING
    flat[HOLD] = 0
    _collect(built, box)
    assert box[STATE] == WAITING and box[RESULT] == 7 and box[SHARES] == 1
    built.functions.stop(box.ctypes.data)
    thread.join(FOREVER)


def _cpu_seconds(thread: threading.Thread) -> float:
    """The CPU time a thread of this process has run (Linux: /proc)."""
    with open(f"/proc/self/task/{thread.native_id}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def test_a_thread_dozes_after_its_linger_until_a_share_or_a_rouse_wakes_it(built: Built) -> None:
    """After its linger the thread sleeps in its wait (it uses no CPU), still there: a share
    posted to it wakes it and runs, as a rouse wakes it to wait again; stop ends its wait."""
    box = _box(built, linger=0.002)
    thread, returned = _serving(built, box)
    _until(lambda: box[STATE] == DOZING)
    before = _cpu_seconds(thread)
    time.sleep(0.2)
    assert _cpu_seconds(thread) - before < 0.05, "a dozing thread spins"  # (spinning: 0.2 s)
    assert thread.is_alive() and box[SHARES] == 0
    flat = np.array([0, 0, 5], dtype=np.int64)
    assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 1  # it wakes and runs it
    _until(lambda: box[SHARES] == 1)
    _collect(built, box)
    assert flat[CALLS] == 1 and box[RESULT] == 5
    _until(lambda: box[STATE] == DOZING)  # dozes again after its linger
    assert built.functions.rouse(box.ctypes.data) == 1
    assert box[STATE] in (WAITING, DOZING)  # roused: waits (and dozes again 2 ms later)
    assert _cpu_seconds(thread) - before < 0.1
    _until(lambda: box[STATE] == DOZING)
    assert built.functions.stop(box.ctypes.data) == 1
    thread.join(FOREVER)
    assert returned == [0] and box[STATE] == ASLEEP and flat[CALLS] == 1


@pytest.mark.parametrize("state", [WAITING, GO, RUNNING, ASLEEP, POSTING])
def test_only_a_dozing_thread_is_roused(built: Built, state: int) -> None:
    box = _box(built, state)
    assert built.functions.rouse(box.ctypes.data) == 0 and box[STATE] == state
    box[STATE] = DOZING  # (no thread: the wake finds none to wake)
    assert built.functions.rouse(box.ctypes.data) == 1 and box[STATE] == WAITING


@pytest.mark.parametrize("state", [ASLEEP, RUNNING])
def test_a_thread_never_waits_on_a_box_not_set_up_for_it(built: Built, state: int) -> None:
    """serve on a box that says what a waiting thread never sees returns at once, untouched
    (it used to spin for ever: its way back to sleep expects WAITING)."""
    box = _box(built, state)
    thread, returned = _serving(built, box)
    thread.join(FOREVER)
    assert returned == [2] and box[STATE] == state


def _reading(built: Built) -> tuple[float, int]:
    """(seconds, ticks) read together: the ticks halfway through reading the seconds twice (a
    preemption between two readings would otherwise count as time the counter did not see)."""
    while True:
        before = time.perf_counter()
        ticks = built.functions.ticks()
        after = time.perf_counter()
        if after - before < 0.0001:
            return (before + after) / 2, int(ticks)


def test_the_counters_rate_is_nominal_until_measured_over_5_ms(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    """What waits are measured in: a nominal 3 GHz at first (no time spent measuring), then the
    rate measured from the first reading, which is the counter's own (checked here over another
    interval, of 50 ms, against the same wall clock), kept within 0.5-9 GHz."""
    monkeypatch.setattr(handoff, "_FIRST", [])
    monkeypatch.setattr(handoff, "_RATE", [])
    assert built.functions.ticks_per_second() == handoff._NOMINAL_RATE
    assert built.functions.ticks_per_second() == handoff._NOMINAL_RATE  # too soon
    time.sleep(0.006)
    rate = built.functions.ticks_per_second()
    assert rate != handoff._NOMINAL_RATE and built.functions.ticks_per_second() == rate
    start, first = _reading(built)
    time.sleep(0.05)
    end, last = _reading(built)
    assert abs((last - first) / (end - start) / rate - 1) < 0.05, rate
    monkeypatch.setattr(handoff, "_FIRST", [(time.perf_counter() - 1, int(built.functions.ticks()) - 10**12)])
    monkeypatch.setattr(handoff, "_RATE", [])
    assert built.functions.ticks_per_second() == 3 * handoff._NOMINAL_RATE  # a counter that jumped


class _Fake:
    """A kernel for Workers whose shares are the test entry point: the flat arguments are
    (calls, hold, value, row); the calling thread's own share does nothing."""

    def __init__(self, built: Built, hold: int) -> None:
        self.handoff, self.address, self._hold = built.functions, built.entry, hold

    def flat(self, args: tuple[Any, ...]) -> Any:
        return np.array([0, self._hold, 7, 0], dtype=np.int64)

    def call(self, flat: Any) -> int:
        return 0


def _posted(pool: Any, fake: _Fake) -> list[tuple[int, tuple[Any, ...]]]:
    posted: list[tuple[int, tuple[Any, ...]]] = []
    pool._post((), 2, fake, fake.handoff, fake.flat(()), posted)
    assert len(posted) == 1
    return posted


def test_a_caller_collects_only_its_own_share_never_the_next_callers(built: Built) -> None:
    """Caller A's share ran; caller B then posted to the same thread. A collecting now returns at
    once: it neither waits for B's share nor takes it back (both used to happen: B lost its
    helper, or A waited for B's whole share)."""
    pool = kernel.Workers(1)
    a = _posted_after_wake(pool, _Fake(built, hold=1))
    a_flat = a[0][1][1]
    _until(lambda: a_flat[CALLS] == 1)  # A's share runs on the other thread (held)
    a_flat[HOLD] = 0
    _until(lambda: pool._boxes[0, STATE] == WAITING)
    b = _posted(pool, _Fake(built, hold=1))
    b_flat = b[0][1][1]
    _until(lambda: b_flat[CALLS] == 1)  # B's share runs (held)
    collecting = threading.Thread(target=pool._collect, args=(a, built.functions), daemon=True)
    collecting.start()
    collecting.join(FOREVER)
    try:
        assert not collecting.is_alive(), "A waits for B's share"
        assert pool._boxes[0, STATE] == RUNNING and pool._held[0] is b[0][1]  # B's, untouched
    finally:
        b_flat[HOLD] = 0
    pool._collect(b, built.functions)
    assert pool._held == [None] and a_flat[CALLS] == 1 and b_flat[CALLS] == 1
    pool.stop_waiting()


def test_a_share_posted_after_a_finished_one_is_not_taken_back_by_its_caller(built: Built) -> None:
    """The same with B's share not started yet (its thread busy): A's collect leaves it posted."""
    import queue

    pool = kernel.Workers(1)
    gate = threading.Event()
    pool._queues[0].put((gate.wait, (), queue.SimpleQueue(), None))  # the thread never waits on its box
    try:
        pool._boxes[0, STATE] = WAITING  # as wake() leaves it
        a = _posted(pool, _Fake(built, hold=0))
        pool._boxes[0, STATE] = RUNNING  # as if the thread ran A's share...
        pool._boxes[0, STATE] = WAITING  # ...to the end
        b = _posted(pool, _Fake(built, hold=0))
        pool._collect(a, built.functions)
        assert pool._boxes[0, STATE] == GO and pool._held[0] is b[0][1]
        pool._collect(b, built.functions)  # B takes its own back
        assert pool._boxes[0, STATE] == WAITING and pool._held == [None]
    finally:
        pool._boxes[0, STATE] = ASLEEP
        gate.set()


def _posted_after_wake(pool: Any, fake: _Fake) -> list[tuple[int, tuple[Any, ...]]]:
    pool.wake(1, fake)
    return _posted(pool, fake)


def test_only_x86_64_triples_get_the_functions() -> None:
    assert handoff.supported_triple("x86_64-unknown-linux-gnu")
    assert not handoff.supported_triple("aarch64-unknown-linux-gnu")


def test_wake_places_and_wakes_only_the_threads_asleep(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread already waiting keeps its box and its CPUs (placing it would restrict it for good:
    only a woken thread takes the whole set back); one asleep is placed, set waiting and woken."""
    import queue

    pool = kernel.Workers(2)
    gates = [threading.Event(), threading.Event()]
    for q, gate in zip(pool._queues, gates, strict=True):  # the threads stay out of their boxes meanwhile
        q.put((gate.wait, (), queue.SimpleQueue(), None))
    _until(lambda: all(q.empty() for q in pool._queues))  # each thread holds its gate
    placed: list[Any] = []
    monkeypatch.setattr(pool._placement, "away", lambda which: placed.append(list(which)) or None)
    try:
        pool._boxes[0, STATE] = WAITING  # thread 1 waits for shares already
        pool.wake(2, _Fake(built, hold=0))
        assert placed == [[1]]
        assert pool._boxes[:, STATE].tolist() == [WAITING, WAITING]
        assert [q.qsize() for q in pool._queues] == [0, 1]  # for thread 2, a wait for shares
        pool.wake(2, _Fake(built, hold=0))
        assert placed == [[1]] and [q.qsize() for q in pool._queues] == [0, 1]  # both waiting: nothing to do
    finally:
        for gate in gates:
            gate.set()
        pool.stop_waiting()


def test_wake_rouses_the_threads_that_doze_placed_and_given_their_cpus_back(built: Built,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread dozing in its wait is roused where it is (nothing through its queue: it runs no
    Python), placed off this thread's CPU for the wake and given its whole set back after."""
    monkeypatch.setattr(kernel, "_LINGER_SECONDS", 0.001)
    pool = kernel.Workers(2)
    try:
        pool.wake(2, _Fake(built, hold=0))
        _until(lambda: (pool._boxes[:, STATE] == DOZING).all())
        calls: list[Any] = []
        monkeypatch.setattr(pool._placement, "away", lambda which: calls.append(("away", list(which))) or {0})
        monkeypatch.setattr(pool._placement, "restore", lambda which, cpus: calls.append(("restore", list(which), cpus)))
        pool._boxes[:, LINGER] = 1  # as the nominal rate left it: a roused thread gets the linger again
        pool.wake(2, _Fake(built, hold=0))
        assert calls == [("away", [0, 1]), ("restore", [0, 1], {0})]
        assert pool._boxes[:, LINGER].tolist() == [int(built.functions.ticks_per_second() * kernel._LINGER_SECONDS)] * 2
        assert set(pool._boxes[:, STATE].tolist()) <= {WAITING, DOZING}
        assert [q.qsize() for q in pool._queues] == [0, 0]
        posted = _posted(pool, _Fake(built, hold=0))  # a share goes to the roused (or dozing again) thread
        flat = posted[0][1][1]
        _until(lambda: flat[CALLS] == 1)
        pool._collect(posted, built.functions)
        assert pool._held == [None, None]
    finally:
        pool.stop_waiting()
    assert pool._boxes[:, STATE].tolist() == [ASLEEP, ASLEEP]


def test_a_share_through_the_queue_goes_only_to_threads_out_of_their_waits(built: Built,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Thread 1 busy with another caller's handed share, thread 2 dozing: a call whose shares go
    through the threads' queues (a numba kernel's) has thread 2 leave its wait and take a share,
    gives thread 1 none, and returns once thread 2's share is done (it waited for ever: thread 1
    dozed after its share and never read its queue)."""
    monkeypatch.setattr(kernel, "_LINGER_SECONDS", 0.001)
    pool = kernel.Workers(2)
    fake = _Fake(built, hold=1)
    pool.wake(2, fake)
    posted = _posted(pool, fake)  # to thread 1, which runs it, held
    held = posted[0][1][1]
    try:
        _until(lambda: held[CALLS] == 1 and pool._boxes[1, STATE] == DOZING)
        rows: list[int] = []

        def share(*a: Any) -> int:  # this thread's share finishes no chunk: the call waits for the others
            rows.append(a[-1])
            return 0

        queued: list[Any] = [None] * 10
        queued[kernel._ARG_STREAMS] = np.zeros((3, 2), dtype=np.uint64)
        call = threading.Thread(target=pool.run, args=((*queued, None), 3, share), daemon=True)
        call.start()
        call.join(FOREVER)
        assert not call.is_alive(), "the call waits for a share given to a thread busy in its wait"
        assert sorted(rows) == [0, 2]
        assert pool._boxes[0, STATE] == RUNNING and pool._queues[0].empty()
    finally:
        held[HOLD] = 0
    pool._collect(posted, built.functions)
    pool.stop_waiting()
    assert pool._boxes[:, STATE].tolist() == [ASLEEP, ASLEEP]


def test_an_interruption_while_rousing_still_gives_the_threads_their_cpus_back(built: Built,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "_LINGER_SECONDS", 0.001)
    pool = kernel.Workers(1)
    try:
        pool.wake(1, _Fake(built, hold=0))
        _until(lambda: pool._boxes[0, STATE] == DOZING)
        restored: list[Any] = []
        monkeypatch.setattr(pool._placement, "away", lambda which: {0})
        monkeypatch.setattr(pool._placement, "restore", lambda which, cpus: restored.append((list(which), cpus)))

        def interrupted(box: int) -> int:
            raise KeyboardInterrupt

        monkeypatch.setattr(built.functions, "rouse", interrupted)
        with pytest.raises(KeyboardInterrupt):
            pool.wake(1, _Fake(built, hold=0))
        assert restored == [([0], {0})]
    finally:
        pool.stop_waiting()
