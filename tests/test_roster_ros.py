"""BattleScribe rosters (.ros/.rosz): units built from the profiles the file carries, counts,
points, enhancements; bad files. Expected values are read by hand from the XML."""

from __future__ import annotations

import zipfile
from fractions import Fraction
from pathlib import Path

import pytest

from mathhammer.errors import ProfileError
from mathhammer.roster import load_roster
from mathhammer.roster.model import Roster, RosterUnit

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "data" / "rosters-prettyscribe"
needs_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason="the shared .rosz samples are not here")


def _named(r: Roster, name: str) -> list[RosterUnit]:
    return [e for e in r.entries if e.name == name]


def _chars(**kw: str) -> str:
    return "<characteristics>" + "".join(f'<characteristic name="{k}">{v}</characteristic>' for k, v in kw.items()) \
        + "</characteristics>"


def _weapon(name: str, kind: str = "Ranged Weapons", **kw: str) -> str:
    return f'<profiles><profile name="{name}" typeName="{kind}">{_chars(**kw)}</profile></profiles>'


ROS = f"""<?xml version="1.0" encoding="utf-8"?>
<roster name="Test" xmlns="http://www.battlescribe.net/schema/rosterSchema">
 <costs><cost name="pts" value="150.0"/></costs>
 <forces><force catalogueName="Xenos - Testers">
  <selections>
   <selection id="s-1" name="Battle Size" type="upgrade"/>
   <selection id="u-1" name="Test Squad" number="1" type="unit">
    <costs><cost name="pts" value="120.0"/></costs>
    <categories><category name="Faction: Testers"/><category name="Infantry" primary="true"/></categories>
    <profiles>
     <profile name="Test Squad" typeName="Unit">{_chars(M='6"', T="4", SV="3+", W="2", LD="6+", OC="2")}</profile>
     <profile name="Invulnerable Save" typeName="Abilities">{_chars(Description="Models in this unit have a 5+ invulnerable save.")}</profile>
     <profile name="Odd Trick" typeName="Abilities">{_chars(Description="Something the engine does not model.")}</profile>
    </profiles>
    <selections>
     <selection id="m-1" name="Trooper" number="4" type="model">
      <selections>
       <selection id="w-1" name="Gun" number="4" type="upgrade">{_weapon("Gun", Range='24"', A="2", BS="3+", S="4", AP="-1", D="1", Keywords="Rapid Fire 1")}</selection>
       <selection id="w-2" name="Big gun" number="1" type="upgrade">{_weapon("Big gun", Range='36"', A="D6", BS="4+", S="9", AP="-2", D="3", Keywords="Blast, Conversion")}</selection>
      </selections>
     </selection>
     <selection id="m-2" name="Sergeant" number="1" type="model">
      <selections>
       <selection id="w-3" name="Gun" number="1" type="upgrade"/>
       <selection id="w-4" name="Blade" number="1" type="upgrade">{_weapon("Blade", "Melee Weapons", Range="Melee", A="3", WS="3+", S="5", AP="-2", D="1", Keywords="-")}</selection>
      </selections>
     </selection>
    </selections>
   </selection>
   <selection id="u-2" name="Boss" number="1" type="model">
    <costs><cost name="pts" value="30.0"/></costs>
    <profiles><profile name="Boss" typeName="Unit">{_chars(M='6"', T="5", SV="2+", W="5", LD="6+", OC="1")}</profile></profiles>
    <selections>
     <selection id="w-5" name="2 Twin guns" number="1" type="upgrade">{_weapon("Twin gun", Range='18"', A="3", BS="2+", S="5", AP="0", D="1", Keywords="Twin-linked")}</selection>
     <selection id="e-1" name="Shiny Relic" number="1" type="upgrade"><costs><cost name="pts" value="20.0"/></costs>{_weapon("Shiny Relic", "Abilities", Description="+1 to everything")}</selection>
     <selection id="wl" name="Warlord" number="1" type="upgrade"/>
    </selections>
   </selection>
  </selections>
 </force></forces>
</roster>
"""


