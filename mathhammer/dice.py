"""Dice expressions: parse and format ``D6+1``, ``2D3``, ``3``; exact probability mass functions.

D3 is ceil(D6/2) (R-0.6); ``xDy+N`` is the sum of x dice plus N, the ``+N`` being part of the
value, not a modifier (R-8.1).

Examples:
    >>> str(parse("d6+6")), str(parse("2D6")), str(parse("3"))
    ('D6+6', '2D6', '3')
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from .errors import ProfileError
from .limits import MAX_DICE, MAX_DICE_VALUE
from .model import DiceExpr

__all__ = ["bounded_int", "faces", "parse", "pmf"]

# ASCII digits only: Python's \d and int() also accept Arabic-Indic, fullwidth and other digits.
_DICE_RE = re.compile(r"^(?:(?P<count>[0-9]*)D(?P<sides>[0-9]*))?(?:(?P<sign>\+)?(?P<plus>[0-9]+))?$", re.ASCII)
_MAX_DICE = MAX_DICE
_MAX_VALUE = MAX_DICE_VALUE
#: Any number of more digits is "too large" for every limit, and is never handed to int().
_MAX_DIGITS = 9


def bounded_int(digits: str) -> int:
    """The value of a string of ASCII digits, or ``10**_MAX_DIGITS`` when it is longer than that.

    Every limit is far below the cap, so a caller comparing against its limit reports "too large"
    without converting a huge string (``int()`` refuses more than 4300 digits, and a C long
    overflows much earlier).
    """
    if not re.fullmatch(r"[0-9]+", digits, re.ASCII):
        raise ValueError(f"not ASCII digits: {digits!r}")
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= _MAX_DIGITS else 10**_MAX_DIGITS


def parse(text: str, *, where: str = "dice") -> DiceExpr:
    """Parse a dice expression such as ``D6``, ``2D3+1``, ``d6 + 6`` or ``4``.

    Raises:
        ProfileError: naming ``where`` and the text, for anything else (``D7``, ``2D``, ``D6+-1``).
    """
    raw = str(text)
    shown = _shown(raw)
    # Spaces only around '+' ("d6 + 6"): elsewhere they would join numbers ("1 2" is not 12).
    compact = re.sub(r"\s*\+\s*", "+", raw.strip()).upper()
    hint = "write N, D3, D6, nD3 or nD6, optionally with +m: e.g. 3, D6+6, 2D6, D3+1"
    if not compact.isascii():
        raise ProfileError("expected a dice expression in ASCII digits 0-9", where=where, value=shown, hint=hint)
    if re.search(r"\s", compact):
        raise ProfileError("a dice expression has no spaces (except around +)", where=where, value=shown, hint=hint)
    m = _DICE_RE.match(compact)
    if not compact or m is None or (m["sides"] is None and m["plus"] is None):
        raise ProfileError("expected a dice expression", where=where, value=shown, hint=hint)
    if m["sides"] is None:  # a plain number
        if m["sign"]:
            raise ProfileError("expected a dice expression", where=where, value=shown, hint=hint)
        return _checked(DiceExpr(plus=bounded_int(m["plus"])), shown, where)
    if m["sides"] == "":
        raise ProfileError("dice need a number of sides", where=where, value=shown, hint=hint)
    sides = bounded_int(m["sides"])
    if sides not in (3, 6):
        raise ProfileError("only D3 and D6 exist in 40k", where=where, value=shown, hint=hint)
    if m["plus"] is not None and not m["sign"]:
        raise ProfileError("expected a dice expression", where=where, value=shown, hint=hint)
    count = bounded_int(m["count"]) if m["count"] else 1
    if not 1 <= count <= _MAX_DICE:
        raise ProfileError(f"number of dice must be 1 to {_MAX_DICE}", where=where, value=shown)
    return _checked(DiceExpr(count=count, sides=sides, plus=bounded_int(m["plus"] or "0")), shown, where)


def _shown(text: str, limit: int = 40) -> str:
    """A value as error messages quote it: cut short if it is very long."""
    return text if len(text) <= limit else text[:limit] + "…"


def _checked(expr: DiceExpr, shown: str, where: str) -> DiceExpr:
    if expr.maximum > _MAX_VALUE:
        raise ProfileError(f"value larger than {_MAX_VALUE}", where=where, value=shown)
    return expr


def faces(sides: int) -> tuple[int, ...]:
    """The values one die shows, each with probability 1/6: a D3 is a D6 halved, rounded up."""
    if sides == 6:
        return (1, 2, 3, 4, 5, 6)
    if sides == 3:
        return (1, 1, 2, 2, 3, 3)
    raise ValueError(f"no such die: D{sides}")


@lru_cache(maxsize=256)
def pmf(expr: DiceExpr) -> dict[int, Fraction]:
    """Exact distribution of ``expr`` as {value: probability}, values ascending."""
    if expr.is_fixed:
        return {expr.plus: Fraction(1)}
    dist: dict[int, Fraction] = {expr.plus: Fraction(1)}
    for _ in range(expr.count):  # convolve one die at a time
        nxt: dict[int, Fraction] = {}
        for v, p in dist.items():
            for f in faces(expr.sides):
                nxt[v + f] = nxt.get(v + f, Fraction(0)) + p / 6
        dist = nxt
    return dict(sorted(dist.items()))
