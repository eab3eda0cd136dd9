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


def _text_entries(tmp_path: Path, lib: Library, text: str, name: str = "list.txt") -> tuple[RosterUnit, ...]:
    """The entries of a text roster ``text`` read against ``lib``."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_roster(path, lib).entries


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
    # the Shield Drone carries no weapon: not fired; it adds 1 to its bearer's Wounds (ruling M81)
    assert "Shield Drone" not in _unfired(entry) and "Gun Drone" not in _unfired(entry)
    assert "Ion rifle" not in _unfired(entry)
    assert entry.unit is not None
    assert {m.name: m.wounds for m in entry.unit.models} == {"Pathfinder": 1, "Pathfinder Shas'ui": 2}


def test_m81_shield_drones_give_their_bearers_a_wound(shared_data: Path, lib: Library, tmp_path: Path) -> None:
    # gwapp-tau.txt lines 17-28: a Crisis Sunforge Shas'vre with 1 Shield Drone and 2 Shas'ui with
    # 2 Shield Drones; tau-empire.cat: the Sunforge's statlines are W4, a Shield Drone is "Add 1 to
    # the bearer's Wounds characteristic."
    entry = _entry(shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt", lib, 17)
    assert entry.unit is not None
    assert {m.name: m.wounds for m in entry.unit.models} == {"Crisis Sunforge Shas'vre": 5,
                                                             "Crisis Sunforge Shas'ui": 5}
    said = {n.text for n in entry.notes}
    assert "Shield Drone: +1 Wounds for 2x Crisis Sunforge Shas'ui (ruling M81)" in said
    # the Shas'vre's Marker Drone (line 22): "The bearer's unit has the Markerlight keyword ..."
    assert "Marker Drone: the unit has the MARKERLIGHT keyword (ruling M81)" in said
    assert "MARKERLIGHT" in entry.unit.keywords and "MARKERLIGHT" not in lib.find("crisis sunforge", "unit").keywords
    assert "Shield Drone" not in _unfired(entry) and "Marker Drone" not in _unfired(entry)
    # one Shield Drone among the two Shas'ui: which one bears it is not said, so neither does
    text = (shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt").read_text(encoding="utf-8")
    one = text.replace("      2x Gun Drone\n      2x Shield Drone\n", "      2x Gun Drone\n      1x Shield Drone\n", 1)
    assert one != text
    (tmp_path / "one.txt").write_text(one, encoding="utf-8")
    entry = _entry(tmp_path / "one.txt", lib, 17)
    assert entry.unit is not None
    assert {m.name: m.wounds for m in entry.unit.models} == {"Crisis Sunforge Shas'vre": 5,
                                                             "Crisis Sunforge Shas'ui": 4}
    assert ("Shield Drone: 1 of 2 Crisis Sunforge Shas'ui bear +1 Wounds, not given (the roster does not say which "
            "models)") in {n.text for n in entry.notes}


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
    # newrecruit-gw-tau.txt lines 50-64 (The Twin Lance): each model lists "1x Twin pulse blaster",
    # then "MV15 Gun Drone" and "1x Twin pulse blaster" again under it. The catalogue
    # (tau-empire.cat, Ri'Lantar) gives each model a Fusion eliminator or Ion scattercannon, a
    # Shardstorm burst system, an MV15 Gun Drone (its one Twin pulse blaster) and an XV pulse
    # pistol, and no other Twin pulse blaster: the three lines are one weapon
    entry = _entry(shared_data / "text-exports-40kcompactor" / "newrecruit-gw-tau.txt", lib, 50)
    assert [lo["Twin pulse blaster"] for _, _, lo in _models(entry)] == [1, 1]
    assert any("MV15 Gun Drone: its Twin pulse blaster is listed as well" in n.text for n in entry.notes)
    # the compact export (line 20): "MV15 Gun Drone, Twin pulse blaster, Fusion eliminator, Twin
    # pulse blaster, ...": the same one weapon
    entry = _entry(shared_data / "text-exports-40kcompactor" / "newrecruit-wtc-compact-tau.txt", lib, 20)
    assert [lo["Twin pulse blaster"] for _, _, lo in _models(entry)] == [1, 1]
    # the Pathfinder Shas'ui (line 155): "1x Drone burst cannon", "2x Gun Drone", "1x Recon drone"
    # and "1x Drone burst cannon" under it: the recon drone's one burst cannon, two drones' carbines
    entry = _entry(shared_data / "text-exports-40kcompactor" / "newrecruit-gw-tau.txt", lib, 154)
    (shasui,) = [lo for n, _, lo in _models(entry) if n == "Pathfinder Shas'ui"]
    assert shasui["Drone burst cannon"] == 1 and shasui["Twin pulse carbine"] == 2
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


def _two_drone_teams(tmp_path: Path, first: str, second: str) -> tuple[RosterUnit, RosterUnit]:
    """Two Drone Teams of CARRIED in a GW-app text, their leaders' item lines as given."""
    lib = Library(load_file(write_profile(tmp_path / "p", CARRIED)))
    text = tmp_path / "list.txt"
    text.write_text("Drones (100 points)\n\nTesters\nStrike Force (100 points)\n\nCHARACTERS\n\n"
                    f"Drone Team (50 points)\n  • 1x Drone Leader\n{first}\n"
                    f"Drone Team (50 points)\n  • 1x Drone Leader\n{second}", encoding="utf-8")
    one, two = load_roster(text, lib).entries
    return one, two


