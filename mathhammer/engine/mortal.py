"""Mortal wounds from other sources (R-9.3), exactly: Deadly Demise, Tank Shock, abilities.

:func:`spill` takes a target unit and the distribution of the number N of mortal wounds it
suffers, and returns the distributions of the wounds it loses and the models destroyed (in all
and per model group). The rules applied:

* each mortal wound is one damage, applied one at a time (R-9.3), never saved (R-7.6);
* it goes to the model the allocation rules choose (docs/rules.md): track 0, the Bodyguard groups
  in allocation order (every group of a unit without a Leader), the model being damaged first,
  then track 1, the Leader groups, once no Bodyguard model is left; ``wounds_left`` is what the
  first model has left;
* Feel No Pain is rolled for each mortal wound with the Feel No Pain of the model it goes to
  (R-8.5);
* what a destroyed model cannot take carries over to the next model until the unit is destroyed
  (unlike one attack's damage, whose excess is lost, R-9.2): 4 mortal wounds kill 2 of 3 W2
  models;
* a lone group with unlimited wounds loses N thinned by its Feel No Pain, and no model.

It is the state chain of :mod:`mathhammer.engine.exact_units` with one transition (one point).
Everything is float64; the cost is estimated first and a request above the limits of
:mod:`mathhammer.limits` is refused. :func:`simulate_spill` is its Monte Carlo twin (plain
numpy, vectorised over trials), for the mortal-wound events of :mod:`mathhammer.events`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from ..errors import InputError, NotExactError
from ..limits import EXACT_MAX_BYTES, EXACT_MAX_SECONDS, size_text
from ..model import Target, TargetUnit
from ..result import Distribution, GroupResult
from .exact import _S_CALL, _trim
from .exact_units import _S_ENTRY, _Space

__all__ = ["MortalResult", "simulate_spill", "spill"]

#: Largest number of mortal wounds :func:`spill` takes (far beyond any unit's wounds).
MAX_MORTAL = 1_000_000


@dataclass(frozen=True, slots=True)
class MortalResult:
    """What the mortal wounds do: wounds lost by the unit, models destroyed, and per model group
    (in allocation order) the models destroyed."""

    damage: Distribution
    models_destroyed: Distribution
    groups: tuple[GroupResult, ...]


def _pmf(mortal: Sequence[float] | Mapping[int, Fraction | float]) -> np.ndarray:
    """The pmf of N as a float array, checked: whole non-negative counts, probabilities that are
    non-negative and sum to 1."""
    where = "mortal wounds"
    if isinstance(mortal, Mapping):
        items = list(mortal.items())
    else:
        items = list(enumerate(mortal))
    if not items:
        raise InputError("the distribution of the number of mortal wounds is empty", where=where)
    for n, p in items:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError("a number of mortal wounds must be a whole number, 0 or more", where=where, value=n)
        if n > MAX_MORTAL:
            raise InputError(f"a number of mortal wounds must be at most {MAX_MORTAL:,}", where=where, value=n)
        if not isinstance(p, (int, float, Fraction)) or isinstance(p, bool) or not 0 <= float(p) <= 1 \
                or not math.isfinite(float(p)):
            raise InputError("a probability must be a number from 0 to 1", where=where, value=str(p))
    total = math.fsum(float(p) for _, p in items)
    if abs(total - 1.0) > 1e-9:
        raise InputError("the probabilities must sum to 1", where=where, value=f"{total:.12g}")
    out = np.zeros(max(n for n, _ in items) + 1)
    for n, p in items:
        out[n] += float(p)
    return out


def spill(target: TargetUnit | Target, mortal: Sequence[float] | Mapping[int, Fraction | float]) -> MortalResult:
    """The wounds lost and models destroyed when ``target`` suffers N mortal wounds (R-9.3).

    Args:
        target: the unit (a plain :class:`~mathhammer.model.Target` is a one-group unit).
        mortal: the distribution of N: ``mortal[n]`` = P(N = n), a sequence or a mapping
            {n: probability} (Fractions welcome; they are used as floats).

    Raises:
        InputError: a malformed distribution (negative or non-integer counts, probabilities
            outside 0..1 or not summing to 1).
        NotExactError: a request whose estimated time or memory is above the limits.
    """
    unit = target if isinstance(target, TargetUnit) else TargetUnit(name=target.name, groups=(target,))
    p = _pmf(mortal)
    order = unit.allocation_order()
    lost = [(g.feel_no_pain - 1) / 6.0 if g.feel_no_pain is not None else 1.0 for g in order]
    if order[0].wounds is None:  # unlimited wounds (a lone group): each point is lost or not
        damage = np.zeros(p.size)
        for n in np.flatnonzero(p).tolist():
            k = np.arange(n + 1)
            logs = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in k.tolist()])
            q = lost[0]
            if q in (0.0, 1.0):
                damage[n if q else 0] += p[n]
                continue
            damage[:n + 1] += p[n] * np.exp(logs + k * math.log(q) + (n - k) * math.log1p(-q))
        none = Distribution(probabilities=np.ones(1), trials=None)
        return MortalResult(damage=_trim(damage), models_destroyed=none,
                            groups=(GroupResult(name=order[0].name, models=order[0].models, models_destroyed=none,
                                                leader=order[0].leader),))
    models = [g.models for g in order]
    wounds = [g.wounds or 0 for g in order]
    bodyguard = len(unit.bodyguard())
    states = _Space.states(models, wounds, bodyguard)
    seconds = (p.size - 1) * (3.0 * states * _S_ENTRY + 3 * _S_CALL)
    n_bytes = 8.0 * 12 * states
    if seconds > EXACT_MAX_SECONDS or n_bytes > EXACT_MAX_BYTES:
        raise NotExactError(f"{p.size - 1:,} mortal wounds on {unit.models} models ({states:,} allocation states) "
                            f"are too many to compute exactly: about {seconds:.3g} s and {size_text(n_bytes)} "
                            f"estimated (limits {EXACT_MAX_SECONDS:g} s, {size_text(EXACT_MAX_BYTES)})",
                            where="mortal wounds")
    space = _Space(models, wounds, bodyguard, unit.wounds_left or 0)
    point = space.point(False, lost)
    v = np.zeros((1, space.size))
    v[0, space.start] = 1.0
    acc = p[0] * v
    for n in range(1, p.size):
        v = point(v)
        if p[n]:
            acc = acc + p[n] * v
    damage_pmf, models_pmf, per_group = space.outcome(acc[0] / acc[0].sum())  # rounding drift
    groups = tuple(GroupResult(name=g.name, models=g.models, models_destroyed=_trim(q), leader=g.leader)
                   for g, q in zip(order, per_group, strict=True))
    return MortalResult(damage=_trim(damage_pmf), models_destroyed=_trim(models_pmf), groups=groups)


def simulate_spill(target: TargetUnit | Target, mortal: npt.NDArray[np.int64], rng: np.random.Generator
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Monte Carlo of :func:`spill` (the same rules), vectorised over trials in plain numpy.

    Args:
        target: the unit (a plain :class:`~mathhammer.model.Target` is a one-group unit).
        mortal: the number of mortal wounds of each trial.
        rng: the generator every Feel No Pain roll is drawn from (in a fixed order: the result
            depends on its state and ``mortal`` only).

    Returns:
        Per trial: the wounds lost, the models destroyed, and the models destroyed per model
        group in allocation order (shape ``(groups, trials)``).
    """
    unit = target if isinstance(target, TargetUnit) else TargetUnit(name=target.name, groups=(target,))
    n = np.asarray(mortal, dtype=np.int64)
    order = unit.allocation_order()
    q = np.array([(g.feel_no_pain - 1) / 6.0 if g.feel_no_pain is not None else 1.0 for g in order])
    if order[0].wounds is None:  # unlimited wounds: each point is lost or not, no model destroyed
        lost = rng.binomial(n, q[0]).astype(np.int64) if q[0] < 1.0 else n.copy()
        return lost, np.zeros(n.size, dtype=np.int64), np.zeros((1, n.size), dtype=np.int64)
    models = np.array([g.models for g in order], dtype=np.int64)
    wounds = np.array([g.wounds or 0 for g in order], dtype=np.int64)
    feel_no_pain = bool((q < 1.0).any())
    group = np.zeros(n.size, dtype=np.int64)  # the group of the model taking the next wound
    left = np.full(n.size, unit.wounds_left or wounds[0], dtype=np.int64)  # that model's wounds left
    dead = np.zeros((len(order), n.size), dtype=np.int64)
    lost = np.zeros(n.size, dtype=np.int64)
    standing = np.ones(n.size, dtype=bool)
    for step in range(int(n.max(initial=0))):
        idx = np.flatnonzero(standing & (n > step))  # trials whose wound number step+1 is applied
        if idx.size == 0:
            break
        g = group[idx]
        if feel_no_pain:  # one roll per mortal wound, with the FNP of the model it goes to
            kept = rng.random(idx.size) < q[g]
            idx, g = idx[kept], g[kept]
        lost[idx] += 1
        left[idx] -= 1
        killed = left[idx] == 0
        idx, g = idx[killed], g[killed]
        dead[g, idx] += 1
        full = dead[g, idx] >= models[g]
        same, g_same = idx[~full], g[~full]
        left[same] = wounds[g_same]  # the next model of the same group
        moved, g_next = idx[full], g[full] + 1
        gone = g_next >= len(order)
        standing[moved[gone]] = False  # the unit is destroyed: the rest is lost
        moved, g_next = moved[~gone], g_next[~gone]
        group[moved] = g_next
        left[moved] = wounds[g_next]
    return lost, dead.sum(axis=0), dead
