"""The choices of ``compare --sort`` and ``sweep --metric`` and the sweep's default grid: the
few names the command line needs to define its options, kept apart from the modules that run
them so that start-up (and ``--help``) does not import those.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import DamageResult

__all__ = ["DEFAULT_SAVES", "DEFAULT_TOUGHNESS", "DEFAULT_TRIALS", "Metric", "SortKey"]


#: The sweep's default axes: T1-T14 and Sv2+ to no armour save (written ``SV-``, the value 7).
DEFAULT_TOUGHNESS = "1-14"
DEFAULT_SAVES = "2-7"
#: Trials per sweep cell unless told: a 14 x 6 grid then runs 8.4 million trials.
DEFAULT_TRIALS = 100_000


class SortKey(str, Enum):
    """``--sort`` values: what a ranking orders by (highest first)."""

    MEAN = "mean"
    PER_POINTS = "per-points"
    P_DESTROY = "p-destroy"
    MODELS = "models"


class Metric(str, Enum):
    """What a heat-map cell shows (``--metric``); every record carries all four blocks anyway."""

    MEAN = "mean"  # mean wounds lost
    P_KILL_MODEL = "p-kill-model"  # P(at least one model destroyed)
    MODELS = "models"  # mean models destroyed
    P_DESTROY = "p-destroy"  # P(every model destroyed)

    @property
    def label(self) -> str:
        """The words for it (titles, legends)."""
        return {"mean": "mean damage", "p-kill-model": "P(at least one model destroyed)",
                "models": "mean models destroyed", "p-destroy": "P(unit destroyed)"}[self.value]

    @property
    def probability(self) -> bool:
        """Whether the value is a probability (0 to 1; shown as a percentage)."""
        return self in (Metric.P_KILL_MODEL, Metric.P_DESTROY)

    def of(self, result: DamageResult) -> float:
        """The metric's value for one cell."""
        if self is Metric.MEAN:
            return result.damage.mean()
        if self is Metric.MODELS:
            return result.models_destroyed.mean()
        if self is Metric.P_KILL_MODEL:
            return result.models_destroyed.p_at_least(1)
        return result.p_destroy_unit()

    def sem(self, result: DamageResult) -> float | None:
        """Its standard error: 0 when exact; a probability's is sqrt(p (1 - p) / trials)."""
        dist = result.damage if self is Metric.MEAN else result.models_destroyed
        if self.probability:
            if result.method != "monte-carlo":
                return 0.0
            p = self.of(result)
            return math.sqrt(p * (1.0 - p) / result.trials) if result.trials else None
        return 0.0 if result.method != "monte-carlo" else dist.sem()