def test_m58_a_carrier_alias_fires_its_weapon_and_a_named_weapon_wins(tmp_path: Path) -> None:
    # the GW app's layout (as gwapp-tau.txt): 2 drones carried by one model, then the same with
    # the drones' weapon named as well
    first, second = _two_drone_teams(tmp_path, "    • 1x Carbine\n      2x Gun Drone\n",
                                     "    • 1x Carbine\n      2x Gun Drone\n      2x Drone gun\n")
    assert first.unit is not None and second.unit is not None
    assert dict(first.unit.models[0].loadout) == {"Carbine": 1, "Drone gun": 2}
    assert dict(second.unit.models[0].loadout) == {"Carbine": 1, "Drone gun": 2}
    assert any("Drone gun listed under Gun Drone: the Gun Drone's, counted once" in n.text for n in second.notes)


def test_m58_a_weapon_listed_under_its_carrier_and_beside_it_counts_once(tmp_path: Path) -> None:
    # New Recruit's layout: the weapon, then the carrier and the weapon again under it; a
    # weapon listed after another item is a copy of its own
    first, second = _two_drone_teams(tmp_path, "    • 1x Carbine\n      1x Drone gun\n      Gun Drone\n"
                                               "      1x Drone gun\n",
                                     "    • 1x Drone gun\n      1x Gun Drone\n      1x Carbine\n      1x Drone gun\n")
    assert first.unit is not None and second.unit is not None
    assert dict(first.unit.models[0].loadout) == {"Carbine": 1, "Drone gun": 1}
    assert [n.text for n in first.notes if "counted once" in n.text] == [
        "Gun Drone: its Drone gun is listed as well, counted once"]
    assert dict(second.unit.models[0].loadout) == {"Drone gun": 2, "Carbine": 1}


@pytest.mark.parametrize("drones", ["      1x Recon drone\n      2x Gun Drone\n",
                                    "      2x Gun Drone\n      1x Recon drone\n",
                                    # the burst cannon named before its drone too, and wargear between
                                    "      1x Drone burst cannon\n      1x Recon drone\n      1x Grav-inhibitor drone\n"
                                    "      2x Gun Drone\n"])
def test_m58_a_weapon_under_either_of_two_carriers_listed_together_counts_once(tmp_path: Path, lib: Library,
                                                                               drones: str) -> None:
    # the Pathfinder Shas'ui of newrecruit-gw-tau.txt (line 155), its drones in either order, then
    # the Recon drone's Drone burst cannon under them: one burst cannon, the two drones' carbines
    text = tmp_path / "pf.txt"
    text.write_text("Test (85 pts)\n\nT'au Empire\nStrike Force (2000 pts)\n\nOTHER DATASHEETS\n\n"
                    "Pathfinder Team (85 pts)\n• 1x Pathfinder Shas'ui\n    • 1x Close combat weapon\n"
                    "    • 1x Pulse carbine\n" + drones.replace("      ", "    • ") +
                    "    • 1x Drone burst cannon\n", encoding="utf-8")
    (entry,) = load_roster(text, lib).entries
    (shasui,) = [lo for n, _, lo in _models(entry) if n == "Pathfinder Shas'ui"]
    assert shasui["Drone burst cannon"] == 1 and shasui["Twin pulse carbine"] == 2


def test_m79_a_roster_item_named_for_its_profiles_fires_them(tmp_path: Path, lib: Library) -> None:
    # The Squighog Boyz' "Stikka" has no profile of that name: the catalogue's are "Stikka
    # (ranged)" (9" A1 BS5+) and "Stikka (melee)" (A3 WS3+); the Nob's statline carries none
    text = tmp_path / "squig.txt"
    text.write_text("Test (110 points)\n\nOrks\nIncursion (1000 points)\n\nOTHER DATASHEETS\n\n"
                    "Squighog Boyz (110 points)\n  • 3x Squighog Boy\n    • 3x Saddlegit weapons\n"
                    "      3x Squig jaws\n      3x Stikka\n  • 1x Nob on Smasha Squig\n    • 1x Saddlegit weapons\n"
                    "      1x Slugga\n      1x Squig jaws\n      1x Stikka\n", encoding="utf-8")
    (entry,) = load_roster(text, lib).entries
    for name, _, loadout in _models(entry):
        assert loadout["Stikka (ranged)"] == 1 and loadout["Stikka (melee)"] == 1, name
    assert "Stikka" not in _unfired(entry)
    assert any(n.text.startswith("Stikka: fires 'Stikka (melee)' and 'Stikka (ranged)' (the model's statline does "
                                 "not carry it") for n in entry.notes)


