"""Frozen value types of the domain: dice, weapons, units, targets and the attack context.

No IO and no numpy here. Invariants are checked in ``__post_init__`` and reported as
:class:`~mathhammer.errors.ProfileError` / :class:`~mathhammer.errors.MatchupError`
naming the field and the value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction
from typing import Any

from .errors import MatchupError, ProfileError
from .limits import (
    MAX_AP,
    MAX_ATTACKING_MODELS,
    MAX_CHARACTERISTIC,
    MAX_DAMAGE_MOD,
    MAX_DICE,
    MAX_DICE_VALUE,
    MAX_PAIRS,
    MAX_RANGE,
    MAX_ROLL_MOD,
    MAX_TARGET_MODELS,
    MAX_WEAPON_GROUPS,
    MAX_WOUNDS,
    check_count,
)

__all__ = [
    "WARGEAR_GIVES",
    "Wargear",
    "describe_gives",
    "bear",
    "give_bearer",
    "worn",
    "Ability",
    "AttackerSide",
    "Battle",
    "Situation",
    "TargetSide",
    "Allocation",
    "TargetUnit",
    "WeaponGroup",
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
    "attach",
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
    def mean(self) -> Fraction:
        """Its average roll: ``D6+2`` 11/2, ``D3`` 2 (R-0.6)."""
        return Fraction(self.count * (self.sides + 1), 2) + self.plus

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

    @property
    def rank(self) -> tuple[int, int, int]:
        """How large its value is when a weapon has the ability twice (R-4.5: only the larger
        counts; ruling M77): twice the average first, then the largest roll, then the smallest,
        so SUSTAINED HITS 3 outranks D3 and 4 outranks D6 whichever is written first; for ANTI,
        whose value is a threshold, the lower one (ANTI-INFANTRY 2+ outranks 4+). No value:
        (0, 0, 0)."""
        v = self.value
        if v is None:
            return (0, 0, 0)
        if self.ability is Ability.ANTI:
            return (-2 * v.plus, -v.plus, -v.plus)
        return (v.count * (v.sides + 1) + 2 * v.plus, v.maximum, v.minimum)

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
    #: abilities and keywords of the profile that the engine does not model, as printed
    unmodelled: tuple[str, ...] = ()

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
        """The ability entry with the largest value (R-4.5: the same ability never stacks; the
        order of :attr:`AbilitySpec.rank`), the first listed of equal ones."""
        found = [a for a in self.abilities if a.ability is ability]
        if not found:
            return None
        return max(found, key=lambda a: a.rank)


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
    invulnerable: int | None = None  # None: the unit's
    feel_no_pain: int | None = None  # None: the unit's
    keywords: frozenset[str] = frozenset()  # in addition to the unit's (e.g. CHARACTER)
    #: what each model of this statline carries by default: (weapon name, how many), in firing order
    loadout: tuple[tuple[str, int], ...] = ()
    #: weapons of the unit these models may take instead of (or beside) their default loadout
    options: tuple[str, ...] = ()
    #: the unit's wargear (:class:`Wargear`, by name; a name twice: two) each model bears by
    #: default, its defences given already (ruling M81)
    wargear: tuple[str, ...] = ()
    #: this statline before that wargear: where a roster lists what its models bear instead
    #: (a Bullgryn with a Brute shield, not the default Slabshield), that is given to this
    bare: ModelStats | None = None

    def __post_init__(self) -> None:
        where = f"model {self.name!r}"
        if any(not w.strip() for w in self.wargear):
            raise ProfileError("a wargear name cannot be blank", where=where, value=list(self.wargear))
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
        _check_defence(self.invulnerable, self.feel_no_pain, 0, where)
        for weapon, n in self.loadout:
            check_count(n, name="a weapon count", lo=None, hi=MAX_ATTACKING_MODELS, where=where, error=ProfileError)
            if n < 1:
                raise ProfileError("a weapon count must be at least 1", where=where, value=f"{n}x {weapon}")


#: What a :class:`Wargear` may give its bearer (ruling M81): an invulnerable save, Feel No Pain, a
#: Wounds characteristic, Wounds added (after it is set, R-0.2).
WARGEAR_GIVES = ("invulnerable", "feel_no_pain", "W", "add_W")


def describe_gives(gives: Iterable[tuple[str, int]]) -> str:
    """What wargear gives its bearer (``WARGEAR_GIVES`` pairs), in words: "a 4+ invulnerable save
    and +1 Wounds"."""
    words = {"invulnerable": "a {}+ invulnerable save", "feel_no_pain": "Feel No Pain {}+",
             "W": "a Wounds characteristic of {}", "add_W": "+{} Wounds"}
    return " and ".join(words[k].format(v) for k, v in gives)


