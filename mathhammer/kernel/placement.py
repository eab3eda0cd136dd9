"""Where the kernel's idle threads wake: on any CPU but the calling thread's.

Linux wakes a sleeping thread on the CPU of the thread that woke it when it judges the two
share data (``wake_affine``); on a two-CPU virtual machine it did so for almost every kernel
call: the woken thread then waited for the calling thread's CPU, and a run of 1-2 ms (1e4-1e5
trials) got nothing from the second CPU while the other sat idle. Measured on such a host
with a loop of 0.8 ms, after a pause as between two commands: 1.00x on two threads as woken,
1.72x with the woken thread kept off the waker's CPU (1.75x and 1.79x for a loop of 4 ms).

So before a kernel call hands shares to idle threads, :meth:`Placement.away` restricts those
threads to the CPUs the calling thread may use, less the one it runs on, and each thread, once
awake, gives itself the whole set again (:func:`release`): the restriction decides only where
it wakes, so a thread that another process then holds up can still be moved to a CPU that
falls idle. Nothing is changed for the calling thread or any thread but the kernel's own, and
nothing where the platform has no per-thread affinity (not Linux), in a forked child (the ids
are the parent's threads), or after a refusal (then it is not tried again).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["Placement", "current_cpu", "release"]


def _libc_getcpu() -> Any:
    """libc's ``sched_getcpu`` (glibc and musl), or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        found = ctypes.CDLL(None).sched_getcpu
    except (AttributeError, OSError):
        return None
    found.restype, found.argtypes = ctypes.c_int, []
    return found


_GETCPU = _libc_getcpu()


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now, or None where that cannot be asked."""
    if _GETCPU is None:
        return None
    cpu = int(_GETCPU())
    return cpu if cpu >= 0 else None


def release(cpus: frozenset[int] | None) -> None:
    """Let the calling thread (one that :meth:`Placement.away` placed) run on ``cpus`` again
    (None: it was not placed). A refusal leaves it where it is."""
    if cpus is not None:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass


class Placement:
    """Places a set of threads (native ids) off the CPU of whichever thread calls :meth:`away`."""

    def __init__(self, native_ids: Sequence[int]) -> None:
        self._ids = tuple(native_ids)
        self._enabled = _GETCPU is not None and bool(self._ids)
        self._pid = os.getpid()  # in a forked child these ids are the parent's threads
        self._lock = threading.Lock()

    def away(self, which: Sequence[int]) -> frozenset[int] | None:
        """Restrict threads ``which`` (their positions) to the calling thread's CPUs less the one
        it runs on; returns the set each should :func:`release` itself to once awake, or
        :meth:`restore` gives it back (None: none was placed). A refusal (a thread gone, a CPU set
        that changed under a container) gives the threads placed so far the whole set back and
        turns placement off for good: it only ever saves time."""
        if not self._enabled or not which:
            return None
        if os.getpid() != self._pid:
            self._enabled = False
            return None
        cpu = current_cpu()
        if cpu is None:
            return None
        with self._lock:
            if not self._enabled:
                return None
            done: list[int] = []
            try:
                allowed = frozenset(os.sched_getaffinity(0))
                others = allowed - {cpu}
                if not others:
                    return None
                for native_id in [self._ids[w] for w in which]:
                    os.sched_setaffinity(native_id, others)
                    done.append(native_id)
            except OSError:
                self._enabled = False
                for native_id in done:
                    try:
                        os.sched_setaffinity(native_id, allowed)
                    except OSError:
                        pass
                return None
        return allowed

    def restore(self, which: Sequence[int], cpus: frozenset[int] | None) -> None:
        """Give threads ``which`` (their positions) the set ``cpus`` back, from another thread: what
        :func:`release` does for a thread that runs no Python once awake (None: none was placed).
        A refusal turns placement off for good, as in :meth:`away`."""
        if cpus is None or not which:
            return
        with self._lock:
            for w in which:
                try:
                    os.sched_setaffinity(self._ids[w], cpus)
                except OSError:
                    self._enabled = False
