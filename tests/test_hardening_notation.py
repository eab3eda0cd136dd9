"""Issue 7, inline notation: nothing typed is silently read as something else.

Each hostile input is an error naming the token and the value (exit 1 on the command line), an
ambiguous ``D6`` is read by ruling M6 with a warning, and every weapon line the tool prints
parses back to the same weapon.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mathhammer import dice
from mathhammer.cli import app
from mathhammer.describe import weapon_line
from mathhammer.errors import InputError, ProfileError
from mathhammer.limits import MAX_AP, MAX_CHARACTERISTIC, MAX_RANGE, MAX_TARGET_MODELS, MAX_WOUNDS
from mathhammer.model import Ability, AbilitySpec, DiceExpr, ModelStats, Unit, Weapon, unit_target
from mathhammer.notation import parse_ability, parse_target, parse_target_unit, parse_weapon, parse_weapon_noted
from mathhammer.resolve import resolve_target, resolve_weapon

runner = CliRunner()
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
TARGET = "T4 SV3+ W1"
WEAPON = "A2 BS3+ S4 AP0 D1"


def cli(*args: str):
    return runner.invoke(app, list(args), env=ENV)


def weapon_error(text: str) -> ProfileError:
    with pytest.raises(ProfileError) as e:
        parse_weapon(text)
    return e.value


def target_error(text: str) -> ProfileError:
    with pytest.raises(ProfileError) as e:
        parse_target(text)
    return e.value


def stats(w: Weapon) -> tuple[object, ...]:
    """Everything of a weapon that the game uses (the name, unit and aliases aside)."""
    return (w.attacks, w.skill, w.strength, w.ap, w.damage, w.range_inches, w.melee,
            sorted((a.ability.value, str(a.value), a.keyword) for a in w.abilities))


# 1. ability values: X of Sustained Hits / Melta / Rapid Fire is at least 1; Anti X+ is 2+..6+ --------

@pytest.mark.parametrize("ability", [
    "SUSTAINED HITS -1", "MELTA -2", "RAPID FIRE -1", "SUSTAINED HITS 0", "MELTA 0", "RAPID FIRE 0",
    "Sustained Hits -D3", "SUSTAINED HITS +1", "RAPID FIRE 0D6", "MELTA D3", "MELTA D6+1", "MELTA -0",
    "SUSTAINED HITS 1 2", "RAPID FIRE \u22121", "ANTI-INFANTRY 7+", "ANTI-INFANTRY 1+", "ANTI-FLY 0+",
    "ANTI-VEHICLE 99999999999999999999+", "ANTI-VEHICLE -4+",
])
def test_bad_ability_values_are_errors_naming_the_ability(ability: str) -> None:
    e = weapon_error(f"{WEAPON} [{ability}]")
    assert repr(ability) in e.message()  # the value shown is the ability as typed
    with pytest.raises(ProfileError):
        parse_ability(ability)


@pytest.mark.parametrize(("ability", "value"), [
    ("SUSTAINED HITS 2", DiceExpr(plus=2)), ("Sustained-Hits D3", DiceExpr(count=1, sides=3)),
    ("MELTA 4", DiceExpr(plus=4)), ("Rapid Fire D6+3", DiceExpr(count=1, sides=6, plus=3)),
    ("RAPID FIRE 1", DiceExpr(plus=1)),
])
def test_positive_ability_values_still_parse(ability: str, value: DiceExpr) -> None:
    assert parse_ability(ability).value == value


def test_melta_with_dice_is_an_error_citing_m19() -> None:
    assert "M19" in weapon_error(f"{WEAPON} [MELTA D3]").message()


# 2. ASCII digits only ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "A\u0663 BS3+ S4 AP0 D1",          # Arabic-Indic 3
    "A \uff12 BS3+ S4 AP0 D1",         # fullwidth 2, as a separate token
    "A2 BS\uff13+ S4 AP0 D1",
    "A2 BS3+ S\u00b2 AP0 D1",          # superscript 2 (str.isdigit() is True)
    "A2 BS3+ S4 AP-\u0661 D1",
    "A2 BS3+ S4 AP0 D\u0663",
    "A2 BS3+ S4 AP0 D D\u0666",
    "A2 BS3+ S\U0001d7d2 AP0 D1",      # mathematical bold 4
    "A2 BS3+ \u00df4 AP0 D1",          # sharp s: 'ß'.upper() == 'SS'
    "A2 BS3+ \u017f4 AP0 D1",          # long s: matches 'S' case-insensitively
    "A2 BS3+ S4 AP\u22121 D1",         # minus sign, not a hyphen
    "A2 BS3+ S4 AP0 D1 [SUSTAINED HITS \u0663]",
    "A2 BS3+ S4 AP0 D1 [ANTI-VEHICLE \u0664+]",
])
def test_non_ascii_digits_in_a_weapon_are_errors(text: str) -> None:
    weapon_error(text)


@pytest.mark.parametrize("text", [
    "T\u0664 SV3+ W1", "T4 SV\u0663+ W1", "T4 SV3+ W\u0661", "T4 SV3+ W1 MODELS\u0661\u0660",
    "T4 SV3+ W1 INV\uff14+", "T4 SV3+ W1 \u0665++", "T4 SV3+ W1 [\uff33\uff34\uff25\uff21\uff2c\uff34\uff28]",
])
def test_non_ascii_digits_in_a_target_are_errors(text: str) -> None:
    target_error(text)


@pytest.mark.parametrize("text", ["\u0663", "D\u0666", "\u00b2D6", "D6+\u0661", "\uff12"])
def test_dice_take_ascii_digits_only(text: str) -> None:
    with pytest.raises(ProfileError):
        dice.parse(text)


def test_bounded_int_never_converts_a_huge_string() -> None:
    assert dice.bounded_int("0042") == 42
    assert dice.bounded_int("9" * 10_000) > MAX_WOUNDS  # int() would refuse more than 4300 digits
    with pytest.raises(ValueError):
        dice.bounded_int("\u0663")


# 3. upper bounds ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "fragment"), [
    (f"A2 BS3+ S{MAX_CHARACTERISTIC + 1} AP0 D1", f"S{MAX_CHARACTERISTIC + 1}"),
    (f"A2 BS3+ S4 AP-{MAX_AP + 1} D1", f"AP-{MAX_AP + 1}"),
    ("A2 BS3+ S4 AP-99999999999 D1", "AP-99999999999"),
    (f"A2 BS3+ S4 AP0 D1 RANGE {MAX_RANGE + 1}", f"RANGE{MAX_RANGE + 1}"),
    (f'{MAX_RANGE + 1}" A2 BS3+ S4 AP0 D1', f"RANGE{MAX_RANGE + 1}"),
    ("A2 BS3+ S99999999999999999999 AP0 D1", "S99999999999999999999"),
    ("A2 BS3+ S4 AP0 D1 RANGE 0", "RANGE0"),
])
def test_weapon_upper_bounds(text: str, fragment: str) -> None:
    assert fragment in weapon_error(text).message()


def test_weapon_limits_themselves_are_accepted() -> None:
    w = parse_weapon(f'{MAX_RANGE}" A2 BS3+ S{MAX_CHARACTERISTIC} AP-{MAX_AP} D1')
    assert (w.range_inches, w.strength, w.ap) == (MAX_RANGE, MAX_CHARACTERISTIC, -MAX_AP)


@pytest.mark.parametrize(("text", "fragment"), [
    (f"T{MAX_CHARACTERISTIC + 1} SV3+ W1", f"T{MAX_CHARACTERISTIC + 1}"),
    (f"T4 SV3+ W{MAX_WOUNDS + 1}", f"W{MAX_WOUNDS + 1}"),
    ("T4 SV3+ W99999999999999999999", "W99999999999999999999"),
    (f"T4 SV3+ W1 MODELS{MAX_TARGET_MODELS + 1}", f"MODELS{MAX_TARGET_MODELS + 1}"),
    ("T4 SV3+ W1 MODELS99999999999", "MODELS99999999999"),
    ("T4 SV3+ W" + "9" * 5000, "W999"),
])
def test_target_upper_bounds(text: str, fragment: str) -> None:
    assert fragment in target_error(text).message()


def test_target_limits_themselves_are_accepted() -> None:
    t = parse_target(f"T{MAX_CHARACTERISTIC} SV3+ W{MAX_WOUNDS} MODELS{MAX_TARGET_MODELS}")
    assert (t.toughness, t.wounds, t.models) == (MAX_CHARACTERISTIC, MAX_WOUNDS, MAX_TARGET_MODELS)


def test_huge_values_in_an_error_are_cut_short() -> None:
    e = weapon_error("A2 BS3+ S4 AP0 D " + "9" * 5000)
    assert len(e.message()) < 400


# 4. a target's bracketed words: only STEALTH, HALF DAMAGE and -1 DAMAGE are abilities -------------------

@pytest.mark.parametrize("word", ["-2 DAMAGE", "-1 DMG", "HALF DMG", "-1 Damage-", "+1 SAVE", "5++", "4+",
                                  "FEEL NO PAIN 5+", "INVULNERABLE SAVE", "-1 TO HIT", "STEALTHY", "HALF DAMAGE 2",
                                  "DAMAGE REDUCTION", "INFANTRY 2", "\u22121 DAMAGE", "[X", "INFANTRY '",
                                  "LETHAL HITS", "MELTA x", "Anti-Fly 2+", "SUSTAINED HITS 1"])
def test_words_that_are_not_keywords_are_errors(word: str) -> None:
    e = target_error(f"{TARGET} [{word}]")
    assert word in e.message() or word.startswith("[")


@pytest.mark.parametrize(("words", "stealth", "half", "reduction", "keywords"), [
    ("Stealth", True, False, 0, set()),
    ("HALF-DAMAGE", False, True, 0, set()),
    ("half damage, -1 Damage", False, True, 1, set()),
    ("Infantry, Epic-Hero, T'au Empire", False, False, 0, {"INFANTRY", "EPIC HERO", "T'AU EMPIRE"}),
])
def test_modelled_abilities_and_keywords(words: str, stealth: bool, half: bool, reduction: int,
                                         keywords: set[str]) -> None:
    t = parse_target(f"{TARGET} [{words}]")
    assert (t.stealth, t.half_damage, t.damage_reduction, set(t.keywords)) == (stealth, half, reduction, keywords)


# 5. D3 / D6 written glued to D: a fixed Damage (ruling M6), with a warning ---------------------------------

@pytest.mark.parametrize(("token", "value"), [("D6", 6), ("D3", 3), ("d6", 6), ("D06", 6)])
def test_glued_d3_d6_is_fixed_damage_with_a_warning(token: str, value: int) -> None:
    w, notes = parse_weapon_noted(f"A1 BS3+ S4 AP0 {token}")
    assert w.damage == DiceExpr(plus=value)
    assert len(notes) == 1 and f"D D{value}" in notes[0] and f"Damage {value}" in notes[0]


@pytest.mark.parametrize(("token", "damage"), [
    ("D D6", DiceExpr(count=1, sides=6)), ("D=D3", DiceExpr(count=1, sides=3)), ("DD6", DiceExpr(count=1, sides=6)),
    ("D 6", DiceExpr(plus=6)), ("D=6", DiceExpr(plus=6)), ("D:3", DiceExpr(plus=3)), ("D2", DiceExpr(plus=2)),
    ("D D6+6", DiceExpr(count=1, sides=6, plus=6)), ("D2D6", DiceExpr(count=2, sides=6)),
])
def test_unambiguous_damage_has_no_warning(token: str, damage: DiceExpr) -> None:
    w, notes = parse_weapon_noted(f"A6 BS3+ S4 AP0 {token}")
    assert (w.damage, w.attacks, notes) == (damage, DiceExpr(plus=6), ())


@pytest.mark.parametrize("token", ["D3+1", "D6+2", "d6+6"])
def test_glued_dice_plus_is_an_ambiguity_error(token: str) -> None:
    e = weapon_error(f"A1 BS3+ S4 AP0 {token}")
    assert repr(token.upper()) in e.message() and f"'D {token.upper()}'" in e.hint


@pytest.mark.parametrize(("brackets", "note"), [
    ("SUSTAINED HITS 1, SUSTAINED HITS 2", "SUSTAINED HITS 1, SUSTAINED HITS 2: one ability written 2 times; only the "
                                           "largest, SUSTAINED HITS 2, counts (R-4.5)"),
    ("MELTA 4, MELTA 2", "MELTA 4, MELTA 2: one ability written 2 times; only the largest, MELTA 4, counts (R-4.5)"),
    ("LETHAL HITS, lethal hits, LETHAL HITS", "LETHAL HITS written 3 times: a weapon has an ability or not (R-4.5)"),
    ("ANTI-INFANTRY 4+, ANTI-VEHICLE 4+, ANTI-INFANTRY 2+", "ANTI-INFANTRY 4+, ANTI-INFANTRY 2+: one ability written 2"
                                                          " times; only the largest, ANTI-INFANTRY 2+, counts (R-4.5)"),
])
def test_R_4_5_an_ability_written_twice_is_said_to_count_once(brackets: str, note: str) -> None:
    """Not an error (R-4.5, M77 say which counts), but never silent."""
    _, notes = parse_weapon_noted(f"{WEAPON} [{brackets}]")
    assert notes == (note,)
    _, notes = parse_weapon_noted(f"{WEAPON} [ANTI-INFANTRY 4+, ANTI-VEHICLE 2+, SUSTAINED HITS 1, LETHAL HITS]")
    assert notes == ()  # two ANTI abilities of different keywords both count


@pytest.mark.parametrize(("text", "hint"), [("AP\u22121", "write '\u2212' as - (ASCII)"),
                                          ("AP\u20131", "write '\u2013' as - (ASCII)"),
                                          ("A\uff12", "write digits as 0-9 and signs as + - \" (ASCII)")])
def test_a_look_alike_sign_is_named_in_the_hint(text: str, hint: str) -> None:
    """A word processor's minus sign or dash, not a digit, is what stops the notation."""
    e = weapon_error(f"A2 BS3+ S4 D1 {text}")
    assert e.hint == hint


