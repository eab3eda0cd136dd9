"""BSData characteristics -> the project's weapon / statline / defence dicts (mathhammer.bsdata.convert)."""

from __future__ import annotations

import pytest

from mathhammer.bsdata.convert import bearer_defences, bearer_unit_keywords, defences, statline_dict, weapon_dict
from mathhammer.errors import ProfileError
from mathhammer.notation import parse_ability

RANGED = {"Range": '24"', "A": "2", "BS": "3+", "S": "4", "AP": "-1", "D": "1", "Keywords": "Assault, Heavy"}


def test_ranged_weapon() -> None:
    assert weapon_dict("Bolt rifle", "Ranged Weapons", RANGED) == {
        "name": "Bolt rifle", "range": 24, "A": "2", "BS": 3, "S": 4, "AP": -1, "D": "1",
        "abilities": ["Assault", "Heavy"], "unmodelled": []}


def test_melee_weapon_dash_ap_and_dice() -> None:
    w = weapon_dict("Claws", "Melee Weapons",
                    {"Range": "Melee", "A": "2d6+2", "WS": "4+", "S": "5", "AP": "-", "D": "D3", "Keywords": "-"})
    assert w == {"name": "Claws", "range": "melee", "A": "2D6+2", "WS": 4, "S": 5, "AP": 0, "D": "D3",
                 "abilities": [], "unmodelled": []}


def test_abilities_split_into_modelled_and_text() -> None:
    w = weapon_dict("Harpoon", "Ranged Weapons", {**RANGED, "Keywords": "Anti-fly 2, Harpooned, Sustained hits 1"})
    assert w["abilities"] == ["Anti-fly 2", "Sustained hits 1"]
    assert w["unmodelled"] == ["Harpooned"]
    for a in w["abilities"]:
        parse_ability(a)  # the project's notation reads every kept ability
    with pytest.raises(ProfileError):
        parse_ability("Harpooned")


def test_torrent_without_bs_is_null_otherwise_an_error() -> None:
    flamer = weapon_dict("Flamer", "Ranged Weapons", {**RANGED, "BS": "N/A", "Keywords": "Ignores Cover, Torrent"})
    assert flamer["BS"] is None
    with pytest.raises(ProfileError, match="only for a TORRENT weapon"):
        weapon_dict("Odd", "Ranged Weapons", {**RANGED, "BS": "N/A"})


@pytest.mark.parametrize(("key", "value", "match"), [
    ("S", "*", "S: expected a whole number"),
    ("S", "2D6", "S: expected a whole number"),
    ("S", "101", "S: expected a whole number"),
    ("AP", "-11", "AP"),
    ("AP", "+1", "AP"),
    ("D", "D7", "D:"),
    ("Range", "N/A", "without a range"),
    ("BS", "1+", "BS: expected 2"),
])
def test_values_outside_the_limits_are_errors(key: str, value: str, match: str) -> None:
    with pytest.raises(ProfileError, match=match) as e:
        weapon_dict("Gun", "Ranged Weapons", {**RANGED, key: value})
    assert e.value.where.startswith("Gun")


def test_statline() -> None:
    chars = {"M": '20"+', "T": "4", "SV": "3+", "W": "2", "LD": "6+", "OC": "1"}
    assert statline_dict("Bike", chars) == {"name": "Bike", "M": 20, "T": 4, "Sv": 3, "W": 2, "Ld": 6, "OC": 1}
    assert "M" not in statline_dict("Fort", {**chars, "M": "-"})
    with pytest.raises(ProfileError, match="W"):
        statline_dict("X", {**chars, "W": "0"})


