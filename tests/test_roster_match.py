"""Text-export units matched to library units, with the roster's loadout; unmatched names
reported, never guessed; round trip of a roster unit through the profile schema."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mathhammer.profiles import Library, dump_unit, load_file
from mathhammer.profiles.schema import _units
from mathhammer.roster import load_roster, parse_roster

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
TEXTS = SHARED / "text-exports-40kcompactor"
ROSZ = SHARED / "rosters-prettyscribe"
needs_texts = pytest.mark.skipif(not TEXTS.is_dir(), reason="the shared text-export samples are not here")
needs_rosz = pytest.mark.skipif(not ROSZ.is_dir(), reason="the shared .rosz samples are not here")

PROFILES = """\
schema: 1
units:
  - name: Test Battlesuits
    aliases: [testsuits]
    faction: "T'au Empire"
    points: 120
    models:
      - {name: "Test Shas’ui", count: 3, T: 5, Sv: 3, W: 4, weapons: [Plasma rifle, Battlesuit fists]}
    weapons:
      - {name: Plasma rifle, range: 18, A: "1", BS: 4, S: 8, AP: -3, D: "3", abilities: []}
      - {name: Fusion blaster, range: 12, A: "1", BS: 4, S: 9, AP: -4, D: "D6", abilities: [Melta 2]}
      - {name: Twin pulse carbine (Gun Drone), range: 20, A: "2", BS: 5, S: 5, AP: 0, D: "1", abilities: [Twin-linked]}
      - {name: Battlesuit fists, range: melee, A: "3", WS: 5, S: 5, AP: 0, D: "1", abilities: []}
  - name: Test Commander
    faction: "T'au Empire"
    points: 80
    keywords: [CHARACTER]
    models:
      - {name: Test Commander, count: 1, T: 5, Sv: 3, W: 6, weapons: [Plasma rifle]}
    weapons:
      - {name: Plasma rifle, range: 18, A: "1", BS: 3, S: 8, AP: -3, D: "3", abilities: []}
      - {name: Cannon - overcharge, range: 24, A: "3", BS: 3, S: 8, AP: -2, D: "3", abilities: [Hazardous]}
      - {name: Cannon - standard, range: 24, A: "3", BS: 3, S: 7, AP: -1, D: "2", abilities: []}
  - name: Test Knight Lancers
    faction: "T'au Empire"
    models:
      - {name: Lancer, count: 1, T: 11, Sv: 3, W: 22}
  - name: Test Knight Wardens
    faction: "T'au Empire"
    models:
      - {name: Warden, count: 1, T: 11, Sv: 3, W: 22}
"""

TEXT = """\
Test (400 points)

T’au Empire
Strike Force (2000 points)

Attached Units
Attached Unit 1

Test Commander (100 points)
• Attached as: Leader (Character)
  • 1x Cannon
    1x Plasma rifle
    1x Shield Drone

Test Battlesuits (130 points)
• Attached as: Bodyguard
  • 1x Test Shas’vre
    • 2x Fusion blaster
      1x Battlesuit fists
  • 2x Test Shas’ui
    • 3x Plasma rifle
      1x Fusion blaster
      2x Battlesuit fists
      2x Gun Drone

OTHER DATASHEETS

Test Battlesuits (120 points)
  • 3x Test Shas’ui

Unknown Thing (50 points)
  • 1x Gun

Test Knight (400 points)
  • 1x Gun
