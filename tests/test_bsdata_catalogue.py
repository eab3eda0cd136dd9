"""Link resolution as BattleScribe does it, on a small hand-made set: a game system with shared
entries and profiles, a library catalogue holding the unit, and a faction catalogue that links it.
Files are found by id, never by name (the files here are named to mislead)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathhammer.bsdata.build import import_files
from mathhammer.bsdata.catalogue import faction_name

NS_GST = "http://www.battlescribe.net/schema/gameSystemSchema"
NS_CAT = "http://www.battlescribe.net/schema/catalogueSchema"


def chars(**kw: str) -> str:
    return "<characteristics>" + "".join(f'<characteristic name="{k}">{v}</characteristic>' for k, v in kw.items()) \
        + "</characteristics>"


def weapon(pid: str, name: str, melee: bool = False, **kw: str) -> str:
    base = ({"Range": "Melee", "A": "2", "WS": "3+", "S": "4", "AP": "0", "D": "1", "Keywords": "-"} if melee else
            {"Range": "24&quot;", "A": "2", "BS": "3+", "S": "4", "AP": "-1", "D": "1", "Keywords": "-"})
    base.update(kw)
    kind = "Melee Weapons" if melee else "Ranged Weapons"
    return f'<profile id="{pid}" name="{name}" typeName="{kind}">{chars(**base)}</profile>'


def statline(pid: str, name: str, w: str = "2") -> str:
    return f'<profile id="{pid}" name="{name}" typeName="Unit">' + chars(M="6&quot;", T="4", SV="3+", W=w, LD="6+",
                                                                        OC="2") + "</profile>"


def bounds(lo: int | None = None, hi: int | None = None) -> str:
    out = "<constraints>"
    if lo is not None:
        out += f'<constraint type="min" value="{lo}" field="selections" scope="parent" id="c-{lo}-{id(out)}"/>'
    if hi is not None:
        out += f'<constraint type="max" value="{hi}" field="selections" scope="parent" id="d-{hi}-{id(out)}"/>'
    return out + "</constraints>"


GST = f"""<?xml version="1.0"?>
<gameSystem xmlns="{NS_GST}" id="sys-9" name="Test 40k" revision="2">
  <costTypes><costType id="pts-type" name="pts"/></costTypes>
  <sharedSelectionEntries>
    <selectionEntry type="upgrade" name="Bolt gun" id="w-bolt"><profiles>{weapon("p-bolt", "Bolt gun")}</profiles>
    </selectionEntry>
    <selectionEntry type="upgrade" name="Pistol" id="w-pistol"><profiles>
      {weapon("p-pistol", "Pistol", Range="12&quot;", Keywords="Pistol")}</profiles></selectionEntry>
  </sharedSelectionEntries>
  <sharedProfiles>
    <profile id="inv-4" name="Invulnerable Save" typeName="Abilities">{chars(Description="4+")}</profile>
  </sharedProfiles>
  <sharedRules><rule id="r-fnp" name="Feel No Pain"><description>Roll a D6...</description></rule></sharedRules>