def _write(tmp_path: Path, name: str, text: str, zipped: bool = False) -> Path:
    path = tmp_path / name
    if zipped:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("inner.ros", text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("zipped", [False, True])
def test_a_small_roster(tmp_path: Path, zipped: bool) -> None:
    r = load_roster(_write(tmp_path, "t.rosz" if zipped else "t.ros", ROS, zipped))
    assert (r.format, r.name, r.faction, r.points) == ("rosz" if zipped else "ros", "Test", "Testers", 150)
    squad, boss = r.entries
    assert (squad.name, squad.points, squad.faction) == ("Test Squad", 120, "Testers")
    assert [(m.name, m.count, dict(m.weapons)) for m in squad.models] == [
        ("Trooper", 4, {"Gun": 4, "Big gun": 1}), ("Sergeant", 1, {"Gun": 1, "Blade": 1})]
    u = squad.unit
    assert u is not None and u.invulnerable == 5 and u.keywords == {"INFANTRY"}
    # 4 Troopers with 1 Big gun: one Trooper carries it, three do not; the Sergeant's Gun has no
    # profile of its own and takes the file's "Gun"
    assert [(m.name, m.count, m.loadout) for m in u.models] == [
        ("Trooper", 1, (("Gun", 1), ("Big gun", 1))), ("Trooper", 3, (("Gun", 1),)),
        ("Sergeant", 1, (("Gun", 1), ("Blade", 1)))]
    assert {m.toughness for m in u.models} == {4} and u.models[0].save == 3 and u.models[0].wounds == 2
    big = next(w for w in u.weapons if w.name == "Big gun")
    assert big.unmodelled == ("Conversion",) and str(big.attacks) == "D6"
    assert "Odd Trick" in u.unmodelled
    assert u.source.startswith("roster t.ros") and u.source.endswith(f"line {squad.line}") and squad.line == 7
    assert boss.points == 50 and boss.warlord and boss.enhancements == ("Shiny Relic",)
    assert boss.unit is not None and boss.unit.models[0].loadout == (("Twin gun", 2),)  # "2 Twin guns"
    assert any("has no profile here" in n.text for n in squad.notes)


def test_corrupt_zip(tmp_path: Path) -> None:
    path = tmp_path / "broken.rosz"
    path.write_bytes(b"PK\x03\x04 this is not a zip")
    with pytest.raises(ProfileError, match="corrupt") as e:
        load_roster(path)
    assert e.value.where == str(path)


def test_xml_that_is_not_a_roster(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not a BattleScribe roster"):
        load_roster(_write(tmp_path, "x.ros", '<?xml version="1.0"?><catalogue name="c"/>'))


def test_entities_are_refused(tmp_path: Path) -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><roster>&b;</roster>'
    with pytest.raises(ProfileError, match="DOCTYPE or ENTITY"):
        load_roster(_write(tmp_path, "bomb.ros", bomb))


def test_a_roster_with_no_unit(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no unit"):
        load_roster(_write(tmp_path, "e.ros", '<roster name="e"><forces><force/></forces></roster>'))


@needs_samples
def test_necrons_sample() -> None:
    r = load_roster(SAMPLES / "necrons-10e.rosz")
    assert (r.format, r.points, r.faction) == ("rosz", 1205, "Necrons")
    assert [(e.name, e.points) for e in r.entries] == [("Overlord", 85), ("Tesseract Vault", 425),
                                                       ("The Silent King", 470), ("Doom Scythe", 225)]
    assert all(e.ok for e in r.entries)
    # the Overlord's Implacable Resilience: "Each time an attack is allocated to this model,
    # subtract 1 from that attack's Damage characteristic."
    overlord = _named(r, "Overlord")[0].unit
    assert overlord is not None and overlord.damage_reduction == 1
    assert "Implacable Resilience" not in overlord.unmodelled
    vault = _named(r, "Tesseract Vault")[0].unit
    assert vault is not None
    [m] = vault.models
    assert (m.toughness, m.save, m.wounds, m.move) == (12, 2, 24, 7) and vault.invulnerable == 4
    assert dict(m.loadout)["Tesla sphere"] == 4
    sphere = next(w for w in vault.weapons if w.name == "Tesla sphere")
    assert (str(sphere.attacks), sphere.skill, sphere.strength, sphere.ap, sphere.range_inches) == ("6", 3, 7, 0, 24)
    king = _named(r, "The Silent King")[0]
    assert king.warlord and king.unit is not None
    assert [(m.name, m.count, m.wounds) for m in king.unit.models] == [("Szarekh", 1, 16), ("Triarchal Menhir", 2, 5)]


@needs_samples
def test_ultramarines_sample() -> None:
    r = load_roster(SAMPLES / "ultramarines-10e.rosz")
    assert r.points == 810 and len(r.entries) == 10 and all(e.ok for e in r.entries)
    names = [u.name for u in r.units()]
    assert names.count("Assault Intercessor Squad") == 1 and "Assault Intercessor Squad (2)" in names
    impulsor = _named(r, "Impulsor")[0].unit
    assert impulsor is not None and dict(impulsor.models[0].loadout)["Fragstorm Grenade Launcher"] == 2
    outriders = _named(r, "Outrider Squad")[0]
    assert outriders.points == 105 and outriders.unit is not None and outriders.unit.model_count == 3
    assert _named(r, "Primaris Captain")[0].warlord


@needs_samples
def test_votann_sample() -> None:
    r = load_roster(SAMPLES / "lov-leviathan-v0102.rosz")
    assert r.points == 965 and all(e.ok for e in r.entries)
    champion = _named(r, "Einhyr Champion")[0]
    assert champion.points == 80 and champion.enhancements == ("Appraising Glare",) and champion.warlord
    warriors = _named(r, "Hearthkyn Warriors")[0]
    assert warriors.unit is not None and warriors.unit.model_count == 10
    theyn = next(m for m in warriors.unit.models if m.name == "Theyn")
    # the Pistol rule: a Theyn (not a MONSTER or VEHICLE) shoots its pistol or its Ion blaster, not both
    assert dict(theyn.loadout) == {"Close combat weapon": 1, "Ion blaster": 1}
    assert "Etacarn plasma pistol" in theyn.options
    assert any("Etacarn plasma pistol (1 model)" in n.text for n in warriors.notes)
    sagitaur = _named(r, "Sagitaur")[0].unit
    assert sagitaur is not None
    assert dict(sagitaur.models[0].loadout) == {"Armoured wheels": 1, "Twin bolt cannon": 1,
                                                "Sagitaur missile launcher": 1, "L7 missile launcher - blast": 1}
    assert {"L7 missile launcher - blast", "L7 missile launcher - focused"} <= {w.name for w in sagitaur.weapons}
    # "Weavefield crest: The bearer has a 4+ invulnerable save." under the Champion and the
    # Theyn: theirs; the other Hearthkyn have none
    assert champion.unit is not None and champion.unit.models[0].invulnerable == 4
    assert theyn.invulnerable == 4 and warriors.unit.invulnerable is None
    assert {m.invulnerable for m in warriors.unit.models if m.name != "Theyn"} == {None}
    assert "Weavefield crest" not in champion.unit.unmodelled + warriors.unit.unmodelled
    doc = r.to_dict()
    (unit,) = [u["unit"] for u in doc["units"] if u["name"] == "Einhyr Champion"]
    assert unit["models"][0]["invulnerable"] == 4


@needs_samples
def test_a_weavefield_crest_saves_its_bearer(tmp_path: Path) -> None:
    from mathhammer import api

    lib = api.with_rosters(api.library(use_env=False), [SAMPLES / "lov-leviathan-v0102.rosz"])
    # A1 BS2+ S20 AP-4 D1 at the Einhyr Champion (T6 Sv2+ W5): hits 5/6, wounds 5/6 (S20 >= 2 x T6);
    # AP-4 leaves the 2+ armour at 6+, so the crest's 4+ is taken: fails 1/2
    result = api.run(["A1 BS2+ S20 AP-4 D1"], "einhyr champion", method="exact", lib=lib)
    assert result.damage.mean() == pytest.approx(5 / 6 * 5 / 6 * 1 / 2)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_LZMA])
def test_damaged_compressed_data_is_one_error(tmp_path: Path, method: int) -> None:
    """A .rosz whose compressed bytes are damaged (its CRC not checked yet): zlib's and lzma's own
    errors become the one-line "corrupt" error, not an internal error."""
    path = tmp_path / "damaged.rosz"
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        zf.writestr("inner.ros", ROS)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)  # the member's data
    for i in range(start + 8, start + 40):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    with pytest.raises(ProfileError, match="corrupt or unreadable zip") as e:
        load_roster(path)
    assert e.value.where == str(path)