def give_bearer(statline: dict[str, Any], pieces: Sequence[tuple[str, Mapping[str, Any], int]],
                unit: Mapping[str, Any]) -> dict[str, str]:
    """Give a statline (a profile-schema dict: ``W``, ``invulnerable``, ``feel_no_pain``) what its
    every model bears (ruling M81): ``pieces`` are (name, what it gives: ``WARGEAR_GIVES`` keys,
    how many each model bears, at least 1). The Wounds characteristic is set (the largest such
    value), then added to, each piece as many times as a model bears it (R-0.2: two Shield
    Drones, +2); an invulnerable save or Feel No Pain is given where better than the unit's
    (``unit``: its ``invulnerable`` ({save, ranged_only}) and ``feel_no_pain``), once. Returns,
    by piece, why its invulnerable save is not given (for the notes): the unit's is against
    ranged attacks only (a statline's save is against what the unit's is against, so one against
    every attack cannot stand beside it)."""
    why: dict[str, str] = {}
    unit_save = unit.get("invulnerable")
    saves = [(name, g["invulnerable"]) for name, g, _ in pieces if "invulnerable" in g]
    for name, save in saves:
        if unit_save is not None and unit_save["ranged_only"]:
            why[name] = (f"{name}: the bearer's {save}+ invulnerable save is not given (the unit's "
                         f"{unit_save['save']}+ is against ranged attacks only)")
        elif unit_save is None or save < unit_save["save"]:
            statline["invulnerable"] = min(save, statline.get("invulnerable", 7))
    for _, g, _ in pieces:
        if "feel_no_pain" in g and g["feel_no_pain"] < (unit.get("feel_no_pain") or 7):
            statline["feel_no_pain"] = min(g["feel_no_pain"], statline.get("feel_no_pain", 7))
    set_to = [g["W"] for _, g, _ in pieces if "W" in g]
    statline["W"] = (max(set_to) if set_to else statline["W"]) + sum(g.get("add_W", 0) * n for _, g, n in pieces)
    return why


def worn(pieces: Iterable[Wargear]) -> list[tuple[str, dict[str, int], int]]:
    """:func:`give_bearer`'s ``pieces`` for what each model bears (a piece twice: two copies):
    (name, what it gives, copies) of each that gives its bearer something, in first-met order."""
    copies: dict[Wargear, int] = {}
    for w in pieces:
        copies[w] = copies.get(w, 0) + 1
    return [(w.name, dict(w.gives), n) for w, n in copies.items() if w.gives]


def bear(stats: ModelStats, pieces: Sequence[tuple[str, Mapping[str, Any], int]], *, invulnerable: int | None,
         ranged_only: bool, feel_no_pain: int | None) -> tuple[ModelStats, dict[str, str]]:
    """``stats`` with what each of its models bears (:func:`give_bearer`'s ``pieces``), against
    the unit's own ``invulnerable`` save (``ranged_only``) and ``feel_no_pain``; and, by piece,
    why an invulnerable save was not given."""
    own: dict[str, Any] = {"feel_no_pain": feel_no_pain}
    if invulnerable:
        own["invulnerable"] = {"save": invulnerable, "ranged_only": ranged_only}
    given: dict[str, Any] = {"W": stats.wounds, **{k: v for k, v in (("invulnerable", stats.invulnerable),
                                                                   ("feel_no_pain", stats.feel_no_pain)) if v}}
    whys = give_bearer(given, pieces, own)
    return replace(stats, wounds=given["W"], invulnerable=given.get("invulnerable"),
                   feel_no_pain=given.get("feel_no_pain")), whys


