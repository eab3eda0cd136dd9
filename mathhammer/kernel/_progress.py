"""The line on stderr while the kernels compile.

:func:`plain` prints it once. :func:`elapsed` also counts the seconds on that line while the
block runs, from a small thread, when stderr is a terminal (the command line asks for it; a
library caller gets the plain line unless it asks too). Either is a context manager around
the compile; nothing outlives the block.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["elapsed", "plain", "say"]

#: Seconds between updates of the live line.
TICK = 0.5


def say(text: str, stream: TextIO | None = None) -> None:
    """Print ``text`` as one line on ``stream`` (stderr), if it can be written: a note is never
    worth failing a run for (stderr closed under a running process, or a pipe whose reader left)."""
    out = stream or sys.stderr
    if out is None:
        return
    try:
        print(text, file=out, flush=True)
    except (OSError, ValueError):
        pass


@contextmanager
def plain(text: str, stream: TextIO | None = None) -> Iterator[None]:
    """Print ``text`` as one line (:func:`say`), then run the block."""
    say(text, stream)
    yield


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


@contextmanager
def elapsed(text: str, stream: TextIO | None = None) -> Iterator[None]:
    """``text`` followed by the seconds spent in the block, updated in place on a terminal
    (elsewhere the plain line); the final count stays on the line."""
    out = stream or sys.stderr
    if not _isatty(out):
        with plain(text, out):
            yield
        return
    t0 = time.monotonic()
    done = threading.Event()

    def show() -> None:
        try:
            out.write(f"\r{text} {time.monotonic() - t0:.0f} s")
            out.flush()
        except (OSError, ValueError):  # the terminal went away: the compile goes on
            done.set()

    def tick() -> None:
        while not done.wait(TICK):
            show()

    show()
    ticker = threading.Thread(target=tick, name="mathhammer-compile-status", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
        show()
        try:
            out.write("\n")
            out.flush()
        except (OSError, ValueError):
            pass
