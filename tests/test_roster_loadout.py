"""Weapon totals of a model group spread over its models (mathhammer.roster.loadout)."""

from __future__ import annotations

import itertools

import pytest

from mathhammer.model import ModelStats, Unit
from mathhammer.notation import parse_weapon
from mathhammer.roster.loadout import attacking, spread


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


def _unit(keywords: frozenset[str], *models: tuple[str, int, tuple[tuple[str, int], ...]]) -> Unit:
    weapons = {"pistol": '12" A1 BS4+ S4 AP0 D1 [PISTOL]', "rifle": '30" A2 BS4+ S4 AP0 D1',
               "cannon": '36" A3 BS4+ S9 AP-2 D3', "blade": "A3 WS3+ S4 AP-1 D1", "fist": "A2 WS4+ S8 AP-2 D2",
               "tail": "A1 WS4+ S4 AP0 D1 [EXTRA ATTACKS]"}
    return Unit(name="Squad", keywords=keywords,
                models=tuple(ModelStats(name=n, count=c, toughness=4, save=3, wounds=1, loadout=lo) for n, c, lo in models),
                weapons=tuple(parse_weapon(text, name=name) for name, text in weapons.items()))


def test_a_model_shoots_its_pistols_or_its_other_ranged_weapons() -> None:
    # the Pistol rule (seed: "it can either shoot with its Pistols or with all of its other ranged weapons")
    unit = _unit(frozenset({"INFANTRY"}), ("trooper", 9, (("pistol", 1), ("rifle", 1), ("blade", 1))),
                 ("gunner", 1, (("pistol", 1), ("rifle", 1), ("cannon", 1))), ("duelist", 2, (("pistol", 2), ("blade", 1))))
    fired, notes = attacking(unit)
    assert [dict(m.loadout) for m in fired.models] == [{"rifle": 1, "blade": 1}, {"rifle": 1, "cannon": 1},
                                                       {"pistol": 2, "blade": 1}]  # pistols alone still shoot
    assert [m.options for m in fired.models] == [("pistol",), ("pistol",), ()]
    assert fired.weapons == unit.weapons and len(notes) == 1 and "pistol (10 models)" in notes[0]


def test_a_monster_or_vehicle_shoots_its_pistols_beside_the_rest() -> None:
    for keyword in ("VEHICLE", "MONSTER"):
        unit = _unit(frozenset({keyword}), ("walker", 1, (("pistol", 1), ("cannon", 1))))
        assert attacking(unit) == (unit, [])
    model_keyword = ModelStats(name="walker", count=1, toughness=9, save=3, wounds=10, keywords=frozenset({"VEHICLE"}),
                               loadout=(("pistol", 1), ("cannon", 1)))
    unit = _unit(frozenset({"INFANTRY"}), ("trooper", 1, (("pistol", 1), ("rifle", 1))))
    mixed = attacking(Unit(name="Squad", keywords=unit.keywords, weapons=unit.weapons,
                           models=(*unit.models, model_keyword)))[0]
    assert [dict(m.loadout) for m in mixed.models] == [{"rifle": 1}, {"pistol": 1, "cannon": 1}]


def test_a_model_fights_with_one_melee_weapon_and_its_extra_attacks() -> None:
    unit = _unit(frozenset({"INFANTRY"}), ("champion", 1, (("rifle", 1), ("fist", 1), ("blade", 1), ("tail", 1))))
    fired, notes = attacking(unit)
    assert dict(fired.models[0].loadout) == {"rifle": 1, "fist": 1, "tail": 1}  # the first, and EXTRA ATTACKS
    assert fired.models[0].options == ("blade",) and "blade (1 model)" in notes[0]
