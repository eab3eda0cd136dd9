"""Issue 11, second pass: optional model types nested in sub-groups, carriers of weapons ("Gun
Drone"), Firing Deck and named army rules (rulings M56-M58).

A small hand-made catalogue (the game system of test_bsdata_catalogue) whose expected values are
read off the XML below, then golden units of the pinned snapshot read by hand from
tau-empire.cat (line numbers and entry ids cited). None of it comes from the importer's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathhammer.bsdata.build import Imported, import_files
from mathhammer.bsdata.convert import unit_rule
from mathhammer.model import Unit
from mathhammer.profiles.schema import _Reader
from mathhammer.profiles.schema import _unit as _unit_of

from .test_bsdata_catalogue import GST, NS_CAT, bounds, statline, weapon

CATALOGUE = f"""<?xml version="1.0"?>
<catalogue xmlns="{NS_CAT}" id="fac-5" name="Xenos - Scouters" library="false" revision="1" gameSystemId="sys-9">
  <sharedRules>
    <rule id="r-deck" name="Firing Deck"><description>Embarked models shoot.</description></rule>
    <rule id="r-fgg" name="For The Greater Good"><description>Spotting.</description></rule>
  </sharedRules>
  <sharedSelectionEntries>
    <selectionEntry type="upgrade" name="Drone gun" id="w-drone"><profiles>
      {weapon("p-drone", "Drone gun", A="3", BS="5+", S="5", AP="0", Keywords="Twin-linked")}</profiles>
    </selectionEntry>
    <selectionEntry type="unit" name="Scout Team" id="u-scouts">
      <infoLinks>
        <infoLink id="il-deck" name="Firing Deck" type="rule" targetId="r-deck">
          <modifiers><modifier type="append" field="name" value="4"/></modifiers></infoLink>
        <infoLink id="il-fgg" name="For The Greater Good" type="rule" targetId="r-fgg"/>
      </infoLinks>
      <selectionEntryGroups>
        <selectionEntryGroup name="Scouts" id="g-scouts" defaultSelectionEntryId="m-carbine">
          {bounds(5, 5)}
          <selectionEntries>
            <selectionEntry type="model" name="Scout w/ carbine" id="m-carbine">
              {bounds(None, 5)}
              <profiles>{statline("s-carbine", "Scout", w="1")}</profiles>
              <entryLinks>
                <entryLink id="el-bolt" name="Bolt gun" type="selectionEntry" targetId="w-bolt">{bounds(1, 1)}</entryLink>
              </entryLinks>
              <selectionEntries>
                <selectionEntry type="upgrade" name="Gun Drone" id="c-gun">{bounds(None, 1)}
                  <entryLinks><entryLink id="el-dg" name="Drone gun" type="selectionEntry" targetId="w-drone">
                    {bounds(1, 1)}</entryLink></entryLinks>
                </selectionEntry>
                <selectionEntry type="upgrade" name="Two drones" id="c-two">{bounds(None, 1)}
                  <entryLinks><entryLink id="el-dg2" name="Drone gun" type="selectionEntry" targetId="w-drone">
                    {bounds(2, 2)}</entryLink></entryLinks>
                </selectionEntry>
                <selectionEntry type="upgrade" name="Gun kit" id="c-kit">{bounds(None, 1)}
                  <selectionEntries>
                    <selectionEntry type="upgrade" name="Kit gun" id="w-kit">{bounds(1, 1)}<profiles>
                      {weapon("p-kit", "Kit gun", S="6")}</profiles></selectionEntry>
                    <selectionEntry type="upgrade" name="Kit blade" id="w-kitb">{bounds(1, 1)}<profiles>
                      {weapon("p-kitb", "Kit blade", True)}</profiles></selectionEntry>
                  </selectionEntries>
                </selectionEntry>
              </selectionEntries>
            </selectionEntry>
          </selectionEntries>
          <selectionEntryGroups>
            <selectionEntryGroup name="Special Weapons (0-2)" id="g-special">
              {bounds(None, 2)}
              <selectionEntries>
                <selectionEntry type="model" name="Scout w/ long rifle" id="m-rifle">
                  {bounds(None, 2)}
                  <profiles>{statline("s-rifle", "Scout", w="1")}</profiles>
                  <selectionEntries>
                    <selectionEntry type="upgrade" name="Long rifle" id="w-long">{bounds(1, 1)}<profiles>
                      {weapon("p-long1", "➤ Long rifle - standard", S="7")}{weapon("p-long2", "➤ Long rifle - heavy", S="9")}
                    </profiles></selectionEntry>
                  </selectionEntries>
                </selectionEntry>
              </selectionEntries>
            </selectionEntryGroup>
          </selectionEntryGroups>
        </selectionEntryGroup>
        <selectionEntryGroup name="Heavy Scouts (0-1)" id="g-heavy">
          {bounds(None, 1)}
          <selectionEntries>
            <selectionEntry type="model" name="Heavy Scout" id="m-heavy">
              {bounds(None, 1)}
              <profiles>{statline("s-heavy", "Heavy Scout", w="3")}</profiles>
              <selectionEntries>
                <selectionEntry type="upgrade" name="Heavy gun" id="w-heavy">{bounds(1, 1)}<profiles>
                  {weapon("p-heavy", "Heavy gun", S="8")}</profiles></selectionEntry>
              </selectionEntries>
            </selectionEntry>
          </selectionEntries>
        </selectionEntryGroup>
      </selectionEntryGroups>
      <costs><cost name="pts" typeId="pts-type" value="60"/></costs>
    </selectionEntry>
  </sharedSelectionEntries>
  <entryLinks><entryLink id="root-scouts" name="Scout Team" type="selectionEntry" targetId="u-scouts"/></entryLinks>
