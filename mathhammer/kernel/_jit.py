"""Every numba option is decided here."""

from __future__ import annotations

import sys
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
    def decorate(func: Any) -> Any:
        with cache_dir(LOCATION.directory):
            return numba.njit(cache=LOCATION.enabled, nogil=True, **options)(func)

    return decorate


jit = _njit()
inline = _njit(inline="always")
parallel = _njit(parallel=True)
prange = numba.prange


def _init_cpu_target() -> None:
    """Initialise numba's CPU target now, without importing scipy.linalg.

    Numba's target set-up imports ``scipy.linalg`` (about 0.25 s) only to learn whether
    ``np.dot`` may use BLAS; these kernels use no linear algebra, and the start-up time of
    ``mathhammer shoot`` is a feature. Skipped when numba or scipy.linalg is already set up.
    """
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # makes `import scipy.linalg` fail fast
    try:
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()
    finally:
        if "scipy.linalg" in sys.modules and sys.modules["scipy.linalg"] is None:
            del sys.modules["scipy.linalg"]


_init_cpu_target()
