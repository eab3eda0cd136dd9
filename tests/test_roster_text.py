"""Army list text exports (GW app, New Recruit GW and WTC-compact, War Organ): format detection,
units, models, counts, points, enhancements, attached leaders. Expected values are typed in from
reading the sample files by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathhammer.errors import ProfileError
from mathhammer.roster.model import Roster, RosterUnit
from mathhammer.roster.text import parse_text

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "data" / "text-exports-40kcompactor"
needs_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason="the shared text-export samples are not here")


def _parse(name: str) -> Roster:
    path = SAMPLES / name
    return parse_text(path.read_bytes(), str(path))


def _at(r: Roster, line: int) -> RosterUnit:
    return next(e for e in r.entries if e.line == line)


def _models(e: RosterUnit) -> list[tuple[str, int, dict[str, int]]]:
    return [(m.name, m.count, dict(m.weapons)) for m in e.models]


GW = """\
My list (215 points)

T’au Empire
Strike Force (2000 points)

Attached Units
Attached Unit 1

Commander X (80 points)
• Attached as: Leader (Character)
  • Warlord
  • 1x Dawn Blade
    1x Plasma rifle
  • Enhancement: Shiny Thing (Upgrade)

Test Squad (135 points)
• Attached as: Bodyguard
  • 1x Test Shas’vre
    • 1x Battlesuit fists
      2x Fusion blaster
  • 2x Test Shas’ui
    • 2x Battlesuit fists
      3x Fusion blaster
      1x Missile pod

