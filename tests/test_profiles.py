"""Profile YAML: loading, errors with file and key path, round trips, lookup."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mathhammer.errors import ProfileError
from mathhammer.model import Ability
from mathhammer.profiles import Library, dump_unit, load_file, load_library
from tests.profile_files import write_profile

GOOD = """\
schema: 1
units:
  - name: Test Squad
    aliases: [testers]
    points: 100
    models:
      - {name: Tester, count: 5, T: 4, Sv: 3, W: 2}
    invulnerable: {save: 4, ranged_only: false}
    feel_no_pain: 6
    keywords: [infantry]
    weapons:
      - {name: Test gun, range: 24, A: "2", BS: 3, S: 4, AP: -1, D: "D3", abilities: [Sustained Hits 1]}
      - {name: Test blade, range: melee, A: "3", WS: 3, S: 5, AP: -2, D: "1", abilities: []}
"""


def test_load_good_file(tmp_path: Path) -> None:
    [u] = load_file(write_profile(tmp_path, GOOD))
    assert u.name == "Test Squad" and u.model_count == 5 and u.invulnerable == 4 and u.feel_no_pain == 6
    assert u.keywords == {"INFANTRY"}
    gun, blade = u.weapons
    assert gun.get(Ability.SUSTAINED_HITS) is not None and gun.unit == "Test Squad"
    assert blade.melee and blade.skill == 3


@pytest.mark.parametrize(("old", "new", "where", "value"), [
    ('D: "D3"', 'D: "d7x"', "test.yaml: units[0].weapons[0].D", "d7x"),
    ("T: 4", "T: four", "test.yaml: units[0].models[0].T", "four"),
    ("BS: 3", "BS: 9", "test.yaml: units[0].weapons[0].BS", "9"),
    ("AP: -1", "AP: 2", "test.yaml: units[0].weapons[0].AP", "2"),
    ("points: 100", "pionts: 100", "test.yaml: units[0].pionts", "pionts"),
    ("[Sustained Hits 1]", "[Sustained Hitz 1]", "test.yaml: units[0].weapons[0].abilities[0]", "Sustained Hitz 1"),
    ("range: 24", "range: far", "test.yaml: units[0].weapons[0].range", "far"),
    ("schema: 1", "schema: 7", "test.yaml: schema", "7"),
    ("{save: 4, ranged_only: false}", "{save: 4, ranged_only: maybe}", "test.yaml: units[0].invulnerable.ranged_only", "maybe"),
])
def test_errors_name_file_path_and_value(tmp_path: Path, old: str, new: str, where: str, value: str) -> None:
    assert old in GOOD
    p = write_profile(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ProfileError) as e:
        load_file(p, label="test.yaml")
    assert e.value.where == where
    assert value in e.value.message()


def test_a_bad_dice_expression_says_so_once(tmp_path: Path) -> None:
    p = write_profile(tmp_path, GOOD.replace('D: "D3"', 'D: "d7x"'))
    with pytest.raises(ProfileError) as e:
        load_file(p, label="test.yaml")
    assert e.value.what == "expected a dice expression like 'D6+1'"  # not "...like 'D6+1': expected a dice expression"
    with pytest.raises(ProfileError) as e:
        load_file(write_profile(tmp_path, GOOD.replace('D: "D3"', 'D: "D6+99999"')), label="test.yaml")
    assert e.value.what == "expected a dice expression like 'D6+1': value larger than 999"


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    p = write_profile(tmp_path, "schema: 1\nunits: [\n  {name: x\n")
    with pytest.raises(ProfileError) as e:
        load_file(p, label="bad.yaml")
    assert e.value.where == "bad.yaml" and "YAML syntax error at line" in e.value.what


def test_missing_key(tmp_path: Path) -> None:
    p = write_profile(tmp_path, GOOD.replace("      - {name: Tester, count: 5, T: 4, Sv: 3, W: 2}", "      - {name: Tester, count: 5, T: 4, Sv: 3}"))
    with pytest.raises(ProfileError, match="missing key 'W'"):
        load_file(p)


def test_dump_and_load_round_trip(tmp_path: Path, library: Library) -> None:
    """Every built-in unit dumps and loads back equal: one file per faction, as the library is kept
    (the whole library in one file would pass the 1,000,000-byte limit of a profile file)."""
    from itertools import groupby

    loaded: list[object] = []
    for n, (_, group) in enumerate(groupby(library.units, key=lambda u: u.faction)):
        data = {"schema": 1, "units": [dump_unit(u) for u in group]}
        p = write_profile(tmp_path, yaml.safe_dump(data, allow_unicode=True, sort_keys=False), f"f{n}.yaml")
        loaded += load_file(p)
    assert tuple(loaded) == library.units


def test_reference_library_loads(library: Library) -> None:
    # generated from BSData: one file per faction (profiles/*.json), every unit of it
    files = sorted((Path(__file__).resolve().parents[1] / "profiles").glob("*.json"))
    assert len(library.factions) == len(files) >= 30
    assert len(library.units) >= 1000
    names = {u.name for u in library.units}
    assert {"Tidewall Gunrig", "Knight Paladin", "Intercessor Squad", "Boyz"} <= names


def test_gunrig_from_the_seed(library: Library) -> None:
    u = library.find("gunrig", "unit")
    assert u.points == 90
    m = u.models[0]
    assert (m.toughness, m.save, m.wounds, m.move) == (8, 3, 14, 4)
    assert {"FORTIFICATION", "VEHICLE", "TRANSPORT", "FLY"} <= u.keywords
    [w] = u.weapons
    assert (w.name, str(w.attacks), w.skill, w.strength, w.ap, str(w.damage), w.range_inches) == \
        ("Supremacy railgun", "1", 5, 20, -5, "D6+6", 72)
    assert w.has(Ability.DEVASTATING_WOUNDS) and w.has(Ability.TWIN_LINKED)


@pytest.mark.parametrize(("query", "kind", "name"), [
    ("railgun", "weapon", "Supremacy railgun"), ("RAILGUN", "weapon", "Supremacy railgun"),
    ("knight", "unit", "Knight Paladin"), ("intercessors", "unit", "Intercessor Squad"),
    ("Intercessor", "unit", "Intercessor Squad"), ("supremacy", "weapon", "Supremacy railgun"),
    ("hammerhead/railgun", "weapon", "Railgun"), ("Hammerhead Gunship:Railgun", "weapon", "Railgun"),
])
def test_lookup(library: Library, query: str, kind: str, name: str) -> None:
    assert library.find(query, kind).name == name


def test_knight_statline(library: Library) -> None:
    u = library.find("knight", "unit")
    m = u.models[0]
    assert (m.toughness, m.save, m.wounds, u.invulnerable, u.invulnerable_ranged_only) == (11, 3, 26, 5, True)


def test_ambiguous_lists_candidates(library: Library) -> None:
    with pytest.raises(ProfileError) as e:
        library.find("t'au empire/plasma", "weapon")  # Broadside's twin, the Fireknife's and Coldstar's rifles...
    assert "ambiguous" in e.value.what and "Plasma rifle" in e.value.what and "Twin plasma rifle" in e.value.what


def test_unknown_suggests_three(library: Library) -> None:
    with pytest.raises(ProfileError) as e:
        library.find("raiilgun", "weapon")
    assert "unknown weapon" in e.value.what and "railgun" in e.value.hint


def test_a_plural_finds_the_unit_when_the_name_finds_nothing(library: Library) -> None:
    # issue 11's example spells the target "armiger warglaives"
    assert library.find("armiger warglaives", "unit").name == "Armiger Warglaive"
    assert library.find("Supremacy railguns", "weapon").name == "Supremacy railgun"
    assert library.find("armiger warglaives", "unit", substring=False) is None  # whole names only
    # a name that ends in s is itself found first: Crisis is no plural of "Crisi"
    assert library.find("crisis sunforge battlesuits", "unit").name == "Crisis Sunforge Battlesuits"
    with pytest.raises(ProfileError, match="unknown unit"):
        library.find("armiger warglaivess", "unit")  # one s, once


@pytest.mark.parametrize("query", ["0", "-1", "1-0", " 1 "])
def test_a_query_without_a_letter_is_no_part_of_a_name(library: Library, query: str) -> None:
    """"0" and "-1" are pieces of "AX-1-0 Tiger Shark": unknown, never that unit."""
    assert library.find("AX-1-0", "unit").name == "AX-1-0 Tiger Shark"  # a whole name still matches
    for kind in ("unit", "weapon"):
        with pytest.raises(ProfileError, match=f"unknown {kind}"):
            library.find(query, kind)


def test_identical_weapons_in_several_units_are_one(library: Library) -> None:
    # the Hammerhead, Devilfish, Piranha... each carry the same Seeker missile (profiles/tau-empire.json; the
    # Crucible units' BS 3+ copies are left out while a current unit matches)
    carriers = {u.name for u in library.units for w in u.weapons if w.name == "Seeker missile"}
    assert len(carriers) >= 3 and "Hammerhead Gunship" in carriers
    w = library.find("seeker missile", "weapon")
    assert (w.name, str(w.attacks), w.skill, w.strength, w.ap, str(w.damage)) == ("Seeker missile", "1", 4, 14, -3, "D6+1")


def test_user_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_profile(tmp_path, GOOD)
    assert load_library([tmp_path]).find("testers", "unit").name == "Test Squad"
    monkeypatch.setenv("MATHHAMMER_PROFILES", str(tmp_path))
    assert load_library().find("test gun", "weapon").name == "Test gun"


def test_missing_user_folder(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as e:
        load_library([tmp_path / "nope"])
    assert e.value.where == "--profiles" and "nope" in e.value.message()


def test_every_statlines_unit_is_in_the_library(library: Library, shared_data: Path) -> None:
    rows = yaml.safe_load((shared_data / "statlines.yaml").read_text())
    for row in rows:
        base = row["unit"].split(" (")[0]
        # the row's catalogue names its faction ("Imperium - Space Marines.cat" -> Space Marines): a unit
        # name such as Terminator Squad is in several factions
        faction = row["src"].removesuffix(".cat").removesuffix(" - Library").removesuffix(" Library").split(" - ")[-1]
        unit = library.find(base, "unit", substring=False, faction=faction)
        assert unit is not None, row["unit"]
        first = row["profiles"][0]
        main = max(unit.models, key=lambda m: m.count)
        assert (main.toughness, main.save, main.wounds) == (first["T"], int(str(first["Sv"]).rstrip("+")), first["W"]), row["unit"]
        for w in row.get("weapons", []):
            name = w[0].replace("➤ ", "")
            assert any(x.name.startswith(name) for x in unit.weapons), (row["unit"], name)


def test_parsed_profiles_are_cached_and_invalidated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setenv("MATHHAMMER_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "profiles"
    folder.mkdir()
    p = write_profile(folder, GOOD)
    first = load_library([folder], use_env=False).find("testers", "unit")
    assert list((tmp_path / "cache" / "profiles").glob("*.marshal"))
    assert load_library([folder], use_env=False).find("testers", "unit") == first  # from the cache
    p.write_text(GOOD.replace("points: 100", "points: 120"))
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert load_library([folder], use_env=False).find("testers", "unit").points == 120  # the edit is seen
    p.write_text(GOOD.replace("T: 4", "T: four"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 2 * 10**9))
    with pytest.raises(ProfileError):  # errors are never hidden by the cache
        load_library([folder], use_env=False)


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The labels of the profile files load_library reads from now on."""
    from mathhammer.profiles import library as module

    reads: list[str] = []
    real = module._read_bytes

    def counted(path: Path, label: str) -> bytes:
        reads.append(label)
        return real(path, label)

    monkeypatch.setattr(module, "_read_bytes", counted)
    return reads


