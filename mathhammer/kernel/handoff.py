"""Handing a kernel share to a thread that is already awake.

On a virtual machine, waking a sleeping thread costs 20-70 microseconds before it runs a line
(the idle processor halts, and the wake goes through the hypervisor), then it needs the GIL
for the Python of its share: on a run of 1e5 trials (about 0.4 ms a thread) that is a tenth
of what the second core could do. So a kernel thread that has a share to expect does not
sleep: it waits in machine code of its own (no GIL), watching a small block of memory, its
*box*, and runs the share the moment the calling thread posts it there, as OpenMP runtimes
keep their threads spinning for a while after each parallel region. It spins at most
``linger`` (half a millisecond) after its last share, then *dozes*: it sleeps in the kernel
(a futex on its box, Linux), still in that machine code, until a run rouses it or posts it a
share. So an idle process burns nothing, and waking a thread never needs the GIL: a run that
comes a few milliseconds after the last one (a script building its next attack) rouses its
threads before its first kernel call, and they are spinning again by its second.

The functions are generated here as LLVM IR (with llvmlite's IR builder: no LLVM is loaded for
that) and kept in each native kernel file beside its entry point (:mod:`.native`), so a warm
run loads them with the kernel and never builds them; they exist on x86-64 Linux only (they
read the time stamp counter, wait with ``pause`` and make the futex system call; native files
exist on Linux alone). Each is called through ctypes, which releases the GIL for the call:

``serve(box)``
    The thread's wait: while the box says ``WAITING``, wait; when it says ``GO``, take the
    share (``RUNNING``), call ``box[CALL](box[FLAT])`` (a kernel's entry point with its flat
    arguments), then say ``WAITING`` again, and wait for the next; once ``linger`` ticks
    passed since the last share, say ``DOZING`` and sleep until the box says anything else,
    then wait again. Returns 0 when the box says ``STOP`` (the box then says ``ASLEEP``), or
    2 at once when it says anything a waiting thread never sees (a box not set up for it).
``post(box, call, flat)``
    Give a waiting or dozing thread a share (waking a dozing one); false when the thread was
    busy, or not in ``serve``. The box says ``POSTING`` while the share is written into it,
    so no other thread can post over it, nor the thread take half of it.
``rouse(box)``
    Wake a dozing thread to wait for shares; false when it was not dozing.
``take_back(box)``
    Take a posted share back if its thread has not started it (so nothing can run it after the
    call returns); false when it was not waiting to be started.
``wait(box, ticks)``
    Wait until the box's share is no longer running, at most ``ticks``; false when it still is.
``stop(box)``
    Ask a waiting or dozing thread to return now (at exit, or before a share that goes through
    its Python queue: a numba kernel's).
``ticks()``
    The time stamp counter.

Every change of state is an atomic compare-and-swap or store with acquire and release order:
what the calling thread wrote before posting (the flat arguments) is what the thread reads,
and what the thread wrote in the share (its histogram row) is what the calling thread reads
once ``wait`` returned true. The futex word is the low half of the state field (x86-64 is
little-endian, and every state fits in it): a thread dozes only while the state still says
``DOZING`` when the kernel looks, and whoever changes it from ``DOZING`` wakes the thread after.
"""

from __future__ import annotations

import ctypes
import threading
import time
from typing import Any

__all__ = ["ASLEEP", "BOX", "DOZING", "FUNCTIONS", "GO", "POSTING", "RUNNING", "STOP", "WAITING", "Handoff",
           "add_functions", "supported_triple"]

#: States of a box (its first field). ASLEEP: its thread is not in serve (never was, or stopped);
#: DOZING: it sleeps in serve until roused.
WAITING, GO, RUNNING, STOP, ASLEEP, POSTING, DOZING = 0, 1, 2, 3, 4, 5, 6
#: Fields of a box: state, the entry point to call, the address of its flat arguments, ticks to
#: wait after a share, the entry point's result, shares run (for tests and diagnostics).
STATE, CALL, FLAT, LINGER, RESULT, SHARES = 0, 1, 2, 3, 4, 5
#: 64-bit fields a box takes: 128 bytes, so two boxes never share a cache line.
BOX = 16