Exported with App Version: v2.0.0 (121), Data Version: v867
"""


def test_gw_app_inline() -> None:
    r = parse_text(GW.encode(), "list.txt")
    assert (r.format, r.name, r.faction, r.points) == ("gw-app", "My list", "T'au Empire", 215)
    lead, squad = r.entries
    assert (lead.name, lead.line, lead.points, lead.role, lead.warlord) == ("Commander X", 9, 80, "leader", True)
    assert lead.enhancements == ("Shiny Thing",) and lead.models == ()
    assert dict(lead.wargear) == {"Dawn Blade": 1, "Plasma rifle": 1}
    assert squad.role == "bodyguard"
    assert _models(squad) == [("Test Shas'vre", 1, {"Battlesuit fists": 1, "Fusion blaster": 2}),
                              ("Test Shas'ui", 2, {"Battlesuit fists": 2, "Fusion blaster": 3, "Missile pod": 1})]
    [a] = r.attachments
    assert (a.leaders, a.bodyguard, a.line) == ((0,), 1, 9)


def test_unknown_format_names_the_file_and_line() -> None:
    with pytest.raises(ProfileError) as e:
        parse_text(b"\n\nJust some notes\nabout my army\n", "army.txt")
    assert e.value.where == "army.txt:3" and "not a roster" in e.value.what


@pytest.mark.parametrize("raw,what", [(b"", "empty"), (b"\x00\x01PKbinary", "not a text file"),
                                      (b"Title (100 points)\nno bullet here\n", "not a roster")])
def test_bad_text_is_one_error(raw: bytes, what: str) -> None:
    with pytest.raises(ProfileError, match=what):
        parse_text(raw, "f.txt")


def test_a_line_outside_any_unit_is_a_note_not_dropped() -> None:
    text = GW.replace("Attached Units\n", "Attached Units\nstray words here\n")
    r = parse_text(text.encode(), "list.txt")
    assert any("stray words here" in n.text and n.line == 7 for n in r.notes)


def test_cp1252_text_is_read_with_a_note() -> None:
    text = GW.replace("’", "'").replace("•", "-").replace("Commander X", "Commandér X")
    r = parse_text(text.encode("cp1252"), "l.txt")
    assert r.entries[0].name == "Commandér X" and len(r.entries) == 2
    assert any("Windows-1252" in n.text for n in r.notes)


@needs_samples
def test_gw_app_tau_sample() -> None:
    r = _parse("gwapp-tau.txt")
    assert (r.format, r.points, r.faction) == ("gw-app", 2000, "T'au Empire")
    assert len(r.entries) == 19 and len(r.attachments) == 6
    farsight = _at(r, 11)
    assert (farsight.name, farsight.points, farsight.role, farsight.warlord) == ("Commander Farsight", 80, "leader",
                                                                                  True)
    sunforge = _at(r, 17)
    assert (sunforge.name, sunforge.points, sunforge.role) == ("Crisis Sunforge Battlesuits", 125, "bodyguard")
    assert _models(sunforge) == [
        ("Crisis Sunforge Shas'vre", 1, {"Battlesuit fists": 1, "Fusion blaster": 2, "Marker Drone": 1,
                                         "Shield Drone": 1}),
        ("Crisis Sunforge Shas'ui", 2, {"Battlesuit fists": 2, "Fusion blaster": 4, "Gun Drone": 2, "Shield Drone": 2})]
    assert r.attachments[0].leaders == (0,) and r.attachments[0].bodyguard == 1
    assert _at(r, 32).enhancements == ("Starflare Ignition System",)
    assert dict(_at(r, 32).wargear)["Missile pod"] == 4
    pathfinders = _at(r, 170)
    assert pathfinders.points == 95
    assert _models(pathfinders)[1] == ("Pathfinder", 9, {"Close combat weapon": 9, "Ion rifle": 3, "Pulse carbine": 6,
                                                          "Pulse pistol": 9})
    assert _at(r, 200).enhancements == ("Negation Emitters",)
    assert _at(r, 228).name == "Vespid Stingwings" and _at(r, 228).points == 70


@needs_samples
def test_gw_app_knights_sample() -> None:
    r = _parse("gwapp-imperial-knights.txt")
    assert (r.name, r.points, r.faction) == ("QC", 1995, "Imperial Knights")
    assert [(e.name, e.points) for e in r.entries] == [
        ("Cerastus Knight Castigator", 380), ("Cerastus Knight Lancer", 430), ("Knight Destrier", 265),
        ("Knight Destrier", 265), ("Knight Warden", 375), ("Armiger Warglaive", 140), ("Armiger Warglaive", 140)]
    warden = _at(r, 31)
    assert warden.warlord and dict(warden.wargear) == {"Avenger gatling cannon": 1, "Heavy flamer": 1,
                                                       "Questoris heavy stubber": 1, "Stormspear rocket pod": 1,
                                                       "Thunderstrike gauntlet": 1}
    assert _at(r, 15).enhancements == ("Pennant of Silvered Fury",)
    assert r.attachments == ()


@needs_samples
def test_new_recruit_gw_sample() -> None:
    r = _parse("newrecruit-gw-tau.txt")
    assert (r.format, r.faction, r.points) == ("new-recruit-gw", "T'au Empire", 2000)
    assert _at(r, 15).warlord and _at(r, 15).points == 70
    enforcer = _at(r, 39)
    assert enforcer.points == 100 and enforcer.enhancements == ("Starflare Ignition System",)
    assert dict(enforcer.wargear) == {"Cyclic ion blaster": 1, "Plasma rifle": 3, "Battlesuit fists": 1,
                                      "Marker Drone": 1, "Shield Drone": 1}
    kroot = _at(r, 142)
    assert [(m.name, m.count) for m in kroot.models] == [("Long-quill", 1), ("Kroot Carnivore", 1),
                                                         ("Kroot Carnivores", 8)]
    assert dict(kroot.models[2].weapons) == {"Close combat weapon": 8, "Kroot rifle": 8}
    broadside = _at(r, 68)
    assert dict(broadside.models[0].weapons)["Missile Drone"] == 2
    lance = _at(r, 50)
    assert sum(n for w, n in lance.models[0].weapons if w == "Twin pulse blaster") == 2  # listed twice


@needs_samples
def test_wtc_compact_sample() -> None:
    r = _parse("newrecruit-wtc-compact-tau.txt")
    assert (r.format, r.faction, r.points) == ("wtc-compact", "T'au Empire", 2000)
    farsight = _at(r, 13)
    assert farsight.warlord and farsight.size == 1 and dict(farsight.wargear) == {"Dawn Blade": 1,
                                                                                  "High-intensity plasma rifle": 1}
    assert _at(r, 17).enhancements == ("Starflare Ignition System",)
    pathfinders = _at(r, 49)
    assert pathfinders.size == 10 and pathfinders.points == 85
    assert [(m.name, m.count, dict(m.weapons).get("Rail rifle", 0), dict(m.weapons).get("Pulse carbine", 0))
            for m in pathfinders.models] == [("Pathfinders", 6, 0, 6), ("Pathfinders", 3, 3, 0),
                                             ("Pathfinder Shas'ui", 1, 0, 1)]
    fireknife = _at(r, 30)
    # "2x Crisis Fireknife Shas'ui: 2 with ..., 2x Plasma rifle": per model, so 4 in all
    assert _models(fireknife)[1] == ("Crisis Fireknife Shas'ui", 2, {"Gun Drone": 2, "Shield Drone": 2,
                                                                     "Battlesuit fists": 2, "Plasma rifle": 4})
    assert sum(m.count for m in _at(r, 59).models) == 5


@needs_samples
def test_war_organ_sample() -> None:
    r = _parse("warorgan-tau.txt")
    assert (r.format, r.name, r.faction, r.points) == ("war-organ", "R.U.D.E", "Tau Empire", 2000)
    assert len(r.entries) == 19
    sunforge = _at(r, 23)
    assert (sunforge.name, sunforge.points, sunforge.section) == ("Crisis Sunforge Battlesuits", 125,
                                                                  "Mean Command Clique")
    # two lines "1 Crisis Shas'ui with 2 Fusion blaster, ..." are one group of 2
    assert _models(sunforge) == [
        ("Crisis Shas'vre", 1, {"Fusion blaster": 2, "Battlesuit fists": 1, "Gun drone with twin pulse carbine": 1,
                                "shield drone": 1}),
        ("Crisis Shas'ui", 2, {"Fusion blaster": 4, "Battlesuit fists": 2, "Gun drone with twin pulse carbine": 2,
                               "shield drone": 2})]
    assert _at(r, 19).warlord
    enforcer = _at(r, 60)
    assert enforcer.enhancements == ("Starflare Ignition System",) and dict(enforcer.wargear)["Plasma rifle"] == 3
    kroot = _at(r, 81)
    assert sum(m.count for m in kroot.models) == 10


def test_a_count_of_zero_is_left_out_with_a_note() -> None:
    """``0x`` of a weapon, or of a model with what it carries: left out, each with a note."""
    text = GW.replace("      2x Fusion blaster\n", "      0x Fusion blaster\n").replace(
        "  • 2x Test Shas’ui", "  • 0x Test Shas’ui")
    squad = parse_text(text.encode(), "list.txt").entries[1]
    assert _models(squad) == [("Test Shas'vre", 1, {"Battlesuit fists": 1})]
    assert {(n.line, n.text) for n in squad.notes} >= {(18, "0x Fusion blaster (Test Shas'vre): left out"),
                                                       (21, "0x Test Shas'ui: left out, with what it carries")}


@pytest.mark.parametrize("old,new,line,name", [
    ("      3x Fusion blaster", "      99999999999999999999x Fusion blaster", 23, "Fusion blaster"),
    ("  • 2x Test Shas’ui", "  • 1001x Test Shas’ui", 21, "Test Shas'ui"),
    ("    1x Plasma rifle", "    5000x Plasma rifle", 13, "Plasma rifle")])
def test_a_count_above_the_limit_is_one_error(old: str, new: str, line: int, name: str) -> None:
    """A count no profile may hold (more than MAX_ATTACKING_MODELS) is refused, naming the line,
    before anything is spread over that many models; it is never read as part of a name."""
    assert old in GW
    with pytest.raises(ProfileError, match="a count must be from 0 to 1,000") as e:
        parse_text(GW.replace(old, new).encode(), "list.txt")
    assert e.value.where == f"list.txt:{line}" and name in e.value.what


WAR_ORGAN = """\
Test list [125 points]
Tau Empire

