"""Inline profiles and ability spellings."""

from __future__ import annotations

import pytest

from mathhammer.errors import ProfileError
from mathhammer.model import Ability, DiceExpr
from mathhammer.notation import looks_inline, parse_ability, parse_target, parse_target_unit, parse_weapon


@pytest.mark.parametrize("text", [
    "A2 BS3+ S4 AP-1 D1",
    "A 2 BS 3+ S 4 AP -1 D 1",
    "A=2 BS=3+ S=4 AP=-1 D=1",
    "A:2,BS:3+,S:4,AP:-1,D:1",
    "A2|BS3+|S4|AP-1|D1",
    "a2 bs3+ s4 ap-1 d1",
])
def test_weapon_token_forms(text: str) -> None:
    w = parse_weapon(text)
    assert (w.attacks, w.skill, w.strength, w.ap, w.damage, w.melee) == (DiceExpr(plus=2), 3, 4, -1, DiceExpr(plus=1), False)


def test_weapon_dice_and_abilities() -> None:
    w = parse_weapon("A D6 BS4+ S5 AP0 D D6+1 [Sustained Hits D3, twin linked, LETHAL HITS]")
    assert w.attacks == DiceExpr(count=1, sides=6) and w.damage == DiceExpr(count=1, sides=6, plus=1)
    assert w.get(Ability.SUSTAINED_HITS).value == DiceExpr(count=1, sides=3)
    assert w.has(Ability.TWIN_LINKED) and w.has(Ability.LETHAL_HITS)


def test_melee_weapon_uses_ws() -> None:
    w = parse_weapon("A4 WS3+ S6 AP-2 D2")
    assert w.melee and w.skill == 3


def test_torrent_needs_no_bs() -> None:
    for bs in ("N/A", "-"):
        w = parse_weapon(f"A D6 BS {bs} S4 AP0 D1 [TORRENT]")
        assert w.skill is None


@pytest.mark.parametrize(("text", "fragment"), [
    ("A2 BS7+ S4 AP-1 D1", "BS7+"),
    ("A2 BS3+ S4 AP-1 D D7", "D7"),
    ("A2 BS3+ S4 AP+2 D1", "AP+2"),
    ("A2 BS3+ AP-1 D1", "missing S"),
    ("A2 BS3+ S4 D1 [TWIN LINKD]", "TWIN LINKD"),
    ("A D6 BS N/A S4 D1", "TORRENT"),
    ("A2 BS3+ WS3+ S4 D1", "exactly one of BS"),
    ("A2 BS3+ S4 D1 Q7", "Q7"),
    ("A2 BS3+ S4 D1 [ANTI-VEHICLE]", "ANTI"),
    ("A2 BS3+ S4 D1 [SUSTAINED HITS]", "needs a value"),
    ("A2 BS3+ S4 D1 S5", "twice"),
    ("A2 BS3+ S0 D1", "S0"),
])
def test_weapon_errors(text: str, fragment: str) -> None:
    with pytest.raises(ProfileError) as e:
        parse_weapon(text)
    assert fragment in e.value.message() or fragment in e.value.hint


@pytest.mark.parametrize(("spelling", "ability"), [
    ("Twin-linked", Ability.TWIN_LINKED), ("TWIN-LINKED", Ability.TWIN_LINKED), ("twin linked", Ability.TWIN_LINKED),
    ("Twin-Linked", Ability.TWIN_LINKED), ("Devastating Wounds", Ability.DEVASTATING_WOUNDS),
    ("lethal-hits", Ability.LETHAL_HITS), ("IGNORES COVER", Ability.IGNORES_COVER), ("Indirect Fire", Ability.INDIRECT_FIRE),
    ("One Shot", Ability.ONE_SHOT), ("torrent", Ability.TORRENT),
])
def test_ability_spellings(spelling: str, ability: Ability) -> None:
    assert parse_ability(spelling).ability is ability


@pytest.mark.parametrize(("spelling", "keyword", "x"), [
    ("Anti-Fly 2+", "FLY", 2), ("ANTI-VEHICLE 4+", "VEHICLE", 4), ("anti-infantry 4+", "INFANTRY", 4),
    ("Anti-Epic Hero 3+", "EPIC HERO", 3),
])
def test_anti_spellings(spelling: str, keyword: str, x: int) -> None:
    a = parse_ability(spelling)
    assert (a.ability, a.keyword, a.value) == (Ability.ANTI, keyword, DiceExpr(plus=x))


@pytest.mark.parametrize(("spelling", "value"), [("Sustained Hits 1", DiceExpr(plus=1)), ("SUSTAINED HITS D3", DiceExpr(count=1, sides=3)),
                                                 ("Rapid Fire D6+3", DiceExpr(count=1, sides=6, plus=3)), ("Melta 2", DiceExpr(plus=2))])
def test_parametrised_abilities(spelling: str, value: DiceExpr) -> None:
    assert parse_ability(spelling).value == value


def test_unknown_ability_suggests() -> None:
    with pytest.raises(ProfileError) as e:
        parse_ability("Devastating Wound")
    assert "DEVASTATING WOUNDS" in e.value.hint


@pytest.mark.parametrize("text", [
    "T4 SV3+ W2 MODELS10 INV4+ FNP5+",
    "T 4 SV 3+ W 2 MODELS 10 4++ 5+++",
    "t=4, sv=3+, w=2, models=10, inv=4+, fnp=5+",
])
def test_target_forms(text: str) -> None:
    t = parse_target(text)
    assert (t.toughness, t.save, t.wounds, t.models, t.invulnerable, t.feel_no_pain) == (4, 3, 2, 10, 4, 5)


def test_target_keywords() -> None:
    t = parse_target("T4 SV3+ W2 [Infantry, grenades]")
    assert t.keywords == {"INFANTRY", "GRENADES"} and t.models == 1


@pytest.mark.parametrize(("text", "fragment"), [("T4 W2", "missing SV"), ("SV3+ W2", "missing T"), ("T4 SV3+", "missing W"),
                                                ("T4 SV1+ W2", "SV1+"), ("T4 SV3+ W0", "W0"), ("T4 SV3+ W2 INV7+", "INV7+"),
                                                ("T4 SV3+ W2 MODELS0", "MODELS0")])
def test_target_errors(text: str, fragment: str) -> None:
    with pytest.raises(ProfileError) as e:
        parse_target(text)
    assert fragment in e.value.message()


@pytest.mark.parametrize(("text", "what", "hint"), [
    ("T4 SV3+ W2 WOUNDED=5", "unknown token", "WOUNDS-LEFT=N"),  # was "W given twice"
    ("T4 SV3+ W2 TOUGH", "unknown token", "T4 SV3+ W2"),  # was "T given twice"
    ("T4 SV3+ W2 W3", "W given twice", None),
])
def test_a_word_that_starts_like_a_key_given_already_is_an_unknown_token(text: str, what: str, hint: str | None) -> None:
    with pytest.raises(ProfileError) as e:
        parse_target_unit(text)  # the command line's --target: WOUNDS-LEFT=N is one of its tokens
    assert e.value.what == what and (hint is None or hint in (e.value.hint or ""))


@pytest.mark.parametrize(("text", "inline"), [("railgun", False), ("knight", False), ("Knight Paladin", False),
                                              ("A2 BS3+ S4 AP-1 D1", True), ("T11 SV3+ W26 INV5+", True), ("hammerhead/railgun", False)])
def test_looks_inline(text: str, inline: bool) -> None:
    assert looks_inline(text) is inline
