"""The single place that writes to the terminal and turns errors into exit codes.

Output that cannot be written is handled the way command-line tools do: a reader that went
away (``| head -1``, EPIPE) ends the run quietly with exit 1 (Python's and click's
convention); any other failure (``>/dev/full``, a closed stdout) is one line on stderr and
exit 1. A stream that cannot encode a symbol (C locale, ``PYTHONIOENCODING=ascii``) gets its
ASCII spelling; JSON gets ``\\uXXXX`` escapes instead, which keep the data exact.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from enum import IntEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import typer

from ..errors import InputError, MathhammerError
from ..render.ascii import can_encode, escape_ascii, to_ascii

if TYPE_CHECKING:
    from ..render import OutputFormat
    from ..render.stream import RecordWriter

__all__ = ["ExitCode", "ascii_stdout", "check_writable", "echo_err", "emit_json", "emit_json_pieces", "emit_text",
           "emit_view", "finish", "handle_errors", "open_output", "output_failed", "report", "save_view", "warn"]

F = TypeVar("F", bound=Callable[..., Any])

#: Symbols the views use; a stream that cannot write all of them gets the ASCII views.
_SYMBOLS = "×±…≥→⚔·–█▏’"
#: Tables are never rendered narrower than this (or than their widest number and word): the
#: terminal wraps long lines, but no number is ever cut.
MIN_WIDTH = 40
_DEFAULT_WIDTH = 80
#: A run shorter than this (seconds) shows no progress bar.
PROGRESS_AFTER = 1.0


class ExitCode(IntEnum):
    """Process exit codes."""

    OK = 0
    BAD_INPUT = 1
    USAGE = 2
    DISAGREE = 3
    INTERNAL = 70
    INTERRUPTED = 130


DEBUG = {"on": False}


def error_text(e: MathhammerError) -> str:
    """``Error: <where>: <what> (got <value>)`` and, on a second line, the hint."""
    text = f"Error: {e.message()}"
    return text + (f"\n  hint: {e.hint}" if e.hint else "")


def _ascii_error_text(e: MathhammerError) -> str:
    """``error_text`` for a stderr that cannot encode it: symbols spelled in ASCII, but the
    offending value escaped (``'\\xd7'``), since it is the one thing that must be shown exactly."""
    text = f"Error: {escape_ascii(e.where)}: {to_ascii(e.what)}" if e.where else f"Error: {to_ascii(e.what)}"
    if e.value is not None:
        text += f" (got {ascii(e.value) if isinstance(e.value, str) else escape_ascii(str(e.value))})"
    return text + (f"\n  hint: {to_ascii(e.hint)}" if e.hint else "")


def report(e: MathhammerError) -> None:
    """A user-facing error on stderr (see ``error_text``)."""
    stream = sys.stderr
    text = error_text(e)
    if stream is not None and not can_encode(text, getattr(stream, "encoding", None)):
        text = _ascii_error_text(e)
    echo_err(text)


def echo_err(text: str) -> None:
    """Lines on stderr (in ASCII if stderr cannot encode them); nothing if stderr is gone."""
    stream = sys.stderr
    if stream is None:
        return
    if not can_encode(text, getattr(stream, "encoding", None)):
        text = escape_ascii(text)  # it may quote what was typed: escaped, never folded
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):  # closed or broken stderr: nowhere left to report anything
        pass


def warn(message: str) -> None:
    """One warning line on stderr."""
    echo_err(f"Warning: {message}")


def handle_errors(func: F) -> F:
    """Run a command body: expected errors become one line on stderr and exit 1; never a traceback
    unless ``--debug``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MathhammerError as e:
            report(e)
            raise typer.Exit(ExitCode.BAD_INPUT) from None
        except KeyboardInterrupt:
            echo_err("Interrupted")
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except (typer.Exit, typer.Abort, typer.BadParameter, SystemExit):  # BadParameter: a usage error (2)
            raise
        except Exception as e:  # noqa: BLE001 - last line of defence: no traceback for users
            if DEBUG["on"] or os.environ.get("MATHHAMMER_DEBUG"):
                traceback.print_exc()
            echo_err(f"Error: internal error: {type(e).__name__}: {e}\n  hint: please report it; "
                     "--debug shows the traceback")
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def output_failed(e: OSError) -> int:
    """Report a failed write to stdout (quietly for EPIPE), point stdout at the null device so
    nothing later fails the same way, and return the exit code (1)."""
    if e.errno != errno.EPIPE:
        echo_err(f"Error: stdout: cannot write the output: {e.strerror or e}")
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass
    return ExitCode.BAD_INPUT


