"""Where the kernel's idle threads may run: on any CPU but the calling thread's.

Linux wakes a sleeping thread on the CPU of the thread that woke it when it judges the two
share data (``wake_affine``); on a two-CPU virtual machine it did so for almost every kernel
call: the woken thread then waited for the calling thread's CPU, and a run of 1e5 trials (under
a millisecond) got nothing from the second CPU while the other sat idle. Measured on such a host
with a loop as long as a short run's kernel call, after a pause as between two commands: 1.00x
on two threads as woken, 1.72x with the woken thread kept off the waker's CPU (1.75x and 1.79x
for a loop five times as long).

So before a kernel call hands shares to the idle threads, :func:`keep_off` restricts those
threads to the CPUs the calling thread may use, less the one it runs on; nothing is changed for
the calling thread or any thread but the kernel's own, and nothing where the platform has no
per-thread affinity (not Linux) or the call is refused (then it is not tried again).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence

__all__ = ["Placement", "current_cpu"]


def _libc_getcpu() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
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


class Placement:
    """Keeps a set of threads (native ids) off the CPU of whichever thread calls :meth:`away`,
    changing their affinity only when that CPU is not the one they were last kept off."""

    def __init__(self, native_ids: Sequence[int]) -> None:
        self._ids = tuple(native_ids)
        self._off: int | None = None
        self._enabled = _GETCPU is not None and bool(self._ids)
        self._lock = threading.Lock()
        self._pid = os.getpid()  # in a forked child these ids are the parent's threads

    def away(self) -> None:
        """Restrict the threads to the calling thread's CPUs less the one it runs on (all of them
        when that is its only one). A refusal (a thread gone, a CPU set that changed under a
        container) turns this off for good: placement only ever saves time."""
        if not self._enabled:
            return
        if os.getpid() != self._pid:
            self._enabled = False
            return
        cpu = current_cpu()
        if cpu is None or cpu == self._off:
            return
        with self._lock:
            try:
                allowed = os.sched_getaffinity(0)
                others = allowed - {cpu} or allowed
                for native_id in self._ids:
                    os.sched_setaffinity(native_id, others)
            except OSError:
                self._enabled = False
                return
            self._off = cpu
