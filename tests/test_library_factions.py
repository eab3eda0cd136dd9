"""The profile library at the size of every faction (issue 11): the schema keys the BSData
importer emits (``unmodelled``, ``sizes``, statline ``options``), unit names unique within a
faction, faction-qualified lookup and the faction filter, and units rebuilt from the cache only
when looked up."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mathhammer import profiles
from mathhammer.cli import app
from mathhammer.errors import ProfileError
from mathhammer.model import Unit, Weapon
from mathhammer.profiles import Library, dump_unit, load_file, load_library
from mathhammer.profiles.index import weapon_stats
from mathhammer.profiles.schema import _units
from mathhammer.resolve import resolve_weapon, resolve_weapons
from tests.profile_files import profile_error, write_profile

SQUAD = """\
  - name: Battle Squad
    aliases: [{alias}]
    faction: "{faction}"
    points: 90
    sizes: [{{models: 5, points: 90}}, {{models: 10, points: 180}}]
    models:
      - {{name: Trooper, count: 4, T: 4, Sv: 3, W: 2, weapons: [Rifle], options: [Heavy gun, cannon]}}
      - {{name: Sarge, count: 1, T: 4, Sv: 3, W: 2, weapons: [Rifle]}}
    keywords: [INFANTRY]
    unmodelled: [Oath of Moment, Deep Strike]
    weapons:
      - {{name: Rifle, range: 24, A: "2", BS: {bs}, S: 4, AP: -1, D: "1", abilities: [Assault],
          unmodelled: [Conversion]}}
      - {{name: Heavy gun, aliases: [cannon], range: 36, A: "3", BS: 4, S: 9, AP: -2, D: "3"}}