def test_the_warning_reaches_stderr_and_the_json_warnings() -> None:
    r = cli("shoot", "A1 BS3+ S4 AP0 D6", "-t", TARGET, "--exact", "-f", "json")
    assert r.exit_code == 0, r.output
    assert "Warning: inline weapon 'A1 BS3+ S4 AP0 D6': D6 read as Damage 6" in r.stderr
    assert any("D6 read as Damage 6" in w for w in json.loads(r.stdout)["warnings"])


# 6. every weapon line the tool prints parses back ------------------------------------------------------

def test_every_built_in_weapon_line_parses_back(library) -> None:
    assert library.weapons
    for w in library.weapons:
        line = weapon_line(w)
        parsed, notes = parse_weapon_noted(line)
        assert stats(parsed) == stats(w), line
        assert notes == (), line  # the printed form is never ambiguous


def test_printed_forms_are_accepted() -> None:
    w = parse_weapon('72" A1 BS N/A S20 AP-5 D D6+6 [DEVASTATING WOUNDS, TORRENT, ANTI-EPIC HERO 3+]')
    assert (w.range_inches, w.skill, w.damage) == (72, None, DiceExpr(count=1, sides=6, plus=6))
    assert weapon_line(parse_weapon("A4 WS3+ S14 AP-4 D6")) == "A4 WS3+ S14 AP-4 D=6"