Battleline

  Crisis Sunforge Battlesuits (125 points)
    • 1 Crisis Shas’vre with 2 Fusion blaster and Battlesuit fists
    • 0 Crisis Shas’ui with 2 Fusion blaster and Battlesuit fists
    • 1 Crisis Shas’ui with 0 Fusion blaster and Battlesuit fists
"""


def test_war_organ_counts_of_zero() -> None:
    """War Organ's ``0 Crisis Shas'ui with ...`` (added up with the other Shas'ui by name and
    loadout) and ``with 0 Fusion blaster``: left out with notes, never a division by zero."""
    [squad] = parse_text(WAR_ORGAN.encode(), "wo.txt").entries
    assert _models(squad) == [("Crisis Shas'vre", 1, {"Fusion blaster": 2, "Battlesuit fists": 1}),
                              ("Crisis Shas'ui", 1, {"Battlesuit fists": 1})]
    assert {(n.line, n.text) for n in squad.notes} == {(8, "0x Crisis Shas'ui: left out, with what it carries"),
                                                       (9, "0x Fusion blaster (Crisis Shas'ui): left out")}
    with pytest.raises(ProfileError, match="a count must be from 0 to 1,000") as e:
        parse_text(WAR_ORGAN.replace("• 0 Crisis", "• 99999999999 Crisis").encode(), "wo.txt")
    assert e.value.where == "wo.txt:8" and e.value.value == 99999999999


def test_a_count_of_thousands_of_digits_is_no_count() -> None:
    """Past 100 digits a number is no count (int() refuses over 4,300 digits): the line is read
    as it was before counts of any length, never an internal error."""
    r = parse_text(GW.replace("      3x Fusion blaster", "      " + "9" * 5000 + "x Fusion blaster").encode(), "l.txt")
    assert len(r.entries) == 2


# --- a unit's (or the list's) line with a cost that is no whole number of points ---------------

NEW_RECRUIT = """\
+++++++++++++++++++++++++++++++++++++++++++++++
+ FACTION KEYWORD: Xenos - T'au Empire
+ TOTAL ARMY POINTS: 215pts
+++++++++++++++++++++++++++++++++++++++++++++++

