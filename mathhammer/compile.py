"""Matchup -> KernelInputs: the rules of a matchup become small typed tables.

The only module that knows the array layout (named in :mod:`mathhammer.codes`). Both engines
eat the same :class:`KernelInputs`; :class:`Thresholds` says in words what the tables mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from . import rules
from .codes import MAX_RAW, PAIRS, Flag, Param, Roll, Stage
from .errors import MatchupError
from .model import Ability, DiceExpr, Matchup, RerollPolicy, RulesVersion

__all__ = ["KernelInputs", "Thresholds", "compile_matchup"]


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelInputs:
    """Read-only, C-contiguous arrays for the kernels (layout in :mod:`mathhammer.codes`).

    stages: int8[4, 36]; rolls: int64[3, 2]; roll_maps: int64[3, MAX_RAW + 1]; params: int64[4].
    ``damage_max`` bounds the damage histogram; ``target_models`` sizes the models histogram.
    """

    stages: npt.NDArray[np.int8]
    rolls: npt.NDArray[np.int64]
    roll_maps: npt.NDArray[np.int64]
    params: npt.NDArray[np.int64]
    damage_max: int
    target_models: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    """What the tables mean, for people and for the JSON ``thresholds`` object."""

    hit: dict[str, object]
    wound: dict[str, object]
    save: dict[str, object]
    damage: dict[str, object]
    words: str
    warnings: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {"hit": self.hit, "wound": self.wound, "save": self.save, "damage": self.damage,
                "summary": self.words}


@dataclass(frozen=True, slots=True)
class Compiled:
    """Compiler output: the tables, and what they mean."""

    inputs: KernelInputs
    thresholds: Thresholds


def _frozen(a: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _pair_table(outcomes: tuple[int, ...], mask: tuple[int, ...]) -> list[int]:
    """Result for each (first face, re-roll face): the re-roll replaces a masked first face."""
    return [outcomes[second if mask[first] else first] for first in range(1, 7) for second in range(1, 7)]


def _needed(outcomes: tuple[int, ...]) -> int | None:
    """Smallest unmodified face that succeeds (faces succeed monotonically)."""
    return next((f for f in range(1, 7) if outcomes[f] != rules.FAIL), None)


def _roll_row(expr: DiceExpr, maps: npt.NDArray[np.int64], rolls: npt.NDArray[np.int64], row: Roll) -> None:
    rolls[row] = (expr.count, expr.sides)
    for raw in range(expr.count * (expr.sides and 1), expr.count * expr.sides + 1):
        maps[row, raw] = raw + expr.plus


def _modifier(requested: int, applied: int) -> dict[str, object]:
    return {"requested": requested, "applied": applied, "clamped": requested != applied}


#: Abilities accepted and listed but without an effect on these numbers yet, with the reason.
_NOT_MODELLED = {
    Ability.BLAST: "extra attacks against large units",
    Ability.RAPID_FIRE: "needs the range to the target",
    Ability.MELTA: "needs the range to the target",
    Ability.HEAVY: "needs whether the unit remained stationary",
    Ability.LANCE: "melee on the charge",
    Ability.ANTI: "critical wounds against keywords",
    Ability.INDIRECT_FIRE: "needs whether the target is visible",
    Ability.HAZARDOUS: "self-damage after shooting",
    Ability.EXTRA_ATTACKS: "melee only",
}


def compile_matchup(m: Matchup) -> Compiled:
    """Turn a matchup into kernel tables and their description.

    Raises:
        MatchupError: for a matchup the rules do not allow (e.g. a melee weapon shot).
    """
    w, t, ctx = m.weapon, m.target, m.context
    if w.melee:
        raise MatchupError("is a melee weapon; shoot resolves ranged attacks", where=f"weapon {w.name!r}",
                           value=w.name)
    warnings: list[str] = []
    for a in w.abilities:
        if a.ability in _NOT_MODELLED:
            warnings.append(f"{a} is not modelled yet: ignored ({_NOT_MODELLED[a.ability]})")
    stages = np.zeros((4, PAIRS), dtype=np.int8)
    rolls = np.zeros((3, 2), dtype=np.int64)
    maps = np.zeros((3, MAX_RAW + 1), dtype=np.int64)
    flags = Flag(0)

    # Hit roll.
    torrent = w.has(Ability.TORRENT)
    hit_mod = rules.clamp_roll_modifier(ctx.hit_mod)
    if hit_mod != ctx.hit_mod:
        warnings.append(f"--hit-mod {ctx.hit_mod:+d} clamped to {hit_mod:+d} (R-0.3: a Hit roll is never modified by more than 1)")
    if torrent:
        flags |= Flag.TORRENT
        hit_out = (0,) + (rules.SUCCESS,) * 6
        hit_mask = (0,) * 7
        if ctx.reroll_hits is not RerollPolicy.NONE:
            warnings.append("TORRENT makes no Hit roll: --reroll-hits has no effect")
    else:
        assert w.skill is not None
        hit_out = rules.hit_outcomes(w.skill, hit_mod)
        hit_mask = rules.reroll_mask(hit_out, ctx.reroll_hits)
    stages[Stage.HIT] = _pair_table(hit_out, hit_mask)

    # Critical-Hit effects.
    sus = w.get(Ability.SUSTAINED_HITS)
    _roll_row(sus.value if sus and sus.value else DiceExpr(plus=0), maps, rolls, Roll.SUSTAINED)
    if w.has(Ability.LETHAL_HITS):
        flags |= Flag.LETHAL_HITS

    # Wound roll (R-5.1, R-5.2, R-3.6 twin-linked: broadest re-roll wins, R-3.9).
    base = rules.wound_threshold(w.strength, t.toughness)
    wound_mod = rules.clamp_roll_modifier(ctx.wound_mod)
    if wound_mod != ctx.wound_mod:
        warnings.append(f"--wound-mod {ctx.wound_mod:+d} clamped to {wound_mod:+d} (R-0.3: a Wound roll is never modified by more than 1)")
    wound_out = rules.wound_outcomes(base, wound_mod)
    twin = w.has(Ability.TWIN_LINKED)
    wound_policy = rules.broadest(ctx.reroll_wounds, RerollPolicy.FAILED if twin else RerollPolicy.NONE)
    stages[Stage.WOUND] = _pair_table(wound_out, rules.reroll_mask(wound_out, wound_policy))
    devastating = w.has(Ability.DEVASTATING_WOUNDS)
    if devastating:
        flags |= Flag.DEVASTATING_WOUNDS
        if ctx.rules is RulesVersion.V2023:
            flags |= Flag.DEVASTATING_SPILL

    # Saving throw (R-7.1 - R-7.3, R-7.5).
    ignores_cover = w.has(Ability.IGNORES_COVER)
    cover = rules.cover_applies(cover=ctx.cover, ignores_cover=ignores_cover, melee=False, save=t.save, ap=w.ap)
    armour_mod = rules.save_roll_modifier(w.ap, 1 if cover else 0, ctx.save_mod)
    inv_mod = rules.save_roll_modifier(0, 0, ctx.save_mod)
    if ctx.save_mod > 1 or w.ap + (1 if cover else 0) + ctx.save_mod > 1:
        warnings.append(f"save modifier capped at +1 (R-0.3): AP{w.ap}, cover {1 if cover else 0:+d}, "
                        f"--save-mod {ctx.save_mod:+d} -> {armour_mod:+d}")
    inv = t.invulnerable  # shoot: ranged attacks, so a ranged-only invulnerable save applies
    choice = rules.choose_save(save=t.save, armour_modifier=armour_mod, invulnerable=inv, invulnerable_modifier=inv_mod)
    save_fail = rules.save_fails(choice.needed)
    stages[Stage.SAVE] = _pair_table(save_fail, (0,) * 7)

    # Damage and Feel No Pain.
    _roll_row(w.damage, maps, rolls, Roll.DAMAGE)
    if t.feel_no_pain is not None:
        flags |= Flag.FEEL_NO_PAIN
        fnp = (0,) + tuple(1 if f >= t.feel_no_pain else 0 for f in range(1, 7))
        stages[Stage.FEEL_NO_PAIN] = _pair_table(fnp, (0,) * 7)

    # Number of attacks.
    _roll_row(w.attacks, maps, rolls, Roll.ATTACKS)

    params = np.zeros(4, dtype=np.int64)
    params[Param.FLAGS] = int(flags)
    params[Param.FIRING_MODELS] = ctx.firing_models
    params[Param.TARGET_MODELS] = t.models
    params[Param.TARGET_WOUNDS] = t.wounds or 0
    hits_max = w.attacks.maximum * (1 + (sus.value.maximum if sus and sus.value else 0))
    damage_bound = ctx.firing_models * hits_max * w.damage.maximum
    damage_max = min(damage_bound, t.models * t.wounds) if t.wounds else damage_bound

    inputs = KernelInputs(stages=_frozen(stages), rolls=_frozen(rolls), roll_maps=_frozen(maps),
                          params=_frozen(params), damage_max=damage_max, target_models=t.models)
    thresholds = _describe(m, hit_out, hit_mod, torrent, base, wound_out, wound_mod, wound_policy, twin,
                           choice, cover, armour_mod, devastating, tuple(warnings))
    return Compiled(inputs, thresholds)


def _describe(m: Matchup, hit_out: tuple[int, ...], hit_mod: int, torrent: bool, base: int,
              wound_out: tuple[int, ...], wound_mod: int, wound_policy: RerollPolicy, twin: bool,
              choice: rules.SaveChoice, cover: bool, armour_mod: int, devastating: bool,
              warnings: tuple[str, ...]) -> Thresholds:
    w, t, ctx = m.weapon, m.target, m.context
    hit_needed = None if torrent else _needed(hit_out)
    wound_needed = _needed(wound_out)
    hit = {"automatic": torrent, "skill": w.skill, "needed": hit_needed, "critical_on": None if torrent else 6,
           "modifier": _modifier(ctx.hit_mod, hit_mod), "reroll": "none" if torrent else ctx.reroll_hits.value}
    wound = {"strength": w.strength, "toughness": t.toughness, "base": base, "needed": wound_needed,
             "critical_on": 6, "modifier": _modifier(ctx.wound_mod, wound_mod), "reroll": wound_policy.value,
             "twin_linked": twin}
    cover_note = "applied" if cover else ("denied (Sv3+ or better vs AP0, R-7.3)"
                                          if ctx.cover and not w.has(Ability.IGNORES_COVER) and t.save <= 3 and w.ap == 0
                                          else "ignored (IGNORES COVER)" if ctx.cover and w.has(Ability.IGNORES_COVER)
                                          else "none")
    save = {"kind": choice.kind, "needed": choice.needed, "armour_needed": choice.armour_needed,
            "invulnerable_needed": choice.invulnerable_needed, "ap": w.ap, "cover": cover_note,
            "modifier": armour_mod}
    damage = {"expression": str(w.damage), "devastating_wounds": devastating,
              "feel_no_pain": t.feel_no_pain,
              "devastating_excess": "spills" if devastating and ctx.rules is RulesVersion.V2023 else "lost"}

    parts = []
    parts.append("hits automatically (TORRENT)" if torrent else f"hits on {hit_needed}+")
    if not torrent and ctx.reroll_hits is not RerollPolicy.NONE:
        parts[-1] += f" (re-roll: {ctx.reroll_hits.value})"
    wtxt = f"wounds on {wound_needed}+"
    if wound_policy is not RerollPolicy.NONE:
        wtxt += f" (re-roll: {'twin-linked' if twin and wound_policy is RerollPolicy.FAILED else wound_policy.value})"
    parts.append(wtxt)
    if choice.kind == "none":
        parts.append("no save")
    else:
        parts.append(f"{choice.needed}+ {'invulnerable' if choice.kind == 'invulnerable' else 'armour'} save"
                     + (" (in cover)" if cover and choice.kind == "armour" else ""))
    if ctx.cover and not cover:
        parts.append(f"cover {cover_note}")
    if devastating:
        parts.append("devastating wounds on 6s")
    if t.feel_no_pain:
        parts.append(f"{t.feel_no_pain}+ Feel No Pain")
    return Thresholds(hit=hit, wound=wound, save=save, damage=damage, words=", ".join(parts), warnings=warnings)
