"""Joint count tables: the whole outcome of up to 32 dice (or attacks) in one draw.

A stage's dice are independent with the same odds, so the counts of each result among m dice
are multinomial. Where only counts matter, one alias draw (:mod:`.binomial`, Walker's method)
gives the joint outcome of m dice at once instead of a chain of binomials:

- ``HIT``: (successful non-critical Hit rolls, Critical Hits) of m Hit rolls;
- ``WOUND``: (successful non-critical Wound rolls, Critical Wounds) of m Wound rolls;
- ``FINAL``: (unsaved wounds, devastating wounds) of m whole attacks: Hit roll, Sustained and
  Lethal Hits, every resulting Wound roll and saving throw. Attacks are independent and each
  attack's outcome has the same distribution, so the sum over m attacks is the m-fold
  convolution of one attack's. Used when no per-stage breakdown and no Command Re-roll of a
  Hit roll, Wound roll or save ties the attacks together, and Sustained Hits is fixed.

An outcome is packed in one int64 (first count in the low 32 bits, second above), so sums of
outcomes add up field by field. Probabilities are exact integers until each T[j] is rounded
to 64 bits, as in :mod:`.binomial`. This module is plain Python (no numba).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .binomial import TABLE_N, _alias_row

__all__ = ["FINAL", "HIT", "MAX_OUTCOMES", "N_JOINT", "WOUND", "JointTables", "joint_tables"]

#: Kinds of joint draw (rows of ``start`` and ``chunk``); the kernel repeats them as ints.
HIT, WOUND, FINAL = 0, 1, 2
N_JOINT = 3
#: Most outcomes one table may list (bounds memory and the time to build the tables).
MAX_OUTCOMES = 1024
#: Where the second count of an outcome starts.
SHIFT = 32

#: A distribution over packed outcomes: outcome -> integer weight (all weights share one total).
Dist = dict[int, int]
#: (T uint64[N], own outcome int64[N], alias outcome int64[N], start int64[N_JOINT, TABLE_N + 2],
#: chunk int64[N_JOINT]): kind k, m units at start[k, m] .. start[k, m + 1]; chunk[k] is the
#: most units one draw takes (0: kind not available). Separate arrays, not one of rows: the
#: kernel measured faster with them.
JointTables = tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                    npt.NDArray[np.int64]]

_HIT_ROW, _WOUND_ROW, _SAVE_ROW = 0, 1, 2


def _convolve(a: Dist, b: Dist) -> Dist:
    """Distribution of the sum of independent outcomes from ``a`` and ``b``."""
    out: Dist = {}
    for x, wx in a.items():
        for y, wy in b.items():
            out[x + y] = out.get(x + y, 0) + wx * wy
    return out


def _scale(a: Dist, factor: int) -> Dist:
    return {x: w * factor for x, w in a.items()}


def _add(a: Dist, b: Dist) -> Dist:
    out = dict(a)
    for x, w in b.items():
        out[x] = out.get(x, 0) + w
    return out


def _die(row: npt.NDArray[np.int8]) -> Dist:
    """One roll of a 36-pair row: fail 0, success (1, 0), critical (0, 1); total 36."""
    out: Dist = {}
    for v in row:
        o = int(v) & 3
        code = (0, 1, 1 << SHIFT, 0)[o]
        out[code] = out.get(code, 0) + 1
    return out


def _attack(stages: npt.NDArray[np.int8], torrent: bool, lethal: bool, devastating: bool, sustained: int) -> Dist:
    """(unsaved, devastating) of one attack, total 36 * 1296 ** (1 + sustained) (R-2 to R-7)."""
    fails = sum(1 for v in stages[_SAVE_ROW] if int(v) & 1)
    wound = [int(v) & 3 for v in stages[_WOUND_ROW]]
    crit = sum(1 for o in wound if o == 2)
    saveable = sum(1 for o in wound if o == 1) + (0 if devastating else crit)
    per_hit: Dist = {0: (36 - saveable - (crit if devastating else 0)) * 36 + saveable * (36 - fails),
                     1: saveable * fails}  # Wound roll and saving throw of one hit, total 1296
    if devastating:
        per_hit[1 << SHIFT] = crit * 36
    automatic: Dist = {0: (36 - fails) * 36, 1: fails * 36}  # a Lethal Hit's save, total 1296
    extra: Dist = {0: 1}
    for _ in range(sustained):
        extra = _convolve(extra, per_hit)
    if torrent:
        hit = {0: 0, 1: 36, 2: 0}
    else:
        outcomes = [int(v) & 3 for v in stages[_HIT_ROW]]
        hit = {o: sum(1 for x in outcomes if x == o) for o in (0, 1, 2)}
    scale = 1296 ** (1 + sustained)
    total = {0: hit[0] * scale}
    total = _add(total, _scale(per_hit, hit[1] * 1296**sustained))
    total = _add(total, _scale(_convolve(automatic if lethal else per_hit, extra), hit[2]))
    return {x: w for x, w in total.items() if w}


def _tables(unit: Dist, most: int) -> list[tuple[list[int], list[int], list[int]]]:
    """Alias tables (T, own outcome, alias outcome) of m = 0, 1, ... units while they have at
    most MAX_OUTCOMES outcomes and m <= min(TABLE_N, most)."""
    unit = {x: w for x, w in unit.items() if w}
    whole = sum(unit.values())
    rows = [([(1 << 64) - 1], [0], [0])]
    dist: Dist = {0: 1}
    for m in range(1, min(TABLE_N, most) + 1):
        dist = _convolve(dist, unit)
        if len(dist) > MAX_OUTCOMES:
            break
        outcomes = sorted(dist)
        t, alias = _alias_row([dist[x] for x in outcomes], whole**m)
        rows.append((t, outcomes, [outcomes[a] for a in alias]))
    return rows


def joint_tables(stages: npt.NDArray[np.int8], *, torrent: bool, lethal: bool, devastating: bool,
                 split_devastating: bool, sustained: int | None, keep_stages: bool, most_attacks: int = TABLE_N,
                 most_hits: int = TABLE_N) -> JointTables:
    """The kernel's joint tables for these inputs: HIT and WOUND with the per-stage breakdown,
    else FINAL (``sustained``: fixed extra hits per Critical Hit, None when rolled; FINAL keeps
    devastating wounds apart only with ``split_devastating``, else counts them as unsaved).
    Tables stop at the most attacks and hits a trial can have (building them takes time)."""
    units: list[Dist | None] = [None] * N_JOINT
    most = [most_attacks, most_hits, most_attacks]
    if keep_stages:
        units[HIT] = _die(stages[_HIT_ROW])
        units[WOUND] = _die(stages[_WOUND_ROW])
    elif sustained is not None and sustained <= TABLE_N:
        unit = _attack(stages, torrent, lethal, devastating, sustained)
        if not split_devastating:
            merged: Dist = {}
            for x, w in unit.items():
                key = (x & ((1 << SHIFT) - 1)) + (x >> SHIFT)
                merged[key] = merged.get(key, 0) + w
            unit = merged
        units[FINAL] = unit
    t: list[int] = []
    own: list[int] = []
    alias: list[int] = []
    start = np.zeros((N_JOINT, TABLE_N + 2), dtype=np.int64)
    chunk = np.zeros(N_JOINT, dtype=np.int64)
    for kind, per_unit in enumerate(units):
        rows = _tables(per_unit, max(1, most[kind])) if per_unit is not None else []
        chunk[kind] = len(rows) - 1 if len(rows) > 1 else 0
        for m, (tm, om, am) in enumerate(rows):
            start[kind, m] = len(t)
            t += tm
            own += om
            alias += am
        start[kind, len(rows):] = len(t)
    return (np.array(t, dtype=np.uint64), np.array(own, dtype=np.int64), np.array(alias, dtype=np.int64),
            start, chunk)
