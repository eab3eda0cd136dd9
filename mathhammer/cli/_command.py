"""The click classes behind every command: one error line per usage error, help without an
error when a command is given nothing, and no silently dropped repeated options."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from ..errors import InputError, MathhammerError
from . import _io
from ._click import Context, Parameter
from ._types import option_name

__all__ = ["Command", "Group"]


class _Repeated(tuple[str, ...]):
    """The values of a repeated option, shown as ``'knight', then 'rhino'``."""

    def __str__(self) -> str:
        return ", then ".join(repr(v) for v in self)


class Command(TyperCommand):
    """A command whose single-value options may be given once: the parser keeps only the last
    value of a repeated option, so ``-t knight -t rhino`` would silently shoot the Rhino."""

    def make_parser(self, ctx: Context) -> Any:
        parser = super().make_parser(ctx)
        if ctx.resilient_parsing:  # shell completion: parse leniently, never fail
            return parser
        seen: dict[str, str] = {}
        found = {**getattr(parser, "_long_opt", {}), **getattr(parser, "_short_opt", {})}
        for opt in {id(o): o for o in found.values()}.values():
            # "store" is a single-value option ("append": repeatable; "store_const": a flag)
            if getattr(opt, "action", None) == "store" and isinstance(getattr(opt, "obj", None), Parameter):
                opt.process = _once(opt.process, opt.obj, seen)
        return parser


def _once(process: Any, param: Parameter, seen: dict[str, str]) -> Any:
    """``process`` (click's per-occurrence hook) refusing a second occurrence of ``param``."""

    def wrapped(value: Any, state: Any) -> None:
        name = param.name or ""
        if name in seen:
            raise InputError("given more than once; it takes one value",
                             where=option_name(param), value=_Repeated((seen[name], str(value))))
        seen[name] = str(value)
        process(value, state)

    return wrapped


class Group(TyperGroup):
    """Usage errors as one line on stderr (plus a hint), exit code 2; bad values exit 1; a
    command given no arguments prints its help on stdout and exits 0."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False,
                              windows_expand_args=windows_expand_args, **extra)
        except typer.Abort:
            _io.echo_err("Interrupted")
            rv = _io.ExitCode.INTERRUPTED
        except MathhammerError as e:
            _io.report(e)
            rv = _io.ExitCode.BAD_INPUT
        except Exception as e:
            rv = _click_error(e, sys.argv[1:] if args is None else list(args), self)
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _click_error(e: Exception, argv: list[str], root: Any = None) -> int:
    """Print a click exception (vendored inside typer >= 0.29) as one line; its exit code
    (``root``: the application's group, to name the command when the exception has no context)."""
    if not (hasattr(e, "format_message") and hasattr(e, "exit_code")):
        raise e
    ctx = getattr(e, "ctx", None)
    if type(e).__name__ == "NoArgsIsHelpError" and ctx is not None:
        try:
            _io.emit_text(ctx.get_help())  # a bare command asks for its help: not an error
        except typer.Exit as failed:  # stdout could not take it: emit_text said so in one line
            return int(failed.exit_code or 0)
        return _io.ExitCode.OK
    negative = _negative_count(e, argv)
    if negative is not None:
        _io.report(InputError("a weapon count must be at least 1", where="weapon", value=negative))
        return _io.ExitCode.BAD_INPUT
    where = ctx.command_path if ctx is not None else _typed_command(root, argv)
    hint = f"\n  hint: {where} --help" if e.exit_code == _io.ExitCode.USAGE else ""
    message = e.format_message()
    value = _offending_value(getattr(e, "param", None), argv)
    if value is not None and repr(value) not in message:
        message += f" (got {value!r})"
    _io.echo_err(f"Error: {where}: {message}{hint}")
    return int(e.exit_code)


def _typed_command(root: Any, argv: list[str]) -> str:
    """``mathhammer`` and the (sub)commands ``argv`` names, for an error click raised without
    a context (an option missing its value: ``shoot railgun -t``)."""
    path, command = ["mathhammer"], root
    for arg in argv:
        found = getattr(command, "commands", {}).get(arg)
        if found is None:
            if arg.startswith("-") and arg != "--" and command is root:
                continue  # the application's own options (--debug)
            break
        path.append(arg)
        command = found
    return " ".join(path)


#: A weapon given with a negative count (``-1x railgun``), which click reads as an option.
_NEGATIVE_COUNT = re.compile(r"-[0-9]+\s*[xX\u00d7]")


def _negative_count(e: Exception, argv: list[str]) -> str | None:
    """The argument, when click refused a weapon with a negative count as an unknown option."""
    if type(e).__name__ != "NoSuchOption":
        return None
    name = str(getattr(e, "option_name", ""))
    argv = argv[:argv.index("--")] if "--" in argv else argv
    return next((a for a in argv if a.startswith(name) and _NEGATIVE_COUNT.match(a)), None)


def _offending_value(param: Any, argv: list[str]) -> str | None:
    """The command-line value given to ``param`` (so every error shows what was typed)."""
    opts = getattr(param, "opts", None) or []
    argv = argv[:argv.index("--")] if "--" in argv else argv  # after --, nothing is an option
    for i, arg in enumerate(argv):
        for opt in opts:
            if arg == opt and i + 1 < len(argv):
                return argv[i + 1]
            if opt.startswith("--") and arg.startswith(opt + "="):
                return arg[len(opt) + 1:]
    return None
