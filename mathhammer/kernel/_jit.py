"""Every numba option is decided here."""

from __future__ import annotations

import hashlib
import pathlib
from collections.abc import Callable
from typing import Any

import numba

from ._cache import Location, cache_dir, choose_location

#: Decided before anything is decorated: numba refuses ``cache=True`` when it finds no writable
#: folder, and resolves the folder at decoration.
LOCATION: Location = choose_location()


def sources_digest(folder: pathlib.Path) -> str:
    """A digest of every source file in ``folder`` (for the kernels: this package).

    numba marks a cached kernel stale only when the file defining it changes (its time and
    size), not when a helper it calls from another file does: a new rng.py under an unchanged
    simulate.py would run the old machine code. The digest joins that stamp, so a change to
    any file here compiles afresh."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def stamp_with_sources(dispatcher: Any, digest: str) -> None:
    """Join ``digest`` (:func:`sources_digest`) to ``dispatcher``'s cache stamp (numba's private
    cache object, defensively: if it changes shape, caching works as numba does it)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    stamp = getattr(cache_file, "_source_stamp", None)
    if cache_file is not None and stamp is not None:
        cache_file._source_stamp = (stamp, digest)


#: The digest of this package's sources, joined to every kernel's cache stamp.
SOURCES = sources_digest(pathlib.Path(__file__).parent)


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
            dispatcher = njit(cache=LOCATION.enabled, nogil=True, _nrt=False, **options)(func)
        stamp_with_sources(dispatcher, SOURCES)
        return dispatcher

    return decorate


#: Every kernel function: plain machine code that releases the GIL (the engine runs chunks on
#: a few Python threads). No IR inlining (``inline="always"``) and no ``parallel=True``: they
#: made one huge function that took LLVM over a minute to compile; LLVM inlines small helpers.
jit = _njit()
