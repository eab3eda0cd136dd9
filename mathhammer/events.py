"""Mortal-wound events: Tank Shock (R-10.2) and Deadly Demise (R-10.1), as a library.

    >>> from mathhammer import tank_shock
    >>> r = tank_shock("T10", "T4 SV3+ W2 MODELS5", method="exact")
    >>> round(r.mortal_wounds.mean(), 3)
    3.31

Each event rolls a number N of mortal wounds for a unit; the mortal wounds are never saved
(R-7.6), Feel No Pain is rolled for each of them (R-8.5) and they spill from model to model
until the unit is destroyed (R-9.3, :mod:`mathhammer.engine.mortal`).

* **Tank Shock** (1CP): D6s equal to the Toughness of the selected VEHICLE model, each 5+ one
  mortal wound, at most 6: N = min(6, Binomial(T, 1/3)).
* **Deadly Demise x**: each destroyed model rolls a D6; on a 6 each unit within 6" suffers x
  mortal wounds, a random x rolled separately for each unit (and each exploding model). With M
  models destroyed, K ~ Binomial(M, 1/6) explode and a unit suffers the sum of K rolls of x.

``method``: ``exact`` (the pmf of N, then :func:`~mathhammer.engine.mortal.spill`),
``monte-carlo`` (plain numpy, vectorised over trials, seeded; a seed is drawn and reported when
none is given) or ``both`` (exact figures, the Monte Carlo estimates and an agreement check).
Nothing here imports numba.
"""

from __future__ import annotations

import math
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .errors import InputError, MatchupError, NotExactError, ProfileError
from .limits import MAX_CHARACTERISTIC, MAX_TARGET_MODELS, check_count
from .model import Allocation, DiceExpr, Method, Target, TargetUnit, Unit
from .resolve import ResolvedTarget
from .result import Distribution, GroupResult

if TYPE_CHECKING:
    from .engine.agreement import Agreement
    from .profiles import Library

__all__ = ["DEADLY_DEMISE_SCHEMA", "TANK_SHOCK_CAP", "TANK_SHOCK_SCHEMA", "EventAgreement", "EventResult",
           "TargetOutcome", "deadly_demise", "deadly_demise_pmf", "explosions_pmf", "tank_shock", "tank_shock_pmf"]

TANK_SHOCK_SCHEMA = "mathhammer.tank-shock/1"
DEADLY_DEMISE_SCHEMA = "mathhammer.deadly-demise/1"
#: Tank Shock inflicts at most this many mortal wounds (R-10.2).
TANK_SHOCK_CAP = 6
#: Random numbers per Monte Carlo chunk (trials x dice): a chunk's arrays stay a few tens of MB.
_CHUNK_VALUES = 1 << 21
#: The exact Deadly Demise pmf is refused above this many multiply-adds (far beyond any unit).
_EXACT_MAX_OPS = 200_000_000

_TOUGHNESS = re.compile(r"\s*T\s*([+-]?[0-9]+)\s*", re.IGNORECASE | re.ASCII)
#: what looks like dice, for a clearer error than "unknown unit" (D7, 2D2)
_DICE_LIKE = re.compile(r"\s*(?:deadly\s+demise\s+)?\d*\s*D\s*\d+(?:\s*\+\s*\d+)?\s*", re.IGNORECASE)
_DICE = re.compile(r"\s*(?:deadly\s+demise\s+)?(\d*\s*D\s*[36](?:\s*\+\s*\d+)?|\d+)\s*", re.IGNORECASE)


# --- the number of mortal wounds, exactly ---------------------------------------------------------
def tank_shock_pmf(toughness: int) -> dict[int, Fraction]:
    """P(N = k) for Tank Shock with a VEHICLE model of Toughness ``toughness``: ``toughness``
    D6, each 5+ one mortal wound, at most :data:`TANK_SHOCK_CAP` (R-10.2)."""
    _check_toughness(toughness, "toughness")
    third = Fraction(1, 3)
    out = {k: math.comb(toughness, k) * third**k * (1 - third) ** (toughness - k)
           for k in range(min(toughness, TANK_SHOCK_CAP - 1) + 1)}
    if toughness >= TANK_SHOCK_CAP:
        out[TANK_SHOCK_CAP] = 1 - sum(out.values(), Fraction(0))
    return out


def explosions_pmf(models: int) -> dict[int, Fraction]:
    """P(K = k): how many of ``models`` destroyed Deadly Demise models roll a 6 (R-10.1)."""
    sixth = Fraction(1, 6)
    return {k: math.comb(models, k) * sixth**k * (1 - sixth) ** (models - k) for k in range(models + 1)}


