"""Issue 9 on the command line: several weapons with counts, units firing their loadouts,
``--only``/``--except``, mixed targets (``;``), attached Leaders (``+``, a profile's
``attached``), ``--wounds-left``, ``--allocation``, the per-weapon and per-group output, and
every new error (one line, exit code 1; 2 for usage errors).

Expected numbers are derived here by hand (binomials of auto-hitting, no-save attacks, summed
with exact fractions), never read from the program's output.
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathhammer import api
from mathhammer.cli import app
from mathhammer.errors import InputError

runner = CliRunner()
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
TOL = 1e-9

#: Auto-hitting (TORRENT), wounding T4 on 2+ (S8), no save against Sv3+ (AP-6): each attack is
#: one unsaved wound with probability 5/6, so the damage of n attacks of Damage d is d x Bin(n, 5/6).
P = Fraction(5, 6)
GUN_A = "A2 BS N/A S8 AP-6 D2 [TORRENT]"
GUN_B = "A3 BS N/A S8 AP-6 D1 [TORRENT]"
BIG = "T4 SV3+ W40"  # one model no attack here can destroy: damage is summed as it falls

PROFILES = """\
schema: 1
units:
  - name: Test Squad
    aliases: [tsquad]
    models:
      - {name: Trooper, count: 4, T: 4, Sv: 3, W: 1, weapons: [Gun A, Knife]}
      - {name: Trooper Boss, count: 1, T: 4, Sv: 3, W: 2, weapons: [{name: Gun B, count: 1}, Knife]}
    keywords: [INFANTRY]
    weapons:
      - {name: Gun A, range: 24, A: "2", BS: null, S: 8, AP: -6, D: "1", abilities: [Torrent]}
      - {name: Gun B, range: 24, A: "1", BS: null, S: 8, AP: -6, D: "2", abilities: [Torrent]}
      - {name: Spare gun, range: 24, A: "1", BS: 3, S: 4, AP: 0, D: "1", abilities: []}
      - {name: Knife, range: melee, A: "1", WS: 3, S: 4, AP: 0, D: "1", abilities: []}
  - name: Two Gun Tank
    models: [{name: Two Gun Tank, count: 1, T: 10, Sv: 3, W: 12}]
    keywords: [VEHICLE]
    weapons:
      - {name: Tank cannon, range: 48, A: "1", BS: null, S: 8, AP: -6, D: "3", abilities: [Torrent]}
      - {name: Tank stubber, range: 36, A: "3", BS: 4, S: 4, AP: 0, D: "1", abilities: []}
  - name: Test Hero
    models: [{name: Test Hero, count: 1, T: 4, Sv: 3, W: 4, invulnerable: 4}]
    keywords: [INFANTRY, CHARACTER]
  - name: Guarded Squad
    models: [{name: Guard, count: 3, T: 4, Sv: 3, W: 1}]
    keywords: [INFANTRY]
    attached: [Test Hero]
  - name: Plain Squad
    models: [{name: Plain, count: 3, T: 4, Sv: 3, W: 1}]
    keywords: [INFANTRY]
  - name: Mod Squad
    models: [{name: Modder, count: 1, T: 4, Sv: 3, W: 1, weapons: [Sharp gun, Dull gun]}]
    keywords: [INFANTRY]
    weapons:
      - {name: Sharp gun, range: 24, A: "1", BS: 4, S: 8, AP: -6, D: "1", abilities: [], modifiers: {hit_mod: 1}}
      - {name: Dull gun, range: 24, A: "1", BS: 4, S: 8, AP: -6, D: "1", abilities: []}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("units")
    (path / "test.yaml").write_text(PROFILES)
    return path


def run(*args: str) -> Any:
    return runner.invoke(app, list(args), env=ENV)


