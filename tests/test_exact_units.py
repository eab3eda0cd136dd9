"""The exact engine for whole units (mathhammer/engine/exact_units.py) and the mortal-wounds
library function (mathhammer/engine/mortal.py).

Expected values come from hand closed forms (Fractions) and from a tiny brute force written
here from the allocation rules of docs/rules.md: models in two queues, Bodyguard groups then Leader
groups, one model at a time; each wound a save of the model's group, then Damage, Feel No Pain
per point, excess lost; Devastating wounds after every weapon. The brute force keeps every
model's wounds (a list per track), not the engine's remaining-wounds index, and enumerates every
outcome with Fractions. Per-attack outcomes (hit, wound and save chances) are worked out by hand
for each case.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from mathhammer.compile import compile_matchup
from mathhammer.engine import exact, exact_units
from mathhammer.engine.mortal import spill
from mathhammer.errors import InputError, NotExactError
from mathhammer.model import (
    Allocation,
    CommandReroll,
    Context,
    Matchup,
    RulesVersion,
    Target,
    TargetUnit,
    WeaponGroup,
)
from mathhammer.notation import parse_weapon
from mathhammer.result import DamageResult, Distribution

F = Fraction
TOL = 1e-12


# --- the brute force ------------------------------------------------------------------------
@dataclass(frozen=True)
class BG:
    """A model group in allocation order: models, W, P(save fails), P(a point is lost to FNP)."""

    models: int
    w: int
    fail: Fraction
    lost: Fraction = F(1)
    leader: bool = False


@dataclass(frozen=True)
class BW:
    """A weapon group: attacks, P((wounds needing a save, devastating wounds)) of one attack,
    the Damage pmf per model group (one dict: every group), PRECISION, 2023 spill-over."""

    attacks: int
    per_attack: dict[tuple[int, int], Fraction]
    damage: dict[int, Fraction] | tuple[dict[int, Fraction], ...]
    precision: bool = False
    spill: bool = False

    def dmg(self, j: int) -> dict[int, Fraction]:
        return self.damage[j] if isinstance(self.damage, tuple) else self.damage


@dataclass(frozen=True)
class State:
    tracks: tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]  # (group, wounds left) per model
    pending: tuple[int, ...]
    dmg: tuple[int, ...]
    kills: tuple[int, ...]


def _add(out: dict, key: object, p: Fraction) -> None:
    if p:
        out[key] = out.get(key, F(0)) + p


def _target(s: State, precision: bool) -> int | None:
    order = (1, 0) if precision else (0, 1)
    return next((t for t in order if s.tracks[t]), None)


def _lose(s: State, t: int, points: int, g: int) -> State:
    """The current model of track t loses up to ``points`` wounds (excess lost)."""
    j, left = s.tracks[t][0]
    take = min(points, left)
    models = list(s.tracks[t])
    kills = list(s.kills)
    if take == left:
        models.pop(0)
        kills[g] += 1
    else:
        models[0] = (j, left - take)
    tracks = list(s.tracks)
    tracks[t] = tuple(models)
    dmg = list(s.dmg)
    dmg[g] += take
    return State((tracks[0], tracks[1]), s.pending, tuple(dmg), tuple(kills))


def _binomial(n: int, p: Fraction) -> dict[int, Fraction]:
    return {k: comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)}


def _wound(s: State, g: int, w: BW, groups: list[BG], save: bool) -> dict[State, Fraction]:
    out: dict[State, Fraction] = {}
    t = _target(s, w.precision)
    if t is None:
        return {s: F(1)}
    j = s.tracks[t][0][0]
    fail = groups[j].fail if save else F(1)
    _add(out, s, 1 - fail)
    for d, pd in w.dmg(j).items():
        if save or not w.spill:
            for lost, pl in _binomial(d, groups[j].lost).items():
                _add(out, _lose(s, t, lost, g) if lost else s, fail * pd * pl)
        else:  # 2023: d mortal wounds, one at a time, each to the model the rules choose
            for end, pe in _points({s: F(1)}, d, g, w.precision, groups).items():
                _add(out, end, pd * pe)
    return out


def _points(dist: dict[State, Fraction], n: int, g: int, precision: bool, groups: list[BG]) -> dict[State, Fraction]:
    """``n`` mortal wounds of one damage each, spilling over (R-9.3)."""
    for _ in range(n):
        nxt: dict[State, Fraction] = {}
        for s, p in dist.items():
            t = _target(s, precision)
            if t is None:
                _add(nxt, s, p)
                continue
            q = groups[s.tracks[t][0][0]].lost
            _add(nxt, _lose(s, t, 1, g), p * q)
            _add(nxt, s, p * (1 - q))
        dist = nxt
    return dist


def _start(groups: list[BG], wounds_left: int | None) -> State:
    tracks: list[list[tuple[int, int]]] = [[], []]
    for j, grp in enumerate(groups):
        tracks[1 if grp.leader else 0] += [(j, grp.w)] * grp.models
    if wounds_left:
        tracks[0][0] = (tracks[0][0][0], wounds_left)
    return State((tuple(tracks[0]), tuple(tracks[1])), (), (), ())


def brute(weapons: list[BW], groups: list[BG], wounds_left: int | None = None) -> dict[State, Fraction]:
    s0 = _start(groups, wounds_left)
    n = len(weapons)
    dist = {State(s0.tracks, (0,) * n, (0,) * n, (0,) * n): F(1)}
    for g, w in enumerate(weapons):
        for _ in range(w.attacks):
            nxt: dict[State, Fraction] = {}
            for s, p in dist.items():
                for (normal, dev), q in w.per_attack.items():
                    sub = {s: F(1)}
                    for _ in range(normal):
                        sub2: dict[State, Fraction] = {}
                        for s2, p2 in sub.items():
                            for s3, p3 in _wound(s2, g, w, groups, True).items():
                                _add(sub2, s3, p2 * p3)
                        sub = sub2
                    for s2, p2 in sub.items():
                        pending = list(s2.pending)
                        pending[g] += dev
                        _add(nxt, State(s2.tracks, tuple(pending), s2.dmg, s2.kills), p * q * p2)
            dist = nxt
    for g, w in enumerate(weapons):  # the pending Devastating wounds, weapon by weapon
        nxt = {}
        for s, p in dist.items():
            sub = {s: F(1)}
            for _ in range(s.pending[g]):
                sub2: dict[State, Fraction] = {}
                for s2, p2 in sub.items():
                    for s3, p3 in _wound(s2, g, w, groups, False).items():
                        _add(sub2, s3, p2 * p3)
                sub = sub2
            for s2, p2 in sub.items():
                _add(nxt, s2, p * p2)
        dist = nxt
    return dist


@dataclass
class Want:
    damage: dict[int, Fraction] = field(default_factory=dict)
    models: dict[int, Fraction] = field(default_factory=dict)
    groups: list[dict[int, Fraction]] = field(default_factory=list)
    weapon_damage: list[Fraction] = field(default_factory=list)
    weapon_kills: list[Fraction] = field(default_factory=list)


def summarise(dist: dict[State, Fraction], groups: list[BG]) -> Want:
    want = Want(groups=[{} for _ in groups])
    n = len(next(iter(dist)).dmg)
    want.weapon_damage = [F(0)] * n
    want.weapon_kills = [F(0)] * n
    for s, p in dist.items():
        _add(want.damage, sum(s.dmg), p)
        _add(want.models, sum(s.kills), p)
        alive: dict[int, int] = defaultdict(int)
        for track in s.tracks:
            for j, _ in track:
                alive[j] += 1
        for j, grp in enumerate(groups):
            _add(want.groups[j], grp.models - alive[j], p)
        for g in range(n):
            want.weapon_damage[g] += p * s.dmg[g]
            want.weapon_kills[g] += p * s.kills[g]
    return want


# --- comparisons ------------------------------------------------------------------------------
def _pmf(d: dict[int, Fraction]) -> np.ndarray:
    out = np.zeros(max(d) + 1)
    for k, p in d.items():
        out[k] += float(p)
    return np.trim_zeros(out, "b") if out.any() else out[:1]


def _same(got: Distribution, want: dict[int, Fraction], what: str) -> None:
    w = _pmf(want)
    g = got.probabilities
    n = max(g.size, w.size)
    a, b = np.zeros(n), np.zeros(n)
    a[:g.size], b[:w.size] = g, w
    gap = float(np.abs(a - b).max())
    assert gap <= TOL, f"{what}: max |engine - expected| = {gap:.3g}\n{g}\n{w}"


def check(r: DamageResult, want: Want) -> None:
    _same(r.damage, want.damage, "damage")
    _same(r.models_destroyed, want.models, "models destroyed")
    assert len(r.groups) == len(want.groups)
    for j, (got, exp) in enumerate(zip(r.groups, want.groups, strict=True)):
        _same(got.models_destroyed, exp, f"group {j} ({got.name})")
    for g, share in enumerate(r.weapons):
        assert share.damage_mean == pytest.approx(float(want.weapon_damage[g]), abs=TOL), f"weapon {g} damage"
        assert share.models_destroyed_mean == pytest.approx(float(want.weapon_kills[g]), abs=TOL), f"weapon {g} kills"


def run(weapons: list[tuple[str, int]], groups: list[Target], *, wounds_left: int | None = None,
        allocation: Allocation = Allocation.DURABLE, context: Context | None = None) -> DamageResult:
    m = Matchup(weapons=tuple(WeaponGroup(weapon=parse_weapon(text, name=f"w{i}"), count=n)
                              for i, (text, n) in enumerate(weapons)),
                target=TargetUnit(name="unit", groups=tuple(groups), wounds_left=wounds_left, allocation=allocation),
                context=context or Context())
    u = compile_matchup(m).unit
    assert u is not None
    return exact_units.run(u)


def tg(name: str, models: int, w: int | None, save: int = 7, **kw: object) -> Target:
    return Target(name=name, toughness=4, save=save, wounds=w, models=models, **kw)  # type: ignore[arg-type]


def wounds(p_wound: Fraction, p_dev: Fraction = Fraction(0)) -> dict[tuple[int, int], Fraction]:
    """One TORRENT attack: a wound needing a save, a Devastating (critical) wound, or nothing."""
    return {(1, 0): p_wound - p_dev, (0, 1): p_dev, (0, 0): 1 - p_wound}


# Hand-derived chances: S4 vs T4 wounds on 4+ (1/2, critical 1/6), S8 vs T4 on 2+ (5/6);
# Sv4+ vs AP0 fails 1/2, Sv3+ 1/3, Sv6+ 5/6, Sv7+ (no save) 1; FNP 5+ loses 2/3 of the points.
HALF, FIVE6, SIXTH = F(1, 2), F(5, 6), F(1, 6)
D3 = {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}


# --- carry-over, saves, Feel No Pain -------------------------------------------------------------
def test_R_9_1_wounded_model_carries_damage_to_the_next_weapon() -> None:
    """A W3 model takes 2 from the first weapon and dies to the second's 1 (closed form)."""
    r = run([("A1 BS- S8 AP0 D2 [TORRENT]", 1), ("A1 BS- S8 AP0 D1 [TORRENT]", 1)], [tg("knight", 1, 3)])
    want = Want(damage={0: SIXTH ** 2, 1: SIXTH * FIVE6, 2: FIVE6 * SIXTH, 3: FIVE6 ** 2},
                models={0: 1 - FIVE6 ** 2, 1: FIVE6 ** 2}, groups=[{0: 1 - FIVE6 ** 2, 1: FIVE6 ** 2}],
                weapon_damage=[2 * FIVE6, FIVE6], weapon_kills=[F(0), FIVE6 ** 2])
    check(r, want)
    # the brute force agrees with the closed form
    b = summarise(brute([BW(1, wounds(FIVE6), {2: F(1)}), BW(1, wounds(FIVE6), {1: F(1)})], [BG(1, 3, F(1))]),
                  [BG(1, 3, F(1))])
    assert b.damage == want.damage and b.weapon_kills == want.weapon_kills


