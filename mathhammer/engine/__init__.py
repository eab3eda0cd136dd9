"""Engines: turn a matchup into a :class:`~mathhammer.result.DamageResult`.

Nothing here imports numba at import time: the Monte Carlo engine imports the kernel when it
runs, and the exact engine never does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .. import describe
from ..compile import compile_matchup
from ..errors import NotExactError
from ..model import Matchup, Method
from ..result import DamageResult

__all__ = ["Method", "analyse"]


def analyse(matchup: Matchup, *, method: Method = Method.MONTE_CARLO, trials: int = 1_000_000,
            seed: int | None = None, threads: int | None = None, notes: tuple[str, ...] = (),
            merged: tuple[str, ...] = ()) -> DamageResult:
    """Compile ``matchup`` and compute what it does.

    Args:
        matchup: weapon, target and context.
        method: Monte Carlo, exact, or both (exact figures, Monte Carlo estimates and their
            agreement; Monte Carlo alone, with a warning, when the exact engine cannot).
        trials: Monte Carlo trials.
        seed: None draws one; the result records it.
        threads: numba threads; results do not depend on it.
        notes: warnings gathered while building the matchup, kept with the result.
        merged: explain lines of the profile modifiers merged into the context.

    Raises:
        NotExactError: ``method`` exact for a scenario the exact engine cannot compute.
    """
    compiled = compile_matchup(matchup)
    warnings = list(notes) + list(compiled.plan.warnings)
    extra: dict[str, Any] = {}
    if method is Method.MONTE_CARLO:
        result = _monte_carlo(compiled.inputs, trials, seed, threads)
    elif method is Method.EXACT:
        from . import exact

        result = exact.run(compiled.inputs)
    else:
        from . import exact
        from .agreement import compare

        try:
            ex = exact.run(compiled.inputs)
        except NotExactError as e:
            warnings.append(f"{e.message()}; --method both ran Monte Carlo alone")
            result = _monte_carlo(compiled.inputs, trials, seed, threads)
        else:
            mc = _monte_carlo(compiled.inputs, trials, seed, threads)
            agreement = compare(mc.damage, mc.models_destroyed, ex.damage, ex.models_destroyed, trials)
            result = replace(ex, method="both", trials=mc.trials, seed=mc.seed)
            extra = {"monte_carlo": mc, "agreement": agreement}
            if not agreement.agrees:
                warnings.append(agreement.line())
    provenance = {
        "attacker": describe.attacker_dict(matchup),
        "target": describe.target_dict(matchup.target),
        "context": describe.context_dict(matchup.context),
        "thresholds": compiled.plan.to_dict(),
        "explain": list(merged) + list(compiled.plan.explain),
        "warnings": warnings,
        "rules": matchup.context.rules.value,
        "attacker_known": matchup.attacker is not None,
        "matchup": matchup,
        **extra,
    }
    return replace(result, provenance=provenance)


def _monte_carlo(inputs: Any, trials: int, seed: int | None, threads: int | None) -> DamageResult:
    from . import montecarlo

    return montecarlo.run(inputs, trials=trials, seed=seed, threads=threads)
