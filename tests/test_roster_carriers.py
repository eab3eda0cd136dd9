"""Issue 11, second pass, in rosters: the Pathfinders' ion and rail rifles fire, wargear named by
its carrier ("Gun Drone", "Recon drone", "MV15 Gun Drone") fires the carrier's weapon, counted once
when the export also names the weapon (ruling M58); .ros units carry Firing Deck; the sample
.rosz files attach no leader (ruling M59).

Expected loadouts are read off the sample files as they are written (line numbers cited) and the
catalogue entries named in tests/test_bsdata_options.py; none comes from the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mathhammer.api import library
from mathhammer.profiles import Library, load_file
from mathhammer.roster import load_roster
from mathhammer.roster.model import RosterUnit

from .profile_files import write_profile


@pytest.fixture(scope="module")
def lib() -> Library:
    return library(use_env=False)


def _entry(path: Path, lib: Library, line: int) -> RosterUnit:
    roster = load_roster(path, lib)
    (entry,) = [e for e in roster.entries if e.line == line]
    assert entry.unit is not None, [n.text for n in entry.notes]
    return entry


def _models(entry: RosterUnit) -> list[tuple[str, int, dict[str, int]]]:
    assert entry.unit is not None
    return sorted((m.name, m.count, dict(m.loadout)) for m in entry.unit.models)


def _unfired(entry: RosterUnit) -> str:
    return " ".join(n.text for n in entry.notes if "not fired" in n.text)


def test_m56_m58_gw_app_pathfinders_fire_ion_rifles_and_drones(shared_data: Path, lib: Library) -> None:
    # gwapp-tau.txt lines 170-183: the Shas'ui with a Gun Drone, a Recon Drone and a Shield Drone;
    # 9 Pathfinders with 3 Ion rifles and 6 Pulse carbines
    entry = _entry(shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt", lib, 170)
    pathfinders = [(n, c, lo) for n, c, lo in _models(entry) if n == "Pathfinder"]
    assert pathfinders == [
        ("Pathfinder", 3, {"Close combat weapon": 1, "Ion rifle - standard": 1}),
        ("Pathfinder", 6, {"Close combat weapon": 1, "Pulse carbine": 1})]  # their Pulse pistols: the Pistol rule
    (shasui,) = [lo for n, _, lo in _models(entry) if n == "Pathfinder Shas'ui"]
    assert shasui["Twin pulse carbine"] == 1 and shasui["Drone burst cannon"] == 1
    # the Shield Drone carries no weapon: still kept as wargear, not fired
    assert "Shield Drone" in _unfired(entry) and "Gun Drone" not in _unfired(entry)
    assert "Ion rifle" not in _unfired(entry)


def test_m56_rail_rifles_fire_in_every_text_format(shared_data: Path, lib: Library) -> None:
    folder = shared_data / "text-exports-40kcompactor"
    # newrecruit-gw-tau.txt line 154 ("3x Rail rifle", line 167), newrecruit-wtc-compact-tau.txt
    # line 49 ("3 with Close combat weapon, Pulse pistol, Rail rifle"), warorgan-tau.txt line 86
    # ("3 Pathfinders with Close combat weapon, Pulse pistol and Rail rifle")
    for name, line in (("newrecruit-gw-tau.txt", 154), ("newrecruit-wtc-compact-tau.txt", 49),
                       ("warorgan-tau.txt", 86)):
        entry = _entry(folder / name, lib, line)
        rails = sum(c * lo.get("Rail rifle", 0) for _, c, lo in _models(entry))
        assert rails == 3, name


def test_m58_a_carrier_listed_with_its_weapon_counts_once(shared_data: Path, lib: Library) -> None:
    # newrecruit-gw-tau.txt lines 50-64 (The Twin Lance): each model lists "1x Twin pulse blaster"
    # twice and "MV15 Gun Drone" once: the drone's weapon is among the two lines, not a third
    entry = _entry(shared_data / "text-exports-40kcompactor" / "newrecruit-gw-tau.txt", lib, 50)
    assert [lo["Twin pulse blaster"] for _, _, lo in _models(entry)] == [2, 2]
    assert any("MV15 Gun Drone: its Twin pulse blaster is listed as well" in n.text for n in entry.notes)
    # gwapp-tau.txt lines 147-157: "1x MV15 Gun Drone" alone: one Twin pulse blaster each
    entry = _entry(shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt", lib, 147)
    assert [lo["Twin pulse blaster"] for _, _, lo in _models(entry)] == [1, 1]


CARRIED = """\
schema: 1
units:
  - name: Drone Team
    faction: Testers
    models:
      - {name: Drone Leader, count: 1, T: 3, Sv: 4, W: 1, weapons: [Carbine]}
    weapons:
      - {name: Carbine, range: 20, A: "2", BS: 4, S: 5, AP: 0, D: "1"}
      - {name: Drone gun, aliases: [Gun Drone], range: 20, A: "2", BS: 5, S: 5, AP: 0, D: "1"}
"""


def test_m58_a_carrier_alias_fires_its_weapon_and_a_named_weapon_wins(tmp_path: Path) -> None:
    lib = Library(load_file(write_profile(tmp_path / "p", CARRIED)))
    text = tmp_path / "list.txt"
    # the GW app's layout (as gwapp-tau.txt): 2 drones carried by one model, then the same with
    # the drones' weapon named as well
    text.write_text("Drones (100 points)\n\nTesters\nStrike Force (100 points)\n\nCHARACTERS\n\n"
                    "Drone Team (50 points)\n  • 1x Drone Leader\n    • 1x Carbine\n      2x Gun Drone\n\n"
                    "Drone Team (50 points)\n  • 1x Drone Leader\n    • 1x Carbine\n      2x Gun Drone\n"
                    "      2x Drone gun\n", encoding="utf-8")
    roster = load_roster(text, lib)
    first, second = roster.entries
    assert first.unit is not None and second.unit is not None
    assert dict(first.unit.models[0].loadout) == {"Carbine": 1, "Drone gun": 2}
    assert dict(second.unit.models[0].loadout) == {"Carbine": 1, "Drone gun": 2}
    assert any("Gun Drone: its Drone gun is listed as well, counted once" in n.text for n in second.notes)


def test_m57_ros_units_carry_firing_deck(shared_data: Path) -> None:
    # ultramarines-10e.rosz: the Impulsor (line 1903 of the unzipped XML) and the Land Speeder
    # Storm (line 2122) each hold a rule "Firing Deck 6" (lines 2082, 2227)
    roster = load_roster(shared_data / "rosters-prettyscribe" / "ultramarines-10e.rosz")
    decks = {u.name: u.firing_deck for u in roster.units() if u.firing_deck is not None}
    assert decks == {"Impulsor": 6, "Land Speeder Storm": 6}
    assert not any("Firing Deck" in a for u in roster.units() for a in u.unmodelled)


@pytest.mark.parametrize("name", ["lov-leviathan-v0102.rosz", "necrons-10e.rosz", "ultramarines-10e.rosz"])
def test_m59_the_sample_rosz_files_attach_no_leader(shared_data: Path, name: str) -> None:
    # each file's force holds its units as sibling selections (no unit selection inside another),
    # and no selection, category, cost or rule links a Leader to a Bodyguard unit: nothing to attach
    roster = load_roster(shared_data / "rosters-prettyscribe" / name)
    assert roster.attachments == ()
    assert all(u.attached == () for u in roster.units())