def test_R_7_1_mixed_saves_each_wound_uses_the_allocated_models_save() -> None:
    groups = [tg("sarge", 1, 1, save=3), tg("guards", 2, 1, save=6)]  # both W1: the better save first
    r = run([("A4 BS- S4 AP0 D1 [TORRENT]", 1)], groups)
    bg = [BG(1, 1, F(1, 3)), BG(2, 1, FIVE6)]
    check(r, summarise(brute([BW(4, wounds(HALF), {1: F(1)})], bg), bg))
    assert [g.name for g in r.groups] == ["sarge", "guards"]


def test_R_8_5_mixed_feel_no_pain_and_half_damage() -> None:
    groups = [tg("brute", 1, 3, feel_no_pain=5), tg("grots", 2, 1, half_damage=True)]
    r = run([("A2 BS- S4 AP0 D2 [TORRENT]", 1), ("A2 BS- S8 AP0 D3 [TORRENT]", 1)], groups)
    bg = [BG(1, 3, F(1), lost=F(2, 3)), BG(2, 1, F(1))]
    weapons = [BW(2, wounds(HALF), ({2: F(1)}, {1: F(1)})), BW(2, wounds(FIVE6), ({3: F(1)}, {2: F(1)}))]
    check(r, summarise(brute(weapons, bg), bg))


