"""The only place exceptions are defined.

Every error carries *where* (a file, a YAML path, an option, a token), *what* went wrong,
the offending *value* and an optional *hint*. ``cli/_io.py`` turns them into one line of text.
"""

from __future__ import annotations

__all__ = ["MathhammerError", "ProfileError", "MatchupError", "InputError", "NotExactError"]


class MathhammerError(Exception):
    """Base class of every expected, user-facing failure."""

    def __init__(self, what: str, *, where: str = "", value: object = None, hint: str = "") -> None:
        self.what = what
        self.where = where
        self.value = value
        self.hint = hint
        super().__init__(self.message())

    def message(self) -> str:
        """One line: ``<where>: <what> (got <value>)``."""
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.value is not None:
            shown = repr(self.value) if isinstance(self.value, str) else str(self.value)
            if len(shown) > _SHOWN:  # a pasted file or a runaway script's argument: a line, not a page
                size = len(self.value) if isinstance(self.value, str) else len(shown)
                shown = f"{shown[:_SHOWN]}…, {size:,} characters"
            text += f" (got {shown})"
        return text


#: Characters of an offending value an error message shows.
_SHOWN = 200


class ProfileError(MathhammerError):
    """A profile (YAML file, inline notation, dice expression) is malformed or unknown."""


class MatchupError(MathhammerError):
    """A weapon and a target (and a context) that cannot be put together."""


class InputError(MathhammerError):
    """A bad command-line value that the option parser itself could not catch."""


class NotExactError(MathhammerError):
    """A scenario the exact engine cannot compute."""
