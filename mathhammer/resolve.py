"""Words from the command line -> model objects: inline notation, or names in the library."""

from __future__ import annotations

from .errors import ProfileError
from .model import Target, Unit, Weapon, unit_target
from .notation import looks_inline, parse_target, parse_weapon
from .profiles import Library

__all__ = ["resolve_target", "resolve_weapon"]


def resolve_weapon(lib: Library, text: str) -> tuple[Weapon, Unit | None]:
    """A weapon and the unit that carries it (``None`` for an inline profile).

    Order: inline notation; a weapon's alias or name; a unit's alias or name (its only ranged
    weapon); a unique substring of a weapon name, then of a unit name.

    Raises:
        ProfileError: unknown, ambiguous, or a unit with several ranged weapons (listed).
    """
    if looks_inline(text):
        return parse_weapon(text), None
    weapon = lib.find(text, "weapon", substring=False)
    if weapon is not None:
        return weapon, lib.unit_named(weapon.unit)
    unit = lib.find(text, "unit", substring=False)
    if unit is None:
        try:
            weapon = lib.find(text, "weapon")
            return weapon, lib.unit_named(weapon.unit)
        except ProfileError as e:
            if not e.what.startswith("unknown"):
                raise
        unit = lib.find(text, "unit", substring=True) if _any_unit(lib, text) else None
        if unit is None:
            raise lib.unknown(text, ("weapon", "unit"))
    return _only_ranged(unit, text), unit


def _any_unit(lib: Library, text: str) -> bool:
    q = " ".join(text.lower().split())
    return any(q in u.name.lower() or any(q in a.lower() for a in u.aliases) for u in lib.units)


def _only_ranged(unit: Unit, text: str) -> Weapon:
    ranged = [w for w in unit.weapons if not w.melee]
    if len(ranged) == 1:
        return ranged[0]
    if not ranged:
        raise ProfileError(f"unit {unit.name!r} has no ranged weapon", where="weapon", value=text)
    names = ", ".join(w.name for w in ranged)
    raise ProfileError(f"unit {unit.name!r} has {len(ranged)} ranged weapons: {names}", where="weapon", value=text,
                       hint=f"name one, e.g. '{unit.aliases[0] if unit.aliases else unit.name}/{ranged[0].name}'")


def resolve_target(lib: Library, text: str, *, models: int | None = None) -> tuple[Target, tuple[str, ...]]:
    """A target (inline profile or unit name) and warnings about what it simplifies.

    ``models`` overrides the unit's default size (or MODELS of an inline profile).
    """
    if looks_inline(text):
        target = parse_target(text)
        if models is not None:
            from dataclasses import replace

            target = replace(target, models=models)
        return target, ()
    unit = lib.find(text, "unit")
    return unit_target(unit, models=models)
