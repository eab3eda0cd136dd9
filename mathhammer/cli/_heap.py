"""The command-line process's heap, for the commands that hold results of megabytes by turns.

glibc's malloc serves a block of 128 KiB or more with its own ``mmap``, returned to the system
when freed, but it raises that threshold to the size of each such block freed (up to 32 MiB):
after a sweep's first few results (arrays and text of 1-20 MB each) the next ones come from the
heap, whose freed space mostly stays with the process. A sweep of 120 cells of a W1000 x 1000
target with ``-f json`` peaked at 200-225 MB that way, and at about 160 MB with the threshold
kept where it starts (benchmarks/bench_memory.py). Only ``sweep`` and ``compare`` call
:func:`return_large_blocks`, never the library: a library user's process keeps its own malloc
settings. The worker processes those commands fork inherit it.
"""

from __future__ import annotations

import sys

__all__ = ["return_large_blocks"]

#: mallopt's parameter number for the threshold (glibc's malloc.h).
_M_MMAP_THRESHOLD = -3
#: glibc's default threshold, kept fixed: setting it turns off the raising.
_THRESHOLD = 128 * 1024


def return_large_blocks() -> bool:
    """Keep glibc's mmap threshold at 128 KiB, so that every freed block that large goes back
    to the system at once. Returns whether it was set (False off Linux, or with a C library
    without ``mallopt``, or one that refuses it)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _THRESHOLD) == 1)