</gameSystem>
"""

LIBRARY = f"""<?xml version="1.0"?>
<catalogue xmlns="{NS_CAT}" id="lib-7" name="Xenos - Testers Library" library="true" revision="5"
           gameSystemId="sys-9">
  <sharedSelectionEntries>
    <selectionEntry type="unit" name="Test Squad" id="u-squad">
      <categoryLinks>
        <categoryLink id="cl1" name="Infantry" targetId="cat-inf"/>
        <categoryLink id="cl2" name="Faction: Testers" targetId="cat-fac"/>
      </categoryLinks>
      <infoLinks>
        <infoLink id="il1" name="Invulnerable Save" type="profile" targetId="inv-4"/>
        <infoLink id="il2" name="Feel No Pain" type="rule" targetId="r-fnp">
          <modifiers><modifier type="append" field="name" value="5+"/></modifiers></infoLink>
      </infoLinks>
      <profiles><profile id="ab1" name="Stubborn" typeName="Abilities">{chars(Description="Text.")}</profile>
      </profiles>
      <selectionEntryGroups>
        <selectionEntryGroup name="3-6 models" id="g-models" defaultSelectionEntryId="m-trooper">
          {bounds(3, 6)}
          <selectionEntries>
            <selectionEntry type="model" name="Trooper" id="m-trooper">
              {bounds(None, 5)}
              <profiles>{statline("s-trooper", "Trooper")}</profiles>
              <entryLinks>
                <entryLink id="el-bolt" name="Bolt gun" type="selectionEntry" targetId="w-bolt">{bounds(1, 1)}</entryLink>
                <entryLink id="el-pistol" name="Pistol" type="selectionEntry" targetId="w-pistol">{bounds(1, 1)}
                </entryLink>
              </entryLinks>
              <selectionEntryGroups>
                <selectionEntryGroup name="Melee" id="g-melee" defaultSelectionEntryId="w-knife">
                  {bounds(1, 1)}
                  <selectionEntries>
                    <selectionEntry type="upgrade" name="Sword" id="w-sword"><profiles>
                      {weapon("p-s1", "➤ Sword - strike", True, S="6")}{weapon("p-s2", "➤ Sword - sweep", True, A="4")}
                    </profiles></selectionEntry>
                    <selectionEntry type="upgrade" name="Knife" id="w-knife"><profiles>
                      {weapon("p-knife", "Knife", True)}</profiles></selectionEntry>
                  </selectionEntries>
                </selectionEntryGroup>
              </selectionEntryGroups>
            </selectionEntry>
            <selectionEntry type="model" name="Leader" id="m-leader">
              {bounds(1, 1)}
              <profiles>{statline("s-leader", "Leader", w="3")}</profiles>
              <selectionEntries>
                <selectionEntry type="upgrade" name="Sword" id="w-sword2">{bounds(1, 1)}<profiles>
                  {weapon("p-s3", "➤ Sword - strike", True, S="6")}{weapon("p-s4", "➤ Sword - sweep", True, A="4")}
                </profiles></selectionEntry>
              </selectionEntries>
            </selectionEntry>
          </selectionEntries>
        </selectionEntryGroup>
        <selectionEntryGroup name="Crusade" id="g-crusade">
          <selectionEntries><selectionEntry type="upgrade" name="Relic gun" id="w-relic">{bounds(1, 1)}
            <profiles>{weapon("p-relic", "Relic gun", S="*")}</profiles></selectionEntry></selectionEntries>
        </selectionEntryGroup>
      </selectionEntryGroups>
      <costs><cost name="pts" typeId="pts-type" value="50"/></costs>
      <modifiers><modifier type="set" value="90" field="pts-type">
        <conditions><condition type="atLeast" value="4" field="selections" scope="u-squad" childId="model"/></conditions>
      </modifier></modifiers>
    </selectionEntry>
  </sharedSelectionEntries>
</catalogue>
"""

FACTION = f"""<?xml version="1.0"?>
<catalogue xmlns="{NS_CAT}" id="fac-3" name="Xenos - Testers" library="false" revision="11" gameSystemId="sys-9">
  <catalogueLinks><catalogueLink id="lk" name="anything" targetId="lib-7" type="catalogue"/></catalogueLinks>
  <entryLinks><entryLink id="root-squad" name="Test Squad" type="selectionEntry" targetId="u-squad"/></entryLinks>
</catalogue>
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    # names chosen so that nothing could be found by file name
    (tmp_path / "b.gst").write_text(GST, encoding="utf-8")
    (tmp_path / "a.cat").write_text(LIBRARY, encoding="utf-8")
    (tmp_path / "c.cat").write_text(FACTION, encoding="utf-8")
    return tmp_path


def only_unit(paths: list[Path]) -> dict[str, Any]:
    imported = import_files(paths)
    assert [f.name for f in imported.factions] == ["Testers"]
    assert imported.problems == []
    (unit,) = imported.factions[0].units
    return unit


def test_unit_through_links_by_id(folder: Path) -> None:
    u = only_unit([folder / "c.cat"])  # the library and the game system are found beside it, by id
    assert u["name"] == "Test Squad" and u["faction"] == "Testers"
    trooper, leader = u["models"]
    # the group's min (3) less the Leader's 1 goes to the group's default model
    assert (trooper["name"], trooper["count"], trooper["W"]) == ("Trooper", 2, 2)
    assert (leader["name"], leader["count"], leader["W"]) == ("Leader", 1, 3)
    # the pistol beside a ranged weapon is an option; the group's default melee weapon is taken
    assert trooper["weapons"] == ["Bolt gun", "Knife"]
    assert trooper["options"] == ["Sword - strike", "Sword - sweep", "Pistol"]
    # two profiles of one entry: the first is the loadout, the other an option
    assert leader["weapons"] == ["Sword - strike"] and leader["options"] == ["Sword - sweep"]
    assert u["points"] == 50 and u["sizes"] == [{"models": 3, "points": 50}, {"models": 6, "points": 90}]
    assert u["invulnerable"] == {"save": 4, "ranged_only": False}
    assert u["feel_no_pain"] == 5
    assert u["keywords"] == ["INFANTRY", "TESTERS"]
    assert u["unmodelled"] == ["Stubborn"]
    # Crusade wargear is not the unit's
    assert "Relic gun" not in [w["name"] for w in u["weapons"]]
    assert u["source"] == "BSData a.cat entry u-squad"