def test_R_9_1_sustained_and_lethal_hits_across_groups() -> None:
    """BS4+ with SUSTAINED HITS 1 and LETHAL HITS, S4 vs T4: per attack 0 wounds 2/3, 1 wound 1/4,
    2 wounds 1/12 (a 6: one automatic wound and one extra hit that wounds on 4+)."""
    groups = [tg("a", 1, 2, save=4), tg("b", 2, 1, save=6)]
    r = run([("A3 BS4+ S4 AP0 D1 [SUSTAINED HITS 1, LETHAL HITS]", 1)], groups)
    bg = [BG(1, 2, HALF), BG(2, 1, FIVE6)]
    per = {(0, 0): F(2, 3), (1, 0): F(1, 4), (2, 0): F(1, 12)}
    check(r, summarise(brute([BW(3, per, {1: F(1)})], bg), bg))


def test_random_damage_two_weapons_three_groups() -> None:
    groups = [tg("a", 1, 3, save=4), tg("b", 1, 2, save=3), tg("c", 2, 1, save=6, feel_no_pain=5)]
    r = run([("A2 BS- S4 AP0 DD3 [TORRENT]", 1), ("A3 BS- S8 AP0 D1 [TORRENT]", 1)], groups)
    bg = [BG(1, 3, HALF), BG(1, 2, F(1, 3)), BG(2, 1, FIVE6, lost=F(2, 3))]
    check(r, summarise(brute([BW(2, wounds(HALF), D3), BW(3, wounds(FIVE6), {1: F(1)})], bg), bg))