def deadly_demise_pmf(x: DiceExpr, models: int = 1) -> npt.NDArray[np.float64]:
    """P(N = n) for the mortal wounds one unit within 6" suffers when ``models`` models with
    Deadly Demise ``x`` are destroyed: a mixture over the number K that explode of the sum of K
    rolls of ``x`` (R-10.1). Floats; index n.

    Raises:
        NotExactError: a request far beyond any unit (its cost is estimated first).
    """
    from .dice import pmf

    one = np.zeros(x.maximum + 1)
    for value, p in pmf(x).items():
        one[value] += float(p)
    ops = models * (models * x.maximum + 1) * one.size
    if ops > _EXACT_MAX_OPS:
        raise NotExactError(f"{models} models with Deadly Demise {x} are too many to compute exactly "
                            f"(about {ops:.3g} operations)", where="--models", value=models)
    weights = explosions_pmf(models)
    out = np.zeros(models * x.maximum + 1)
    total = np.ones(1)  # the pmf of the sum of k rolls of x
    for k in range(models + 1):
        out[: total.size] += float(weights[k]) * total
        total = np.convolve(total, one)
    return out


# --- results -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class TargetOutcome:
    """What the mortal wounds do to one unit: how many it suffers, the wounds it loses after Feel
    No Pain, the models destroyed, and per model group (allocation order) the models destroyed."""

    target: TargetUnit
    mortal_wounds: Distribution
    damage: Distribution
    models_destroyed: Distribution
    groups: tuple[GroupResult, ...]

    def p_destroy_unit(self) -> float:
        """P(every model of the unit is destroyed); 0 for a unit with unlimited wounds."""
        if any(g.wounds is None for g in self.target.groups):
            return 0.0
        return self.models_destroyed.p_at_least(self.target.models)

    def to_dict(self) -> dict[str, Any]:
        """The per-target stat blocks of the JSON document."""
        from .describe import group_block

        return {"mortal_wounds": self.mortal_wounds.to_dict(), "damage": self.damage.to_dict(),
                "models_destroyed": self.models_destroyed.to_dict(), "p_destroy_unit": self.p_destroy_unit(),
                "groups": [group_block(t, r) for t, r in zip(self.target.allocation_order(), self.groups,
                                                               strict=True)]}


