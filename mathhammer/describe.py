"""Plain-data descriptions of a matchup for outputs: the JSON ``attacker``, ``target``,
``context``, ``weapons`` and ``groups`` objects and their one-line texts. No arithmetic beyond
formatting (and the means a single weapon at one model group shares with the whole result)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import Context, Matchup, Target, TargetUnit, Weapon

if TYPE_CHECKING:  # numpy stays out of what --help imports
    from .result import DamageResult, GroupResult, RowsHook, WeaponShare

__all__ = ["attacker_dict", "context_dict", "group_results", "target_dict", "target_line", "unit_blocks",
           "unit_line", "weapon_line", "weapon_shares"]


def weapon_dict(w: Weapon) -> dict[str, Any]:
    """A weapon profile as JSON data."""
    return {"name": w.name, "unit": w.unit or None, "range": None if w.melee else (w.range_inches or None),
            "type": "melee" if w.melee else "ranged", "A": str(w.attacks),
            ("WS" if w.melee else "BS"): w.skill, "S": w.strength, "AP": w.ap, "D": str(w.damage),
            "abilities": [str(a) for a in w.abilities]}


def attacker_dict(m: Matchup) -> dict[str, Any]:
    """The JSON ``attacker`` object: the weapon and the models firing it; with several weapon
    groups ``weapon`` and ``models`` are null (the ``weapons`` list has each one)."""
    single = len(m.weapons) == 1
    out: dict[str, Any] = {"weapon": weapon_dict(m.weapon) if single else None,
                           "models": m.firing(m.weapons[0]) if single else None,
                           "unit": m.attacker.name if m.attacker else None}
    if m.attacker is not None:
        out["points"] = m.attacker.points
    return out


def _group_dict(t: Target, name: str) -> dict[str, Any]:
    return {"name": name, "models": t.models, "T": t.toughness, "Sv": t.save,
            "W": t.wounds, "invulnerable": t.invulnerable, "invulnerable_ranged_only": t.invulnerable_ranged_only,
            "feel_no_pain": t.feel_no_pain, "keywords": sorted(t.keywords)}


def _common(values: list[Any]) -> Any:
    """The value every group shares, else None."""
    return values[0] if all(v == values[0] for v in values) else None


def target_dict(t: Target | TargetUnit) -> dict[str, Any]:
    """The JSON ``target`` object. One model group: its profile. Several: the whole unit (T is
    the Toughness every Wound roll uses, keywords those attacks check; Sv, W, invulnerable and
    feel_no_pain are null where the groups differ, the ``groups`` list has each)."""
    if isinstance(t, Target):
        return _group_dict(t, t.name)
    if len(t.groups) == 1:
        return {**_group_dict(t.groups[0], t.name), "wounds_left": t.wounds_left}
    groups = t.groups
    return {"name": t.name, "models": t.models, "T": t.toughness,
            "Sv": _common([g.save for g in groups]), "W": _common([g.wounds for g in groups]),
            "invulnerable": _common([g.invulnerable for g in groups]),
            "invulnerable_ranged_only": _common([g.invulnerable_ranged_only for g in groups]),
            "feel_no_pain": _common([g.feel_no_pain for g in groups]), "keywords": sorted(t.keywords),
            "wounds_left": t.wounds_left, "allocation": t.allocation.value, "attached": t.attached}


def context_dict(c: Context) -> dict[str, Any]:
    """The JSON ``context`` object: options as requested (the applied values are in thresholds)."""
    out: dict[str, Any] = {}
    for name in c.__slots__:
        value = getattr(c, name)
        out[name] = getattr(value, "value", value)
    return out


def weapon_shares(result: DamageResult) -> tuple[WeaponShare, ...]:
    """Each weapon group's share (the engine's; for one weapon group, the whole result)."""
    from .result import WeaponShare

    m: Matchup | None = result.provenance.get("matchup")
    if result.weapons or m is None or len(m.weapons) != 1:
        return result.weapons
    g = m.weapons[0]
    return (WeaponShare(name=g.weapon.name, count=m.firing(g), damage_mean=result.damage.mean(),
                        models_destroyed_mean=result.models_destroyed.mean()),)


def group_results(result: DamageResult) -> tuple[GroupResult, ...]:
    """Each model group's models destroyed (the engine's; for one group, the whole result)."""
    from .result import GroupResult

    m: Matchup | None = result.provenance.get("matchup")
    if result.groups or m is None or len(m.target.groups) != 1:
        return result.groups
    t = m.target.groups[0]
    return (GroupResult(name=m.target.name, models=t.models, models_destroyed=result.models_destroyed,
                        leader=t.leader),)


def unit_blocks(result: DamageResult, rows: RowsHook | None = None) -> dict[str, list[dict[str, Any]]]:
    """The JSON ``weapons`` and ``groups`` lists.

    ``weapons`` (firing order): name, count (models firing it: the group's count times
    ``--models``), its profile, and the means of the wounds its attacks took off and of the
    models whose last wound they took (``{"mean": ...}``, the stat-block key). ``groups``
    (allocation order): the group's profile, ``leader``, ``models_destroyed`` (a stat block)
    and ``p_destroyed``."""
    m: Matchup | None = result.provenance.get("matchup")
    weapons = []
    shares = weapon_shares(result)
    profiles = [g.weapon for g in m.weapons] if m is not None and len(m.weapons) == len(shares) else []
    for i, share in enumerate(shares):
        w = profiles[i] if profiles else None
        weapons.append({"name": share.name, "count": share.count, "weapon": weapon_dict(w) if w else None,
                        "damage": {"mean": share.damage_mean},
                        "models_destroyed": {"mean": share.models_destroyed_mean}})
    groups = []
    found = group_results(result)
    order = m.target.allocation_order() if m is not None else ()
    for i, group in enumerate(found):
        groups.append(group_block(order[i] if len(order) == len(found) else None, group, rows))
    return {"weapons": weapons, "groups": groups}


def group_block(t: Target | None, group: GroupResult, rows: RowsHook | None = None) -> dict[str, Any]:
    """One entry of a JSON ``groups`` list: the group's profile (``t``; just its name when
    ``None``), ``models``, ``leader``, ``models_destroyed`` (a stat block) and ``p_destroyed``."""
    described = _group_dict(t, group.name) if t is not None else {"name": group.name}
    return {**described, "models": group.models, "leader": group.leader,
            "models_destroyed": group.models_destroyed.to_dict(rows), "p_destroyed": group.p_destroyed()}


def weapon_line(w: Weapon) -> str:
    """``72" A1 BS5+ S20 AP-5 D D6+6 [DEVASTATING WOUNDS, TWIN-LINKED]``: inline notation that
    :func:`mathhammer.notation.parse_weapon` reads back to the same statistics (name aside).

    A fixed Damage of 3 or 6 is written ``D=3`` / ``D=6``: ``D3`` would read as a D3 roll to a
    player (and parses with a warning, ruling M6)."""
    skill = " N/A" if w.skill is None else f"{w.skill}+"
    attacks = f"A{w.attacks}" if w.attacks.is_fixed else f"A {w.attacks}"
    if w.damage.is_fixed:
        damage = f"D={w.damage}" if w.damage.plus in (3, 6) else f"D{w.damage}"
    else:
        damage = f"D {w.damage}"
    text = f"{attacks} {'WS' if w.melee else 'BS'}{skill} S{w.strength} AP{w.ap} {damage}"
    if w.range_inches:
        text = f'{w.range_inches}" ' + text
    return text + (f" [{', '.join(str(a) for a in w.abilities)}]" if w.abilities else "")


def target_line(t: Target) -> str:
    """``1 model, T11 Sv3+ W26, 5+ invulnerable (ranged only)``."""
    sv = f"Sv{t.save}+"
    text = f"{t.models} model{'s' if t.models != 1 else ''}, T{t.toughness} {sv} W{t.wounds if t.wounds else '∞'}"
    if t.invulnerable:
        text += f", {t.invulnerable}+ invulnerable" + (" (ranged only)" if t.invulnerable_ranged_only else "")
    if t.feel_no_pain:
        text += f", {t.feel_no_pain}+ Feel No Pain"
    return text


def unit_line(t: TargetUnit) -> list[str]:
    """The target's lines: one per model group (``Leader`` marked), then what is special about
    the unit (a wounded first model, the allocation policy of a mixed unit)."""
    if len(t.groups) == 1:
        lines = [target_line(t.groups[0])]
    else:
        lines = [f"{g.name}: {target_line(g)}" + (" (Leader)" if g.leader else "") for g in t.groups]
        extra = f"allocation: {t.allocation.value}"
        if t.attached:
            extra += f"; Attached unit: Wound rolls use T{t.toughness}"
        lines.append(extra)
    if t.wounds_left is not None:
        first = t.allocation_order()[0]
        lines.append(f"the first {first.name} model has {t.wounds_left} wound{'s' if t.wounds_left != 1 else ''} left")
    return lines
