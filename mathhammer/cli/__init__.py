"""The ``mathhammer`` command line (typer). Commands import the engine lazily, so ``--help``
never pays for numba."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .. import __version__
from . import _io
from .profiles import app as profiles_app
from .shoot import fight, shoot

__all__ = ["app", "main"]


class _Group(TyperGroup):
    """Usage errors as one line on stderr (plus a hint), exit code 2."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            typer.echo("Interrupted", err=True)
            rv = _io.ExitCode.INTERRUPTED
        except Exception as e:
            # click's exceptions (vendored inside typer >= 0.29): UsageError has exit code 2
            if not (hasattr(e, "format_message") and hasattr(e, "exit_code")):
                raise
            ctx = getattr(e, "ctx", None)
            where = ctx.command_path if ctx is not None else "mathhammer"
            hint = f"\n  hint: {where} --help" if e.exit_code == _io.ExitCode.USAGE else ""
            message = e.format_message()
            value = _offending_value(getattr(e, "param", None), sys.argv[1:] if args is None else list(args))
            if value is not None and repr(value) not in message:
                message += f" (got {value!r})"
            typer.echo(f"Error: {where}: {message}{hint}", err=True)
            rv = e.exit_code
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _offending_value(param: Any, argv: list[str]) -> str | None:
    """The command-line value given to ``param`` (so every error shows what was typed)."""
    opts = getattr(param, "opts", None) or []
    for i, arg in enumerate(argv):
        for opt in opts:
            if arg == opt and i + 1 < len(argv):
                return argv[i + 1]
            if opt.startswith("--") and arg.startswith(opt + "="):
                return arg[len(opt) + 1:]
    return None


app = typer.Typer(cls=_Group, name="mathhammer", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_show_locals=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Warhammer 40,000 10th-edition damage calculator: what does this weapon do to that target?")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mathhammer {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of unexpected errors.")] = False,
) -> None:
    """Warhammer 40,000 10th-edition damage calculator: what does this weapon do to that target?"""
    _io.DEBUG["on"] = debug


app.command("shoot", no_args_is_help=True)(shoot)
app.command("fight", no_args_is_help=True)(fight)
app.add_typer(profiles_app, name="profiles")


class _NoNumbaExtensions:
    """An import hook giving ``numba.core.entrypoints`` a do-nothing ``init_all``."""

    name = "numba.core.entrypoints"

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, self)

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


def main() -> None:
    """Console-script entry point.

    Once numba is loaded, interpreter teardown (garbage-collecting numba's and LLVM's object
    graphs) costs 0.1-0.3 s; output is flushed and the process ends at once instead.
    """
    _skip_numba_extensions()
    try:
        app()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    else:
        code = 0
    if "numba" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
