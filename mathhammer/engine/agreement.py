"""Does a Monte Carlo estimate agree with the exact distribution? (issue #4)

Bounds, both failing by chance about once in a million runs:
- mean: |mean_mc - mean_exact| <= 5 standard errors, SE = sd_exact / sqrt(N) (a difference
  within float rounding, 1e-9 of the mean, counts as none: a certain outcome has SE ~ 0);
- distribution: max_k |F_mc(k) - F_exact(k)| <= sqrt(ln(2 / 1e-6) / (2N)) (the DKW inequality),
  for the damage, the models destroyed and the attacking unit's wounds and models lost to
  Hazardous tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..result import Distribution

__all__ = ["MEAN_BOUND_SE", "Agreement", "compare", "dkw_bound"]

MEAN_BOUND_SE = 5.0
DKW_ALPHA = 1e-6
#: Relative difference of the means taken as float rounding (the exact engine sums thousands of
#: probabilities): a certain outcome's exact mean came out 5 - 6e-14 against Monte Carlo's 5.
_ROUNDING = 1e-9


def dkw_bound(trials: int, alpha: float = DKW_ALPHA) -> float:
    """The DKW bound on the largest CDF gap of an N-sample empirical distribution."""
    return math.sqrt(math.log(2 / alpha) / (2 * trials))


def _cdf_gap(a: Distribution, b: Distribution) -> float:
    n = max(a.probabilities.size, b.probabilities.size)
    pa = np.pad(a.probabilities, (0, n - a.probabilities.size))
    pb = np.pad(b.probabilities, (0, n - b.probabilities.size))
    return float(np.abs(np.cumsum(pa) - np.cumsum(pb)).max())


@dataclass(frozen=True, slots=True)
class Agreement:
    """The comparison of one Monte Carlo distribution with the exact one."""

    mean_difference_se: float
    max_cdf_gap: float
    dkw_bound: float
    models_cdf_gap: float
    #: the same for the wounds and the models the attacking unit loses to Hazardous tests; None:
    #: none made
    hazard_cdf_gap: float | None = None
    hazard_models_cdf_gap: float | None = None

    @property
    def agrees(self) -> bool:
        """Within both bounds (damage; models destroyed and the Hazardous losses: the DKW bound)."""
        return (abs(self.mean_difference_se) <= MEAN_BOUND_SE and self.max_cdf_gap <= self.dkw_bound
                and self.models_cdf_gap <= self.dkw_bound
                and all(gap is None or gap <= self.dkw_bound for gap in (self.hazard_cdf_gap,
                                                                         self.hazard_models_cdf_gap)))

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``agreement`` object."""
        return {"agrees": self.agrees, "mean_difference_se": self.mean_difference_se,
                "mean_bound_se": MEAN_BOUND_SE, "max_cdf_gap": self.max_cdf_gap,
                "models_max_cdf_gap": self.models_cdf_gap, "dkw_bound": self.dkw_bound, "dkw_alpha": DKW_ALPHA,
                "hazardous_max_cdf_gap": self.hazard_cdf_gap,
                "hazardous_models_max_cdf_gap": self.hazard_models_cdf_gap}

    def line(self) -> str:
        """One line for people."""
        verdict = "agree" if self.agrees else "DISAGREE"
        return (f"Monte Carlo and exact {verdict}: mean differs by {self.mean_difference_se:+.2f} SE "
                f"(bound ±{MEAN_BOUND_SE:g}); largest CDF gap {self.max_cdf_gap:.5f} "
                f"(models {self.models_cdf_gap:.5f}"
                + ("" if self.hazard_cdf_gap is None else f", Hazardous {self.hazard_cdf_gap:.5f}")
                + ("" if self.hazard_models_cdf_gap is None else f", its models {self.hazard_models_cdf_gap:.5f}")
                + f") vs DKW bound {self.dkw_bound:.5f} at {DKW_ALPHA:g}")


def compare(mc_damage: Distribution, mc_models: Distribution, ex_damage: Distribution, ex_models: Distribution,
            trials: int, mc_hazard: tuple[Distribution | None, Distribution | None] = (None, None),
            ex_hazard: tuple[Distribution | None, Distribution | None] = (None, None)) -> Agreement:
    """Compare the Monte Carlo distributions (from ``trials`` samples) with the exact ones (the
    Hazardous wounds and models lost too, ``(wounds, models)``, when both engines give them)."""
    sd = ex_damage.sd()
    diff = mc_damage.mean() - ex_damage.mean()
    se = sd / math.sqrt(trials)
    if abs(diff) <= _ROUNDING * max(1.0, abs(ex_damage.mean())):
        mean_se = 0.0  # a certain outcome: the exact sd is rounding noise, and so is the difference
    else:
        mean_se = diff / se if se > 0 else math.inf
    return Agreement(mean_difference_se=mean_se, max_cdf_gap=_cdf_gap(mc_damage, ex_damage),
                     dkw_bound=dkw_bound(trials), models_cdf_gap=_cdf_gap(mc_models, ex_models),
                     hazard_cdf_gap=_gap_of(mc_hazard[0], ex_hazard[0]),
                     hazard_models_cdf_gap=_gap_of(mc_hazard[1], ex_hazard[1]))


def _gap_of(mc: Distribution | None, ex: Distribution | None) -> float | None:
    return None if mc is None or ex is None else _cdf_gap(mc, ex)
