"""Engines: turn a matchup into a :class:`~mathhammer.result.DamageResult`.

Nothing here imports numba at import time; the Monte Carlo engine imports the kernel when
it runs.
"""

from __future__ import annotations

from dataclasses import replace

from .. import describe
from ..compile import compile_matchup
from ..model import Matchup
from ..result import DamageResult

__all__ = ["analyse"]


def analyse(matchup: Matchup, *, trials: int = 1_000_000, seed: int | None = None,
            threads: int | None = None, notes: tuple[str, ...] = (), merged: tuple[str, ...] = ()) -> DamageResult:
    """Compile ``matchup`` and simulate it.

    Args:
        matchup: weapon, target and context.
        trials: Monte Carlo trials.
        seed: None draws one; the result records it.
        threads: numba threads; results do not depend on it.
        notes: warnings gathered while building the matchup, kept with the result.
        merged: explain lines of the profile modifiers merged into the context.
    """
    from . import montecarlo

    compiled = compile_matchup(matchup)
    result = montecarlo.run(compiled.inputs, trials=trials, seed=seed, threads=threads)
    provenance = {
        "attacker": describe.attacker_dict(matchup),
        "target": describe.target_dict(matchup.target),
        "context": describe.context_dict(matchup.context),
        "thresholds": compiled.plan.to_dict(),
        "explain": list(merged) + list(compiled.plan.explain),
        "warnings": list(notes) + list(compiled.plan.warnings),
        "rules": matchup.context.rules.value,
        "attacker_known": matchup.attacker is not None,
        "matchup": matchup,
    }
    return replace(result, provenance=provenance)
