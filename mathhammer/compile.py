"""Matchup -> KernelInputs: the rules of a matchup become small typed tables.

The only module that knows the array layout (named in :mod:`mathhammer.codes`). Both engines
eat the same :class:`KernelInputs`. Every rule applied is recorded, with its id, in the
``explain`` lines of :class:`Plan`; every request that is clamped, denied or has no effect is
also a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from . import dice, rules
from .codes import (
    MAX_QUEUE_POSITIONS,
    MAX_RAW,
    PAIRS,
    REROLLABLE,
    Command,
    Flag,
    Param,
    Roll,
    RollFlag,
    Stage,
    StageCount,
)
from .errors import MatchupError
from .limits import MAX_CHUNKS, MONTE_CARLO_MAX_BYTES, size_text
from .model import (
    Ability,
    CommandReroll,
    Context,
    DamageReroll,
    DiceExpr,
    Matchup,
    RerollPolicy,
    RulesVersion,
    SaveReroll,
    Target,
    Unit,
    Weapon,
)

__all__ = ["STAGE_CAP", "Compiled", "KernelInputs", "Plan", "UnitInputs", "check_monte_carlo", "compile_matchup",
           "hazard_carriers", "monte_carlo_bytes", "monte_carlo_threads"]

#: Most bins a Monte Carlo stage histogram keeps one by one: values 0 .. STAGE_CAP - 1, and
#: STAGE_CAP meaning "STAGE_CAP or more" (the kernel keeps the sum and sum of squares of those,
#: so the stage's mean and sd are those of every sample, up to float64 rounding). Bounds a
#: stage row at 10 x 4,097 int64s whatever the attacks, Sustained Hits and damage. At least TABLE_N (32) of
#: mathhammer.kernel.binomial: the joint tables read the attacks and hits histograms' lengths
#: as bounds that only save work.
STAGE_CAP = 4_096


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelInputs:
    """Read-only, C-contiguous arrays for the kernels (layout in :mod:`mathhammer.codes`).

    stages: int8[4, 36]; rolls: int64[3, 2]; roll_maps: int64[3, MAX_RAW + 1];
    roll_flags: int8[3, MAX_RAW + 1]; params: int64[5]; stage_offsets: int64[11].
    ``damage_max`` bounds the damage histogram, ``target_models`` sizes the models histogram,
    ``hazard_max`` the Hazardous histogram. Each stage histogram is as long as the largest count
    that stage can reach, capped at STAGE_CAP (its last bin then holds every value from
    STAGE_CAP up); ``stage_largest`` keeps the uncapped largest counts (see
    :func:`monte_carlo_bytes` for what they cost).
    """

    stages: npt.NDArray[np.int8]
    rolls: npt.NDArray[np.int64]
    roll_maps: npt.NDArray[np.int64]
    roll_flags: npt.NDArray[np.int8]
    params: npt.NDArray[np.int64]
    stage_offsets: npt.NDArray[np.int64]
    damage_max: int
    target_models: int
    hazard_max: int
    stage_largest: tuple[int, ...]
    #: the models taking the mortal wounds of this weapon's Hazardous tests, alone
    #: (:func:`hazard_carriers`); a whole attack's are :attr:`UnitInputs.hazard_groups`
    hazard_groups: tuple[tuple[int, int, int], ...] = ()

    def stage_capped(self, i: int) -> bool:
        """Whether stage histogram ``i`` (a StageCount) stops short of its largest count: its
        last bin, value STAGE_CAP, then means "STAGE_CAP or more"."""
        return self.stage_largest[i] > STAGE_CAP


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What the tables mean: thresholds per stage (JSON ``thresholds``), a one-line summary,
    the ``explain`` lines (every rule applied, with its id) and warnings."""

    hit: dict[str, Any]
    wound: dict[str, Any]
    save: dict[str, Any]
    damage: dict[str, Any]
    words: str
    explain: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    #: (warning, the request it says changes nothing for this weapon at these models): see _Notes.warn
    unused: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the thresholds: a new document each call (a result's provenance is its
        own to change, and one plan may serve many results: mathhammer.engine)."""
        return {"hit": _copied(self.hit), "wound": _copied(self.wound), "save": _copied(self.save),
                "damage": _copied(self.damage), "summary": self.words}


def _copied(value: Any) -> Any:
    """``value`` with every dict and list in it copied (JSON-like values: the rest are immutable)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Compiled:
    """Compiler output: the tables, and what they mean. ``inputs`` are the first pair's tables
    (all of them for a single weapon at identical models); ``unit`` has every pair."""

    inputs: KernelInputs
    plan: Plan
    unit: UnitInputs | None = None


_ORDER = ("general", "attacks", "hit", "wound", "save", "damage", "after")