CHARACTER

Commander X (80 pts)
• 1x Dawn Blade
• Warlord

OTHER DATASHEETS

Test Squad (135 pts)
• 1x Test Shas’vre:
  • 1x Battlesuit fists
  • 2x Fusion blaster
"""

WTC = """\
+++++++++++++++++++++++++++++++++++++++++++++++
+ FACTION KEYWORD: Xenos - T'au Empire
+ TOTAL ARMY POINTS: 215pts
+++++++++++++++++++++++++++++++++++++++++++++++

Char1: 1x Commander X (80 pts): Warlord, Dawn Blade
3x Test Squad (135 pts)
• 1x Test Shas’vre: 2x Fusion blaster, Battlesuit fists
• 2x Test Shas’ui: 2 with Fusion blaster, Battlesuit fists
"""

#: (the export, its first unit's line, its second unit's line, the line's cost as written)
_TWO_UNITS = [(GW, "Commander X (80 points)", "Test Squad (135 points)", "{} points"),
              (NEW_RECRUIT, "Commander X (80 pts)", "Test Squad (135 pts)", "{} pts"),
              (WTC, "Char1: 1x Commander X (80 pts): Warlord, Dawn Blade", "3x Test Squad (135 pts)", "{} pts"),
              (WAR_ORGAN.replace("Battleline\n", "Battleline\n\n  Commander X (80 points)\n    • Warlord\n"),
               "  Commander X (80 points)", "  Crisis Sunforge Battlesuits (125 points)", "{} points")]
_BAD_COSTS = ["99999999999999999999", "7.5", "-5", "1,000", "1000001", "0.0", "9" * 5000]


def test_the_samples_two_units_are_read() -> None:
    """What the bad costs below change: each export read as it stands has its two units."""
    for text, first, second, _ in _TWO_UNITS:
        assert first in text and second in text
        assert len(parse_text(text.encode(), "list.txt").entries) == 2


@pytest.mark.parametrize("cost", _BAD_COSTS)
@pytest.mark.parametrize("which", [1, 2])
@pytest.mark.parametrize("fmt", range(len(_TWO_UNITS)), ids=["gw-app", "new-recruit-gw", "wtc-compact", "war-organ"])
def test_a_unit_line_whose_cost_is_no_whole_number_of_points_is_one_error(fmt: int, which: int, cost: str) -> None:
    """A unit's line with a cost that is no whole number of points (20 digits, a decimal, a
    negative number, a thousands separator, more than 1,000,000) is an error naming the file,
    the line, the unit and the cost as written: the first unit (the only one the list would
    have: it said "no unit found"), or one after another unit (which it joined as a model
    called 'Test Squad (7.5 points)' with a borrowed statline, or a note)."""
    text, first, second, form = _TWO_UNITS[fmt]
    old = first if which == 1 else second
    new = old.replace(form.format(80 if which == 1 else 125 if fmt == 3 else 135), form.format(cost))
    assert new != old
    bad = text.replace(old, new)
    line = bad.splitlines().index(new) + 1
    with pytest.raises(ProfileError, match="a cost of points must be a whole number from 0 to 1,000,000") as e:
        parse_text(bad.encode(), "list.txt")
    assert e.value.where == f"list.txt:{line}"
    assert ("'Commander X'" if which == 1 else "'Test Squad'" if fmt < 3 else "'Crisis Sunforge Battlesuits'") \
        in e.value.what
    assert e.value.value == cost
    if len(cost) > 200:  # said cut short, with its length (a line, not a page)
        assert e.value.message().endswith(f"(got '{'9' * 199}…, 5,000 characters)")


@pytest.mark.parametrize("title,line,cost", [("My list (21.5 points)", "My list (215 points)", "21.5"),
                                             ("Test list [2.000 points]", "Test list [125 points]", "2.000"),
                                             ("Test list [-125 points]", "Test list [125 points]", "-125")])
def test_the_list_line_whose_cost_is_no_whole_number_of_points_is_one_error(title: str, line: str, cost: str) -> None:
    """The list's own line (GW app, War Organ) too: named at line 1 with its cost (it said "not a
    roster this tool reads", or a War Organ list's name was the whole line, its points none)."""
    text = GW if line in GW else WAR_ORGAN
    assert text.startswith(line + "\n")
    with pytest.raises(ProfileError, match="a cost of points must be a whole number") as e:
        parse_text(text.replace(line, title).encode(), "list.txt")
    assert e.value.where == "list.txt:1" and e.value.value == cost


