"""Golden units of the BSData importer, against numbers read by hand from the catalogue XML.

Every expected value below was typed in by reading the .cat/.gst text of the pinned snapshot
(../shared/data/bsdata-wh40k-10e, BSData wh40k-10e @801555bb) with grep: the entry id and file are
cited at each unit. None of it comes from the importer's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathhammer.bsdata.build import Imported, import_files


@pytest.fixture(scope="module")
def snapshot(shared_data: Path) -> Imported:
    folder = shared_data / "bsdata-wh40k-10e"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found: the BSData snapshot is not available")
    return import_files([folder])


def unit(imported: Imported, faction: str, name: str) -> dict[str, Any]:
    found = [u for f in imported.factions if f.name == faction for u in f.units if u["name"] == name]
    assert len(found) == 1, f"{faction}/{name}: {len(found)} units"
    return found[0]


def weapon(u: dict[str, Any], name: str) -> dict[str, Any]:
    found = [w for w in u["weapons"] if w["name"] == name]
    assert len(found) == 1, f"{u['name']}/{name}: {[w['name'] for w in u['weapons']]}"
    return {k: v for k, v in found[0].items() if k != "aliases"}


def model(u: dict[str, Any], name: str) -> dict[str, Any]:
    found = [m for m in u["models"] if m["name"] == name]
    assert len(found) == 1, f"{u['name']}/{name}: {[m['name'] for m in u['models']]}"
    return found[0]


def stat(m: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(m.get(k) for k in ("count", "M", "T", "Sv", "W", "Ld", "OC"))


def loadout(m: dict[str, Any]) -> dict[str, int]:
    return {(w if isinstance(w, str) else w["name"]): (1 if isinstance(w, str) else w["count"])
            for w in m.get("weapons", [])}


def test_intercessor_squad(snapshot: Imported) -> None:
    # imperium-space-marines.cat selectionEntry 8da0-4570-c3c-819f "Intercessor Squad": group
    # "Intercessors" min 5 max 10; "Intercessor Sergeant" (8ea3-b125-7273-5ffb) min 1, profile M6" T4
    # SV3+ W2 LD6+ OC2; "Intercessor" (420-464f-93cb-e019) min 4; cost pts 80, set 160 at >= 6 models.
    u = unit(snapshot, "Space Marines", "Intercessor Squad")
    assert stat(model(u, "Intercessor Sergeant")) == (1, 6, 4, 3, 2, 6, 2)
    assert stat(model(u, "Intercessor")) == (4, 6, 4, 3, 2, 6, 2)
    assert u["points"] == 80
    assert u["sizes"] == [{"models": 5, "points": 80}, {"models": 10, "points": 160}]
    # shared entry 6155-c404-a228-cb72 "Bolt Rifle", profile 837b-6918-767-152b:
    # 24" A2 BS3+ S4 AP-1 D1 "Assault, Heavy"
    assert weapon(u, "Bolt Rifle") == {"name": "Bolt Rifle", "range": 24, "A": "2", "BS": 3, "S": 4, "AP": -1,
                                       "D": "1", "abilities": ["Assault", "Heavy"], "unmodelled": []}
    # the Intercessor's entryLinks with min 1: Close combat weapon, Bolt pistol, Bolt Rifle; the pistol
    # is carried beside the rifle, so it is an option, not part of what the model attacks with
    assert loadout(model(u, "Intercessor")) == {"Close combat weapon": 1, "Bolt Rifle": 1}
    assert "Bolt pistol" in model(u, "Intercessor")["options"]
    assert "ADEPTUS ASTARTES" in u["keywords"] and "BATTLELINE" in u["keywords"]  # "Faction: Adeptus Astartes"
    assert "Oath of Moment" in u["unmodelled"]


def test_ork_boyz(snapshot: Imported) -> None:
    # orks.cat selectionEntry e3b1-1240-2476-cd86 "Boyz": group "9-19 Boyz" min 9 max 19, default
    # entry 7629-a9f5-e881-6ff9 "Boy w/ Slugga and choppa" (profile "Boy" c342-fe6f-23e6-b2cf:
    # M6" T5 SV5+ W1 LD7+ OC2); "Boss Nob" min 1; cost 80, set 170 above 10 models.
    u = unit(snapshot, "Orks", "Boyz")
    assert stat(model(u, "Boy w/ Slugga and choppa")) == (9, 6, 5, 5, 1, 7, 2)
    assert model(u, "Boss Nob")["count"] == 1
    assert u["points"] == 80 and u["sizes"][-1]["points"] == 170
    # shared entry e542-78f9-46d8-6c33 "Choppa": Melee A3 WS3+ S4 AP-1 D1, keywords "-"
    assert weapon(u, "Choppa") == {"name": "Choppa", "range": "melee", "A": "3", "WS": 3, "S": 4, "AP": -1,
                                   "D": "1", "abilities": [], "unmodelled": []}
    assert loadout(model(u, "Boy w/ Slugga and choppa")) == {"Choppa": 1, "Slugga": 1}


def test_necron_warriors(snapshot: Imported) -> None:
    # necrons.cat selectionEntry 58e9-5212-f5a6-c12d: unit profile "Necron Warriors" M5" T4 SV4+ W1
    # LD7+ OC2 on the unit entry; model "Warrior w/ gauss flayer"; "Gauss flayer" 24" A1 BS4+ S4 AP0 D1
    # "Lethal Hits, Rapid Fire 1"; "Gauss reaper" 12" A2 BS4+ S4 AP-1 D1 "Lethal Hits"; cost pts 90.
    u = unit(snapshot, "Necrons", "Necron Warriors")
    m = model(u, "Warrior w/ gauss flayer")
    assert stat(m)[1:] == (5, 4, 4, 1, 7, 2)
    assert u["points"] == 90
    assert weapon(u, "Gauss flayer") == {"name": "Gauss flayer", "range": 24, "A": "1", "BS": 4, "S": 4, "AP": 0,
                                         "D": "1", "abilities": ["Lethal Hits", "Rapid Fire 1"], "unmodelled": []}
    assert weapon(u, "Gauss reaper")["AP"] == -1 and weapon(u, "Gauss reaper")["A"] == "2"
    assert "Gauss flayer" in loadout(m)


def test_crisis_sunforge(snapshot: Imported) -> None:
    # tau-empire.cat selectionEntry e88f-bc7a-c3f5-8e47 "Crisis Sunforge Battlesuits": models
    # "Crisis Sunforge Shas’ui" and "Crisis Sunforge Shas’vre", both M10" T5 SV3+ W4 LD7+ OC2;
    # "Invulnerable Save (4+)"; cost pts 140. "Fusion blaster" (f836-d31-4688-d623): 12" A1 BS4+ S9
    # AP-4 D D6 "Melta 2".
    u = unit(snapshot, "T'au Empire", "Crisis Sunforge Battlesuits")
    assert stat(model(u, "Crisis Sunforge Shas\u2019vre"))[1:] == (10, 5, 3, 4, 7, 2)
    assert stat(model(u, "Crisis Sunforge Shas\u2019ui"))[1:] == (10, 5, 3, 4, 7, 2)
    assert sum(m["count"] for m in u["models"]) == 3
    assert u["points"] == 140
    assert u["invulnerable"] == {"save": 4, "ranged_only": False}
    assert weapon(u, "Fusion blaster") == {"name": "Fusion blaster", "range": 12, "A": "1", "BS": 4, "S": 9,
                                           "AP": -4, "D": "D6", "abilities": ["Melta 2"], "unmodelled": []}
    assert loadout(model(u, "Crisis Sunforge Shas\u2019ui"))["Fusion blaster"] == 2


def test_knight_paladin(snapshot: Imported) -> None:
    # imperium-imperial-knights-library.cat selectionEntry 8441-8356-5e7c-69ee (type model): M10" T11 SV3+
    # W26 LD6+ OC10; infoLink "Invulnerable Save (5+*)" -> warhammer-40000.gst profile 8552-862d-6a49-4879
    # "This model has a 5+ invulnerable save against ranged attacks."; cost pts 375.
    # "Rapid-fire battle cannon" (d6c0-4d42-c3c4-db8a): 72" A D6+3 BS3+ S10 AP-1 D3 "Blast, Rapid Fire D6+3".
    u = unit(snapshot, "Imperial Knights", "Knight Paladin")
    assert stat(model(u, "Knight Paladin")) == (1, 10, 11, 3, 26, 6, 10)
    assert u["invulnerable"] == {"save": 5, "ranged_only": True}
    assert u["points"] == 375
    assert weapon(u, "Rapid-fire battle cannon") == {
        "name": "Rapid-fire battle cannon", "range": 72, "A": "D6+3", "BS": 3, "S": 10, "AP": -1, "D": "3",
        "abilities": ["Blast", "Rapid Fire D6+3"], "unmodelled": []}
    # strike and sweep are two profiles of one entry: the loadout takes the first (strike)
    ld = loadout(model(u, "Knight Paladin"))
    assert "Reaper chainsword - strike" in ld and "Reaper chainsword - sweep" not in ld
    assert u["source"].startswith("BSData imperium-imperial-knights-library.cat entry 8441-8356-5e7c-69ee")


def test_termagants(snapshot: Imported) -> None:
    # tyranids.cat selectionEntry 359c-db2c-681a-8d62 "Termagants": group "10-20 Termagants" (default model
    # 5c17-dcfb-6d07-1b12), statline by infoLink to profile 2461-bee9-2afc-8776: M6" T3 SV5+ W1 LD8+ OC2;
    # group "Weapons" default d66a-eb66-bb41-acce "Fleshborer" 18" A1 BS4+ S5 AP0 D1 "Assault";
    # cost pts 60, set 120 with more than 10 models.
    u = unit(snapshot, "Tyranids", "Termagants")
    assert stat(model(u, "Termagants")) == (10, 6, 3, 5, 1, 8, 2)
    assert u["sizes"] == [{"models": 10, "points": 60}, {"models": 20, "points": 120}]
    assert weapon(u, "Fleshborer") == {"name": "Fleshborer", "range": 18, "A": "1", "BS": 4, "S": 5, "AP": 0,
                                       "D": "1", "abilities": ["Assault"], "unmodelled": []}
    assert "Fleshborer" in loadout(model(u, "Termagants"))


def test_fire_dragons(snapshot: Imported) -> None:
    # aeldari-aeldari-library.cat selectionEntry 5374-9e93-8af2-819e "Fire Dragons": "Fire Dragon" min 4
    # (M7" T3 SV3+ W1 LD6+ OC1), "Fire Dragon Exarch" (W2); "Invulnerable Save": "This unit has a 5+
    # Invulnerable save"; cost 120, set 240 above 5 models; "Dragon's Breath Flamer" 12" A D6+2 BS N/A
    # S6 AP-2 D1 "Assault, Ignores cover, Torrent" (BS N/A with Torrent: BS null).
    u = unit(snapshot, "Aeldari", "Fire Dragons")
    assert stat(model(u, "Fire Dragon")) == (4, 7, 3, 3, 1, 6, 1)
    assert model(u, "Fire Dragon Exarch")["W"] == 2
    assert u["invulnerable"] == {"save": 5, "ranged_only": False}
    assert u["sizes"] == [{"models": 5, "points": 120}, {"models": 10, "points": 240}]
    flamer = weapon(u, "Dragon's Breath Flamer")
    assert flamer["BS"] is None and flamer["A"] == "D6+2" and flamer["AP"] == -2
    assert flamer["abilities"] == ["Assault", "Ignores cover", "Torrent"]


def test_unreadable_values_are_listed_not_dropped(snapshot: Imported) -> None:
    # orks.cat "Zzap gun" has S "2D6" (Big Gunz) / "D6+6" (Battlewagon): outside the schema's S, so the
    # weapon is reported with its reason and the unit is still imported
    zzap = [p for p in snapshot.problems if p.what == "weapon 'Zzap gun'"]
    assert zzap and all("S:" in p.reason for p in zzap)
    assert unit(snapshot, "Orks", "Battlewagon")["models"]


def test_unit_names_unique_within_a_faction(snapshot: Imported) -> None:
    for f in snapshot.factions:
        names = [" ".join(u["name"].lower().split()) for u in f.units]
        assert len(names) == len(set(names)), f.name
        assert all(u["faction"] == f.name for u in f.units)