class _Notes:
    """Collects explain lines (by stage, listed in the order of the attack sequence) and warnings."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []
        self.warnings: list[str] = []
        self.unused: dict[str, str] = {}
        self.stage = "general"

    def rule(self, rule_id: str, text: str) -> None:
        self.lines.append((_ORDER.index(self.stage), f"{rule_id}: {text}" if rule_id else text))

    def warn(self, text: str, *, unused: str | None = None) -> None:
        """A warning; ``unused``: the request it says changes nothing (an option as typed, or the
        army rule or stratagem that asked for a modifier), which several weapon groups' tables
        warn about only when it changes nothing for any of them."""
        self.warnings.append(text)
        if unused is not None:
            self.unused[text] = unused
        self.lines.append((_ORDER.index(self.stage), f"warning: {text}"))

    @property
    def explain(self) -> list[str]:
        return [text for _, text in sorted(self.lines, key=lambda x: x[0])]


def _frozen(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _pair_table(outcomes: tuple[int, ...], mask: tuple[int, ...], fail: int = rules.FAIL) -> list[int]:
    """Result for each (first face, re-roll face): the re-roll replaces a masked first face;
    a failure whose die was not re-rolled is marked REROLLABLE (Command Re-roll)."""
    table = []
    for first in range(1, 7):
        for second in range(1, 7):
            if mask[first]:
                table.append(outcomes[second])
            else:
                o = outcomes[first]
                table.append(o + (REROLLABLE if o == fail else 0))
    return table


def _crit_thresholds(given: int, successful: bool) -> tuple[int, int]:
    """(the unmodified roll from which a result is critical whatever it is, the one from which it
    is critical when it succeeds): a threshold of --crit-hit / --crit-wound is the first,
    unless its rule says "a *successful* unmodified roll" (A7, ``successful``), then the second
    (the natural 6 stays the first)."""
    if successful and given < 6:
        return 6, given
    return given, 7


def _first_critical(out: tuple[int, ...]) -> int:
    """The lowest face of ``out`` that is critical (7: none)."""
    return next((f for f in rules.FACES if out[f] == rules.CRIT), 7)


def _needed(outcomes: tuple[int, ...]) -> int | None:
    """Smallest unmodified face that succeeds (None: none does)."""
    return next((f for f in range(1, 7) if outcomes[f] != rules.FAIL), None)


def _dice_row(exprs: list[DiceExpr], extra: int, row: Roll, rolls: npt.NDArray[np.int64],
              maps: npt.NDArray[np.int64]) -> dict[int, Fraction]:
    """Put the sum of ``exprs`` + ``extra`` in ``row``; returns its distribution by raw dice sum."""
    n6 = sum(e.count for e in exprs if e.sides == 6)
    n3 = sum(e.count for e in exprs if e.sides == 3)
    plus = sum(e.plus for e in exprs) + extra
    if 6 * n6 + 3 * n3 > MAX_RAW:
        raise MatchupError(f"more dice than one roll supports ({MAX_RAW} pips)", where="weapon",
                           value=" + ".join(map(str, exprs)))
    rolls[row] = (n6, n3)
    raw_pmf = _raw_pmf(n6, n3)
    for raw in raw_pmf:
        maps[row, raw] = raw + plus
    return raw_pmf


def _raw_pmf(n6: int, n3: int) -> dict[int, Fraction]:
    dist = {0: Fraction(1)}
    for sides, n in ((6, n6), (3, n3)):
        for _ in range(n):
            dist = _convolve(dist, dice.pmf(DiceExpr(count=1, sides=sides)))
    return dist


def _convolve(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + p * q
    return out


def _mean(values: Mapping[int, Fraction | int], pmf: dict[int, Fraction]) -> Fraction:
    return sum((values[k] * p for k, p in pmf.items()), Fraction(0))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class UnitInputs:
    """The tables of a whole attack: weapon group g (firing order) against model group j
    (allocation order, :meth:`mathhammer.model.TargetUnit.allocation_order`).

    ``pairs[g][j]`` is exactly what one weapon fired by ``counts[g]`` models does to group j
    alone, with the unit's Toughness, keywords and Stealth (Wound rolls are made before
    allocation): its Hit, Wound, Attacks and Sustained rows are the same for every j (taken
    from j = 0), its save and Feel No Pain rows and Damage map are group j's. ``stages`` ..
    ``params`` stack them ([G, J, ...]) for the kernel.

    Groups 0 .. ``bodyguard_groups`` - 1 take attacks first (the Bodyguard groups, or every
    group of a unit without a Leader), one model at a time, in order; the Leader groups after
    them, or first for a PRECISION attack (``precision[g]``). ``group_models``,
    ``group_wounds`` (0: unlimited, a lone group only) and ``group_leader`` describe them;
    ``wounds_left`` (0: none) is what the first model of group 0 has left.
    """

    pairs: tuple[tuple[KernelInputs, ...], ...]
    weapon_names: tuple[str, ...]
    counts: tuple[int, ...]
    precision: tuple[bool, ...]
    group_names: tuple[str, ...]
    group_models: tuple[int, ...]
    group_wounds: tuple[int, ...]
    group_leader: tuple[bool, ...]
    bodyguard_groups: int
    wounds_left: int
    stages: npt.NDArray[np.int8]
    rolls: npt.NDArray[np.int64]
    roll_maps: npt.NDArray[np.int64]
    roll_flags: npt.NDArray[np.int8]
    params: npt.NDArray[np.int64]
    groups: npt.NDArray[np.int64]
    stage_offsets: npt.NDArray[np.int64]
    stage_largest: tuple[int, ...]
    damage_max: int
    target_models: int
    hazard_firing: int
    hazard_max: int
    #: the models that take the Hazardous tests' mortal wounds (:func:`hazard_carriers`): (models,
    #: W, Feel No Pain) in the order they take them; W 0: unknown (wounds counted, not models)
    hazard_groups: tuple[tuple[int, int, int], ...] = ()

    @property
    def single(self) -> bool:
        """One weapon group at one group of identical untouched models: the kernel's fused
        paths and the exact engine's closed forms apply (the tables are ``pairs[0][0]``)."""
        return len(self.pairs) == 1 and len(self.pairs[0]) == 1 and self.wounds_left == 0

    @property
    def n_weapons(self) -> int:
        return len(self.pairs)

    @property
    def n_groups(self) -> int:
        return len(self.pairs[0])

    def stage_capped(self, i: int) -> bool:
        """As :meth:`KernelInputs.stage_capped`, for the whole unit's stage counts."""
        return self.stage_largest[i] > STAGE_CAP


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class _Pair:
    """One weapon group against one model group: what :class:`_Compiler` reads."""

    weapon: Weapon
    target: Target
    context: Context
    attacker: Unit | None
    unit_models: int  # models in the whole target unit (BLAST counts them all, A19)
    sources: tuple[tuple[str, str, int], ...] = ()  # Matchup.sources


def compile_matchup(m: Matchup) -> Compiled:
    """Turn a matchup into kernel tables and their description: every weapon group against
    every model group (:class:`UnitInputs`); ``Compiled.inputs`` is the first pair's tables
    (the whole matchup's when it is :attr:`UnitInputs.single`).

    Raises:
        MatchupError: for a matchup the rules do not allow (a melee weapon shot, Overwatch at a
        TITANIC unit, a target that is not visible without INDIRECT FIRE, ...).
    """
    unit = m.target
    order = unit.allocation_order()
    toughness, keywords, stealth = unit.toughness, unit.keywords, unit.stealth
    rows: list[tuple[Compiled, ...]] = []
    for group in m.weapons:
        ctx = m.context_of(group)
        if ctx.firing_models != m.firing(group):
            ctx = replace(ctx, firing_models=m.firing(group))
        row = []
        for target in order:
            shared = target if (target.toughness, target.keywords, target.stealth) == (toughness, keywords, stealth) \
                else replace(target, toughness=toughness, keywords=keywords, stealth=stealth)
            pair = _Pair(weapon=group.weapon, target=shared, context=ctx, attacker=m.attacker, unit_models=unit.models,
                         sources=m.sources)
            _check(pair)
            row.append(_Compiler(pair).run())
        rows.append(tuple(row))
    return _assemble(m, order, rows)


def hazard_carriers(attacker: Unit | None, fired: Sequence[tuple[str, int]]) -> tuple[tuple[int, int, int], ...]:
    """The models that take the mortal wounds of Hazardous tests (R-9.7, ruling M17): (models, W,
    Feel No Pain) of each statline of ``attacker`` whose default loadout carries a Hazardous
    weapon fired (``fired``: (weapon name, how many fired)), models that are not CHARACTERs
    first, then CHARACTERs (the wounded one first: the engines).

    A statline's models are its share of the weapons fired over the Hazardous weapons each of
    its models carries: two on a model make two tests, not two models; ``--models 2`` doubles
    them. A weapon no statline carries by default (an option fired as ``UNIT/WEAPON``) is each
    test a model of the statline that may take it (the most numerous of those, else of all).
    Without an attacker profile (inline weapons), one row of W 0: the wounds are counted, not
    the models. () when nothing Hazardous is fired."""
    if not sum(n for _, n in fired):
        return ()
    if attacker is None:
        return ((sum(n for _, n in fired), 0, 7),)
    carried = [dict(x.loadout) for x in attacker.models]
    default = {name: sum(x.count * c.get(name, 0) for x, c in zip(attacker.models, carried, strict=True))
               for name, _ in fired}
    rows: list[tuple[bool, int, int, int]] = []
    for x, c in zip(attacker.models, carried, strict=True):
        each = sum(c.get(name, 0) for name in default)  # Hazardous weapons fired that each model carries
        share = sum((Fraction(n * x.count * c.get(name, 0), default[name]) for name, n in fired if c.get(name)),
                    Fraction(0))
        if share:
            rows.append(("CHARACTER" in x.keywords | attacker.keywords, max(1, round(share / each)), x.wounds,
                         x.feel_no_pain or attacker.feel_no_pain or 7))
    for name, n in fired:
        if n and not default[name]:  # an option: the statline that may take it (the most numerous)
            x = max([st for st in attacker.models if name in st.options] or attacker.models, key=lambda st: st.count)
            rows.append(("CHARACTER" in x.keywords | attacker.keywords, n, x.wounds,
                         x.feel_no_pain or attacker.feel_no_pain or 7))
    rows.sort(key=lambda r: r[0])  # stable: the statlines' order otherwise
    return tuple((models, w, fnp) for _, models, w, fnp in rows)