"""


def _library_text(*squads: str) -> str:
    return "schema: 1\nunits:\n" + "".join(squads)


TWO = _library_text(SQUAD.format(faction="Space Wolves", alias="wolf squad", bs=3),
                    SQUAD.format(faction="T'au Empire", alias="tau squad", bs=4))


@pytest.fixture
def two(tmp_path: Path) -> Library:
    """The reference profiles and a 'Battle Squad' in two factions."""
    write_profile(tmp_path / "p", TWO)
    return load_library([tmp_path / "p"], use_env=False)


# --- 1. the new schema keys ----------------------------------------------------------------------


def test_the_new_keys_are_read(tmp_path: Path) -> None:
    wolves, _ = load_file(write_profile(tmp_path, TWO))
    assert wolves.unmodelled == ("Oath of Moment", "Deep Strike")
    assert wolves.sizes == ((5, 90), (10, 180))
    assert wolves.models[0].options == ("Heavy gun",)  # the alias 'cannon' is the same weapon, kept once
    assert wolves.models[1].options == ()
    assert wolves.weapons[0].unmodelled == ("Conversion",)
    assert [str(a) for a in wolves.weapons[0].abilities] == ["ASSAULT"]


def test_points_default_to_the_smallest_size(tmp_path: Path) -> None:
    [unit, _] = load_file(write_profile(tmp_path, TWO.replace("    points: 90\n", "", 1)))
    assert unit.points == 90


def test_dump_and_load_give_back_the_same_units(tmp_path: Path) -> None:
    units = load_file(write_profile(tmp_path, TWO))
    data = {"schema": 1, "units": [dump_unit(u) for u in units]}
    assert data["units"][0]["sizes"] == [{"models": 5, "points": 90}, {"models": 10, "points": 180}]
    assert data["units"][0]["models"][0]["options"] == ["Heavy gun"]
    assert data["units"][0]["weapons"][0]["unmodelled"] == ["Conversion"]
    again = load_file(write_profile(tmp_path, yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "b.yaml"))
    assert again == units


def test_a_unit_without_the_new_keys_dumps_as_before(tmp_path: Path) -> None:
    # every generated built-in unit has some of the new keys: a squad written without them
    plain = (SQUAD.format(faction="Orks", alias="plain squad", bs=3)
             .replace("    sizes: [{models: 5, points: 90}, {models: 10, points: 180}]\n", "")
             .replace(", options: [Heavy gun, cannon]", "")
             .replace("    unmodelled: [Oath of Moment, Deep Strike]\n", "")
             .replace(",\n          unmodelled: [Conversion]", ""))
    assert "unmodelled" not in plain and "sizes" not in plain and "options" not in plain
    [unit] = load_file(write_profile(tmp_path, _library_text(plain)))
    dumped = dump_unit(unit)
    assert not {"unmodelled", "sizes"} & set(dumped)
    assert all("options" not in m for m in dumped["models"])
    assert all("unmodelled" not in w for w in dumped["weapons"])


@pytest.mark.parametrize(("edit", "where", "what"), [
    (("unmodelled: [Conversion]", "unmodelled: [Lethal Hits]"), "units[0].weapons[0].unmodelled[0]",
     "an ability the engine models"),
    (("unmodelled: [Conversion]", "unmodelled: ['  ']"), "units[0].weapons[0].unmodelled[0]", "cannot be blank"),
    (("unmodelled: [Oath of Moment, Deep Strike]", "unmodelled: Deep Strike"), "units[0].unmodelled",
     "expected a list of strings"),
    (("{models: 10, points: 180}", "{models: 5, points: 180}"), "units[0].sizes[1].models", "ascending"),
    (("{models: 5, points: 90}, {models: 10, points: 180}", "{models: 10, points: 180}, {models: 5, points: 90}"),
     "units[0].sizes[1].models", "ascending"),
    (("{models: 5, points: 90}", "{models: 0, points: 90}"), "units[0].sizes[0].models", "from 1 to"),
    (("{models: 10, points: 180}", "{models: 10, points: -1}"), "units[0].sizes[1].points", "at least 0"),
    (("{models: 10, points: 180}", "{models: 10}"), "units[0].sizes[1]", "missing key 'points'"),
    (("    points: 90\n", "    points: 95\n"), "units[0].points", "smallest unit size (5 models: 90 points)"),
    (("options: [Heavy gun, cannon]", "options: [Laser]"), "units[0].models[0].options[0]",
     "model 'Trooper' may take a weapon unit 'Battle Squad' does not have (it has Rifle, Heavy gun)"),
])
def test_bad_new_keys_are_errors_at_their_place(tmp_path: Path, edit: tuple[str, str], where: str,
                                                what: str) -> None:
    e = profile_error(write_profile(tmp_path, TWO.replace(*edit, 1)))
    assert e.where == f"test.yaml: {where}" and what in e.what, e.message()


def test_the_cache_gives_back_the_new_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(profiles.CACHE_ENV_VAR, str(tmp_path / "cache"))
    write_profile(tmp_path / "p", TWO)
    first = load_library([tmp_path / "p"], use_env=False).units
    [entry] = (tmp_path / "cache" / "profiles").glob("*.marshal")
    doc = profiles.cache._open_entry(entry.read_bytes())
    squad = next(u for u in doc["units"] if u["name"] == "Battle Squad")
    assert squad["sizes"] == [[5, 90], [10, 180]] and squad["models"][0]["options"] == ["Heavy gun"]
    assert load_library([tmp_path / "p"], use_env=False).units == first


# --- 2. names within a faction -------------------------------------------------------------------


def test_a_name_may_repeat_in_another_faction(two: Library) -> None:
    squads = [u for u in two.units if u.name == "Battle Squad"]
    assert [u.faction for u in squads] == ["Space Wolves", "T'au Empire"]


@pytest.mark.parametrize(("second", "where"), [
    (SQUAD.format(faction="Space Wolves", alias="other", bs=3), "units[1].name"),   # the same faction
    (SQUAD.format(faction="space  WOLVES", alias="other", bs=3), "units[1].name"),  # spelled otherwise
    (SQUAD.format(faction="", alias="other", bs=3), "units[1].name"),              # no faction: unique everywhere
    (SQUAD.format(faction="Orks", alias="wolf squad", bs=3), "units[1].aliases[0]"),  # aliases: unique everywhere
])
def test_a_name_repeated_within_a_faction_or_an_alias_anywhere_is_an_error(tmp_path: Path, second: str,
                                                                           where: str) -> None:
    text = _library_text(SQUAD.format(faction="Space Wolves", alias="wolf squad", bs=3), second)
    with pytest.raises(ProfileError, match="duplicate unit") as e:
        load_library([write_profile(tmp_path / "p", text).parent], use_env=False)
    assert e.value.where.endswith(f"test.yaml: {where}")


def test_a_faction_less_unit_clashes_with_a_named_one_in_either_order(tmp_path: Path) -> None:
    text = _library_text(SQUAD.format(faction="", alias="a", bs=3), SQUAD.format(faction="Orks", alias="b", bs=3))
    with pytest.raises(ProfileError, match="duplicate unit name"):
        load_library([write_profile(tmp_path / "p", text).parent], use_env=False)


def test_an_ambiguous_name_lists_faction_qualified_candidates(two: Library) -> None:
    with pytest.raises(ProfileError) as e:
        two.find("battle squad", "unit")
    assert e.value.what == "ambiguous unit name, matches 2: Space Wolves/Battle Squad, T'au Empire/Battle Squad"
    with pytest.raises(ProfileError) as e:
        two.find("battle squad/rifle", "weapon")
    assert "Space Wolves/Battle Squad" in e.value.what


def test_candidates_of_one_faction_keep_their_plain_names(library: Library) -> None:
    with pytest.raises(ProfileError) as e:
        library.find("crisis", "unit")
    assert "ambiguous unit name" in e.value.what and "/" not in e.value.what and "Crisis Sunforge" in e.value.what


# "battle sq": a part of the name ('battle' alone also finds the built-in Wolf Guard Battle Leader)
@pytest.mark.parametrize("query", ["space wolves/battle squad", "SPACE  WOLVES/Battle Squad", "space wolves:battle sq",
                                   "wolf squad"])
def test_a_faction_qualified_name_finds_one_unit(two: Library, query: str) -> None:
    unit = two.find(query, "unit")
    assert (unit.name, unit.faction) == ("Battle Squad", "Space Wolves")


@pytest.mark.parametrize("faction", ["t'au empire", "tau empire", "T’au Empire", "  tau   EMPIRE "])
def test_a_faction_is_named_ignoring_case_spaces_and_apostrophes(two: Library, faction: str) -> None:
    assert two.find(f"{faction}/battle squad", "unit").faction == "T'au Empire"
    assert two.only(faction).factions == ("T'au Empire",)


def test_faction_unit_weapon_picks_that_unit_s_weapon(two: Library) -> None:
    tau = two.find("tau empire/battle squad/rifle", "weapon")
    wolves = two.find("space wolves/battle squad/rifle", "weapon")
    assert (tau.skill, wolves.skill) == (4, 3)
    assert two.find("hammerhead/railgun", "weapon").name == "Railgun"  # UNIT/WEAPON as before
    assert two.find("tau empire/railgun", "weapon").name == "Supremacy railgun"  # FACTION/WEAPON: the alias


def test_the_owner_of_a_weapon_is_the_unit_of_its_faction(two: Library) -> None:
    weapon, owner, _ = resolve_weapon(two, "tau empire/battle squad/rifle")
    assert weapon.skill == 4 and owner is not None and owner.faction == "T'au Empire"
    groups, attacker, _ = resolve_weapons(two, ["t'au empire/battle squad"])
    assert attacker is not None and attacker.faction == "T'au Empire"
    assert [(g.weapon.name, g.weapon.skill, g.count) for g in groups] == [("Rifle", 4, 5)]


@pytest.mark.parametrize(("query", "what"), [
    ("space wolves//rifle", "expected FACTION/UNIT/WEAPON or FACTION/WEAPON"),
    ("hammerhead/", "expected UNIT/WEAPON, with both parts"),
    # a slash after UNIT/ belongs to the weapon's name (BSData has "Shuriken Pistol (Skyreaver w/
    # pistol and blade)"), so these name a weapon that does not exist
    ("space wolves/battle squad/rifle/x", "unknown weapon"),
    ("zzq/b/c", "unknown unit"),
])
def test_a_malformed_qualified_name_is_an_error(two: Library, query: str, what: str) -> None:
    with pytest.raises(ProfileError) as e:
        two.find(query, "weapon")
    assert e.value.what.startswith(what)


def test_only_keeps_one_faction(two: Library) -> None:
    tau = two.only("tau empire")
    assert {u.faction for u in tau.units} == {"T'au Empire"}
    assert tau.find("battle squad", "unit").faction == "T'au Empire"  # no longer ambiguous
    assert two.find("battle squad", "unit", faction="space wolves").faction == "Space Wolves"
    with pytest.raises(ProfileError, match="unknown unit"):
        tau.find("knight paladin", "unit")  # an Imperial Knight, outside the filter
    assert all(w.unit in {u.name for u in tau.units} for w in tau.weapons)


def test_an_unknown_faction_suggests_the_closest(two: Library) -> None:
    with pytest.raises(ProfileError) as e:
        two.only("space wolfs")
    assert (e.value.what, e.value.where) == ("unknown faction", "--faction") and "Space Wolves" in e.value.hint


# --- 3. lazy units ------------------------------------------------------------------------------


def test_a_warm_library_builds_only_the_units_looked_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(profiles.CACHE_ENV_VAR, str(tmp_path / "cache"))
    write_profile(tmp_path / "p", TWO)
    cold = load_library([tmp_path / "p"], use_env=False)
    warm = load_library([tmp_path / "p"], use_env=False)
    assert sum(u is not None for u in warm._index._units) == 0
    railgun = warm.find("railgun", "weapon")
    assert sum(u is not None for u in warm._index._units) == 1
    assert railgun == cold.find("railgun", "weapon") and warm.owner(railgun) == cold.find("gunrig", "unit")
    assert warm.units == cold.units


def test_a_planted_unit_that_breaks_the_model_is_read_again_from_the_files(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(profiles.CACHE_ENV_VAR, str(tmp_path / "cache"))
    write_profile(tmp_path / "p", TWO)
    load_library([tmp_path / "p"], use_env=False)
    [entry] = (tmp_path / "cache" / "profiles").glob("*.marshal")
    doc = profiles.cache._open_entry(entry.read_bytes())
    doc["units"][-1]["sizes"] = [[10, 180], [5, 90]]  # out of order: the rebuild refuses it
    doc["units"][-2]["points"] = 7  # well-formed: served, as long as the entry is used
    entry.write_bytes(profiles.cache._seal_entry(doc))
    planted = load_library([tmp_path / "p"], use_env=False)
    assert planted.find("wolf squad", "unit").points == 7  # the positive control
    assert planted.find("tau squad", "unit").sizes == ((5, 90), (10, 180))  # read again from the file
    assert planted.find("wolf squad", "unit").points == 90


def _squad(faction: str) -> Unit:
    return _units(yaml.safe_load(_library_text(SQUAD.format(faction=faction, alias="x", bs=3))), "x")[0]


def test_a_unit_given_in_code_is_its_own_index() -> None:
    unit = Unit(name="Solo", faction="Orks", models=_squad("Orks").models)
    lib = Library([unit])
    assert lib.find("orks/solo", "unit") is unit and lib.factions == ("Orks",)
    assert isinstance(Library([]).units, tuple)


# --- 4. the command line -------------------------------------------------------------------------


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def test_profiles_show_prints_what_is_not_modelled(tmp_path: Path) -> None:
    write_profile(tmp_path / "p", TWO)
    code, out, err = _run("profiles", "show", "space wolves/battle squad", "--profiles", str(tmp_path / "p"))
    assert code == 0, err
    for text in ("Space Wolves", "unit sizes: 5 models 90 pts, 10 models 180 pts", "may take", "Heavy gun",
                 "abilities not modelled: Oath of Moment, Deep Strike", "not modelled", "Conversion"):
        assert text in out, text
    code, out, _ = _run("profiles", "show", "battle squad", "--faction", "tau empire", "-f", "json",
                        "--profiles", str(tmp_path / "p"))
    assert code == 0 and '"faction": "T\'au Empire"' in out and '"options": [' in out


def test_profiles_list_filters_by_faction(tmp_path: Path) -> None:
    write_profile(tmp_path / "p", TWO)
    code, out, err = _run("profiles", "list", "--faction", "space wolves", "--profiles", str(tmp_path / "p"))
    assert code == 0, err
    assert "Battle Squad" in out and "Knight Paladin" not in out and "Rifle" in out and "Railgun" not in out
    code, _, err = _run("profiles", "list", "--faction", "space wolfs", "--profiles", str(tmp_path / "p"))
    assert code == 1 and err.startswith("Error: --faction: unknown faction") and "Space Wolves" in err


def test_weapons_compare_by_their_unmodelled_abilities_too() -> None:
    rifle: Weapon = _squad("Orks").weapons[0]
    assert weapon_stats(rifle) != weapon_stats(replace(rifle, unmodelled=()))


# --- issue 11, second pass: every faction's candidate is listed ---------------------------------


def _squads(tmp_path: Path, *factions: tuple[str, int]) -> Library:
    text = _library_text(*(SQUAD.format(faction=f, alias=f"squad {i}", bs=bs) for i, (f, bs) in enumerate(factions)))
    return Library(load_file(write_profile(tmp_path, text)))


def test_identical_profiles_of_several_factions_are_each_listed(tmp_path: Path) -> None:
    # the Orks' Rifle is the Space Wolves' profile (BS3+): before, the two were one candidate,
    # named after the first faction found, and an Ork player did not see "Orks/..." at all
    lib = _squads(tmp_path, ("Space Wolves", 3), ("T'au Empire", 4), ("Orks", 3))
    with pytest.raises(ProfileError) as e:
        lib.find("rifle", "weapon")
    assert e.value.what == ("ambiguous weapon name, matches 3: Orks/Battle Squad/Rifle, "
                            "Space Wolves/Battle Squad/Rifle, T'au Empire/Battle Squad/Rifle")
    assert "FACTION/" in (e.value.hint or "")
    # one profile in every faction is no ambiguity: the first is as good as any
    same = _squads(tmp_path / "same", ("Space Wolves", 3), ("Orks", 3))
    assert same.find("rifle", "weapon").skill == 3


def test_many_candidates_list_every_faction_once_with_a_count(tmp_path: Path) -> None:
    # 10 factions with the BS3+ Rifle and one with BS4+ (two profiles): 11 candidates, more than
    # the 8 listed in full, so each faction is listed once, with how many more it has (none here)
    factions = [(f"Faction {chr(65 + i)}", 3) for i in range(10)] + [("Faction K", 4)]
    lib = _squads(tmp_path, *factions)
    with pytest.raises(ProfileError) as e:
        lib.find("rifle", "weapon")
    assert e.value.what.startswith("ambiguous weapon name, matches 11 in 11 factions: Faction A/Battle Squad/Rifle, ")
    assert all(f"Faction {chr(65 + i)}/Battle Squad/Rifle" in e.value.what for i in range(11))
    assert "…" not in e.value.what


def test_the_built_in_lascannon_candidates_name_space_marines() -> None:
    # the Space Marines' Devastator Squad carries a Lascannon (imperium-space-marines.cat) whose
    # profile other factions' units carry too: it used to be listed under another faction only
    lib = load_library(use_env=False)
    with pytest.raises(ProfileError) as e:
        lib.find("lascannon", "weapon")
    assert "Space Marines/" in e.value.what and "(+" in e.value.what
