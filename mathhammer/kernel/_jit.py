"""Every numba option is decided here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
from numba.core import types

from ._cache import Location, cache_dir, choose_location
from .native import kernel_sources, sources_digest

__all__ = ["LOCATION", "SOURCES", "jit", "jit_by_constant", "sources_digest", "stamp_with_sources"]

#: Decided before anything is decorated: numba refuses ``cache=True`` when it finds no writable
#: folder, and resolves the folder at decoration.
LOCATION: Location = choose_location()


def stamp_with_sources(dispatcher: Any, digest: str) -> None:
    """Join ``digest`` (:func:`sources_digest`) to ``dispatcher``'s cache stamp (numba's private
    cache object, defensively: if it changes shape, caching works as numba does it)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    stamp = getattr(cache_file, "_source_stamp", None)
    if cache_file is not None and stamp is not None:
        cache_file._source_stamp = (stamp, digest)


#: The digest of this package's sources, joined to every kernel's cache stamp.
SOURCES = kernel_sources()


def _njit(*, by_constant: bool = False, **options: Any) -> Callable[[Any], Any]:
    # cache=True: compiled machine code is kept on disk, so only the first run pays for LLVM
    # (False only when no folder is writable, see _cache.choose_location).
    # No fastmath: the kernels do integer work and must stay bit-reproducible.
    # _nrt=False: no reference counting of arrays. The kernels allocate nothing (the caller
    # passes every array in), and the counting's atomic operations at each call of a helper
    # would cost more than the helper.
    def decorate(func: Any) -> Any:
        with cache_dir(LOCATION.directory):
            njit: Any = numba.njit  # _nrt is a numba option its type stubs do not list
            dispatcher = njit(cache=LOCATION.enabled, nogil=True, _nrt=False, **options)(func)
        stamp_with_sources(dispatcher, SOURCES)
        if not by_constant:
            _one_version_per_types(dispatcher)
        return dispatcher

    return decorate


def _one_version_per_types(dispatcher: Any) -> None:
    """Compile a kernel function called from another one once per argument *types*, not once per
    constant value: numba types a constant argument (``_count_at(..., 0, ...)``) as a literal and
    compiles a version of the callee for each value, which made 72 versions of 27 functions and
    a third of the first run's compile time (18 to 23 CPU-s; with this, 28 versions and 11 to
    14 s, benchmarks/bench_cold.py). The constants gained nothing measurable at run time (the
    callees index arrays with them, and LLVM inlines the callees): bench_kernel and bench_units
    gave the same trials per second within the machine's noise. ``get_call_template`` is what
    numba's type inference asks a dispatcher for at each call site;
    tests/test_kernel_compile.py counts the versions, so a numba release that types these calls
    some other way is noticed."""
    resolve = getattr(dispatcher, "get_call_template", None)
    if resolve is None:  # numba changed: keep its behaviour (the test notices)
        return

    def get_call_template(args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        return resolve(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template


#: Every kernel function: plain machine code that releases the GIL (the engine runs chunks on
#: a few Python threads). No IR inlining (``inline="always"``) and no ``parallel=True``: they
#: made one huge function that took LLVM over a minute to compile; LLVM inlines small helpers.
jit = _njit()
#: The same, compiled once per constant argument value as numba does by default: only for a
#: small helper in the innermost loop whose constant picks a table row (``joint``'s ``kind``).
jit_by_constant = _njit(by_constant=True)
