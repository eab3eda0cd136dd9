"""The command-line process's heap, for the commands that hold results of megabytes by turns.

glibc's malloc serves a block of 128 KiB or more with its own ``mmap``, returned to the system
when freed, but it raises that threshold to the size of each such block freed (up to 32 MiB):
after a sweep's first few results (arrays of 1-20 MB each) the next ones come from the heap,
whose freed space mostly stays with the process. ``sweep`` and ``compare`` give it back after
each cell or record with :func:`release_freed_memory` (``malloc_trim``): a sweep of 120 cells
of a W1000 x 1000 target with ``-f json`` on two workers peaked at 200-205 MB without it and
at 176-187 MB with it, in the same time (benchmarks/bench_memory.py). Keeping the threshold at
128 KiB instead (``mallopt``) gave 160 MB but took a third longer: every large array was then
mapped and faulted in afresh. It changes no setting; only the command line calls it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

__all__ = ["release_freed_memory"]


def release_freed_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim(0)``; about 1 us
    when there is nothing to give). Returns whether any were (False off glibc)."""
    trim = _malloc_trim()
    return trim is not None and trim(0) == 1


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None (not Linux, or a C library without it)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim
