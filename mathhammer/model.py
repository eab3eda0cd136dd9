"""Frozen value types of the domain: dice, weapons, units, targets and the attack context.

No IO and no numpy here. Invariants are checked in ``__post_init__`` and reported as
:class:`~mathhammer.errors.ProfileError` / :class:`~mathhammer.errors.MatchupError`
naming the field and the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .errors import MatchupError, ProfileError
from .limits import (
    MAX_AP,
    MAX_ATTACKING_MODELS,
    MAX_CHARACTERISTIC,
    MAX_DAMAGE_MOD,
    MAX_DICE,
    MAX_DICE_VALUE,
    MAX_RANGE,
    MAX_ROLL_MOD,
    MAX_TARGET_MODELS,
    MAX_WOUNDS,
    check_count,
)

__all__ = [
    "Ability",
    "CommandReroll",
    "DamageReroll",
    "Matchup",
    "Method",
    "SaveReroll",
    "AbilitySpec",
    "Context",
    "DiceExpr",
    "ModelStats",
    "RerollPolicy",
    "RulesVersion",
    "Target",
    "Unit",
    "Weapon",
    "unit_target",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class DiceExpr:
    """``count`` dice of ``sides`` faces plus ``plus``: ``D6+6`` is (1, 6, 6), ``3`` is (0, 0, 3).

    ``sides`` is 3 or 6 (D3 = ceil(D6/2), R-0.6) or 0 for a fixed value.
    """

    count: int = 0
    sides: int = 0
    plus: int = 0

    def __post_init__(self) -> None:
        for name in ("count", "sides", "plus"):
            check_count(getattr(self, name), name=f"dice {name}", lo=None, hi=None, where="dice", error=ProfileError)
        if self.sides not in (0, 3, 6):
            raise ProfileError("dice must be D3 or D6", value=f"D{self.sides}")
        if (self.count == 0) != (self.sides == 0) or self.count < 0 or self.plus < 0:
            raise ProfileError("malformed dice expression", value=str(self))

    @property
    def is_fixed(self) -> bool:
        """True for a plain number such as ``2``."""
        return self.count == 0

    @property
    def minimum(self) -> int:
        """Smallest value it can roll."""
        return self.count + self.plus

    @property
    def maximum(self) -> int:
        """Largest value it can roll."""
        return self.count * self.sides + self.plus

    def __str__(self) -> str:
        if self.count == 0:
            return str(self.plus)
        head = f"{'' if self.count == 1 else self.count}D{self.sides}"
        return head + (f"+{self.plus}" if self.plus else "")


class Ability(str, Enum):
    """Weapon abilities (the bracketed keywords of a weapon profile)."""

    ASSAULT = "ASSAULT"
    BLAST = "BLAST"
    DEVASTATING_WOUNDS = "DEVASTATING WOUNDS"
    EXTRA_ATTACKS = "EXTRA ATTACKS"
    HAZARDOUS = "HAZARDOUS"
    HEAVY = "HEAVY"
    IGNORES_COVER = "IGNORES COVER"
    INDIRECT_FIRE = "INDIRECT FIRE"
    LANCE = "LANCE"
    LETHAL_HITS = "LETHAL HITS"
    ONE_SHOT = "ONE SHOT"
    PISTOL = "PISTOL"
    PRECISION = "PRECISION"
    PSYCHIC = "PSYCHIC"
    TORRENT = "TORRENT"
    TWIN_LINKED = "TWIN-LINKED"
    # abilities with a parameter
    ANTI = "ANTI"
    MELTA = "MELTA"
    RAPID_FIRE = "RAPID FIRE"
    SUSTAINED_HITS = "SUSTAINED HITS"


#: Abilities that take a value: Sustained Hits X, Melta X, Rapid Fire X (dice allowed), Anti-KW X+.
PARAMETRISED = frozenset({Ability.ANTI, Ability.MELTA, Ability.RAPID_FIRE, Ability.SUSTAINED_HITS})


@dataclass(frozen=True, slots=True, kw_only=True)
class AbilitySpec:
    """One ability of a weapon, with its value where it has one.

    ``value`` is the X of Sustained Hits X / Melta X / Rapid Fire X; for ANTI it is the
    threshold X of ``ANTI-KEYWORD X+`` and ``keyword`` is the keyword.
    """

    ability: Ability
    value: DiceExpr | None = None
    keyword: str = ""

    def __post_init__(self) -> None:
        needs_value = self.ability in PARAMETRISED
        if needs_value and self.value is None:
            raise ProfileError(f"{self.ability.value.lower()} needs a value", value=self.ability.value)
        if not needs_value and self.value is not None:
            raise ProfileError(f"{self.ability.value.lower()} takes no value", value=str(self.value))
        if (self.ability is Ability.ANTI) != bool(self.keyword):
            raise ProfileError("only ANTI takes a keyword", value=self.keyword or self.ability.value)
        if self.value is not None:
            _check_dice(self.value, self.ability.value, where=self.ability.value)

    def __str__(self) -> str:
        if self.ability is Ability.ANTI:
            return f"ANTI-{self.keyword} {self.value}+"
        if self.value is not None:
            return f"{self.ability.value} {self.value}"
        return str(self.ability.value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Weapon:
    """A weapon profile.

    ``skill`` is BS (ranged) or WS (melee) as the number before ``+``; ``None`` only with TORRENT.
    ``range_inches`` is ``None`` for melee weapons.
    """

    name: str
    attacks: DiceExpr
    skill: int | None
    strength: int
    ap: int
    damage: DiceExpr
    range_inches: int | None = None
    abilities: tuple[AbilitySpec, ...] = ()
    aliases: tuple[str, ...] = ()
    unit: str = ""
    modifiers: tuple[tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        where = f"weapon {self.name!r}"
        if self.skill is None and not self.has(Ability.TORRENT):
            raise ProfileError("BS/WS N/A is only valid with TORRENT", where=where, value="N/A")
        if self.skill is not None and self.has(Ability.TORRENT):
            raise ProfileError("a TORRENT weapon makes no Hit roll, so it has no BS/WS", where=where,
                               value=f"{self.skill}+", hint="write BS N/A (or BS -)")
        if self.skill is not None:
            check_count(self.skill, name="BS/WS", lo=None, hi=None, where=where, error=ProfileError)
            if not 2 <= self.skill <= 6:
                raise ProfileError("BS/WS must be 2+ to 6+", where=where, value=f"{self.skill}+")
        check_count(self.strength, name="S", lo=None, hi=MAX_CHARACTERISTIC, where=where, error=ProfileError,
                    shown="S")
        if self.strength < 1:
            raise ProfileError("S must be at least 1", where=where, value=self.strength)
        check_count(self.ap, name="AP", lo=-MAX_AP, hi=None, where=where, error=ProfileError, shown="AP")
        if self.ap > 0:
            raise ProfileError("AP must be 0 or negative", where=where, value=f"+{self.ap}",
                               hint="write AP-1 for an armour-piercing weapon")
        if self.range_inches is not None:
            check_count(self.range_inches, name="range", lo=0, hi=MAX_RANGE, where=where, error=ProfileError)
        _check_dice(self.attacks, "A", where=where)
        _check_dice(self.damage, "D", where=where)
        if self.damage.maximum < 1 or self.attacks.maximum < 1:
            raise ProfileError("A and D must be at least 1", where=where,
                               value=f"A{self.attacks} D{self.damage}")

    @property
    def melee(self) -> bool:
        """True for a melee weapon (no range)."""
        return self.range_inches is None

    def has(self, ability: Ability) -> bool:
        """Whether the weapon has ``ability``."""
        return any(a.ability is ability for a in self.abilities)

    def get(self, ability: Ability) -> AbilitySpec | None:
        """The ability entry with the largest value (R-4.5: the same ability never stacks)."""
        found = [a for a in self.abilities if a.ability is ability]
        if not found:
            return None
        return max(found, key=lambda a: a.value.maximum if a.value else 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelStats:
    """One statline of a unit: ``count`` models with these characteristics."""

    name: str
    count: int
    toughness: int
    save: int
    wounds: int
    move: int | None = None
    leadership: int | None = None
    objective_control: int | None = None

    def __post_init__(self) -> None:
        where = f"model {self.name!r}"
        check_count(self.count, name="count", lo=None, hi=MAX_TARGET_MODELS, where=where, error=ProfileError)
        if self.count < 1:
            raise ProfileError("count must be at least 1", where=where, value=self.count)
        check_count(self.toughness, name="T", lo=None, hi=MAX_CHARACTERISTIC, where=where, error=ProfileError)
        if self.toughness < 1:
            raise ProfileError("T must be at least 1", where=where, value=self.toughness)
        check_count(self.save, name="Sv", lo=None, hi=None, where=where, error=ProfileError)
        if not 2 <= self.save <= 7:
            raise ProfileError("Sv must be 2+ to 7+ (7+ saves only with a net +1)", where=where, value=self.save)
        check_count(self.wounds, name="W", lo=None, hi=MAX_WOUNDS, where=where, error=ProfileError)
        if self.wounds < 1:
            raise ProfileError("W must be at least 1", where=where, value=self.wounds)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    """A datasheet: statlines, defensive abilities, keywords and weapons."""

    name: str
    models: tuple[ModelStats, ...]
    aliases: tuple[str, ...] = ()
    faction: str = ""
    points: int | None = None
    invulnerable: int | None = None
    invulnerable_ranged_only: bool = False
    feel_no_pain: int | None = None
    damage_reduction: int = 0
    stealth: bool = False
    half_damage: bool = False
    keywords: frozenset[str] = frozenset()
    weapons: tuple[Weapon, ...] = ()
    modifiers: tuple[tuple[str, object], ...] = ()
    source: str = ""

    def __post_init__(self) -> None:
        where = f"unit {self.name!r}"
        if not self.models:
            raise ProfileError("a unit needs at least one model", where=where)
        check_count(self.model_count, name="the number of models", lo=None, hi=MAX_TARGET_MODELS, where=where,
                    error=ProfileError)
        _check_defence(self.invulnerable, self.feel_no_pain, self.damage_reduction, where)

    @property
    def model_count(self) -> int:
        """Models in the unit."""
        return sum(m.count for m in self.models)


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What is being shot at: ``models`` identical models (the allocation model of R-9.1).

    ``wounds`` is per model; ``None`` means unlimited wounds (damage is summed, R-9.5).
    """

    name: str
    toughness: int
    save: int
    wounds: int | None
    models: int = 1
    invulnerable: int | None = None
    invulnerable_ranged_only: bool = False
    feel_no_pain: int | None = None
    keywords: frozenset[str] = frozenset()
    stealth: bool = False
    half_damage: bool = False
    damage_reduction: int = 0
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = f"target {self.name!r}"
        check_count(self.toughness, name="T", lo=None, hi=MAX_CHARACTERISTIC, where=where, error=ProfileError,
                    shown="T")
        if self.toughness < 1:
            raise ProfileError("T must be at least 1", where=where, value=self.toughness)
        check_count(self.save, name="SV", lo=None, hi=None, where=where, error=ProfileError)
        if not 2 <= self.save <= 7:
            raise ProfileError("SV must be 2+ to 6+", where=where, value=f"{self.save}+")
        if self.wounds is not None:
            check_count(self.wounds, name="W", lo=None, hi=MAX_WOUNDS, where=where, error=ProfileError, shown="W")
            if self.wounds < 1:
                raise ProfileError("W must be at least 1", where=where, value=self.wounds)
        check_count(self.models, name="MODELS", lo=None, hi=MAX_TARGET_MODELS, where=where, error=ProfileError,
                    shown="MODELS")
        if self.models < 1:
            raise ProfileError("MODELS must be at least 1", where=where, value=self.models)
        _check_defence(self.invulnerable, self.feel_no_pain, self.damage_reduction, where)