_KEYWORD = st.lists(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=6), min_size=1, max_size=2).map(" ".join)
_DICE = st.one_of(st.integers(1, 30).map(lambda n: DiceExpr(plus=n)),
                  st.builds(lambda c, s, p: DiceExpr(count=c, sides=s, plus=p), st.integers(1, 3),
                            st.sampled_from([3, 6]), st.integers(0, 6)))
_PLAIN = [a for a in Ability if a not in (Ability.ANTI, Ability.MELTA, Ability.RAPID_FIRE, Ability.SUSTAINED_HITS,
                                          Ability.TORRENT)]


@st.composite
def weapons(draw: st.DrawFn) -> Weapon:
    abilities = [AbilitySpec(ability=a) for a in draw(st.lists(st.sampled_from(_PLAIN), unique=True, max_size=3))]
    if draw(st.booleans()):
        abilities.append(AbilitySpec(ability=Ability.SUSTAINED_HITS, value=draw(_DICE)))
    if draw(st.booleans()):
        abilities.append(AbilitySpec(ability=Ability.RAPID_FIRE, value=draw(_DICE)))
    if draw(st.booleans()):
        abilities.append(AbilitySpec(ability=Ability.MELTA, value=DiceExpr(plus=draw(st.integers(1, 6)))))
    if draw(st.booleans()):
        threshold = DiceExpr(plus=draw(st.integers(2, 6)))
        abilities.append(AbilitySpec(ability=Ability.ANTI, keyword=draw(_KEYWORD), value=threshold))
    torrent = draw(st.booleans())
    if torrent:
        abilities.append(AbilitySpec(ability=Ability.TORRENT))
    melee = draw(st.booleans())
    if melee:  # an inline melee weapon refuses the abilities of ranged weapons, as it refuses a range
        from mathhammer.notation import _RANGED_ONLY

        abilities = [a for a in abilities if a.ability not in _RANGED_ONLY]
        torrent = False
    return Weapon(name="w", attacks=draw(_DICE), skill=None if torrent else draw(st.integers(2, 6)),
                  strength=draw(st.integers(1, MAX_CHARACTERISTIC)), ap=draw(st.integers(-MAX_AP, 0)),
                  damage=draw(_DICE), range_inches=None if melee else draw(st.integers(0, MAX_RANGE)),
                  abilities=tuple(draw(st.permutations(abilities))))


