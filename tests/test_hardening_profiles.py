"""Hostile and careless profile files (issue 7): each is one error naming the file, or is read
as written; and the cache of parsed profiles never runs, trusts or serves what it should not."""

from __future__ import annotations

import codecs
import marshal
import os
import pickle
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mathhammer import profiles
from mathhammer.errors import ProfileError
from mathhammer.limits import (
    MAX_AP,
    MAX_CHARACTERISTIC,
    MAX_PROFILE_BYTES,
    MAX_RANGE,
    MAX_TARGET_MODELS,
    MAX_WOUNDS,
    MAX_YAML_DEPTH,
)
from mathhammer.profiles import Library, load_file, load_library
from tests.profile_files import profile_error, write_profile

ROOT = Path(__file__).resolve().parent.parent

UNIT = """\
schema: 1
units:
  - name: Test Squad
    aliases: [testers]
    points: 100
    models:
      - {name: Tester, count: 5, T: 4, Sv: 3, W: 2}
    weapons:
      - {name: Test gun, aliases: [tgun], range: 24, A: "2", BS: 3, S: 4, AP: -1, D: "1", abilities: []}
"""


# --- 1. duplicate keys -------------------------------------------------------------------------


def test_duplicate_key_in_a_flow_mapping_names_file_line_and_key(tmp_path: Path) -> None:
    p = write_profile(tmp_path, UNIT.replace("T: 4, Sv: 3, W: 2}", "T: 4, Sv: 3, W: 2, T: 9}"))
    e = profile_error(p)
    assert e.where == "test.yaml" and e.value == "T"
    assert "duplicate key at line 7" in e.what and "first given at line 7" in e.what


def test_duplicate_key_in_a_block_mapping(tmp_path: Path) -> None:
    p = write_profile(tmp_path, UNIT.replace("    points: 100\n", "    points: 100\n    points: 90\n"))
    e = profile_error(p)
    assert e.value == "points" and "duplicate key at line 6" in e.what and "first given at line 5" in e.what


def test_quoted_and_plain_spellings_of_a_key_are_the_same_key(tmp_path: Path) -> None:
    p = write_profile(tmp_path, UNIT.replace("T: 4, Sv: 3, W: 2}", "T: 4, Sv: 3, W: 2, \"T\": 9}"))
    assert profile_error(p).value == "T"


def test_anchors_aliases_and_merge_keys_still_load(tmp_path: Path) -> None:
    text = textwrap.dedent("""\
        schema: 1
        units:
          - name: Test Squad
            models:
              - &tester {name: Tester, count: 5, T: 4, Sv: 3, W: 2}
              - {<<: *tester, name: Sergeant, count: 1, W: 3}
            weapons: []
        """)
    [u] = load_file(write_profile(tmp_path, text))
    assert [(m.name, m.count, m.toughness, m.wounds) for m in u.models] == [("Tester", 5, 4, 2), ("Sergeant", 1, 4, 3)]


# --- 2. duplicate names across folders, and the same folder given twice ---------------------------


def _other(name: str = "Other Squad", alias: str = "others", weapon_alias: str = "ogun", strength: int = 5) -> str:
    return (UNIT.replace("Test Squad", name).replace("[testers]", f"[{alias}]")
            .replace("Test gun, aliases: [tgun]", f"Other gun, aliases: [{weapon_alias}]")
            .replace("S: 4", f"S: {strength}"))


@pytest.mark.parametrize(("other", "place", "what", "value"), [
    (_other(name="test  SQUAD"), "units[0].name", "duplicate unit name", "test  SQUAD"),
    (_other(alias="Testers"), "units[0].aliases[0]", "duplicate unit alias", "Testers"),
    (_other(weapon_alias="TGUN"), "units[0].weapons[0].aliases[0]", "duplicate weapon alias", "TGUN"),
], ids=["unit-name", "unit-alias", "weapon-alias"])
def test_duplicate_names_name_both_places(tmp_path: Path, other: str, place: str, what: str, value: str) -> None:
    first = write_profile(tmp_path / "a", UNIT, "first.yaml")
    second = write_profile(tmp_path / "b", other, "second.yaml")
    with pytest.raises(ProfileError) as e:
        load_library([tmp_path / "a", tmp_path / "b"], use_env=False)
    assert e.value.where == f"{second}: {place}" and e.value.value == value
    assert what in e.value.what and f"{first}: {place}" in e.value.what