</catalogue>
"""


@pytest.fixture
def scouts(tmp_path: Path) -> Imported:
    (tmp_path / "sys.gst").write_text(GST, encoding="utf-8")
    (tmp_path / "scouts.cat").write_text(CATALOGUE, encoding="utf-8")
    return import_files([tmp_path / "scouts.cat"])


def _weapon(u: dict[str, Any], name: str) -> dict[str, Any]:
    (w,) = [w for w in u["weapons"] if w["name"] == name]
    return w


def test_m56_optional_model_types_of_a_sub_group_are_options_of_the_model_they_replace(scouts: Imported) -> None:
    (u,) = scouts.factions[0].units
    # "Scouts" min 5 with default m-carbine: 5 Scouts w/ carbine, the only statline with models;
    # the rifle Scouts of the sub-group "Special Weapons (0-2)" have no min: options of it
    (carbine,) = [m for m in u["models"] if m["name"] == "Scout w/ carbine"]
    assert carbine["count"] == 5 and carbine["weapons"] == ["Bolt gun"]
    assert {"Long rifle - standard", "Long rifle - heavy"} <= set(carbine["options"])
    assert (_weapon(u, "Long rifle - heavy")["S"], _weapon(u, "Long rifle - standard")["S"]) == (9, 7)
    assert "Scout w/ long rifle" not in [m["name"] for m in u["models"]]


def test_m56_an_optional_model_type_that_replaces_nothing_is_reported_and_its_weapons_kept(scouts: Imported) -> None:
    (u,) = scouts.factions[0].units
    # "Heavy Scouts (0-1)" sits beside no model with a default count: not a statline, reported,
    # its Heavy gun (S8) an option of the main statline
    assert [m["name"] for m in u["models"]] == ["Scout w/ carbine"]
    assert "Heavy gun" in u["models"][0]["options"] and _weapon(u, "Heavy gun")["S"] == 8
    (problem,) = scouts.problems
    assert (problem.unit, problem.what) == ("Scout Team", "model 'Heavy Scout'")
    assert "optional model type" in problem.reason and "options of 'Scout w/ carbine'" in problem.reason


def test_m58_a_carrier_of_one_weapon_is_its_alias(scouts: Imported) -> None:
    (u,) = scouts.factions[0].units
    # "Gun Drone" (c-gun) has no weapon profile and must take 1 Drone gun: the drone names it
    assert _weapon(u, "Drone gun")["aliases"] == ["Gun Drone"]
    # "Two drones" comes with 2 Drone guns, "Gun kit" with two weapons: no alias of either
    assert "aliases" not in _weapon(u, "Kit gun") and "aliases" not in _weapon(u, "Kit blade")
    assert not any("Two drones" in w.get("aliases", []) for w in u["weapons"])


def test_m57_firing_deck_and_for_the_greater_good(scouts: Imported) -> None:
    (u,) = scouts.factions[0].units
    assert u["firing_deck"] == 4 and u["rules"] == ["For the Greater Good"]
    assert not any("firing deck" in a.lower() or "greater good" in a.lower() for a in u.get("unmodelled", []))


@pytest.mark.parametrize(("name", "read"), [
    ("Firing Deck 11", ("firing_deck", 11)), ("firing  deck 2", ("firing_deck", 2)),
    ("For The Greater Good", ("rules", "For the Greater Good")), ("for the greater good", ("rules", "For the Greater Good")),
    ("Firing Deck", None), ("Firing Deck 0", None), ("Firing Deck 1001", None), ("Firing Deck x", None),
    ("Greater Good", None)])
def test_m57_unit_rule_names(name: str, read: tuple[str, Any] | None) -> None:
    assert unit_rule(name) == read


# -- the pinned snapshot ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def snapshot(shared_data: Path) -> Imported:
    folder = shared_data / "bsdata-wh40k-10e"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found: the BSData snapshot is not available")
    return import_files([folder])


def _unit(imported: Imported, faction: str, name: str) -> dict[str, Any]:
    (u,) = [u for f in imported.factions if f.name == faction for u in f.units if u["name"] == name]
    return u


def _plain(w: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in w.items() if k not in ("aliases", "abilities", "unmodelled")}


def test_m56_pathfinder_ion_and_rail_rifles(snapshot: Imported) -> None:
    # tau-empire.cat 2598-d700-9952-e439 "Pathfinder Team": group "Pathfinders" (min 9) holds
    # "Pathfinders w/ pulse carbine" and the sub-group "Special Weapons (0-3)" (164e-67ca-e0bb-4c42)
    # with "Pathfinders w/ ion rifle" (bad1-a6d1-a65e-943b) and "w/ rail rifle" (68d2-39b6-1033-f3a),
    # max 3 and no min: options of the pulse carbine Pathfinders
    u = _unit(snapshot, "T'au Empire", "Pathfinder Team")
    (carbines,) = [m for m in u["models"] if m["name"] == "Pathfinders w/ pulse carbine"]
    assert carbines["count"] == 9
    assert {"Ion rifle - standard", "Ion rifle - overcharge", "Rail rifle"} <= set(carbines["options"])
    weapons = {w["name"]: w for w in u["weapons"]}
    # profile a20f-90e8-acb9-acdd: 30" A3 BS5+ S7 AP-1 D1 Heavy; 2b06-5a01-9b6b-5a6a: 30" A3 BS5+
    # S8 AP-2 D2 Hazardous, Heavy; d043-2eff-12e9-4339 "Rail rifle": 30" A1 BS5+ S10 AP-4 D3
    # Devastating Wounds, Heavy
    assert _plain(weapons["Ion rifle - standard"]) == {"name": "Ion rifle - standard", "range": 30, "A": "3", "BS": 5,
                                                       "S": 7, "AP": -1, "D": "1"}
    assert _plain(weapons["Ion rifle - overcharge"]) == {"name": "Ion rifle - overcharge", "range": 30, "A": "3",
                                                         "BS": 5, "S": 8, "AP": -2, "D": "2"}
    assert _plain(weapons["Rail rifle"]) == {"name": "Rail rifle", "range": 30, "A": "1", "BS": 5, "S": 10, "AP": -4,
                                             "D": "3"}
    assert weapons["Rail rifle"]["abilities"] == ["Devastating Wounds", "Heavy"]
    # the unit's infoLink d80a-bd90-4bf1-4a0d "For The Greater Good" is a named rule, not text
    assert u["rules"] == ["For the Greater Good"] and "For The Greater Good" not in u["unmodelled"]
    assert not [p for f in snapshot.factions for p in f.problems if p.unit == "Pathfinder Team"]


def test_m56_broadside_shasui_is_reported(snapshot: Imported) -> None:
    # tau-empire.cat group "Broadside Shas’ui (0-2)" (2295-bb6d-9a9a-ff6): model 8a73-2cbe-9248-fe7d
    # with max 2 and no min, beside no model of a default count
    problems = [p for f in snapshot.factions if f.name == "T'au Empire" for p in f.problems
                if p.unit == "Broadside Battlesuits"]
    assert [p.what for p in problems] == ["model 'Broadside Shas’ui'"]


def test_m58_gun_drone_and_mv15_name_their_weapons(snapshot: Imported) -> None:
    # group "Drones (0-2)" (de95-b481-fb09-1bce, linked at line 5542 from the Pathfinder Shas'ui):
    # "Gun Drone" caf5-ab72-8da1-04a8 must take 1 "Twin pulse carbine" (1ad0-be27-ab4c-3459:
    # 20" A2 BS5+ S5 AP0 D1 Assault, Twin-linked)
    u = _unit(snapshot, "T'au Empire", "Pathfinder Team")
    (tpc,) = [w for w in u["weapons"] if w["name"] == "Twin pulse carbine"]
    assert tpc["aliases"] == ["Gun Drone"]
    assert _plain(tpc) == {"name": "Twin pulse carbine", "range": 20, "A": "2", "BS": 5, "S": 5, "AP": 0, "D": "1"}
    # "MV15 Gun Drone" 44fd-0d69-f966-20c5 must take 1 "Twin pulse blaster" (e746-184a-057b-b455:
    # 10" A2 BS5+ S6 AP-1 D1 Assault, Twin-linked)
    lance = _unit(snapshot, "T'au Empire", "The Twin Lance")
    (tpb,) = [w for w in lance["weapons"] if w["name"] == "Twin pulse blaster"]
    assert tpb["aliases"] == ["MV15 Gun Drone"]
    assert _plain(tpb) == {"name": "Twin pulse blaster", "range": 10, "A": "2", "BS": 5, "S": 6, "AP": -1, "D": "1"}


def test_m57_tidewall_firing_decks(snapshot: Imported) -> None:
    # tau-empire.cat: the infoLink "Firing Deck" with an append modifier of "20" in the Tidewall
    # Shieldline (1d72-cdbd-796f-7c0d, line 8586) and of "11" in the Droneport (af7f-fc61-e9c0-6a7e,
    # line 8667) and the Gunrig (e412-ea81-6767-9974, line 8742)
    decks = {name: _unit(snapshot, "T'au Empire", name).get("firing_deck")
             for name in ("Tidewall Shieldline", "Tidewall Droneport", "Tidewall Gunrig")}
    assert decks == {"Tidewall Shieldline": 20, "Tidewall Droneport": 11, "Tidewall Gunrig": 11}


def _pieces(u: dict[str, Any]) -> list[dict[str, Any]]:
    """A unit's ``wargear:`` entries without what may replace each (``alternatives``)."""
    return [{k: v for k, v in w.items() if k != "alternatives"} for w in u["wargear"]]