@dataclass(frozen=True, slots=True)
class EventAgreement:
    """``method="both"``: each Monte Carlo distribution against the exact one (the bounds of
    :mod:`mathhammer.engine.agreement`: the mean within 5 standard errors, the largest CDF gap
    within the DKW bound at 1e-6)."""

    checks: tuple[tuple[str, Agreement], ...]

    @property
    def agrees(self) -> bool:
        """Every check within its bounds."""
        return all(a.agrees for _, a in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``agreement`` object."""
        from .engine.agreement import DKW_ALPHA, MEAN_BOUND_SE

        bound = self.checks[0][1].dkw_bound if self.checks else None
        return {"agrees": self.agrees, "mean_bound_se": MEAN_BOUND_SE, "dkw_bound": bound, "dkw_alpha": DKW_ALPHA,
                "checks": [{"what": what, "agrees": a.agrees, "mean_difference_se": a.mean_difference_se,
                            "max_cdf_gap": a.max_cdf_gap} for what, a in self.checks]}

    def line(self) -> str:
        """One line for people."""
        if not self.checks:
            return "Monte Carlo and exact: nothing to compare"
        worst_se = max(self.checks, key=lambda c: abs(c[1].mean_difference_se))
        worst_gap = max(self.checks, key=lambda c: c[1].max_cdf_gap)
        verdict = "agree" if self.agrees else "DISAGREE"
        return (f"Monte Carlo and exact {verdict} on {len(self.checks)} distributions: largest mean difference "
                f"{worst_se[1].mean_difference_se:+.2f} SE ({worst_se[0]}), largest CDF gap "
                f"{worst_gap[1].max_cdf_gap:.5f} ({worst_gap[0]}) vs DKW bound {worst_gap[1].dkw_bound:.5f}")


@dataclass(frozen=True, slots=True, kw_only=True)
class EventResult:
    """What a Tank Shock or a Deadly Demise does.

    ``mortal_wounds``: the mortal wounds one unit suffers (Tank Shock: its target; Deadly
    Demise: any unit within 6"). ``targets``: one :class:`TargetOutcome` per target (Tank Shock:
    exactly one). ``p_explode`` and ``explosions`` (the number of models that explode): Deadly
    Demise only. ``source``: the vehicle or the unit, as JSON data. With ``method="both"`` the
    figures are exact and ``monte_carlo`` holds the estimates, ``agreement`` their comparison.
    """

    event: str
    method: str
    trials: int | None
    seed: int | None
    source: dict[str, Any]
    mortal_wounds: Distribution
    targets: tuple[TargetOutcome, ...]
    p_explode: float | None = None
    explosions: Distribution | None = None
    stratagems: tuple[dict[str, Any], ...] = ()
    explain: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    monte_carlo: EventResult | None = None
    agreement: EventAgreement | None = None

    # the only target's figures (Tank Shock); Deadly Demise has one per target
    @property
    def damage(self) -> Distribution:
        """The first target's wounds lost (Tank Shock: its target's)."""
        return self._first().damage

    @property
    def models_destroyed(self) -> Distribution:
        """The first target's models destroyed."""
        return self._first().models_destroyed

    @property
    def groups(self) -> tuple[GroupResult, ...]:
        """The first target's per-group models destroyed."""
        return self._first().groups

    def p_destroy_unit(self) -> float:
        """P(the first target is destroyed)."""
        return self._first().p_destroy_unit()

    def _first(self) -> TargetOutcome:
        if not self.targets:
            raise InputError("this Deadly Demise was rolled with no target: it has only mortal wounds",
                             where="target", value=None, hint="give a target to see what they do")
        return self.targets[0]

    def to_dict(self, writer: dict[str, str] | None = None) -> dict[str, Any]:
        """The JSON document: schema ``mathhammer.tank-shock/1`` or ``mathhammer.deadly-demise/1``."""
        from .describe import target_dict

        if writer is None:
            from .render.records import WRITER

            writer = WRITER
        out: dict[str, Any] = {"schema": TANK_SHOCK_SCHEMA if self.event == "tank-shock" else DEADLY_DEMISE_SCHEMA,
                               "writer": writer, "method": self.method, "trials": self.trials, "seed": self.seed}
        if self.event == "tank-shock":
            only = self.targets[0]
            out |= {"vehicle": self.source, "target": target_dict(only.target),
                    "mortal_wounds": self.mortal_wounds.to_dict(), **{k: v for k, v in only.to_dict().items()
                                                                      if k != "mortal_wounds"},
                    "stratagems": list(self.stratagems)}
        else:
            out |= {"unit": self.source, "p_explode": self.p_explode,
                    "explosions": self.explosions.to_dict() if self.explosions is not None else None,
                    "mortal_wounds": self.mortal_wounds.to_dict(),
                    "targets": [{"target": target_dict(t.target), **t.to_dict()} for t in self.targets]}
        if self.monte_carlo is not None and self.agreement is not None:
            out["monte_carlo"] = self.monte_carlo._estimates()
            out["agreement"] = self.agreement.to_dict()
        out |= {"explain": list(self.explain), "warnings": list(self.warnings),
                "timing": {"compute_seconds": self.seconds}}
        return out

    def _estimates(self) -> dict[str, Any]:
        """The ``monte_carlo`` block of a ``both`` document (this is the Monte Carlo run)."""
        out: dict[str, Any] = {"trials": self.trials, "seed": self.seed}
        if self.event == "tank-shock":
            out |= {"mortal_wounds": self.mortal_wounds.to_dict(), "damage": self.damage.to_dict(),
                    "models_destroyed": self.models_destroyed.to_dict(), "p_destroy_unit": self.p_destroy_unit()}
        else:
            out |= {"p_explode": self.p_explode,
                    "explosions": self.explosions.to_dict() if self.explosions is not None else None,
                    "mortal_wounds": self.mortal_wounds.to_dict(),
                    "targets": [{"mortal_wounds": t.mortal_wounds.to_dict(), "damage": t.damage.to_dict(),
                                 "models_destroyed": t.models_destroyed.to_dict(),
                                 "p_destroy_unit": t.p_destroy_unit()} for t in self.targets]}
        return out | {"simulate_seconds": self.seconds}


# --- the library functions ---------------------------------------------------------------------
TargetLike = str | ResolvedTarget | TargetUnit | Target


