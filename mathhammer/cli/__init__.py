"""The ``mathhammer`` command line.

This module stays light (standard library only) so that the console script can take over
Ctrl-C before typer, rich and numpy are imported; the application is in :mod:`.root`.
"""

from __future__ import annotations

import errno
import gc
import io
import os
import signal
import sys
from typing import Any

__all__ = ["app", "main"]

_INTERRUPTED = 130
_GC_FIRST_GENERATION = 200_000


def _say_interrupted() -> None:
    try:
        os.write(2, b"Interrupted\n")
    except OSError:  # stderr closed: nowhere to say it
        pass


def _interrupted(signum: int, frame: Any) -> None:
    """SIGINT: one line and exit 130 at once, wherever the process is (an import, the kernel
    between two chunks, writing the output); nothing is left worth cleaning up."""
    _say_interrupted()
    os._exit(_INTERRUPTED)


def _take_over_ctrl_c() -> None:
    """Install the SIGINT handler, unless SIGINT is ignored (a background job keeps ignoring it)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)


def _stderr_or_null() -> None:
    """With stderr closed (``2>&-``) messages go nowhere instead of failing the run, and no file
    the run opens can become file descriptor 2."""
    if sys.stderr is None:
        try:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
        except OSError:
            pass


def _collect_less() -> None:
    """Start-up (numpy, numba, typer, rich) allocates ~110,000 objects that all stay alive, so
    the garbage collector's passes over them (every 700 allocations by default) find almost
    nothing and cost ~50 ms. A first generation of 200,000 objects lets a warm run finish
    without one; a compile or a long run still collects, in larger batches."""
    gc.set_threshold(_GC_FIRST_GENERATION, *gc.get_threshold()[1:])


class _WholeWrites(io.RawIOBase):
    """Standard output's file descriptor, written whole or not at all.

    CPython's buffered stdout hands a large text to the descriptor in one call; when the reader
    goes away part-way (``| head -1``) the call writes part, and the rest was dropped without an
    error, so the run ended with exit code 0. Here the rest is written in further calls, the
    next of which fails with EPIPE, which the command line reports (exit 1)."""

    def __init__(self, fd: int, name: Any) -> None:
        super().__init__()
        self._fd = fd
        self.name = name  # sys.stdout.name: "<stdout>"

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            wrote = os.write(self._fd, view[done:])
            if wrote == 0:  # never for a blocking descriptor; were it so, no loop for ever
                raise OSError(errno.EIO, "stdout took no bytes")
            done += wrote
        return done


def _stdout_written_whole() -> None:
    """Put :class:`_WholeWrites` under sys.stdout, with its name, encoding, error handler, line
    buffering, write-through and buffering (none with ``python -u``) (on POSIX, where stdout writes newlines as they
    are; elsewhere, and when stdout is not a plain file, it is left as it is). It is not
    seekable, even when redirected to a file: nothing here seeks in its output."""
    out = sys.stdout
    if os.name != "posix" or type(out) is not io.TextIOWrapper:
        return
    try:
        fd = out.fileno()
        out.flush()
    except (OSError, ValueError):
        return
    raw = _WholeWrites(fd, getattr(out, "name", fd))
    buffered = isinstance(getattr(out, "buffer", None), io.BufferedWriter)  # python -u: no buffer
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw) if buffered else raw, encoding=out.encoding,
                                  errors=out.errors, newline="\n", line_buffering=out.line_buffering,
                                  write_through=out.write_through)


def main() -> None:
    """Console-script entry point (and ``python -m mathhammer``).

    Once numba is loaded, interpreter teardown (garbage-collecting numba's and LLVM's object
    graphs) costs 0.1-0.3 s; output is flushed and the process ends at once instead (also
    when only llvmlite is, holding a native kernel: nothing of it needs tearing down).
    """
    _collect_less()
    _take_over_ctrl_c()
    _stderr_or_null()
    if sys.stdout is None:  # >&-: every command writes to stdout, so fail before the work
        sys.stderr.write("Error: stdout: closed; nothing can be written (reopen it or redirect it to a file)\n")
        sys.stderr.flush()
        sys.exit(1)
    _stdout_written_whole()
    try:
        from . import _io
        from .root import run

        code = _io.finish(run())
    except KeyboardInterrupt:  # SIGINT was ignored when we started, or raised by the engine
        _say_interrupted()
        code = _INTERRUPTED
    if "numba" in sys.modules or "llvmlite" in sys.modules:  # a kernel ran: its machine code stays
        os._exit(code)
    sys.exit(code)


def __getattr__(name: str) -> Any:
    """``mathhammer.cli.app`` (the typer application) on first use."""
    if name == "app":
        from .root import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