def _loaded(u: dict[str, Any]) -> Unit:
    """An imported unit as the profile loader reads it (what a built-in profile gives)."""
    return _unit_of(_Reader("imported", "units[0]", u))


def test_m81_default_wargear_gives_its_bearers_defences(snapshot: Imported) -> None:
    # imperium-astra-militarum-library.cat line 1550: model "Bullgryn" (Unit profile W3) with the
    # group "Slabshield" (min 1, max 1, default entryLink 5f35-c9de-9747-2529 -> be30-b742-ec15-1066,
    # line 15993: "The bearer has a Wounds characteristic of 4.")
    # The Bone 'ead's own group (line 1648) names as its default 5f35-c9de-9747-2529, the Bullgryn's
    # link (line 1569) to the same Slabshield, not its own af5d-294f-5e7f-0de7 (line 1654): ruling M83
    bullgryn = _unit(snapshot, "Astra Militarum", "Bullgryn Squad")
    # the statlines keep the datasheet's W3 and name the wargear they bear; loaded, they are W4
    assert {m["name"]: (m["W"], m["wargear"]) for m in bullgryn["models"]} == {
        "Bullgryn": (3, ["Slabshield"]), "Bullgryn Bone 'ead": (3, ["Slabshield"])}
    assert {m.name: m.wounds for m in _loaded(bullgryn).models} == {"Bullgryn": 4, "Bullgryn Bone 'ead": 4}
    # leagues-of-votann.cat line 1580: the Einhyr Champion's group "Crest" (min 1, default
    # b0eb-9aa0-5029-db9d "Weavefield crest", line 1590: "The bearer has a 4+ invulnerable save.");
    # the unit has no invulnerable save of its own
    champion = _unit(snapshot, "Leagues of Votann", "Einhyr Champion")
    assert "invulnerable" not in champion and "invulnerable" not in champion["models"][0]
    assert champion["models"][0]["wargear"] == ["Weavefield crest"]
    (model,) = _loaded(champion).models
    assert (model.invulnerable, model.wounds) == (4, 5)
    # imperium-space-wolves.cat line 9695: the Wolf Guard Battle Leader (W5) takes a Storm Shield
    # by default, line 9833: "The bearer has a Wounds characteristic of 6"
    leader = _unit(snapshot, "Space Wolves", "Wolf Guard Battle Leader")
    assert (leader["models"][0]["W"], leader["models"][0]["wargear"]) == (5, ["Storm Shield"])
    # its group "Replace Storm Shield" (line 9815) also holds a Plasma pistol: what replaces it
    (shield,) = [w for w in leader["wargear"] if w["name"] == "Storm Shield"]
    assert "Plasma pistol" in shield["alternatives"]
    # only what names nothing else of the model, for a piece every statline that bears it may swap:
    # aeldari-aeldari-library.cat line 25143, the Skathach's left arm (Scattershield, or a
    # Deathshroud Cannon or Inferno Lance that its right arm offers too); imperium-space-marines.cat,
    # a Command Squad's Company Champion bears his Astartes Shield with no choice; the Assault
    # Terminators' Storm Shield comes with no choice (line 9664) where the Sergeant's does
    for faction, unit, piece in (("Aeldari", "Skathach Wraithknight [Legends]", "Scattershield"),
                                 ("Space Marines", "Command Squad [Legends]", "Astartes Shield"),
                                 ("Space Marines", "Terminator Assault Squad", "Storm Shield")):
        (entry,) = [w for w in _unit(snapshot, faction, unit)["wargear"] if w["name"] == piece]
        assert "alternatives" not in entry, (unit, entry)
    assert _loaded(leader).models[0].wounds == 6
    # a Shield Drone (tau-empire.cat line 63, 3ef0-a48a-cafc-ce23: "Add 1 to the bearer's Wounds
    # characteristic.") that no Sunforge statline takes by default: the unit's wargear, for rosters
    sunforge = _unit(snapshot, "T'au Empire", "Crisis Sunforge Battlesuits")
    assert {"name": "Shield Drone", "add_W": 1} in _pieces(sunforge)
    assert {m["W"] for m in sunforge["models"]} == {4} and not any("wargear" in m for m in sunforge["models"])
    # the Bullgryn's wargear: the Slabshield they bear, and its other choice, the Brute shield
    # (line 1570, 5a1c-ba0c-7970-348d: "The bearer has a 4+ invulnerable save.")
    assert _pieces(bullgryn) == [{"name": "Slabshield", "W": 4}, {"name": "Brute shield", "invulnerable": 4}]
    assert [w.get("alternatives") for w in bullgryn["wargear"]] == [["Brute shield"], None]
    # space-marines: "Vanguard Veteran Squad with Jump Packs", group "Pistol Option" names a default
    # (bfea-dd65...) that is none of its entries: the importer takes the first, a Storm Shield
    # ("The bearer has a 4+ invulnerable save."), as a guess: its weapons, not its save
    vanguard = _unit(snapshot, "Space Marines", "Vanguard Veteran Squad with Jump Packs")
    assert all("invulnerable" not in m and "wargear" not in m for m in vanguard["models"])
    assert "invulnerable" not in vanguard
    assert {"name": "Storm Shield", "invulnerable": 4} in _pieces(vanguard)
    # tau-empire.cat entry ebac-f783-8a80-8c4a "Marker Drone": "The bearer's unit has the
    # **^^Markerlight^^** keyword and can act as an Observer unit ...": for rosters that list one
    assert {"name": "Marker Drone", "keywords": ["MARKERLIGHT"]} in _pieces(sunforge)
    assert "MARKERLIGHT" not in sunforge["keywords"]


