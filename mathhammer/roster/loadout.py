"""From a model group's weapon totals to per-model loadouts.

A roster says ``9x Pathfinder: 9x Pulse pistol, 6x Pulse carbine, 3x Ion rifle``; the engine's
statlines say what *each* model carries. :func:`spread` hands the copies out: every model gets
``total // count`` of each weapon, and the remaining copies go to models one after another,
continuing where the previous weapon's stopped, so weapons that replace one another land on
different models (6 carbines on models 1-6, 3 rifles on models 7-9), as the options they are.
Models left with the same weapons form one group.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["spread"]


def spread(count: int, totals: Sequence[tuple[str, int]]) -> list[tuple[int, tuple[tuple[str, int], ...]]]:
    """``count`` models sharing ``totals`` (weapon, copies in the group; a weapon named twice is
    added up): groups of (models, per-model loadout), the groups in the order of their first
    model, each loadout in the order of ``totals``. A group of no models is never returned; a
    model that gets nothing is in a group with an empty loadout.
    """
    if count < 1:
        return []
    summed: dict[str, int] = {}
    for name, n in totals:
        if n > 0:
            summed[name] = summed.get(name, 0) + n
    per_model: list[dict[str, int]] = [{} for _ in range(count)]
    start = 0
    for name, total in summed.items():
        base, rest = divmod(total, count)
        if base:
            for m in per_model:
                m[name] = base
        for i in range(rest):
            m = per_model[(start + i) % count]
            m[name] = m.get(name, 0) + 1
        start = (start + rest) % count
    groups: dict[tuple[tuple[str, int], ...], int] = {}
    for m in per_model:
        loadout = tuple((name, m[name]) for name in summed if name in m)
        groups[loadout] = groups.get(loadout, 0) + 1
    return [(n, loadout) for loadout, n in groups.items()]