# --- Leaders and Precision -----------------------------------------------------------------------
def test_R_9_4_precision_goes_to_the_leader_first() -> None:
    groups = [tg("guard", 2, 1, save=4), tg("captain", 1, 3, save=4, leader=True)]
    r = run([("A3 BS- S4 AP0 D1 [TORRENT, PRECISION]", 1)], groups)
    p = HALF * HALF  # wounds and the save fails
    assert r.groups[1].p_destroyed() == pytest.approx(float(p ** 3), abs=TOL)  # every attack on the Captain
    assert r.groups[0].models_destroyed.probabilities[0] == pytest.approx(1.0, abs=TOL)
    bg = [BG(2, 1, HALF), BG(1, 3, HALF, leader=True)]
    check(r, summarise(brute([BW(3, wounds(HALF), {1: F(1)}, precision=True)], bg), bg))


def test_R_9_4_leader_never_dies_while_a_bodyguard_lives_without_precision() -> None:
    groups = [tg("guard", 2, 1, save=4), tg("captain", 1, 1, save=4, leader=True)]
    r = run([("A3 BS- S4 AP0 D1 [TORRENT]", 1)], groups)
    p = HALF * HALF
    assert r.groups[1].p_destroyed() == pytest.approx(float(p ** 3), abs=TOL)  # only after both guards
    bg = [BG(2, 1, HALF), BG(1, 1, HALF, leader=True)]
    check(r, summarise(brute([BW(3, wounds(HALF), {1: F(1)})], bg), bg))