@pytest.mark.parametrize("number", ["-5", "2.5", "NaN", "inf", "", "1001", "99999999999999999999999"])
def test_a_number_that_is_not_a_count_is_one_error(tmp_path: Path, number: str) -> None:
    """A selection's number outside 0..MAX_ATTACKING_MODELS is a damaged file: refused, naming
    the line and the value, before anything is spread over that many models."""
    text = ROS.replace('id="m-1" name="Trooper" number="4"', f'id="m-1" name="Trooper" number="{number}"')
    path = _write(tmp_path, "n.ros", text)
    with pytest.raises(ProfileError, match="number must be a whole number from 0 to 1,000") as e:
        load_roster(path)
    assert e.value.where == f"{path}:16" and e.value.value == number


def test_a_number_written_as_a_float_is_read(tmp_path: Path) -> None:
    r = load_roster(_write(tmp_path, "f.ros", ROS.replace('name="Trooper" number="4"', 'name="Trooper" number="4.0"')))
    assert r.entries[0].models[0].count == 4


def test_number_zero_is_left_out_with_a_note(tmp_path: Path) -> None:
    text = ROS.replace('name="Trooper" number="4"', 'name="Trooper" number="0"').replace(
        'id="w-4" name="Blade" number="1"', 'id="w-4" name="Blade" number="0"')
    squad = load_roster(_write(tmp_path, "z.ros", text)).entries[0]
    assert [(m.name, m.count, dict(m.weapons)) for m in squad.models] == [("Sergeant", 1, {"Gun": 1})]
    notes = {(n.line, n.text) for n in squad.notes}
    assert (16, "model 'Trooper': number 0, left out") in notes and (25, "'Blade': number 0, left out") in notes


