"""The numba kernels: the only package that imports numba.

Kernels know nothing of rules: they compare dice against the tables that
:mod:`mathhammer.compile` prepared (layout in :mod:`mathhammer.codes`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from . import _cache
from .rng import BUFFER
from .simulate import N_STREAM, S_COUNTER, S_POS, simulate_chunks

__all__ = ["announce_compile", "cache_path", "max_threads", "new_streams", "prepare", "set_threads",
           "simulate_chunks", "threads"]


def max_threads() -> int:
    """Threads numba may use on this machine."""
    config: Any = numba.config  # its settings are set dynamically: invisible to mypy
    return int(config.NUMBA_NUM_THREADS)


def set_threads(n: int) -> None:
    """Use ``n`` threads (1..max_threads()) for the next kernel calls (prefer :func:`threads`)."""
    numba.set_num_threads(n)


@contextmanager
def threads(n: int | None) -> Iterator[None]:
    """Use ``n`` threads (1..max_threads(); None: unchanged) inside the block, then restore
    numba's previous setting, which is global state of the calling thread."""
    if n is None:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def new_streams(seeds: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The ``streams`` argument of :func:`simulate_chunks` before any trial: one row per seed."""
    streams = np.zeros((seeds.size, N_STREAM), dtype=np.uint64)
    streams[:, S_POS] = BUFFER  # empty buffer: the first roll fills it
    streams[:, S_COUNTER] = seeds
    return streams


def prepare(kernel: Any, args: tuple[object, ...]) -> None:
    """Load ``kernel``'s machine code for these arguments from numba's cache, or compile it.

    Prints one line on stderr before a compile, and one note when the cache location was
    unusable or a cache file was damaged (which is removed and compiled again).
    """
    sig = tuple(numba.typeof(a) for a in args)
    if sig in kernel.overloads:
        return
    enabled = _cache.cache_path(kernel) is not None
    announce = ("compiling kernels (first run only)…" if enabled
                else "compiling kernels (no cache: every run)…")
    _cache.load_or_compile(kernel, sig, announce)


def announce_compile(kernel: Any, args: tuple[object, ...]) -> None:
    """Former name of :func:`prepare`."""
    prepare(kernel, args)


def cache_path(kernel: Any = simulate_chunks) -> str | None:
    """The folder numba caches ``kernel`` in (None: compiled on every run)."""
    return _cache.cache_path(kernel)