def test_R_9_4_precision_then_bodyguard_with_two_weapons() -> None:
    groups = [tg("guard", 2, 2, save=6), tg("captain", 1, 2, save=4, leader=True, feel_no_pain=5)]
    r = run([("A2 BS- S8 AP0 D1 [TORRENT, PRECISION]", 1), ("A2 BS- S4 AP0 D2 [TORRENT]", 1)], groups)
    bg = [BG(2, 2, FIVE6), BG(1, 2, HALF, lost=F(2, 3), leader=True)]
    weapons = [BW(2, wounds(FIVE6), {1: F(1)}, precision=True), BW(2, wounds(HALF), {2: F(1)})]
    check(r, summarise(brute(weapons, bg), bg))


# --- Devastating Wounds --------------------------------------------------------------------------
def test_R_6_3_devastating_wounds_wait_for_the_other_weapons() -> None:
    """2 x W2, no save. A: 1 attack, DEVASTATING D2 (a 6: 1/6 devastating, 4-5: 1/3 normal);
    B: 1 attack D1 (1/2). A normal then B: 3 wounds lost; A devastating with B: B's 1 lands first,
    then the 2 mortal wounds kill that model and the excess is lost: 2 (R-6.4)."""
    weapons = [("A1 BS- S4 AP0 D2 [TORRENT, DEVASTATING WOUNDS]", 1), ("A1 BS- S4 AP0 D1 [TORRENT]", 1)]
    groups = [tg("m", 2, 2)]
    r = run(weapons, groups)
    p3 = F(1, 3) * HALF  # only A normal and B
    assert r.damage.probabilities[3] == pytest.approx(float(p3), abs=TOL)
    bg = [BG(2, 2, F(1))]
    bw = [BW(1, wounds(HALF, SIXTH), {2: F(1)}), BW(1, wounds(HALF), {1: F(1)})]
    check(r, summarise(brute(bw, bg), bg))
    # R-6.4 [VERSION] 2023 text: the devastating excess spills over: + A devastating with B
    r23 = run(weapons, groups, context=Context(rules=RulesVersion.V2023))
    assert r23.damage.probabilities[3] == pytest.approx(float(p3 + SIXTH * HALF), abs=TOL)
    bw23 = [BW(1, wounds(HALF, SIXTH), {2: F(1)}, spill=True), bw[1]]
    check(r23, summarise(brute(bw23, bg), bg))


def test_R_6_3_devastating_from_two_weapons_in_weapon_order_with_precision_and_fnp() -> None:
    groups = [tg("guard", 2, 2, save=4), tg("captain", 1, 3, save=3, leader=True, feel_no_pain=5)]
    weapons = [("A2 BS- S4 AP0 DD3 [TORRENT, DEVASTATING WOUNDS]", 1),
               ("A1 BS- S4 AP0 D2 [TORRENT, DEVASTATING WOUNDS, PRECISION]", 1), ("A1 BS- S8 AP0 D1 [TORRENT]", 1)]
    bg = [BG(2, 2, HALF), BG(1, 3, F(1, 3), lost=F(2, 3), leader=True)]
    bw = [BW(2, wounds(HALF, SIXTH), D3), BW(1, wounds(HALF, SIXTH), {2: F(1)}, precision=True),
          BW(1, wounds(FIVE6), {1: F(1)})]
    check(run(weapons, groups), summarise(brute(bw, bg), bg))
    bw23 = [BW(w.attacks, w.per_attack, w.damage, w.precision, spill=True) for w in bw]
    check(run(weapons, groups, context=Context(rules=RulesVersion.V2023)), summarise(brute(bw23, bg), bg))


def test_R_6_4_2023_spill_feel_no_pain_of_the_model_each_point_lands_on() -> None:
    """A devastating D3 at a W1 model without FNP then W2 models with FNP 5+ (2023 text)."""
    groups = [tg("a", 1, 1, save=3), tg("b", 2, 2, save=3, feel_no_pain=5)]
    weapons = [("A2 BS- S4 AP0 DD3 [TORRENT, DEVASTATING WOUNDS]", 1)]
    bg = [BG(1, 1, F(1, 3)), BG(2, 2, F(1, 3), lost=F(2, 3))]
    r = run(weapons, groups, allocation=Allocation.LISTED, context=Context(rules=RulesVersion.V2023))
    check(r, summarise(brute([BW(2, wounds(HALF, SIXTH), D3, spill=True)], bg), bg))


