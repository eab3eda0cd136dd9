"""Whole units (issue 9): worked small cases, engines vs the brute-force oracle.

The oracle (tests/oracles.py, ``unit_attack``) is written from the rules and the allocation
ruling of issue 9, never from the package. This file has three parts:

1. Self-checks of the oracle alone (no engine): against the single-weapon oracle, hand-worked
   cases, closed forms, and a second enumerator organised differently (attack by attack, die
   face by die face, each wound allocated as soon as it is scored).
2. The exact engine against the oracle, case by case, within 1e-9.
3. Monte Carlo (200k trials, fixed seeds) against the oracle within 5 standard errors, each test
   with a planted mutant (an oracle with one rule broken) that the same sample must reject; an
   oracle-only check shows every mutant sits at least 12 standard errors away from the truth.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction as F
from functools import cache

import numpy as np
import pytest

from mathhammer.engine import analyse
from mathhammer.model import Allocation, Context, Matchup, Method, Target, TargetUnit, WeaponGroup
from mathhammer.notation import parse_weapon

from .oracles import (
    ModelGroup,
    Scenario,
    UnitOutcome,
    UnitWeapon,
    joint_distribution,
    mean,
    unit_attack,
    unit_toughness,
    unit_weapon_wounds,
)

TRIALS = 200_000
TOL_SE = 5          # Monte Carlo tolerance, in standard errors
POWER_SE = 12       # a mutant must sit this many (true) standard errors away from the truth

# --------------------------------------------------------------------------------------------
# The worked cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """Weapons in firing order; ``groups`` in TargetUnit order; ``order``: the allocation order
    worked out by hand (Bodyguard groups by the policy, then Leader groups)."""
    id: str
    weapons: tuple[UnitWeapon, ...]
    groups: tuple[ModelGroup, ...]
    order: tuple[str, ...]
    wounds_left: int | None = None
    allocation: Allocation = Allocation.LISTED
    seed: int = 0
    #: the planted bug of the Monte Carlo test: an oracle with one rule broken
    mutant: Callable[[Case], UnitOutcome] = field(default=lambda c: oracle(c), compare=False)


def ordered(case: Case) -> tuple[ModelGroup, ...]:
    by_name = {g.name: g for g in case.groups}
    return tuple(by_name[n] for n in case.order)


def oracle(case: Case, **kw) -> UnitOutcome:
    return unit_attack(case.weapons, ordered(case), wounds_left=case.wounds_left, **kw)


def _g(name: str, models: int, wounds: int, save: int, *, t: int = 4, inv: int | None = None,
       fnp: int | None = None, leader: bool = False) -> ModelGroup:
    return ModelGroup(models=models, wounds=wounds, toughness=t, save=save, invuln=inv, fnp=fnp,
                      leader=leader, name=name)


def _w(name: str, count: int, attacks: str, bs: int | None, s: int, ap: int, d: str, **kw) -> UnitWeapon:
    return UnitWeapon(attacks=attacks, count=count, bs=bs, strength=s, ap=ap, damage=d, name=name, **kw)


def _no_precision(c: Case) -> UnitOutcome:
    return unit_attack(tuple(replace(w, precision=False) for w in c.weapons), ordered(c), wounds_left=c.wounds_left)


def _first_save_everywhere(c: Case) -> UnitOutcome:
    first = ordered(c)[0]
    groups = tuple(replace(g, save=first.save, invuln=first.invuln) for g in ordered(c))
    return unit_attack(c.weapons, groups, wounds_left=c.wounds_left)


def _first_fnp_everywhere(c: Case) -> UnitOutcome:
    first = ordered(c)[0]
    return unit_attack(c.weapons, tuple(replace(g, fnp=first.fnp) for g in ordered(c)), wounds_left=c.wounds_left)


def _leader_role_ignored(c: Case) -> UnitOutcome:
    # the groups in the order the TargetUnit gives them, nobody a Leader
    return unit_attack(c.weapons, tuple(replace(g, leader=False) for g in c.groups), wounds_left=c.wounds_left)


def _other_order(c: Case) -> UnitOutcome:
    return unit_attack(c.weapons, tuple(reversed(ordered(c))), wounds_left=c.wounds_left)


CARRY_OVER = Case(
    "carry_over",
    weapons=(_w("plasma", 2, "2", 3, 5, 0, "2"), _w("bolter", 2, "2", 3, 5, -1, "1")),
    groups=(_g("marines", 3, 3, 5),), order=("marines",), seed=9101,
    mutant=lambda c: oracle(c, carry_over=False))

MIXED_SAVES = Case(
    "mixed_saves",
    weapons=(_w("rifle", 3, "2", 3, 4, -2, "1"), _w("lance", 2, "1", 4, 6, -4, "1")),
    groups=(_g("armoured", 3, 1, 3), _g("warded", 3, 1, 6, inv=4)), order=("armoured", "warded"),
    seed=9102, mutant=_first_save_everywhere)

MIXED_FNP = Case(
    "mixed_fnp",
    weapons=(_w("cannon", 2, "3", 3, 4, 0, "2"), _w("pistol", 2, "2", 3, 4, 0, "1")),
    groups=(_g("tough", 2, 2, 6, fnp=4), _g("plain", 2, 2, 6)), order=("tough", "plain"),
    seed=9103, mutant=_first_fnp_everywhere)

PRECISION = Case(
    "precision",
    weapons=(_w("sniper", 2, "2", 3, 4, -1, "2", precision=True), _w("carbine", 3, "2", 3, 4, 0, "1")),
    groups=(_g("bodyguard", 4, 1, 4), _g("captain", 1, 4, 3, t=5, inv=4, leader=True)),
    order=("bodyguard", "captain"), seed=9104, mutant=_no_precision)

DEVASTATING = Case(
    "devastating_two_weapons",
    weapons=(_w("shard", 2, "3", 3, 4, 0, "1", devastating=True), _w("blade", 2, "2", 3, 5, -1, "2")),
    groups=(_g("wardens", 3, 2, 3),), order=("wardens",), seed=9105,
    mutant=lambda c: oracle(c, defer_devastating=False))

DEVASTATING_BOTH = Case(
    "devastating_both_weapons",   # both set aside until after both weapons, then weapon by weapon
    weapons=(_w("splinter", 3, "2", 3, 4, 0, "1", devastating=True, sustained="1"),
             _w("hexrifle", 2, "2", 3, 4, -1, "D3", devastating=True)),
    groups=(_g("wardens", 2, 2, 3), _g("sergeant", 1, 3, 3, inv=4)), order=("wardens", "sergeant"), seed=9112,
    mutant=lambda c: oracle(c, defer_devastating=False))

WOUNDS_LEFT = Case(
    "wounds_left",
    weapons=(_w("melta", 2, "2", 3, 5, -1, "2"),),
    groups=(_g("terminators", 3, 3, 4),), order=("terminators",), wounds_left=1, seed=9106,
    mutant=lambda c: unit_attack(c.weapons, ordered(c)))

LEADER_SAFE = Case(
    "leader_safe_without_precision",
    weapons=(_w("shoota", 5, "2", 3, 4, -1, "1"), _w("rokkit", 2, "1", 3, 8, -2, "2")),
    # the Leader is given FIRST: the allocation still puts it last
    groups=(_g("warboss", 1, 5, 3, leader=True), _g("boyz", 5, 1, 5)), order=("boyz", "warboss"),
    seed=9107, mutant=_leader_role_ignored)

_TWICE_W = _w("bolt rifle", 1, "2", 3, 4, -1, "1", sustained="1")
TWICE = Case(
    "weapon_twice",
    weapons=(replace(_TWICE_W, count=2), replace(_TWICE_W, count=1)),
    groups=(_g("boyz", 5, 1, 5, t=5), _g("nob", 1, 2, 4, t=5)), order=("boyz", "nob"), seed=9108,
    mutant=lambda c: unit_attack(c.weapons[:1], ordered(c)))     # the second listing dropped

DURABLE = Case(
    "durable",
    weapons=(_w("heavy bolter", 3, "2", 3, 5, -1, "2"),),
    groups=(_g("boyz", 5, 1, 5, t=5), _g("nob", 1, 3, 4, t=5)), order=("nob", "boyz"),
    allocation=Allocation.DURABLE, seed=9109, mutant=_other_order)

LISTED = replace(DURABLE, id="listed", order=("boyz", "nob"), allocation=Allocation.LISTED, seed=9110)

COMBINED = Case(
    "combined",   # Precision Devastating at a wounded Attached unit with Feel No Pain, Lethal Hits
    weapons=(_w("needle", 2, "2", 3, 4, -1, "2", precision=True, devastating=True),
             _w("claw", 2, "2", 3, 5, -1, "1", lethal=True)),
    groups=(_g("guards", 3, 2, 4, fnp=6), _g("lord", 1, 4, 3, inv=4, fnp=5, leader=True)),
    order=("guards", "lord"), wounds_left=1, seed=9111, mutant=_no_precision)

CASES = (CARRY_OVER, MIXED_SAVES, MIXED_FNP, PRECISION, DEVASTATING, DEVASTATING_BOTH, WOUNDS_LEFT, LEADER_SAFE, TWICE,
         DURABLE, LISTED, COMBINED)
BY_ID = {c.id: c for c in CASES}


@cache
def truth(case_id: str) -> UnitOutcome:
    return oracle(BY_ID[case_id])


@cache
def planted(case_id: str) -> UnitOutcome:
    case = BY_ID[case_id]
    return case.mutant(case)


def _ids(cases: tuple[Case, ...]) -> list[str]:
    return [c.id for c in cases]


# --------------------------------------------------------------------------------------------
# 1. Self-checks of the oracle (no engine)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("s", [
    Scenario(attacks="2", models_firing=3, bs=3, strength=4, toughness=5, ap=-1, save=5, damage="1",
             target_models=6, target_wounds=1),
    Scenario(attacks="D3", models_firing=2, bs=3, strength=4, toughness=4, ap=-1, save=4, damage="D3",
             target_models=3, target_wounds=3, fnp=5, devastating=True, sustained="1"),
    Scenario(attacks="3", models_firing=2, bs=4, strength=6, toughness=4, ap=-2, save=3, invuln=4, damage="2",
             target_models=4, target_wounds=2, lethal=True, sustained="D3", twin_linked=True),
    Scenario(attacks="2", models_firing=2, bs=None, strength=5, toughness=4, ap=0, save=6, damage="3",
             target_models=2, target_wounds=4, devastating=True, rules="2023"),
], ids=["plain", "dev_fnp_d3", "lethal_sustained_twin", "torrent_dev_2023"])
def test_oracle_one_group_equals_single_weapon_oracle(s: Scenario) -> None:
    w = UnitWeapon(attacks=s.attacks, count=s.models_firing, bs=s.bs, strength=s.strength, ap=s.ap,
                   damage=s.damage, sustained=s.sustained, lethal=s.lethal, devastating=s.devastating,
                   twin_linked=s.twin_linked)
    grp = ModelGroup(models=s.target_models, wounds=s.target_wounds, toughness=s.toughness, save=s.save,
                     invuln=s.invuln, fnp=s.fnp)
    out = unit_attack((w,), (grp,), rules=s.rules)
    assert out.joint == joint_distribution(s)
    assert out.weapon_damage == (mean(out.damage),)
    assert out.weapon_kills == (mean(out.models_destroyed),)


def test_R_9_1_oracle_hand_worked_carry_over() -> None:
    """2 models W2, no save; two TORRENT S8 D1 weapons, one attack each (wound on 2+: 5/6).
    The first model dies only if both wound, the kill credited to the second weapon."""
    w = _w("a", 1, "1", None, 8, 0, "1")
    out = unit_attack((w, replace(w, name="b")), (_g("m", 2, 2, 7),))
    assert out.joint == {(0, 0): F(1, 36), (1, 0): F(10, 36), (2, 1): F(25, 36)}
    assert out.weapon_damage == (F(5, 6), F(5, 6))
    assert out.weapon_kills == (0, F(25, 36))
    healed = unit_attack((w, replace(w, name="b")), (_g("m", 2, 2, 7),), carry_over=False)
    assert healed.models_destroyed == {0: 1}


def test_R_9_4_oracle_hand_worked_precision() -> None:
    """Attached: 1 bodyguard W1, 1 leader W1, no saves; a TORRENT S8 D1 Precision attack, then a
    normal one: each kills its own target with 5/6. Without Precision the leader dies only if
    both wound."""
    prec = _w("p", 1, "1", None, 8, 0, "1", precision=True)
    norm = _w("n", 1, "1", None, 8, 0, "1")
    groups = (_g("bg", 1, 1, 7), _g("ld", 1, 1, 7, leader=True))
    out = unit_attack((prec, norm), groups)
    assert out.group_destroyed(1) == {1: F(5, 6), 0: F(1, 6)}
    assert out.group_destroyed(0) == {1: F(5, 6), 0: F(1, 6)}
    without = unit_attack((replace(prec, precision=False), norm), groups)
    assert without.group_destroyed(1) == {1: F(25, 36), 0: F(11, 36)}


def test_R_6_3_oracle_hand_worked_devastating_deferred() -> None:
    """2 models W2, no save. Weapon 1: TORRENT S8 D1 Devastating (wound roll 2-5: 1 damage now;
    6: 1 mortal wound later). Weapon 2: TORRENT S8 D2. Deferred, a 6 then a wound from weapon 2
    kills the first model with 2 and the mortal wound goes to the second: 3 wounds lost."""
    dev = _w("dev", 1, "1", None, 8, 0, "1", devastating=True)
    big = _w("big", 1, "1", None, 8, 0, "2")
    out = unit_attack((dev, big), (_g("m", 2, 2, 7),))
    assert out.joint == {(3, 1): F(5, 36), (2, 1): F(25, 36), (1, 0): F(5, 36), (0, 0): F(1, 36)}
    assert out.weapon_damage == (F(5, 6), F(10, 9))
    assert out.weapon_kills == (0, F(5, 6))
    now = unit_attack((dev, big), (_g("m", 2, 2, 7),), defer_devastating=False)
    assert now.joint == {(2, 1): F(30, 36), (1, 0): F(5, 36), (0, 0): F(1, 36)}


def test_oracle_hand_worked_wounds_left() -> None:
    """2 models W3 with 1 wound left on the first; two TORRENT S8 D3 attacks: each wound kills a
    model, the first one costing 1 wound, the next 3."""
    out = unit_attack((_w("m", 2, "1", None, 8, 0, "3"),), (_g("t", 2, 3, 7),), wounds_left=1)
    assert out.joint == {(0, 0): F(1, 36), (1, 1): F(10, 36), (4, 2): F(25, 36)}


def test_R_7_1_oracle_hand_worked_mixed_saves() -> None:
    """Groups in order: A (1 model W1 Sv2+, saves 5/6 at AP0), B (1 model W1 Sv7+ 4++, saves 1/2).
    Two TORRENT S8 attacks (5/6 wound each); B is reached only if A dies to the first wound."""
    groups = (_g("A", 1, 1, 2), _g("B", 1, 1, 7, inv=4))
    out = unit_attack((_w("t", 2, "1", None, 8, 0, "1"),), groups)
    p_a = F(5, 6) * F(1, 6) + F(5, 6) * F(5, 6) * F(5, 6) * F(1, 6) + F(1, 6) * F(5, 6) * F(1, 6)
    assert out.group_destroyed(0)[1] == p_a
    assert out.group_destroyed(1)[1] == F(5, 6) * F(1, 6) * F(5, 6) * F(1, 2)


def test_R_8_5_oracle_hand_worked_mixed_fnp() -> None:
    """A (1 model W1, FNP 4+) then B (1 model W1, no FNP), no saves; two TORRENT S8 D1 attacks."""
    groups = (_g("A", 1, 1, 7, fnp=4), _g("B", 1, 1, 7))
    out = unit_attack((_w("t", 2, "1", None, 8, 0, "1"),), groups)
    # A dies to its first wound that is not ignored: P = 5/6*1/2 + (5/6*1/2 + 1/6) * 5/6*1/2
    p_a = F(5, 12) + (F(5, 12) + F(1, 6)) * F(5, 12)
    assert out.group_destroyed(0)[1] == p_a
    assert out.group_destroyed(1)[1] == F(5, 12) * F(5, 6)      # B: A died first, B has no FNP


@pytest.mark.parametrize("weapon", [
    _w("plain", 2, "2", 3, 4, -1, "1"),
    _w("dev", 2, "2", 3, 5, -1, "D3", devastating=True, sustained="1"),
    _w("prec", 2, "2", 3, 4, -1, "2", precision=True, lethal=True),
], ids=lambda w: w.name)
def test_oracle_weapon_twice_equals_double_count(weapon: UnitWeapon) -> None:
    groups = (_g("bg", 3, 1, 5, fnp=6), _g("nob", 1, 2, 4, inv=5), _g("ld", 1, 3, 3, leader=True))
    split = unit_attack((replace(weapon, count=1), replace(weapon, count=1)), groups, wounds_left=1)
    whole = unit_attack((weapon,), groups, wounds_left=1)
    assert split.joint == whole.joint
    assert split.per_group == whole.per_group
    assert sum(split.weapon_damage) == whole.weapon_damage[0]
    assert sum(split.weapon_kills) == whole.weapon_kills[0]


@pytest.mark.parametrize("case", [LEADER_SAFE, replace(MIXED_FNP, id="x", groups=(
    _g("tough", 2, 2, 6, fnp=4), _g("plain", 2, 2, 6, leader=True)))], ids=["leader_safe", "fnp_leader"])
def test_R_9_4_oracle_leader_untouched_while_a_bodyguard_lives(case: Case) -> None:
    out = oracle(case)
    groups = ordered(case)
    lead = next(j for j, g in enumerate(groups) if g.leader)
    bodyguard = sum(g.models for g in groups if not g.leader)
    touched = sum(p for key, p in out.per_group.items()
                  if key[lead][1] > 0 and sum(d for j, (d, _) in enumerate(key) if j != lead) < bodyguard)
    assert touched == 0
    assert out.group_destroyed(lead).get(1, 0) > 0       # but the leader can die
    # and Precision does touch it while bodyguards live
    prec = unit_attack(tuple(replace(w, precision=True) for w in case.weapons), groups)
    touched = sum(p for key, p in prec.per_group.items()
                  if key[lead][1] > 0 and sum(d for j, (d, _) in enumerate(key) if j != lead) < bodyguard)
    assert touched > 0


def test_oracle_unit_toughness_is_the_bodyguards() -> None:
    """The Wound roll uses the Bodyguard T (the highest), never the Leader's."""
    groups = (_g("a", 1, 1, 7, t=4), _g("b", 1, 1, 7, t=5), _g("ld", 1, 1, 7, t=10, leader=True))
    assert unit_toughness(groups) == 5
    assert unit_toughness((replace(groups[2], leader=True),)) == 10       # a lone Leader: its own T
    w = _w("t", 1, "1", None, 5, 0, "1")
    assert unit_weapon_wounds(w, 5) == {(1, 0): F(1, 2), (0, 0): F(1, 2)}   # S5 vs T5: 4+
    # the leader alone left: still T5
    out = unit_attack((w,), groups, wounds_left=None)
    assert out.joint == {(1, 1): F(1, 2), (0, 0): F(1, 2)}