def test_a_user_unit_may_not_take_a_built_in_alias(tmp_path: Path) -> None:
    write_profile(tmp_path, _other(alias="knight"))
    with pytest.raises(ProfileError) as e:
        load_library([tmp_path], use_env=False)
    assert "duplicate unit alias" in e.value.what and "profiles/imperial-knights.json" in e.value.what


def test_duplicates_within_one_file(tmp_path: Path) -> None:
    text = UNIT + textwrap.indent(_other(alias="testers").split("units:\n", 1)[1], "")
    with pytest.raises(ProfileError) as e:
        load_file(write_profile(tmp_path, text), label="test.yaml")
    assert e.value.where == "test.yaml: units[1].aliases[0]" and "test.yaml: units[0].aliases[0]" in e.value.what


def test_identical_weapons_may_share_an_alias(tmp_path: Path) -> None:
    """A Meltagun carried by two units is one weapon; so is its alias."""
    write_profile(tmp_path, _other(weapon_alias="tgun", strength=4).replace("Other gun", "Test gun"), "other.yaml")
    write_profile(tmp_path, UNIT)
    lib = load_library([tmp_path], use_env=False)
    assert lib.find("tgun", "weapon").name == "Test gun"


def test_the_same_folder_twice_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mine"
    write_profile(folder, UNIT)
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    monkeypatch.setenv(profiles.ENV_VAR, str(folder))
    lib = load_library([folder, Path(f"{folder}/"), tmp_path / "link", folder / ".." / "mine"])
    assert lib.find("testers", "unit").name == "Test Squad"
    assert lib.find("test gun", "weapon").name == "Test gun"
    assert [u.name for u in lib.units].count("Test Squad") == 1


def test_the_built_in_folder_given_again_is_read_once(library: Library) -> None:
    lib = load_library(profiles.builtin_dirs(), use_env=False)  # read twice, every name would be a duplicate
    assert lib.find("knight", "unit").name == "Knight Paladin"
    assert len(lib.units) == len(library.units)


def test_a_linked_file_is_read_once(tmp_path: Path) -> None:
    write_profile(tmp_path / "a", UNIT)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "same.yaml").symlink_to(tmp_path / "a" / "test.yaml")
    assert load_library([tmp_path / "a", tmp_path / "b"], use_env=False).find("testers", "unit").points == 100


def test_hidden_files_are_skipped(tmp_path: Path) -> None:
    """Ruling: editor lock files and back-ups (``.#x.yaml``, ``.x.yaml.swp``) are not profiles."""
    write_profile(tmp_path, UNIT)
    (tmp_path / ".#test.yaml").symlink_to(tmp_path / "missing")
    write_profile(tmp_path, UNIT, ".test.yaml")
    assert load_library([tmp_path], use_env=False).find("testers", "unit").name == "Test Squad"


def test_unit_slash_with_a_missing_part_names_the_whole_query(library: Library) -> None:
    for query in ("hammerhead/", "/railgun", "hammerhead:"):
        with pytest.raises(ProfileError) as e:
            library.find(query, "weapon")
        assert e.value.value == query


# --- 3. values: types, dice where a number is needed, limits ----------------------------------------


def test_melta_with_dice_names_file_and_path(tmp_path: Path) -> None:
    """Ruling M19: Melta X takes a number only."""
    e = profile_error(write_profile(tmp_path, UNIT.replace("abilities: []", "abilities: [MELTA D3]")))
    assert e.where == "test.yaml: units[0].weapons[0].abilities[0]" and e.value == "MELTA D3"


