"""Weapon totals of a model group spread over its models (mathhammer.roster.loadout)."""

from __future__ import annotations

import itertools

import pytest

from mathhammer.roster.loadout import spread


def _totals(groups: list[tuple[int, tuple[tuple[str, int], ...]]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for n, loadout in groups:
        for w, k in loadout:
            out[w] = out.get(w, 0) + n * k
    return out


def test_options_that_replace_each_other_land_on_different_models() -> None:
    # 9 Pathfinders: every one a pistol, 6 carbines, 3 rifles -> 6 (pistol+carbine) and 3 (pistol+rifle)
    groups = spread(9, [("pistol", 9), ("carbine", 6), ("rifle", 3)])
    assert sorted(groups) == sorted([(6, (("pistol", 1), ("carbine", 1))), (3, (("pistol", 1), ("rifle", 1)))])


def test_even_totals_are_one_group_and_a_weapon_named_twice_adds_up() -> None:
    assert spread(2, [("fists", 2), ("fusion", 4)]) == [(2, (("fists", 1), ("fusion", 2)))]
    assert spread(1, [("blaster", 1), ("blaster", 1)]) == [(1, (("blaster", 2),))]


def test_nothing_to_spread_and_no_models() -> None:
    assert spread(3, []) == [(3, ())]
    assert spread(0, [("x", 1)]) == []


@pytest.mark.parametrize("count,totals", list(itertools.product(
    [1, 2, 3, 5, 10], [[("a", 1)], [("a", 7), ("b", 2)], [("a", 3), ("b", 3), ("c", 4)], [("a", 0), ("b", 11)]])))
def test_every_copy_is_given_once_and_no_model_is_lost(count: int, totals: list[tuple[str, int]]) -> None:
    groups = spread(count, totals)
    assert sum(n for n, _ in groups) == count
    assert _totals(groups) == {w: n for w, n in totals if n}
    # no model carries more than ceil(total / count) of a weapon (the copies are spread evenly)
    for _, loadout in groups:
        for w, k in loadout:
            total = dict(totals)[w]
            assert k <= -(-total // count)