@pytest.mark.parametrize(("abilities", "expected"), [
    ([("Invulnerable Save", "This model has a 4+ invulnerable save.")],
     {"invulnerable": {"save": 4, "ranged_only": False}}),
    ([("Invulnerable Save (5+*)", "This model has a 5+ invulnerable save against ranged attacks.")],
     {"invulnerable": {"save": 5, "ranged_only": True}}),
    ([("Invulnerable Save", "5+")], {"invulnerable": {"save": 5, "ranged_only": False}}),
    # different saves against ranged and melee: the worse one, against everything
    ([("Invulnerable Save", "This unit has a 6+ Invulnerable save against ranged attacks, and 4+ Invulnerable "
                            "save against melee attacks.")], {"invulnerable": {"save": 6, "ranged_only": False}}),
    ([("Feel No Pain 5+", "")], {"feel_no_pain": 5}),
    ([("Battle-scarred", "Models in this unit have the Feel No Pain 6+ ability.")], {"feel_no_pain": 6}),
    # conditional Feel No Pain is not the unit's
    ([("Advanced Armour", "Models in this unit have the Feel No Pain 4+ ability against mortal wounds.")], {}),
    ([("Sanguinary Priest", "While this model is leading a unit, models in that unit have the Feel No Pain 5+ "
                            "ability")], {}),
    # Damage reduction in the catalogues' wordings (necrons.cat's Overlord: "that attack's")
    ([("Necrodermis", "Each time an attack is allocated to this model, halve the Damage characteristic of that "
                      "attack.")], {"abilities": ["HALF DAMAGE"]}),
    ([("Implacable Resilience", "Each time an attack is allocated to this model, subtract 1 from that attack\u2019s "
                                "Damage characteristic.")], {"damage_reduction": 1}),
    ([("Inviolable Bastion", "Each time an attack is allocated to this Fortification, subtract 1 from the Damage "
                             "characteristic of that attack.")], {"damage_reduction": 1}),
    ([("Tough", "Each time an attack is allocated to a model in this unit, subtract 1 from that attack's Damage "
                "characteristic.")], {"damage_reduction": 1}),
    # only the bearer's (wargear, an enhancement), or with a condition: not the unit's
    ([("Shield", "Each time an attack is allocated to the bearer, subtract 1 from the Damage characteristic of that "
                 "attack.")], {}),
    ([("Armour", "Each time an attack is allocated to this model, subtract 1 from the Damage characteristic of that "
                 "attack. This is not cumulative with any other rule.")], {}),
])
def test_defences(abilities: list[tuple[str, str]], expected: dict[str, object]) -> None:
    assert defences(abilities) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("The bearer has a 4+ invulnerable save.", {"invulnerable": 4}),                       # Weavefield crest
    ("The bearer has a Wounds characteristic of 4.", {"W": 4}),                            # Storm shield
    ("Add 1 to the bearer\u2019s Wounds characteristic.", {"add_W": 1}),                       # Shield Drone
    ("Add 2 to the bearer's Wounds characteristic.", {"add_W": 2}),                           # Ironskein
    ("The bearer has the Feel\xa0No Pain 5+ ability.", {"feel_no_pain": 5}),
    ("**^^Orks^^** model only. The bearer has the Feel No Pain 4+ ability.", {"feel_no_pain": 4}),
    ("CHAOS LORD model only. Add 1 to the bearer\u2019s Wounds characteristic and the bearer has the Feel No Pain 5+ "
     "ability.", {"add_W": 1, "feel_no_pain": 5}),                                             # Living Carapace
    # the subject said once (chaos-thousand-sons.cat, enhancement "Flowing Flesh")
    ("The bearer has the Feel No Pain 4+ ability and a Wounds characteristic of 5.", {"feel_no_pain": 4, "W": 5}),
    ("The bearer has a Wounds characteristic of 5 and a 4+ invulnerable save.", {"W": 5, "invulnerable": 4}),
    # a condition, another characteristic, a second rule, or the same thing twice: kept as text
    ("The bearer has the Feel No Pain 3+ ability against Psychic Attacks.", None),
    ("Add 2 to the bearer's Toughness and Wounds characteristics, and the bearer has a 4+ invulnerable save.", None),
    ("The bearer has a 4+ invulnerable save and each time an attack is allocated to the bearer, subtract 1 from the "
     "Damage characteristic of that attack.", None),
    ("BATTLESUIT model only. The bearer has a Save characteristic of 2+ and the Feel No Pain 5+ ability.", None),
    ("The bearer has a 4+ invulnerable save and the bearer has a 5+ invulnerable save.", None),
    ("Models in the bearer's unit have the Feel No Pain 6+ ability.", None),
    ("CHAOS LORD model only.", None),
])
def test_bearer_defences(text: str, expected: dict[str, int] | None) -> None:
    assert bearer_defences(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("The bearer\u2019s unit has the **^^Markerlight^^** keyword and can act as an Observer unit for another unit even "
     "if it Advanced this turn.", ("MARKERLIGHT",)),                                      # Marker Drone
    ("The bearer\u2019s unit has the ^^**Smoke**^^ and ^^**Grenades**^^ keywords.", ("SMOKE", "GRENADES")),
    ("The bearer's unit has the SMOKE keyword and you can target it with the Smokescreen Stratagem for 0CP.",
     ("SMOKE",)),
    ("Each time the bearer's unit has the Battleline keyword: on a 4+, you gain 1CP.", ()),  # not how it begins
    ("The bearer has a 4+ invulnerable save.", ()),
    # prose, not keywords: kept as text
    ("The bearer's unit has the Deep Strike ability. Models in the bearer's unit have the FLY keyword.", ()),
    ("The bearer's unit has the Infiltrators ability and the GRENADES keyword.", ()),
])
def test_bearer_unit_keywords(text: str, expected: tuple[str, ...]) -> None:
    assert bearer_unit_keywords(text) == expected