# --- wounds left and allocation order ------------------------------------------------------------
def test_wounds_left_first_model_has_lost_wounds() -> None:
    """2 x W3 with the first at 1 wound left: one D1 wound destroys it (5/6)."""
    r = run([("A1 BS- S8 AP0 D1 [TORRENT]", 1)], [tg("m", 2, 3)], wounds_left=1)
    check(r, Want(damage={0: SIXTH, 1: FIVE6}, models={0: SIXTH, 1: FIVE6}, groups=[{0: SIXTH, 1: FIVE6}],
                  weapon_damage=[FIVE6], weapon_kills=[FIVE6]))


def test_wounds_left_mixed_groups_and_two_weapons() -> None:
    groups = [tg("big", 1, 4, save=4), tg("small", 2, 2, save=5)]
    r = run([("A2 BS- S4 AP0 D2 [TORRENT]", 1), ("A2 BS- S8 AP0 DD3 [TORRENT]", 1)], groups, wounds_left=2)
    bg = [BG(1, 4, HALF), BG(2, 2, F(2, 3))]
    check(r, summarise(brute([BW(2, wounds(HALF), {2: F(1)}), BW(2, wounds(FIVE6), D3)], bg, wounds_left=2), bg))


@pytest.mark.parametrize("allocation", list(Allocation))
def test_R_9_1_durable_and_listed_order(allocation: Allocation) -> None:
    """Listed [2 x W1, 1 x W2], two automatic-ish D1 wounds (5/6 each, no save): durable puts them
    on the W2 model first, listed on the W1 models."""
    groups = [tg("small", 2, 1), tg("big", 1, 2)]
    r = run([("A2 BS- S8 AP0 D1 [TORRENT]", 1)], groups, allocation=allocation)
    both = FIVE6 ** 2
    names = [g.name for g in r.groups]
    if allocation is Allocation.DURABLE:
        assert names == ["big", "small"]
        want_groups = [{0: 1 - both, 1: both}, {0: F(1)}]
    else:
        assert names == ["small", "big"]
        want_groups = [{0: SIXTH ** 2, 1: 2 * FIVE6 * SIXTH, 2: both}, {0: F(1)}]
    for got, want in zip(r.groups, want_groups, strict=True):
        _same(got.models_destroyed, want, got.name)


# --- equalities with the single-weapon engine ----------------------------------------------------
def test_listing_a_weapon_twice_equals_double_the_count() -> None:
    groups = [tg("a", 3, 2, save=4), tg("b", 1, 3, save=3, leader=True)]
    w = "A2 BS3+ S5 AP-1 DD3 [SUSTAINED HITS 1, DEVASTATING WOUNDS]"
    once = run([(w, 2)], groups)
    twice = run([(w, 1), (w, 1)], groups)
    for a, b in [(once.damage, twice.damage), (once.models_destroyed, twice.models_destroyed),
                 *[(x.models_destroyed, y.models_destroyed) for x, y in zip(once.groups, twice.groups, strict=True)]]:
        assert np.abs(a.probabilities - b.probabilities).max() <= TOL


@pytest.mark.parametrize("weapon", ["A3 BS3+ S5 AP-1 DD3 [SUSTAINED HITS 1]", "A4 BS4+ S4 AP0 D2 [LETHAL HITS]",
                                    "A3 BS3+ S6 AP-1 D2 [DEVASTATING WOUNDS]", "AD6 BS3+ S4 AP0 D1"])
