"""Exact engine for whole units: weapon groups fired in order at a unit of model groups.

It reads :class:`~mathhammer.compile.UnitInputs` (``pairs[g][j]``: weapon group g against model
group j) and reproduces the allocation rules of the Monte Carlo kernel (the allocation ruling of
docs/rules.md) by probability arithmetic; single-weapon, identical-model cases keep
:func:`mathhammer.engine.exact.run`, whose helpers this module reuses for everything that
happens before allocation. It never imports numba.

Method
------
* The allocation state. The models form two queues ("tracks"): track 0 the Bodyguard groups in
  allocation order (every group of a unit without a Leader), track 1 the Leader groups. Within a
  track the models are used one by one, so its state is R, the wounds it has left: the model
  being damaged and its wounds left follow from R, every model after it being untouched
  (:class:`_Track`). The unit's state is (R0, R1), ``(T0 + 1) (T1 + 1)`` states; ``wounds_left``
  only moves the start.
* One wound (a failed save, then Damage, Feel No Pain per point, excess lost) is a sparse
  transition of that state (:meth:`_Space.step`): the model it goes to (track 0's current model,
  or track 1's once track 0 is empty; the other way round for PRECISION) fixes the group whose
  save, Damage and Feel No Pain apply.
* A weapon group's attacks are independent until allocation (no Command Re-roll here): one
  attack is a polynomial in (wounds that need a save, Devastating wounds pending) from
  :func:`mathhammer.engine.exact._attack_gf`, and the group's attacks are mixed over the number
  of attacks by Horner's scheme with the transition on the right (:func:`_fire`): the wounds of
  the polynomial are applied to the state, the pending Devastating wounds become a new leading
  axis of the state array (one per DEVASTATING WOUNDS weapon), so they can be applied after every
  weapon (R-6.3), weapon by weapon, by Horner's scheme over that axis: no save, the group's
  Damage and Feel No Pain, excess lost (R-6.4), or, under the 2023 text, spilling over point by
  point (each point Feel No Pain of the model it lands on).
* Each weapon's share is the change of the expected wounds lost and models destroyed over its
  phases (its wounds, then its Devastating wounds): a model is credited to the attack that takes
  its last wound.
* The stage breakdown keeps the counts fixed before allocation (attacks .. devastating), summed
  over the weapons (independent: convolutions); which save and Damage an attack meets depends on
  allocation, so the unsaved and damage counts are left out. A target with unlimited wounds (a
  lone group) is not allocated: every weapon's :func:`mathhammer.engine.exact.run`, convolved,
  with the full breakdown.
* The cost is estimated before the state is built, from the number of states, the supports of the
  attacks and the damage values (:func:`_cost_chain`); a request above the limits of
  :mod:`mathhammer.limits` is refused with :class:`~mathhammer.errors.NotExactError`, as is a
  Command Re-roll (its one die would couple the weapons and the groups).

Everything is float64.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..codes import Param, Stage
from ..errors import NotExactError
from ..result import DamageResult, Distribution, GroupResult, WeaponShare
from . import exact
from .exact import (
    _CRITS,
    _CWOUNDS,
    _DEV,
    _HITS,
    _N_COUNTERS,
    _ONE1,
    _S_CALL,
    _S_ELEM,
    _STAGE_KEYS,
    _WOUNDS,
    _attack_gf,
    _attacks,
    _bincount,
    _convolve,
    _Cost,
    _cost_attacks,
    _cost_counters,
    _counter,
    _damage_tri,
    _fnp_tri,
    _Tables,
    _trim,
    _trim_tail,
    hazardous,
)

if TYPE_CHECKING:
    from ..compile import UnitInputs

__all__ = ["run"]

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Seconds per transition entry per state row of one step (:class:`_Step`: a gather, a product and
#: a bincount), measured on one laptop core and rounded up.
_S_ENTRY = 12e-9
#: Entries (rows x transition entries) one bincount of :class:`_Step` handles at once: bounds the
#: temporary arrays of a step with many rows (the pending Devastating wounds) at a few tens of MB.
_BLOCK = 1 << 20
#: The stage keys whose counts are fixed before allocation (the first seven of exact.run's).
_FIXED_KEYS = _STAGE_KEYS[:7]


# --- the allocation state (shared with mathhammer.engine.mortal) ----------------------------
class _Track:
    """One queue of models (R-9.1): ``groups`` in order, each model used until it is destroyed.

    Indexed by R, the wounds the track has left (0 .. ``total``): R in (S_k, S_k + W_k] is model k
    (S_k the wounds of the models after it) with R - S_k wounds left. ``group[R]`` (-1 at 0),
    ``room[R]`` (wounds left on the model being damaged, 0 at 0) and ``dead[j][R]`` (models of
    group ``groups[j]`` destroyed)."""

    def __init__(self, groups: Sequence[int], models: Sequence[int], wounds: Sequence[int]) -> None:
        self.groups = list(groups)
        counts = [models[j] for j in self.groups]
        w = np.repeat(np.array([wounds[j] for j in self.groups], dtype=np.int64), counts)
        g = np.repeat(np.array(self.groups, dtype=np.int64), counts)
        n = int(w.size)
        self.total = int(w.sum())
        after = self.total - np.cumsum(w)  # S_k
        k = np.repeat(np.arange(n - 1, -1, -1, dtype=np.int64), w[::-1])  # model k of R = 1 .. total
        r = np.arange(self.total + 1, dtype=np.int64)
        self.group = np.full(self.total + 1, -1, dtype=np.int64)
        self.room = np.zeros(self.total + 1, dtype=np.int64)
        killed = np.full(self.total + 1, n, dtype=np.int64)  # models before the one being damaged
        if n:
            self.group[1:] = g[k]
            self.room[1:] = r[1:] - after[k]
            killed[1:] = k
        self.dead: list[IntArray] = []
        first = 0
        for c in counts:
            self.dead.append(np.clip(killed - first, 0, c))
            first += c


class _Space:
    """The allocation state of a unit: (R0, R1), the wounds left on track 0 (Bodyguard groups
    ``0 .. bodyguard - 1``) and track 1 (the Leader groups after them), flattened as
    ``R0 * (T1 + 1) + R1``. ``wounds_left`` (0: none) is what the first model of track 0 has."""

    def __init__(self, models: Sequence[int], wounds: Sequence[int], bodyguard: int, wounds_left: int) -> None:
        self.models, self.wounds = list(models), list(wounds)
        self.n_groups = len(models)
        self.tracks = (_Track(range(bodyguard), models, wounds),
                       _Track(range(bodyguard, len(models)), models, wounds))
        self.n1 = self.tracks[1].total + 1
        self.size = (self.tracks[0].total + 1) * self.n1
        r0 = self.tracks[0].total - (wounds[0] - wounds_left if wounds_left else 0)
        self.start = r0 * self.n1 + self.tracks[1].total
        s = np.arange(self.size, dtype=np.int64)
        self.r0, self.r1 = s // self.n1, s % self.n1
        #: wounds lost since the start, in each state (states below it only)
        self.lost = r0 + self.tracks[1].total - self.r0 - self.r1

    @staticmethod
    def states(models: Sequence[int], wounds: Sequence[int], bodyguard: int) -> int:
        """Number of states, before anything is built (for the cost estimate)."""
        t0 = sum(m * w for m, w in zip(models[:bodyguard], wounds[:bodyguard], strict=True))
        t1 = sum(m * w for m, w in zip(models[bodyguard:], wounds[bodyguard:], strict=True))
        return (t0 + 1) * (t1 + 1)

    def target(self, precision: bool) -> tuple[IntArray, IntArray, IntArray]:
        """For every state, the model the next attack (or point) goes to: its group (-1: the unit
        is destroyed), its wounds left and the stride of its track in the flat index. Track 0's
        current model, track 1's once track 0 is empty; PRECISION: track 1 first."""
        t0, t1 = self.tracks
        if precision:
            use1 = self.r1 > 0
            use0 = ~use1 & (self.r0 > 0)
        else:
            use0 = self.r0 > 0
            use1 = ~use0 & (self.r1 > 0)
        group = np.where(use0, t0.group[self.r0], np.where(use1, t1.group[self.r1], -1))
        room = np.where(use0, t0.room[self.r0], np.where(use1, t1.room[self.r1], 0))
        stride = np.where(use0, self.n1, 1)
        return group, room, stride

    def step(self, precision: bool, fail: Sequence[float], pmf: Sequence[Array]) -> _Step:
        """One attack: allocated as :meth:`target`; group j's save fails with ``fail[j]``, then
        it loses ``pmf[j]`` wounds (after Feel No Pain), excess lost (R-9.2)."""
        group, room, stride = self.target(precision)
        stay = np.ones(self.size)
        src: list[IntArray] = []
        dst: list[IntArray] = []
        w: list[Array] = []
        for j in range(self.n_groups):
            sel = np.flatnonzero(group == j)
            a = pmf[j]
            if not sel.size or fail[j] == 0.0:
                continue
            x, st = room[sel], stride[sel]
            for d in range(1, min(a.size, int(x.max()))):  # d < wounds left: the model survives
                if a[d] == 0.0:
                    continue
                keep = x > d
                src.append(sel[keep])
                dst.append(sel[keep] - d * st[keep])
                w.append(np.full(int(keep.sum()), fail[j] * a[d]))
            tail = np.cumsum(a[::-1])[::-1]  # P(d >= x): the model is destroyed, the rest is lost
            kill = fail[j] * np.where(x < a.size, tail[np.minimum(x, a.size - 1)], 0.0)
            nz = kill > 0.0
            src.append(sel[nz])
            dst.append(sel[nz] - x[nz] * st[nz])
            w.append(kill[nz])
            stay[sel] = 1.0 - fail[j] * (1.0 - a[0])
        if not src:
            return _Step(self.size, stay, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
        return _Step(self.size, stay, np.concatenate(src), np.concatenate(dst), np.concatenate(w))

    def point(self, precision: bool, lost: Sequence[float]) -> _Step:
        """One mortal wound of one damage (R-9.3): the model it goes to loses it with probability
        ``lost[j]`` (its group's Feel No Pain)."""
        one = np.array([0.0, 1.0])
        return self.step(precision, lost, [one] * self.n_groups)

    def outcome(self, v: Array) -> tuple[Array, Array, list[Array]]:
        """(wounds lost, models destroyed, models destroyed per group) pmfs of the state pmf ``v``."""
        t0, t1 = self.tracks
        damage = _bincount(np.maximum(self.lost, 0), weights=v)
        per_group: list[Array] = []
        total = np.zeros(self.size, dtype=np.int64)
        for track, r in ((t0, self.r0), (t1, self.r1)):
            for j, dead in zip(track.groups, track.dead, strict=True):
                per_group.append(_bincount(dead[r], weights=v, minlength=self.models[j] + 1))
                total += dead[r]
        return damage, _bincount(total, weights=v, minlength=sum(self.models) + 1), per_group

    def means(self, x: Array) -> tuple[float, float]:
        """E[wounds lost], E[models destroyed] of the (rows, states) array ``x``."""
        v = x.sum(axis=0)
        dead = np.zeros(self.size)
        for track, r in ((self.tracks[0], self.r0), (self.tracks[1], self.r1)):
            for d in track.dead:
                dead += d[r]
        return float((v * self.lost).sum()), float((v * dead).sum())


class _Step:
    """x -> x . T for (rows, states) arrays of row vectors: ``stay`` on the diagonal, the other
    entries (src -> dst, w) scattered by bincount (no matrix, no BLAS)."""

    def __init__(self, size: int, stay: Array, src: IntArray, dst: IntArray, w: Array) -> None:
        self.size, self.stay, self.src, self.dst, self.w = size, stay, src, dst, w

    @property
    def entries(self) -> int:
        return int(self.src.size) + self.size

    def __call__(self, x: Array) -> Array:
        out: Array = x * self.stay
        if not self.src.size:
            return out
        rows, s = x.shape
        block = max(1, _BLOCK // int(self.src.size))
        for lo in range(0, rows, block):
            part = x[lo:lo + block]
            n = part.shape[0]
            values = (part[:, self.src] * self.w).ravel()
            idx = self.dst if n == 1 else (np.arange(n, dtype=np.int64)[:, None] * s + self.dst).ravel()
            out[lo:lo + n] += _bincount(idx, weights=values, minlength=n * s).reshape(n, s)
        return out


def _spill_step(space: _Space, precision: bool, pre: Sequence[Array],
                lost: Sequence[float]) -> Callable[[Array], Array]:
    """R-6.4, 2023 text: one Devastating attack's Damage (``pre[j]``, before Feel No Pain, of the
    group of the model it is allocated to) as that many mortal wounds of one damage each, spilling
    over point by point: sum_d (x . diag(c_d)) P^d, c_d[s] = pre[group(s)][d], by Horner."""
    group, _, _ = space.target(precision)
    p = space.point(precision, lost)
    d_max = max(a.size for a in pre) - 1
    coef = np.zeros((d_max + 1, space.size))
    coef[0, group < 0] = 1.0  # a destroyed unit: nothing changes
    for j, a in enumerate(pre):
        mask = group == j
        coef[:a.size, mask] = a[:, None]

    def apply(x: Array) -> Array:
        acc: Array = x * coef[d_max]
        for d in range(d_max - 1, -1, -1):
            acc = p(acc) + x * coef[d]
        return acc

    return apply


# --- one weapon group -------------------------------------------------------------------------
class _Weapon:
    """What the chain needs of weapon group g: its attacks, one attack's polynomial in (wounds
    that need a save, Devastating wounds), and per model group j the save's fail chance and the
    Damage pmfs before and after Feel No Pain, and the chance a point is lost to Feel No Pain."""

    def __init__(self, u: UnitInputs, g: int) -> None:
        row = u.pairs[g]
        self.tables = [_Tables(k) for k in row]
        t = self.tables[0]
        self.t = t
        self.name, self.count, self.precision = u.weapon_names[g], u.counts[g], u.precision[g]
        self.dev, self.spill = t.dev, t.spill
        self.fail = [float(np.count_nonzero(k.stages[Stage.SAVE] & 1)) / 36.0 for k in row]
        self.pre = [_trim_tail(_damage_tri(tj).aa) for tj in self.tables]
        self.after = [_trim_tail(_fnp_tri(tj, _damage_tri(tj)).aa) for tj in self.tables]
        self.lost = [tj.fnp_lost for tj in self.tables]
        self.p_attacks: Array = _ONE1

    def polynomial(self) -> Array:
        """One attack as a (wounds that need a save, Devastating wounds) polynomial: the wound
        counter less the Devastating ones (lethal automatic wounds and normal wounds are saved)."""
        wt = np.zeros((_N_COUNTERS, 2), dtype=np.int64)
        wt[_WOUNDS, 0] = 1
        if self.dev:
            wt[_DEV, 0] = -1
            wt[_DEV, 1] = 1
        g = _attack_gf(self.t, wt)
        assert g.plain  # no Command Re-roll
        return _trim2(g.aa)


def _trim2(a: Array) -> Array:
    rows = np.flatnonzero(a.any(axis=1))
    cols = np.flatnonzero(a.any(axis=0))
    return a[:int(rows[-1]) + 1, :int(cols[-1]) + 1] if rows.size else np.ones((1, 1))


def _fire(x: Array, p_attacks: Array, poly: Array, step: _Step) -> tuple[Array, int]:
    """sum_n P(n attacks) x . G^n by Horner's scheme, G = one attack: poly[i, j] sends i wounds
    through ``step`` and shifts j rows down the new leading axis (the pending Devastating wounds).
    Returns the (P * rows, states) array, P the length of that axis (outermost)."""
    rows, s = x.shape
    j_max = poly.shape[1] - 1
    terms = [(int(i), int(j), float(poly[i, j])) for i, j in zip(*np.nonzero(poly), strict=True)]
    used = max(i for i, _, _ in terms)
    hi = p_attacks.size - 1
    acc: Array = (p_attacks[hi] * x)[None]
    for n in range(hi - 1, -1, -1):
        p = acc.shape[0]
        powers = [acc]
        for _ in range(used):
            powers.append(step(powers[-1].reshape(-1, s)).reshape(p, rows, s))
        new = np.zeros((p + j_max, rows, s))
        for i, j, c in terms:
            new[j:j + p] += c * powers[i]
        new[0] += p_attacks[n] * x
        acc = new
    return acc.reshape(-1, s), acc.shape[0]


def _settle(x: Array, axis: int, step: Callable[[Array], Array]) -> Array:
    """Apply the pending Devastating wounds of the innermost axis (``axis`` long): sum_p x_p T^p,
    by Horner's scheme."""
    rows, s = x.shape
    x3 = x.reshape(rows // axis, axis, s)
    acc: Array = x3[:, axis - 1, :].copy()
    for p in range(axis - 2, -1, -1):
        acc = step(acc) + x3[:, p, :]
    return acc


# --- cost ---------------------------------------------------------------------------------------
def _cost_chain(cost: _Cost, u: UnitInputs, weapons: Sequence[_Weapon], polys: Sequence[Array]) -> None:
    """The allocation chain: every step touches each row (pending Devastating counts so far) of
    the state array once per transition entry (states times the damage values that can land
    below the wounds left, plus the kills); estimated before the state is built."""
    states = _Space.states(u.group_models, u.group_wounds, u.bodyguard_groups)
    w_max = max(u.group_wounds)
    rows = 1.0
    seconds, peak = 0.0, 8.0 * 8 * states
    pending: list[tuple[_Weapon, int]] = []
    for w, poly in zip(weapons, polys, strict=True):
        hi = w.p_attacks.size - 1
        i_max, j_max = poly.shape[0] - 1, poly.shape[1] - 1
        width = min(w_max, max(a.size for a in w.after)) + 1
        entries = float(states) * width
        p_avg, p_max = hi * j_max / 2 + 1, hi * j_max + 1
        terms = int(np.count_nonzero(poly))
        seconds += hi * (i_max * (rows * p_avg * entries * _S_ENTRY + 6 * _S_CALL)
                         + terms * (rows * p_avg * states * _S_ELEM + _S_CALL))
        rows *= p_max
        peak = max(peak, 8.0 * rows * states * (i_max + 3) + 24.0 * min(rows * entries, _BLOCK) + 24.0 * entries)
        if j_max:
            pending.append((w, p_max))
    for w, p_max in pending:
        rows /= p_max
        if w.spill:
            d_max = max(a.size for a in w.pre)
            per = d_max * (rows * 2.0 * states * _S_ENTRY + 3 * _S_CALL)
        else:
            width = min(w_max, max(a.size for a in w.after)) + 1
            per = rows * float(states) * width * _S_ENTRY + 3 * _S_CALL
        seconds += (p_max - 1) * per
    what = (f"allocating the attacks of {len(weapons)} weapon group{'s' if len(weapons) != 1 else ''} to "
            f"{u.target_models} models ({states:,} allocation states)")
    cost.add(what, seconds, peak)
    cost.check()


# --- the engine ---------------------------------------------------------------------------------
def run(u: UnitInputs, *, stages: bool = True) -> DamageResult:
    """The exact distributions of what a whole unit's attack does to a unit of model groups.

    Returns a DamageResult with method "exact": damage (wounds lost by the unit), models
    destroyed, ``groups`` (models destroyed per model group, in allocation order), ``weapons``
    (each weapon group's mean wounds and models, a model credited to the attack that took its last
    wound), the stage counts fixed before allocation (``stages``; every stage for a target with
    unlimited wounds) and the Hazardous distributions.

    Raises:
        NotExactError: for a Command Re-roll (one die for the whole attack couples the weapons and
        the groups), or a request whose estimated time or memory is above the limits of
        :mod:`mathhammer.limits`, before it is computed.
    """
    start = time.perf_counter()
    if any(int(k.params[Param.COMMAND]) for row in u.pairs for k in row):
        raise NotExactError("a Command Re-roll with several weapons, model groups or wounds left: use Monte Carlo",
                            where="--method exact")
    if u.group_wounds[0] == 0:
        result = _unlimited(u, stages)
    else:
        result = _allocated(u, stages)
    hazard, hazard_models = _hazard(u)
    return DamageResult(method="exact", trials=None, seed=None, damage=result[0], models_destroyed=result[1],
                        target_models=int(u.target_models), seconds=time.perf_counter() - start, stages=result[2],
                        hazardous=hazard, hazard_models=hazard_models, groups=result[3], weapons=result[4])


_Parts = tuple[Distribution, Distribution, dict[str, Distribution], tuple[GroupResult, ...], tuple[WeaponShare, ...]]


def _allocated(u: UnitInputs, stages: bool) -> _Parts:
    cost = _Cost()
    weapons = [_Weapon(u, g) for g in range(u.n_weapons)]
    for w in weapons:
        _cost_attacks(cost, w.t)
        w.p_attacks = _trim_tail(_attacks(w.t))
        if stages:
            _cost_counters(cost, w.t, w.p_attacks, True)
    exact.cost_hazard(cost, u.hazard_firing, u.hazard_groups)
    polys = [w.polynomial() for w in weapons]
    _cost_chain(cost, u, weapons, polys)
    space = _Space(u.group_models, u.group_wounds, u.bodyguard_groups, u.wounds_left)
    x = np.zeros((1, space.size))
    x[0, space.start] = 1.0
    shares = [[0.0, 0.0] for _ in weapons]
    before = space.means(x)
    pending: list[tuple[int, int]] = []
    for g, (w, poly) in enumerate(zip(weapons, polys, strict=True)):
        step = space.step(w.precision, w.fail, w.after)
        x, axis = _fire(x, w.p_attacks, poly, step)
        if w.dev:
            pending.append((g, axis))
        after = space.means(x)
        shares[g][0] += after[0] - before[0]
        shares[g][1] += after[1] - before[1]
        before = after
    for g, axis in pending:  # after every weapon, weapon by weapon
        w = weapons[g]
        if w.spill:
            dev_step: Callable[[Array], Array] = _spill_step(space, w.precision, w.pre, w.lost)
        else:
            dev_step = space.step(w.precision, [1.0] * space.n_groups, w.after)
        x = _settle(x, axis, dev_step)
        after = space.means(x)
        shares[g][0] += after[0] - before[0]
        shares[g][1] += after[1] - before[1]
        before = after
    v = x.sum(axis=0)
    damage, models, per_group = space.outcome(v / v.sum())  # a long chain's rounding drift
    groups = tuple(GroupResult(name=u.group_names[j], models=u.group_models[j], models_destroyed=_trim(p),
                               leader=u.group_leader[j]) for j, p in enumerate(per_group))
    shares_out = tuple(WeaponShare(name=w.name, count=w.count, damage_mean=s[0], models_destroyed_mean=s[1])
                       for w, s in zip(weapons, shares, strict=True))
    breakdown = _fixed_stages(weapons) if stages else {}
    if stages and u.n_groups == 1:
        breakdown.update(_unallocated_stages(u))
    return _trim(damage), _trim(models), breakdown, groups, shares_out


#: The stage counts that come after the saves: they do not depend on the allocation against one
#: group of identical models (every save is that group's; damage is counted without the cap).
_AFTER_SAVE_KEYS = ("unsaved", "damage_before_fnp", "damage_after_fnp")


def _unallocated_stages(u: UnitInputs) -> dict[str, Distribution]:
    """Against one group of identical models: each weapon group's unsaved wounds and damage
    before and after Feel No Pain (exact.run), independent between weapon groups, convolved."""
    totals: dict[str, Array] = {}
    for row in u.pairs:
        r = exact.run(row[0], stages=True, hazard=(0, ()))
        for key in _AFTER_SAVE_KEYS:
            totals[key] = _convolve(totals.get(key, _ONE1), r.stages[key].probabilities)
    return {key: _trim(totals[key]) for key in _AFTER_SAVE_KEYS}


def _fixed_stages(weapons: Sequence[_Weapon]) -> dict[str, Distribution]:
    """The stage counts fixed before allocation, summed over the weapons (kernel identities as in
    exact.run: TORRENT has no Hit roll, Lethal Hits counts the critical hits, Devastating the
    critical wounds)."""
    totals = [_ONE1] * len(_FIXED_KEYS)
    for w in weapons:
        t, p = w.t, w.p_attacks
        hits = p if t.torrent else _counter(t, p, (_HITS,))
        crits = _ONE1 if t.torrent else _counter(t, p, (_CRITS,))
        crit_wounds = _counter(t, p, (_CWOUNDS,))
        values = (p, hits, crits, _counter(t, p, (_WOUNDS,)), crit_wounds, crits if t.lethal else _ONE1,
                  crit_wounds if t.dev else _ONE1)
        totals = [_convolve(a, b) for a, b in zip(totals, values, strict=True)]
    return {key: _trim(v) for key, v in zip(_FIXED_KEYS, totals, strict=True)}


def _unlimited(u: UnitInputs, stages: bool) -> _Parts:
    """A lone group with unlimited wounds: nothing is allocated, each weapon's damage is summed
    (R-9.5) and the weapons are independent: their distributions convolved."""
    cost = _Cost()
    exact.cost_hazard(cost, u.hazard_firing, u.hazard_groups)
    cost.check()
    results = [exact.run(row[0], stages=stages, hazard=(0, ())) for row in u.pairs]
    damage = _ONE1
    totals: dict[str, Array] = {}
    for r in results:
        damage = _convolve(damage, r.damage.probabilities)
        for key, d in r.stages.items():
            totals[key] = _convolve(totals.get(key, _ONE1), d.probabilities)
    none = Distribution(probabilities=np.ones(1), trials=None)
    groups = (GroupResult(name=u.group_names[0], models=u.group_models[0], models_destroyed=none,
                          leader=u.group_leader[0]),)
    shares = tuple(WeaponShare(name=name, count=count, damage_mean=r.damage.mean(), models_destroyed_mean=0.0)
                   for name, count, r in zip(u.weapon_names, u.counts, results, strict=True))
    breakdown = {key: _trim(totals[key]) for key in _STAGE_KEYS if key in totals}
    return _trim(damage), none, breakdown, groups, shares


def _hazard(u: UnitInputs) -> tuple[Distribution | None, Distribution | None]:
    """R-9.7: one test per Hazardous weapon fired (a model carrying two makes two), after all
    the attacks, on the models of the firing unit that carry them (:func:`exact.hazardous`)."""
    if not u.hazard_firing:
        return None, None
    lost, dead = hazardous(u.hazard_firing, u.hazard_groups)
    return _trim(lost), _trim(dead)
