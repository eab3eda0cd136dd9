"""The per-group and per-weapon results of one weapon group at one group of identical models,
which both engines compute as whole-unit totals only: they are those totals."""

from __future__ import annotations

from ..compile import UnitInputs
from ..result import Distribution, GroupResult, WeaponShare


def single(u: UnitInputs, damage: Distribution, models: Distribution) -> tuple[tuple[GroupResult, ...],
                                                                               tuple[WeaponShare, ...]]:
    """(groups, weapons) of a :attr:`UnitInputs.single` attack whose damage and models destroyed
    are ``damage`` and ``models``."""
    return ((GroupResult(name=u.group_names[0], models=u.group_models[0], models_destroyed=models,
                         leader=u.group_leader[0]),),
            (WeaponShare(name=u.weapon_names[0], count=u.counts[0], damage_mean=damage.mean(),
                         models_destroyed_mean=models.mean()),))