@dataclass(frozen=True, slots=True, kw_only=True)
class Wargear:
    """Wargear that changes its bearer's defences (a Shield Drone: ``(("add_W", 1),)``) or gives
    its unit keywords (a Marker Drone: MARKERLIGHT), by the name rosters list it under; a
    roster's model group that carries one each gets the defences, a unit that carries one the
    keywords (ruling M81)."""

    name: str
    gives: tuple[tuple[str, int], ...] = ()
    keywords: tuple[str, ...] = ()
    #: what a model takes instead of it (the other choices of its option: a Wolf Guard Battle
    #: Leader's Plasma pistol for his Storm Shield), by the names rosters list them under: a
    #: roster that lists one for a model that bears this by default has it no more (ruling M81)
    alternatives: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = f"wargear {self.name!r}"
        if not self.name.strip():
            raise ProfileError("wargear needs a name", where="wargear", value=self.name)
        if any(not a.strip() for a in self.alternatives):
            raise ProfileError("an alternative cannot be blank", where=where, value=list(self.alternatives))
        if not self.gives and not self.keywords:
            raise ProfileError(f"wargear gives keywords or at least one of {', '.join(WARGEAR_GIVES)}", where=where,
                               value=self.name)
        for what, value in self.gives:
            if what not in WARGEAR_GIVES:
                raise ProfileError(f"wargear gives {', '.join(WARGEAR_GIVES)}", where=where, value=what)
            if what == "invulnerable":
                _check_defence(value, None, 0, where)
            elif what == "feel_no_pain":
                _check_defence(None, value, 0, where)
            else:
                check_count(value, name=what, lo=1, hi=MAX_WOUNDS, where=where, error=ProfileError)


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
    #: Leader units attached to this unit when it is the target (profile names), e.g. a Captain
    attached: tuple[str, ...] = ()
    #: names of the datasheet's abilities that the engine does not model
    unmodelled: tuple[str, ...] = ()
    #: (models, points) of each unit size, ascending models; ``points`` is the first one's
    sizes: tuple[tuple[int, int], ...] = ()
    #: Deadly Demise x (R-10.1): the mortal wounds each unit within 6" suffers on a 6; None: none
    deadly_demise: DiceExpr | None = None
    #: Firing Deck x (TRANSPORT): embarked models that may lend it one ranged weapon each
    firing_deck: int | None = None
    #: named rules of the datasheet that an army rule refers to (e.g. "For the Greater Good")
    rules: tuple[str, ...] = ()
    #: wargear its models may take that changes the bearer's defences (ruling M81), for rosters;
    #: a statline names what its models bear by default (:attr:`ModelStats.wargear`)
    wargear: tuple[Wargear, ...] = ()
    #: enhancements its CHARACTER model may take that change the bearer's defences (ruling M85),
    #: for text rosters, which name an enhancement without its rules
    enhancements: tuple[Wargear, ...] = ()

    def __post_init__(self) -> None:
        where = f"unit {self.name!r}"
        if not self.models:
            raise ProfileError("a unit needs at least one model", where=where)
        check_count(self.model_count, name="the number of models", lo=None, hi=MAX_TARGET_MODELS, where=where,
                    error=ProfileError)
        _check_defence(self.invulnerable, self.feel_no_pain, self.damage_reduction, where)
        if self.deadly_demise is not None:
            _check_dice(self.deadly_demise, "Deadly Demise", where=where)
        if self.firing_deck is not None:
            check_count(self.firing_deck, name="Firing Deck", lo=1, hi=MAX_ATTACKING_MODELS, where=where,
                        error=ProfileError)

    def has_rule(self, name: str) -> bool:
        """Whether the datasheet has the named rule (case and spacing ignored)."""
        key = " ".join(name.lower().split())
        return any(" ".join(r.lower().split()) == key for r in self.rules)

    @property
    def model_count(self) -> int:
        """Models in the unit."""
        return sum(m.count for m in self.models)

    @property
    def character(self) -> bool:
        """A CHARACTER unit (a Leader when attached to another unit)."""
        return "CHARACTER" in self.keywords

    def loadout(self) -> tuple[tuple[str, int], ...]:
        """The default loadout of the whole unit: (weapon name, models x how many each), in the
        order of the statlines and their loadouts; a weapon carried by two statlines is summed
        at its first place."""
        total: dict[str, int] = {}
        for m in self.models:
            for weapon, n in m.loadout:
                total[weapon] = total.get(weapon, 0) + m.count * n
        return tuple(total.items())


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A group of ``models`` identical models: the whole target, or one model group of a
    :class:`TargetUnit` (each group keeps its own save, invulnerable save, Wounds and Feel No
    Pain; saves are rolled against the model an attack is allocated to).

    ``wounds`` is per model; ``None`` means unlimited wounds (damage is summed, R-9.5).
    ``leader``: an attached Leader (a CHARACTER group of an Attached unit, R-9.4): attacks are
    allocated to it only once no Bodyguard model is left, or by PRECISION.
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
    leader: bool = False

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


