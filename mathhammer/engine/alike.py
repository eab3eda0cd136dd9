"""Model groups that defend alike are one group to the engines (ruling M51).

An Intercessor Sergeant has his squad's T, Sv, W, saves and Feel No Pain: to an attack he is
one more Intercessor, and the defender's choice among identical models changes nothing. Two
groups next to each other in the allocation order (:meth:`TargetUnit.allocation_order`) whose
defensive profile is the same are simulated as one group, which keeps the single-group fast
paths (the kernel's fused loop, the exact engine's closed forms) for the most common mixed
units. The per-group results are then split back, exactly, by the order the models take
attacks: the defender allocates to the groups in allocation order (given order among equals,
ruling M45), so the first group loses ``min(K, n1)`` of the K models destroyed, the next one
``min(max(K - n1, 0), n2)``, and so on.

What counts for "the same": everything but the name and the number of models — leader role,
T, Sv, invulnerable save (and whether it is ranged only), W, Feel No Pain, keywords, Stealth,
half damage and damage reduction. (The compiler uses the unit's Toughness, keywords and
Stealth for every group, but those are computed from the groups, so a merge must not change
them.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..model import Allocation, Target, TargetUnit
from ..result import Distribution, GroupResult

__all__ = ["Merged", "merge", "split"]


@dataclass(frozen=True, slots=True)
class Merged:
    """A target with alike neighbours merged, and for each of its groups (allocation order) the
    original groups it stands for: (name, models, leader), in the order they take attacks."""

    target: TargetUnit
    parts: tuple[tuple[tuple[str, int, bool], ...], ...]
    explain: tuple[str, ...]


def _defence(g: Target) -> tuple[object, ...]:
    return (g.leader, g.toughness, g.save, g.invulnerable, g.invulnerable_ranged_only, g.wounds, g.feel_no_pain,
            g.keywords, g.stealth, g.half_damage, g.damage_reduction)


def merge(target: TargetUnit) -> Merged | None:
    """``target`` with neighbours that defend alike merged, or None when no two do."""
    order = target.allocation_order()
    runs: list[list[Target]] = []
    for g in order:
        if runs and _defence(runs[-1][-1]) == _defence(g):
            runs[-1].append(g)
        else:
            runs.append([g])
    if len(runs) == len(order):
        return None
    groups = tuple(run[0] if len(run) == 1 else replace(run[0], models=sum(g.models for g in run)) for run in runs)
    explain = tuple(f"{', '.join(f'{g.models} {g.name}' for g in run)} defend alike: simulated as one group of "
                    f"{sum(g.models for g in run)}, attacks allocated in this order" for run in runs if len(run) > 1)
    # the merged groups are listed in allocation order, so "listed" keeps exactly that order
    merged = replace(target, groups=groups, allocation=Allocation.LISTED)
    return Merged(merged, tuple(tuple((g.name, g.models, g.leader) for g in run) for run in runs), explain)


def _clipped(d: Distribution, low: int, n: int) -> Distribution:
    """The distribution of ``min(max(X - low, 0), n)``."""
    p = d.probabilities
    out = np.zeros(n + 1)
    size = p.size
    out[0] = p[:min(low + 1, size)].sum()
    if size > low + 1:
        mid = p[low + 1:min(low + n, size)]
        out[1:1 + mid.size] = mid
        out[n] += p[low + n:].sum() if size > low + n else 0.0
    counts = None
    if d.counts is not None:
        c = d.counts
        counts = np.zeros(n + 1, dtype=np.int64)
        counts[0] = c[:min(low + 1, c.size)].sum()
        if c.size > low + 1:
            cm = c[low + 1:min(low + n, c.size)]
            counts[1:1 + cm.size] = cm
            counts[n] += c[low + n:].sum() if c.size > low + n else 0
        return Distribution.from_counts(counts)
    nz = np.flatnonzero(out)
    return Distribution(probabilities=out[:(nz[-1] + 1) if nz.size else 1], trials=d.trials)


def split(groups: tuple[GroupResult, ...], merged: Merged) -> tuple[GroupResult, ...]:
    """The per-group results of the original target from those of the merged one."""
    out: list[GroupResult] = []
    for result, parts in zip(groups, merged.parts, strict=True):
        if len(parts) == 1:
            out.append(result)
            continue
        low = 0
        for name, n, leader in parts:
            out.append(GroupResult(name=name, models=n, models_destroyed=_clipped(result.models_destroyed, low, n),
                                   leader=leader))
            low += n
    return tuple(out)