class RerollPolicy(str, Enum):
    """Which Hit or Wound rolls are re-rolled (R-3). ``non-crit`` and ``best`` need a full
    re-roll ("you can re-roll the Hit roll"): ``non-crit`` re-rolls every result that is not
    critical; ``best`` re-rolls a result iff a fresh roll is worth more on average (R-3.5)."""

    NONE = "none"
    ONES = "ones"
    FAILED = "failed"
    NON_CRIT = "non-crit"
    BEST = "best"


class DamageReroll(str, Enum):
    """Re-rolls of Damage rolls: ``ones`` re-rolls a roll whose dice show a total of 1;
    ``below-average`` re-rolls a result below the average of a fresh roll."""

    NONE = "none"
    ONES = "ones"
    BELOW_AVERAGE = "below-average"


class SaveReroll(str, Enum):
    """The defender's re-rolls of saving throws."""

    NONE = "none"
    ONES = "ones"
    FAILED = "failed"


class CommandReroll(str, Enum):
    """Which roll the attacker's (or, for ``save``, the defender's) Command Re-roll is kept for:
    one die per attack sequence (R-3.7)."""

    NONE = "none"
    HIT = "hit"
    WOUND = "wound"
    DAMAGE = "damage"
    SAVE = "save"
    ATTACKS = "attacks"


