"""The planted bug of the Monte Carlo vs exact sweeps (test_agreement, test_units_agreement):
every Hit roll of 3 misses (hitting on 4+ instead of 3+). A sweep counts how often the bug
moves the exact answer by more than twice the agreement bounds and checks that the Monte Carlo
sample then rejects it, so every sweep shows it can fail."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mathhammer.codes import Stage
from mathhammer.engine.agreement import MEAN_BOUND_SE, compare, dkw_bound


def three_misses(stages: Any) -> Any:
    """A read-only copy of ``stages`` (one pair's [4, 36] or a unit's [G, J, 4, 36]) whose Hit
    rows miss whenever the first die shows 3."""
    out = np.array(stages)
    row = out[..., Stage.HIT, :]
    first_is_three = (np.arange(36) // 6) == 2
    out[..., Stage.HIT, :] = np.where(first_is_three & ((row & 3) > 0), 0, row)
    out.setflags(write=False)
    return out


def catches(mc: Any, ex: Any, bug: Any, n: int, power: dict[str, int]) -> None:
    """Counts the example, and when the bug is big enough to see with ``n`` trials, checks that
    the Monte Carlo result ``mc`` rejects the bugged exact result ``bug``."""
    power["examples"] += 1
    shift = compare(ex.damage, ex.models_destroyed, bug.damage, bug.models_destroyed, n)
    big = abs(ex.damage.mean() - bug.damage.mean()) > 2 * MEAN_BOUND_SE * ex.damage.sd() / math.sqrt(n) \
        or shift.max_cdf_gap > 2 * dkw_bound(n)
    if big:
        power["mutant_testable"] += 1
        caught = compare(mc.damage, mc.models_destroyed, bug.damage, bug.models_destroyed, n)
        assert not caught.agrees, f"a hit-on-4+-instead-of-3+ bug went unnoticed: {caught.line()}"
