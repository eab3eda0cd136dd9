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
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numba
from numba.core.caching import NullCache

__all__ = ["Location", "cache_dir", "cache_path", "choose_location", "flush_notes", "load_or_compile"]

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


def _private_temp_dir() -> str | None:
    """A folder only this user can write, in the temporary directory (None if there is none).

    Cache files are pickles that numba loads, so a folder another user could plant files in
    must never be used.
    """
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        path = os.path.join(tempfile.gettempdir(), f"mathhammer-numba-{uid if uid is not None else 'user'}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022 or (uid is not None and st.st_uid != uid):
        return None
    return path


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
        print(NOTES.pop(0), file=sys.stderr, flush=True)


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
    print(announce, file=sys.stderr, flush=True)
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