class _Spelled(str, Enum):
    """A choice read from its value in any case, with ``_`` or a space for each ``-``
    (``NON_CRIT``, ``non crit``: ``non-crit``; not ``non--crit``), or from one of the class's
    ``_aliases()``."""

    @classmethod
    def _aliases(cls) -> dict[str, str]:
        return {}

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, str):
            return None
        text = value.strip().lower().replace("_", "-").replace(" ", "-")
        text = cls._aliases().get(text, text)
        return next((m for m in cls if m.value == text), None)


class RerollPolicy(_Spelled):
    """Which Hit or Wound rolls are re-rolled (R-3). ``non-crit`` and ``best`` need a full
    re-roll ("you can re-roll the Hit roll"): ``non-crit`` re-rolls every result that is not
    critical; ``best`` re-rolls a result iff a fresh roll is worth more on average (R-3.5),
    also read as ``ev-optimal``, the specification's name for it."""

    NONE = "none"
    ONES = "ones"
    FAILED = "failed"
    NON_CRIT = "non-crit"
    BEST = "best"

    @classmethod
    def _aliases(cls) -> dict[str, str]:
        return {"ev-optimal": "best"}


class DamageReroll(_Spelled):
    """Re-rolls of Damage rolls: ``ones`` re-rolls a roll whose dice show a total of 1;
    ``below-average`` re-rolls a result below the average of a fresh roll."""

    NONE = "none"
    ONES = "ones"
    BELOW_AVERAGE = "below-average"


class SaveReroll(_Spelled):
    """The defender's re-rolls of saving throws."""

    NONE = "none"
    ONES = "ones"
    FAILED = "failed"


class CommandReroll(_Spelled):
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


class FtggWording(str, Enum):
    """Which text of For the Greater Good to use (RULES.md A17): the index text of the seed
    document (a Guided unit's attacks at another unit than their Spotted unit have BS worsened by
    1) or the later codex text (a unit is Guided only while it targets a Spotted unit: no penalty)."""

    INDEX = "index"
    CODEX = "codex"


@dataclass(frozen=True, slots=True, kw_only=True)
class AttackerSide:
    """What the attacking unit and its weapons bring to an attack: roll modifiers,
    characteristic changes, critical thresholds and re-rolls (a weapon group may carry its
    own, from its profile)."""

    hit_mod: int = 0
    wound_mod: int = 0
    damage_mod: int = 0
    bs_improve: int = 0
    ap_improve: int = 0
    crit_hit: int = 6
    crit_wound: int = 6
    reroll_hits: RerollPolicy = RerollPolicy.NONE
    reroll_wounds: RerollPolicy = RerollPolicy.NONE
    reroll_damage: DamageReroll = DamageReroll.NONE


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetSide:
    """What the defending unit brings: cover, save modifiers and re-rolls."""

    cover: bool = False
    save_mod: int = 0
    reroll_saves: SaveReroll = SaveReroll.NONE


@dataclass(frozen=True, slots=True, kw_only=True)
class Situation:
    """The circumstances of the attack: how many models fire, melee or ranged, range,
    movement, visibility, Overwatch, the charge, the Command Re-roll and the rules text."""

    firing_models: int = 1
    melee: bool = False
    half_range: bool = False
    stationary: bool = False
    not_visible: bool = False
    overwatch: bool = False
    charged: bool = False
    command_reroll: CommandReroll = CommandReroll.NONE
    rules: RulesVersion = RulesVersion.CURRENT
    #: the best BS/WS that characteristic changes can make (N: N+; ruling A1); 0: no limit
    skill_floor: int = 0
    #: the rule behind --crit-hit / --crit-wound says "a *successful* unmodified roll of N+" (A7)
    crit_successful: bool = False