def tank_shock(vehicle: str | Unit, target: TargetLike, *, lib: Library | None = None,
               target_lib: Library | None = None, method: Method | str = Method.MONTE_CARLO, trials: int = 1_000_000,
               seed: int | None = None, target_models: int | None = None, wounds_left: int | None = None,
               allocation: Allocation | str = Allocation.DURABLE) -> EventResult:
    """Tank Shock (R-10.2) from ``vehicle`` into ``target``.

    Args:
        vehicle: a VEHICLE unit (a name, or a :class:`~mathhammer.model.Unit`) or its
            Toughness inline: ``"T10"``. Of several VEHICLE statlines, the one with the highest
            Toughness is selected (ruling M60).
        target: a target as ``--target`` takes it (a name, inline, ``;`` groups, ``+``
            Leaders), or one resolved by :func:`mathhammer.api.target`, or a model object.
        lib: the profiles (default: :func:`mathhammer.api.library`).
        target_lib: the profiles a target is looked up in (default: ``lib``; the command line
            adds ``--target-roster`` to the library, never the attacker's ``--roster``).
        method, trials, seed: as ``shoot`` takes them.
        target_models, wounds_left, allocation: as ``--target-models``, ``--wounds-left`` and
            ``--allocation`` (for a target given as text).

    Raises:
        MatchupError: a unit that is not a VEHICLE unit; ProfileError: an unknown name;
        InputError: a bad method, trials or seed.
    """
    chosen = _method(method)
    trials, seed = _check_trials(trials, seed)
    lib = _library(lib)
    target_lib = _library(target_lib, "target_lib", lib)
    toughness, source, explain = _vehicle(lib, vehicle)
    found = _targets(target_lib, [target], target_models, wounds_left, allocation)
    from .effects import Used, catalogue

    used = catalogue().stratagem("tank shock")
    stratagem = Used(name=used.name, cp=used.cp, side=used.side, detachment=used.detachment).to_dict()
    explain += [f"R-10.2 Tank Shock ({used.cp}CP): {toughness} D6, the Toughness of the selected VEHICLE model; "
                f"each 5+ is one mortal wound, at most {TANK_SHOCK_CAP}", *_spill_lines(found)]

    def exact_n() -> npt.NDArray[np.float64]:
        pmf = tank_shock_pmf(toughness)
        return np.array([float(pmf.get(k, 0)) for k in range(max(pmf) + 1)])

    def sample(rng: np.random.Generator, size: int, units: int) -> list[npt.NDArray[np.int64]]:
        n = np.minimum(rng.binomial(toughness, 1 / 3, size), TANK_SHOCK_CAP).astype(np.int64)
        return [n] * units  # one roll: the target's mortal wounds are the event's

    return _run("tank-shock", chosen, trials, seed, source=source, targets=found, exact_n=exact_n, sample=sample,
                explain=explain, stratagems=(stratagem,), explode=None, per_trial=8)


def deadly_demise(unit: str | Unit, targets: TargetLike | Sequence[TargetLike] = (), *, models: int = 1,
                  lib: Library | None = None, target_lib: Library | None = None,
                  method: Method | str = Method.MONTE_CARLO, trials: int = 1_000_000, seed: int | None = None,
                  target_models: int | None = None, wounds_left: int | None = None,
                  allocation: Allocation | str | None = None) -> EventResult:
    """Deadly Demise (R-10.1) when ``models`` models of ``unit`` are destroyed.

    Args:
        unit: a unit with Deadly Demise (a name, or a :class:`~mathhammer.model.Unit`), or the
            ability inline: ``"D3"``, ``"deadly demise D6"``, ``"1"``.
        targets: the units within 6" (each as ``--target`` takes it); none: the explosion
            chance and the mortal wounds any unit within 6" suffers.
        models: how many of its models are destroyed (1 to the unit's size); each rolls its D6.
        lib, target_lib, method, trials, seed: as :func:`tank_shock`.
        target_models, wounds_left, allocation: for one target given as text (with several,
            write the count in each: ``"5x intercessors"``, ``WOUNDS-LEFT=1``); ``allocation``
            for every target (None: durable), an error without one.

    Raises:
        MatchupError: a unit without Deadly Demise, ``models`` above its size;
        ProfileError: an unknown name; InputError: bad values.
    """
    chosen = _method(method)
    trials, seed = _check_trials(trials, seed)
    lib = _library(lib)
    target_lib = _library(target_lib, "target_lib", lib)
    x, source, explain = _demise_unit(lib, unit, models)
    models = int(models)  # numpy's integers too: the result records a Python int
    given = _given_targets(targets)
    if not given and (target_models is not None or wounds_left is not None or allocation is not None):
        option, value = next((o, v) for o, v in (("--target-models", target_models), ("--wounds-left", wounds_left),
                                                 ("--allocation", allocation)) if v is not None)
        raise InputError("applies to a target, and none is given", where=option,
                         value=getattr(value, "value", value), hint="name the units within 6\" with --target")
    if len(given) > 1 and (target_models is not None or wounds_left is not None):
        option = "--target-models" if target_models is not None else "--wounds-left"
        raise InputError("applies to one target; with several, give each its own", where=option,
                         value=target_models if target_models is not None else wounds_left,
                         hint="write it in the target: '5x intercessors', 'T4 SV3+ W2 MODELS5 WOUNDS-LEFT=1'")
    found = _targets(target_lib, given, target_models, wounds_left,
                     Allocation.DURABLE if allocation is None else allocation)
    explain += [f"R-10.1 Deadly Demise {x}: {models} model{'s' if models > 1 else ''} destroyed, each rolls one D6; "
                f"on a 6 each unit within 6\" suffers {x} mortal wounds"
                + ("" if x.is_fixed else f", {x} rolled separately for each unit and each model that explodes"),
                *_spill_lines(found)]

    def exact_n() -> npt.NDArray[np.float64]:
        return deadly_demise_pmf(x, models)

    def sample(rng: np.random.Generator, size: int, units: int) -> list[npt.NDArray[np.int64]]:
        exploded = rng.random((size, models)) < 1 / 6
        return [exploded.sum(axis=1), *(_roll(rng, x, exploded) for _ in range(units))]

    return _run("deadly-demise", chosen, trials, seed, source=source, targets=found, exact_n=exact_n, sample=sample,
                explain=explain, stratagems=(), explode=models,
                per_trial=models * (1 + x.count) * (len(found) + 1) + 8)


