"""Count sampling: how many of n dice succeed at a stage, in one draw from a binomial table.

Every die of a stage is independent with the same odds, so the number that score each result
is multinomial; the kernel draws it as a chain of binomials (critical, then success among the
rest, then re-rollable among the failures), each with Walker's alias method: one 64-bit random
value r picks column j = floor((m + 1) r / 2**64) of the m + 1 outcomes, and the rest of the
product, a uniform 64-bit fraction, keeps j when below T[j], else takes ALIAS[j]. No loop and
no unpredictable branch. The tables are built here with exact integer arithmetic from the
36-face rows of ``stages``, so each probability is the rules' one within about m / 2**64 (the
dice of the previous kernel were within 2**-32).

A table covers 0..TABLE_N dice; more dice are drawn TABLE_N at a time (a sum of independent
binomials with the same odds is binomial). This module is plain Python (no numba).
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np
import numpy.typing as npt

__all__ = ["KINDS", "TABLE_N", "tables"]

#: Largest number of dice one table row covers.
TABLE_N = 32
#: Entries per kind: rows m = 0..TABLE_N, m + 1 outcomes each, row m at m * (m + 1) // 2.
KIND_SIZE = (TABLE_N + 1) * (TABLE_N + 2) // 2
#: The kinds of draw (rows of the tables), in this order; the kernel repeats them as ints.
KINDS = ("hit_crit", "hit_success", "hit_rerollable", "wound_crit", "wound_success", "wound_rerollable",
         "save_fail", "save_fail_rerollable", "save_fail_other", "fnp_lost", "hit_any", "unsaved",
         "unsaved_not_crit")
#: Rows of ``stages`` (mathhammer.codes.Stage) and the bit marking a Command-re-rollable fail.
_HIT, _WOUND, _SAVE, _FNP = 0, 1, 2, 3
_REROLLABLE = 4
_ONE = 1 << 63
#: Odds whose rows _rows remembers (about 9 kB each).
_ODDS_KEPT = 256


def _odds(stages: npt.NDArray[np.int8]) -> list[tuple[int, int]]:
    """Probability (numerator, denominator) of each kind, from the 36 equally likely pairs of a row.

    Each is conditional on the draws before it in the chain (success given not critical,
    re-rollable given failed, ...); an empty condition has odds 0 (its draws have no dice).
    """
    def ratio(a: int, b: int) -> tuple[int, int]:
        return (a, b) if b else (0, 1)

    odds: list[tuple[int, int]] = []
    for row in (_HIT, _WOUND):
        values = [int(v) for v in stages[row]]
        crit = sum(1 for v in values if v & 3 == 2)
        success = sum(1 for v in values if v & 3 == 1)
        fail = len(values) - crit - success
        rerollable = sum(1 for v in values if v & 3 == 0 and v & _REROLLABLE)
        odds += [ratio(crit, len(values)), ratio(success, len(values) - crit), ratio(rerollable, fail)]
    saves = [int(v) for v in stages[_SAVE]]
    fail = sum(1 for v in saves if v & 1)
    fail_rr = sum(1 for v in saves if v & 1 and v & _REROLLABLE)
    odds += [ratio(fail, len(saves)), ratio(fail_rr, len(saves)), ratio(fail - fail_rr, len(saves) - fail_rr)]
    lone = [int(stages[_FNP, (f - 1) * 7]) for f in range(1, 7)]  # 1: this point is ignored
    odds.append(ratio(sum(1 for v in lone if v == 0), 6))
    # shortcuts when only the end result counts: hit or critical hit; wound (any) and save
    # failed; and, Devastating Wounds, wound (not critical) and save failed given not critical
    hit_crit, hit_success = odds[0], odds[1]
    odds.append(ratio(hit_crit[0] + (36 - hit_crit[0]) * hit_success[0] // hit_success[1], 36))
    wounds = [int(v) & 3 for v in stages[_WOUND]]
    wound_any = sum(1 for v in wounds if v)
    wound_crit = sum(1 for v in wounds if v == 2)
    odds.append(ratio(wound_any * fail, 36 * 36))
    odds.append(ratio((wound_any - wound_crit) * fail, (36 - wound_crit) * 36))
    return odds


def _alias_row(weights: list[int], whole: int) -> tuple[list[int], list[int]]:
    """Walker's alias table of outcomes 0..K-1 with probabilities weights[k] / whole (exact
    integers): (T, ALIAS) with T[j] = round(2**64 * own share of column j)."""
    size = len(weights)
    share = [w * size for w in weights]  # a column holds ``whole``
    own = [whole] * size
    alias = list(range(size))
    small = [k for k in range(size) if share[k] < whole]
    large = [k for k in range(size) if share[k] >= whole]
    while small and large:
        s, g = small.pop(), large.pop()
        own[s] = share[s]
        alias[s] = g
        share[g] -= whole - share[s]
        (small if share[g] < whole else large).append(g)
    return [min((o << 64) // whole, (1 << 64) - 1) if o < whole else (1 << 64) - 1 for o in own], alias


@lru_cache(maxsize=_ODDS_KEPT)
def _rows(a: int, b: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """T and ALIAS of rows m = 0..TABLE_N concatenated, for success odds a / b (read-only).

    About a millisecond of Python each; remembered, as a few odds recur in every run (a batch of
    1,000 compare rows spent two thirds of its time here building the same ones again)."""
    thresholds: list[int] = []
    aliases: list[int] = []
    for m in range(TABLE_N + 1):
        t, alias = _alias_row([comb(m, k) * a**k * (b - a) ** (m - k) for k in range(m + 1)], b**m)
        thresholds += t
        aliases += alias
    built = np.array(thresholds, dtype=np.uint64), np.array(aliases, dtype=np.int64)
    for array in built:
        array.flags.writeable = False
    return built


def tables(stages: npt.NDArray[np.int8], kinds: tuple[str, ...] = KINDS,
           ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """The kernel's binomial tables for ``stages``: T (uint64) and ALIAS (int64), both
    [len(KINDS), KIND_SIZE], row m of a kind at m(m+1)/2 (new arrays). Only ``kinds`` are
    filled; the others are zeros, which no kernel path may read."""
    empty = (np.zeros(KIND_SIZE, dtype=np.uint64), np.zeros(KIND_SIZE, dtype=np.int64))
    rows = [_rows(a, b) if kind in kinds else empty for kind, (a, b) in zip(KINDS, _odds(stages), strict=True)]
    return np.stack([t for t, _ in rows]), np.stack([al for _, al in rows])