@pytest.mark.parametrize("total", ["2000.5pts", "lots", "99999999pts", "-5pts", ""])
@pytest.mark.parametrize("text", [NEW_RECRUIT, WTC], ids=["new-recruit-gw", "wtc-compact"])
def test_new_recruits_total_that_is_no_whole_number_of_points_is_one_error(text: str, total: str) -> None:
    """'+ TOTAL ARMY POINTS: 2000.5pts' was read as 2000, and 'lots' as no total, without a word."""
    bad = text.replace("+ TOTAL ARMY POINTS: 215pts", f"+ TOTAL ARMY POINTS: {total}")
    with pytest.raises(ProfileError, match="the army's total must be a whole number of points") as e:
        parse_text(bad.encode(), "list.txt")
    assert e.value.where == "list.txt:3" and e.value.value == total
    assert parse_text(text.encode(), "list.txt").points == 215
    assert parse_text(text.replace("215pts", "215 points").encode(), "list.txt").points == 215


@pytest.mark.parametrize("cost", ["0", "1000000", "007"])
def test_a_whole_number_of_points_up_to_the_limit_is_read(cost: str) -> None:
    """The limit is 1,000,000 points, as for a .ros cost: 0 (a free unit) and 1,000,000 are
    read, and leading zeros are a whole number as written."""
    r = parse_text(GW.replace("Test Squad (135 points)", f"Test Squad ({cost} points)").encode(), "list.txt")
    assert r.entries[1].points == int(cost) and _models(r.entries[1])[1][:2] == ("Test Shas'ui", 2)


def test_a_price_is_no_cost() -> None:
    """``(+20 pts)`` is an enhancement's price, which WTC-compact writes on a line of its own:
    never a unit line, so never refused as a bad cost."""
    text = WTC.replace("3x Test Squad", "Enhancement: Shiny Thing (+20 pts)\n3x Test Squad")
    r = parse_text(text.encode(), "list.txt")
    assert r.entries[0].enhancements == ("Shiny Thing",) and len(r.entries) == 2
