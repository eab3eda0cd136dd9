"""From a model group's weapon totals to per-model loadouts.

A roster says ``9x Pathfinder: 9x Pulse pistol, 6x Pulse carbine, 3x Ion rifle``; the engine's
statlines say what *each* model carries. :func:`spread` hands the copies out: every model gets
``total // count`` of each weapon, and the remaining copies go to models one after another,
continuing where the previous weapon's stopped, so weapons that replace one another land on
different models (6 carbines on models 1-6, 3 rifles on models 7-9), as the options they are.
Models left with the same weapons form one group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from ..model import Ability, Unit, Weapon, describe_gives
from ..rules import melee_weight, not_attacking_with

__all__ = ["attacking", "borne_each", "spread"]


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


def borne_each(listed: Iterable[tuple[str, Mapping[str, Any], int]], models: int, group: str
               ) -> tuple[list[tuple[str, Mapping[str, Any], int]], list[str]]:
    """Wargear that changes its bearers' defences (ruling M81), as a roster lists it for a group
    of ``models`` models called ``group``: (name, what it gives, copies), a name listed twice
    added up. Returns the pieces every model bears, (name, what it gives, how many each), and a
    note for each piece with copies left over (the roster does not say which models bear them:
    not given)."""
    counts: dict[str, tuple[Mapping[str, Any], int]] = {}
    for name, given, n in listed:
        counts[name] = (given, counts.get(name, (given, 0))[1] + n)
    pieces, notes = [], []
    for name, (given, n) in counts.items():
        each, rest = divmod(n, models)
        what = describe_gives(given.items())
        if rest and not each:
            notes.append(f"{name}: {n} of {models} {group} bear {what}, not given (the roster does not say which "
                         "models)")
        elif rest:
            notes.append(f"{name}: {n} for {models} {group}: {each} each, and {rest} more ({what}) not given (the "
                         "roster does not say which models bear them)")
        if each:
            pieces.append((name, given, each))
    return pieces, notes


def attacking(unit: Unit) -> tuple[Unit, list[str]]:
    """``unit`` with each model's loadout cut to what it attacks with, as the library's profiles
    list it (:func:`mathhammer.rules.not_attacking_with`; here a MONSTER or VEHICLE model fires
    its Pistols beside its other ranged weapons, the unit's or the model's keywords saying so).
    What is left out becomes one of the model's options and stays
    among the unit's weapons, where ``UNIT/WEAPON`` picks it. Returns the unit and the line that
    says what was left out (none when nothing was)."""
    weapons = {w.name: w for w in unit.weapons}
    models = []
    left_out: dict[str, int] = {}  # weapon -> models that carry it but do not attack with it
    def kind(w: Weapon) -> str:
        if w.melee:
            return "extra" if w.has(Ability.EXTRA_ATTACKS) else "melee"
        return "pistol" if w.has(Ability.PISTOL) else "ranged"

    def weight(w: Weapon) -> Fraction:
        return melee_weight(w.attacks, w.skill or 2, w.strength, w.ap, w.damage)

    for m in unit.models:
        left = not_attacking_with([(n, kind(weapons[n])) for n, _ in m.loadout if n in weapons],
                                  pistols_beside_others=bool({"MONSTER", "VEHICLE"} & (unit.keywords | m.keywords)),
                                  weight=lambda n: weight(weapons[n]))
        if left:
            m = replace(m, loadout=tuple((n, k) for n, k in m.loadout if n not in left),
                        options=(*m.options, *(n for n in left if n not in m.options)))
            for n in left:
                left_out[n] = left_out.get(n, 0) + m.count
        models.append(m)
    if not left_out:
        return unit, []
    named = ", ".join(f"{n} ({k} {'model' if k == 1 else 'models'})" for n, k in left_out.items())
    first, k = next(iter(left_out.items()))
    return replace(unit, models=tuple(models)), [
        f"not in the loadout fired: {named} (a model shoots its Pistols or its other ranged weapons, and fights "
        f"with one melee weapon; '{k}x {unit.name}/{first}' fires them instead)"]