def test_a_roster_item_fires_the_profile_of_that_name_its_model_carries(tmp_path: Path, lib: Library) -> None:
    # Neophyte Hybrids: the squad's "Autopistol" is BS4+; the Neophyte Leader's statline carries
    # only BS3+ profiles named "Autopistol (...)" (profiles/genestealer-cults.json): his is one
    text = tmp_path / "gsc.txt"
    text.write_text("Test (65 points)\n\nGenestealer Cults\nIncursion (1000 points)\n\nBATTLELINE\n\n"
                    "Neophyte Hybrids (65 points)\n  • 1x Neophyte Leader\n    • 1x Autopistol\n      1x Chainsword\n"
                    "  • 9x Neophyte Hybrid w/ Hybrid Firearm\n    • 9x Hybrid firearm\n      9x Close combat weapon\n",
                    encoding="utf-8")
    (entry,) = load_roster(text, lib).entries
    assert entry.unit is not None
    (leader,) = [m for m in entry.unit.models if m.name == "Neophyte Leader"]
    pistols = [n for n, _ in leader.loadout if n.startswith("Autopistol")]
    assert len(pistols) == 1 and pistols[0] != "Autopistol"
    weapon = next(w for w in entry.unit.weapons if w.name == pistols[0])
    assert weapon.skill == 3
    assert any(n.text.startswith("Autopistol: fires 'Autopistol (") for n in entry.notes)


def test_m79_a_weapon_that_shoots_and_fights_in_a_roster(shared_data: Path, lib: Library) -> None:
    folder = shared_data / "text-exports-40kcompactor"
    # gwapp-imperial-knights.txt line 15: "1x Cerastus shock lance", whose catalogue entry has a
    # 12" profile and strike and sweep melee profiles: it shoots and fights (with the strike)
    entry = _entry(folder / "gwapp-imperial-knights.txt", lib, 15)
    assert _models(entry)[0][2] == {"Cerastus shock lance": 1, "Cerastus shock lance - strike": 1}
    assert any(n.text.endswith("(the other profiles fire as UNIT/WEAPON: Cerastus shock lance - sweep)")
               for n in entry.notes)
    # gwapp-tau.txt line 147 (The Twin Lance): "Ion scattercannon" is the name of its melee
    # profile (EXTRA ATTACKS); its ranged profiles are "- overcharge" (Hazardous) and "- standard",
    # in that order: it shoots the standard one (ruling M86); each model's XV pulse pistol has a
    # melee profile of its own, named after its model
    entry = _entry(folder / "gwapp-tau.txt", lib, 147)
    models = {n: lo for n, _, lo in _models(entry)}
    assert models["Ri'Locai"] == {"Ion scattercannon": 1, "Ion scattercannon - standard": 1,
                                  "Shardstorm burst system": 1, "XV pulse pistol": 1,
                                  "XV pulse pistol (Ri'Locai)": 1, "Twin pulse blaster": 1}
    assert models["Ri'Lantar"]["Fusion eliminator (Ri'Lantar)"] == 1
    assert models["Ri'Lantar"]["XV pulse pistol (Ri'Lantar)"] == 1 and "XV pulse pistol (Ri'Locai)" not in models[
        "Ri'Lantar"]


def test_m79_the_lancer_of_a_roster_fights_with_its_strike(shared_data: Path) -> None:
    from mathhammer import api

    roster = str(shared_data / "text-exports-40kcompactor" / "gwapp-imperial-knights.txt")
    # against T4 SV7+ W100 (nothing saves): A5 WS2+ S20 D8 Lance; on the charge the lance wounds
    # on 2+ (S20 vs T4: 2+ anyway), so 5 x 5/6 x 5/6 x 8 = 250/9
    lib = api.with_rosters(api.library(use_env=False), [roster])
    result = api.run(["cerastus knight lancer"], "T4 SV7+ W100", melee=True, method="exact", lib=lib)
    assert result.damage.mean() == pytest.approx(250 / 9)
    # and it shoots: A6 BS3+ S6 AP0 D2 SUSTAINED HITS 2 vs T4, wounding on 3+
    result = api.run(["cerastus knight lancer"], "T4 SV7+ W100", method="exact", lib=lib)
    hits = 6 * (3 / 6 + 3 * (1 / 6))  # 3, 4, 5 hit; a 6 is a critical hit and 2 more
    assert result.damage.mean() == pytest.approx(hits * (4 / 6) * 2)
    # the sweep, as the roster's note says: A10 WS2+ S10 AP-2 D3, wounding T4 on 2+
    result = api.run(["cerastus knight lancer/Cerastus shock lance - sweep"], "T4 SV7+ W100", melee=True,
                     method="exact", lib=lib)
    assert result.damage.mean() == pytest.approx(10 * 5 / 6 * 5 / 6 * 3)


@pytest.mark.parametrize("order", [("Drach'nyen", "Talon of Horus"), ("Talon of Horus", "Drach'nyen")])
def test_m80_abaddon_fights_with_drachnyen_whichever_is_listed_first(tmp_path: Path, lib: Library,
                                                                    order: tuple[str, str]) -> None:
    # the Talon of Horus shoots (and has a melee profile); Drach'nyen is a melee weapon: the model
    # fights with the one that does more to a Space Marine, read from the two profiles in
    # profiles/chaos-space-marines.json, not the one listed first
    text = tmp_path / "abaddon.txt"
    text.write_text("Test (270 points)\n\nChaos Space Marines\nIncursion (1000 points)\n\nCHARACTERS\n\n"
                    f"Abaddon the Despoiler (270 points)\n  • Warlord\n  • 1x {order[0]}\n    1x {order[1]}\n",
                    encoding="utf-8")
    (entry,) = load_roster(text, lib).entries
    assert entry.unit is not None
    weapons = {w.name: w for w in entry.unit.weapons}
    talon, drach = weapons["Talon of Horus (Abaddon the Despoiler)"], weapons["Drach'nyen"]
    assert talon.melee and drach.melee

    def weight(w):  # the mean damage to T4 Sv3+, by hand: hit, wound, unsaved, damage
        hit = (7 - w.skill) / 6
        wound = {True: 5 / 6}.get(w.strength >= 8, 4 / 6 if w.strength > 4 else 3 / 6 if w.strength == 4 else 2 / 6)
        unsaved = min(1.0, (3 - w.ap - 1) / 6)
        return (w.attacks.count * (w.attacks.sides + 1) / 2 + w.attacks.plus) * hit * wound * unsaved * (
            w.damage.count * (w.damage.sides + 1) / 2 + w.damage.plus)

    best = max((talon, drach), key=weight)
    assert best is drach  # as everyone plays him
    assert dict(entry.unit.models[0].loadout) == {"Talon of Horus": 1, "Drach'nyen": 1}


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


