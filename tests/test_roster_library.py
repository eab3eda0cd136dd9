"""A roster's units over the library (issue 11 items 3-4): ``--roster``, ``--target-roster``,
``--faction``, ``compare --roster``, and the lookup rules that a library of ~1,600 units needs
(Layered precedence; Legends units found last).

Expected values are derived by hand from the rules and from the sample files as they are written
(the GW app export of a T'au list): never from the engine's output.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathhammer.cli import app
from mathhammer.errors import ProfileError
from mathhammer.profiles import Layered, Library, load_file

from .profile_files import write_profile

runner = CliRunner()

TWO_UNITS = """\
schema: 1
units:
  - name: Strike Team
    faction: Test
    models:
      - {name: Shas'la, count: 5, T: 3, Sv: 4, W: 1, weapons: [Pulse rifle]}
    weapons:
      - {name: Pulse rifle, range: 30, A: "1", BS: 4, S: 5, AP: 0, D: "1"}
  - name: Old Team [Legends]
    faction: Test
    models:
      - {name: Shas'la, count: 5, T: 3, Sv: 4, W: 1, weapons: [Pulse rifle]}
    weapons:
      - {name: Pulse rifle, range: 30, A: "1", BS: 3, S: 5, AP: 0, D: "1"}
  - name: Knight Warden
    faction: Test
    models:
      - {name: Knight Warden, count: 1, T: 11, Sv: 3, W: 26}
"""

ROSTER_UNIT = """\
schema: 1
units:
  - name: Strike Team
    faction: Mine
    models:
      - {name: Shas'la, count: 10, T: 3, Sv: 4, W: 1, weapons: [Pulse rifle]}
    weapons:
      - {name: Pulse rifle, range: 30, A: "2", BS: 4, S: 5, AP: 0, D: "1"}
  - name: Knight Warden of mine
    faction: Mine
    models:
      - {name: Knight Warden, count: 1, T: 11, Sv: 3, W: 26}
"""


@pytest.fixture()
def layered(tmp_path: Path) -> Layered:
    base = Library(load_file(write_profile(tmp_path / "base", TWO_UNITS)))
    top = Library(load_file(write_profile(tmp_path / "top", ROSTER_UNIT)))
    return Layered(top, base)


def test_a_roster_unit_is_found_before_the_library_unit_of_the_same_name(layered: Layered) -> None:
    assert layered.find("strike team", "unit").faction == "Mine"
    assert layered.find("strike team", "unit").model_count == 10


def test_a_whole_library_name_beats_a_part_of_a_roster_name(layered: Layered) -> None:
    # "knight warden" is a part of the roster's "Knight Warden of mine" but the whole name of a
    # library unit: whole names (and aliases) are tried in both before parts of names
    assert layered.find("knight warden", "unit").faction == "Test"
    assert layered.find("of mine", "unit").faction == "Mine"


def test_a_name_only_the_library_knows_falls_through_and_unknown_names_say_so(layered: Layered) -> None:
    assert layered.find("old team", "unit").name == "Old Team [Legends]"
    with pytest.raises(ProfileError, match="unknown unit"):
        layered.find("hammerhead", "unit")


def test_legends_units_are_found_only_when_no_current_unit_matches(tmp_path: Path) -> None:
    lib = Library(load_file(write_profile(tmp_path, TWO_UNITS)))
    # two Pulse rifles with different BS: the current unit's is meant, the Legends one is a
    # qualified name away
    assert lib.find("pulse rifle", "weapon").skill == 4
    assert lib.find("old team/pulse rifle", "weapon").skill == 3
    assert lib.find("old team", "unit").name == "Old Team [Legends]"


def test_the_built_in_library_prefers_current_units_and_lists_current_candidates() -> None:
    from mathhammer.api import library

    lib = library(use_env=False)
    with pytest.raises(ProfileError) as e:
        lib.find("plasma rifle", "weapon")
    # three T'au units of today's datasheets carry a Plasma rifle in two profiles (BS3+ on the
    # Commanders, BS4+ on the Fireknife team); the Legends Crisis team's is not a candidate
    assert "matches 2" in e.value.what and "[Legends]" not in e.value.what


def _fusion_mean(guns: int, wounds: int = 26) -> Fraction:
    """Mean wounds lost by one model of ``wounds`` W to ``guns`` Fusion blasters at the Knight
    Paladin beyond half range: each deals D6 with probability 1/2 (hit) x 1/3 (S9 vs T11: 5+) x
    2/3 (the 5+ invulnerable save, AP-4 making the armour save 7+) = 1/9, else 0; damage past the
    model's last wound is lost, so the wounds lost are min(total, W) (enumerated exactly)."""
    one = {0: Fraction(8, 9), **{d: Fraction(1, 54) for d in range(1, 7)}}
    total = {0: Fraction(1)}
    for _ in range(guns):
        nxt: dict[int, Fraction] = {}
        for a, p in total.items():
            for b, q in one.items():
                nxt[a + b] = nxt.get(a + b, Fraction(0)) + p * q
        total = nxt
    return sum((min(k, wounds) * p for k, p in total.items()), Fraction(0))


def _sunforge_mean(wounds: int = 26) -> Fraction:
    """Mean wounds lost by the Knight Paladin to the first Crisis Sunforge team of gwapp-tau.txt
    (lines 17-29): 6 Fusion blasters (as :func:`_fusion_mean`) and the two Gun Drones of the
    Shas'ui, each a Twin pulse carbine (tau-empire.cat entry 1ad0-be27-ab4c-3459: 20" A2 BS5+ S5
    AP0 D1 [ASSAULT, TWIN-LINKED]; ruling M58). Each of its 4 attacks: hit 5+ (1/3), S5 vs T11
    wounds on 6+ re-rolled (TWIN-LINKED: 1 - (5/6)^2 = 11/36), the 3+ armour save fails 1/3 (AP0;
    better than the 5+ invulnerable save), 1 damage: 11/324. The total is capped at the Knight's
    26 wounds (enumerated exactly)."""
    fusion = {0: Fraction(8, 9), **{d: Fraction(1, 54) for d in range(1, 7)}}
    carbine = {0: 1 - Fraction(11, 324), 1: Fraction(11, 324)}
    total = {0: Fraction(1)}
    for one in [fusion] * 6 + [carbine] * 4:
        nxt: dict[int, Fraction] = {}
        for a, p in total.items():
            for b, q in one.items():
                nxt[a + b] = nxt.get(a + b, Fraction(0)) + p * q
        total = nxt
    return sum((min(k, wounds) * p for k, p in total.items()), Fraction(0))


def _json(args: list[str]) -> dict:
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_shoot_with_a_roster_fires_the_unit_as_listed(shared_data: Path) -> None:
    roster = shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"
    doc = _json(["shoot", "--roster", str(roster), "crisis sunforge battlesuits", "-t", "knight", "--exact",
                 "--format", "json"])
    # gwapp-tau.txt lines 17-29: a Shas'vre with 2 Fusion blasters and two Shas'ui with 4 between
    # them: 6 Fusion blasters (12" A1 BS4+ S9 AP-4 D D6 [MELTA 2]). Against the Knight Paladin
    # (T11 Sv3+, 5+ invulnerable against ranged attacks), not at half range: hit 1/2, S9 < T11
    # wounds on 5+ (1/3), AP-4 makes the armour save 7+ so the 5+ invulnerable save is taken
    # (fails 2/3), D6 each; the Knight's 26 wounds cap the total (_fusion_mean). The Shas'ui's
    # "2x Gun Drone" are their drones' two Twin pulse carbines (ruling M58, _sunforge_mean).
    assert [(w["name"], w["count"]) for w in doc["weapons"]] == [("Fusion blaster", 6), ("Twin pulse carbine", 2)]
    assert doc["damage"]["mean"] == pytest.approx(float(_sunforge_mean()), abs=1e-9)
    assert _fusion_mean(6) < Fraction(7, 3)  # the cap matters: 6 x 1/9 x 7/2 uncapped


def test_a_roster_unit_fires_its_listed_wargear_not_the_datasheet_default(shared_data: Path) -> None:
    roster = shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"
    # gwapp-tau.txt lines 32-38: this Commander in Enforcer Battlesuit carries 4 Missile pods; the
    # datasheet's default loadout has no ranged weapon at all
    doc = _json(["shoot", "--roster", str(roster), "commander in enforcer battlesuit", "-t", "knight", "--exact",
                 "--format", "json"])
    assert [(w["name"], w["count"]) for w in doc["weapons"]] == [("Missile pod", 4)]
    r = runner.invoke(app, ["shoot", "commander in enforcer battlesuit", "-t", "knight", "--exact"])
    assert r.exit_code == 1 and "ranged" in r.output


def test_a_library_alias_finds_the_rosters_unit_and_its_attached_leader(tmp_path: Path, shared_data: Path) -> None:
    full = (shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt").read_text(encoding="utf-8")
    # "crisis sunforge" is the library's alias of Crisis Sunforge Battlesuits; the list holds three
    # such teams (lines 17, 109, 131 of gwapp-tau.txt), so the alias is ambiguous there ...
    r = runner.invoke(app, ["shoot", "A10 BS3+ S5 AP-1 D2", "--target-roster",
                            str(shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"), "-t", "crisis sunforge"])
    assert r.exit_code == 1 and "the roster has 3" in r.output
    # ... while in a list of the first "Attached Unit" alone (Commander Farsight leading one team,
    # lines 1-29) it is that team, with its Leader
    roster = tmp_path / "one-team.txt"
    roster.write_text("\n".join(full.splitlines()[:29]) + "\n", encoding="utf-8")
    doc = _json(["shoot", "A10 BS3+ S5 AP-1 D2", "--target-roster", str(roster), "-t", "crisis sunforge", "--exact",
                 "--format", "json"])
    groups = [(g["name"], g["models"], g["leader"]) for g in doc["groups"]]
    assert ("Commander Farsight", 1, True) in groups
    assert sum(m for _, m, leader in groups if not leader) == 3


def test_the_target_roster_names_the_target_and_the_attacker_roster_does_not(shared_data: Path) -> None:
    knights = shared_data / "text-exports-40kcompactor" / "gwapp-imperial-knights.txt"
    doc = _json(["shoot", "railgun", "--target-roster", str(knights), "-t", "armiger warglaive", "--exact",
                 "--format", "json"])
    assert doc["target"]["name"] == "Armiger Warglaive"
    r = runner.invoke(app, ["shoot", "--roster", str(knights), "railgun", "-t", "armiger warglaive (2)", "--exact"])
    assert r.exit_code == 1 and "--target" in r.output  # the attacker's roster names no target


def test_faction_limits_the_attacking_names(tmp_path: Path) -> None:
    r = runner.invoke(app, ["profiles", "show", "--faction", "necrons", "warriors", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["name"] == "Necron Warriors"
    r = runner.invoke(app, ["shoot", "--faction", "space marines", "gauss flayer", "-t", "knight", "--exact"])
    assert r.exit_code == 1 and "unknown" in r.output
    r = runner.invoke(app, ["shoot", "--faction", "warhammer", "railgun", "-t", "knight"])
    assert r.exit_code == 1 and "unknown faction" in r.output


def test_compare_ranks_every_unit_of_a_roster(shared_data: Path) -> None:
    roster = shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"
    r = runner.invoke(app, ["compare", "--roster", str(roster), "-t", "knight", "--exact", "--format", "json"])
    assert r.exit_code == 0, r.output
    records = json.loads(r.stdout)["records"]
    labels = {rec["label"]: rec for rec in records}
    # the first Crisis Sunforge team (gwapp-tau.txt line 17, 125 points) shoots, its Gun Drones
    # too; its fists fight
    sunforge = labels["Crisis Sunforge Battlesuits: shoot"]
    assert sunforge["points"] == 125
    assert sunforge["damage"]["mean"] == pytest.approx(float(_sunforge_mean()), abs=1e-9)
    assert all(rec["target"] == "knight" for rec in records)
    assert len({rec["row"] for rec in records}) == len(records)


def test_compare_needs_a_file_or_a_roster() -> None:
    r = runner.invoke(app, ["compare", "-t", "knight"])
    assert r.exit_code == 2 and "--roster" in r.output  # a missing argument: a usage error


def test_two_rosters_with_the_same_unit_names_can_be_used_together(tmp_path: Path, shared_data: Path) -> None:
    roster = shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"
    from mathhammer.api import library

    lib = library(use_env=False, rosters=[roster, roster])
    names = [u.name for u in lib.roster_units]  # type: ignore[attr-defined]
    assert len(names) == len(set(names))
    # the second file's units carry its name, and its Bodyguard names its own Leader
    second = lib.find("Crisis Sunforge Battlesuits [gwapp-tau.txt]", "unit")
    assert second.attached == ("Commander Farsight [gwapp-tau.txt]",)


def test_what_the_roster_cannot_fire_is_said_when_its_unit_fires(tmp_path: Path, shared_data: Path) -> None:
    roster = shared_data / "text-exports-40kcompactor" / "gwapp-tau.txt"
    r = runner.invoke(app, ["shoot", "--roster", str(roster), "stealth battlesuits", "-t", "knight", "--exact"])
    # its Shas'vre carries a Homing Beacon (line 200), which it cannot fire (ruling M54)
    assert r.exit_code == 0 and "Warning: Stealth Battlesuits (roster): not weapons of" in r.stderr
    assert "Homing Beacon" in r.stderr


def test_compare_names_the_roster_units_it_cannot_rank(tmp_path: Path) -> None:
    roster = tmp_path / "list.txt"
    roster.write_text("Test (200 points)\n\nT’au Empire\nIncursion (1000 points)\n\nOTHER DATASHEETS\n\n"
                      "Tidewall Gunrig (90 points)\n  • 1x Supremacy railgun\n\n"
                      "Blorpside Battlesuits (80 points)\n  • 1x Heavy rail rifle\n", encoding="utf-8")
    r = runner.invoke(app, ["compare", "--roster", str(roster), "-t", "knight", "--exact"])
    assert r.exit_code == 0, r.output
    assert "line 11: Blorpside Battlesuits: not ranked" in r.stderr and "Tidewall Gunrig: shoot" in r.stdout


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_compare_a_roster_with_no_unit_to_rank_is_an_error(tmp_path: Path, fmt: str) -> None:
    # it ranked nothing and exited 0 ('"records": []', "0 rows read"), where a CSV file with no row is an error
    roster = tmp_path / "list.txt"
    roster.write_text("Test (80 points)\n\nT’au Empire\nIncursion (1000 points)\n\nOTHER DATASHEETS\n\n"
                      "Blorpside Battlesuits (80 points)\n  • 1x Heavy rail rifle\n", encoding="utf-8")
    r = runner.invoke(app, ["compare", "--roster", str(roster), "-t", "knight", "--exact", "--format", fmt])
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == (f"Error: {roster}: no unit to rank: 1 listed, none matched to a profile with a weapon\n"
                        f"  hint: 'mathhammer roster show {roster}' says why each unit cannot be used\n")


def _zero_strike_team(tmp_path: Path) -> Path:
    """The example army with its Strike Team's two model lines counted 0 (ruling M87: a unit
    with no models, not used)."""
    text = (Path(__file__).resolve().parent.parent / "examples" / "tau-army.txt").read_text("utf-8")
    text = text.replace("• 1x Fire Warrior Shas’ui", "• 0x Fire Warrior Shas’ui")
    text = text.replace("• 9x Fire Warrior w/ pulse rifle", "• 0x Fire Warrior w/ pulse rifle")
    assert text.count("• 0x") == 2
    path = tmp_path / "army.txt"
    path.write_text(text, "utf-8")
    return path


@pytest.mark.parametrize(("args", "where"), [
    (["shoot", "strike team", "--roster", "{file}", "-t", "knight"], "unit"),
    (["shoot", "strike team/pulse rifle", "--roster", "{file}", "-t", "knight"], "weapon"),
    (["shoot", "railgun", "--target-roster", "{file}", "-t", "strike team"], "--target"),
])
def test_a_roster_unit_that_cannot_be_used_is_never_the_librarys_in_its_place(tmp_path: Path, args: list[str],
                                                                              where: str) -> None:
    """Asked for the roster's unit, the library's 10 Fire Warriors were shot with (or at), not a
    word said: the roster named a unit it could not give."""
    file = str(_zero_strike_team(tmp_path))
    r = runner.invoke(app, [a.replace("{file}", file) for a in args] + ["--exact"], env={"NO_COLOR": "1"})
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith(f"Error: {where}: the roster's Strike Team cannot be used (army.txt line 17: its "
                               "models are counted 0"), r.stderr
    assert "hint: fix the roster, or leave it out to use the library's profile" in r.stderr
    # the roster's other units, and the library's units the roster does not list, are found as before
    r = runner.invoke(app, ["shoot", "crisis sunforge", "--roster", file, "-t", "strike team", "--exact"])
    assert r.exit_code == 0, r.output


def test_compare_a_roster_json_holds_to_its_schema() -> None:
    """Its rows are numbered from 1 (no file, no header line): the schema said 2 at least."""
    from jsonschema import Draft202012Validator

    root = Path(__file__).resolve().parent.parent
    schema = json.loads((root / "schemas" / "compare-1.schema.json").read_text("utf-8"))
    r = runner.invoke(app, ["compare", "--roster", str(root / "examples" / "tau-army.txt"), "-t", "knight", "--exact",
                            "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    Draft202012Validator(schema).validate(doc)
    assert [rec["row"] for rec in doc["records"]][:2] == [1, 2]
