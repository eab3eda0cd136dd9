"""DamageResult: one distribution type for both engines, with its statistics and JSON form."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["SCHEMA", "DamageResult", "Distribution"]

SCHEMA = "mathhammer.result/1"


@dataclass(frozen=True, slots=True)
class Distribution:
    """A distribution over 0, 1, 2, ...: ``probabilities[k]`` = P(X = k).

    ``trials`` is the number of Monte Carlo samples behind it (``None`` when exact): it sets the
    standard error of the mean. ``sd`` is the population standard deviation of this distribution
    (for a Monte Carlo estimate: of the samples, dividing by n); ``sd_sample`` is the sample
    standard deviation (dividing by n - 1), the estimate of the true sd, undefined below two
    trials.

    A *capped* distribution (``capped_at`` = K, a Monte Carlo stage histogram) lists values
    0 .. K - 1 one by one and ``probabilities[K]`` = P(X >= K); its ``moments`` (mean, sd) are
    those of the uncapped samples, so ``mean`` and ``sd`` stay exact while the quantiles and
    ``p_at_least`` hold up to K (a quantile of K means "K or more").
    """

    probabilities: npt.NDArray[np.float64]
    trials: int | None = None
    counts: npt.NDArray[np.int64] | None = None
    capped_at: int | None = None
    moments: tuple[float, float] | None = None

    @classmethod
    def from_counts(cls, counts: npt.NDArray[np.int64]) -> Distribution:
        """From a histogram of samples; trailing never-seen values are dropped."""
        counts = np.asarray(counts, dtype=np.int64)
        nz = np.flatnonzero(counts)
        counts = counts[: (nz[-1] + 1) if nz.size else 1]
        n = int(counts.sum())
        return cls(counts / n, n, counts)

    @classmethod
    def from_capped_counts(cls, counts: npt.NDArray[np.int64], cap: int, over_sum: float,
                           over_squares: float) -> Distribution:
        """From a histogram whose last bin, value ``cap``, counts every sample from ``cap`` up,
        with the sum and sum of squares of those samples (the kernel's ``out_over``). When no
        sample reached ``cap`` nothing was cut off: a plain :meth:`from_counts`."""
        counts = np.asarray(counts, dtype=np.int64)
        if counts.size != cap + 1 or counts[cap] == 0:
            return cls.from_counts(counts)
        n = int(counts.sum())
        below = np.arange(cap, dtype=np.float64)
        head = counts[:cap].astype(np.float64)
        mean = (float(below @ head) + over_sum) / n
        # E[X^2] - mean^2: the samples' own variance (dividing by n), as sd() of a plain histogram
        variance = (float((below * below) @ head) + over_squares) / n - mean * mean
        return cls(counts / n, n, counts, capped_at=cap, moments=(mean, math.sqrt(max(0.0, variance))))

    @property
    def support(self) -> npt.NDArray[np.int64]:
        """Values 0..max."""
        return np.arange(self.probabilities.size, dtype=np.int64)

    def mean(self) -> float:
        """E[X] (of the uncapped samples when capped)."""
        if self.moments is not None:
            return self.moments[0]
        return float(self.support @ self.probabilities)

    def sd(self) -> float:
        """Population standard deviation of X (of the uncapped samples when capped)."""
        if self.moments is not None:
            return self.moments[1]
        mu = self.mean()
        return math.sqrt(max(0.0, float(((self.support - mu) ** 2) @ self.probabilities)))

    def sd_sample(self) -> float | None:
        """Sample standard deviation (Bessel's n - 1) of a Monte Carlo estimate; None when exact
        or with fewer than two trials (one sample says nothing about the spread)."""
        if self.trials is None or self.trials < 2:
            return None
        return self.sd() * math.sqrt(self.trials / (self.trials - 1))

    def sem(self) -> float | None:
        """Standard error of the mean: sample sd / sqrt(trials); 0 for an exact distribution,
        None with fewer than two trials."""
        if self.trials is None:
            return 0.0
        sd = self.sd_sample()
        return None if sd is None else sd / math.sqrt(self.trials)

    def cdf(self) -> npt.NDArray[np.float64]:
        """P(X <= k) for each k."""
        return np.minimum(np.cumsum(self.probabilities), 1.0)

    def p_at_least(self, k: int) -> float:
        """P(X >= k), k included."""
        if k <= 0:
            return 1.0
        return float(self.probabilities[k:].sum())

    def quantile(self, q: float) -> int:
        """Smallest k with P(X <= k) >= q (q in [0, 1])."""
        c = self.cdf()
        return int(np.searchsorted(c, q - 1e-12, side="left"))

    def to_dict(self) -> dict[str, Any]:
        """The stat block of the JSON contract; a capped distribution adds ``capped_at`` (its
        last ``distribution`` row, and a quantile equal to it, mean "that value or more")."""
        p = self.probabilities
        tail = np.cumsum(p[::-1])[::-1]
        capped = {} if self.capped_at is None else {"capped_at": self.capped_at}
        return {
            "mean": self.mean(),
            "sd": self.sd(),
            "sd_sample": self.sd_sample(),
            "sem": self.sem(),
            "median": self.quantile(0.5),
            "p05": self.quantile(0.05),
            "p95": self.quantile(0.95),
            "distribution": [{"value": int(k), "p": float(p[k]), "p_at_least": float(min(1.0, tail[k]))}
                             for k in range(p.size)],
            **capped,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class DamageResult:
    """What one matchup does: wounds lost by the target and models destroyed.

    ``damage`` counts wounds actually lost by the target (after Feel No Pain and allocation).
    """

    method: str
    trials: int | None
    seed: int | None
    damage: Distribution
    models_destroyed: Distribution
    target_models: int
    seconds: float = 0.0
    stages: dict[str, Distribution] = field(default_factory=dict)
    hazardous: Distribution | None = None
    hazard_models: Distribution | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    def p_destroy_unit(self) -> float:
        """P(every model of the target is destroyed)."""
        return self.models_destroyed.p_at_least(self.target_models)

    def _both_dict(self, writer: dict[str, str]) -> dict[str, Any]:
        """With ``method`` both: the Monte Carlo estimates and the ``agreement`` object."""
        mc = self.provenance.get("monte_carlo")
        if mc is None:
            return {}
        return {"monte_carlo": {"trials": mc.trials, "seed": mc.seed, "damage": mc.damage.to_dict(),
                                "models_destroyed": mc.models_destroyed.to_dict(),
                                "p_destroy_unit": mc.p_destroy_unit(), "simulate_seconds": mc.seconds},
                "agreement": self.provenance["agreement"].to_dict()}

    def _hazard_dict(self) -> dict[str, Any] | None:
        """The ``hazardous`` stat block: wounds the firing unit loses to Hazardous tests, and
        (when its profile is known) the chance it loses a model."""
        if self.hazardous is None:
            return None
        out = self.hazardous.to_dict()
        if self.hazard_models is not None and self.provenance.get("attacker_known"):
            out["models_lost"] = self.hazard_models.to_dict()
            out["p_lose_model"] = self.hazard_models.p_at_least(1)
        return out

    def to_dict(self, writer: dict[str, str]) -> dict[str, Any]:
        """The JSON document (schema ``mathhammer.result/1``); descriptive objects come from
        ``provenance`` (attacker, target, context, thresholds, warnings)."""
        prov = self.provenance
        return {
            "schema": SCHEMA,
            "writer": writer,
            "method": self.method,
            "trials": self.trials,
            "seed": self.seed,
            "attacker": prov.get("attacker"),
            "target": prov.get("target"),
            "context": prov.get("context"),
            "thresholds": prov.get("thresholds"),
            "damage": self.damage.to_dict(),
            "models_destroyed": self.models_destroyed.to_dict(),
            "p_destroy_unit": self.p_destroy_unit(),
            "stages": {name: d.to_dict() for name, d in self.stages.items()},
            "hazardous": self._hazard_dict(),
            "explain": list(prov.get("explain", [])),
            **self._both_dict(writer),
            "warnings": list(prov.get("warnings", [])),
            "timing": {"compute_seconds": self.seconds},
        }