class Method(str, Enum):
    """Which engine answers: Monte Carlo, exact, or both (with an agreement check)."""

    MONTE_CARLO = "monte-carlo"
    EXACT = "exact"
    BOTH = "both"


class RulesVersion(str, Enum):
    """Which text of the core rules to use where they changed."""

    CURRENT = "current"
    V2023 = "2023"


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """The situation of one attack: modifiers and re-rolls as *requested* by the user.

    The caps of R-0.3 are applied by :mod:`mathhammer.rules`, not here, so the output can
    report what was requested and what was applied.
    """

    firing_models: int = 1
    melee: bool = False
    cover: bool = False
    half_range: bool = False
    stationary: bool = False
    not_visible: bool = False
    overwatch: bool = False
    charged: bool = False
    hit_mod: int = 0
    wound_mod: int = 0
    save_mod: int = 0
    damage_mod: int = 0
    bs_improve: int = 0
    ap_improve: int = 0
    crit_hit: int = 6
    crit_wound: int = 6
    reroll_hits: RerollPolicy = RerollPolicy.NONE
    reroll_wounds: RerollPolicy = RerollPolicy.NONE
    reroll_damage: DamageReroll = DamageReroll.NONE
    reroll_saves: SaveReroll = SaveReroll.NONE
    command_reroll: CommandReroll = CommandReroll.NONE
    rules: RulesVersion = RulesVersion.CURRENT

    def __post_init__(self) -> None:
        check_count(self.firing_models, name="the number of firing models", lo=None, hi=MAX_ATTACKING_MODELS,
                    where="--models", error=MatchupError)
        if self.firing_models < 1:
            raise MatchupError("at least one model must fire", where="--models", value=self.firing_models)
        for name in ("hit_mod", "wound_mod", "save_mod", "bs_improve", "ap_improve", "damage_mod"):
            option = f"--{name.replace('_', '-')}"
            limit = MAX_DAMAGE_MOD if name == "damage_mod" else MAX_ROLL_MOD
            check_count(getattr(self, name), name="the modifier", lo=-limit, hi=limit, where=option,
                        error=MatchupError)
        for name in ("crit_hit", "crit_wound"):
            value = getattr(self, name)
            check_count(value, name="a critical threshold", lo=None, hi=None, where=f"--{name.replace('_', '-')}",
                        error=MatchupError)
            if not 2 <= value <= 6:
                raise MatchupError("a critical threshold must be 2 to 6 (an unmodified 1 always fails)",
                                   where=f"--{name.replace('_', '-')}", value=value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Matchup:
    """One weapon, fired by ``context.firing_models`` models, at one target, in one context."""

    weapon: Weapon
    target: Target
    context: Context = Context()
    attacker: Unit | None = None


def _check_dice(expr: DiceExpr, name: str, *, where: str) -> None:
    """A, D or an ability's X: at most MAX_DICE dice and a largest value of MAX_DICE_VALUE."""
    if expr.count > MAX_DICE or expr.maximum > MAX_DICE_VALUE:
        raise ProfileError(f"{name} must have at most {MAX_DICE} dice and a largest value of at most "
                           f"{MAX_DICE_VALUE}", where=where, value=f"{name} {expr}")


def _check_defence(invulnerable: int | None, feel_no_pain: int | None, damage_reduction: int, where: str) -> None:
    """INV and FNP 2+ to 6+, a damage reduction of 0 to MAX_DAMAGE_MOD."""
    for name, value in (("INV", invulnerable), ("FNP", feel_no_pain)):
        if value is not None:
            check_count(value, name=name, lo=None, hi=None, where=where, error=ProfileError)
            if not 2 <= value <= 6:
                raise ProfileError(f"{name} must be 2+ to 6+", where=where, value=f"{value}+")
    check_count(damage_reduction, name="damage reduction", lo=0, hi=MAX_DAMAGE_MOD, where=where, error=ProfileError)


def unit_target(unit: Unit, *, models: int | None = None) -> tuple[Target, tuple[str, ...]]:
    """The unit as a target of identical models (the allocation model of R-9.1).

    Toughness is the highest in the unit; Save and Wounds are those of the statline with the
    most models. Returns the target and warnings for anything this simplification ignores.
    """
    main = max(unit.models, key=lambda m: m.count)
    notes: list[str] = []
    for m in unit.models:
        if (m.save, m.wounds) != (main.save, main.wounds):
            notes.append(f"{unit.name}: modelled as {unit.model_count} models of Sv{main.save}+ W{main.wounds}; "
                         f"the {m.name}'s Sv{m.save}+ W{m.wounds} is not modelled separately")
    target = Target(name=unit.name, toughness=max(m.toughness for m in unit.models), save=main.save,
                    wounds=main.wounds, models=models if models is not None else unit.model_count,
                    invulnerable=unit.invulnerable,
                    invulnerable_ranged_only=unit.invulnerable_ranged_only, feel_no_pain=unit.feel_no_pain,
                    keywords=unit.keywords, stealth=unit.stealth, half_damage=unit.half_damage,
                    damage_reduction=unit.damage_reduction)
    return target, tuple(notes)