# --- resolving the arguments ------------------------------------------------------------------
def _library(lib: Library | None, where: str = "lib", default: Library | None = None) -> Library:
    """``lib`` checked to be a library (``where`` names the argument); None: ``default``, or
    :func:`~mathhammer.api.library`."""
    from .api import checked_library, library

    if lib is None:
        return library() if default is None else default
    return checked_library(lib, where)


def _given_targets(targets: Any) -> list[TargetLike]:
    """One target (a text is one, not iterated letter by letter) or several (a list, a tuple, a
    generator...)."""
    from .api import _many

    if isinstance(targets, (str, ResolvedTarget, TargetUnit, Target)):
        return [targets]
    if not _many(targets):
        raise InputError("must be a target or a list of targets", where="--target", value=type(targets).__name__,
                         hint="a unit name, inline text ('T4 SV3+ W2 MODELS5') or what mathhammer.target() returns")
    return list(targets)


def _method(method: Method | str) -> Method:
    from .api import enum_value

    chosen: Method = enum_value(Method, method, "method")
    return chosen


def _check_trials(trials: int, seed: int | None) -> tuple[int, int | None]:
    """``trials`` and ``seed`` checked (numpy's integers are whole numbers too), as Python ints."""
    from .engine.montecarlo import check_seed, check_trials

    check_trials(trials)
    check_seed(seed)
    return int(trials), None if seed is None else int(seed)


def _check_toughness(toughness: int, where: str) -> None:
    if isinstance(toughness, bool) or not isinstance(toughness, int) or not 1 <= toughness <= MAX_CHARACTERISTIC:
        raise InputError(f"a Toughness must be a whole number from 1 to {MAX_CHARACTERISTIC}", where=where,
                         value=toughness)