@pytest.mark.parametrize("value", ["NaN", "inf", "-inf", "1e9", "lots"])
def test_a_cost_that_is_not_points_is_one_error(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path, "c.ros", ROS.replace('<cost name="pts" value="120.0"/>', f'<cost name="pts" value="{value}"/>'))
    with pytest.raises(ProfileError, match="a cost of points must be a number from -1,000,000 to 1,000,000") as e:
        load_roster(path)
    assert e.value.where == f"{path}:7" and e.value.value == value


def test_a_negative_cost_is_added_up(tmp_path: Path) -> None:
    """A swap that costs less (older data): points add up, negative ones included."""
    r = load_roster(_write(tmp_path, "n.ros", ROS.replace('<cost name="pts" value="120.0"/>', '<cost name="pts" value="-20"/>')))
    assert r.entries[0].points == -20


def test_selections_nested_thousands_deep_are_read_without_recursion(tmp_path: Path) -> None:
    # a 91 KB file with 1,100 nested upgrades made an internal RecursionError (exit 70)
    depth = 5_000
    path = tmp_path / "deep.ros"
    path.write_text('<roster xmlns="http://www.battlescribe.net/schema/rosterSchema" name="x"><forces>'
                    '<force name="f" catalogueName="Necrons"><selections><selection name="U" type="unit" number="1">'
                    '<selections>' + '<selection name="x" type="upgrade" number="1"><selections>' * depth
                    + '</selections></selection>' * depth + '</selections></selection></selections></force></forces>'
                    '</roster>', encoding="utf-8")
    r = load_roster(path)
    assert [e.name for e in r.entries] == ["U"] and r.entries[0].unit is None  # no Unit profile: noted, not used