def _assemble(m: Matchup, order: tuple[Target, ...], rows: list[tuple[Compiled, ...]]) -> Compiled:
    """Stack the pairs' tables into :class:`UnitInputs`; the first pair's plan, with every
    pair's explain lines and warnings when there are several."""
    unit = m.target
    pairs = tuple(tuple(c.inputs for c in row) for row in rows)
    bodyguard = len(unit.bodyguard())
    first = pairs[0][0]
    n_stages = len(StageCount)
    largest = [0] * n_stages
    for pair_row in pairs:
        for i in range(n_stages):
            largest[i] += max(p.stage_largest[i] for p in pair_row)
    offsets = _stage_offsets(largest)
    finite = all(g.wounds is not None for g in order)
    damage_max = sum(g.models * (g.wounds or 0) for g in order) if finite else largest[StageCount.DAMAGE_AFTER_FNP]
    hazardous = [int(pair_row[0].params[Param.FIRING_MODELS]) for pair_row in pairs
                 if pair_row[0].params[Param.FLAGS] & Flag.HAZARDOUS]
    stack = {name: np.stack([np.stack([getattr(p, name) for p in pair_row]) for pair_row in pairs])
             for name in ("stages", "rolls", "roll_maps", "roll_flags", "params")}
    for g, group in enumerate(m.weapons):
        if group.weapon.has(Ability.PRECISION) and unit.attached:
            stack["params"][g, :, Param.FLAGS] |= Flag.PRECISION
        if (stack["stages"][g, :, Stage.SAVE] == stack["stages"][g, 0, Stage.SAVE]).all():
            stack["params"][g, :, Param.FLAGS] |= Flag.SAME_SAVES
    stack = {name: _frozen(a) for name, a in stack.items()}
    groups = _frozen(np.array([[g.models, g.wounds or 0, int(g.leader)] for g in order], dtype=np.int64))
    inputs = UnitInputs(
        pairs=pairs, weapon_names=tuple(_label(g.weapon) for g in m.weapons),
        counts=tuple(m.firing(g) for g in m.weapons),
        precision=tuple(g.weapon.has(Ability.PRECISION) and unit.attached for g in m.weapons),
        group_names=tuple(g.name for g in order), group_models=tuple(g.models for g in order),
        group_wounds=tuple(g.wounds or 0 for g in order), group_leader=tuple(g.leader for g in order),
        bodyguard_groups=bodyguard, wounds_left=unit.wounds_left or 0, groups=groups,
        stage_offsets=_frozen(offsets), stage_largest=tuple(largest), damage_max=damage_max,
        target_models=unit.models, hazard_firing=sum(hazardous), hazard_max=3 * sum(hazardous),
        hazard_groups=hazard_carriers(m.attacker, [(g.weapon.name, m.firing(g)) for g in m.weapons
                                                   if g.weapon.has(Ability.HAZARDOUS)]),
        **stack)
    plan = rows[0][0].plan
    if len(rows) > 1 or len(rows[0]) > 1 or inputs.wounds_left or any(g.weapon.has(Ability.PRECISION)
                                                                         for g in m.weapons):
        explain: list[str] = []
        warnings: list[str] = []
        # an option that changes nothing for one weapon group but something for another is not
        # warned about (only an option that changes nothing is): the explain line names the weapon
        unused = set.intersection(*({request for c in row for _, request in c.plan.unused} for row in rows))
        for g, row in enumerate(rows):
            name = m.weapons[g].weapon.name
            for j, c in enumerate(row):
                request = dict(c.plan.unused)
                if len(row) > 1:
                    explain.append(f"{name} against {order[j].name}:")
                explain += [line if request.get(line.removeprefix("warning: "), "") in unused | {""}
                            else f"{name}: {line.removeprefix('warning: ')}"
                            for line in c.plan.explain if j == 0 or _group_line(line)]
                warnings += [w for w in c.plan.warnings if w not in warnings and request.get(w, "") in unused | {""}]
        explain += _allocation_lines(m, order, inputs)
        plan = replace(plan, explain=tuple(explain), warnings=tuple(warnings))
    return Compiled(first, plan, inputs)


def _stage_offsets(largest: list[int]) -> npt.NDArray[np.int64]:
    """Where each stage histogram starts in a row: as long as its largest count, capped at STAGE_CAP."""
    return np.concatenate([[0], np.cumsum([min(n, STAGE_CAP) + 1 for n in largest])]).astype(np.int64)


def _label(w: Weapon) -> str:
    """A weapon group's name in the results: the profile's name, or for an inline profile its
    notation (two inline weapons would otherwise share one name)."""
    from .describe import weapon_line
    from .notation import INLINE_WEAPON

    return weapon_line(w) if w.name == INLINE_WEAPON else w.name


def _group_line(line: str) -> bool:
    """Explain lines that differ from group to group (saves, damage, Feel No Pain); the
    others (attacks, Hit and Wound rolls) are shown for the first group only."""
    return line.startswith(("R-7.", "R-8.", "R-0.2", "thresholds"))


def _allocation_lines(m: Matchup, order: tuple[Target, ...], u: UnitInputs) -> list[str]:
    unit = m.target
    lines = []
    if len(m.weapons) > 1:
        lines.append("R-6.3: weapons resolve in the order given; a wounded model keeps its damage from one weapon "
                     "to the next; Devastating Wounds land after all of them, then Hazardous tests (R-9.7)")
    if len(order) > 1 or u.wounds_left:
        names = ", ".join(f"{g.models}x {g.name}" + (" (Leader)" if g.leader else "") for g in order)
        lines.append(f"R-9.1: allocation order ({unit.allocation.value}): {names}; a model that has lost wounds "
                     "takes the next attack")
    if unit.attached:
        lines.append(f"Attached unit: Wound rolls use the Bodyguard models' Toughness ({unit.toughness}), "
                     "even once only a Leader is left")
    precise = [g.weapon.name for g in m.weapons if g.weapon.has(Ability.PRECISION)]
    if precise and unit.attached:
        lines.append(f"R-9.4: PRECISION ({', '.join(precise)}): its attacks go to a Leader while one lives")
    elif precise:
        lines.append(f"R-9.4: PRECISION ({', '.join(precise)}): no Leader attached to the target; no effect")
    if u.wounds_left:
        lines.append(f"--wounds-left {u.wounds_left}: the first {order[0].name} has {u.wounds_left} wounds left")
    return lines


def _check(m: _Pair) -> None:
    w, t, ctx = m.weapon, m.target, m.context
    if w.melee and not ctx.melee:
        raise MatchupError("is a melee weapon; shoot resolves ranged attacks", where=f"weapon {w.name!r}",
                           value=w.name, hint="use `mathhammer fight` for melee weapons")
    if not w.melee and ctx.melee:
        raise MatchupError("is a ranged weapon; fight resolves melee attacks", where=f"weapon {w.name!r}",
                           value=w.name, hint="use `mathhammer shoot` for ranged weapons")
    if ctx.overwatch and ctx.melee:
        raise MatchupError("Fire Overwatch is a shooting attack", where="--overwatch", value="fight")
    if ctx.overwatch and "TITANIC" in t.keywords:
        raise MatchupError("Fire Overwatch cannot target a TITANIC unit (R-2.9)", where="--overwatch",
                           value=t.name)
    if ctx.not_visible and ctx.melee:
        raise MatchupError("a melee attack needs no visibility: INDIRECT FIRE is for ranged attacks (R-2.7)",
                           where="--not-visible", value="fight")
    if ctx.not_visible and not w.has(Ability.INDIRECT_FIRE):
        raise MatchupError("a target that is not visible can only be shot with INDIRECT FIRE (R-2.7)",
                           where="--not-visible", value=w.name)
    if ctx.not_visible and w.has(Ability.TORRENT):
        raise MatchupError("TORRENT weapons cannot use Indirect Fire (R-1.6)", where="--not-visible", value=w.name)
    if w.has(Ability.BLAST) and ctx.melee:
        raise MatchupError("BLAST weapons cannot attack in melee (R-1.3)", where=f"weapon {w.name!r}", value=w.name)
    melta = w.get(Ability.MELTA)
    if melta is not None and melta.value is not None and not melta.value.is_fixed:
        raise MatchupError("Melta X must be a number", where=f"weapon {w.name!r}", value=str(melta))