def _stdout() -> IO[str]:
    if sys.stdout is None:
        raise OSError(errno.EBADF, "stdout is closed")
    return sys.stdout


def _write(text: str) -> None:
    """Write and flush stdout; a failure ends the run through ``output_failed``."""
    try:
        out = _stdout()
        out.write(text)
        out.flush()
    except OSError as e:
        raise typer.Exit(output_failed(e)) from None


def emit_text(text: str) -> None:
    """Plain text (help) on stdout, in ASCII if stdout cannot encode it."""
    encoding = getattr(sys.stdout, "encoding", None)
    _write((text if can_encode(text, encoding) else to_ascii(text)) + "\n")


def emit_json(text: str) -> None:
    """Machine output: plain text on stdout (never through rich, which may wrap)."""
    emit_json_pieces((text,))


def emit_json_pieces(pieces: Iterable[str]) -> None:
    """Machine output written as it is produced (a large document is never one string): the
    pieces, each escaped like :func:`emit_json` (the escaping is per character, so piece by
    piece gives the same bytes), then a newline."""
    from ..render.stream import json_escape

    try:
        out = _stdout()
        encoding = getattr(out, "encoding", None)
        for piece in pieces:
            out.write(piece if can_encode(piece, encoding) else json_escape(piece, encoding))
        out.write("\n")
        out.flush()
    except OSError as e:
        raise typer.Exit(output_failed(e)) from None


def ascii_stdout() -> bool:
    """Whether stdout cannot encode the views' symbols (the views then use ASCII)."""
    return not can_encode(_SYMBOLS, getattr(sys.stdout, "encoding", None))