#: The functions each native file carries on x86-64 (:func:`add_functions`).
FUNCTIONS = ("mathhammer_serve", "mathhammer_post", "mathhammer_rouse", "mathhammer_take_back", "mathhammer_wait",
             "mathhammer_stop", "mathhammer_ticks")

#: Linux x86-64's futex system call and the operations used (on this process's memory only).
_SYS_FUTEX = 202
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 0 | 128, 1 | 128


def supported_triple(triple: str) -> bool:
    """Whether :func:`add_functions` can generate the functions for this target triple (or
    machine name): x86-64 (on Linux: the only system native files exist on)."""
    return triple.split("-", 1)[0] in ("x86_64", "amd64")


def add_functions(module: Any) -> None:
    """Add :data:`FUNCTIONS` to an llvmlite ``ir.Module`` (x86-64 only: see the module text)."""
    from llvmlite import ir

    i64 = ir.IntType(64)
    p64 = i64.as_pointer()
    counter = ir.Function(module, ir.FunctionType(i64, []), name="llvm.readcyclecounter")
    pause = ir.Function(module, ir.FunctionType(ir.VoidType(), []), name="llvm.x86.sse2.pause")

    def const(v: int) -> Any:
        return ir.Constant(i64, v)

    def field(b: Any, box: Any, i: int) -> Any:
        return b.gep(box, [const(i)])

    def swap(b: Any, box: Any, old: int, new: int) -> Any:
        return b.extract_value(b.cmpxchg(field(b, box, STATE), const(old), const(new), "acq_rel", "acquire"), 1)

    def state(b: Any, box: Any) -> Any:
        return b.load_atomic(field(b, box, STATE), "acquire", 8)

    futex_type = ir.FunctionType(i64, [i64, p64, i64, i64, i64])

    def futex(b: Any, box: Any, op: int, value: int) -> Any:
        """futex(&box[STATE], op, value, no timeout): the system call, made directly."""
        return b.asm(futex_type, "syscall", "={rax},{rax},{rdi},{rsi},{rdx},{r10},~{rcx},~{r11},~{memory}",
                     [const(_SYS_FUTEX), field(b, box, STATE), const(op), const(value), const(0)], True)

    def write_share(b: Any, box: Any, call: Any, flat: Any) -> None:
        b.store(call, field(b, box, CALL))
        b.store(flat, field(b, box, FLAT))
        b.store_atomic(const(GO), field(b, box, STATE), "release", 8)

    def function(name: str, args: list[Any], blocks: list[str]) -> tuple[Any, list[Any]]:
        fn = ir.Function(module, ir.FunctionType(i64, args), name=name)
        return fn, [fn.append_basic_block(b) for b in blocks]

    fn, (entry,) = function("mathhammer_ticks", [], ["entry"])
    b = ir.IRBuilder(entry)
    b.ret(b.call(counter, []))

    fn, blocks = function("mathhammer_post", [p64, i64, i64], ["entry", "write", "dozing", "wake", "refused"])
    entry, write, dozing, wake, refused = blocks
    box, call, flat = fn.args
    b = ir.IRBuilder(entry)
    b.cbranch(swap(b, box, WAITING, POSTING), write, dozing)
    b = ir.IRBuilder(write)
    write_share(b, box, call, flat)
    b.ret(const(1))
    b = ir.IRBuilder(dozing)
    b.cbranch(swap(b, box, DOZING, POSTING), wake, refused)
    b = ir.IRBuilder(wake)
    write_share(b, box, call, flat)
    futex(b, box, _FUTEX_WAKE_PRIVATE, 1)
    b.ret(const(1))
    ir.IRBuilder(refused).ret(const(0))

    def end_doze(fn: Any, block: Any, box: Any, new: int) -> None:
        """In ``block``: a dozing thread's box says ``new`` and the thread is woken (return 1);
        any other box is left as it is (return 0)."""
        wake, other = fn.append_basic_block("wake"), fn.append_basic_block("other")
        b = ir.IRBuilder(block)
        b.cbranch(swap(b, box, DOZING, new), wake, other)
        b = ir.IRBuilder(wake)
        futex(b, box, _FUTEX_WAKE_PRIVATE, 1)
        b.ret(const(1))
        ir.IRBuilder(other).ret(const(0))

    fn, (entry,) = function("mathhammer_rouse", [p64], ["entry"])
    end_doze(fn, entry, fn.args[0], WAITING)

    fn, (entry, dozing, done) = function("mathhammer_stop", [p64], ["entry", "dozing", "done"])
    b = ir.IRBuilder(entry)
    b.cbranch(swap(b, fn.args[0], WAITING, STOP), done, dozing)
    end_doze(fn, dozing, fn.args[0], STOP)
    ir.IRBuilder(done).ret(const(1))

    fn, (entry,) = function("mathhammer_take_back", [p64], ["entry"])
    b = ir.IRBuilder(entry)
    b.ret(b.zext(swap(b, fn.args[0], GO, WAITING), i64))

    fn, (entry, loop, wait, done, late) = function("mathhammer_wait", [p64, i64],
                                                    ["entry", "loop", "wait", "done", "late"])
    box = fn.args[0]
    b = ir.IRBuilder(entry)
    deadline = b.add(b.call(counter, []), fn.args[1])
    b.branch(loop)
    b = ir.IRBuilder(loop)
    b.cbranch(b.icmp_signed("==", state(b, box), const(RUNNING)), wait, done)
    b = ir.IRBuilder(wait)
    b.call(pause, [])
    b.cbranch(b.icmp_signed(">", b.call(counter, []), deadline), late, loop)
    ir.IRBuilder(done).ret(const(1))
    ir.IRBuilder(late).ret(const(0))

    fn, blocks = function("mathhammer_serve", [p64],
                          ["entry", "loop", "take", "run", "other", "stop", "idle", "wait", "late", "doze", "roused",
                           "lost"])
    entry, loop, take, run, other, stop, idle, wait, late, doze, roused, lost = blocks
    box = fn.args[0]
    b = ir.IRBuilder(entry)
    deadline = b.alloca(i64)

    def linger_from_now(b: Any) -> None:
        b.store(b.add(b.call(counter, []), b.load(field(b, box, LINGER))), deadline)

    linger_from_now(b)
    b.branch(loop)
    b = ir.IRBuilder(loop)
    now = state(b, box)
    b.cbranch(b.icmp_signed("==", now, const(GO)), take, other)
    b = ir.IRBuilder(take)
    b.cbranch(swap(b, box, GO, RUNNING), run, loop)  # (the calling thread may have taken it back)
    b = ir.IRBuilder(run)
    entry_type = ir.FunctionType(i64, [p64])
    call = b.inttoptr(b.load(field(b, box, CALL)), entry_type.as_pointer())
    result = b.call(call, [b.inttoptr(b.load(field(b, box, FLAT)), p64)])
    b.store(result, field(b, box, RESULT))
    shares = field(b, box, SHARES)
    b.store(b.add(b.load(shares), const(1)), shares)
    b.store_atomic(const(WAITING), field(b, box, STATE), "release", 8)
    linger_from_now(b)
    b.branch(loop)
    b = ir.IRBuilder(other)
    b.cbranch(b.icmp_signed("==", now, const(STOP)), stop, idle)
    b = ir.IRBuilder(idle)  # waiting, or a share being posted; anything else is not this thread's to wait on
    idle_state = b.or_(b.icmp_signed("==", now, const(WAITING)), b.icmp_signed("==", now, const(POSTING)))
    b.cbranch(idle_state, wait, lost)
    ir.IRBuilder(lost).ret(const(2))
    b = ir.IRBuilder(stop)
    b.store_atomic(const(ASLEEP), field(b, box, STATE), "release", 8)
    b.ret(const(0))
    b = ir.IRBuilder(wait)
    b.call(pause, [])
    b.cbranch(b.icmp_signed(">", b.call(counter, []), b.load(deadline)), late, loop)
    b = ir.IRBuilder(late)
    b.cbranch(swap(b, box, WAITING, DOZING), doze, loop)  # (or a share arrived just now)
    b = ir.IRBuilder(doze)  # sleeps while the box says DOZING (returns at once if it no longer does)
    futex(b, box, _FUTEX_WAIT_PRIVATE, DOZING)
    b.cbranch(b.icmp_signed("==", state(b, box), const(DOZING)), doze, roused)
    b = ir.IRBuilder(roused)
    linger_from_now(b)
    b.branch(loop)