def doc(*args: str) -> dict[str, Any]:
    r = run(*args, "-f", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def exact(*args: str) -> dict[str, Any]:
    return doc(*args, "--exact")


def binomial(n: int, damage: int = 1) -> dict[int, Fraction]:
    """Damage of n attacks of Damage ``damage``, each landing with probability P."""
    return {damage * k: comb(n, k) * P**k * (1 - P) ** (n - k) for k in range(n + 1)}


def convolve(*dists: dict[int, Fraction]) -> dict[int, Fraction]:
    out = {0: Fraction(1)}
    for d in dists:
        nxt: dict[int, Fraction] = {}
        for a, p in out.items():
            for b, q in d.items():
                nxt[a + b] = nxt.get(a + b, Fraction(0)) + p * q
        out = nxt
    return out


def probabilities(block: dict[str, Any]) -> dict[int, float]:
    return {row["value"]: row["p"] for row in block["distribution"] if row["p"]}


def assert_distribution(block: dict[str, Any], expected: dict[int, Fraction]) -> None:
    got = probabilities(block)
    want = {k: float(p) for k, p in expected.items() if p}
    assert got.keys() == want.keys()
    for k, p in want.items():
        assert got[k] == pytest.approx(p, abs=TOL)


# --- several weapons, counts ----------------------------------------------------------------

def test_two_weapons_with_counts_sum_by_hand() -> None:
    # 2 models x A2 D2 and 3 models x A3 D1, all at one W40 model: 2 x Bin(4) + Bin(9)
    d = exact("shoot", f"2x {GUN_A}", f"3x {GUN_B}", "-t", BIG)
    expected = convolve(binomial(4, 2), binomial(9, 1))
    assert_distribution(d["damage"], expected)
    assert d["damage"]["mean"] == pytest.approx(float(4 * P * 2 + 9 * P), abs=TOL)
    shares = [(w["name"], w["count"], w["damage"]["mean"]) for w in d["weapons"]]
    assert [s[:2] for s in shares] == [(GUN_A, 2), (GUN_B, 3)]  # an inline weapon is named by its notation
    assert shares[0][2] == pytest.approx(float(8 * P), abs=TOL) and shares[1][2] == pytest.approx(float(9 * P), abs=TOL)
    assert d["attacker"]["weapon"] is None and d["attacker"]["models"] is None
    assert [w["weapon"]["A"] for w in d["weapons"]] == ["2", "3"]


@pytest.mark.parametrize("spelling", ["2x", "2 x", "2×", "2X"])
def test_count_spellings(spelling: str) -> None:
    d = exact("shoot", f"{spelling} {GUN_B}", "-t", BIG)
    assert_distribution(d["damage"], binomial(6))
    assert d["attacker"]["models"] == 2 and d["context"]["firing_models"] == 2


@pytest.mark.parametrize("target", [BIG, "T4 SV3+ W2 MODELS4", "9x T4 SV3+ W1; 1x T4 SV3+ W2"])
def test_listing_a_weapon_twice_equals_2x(target: str) -> None:
    twice = exact("shoot", GUN_B, GUN_B, "-t", target)
    doubled = exact("shoot", f"2x {GUN_B}", "-t", target)
    models = exact("shoot", GUN_B, "-n", "2", "-t", target)
    for key in ("damage", "models_destroyed"):
        assert probabilities(twice[key]) == pytest.approx(probabilities(doubled[key]), abs=TOL)
        assert probabilities(models[key]) == pytest.approx(probabilities(doubled[key]), abs=TOL)
    assert sum(w["damage"]["mean"] for w in twice["weapons"]) == pytest.approx(twice["damage"]["mean"], abs=TOL)


def test_models_multiplies_every_weapon_count() -> None:
    d = exact("shoot", f"2x {GUN_A}", GUN_B, "-n", "3", "-t", BIG)
    assert [w["count"] for w in d["weapons"]] == [6, 3]
    assert d["damage"]["mean"] == pytest.approx(float(12 * P * 2 + 9 * P), abs=TOL)


def test_single_weapon_json_has_one_weapon_and_one_group() -> None:
    d = exact("shoot", "railgun", "-t", "knight")
    assert d["attacker"]["weapon"]["name"] == "Supremacy railgun" and d["attacker"]["models"] == 1
    assert [(w["name"], w["count"]) for w in d["weapons"]] == [("Supremacy railgun", 1)]
    assert d["weapons"][0]["damage"]["mean"] == pytest.approx(d["damage"]["mean"], abs=TOL)
    (group,) = d["groups"]
    assert group["name"] == d["target"]["name"] and group["leader"] is False and group["W"] == 26
    assert group["models_destroyed"]["distribution"] == d["models_destroyed"]["distribution"]
    assert group["p_destroyed"] == d["p_destroy_unit"]
    assert {"mean", "sd", "sem", "median", "p05", "p95", "distribution"} <= set(group["models_destroyed"])
    assert d["target"]["wounds_left"] is None


def test_table_shows_each_weapon_and_group() -> None:
    r = run("shoot", f"2x {GUN_A}", f"3x {GUN_B}", "-t", "4x T4 SV3+ W1; 1x T4 SV3+ W3", "--exact")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "By weapon" in out and "By model group" in out and "P(destroyed)" in out
    assert "2× inline weapon" in out and "3× inline weapon" in out
    assert "T4 SV3+ W3" in out


def test_ascii_table_shows_them_too() -> None:
    r = runner.invoke(app, ["shoot", f"2x {GUN_A}", GUN_B, "-t", "4x T4 SV3+ W1; 1x T4 SV3+ W3", "--exact"],
                      env={**ENV, "PYTHONIOENCODING": "ascii"})
    assert r.exit_code == 0, r.output
    assert "By weapon" in r.stdout and "By model group" in r.stdout


# --- units and their loadouts ---------------------------------------------------------------

def test_unit_fires_its_loadout(folder: Path) -> None:
    # 4 Troopers with Gun A (A2 D1) and the Boss with Gun B (A1 D2)
    d = exact("shoot", "test squad", "-t", BIG, "--profiles", str(folder))
    assert [(w["name"], w["count"]) for w in d["weapons"]] == [("Gun A", 4), ("Gun B", 1)]
    assert_distribution(d["damage"], convolve(binomial(8), binomial(1, 2)))
    assert d["attacker"]["unit"] == "Test Squad"


def test_fight_uses_the_melee_loadout(folder: Path) -> None:
    d = exact("fight", "tsquad", "-t", BIG, "--profiles", str(folder))
    assert d["attacker"]["weapon"]["name"] == "Knife" and d["attacker"]["models"] == 5


@pytest.mark.parametrize(("option", "weapons", "expected"), [
    (["--only", "gun b"], [("Gun B", 1)], binomial(1, 2)),
    (["--except", "Gun B"], [("Gun A", 4)], binomial(8)),
    (["--only", "gun a", "--only", "gun b"], [("Gun A", 4), ("Gun B", 1)], convolve(binomial(8), binomial(1, 2))),
])
def test_only_and_except(folder: Path, option: list[str], weapons: list[tuple[str, int]],
                         expected: dict[int, Fraction]) -> None:
    d = exact("shoot", "test squad", *option, "-t", BIG, "--profiles", str(folder))
    assert [(w["name"], w["count"]) for w in d["weapons"]] == weapons
    assert_distribution(d["damage"], expected)


def test_a_count_before_a_unit_multiplies_its_loadout(folder: Path) -> None:
    d = exact("shoot", "2x test squad", "--only", "gun a", "-t", BIG, "--profiles", str(folder))
    assert d["attacker"]["models"] == 8
    assert_distribution(d["damage"], binomial(16))


def test_unit_without_loadout_and_only(folder: Path) -> None:
    d = exact("shoot", "two gun tank", "--only", "cannon", "-t", BIG, "--profiles", str(folder))
    assert d["attacker"]["weapon"]["name"] == "Tank cannon"
    assert_distribution(d["damage"], binomial(1, 3))
    d = exact("shoot", "two gun tank", "--except", "stubber", "-t", BIG, "--profiles", str(folder))
    assert d["attacker"]["weapon"]["name"] == "Tank cannon"


def test_a_unit_and_a_weapon_together(folder: Path) -> None:
    d = exact("shoot", "two gun tank/tank cannon", f"2x {GUN_B}", "-t", BIG, "--profiles", str(folder))
    assert [(w["name"], w["count"]) for w in d["weapons"]] == [("Tank cannon", 1), (GUN_B, 2)]
    assert_distribution(d["damage"], convolve(binomial(1, 3), binomial(6)))
    assert d["attacker"]["unit"] == "Two Gun Tank"


def test_a_weapons_own_modifiers_stay_with_it(folder: Path) -> None:
    # BS4+ S8 AP-6 at T4 Sv3+: the Sharp gun (+1 to hit from its profile) lands 4/6 x 5/6, the
    # Dull gun 3/6 x 5/6; one shared context would give both the same
    d = exact("shoot", "mod squad", "-t", BIG, "--profiles", str(folder), "--explain")
    sharp, dull = d["weapons"]
    assert sharp["damage"]["mean"] == pytest.approx(float(Fraction(4, 6) * P), abs=TOL)
    assert dull["damage"]["mean"] == pytest.approx(float(Fraction(3, 6) * P), abs=TOL)
    assert d["context"]["hit_mod"] == 0
    assert any("hit-mod +1 from weapon Sharp gun" in line for line in d["explain"])
    # the command line wins for both
    d = exact("shoot", "mod squad", "-t", BIG, "--profiles", str(folder), "--hit-mod", "-1")
    assert [w["damage"]["mean"] for w in d["weapons"]] == pytest.approx([float(Fraction(2, 6) * P)] * 2, abs=TOL)


# --- targets: groups, allocation, Leaders, wounds left ----------------------------------------

ONE_SHOT = "A1 BS N/A S8 AP-6 D1 [TORRENT]"


def test_R_9_1_allocation_durable_and_listed() -> None:
    # one D1 wound (probability 5/6) at 9 W1 models and one W2 model
    target = "9x T4 SV3+ W1; 1x T4 SV3+ W2"
    durable = exact("shoot", ONE_SHOT, "-t", target)  # the W2 model soaks it: nobody dies
    listed = exact("shoot", ONE_SHOT, "-t", target, "--allocation", "listed")  # a W1 model dies
    assert durable["models_destroyed"]["mean"] == pytest.approx(0.0, abs=TOL)
    assert listed["models_destroyed"]["mean"] == pytest.approx(float(P), abs=TOL)
    assert [g["name"] for g in durable["groups"]] == ["T4 SV3+ W2", "T4 SV3+ W1"]
    assert [g["name"] for g in listed["groups"]] == ["T4 SV3+ W1", "T4 SV3+ W2"]
    assert listed["groups"][0]["models_destroyed"]["mean"] == pytest.approx(float(P), abs=TOL)
    assert listed["groups"][0]["p_destroyed"] == 0.0 and listed["groups"][0]["models"] == 9
    assert durable["target"]["allocation"] == "durable" and listed["target"]["allocation"] == "listed"
    assert durable["target"]["models"] == 10 and durable["target"]["W"] is None and durable["target"]["T"] == 4


def test_R_9_4_leader_takes_nothing_while_the_bodyguard_lives() -> None:
    # 3 wounds at 5 W1 Bodyguards and a W3 CHARACTER: the Leader is never touched
    d = exact("shoot", "A3 BS N/A S8 AP-6 D1 [TORRENT]", "-t", "5x T4 SV3+ W1; 1x T4 SV3+ W3 [CHARACTER]")
    bodyguard, leader = d["groups"]
    assert leader["leader"] is True and bodyguard["leader"] is False and d["target"]["attached"] is True
    assert leader["p_destroyed"] == 0.0 and leader["models_destroyed"]["mean"] == 0.0
    assert bodyguard["models_destroyed"]["mean"] == pytest.approx(float(3 * P), abs=TOL)


def test_R_9_4_precision_picks_out_the_leader() -> None:
    # PRECISION: all three D1 wounds go to the W3 Leader, who dies only if all three land
    d = exact("shoot", "A3 BS N/A S8 AP-6 D1 [TORRENT, PRECISION]", "-t", "5x T4 SV3+ W1; 1x T4 SV3+ W3 [CHARACTER]")
    leader = d["groups"][1]
    assert leader["p_destroyed"] == pytest.approx(float(P**3), abs=TOL)
    assert d["groups"][0]["models_destroyed"]["mean"] == 0.0


def test_attach_with_plus(folder: Path) -> None:
    d = doc("shoot", ONE_SHOT, "-t", "plain squad + test hero", "--profiles", str(folder), "--trials", "200",
            "--seed", "1")
    assert d["target"]["name"] == "Plain Squad + Test Hero" and d["target"]["attached"] is True
    assert [(g["name"], g["leader"]) for g in d["groups"]] == [("Plain Squad", False), ("Test Hero", True)]
    assert d["groups"][1]["invulnerable"] == 4


def test_profile_attached_leader_by_default(folder: Path) -> None:
    d = doc("shoot", ONE_SHOT, "-t", "guarded squad", "--profiles", str(folder), "--trials", "200", "--seed", "1",
            "--explain")
    assert [(g["name"], g["leader"]) for g in d["groups"]] == [("Guarded Squad", False), ("Test Hero", True)]
    assert any("attached by its profile: Test Hero" in line for line in d["explain"])


def test_two_leaders_are_allowed_and_noted(folder: Path) -> None:
    d = doc("shoot", ONE_SHOT, "-t", "plain squad + test hero + T4 SV3+ W3 [CHARACTER]", "--profiles", str(folder),
            "--trials", "100", "--seed", "1")
    assert [g["leader"] for g in d["groups"]] == [False, True, True]
    assert any("2 Leaders attached" in line for line in d["explain"])


@pytest.mark.parametrize("how", [["--wounds-left", "1"], ["WOUNDS-LEFT=1"]])
def test_wounds_left(how: list[str]) -> None:
    # D2 at two W5 models, the first with 1 wound left: a wound destroys it and the excess is lost
    target = "T4 SV3+ W5 MODELS2" + (f" {how[0]}" if how[0].startswith("WOUNDS") else "")
    options = how if how[0].startswith("--") else []
    d = exact("shoot", "A1 BS N/A S8 AP-6 D2 [TORRENT]", "-t", target, *options)
    assert d["damage"]["mean"] == pytest.approx(float(P), abs=TOL)
    assert d["models_destroyed"]["mean"] == pytest.approx(float(P), abs=TOL)
    assert d["target"]["wounds_left"] == 1
    fresh = exact("shoot", "A1 BS N/A S8 AP-6 D2 [TORRENT]", "-t", "T4 SV3+ W5 MODELS2")
    assert fresh["damage"]["mean"] == pytest.approx(float(2 * P), abs=TOL) and fresh["models_destroyed"]["mean"] == 0


def test_wounds_left_in_the_table() -> None:
    r = run("shoot", "railgun", "-t", "knight", "--wounds-left", "3", "--exact")
    assert r.exit_code == 0, r.output
    assert "has 3 wounds left" in r.stdout


def test_target_models_for_one_statline_still_works() -> None:
    d = exact("shoot", ONE_SHOT, "-t", "T4 SV3+ W1", "--target-models", "7")
    assert d["target"]["models"] == 7 and d["groups"][0]["models"] == 7


def test_a_count_before_a_target_unit_is_its_size(folder: Path) -> None:
    d = exact("shoot", ONE_SHOT, "-t", "7x plain squad", "--profiles", str(folder))
    assert d["target"]["models"] == 7
    r = run("shoot", ONE_SHOT, "-t", "7x plain squad", "--target-models", "5", "--profiles", str(folder), "--exact")
    assert r.exit_code == 1 and "--target-models: the number of models is given twice" in r.stderr


@pytest.mark.parametrize(("target", "spelled"), [("T4 SV3+ W1 MODELS5", "MODELS5"), ("T4 SV3+ W1 MODELS=5", "MODELS5"),
                                               ("5x T4 SV3+ W1", "5x"), ("5X T4 SV3+ W1 [INFANTRY]", "5x")])
def test_an_inline_count_and_target_models_are_the_count_given_twice(target: str, spelled: str) -> None:
    """As for a count before a unit's name: neither silently wins (a Blast weapon's mean
    differs between 5 and 10 models)."""
    r = run("shoot", ONE_SHOT, "-t", target, "--target-models", "10", "--exact")
    assert r.exit_code == 1 and r.stdout == ""
    assert f"--target-models: the number of models is given twice (got '10 and {spelled}')" in r.stderr
    with pytest.raises(InputError, match="given twice"):
        api.target(target, target_models=10)


def test_explain_shows_the_allocation() -> None:
    r = run("shoot", ONE_SHOT, "-t", "9x T4 SV3+ W1; 1x T4 SV3+ W2", "--exact", "--explain")
    assert r.exit_code == 0, r.output
    assert "R-9.1" in r.stdout and "allocation order" in r.stdout


# --- errors: one line (and a hint), exit 1; usage errors exit 2 -------------------------------

ERRORS = [
    (["shoot", f"0x {GUN_B}", "-t", BIG], "Error: weapon: a weapon count must be at least 1", "0x"),
    (["shoot", "-t", BIG, "--", f"-2x {GUN_B}"], "Error: weapon: a weapon count must be at least 1", "-2x"),
    (["shoot", f"-2x {GUN_B}", "-t", BIG], "Error: weapon: a weapon count must be at least 1", "-2x"),
    (["shoot", f"1001x {GUN_B}", "-t", BIG], "a weapon count must be at most 1,000", ""),
    (["shoot", "2x", "-t", BIG], "a weapon count with nothing after it", "2x heavy rail rifle"),
    (["shoot", f"2x {GUN_B}", "-n", "600", "-t", BIG], "1,200 models would fire", ""),
    (["shoot", GUN_B, "A1 WS3+ S4 AP0 D1", "-t", BIG], "is a melee weapon; shoot resolves ranged attacks",
     "mathhammer fight"),
    (["fight", "A1 WS3+ S4 AP0 D1", GUN_B, "-t", BIG], "is a ranged weapon; fight resolves melee attacks",
     "mathhammer shoot"),
    (["shoot", GUN_B, "knight paladin/reaper chainsword - strike", "-t", BIG],
     "'Reaper chainsword - strike' of Knight Paladin is a melee weapon", ""),
    (["shoot", GUN_B, "no such gun", "-t", BIG], "Error: weapon: unknown weapon or unit (got 'no such gun')", ""),
    (["shoot", GUN_B, "--only", "gun a", "-t", BIG], "Error: --only: selects weapons of a unit's loadout", ""),
    (["shoot", GUN_B, "-t", "9x T4 SV3+ W1;"], "group 2: empty model group", "separated by ';'"),
    (["shoot", GUN_B, "-t", "; T4 SV3+ W1"], "group 1: empty model group", ""),
    (["shoot", GUN_B, "-t", "0x T4 SV3+ W1; T4 SV3+ W2"], "a count of models must be at least 1", ""),
    (["shoot", GUN_B, "-t", "9x T4 SV3+; 1x T4 SV3+ W2"], "group 1: missing W (wounds)", ""),
    (["shoot", GUN_B, "-t", "2x T4 SV3+ W1 MODELS2"], "the number of models is given twice", ""),
    (["shoot", GUN_B, "-t", "9x T4 SV3+ W1 WOUNDS-LEFT=1; 1x T4 SV3+ W2"],
     "only its first model can start wounded", "--allocation listed"),
    (["shoot", GUN_B, "-t", "T4 SV3+ W2 WOUNDS-LEFT=3"], "WOUNDS-LEFT must be 1 to the model's W (2)", ""),
    (["shoot", GUN_B, "-t", "T4 SV3+ W2 WOUNDS-LEFT=1; T4 SV3+ W2 WOUNDS-LEFT=1"], "WOUNDS-LEFT given in two groups",
     ""),
    (["shoot", GUN_B, "-t", "5x T4 SV3+ W1; T4 SV3+ W3 WOUNDS-LEFT=1 [CHARACTER]"], "a wounded Leader", ""),
    (["shoot", GUN_B, "-t", "knight", "--wounds-left", "27"], "Error: --wounds-left: must be 1 to the first model's W",
     "(got 27)"),
    (["shoot", GUN_B, "-t", "knight", "--wounds-left", "0"], "Error: --wounds-left:", "(got 0)"),
    (["shoot", GUN_B, "-t", "T4 SV3+ W2 WOUNDS-LEFT=1", "--wounds-left", "1"], "given twice", ""),
    (["shoot", GUN_B, "-t", "T4 SV3+ W1; T4 SV3+ W2", "--target-models", "5"],
     "--target-models: applies to a target of one model group", ""),
    (["shoot", GUN_B, "-t", "intercessors +"], "nothing on one side of '+'", ""),
    (["shoot", GUN_B, "-t", "intercessors + T4 SV3+ W3"], "only a CHARACTER leads a unit", "[CHARACTER]"),
]


@pytest.mark.parametrize(("args", "first", "more"), ERRORS)
def test_bad_input_is_one_line_exit_1(args: list[str], first: str, more: str) -> None:
    r = run(*args, "--exact")
    assert r.exit_code == 1, r.output
    assert r.stdout == "" and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2 and first in lines[0] and more in r.stderr
    if len(lines) == 2:
        assert lines[1].startswith("  hint: ")


UNIT_ERRORS = [
    (["shoot", "two gun tank"], "unit 'Two Gun Tank' has 2 ranged weapons: Tank cannon, Tank stubber", "--only"),
    (["shoot", "test squad", "--only", "lascannon"], "Error: --only: unit 'Test Squad' has no weapon of that name",
     "Gun A, Gun B, Spare gun, Knife"),
    (["shoot", "test squad", "two gun tank", "--except", "lascannon"],
     "Error: --except: no unit given has a weapon of that name", "Tank stubber"),
    (["shoot", "test squad", "--only", "knife"], "'Knife' of Test Squad is a melee weapon", "mathhammer fight"),
    (["shoot", "test squad", "--only", "spare gun"], "is not in the default loadout of unit 'Test Squad'",
     "tsquad/Spare gun"),
    (["shoot", "test squad", "--except", "gun a", "--except", "gun b"], "leaves no ranged weapon of unit 'Test Squad'",
     "4x Gun A"),
    (["shoot", "test squad", "--only", "gun", "-t", BIG], "ambiguous in unit 'Test Squad'", ""),
    (["shoot", "test squad", "--only", "gun a", "--except", "Gun A"], "cannot be both selected and left out", ""),
    (["shoot", "two gun tank", "test squad", "--only", "gun a"], "leaves no ranged weapon of unit 'Two Gun Tank'", ""),
    (["fight", "two gun tank"], "unit 'Two Gun Tank' has no melee weapon", ""),
    (["shoot", GUN_B, "-t", "plain squad + plain squad"], "only a CHARACTER leads a unit", ""),
    (["shoot", GUN_B, "-t", "plain squad + T4 SV3+ W3 WOUNDS-LEFT=1 [CHARACTER]"], "a wounded Leader", ""),
]


@pytest.mark.parametrize(("args", "first", "more"), UNIT_ERRORS)
def test_unit_errors_are_one_line_exit_1(folder: Path, args: list[str], first: str, more: str) -> None:
    if "-t" not in args:
        args = [*args, "-t", BIG]
    r = run(*args, "--exact", "--profiles", str(folder))
    assert r.exit_code == 1, r.output
    assert r.stdout == "" and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2 and first in lines[0] and more in r.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (["shoot", "-t", BIG], "WEAPON"),
    (["shoot", GUN_B, "-t", BIG, "--allocation", "random"], "'random'"),
    (["shoot", GUN_B, "-t", BIG, "--wounds-left", "lots"], "'lots'"),
])
def test_usage_errors_exit_2(args: list[str], fragment: str) -> None:
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("Error: ") and fragment in r.stderr and "Traceback" not in r.stderr


def test_every_weapon_given_is_fired_or_named_in_an_error() -> None:
    d = exact("shoot", GUN_A, GUN_B, f"2x {GUN_A}", "-t", BIG)
    assert [w["count"] for w in d["weapons"]] == [1, 1, 2]
    r = run("shoot", GUN_A, "A1 WS3+ S4 AP0 D1 [LANCE]", "-t", BIG, "--exact")
    assert r.exit_code == 1 and "A1 WS3+ S4 AP0 D1 [LANCE]" in r.stderr
