"""Where numba keeps the compiled kernels, and what happens when that place is unusable.

numba keeps machine code beside the sources (``__pycache__``), in ``NUMBA_CACHE_DIR`` or in the
user's cache folder, as pickles. Two things break it:

- no writable place at all (a read-only installation without a home directory): numba then
  refuses to decorate a ``cache=True`` function. :func:`choose_location` falls back to a private
  folder in the temporary directory, else to compiling without a cache.
- a damaged file (an interrupted write, a full disk): numba unpickles it and fails on every
  later run. :func:`load_or_compile` removes the damaged entry and compiles again.

Either way one line on stderr says so (:func:`flush_notes`). The repair peeks at numba's cache
objects (private API), defensively: if those change, caching simply works as numba does it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numba
from numba.core import types
from numba.core.caching import NullCache
from numba.core.funcdesc import FunctionDescriptor

from . import _progress
from .native import private_temp_dir as _private_temp_dir

__all__ = ["Location", "cache_dir", "cache_path", "choose_location", "flush_notes", "load_or_compile", "object_code"]

#: Shows the compile line around a compile (mathhammer.kernel._progress).
Status = Callable[[str], AbstractContextManager[None]]
#: Notes for the user, printed once by :func:`flush_notes`.
NOTES: list[str] = []


@dataclass(frozen=True)
class Location:
    """How the kernels are cached: ``enabled`` False compiles on every run; ``directory``
    None is numba's own choice, else the folder used as ``NUMBA_CACHE_DIR``."""

    enabled: bool = True
    directory: str | None = None


@contextmanager
def cache_dir(directory: str | None) -> Iterator[None]:
    """Make numba place caches created inside the block in ``directory`` (None: unchanged).

    numba resolves a function's cache folder when it is decorated, so the setting is needed
    only then, and restoring it leaves a library user's numba configuration as it was.
    """
    if directory is None:
        yield
        return
    config: Any = numba.config  # its settings are set dynamically: invisible to mypy
    before = config.CACHE_DIR
    config.CACHE_DIR = directory
    try:
        yield
    finally:
        config.CACHE_DIR = before


def _probe() -> int:  # pragma: no cover - never called, only decorated
    return 0


def _can_cache(directory: str | None) -> bool:
    """Whether numba finds a writable cache folder for this package's files."""
    try:
        with cache_dir(directory):
            numba.njit(cache=True)(_probe)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return False
    return True


def choose_location() -> Location:
    """Numba's own cache folder if it has a writable one, else a private temporary folder,
    else no cache (a note says which)."""
    if _can_cache(None):
        return Location()
    where = "beside mathhammer, in NUMBA_CACHE_DIR or in the user's cache folder"
    fallback = _private_temp_dir()
    if fallback is not None and _can_cache(fallback):
        NOTES.append(f"note: numba cannot cache compiled kernels {where}; caching them in {fallback}")
        return Location(directory=fallback)
    NOTES.append(f"note: numba cannot cache compiled kernels {where} or in a temporary folder; "
                 "compiling without a cache (slow start on every run)")
    return Location(enabled=False)


def flush_notes() -> None:
    """Print the pending notes on stderr, once each."""
    while NOTES:
        _progress.say(NOTES.pop(0))


def cache_path(dispatcher: Any) -> str | None:
    """The folder ``dispatcher`` is cached in (None: not cached)."""
    path = getattr(getattr(dispatcher, "_cache", None), "cache_path", None)
    return str(path) if path else None


