"""Engines: turn a matchup into a :class:`~mathhammer.result.DamageResult`.

Nothing here imports numba at import time: the Monte Carlo engine imports the kernel when it
runs, and the exact engine never does.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from .. import describe
from ..compile import Compiled, UnitInputs, check_monte_carlo, compile_matchup
from ..errors import MatchupError, NotExactError
from ..model import Matchup, Method
from ..result import DamageResult
from . import _parts
from .alike import merge, split

__all__ = ["Method", "analyse"]


def analyse(matchup: Matchup, *, method: Method = Method.MONTE_CARLO, trials: int = 1_000_000,
            seed: int | None = None, threads: int | None = None, notes: tuple[str, ...] = (),
            merged: tuple[str, ...] = (), stages: bool = True,
            stratagems: tuple[dict[str, Any], ...] = ()) -> DamageResult:
    """Compile ``matchup`` and compute what it does.

    Args:
        matchup: weapon, target and context.
        method: Monte Carlo, exact, or both (exact figures, Monte Carlo estimates and their
            agreement; one engine alone, with a warning, when the other one refuses the request).
        trials: Monte Carlo trials.
        seed: None draws one; the result records it.
        threads: numba threads; results do not depend on it.
        notes: warnings gathered while building the matchup, kept with the result.
        merged: explain lines of the profile modifiers merged into the context.
        stages: whether the engines give the stage distributions (hits, wounds, ...); without
            them a run is quicker (the exact engine's much smaller too) and its ``stages`` are
            empty.
        stratagems: the stratagems used (name, cp, side, detachment), kept with the result.

    Raises:
        NotExactError: the exact engine cannot compute the request (or estimates it would take
            more than the limits of :mod:`mathhammer.limits`).
        MatchupError: the Monte Carlo histograms would take more memory than the limit.
        Both before anything large is allocated; ``both`` raises only if both engines refuse.
    """
    alike = merge(matchup.target)
    compiled = _compiled(matchup if alike is None else replace(matchup, target=alike.target))
    unit = compiled.unit
    assert unit is not None
    warnings = list(notes) + list(compiled.plan.warnings)
    extra: dict[str, Any] = {}
    if method is Method.MONTE_CARLO:
        result = _monte_carlo(unit, trials, seed, threads, stages)
    elif method is Method.EXACT:
        result = _exact(unit, stages)
        if stages and unit.n_groups > 1 and "unsaved" not in result.stages:
            warnings.append("the unsaved and damage stages depend on the allocation against several model groups: "
                            "the exact engine leaves them out (Monte Carlo counts them)")
    else:
        result, extra = _both(unit, trials, seed, threads, warnings, stages)
    if alike is not None:
        result = replace(result, groups=split(result.groups, alike))
        mc = extra.get("monte_carlo")
        if mc is not None:
            extra["monte_carlo"] = replace(mc, groups=split(mc.groups, alike))
    provenance = {
        "attacker": describe.attacker_dict(matchup),
        "target": describe.target_dict(matchup.target),
        "context": describe.context_dict(matchup.context),
        "thresholds": compiled.plan.to_dict(),
        "explain": list(merged) + list(compiled.plan.explain) + list(alike.explain if alike else ()),
        "warnings": warnings,
        "rules": matchup.context.rules.value,
        "attacker_known": matchup.attacker is not None,
        "stratagems": list(stratagems),
        "matchup": matchup,
        **extra,
    }
    return replace(result, provenance=provenance)


def _compiled(matchup: Matchup) -> Compiled:
    """:func:`~mathhammer.compile.compile_matchup`, remembered for the last few matchups: it is a
    pure function of the (frozen) matchup, and its tables are read-only arrays, so equal
    matchups may share one. Compiling takes 0.3-1.5 ms, as long as a run of 1e5 trials on two
    threads, and a script that builds an attack once and runs it many times (mathhammer.api)
    compiled it for every run."""
    try:
        hash(matchup)
    except TypeError:  # (a field that cannot be hashed: compiled every time)
        return compile_matchup(matchup)
    with _COMPILED_LOCK:
        found = _COMPILED.pop(matchup, None)
        if found is not None:
            _COMPILED[matchup] = found  # most recently used last
            return found
    found = compile_matchup(matchup)
    with _COMPILED_LOCK:
        _COMPILED[matchup] = found
        while len(_COMPILED) > _COMPILED_KEPT:
            del _COMPILED[next(iter(_COMPILED))]
    return found


#: Matchups compiled last (a few kilobytes each), as _compiled keeps them.
_COMPILED_KEPT = 32
_COMPILED: dict[Matchup, Compiled] = {}
_COMPILED_LOCK = threading.Lock()


def _exact(unit: UnitInputs, stages: bool = True) -> DamageResult:
    """The exact engine: its closed forms for one weapon group at identical untouched models,
    the allocation chain of :mod:`.exact_units` otherwise (``stages``: with the stage breakdown,
    capped as Monte Carlo's are once computed whole)."""
    from . import exact

    if unit.single:
        result = exact.run(unit.pairs[0][0], stages=stages, hazard=(unit.hazard_firing, unit.hazard_groups))
        groups, weapons = _parts.single(unit, result.damage, result.models_destroyed)
        result = replace(result, groups=groups, weapons=weapons)
    else:
        from . import exact_units

        result = exact_units.run(unit, stages=stages)
    return replace(result, stages={k: exact.capped_stage(v) for k, v in result.stages.items()})


def _both(inputs: UnitInputs, trials: int, seed: int | None, threads: int | None,
          warnings: list[str], stages: bool = True) -> tuple[DamageResult, dict[str, Any]]:
    """Both engines and their agreement; one alone (with a warning in ``warnings``) when the
    other refuses the request."""
    from .agreement import compare

    try:
        ex = _exact(inputs, stages)
    except NotExactError as e:
        warnings.append(f"{e.message()}; --method both ran Monte Carlo alone")
        return _monte_carlo(inputs, trials, seed, threads, stages), {}
    try:
        check_monte_carlo(inputs)
    except MatchupError as e:
        warnings.append(f"{e.message()}; --method both gives the exact result alone")
        return ex, {}
    mc = _monte_carlo(inputs, trials, seed, threads, stages)
    agreement = compare(mc.damage, mc.models_destroyed, ex.damage, ex.models_destroyed, trials,
                        (mc.hazardous, mc.hazard_models), (ex.hazardous, ex.hazard_models))
    if not agreement.agrees:
        warnings.append(agreement.line())
    return replace(ex, method="both", trials=mc.trials, seed=mc.seed), {"monte_carlo": mc, "agreement": agreement}


def _monte_carlo(inputs: UnitInputs, trials: int, seed: int | None, threads: int | None,
                 stages: bool = True) -> DamageResult:
    from . import montecarlo

    check_monte_carlo(inputs)
    return montecarlo.run(inputs, trials=trials, seed=seed, threads=threads, stages=stages)
