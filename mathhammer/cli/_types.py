"""Option value types: whole numbers the way people write them, with documented bounds."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from enum import Enum
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._click import CompletionItem, Context, Parameter, ParamType

__all__ = ["Choice", "Folder", "WholeNumber", "option_name", "parse_whole"]

#: ``1000000``, ``1_000_000`` (Python's grouping) or ``1,000,000`` (the help's own spelling),
#: optionally signed. ASCII digits only: ``int()`` would also read ``٣`` or ``２``.
_GROUPED = re.compile(r"[+-]?(?:[0-9]+(?:_[0-9]+)*|[0-9]{1,3}(?:,[0-9]{3})+)")
#: ``1e6``, ``1.5e3``, ``1500.0``: accepted when the value is a whole number.
_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
#: Digits kept when a value is echoed back in an error (``1e999`` is shown as typed).
_SHOWN_DIGITS = 30


def parse_whole(text: str) -> Decimal | None:
    """The whole number ``text`` spells, or None if it is not one.

    A Decimal, not an int, so that ``1e999999999`` is compared with a bound without ever being
    expanded into a billion-digit integer.
    """
    s = text.strip()
    if _GROUPED.fullmatch(s):
        return Decimal(s.replace("_", "").replace(",", ""))
    if not _DECIMAL.fullmatch(s):
        return None
    try:
        value = Decimal(s)
    except InvalidOperation:
        return None
    return value if value == value.to_integral_value() else None


class WholeNumber(ParamType):
    """A whole number in ``lo..hi`` (either bound may be open).

    Text that is not a whole number is a usage error (exit 2); a whole number outside the
    bounds is an ``InputError`` naming the option, the bounds and the value (exit 1).
    """

    name = "integer"

    def __init__(self, lo: int | None = None, hi: int | None = None) -> None:
        self.lo = lo
        self.hi = hi

    def convert(self, value: Any, param: Parameter | None, ctx: Context | None) -> int:
        """Parse and range-check one value (defaults arrive as ints)."""
        if isinstance(value, int) and not isinstance(value, bool):
            number: Decimal | None = Decimal(value)
            text = str(value)
        else:
            text = str(value)
            number = parse_whole(text)
        if number is None:
            self.fail(f"{text!r} is not a whole number (e.g. 1000, 1e6, 1_000_000 or 1,000,000)", param, ctx)
        self._check(number, text, param)
        if number.adjusted() >= _SHOWN_DIGITS:  # an open bound: int() of 1e999999999 would never end
            raise InputError(f"is too large (more than {_SHOWN_DIGITS} digits)", where=option_name(param), value=text)
        return int(number)

    def _check(self, number: Decimal, text: str, param: Parameter | None) -> None:
        if (self.lo is None or number >= self.lo) and (self.hi is None or number <= self.hi):
            return
        if self.lo is not None and self.hi is not None:
            what = f"must be between {self.lo:,} and {self.hi:,}"
        elif self.lo is not None:
            what = f"must be at least {self.lo:,}"
        else:
            what = f"must be at most {self.hi:,}"
        shown: object = int(number) if number.adjusted() < _SHOWN_DIGITS else text
        raise InputError(what, where=option_name(param), value=shown)


def option_name(param: Parameter | None) -> str:
    """``--trials``: the long name of an option (the first one declared)."""
    if param is None:
        return "value"
    opts = [o for o in getattr(param, "opts", []) if o.startswith("--")]
    return opts[0] if opts else (param.name or "value")


class _PathName(ParamType):
    """A path typed on the command line; an empty one is refused (``Path('')`` would silently
    mean the current folder, and an error about it would name ``.``, not what was typed)."""

    name = "path"
    hint = ""

    def convert(self, value: Any, param: Parameter | None, ctx: Context | None) -> Path:
        """``value`` as a Path, unless it is empty."""
        if isinstance(value, Path):
            return value
        if not str(value).strip():
            raise InputError(f"empty {self.name} name", where=option_name(param), value=str(value), hint=self.hint)
        return self.checked(Path(str(value)), param, ctx)

    def checked(self, path: Path, param: Parameter | None, ctx: Context | None) -> Path:
        """``path`` once it is known not to be empty."""
        return path


class Folder(_PathName):
    """A folder path (not empty)."""

    name = "folder"
    hint = "give a folder, or . for the current one"


class File(_PathName):
    """A file to write (not empty, not a folder)."""

    name = "file"

    def __init__(self, example: str) -> None:
        self.hint = f"give a file to write, e.g. {example}"

    def checked(self, path: Path, param: Parameter | None, ctx: Context | None) -> Path:
        if path.is_dir():  # a usage error, as click's own Path(dir_okay=False) says it
            self.fail(f"File {str(path)!r} is a directory.", param, ctx)
        return path


class Choice(ParamType):
    """One of an Enum's values, read as the Enum reads them (its choices in any case, ``_`` or a
    space for ``-``, and its aliases: ``non_crit``, ``ev_optimal``); anything else is a usage
    error listing the values (exit 2)."""

    name = "choice"

    def __init__(self, kind: type[Enum]) -> None:
        self.kind = kind

    def get_metavar(self, param: Parameter, ctx: Context | None = None) -> str:
        return "<" + "|".join(str(m.value) for m in self.kind) + ">"

    def shell_complete(self, ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
        """The values that start with what was typed (any case)."""
        typed = incomplete.lower()
        return [CompletionItem(str(m.value)) for m in self.kind if str(m.value).startswith(typed)]

    def convert(self, value: Any, param: Parameter | None, ctx: Context | None) -> Any:
        """The member's value (typer then turns the value into the member: it would turn
        anything else, a member included, into None)."""
        try:
            return self.kind(value).value
        except ValueError:
            self.fail(f"{value!r} is not one of {', '.join(repr(m.value) for m in self.kind)}.", param, ctx)
