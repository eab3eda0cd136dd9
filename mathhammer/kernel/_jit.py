"""Every numba option is decided here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba

from ._cache import Location, cache_dir, choose_location

#: Decided before anything is decorated: numba refuses ``cache=True`` when it finds no writable
#: folder, and resolves the folder at decoration.
LOCATION: Location = choose_location()


def _njit(**options: Any) -> Callable[[Any], Any]:
    # cache=True: compiled machine code is kept on disk, so only the first run pays for LLVM
    # (False only when no folder is writable, see _cache.choose_location).
    # No fastmath: the kernels do integer work and must stay bit-reproducible.
    # _nrt=False: no reference counting of arrays. The kernels allocate nothing (the caller
    # passes every array in), and the counting's atomic operations at each call of a helper
    # would cost more than the helper.
    def decorate(func: Any) -> Any:
        with cache_dir(LOCATION.directory):
            njit: Any = numba.njit  # _nrt is a numba option its type stubs do not list
            return njit(cache=LOCATION.enabled, nogil=True, _nrt=False, **options)(func)

    return decorate


#: Every kernel function: plain machine code that releases the GIL (the engine runs chunks on
#: a few Python threads). No IR inlining (``inline="always"``) and no ``parallel=True``: they
#: made one huge function that took LLVM over a minute to compile; LLVM inlines small helpers.
jit = _njit()