@given(weapons())
def test_any_weapon_line_parses_back_without_warnings(w: Weapon) -> None:
    parsed, notes = parse_weapon_noted(weapon_line(w))
    assert stats(parsed) == stats(w)
    assert notes == ()


@pytest.mark.parametrize("ability", ["HEAVY", "MELTA 2", "INDIRECT FIRE", "PISTOL", "BLAST", "RAPID FIRE 1",
                                     "ASSAULT", "IGNORES COVER", "ONE SHOT"])
def test_a_melee_weapon_refuses_the_abilities_of_ranged_weapons(ability: str) -> None:
    """As it refuses a range: fight would take them silently (HEAVY's '--stationary not given'
    in a command that has no --stationary)."""
    e = weapon_error(f"A2 WS3+ S4 AP0 D1 [LANCE, {ability}]")
    assert e.what == f"a melee weapon (WS) has no {ability.rsplit(' ', 1)[0] if ability[-1].isdigit() else ability}:" \
                     " an ability of ranged weapons"
    assert e.value == ability and e.hint == "give BS for a ranged weapon"
    assert parse_weapon(f"A2 BS3+ S4 AP0 D1 [LANCE, {ability}]").melee is False


# 7. messages name the right value -------------------------------------------------------------------

def test_a_key_without_value_says_so_instead_of_taking_the_next_token() -> None:
    e = weapon_error("A2 BS S4 AP0 D1")
    assert "BS has no value" in e.message() and "missing S" not in e.message()
    assert "'S4'" in e.hint
    assert "SV has no value" in target_error("T4 SV W1").message()
    assert "D has no value" in weapon_error("A2 BS3+ S4 AP0 D").message()
    e = weapon_error("A D6+D3 BS3+ S4 AP0 D1")  # the line shows what followed the key, not the key alone
    assert "A has no value (got 'A D6+D3')" in e.message() and "'D6+D3' is not a value for A" in e.hint