def test_two_identical_groups_equal_one_group_of_the_single_engine(weapon: str) -> None:
    """Split 5 identical W2 models into groups of 3 and 2: the single-target exact engine (checked
    against the Fraction oracle in test_exact.py) on the 5 models gives the same distributions."""
    split = run([(weapon, 2)], [tg("m", 3, 2, save=4, feel_no_pain=6), tg("m", 2, 2, save=4, feel_no_pain=6)])
    whole = exact.run(compile_matchup(Matchup(weapons=(WeaponGroup(weapon=parse_weapon(weapon), count=2),),
                                              target=tg("m", 5, 2, save=4, feel_no_pain=6))).inputs)
    for a, b in [(split.damage, whole.damage), (split.models_destroyed, whole.models_destroyed)]:
        assert a.probabilities.size == b.probabilities.size
        assert np.abs(a.probabilities - b.probabilities).max() <= TOL
    for key, d in split.stages.items():
        assert np.abs(d.probabilities - whole.stages[key].probabilities).max() <= TOL, key


def test_stages_fixed_before_allocation_are_summed_over_weapons() -> None:
    r = run([("A1 BS- S8 AP0 D2 [TORRENT]", 1), ("A2 BS- S4 AP0 D1 [TORRENT]", 1)], [tg("m", 2, 2), tg("n", 1, 1)])
    assert set(r.stages) == {"attacks", "hits", "critical_hits", "wounds", "critical_wounds", "lethal",
                             "devastating"}
    _same(r.stages["attacks"], {3: F(1)}, "attacks")
    # wounds: Binomial(1, 5/6) + Binomial(2, 1/2)
    want = {0: SIXTH / 4, 1: FIVE6 / 4 + SIXTH / 2, 2: FIVE6 / 2 + SIXTH / 4, 3: FIVE6 / 4}
    _same(r.stages["wounds"], want, "wounds")


def test_unlimited_wounds_lone_group_sums_every_weapon() -> None:
    """R-9.5: no allocation; the two weapons' damage adds up."""
    r = run([("A1 BS- S8 AP0 D2 [TORRENT]", 1), ("A1 BS- S8 AP0 D1 [TORRENT]", 1)], [tg("tank", 1, None)])
    _same(r.damage, {0: SIXTH ** 2, 1: SIXTH * FIVE6, 2: FIVE6 * SIXTH, 3: FIVE6 ** 2}, "damage")
    _same(r.models_destroyed, {0: F(1)}, "models")
    assert [w.damage_mean for w in r.weapons] == pytest.approx([float(2 * FIVE6), float(FIVE6)], abs=TOL)
    _same(r.stages["damage_after_fnp"], {0: SIXTH ** 2, 1: SIXTH * FIVE6, 2: FIVE6 * SIXTH, 3: FIVE6 ** 2}, "stage")


def test_R_9_7_hazardous_tests_of_every_group_after_the_attacks() -> None:
    """2 + 3 models fire Hazardous weapons: 3 x Binomial(5, 1/6) wounds (attacker unknown)."""
    r = run([("A1 BS4+ S4 AP0 D1 [HAZARDOUS]", 2), ("A1 BS4+ S5 AP0 D1 [HAZARDOUS]", 3)], [tg("m", 3, 1)])
    assert r.hazardous is not None
    _same(r.hazardous, {3 * k: p for k, p in _binomial(5, SIXTH).items()}, "hazardous")
    assert r.hazardous.mean() == pytest.approx(2.5, abs=TOL)


def test_result_contract() -> None:
    r = run([("A2 BS3+ S4 AP0 D1", 3), ("A1 BS3+ S8 AP-2 D2", 1)],
            [tg("guard", 4, 1, save=4), tg("captain", 1, 4, save=3, leader=True)])
    assert (r.method, r.trials, r.seed, r.target_models) == ("exact", None, None, 5)
    assert [g.name for g in r.groups] == ["guard", "captain"] and [g.leader for g in r.groups] == [False, True]
    assert [(w.name, w.count) for w in r.weapons] == [("w0", 3), ("w1", 1)]
    assert sum(w.damage_mean for w in r.weapons) == pytest.approx(r.damage.mean(), abs=TOL)
    assert sum(w.models_destroyed_mean for w in r.weapons) == pytest.approx(r.models_destroyed.mean(), abs=TOL)
    assert r.damage.probabilities.sum() == pytest.approx(1.0, abs=TOL)
    assert r.hazardous is None and r.hazard_models is None