@dataclass(frozen=True, slots=True, kw_only=True)
class Battle:
    """The circumstances army rules, detachment rules and stratagems look at (the effects
    layer, :mod:`mathhammer.effects`): the battle round, the attacker's detachment, the
    stratagems used, For the Greater Good (``guided``: the attacker is a Guided unit;
    ``observer``: it is the Observer; ``spotted``: the target is their Spotted unit;
    ``markerlight``: the Observer has MARKERLIGHT), the range to the target in inches, and
    ``trap``: the target is within range of the Trap objective marker, and ``ftgg``: which text
    of For the Greater Good (:class:`FtggWording`). The default is a battle with none of them:
    no effect applies."""

    round: int | None = None
    detachment: str | None = None
    stratagems: tuple[str, ...] = ()
    guided: bool = False
    observer: bool = False
    spotted: bool = True
    markerlight: bool = False
    range: int | None = None
    trap: bool = False
    ftgg: FtggWording = FtggWording.INDEX

    def __post_init__(self) -> None:
        if not isinstance(self.ftgg, FtggWording):
            raise MatchupError("not one of: index, codex", where="--ftgg", value=self.ftgg)
        if self.round is not None:
            check_count(self.round, name="the battle round", lo=None, hi=None, where="--round", error=MatchupError)
            if not 1 <= self.round <= 5:
                raise MatchupError("a battle round is 1 to 5", where="--round", value=self.round)
        if self.range is not None:
            check_count(self.range, name="the range", lo=0, hi=MAX_RANGE, where="--range", error=MatchupError)
        if self.guided and self.observer:
            raise MatchupError("a unit is either the Guided unit or the Observer unit, not both (R-11.1)",
                               where="--observer", value="--guided --observer")

    @property
    def given(self) -> bool:
        """Whether anything differs from the default battle."""
        return self != Battle()


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
    skill_floor: int = 0
    crit_successful: bool = False

    @classmethod
    def of(cls, *, situation: Situation = Situation(), attacker: AttackerSide = AttackerSide(),
           target: TargetSide = TargetSide()) -> Context:
        """The context made of its three sides."""
        fields = {}
        for part in (situation, attacker, target):
            fields.update({name: getattr(part, name) for name in part.__slots__})
        return cls(**fields)

    @property
    def attacker_side(self) -> AttackerSide:
        return AttackerSide(**{name: getattr(self, name) for name in AttackerSide.__slots__})

    @property
    def target_side(self) -> TargetSide:
        return TargetSide(**{name: getattr(self, name) for name in TargetSide.__slots__})

    @property
    def situation(self) -> Situation:
        return Situation(**{name: getattr(self, name) for name in Situation.__slots__})

    def with_attacker(self, side: AttackerSide) -> Context:
        """This context with ``side`` in place of its attacker side (a weapon group's own)."""
        return Context.of(situation=self.situation, attacker=side, target=self.target_side)

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
        check_count(self.skill_floor, name="the floor", lo=None, hi=None, where="--skill-floor", error=MatchupError)
        if not 0 <= self.skill_floor <= 6:
            raise MatchupError("a floor is 1 to 6 (N: BS/WS never better than N+), or 0 for none",
                               where="--skill-floor", value=self.skill_floor)
        for name in ("crit_hit", "crit_wound"):
            value = getattr(self, name)
            check_count(value, name="a critical threshold", lo=None, hi=None, where=f"--{name.replace('_', '-')}",
                        error=MatchupError)
            if not 2 <= value <= 6:
                raise MatchupError("a critical threshold must be 2 to 6 (an unmodified 1 always fails)",
                                   where=f"--{name.replace('_', '-')}", value=value)


@dataclass(frozen=True, slots=True, kw_only=True)
class WeaponGroup:
    """``count`` models of the attacking unit each firing (or fighting with) ``weapon``: one entry
    of an attack. ``2x heavy rail rifle`` is WeaponGroup(rifle, 2)."""

    weapon: Weapon
    count: int = 1
    #: this group's attacker side when it differs from the matchup's (modifiers carried by the
    #: weapon's profile); None: the matchup's
    attacker: AttackerSide | None = None

    def __post_init__(self) -> None:
        where = f"weapon {self.weapon.name!r}"
        check_count(self.count, name="the weapon count", lo=None, hi=MAX_ATTACKING_MODELS, where=where,
                    error=MatchupError)
        if self.count < 1:
            raise MatchupError("a weapon count must be at least 1", where=where, value=self.count)


