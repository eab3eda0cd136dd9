"""Numba's start-up, trimmed for the command-line process (never for a library user's process).

:func:`install` puts one import hook first on ``sys.meta_path`` before anything imports numba;
only :func:`mathhammer.cli.root.run` (the console script and ``python -m mathhammer``) calls it.
This module never imports numba itself: the hook acts when the kernel imports it. What it
trims, each safe because this process runs nothing but mathhammer's own kernels:

- ``numba.core.entrypoints`` becomes a stub whose ``init_all`` does nothing: numba imports
  importlib.metadata (~45 ms) only to load third-party numba extensions; the kernels use none.
- While ``numba.np.arraymath`` is imported, ``scipy.linalg`` is hidden: numba imports it
  (~250 ms) there only to decide, once per process, whether ``np.convolve`` and
  ``np.correlate`` may call BLAS; the kernels do no linear algebra.
- While ``numba.core.typing.cffi_utils`` is imported, ``cffi`` is hidden (~12 ms): it serves
  only to type cffi functions passed to jitted code.
- While ``numba.core.config`` is imported, ``yaml`` is hidden (~7 ms) unless the current folder
  has a ``.numba_config.yaml`` (the one thing numba reads with it).
- OpenBLAS, loaded with numpy, starts a thread per core at import (~100 ms of CPU on this
  project's 2-core reference machine); ``OPENBLAS_NUM_THREADS`` defaults to 1 here, unless the
  user set it: mathhammer's only BLAS calls are the exact engine's vector and small matrix
  products, which gain nothing from threads (benchmarks/bench_exact.py: the same wall time,
  less CPU time with one).
- Loading a kernel from numba's cache sets up numba's runtime only, not every typing and
  lowering registry numba has (~90 ms): machine code read from the cache is never typed or
  lowered again. A compile still gets everything: numba's compiler sets the registries up itself.

A library user keeps all of numba (BLAS in their own jitted code, their numba extensions) and
OpenBLAS's threads.
``tests/test_startup.py`` checks that each of these holds in the command-line process and none
in a library process, so a numba release that moves them fails the tests.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import Any, cast

__all__ = ["install", "installed"]

#: Modules hidden (as absent) while the key module is executed.
_HIDDEN_WHILE: dict[str, tuple[str, ...]] = {
    "numba.np.arraymath": ("scipy.linalg",),
    "numba.core.typing.cffi_utils": ("cffi",),
    "numba.core.config": ("yaml",),
}
_STUBBED = "numba.core.entrypoints"
_NUMBA_CONFIG_FILE = ".numba_config.yaml"
_BLAS_THREADS = "OPENBLAS_NUM_THREADS"


class _Hook:
    """The import hook (a meta path finder): stubs, hides or patches the modules listed above."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname == _STUBBED:
            return ModuleSpec(fullname, cast(Any, _StubLoader()))
        if fullname not in _HIDDEN_WHILE and fullname not in _AFTER:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec  # not a plain module on sys.path: leave it to numba as it is
        spec.loader = cast(Any, _Loader(spec.loader, _hidden(fullname), _AFTER.get(fullname)))
        return spec


class _StubLoader:
    """Loads ``numba.core.entrypoints`` as a module whose ``init_all`` does nothing (a loader by
    duck typing: importlib.abc costs imports)."""

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.init_all = _no_extensions  # type: ignore[attr-defined]


def _no_extensions() -> None:
    """``numba.core.entrypoints.init_all`` in the command-line process: no extension to load."""


class _Loader:
    """A module's own loader, run with some modules hidden and followed by a patch."""

    def __init__(self, loader: Any, hidden: tuple[str, ...], after: Callable[[ModuleType], None] | None) -> None:
        self._loader = loader
        self._hidden = hidden
        self._after = after

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_filename, ...
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # Only what nobody has imported yet is hidden: a loaded module stays as it is.
        hidden = [name for name in self._hidden if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]  # `import name` fails at once
        try:
            self._loader.exec_module(module)
        finally:
            for name in hidden:
                if name in sys.modules and sys.modules[name] is None:
                    del sys.modules[name]
        if self._after is not None:
            self._after(module)


def _hidden(fullname: str) -> tuple[str, ...]:
    names = _HIDDEN_WHILE.get(fullname, ())
    if "yaml" in names and os.path.isfile(_NUMBA_CONFIG_FILE):
        names = tuple(n for n in names if n != "yaml")  # numba needs it to read that file
    return names


def _light_cache_loads(caching: ModuleType) -> None:
    """Make loading from numba's cache initialise numba's runtime only.

    ``Cache.load_overload`` refreshes the whole target context (imports and installs every
    typing and lowering registry) before it reads the cache; the machine code it reads needs
    only the runtime (NRT). On a miss the dispatcher compiles, and the compiler refreshes the
    contexts itself, so a compile still sees every registry.
    """
    cache = getattr(caching, "Cache", None)
    load = getattr(cache, "load_overload", None)
    if cache is None or load is None:  # numba changed: keep its behaviour (the tests notice)
        return

    @functools.wraps(load)
    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        # Looked up, not imported: numba loaded it with its CPU target (and only the kernel
        # package imports numba).
        runtime = getattr(sys.modules.get("numba.core.runtime"), "rtsys", None)
        if runtime is None:  # numba changed: the full set-up (the tests notice)
            return load(self, sig, target_context)
        # An instance attribute shadows the method for this one load.
        target_context.refresh = functools.partial(runtime.initialize, target_context)
        try:
            return load(self, sig, target_context)
        finally:
            del target_context.refresh

    cache.load_overload = load_overload


_AFTER: dict[str, Callable[[ModuleType], None]] = {"numba.core.caching": _light_cache_loads}


def install() -> None:
    """Trim numba's start-up in this process, if numba is not loaded yet (else nothing)."""
    if "numba" not in sys.modules and not installed():
        sys.meta_path.insert(0, _Hook())
    if "numpy" not in sys.modules:  # read once, when numpy loads OpenBLAS
        os.environ.setdefault(_BLAS_THREADS, "1")


def installed() -> bool:
    """Whether this process has the hook (the command line: yes; a library user: no)."""
    return any(isinstance(finder, _Hook) for finder in sys.meta_path)
