"""Words from the command line -> model objects: inline notation, or names in the library."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .errors import InputError, MatchupError, ProfileError
from .limits import MAX_TARGET_MODELS
from .model import Context, Target, Unit, Weapon, unit_target
from .notation import looks_inline, parse_target, parse_weapon_noted
from .profiles import Library

__all__ = ["build_context", "resolve_target", "resolve_weapon"]


def resolve_weapon(lib: Library, text: str, *, melee: bool = False
                   ) -> tuple[Weapon, Unit | None, tuple[str, ...]]:
    """A weapon, the unit that carries it (``None`` for an inline profile) and warnings about
    how an inline profile was read (``D6`` is Damage 6, ruling M6).

    Order: inline notation; a weapon's alias or name; a unit's alias or name (its only ranged
    weapon, or its only melee weapon when ``melee``); a unique substring of a weapon name,
    then of a unit name.

    Raises:
        ProfileError: empty, unknown, ambiguous, or a unit with several ranged weapons (listed).
        MatchupError: an inline melee weapon given to ``shoot`` (or a ranged one to ``fight``).
    """
    _not_empty(text, "weapon", "weapon")
    if looks_inline(text):
        weapon, notes = parse_weapon_noted(text)
        _inline_kind(weapon, text, melee)
        return weapon, None, notes
    weapon, unit = _named_weapon(lib, text, melee)
    return weapon, unit, ()


def _not_empty(text: str, where: str, noun: str) -> None:
    if not text.strip():
        raise ProfileError(f"no {noun} given", where=where, value=text,
                           hint="give a profile name or an inline profile")


def _inline_kind(weapon: Weapon, text: str, melee: bool) -> None:
    """An inline weapon of the wrong kind, named by what the user typed."""
    if weapon.melee == melee:
        return
    command, other = ("fight", "shoot") if melee else ("shoot", "fight")
    kind, needed = ("ranged", "melee") if melee else ("melee", "ranged")
    raise MatchupError(f"is a {kind} weapon; {command} resolves {needed} attacks", where="weapon",
                       value=text.strip(), hint=f"use `mathhammer {other}` for {kind} weapons")


def _named_weapon(lib: Library, text: str, melee: bool) -> tuple[Weapon, Unit | None]:
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
    return _only_weapon(unit, text, melee), unit


def _any_unit(lib: Library, text: str) -> bool:
    q = " ".join(text.lower().split())
    return any(q in u.name.lower() or any(q in a.lower() for a in u.aliases) for u in lib.units)


def _only_weapon(unit: Unit, text: str, melee: bool) -> Weapon:
    kind = "melee" if melee else "ranged"
    found = [w for w in unit.weapons if w.melee == melee]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ProfileError(f"unit {unit.name!r} has no {kind} weapon", where="weapon", value=text)
    names = ", ".join(w.name for w in found)
    raise ProfileError(f"unit {unit.name!r} has {len(found)} {kind} weapons: {names}", where="weapon", value=text,
                       hint=f"name one, e.g. '{unit.aliases[0] if unit.aliases else unit.name}/{found[0].name}'")


def resolve_target(lib: Library, text: str, *, models: int | None = None
                   ) -> tuple[Target, Unit | None, tuple[str, ...]]:
    """A target (inline profile or unit name), its unit (``None`` when inline) and warnings
    about what it simplifies. ``models`` overrides the unit's size (or MODELS of an inline profile).

    Raises:
        ProfileError: empty, unknown or ambiguous, or a malformed inline profile.
        InputError: ``models`` outside 1 to MAX_TARGET_MODELS.
    """
    _not_empty(text, "--target", "target")
    if models is not None and not 1 <= models <= MAX_TARGET_MODELS:
        raise InputError(f"the target unit must have 1 to {MAX_TARGET_MODELS} models", where="--target-models",
                         value=models)
    if looks_inline(text):
        target = parse_target(text)
        if models is not None:
            target = replace(target, models=models)
        return target, None, ()
    unit = lib.find(text, "unit")
    target, notes = unit_target(unit, models=models)
    return target, unit, notes


#: Context fields a profile may set for its unit as the attacker, and as the target.
_ATTACKER_KEYS = ("hit_mod", "wound_mod", "damage_mod", "bs_improve", "ap_improve", "crit_hit", "crit_wound",
                  "reroll_hits", "reroll_wounds", "reroll_damage")
_TARGET_KEYS = ("save_mod", "reroll_saves")


def build_context(options: dict[str, Any], *, weapon: Weapon, attacker: Unit | None,
                  target_unit: Unit | None) -> tuple[Context, tuple[str, ...]]:
    """Merge the command line with the modifiers carried by the profiles.

    ``options`` holds Context fields; a value of ``None`` means "not given on the command
    line". Profile values come from the attacking unit, then its weapon (the more specific
    wins), and for save_mod / reroll_saves from the target unit; the command line wins over
    both. Returns the context and one explain line per merged value.
    """
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    layers: list[tuple[str, dict[str, object], tuple[str, ...]]] = []
    if attacker is not None:
        layers.append((f"unit {attacker.name}", dict(attacker.modifiers), _ATTACKER_KEYS))
    layers.append((f"weapon {weapon.name}", dict(weapon.modifiers), _ATTACKER_KEYS))
    if target_unit is not None:
        layers.append((f"target {target_unit.name}", dict(target_unit.modifiers), _TARGET_KEYS))
    for source, mods, keys in layers:
        for key in keys:
            if key in mods:
                merged[key] = mods[key]
                origin[key] = source
    lines = []
    for key, value in options.items():
        if value is None:
            continue
        if key in merged and merged[key] != value:
            lines.append(f"--{key.replace('_', '-')} {_show(value)} overrides {_show(merged[key])} from {origin[key]}")
            origin.pop(key)
        merged[key] = value
    for key, source in origin.items():
        lines.append(f"{key.replace('_', '-')} {_show(merged[key])} from {source}")
    return Context(**merged), tuple(lines)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:+d}" if value else "0"
    return str(getattr(value, "value", value))