def _entry_state(dispatcher: Any, sig: tuple[Any, ...]) -> str:
    """"cached", "missing", "damaged" (the index cannot be read) or "unknown" for the compiled
    code of ``dispatcher`` for argument types ``sig``."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file: Any = getattr(cache, "_cache_file", None)
    if cache is None or isinstance(cache, NullCache):
        return "missing"
    try:
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        load_index = cache_file._load_index
    except Exception:  # noqa: BLE001 - numba internals changed: let numba decide
        return "unknown"
    try:
        index = load_index()
    except Exception:  # noqa: BLE001 - EOFError, UnpicklingError, ValueError, ...: unreadable
        return "damaged"
    return "cached" if key in index else "missing"


def _discard(dispatcher: Any) -> None:
    """Remove every cache file of ``dispatcher``; if that fails, stop caching it."""
    cache = dispatcher._cache
    path = str(cache.cache_path)
    base = str(cache._impl.filename_base)
    try:
        for name in os.listdir(path):
            if name == f"{base}.nbi" or (name.startswith(f"{base}.") and name.endswith(".nbc")):
                os.remove(os.path.join(path, name))
    except OSError:
        dispatcher._cache = NullCache()
        NOTES.append(f"note: numba cache at {path} was damaged and cannot be removed; compiling without it")
        return
    NOTES.append(f"note: numba cache at {path} was damaged; recompiling")


def _misses(dispatcher: Any, sig: tuple[Any, ...]) -> int | None:
    counter = getattr(dispatcher, "_cache_misses", None)
    return None if counter is None else int(counter[sig])


def _announced(announce: str, status: Status | None) -> AbstractContextManager[None]:
    """``status(announce)``, or print ``announce`` once (None)."""
    if status is not None:
        return status(announce)
    _progress.say(announce)
    return nullcontext()


def load_or_compile(dispatcher: Any, sig: tuple[Any, ...], announce: str, status: Status | None = None) -> None:
    """Load ``dispatcher``'s code for ``sig`` from the cache or compile it (printing
    ``announce`` first, or showing it with ``status`` around the compile), replacing a damaged
    cache entry.

    A damaged index is seen before numba reads it; a damaged data file only when numba fails
    to load it, which it does before it counts a cache miss and starts compiling.
    """
    state = _entry_state(dispatcher, sig)
    if state == "damaged":
        _discard(dispatcher)
    flush_notes()
    misses = _misses(dispatcher, sig)
    try:
        with _announced(announce, status) if state != "cached" else nullcontext():
            dispatcher.compile(sig)
    except Exception:
        loading = misses is not None and _misses(dispatcher, sig) == misses and sig not in dispatcher.overloads
        if not loading or isinstance(dispatcher._cache, NullCache):
            raise
        _discard(dispatcher)
        flush_notes()
        with _announced(announce, status):
            dispatcher.compile(sig)


def object_code(dispatcher: Any, sig: tuple[Any, ...]) -> tuple[bytes, str] | None:
    """(object code, C wrapper's symbol) of ``dispatcher``'s machine code for ``sig``, as numba's
    cache holds it (what :mod:`.native` keeps for runs without numba); None when it is not
    cached or numba's cache objects changed shape.

    The code is read back from numba's cache entry (numba hands the object code of a library it
    loads to the JIT and drops it): the entry's one ELF object, and the symbol from the entry's
    own function descriptor. Not this process's: numba's symbols carry a per-process counter, and
    the entry may have been written by another process that compiled the same kernel at the
    same time (the last writer wins), so this process's name need not be in the entry's object."""
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or isinstance(cache, NullCache):
        return None
    try:
        if dispatcher.overloads[sig].signature.return_type != types.int64:  # the native entry returns an int64
            return None
        data = cache._cache_file.load(cache._index_key(sig, dispatcher.targetctx.codegen()))
    except Exception:  # noqa: BLE001 - numba internals changed or the entry is unreadable: keep nothing
        return None
    found: list[bytes] = []
    _objects(data, found)
    descriptors = [d for d in (data if isinstance(data, tuple) else ()) if isinstance(d, FunctionDescriptor)]
    if len(found) != 1 or len(descriptors) != 1:
        return None
    symbol = getattr(descriptors[0], "llvm_cfunc_wrapper_name", None)
    return (found[0], symbol) if isinstance(symbol, str) else None


def _objects(data: Any, found: list[bytes]) -> None:
    """Collect the ELF objects in ``data`` (nested tuples, lists and dicts) into ``found``."""
    if isinstance(data, bytes):
        if data.startswith(b"\x7fELF"):
            found.append(data)
    elif isinstance(data, (tuple, list)):
        for item in data:
            _objects(item, found)
    elif isinstance(data, dict):
        for item in data.values():
            _objects(item, found)
