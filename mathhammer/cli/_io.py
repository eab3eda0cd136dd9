"""The single place that writes to the terminal and turns errors into exit codes."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from enum import IntEnum
from typing import Any, TypeVar

import typer

from ..errors import MathhammerError

__all__ = ["ExitCode", "emit_json", "emit_view", "handle_errors", "warn"]

F = TypeVar("F", bound=Callable[..., Any])


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


def warn(message: str) -> None:
    """One warning line on stderr."""
    typer.echo(f"Warning: {message}", err=True)


def handle_errors(func: F) -> F:
    """Run a command body: expected errors become one line on stderr and exit 1; never a traceback
    unless ``--debug``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MathhammerError as e:
            typer.echo(error_text(e), err=True)
            raise typer.Exit(ExitCode.BAD_INPUT) from None
        except KeyboardInterrupt:
            typer.echo("Interrupted", err=True)
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as e:  # noqa: BLE001 - last line of defence: no traceback for users
            if DEBUG["on"] or os.environ.get("MATHHAMMER_DEBUG"):
                traceback.print_exc()
            typer.echo(f"Error: internal error: {type(e).__name__}: {e}\n  hint: please report it; "
                       "--debug shows the traceback", err=True)
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def emit_json(text: str) -> None:
    """Machine output: plain text on stdout (never through rich, which may wrap)."""
    typer.echo(text)


def emit_view(renderable: Any) -> None:
    """A rich renderable on stdout; colour only on a terminal, NO_COLOR honoured (by rich)."""
    from rich.console import Console

    Console(file=sys.stdout, highlight=False, soft_wrap=False).print(renderable)