_ADDRESS = ctypes.c_void_p
_I64 = ctypes.c_int64


class Handoff:
    """The functions of :data:`FUNCTIONS` at these addresses (of one loaded object), callable
    from Python; each call releases the GIL. ``keep`` is what holds the loaded machine code
    (every kernel's: a share may run another object's entry point): a thread waiting in
    :meth:`wait_for_shares` holds it, so the code stays mapped while a thread may run it, even
    while the interpreter shuts down around a daemon thread."""

    def __init__(self, addresses: dict[str, int], keep: object = None) -> None:
        self.serve = ctypes.CFUNCTYPE(_I64, _ADDRESS)(addresses["mathhammer_serve"])
        self.post = ctypes.CFUNCTYPE(_I64, _ADDRESS, _I64, _I64)(addresses["mathhammer_post"])
        self.rouse = ctypes.CFUNCTYPE(_I64, _ADDRESS)(addresses["mathhammer_rouse"])
        self.take_back = ctypes.CFUNCTYPE(_I64, _ADDRESS)(addresses["mathhammer_take_back"])
        self.wait = ctypes.CFUNCTYPE(_I64, _ADDRESS, _I64)(addresses["mathhammer_wait"])
        self.stop = ctypes.CFUNCTYPE(_I64, _ADDRESS)(addresses["mathhammer_stop"])
        self.ticks = ctypes.CFUNCTYPE(_I64)(addresses["mathhammer_ticks"])
        self._keep = keep

    def wait_for_shares(self, box: int) -> int:
        """:attr:`serve` on the box at address ``box``, this object (and so the machine code)
        held meanwhile."""
        return int(self.serve(box))

    def ticks_per_second(self) -> float:
        """How fast :attr:`ticks` counts (the time stamp counter runs at one rate whatever the
        processor's speed, on every x86-64 of the last fifteen years): measured between the
        first call in a process and the first at least 5 ms later, with nothing spent on it,
        and kept within 0.5-9 GHz; until then a nominal 3 GHz (1-5 GHz on every such
        processor: the waits it sets are rough anyway)."""
        with _RATE_LOCK:
            if _RATE:
                return _RATE[0]
            now, ticks = time.perf_counter(), int(self.ticks())
            if not _FIRST:
                _FIRST.append((now, ticks))
            elif now - _FIRST[0][0] >= _CALIBRATION_SECONDS:  # (a counter that jumped: kept within reason)
                measured = (ticks - _FIRST[0][1]) / (now - _FIRST[0][0])
                _RATE.append(min(max(measured, _NOMINAL_RATE / 6), _NOMINAL_RATE * 3))
                return _RATE[0]
            return _NOMINAL_RATE


#: How long after the first reading of a process :meth:`Handoff.ticks_per_second` measures, the
#: rate until then, the first reading (seconds, ticks) and the rate measured.
_CALIBRATION_SECONDS = 0.005
_NOMINAL_RATE = 3e9
_FIRST: list[tuple[float, int]] = []
_RATE: list[float] = []
_RATE_LOCK = threading.Lock()