@pytest.mark.parametrize(("old", "new", "path"), [
    ("S: 4", "S: 4.0", "units[0].weapons[0].S"),
    ("S: 4", 'S: "4"', "units[0].weapons[0].S"),
    ("S: 4", "S: true", "units[0].weapons[0].S"),
    ("AP: -1", "AP: -1.5", "units[0].weapons[0].AP"),
    ("BS: 3", "BS: 3.0", "units[0].weapons[0].BS"),
    ("range: 24", "range: 24.5", "units[0].weapons[0].range"),
    ("range: 24", "range: true", "units[0].weapons[0].range"),
    ('A: "2"', "A: 2.5", "units[0].weapons[0].A"),
    ('D: "1"', "D: [1]", "units[0].weapons[0].D"),
    ("T: 4", "T: 4.0", "units[0].models[0].T"),
    ("T: 4", "T: yes", "units[0].models[0].T"),
    ("W: 2", 'W: "2"', "units[0].models[0].W"),
    ("count: 5", "count: 5.0", "units[0].models[0].count"),
    ("Sv: 3", "Sv: 3+", "units[0].models[0].Sv"),
])
def test_a_number_of_the_wrong_type_is_anprofile_error(tmp_path: Path, old: str, new: str, path: str) -> None:
    assert old in UNIT
    assert profile_error(write_profile(tmp_path, UNIT.replace(old, new))).where == f"test.yaml: {path}"


@pytest.mark.parametrize(("old", "at_limit", "beyond", "path"), [
    ("S: 4", f"S: {MAX_CHARACTERISTIC}", f"S: {MAX_CHARACTERISTIC + 1}", "units[0].weapons[0].S"),
    ("T: 4", f"T: {MAX_CHARACTERISTIC}", f"T: {MAX_CHARACTERISTIC + 1}", "units[0].models[0].T"),
    ("W: 2", f"W: {MAX_WOUNDS}", f"W: {MAX_WOUNDS + 1}", "units[0].models[0].W"),
    ("AP: -1", f"AP: {-MAX_AP}", f"AP: {-MAX_AP - 1}", "units[0].weapons[0].AP"),
    ("range: 24", f"range: {MAX_RANGE}", f"range: {MAX_RANGE + 1}", "units[0].weapons[0].range"),
    ("count: 5", f"count: {MAX_TARGET_MODELS}", f"count: {MAX_TARGET_MODELS + 1}", "units[0].models[0].count"),
    ("S: 4", "S: 4", "S: 99999999999999999999", "units[0].weapons[0].S"),
])
def test_documented_limits_apply_to_profiles(tmp_path: Path, old: str, at_limit: str, beyond: str, path: str) -> None:
    assert old in UNIT
    load_file(write_profile(tmp_path, UNIT.replace(old, at_limit)))
    e = profile_error(write_profile(tmp_path, UNIT.replace(old, beyond)))
    assert e.where == f"test.yaml: {path}" and beyond.split()[-1] in e.message()


def test_the_models_of_a_unit_add_up_to_at_most_the_limit(tmp_path: Path) -> None:
    def two(second: int) -> str:
        models = (f"      - {{name: Tester, count: {MAX_TARGET_MODELS - 600}, T: 4, Sv: 3, W: 2}}\n"
                  f"      - {{name: Boss, count: {second}, T: 4, Sv: 3, W: 2}}")
        return UNIT.replace("      - {name: Tester, count: 5, T: 4, Sv: 3, W: 2}", models)

    assert load_file(write_profile(tmp_path, two(600)))[0].model_count == MAX_TARGET_MODELS
    e = profile_error(write_profile(tmp_path, two(601)))
    assert e.where == "test.yaml: units[0].models" and e.value == str(MAX_TARGET_MODELS + 1)


def test_a_save_of_7_is_read(tmp_path: Path) -> None:
    """Sv 7 (7+) is a save that only a +1 modifier can pass (R-7.2/R-7.3), not an error."""
    [u] = load_file(write_profile(tmp_path, UNIT.replace("Sv: 3", "Sv: 7")))
    assert u.models[0].save == 7


def test_a_number_too_long_for_python_is_an_error_with_its_line(tmp_path: Path) -> None:
    e = profile_error(write_profile(tmp_path, UNIT.replace("T: 4", "T: " + "9" * 5000)))
    assert e.where == "test.yaml" and "line 7" in e.what and len(e.message()) < 300