def test_a_bearers_invulnerable_save_goes_to_its_model_group_or_a_note_says_why_not(tmp_path: Path) -> None:
    crest = ('<selection id="c-{0}" name="Crest" number="{1}" type="upgrade"><profiles><profile name="Crest" '
             'typeName="Abilities">' + _chars(Description="The bearer has a 4+ invulnerable save.") +
             '</profile></profiles></selection>')
    text = ROS.replace('<selection id="w-4" name="Blade"', crest.format(1, 1) + '<selection id="w-4" name="Blade"')
    text = text.replace('<selection id="w-2" name="Big gun"', crest.format(2, 1) + '<selection id="w-2" name="Big gun"')
    assert text.count('name="Crest"') == 4
    squad = load_roster(_write(tmp_path, "t.ros", text)).entries[0]
    assert squad.unit is not None and squad.unit.invulnerable == 5  # "Models in this unit have a 5+ ..."
    # the Sergeant bears it: 4+ beats the unit's 5+; one crest among 4 Troopers: which one is not said
    assert {(m.name, m.invulnerable) for m in squad.unit.models} == {("Trooper", None), ("Sergeant", 4)}
    assert any("Crest: 1 of 4 Trooper bear a 4+ invulnerable save, not given" in n.text for n in squad.notes)
    # a crest no better than the unit's own save adds nothing and is not "not modelled"
    worse = text.replace("The bearer has a 4+", "The bearer has a 5+")
    squad = load_roster(_write(tmp_path, "w.ros", worse)).entries[0]
    assert squad.unit is not None and {m.invulnerable for m in squad.unit.models} == {None}
    assert "Crest" not in squad.unit.unmodelled
    # the unit's save against ranged attacks only: the bearer's, against every attack, cannot
    # stand beside it (one statline save, the unit's ranged_only): said, whichever is better
    for crest, kind in (("5+", "worse"), ("4+", "better")):
        ranged = text.replace("a 5+ invulnerable save.", "a 5+ invulnerable save against ranged attacks.").replace(
            "The bearer has a 4+", f"The bearer has a {crest}")
        squad = load_roster(_write(tmp_path, f"r-{kind}.ros", ranged)).entries[0]
        assert squad.unit is not None and squad.unit.invulnerable_ranged_only, kind
        assert {m.invulnerable for m in squad.unit.models} == {None}, kind
        assert any(f"Crest: the bearer's {crest} invulnerable save is not given (the unit's 5+ is against ranged "
                   "attacks only)" in n.text for n in squad.notes), kind
        (unit,) = [u["unit"] for u in load_roster(_write(tmp_path, f"j-{kind}.ros", ranged)).to_dict()["units"]
                   if u["name"] == "Test Squad"]
        assert {(m["invulnerable"], m["invulnerable_ranged_only"]) for m in unit["models"]} == {(5, True)}


def _bearing(text: str, description: str, sergeant: int = 1, troopers: int = 4) -> str:
    """ROS with wargear of that description under the Sergeant (``sergeant`` of them) and the
    Troopers (``troopers`` of them)."""
    gear = ('<selection id="g-{0}" name="Gear" number="{1}" type="upgrade"><profiles><profile name="Gear" '
            f'typeName="Abilities">{_chars(Description=description)}</profile></profiles></selection>')
    text = text.replace('<selection id="w-4" name="Blade"', gear.format(1, sergeant) + '<selection id="w-4" name="Blade"')
    return text.replace('<selection id="w-2" name="Big gun"', gear.format(2, troopers) +
                        '<selection id="w-2" name="Big gun"')