@pytest.mark.parametrize(("command", "text"), [("shoot", "A2 WS3+ S4 AP0 D1"), ("fight", "A2 BS3+ S4 AP0 D1")])
def test_wrong_kind_of_inline_weapon_shows_what_was_typed(command: str, text: str) -> None:
    r = cli(command, text, "-t", TARGET, "--exact")
    assert r.exit_code == 1
    assert f"(got {text!r})" in r.stderr and "'inline weapon'" not in r.stderr


@pytest.mark.parametrize("models", ["0", "-1", str(MAX_TARGET_MODELS + 1), "99999999999999999999"])
@pytest.mark.parametrize("target", ["knight", TARGET])
def test_target_models_out_of_range_is_an_error(models: str, target: str) -> None:
    r = cli("shoot", WEAPON, "-t", target, "--target-models", models, "--exact")
    assert r.exit_code == 1, r.output
    assert "--target-models" in r.stderr and "Traceback" not in r.output


def test_target_models_zero_reaches_the_unit_target_as_zero(library) -> None:
    unit = Unit(name="u", models=(ModelStats(name="m", count=5, toughness=4, save=3, wounds=1),))
    assert unit_target(unit)[0].models == 5
    with pytest.raises(ProfileError):
        unit_target(unit, models=0)  # was silently the unit's own size
    with pytest.raises(InputError):
        resolve_target(library, "knight", models=0)