class _AsciiFile:
    """A stdout wrapper spelling what it is given in ASCII (names from profiles, say)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", "ascii")

    def write(self, text: str) -> int:
        return self.stream.write(to_ascii(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


def terminal_width() -> int:
    """COLUMNS if it is a positive number, else the terminal's width, else 80 (rich would take
    ``COLUMNS=0`` literally and print nothing)."""
    raw = os.environ.get("COLUMNS", "").strip()
    if raw.isascii() and raw.isdigit() and 0 < int(raw) <= 100_000:
        return int(raw)
    try:
        return os.get_terminal_size(_stdout().fileno()).columns or _DEFAULT_WIDTH
    except (OSError, ValueError, AttributeError):
        return _DEFAULT_WIDTH


def emit_view(renderable: Any, *, svg: Path | None = None, html: Path | None = None) -> None:
    """A rich renderable on stdout; colour only on a terminal, NO_COLOR honoured (by rich).

    The width is the terminal's, but never less than the view needs to show every number and
    word whole (rich would otherwise cut ``77.123`` to ``77.…``). Text is shown as written: no
    markup (``[b]`` in a profile name stays) and no emoji codes (``:x:`` stays). ``svg`` /
    ``html``: also save the view, in colour, as a self-contained file (:func:`save_view`).
    """
    from rich.console import Console

    try:
        out = _stdout()
        file: Any = _AsciiFile(out) if ascii_stdout() else out
        console = Console(width=100_000, file=file, highlight=False, soft_wrap=False, markup=False, emoji=False)
        need = console.measure(renderable).minimum  # measured unconstrained, then printed at its width
        console.width = max(terminal_width(), need, MIN_WIDTH)
        console.print(renderable)
    except OSError as e:
        raise typer.Exit(output_failed(e)) from None
    save_view(renderable, svg=svg, html=html, width=console.width)


#: rich's SVG template without its web fonts (``@font-face`` rules that fetch Fira Code from a
#: CDN): the picture then needs nothing outside itself and uses a local monospace font.
_FONT_FACE = re.compile(r"@font-face \{\{.*?\}\}\s*", re.DOTALL)


def _svg_format() -> str:
    from rich._export_format import CONSOLE_SVG_FORMAT

    return _FONT_FACE.sub("", CONSOLE_SVG_FORMAT)


def check_writable(*, svg: Path | None = None, html: Path | None = None) -> None:
    """Fail before the work when a picture could not be saved: its folder is missing or not
    writable, it names a folder or a file that cannot be written, or both options name one file.

    Raises:
        InputError: naming the option, the path and the reason.
    """
    if svg is not None and html is not None and svg.resolve() == html.resolve():
        raise InputError("--svg and --html name the same file", where="--html", value=str(html),
                         hint="give each picture its own file")
    for path, option in ((svg, "--svg"), (html, "--html")):
        if path is None:
            continue
        folder = path.parent
        if path.is_dir():
            reason = "it is a folder"
        elif not folder.is_dir():
            reason = f"no folder {str(folder)!r}"
        elif path.exists() and not os.access(path, os.W_OK):
            reason = "the file is not writable"
        elif not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
            reason = f"the folder {str(folder)!r} is not writable"
        else:
            continue
        raise InputError(f"cannot write the file: {reason}", where=option, value=str(path))


def save_view(renderable: Any, *, svg: Path | None = None, html: Path | None = None, width: int | None = None) -> None:
    """Save ``renderable`` as an SVG picture and/or an HTML page (rich's console recording:
    colours kept, UTF-8, nothing outside the file referenced: no web font, no stylesheet).

    Raises:
        InputError: a file that cannot be written (its path and the reason).
    """
    if svg is None and html is None:
        return
    import io

    from rich.console import Console

    console = Console(record=True, file=io.StringIO(), width=100_000, force_terminal=True,
                      color_system="truecolor", highlight=False, soft_wrap=False, markup=False, emoji=False)
    need = console.measure(renderable).minimum  # measured unconstrained (rich clamps to the console's width)
    console.width = max(width or _DEFAULT_WIDTH, need, MIN_WIDTH)
    console.print(renderable)
    for path, option in ((svg, "--svg"), (html, "--html")):
        if path is None:
            continue
        text = (console.export_svg(title="mathhammer", clear=False, code_format=_svg_format()) if option == "--svg"
                else console.export_html(inline_styles=True, clear=False))
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            raise InputError(f"cannot write the file: {e.strerror or e}", where=option, value=str(path)) from None


class _Stdout:
    """stdout for a :class:`~mathhammer.render.stream.RecordWriter`: a failed write ends the run
    through :func:`output_failed` (quietly for a reader that went away)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None)

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as e:
            raise typer.Exit(output_failed(e)) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as e:
            raise typer.Exit(output_failed(e)) from None


@contextmanager
def open_output(fmt: OutputFormat, *, schema: str, columns: Sequence[str] = ()) -> Iterator[RecordWriter]:
    """A record writer on stdout (:func:`~mathhammer.render.stream.open_records`) for ``--format
    json|ndjson|csv``: each record whole despite Ctrl-C, characters stdout cannot encode escaped,
    a failed write one line on stderr and exit 1; the JSON document is written when the block ends."""
    from ..render.stream import open_records

    with open_records(fmt, _Stdout(_stdout()), schema=schema, columns=columns) as writer:
        yield writer


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for ``total`` steps (the context gives the function that counts
    one), shown once the run has taken a second (:data:`PROGRESS_AFTER`), on a terminal only:
    never in a pipe or a file."""
    stream = sys.stderr
    if stream is None or not stream.isatty() or total < 2:
        yield lambda: None
        return
    import time

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(label, BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(file=stream), transient=True)
    task = bar.add_task(label, total=total)
    start = time.monotonic()
    shown = False

    def advance() -> None:
        nonlocal shown
        bar.advance(task)
        if not shown and time.monotonic() - start > PROGRESS_AFTER:
            bar.start()
            shown = True

    try:
        yield advance
    finally:
        if shown:
            bar.stop()



def finish(code: int) -> int:
    """Flush stdout and stderr at the end of a run; the exit code, 1 if the output was lost."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as e:
        failed = output_failed(e)
        code = failed if code == ExitCode.OK else code
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):
        try:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
        except OSError:
            pass
    return code