@pytest.mark.parametrize(("description", "wounds", "fnp"), [
    ("The bearer has a Wounds characteristic of 4.", 4, None),           # a Storm shield
    ("Add 1 to the bearer\u2019s Wounds characteristic.", 3, None),       # a Shield Drone (W2 + 1)
    ("The bearer has the Feel No Pain 5+ ability.", 2, 5),
    ("CHAOS LORD model only. Add 1 to the bearer's Wounds characteristic and the bearer has the Feel No Pain 5+ "
     "ability.", 3, 5),                                                   # a Living Carapace
])
def test_wargear_that_raises_its_bearers_wounds_or_gives_feel_no_pain(tmp_path: Path, description: str, wounds: int,
                                                                       fnp: int | None) -> None:
    squad = load_roster(_write(tmp_path, "g.ros", _bearing(ROS, description))).entries[0]
    assert squad.unit is not None
    assert {(m.name, m.wounds, m.feel_no_pain) for m in squad.unit.models} == {("Trooper", wounds, fnp),
                                                                               ("Sergeant", wounds, fnp)}
    assert "Gear" not in squad.unit.unmodelled and not [n for n in squad.notes if "Gear" in n.text]
    # only one of the four Troopers bears it: which one is not said, so nobody gets it
    squad = load_roster(_write(tmp_path, "p.ros", _bearing(ROS, description, troopers=1))).entries[0]
    assert squad.unit is not None
    assert {(m.name, m.wounds, m.feel_no_pain) for m in squad.unit.models} == {("Trooper", 2, None),
                                                                               ("Sergeant", wounds, fnp)}
    assert any(n.text.startswith("Gear: 1 of 4 Trooper bear ") and n.text.endswith(
        ", not given (the roster does not say which models)") for n in squad.notes)


@pytest.mark.parametrize("description", [
    "The bearer has the Feel No Pain 3+ ability against Psychic Attacks.",   # a condition
    "Add 2 to the bearer's Toughness and Wounds characteristics, and the bearer has a 4+ invulnerable save.",
    "The bearer has a Save characteristic of 2+ and the Feel No Pain 5+ ability.",  # a save it cannot hold
])
def test_wargear_that_says_more_than_it_models_is_kept_as_text(tmp_path: Path, description: str) -> None:
    squad = load_roster(_write(tmp_path, "g.ros", _bearing(ROS, description))).entries[0]
    assert squad.unit is not None and "Gear" in squad.unit.unmodelled
    assert {(m.wounds, m.feel_no_pain) for m in squad.unit.models} == {(2, None)}


def test_a_feel_no_pain_no_better_than_the_units_adds_nothing(tmp_path: Path) -> None:
    unit_fnp = ROS.replace('<profile name="Odd Trick" typeName="Abilities">',
                           f'<profile name="Tough" typeName="Abilities">'
                           f'{_chars(Description="Models in this unit have the Feel No Pain 5+ ability.")}</profile>'
                           '<profile name="Odd Trick" typeName="Abilities">')
    for given, model_fnp in (("6+", None), ("5+", None), ("4+", 4)):
        squad = load_roster(_write(tmp_path, "f.ros", _bearing(unit_fnp, f"The bearer has the Feel No Pain {given} "
                                                                        "ability."))).entries[0]
        assert squad.unit is not None and squad.unit.feel_no_pain == 5
        assert {m.feel_no_pain for m in squad.unit.models} == {model_fnp}, given
        assert "Gear" not in squad.unit.unmodelled


def test_a_shield_drones_wound_counts_when_its_bearer_is_shot(tmp_path: Path) -> None:
    """One attack A1 BS2+ S20 AP-5 D4 at a lone W4 model: hits 5/6, wounds 5/6 (S20 >= 2 x T5),
    no save (Sv2+ worsened to 7+), and 4 damage kills it: 25/36. With a Shield Drone (W5) it
    never dies, and the damage is still 4 x 25/36."""
    from mathhammer import api

    boss = ROS.replace('<characteristic name="W">5</characteristic>', '<characteristic name="W">4</characteristic>')
    assert boss != ROS
    drone = ('<selection id="d-1" name="Shield Drone" number="1" type="upgrade"><profiles><profile name="Shield Drone" '
             f'typeName="Abilities">{_chars(Description="Add 1 to the bearer’s Wounds characteristic.")}</profile>'
             '</profiles></selection>')
    for text, killed in ((boss, Fraction(25, 36)), (boss.replace('<selection id="wl"', drone + '<selection id="wl"'), 0)):
        path = _write(tmp_path, "b.ros", text)
        lib = api.with_rosters(api.library(use_env=False), [path])
        result = api.run(["A1 BS2+ S20 AP-5 D4"], "boss", method="exact", lib=lib)
        assert result.damage.mean() == pytest.approx(float(4 * Fraction(25, 36)))
        assert result.models_destroyed.mean() == pytest.approx(float(killed))


