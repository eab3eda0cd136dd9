"""Dice expressions (R-0.6, R-1.2, R-8.1)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from mathhammer import dice
from mathhammer.errors import ProfileError
from mathhammer.model import DiceExpr


@pytest.mark.parametrize(("text", "expected"), [
    ("3", DiceExpr(plus=3)), ("D3", DiceExpr(count=1, sides=3)), ("d6", DiceExpr(count=1, sides=6)),
    ("2D6", DiceExpr(count=2, sides=6)), ("D6+6", DiceExpr(count=1, sides=6, plus=6)),
    ("d3+1", DiceExpr(count=1, sides=3, plus=1)), ("3D3", DiceExpr(count=3, sides=3)),
    (" 2d6 + 1 ", DiceExpr(count=2, sides=6, plus=1)),
])
def test_parse(text: str, expected: DiceExpr) -> None:
    assert dice.parse(text) == expected
    assert dice.parse(str(expected)) == expected  # format round-trips


@pytest.mark.parametrize("text", ["D7", "2D", "D6+-1", "", "D", "D6+", "+3", "0D6", "D6-1", "x", "2.5", "D6*2"])
def test_parse_errors_name_the_value(text: str) -> None:
    with pytest.raises(ProfileError) as e:
        dice.parse(text, where="D")
    assert e.value.where == "D"
    assert repr(text) in e.value.message()


def test_R_0_6_d3_is_half_a_d6() -> None:
    assert dice.pmf(dice.parse("D3")) == {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}


def test_R_1_2_two_d6_mean_and_support() -> None:
    pmf = dice.pmf(dice.parse("2D6"))
    assert min(pmf) == 2 and max(pmf) == 12
    assert sum(k * p for k, p in pmf.items()) == 7
    assert pmf[7] == F(6, 36)


def test_R_8_1_d6_plus_6_uniform_7_to_12() -> None:
    assert dice.pmf(dice.parse("D6+6")) == {k: F(1, 6) for k in range(7, 13)}


@pytest.mark.parametrize("text", ["3", "D3", "D6", "2D3+1", "3D6", "D6+6", "12D6"])
def test_pmf_sums_to_one_and_bounds(text: str) -> None:
    expr = dice.parse(text)
    pmf = dice.pmf(expr)
    assert sum(pmf.values()) == 1
    assert min(pmf) == expr.minimum and max(pmf) == expr.maximum
