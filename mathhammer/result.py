"""DamageResult: one distribution type for both engines, with its statistics and JSON form."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["ROW_BLOCK", "SCHEMA", "DamageResult", "Distribution", "GroupResult", "RowsHook", "WeaponShare"]

SCHEMA = "mathhammer.result/1"
#: Rows per block of :meth:`Distribution.iter_rows`: small enough that a block's Python
#: numbers stay a few MB, large enough that the per-block overhead does not show.
ROW_BLOCK = 4096
#: Stands in for each ``distribution`` list of the JSON document (see ``to_dict(rows=...)``).
RowsHook = Callable[["Distribution"], Any]


#: The quantiles of a stat block: median, p05, p95.
_QUANTILES = np.array([0.5, 0.05, 0.95])
#: A quantile q is the smallest k with P(X <= k) >= q, allowing for the cdf's rounding.
_BELOW = 1e-12
#: How far past 0 or 1 float rounding takes a probability (an exact engine's sum of thousands
#: of terms is off by a few units of 1e-16).
_ROUNDING = 1e-9


def _from_counts(trials: int, counts: npt.NDArray[np.int64], capped_at: int | None,
                 moments: tuple[float, float] | None) -> Distribution:
    """A pickled Monte Carlo distribution (:meth:`Distribution.__reduce__`)."""
    return Distribution(counts / trials, trials, counts, capped_at, moments)


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
    those of the uncapped samples (up to float64 rounding), while the quantiles and
    ``p_at_least`` hold up to K (a quantile of K means "K or more").
    """

    probabilities: npt.NDArray[np.float64]
    trials: int | None = None
    counts: npt.NDArray[np.int64] | None = None
    capped_at: int | None = None
    moments: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        p = self.probabilities
        if self.counts is None and p.size and (float(p.min()) < 0.0 or float(p.max()) > 1.0):  # (counts / n: never)
            # an exact engine's sums rounded past a bound (1.0000000000000004, -1e-19): a
            # probability is never outside [0, 1], in any output (a value further out is no
            # rounding, and is left for what reads it to see)
            inside = np.where((p > 1.0) & (p <= 1.0 + _ROUNDING), 1.0, p)
            inside = np.where((inside < 0.0) & (inside >= -_ROUNDING), 0.0, inside)
            object.__setattr__(self, "probabilities", inside)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (for a worker process's result, say) without the probabilities when they are
        the counts over the trials, as a Monte Carlo histogram's are: they are divided again on
        loading, to the same bits, and the pickle is half the size."""
        fields = (self.trials, self.counts, self.capped_at, self.moments)
        if (self.counts is not None and self.trials and self.counts.shape == self.probabilities.shape
                and np.array_equal(self.probabilities, self.counts / self.trials)):
            return _from_counts, fields
        return Distribution, (self.probabilities, *fields)

    @classmethod
    def from_counts(cls, counts: npt.NDArray[np.int64]) -> Distribution:
        """From a histogram of samples; trailing never-seen values are dropped (a copy: the
        kernel's histogram spans every value the target could take, a million bins)."""
        counts = np.asarray(counts, dtype=np.int64).ravel()
        nz = counts.nonzero()[0]  # (np.flatnonzero costs twice as much on a run's dozen small ones)
        counts = counts[: (nz[-1] + 1) if nz.size else 1].copy()
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
        return self._sd_sample(self.sd())

    def _sd_sample(self, sd: float) -> float | None:
        if self.trials is None or self.trials < 2:
            return None
        return sd * math.sqrt(self.trials / (self.trials - 1))

    def sem(self) -> float | None:
        """Standard error of the mean: sample sd / sqrt(trials); 0 for an exact distribution,
        None with fewer than two trials."""
        return self._sem(self.sd_sample())

    def _sem(self, sd_sample: float | None) -> float | None:
        if self.trials is None:
            return 0.0
        return None if sd_sample is None else sd_sample / math.sqrt(self.trials)

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
        return int(np.searchsorted(self.cdf(), q - _BELOW, side="left"))

    def tail(self) -> npt.NDArray[np.float64]:
        """P(X >= k) for every k, summed from the top (the JSON rows' ``p_at_least`` before it
        is capped at 1)."""
        p = self.probabilities
        return np.cumsum(p[::-1])[::-1]

    def iter_rows(self, block: int = ROW_BLOCK) -> Iterator[list[tuple[int, float, float]]]:
        """The ``distribution`` rows of :meth:`to_dict` as (value, p, p_at_least) tuples of
        Python numbers, ``block`` rows at a time, so that a writer never holds them all."""
        p = self.probabilities
        tail = self.tail()
        for lo in range(0, p.size, block):
            hi = min(p.size, lo + block)
            # tolist() gives the same floats as float(p[k]); min keeps to_dict's NaN handling
            yield [(k, pk, min(1.0, tk))
                   for k, pk, tk in zip(range(lo, hi), p[lo:hi].tolist(), tail[lo:hi].tolist(), strict=True)]

    def to_dict(self, rows: RowsHook | None = None) -> dict[str, Any]:
        """The stat block of the JSON contract; a capped distribution adds ``capped_at`` (its
        last ``distribution`` row, and a quantile equal to it, mean "that value or more").

        ``rows``, when given, builds the ``distribution`` entry in place of the list of rows
        (a streaming writer puts a placeholder there and writes the rows itself)."""
        capped = {} if self.capped_at is None else {"capped_at": self.capped_at}
        # each figure computed once (a compare of thousands of rows makes thousands of these):
        # the same arithmetic as mean(), sd(), sd_sample(), sem() and quantile()
        sd = self.sd()
        sd_sample = self._sd_sample(sd)
        median, p05, p95 = np.searchsorted(self.cdf(), _QUANTILES - _BELOW, side="left").tolist()
        return {
            "mean": self.mean(),
            "sd": sd,
            "sd_sample": sd_sample,
            "sem": self._sem(sd_sample),
            "median": median,
            "p05": p05,
            "p95": p95,
            "distribution": self._row_dicts() if rows is None else rows(self),
            **capped,
        }

    def _row_dicts(self) -> list[dict[str, Any]]:
        """Every row of the ``distribution`` list, as dicts."""
        return [{"value": k, "p": pk, "p_at_least": tk} for rows in self.iter_rows(max(1, self.probabilities.size))
                for k, pk, tk in rows]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupResult:
    """One model group of the target (in allocation order): its models destroyed."""

    name: str
    models: int
    models_destroyed: Distribution
    leader: bool = False

    def p_destroyed(self) -> float:
        """P(every model of the group is destroyed), e.g. P(the Captain dies)."""
        return self.models_destroyed.p_at_least(self.models)


@dataclass(frozen=True, slots=True, kw_only=True)
class WeaponShare:
    """One weapon group of the attack (in firing order): the mean wounds its attacks took off
    the target and the mean models whose last wound they took."""

    name: str
    count: int
    damage_mean: float
    models_destroyed_mean: float


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
    groups: tuple[GroupResult, ...] = ()
    weapons: tuple[WeaponShare, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)

    def p_destroy_unit(self) -> float:
        """P(every model of the target is destroyed)."""
        return self.models_destroyed.p_at_least(self.target_models)

    def _both_dict(self, writer: dict[str, str], rows: RowsHook | None = None) -> dict[str, Any]:
        """With ``method`` both: the Monte Carlo estimates and the ``agreement`` object."""
        mc = self.provenance.get("monte_carlo")
        if mc is None:
            return {}
        return {"monte_carlo": {"trials": mc.trials, "seed": mc.seed, "damage": mc.damage.to_dict(rows),
                                "models_destroyed": mc.models_destroyed.to_dict(rows),
                                "p_destroy_unit": mc.p_destroy_unit(), "simulate_seconds": mc.seconds},
                "agreement": self.provenance["agreement"].to_dict()}

    def _hazard_dict(self, rows: RowsHook | None = None) -> dict[str, Any] | None:
        """The ``hazardous`` stat block: wounds the firing unit loses to Hazardous tests, and
        (when its profile is known) the chance it loses a model."""
        if self.hazardous is None:
            return None
        out = self.hazardous.to_dict(rows)
        if self.hazard_models is not None and self.provenance.get("attacker_known"):
            out["models_lost"] = self.hazard_models.to_dict(rows)
            out["p_lose_model"] = self.hazard_models.p_at_least(1)
        return out

    def _unit_blocks(self, rows: RowsHook | None) -> dict[str, Any]:
        """The ``weapons`` and ``groups`` lists (:func:`mathhammer.describe.unit_blocks`)."""
        from .describe import unit_blocks  # describe reads this module's types: imported when used

        return dict(unit_blocks(self, rows))

    def to_dict(self, writer: dict[str, str] | None = None, rows: RowsHook | None = None) -> dict[str, Any]:
        """The JSON document (schema ``mathhammer.result/1``); descriptive objects come from
        ``provenance`` (attacker, target, context, thresholds, warnings). ``writer`` names the
        program that wrote it (default: this mathhammer), as the document's ``writer`` object.

        ``rows`` is passed to every :meth:`Distribution.to_dict` (a streaming writer's
        placeholders); without it the document is complete."""
        prov = self.provenance
        if writer is None:
            from .render.records import WRITER  # imported when used: render reads this module's types

            writer = WRITER
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
            "damage": self.damage.to_dict(rows),
            "models_destroyed": self.models_destroyed.to_dict(rows),
            "p_destroy_unit": self.p_destroy_unit(),
            **self._unit_blocks(rows),
            "stages": {name: d.to_dict(rows) for name, d in self.stages.items()},
            "hazardous": self._hazard_dict(rows),
            "explain": list(prov.get("explain", [])),
            "stratagems": list(prov.get("stratagems", [])),
            **self._both_dict(writer, rows),
            "warnings": list(prov.get("warnings", [])),
            "timing": {"compute_seconds": self.seconds},
        }
