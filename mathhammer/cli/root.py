"""The ``mathhammer`` typer application. Commands import the engine lazily, so ``--help``
never pays for numba."""

from __future__ import annotations

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

app = typer.Typer(cls=Group, name="mathhammer", no_args_is_help=True, add_completion=True,
                  pretty_exceptions_show_locals=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Warhammer 40,000 10th-edition damage calculator: what does this weapon do to that target?")


def _version(value: bool) -> None:
    if value:
        _io.emit_text(f"mathhammer {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print the version and exit.",
    )] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of unexpected errors.")] = False,
) -> None:
    """Warhammer 40,000 10th-edition damage calculator: what does this weapon do to that target?"""
    _io.DEBUG["on"] = debug


app.command("shoot", cls=Command, no_args_is_help=True)(shoot)
app.command("fight", cls=Command, no_args_is_help=True)(fight)
app.command("compare", cls=Command, no_args_is_help=True)(compare)
app.command("sweep", cls=Command, no_args_is_help=True)(sweep)
app.command("tank-shock", cls=Command, no_args_is_help=True)(tank_shock)
app.command("deadly-demise", cls=Command, no_args_is_help=True)(deadly_demise)
app.add_typer(profiles_app, name="profiles")
app.add_typer(roster_app, name="roster")


def run() -> int:
    """Run the application on ``sys.argv``; the exit code (output not yet flushed).

    This is the command-line process, so numba's start-up is trimmed for it (:mod:`._startup`);
    the application used in-process (``CliRunner``, a notebook) is not.
    """
    _startup.install()
    try:
        app()
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except OSError as e:  # a write that failed outside our own output functions (help text)
        return _io.output_failed(e)
    return 0