# --- refusals ------------------------------------------------------------------------------------
def test_R_3_7_command_reroll_refused_in_one_line() -> None:
    with pytest.raises(NotExactError) as e:
        run([("A2 BS3+ S4 AP0 D1", 1), ("A1 BS3+ S4 AP0 D1", 1)], [tg("m", 3, 1)],
            context=Context(command_reroll=CommandReroll.HIT))
    text = e.value.message()
    assert "\n" not in text and "Command Re-roll" in text and "Monte Carlo" in text


def test_too_large_refused_before_it_starts() -> None:
    with pytest.raises(NotExactError) as e:
        run([("A1 BS3+ S4 AP0 D1", 1)], [tg("horde", 500, 1000), tg("boss", 1, 1000, leader=True)])
    text = e.value.message()
    assert "\n" not in text and "too large to compute exactly" in text and "allocation states" in text


# --- mortal wounds (R-9.3) -----------------------------------------------------------------------
def test_R_9_3_four_mortal_wounds_vs_three_W2_kill_two() -> None:
    r = spill(tg("m", 3, 2), {4: F(1)})
    _same(r.models_destroyed, {2: F(1)}, "models")
    _same(r.damage, {4: F(1)}, "damage")
    _same(r.groups[0].models_destroyed, {2: F(1)}, "group")


def _mortal_brute(groups: list[BG], n_dist: dict[int, Fraction], wounds_left: int | None = None) -> Want:
    s0 = _start(groups, wounds_left)
    s0 = State(s0.tracks, (0,), (0,), (0,))
    dist: dict[State, Fraction] = {}
    for n, p in n_dist.items():
        for s, q in _points({s0: F(1)}, n, 0, False, groups).items():
            _add(dist, s, p * q)
    return summarise(dist, groups)


def test_R_9_3_mortal_wounds_feel_no_pain_per_group_then_the_leader() -> None:
    target = TargetUnit(name="u", groups=(tg("guard", 2, 2, feel_no_pain=5), tg("runt", 1, 1),
                                          tg("boss", 1, 3, feel_no_pain=4, leader=True)))
    n_dist = {0: F(1, 4), 3: F(1, 4), 6: F(1, 4), 9: F(1, 4)}
    r = spill(target, n_dist)
    bg = [BG(2, 2, F(1), lost=F(2, 3)), BG(1, 1, F(1)), BG(1, 3, F(1), lost=HALF, leader=True)]
    want = _mortal_brute(bg, n_dist)
    _same(r.damage, want.damage, "damage")
    _same(r.models_destroyed, want.models, "models")
    for got, exp in zip(r.groups, want.groups, strict=True):
        _same(got.models_destroyed, exp, got.name)


def test_R_9_3_mortal_wounds_with_wounds_left_and_a_sequence() -> None:
    target = TargetUnit(name="u", groups=(tg("m", 3, 3),), wounds_left=1)
    r = spill(target, [0.5, 0.0, 0.5])  # P(0) = P(2) = 1/2: 2 points kill the wounded model and wound the next
    _same(r.models_destroyed, {0: HALF, 1: HALF}, "models")
    _same(r.damage, {0: HALF, 2: HALF}, "damage")


def test_R_9_3_mortal_wounds_unlimited_wounds_binomial_fnp() -> None:
    r = spill(tg("knight", 1, None, feel_no_pain=5), {2: F(1)})
    _same(r.damage, _binomial(2, F(2, 3)), "damage")
    _same(r.models_destroyed, {0: F(1)}, "models")


@pytest.mark.parametrize("bad", [{-1: F(1)}, {2: F(1, 2)}, {1: F(3, 2), 2: F(-1, 2)}, [], {1.5: 1.0}])
def test_mortal_bad_distribution_one_line(bad: object) -> None:
    with pytest.raises(InputError) as e:
        spill(tg("m", 3, 2), bad)  # type: ignore[arg-type]
    assert "\n" not in e.value.message() and e.value.where == "mortal wounds"


def test_mortal_too_many_refused() -> None:
    with pytest.raises(NotExactError) as e:
        spill(TargetUnit(name="u", groups=(tg("m", 500, 1000), tg("b", 1, 1000, leader=True))), {1000: F(1)})
    assert "\n" not in e.value.message()
