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

from mathhammer.kernel import handoff
from mathhammer.kernel.handoff import ASLEEP, BOX, CALL, FLAT, GO, LINGER, RESULT, RUNNING, SHARES, STATE, WAITING

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
    _until(lambda: built.functions.collect(box.ctypes.data, int(0.001 * built.rate)))


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
    assert built.functions.collect(box.ctypes.data, 0) == 1
    assert box[STATE] == WAITING
    thread, returned = _serving(built, box)  # it comes now: nothing to run, and it sleeps after its linger
    thread.join(FOREVER)
    assert returned == [1] and box[STATE] == ASLEEP
    assert flat[CALLS] == 0 and box[SHARES] == 0


def test_collect_waits_for_a_share_that_is_running(built: Built) -> None:
    box = _box(built)
    thread, _ = _serving(built, box)
    flat = np.array([0, 1, 7], dtype=np.int64)  # held until HOLD is 0
    assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 1
    _until(lambda: flat[CALLS] == 1)
    assert box[STATE] == RUNNING
    assert built.functions.collect(box.ctypes.data, int(0.001 * built.rate)) == 0  # still running: not done
    assert box[STATE] == RUNNING
    flat[HOLD] = 0
    _collect(built, box)
    assert box[STATE] == WAITING and box[RESULT] == 7 and box[SHARES] == 1
    built.functions.stop(box.ctypes.data)
    thread.join(FOREVER)


def test_a_thread_goes_back_to_sleep_after_its_linger(built: Built) -> None:
    box = _box(built, linger=0.002)
    thread, returned = _serving(built, box)
    thread.join(FOREVER)
    assert not thread.is_alive()
    assert returned == [1] and box[STATE] == ASLEEP and box[SHARES] == 0
    flat = np.zeros(3, dtype=np.int64)
    assert built.functions.post(box.ctypes.data, built.entry, flat.ctypes.data) == 0  # asleep: nothing posted


def test_the_counters_rate_is_nominal_until_measured_over_5_ms(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    """What waits are measured in: a nominal 3 GHz at first (no time spent measuring), then the
    rate measured from the first reading, which is the counter's own (checked here over another
    interval of 20 ms against the same wall clock)."""
    monkeypatch.setattr(handoff, "_FIRST", [])
    monkeypatch.setattr(handoff, "_RATE", [])
    assert built.functions.ticks_per_second() == handoff._NOMINAL_RATE
    assert built.functions.ticks_per_second() == handoff._NOMINAL_RATE  # too soon
    time.sleep(0.006)
    rate = built.functions.ticks_per_second()
    assert rate != handoff._NOMINAL_RATE and built.functions.ticks_per_second() == rate
    start, first = time.perf_counter(), built.functions.ticks()
    time.sleep(0.02)
    seen = (built.functions.ticks() - first) / (time.perf_counter() - start)
    assert abs(seen / rate - 1) < 0.05, (seen, rate)


def test_only_x86_64_triples_get_the_functions() -> None:
    assert handoff.supported_triple("x86_64-unknown-linux-gnu")
    assert not handoff.supported_triple("aarch64-unknown-linux-gnu")