"""


@pytest.fixture
def lib(tmp_path: Path) -> Library:
    path = tmp_path / "p.yaml"
    path.write_text(PROFILES, encoding="utf-8")
    return Library(load_file(path))


def test_matched_units_carry_the_roster_loadout(lib: Library) -> None:
    r = parse_roster(TEXT.encode(), "army.txt", lib)
    cmd, suits, suits2, unknown, knight = r.entries
    assert cmd.unit is not None and cmd.matched == "Test Commander" and cmd.unit.points == 100
    # "Cannon": its first profile without [HAZARDOUS] (ruling M86), though the overcharge is listed
    # first; a Shield Drone is no weapon: kept as wargear, not fired
    assert cmd.unit.models[0].loadout == (("Cannon - standard", 1), ("Plasma rifle", 1))
    assert any("Shield Drone" in n.text and "not fired" in n.text for n in cmd.notes)
    assert any("Cannon - overcharge" in n.text for n in cmd.notes)
    u = suits.unit
    assert u is not None and u.name == "Test Battlesuits" and u.attached == ("Test Commander",)
    # the Shas'vre takes the only statline; 3 rifles and 1 blaster over 2 models go to different models
    assert [(m.name, m.count, m.loadout) for m in u.models] == [
        ("Test Shas'vre", 1, (("Fusion blaster", 2), ("Battlesuit fists", 1))),
        ("Test Shas'ui", 1, (("Plasma rifle", 2), ("Battlesuit fists", 1), ("Twin pulse carbine (Gun Drone)", 1))),
        ("Test Shas'ui", 1, (("Plasma rifle", 1), ("Fusion blaster", 1), ("Battlesuit fists", 1),
                             ("Twin pulse carbine (Gun Drone)", 1)))]
    assert dict(u.loadout()) == {"Fusion blaster": 3, "Battlesuit fists": 3, "Plasma rifle": 3,
                                 "Twin pulse carbine (Gun Drone)": 2}
    assert u.source == "roster army.txt line 15" and u.aliases == ()
    # a model group with no list gets the library's default loadout; names are unique in the roster
    assert suits2.unit is not None and suits2.unit.name == "Test Battlesuits (2)"
    assert suits2.unit.models[0].count == 3 and suits2.unit.models[0].loadout == (("Plasma rifle", 1),
                                                                                   ("Battlesuit fists", 1))
    assert unknown.unit is None and any("not in the library" in n.text and n.line == 31 for n in unknown.notes)
    # "Test Knight" is part of two units' names: ambiguous, reported with the candidates, not guessed
    assert knight.unit is None and any("ambiguous" in n.text and "Test Knight Lancers" in n.text
                                       for n in knight.notes)
    assert [x.name for x in r.units()] == ["Test Commander", "Test Battlesuits", "Test Battlesuits (2)"]


def test_faction_first_then_the_whole_library_by_whole_name(lib: Library) -> None:
    text = TEXT.replace("T’au Empire", "Imperial Knights")
    r = parse_roster(text.encode(), "a.txt", lib)
    suits = r.entries[1]
    assert suits.unit is not None and any("not of the roster's faction" in n.text for n in suits.notes)


def test_round_trip_through_the_schema(lib: Library) -> None:
    r = parse_roster(TEXT.encode(), "army.txt", lib)
    for u in r.units():
        [back] = _units(yaml.safe_load(yaml.safe_dump({"schema": 1, "units": [dump_unit(u)]})), "x.yaml")
        assert back == u


@needs_rosz
def test_round_trip_of_rosz_units() -> None:
    for path in sorted(ROSZ.glob("*.rosz")):
        for u in load_roster(path).units():
            [back] = _units(yaml.safe_load(yaml.safe_dump({"schema": 1, "units": [dump_unit(u)]})), "x.yaml")
            assert back == u, u.name


def _faction_library() -> Library:
    """The generated T'au Empire and Imperial Knights files of the built-in library (the samples' factions)."""
    return Library([u for n in ("tau-empire.json", "imperial-knights.json") for u in load_file(ROOT / "profiles" / n)])


@needs_texts
@pytest.mark.parametrize("name", ["gwapp-tau.txt", "gwapp-imperial-knights.txt", "newrecruit-gw-tau.txt",
                                  "newrecruit-wtc-compact-tau.txt", "warorgan-tau.txt"])
def test_every_sample_unit_is_matched_or_has_a_reason(name: str) -> None:
    r = load_roster(TEXTS / name, _faction_library())
    assert r.entries
    for e in r.entries:
        assert e.ok or any(n.text.endswith("not in the library") or "ambiguous" in n.text for n in e.notes), e.name


@needs_texts
def test_tau_sample_against_the_faction_library() -> None:
    r = load_roster(TEXTS / "gwapp-tau.txt", _faction_library())
    # every datasheet of the sample is in the catalogue (gwapp-tau.txt, read by hand)
    assert {e.name for e in r.entries if e.ok} == {
        "Commander Farsight", "Crisis Sunforge Battlesuits", "Commander in Enforcer Battlesuit",
        "Crisis Fireknife Battlesuits", "Commander in Coldstar Battlesuit", "Crisis Starscythe Battlesuits",
        "The Twin Lance", "Kroot Carnivores", "Pathfinder Team", "Stealth Battlesuits", "Vespid Stingwings"}
    first = r.entries[1].unit
    assert first is not None and first.name == "Crisis Sunforge Battlesuits"
    # by hand: 1 Shas'vre 1 fists, 2 Fusion blasters; 2 Shas'ui 2 fists, 4 Fusion blasters (and drones)
    loadout = dict(first.loadout())
    assert (loadout["Battlesuit fists"], loadout["Fusion blaster"]) == (1 + 2, 2 + 4)
    knights = load_roster(TEXTS / "gwapp-imperial-knights.txt", _faction_library())
    assert [e.unit.name for e in knights.entries if e.unit] == [
        "Cerastus Knight Castigator", "Cerastus Knight Lancer", "Knight Destrier", "Knight Destrier (2)",
        "Knight Warden", "Armiger Warglaive", "Armiger Warglaive (2)"]
    warden = knights.entries[4].unit
    assert warden is not None
    # the sample's Warden: one of each; the gauntlet fights with its first profile (strike)
    assert dict(warden.loadout()) == {"Avenger gatling cannon": 1, "Heavy flamer": 1, "Questoris heavy stubber": 1,
                                      "Stormspear rocket pod": 1, "Thunderstrike gauntlet - strike": 1}


@needs_texts
@pytest.mark.parametrize("name", ["gwapp-tau.txt", "gwapp-imperial-knights.txt", "newrecruit-gw-tau.txt",
                                  "newrecruit-wtc-compact-tau.txt", "warorgan-tau.txt"])
def test_samples_against_the_whole_library(library: Library, name: str) -> None:
    # with every faction loaded, each sample datasheet (all current T'au / Imperial Knights units) still
    # finds its unit in the roster's faction
    r = load_roster(TEXTS / name, library)
    assert r.entries
    for e in r.entries:
        assert e.ok and e.unit is not None, (e.name, [n.text for n in e.notes])
        assert not any("not of the roster's faction" in n.text for n in e.notes), e.name


@needs_texts
@pytest.mark.parametrize("name", ["gwapp-tau.txt", "gwapp-imperial-knights.txt", "newrecruit-gw-tau.txt",
                                  "newrecruit-wtc-compact-tau.txt", "warorgan-tau.txt"])
def test_a_total_that_is_not_the_units_points_added_up_is_noted(name: str, tmp_path: Path) -> None:
    # every sample's total is its units' points added up (1995 and 2000, read by hand): no note
    r = load_roster(TEXTS / name, _faction_library())
    assert not [n for n in r.notes if "add up to" in n.text]
    # the same file with one unit's line lost (its points no longer counted): said
    text = (TEXTS / name).read_text(encoding="utf-8")
    first = next(e for e in r.entries if e.points)
    lines = text.splitlines()
    assert str(first.points) in lines[first.line - 1]
    lines[first.line - 1] = ""  # the unit line is gone: its models and weapons join no unit (or the one before)
    cut = tmp_path / name
    cut.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r2 = load_roster(cut, _faction_library())
    total = sum(e.points or 0 for e in r2.entries)
    assert total == sum(e.points or 0 for e in r.entries) - first.points
    assert [n.text for n in r2.notes if "add up to" in n.text] == [
        f"the file's total is {r.points} points, its units add up to {total}: a unit it lists may not have been "
        "read (the table shows the units that were), or the total counts something else"]


# --- a unit whose every model is counted 0 (ruling M87) --------------------------------------------

_GW_HEAD = "Gunline (75 points)\n\nT’au Empire\nIncursion (1000 points)\nKauyon\n\nBATTLELINE\n\n"
_NR_HEAD = ("+++++++++++++++++++++++++++++++++++++++++++++++\n+ FACTION KEYWORD: Xenos - T'au Empire\n"
            "+ TOTAL ARMY POINTS: 75pts\n+++++++++++++++++++++++++++++++++++++++++++++++\n\nBATTLELINE\n\n")

#: (id, the export with {n} for the counts, the unit's name, the model lines' line numbers, the
#: models the unit has with {n} = 1, read from the export by hand)
_ZERO = [
    ("gw-app", _GW_HEAD + "Strike Team (75 points)\n  • {n}x Fire Warrior Shas’ui\n    • {n}x Close combat weapon\n"
     "      {n}x Pulse rifle\n", "Strike Team", [10], [("Fire Warrior Shas'ui", 1)]),
    ("gw-app, two groups", _GW_HEAD + "Strike Team (75 points)\n  • {n}x Fire Warrior Shas’ui\n"
     "    • {n}x Pulse rifle\n  • {n}x Fire Warrior w/ pulse rifle\n    • {n}x Pulse rifle\n",
     "Strike Team", [10, 12], [("Fire Warrior Shas'ui", 1), ("Fire Warrior w/ pulse rifle", 1)]),
    ("gw-app, the unit's models as an item", _GW_HEAD + "Kroot Carnivores (65 points)\n  • {n}x Kroot Carnivores\n",
     "Kroot Carnivores", [], [("Kroot Carnivores", 1)]),
    ("new-recruit-gw", _NR_HEAD + "Strike Team (75 pts)\n• {n}x Fire Warrior Shas’ui\n    • {n}x Pulse rifle\n",
     "Strike Team", [9], [("Fire Warrior Shas'ui", 1)]),
    ("wtc-compact, a model line", _NR_HEAD.replace("\nBATTLELINE\n", "") + "10x Pathfinder Team (85 pts)\n"
     "• {n}x Pathfinders\n• {n}x Pathfinder Shas'ui: Pulse carbine\n", "Pathfinder Team", [7, 8],
     [("Pathfinders", 1), ("Pathfinder Shas'ui", 1)]),
    ("wtc-compact, the unit line", _NR_HEAD.replace("\nBATTLELINE\n", "") +
     "Char1: {n}x Commander Farsight (70 pts): Warlord, Dawn Blade\n", "Commander Farsight", [],
     [("Commander Farsight", 1)]),
    ("war-organ", "Test list [125 points]\nTau Empire\n\nBattleline\n\n  Crisis Sunforge Battlesuits (125 points)\n"
     "    • {n} Crisis Sunforge Shas’vre with 2 Fusion blaster\n    • {n} Crisis Sunforge Shas’ui with 2 Fusion blaster\n",
     "Crisis Sunforge Battlesuits", [7, 8], [("Crisis Sunforge Shas'vre", 1), ("Crisis Sunforge Shas'ui", 1)]),
]


@pytest.mark.parametrize("text,name,lines,models", [z[1:] for z in _ZERO], ids=[z[0] for z in _ZERO])
def test_a_unit_whose_every_model_is_counted_0_has_no_models(text: str, name: str, lines: list[int],
                                                              models: list[tuple[str, int]]) -> None:
    """``0x Fire Warrior Shas'ui`` as a unit's only model line: that line adds nothing (as any
    count of 0), so the unit has no models and is not used, with a note saying why; it was the
    library's default unit of 10 models. The same export with counts of 1 has the models it
    lists, one each (so it is the 0 that leaves the unit empty, not the export's form)."""
    one = parse_roster(text.format(n=1).encode(), "army.txt", _faction_library())
    [unit] = one.entries
    assert unit.unit is not None and [(m.name, m.count) for m in unit.unit.models] == models
    zero = parse_roster(text.format(n=0).encode(), "army.txt", _faction_library())
    [unit] = zero.entries
    assert unit.unit is None and unit.models == () and zero.units() == []
    said = [(n.line, n.text) for n in unit.notes]
    assert (unit.line, f"{name}: cannot be used (its models are counted 0: the unit has no models, not the library's "
                       "default; ruling M87)") in said
    for line in lines:  # each model line counted 0: left out, with a note at its line
        assert any(n == line and t.endswith("left out, with what it carries") for n, t in said), (line, said)


def test_a_weapon_counted_0_leaves_its_unit_its_model() -> None:
    """A character's only item counted 0 is a weapon, not its model: the unit keeps its one
    model (the weapon is left out, with a note)."""
    text = _GW_HEAD + "Commander in Coldstar Battlesuit (95 points)\n  • 0x Fusion blaster\n"
    [unit] = parse_roster(text.encode(), "army.txt", _faction_library()).entries
    assert unit.unit is not None and [(m.name, m.count) for m in unit.unit.models] == [
        ("Commander in Coldstar Battlesuit", 1)]
    assert any(n.text == "0x Fusion blaster: left out" for n in unit.notes)