def test_m81_pieces_add_up_and_a_set_wounds_comes_first(tmp_path: Path) -> None:
    """Two selections of one piece, or one of number 2 per model, add twice; "Add 1" listed
    before "a Wounds characteristic of 4" still gives 4 + 1 (R-0.2: set, then add)."""
    add = "Add 1 to the bearer's Wounds characteristic."
    text = _bearing(_bearing(ROS, add), add)  # two selections under each group, one per model each
    squad = load_roster(_write(tmp_path, "a.ros", text)).entries[0]
    assert squad.unit is not None and {m.wounds for m in squad.unit.models} == {4}  # W2 + 2
    text = _bearing(ROS, add, sergeant=2, troopers=8)  # one selection, 2 a model
    squad = load_roster(_write(tmp_path, "b.ros", text)).entries[0]
    assert squad.unit is not None and {m.wounds for m in squad.unit.models} == {4}
    text = _bearing(_bearing(ROS, add).replace('name="Gear"', 'name="Drone"'),
                    "The bearer has a Wounds characteristic of 4.")  # the Drone's "Add 1" listed first
    assert text.index('name="Drone"') < text.index('name="Gear"')
    squad = load_roster(_write(tmp_path, "c.ros", text)).entries[0]
    assert squad.unit is not None and {m.wounds for m in squad.unit.models} == {5}
    # 5 for 4 Troopers: one each, and one more that is not given
    squad = load_roster(_write(tmp_path, "d.ros", _bearing(ROS, add, troopers=5))).entries[0]
    assert squad.unit is not None and {m.wounds for m in squad.unit.models} == {3}
    assert any(n.text.startswith("Gear: 5 for 4 Trooper: 1 each, and 1 more (+1 Wounds) not given") for n in squad.notes)


def test_m81_wargear_that_gives_its_unit_a_keyword(tmp_path: Path) -> None:
    """A Marker Drone under one model: "The bearer's unit has the Markerlight keyword ...": the
    whole unit has MARKERLIGHT (what --markerlight asks of an Observer)."""
    text = _bearing(ROS, "The bearer\u2019s unit has the **^^Markerlight^^** keyword and can act as an Observer unit "
                         "for another unit even if it Advanced this turn.", troopers=1)
    squad = load_roster(_write(tmp_path, "m.ros", text)).entries[0]
    assert squad.unit is not None and "MARKERLIGHT" in squad.unit.keywords
    plain = load_roster(_write(tmp_path, "p.ros", ROS)).entries[0]
    assert plain.unit is not None and "MARKERLIGHT" not in plain.unit.keywords