def test_m83_copied_groups_take_the_default_their_links_name(snapshot: Imported) -> None:
    # imperium-astra-militarum-library.cat line 1630: the Bone 'ead's "Grenadier Gauntlet" group
    # names abf1-89f8-162d-cf16, the Bullgryn's link to the Grenadier gauntlet (line 1576): he takes
    # it (and his close combat weapon), not the group's first entry, the Bullgryn maul
    bullgryn = _unit(snapshot, "Astra Militarum", "Bullgryn Squad")
    bone = next(m for m in bullgryn["models"] if m["name"] == "Bullgryn Bone 'ead")
    assert sorted(bone["weapons"]) == ["Close combat weapon", "Grenadier gauntlet"]
    # imperium-space-marines.cat: groups whose default names a link of another group of the same
    # file, "Weapon Option" 19fd-15ca-1adf-d3c4 -> Heavy Bolter, "Turret Weapon" f717-df2b-fa22-1189
    # -> Twin heavy bolter
    speeder = _unit(snapshot, "Space Marines", "Land Speeder [Legends]")
    assert "Heavy Bolter" in speeder["models"][0]["weapons"] and "Multi-melta" not in speeder["models"][0]["weapons"]
    razorback = _unit(snapshot, "Space Marines", "Relic Razorback [Legends]")
    assert "Twin heavy bolter" in razorback["models"][0]["weapons"]
    # imperium-black-templars.cat line 5001, Terminator Squad: the Sergeant's "Weapon Option" group
    # (084c-d4bd-0514-2ce9) names as its default 7227-b99b-6f6e-d8ee, a link in another file
    # (imperium-space-marines.cat) to a Power fist: not followed, so the group's first entry, the
    # Power weapon (the datasheet's), taken as a guess
    templars = _unit(snapshot, "Black Templars", "Terminator Squad")
    sergeant = next(m for m in templars["models"] if m["name"] == "Terminator Sergeant")
    assert "Power weapon" in sergeant["weapons"] and "Power fist" not in sergeant["weapons"]


