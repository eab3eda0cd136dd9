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
from .model import DiceExpr

__all__ = ["faces", "parse", "pmf"]

_DICE_RE = re.compile(r"^(?:(?P<count>\d*)D(?P<sides>\d*))?(?:(?P<sign>\+)?(?P<plus>\d+))?$")
_MAX_DICE = 12
_MAX_VALUE = 999


def parse(text: str, *, where: str = "dice") -> DiceExpr:
    """Parse a dice expression such as ``D6``, ``2D3+1``, ``d6 + 6`` or ``4``.

    Raises:
        ProfileError: naming ``where`` and the text, for anything else (``D7``, ``2D``, ``D6+-1``).
    """
    raw = str(text)
    compact = re.sub(r"\s+", "", raw).upper()
    m = _DICE_RE.match(compact)
    hint = "write N, D3, D6, nD3 or nD6, optionally with +m: e.g. 3, D6+6, 2D6, D3+1"
    if not compact or m is None or (m["sides"] is None and m["plus"] is None):
        raise ProfileError("expected a dice expression", where=where, value=raw, hint=hint)
    if m["sides"] is None:  # a plain number
        if m["sign"]:
            raise ProfileError("expected a dice expression", where=where, value=raw, hint=hint)
        return _checked(DiceExpr(plus=int(m["plus"])), raw, where)
    if m["sides"] == "":
        raise ProfileError("dice need a number of sides", where=where, value=raw, hint=hint)
    sides = int(m["sides"])
    if sides not in (3, 6):
        raise ProfileError("only D3 and D6 exist in 40k", where=where, value=raw, hint=hint)
    if m["plus"] is not None and not m["sign"]:
        raise ProfileError("expected a dice expression", where=where, value=raw, hint=hint)
    count = int(m["count"]) if m["count"] else 1
    if not 1 <= count <= _MAX_DICE:
        raise ProfileError(f"number of dice must be 1 to {_MAX_DICE}", where=where, value=raw)
    return _checked(DiceExpr(count=count, sides=sides, plus=int(m["plus"] or 0)), raw, where)


def _checked(expr: DiceExpr, raw: str, where: str) -> DiceExpr:
    if expr.maximum > _MAX_VALUE:
        raise ProfileError(f"value larger than {_MAX_VALUE}", where=where, value=raw)
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
