"""Sizes and positions the kernels and their callers share, kept free of numba so that a run
whose kernel comes from the native cache (:mod:`.native`) never imports it."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

#: Values produced per refill of a random stream's buffer (:mod:`.rng`).
BUFFER = 512
#: Columns of a row of ``streams``: next unread buffer position, counter of the last value.
S_POS, S_COUNTER = 0, 1
N_STREAM = 2
#: Columns of the per-stage histograms' offsets (:mod:`.simulate`).
N_STAGES = 10


def new_claims() -> npt.NDArray[np.int64]:
    """The counters of one kernel call (:mod:`.claim`): (the next chunk to hand out, chunks
    finished)."""
    return np.zeros(2, dtype=np.int64)


def layout_of(args: tuple[Any, ...]) -> tuple[object, ...]:
    """What numba's types of these arguments depend on, cheaply: an array's dtype, dimensions,
    layout (numba's: C when C-contiguous, else F when Fortran-contiguous, else A), whether it is
    writable and aligned; a scalar's Python type."""
    out: list[object] = []
    for a in args:
        if isinstance(a, np.ndarray):
            flags = a.flags  # (a new object at each look)
            out.append((a.dtype.str, a.ndim, "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A",
                        flags.writeable, flags.aligned))
        else:
            out.append(type(a))
    return tuple(out)