class Allocation(str, Enum):
    """How the defender allocates attacks among the models it may choose (R-9.1), after the
    fixed rules: a model that has lost wounds takes the attack; Bodyguard models before a Leader.

    ``durable``: the models with the most wounds first (then the better save, then the order
    given): their wounds soak the damage. A fixed order, not always the one that loses fewest
    models (it reads the saves as written, not after AP: ruling M45). ``listed``: the groups in
    the order given (to keep a model with a special weapon alive, list it last).
    """

    DURABLE = "durable"
    LISTED = "listed"


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetUnit:
    """A target of one or more model groups (:class:`Target`), e.g. 9 Boyz and their Boss Nob, or
    an Attached unit: Bodyguard groups and ``leader`` groups.

    ``wounds_left``: the first model attacks are allocated to has lost wounds and has this many
    left (R-9.1 then sends attacks to it first). ``allocation``: the defender's choice among the
    rest (:class:`Allocation`).
    """

    name: str
    groups: tuple[Target, ...]
    wounds_left: int | None = None
    allocation: Allocation = Allocation.DURABLE

    def __post_init__(self) -> None:
        where = f"target {self.name!r}"
        if not self.groups:
            raise ProfileError("a target needs at least one model group", where=where)
        if len(self.groups) > 1 and any(g.wounds is None for g in self.groups):
            raise ProfileError("every model group of a mixed target needs W (unlimited wounds is for a lone "
                               "statline)", where=where, value=next(g.name for g in self.groups if g.wounds is None))
        check_count(self.models, name="the number of models", lo=None, hi=MAX_TARGET_MODELS, where=where,
                    error=ProfileError)
        if self.wounds_left is not None:
            first = self.allocation_order()[0]
            check_count(self.wounds_left, name="wounds left", lo=None, hi=None, where="--wounds-left",
                        error=MatchupError)
            if first.wounds is None:
                raise MatchupError("a target with unlimited wounds has no wounds left to count",
                                   where="--wounds-left", value=self.wounds_left)
            if not 1 <= self.wounds_left <= first.wounds:
                raise MatchupError(f"must be 1 to the first model's W ({first.wounds}: {first.name})",
                                   where="--wounds-left", value=self.wounds_left)

    @property
    def models(self) -> int:
        """Models in the unit."""
        return sum(g.models for g in self.groups)

    @property
    def attached(self) -> bool:
        """An Attached unit: at least one Leader group and one Bodyguard group."""
        return any(g.leader for g in self.groups) and not all(g.leader for g in self.groups)

    def bodyguard(self) -> tuple[Target, ...]:
        """The groups attacks go to first: the Bodyguard groups of an Attached unit, else all."""
        return tuple(g for g in self.groups if not g.leader) if self.attached else self.groups

    def leaders(self) -> tuple[Target, ...]:
        """The Leader groups of an Attached unit (empty otherwise)."""
        return tuple(g for g in self.groups if g.leader) if self.attached else ()

    def allocation_order(self) -> tuple[Target, ...]:
        """Bodyguard groups in the defender's order, then the Leader groups in the same order."""
        first, then = list(self.bodyguard()), list(self.leaders())
        if self.allocation is Allocation.DURABLE:
            # stable sort: most wounds, then the better save (the lower characteristic), then as given
            for part in (first, then):
                part.sort(key=lambda g: (-(g.wounds or 0), min(g.save, g.invulnerable or 7)))
        return (*first, *then)

    @property
    def toughness(self) -> int:
        """The Toughness of every Wound roll against the unit: the Bodyguard models' (the highest
        of them when they differ), even once only a Leader is left."""
        return max(g.toughness for g in self.bodyguard())

    @property
    def keywords(self) -> frozenset[str]:
        """Keywords an attack checks before allocation (ANTI-, Overwatch vs TITANIC): those of any
        of its models, Leaders included (an Attached unit is one unit for all rules purposes)."""
        return frozenset().union(*(g.keywords for g in self.groups))

    @property
    def stealth(self) -> bool:
        """Stealth applies only when every model has it."""
        return all(g.stealth for g in self.groups)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Matchup:
    """What one attacking unit does to one target, in one context.

    ``weapons``: the weapon groups, resolved in order; ``context.firing_models`` multiplies
    every group's count (``--models``). ``target``: a :class:`TargetUnit`. For one weapon at a
    group of identical models, ``Matchup(weapon=w, target=t)`` is short for
    ``Matchup(weapons=(WeaponGroup(weapon=w),), target=TargetUnit(name=t.name, groups=(t,)))``.
    """

    weapons: tuple[WeaponGroup, ...]
    target: TargetUnit
    context: Context
    attacker: Unit | None
    #: where the context's roll modifiers and characteristic changes came from, beyond the
    #: options: (field, source, value), e.g. ("wound_mod", "A Tempting Trap", 1) from an army
    #: rule, detachment rule or stratagem (mathhammer.effects); the rest of a field's value is
    #: the option's. Explanations name each source.
    sources: tuple[tuple[str, str, int], ...]

    def __init__(self, *, weapons: tuple[WeaponGroup, ...] = (), target: Target | TargetUnit,
                 context: Context = Context(), attacker: Unit | None = None, weapon: Weapon | None = None,
                 sources: tuple[tuple[str, str, int], ...] = ()) -> None:
        if weapon is not None:
            if weapons:
                raise MatchupError("give weapon or weapons, not both", where="matchup", value=weapon.name)
            weapons = (WeaponGroup(weapon=weapon),)
        if not weapons:
            raise MatchupError("an attack needs at least one weapon", where="matchup")
        if isinstance(target, Target):
            target = TargetUnit(name=target.name, groups=(target,))
        if len(weapons) > MAX_WEAPON_GROUPS:
            raise MatchupError(f"at most {MAX_WEAPON_GROUPS} weapon groups fire in one attack", where="weapons",
                               value=f"{len(weapons)} weapon groups", hint="compare them in several attacks")
        if len(weapons) * len(target.groups) > MAX_PAIRS:
            raise MatchupError(f"at most {MAX_PAIRS} pairs of a weapon group and a model group of the target",
                               where="--target", value=f"{len(weapons)} weapon groups x {len(target.groups)} "
                               "model groups", hint="give identical models as one group (5x T4 SV3+ W2)")
        object.__setattr__(self, "weapons", tuple(weapons))
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "attacker", attacker)
        object.__setattr__(self, "sources", tuple(sources))

    @property
    def weapon(self) -> Weapon:
        """The first weapon (the only one of a single-weapon matchup)."""
        return self.weapons[0].weapon

    def firing(self, group: WeaponGroup) -> int:
        """Models firing ``group``'s weapon: its count times ``--models``."""
        return group.count * self.context.firing_models

    def context_of(self, group: WeaponGroup) -> Context:
        """The situation of ``group``'s attacks."""
        return self.context if group.attacker is None else self.context.with_attacker(group.attacker)


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