def test_resolve_weapon_returns_the_warnings(library) -> None:
    _, unit, notes = resolve_weapon(library, "A1 BS3+ S4 AP0 D3")
    assert unit is None and len(notes) == 1
    assert resolve_weapon(library, "railgun")[2] == ()


# 8. hostile inputs: an error, exit 1, never a traceback or exit 70 -------------------------------------------

@pytest.mark.parametrize(("weapon", "target"), [
    ("", TARGET), ("   ", TARGET), (WEAPON, ""), ("[]", TARGET), ("[[A]]", TARGET), (WEAPON, f"{TARGET} [[X]]"),
    (f"{WEAPON} [", TARGET), (f"{WEAPON} ]", TARGET), (f"{WEAPON} [LETHAL HITS", TARGET),
    ("A2 BS3++ S4 AP0 D1", TARGET), ("A2 BS3+ S4 AP--1 D1", TARGET), ("A2 BS3+ S4.5 AP0 D1", TARGET),
    ("A2 BS3+ S4 AP0 D0", TARGET), ("A0 BS3+ S4 AP0 D1", TARGET), ("A 99999999999999D6 BS3+ S4 AP0 D1", TARGET),
    ("A 12D6+999 BS3+ S4 AP0 D1", TARGET), (f"{WEAPON}\x01", TARGET), (WEAPON, f"{TARGET}\x7f"),
    ("A2 BS3+ S4 AP+1 D1", TARGET), ("A2 BS3+ S4 AP0 D1 RANGE99999999999999999999", TARGET),
    (WEAPON, "T4 SV3+ W99999999999999999999"), (WEAPON, "T4 SV3+ W1 MODELS99999999999"), (WEAPON, "T4 SV0+ W1"),
    (WEAPON, "T4 SV3+ W1 7++"), (WEAPON, "T4 SV3+ W1 [-2 DAMAGE]"), ("A2 WS3+ S4 AP0 D1 RANGE 12", TARGET),
    ("A2 BS3+ S4 AP0 D1 MELEE", TARGET), ("A2 BS3+ S4 AP0 D1 [SUSTAINED HITS 1 2]", TARGET),
    ("A2 BS3+ S4 AP0 D " + "9" * 5000, TARGET), ("A2 BS3+ S4 AP0 D1 AP0", TARGET),
])
def test_hostile_inputs_are_one_line_errors(weapon: str, target: str) -> None:
    r = cli("shoot", weapon, "-t", target, "--exact")
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith("Error: ") and "Traceback" not in r.output and "internal error" not in r.output


@pytest.mark.parametrize("weapon", ["A2\tBS3+\nS4  AP0 D1", "A2|BS3+|S4|AP0|D1 [LETHAL HITS] [TWIN-LINKED]",
                                    "A2 BS = 3+ S4 AP0 D1", "a2 bs n/a s4 ap0 d1 [torrent]", f"{WEAPON} []"])
def test_odd_but_unambiguous_inputs_are_accepted(weapon: str) -> None:
    r = cli("shoot", weapon, "-t", TARGET, "--exact")
    assert r.exit_code == 0, r.output
    assert "Warning" not in r.stderr


@pytest.mark.parametrize("token", ["WOUNDS-LEFT=0", "WOUNDS-LEFT=1001"])
def test_a_wounds_left_out_of_range_is_shown_as_written(token: str) -> None:
    """The offending value is the token as the notation writes it (it said 'WOUNDS-LEFT0')."""
    with pytest.raises(ProfileError) as e:
        parse_target_unit(f"T4 SV3+ W2 MODELS3 {token}")
    assert e.value.value == token and "WOUNDS-LEFT must be a whole number from 1 to" in e.value.message()
