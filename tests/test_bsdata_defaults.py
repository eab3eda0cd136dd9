"""Ruling M83: a group whose default names another group's link, in the same file, to one of
its own entries takes that entry (a copied group that kept the original's default id).

A small hand-made catalogue, its expected values read off the XML below, then the golden units
of the pinned snapshot read by hand from the catalogues (line numbers and ids cited). None of it
comes from the importer's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathhammer.bsdata.build import Imported, import_files
from mathhammer.profiles.schema import _Reader
from mathhammer.profiles.schema import _unit as _unit_of

from .test_bsdata_catalogue import GST, NS_CAT, bounds, chars, statline, weapon


def _ability(pid: str, text: str) -> str:
    return f'<profile id="{pid}" name="{pid}" typeName="Abilities">{chars(Description=text)}</profile>'


_NAMES = {"w-slab": "Slab shield", "w-round": "Round shield", "w-maul": "Maul", "w-club": "Club"}


def _choice(name: str, gid: str, default: str, links: list[tuple[str, str]]) -> str:
    """A group ``name`` (take exactly one) of entryLinks (id, target) with the given default id."""
    inner = "".join(f'<entryLink id="{lid}" name="{_NAMES[target]}" type="selectionEntry" targetId="{target}"/>'
                    for lid, target in links)
    return (f'<selectionEntryGroup name="{name}" id="{gid}" defaultSelectionEntryId="{default}">'
            f"{bounds(1, 1)}<entryLinks>{inner}</entryLinks></selectionEntryGroup>")


LIBRARY = f"""<?xml version="1.0"?>
<catalogue xmlns="{NS_CAT}" id="lib-8" name="Xenos - Brute Library" library="true" revision="1" gameSystemId="sys-9">
  <sharedSelectionEntries>
    <selectionEntry type="upgrade" name="Slab shield" id="w-slab">
      <profiles>{_ability("ab-slab", "The bearer has a Wounds characteristic of 4.")}</profiles></selectionEntry>
    <selectionEntry type="upgrade" name="Round shield" id="w-round">
      <profiles>{_ability("ab-round", "The bearer has a 4+ invulnerable save.")}</profiles></selectionEntry>
    <selectionEntry type="upgrade" name="Maul" id="w-maul"><profiles>{weapon("p-maul", "Maul", True, S="7")}</profiles>
    </selectionEntry>
    <selectionEntry type="upgrade" name="Club" id="w-club"><profiles>{weapon("p-club", "Club", True, S="5")}</profiles>
    </selectionEntry>
    <selectionEntry type="unit" name="Brute Pack" id="u-brutes">
      <selectionEntryGroups>
        <selectionEntryGroup name="Brutes" id="g-pack">
          {bounds(3, 3)}
          <selectionEntries>
            <selectionEntry type="model" name="Brute" id="m-brute">
              {bounds(2, 2)}
              <profiles>{statline("s-brute", "Brute", w="3")}</profiles>
              <selectionEntryGroups>
                {_choice("Shield", "g-shield-brute", "el-slab-brute", [("el-slab-brute", "w-slab"), ("el-round-brute", "w-round")])}
                {_choice("Weapon", "g-weapon-brute", "el-club-brute", [("el-maul-brute", "w-maul"), ("el-club-brute", "w-club")])}
              </selectionEntryGroups>
            </selectionEntry>
            <selectionEntry type="model" name="Brute Boss" id="m-boss">
              {bounds(1, 1)}
              <profiles>{statline("s-boss", "Brute Boss", w="3")}</profiles>
              <selectionEntryGroups>
                <!-- copied from the Brute's groups: the defaults still name the Brute's links -->
                {_choice("Shield", "g-shield-boss", "el-slab-brute", [("el-round-boss", "w-round"), ("el-slab-boss", "w-slab")])}
                {_choice("Weapon", "g-weapon-boss", "el-club-brute", [("el-maul-boss", "w-maul"), ("el-club-boss", "w-club")])}
              </selectionEntryGroups>
            </selectionEntry>
          </selectionEntries>
        </selectionEntryGroup>
      </selectionEntryGroups>
      <costs><cost name="pts" typeId="pts-type" value="90"/></costs>
    </selectionEntry>
    <selectionEntry type="model" name="Lone Brute" id="u-lone">
      <profiles>{statline("s-lone", "Lone Brute", w="3")}</profiles>
      <selectionEntryGroups>
        <!-- the default names a link of another file (the faction's): not followed -->
        {_choice("Shield", "g-shield-lone", "el-faction-slab", [("el-round-lone", "w-round"), ("el-slab-lone", "w-slab")])}
      </selectionEntryGroups>
      <costs><cost name="pts" typeId="pts-type" value="40"/></costs>
    </selectionEntry>
  </sharedSelectionEntries>
</catalogue>
"""

FACTION = f"""<?xml version="1.0"?>
<catalogue xmlns="{NS_CAT}" id="fac-8" name="Xenos - Brutes" library="false" revision="3" gameSystemId="sys-9">
  <catalogueLinks><catalogueLink id="lk-8" name="library" targetId="lib-8" type="catalogue"/></catalogueLinks>
  <sharedSelectionEntryGroups>
    <selectionEntryGroup name="Spare shields" id="g-spare">
      <entryLinks><entryLink id="el-faction-slab" name="Slab shield" type="selectionEntry" targetId="w-slab"/></entryLinks>
    </selectionEntryGroup>
  </sharedSelectionEntryGroups>
  <entryLinks>
    <entryLink id="root-brutes" name="Brute Pack" type="selectionEntry" targetId="u-brutes"/>
    <entryLink id="root-lone" name="Lone Brute" type="selectionEntry" targetId="u-lone"/>
  </entryLinks>
</catalogue>
"""


@pytest.fixture
def brutes(tmp_path: Path) -> Imported:
    (tmp_path / "sys.gst").write_text(GST, encoding="utf-8")
    (tmp_path / "lib.cat").write_text(LIBRARY, encoding="utf-8")
    (tmp_path / "brutes.cat").write_text(FACTION, encoding="utf-8")
    return import_files([tmp_path / "brutes.cat"])


def _unit(imported: Imported, name: str) -> dict[str, Any]:
    (u,) = [u for f in imported.factions for u in f.units if u["name"] == name]
    return u


def test_m83_a_copied_groups_default_takes_the_entry_its_link_points_to(brutes: Imported) -> None:
    pack = _unit(brutes, "Brute Pack")
    models = {m["name"]: m for m in pack["models"]}
    # the Brute's own defaults: Slab shield (W set to 4 when loaded, ruling M81) and Club
    assert (models["Brute"]["count"], models["Brute"]["wargear"], models["Brute"]["weapons"]) == (
        2, ["Slab shield"], ["Club"])
    # the Boss's groups name the Brute's links (el-slab-brute -> w-slab, el-club-brute -> w-club):
    # the same entries, though the Boss's own links to them come second
    assert (models["Brute Boss"]["count"], models["Brute Boss"]["wargear"], models["Brute Boss"]["weapons"]) == (
        1, ["Slab shield"], ["Club"])
    assert models["Brute Boss"]["options"] == ["Maul"]
    assert "invulnerable" not in models["Brute Boss"] and "invulnerable" not in pack
    loaded = _unit_of(_Reader("imported", "units[0]", pack))
    assert {m.name: (m.wounds, m.invulnerable) for m in loaded.models} == {"Brute": (4, None), "Brute Boss": (4, None)}
    # nothing guessed for the pack
    assumptions = [a for f in brutes.factions for a in f.assumptions]
    assert not [a for a in assumptions if a.startswith("Brute Pack")]


def test_m83_a_default_naming_a_link_of_another_file_is_not_followed(brutes: Imported) -> None:
    lone = _unit(brutes, "Lone Brute")
    # el-faction-slab is in brutes.cat, the group in lib.cat: the importer takes the first entry
    # (Round shield) as a guess, and a guess gives no statline defences (ruling M81)
    (model,) = lone["models"]
    assert model["W"] == 3 and "invulnerable" not in model and "wargear" not in model
    assumptions = [a for f in brutes.factions for a in f.assumptions]
    assert any(a.startswith("Lone Brute") and "Shield: took Round shield (no default given)" in a
               for a in assumptions)


def test_m83_a_link_id_that_another_file_repeats_is_still_this_files(tmp_path: Path) -> None:
    # BSData repeats link ids across files (40 in the snapshot): the faction file also holds an
    # entryLink "el-slab-brute" (to the Round shield); the Boss's default still names the library's
    (tmp_path / "sys.gst").write_text(GST, encoding="utf-8")
    (tmp_path / "lib.cat").write_text(LIBRARY, encoding="utf-8")
    (tmp_path / "brutes.cat").write_text(FACTION.replace(
        '<entryLink id="el-faction-slab" name="Slab shield" type="selectionEntry" targetId="w-slab"/>',
        '<entryLink id="el-faction-slab" name="Slab shield" type="selectionEntry" targetId="w-slab"/>'
        '<entryLink id="el-slab-brute" name="Round shield" type="selectionEntry" targetId="w-round"/>'),
        encoding="utf-8")
    pack = _unit(import_files([tmp_path / "brutes.cat"]), "Brute Pack")
    boss = next(m for m in pack["models"] if m["name"] == "Brute Boss")
    assert boss["wargear"] == ["Slab shield"]
