"""The ``mathhammer`` typer application. Commands import the engine lazily, so ``--help``
never pays for numba."""

from __future__ import annotations

import sys
from typing import Annotated, Any, cast

import typer

from .. import __version__
from . import _io
from ._command import Command, Group
from .profiles import app as profiles_app
from .shoot import fight, shoot

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
app.add_typer(profiles_app, name="profiles")


class _NoNumbaExtensions:
    """An import hook giving ``numba.core.entrypoints`` a do-nothing ``init_all``."""

    name = "numba.core.entrypoints"

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, cast(Any, self))  # a loader by duck typing (importlib.abc costs imports)

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        module.init_all = lambda: None


def _skip_numba_extensions() -> None:
    """Numba's start-up imports importlib.metadata (~45 ms) only to load third-party numba
    extensions through entry points; mathhammer's kernels use none. In the command-line process
    (never when mathhammer is imported as a library) that module is replaced by a stub."""
    if "numba" not in sys.modules:
        sys.meta_path.insert(0, _NoNumbaExtensions())


def run() -> int:
    """Run the application on ``sys.argv``; the exit code (output not yet flushed)."""
    _skip_numba_extensions()
    try:
        app()
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except OSError as e:  # a write that failed outside our own output functions (help text)
        return _io.output_failed(e)
    return 0