class _Compiler:
    """One compilation: builds the arrays stage by stage, damage first (the best re-roll
    policies need the value of what comes after)."""

    def __init__(self, m: _Pair) -> None:
        self.m = m
        self.notes = _Notes()
        self.stages = np.zeros((4, PAIRS), dtype=np.int8)
        self.rolls = np.zeros((3, 2), dtype=np.int64)
        self.maps = np.zeros((3, MAX_RAW + 1), dtype=np.int64)
        self.flags_rows = np.zeros((3, MAX_RAW + 1), dtype=np.int8)
        self.flags = Flag(0)
        self.info: dict[str, dict[str, Any]] = {}
        self.last_modifier: dict[str, Any] = {}
        #: whether --crit-successful changes the Wound or the Hit roll's outcomes (A7)
        self._successful_matters = False

    def run(self) -> Compiled:
        m, n = self.m, self.notes
        w, ctx = m.weapon, m.context
        kind = "melee" if ctx.melee else "ranged"
        n.rule("", f"{w.name}: {kind} attack; rules text: {ctx.rules.value}")
        for a in w.abilities:
            if a.ability in (Ability.ASSAULT, Ability.PISTOL, Ability.ONE_SHOT, Ability.PSYCHIC, Ability.EXTRA_ATTACKS):
                n.rule("", f"{a}: listed; no effect on these numbers")
        e_damage, dmg_pmf = self._damage()
        p_save_fail = self._save()
        v_wound = p_save_fail * e_damage
        v_wound_crit = e_damage if w.has(Ability.DEVASTATING_WOUNDS) else v_wound
        p_wound, p_wound_crit = self._wound((Fraction(0), v_wound, v_wound_crit))
        e_sustained = self._sustained()
        v_hit = p_wound * v_wound + p_wound_crit * (v_wound_crit - v_wound)
        v_crit = (v_wound if w.has(Ability.LETHAL_HITS) else v_hit) + e_sustained * v_hit
        self._hit((Fraction(0), v_hit, v_crit))
        attacks_max = self._attacks()
        self._command()
        return self._finish(attacks_max, dmg_pmf)

    # -- damage (R-8) ---------------------------------------------------------------------------
    def _damage(self) -> tuple[Fraction, dict[int, Fraction]]:
        self.notes.stage = "damage"
        m, n = self.m, self.notes
        w, t, ctx = m.weapon, m.target, m.context
        melta = w.get(Ability.MELTA)
        add = max(ctx.damage_mod, 0)
        subtract = t.damage_reduction + max(-ctx.damage_mod, 0)
        if melta and melta.value:
            if ctx.half_range:
                add += melta.value.plus
                n.rule("R-8.2", f"MELTA {melta.value.plus}: +{melta.value.plus} Damage at half range")
            else:
                n.rule("R-8.2", f"MELTA {melta.value.plus}: no bonus (not at half range; --half-range)")
        elif ctx.half_range and not w.get(Ability.RAPID_FIRE):
            n.warn("--half-range has no effect: the weapon has neither MELTA nor RAPID FIRE", unused="--half-range")
        if ctx.damage_mod:
            kind = "an addition" if ctx.damage_mod > 0 else "a subtraction"
            n.rule("R-0.2", f"--damage-mod {ctx.damage_mod:+d}: {kind} modifier")
        if t.half_damage:
            n.rule("R-8.3", "target halves the Damage characteristic (rounded up at the end, A5)")
        if t.damage_reduction:
            n.rule("R-8.4", f"target: -{t.damage_reduction} Damage, never below 1")
        raw_pmf = _dice_row([w.damage], 0, Roll.DAMAGE, self.rolls, self.maps)
        values: dict[int, int] = {}
        for raw in raw_pmf:
            values[raw] = rules.damage_value(raw + w.damage.plus, half=t.half_damage, add=add, subtract=subtract)
            self.maps[Roll.DAMAGE, raw] = values[raw]
        mean_fresh = _mean(values, raw_pmf)
        policy = ctx.reroll_damage
        for raw in raw_pmf:
            below = values[raw] < mean_fresh
            reroll = (policy is DamageReroll.ONES and raw == 1 and not w.damage.is_fixed) or \
                     (policy is DamageReroll.BELOW_AVERAGE and below)
            self.flags_rows[Roll.DAMAGE, raw] = ((RollFlag.REROLL if reroll else 0)
                                                 | (RollFlag.BELOW_AVERAGE if below else 0))
        if policy is not DamageReroll.NONE:
            if w.damage.is_fixed:
                n.warn(f"--reroll-damage {policy.value} has no effect: Damage {w.damage} is not rolled",
                       unused=f"--reroll-damage {policy.value}")
            else:
                n.rule("R-3.1", f"re-roll Damage rolls: {policy.value} (all dice of the roll, R-1.2)")
        # effective distribution of one attack's damage after the policy re-roll
        dmg_pmf: dict[int, Fraction] = {}
        for raw, p in raw_pmf.items():
            if self.flags_rows[Roll.DAMAGE, raw] & RollFlag.REROLL:
                for raw2, q in raw_pmf.items():
                    dmg_pmf[values[raw2]] = dmg_pmf.get(values[raw2], Fraction(0)) + p * q
            else:
                dmg_pmf[values[raw]] = dmg_pmf.get(values[raw], Fraction(0)) + p
        shown = sorted(set(values.values()))
        self.info["damage"] = {"expression": str(w.damage), "values": shown, "half_damage": t.half_damage,
                               "added": add, "subtracted": subtract, "reroll": policy.value,
                               "feel_no_pain": t.feel_no_pain,
                               "devastating_wounds": w.has(Ability.DEVASTATING_WOUNDS),
                               "devastating_excess": "spills" if ctx.rules is RulesVersion.V2023 else "lost"}
        if add or subtract or t.half_damage:
            n.rule("R-0.2", f"Damage {w.damage} becomes {', '.join(map(str, shown))} (halve, then +, then -, round up)")
        e = sum((k * p for k, p in dmg_pmf.items()), Fraction(0))
        if t.feel_no_pain is not None:
            self.flags |= Flag.FEEL_NO_PAIN
            fnp = (0,) + tuple(1 if f >= t.feel_no_pain else 0 for f in range(1, 7))
            self.stages[Stage.FEEL_NO_PAIN] = _pair_table(fnp, (0,) * 7, fail=-1)
            n.rule("R-8.5", f"Feel No Pain {t.feel_no_pain}+ for every point of damage, mortal wounds included")
            e = e * Fraction(t.feel_no_pain - 1, 6)
        return e, dmg_pmf

    # -- saving throw (R-7) ---------------------------------------------------------------------
    def _save(self) -> Fraction:
        self.notes.stage = "save"
        m, n = self.m, self.notes
        w, t, ctx = m.weapon, m.target, m.context
        ap = rules.improved_ap(w.ap, ctx.ap_improve)
        if ctx.ap_improve:
            change = "improved" if ctx.ap_improve > 0 else "worsened"
            n.rule("R-7.4", f"AP{w.ap} {change} by {abs(ctx.ap_improve)}{self._from('ap_improve', ctx.ap_improve)}"
                   f" -> AP{ap}")
        indirect = ctx.not_visible and w.has(Ability.INDIRECT_FIRE)
        wants_cover = (ctx.cover or indirect) and not ctx.melee
        if ctx.cover and ctx.melee:
            n.warn("--cover has no effect in melee (R-7.3: Benefit of Cover is against ranged attacks)",
                   unused="--cover")
        cover = rules.cover_applies(cover=wants_cover, ignores_cover=w.has(Ability.IGNORES_COVER), melee=ctx.melee,
                                    save=t.save, ap=ap)
        if wants_cover:
            source = "INDIRECT FIRE" if indirect and not ctx.cover else "--cover"
            if cover:
                n.rule("R-7.3", f"Benefit of Cover ({source}): +1 to armour saves")
            elif w.has(Ability.IGNORES_COVER):
                n.rule("R-7.3", "Benefit of Cover denied: IGNORES COVER")
            else:
                n.rule("R-7.3", f"Benefit of Cover denied: Sv{t.save}+ against AP0")
        armour_mod = rules.save_roll_modifier(ap, 1 if cover else 0, ctx.save_mod)
        inv_mod = rules.save_roll_modifier(0, 0, ctx.save_mod)
        if ap + (1 if cover else 0) + ctx.save_mod > 1 or ctx.save_mod > 1:
            n.warn(f"saving throw modifier capped at +1 (R-0.3): AP{ap}, cover {1 if cover else 0:+d}, "
                   f"--save-mod {ctx.save_mod:+d} -> {armour_mod:+d}")
        inv = t.invulnerable
        if inv is not None and ctx.melee and t.invulnerable_ranged_only:
            n.rule("R-7.1", f"the {inv}+ invulnerable save is against ranged attacks only: not in melee")
            inv = None
        choice = rules.choose_save(save=t.save, armour_modifier=armour_mod, invulnerable=inv,
                                   invulnerable_modifier=inv_mod)
        fails = rules.save_fails(choice.needed)
        policy = ctx.reroll_saves
        mask = (0,) + tuple(int((policy is SaveReroll.ONES and f == 1) or (policy is SaveReroll.FAILED and fails[f]))
                            for f in range(1, 7))
        self.stages[Stage.SAVE] = _pair_table(fails, mask, fail=1)
        kind = {"armour": "armour save", "invulnerable": "invulnerable save", "none": "no save"}[choice.kind]
        n.rule("R-7.1", f"{kind}" + (f" on {choice.needed}+" if choice.needed else "")
               + (f" (armour {choice.armour_needed}+ or invulnerable {choice.invulnerable_needed}+: the better one)"
                  if choice.armour_needed and choice.invulnerable_needed else ""))
        if policy is not SaveReroll.NONE:
            n.rule("R-3.1", f"the defender re-rolls saving throws: {policy.value}")
        p_fail = Fraction(sum(1 for v in _pair_table(fails, mask, fail=1) if v & 1), PAIRS)
        cover_note = "applied" if cover else ("none" if not wants_cover else
                                              "ignored (IGNORES COVER)" if w.has(Ability.IGNORES_COVER)
                                              else "denied (Sv3+ or better vs AP0, R-7.3)")
        self.info["save"] = {"kind": choice.kind, "needed": choice.needed, "armour_needed": choice.armour_needed,
                             "invulnerable_needed": choice.invulnerable_needed, "ap": ap, "cover": cover_note,
                             "modifier": armour_mod, "reroll": policy.value}
        return p_fail

    # -- wound roll (R-5, R-6) ------------------------------------------------------------------
    def _wound(self, values: tuple[Fraction, Fraction, Fraction]) -> tuple[Fraction, Fraction]:
        self.notes.stage = "wound"
        m, n = self.m, self.notes
        w, t, ctx = m.weapon, m.target, m.context
        base = rules.wound_threshold(w.strength, t.toughness)
        n.rule("R-5.1", f"S{w.strength} vs T{t.toughness}: wounds on {base}+")
        parts = self._sources("wound_mod", ctx.wound_mod)
        if w.has(Ability.LANCE):
            if ctx.charged:
                parts["LANCE (charged)"] = 1
                n.rule("R-5.3", "LANCE: +1 to wound (the bearer charged)")
            else:
                n.rule("R-5.3", "LANCE: no bonus (did not charge; --charged)")
        elif ctx.charged:
            n.warn("--charged has no effect: the weapon has no LANCE", unused="--charged")
        mod = self._modifier("Wound", parts)
        crit_on, successful_on = _crit_thresholds(ctx.crit_wound, ctx.crit_successful)
        plain_on = ctx.crit_wound  # (the thresholds under A7's first wording, to tell whether the second matters)
        antis = [(a, a.value.plus) for a in w.abilities if a.ability is Ability.ANTI and a.value is not None]
        applying = [a for a, _ in antis if a.keyword in t.keywords]
        # what the output names: the ANTI that applies (the lowest threshold), else the first listed
        anti = max(applying, key=lambda a: a.rank) if applying else (antis[0][0] if antis else None)
        for a, x in antis:
            if a.keyword in t.keywords:
                crit_on, plain_on = min(crit_on, x), min(plain_on, x)
                n.rule("R-5.5", f"{a}: the target is {a.keyword}: Critical Wounds on {x}+")
            else:
                n.rule("R-5.5", f"{a}: no effect, the target is not {a.keyword}")
                from difflib import get_close_matches  # only here: start-up does without it

                near = get_close_matches(a.keyword, sorted(t.keywords), n=1, cutoff=0.8)
                if near:  # keywords are free text: a misspelt one would silently turn ANTI off
                    n.warn(f"{a} has no effect: the target is not {a.keyword}, but is {near[0]} "
                           f"(a misspelling of {a.keyword}?)")
        if ctx.crit_wound != 6:
            n.rule("R-2.3", f"Critical Wounds on {ctx.crit_wound}+ (--crit-wound" + (
                "; A7: a successful unmodified roll, --crit-successful: one that fails stays a failure)"
                if ctx.crit_successful else ")"))
        out = rules.wound_outcomes(base, mod, crit_on, successful_on)
        crit_on = _first_critical(out)
        self._successful_matters = out != rules.wound_outcomes(base, mod, plain_on)
        if mod:
            n.rule("R-5.2", f"wounds on {_needed(out)}+ after the modifier")
        twin = w.has(Ability.TWIN_LINKED)
        policy = rules.broadest(ctx.reroll_wounds, RerollPolicy.FAILED if twin else RerollPolicy.NONE)
        mask = rules.reroll_mask(out, policy, tuple(float(v) for v in values))  # type: ignore[arg-type]
        self.stages[Stage.WOUND] = _pair_table(out, mask)
        if twin:
            n.rule("R-3.6", "TWIN-LINKED: the Wound roll may be re-rolled")
        if policy is not RerollPolicy.NONE:
            n.rule("R-3.9" if twin and ctx.reroll_wounds is not RerollPolicy.NONE
                   else "R-3.3" if policy is RerollPolicy.ONES
                   else "R-3.5" if policy in (RerollPolicy.NON_CRIT, RerollPolicy.BEST) else "R-3.4",
                   f"re-roll Wound rolls: {policy.value}" + self._faces(mask))
        if w.has(Ability.DEVASTATING_WOUNDS):
            self.flags |= Flag.DEVASTATING_WOUNDS
            n.rule("R-6", f"DEVASTATING WOUNDS: a Critical Wound ({crit_on}+) skips every save and inflicts its "
                   "Damage as "
                   "mortal wounds after all other attacks (R-6.3)")
            if m.context.rules is RulesVersion.V2023:
                self.flags |= Flag.DEVASTATING_SPILL
                n.rule("R-6.4", "2023 text: those mortal wounds spill over to the next model")
            else:
                n.rule("R-6.4", "excess mortal wounds of one such attack are lost")
        table = self.stages[Stage.WOUND]
        p_any = Fraction(sum(1 for v in table if v & 3), PAIRS)
        p_crit = Fraction(sum(1 for v in table if v & 2), PAIRS)
        self.info["wound"] = {"strength": w.strength, "toughness": t.toughness, "base": base,
                              "needed": _needed(out), "critical_on": crit_on, "modifier": self.last_modifier,
                              "reroll": policy.value, "twin_linked": twin, "anti": str(anti) if anti else None}
        return p_any, p_crit

    # -- Critical-Hit effects (R-4) -------------------------------------------------------------
    def _sustained(self) -> Fraction:
        self.notes.stage = "hit"
        w, n = self.m.weapon, self.notes
        sus = w.get(Ability.SUSTAINED_HITS)
        expr = sus.value if sus and sus.value else DiceExpr(plus=0)
        raw_pmf = _dice_row([expr], 0, Roll.SUSTAINED, self.rolls, self.maps)
        if sus:
            n.rule("R-4.1", f"{sus}: each Critical Hit scores {expr} extra hits, which are not critical")
        if w.has(Ability.LETHAL_HITS):
            self.flags |= Flag.LETHAL_HITS
            n.rule("R-4.3", "LETHAL HITS: a Critical Hit wounds automatically (no Wound roll, not a Critical Wound)")
        return sum((self.maps[Roll.SUSTAINED, raw] * p for raw, p in raw_pmf.items()), Fraction(0))

    # -- hit roll (R-2, R-3) --------------------------------------------------------------------
    def _warn_unused_wording(self) -> None:
        """Warn when --crit-successful changes neither the Hit nor the Wound roll's outcomes (every
        roll its thresholds make critical succeeds anyway; run after :meth:`_wound`)."""
        if self.m.context.crit_successful and not self._successful_matters:
            self.notes.warn("--crit-successful has no effect: every roll --crit-hit or --crit-wound makes critical "
                            "succeeds anyway (or neither is given)", unused="--crit-successful")

    def _hit(self, values: tuple[Fraction, Fraction, Fraction]) -> None:
        self.notes.stage = "hit"
        m, n = self.m, self.notes
        w, t, ctx = m.weapon, m.target, m.context
        if w.has(Ability.TORRENT):
            self.flags |= Flag.TORRENT
            self.stages[Stage.HIT] = [rules.SUCCESS] * PAIRS
            n.rule("R-1.6", "TORRENT: every attack hits automatically; no Hit roll, so no Critical Hits")
            for opt, val in (("--reroll-hits", ctx.reroll_hits is not RerollPolicy.NONE),
                             *self._sources("hit_mod", ctx.hit_mod).items(), ("--crit-hit", ctx.crit_hit != 6),
                             *self._sources("bs_improve", ctx.bs_improve).items(),
                             ("--skill-floor", ctx.skill_floor != 0)):
                if val:
                    n.warn(f"{opt} has no effect: TORRENT makes no Hit roll", unused=opt)
            if ctx.overwatch:
                n.rule("A13", "Fire Overwatch: TORRENT still hits automatically")
            self._warn_unused_wording()
            self.info["hit"] = {"automatic": True, "skill": None, "needed": None, "critical_on": None,
                                "modifier": {"requested": 0, "applied": 0, "clamped": False}, "reroll": "none"}
            return
        assert w.skill is not None
        skill = w.skill - ctx.bs_improve
        label = "WS" if ctx.melee else "BS"
        if ctx.bs_improve:
            change = "improved" if ctx.bs_improve > 0 else "worsened"
            n.rule("R-0.4", f"{label}{w.skill}+ {change} by {abs(ctx.bs_improve)}"
                   f"{self._from('bs_improve', ctx.bs_improve)} -> {label}{skill}+ (a characteristic change, "
                   "not capped)")
        if ctx.skill_floor and skill < min(w.skill, ctx.skill_floor):  # it limits changes, not the weapon's own
            floored = min(w.skill, ctx.skill_floor)
            n.rule("A1", f"{label}{skill}+ limited to {label}{floored}+ (--skill-floor {ctx.skill_floor}: "
                   "characteristic changes make it no better)")
            skill = floored
        parts = self._sources("hit_mod", ctx.hit_mod)
        ranged = not ctx.melee
        if w.has(Ability.HEAVY):
            if ranged and ctx.stationary:
                parts["HEAVY (stationary)"] = 1
                n.rule("R-2.5", "HEAVY: +1 to hit (the unit remained stationary)")
            else:
                n.rule("R-2.5", "HEAVY: no bonus (--stationary not given)")
        elif ctx.stationary:
            n.warn("--stationary has no effect: the weapon has no HEAVY", unused="--stationary")
        if t.stealth:
            if ranged:
                parts["STEALTH"] = -1
                n.rule("R-2.6", "the target has STEALTH: -1 to hit with ranged attacks")
            else:
                n.rule("R-2.6", "STEALTH: no effect on melee attacks")
        indirect = ctx.not_visible and w.has(Ability.INDIRECT_FIRE)
        fails_upto = 1
        if indirect:
            parts["INDIRECT FIRE"] = -1
            if ctx.rules is RulesVersion.CURRENT:
                fails_upto = 3
                n.rule("R-2.7", "INDIRECT FIRE at a unit not visible: -1 to hit, unmodified 1-3 always fail, "
                       "the target has the Benefit of Cover")
            else:
                n.rule("R-2.7", "INDIRECT FIRE at a unit not visible (2023 text): -1 to hit, the target has the "
                       "Benefit of Cover")
        elif w.has(Ability.INDIRECT_FIRE):
            n.rule("R-2.7", "INDIRECT FIRE: the target is visible (--not-visible not given): no effect")
        mod = self._modifier("Hit", parts)
        crit_on, successful_on = _crit_thresholds(ctx.crit_hit, ctx.crit_successful)
        if ctx.overwatch:
            n.rule("R-2.9", "Fire Overwatch: hits only on an unmodified 6, which is a Critical Hit")
            crit_on = 6
            for opt, val in (*self._sources("hit_mod", ctx.hit_mod).items(), ("--crit-hit", ctx.crit_hit != 6),
                             *self._sources("bs_improve", ctx.bs_improve).items(),
                             ("--skill-floor", ctx.skill_floor != 0),
                             ("--stationary", ctx.stationary and w.has(Ability.HEAVY))):
                if val:
                    n.warn(f"{opt} has no effect in Fire Overwatch: only an unmodified 6 hits (R-2.9)", unused=opt)
        out = rules.hit_outcomes(skill, mod, crit_on, overwatch=ctx.overwatch, fails_upto=fails_upto,
                                 successful_on=successful_on)
        plain = rules.hit_outcomes(skill, mod, ctx.crit_hit, overwatch=ctx.overwatch, fails_upto=fails_upto)
        self._successful_matters = self._successful_matters or out != plain
        self._warn_unused_wording()
        crit_on = _first_critical(out)  # (an INDIRECT FIRE 1-3 fails whatever the threshold: M16)
        if ctx.crit_hit != 6:
            n.rule("R-2.3", f"Critical Hits on {ctx.crit_hit}+ (--crit-hit; A7: " + (
                f"a successful unmodified {ctx.crit_hit}+ (--crit-successful): one that misses stays a miss)"
                if ctx.crit_successful else f"an unmodified {ctx.crit_hit}+ always hits)")
                + ("" if ctx.overwatch or crit_on == ctx.crit_hit or ctx.crit_successful
                   else f"; INDIRECT FIRE's unmodified 1-{fails_upto} still fail (M16): Critical Hits on {crit_on}+"))
        needed = _needed(out)
        n.rule("R-2.1", f"{label}{skill}+ with {mod:+d}: " + (f"hits on {needed}+" if needed else "cannot hit"))
        policy = ctx.reroll_hits
        mask = rules.reroll_mask(out, policy, tuple(float(v) for v in values))  # type: ignore[arg-type]
        self.stages[Stage.HIT] = _pair_table(out, mask)
        if policy is not RerollPolicy.NONE:
            n.rule({"ones": "R-3.3", "failed": "R-3.4"}.get(policy.value, "R-3.5"),
                   f"re-roll Hit rolls: {policy.value}" + self._faces(mask)
                   + " (R-3.1: a re-rolled 6 is a Critical Hit)")
        self.info["hit"] = {"automatic": False, "skill": w.skill, "skill_applied": skill, "needed": _needed(out),
                            "critical_on": crit_on, "modifier": self.last_modifier, "reroll": policy.value,
                            "overwatch": ctx.overwatch}

    def _sources(self, field: str, total: int) -> dict[str, int]:
        """``total`` (the context's ``field``) by where it came from: the option's share
        (``--wound-mod`` for ``wound_mod``) first, then each army rule, detachment rule or
        stratagem that added to it (Matchup.sources), by name."""
        named: dict[str, int] = {}
        for f, source, value in self.m.sources:
            if f == field:
                named[source] = named.get(source, 0) + value
        return {f"--{field.replace('_', '-')}": total - sum(named.values()), **named}

    def _from(self, field: str, total: int) -> str:
        """Where a characteristic change came from, for its explain line: `` (--bs-improve +1,
        For the Greater Good +1)``."""
        parts = {k: v for k, v in self._sources(field, total).items() if v}
        return " (" + ", ".join(f"{k} {v:+d}" for k, v in parts.items()) + ")"

    def _modifier(self, roll: str, parts: dict[str, int]) -> int:
        """R-0.1/R-0.3: sum the requested modifiers, clamp to [-1, +1], report both."""
        requested = sum(parts.values())
        applied = rules.clamp_roll_modifier(requested)
        shown = {k: v for k, v in parts.items() if v}
        if shown:
            detail = ", ".join(f"{k} {v:+d}" for k, v in shown.items())
            if applied != requested:
                self.notes.warn(f"{roll} roll modifiers {detail}: requested {requested:+d}, clamped to {applied:+d} "
                                f"(R-0.3: a {roll} roll is never modified by more than 1)")
            else:
                self.notes.rule("R-0.1", f"{roll} roll modifiers {detail}: {applied:+d}")
        self.last_modifier = {"requested": requested, "applied": applied, "clamped": requested != applied,
                              "parts": shown}
        return applied

    @staticmethod
    def _faces(mask: tuple[int, ...]) -> str:
        faces = [str(f) for f in range(1, 7) if mask[f]]
        return f" (faces re-rolled: {', '.join(faces)})" if faces else " (no face is worth re-rolling)"

    # -- attacks (R-1) --------------------------------------------------------------------------
    def _attacks(self) -> int:
        self.notes.stage = "attacks"
        m, n = self.m, self.notes
        w, ctx = m.weapon, m.context
        exprs = [w.attacks]
        extra = 0
        if w.has(Ability.BLAST):
            extra = m.unit_models // 5
            n.rule("R-1.3", f"BLAST: +{extra} attacks per model ({m.unit_models} models in the target)")
        rf = w.get(Ability.RAPID_FIRE)
        if rf and rf.value:
            if ctx.half_range:
                exprs.append(rf.value)
                n.rule("R-1.4", f"{rf}: +{rf.value} attacks per model at half range")
            else:
                n.rule("R-1.4", f"{rf}: no bonus (not at half range; --half-range)")
        raw_pmf = _dice_row(exprs, extra, Roll.ATTACKS, self.rolls, self.maps)
        mean = _mean({r: Fraction(int(self.maps[Roll.ATTACKS, r])) for r in raw_pmf}, raw_pmf)
        for raw in raw_pmf:
            if self.maps[Roll.ATTACKS, raw] < mean:
                self.flags_rows[Roll.ATTACKS, raw] = RollFlag.BELOW_AVERAGE
        per_model = " + ".join(str(e) for e in exprs) + (f" + {extra}" if extra else "")
        n.rule("R-1.1" if all(e.is_fixed for e in exprs) else "R-1.2",
               f"attacks: {per_model} per model, {ctx.firing_models} model{'s' if ctx.firing_models != 1 else ''}"
               + ("" if all(e.is_fixed for e in exprs) else " (rolled for each model)"))
        return max(int(self.maps[Roll.ATTACKS, r]) for r in raw_pmf)

    def _command(self) -> None:
        self.notes.stage = "general"
        ctx, n = self.m.context, self.notes
        c = ctx.command_reroll
        if c is CommandReroll.NONE:
            return
        what = {CommandReroll.HIT: "one failed Hit roll that was not already re-rolled",
                CommandReroll.WOUND: "one failed Wound roll that was not already re-rolled",
                CommandReroll.SAVE: "(the defender's) one failed saving throw that was not already re-rolled",
                CommandReroll.DAMAGE: "the first Damage roll below the average of a fresh roll",
                CommandReroll.ATTACKS: "the lowest Attacks roll, if below the average of a fresh roll"}[c]
        n.rule("R-3.7", f"Command Re-roll, once per attack sequence: {what}")
        if c is CommandReroll.ATTACKS and not int(self.rolls[Roll.ATTACKS].sum()):
            n.warn("--command-reroll attacks has no effect: the number of attacks is not rolled",
                   unused="--command-reroll attacks")
        if c is CommandReroll.DAMAGE and not int(self.rolls[Roll.DAMAGE].sum()):
            n.warn("--command-reroll damage has no effect: Damage is not rolled", unused="--command-reroll damage")
        if c is CommandReroll.HIT and self.m.weapon.has(Ability.TORRENT):
            n.warn("--command-reroll hit has no effect: TORRENT makes no Hit roll", unused="--command-reroll hit")

    # -- assembly -------------------------------------------------------------------------------
    def _finish(self, attacks_max: int, dmg_pmf: dict[int, Fraction]) -> Compiled:
        self.notes.stage = "after"
        m, n = self.m, self.notes
        w, t, ctx = m.weapon, m.target, m.context
        hazard: tuple[tuple[int, int, int], ...] = ()
        if w.has(Ability.HAZARDOUS):
            self.flags |= Flag.HAZARDOUS
            hazard = hazard_carriers(m.attacker, [(w.name, ctx.firing_models)])
            if m.attacker is not None:
                n.rule("R-9.7", "HAZARDOUS: one test per Hazardous weapon fired; each 1 is 3 mortal wounds to one "
                       f"model carrying one ({', '.join(f'{k}x W{wounds}' for k, wounds, _ in hazard)}: the wounded "
                       "one first, then models that are not CHARACTERs; excess lost)")
            else:
                n.rule("R-9.7", "HAZARDOUS: one test per Hazardous weapon fired; each 1 is 3 mortal wounds "
                       "(the attacker's profile is unknown: models lost are not counted)")
        damage_max, largest = self._histograms(attacks_max, max(dmg_pmf))
        offsets = _stage_offsets(largest)
        params = np.zeros(len(Param), dtype=np.int64)
        params[Param.FLAGS] = int(self.flags)
        params[Param.FIRING_MODELS] = ctx.firing_models
        params[Param.TARGET_MODELS] = t.models
        params[Param.TARGET_WOUNDS] = t.wounds or 0
        params[Param.COMMAND] = Command[ctx.command_reroll.name]
        inputs = KernelInputs(stages=_frozen(self.stages), rolls=_frozen(self.rolls), roll_maps=_frozen(self.maps),
                              roll_flags=_frozen(self.flags_rows), params=_frozen(params),
                              stage_offsets=_frozen(offsets),
                              damage_max=damage_max, target_models=t.models, hazard_max=3 * ctx.firing_models,
                              stage_largest=tuple(largest), hazard_groups=hazard)
        n.rule("", "thresholds: " + self._words())
        plan = Plan(hit=self.info["hit"], wound=self.info["wound"], save=self.info["save"], damage=self.info["damage"],
                    words=self._words(), explain=tuple(n.explain), warnings=tuple(n.warnings),
                    unused=tuple(n.unused.items()))
        return Compiled(inputs, plan)

    def _histograms(self, attacks_max: int, damage_roll_max: int) -> tuple[int, list[int]]:
        """The largest damage a trial records and the largest value of each stage count.

        Each bound is the largest value the kernel can count, and no larger (the histograms are
        allocated per thread, so their size is the memory of a run): one Hit roll per attack
        (a Command Re-roll replaces a failed one), Critical Hits only with a Hit roll, one Wound
        roll per hit, one damage roll per unsaved or Devastating hit. A finite target loses at
        most all its wounds (the kernel allocates no more), so its damage histogram never
        outgrows MODELS x W + 1 bins; the stage histograms are capped at STAGE_CAP by the caller.
        """
        w, t, ctx = self.m.weapon, self.m.target, self.m.context
        attacks = ctx.firing_models * attacks_max
        crits = 0 if w.has(Ability.TORRENT) else attacks
        hits = attacks + crits * int(self.maps[Roll.SUSTAINED].max())
        damage = hits * damage_roll_max
        lethal = crits if w.has(Ability.LETHAL_HITS) else 0
        devastating = hits if w.has(Ability.DEVASTATING_WOUNDS) else 0
        # StageCount order: attacks, hits, critical hits, wounds, critical wounds, lethal,
        # devastating, unsaved, damage before and after Feel No Pain.
        largest = [attacks, hits, crits, hits, hits, lethal, devastating, hits, damage, damage]
        return (min(damage, t.models * t.wounds) if t.wounds else damage), largest

    def _words(self) -> str:
        w, t, ctx = self.m.weapon, self.m.target, self.m.context
        hit, wound, save = self.info["hit"], self.info["wound"], self.info["save"]
        parts = []
        if hit["automatic"]:
            parts.append("hits automatically (TORRENT)")
        elif ctx.overwatch:
            parts.append("hits on unmodified 6s (Overwatch)")
        else:
            parts.append(f"hits on {hit['needed']}+" if hit["needed"] else "cannot hit")
            if hit["reroll"] != "none":
                parts[-1] += f" (re-roll: {hit['reroll']})"
            if hit["critical_on"] != 6:
                parts[-1] += f", critical on {hit['critical_on']}+"
        wtxt = f"wounds on {wound['needed']}+"
        if wound["reroll"] != "none":
            twin = wound["twin_linked"] and wound["reroll"] == "failed"
            wtxt += f" (re-roll: {'twin-linked' if twin else wound['reroll']})"
        if wound["critical_on"] != 6:
            wtxt += f", critical on {wound['critical_on']}+"
        parts.append(wtxt)
        if save["kind"] == "none":
            parts.append("no save")
        else:
            parts.append(f"{save['needed']}+ {'invulnerable' if save['kind'] == 'invulnerable' else 'armour'} save"
                         + (" (in cover)" if save["cover"] == "applied" and save["kind"] == "armour" else ""))
        if save["cover"].startswith(("denied", "ignored")):
            parts.append(f"cover {save['cover']}")
        if w.has(Ability.DEVASTATING_WOUNDS):
            crit = wound["critical_on"]
            parts.append("devastating wounds on 6s" if crit == 6 else f"devastating wounds on {crit}+")
        dmg = self.info["damage"]
        if dmg["half_damage"] or dmg["added"] or dmg["subtracted"]:
            parts.append(f"damage {', '.join(map(str, dmg['values']))}")
        if t.feel_no_pain:
            parts.append(f"{t.feel_no_pain}+ Feel No Pain")
        return ", ".join(parts)