def test_m81_two_shield_drones_on_a_model_give_two_wounds(shared_data: Path, lib: Library, tmp_path: Path) -> None:
    # gwapp-tau.txt lines 102-107: a Commander in Coldstar Battlesuit with 2x Shield Drone and a
    # Shield Generator; tau-empire.cat line 1094: its statline is W6 with no invulnerable save of
    # its own; line 776: a Shield Generator is "The bearer has a 4+ invulnerable save."
    entry = _entry(shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt", lib, 102)
    assert entry.unit is not None
    assert [(m.wounds, m.invulnerable) for m in entry.unit.models] == [(8, 4)]
    assert "Shield Drone: +1 Wounds for 1x Commander in Coldstar Battlesuit (2 each) (ruling M81)" in {
        n.text for n in entry.notes}
    # the same item on two lines of one model group counts together: 2 for 2 Shas'ui, one each
    text = (shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt").read_text(encoding="utf-8")
    split = text.replace("      2x Gun Drone\n      2x Shield Drone\n",
                         "      1x Shield Drone\n      2x Gun Drone\n      1x Shield Drone\n", 1)
    assert split != text
    (tmp_path / "split.txt").write_text(split, encoding="utf-8")
    entry = _entry(tmp_path / "split.txt", lib, 17)
    assert entry.unit is not None
    assert {m.name: m.wounds for m in entry.unit.models} == {"Crisis Sunforge Shas'vre": 5, "Crisis Sunforge Shas'ui": 5}


def test_m81_wargear_that_is_also_a_weapon_fires_and_gives_its_defence(lib: Library, tmp_path: Path) -> None:
    # adeptus-custodes: a Venatari's "Tarsis buckler" is a melee profile and "The bearer has a
    # Wounds characteristic of 4." (the Venatari statline is W3)
    roster = tmp_path / "v.txt"
    roster.write_text("Test (300 points)\n\nAdeptus Custodes\nStrike Force (2000 points)\n\nOTHER DATASHEETS\n\n"
                      "Venatari Custodians (210 points)\n  \u2022 3x Venatari Custodian\n"
                      "    \u2022 3x Tarsis buckler\n      3x Kinetic destroyer\n", encoding="utf-8")
    r = load_roster(roster, lib)
    (entry,) = r.entries
    assert entry.unit is not None, [n.text for n in entry.notes]
    assert {m.wounds for m in entry.unit.models} == {4}
    assert any("Tarsis buckler: a Wounds characteristic of 4 for 3x Venatari Custodian" in n.text for n in entry.notes)


def test_m82_war_organ_headings_that_are_no_role_are_attached_units(shared_data: Path, lib: Library) -> None:
    # warorgan-tau.txt: the units under "Mean Command Clique" (line 17: Commander Farsight line
    # 19, Crisis Sunforge Battlesuits line 23), "Command Ring" (30, 33), "Crisis Commander Warband"
    # (40, 43), "Battle Command Gaggle" (50, 53) and "Battle Enforcer Ring" (60, 64); "Epic Hero"
    # (Darkstrider, The Twin Lance), "Vehicle" and "Other" are roles: nothing attached there
    r = load_roster(shared_data / "text-exports-40kcompactor" / "warorgan-tau.txt", lib)
    lines = [e.line for e in r.entries]
    pairs = [([lines[i] for i in a.leaders], lines[a.bodyguard]) for a in r.attachments]
    assert pairs == [([19], 23), ([30], 33), ([40], 43), ([50], 53), ([60], 64)]
    (sunforge,) = [e for e in r.entries if e.line == 23]
    assert sunforge.unit is not None and sunforge.unit.attached == ("Commander Farsight",)
    assert any(n.text == "heading 'Mean Command Clique' read as an attached unit: Commander Farsight leading Crisis "
                         "Sunforge Battlesuits" for n in r.notes)


def test_m82_a_heading_without_leaders_and_one_unit_attaches_nothing(lib: Library, tmp_path: Path) -> None:
    path = tmp_path / "wo.txt"
    path.write_text("Test [330 points]\nTau Empire\n\nFire Team\n\n  Strike Team (75 points)\n    \u2022 10 Fire Warrior "
                    "with Pulse rifle\n\n  Breacher Team (90 points)\n    \u2022 10 Fire Warrior with Pulse blaster\n\n"
                    "Other\n\n  Commander Farsight (80 points)\n    \u2022 Dawn blade and High-intensity plasma rifle\n\n"
                    "  Strike Team (75 points)\n    \u2022 10 Fire Warrior with Pulse rifle\n", encoding="utf-8")
    r = load_roster(path, lib)
    assert r.attachments == ()
    assert any(n.text.startswith("heading 'Fire Team': Strike Team, Breacher Team: not read as an attached unit")
               for n in r.notes)
    assert all(e.unit is None or e.unit.attached == () for e in r.entries)


def test_m82_two_headings_of_one_name_are_two_groups_and_a_lone_unit_is_said(shared_data: Path, lib: Library,
                                                                              tmp_path: Path) -> None:
    """War Organ makes its group names up, so two of one name can follow each other: each
    heading line is its own group. A heading over one unit attaches nothing, with a note."""
    text = (shared_data / "text-exports-40kcompactor" / "warorgan-tau.txt").read_text(encoding="utf-8")
    same = text.replace("\nCrisis Commander Warband\n", "\nCommand Ring\n", 1)
    assert same != text
    (tmp_path / "same.txt").write_text(same, encoding="utf-8")
    r = load_roster(tmp_path / "same.txt", lib)
    lines = [e.line for e in r.entries]
    assert [([lines[i] for i in a.leaders], lines[a.bodyguard]) for a in r.attachments][1:3] == [([30], 33),
                                                                                                ([40], 43)]
    lone = text.replace("\nCrisis Commander Warband\n\n  Commander In Coldstar Battlesuit (95 points)\n",
                        "\nSolo Heading\n\n  Commander In Coldstar Battlesuit (95 points)\n", 1)
    lone = lone.replace("\n  Crisis Starscythe Battlesuits (90 points)", "\nOther\n\n  Crisis Starscythe Battlesuits "
                        "(90 points)", 2)
    (tmp_path / "lone.txt").write_text(lone, encoding="utf-8")
    r = load_roster(tmp_path / "lone.txt", lib)
    assert any(n.text == "heading 'Solo Heading': Commander In Coldstar Battlesuit alone: nothing attached"
               for n in r.notes)


_BULLGRYN = ("Test (300 points)\n\nAstra Militarum\nStrike Force (2000 points)\n\nOTHER DATASHEETS\n\n"
             "Bullgryn Squad (100 points)\n"
             "  \u2022 1x Bullgryn Bone 'ead\n    \u2022 1x Bullgryn maul\n      {boss}\n"
             "  \u2022 2x Bullgryn\n    \u2022 2x Grenadier gauntlet\n      2x Close combat weapon\n{rest}")


def test_m81_wargear_listed_replaces_the_statlines_default(lib: Library, tmp_path: Path) -> None:
    # imperium-astra-militarum-library.cat: a Bullgryn is W3 (line 1550) and bears a Slabshield by
    # default ("The bearer has a Wounds characteristic of 4.", line 15993), or instead a Brute
    # shield (line 1570: "The bearer has a 4+ invulnerable save."); the unit has no invulnerable save
    text = _BULLGRYN.format(boss="1x Brute shield", rest="      2x Slabshield\n")
    (entry,) = _text_entries(tmp_path, lib, text, "b.txt")
    assert entry.unit is not None, [n.text for n in entry.notes]
    stats = {m.name: (m.wounds, m.invulnerable) for m in entry.unit.models}
    # the Bone 'ead's Brute shield replaces his Slabshield: W3 and a 4+, not W4 and a 4+
    assert stats == {"Bullgryn Bone 'ead": (3, 4), "Bullgryn": (4, None)}
    texts = [n.text for n in entry.notes]
    assert "Bullgryn Bone 'ead: the wargear listed replaces the default Slabshield (ruling M81)" in texts
    assert not any(t.startswith("Bullgryn: the wargear listed replaces") for t in texts)


def test_m81_a_statline_with_no_wargear_listed_keeps_its_default(lib: Library, tmp_path: Path) -> None:
    # weapons listed, no wargear (an export that leaves it out): the default Slabshield stands
    (entry,) = _text_entries(tmp_path, lib, _BULLGRYN.format(boss="1x Grenadier gauntlet", rest=""), "b.txt")
    assert entry.unit is not None, [n.text for n in entry.notes]
    assert {(m.wounds, m.invulnerable) for m in entry.unit.models} == {(4, None)}
    assert not any("replaces the default" in n.text for n in entry.notes)


def test_m84_an_attached_unit_shares_what_its_parts_wargear_gives_the_unit(shared_data: Path, lib: Library) -> None:
    # gwapp-tau.txt "Attached Unit 2": Commander in Enforcer Battlesuit (line 32) with a Marker Drone
    # (line 35: "The bearer's unit has the Markerlight keyword", tau-empire.cat ebac-f783-8a80-8c4a)
    # leads Crisis Fireknife Battlesuits (line 40), who carry none: an attached unit is one unit for
    # rules purposes (Leader), so the Fireknives have MARKERLIGHT too
    r = load_roster(shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt", lib)
    by_line = {e.line: e for e in r.entries}
    fireknife, commander = by_line[40], by_line[32]
    assert fireknife.unit is not None and commander.unit is not None
    assert "MARKERLIGHT" in commander.unit.keywords and "MARKERLIGHT" in fireknife.unit.keywords
    assert ("Crisis Fireknife Battlesuits: the attached unit has MARKERLIGHT, which Commander in Enforcer "
            "Battlesuit's wargear gives its unit (ruling M84)") in [n.text for n in fireknife.notes]
    # "Attached Unit 1": the Sunforge Shas'vre's Marker Drone (line 22) reaches Commander Farsight (line 11)
    farsight = by_line[11]
    assert farsight.unit is not None and "MARKERLIGHT" in farsight.unit.keywords
    # a part that has the keyword already (the Sunforges, line 17) gets no note
    assert not any("ruling M84" in n.text for n in by_line[17].notes)


def test_m84_the_attached_fireknives_are_an_observer_with_markerlight(shared_data: Path) -> None:
    import mathhammer

    roster = shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"
    # before, --markerlight was refused: "Crisis Fireknife Battlesuits is the Observer and has no
    # MARKERLIGHT keyword"
    lib = mathhammer.library(use_env=False, rosters=[roster])
    attack = mathhammer.build("crisis fireknife battlesuits", "T4 SV3+ W2 MODELS10", lib=lib, observer=True,
                              markerlight=True)
    assert attack.matchup.weapons
    # and --observer alone finds the keyword (rule M72's check of every attacking unit)
    attack = mathhammer.build("crisis fireknife battlesuits", "T4 SV3+ W2 MODELS10", lib=lib, observer=True)
    assert "Crisis Fireknife Battlesuits is the Observer and has MARKERLIGHT" in attack.explain


def _knights(tmp_path: Path, paladin: str) -> Path:
    path = tmp_path / "ik.txt"
    path.write_text("Test (830 points)\n\nImperial Knights\nStrike Force (2000 points)\n\nCHARACTERS\n\n"
                    "Knight Paladin (400 points)\n  \u2022 1x Questoris heavy stubber\n    1x Rapid-fire battle cannon\n"
                    f"  \u2022 Enhancement: {paladin}\n\n"
                    "Cerastus Knight Lancer (430 points)\n  \u2022 1x Cerastus shock lance\n"
                    "  \u2022 Enhancement: Pennant of Silvered Fury\n", encoding="utf-8")
    return path


def test_m85_an_enhancement_that_gives_its_bearer_wounds_is_given(lib: Library, tmp_path: Path) -> None:
    # imperium-imperial-knights-library.cat: the Knight Paladin's Unit profile is W26 (line 799);
    # the enhancement "Omnissian Champion": "IMPERIAL KNIGHTS model only. Add 4 to the bearer's
    # Wounds characteristic." -> W30
    r = load_roster(_knights(tmp_path, "Omnissian Champion"), lib)
    paladin, lancer = r.entries
    assert paladin.unit is not None and lancer.unit is not None
    assert [(m.count, m.wounds) for m in paladin.unit.models] == [(1, 30)]
    assert "Enhancement Omnissian Champion: +4 Wounds for its bearer, Knight Paladin (ruling M85)" in [
        n.text for n in paladin.notes]
    # an enhancement whose rules the library does not hold is named, not dropped silently
    assert [m.wounds for m in lancer.unit.models] == [28]
    assert any(n.text.startswith("Enhancement Pennant of Silvered Fury: not modelled") for n in lancer.notes)


def test_m85_an_invulnerable_save_beside_the_units_ranged_only_one_is_not_given(lib: Library, tmp_path: Path) -> None:
    # "Sanctuary": "IMPERIAL KNIGHTS model only. The bearer has a 5+ invulnerable save."; the
    # Paladin's own 5+ is against ranged attacks only (Ion Shield), and a statline's save is against
    # what the unit's is against: not given, with a note (ruling M81)
    r = load_roster(_knights(tmp_path, "Sanctuary"), lib)
    paladin = r.entries[0]
    assert paladin.unit is not None and paladin.unit.models[0].invulnerable is None
    assert any(n.text.startswith("Enhancement Sanctuary: the bearer's 5+ invulnerable save is not given")
               for n in paladin.notes)
    assert not any("for its bearer" in n.text for n in paladin.notes)  # no note that says it was given


def test_m85_the_bearer_is_the_units_character_model(lib: Library, tmp_path: Path) -> None:
    # imperium-space-marines.cat: "The Flesh is Weak": "Adeptus Astartes model only. The bearer has
    # the Feel No Pain 4+ ability."; a Captain has no Feel No Pain of his own
    text = ("Test (100 points)\n\nSpace Marines\nStrike Force (2000 points)\n\nCHARACTERS\n\n"
            "Captain (80 points)\n  \u2022 1x Bolt pistol\n    1x Master-crafted power weapon\n"
            "  \u2022 Enhancement: The Flesh is Weak\n")
    (captain,) = _text_entries(tmp_path, lib, text, "sm.txt")
    assert captain.unit is not None
    assert [(m.count, m.feel_no_pain) for m in captain.unit.models] == [(1, 4)]


RETINUE = """\
schema: 1
units:
  - name: Retinue
    faction: Testers
    keywords: [INFANTRY]
    models:
      - {name: Guard, count: 4, T: 4, Sv: 3, W: 2, weapons: [Carbine]}
      - {name: Lord, count: {lords}, T: 4, Sv: 3, W: 5, keywords: [CHARACTER], weapons: [Carbine]}
    weapons:
      - {name: Carbine, range: 20, A: "2", BS: 4, S: 5, AP: 0, D: "1"}
    enhancements:
      - {name: Iron Hide, add_W: 2, feel_no_pain: 5}
"""


@pytest.mark.parametrize("lords", [1, 2])
def test_m85_the_bearer_is_one_model_of_the_character_statline(tmp_path: Path, lords: int) -> None:
    # the enhancement goes to one CHARACTER model: W5 + 2 = 7 and Feel No Pain 5+; a second Lord
    # (and the Guards) keep their own
    lib = Library(load_file(write_profile(tmp_path / "p", RETINUE.replace("{lords}", str(lords)))))
    text = tmp_path / "list.txt"
    text.write_text("Test (100 points)\n\nTesters\nStrike Force (100 points)\n\nCHARACTERS\n\n"
                    "Retinue (100 points)\n  \u2022 Enhancement: Iron Hide\n", encoding="utf-8")
    (entry,) = load_roster(text, lib).entries
    assert entry.unit is not None, [n.text for n in entry.notes]
    got = sorted((m.name, m.count, m.wounds, m.feel_no_pain) for m in entry.unit.models)
    expected = [("Guard", 4, 2, None), ("Lord", 1, 7, 5)] + ([("Lord", 1, 5, None)] if lords == 2 else [])
    assert got == sorted(expected)
    assert "Enhancement Iron Hide: Feel No Pain 5+ and +2 Wounds for its bearer, Lord (ruling M85)" in [
        n.text for n in entry.notes]


def test_m81_a_group_that_lists_one_piece_each_gets_one_each(lib: Library, tmp_path: Path) -> None:
    # 3 Bullgryn (W3) listed with 2x Slabshield (W4) and 1x Brute shield (4+ invulnerable): each
    # bears one, so two are W4 and one W3 with a 4+ (11 wounds), whichever bears which
    text = ("Test (300 points)\n\nAstra Militarum\nStrike Force (2000 points)\n\nOTHER DATASHEETS\n\n"
            "Bullgryn Squad (100 points)\n  \u2022 3x Bullgryn\n    \u2022 3x Grenadier gauntlet\n"
            "      3x Close combat weapon\n      2x Slabshield\n      1x Brute shield\n")
    (entry,) = _text_entries(tmp_path, lib, text, "b.txt")
    assert entry.unit is not None, [n.text for n in entry.notes]
    assert sorted((m.count, m.wounds, m.invulnerable or 0) for m in entry.unit.models) == [(1, 3, 4), (2, 4, 0)]
    texts = [n.text for n in entry.notes]
    assert ("Bullgryn: 2x Slabshield (a Wounds characteristic of 4), 1x Brute shield (a 4+ invulnerable save): one "
            "each, given in the order listed (the roster does not say which model bears which; ruling M81)") in texts
    assert not any("replaces the default" in t for t in texts)  # the Slabshield is listed


_NR_HEADER = ("+++++++++++++++++++++++++++++++++++++++++++++++\n+ FACTION KEYWORD: Imperium - Imperial Knights\n"
              "+ DETACHMENT: Questor Forgepact\n+ TOTAL ARMY POINTS: 440pts\n+\n+ WARLORD: Char1: Knight Paladin\n"
              "+ ENHANCEMENT: Omnissian Champion (on Char1: Knight Paladin)\n+ NUMBER OF UNITS: 1\n"
              "+++++++++++++++++++++++++++++++++++++++++++++++\n\n")


@pytest.mark.parametrize("body", [
    "Char1: 1x Knight Paladin (440 pts): Warlord, Questoris heavy stubber, Rapid-fire battle cannon\n",  # WTC-compact
    "CHARACTER\n\nKnight Paladin (440 pts)\n\u2022 1x Questoris heavy stubber\n\u2022 1x Rapid-fire battle cannon\n",
])
def test_m85_new_recruits_header_enhancement_reaches_its_unit(lib: Library, tmp_path: Path, body: str) -> None:
    # the header alone says who takes the enhancement: before, it was dropped silently (W26)
    (paladin,) = _text_entries(tmp_path, lib, _NR_HEADER + body, "nr.txt")
    assert paladin.enhancements == ("Omnissian Champion",)
    assert paladin.unit is not None and [m.wounds for m in paladin.unit.models] == [30]
    assert "Enhancement Omnissian Champion: from the header" in [n.text for n in paladin.notes]


def test_m85_the_bearer_is_the_units_character_not_the_first_listed(lib: Library, tmp_path: Path) -> None:
    # agents-of-the-imperium: a Rogue Trader Entourage is the Rogue Trader (W4) and his W2 retinue;
    # the export lists the Death Cult Assassin first. "Blackweave Shroud": "The bearer has the Feel
    # No Pain 4+ ability": the Rogue Trader's (the unit's one-model statline with the most Wounds)
    text = ("Test (100 points)\n\nAgents of the Imperium\nStrike Force (2000 points)\n\nCHARACTERS\n\n"
            "Rogue Trader Entourage (100 points)\n  \u2022 Enhancement: Blackweave Shroud\n"
            "  \u2022 1x Death Cult Assassin\n    \u2022 1x Dartmask\n      1x Death Cult power blade\n"
            "  \u2022 1x Rogue Trader\n    \u2022 1x Monomolecular cane-rapier\n      1x Household pistol\n"
            "  \u2022 Enhancement: Blackweave Shroud\n")
    (entry,) = _text_entries(tmp_path, lib, text, "rte.txt")
    assert entry.unit is not None, [n.text for n in entry.notes]
    assert {m.name: m.feel_no_pain for m in entry.unit.models} == {"Death Cult Assassin": None, "Rogue Trader": 4}
    texts = [n.text for n in entry.notes]
    assert "Enhancement Blackweave Shroud: Feel No Pain 4+ for its bearer, Rogue Trader (ruling M85)" in texts
    assert "Enhancement Blackweave Shroud: listed twice for the unit, given once" in texts


def test_m85_a_bearer_named_as_its_unit_accents_aside(lib: Library, tmp_path: Path) -> None:
    # leagues-of-votann: "Brôkhyr Iron-master" (W4) with an Ironkyn Assistant (W1) listed first; the
    # export spells the model "Brokhyr". "Ironskein": "Add 2 to the bearer's Wounds characteristic."
    text = ("Test (70 points)\n\nLeagues of Votann\nStrike Force (2000 points)\n\nCHARACTERS\n\n"
            "Brôkhyr Iron-master (70 points)\n  \u2022 Enhancement: Ironskein\n  \u2022 1x Ironkyn Assistant\n"
            "  \u2022 1x Brokhyr Iron-master\n    \u2022 1x Graviton rifle\n")
    (entry,) = _text_entries(tmp_path, lib, text, "lov.txt")
    assert entry.unit is not None, [n.text for n in entry.notes]
    assert {m.name: m.wounds for m in entry.unit.models} == {"Ironkyn Assistant": 1, "Brokhyr Iron-master": 6}


def test_m84_a_part_of_an_attached_unit_that_is_not_matched_is_named(lib: Library, tmp_path: Path) -> None:
    # a GW-app "Attached Units" block whose Leader is no unit of the library: the Bodyguard says so
    text = ("Test (200 points)\n\nT'au Empire\nStrike Force (2000 points)\n\nAttached Units\nAttached Unit 1\n\n"
            "Commander Nobody (80 points)\n\u2022 Attached as: Leader (Character)\n  \u2022 1x Dawn Blade\n\n"
            "Crisis Sunforge Battlesuits (125 points)\n\u2022 Attached as: Bodyguard\n  \u2022 3x Crisis Sunforge Shas'ui\n"
            "    \u2022 3x Battlesuit fists\n      6x Fusion blaster\n")
    leader, guard = _text_entries(tmp_path, lib, text, "a.txt")
    assert leader.unit is None and guard.unit is not None and guard.unit.attached == ()
    assert "attached unit: Commander Nobody (line 9) could not be used, so it is left out (see its notes)" in [
        n.text for n in guard.notes]


def test_m81_a_weapon_taken_in_place_of_default_wargear_removes_it(lib: Library, tmp_path: Path) -> None:
    # imperium-space-wolves.cat line 9815: the Wolf Guard Battle Leader's "Replace Storm Shield"
    # group (default: the Storm Shield, "The bearer has a Wounds characteristic of 6"; his own
    # profile is W5) also holds a Plasma pistol: listed, he has no Storm Shield, so W5
    text = ("Test (65 points)\n\nSpace Wolves\nStrike Force (2000 points)\n\nCHARACTERS\n\n"
            "Wolf Guard Battle Leader (65 points)\n  \u2022 1x Thunder Hammer\n    1x Plasma pistol\n")
    (leader,) = _text_entries(tmp_path, lib, text, "w.txt")
    assert leader.unit is not None and [m.wounds for m in leader.unit.models] == [5]
    assert ("Wolf Guard Battle Leader: Plasma pistol in place of the default Storm Shield (1 of 1; ruling M81)"
            in [n.text for n in leader.notes])


WALKER = """\
schema: 1
units:
  - name: Walker
    faction: Testers
    keywords: [VEHICLE]
    models:
      - {name: Walker, count: 1, T: 9, Sv: 3, W: 8, weapons: [Fist, Gun], options: [Cannon], wargear: [Shield]}
    weapons:
      - {name: Gun, range: 24, A: "2", BS: 3, S: 5, AP: 0, D: "1"}
      - {name: Cannon, range: 36, A: "2", BS: 3, S: 9, AP: -2, D: "3"}
      - {name: Fist, range: melee, A: "4", WS: 3, S: 12, AP: -2, D: "3"}
    wargear:
      - {name: Shield, W: 10, alternatives: [Cannon, Fist]}
"""


@pytest.mark.parametrize(("items", "wounds"), [("1x Fist\n    1x Gun", 10), ("1x Cannon\n    1x Gun", 8)])
def test_m81_an_alternative_carried_by_default_anyway_keeps_the_piece(tmp_path: Path, items: str, wounds: int) -> None:
    # the Shield (W10) may be swapped for a Cannon or a Fist, but the Walker carries a Fist by
    # default on its other arm: listing the Fist says nothing of the Shield; listing a Cannon does
    lib = Library(load_file(write_profile(tmp_path / "p", WALKER)))
    text = f"Test (100 points)\n\nTesters\nStrike Force (100 points)\n\nVEHICLES\n\nWalker (100 points)\n  \u2022 {items}\n"
    (walker,) = _text_entries(tmp_path, lib, text, "w.txt")
    assert walker.unit is not None, [n.text for n in walker.notes]
    assert [m.wounds for m in walker.unit.models] == [wounds]
