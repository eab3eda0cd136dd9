"""The ``mathhammer`` typer application. Commands import the engine lazily, so ``--help``
never pays for numba."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from .. import __version__
from . import _io, _startup
from ._command import Command, Group
from .compare import compare
from .events import deadly_demise, tank_shock
from .profiles import app as profiles_app
from .roster import app as roster_app
from .shoot import fight, shoot
from .sweep import sweep

__all__ = ["app", "run"]

_HELP = "Warhammer 40,000 10th-edition damage calculator: what does this weapon do to that target?"

#: The commands (name, function), in the order ``--help`` lists them.
_COMMANDS = (("shoot", shoot), ("fight", fight), ("compare", compare), ("sweep", sweep),
             ("tank-shock", tank_shock), ("deadly-demise", deadly_demise))


def _version(value: bool) -> None:
    if value:
        _io.emit_text(f"mathhammer {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print the version and exit.",
    )] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of unexpected errors.")] = False,
) -> None:
    """Warhammer 40,000 10th-edition damage calculator: what does this weapon do to that target?"""
    _io.DEBUG["on"] = debug


def _application(only: str | None = None) -> typer.Typer:
    """The application: every command, or (``only``) the root options and that one command.

    typer turns every registered command's signature into click's objects when the
    application starts (~25 ms for all of them, a twentieth of a warm run); a run of one plain
    command needs only its own, and gives the same help, errors and output for it."""
    application = typer.Typer(cls=Group, name="mathhammer", no_args_is_help=True, add_completion=True,
                              pretty_exceptions_show_locals=False, rich_markup_mode=None,
                              context_settings={"help_option_names": ["-h", "--help"]}, help=_HELP)
    application.callback()(_root)
    for name, function in _COMMANDS:
        if only is None or name == only:
            application.command(name, cls=Command, no_args_is_help=True)(function)
    if only is None:
        application.add_typer(profiles_app, name="profiles")
        application.add_typer(roster_app, name="roster")
    return application


app = _application()


def _for(argv: list[str]) -> typer.Typer:
    """The application to run for ``argv``: one holding only the command it starts with when
    that is a plain command (no root option before it, no shell completion asked for); else
    :data:`app`, whose help lists every command and whose errors suggest the right name."""
    first = argv[1] if len(argv) > 1 else ""
    if any(name == first for name, _ in _COMMANDS) and "_MATHHAMMER_COMPLETE" not in os.environ:
        return _application(first)
    return app


def run() -> int:
    """Run the application on ``sys.argv``; the exit code (output not yet flushed).

    This is the command-line process, so numba's start-up is trimmed for it (:mod:`._startup`);
    the application used in-process (``CliRunner``, a notebook) is not.
    """
    _startup.install()
    try:
        _for(sys.argv)()
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except OSError as e:  # a write that failed outside our own output functions (help text)
        return _io.output_failed(e)
    return 0
