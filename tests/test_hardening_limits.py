"""Issue 7 item 3: every count is bounded in the model (the library API, not only the CLI), and
requests too big for memory or time are refused up front with one line naming what and the limit.

Expected values come from the limits of docs/limits.md and from the rules (R-x), never from the
code's output. No test measures time: a refusal is checked by its error and, where it matters,
by the memory allocated before it (tracemalloc sees numpy's allocations).
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

from mathhammer import limits
from mathhammer.compile import check_monte_carlo, compile_matchup, monte_carlo_bytes
from mathhammer.engine import analyse, exact
from mathhammer.errors import MatchupError, NotExactError, ProfileError
from mathhammer.limits import (
    MAX_AP,
    MAX_ATTACKING_MODELS,
    MAX_CHARACTERISTIC,
    MAX_DAMAGE_MOD,
    MAX_DICE,
    MAX_DICE_VALUE,
    MAX_PAIRS,
    MAX_RANGE,
    MAX_ROLL_MOD,
    MAX_TARGET_MODELS,
    MAX_WEAPON_GROUPS,
    MAX_WOUNDS,
)
from mathhammer.model import (
    Ability,
    AbilitySpec,
    CommandReroll,
    Context,
    DiceExpr,
    Matchup,
    Method,
    ModelStats,
    RulesVersion,
    Target,
    Unit,
    Weapon,
)
from mathhammer.notation import parse_target, parse_weapon

HUGE = 99_999_999_999_999_999_999  # far beyond int64: must never reach numpy
INT64_MAX = 9_223_372_036_854_775_807


def _target(**kw: Any) -> Target:
    base: dict[str, Any] = {"name": "t", "toughness": 4, "save": 3, "wounds": 1, "models": 1}
    return Target(**{**base, **kw})


def _weapon(**kw: Any) -> Weapon:
    base: dict[str, Any] = {"name": "w", "attacks": DiceExpr(plus=1), "skill": 3, "strength": 4, "ap": 0,
                            "damage": DiceExpr(plus=1), "range_inches": 24}
    return Weapon(**{**base, **kw})


def _stats(**kw: Any) -> ModelStats:
    base: dict[str, Any] = {"name": "m", "count": 1, "toughness": 4, "save": 3, "wounds": 1}
    return ModelStats(**{**base, **kw})


# --- 1. every count is checked in the model ---------------------------------------------------
CONTEXT_LIMITS = [("firing_models", 1, MAX_ATTACKING_MODELS, "--models")] + [
    (name, -MAX_ROLL_MOD, MAX_ROLL_MOD, "--" + name.replace("_", "-"))
    for name in ("hit_mod", "wound_mod", "save_mod", "bs_improve", "ap_improve")
] + [("damage_mod", -MAX_DAMAGE_MOD, MAX_DAMAGE_MOD, "--damage-mod")]


@pytest.mark.parametrize(("field", "lo", "hi", "option"), CONTEXT_LIMITS)
def test_context_counts_are_bounded_and_the_bounds_accepted(field: str, lo: int, hi: int, option: str) -> None:
    assert getattr(Context(**{field: lo}), field) == lo
    assert getattr(Context(**{field: hi}), field) == hi
    for bad in (hi + 1, HUGE, INT64_MAX, -HUGE, lo - 1):
        with pytest.raises(MatchupError) as e:
            Context(**{field: bad})
        message = e.value.message()
        assert message.startswith(f"{option}: ") and str(bad) in message and "\n" not in message
        assert f"{hi:,}" in message or f"{hi:+d}" in message or bad < lo


def test_weapon_groups_and_their_pairs_with_model_groups_are_bounded() -> None:
    # each (weapon group, model group) pair has tables of its own: 3,000 weapon groups took 3.4 GB
    from mathhammer.model import TargetUnit, WeaponGroup

    groups = tuple(WeaponGroup(weapon=parse_weapon("A1 BS3+ S4 AP0 D1")) for _ in range(MAX_WEAPON_GROUPS + 1))
    one = TargetUnit(name="t", groups=(parse_target("T4 SV3+ W1"),))
    assert len(Matchup(weapons=groups[:MAX_WEAPON_GROUPS], target=one).weapons) == MAX_WEAPON_GROUPS
    with pytest.raises(MatchupError, match=r"at most 64 weapon groups") as e:
        Matchup(weapons=groups, target=one)
    assert e.value.where == "weapons"
    many = TargetUnit(name="t", groups=tuple(replace(parse_target(f"T4 SV3+ W{w}"), name=f"g{w}")
                                             for w in range(1, MAX_PAIRS // 4 + 2)))
    Matchup(weapons=groups[:3], target=many)  # 3 x 65 pairs
    with pytest.raises(MatchupError, match=r"at most 256 pairs") as e:
        Matchup(weapons=groups[:4], target=many)  # 4 x 65
    assert e.value.where == "--target"


def test_the_issue_damage_mod_is_an_error_not_an_overflow() -> None:
    with pytest.raises(MatchupError, match=r"--damage-mod: .*-100 to \+100 \(got 9223372036854775807\)"):
        Context(damage_mod=INT64_MAX)


@pytest.mark.parametrize("value", [1.5, "3", None, True])
def test_a_count_that_is_not_a_whole_number_is_an_error(value: object) -> None:
    with pytest.raises(MatchupError, match="whole number"):
        Context(hit_mod=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("field", "hi", "token"), [("toughness", MAX_CHARACTERISTIC, "T"), ("wounds", MAX_WOUNDS, "W"),
                                                     ("models", MAX_TARGET_MODELS, "MODELS")])
def test_target_counts_are_bounded_and_the_bounds_accepted(field: str, hi: int, token: str) -> None:
    assert getattr(_target(**{field: hi}), field) == hi
    for bad in (hi + 1, HUGE):
        with pytest.raises(ProfileError) as e:
            _target(**{field: bad})
        assert f"{token} must be at most {hi:,}" in e.value.message() and str(bad) in e.value.message()


def test_target_damage_reduction_is_bounded() -> None:
    assert _target(damage_reduction=MAX_DAMAGE_MOD).damage_reduction == MAX_DAMAGE_MOD
    with pytest.raises(ProfileError, match="damage reduction"):
        _target(damage_reduction=MAX_DAMAGE_MOD + 1)


@pytest.mark.parametrize(("field", "good", "bad", "words"), [
    ("strength", MAX_CHARACTERISTIC, MAX_CHARACTERISTIC + 1, "S must be at most 100"),
    ("strength", MAX_CHARACTERISTIC, HUGE, "S must be at most 100"),
    ("ap", -MAX_AP, -MAX_AP - 1, "AP must be at least -10"),
    ("ap", -MAX_AP, -HUGE, "AP must be at least -10"),
    ("range_inches", MAX_RANGE, MAX_RANGE + 1, "range must be from 0 to 1,000"),
    ("attacks", DiceExpr(count=MAX_DICE, sides=6), DiceExpr(count=MAX_DICE + 1, sides=6),
     "A must have at most 12 dice"),
    ("attacks", DiceExpr(plus=MAX_DICE_VALUE), DiceExpr(plus=HUGE), "largest value of at most 999"),
    ("damage", DiceExpr(count=1, sides=6, plus=MAX_DICE_VALUE - 6),
     DiceExpr(count=1, sides=6, plus=MAX_DICE_VALUE - 5),
     "D must have at most 12 dice and a largest value of at most 999"),
])
def test_weapon_counts_are_bounded_and_the_bounds_accepted(field: str, good: object, bad: object, words: str) -> None:
    assert getattr(_weapon(**{field: good}), field) == good
    with pytest.raises(ProfileError) as e:
        _weapon(**{field: bad})
    assert e.value.where == "weapon 'w'" and words in e.value.message()


def test_an_ability_value_is_bounded() -> None:
    AbilitySpec(ability=Ability.SUSTAINED_HITS, value=DiceExpr(plus=MAX_DICE_VALUE))
    with pytest.raises(ProfileError, match="at most 999"):
        AbilitySpec(ability=Ability.SUSTAINED_HITS, value=DiceExpr(plus=MAX_DICE_VALUE + 1))


def test_unit_counts_are_bounded_and_the_bounds_accepted() -> None:
    assert _stats(count=MAX_TARGET_MODELS, toughness=MAX_CHARACTERISTIC, wounds=MAX_WOUNDS).count == MAX_TARGET_MODELS
    for field, bad in (("count", MAX_TARGET_MODELS + 1), ("toughness", HUGE), ("wounds", MAX_WOUNDS + 1)):
        with pytest.raises(ProfileError, match="must be at most"):
            _stats(**{field: bad})
    half = MAX_TARGET_MODELS // 2
    Unit(name="u", models=(_stats(count=half), _stats(name="n", count=MAX_TARGET_MODELS - half)))
    with pytest.raises(ProfileError, match="the number of models must be at most 1,000"):
        Unit(name="u", models=(_stats(count=half), _stats(name="n", count=MAX_TARGET_MODELS - half + 1)))
    with pytest.raises(ProfileError, match="FNP"):
        Unit(name="u", models=(_stats(),), feel_no_pain=HUGE)


def test_the_bounds_together_compile_and_give_the_rules_answer() -> None:
    # A1 BS2+ S1 D1 at T100 Sv- W1000, with every modifier at its limit. Hit: BS2+ improved
    # by 6 and +6 (capped to +1, R-0.3): 2+ (a 1 always fails), 5/6. Wound: S1 vs T100 needs
    # 6+, -6 capped to -1, an unmodified 6 still wounds: 1/6. No save (Sv7+, AP0, no
    # modifier). Damage 1 + 100 = 101 <= W1000: mean 5/6 * 1/6 * 101 = 505/36.
    w = _weapon(skill=2, strength=1)
    t = _target(toughness=MAX_CHARACTERISTIC, save=7, wounds=MAX_WOUNDS, models=2)
    ctx = Context(bs_improve=MAX_ROLL_MOD, hit_mod=MAX_ROLL_MOD, wound_mod=-MAX_ROLL_MOD, damage_mod=MAX_DAMAGE_MOD)
    r = exact.run(compile_matchup(Matchup(weapon=w, target=t, context=ctx)).inputs)
    assert r.damage.mean() == pytest.approx(float(Fraction(505, 36)), rel=1e-12)
    assert r.models_destroyed.mean() == 0.0


# --- 2. Monte Carlo memory: bounded histograms, refused above the limit -----------------------
def _inputs(weapon: str, target: str, n: int = 1, **ctx: Any) -> Any:
    m = Matchup(weapon=parse_weapon(weapon), target=parse_target(target), context=Context(firing_models=n, **ctx))
    return compile_matchup(m).inputs


def _lengths(inputs: Any) -> list[int]:
    off = inputs.stage_offsets.tolist()
    return [b - a for a, b in zip(off, off[1:], strict=False)]


def test_stage_histograms_are_as_long_as_the_largest_count_and_no_longer() -> None:
    # 5 models x A2 = 10 attacks, one Hit roll each, no Critical-Hit effects; D3 fixed: at most
    # 10 damage rolls of 3. Lethal and Devastating counts are always 0 (length 1).
    assert _lengths(_inputs("A2 BS3+ S4 AP0 D3", "T4 SV3+ W2 MODELS10", 5)) == [11, 11, 11, 11, 11, 1, 1, 11, 31, 31]
    # SUSTAINED HITS 2: each of the 10 attacks can make 1 + 2 hits; LETHAL HITS counts
    # the critical hits (at most 10); DEVASTATING WOUNDS at most one per hit.
    lengths = _lengths(_inputs("A2 BS3+ S4 AP0 D3 [SUSTAINED HITS 2, LETHAL HITS, DEVASTATING WOUNDS]",
                               "T4 SV3+ W2 MODELS10", 5))
    assert lengths == [11, 31, 11, 31, 31, 11, 31, 31, 91, 91]
    # TORRENT: no Hit roll, so no Critical Hits and no Sustained Hits.
    torrent = _inputs("A2 BS- S4 AP0 D3 [TORRENT, SUSTAINED HITS 2]", "T4 SV3+ W2 MODELS10", 5)
    assert _lengths(torrent)[:3] == [11, 11, 1]


def test_the_damage_histogram_of_a_finite_target_stops_at_its_wounds() -> None:
    assert _inputs("A 2D6 BS3+ S4 AP0 D D6+6", "T4 SV3+ W3 MODELS10", 100).damage_max == 30


def test_a_request_too_large_for_monte_carlo_is_refused_before_the_kernel_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer.engine import montecarlo

    def never(*args: object, **kw: object) -> None:
        raise AssertionError("the kernel ran")

    monkeypatch.setattr(montecarlo, "run", never)
    # The issue's request, but at a target without a wound limit (library only: the command
    # line always gives W): damage is summed, so its histogram cannot stop at the unit's wounds.
    # 1000 models x 2D6 = 12,000 attacks (one hit each), 12,000 x 999 damage.
    m = Matchup(weapon=parse_weapon("A 2D6 BS3+ S4 AP0 D D6+993"),
                target=replace(parse_target("T4 SV3+ W1000 MODELS1000"), wounds=None),
                context=Context(firing_models=1000))
    assert monte_carlo_bytes(compile_matchup(m).inputs) > limits.MONTE_CARLO_MAX_BYTES
    with pytest.raises(MatchupError) as e:
        analyse(m, method=Method.MONTE_CARLO, trials=1000)
    message = e.value.message()
    assert message.startswith("Monte Carlo: ") and "12,000 hits" in message and "11,988,000 damage" in message
    assert limits.size_text(limits.MONTE_CARLO_MAX_BYTES) in message and "\n" not in message


def test_the_issue_request_is_simulated() -> None:
    # Issue 7/8: the same request at W1000 MODELS1000 now fits: the damage histogram stops at
    # the unit's 1,000,000 wounds and the stage histograms are capped (issue 8 item 6).
    r = subprocess.run([sys.executable, "-m", "mathhammer", "shoot", "-n", "1000", "A 2D6 BS3+ S4 AP0 D D6+993",
                        "-t", "T4 SV3+ W1000 MODELS1000", "--trials", "200", "--seed", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "≥ 4096" in r.stdout


def test_a_large_legal_request_fits_the_monte_carlo_budget() -> None:
    # 1000 models with 2D6 shots of D6+6 at a small unit: a horde's request stays within the
    # memory budget at any number of trials (one histogram row per thread).
    inputs = _inputs("A 2D6 BS3+ S4 AP0 D D6+6", "T4 SV3+ W1 MODELS10", MAX_ATTACKING_MODELS)
    check_monte_carlo(inputs)
    assert monte_carlo_bytes(inputs) <= limits.MONTE_CARLO_MAX_BYTES


def test_the_engine_chunks_are_the_limits_chunks() -> None:
    from mathhammer.engine import montecarlo

    assert montecarlo.MAX_CHUNKS == limits.MAX_CHUNKS


def test_both_gives_the_exact_result_alone_when_monte_carlo_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer.engine import montecarlo

    monkeypatch.setattr(montecarlo, "run", lambda *a, **k: pytest.fail("the kernel ran"))
    # Two models, A999 D999 at a target without a wound limit: 1,998 x 999 damage is too much
    # to histogram, but exact: each attack is unsaved with 2/3 (3+) * 1/2 (S4 vs T4) * 2/3 (Sv5+)
    # = 2/9, so the mean damage is 1998 * 2/9 * 999.
    m = Matchup(weapon=parse_weapon("A 999 BS3+ S4 AP0 D 999"),
                target=replace(parse_target("T4 SV5+ W1 MODELS1"), wounds=None), context=Context(firing_models=2))
    r = analyse(m, method=Method.BOTH, trials=1000)
    assert r.method == "exact"
    assert r.damage.mean() == pytest.approx(1998 * 2 / 9 * 999, rel=1e-9)
    assert any("exact result alone" in w for w in r.provenance["warnings"])


# --- 3. the exact engine: estimated before it starts ------------------------------------------
def _refused(inputs: Any) -> str:
    """The one-line refusal, checking that less than 100 MB was allocated before it."""
    tracemalloc.start()
    try:
        with pytest.raises(NotExactError) as e:
            exact.run(inputs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100e6, f"{peak / 1e6:.0f} MB allocated before the refusal"
    message = e.value.message()
    assert message.startswith("--method exact: ") and "\n" not in message
    return message


# (Issue 8 made the allocation a renewal process and the mixtures divide and conquer: the
# issue-7 request 2D6 x D6+993 at 1000 models of W1000, the same with D6+6, and Sustained Hits
# 999 on 999 attacks are now computed in well under a second; see tests/test_exact_scaling.py.)
TOO_BIG = [
    # Attacks rolls: 1000 x 12D6, with the Command Re-roll of the lowest
    ("A 12D6 BS3+ S4 AP0 D 1", "T4 SV3+ W1 MODELS1", 1000, {"command_reroll": CommandReroll.ATTACKS}),
    # the 2023 spill-over of Devastating Wounds with many attacks
    ("A 2D6 BS2+ S8 AP-2 D D6+6 [DEVASTATING WOUNDS, SUSTAINED HITS D3]", "T4 SV3+ W10 MODELS100", 1000,
     {"rules": RulesVersion.V2023}),
    # Feel No Pain and a Command Re-roll of damage on thousands of rolls
    ("A 12D6 BS2+ S8 AP-2 D 2D6+6 [SUSTAINED HITS 2]", "T4 SV7+ W1000 MODELS1000 FNP5+", 1000,
     {"command_reroll": CommandReroll.DAMAGE}),
]


@pytest.mark.parametrize(("weapon", "target", "n", "ctx"), TOO_BIG)
def test_too_big_exact_requests_are_refused_up_front(weapon: str, target: str, n: int, ctx: dict[str, Any]) -> None:
    message = _refused(_inputs(weapon, target, n, **ctx))
    assert "too large to compute exactly" in message and "10 s" in message and "1 GB" in message


def test_the_spill_over_refusal_names_its_rule() -> None:
    inputs = _inputs("A 2D6 BS2+ S8 AP-2 D D6+6 [DEVASTATING WOUNDS, SUSTAINED HITS D3]", "T4 SV3+ W10 MODELS100",
                     1000, rules=RulesVersion.V2023)
    assert _refused(inputs).startswith("--method exact: R-6.4 (2023 text)")


def test_hazardous_tests_of_a_huge_firing_unit_are_computed() -> None:
    # Issue 8: refused before (a step over a million states per test), now a renewal process.
    # each of the 1000 tests fails on a 1 (1/6) for 3 mortal wounds: mean 500 lost.
    big = Unit(name="big", models=(_stats(count=MAX_TARGET_MODELS, wounds=MAX_WOUNDS),))
    m = Matchup(weapon=parse_weapon("A1 BS3+ S4 AP0 D1 [HAZARDOUS]"), target=parse_target("T4 SV3+ W1 MODELS1"),
                context=Context(firing_models=MAX_ATTACKING_MODELS), attacker=big)
    r = exact.run(compile_matchup(m).inputs)
    assert r.hazardous is not None and r.hazardous.mean() == pytest.approx(500, rel=1e-12)


def test_a_large_request_within_the_estimate_is_computed_by_the_rules() -> None:
    # 1000 models x A1, BS3+ (2/3), S4 vs T4 (4+, 1/2), no save, D1 at 1000 W1 models: every
    # unsaved attack kills one model and there are never more than 1000: mean 1000/3 models.
    inputs = _inputs("A1 BS3+ S4 AP0 D1", "T4 SV7+ W1 MODELS1000", MAX_ATTACKING_MODELS)
    r = exact.run(inputs)
    assert r.models_destroyed.mean() == pytest.approx(1000 / 3, rel=1e-9)


def test_a_million_remaining_wound_states_are_computed_in_memory_of_their_order() -> None:
    # One attack of D6+993 at 1000 models of W1000 (1,000,001 states of the allocation
    # programme, R-9.1): hit 3+ (2/3), S4 vs T4 4+ (1/2), Sv3+ fails on 1-2 (1/3); the damage
    # (mean 996.5) never exceeds W1000: mean 1/9 * 996.5.
    tracemalloc.start()
    try:
        r = exact.run(_inputs("A1 BS3+ S4 AP0 D D6+993", "T4 SV3+ W1000 MODELS1000"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.damage.mean() == pytest.approx(996.5 / 9, rel=1e-12)
    assert peak < 400e6


def test_the_estimate_refuses_by_memory_as_well_as_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Under the 2023 text the spill-over keeps a row of the 1001 remaining-wound states for
    # every number of Devastating Wounds: thousands of attacks with Sustained Hits D3 can make
    # tens of thousands of them (over a GB).
    inputs = _inputs("A 2D6 BS2+ S8 AP-2 D D6+6 [DEVASTATING WOUNDS, SUSTAINED HITS D3]", "T4 SV3+ W10 MODELS100",
                     1000, rules=RulesVersion.V2023)
    monkeypatch.setattr(exact, "EXACT_MAX_SECONDS", float("inf"))
    message = _refused(inputs)
    assert "GB estimated" in message


def test_both_falls_back_to_monte_carlo_when_exact_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    from mathhammer.engine import montecarlo

    stand_in = exact.run(_inputs("A1 BS3+ S4 AP0 D1", "T4 SV3+ W1"))
    ran: list[Any] = []
    monkeypatch.setattr(montecarlo, "run", lambda inputs, **k: ran.append(inputs) or stand_in)
    m = Matchup(weapon=parse_weapon("A 2D6 BS2+ S8 AP-2 D D6+6 [DEVASTATING WOUNDS, SUSTAINED HITS D3]"),
                target=parse_target("T4 SV3+ W10 MODELS100"),
                context=Context(firing_models=100, rules=RulesVersion.V2023))
    r = analyse(m, method=Method.BOTH, trials=1000)
    assert len(ran) == 1 and r.damage is stand_in.damage
    assert any("R-6.4" in w and "Monte Carlo alone" in w for w in r.provenance["warnings"])


# --- 4. the command line: one line, exit 1 ----------------------------------------------------
@pytest.mark.parametrize("args", [
    ["A1 BS3+ S4 AP0 D1", "-t", "T4 SV3+ W99999999999999999999"],
    ["A1 BS3+ S4 AP0 D1", "-t", "T4 SV3+ W1 MODELS99999999999"],
    ["A1 BS3+ S4 AP0 D1", "-t", "T4 SV3+ W1", "--damage-mod", "9223372036854775807"],
    ["A1 BS3+ S4 AP0 D1", "-t", "T4 SV3+ W1", "--models", "99999999999999999999"],
    ["-n", "1000", "A 2D6 BS2+ S8 AP-2 D D6+6 [DEVASTATING WOUNDS, SUSTAINED HITS D3]", "-t", "T4 SV3+ W10 MODELS100",
     "--rules", "2023", "--exact"],
])
def test_the_issue_requests_are_one_line_errors(args: list[str]) -> None:
    r = subprocess.run([sys.executable, "-m", "mathhammer", "shoot", *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "" and r.stderr.startswith("Error: ")
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_replace_keeps_the_checks() -> None:
    # dataclasses.replace runs __post_init__ again: a limit cannot be bypassed by a copy.
    with pytest.raises(MatchupError):
        replace(Context(), firing_models=MAX_ATTACKING_MODELS + 1)


def test_a_huge_fixed_damage_stage_is_refused_up_front_and_computed_without_stages() -> None:
    # 1000 models x D6+993 attacks hitting and wounding on 2+, D200 halved to 100 at one W1 model:
    # the damage stage spans 70 million values (0.56 GB each, three alive at once: 2.3 GB RSS
    # when it ran); the damage itself is one value
    m = Matchup(weapon=parse_weapon("A D6+993 BS2+ S20 AP-5 D 200"), target=parse_target("T1 SV7+ W1 [HALF DAMAGE]"),
                context=Context(firing_models=1000))
    tracemalloc.start()
    try:
        with pytest.raises(NotExactError, match="summing the damage") as e:
            analyse(m, method=Method.EXACT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200e6 and "--no-stages" in (e.value.hint or "")
    r = analyse(m, method=Method.EXACT, stages=False)
    # P(no unsaved wound) is below (1/6)**994_000, far below any float: the one model dies
    assert r.stages == {} and r.damage.probabilities.tolist() == pytest.approx([0.0, 1.0], abs=1e-9)