#: Rows of every histogram the engine makes after the threads' rows: their sum and the
#: probabilities computed from it.
_SUM_ROWS = 2


def padded_width(width: int) -> int:
    """Columns allocated for a histogram row of ``width`` bins: a multiple of 8 (64 bytes) and 8
    more, so that rows of different threads never share a cache line wherever the array starts."""
    return -(-width // 8) * 8 + 8


def as_unit(inputs: KernelInputs | UnitInputs) -> UnitInputs:
    """``inputs`` as the tables of a whole attack: one weapon group at one group of identical
    models when given one pair's tables (how scripts and tests may call the engines)."""
    if isinstance(inputs, UnitInputs):
        return inputs
    params = inputs.params
    firing = int(params[Param.FIRING_MODELS])
    hazard = firing if params[Param.FLAGS] & Flag.HAZARDOUS else 0
    models, wounds = int(params[Param.TARGET_MODELS]), int(params[Param.TARGET_WOUNDS])
    stack = {name: _frozen(getattr(inputs, name)[None, None]) for name in
             ("stages", "rolls", "roll_maps", "roll_flags", "params")}
    return UnitInputs(pairs=((inputs,),), weapon_names=("weapon",), counts=(firing,), precision=(False,),
                      group_names=("target",), group_models=(models,), group_wounds=(wounds,), group_leader=(False,),
                      bodyguard_groups=1, wounds_left=0,
                      groups=_frozen(np.array([[models, wounds, 0]], dtype=np.int64)),
                      stage_offsets=inputs.stage_offsets, stage_largest=inputs.stage_largest,
                      damage_max=inputs.damage_max, target_models=inputs.target_models, hazard_firing=hazard,
                      hazard_max=3 * hazard, hazard_groups=inputs.hazard_groups, **stack)


def histogram_widths(inputs: UnitInputs) -> tuple[int, ...]:
    """Bins of one thread's row of each histogram the kernel fills: damage, models destroyed,
    the stage counts, Hazardous wounds, Hazardous models, models destroyed per group, and the
    sums per weapon group."""
    return (inputs.damage_max + 1, inputs.target_models + 1, int(inputs.stage_offsets[-1]), inputs.hazard_max + 1,
            inputs.hazard_firing + 1, sum(m + 1 for m in inputs.group_models), 2 * inputs.n_weapons)


def scratch_width(inputs: UnitInputs) -> int:
    """Entries of one thread's kernel scratch row: per trial, models destroyed in each group and
    pending Devastating wounds of each weapon group; per call, each (weapon group, model group)
    pair's fixed Damage and, on one queue of models short enough for transition tables, the
    trials by where each weapon group left the queue (mathhammer.kernel.simulate)."""
    width = inputs.n_groups + inputs.n_weapons + inputs.n_weapons * inputs.n_groups
    positions = sum(m * w for m, w in zip(inputs.group_models, inputs.group_wounds, strict=True))
    if not inputs.single and inputs.bodyguard_groups == inputs.n_groups and all(inputs.group_wounds) and \
            0 < positions <= MAX_QUEUE_POSITIONS:  # as mathhammer.kernel.transition builds tables
        width += inputs.n_weapons * (positions + 1)
    return width


def _row_bytes(inputs: KernelInputs | UnitInputs) -> int:
    """Bytes of one thread's row of every histogram (int64 counts, padded) and scratch space."""
    u = as_unit(inputs)
    return 8 * (sum(padded_width(w) for w in histogram_widths(u)) + padded_width(scratch_width(u)))


#: Bytes of one chunk's float64 sums of the capped stage values (at most MAX_CHUNKS of them).
_OVER_BYTES = 8 * padded_width(2 * len(StageCount))


def monte_carlo_bytes(inputs: KernelInputs | UnitInputs, threads: int = 1, chunks: int = MAX_CHUNKS) -> int:
    """Memory of the histograms :func:`mathhammer.engine.montecarlo.run` allocates for
    ``inputs`` on ``threads`` threads: one row of each histogram per thread (whatever the
    number of trials), and one row of capped-stage sums per chunk."""
    return _row_bytes(inputs) * threads + _OVER_BYTES * chunks


def monte_carlo_threads(inputs: KernelInputs | UnitInputs, threads: int) -> int:
    """The most threads, up to ``threads`` and at least 1, whose histogram rows and their sums
    fit MONTE_CARLO_MAX_BYTES (fewer threads never change the counts, only the speed)."""
    fit = (MONTE_CARLO_MAX_BYTES - _OVER_BYTES * MAX_CHUNKS) // _row_bytes(inputs) - _SUM_ROWS
    return max(1, min(threads, fit))


def check_monte_carlo(inputs: KernelInputs | UnitInputs) -> None:
    """Refuse, before anything is allocated, a Monte Carlo run whose histograms would take more
    than MONTE_CARLO_MAX_BYTES on one thread, with their sums (only the damage histogram of a
    target without a Wounds characteristic can grow that large: a finite target's stops at
    MODELS x W, and the stage histograms at STAGE_CAP).

    Raises:
        MatchupError: naming the largest hits and damage of one attack sequence and the limit.
    """
    need = monte_carlo_bytes(inputs, 1 + _SUM_ROWS)
    if need <= MONTE_CARLO_MAX_BYTES:
        return
    hits = inputs.stage_largest[StageCount.HITS]
    damage = inputs.stage_largest[StageCount.DAMAGE_BEFORE_FNP]
    raise MatchupError(f"too large to simulate: one attack sequence can score up to {hits:,} hits and {damage:,} "
                       f"damage, whose histograms need about {size_text(need)} "
                       f"(limit {size_text(MONTE_CARLO_MAX_BYTES)})", where="Monte Carlo")