def _find_unit(lib: Library, text: str, where: str) -> Unit:
    """A unit by name; an unknown or ambiguous name is an error of the argument ``where``."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("no unit given", where=where, value=text)
    try:
        unit: Unit = lib.find(text.strip(), "unit")
    except ProfileError as e:
        raise ProfileError(e.what, where=where, value=text.strip(), hint=e.hint) from None
    return unit


def _vehicle(lib: Library, vehicle: str | Unit) -> tuple[int, dict[str, Any], list[str]]:
    """The Toughness Tank Shock rolls, the vehicle as JSON data, and explain lines."""
    if not isinstance(vehicle, (str, Unit)):
        raise InputError("a vehicle is a unit's name or its Toughness ('T10')", where="VEHICLE", value=vehicle)
    if isinstance(vehicle, str):
        inline = _TOUGHNESS.fullmatch(vehicle)
        if inline is not None:
            toughness = int(inline.group(1)) if len(inline.group(1)) <= 4 else MAX_CHARACTERISTIC + 1
            if not 1 <= toughness <= MAX_CHARACTERISTIC:
                raise InputError(f"a Toughness must be a whole number from 1 to {MAX_CHARACTERISTIC}",
                                 where="VEHICLE", value=vehicle.strip())
            return toughness, {"unit": None, "model": None, "T": toughness}, [
                f"Tank Shock: a VEHICLE model of Toughness {toughness} (given inline)"]
        unit = _find_unit(lib, vehicle, "VEHICLE")
    else:
        unit = vehicle
    cars = [m for m in unit.models if "VEHICLE" in unit.keywords | m.keywords]
    if not cars:
        raise MatchupError(f"{unit.name} is not a VEHICLE unit, and only a VEHICLE unit can Tank Shock (R-10.2)",
                           where="VEHICLE", value=vehicle if isinstance(vehicle, str) else unit.name,
                           hint="name a VEHICLE unit, or give the vehicle's Toughness inline: 'T10'")
    car = max(cars, key=lambda m: m.toughness)  # stable: the first listed among equals
    lines = [f"Tank Shock: {unit.name}'s VEHICLE model {car.name} (T{car.toughness})"]
    if len({m.toughness for m in cars}) > 1:
        lines[0] += (" selected: the VEHICLE model with the highest Toughness (ruling M60; the player chooses "
                     "one in Engagement Range)")
    return car.toughness, {"unit": unit.name, "model": car.name, "T": car.toughness}, lines


def _demise_unit(lib: Library, unit: str | Unit, models: int) -> tuple[DiceExpr, dict[str, Any], list[str]]:
    """Deadly Demise x, the unit as JSON data, and explain lines; ``models`` checked."""
    check_count(models, name="destroyed models", lo=None, hi=None, where="--models", error=InputError)
    models = int(models)
    if models < 1:
        raise InputError("at least one model must be destroyed", where="--models", value=models)
    if not isinstance(unit, (str, Unit)):
        raise InputError("a unit is a name or its Deadly Demise ('D3', 'D6', '1')", where="UNIT", value=unit)
    if isinstance(unit, str):
        if _DICE_LIKE.fullmatch(unit) and not _DICE.fullmatch(unit):
            raise InputError("Deadly Demise x is a number, D3, D6 or such dice plus a number ('D6+2', '2D6')",
                             where="UNIT", value=unit.strip())
        inline = _DICE.fullmatch(unit)
        if inline is not None:
            from .dice import parse

            x = parse("".join(inline.group(1).split()), where="UNIT")
            if x.maximum < 1:
                raise InputError("Deadly Demise must inflict at least 1 mortal wound", where="UNIT", value=unit)
            if models > MAX_TARGET_MODELS:
                raise InputError(f"at most {MAX_TARGET_MODELS:,} models", where="--models", value=models)
            return x, {"name": None, "deadly_demise": str(x), "models": None, "destroyed": models}, [
                f"Deadly Demise {x} (given inline)"]
        found = _find_unit(lib, unit, "UNIT")
    else:
        found = unit
    if found.deadly_demise is None:
        raise MatchupError(f"{found.name} has no Deadly Demise, so nothing explodes when its models are destroyed",
                           where="UNIT", value=unit if isinstance(unit, str) else found.name,
                           hint="name a unit with Deadly Demise, or give the ability inline: 'D3'")
    if models > found.model_count:
        raise MatchupError(f"{found.name} has {found.model_count} model{'s' if found.model_count > 1 else ''}",
                           where="--models", value=models, hint=f"give 1 to {found.model_count}")
    return found.deadly_demise, {"name": found.name, "deadly_demise": str(found.deadly_demise),
                                 "models": found.model_count, "destroyed": models}, [
        f"{found.name}: Deadly Demise {found.deadly_demise}, {found.model_count} "
        f"model{'s' if found.model_count > 1 else ''}"]


def _targets(lib: Library, given: Sequence[TargetLike], target_models: int | None, wounds_left: int | None,
             allocation: Allocation | str) -> list[ResolvedTarget]:
    from .api import enum_value
    from .resolve import resolve_target_unit

    order: Allocation = enum_value(Allocation, allocation, "allocation")
    for name, value in (("--target-models", target_models), ("--wounds-left", wounds_left)):
        if value is not None:  # as mathhammer.target() checks them
            check_count(value, name=name.lstrip("-").replace("-", " "), lo=None, hi=None, where=name, error=InputError)
    target_models = None if target_models is None else int(target_models)
    wounds_left = None if wounds_left is None else int(wounds_left)
    out: list[ResolvedTarget] = []
    for t in given:
        if isinstance(t, str):
            out.append(resolve_target_unit(lib, t, models=target_models, wounds_left=wounds_left, allocation=order))
            continue
        if target_models is not None or wounds_left is not None:
            raise InputError("a target given as an object carries its own models and wounds left",
                             where="--target-models" if target_models is not None else "--wounds-left",
                             value=target_models if target_models is not None else wounds_left)
        if isinstance(t, ResolvedTarget):
            out.append(t)
        elif isinstance(t, TargetUnit):
            out.append(ResolvedTarget(t, None))
        elif isinstance(t, Target):
            out.append(ResolvedTarget(TargetUnit(name=t.name, groups=(t,)), None))
        else:
            raise InputError("a target is a name, inline text or a target object", where="--target", value=repr(t))
    return out


def _spill_lines(found: Sequence[ResolvedTarget]) -> list[str]:
    """Explain lines: how the mortal wounds reach each target (R-7.6, R-9.3, R-8.5)."""
    lines: list[str] = []
    for r in found:
        lines += list(r.explain)
        t = r.target
        fnp = sorted({g.feel_no_pain for g in t.groups if g.feel_no_pain is not None})
        text = f"{t.name}: mortal wounds, no saving throw (R-7.6); one damage each, spilling over to the next model"
        text += " until the unit is destroyed (R-9.3)" if all(g.wounds is not None for g in t.groups) else \
            " (unlimited wounds: summed, R-9.5)"
        if fnp:
            text += f"; Feel No Pain {'/'.join(f'{v}+' for v in fnp)} rolled for each (R-8.5)"
        lines.append(text)
    return lines


def _roll(rng: np.random.Generator, x: DiceExpr, exploded: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """For each trial, the sum of one roll of ``x`` for each model that exploded."""
    size, models = exploded.shape
    if x.is_fixed:
        return np.asarray(exploded.sum(axis=1) * x.plus, dtype=np.int64)
    dice = rng.integers(1, 7, size=(size, models, x.count))
    if x.sides == 3:
        dice = (dice + 1) // 2  # D3 = ceil(D6 / 2)
    rolled = dice.sum(axis=2) + x.plus
    return np.asarray((rolled * exploded).sum(axis=1), dtype=np.int64)


# --- the engines -----------------------------------------------------------------------------
#: Draws a chunk: (generator, trials, units) -> per-trial counts (see tank_shock and deadly_demise).
Sampler = Callable[[np.random.Generator, int, int], list[npt.NDArray[np.int64]]]
#: The exact pmf of the number of mortal wounds one unit suffers (computed only when needed).
ExactN = Callable[[], npt.NDArray[np.float64]]


def _run(event: str, method: Method, trials: int, seed: int | None, *, source: dict[str, Any],
         targets: list[ResolvedTarget], exact_n: ExactN, sample: Sampler, explain: list[str],
         stratagems: tuple[dict[str, Any], ...], explode: int | None, per_trial: int) -> EventResult:
    """The engines ``method`` asks for; ``per_trial``: about how many random numbers a trial draws
    (a Monte Carlo chunk draws about :data:`_CHUNK_VALUES`)."""
    notes = tuple(n for r in targets for n in r.notes)
    common: dict[str, Any] = {"source": source, "stratagems": stratagems, "explain": tuple(explain)}
    if method is Method.EXACT:
        return _exact(event, exact_n, targets, explode, warnings=notes, **common)
    if method is Method.MONTE_CARLO:
        return _monte_carlo(event, trials, seed, targets, sample, explode, per_trial, warnings=notes, **common)
    mc = _monte_carlo(event, trials, seed, targets, sample, explode, per_trial, warnings=notes, **common)
    try:
        ex = _exact(event, exact_n, targets, explode, warnings=notes, **common)
    except NotExactError as e:
        return replace(mc, warnings=(*notes, f"{e.message()}; --method both ran Monte Carlo alone"))
    return replace(ex, method="both", trials=mc.trials, seed=mc.seed, monte_carlo=mc, agreement=_agreement(ex, mc),
                   seconds=ex.seconds + mc.seconds)


def _exact(event: str, exact_n: ExactN, targets: list[ResolvedTarget], explode: int | None,
           **common: Any) -> EventResult:
    from .engine.exact import _trim
    from .engine.mortal import spill

    start = time.perf_counter()
    outcomes = []
    n = _trim(exact_n())
    for r in targets:
        s = spill(r.target, n.probabilities.tolist())
        outcomes.append(TargetOutcome(target=r.target, mortal_wounds=n, damage=s.damage,
                                      models_destroyed=s.models_destroyed, groups=s.groups))
    extra: dict[str, Any] = {}
    if explode is not None:
        k = explosions_pmf(explode)
        extra = {"explosions": _trim(np.array([float(k[i]) for i in range(explode + 1)])),
                 "p_explode": float(1 - k[0])}
    return EventResult(event=event, method="exact", trials=None, seed=None, mortal_wounds=n, targets=tuple(outcomes),
                       seconds=time.perf_counter() - start, **extra, **common)


class _Histogram:
    """Counts of values 0, 1, 2, ... added chunk by chunk."""

    def __init__(self) -> None:
        self.counts = np.zeros(1, dtype=np.int64)

    def add(self, values: npt.NDArray[np.int64]) -> None:
        found = np.bincount(values)
        if found.size > self.counts.size:
            self.counts = np.pad(self.counts, (0, found.size - self.counts.size))
        self.counts[: found.size] += found

    def distribution(self) -> Distribution:
        return Distribution.from_counts(self.counts)


def _monte_carlo(event: str, trials: int, seed: int | None, targets: list[ResolvedTarget], sample: Sampler,
                 explode: int | None, per_trial: int, **common: Any) -> EventResult:
    from .engine.mortal import simulate_spill

    seed = secrets.randbits(63) if seed is None else seed
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    chunk = max(256, _CHUNK_VALUES // per_trial)
    mortal = _Histogram()
    explosions = _Histogram()
    hists = [(_Histogram(), _Histogram(), _Histogram(), [_Histogram() for _ in r.target.groups]) for r in targets]
    done = 0
    while done < trials:  # chunk sizes depend on trials only: a seed gives the same counts every time
        size = min(chunk, trials - done)
        drawn = sample(rng, size, len(targets) + 1)
        if explode is not None:
            explosions.add(drawn.pop(0))
        mortal.add(drawn[0])
        for r, n, (h_n, h_lost, h_models, h_groups) in zip(targets, drawn[1:], hists, strict=True):
            lost, models, per_group = simulate_spill(r.target, n, rng)
            h_n.add(n)
            h_lost.add(lost)
            h_models.add(models)
            for h, g in zip(h_groups, per_group, strict=False):
                h.add(g)
        done += size
    outcomes = []
    for r, (h_n, h_lost, h_models, h_groups) in zip(targets, hists, strict=True):
        order = r.target.allocation_order()
        groups = tuple(GroupResult(name=g.name, models=g.models, models_destroyed=h.distribution(), leader=g.leader)
                       for g, h in zip(order, h_groups, strict=True))
        outcomes.append(TargetOutcome(target=r.target, mortal_wounds=h_n.distribution(), damage=h_lost.distribution(),
                                      models_destroyed=h_models.distribution(), groups=groups))
    extra: dict[str, Any] = {}
    if explode is not None:
        k = explosions.distribution()
        extra = {"explosions": k, "p_explode": k.p_at_least(1)}
    return EventResult(event=event, method="monte-carlo", trials=trials, seed=seed, mortal_wounds=mortal.distribution(),
                       targets=tuple(outcomes), seconds=time.perf_counter() - start, **extra, **common)


def _agreement(ex: EventResult, mc: EventResult) -> EventAgreement:
    """Every distribution of the Monte Carlo run against the exact one."""
    from .engine.agreement import compare

    assert mc.trials is not None
    trials = mc.trials

    def check(a: Distribution, b: Distribution) -> Agreement:
        return compare(a, a, b, b, trials)

    checks = [("mortal_wounds", check(mc.mortal_wounds, ex.mortal_wounds))]
    if ex.explosions is not None and mc.explosions is not None:
        checks.append(("explosions", check(mc.explosions, ex.explosions)))
    for i, (m, e) in enumerate(zip(mc.targets, ex.targets, strict=True)):
        prefix = "" if ex.event == "tank-shock" else f"targets[{i}]."
        if ex.event != "tank-shock":
            checks.append((f"{prefix}mortal_wounds", check(m.mortal_wounds, e.mortal_wounds)))
        checks.append((f"{prefix}damage", check(m.damage, e.damage)))
        checks.append((f"{prefix}models_destroyed", check(m.models_destroyed, e.models_destroyed)))
    return EventAgreement(tuple(checks))