# --- 4. files that are not profile text ------------------------------------------------------------

UTF8 = UNIT.replace("Tester", "Testér")


@pytest.mark.parametrize(("data", "what"), [
    (codecs.BOM_UTF16_LE + UTF8.encode("utf-16-le"), "UTF-16"),
    (codecs.BOM_UTF16_BE + UTF8.encode("utf-16-be"), "UTF-16"),
    (UTF8.encode("utf-16-le"), "NUL byte"),
    (UTF8.encode("utf-16-be"), "NUL byte"),
    (UTF8.encode("utf-32"), "UTF-32"),
    (UTF8.encode("latin-1"), "not UTF-8 text: byte 0xe9 at line 7"),
    (bytes(range(256)) * 4, "NUL byte"),
    (b"\x7fELF\x02\x01\x01" + bytes(range(1, 200)), "not UTF-8"),
    (b"", "empty profile file"),
    (b"  \n\n", "empty profile file"),
    (b"# only a comment\n", "empty profile file"),
], ids=["utf16le-bom", "utf16be-bom", "utf16le", "utf16be", "utf32", "latin1", "bytes", "elf", "empty", "blank",
        "comment"])
def test_files_that_are_not_profile_text(tmp_path: Path, data: bytes, what: str) -> None:
    e = profile_error(write_profile(tmp_path, data))
    assert e.where == "test.yaml" and what in e.what


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    assert load_file(write_profile(tmp_path, codecs.BOM_UTF8 + UTF8.encode()))[0].models[0].name == "Testér"


def test_a_fifo_in_a_profiles_folder_does_not_block(tmp_path: Path) -> None:
    """Opening a FIFO for reading waits for a writer forever: the child would hang, not fail."""
    os.mkfifo(tmp_path / "x.yaml")
    done = _in_a_small_process(textwrap.dedent(f"""
        from pathlib import Path
        from mathhammer.errors import ProfileError
        from mathhammer.profiles import load_library
        try:
            load_library([Path({str(tmp_path)!r})], use_env=False)
        except ProfileError as e:
            print(e.message())
        """), timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"{tmp_path / 'x.yaml'}: not a regular file")