def unit_target(unit: Unit, *, models: int | None = None) -> tuple[TargetUnit, tuple[str, ...]]:
    """The unit as a target: one model group per statline (each with its own save, invulnerable
    save, Wounds and Feel No Pain). ``models`` overrides the unit's size: a one-statline unit
    gets that many models; with several statlines the most numerous one makes up the difference.
    Returns the target and warnings (none today; kept for what a profile cannot say)."""
    counts = [m.count for m in unit.models]
    if models is not None and models < 1:
        raise ProfileError("MODELS must be at least 1", where="--target-models", value=models)
    if models is not None:
        main = max(range(len(counts)), key=lambda i: counts[i])
        rest = sum(counts) - counts[main]
        if models - rest < 1:
            raise MatchupError(f"{unit.name} has {rest} models besides its {unit.models[main].name} models",
                               where="--target-models", value=models, hint=f"give more than {rest}")
        counts[main] = models - rest
    groups = tuple(
        Target(name=m.name if len(unit.models) > 1 else unit.name, toughness=m.toughness, save=m.save,
               wounds=m.wounds, models=n, invulnerable=m.invulnerable or unit.invulnerable,
               invulnerable_ranged_only=unit.invulnerable_ranged_only,
               feel_no_pain=m.feel_no_pain or unit.feel_no_pain, keywords=unit.keywords | m.keywords,
               stealth=unit.stealth, half_damage=unit.half_damage, damage_reduction=unit.damage_reduction)
        for m, n in zip(unit.models, counts, strict=True))
    return TargetUnit(name=unit.name, groups=groups), ()


def attach(bodyguard: TargetUnit, *leaders: TargetUnit) -> TargetUnit:
    """An Attached unit: ``bodyguard``'s groups and each leader's groups marked ``leader``."""
    groups = list(bodyguard.groups)
    for leader in leaders:
        groups += [replace(g, leader=True) for g in leader.groups]
    name = " + ".join([bodyguard.name, *(leader.name for leader in leaders)])
    return TargetUnit(name=name, groups=tuple(groups), wounds_left=bodyguard.wounds_left,
                      allocation=bodyguard.allocation)
