"""The built-in library (profiles/*.json, generated from BSData plus profiles-src/overlay.yaml):
the seed datasheet's numbers, the names players type, and the overlay's loadout choice.
Expected values are typed in from the seed text and the catalogue, not read from the library."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mathhammer.api import library
from mathhammer.dice import parse
from mathhammer.model import Ability

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def lib():  # type: ignore[no-untyped-def]
    return library(use_env=False)


def test_the_gunrig_is_what_the_seed_datasheet_states(lib) -> None:  # type: ignore[no-untyped-def]
    seed = next((ROOT / "seeds").glob("*.txt")).read_text(encoding="utf-8")
    row = re.search(r'\| Supremacy railgun \[devastating wounds, twin-linked\] \| 72" \| 1 \| 5\+ \| 20 \| -5 \| D6\+6 \|',
                    seed)
    assert row, "the seed's railgun row"
    assert "Deadly Demise D3, Firing Deck 11" in seed and "| 1 model | 90 |" in seed
    gunrig = lib.find("tidewall gunrig", "unit")
    gun = lib.find("railgun", "weapon")
    assert gun.name == "Supremacy railgun" and gun in gunrig.weapons
    assert (gun.range_inches, gun.attacks, gun.skill, gun.strength, gun.ap, gun.damage) == (72, parse("1"), 5, 20, -5,
                                                                                             parse("D6+6"))
    assert {a.ability for a in gun.abilities} == {Ability.DEVASTATING_WOUNDS, Ability.TWIN_LINKED}
    assert gunrig.points == 90 and gunrig.model_count == 1 and gunrig.firing_deck == 11
    assert not any("firing deck" in a.lower() for a in gunrig.unmodelled)
    assert {"FORTIFICATION", "VEHICLE", "TRANSPORT", "FLY", "TIDEWALL GUNRIG"} <= gunrig.keywords


def test_knight_is_the_questoris_statline(lib) -> None:  # type: ignore[no-untyped-def]
    # imperium-imperial-knights-library.cat, profile c895-8913-fee7-678e: T11 SV3+ W26; the
    # Questoris-class invulnerable save: 5+ against ranged attacks
    knight = lib.find("knight", "unit")
    assert knight.name == "Knight Paladin"
    m = knight.models[0]
    assert (m.toughness, m.save, m.wounds, knight.invulnerable, knight.invulnerable_ranged_only) == (11, 3, 26, 5, True)


@pytest.mark.parametrize(("name", "unit"), [("intercessors", "Intercessor Squad"), ("boyz", "Boyz"),
                                            ("hammerhead", "Hammerhead Gunship"),
                                            ("crisis sunforge", "Crisis Sunforge Battlesuits"),
                                            ("broadsides", "Broadside Battlesuits")])
def test_the_names_players_type(lib, name: str, unit: str) -> None:  # type: ignore[no-untyped-def]
    assert lib.find(name, "unit").name == unit


def test_the_overlay_gives_each_fireknife_a_plasma_rifle_and_a_missile_pod(lib) -> None:  # type: ignore[no-untyped-def]
    team = lib.find("fireknife", "unit")
    assert team.model_count == 3
    assert dict(team.loadout()) == {"Plasma rifle": 3, "Missile pod": 3, "Battlesuit fists": 3}


def test_statlines_list_the_rank_and_file_first(lib) -> None:  # type: ignore[no-untyped-def]
    squad = lib.find("intercessors", "unit")
    assert [(m.name, m.count) for m in squad.models] == [("Intercessor", 4), ("Intercessor Sergeant", 1)]
    boyz = lib.find("boyz", "unit")
    assert [m.count for m in boyz.models] == [9, 1] and boyz.models[1].wounds == 2