def test_a_folder_named_yaml(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").mkdir()
    with pytest.raises(ProfileError) as e:
        load_library([tmp_path], use_env=False)
    assert e.value.where == str(tmp_path / "x.yaml") and "folder" in e.value.what


def test_an_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write_profile(tmp_path, UNIT)
    real_open = os.open

    def denied(path: object, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == p:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", denied)
    e = profile_error(p)
    assert e.where == "test.yaml" and "Permission denied" in e.what


def test_a_dangling_link(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").symlink_to(tmp_path / "gone.yaml")
    with pytest.raises(ProfileError) as e:
        load_library([tmp_path], use_env=False)
    assert e.value.where == str(tmp_path / "x.yaml") and "cannot read file" in e.value.what


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    p = write_profile(tmp_path, UNIT)
    os.truncate(p, MAX_PROFILE_BYTES + 1)  # sparse: no disk used
    e = profile_error(p)
    assert "file too large" in e.what and f"{MAX_PROFILE_BYTES:,}" in e.what
    assert e.value == f"{MAX_PROFILE_BYTES + 1:,} bytes"


def _bomb(levels: int) -> str:
    """A "billion laughs": each level is a list of ten aliases of the level below."""
    lines = ["schema: 1", "source:", "  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join([*lines, f"units: *a{levels - 1}", ""])


def _in_a_small_process(code: str, memory: int = 1 << 30, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child limited to ``memory`` bytes, so a regression fails this test
    (MemoryError, a crash, a hang past ``timeout``) instead of taking the machine with it."""
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                              preexec_fn=limit, cwd=ROOT, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {timeout} s")


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    p = write_profile(tmp_path, _bomb(9))  # 10**9 strings once expanded
    done = _in_a_small_process(textwrap.dedent(f"""
        from pathlib import Path
        from mathhammer.errors import ProfileError
        from mathhammer.profiles import load_file
        try:
            load_file(Path({str(p)!r}), label="bomb.yaml")
        except ProfileError as e:
            print(e.message())
        """))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("bomb.yaml: more than 1,000,000 values once aliases are expanded")


def test_a_small_alias_expansion_is_fine_and_its_error_is_short(tmp_path: Path) -> None:
    """Under the bound, a wrong value is reported, but never shown whole."""
    e = profile_error(write_profile(tmp_path, _bomb(4)))  # 10,000 strings: allowed, and wrong as `units`
    assert e.where == "test.yaml: source" and len(e.message()) < 300


def test_deep_nesting_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """libyaml's composer recurses in C: 200,000 ``[`` used to kill the process (SIGSEGV)."""
    p = write_profile(tmp_path, "schema: 1\nunits: " + "[" * 200_000 + "]" * 200_000 + "\n")
    done = _in_a_small_process(textwrap.dedent(f"""
        from pathlib import Path
        from mathhammer.errors import ProfileError
        from mathhammer.profiles import load_file
        try:
            load_file(Path({str(p)!r}), label="deep.yaml")
        except ProfileError as e:
            print(e.message())
        """))
    assert done.returncode == 0, done.stderr[-2000:]
    # Our own depth check, or (PyYAML >= 6.0.4) libyaml's, whichever stops it first: one line either way.
    assert done.stdout.startswith((f"deep.yaml: nested more than {MAX_YAML_DEPTH} levels deep",
                                   "deep.yaml: YAML syntax error")), done.stdout
    assert "nest" in done.stdout and done.stdout.count("\n") == 1


@pytest.mark.parametrize(("text", "what"), [
    ("schema: 1\nunits: &u [*u]\n", "an alias inside its own anchor"),
    ("schema: 1\nunits: *nowhere\n", "undefined alias"),
    ("schema: 1\nunits: []\n---\nschema: 1\n", "one YAML document"),
    ("schema: 1\nsource: 2024-13-45\nunits: []\n", "unreadable YAML value"),
], ids=["recursive", "undefined", "two-documents", "bad-date"])
def test_other_malformed_yaml(tmp_path: Path, text: str, what: str) -> None:
    e = profile_error(write_profile(tmp_path, text))
    assert e.where == "test.yaml" and what in e.what


def test_a_huge_wrong_value_is_shown_cut_short(tmp_path: Path) -> None:
    e = profile_error(write_profile(tmp_path, UNIT.replace("points: 100", "points: " + "x" * 500_000)))
    assert e.where == "test.yaml: units[0].points" and len(e.message()) < 200 and e.message().endswith("...')")


# --- 5. the cache --------------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(profiles.CACHE_ENV_VAR, str(folder))
    return folder / "profiles"


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.glob("*") if not p.name.endswith(".tmp"))


def test_an_entry_is_written_private_and_used(tmp_path: Path, cache: Path) -> None:
    write_profile(tmp_path / "p", UNIT)
    first = load_library([tmp_path / "p"], use_env=False)
    [entry] = _entries(cache)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert load_library([tmp_path / "p"], use_env=False).units == first.units


def test_the_rebuild_gives_back_every_reference_unit(library: Library) -> None:
    plain = [profiles._plain(u) for u in library.units]
    assert profiles._Rebuild().units(marshal.loads(marshal.dumps(plain))) == list(library.units)


def test_an_edit_that_keeps_size_and_time_is_seen(tmp_path: Path, cache: Path) -> None:
    p = write_profile(tmp_path / "p", UNIT)
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 100
    st = p.stat()
    p.write_text(UNIT.replace("points: 100", "points: 120"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 120


def test_another_version_of_the_code_does_not_read_the_entry(tmp_path: Path, cache: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    monkeypatch.setattr(profiles.cache, "_FINGERPRINT", ["a changed model.py"])
    load_library([tmp_path / "p"], use_env=False)
    assert len(_entries(cache)) == 2


def _replace_entry(cache: Path, data: bytes, mode: int = 0o600) -> Path:
    [entry] = _entries(cache)
    entry.write_bytes(data)
    entry.chmod(mode)
    return entry


class _Plant:
    """Unpickling this runs code: it would create the file ``ran``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def test_a_planted_pickle_is_never_run(tmp_path: Path, cache: Path) -> None:
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    marker = tmp_path / "ran"
    _replace_entry(cache, pickle.dumps(_Plant(marker)))
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 100
    assert not marker.exists()


def _valid_entry(cache: Path, points: int) -> bytes:
    """The current entry with every unit's points changed, and a correct checksum."""
    [entry] = _entries(cache)
    doc = profiles.cache._open_entry(entry.read_bytes())
    for u in doc["units"]:
        u["points"] = points
    return profiles.cache._seal_entry(doc)


def test_a_valid_private_entry_is_served(tmp_path: Path, cache: Path) -> None:
    """The positive control of the tests below: a well-formed entry that is the user's own and
    private is what the library returns (points 5, not the file's 100), so "ignored" means
    something there."""
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    _replace_entry(cache, _valid_entry(cache, 5), mode=0o600)
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 5


@pytest.mark.parametrize("damage", ["truncated", "empty", "flipped", "wrong types", "not marshal"])
def test_a_damaged_entry_is_ignored(tmp_path: Path, cache: Path, damage: str) -> None:
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    [entry] = _entries(cache)
    blob = entry.read_bytes()
    if damage == "wrong types":  # a correct checksum over a unit of the wrong shape
        blob = profiles.cache._seal_entry({**profiles.cache._open_entry(blob), "units": [{"name": 1}]})
    data = {"truncated": blob[: len(blob) // 2], "empty": b"", "flipped": blob[:-1] + bytes([blob[-1] ^ 1]),
            "wrong types": blob, "not marshal": b"\x00" * 32 + b"{not: marshal}"}[damage]
    _replace_entry(cache, data)
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 100


def test_an_entry_others_may_write_is_ignored(tmp_path: Path, cache: Path) -> None:
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    _replace_entry(cache, _valid_entry(cache, 5), mode=0o666)
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 100


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_an_entry_of_another_user_is_ignored(tmp_path: Path, cache: Path) -> None:
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    entry = _replace_entry(cache, _valid_entry(cache, 5))
    os.chown(entry, 4242, 4242)
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 100


def test_an_entry_that_breaks_the_model_invariants_is_ignored(tmp_path: Path, cache: Path) -> None:
    """Even a well-formed entry cannot carry a value the model refuses (here T beyond the limit)."""
    write_profile(tmp_path / "p", UNIT)
    load_library([tmp_path / "p"], use_env=False)
    [entry] = _entries(cache)
    doc = profiles.cache._open_entry(entry.read_bytes())
    doc["units"][-1]["models"][0]["toughness"] = MAX_CHARACTERISTIC + 1
    _replace_entry(cache, profiles.cache._seal_entry(doc))
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").models[0].toughness == 4


def test_an_unwritable_cache_is_only_slower(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv(profiles.CACHE_ENV_VAR, str(blocker))
    write_profile(tmp_path / "p", UNIT)
    assert load_library([tmp_path / "p"], use_env=False).find("testers", "unit").points == 100


def test_a_library_with_errors_is_never_cached(tmp_path: Path, cache: Path) -> None:
    write_profile(tmp_path / "a", UNIT)
    write_profile(tmp_path / "b", UNIT, "again.yaml")
    for _ in range(2):
        with pytest.raises(ProfileError, match="duplicate unit name"):
            load_library([tmp_path / "a", tmp_path / "b"], use_env=False)
    assert not _entries(cache)


# --- 6. the documentation states what the code does ----------------------------------------------


def test_docs_state_the_profile_limits_and_the_save_of_7() -> None:
    text = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    for number in (MAX_CHARACTERISTIC, MAX_WOUNDS, MAX_AP, MAX_RANGE, MAX_TARGET_MODELS):
        assert f"{number:,}" in text or str(number) in text, number
    assert f"{MAX_PROFILE_BYTES:,}" in text
    assert "no armour save" not in text and "R-7.3" in text
    assert "../shared" not in text and "RULES.md" not in text