def test_a_library_of_settled_files_is_shared_within_the_process(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A second load of the same unchanged files reads none of them; any edit is seen, even one
    that keeps the size and puts the modification time back (the change time moves)."""
    import os
    import time

    from mathhammer.profiles import library as module

    if os.name != "posix":
        pytest.skip("the sharing is for POSIX systems only (elsewhere the change time is not one)")
    monkeypatch.setattr(module, "_SETTLED_NS", 0)  # files written just now count as settled
    folder = tmp_path / "profiles"
    folder.mkdir()
    p = write_profile(folder, GOOD)
    reads = _count_reads(monkeypatch)
    first = load_library([folder], use_env=False).find("testers", "unit")
    assert len(reads) > 1 and reads[-1] == str(p)
    reads.clear()
    assert load_library([folder], use_env=False).find("testers", "unit") == first
    assert reads == []
    st = p.stat()
    time.sleep(0.05)  # past a clock tick of the file system's times (4 ms where they are not fine-grained)
    p.write_text(GOOD.replace("points: 100", "points: 120"))  # same size
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns
    assert load_library([folder], use_env=False).find("testers", "unit").points == 120
    assert str(p) in reads
    reads.clear()
    (folder / "more.yaml").write_text(GOOD.replace("Test Squad", "Other Squad").replace("testers", "others"))
    assert load_library([folder], use_env=False).find("others", "unit").name == "Other Squad"  # a file added
    assert str(p) in reads


def test_recently_changed_files_are_always_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file changed in the last seconds may keep its times through another edit (a file
    system's clock tick): such files are read on every load. A library with an error is never
    kept either (a guard: the error is raised before anything could be kept)."""
    from mathhammer.profiles import library as module

    folder = tmp_path / "profiles"
    folder.mkdir()
    p = write_profile(folder, GOOD)
    reads = _count_reads(monkeypatch)
    load_library([folder], use_env=False)
    load_library([folder], use_env=False)
    assert reads.count(str(p)) == 2
    monkeypatch.setattr(module, "_SETTLED_NS", 0)
    p.write_text(GOOD.replace("T: 4", "T: four"))
    for _ in range(2):
        with pytest.raises(ProfileError):
            load_library([folder], use_env=False)
    assert reads.count(str(p)) == 4


def test_the_built_in_folder_is_looked_for_once_and_each_caller_gets_its_own_list() -> None:
    from mathhammer.profiles import builtin_dirs
    from mathhammer.profiles import library as module

    first = builtin_dirs()
    first.append(Path("/elsewhere"))  # a caller's change is its own
    assert builtin_dirs() == first[:1] and first[0].is_dir()
    assert module._builtin_dirs.cache_info().hits >= 1
    labels = [label for _, label, _ in module._library_files((), use_env=False)]
    assert labels and all(label.startswith("profiles/") and "/" not in label[len("profiles/"):] for label in labels)