@pytest.mark.parametrize("where", ["unit", "model"])
def test_r_1_5_pistol_of_a_vehicle_is_fired_beside_its_other_guns(folder: Path, where: str) -> None:
    """The seed's Pistol rule: a model shoots its Pistols or its other ranged weapons "unless it
    is a MONSTER or VEHICLE model". A VEHICLE keyword on the unit, or on the model's own entry,
    keeps the pistol in the loadout, as a roster's model keeps it (ruling M78)."""
    vehicle = '<categoryLink id="cl-veh" name="Vehicle" targetId="cat-veh"/>'
    text = (LIBRARY.replace('<categoryLink id="cl1" name="Infantry" targetId="cat-inf"/>', vehicle) if where == "unit"
            else LIBRARY.replace('<selectionEntry type="model" name="Trooper" id="m-trooper">',
                                 f'<selectionEntry type="model" name="Trooper" id="m-trooper">'
                                 f'<categoryLinks>{vehicle}</categoryLinks>'))
    assert text != LIBRARY
    (folder / "a.cat").write_text(text, encoding="utf-8")
    trooper = only_unit([folder / "c.cat"])["models"][0]
    assert trooper["weapons"] == ["Bolt gun", "Pistol", "Knife"]
    assert trooper["options"] == ["Sword - strike", "Sword - sweep"]


def test_r_1_5_a_weapon_that_shoots_and_fights_is_carried_with_a_profile_of_each(folder: Path) -> None:
    """One entry with a ranged profile and strike and sweep melee profiles (a Cerastus shock
    lance): the model shoots with the ranged one and fights with the strike one (ruling M79);
    the sweep is the option. Before, the strike alone was taken and the lance never shot."""
    old = f'{weapon("p-s3", "➤ Sword - strike", True, S="6")}'
    text = LIBRARY.replace(old, f'{weapon("p-s0", "Sword", Range="12&quot;", A="6")}{old}')
    assert text != LIBRARY
    (folder / "a.cat").write_text(text, encoding="utf-8")
    leader = only_unit([folder / "c.cat"])["models"][1]
    assert leader["name"] == "Leader"
    assert leader["weapons"] == ["Sword", "Sword - strike"] and leader["options"] == ["Sword - sweep"]


@pytest.mark.parametrize(("knife", "fights_with"), [
    ({}, "Sword - strike"),  # the Dagger A2 WS3+ S4 AP0 D1: 2 x 4/6 x 3/6 x 2/6 = 2/9 against T4 Sv3+; the strike's S6: 8/27
    ({"S": "8", "AP": "-2"}, "Dagger"),  # 2 x 4/6 x 5/6 x 4/6 = 20/27
])
def test_m80_a_model_fights_with_its_best_melee_weapon_wherever_it_is_listed(folder: Path, knife: dict[str, str],
                                                                            fights_with: str) -> None:
    """The Leader carries a Dagger, listed first, and a Sword: it fights with the one that does
    more to a Space Marine (ruling M80), not the first; the other is an option."""
    old = '<selectionEntry type="upgrade" name="Sword" id="w-sword2">'
    text = LIBRARY.replace(old, f'<selectionEntry type="upgrade" name="Dagger" id="w-dagger">{bounds(1, 1)}<profiles>'
                                f'{weapon("p-dagger", "Dagger", True, **knife)}</profiles></selectionEntry>{old}')
    assert text != LIBRARY
    (folder / "a.cat").write_text(text, encoding="utf-8")
    leader = only_unit([folder / "c.cat"])["models"][1]
    assert leader["name"] == "Leader"
    assert leader["weapons"] == [fights_with]
    assert {"Dagger", "Sword - strike"} - {fights_with} <= set(leader["options"])


def test_whole_folder_gives_the_same(folder: Path) -> None:
    assert only_unit([folder]) == only_unit([folder / "c.cat"])


def test_library_named_alone(folder: Path) -> None:
    assert only_unit([folder / "a.cat"])["name"] == "Test Squad"


def test_missing_library_names_the_catalogue(folder: Path) -> None:
    from mathhammer.errors import ProfileError

    (folder / "a.cat").unlink()
    with pytest.raises(ProfileError, match=r"its catalogue \(id lib-7\) is missing") as e:
        import_files([folder / "c.cat"])
    assert e.value.where == str(folder / "c.cat")


@pytest.mark.parametrize(("name", "faction"), [
    ("Xenos - T'au Empire", "T'au Empire"),
    ("Imperium - Adeptus Astartes - Space Marines", "Space Marines"),
    ("Imperium - Astra Militarum - Library", "Astra Militarum"),
    ("Aeldari - Aeldari Library", "Aeldari"),
    ("Library - Titans", "Titans"),
    ("Unaligned Forces", "Unaligned Forces"),
])
def test_faction_names(name: str, faction: str) -> None:
    assert faction_name(name) == faction
