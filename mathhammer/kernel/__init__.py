"""The numba kernels: the only package that imports numba.

Kernels know nothing of rules: they compare dice against the tables that
:mod:`mathhammer.compile` prepared (layout in :mod:`mathhammer.codes`).
"""

from __future__ import annotations

import sys
from typing import Any

import numba

from .simulate import simulate_chunks

__all__ = ["announce_compile", "max_threads", "set_threads", "simulate_chunks"]


def max_threads() -> int:
    """Threads numba may use on this machine."""
    return int(numba.config.NUMBA_NUM_THREADS)


def set_threads(n: int) -> None:
    """Use ``n`` threads (1..max_threads()) for the next kernel calls."""
    numba.set_num_threads(n)


def announce_compile(kernel: Any, args: tuple[object, ...]) -> None:
    """Print one line on stderr when ``kernel`` is about to be compiled, not loaded from cache.

    Peeks at numba's on-disk cache index (private API, best effort: on any surprise it assumes
    a compile is coming and says so).
    """
    try:
        sig = tuple(numba.typeof(a) for a in args)
        if sig in kernel.overloads:
            return
        cache = kernel._cache
        key = cache._index_key(sig, kernel.targetctx.codegen())
        if key in cache._cache_file._load_index():
            return
    except Exception:  # noqa: BLE001, S110 - numba internals may change; the message is harmless
        pass
    print("compiling kernels (first run only)…", file=sys.stderr, flush=True)