def test_m79_a_lance_that_shoots_and_fights_and_powers_that_are_no_weapon(tmp_path: Path) -> None:
    """One selection with a 12" profile and strike and sweep melee profiles (as a Cerastus
    shock lance in the catalogue): the knight shoots with the first and fights with the strike
    (ruling M79); a profile of another type that reads like a weapon (a Tesseract Vault's
    "C'tan Powers") is named in a note, not silently dropped."""
    melee = dict(Range="Melee", WS="2+", AP="-3", D="8", Keywords="Lance")
    ranged = _chars(Range="12&quot;", A="6", BS="3+", S="6", AP="0", D="2", Keywords="-")
    lance = (f'<profiles><profile name="Shock lance" typeName="Ranged Weapons">{ranged}</profile>'
             f'<profile name="➤ Shock lance - strike" typeName="Melee Weapons">{_chars(A="5", S="20", **melee)}</profile>'
             f'<profile name="➤ Shock lance - sweep" typeName="Melee Weapons">{_chars(A="10", S="10", **melee)}</profile>'
             f'</profiles>')
    power = (f'<profiles><profile name="Cosmic Fire" typeName="C&apos;tan Powers">'
             f'{_chars(Range="18&quot;", A="3D6", BS="N/A", S="6", AP="-2", D="1", Keywords="Torrent")}</profile>'
             f'</profiles>')
    text = f"""<?xml version="1.0" encoding="utf-8"?>
<roster name="Test" xmlns="http://www.battlescribe.net/schema/rosterSchema">
 <forces><force catalogueName="Xenos - Testers"><selections>
  <selection id="u-1" name="Lancer" number="1" type="model">
   <profiles><profile name="Lancer" typeName="Unit">{_chars(M='14"', T="11", SV="3+", W="28", LD="6+", OC="10")}</profile></profiles>
   <selections>
    <selection id="w-1" name="Shock lance" number="1" type="upgrade">{lance}</selection>
    <selection id="w-2" name="C'tan Powers" number="1" type="upgrade">{power}</selection>
   </selections>
  </selection>
 </selections></force></forces>
</roster>
"""
    (lancer,) = load_roster(_write(tmp_path, "t.ros", text)).entries
    assert lancer.unit is not None
    assert lancer.unit.models[0].loadout == (("Shock lance", 1), ("Shock lance - strike", 1))
    notes = [n.text for n in lancer.notes]
    assert any("the loadout fires Shock lance and Shock lance - strike" in n for n in notes), notes
    assert "C'tan Powers: \"C'tan Powers\" profiles (Cosmic Fire) are not weapon profiles: not fired" in notes


def test_m86_a_ros_weapon_shoots_its_profile_without_hazardous(tmp_path: Path) -> None:
    """A plasma gun whose selection lists its supercharge profile ([HAZARDOUS]) before its
    standard one: the Boss's loadout fires the standard profile (the other is UNIT/WEAPON)."""
    pistol = ('<selection id="w-9" name="Plasma gun" number="1" type="upgrade"><profiles>'
              f'<profile name="➤ Plasma gun - supercharge" typeName="Ranged Weapons">'
              f'{_chars(Range="12&quot;", A="1", BS="3+", S="8", AP="-3", D="2", Keywords="Hazardous, Rapid Fire 1")}</profile>'
              f'<profile name="➤ Plasma gun - standard" typeName="Ranged Weapons">'
              f'{_chars(Range="12&quot;", A="1", BS="3+", S="7", AP="-2", D="1", Keywords="Rapid Fire 1")}</profile>'
              '</profiles></selection>')
    text = ROS.replace('<selection id="wl"', pistol + '<selection id="wl"')
    (boss,) = _named(load_roster(_write(tmp_path, "p.ros", text)), "Boss")
    assert boss.unit is not None
    fired = dict(boss.unit.models[0].loadout)
    assert "Plasma gun - standard" in fired and "Plasma gun - supercharge" not in fired


def test_a_ros_weapons_rules_are_not_unmodelled_abilities_and_deadly_demise_is_read(tmp_path: Path) -> None:
    """A weapon selection's rules (its keywords' texts: "Rapid Fire") are not the unit's abilities;
    a unit rule "Deadly Demise D3" is read as the importer reads it (R-10.1)."""
    gun = '<selection id="w-1" name="Gun" number="4" type="upgrade">'
    assert gun in ROS
    text = ROS.replace(gun, gun + '<rules><rule name="Rapid Fire"><description>More shots.</description></rule></rules>',
                       1)
    boss = '<profiles><profile name="Boss" typeName="Unit">'
    assert boss in text
    text = text.replace(boss, '<rules><rule name="Deadly Demise D3"><description>Boom.</description></rule></rules>'
                        + boss, 1)
    r = load_roster(_write(tmp_path, "d.ros", text))
    (squad,), (boss,) = _named(r, "Test Squad"), _named(r, "Boss")
    assert squad.unit is not None and boss.unit is not None
    assert "Rapid Fire" not in squad.unit.unmodelled and "Odd Trick" in squad.unit.unmodelled
    assert str(boss.unit.deadly_demise) == "D3" and not any("Deadly Demise" in a for a in boss.unit.unmodelled)