def test_m85_a_unit_records_the_enhancements_that_change_its_bearers_defences(snapshot: Imported) -> None:
    # imperium-imperial-knights-library.cat line 7685, enhancement "Omnissian Champion": "IMPERIAL
    # KNIGHTS model only. Add 4 to the bearer's Wounds characteristic."; "Sanctuary": "... The
    # bearer has a 5+ invulnerable save." Both in groups named "... Enhancements" that the Knight
    # Paladin links; Canis Rex (an EPIC HERO) and the Armigers (no CHARACTER) link none
    paladin = _unit(snapshot, "Imperial Knights", "Knight Paladin")
    assert paladin["enhancements"] == [{"name": "Omnissian Champion", "add_W": 4},
                                       {"name": "Sanctuary", "invulnerable": 5}]
    assert paladin["models"][0]["W"] == 26  # the Unit profile's, line 799: an enhancement is not taken by default
    for name in ("Canis Rex", "Armiger Warglaive"):
        assert "enhancements" not in _unit(snapshot, "Imperial Knights", name)
    # an enhancement whose text is anything else is not recorded (the Pennant of Silvered Fury)
    lancer = _unit(snapshot, "Imperial Knights", "Cerastus Knight Lancer")
    assert [e["name"] for e in lancer["enhancements"]] == ["Omnissian Champion", "Sanctuary"]


def test_m86_a_loadout_shoots_the_profile_without_hazardous(snapshot: Imported) -> None:
    # imperium-space-wolves / space-marines: the Wolf Scouts' plasma pistol lists "- supercharge"
    # ([HAZARDOUS]) before "- standard"; Mephiston's likewise (imperium-blood-angels); the Cerastus
    # Knight Atrapos's Graviton singularity cannon "- singularity" (Hazardous) before "- contained"
    scouts = _unit(snapshot, "Space Wolves", "Wolf Scouts")
    armed = [m for m in scouts["models"] if any(w.startswith("Plasma pistol") for w in m["weapons"])]
    assert armed and all("Plasma pistol - standard" in m["weapons"] and "Plasma pistol - supercharge" in m["options"]
                         for m in armed)
    atrapos = _unit(snapshot, "Imperial Knights", "Cerastus Knight Atrapos")
    assert "Graviton singularity cannon - contained" in atrapos["models"][0]["weapons"]