def test_oracle_probabilities_and_means_are_consistent() -> None:
    for case in CASES:
        out = truth(case.id)
        assert sum(out.joint.values()) == 1
        assert sum(out.weapon_damage) == mean(out.damage)
        assert sum(out.weapon_kills) == mean(out.models_destroyed)
        total = sum(g.models for g in case.groups)
        assert max(out.models_destroyed) <= total


# ---- a second enumerator, organised differently --------------------------------------------

def _sequential(weapons: tuple[UnitWeapon, ...], groups: tuple[ModelGroup, ...],
                wounds_left: int | None = None) -> tuple[dict, tuple[F, ...], tuple[F, ...]]:
    """Attack by attack in firing order, every die face by face, each wound allocated as soon as
    it is scored; per-weapon tallies carried in the state (no linearity argument). Fixed A,
    fixed or D3 damage, fixed Sustained, no re-rolls. Returns (P(damage, destroyed), E[damage
    per weapon], E[kills per weapon])."""
    attached = any(g.leader for g in groups) and not all(g.leader for g in groups)
    tracks = ([j for j, g in enumerate(groups) if not (attached and g.leader)],
              [j for j, g in enumerate(groups) if attached and g.leader])
    models = [[j for j in tr for _ in range(groups[j].models)] for tr in tracks]
    tough = max(groups[j].toughness for j in tracks[0])
    n_w = len(weapons)
    lost0 = 0 if wounds_left is None else groups[models[0][0]].wounds - wounds_left

    def need(s: int, t: int) -> int:
        return 2 if s >= 2 * t else 3 if s > t else 4 if s == t else 6 if 2 * s <= t else 5

    def pick(pos, prec):
        if prec and attached and pos[1] < len(models[1]):
            return 1
        if pos[0] < len(models[0]):
            return 0
        return 1 if pos[1] < len(models[1]) else None

    def faces(expr: str) -> list[tuple[int, F]]:
        return [((u + 1) // 2, F(1, 6)) for u in range(1, 7)] if expr == "D3" else [(int(expr), F(1))]

    def saves(g: ModelGroup, ap: int) -> F:
        arm = sum(1 for u in range(2, 7) if u + ap >= g.save)
        inv = sum(1 for u in range(2, 7) if g.invuln is not None and u >= g.invuln)
        return F(max(arm, inv), 6)

    def damage_then(st, gi, devastating):
        """The wound of weapon gi goes to a model now: save (unless devastating), damage, FNP."""
        pos, lost, dmg, pend, wd, wk = st
        w = weapons[gi]
        t = pick(pos, w.precision)
        if t is None:
            return {st: F(1)}
        grp = groups[models[t][pos[t]]]
        p_save = F(0) if devastating else saves(grp, w.ap)
        out = {st: p_save} if p_save else {}
        for value, pv in faces(w.damage):
            pts = {0: F(1)}
            for _ in range(value):                       # one FNP die per point
                nxt: dict = {}
                for k, q in pts.items():
                    for u in range(1, 7):
                        k2 = k if grp.fnp is not None and u >= grp.fnp else k + 1
                        nxt[k2] = nxt.get(k2, 0) + q / 6
                pts = nxt
            for k, q in pts.items():
                room = grp.wounds - lost[t]
                take = min(k, room)
                npos, nlost = list(pos), list(lost)
                if take == room:
                    npos[t] += 1
                    nlost[t] = 0
                else:
                    nlost[t] += take
                nwd, nwk = list(wd), list(wk)
                nwd[gi] += take
                nwk[gi] += take == room
                key = (tuple(npos), tuple(nlost), dmg + take, pend, tuple(nwd), tuple(nwk))
                out[key] = out.get(key, 0) + (1 - p_save) * pv * q
        return out

    def push(dist, fn):
        new: dict = {}
        for st, p in dist.items():
            for st2, q in fn(st).items():
                new[st2] = new.get(st2, 0) + p * q
        return new

    def wound_roll(st, gi):
        w = weapons[gi]
        out: dict = {}
        for u in range(1, 7):
            if u == 1 or u < need(w.strength, tough):
                out[st] = out.get(st, 0) + F(1, 6)
            elif u == 6 and w.devastating:
                pend = list(st[3])
                pend[gi] += 1
                s2 = (*st[:3], tuple(pend), *st[4:])
                out[s2] = out.get(s2, 0) + F(1, 6)
            else:
                for s2, q in damage_then(st, gi, False).items():
                    out[s2] = out.get(s2, 0) + q / 6
        return out

    def attack(st, gi):
        w = weapons[gi]
        out: dict = {}
        for u in ([0] if w.bs is None else range(1, 7)):
            p = F(1) if w.bs is None else F(1, 6)
            if w.bs is not None and (u == 1 or u < w.bs):
                out[st] = out.get(st, 0) + p
                continue
            crit = w.bs is not None and u == 6
            sub = {st: p}
            if crit and w.lethal:
                sub = push(sub, lambda s: damage_then(s, gi, False))
            else:
                sub = push(sub, lambda s: wound_roll(s, gi))
            for _ in range(int(w.sustained) if crit else 0):
                sub = push(sub, lambda s: wound_roll(s, gi))
            for s2, q in sub.items():
                out[s2] = out.get(s2, 0) + q
        return out

    dist = {((0, 0), (lost0, 0), 0, (0,) * n_w, (0,) * n_w, (0,) * n_w): F(1)}
    for gi, w in enumerate(weapons):
        for _ in range(int(w.attacks) * w.count):
            dist = push(dist, lambda s, gi=gi: attack(s, gi))
    for gi in range(n_w):
        def dev(st, gi=gi):
            pend = list(st[3])
            pend[gi] -= 1
            return damage_then((*st[:3], tuple(pend), *st[4:]), gi, True)

        while any(st[3][gi] for st in dist):          # one set-aside wound at a time
            done = {st: p for st, p in dist.items() if not st[3][gi]}
            dist = push({st: p for st, p in dist.items() if st[3][gi]}, dev)
            for st, p in done.items():
                dist[st] = dist.get(st, 0) + p
    joint: dict = {}
    wd = [F(0)] * n_w
    wk = [F(0)] * n_w
    for (pos, _, dmg, _, d, k), p in dist.items():
        joint[(dmg, pos[0] + pos[1])] = joint.get((dmg, pos[0] + pos[1]), 0) + p
        for gi in range(n_w):
            wd[gi] += p * d[gi]
            wk[gi] += p * k[gi]
    return joint, tuple(wd), tuple(wk)


@pytest.mark.parametrize("weapons,groups,wounds_left", [
    ((_w("a", 1, "2", 3, 4, -1, "2"), _w("b", 1, "2", 4, 5, 0, "1")), (_g("m", 3, 3, 5),), None),
    ((_w("a", 1, "2", 3, 4, 0, "1", devastating=True, sustained="1"), _w("b", 1, "2", 3, 5, -1, "2")),
     (_g("m", 2, 2, 4, fnp=5), _g("n", 1, 3, 6, inv=5)), None),
    ((_w("p", 1, "2", 3, 4, -1, "D3", precision=True, devastating=True), _w("l", 1, "2", 4, 5, -1, "1", lethal=True)),
     (_g("bg", 2, 2, 4, fnp=6), _g("ld", 1, 3, 3, inv=4, fnp=5, leader=True, t=6)), 1),
    ((_w("t", 2, "1", None, 4, -1, "2"),), (_g("ld", 1, 3, 3, leader=True), _g("bg", 2, 1, 6)), None),
], ids=["carry", "dev_sustained_mixed", "precision_dev_lethal_wounded", "torrent_leader_first"])
def test_oracle_equals_attack_by_attack_enumeration(weapons, groups, wounds_left) -> None:
    out = unit_attack(weapons, groups, wounds_left=wounds_left)
    joint, wd, wk = _sequential(weapons, groups, wounds_left)
    assert out.joint == joint
    assert out.weapon_damage == wd
    assert out.weapon_kills == wk


def _sd(dist: dict[int, F]) -> float:
    mu = mean(dist)
    return math.sqrt(float(sum((k - mu) ** 2 * p for k, p in dist.items())))


def _statistics(out: UnitOutcome, n_groups: int) -> dict[str, tuple[float, float]]:
    """(mean, sd) of every statistic the Monte Carlo tests compare with standard errors."""
    stats = {"damage": (float(mean(out.damage)), _sd(out.damage)),
             "models_destroyed": (float(mean(out.models_destroyed)), _sd(out.models_destroyed))}
    for j in range(n_groups):
        d = out.group_destroyed(j)
        stats[f"group{j}"] = (float(mean(d)), _sd(d))
    return stats


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_planted_mutants_are_far_from_the_truth(case: Case) -> None:
    """Each Monte Carlo test can fail: its mutant is >= 12 standard errors (of 200k trials, true
    sd) from the truth on some statistic, so a sample within 5 of the truth is > 5 from it."""
    true = _statistics(truth(case.id), len(case.groups))
    bad = _statistics(planted(case.id), len(case.groups))
    distance = max(abs(true[k][0] - bad[k][0]) / (true[k][1] / math.sqrt(TRIALS)) if true[k][1] else 0.0
                   for k in true)
    assert distance >= POWER_SE, distance


# --------------------------------------------------------------------------------------------
# The engines: bridge from the oracle's cases
# --------------------------------------------------------------------------------------------

def notation(w: UnitWeapon) -> str:
    abilities = [name for flag, name in ((w.bs is None, "TORRENT"), (w.lethal, "LETHAL HITS"),
                                         (w.devastating, "DEVASTATING WOUNDS"), (w.precision, "PRECISION"),
                                         (w.twin_linked, "TWIN-LINKED")) if flag]
    if w.sustained != "0":
        abilities.append(f"SUSTAINED HITS {w.sustained}")
    skill = "N/A" if w.bs is None else f"{w.bs}+"
    text = f"A {w.attacks} BS {skill} S{w.strength} AP{w.ap} D {w.damage}"
    return text + (f" [{', '.join(abilities)}]" if abilities else "")


def target_unit(case: Case) -> TargetUnit:
    groups = tuple(Target(name=g.name, toughness=g.toughness, save=g.save, wounds=g.wounds, models=g.models,
                          invulnerable=g.invuln, feel_no_pain=g.fnp, leader=g.leader) for g in case.groups)
    return TargetUnit(name=case.id, groups=groups, wounds_left=case.wounds_left, allocation=case.allocation)


def matchup(case: Case, weapons: tuple[UnitWeapon, ...] | None = None) -> Matchup:
    weapons = case.weapons if weapons is None else weapons
    groups = tuple(WeaponGroup(weapon=parse_weapon(notation(w), name=w.name), count=w.count) for w in weapons)
    return Matchup(weapons=groups, target=target_unit(case), context=Context())


def _padded(a: np.ndarray, d: dict[int, F]) -> tuple[np.ndarray, np.ndarray]:
    n = max(a.size, max(d) + 1)
    mine = np.zeros(n)
    mine[: a.size] = a
    ref = np.zeros(n)
    for k, p in d.items():
        ref[k] = float(p)
    return mine, ref


def assert_exact(r, out: UnitOutcome, case: Case) -> None:
    for label, got, want in [("damage", r.damage.probabilities, out.damage),
                             ("models destroyed", r.models_destroyed.probabilities, out.models_destroyed),
                             *((f"group {case.order[j]}", r.groups[j].models_destroyed.probabilities,
                                out.group_destroyed(j)) for j in range(len(case.order)))]:
        mine, ref = _padded(np.asarray(got), want)
        assert np.max(np.abs(mine - ref)) < 1e-9, (label, mine, ref)
    assert [g.name for g in r.groups] == list(case.order)
    assert len(r.weapons) == len(case.weapons)
    for g, share in enumerate(r.weapons):
        assert share.damage_mean == pytest.approx(float(out.weapon_damage[g]), abs=1e-9)
        assert share.models_destroyed_mean == pytest.approx(float(out.weapon_kills[g]), abs=1e-9)


def test_allocation_orders_are_the_hand_worked_ones() -> None:
    for case in CASES:
        assert [g.name for g in target_unit(case).allocation_order()] == list(case.order), case.id


# --------------------------------------------------------------------------------------------
# 2. Exact engine
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_exact_engine_matches_oracle(case: Case) -> None:
    r = analyse(matchup(case), method=Method.EXACT)
    assert_exact(r, truth(case.id), case)


def test_R_9_4_exact_leader_never_dies_while_a_bodyguard_lives() -> None:
    r = analyse(matchup(LEADER_SAFE), method=Method.EXACT)
    lead = next(j for j, g in enumerate(r.groups) if g.leader)
    assert r.groups[lead].name == "warboss"
    total = np.asarray(r.models_destroyed.probabilities)
    # the Leader dies only as the sixth model: P(leader dead) = P(all 6 dead)
    assert r.groups[lead].p_destroyed() == pytest.approx(float(total[6:].sum()), abs=1e-12)
    assert r.groups[lead].p_destroyed() > 0


def test_exact_weapon_twice_equals_double_count() -> None:
    twice = analyse(matchup(TWICE), method=Method.EXACT)
    once = analyse(matchup(TWICE, (replace(_TWICE_W, count=3),)), method=Method.EXACT)
    for a, b in [(twice.damage, once.damage), (twice.models_destroyed, once.models_destroyed),
                 *((x.models_destroyed, y.models_destroyed) for x, y in zip(twice.groups, once.groups, strict=True))]:
        pa, pb = np.asarray(a.probabilities), np.asarray(b.probabilities)
        n = max(pa.size, pb.size)
        assert np.allclose(np.pad(pa, (0, n - pa.size)), np.pad(pb, (0, n - pb.size)), atol=1e-12, rtol=0)
    assert twice.weapons[0].damage_mean + twice.weapons[1].damage_mean == pytest.approx(once.weapons[0].damage_mean)
    assert (twice.weapons[0].models_destroyed_mean + twice.weapons[1].models_destroyed_mean
            == pytest.approx(once.weapons[0].models_destroyed_mean))


def test_exact_durable_and_listed_differ() -> None:
    durable = analyse(matchup(DURABLE), method=Method.EXACT)
    listed = analyse(matchup(LISTED), method=Method.EXACT)
    assert [g.name for g in durable.groups] == ["nob", "boyz"]
    assert [g.name for g in listed.groups] == ["boyz", "nob"]
    assert abs(durable.models_destroyed.mean() - listed.models_destroyed.mean()) > 0.05
    assert float(mean(truth("durable").models_destroyed)) < float(mean(truth("listed").models_destroyed))


# --------------------------------------------------------------------------------------------
# 3. Monte Carlo
# --------------------------------------------------------------------------------------------

def _mc_checks(r, out: UnitOutcome, n_groups: int, truth_out: UnitOutcome) -> list[tuple[str, float, float, float]]:
    """(statistic, Monte Carlo mean, ``out``'s mean, standard error): the sample's standard error,
    or the true one (from ``truth_out``) when larger (a sample may miss a rare outcome)."""
    true = _statistics(truth_out, n_groups)
    floor = {k: sd / math.sqrt(TRIALS) for k, (_, sd) in true.items()}
    samples = {"damage": r.damage, "models_destroyed": r.models_destroyed,
               **{f"group{j}": r.groups[j].models_destroyed for j in range(n_groups)}}
    mine = _statistics(out, n_groups)
    rows = []
    for key, d in samples.items():
        se = d.sem()
        assert se is not None, key
        rows.append((key, d.mean(), mine[key][0], max(se, floor[key])))
    return rows


def _weapon_share_bounds(out: UnitOutcome) -> tuple[float, float]:
    """Standard errors bounding every weapon share's: a weapon's damage (kills) is between 0 and
    the total, so its second moment is at most the total's."""
    second = lambda d: float(sum(k * k * p for k, p in d.items()))  # noqa: E731
    return (math.sqrt(second(out.damage) / TRIALS), math.sqrt(second(out.models_destroyed) / TRIALS))


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_monte_carlo_matches_oracle_and_rejects_its_mutant(case: Case) -> None:
    r = analyse(matchup(case), method=Method.MONTE_CARLO, trials=TRIALS, seed=case.seed)
    assert r.trials == TRIALS
    assert [g.name for g in r.groups] == list(case.order)
    out, bad = truth(case.id), planted(case.id)
    for name, got, want, se in _mc_checks(r, out, len(case.order), out):
        assert abs(got - want) <= TOL_SE * se + 1e-12, (name, got, want, se)
    se_d, se_k = _weapon_share_bounds(out)
    for g, share in enumerate(r.weapons):
        assert abs(share.damage_mean - float(out.weapon_damage[g])) <= TOL_SE * se_d, (g, share)
        assert abs(share.models_destroyed_mean - float(out.weapon_kills[g])) <= TOL_SE * se_k, (g, share)
    # the same sample rejects the planted bug
    rejected = [name for name, got, want, se in _mc_checks(r, bad, len(case.order), out)
                if abs(got - want) > TOL_SE * se]
    assert rejected, f"{case.id}: the sample cannot tell the mutant from the truth"


def test_R_9_4_monte_carlo_leader_never_dies_while_a_bodyguard_lives() -> None:
    r = analyse(matchup(LEADER_SAFE), method=Method.MONTE_CARLO, trials=TRIALS, seed=9201)
    lead = next(j for j, g in enumerate(r.groups) if g.leader)
    total = np.asarray(r.models_destroyed.probabilities)
    # in every trial where the warboss died all six models did: the two frequencies are equal
    assert r.groups[lead].p_destroyed() == pytest.approx(float(total[6:].sum()), abs=1e-12)
