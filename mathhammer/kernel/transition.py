"""Allocation transition tables: a weapon group's wounds on one queue of models in a lookup or two.

The units path (:func:`mathhammer.kernel.simulate._run_units`) allocates a weapon group's wounds
one at a time: a saving throw at the current model's group, its Damage, the model's wounds. On
one queue of models (no Leader, so no second track and no Precision choice), with the weapon's
Damage fixed and the same for every group and no Feel No Pain, that loop is a Markov chain whose
state is the *position* along the queue: p = the wounds the queue has lost so far, counting a
destroyed model's whole characteristic (excess damage is lost, R-9.2), so p = 0 .. P with P the
queue's total wounds and p = P when every model is destroyed. An unsaved wound moves p to
``min(p + D, end of the current model)``: the wounds taken are the positions moved, the models
destroyed are the model ends passed.

- ``adv[g, p, u]``: the position after ``u`` unsaved wounds from p (deterministic). When every
  group takes the weapon's saves alike, the unsaved count is drawn as a count already, so one
  lookup replaces the loop.
- When the groups' saves differ, ``u`` is drawn from ``u | (p, n)``, n wounds reaching the
  saving throw: the k-th save is rolled at the group of the model at ``adv[g, p, u_k]`` (the last
  group once the queue is empty, as the loop does when it keeps the stage breakdown). The
  distribution is built exactly with integers (each save 1/36 of the pairs of its row), one alias
  row per (p, n) for n = 0 .. c laid out like :mod:`.binomial`'s, c = the most wounds the weapon
  group can have (at most TABLE_N: the rows take about 0.1 ms each to build); more wounds are
  drawn c at a time, each draw from the position the previous one reached (the chain is Markov).

- Without the stage breakdown, with a fixed number of attacks and nothing after the saves to
  count, the wounds of a group whose saves differ need not be drawn apart from their saves: one
  alias row per start position p gives where the weapon group's attacks leave the queue
  (``MOVE``), the mixture over w, the wounds that reach the saving throw (the attacks' outcome
  convolved, as :mod:`.joint` builds it), of the rows above. Built only where that is quick.

Devastating Wounds still wait and land one at a time after every weapon group (R-6.3). Same
distribution as the loop, not the same draws. A queue longer than MAX_POSITIONS, a second
track, unlimited wounds, a rolled Damage, Feel No Pain, Damage that differs between groups or a
Command Re-roll of a save that the saves' rows differ on keep the loop (``mode`` 0). This module
is plain Python (no numba).
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from .binomial import TABLE_N, _alias_row
from .joint import _attack, _convolve

__all__ = ["ALIKE", "DIFFER", "LOOP", "MAX_BYTES", "MAX_POSITIONS", "MOVE", "TrackTables", "no_tables",
           "track_tables"]

#: Longest queue (total wounds of the target unit) that gets tables: rows grow with it and so
#: does the time to build them (up to about 0.4 ms per position when the saves differ).
MAX_POSITIONS = 128
#: Most bytes one set of tables may take (a set is kept per recent matchup, see track_tables):
#: weapon groups past it keep the loop. About 1.2 MB per weapon group at MAX_POSITIONS when the
#: saves differ, 0.13 MB when alike.
MAX_BYTES = 4 << 20
#: ``mode[g, 0]``: allocate one wound at a time; one ``adv`` lookup (saves alike, drawn as a
#: count); a draw of the unsaved count per ``mode[g, 1]`` wounds, then the lookup (saves differ);
#: DIFFER's rows and, at ``mode[g, 2]`` in each position's row, where the weapon group's attacks
#: leave the queue (MOVE: the kernel that counts only the outcome draws that; the loop, DIFFER's).
LOOP, ALIKE, DIFFER, MOVE = 0, 1, 2, 3
#: Most work, (P + 1) x ((wounds + 1) ** 2 + 4 (P + 1)), a MOVE table may take to build: about
#: 3 ms of Python integers at this size, what the one draw in place of two saves over 1e5 to 1e6
#: trials. Larger weapon groups keep DIFFER's two draws.
MOVE_WORK = 8_000
#: Rows and entries of mathhammer.codes (kept free of it, as the kernel is).
_HIT_ROW, _SAVE_ROW = 0, 2
_ATTACKS, _SUSTAINED, _DAMAGE = 0, 1, 2
_P_FLAGS, _P_FIRING, _P_COMMAND = 0, 1, 4
_F_TORRENT, _F_LETHAL, _F_DEVASTATING, _F_FNP, _F_STAGES, _F_SAME_SAVES = 1, 2, 4, 16, 64, 256
_C_SAVE = 4

#: (mode int64[G, 3], track int64[P + 1, 3 + J], base int64[J + 1], adv int64[G, P + 1, P + 1],
#: t uint64[G, P + 1, R], alias int64[G, P + 1, R]): ``track[p]`` is the state
#: at position p as the loop keeps it (group, models left in it, wounds left on the current
#: model) and the models destroyed in each group; ``base[j]`` the position where group j starts
#: (``base[J]`` = P). ``t``, ``alias``: row (p, n) at n (n + 1) / 2 of ``[g, p]``, outcome u,
#: for n = 0 .. ``mode[g, 1]``, then MOVE's row of outcomes p' = 0 .. P at ``mode[g, 2]``; empty
#: (size 0 in their last two axes) when no group needs them.
TrackTables = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                    npt.NDArray[np.uint64], npt.NDArray[np.int64]]


def no_tables(n_weapons: int, n_groups: int) -> TrackTables:
    """Tables that send every weapon group to the loop (``mode`` LOOP everywhere), of the same
    types as real ones: the kernel is compiled once for both (issue 8: one first-run compile)."""
    empty = np.zeros((n_weapons, 0, 0), dtype=np.int64)
    return (np.zeros((n_weapons, 3), dtype=np.int64), np.zeros((1, 3 + n_groups), dtype=np.int64),
            np.zeros(n_groups + 1, dtype=np.int64), empty, np.zeros((n_weapons, 0, 0), dtype=np.uint64), empty.copy())


def _queue(groups: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(track, base, end): the state at each position (see TrackTables) and ``end[p]``, where the
    model at position p ends (P for p = P)."""
    n_groups = groups.shape[0]
    base = np.zeros(n_groups + 1, dtype=np.int64)
    for j in range(n_groups):
        base[j + 1] = base[j] + int(groups[j, 0]) * int(groups[j, 1])
    total = int(base[n_groups])
    track = np.zeros((total + 1, 3 + n_groups), dtype=np.int64)
    end = np.full(total + 1, total, dtype=np.int64)
    for j in range(n_groups):
        models, w = int(groups[j, 0]), int(groups[j, 1])
        for i in range(models):
            start = int(base[j]) + i * w
            for p in range(start, start + w):
                track[p, :3] = (j, models - i, start + w - p)
                end[p] = start + w
            track[start + w:, 3 + j] += 1  # this model is destroyed from its end on
    track[total, :3] = (n_groups - 1, 0, 0)  # every model destroyed: the loop's state then
    return track, base, end


def _advance(end: npt.NDArray[np.int64], damage: int) -> npt.NDArray[np.int64]:
    """``adv[p, u]``: the position after u = 0 .. P unsaved wounds of ``damage`` from p."""
    total = end.size - 1
    positions = np.arange(total + 1, dtype=np.int64)
    step = np.minimum(positions + damage, end)
    adv = np.empty((total + 1, total + 1), dtype=np.int64)
    adv[:, 0] = positions
    for u in range(1, total + 1):
        adv[:, u] = step[adv[:, u - 1]]
    return adv


def _unsaved_dists(adv: npt.NDArray[np.int64], group_at: list[int], fails: list[int], most: int
                   ) -> list[list[list[int]]]:
    """``dists[p][n][u]``: the weight of u unsaved of n = 0 .. ``most`` wounds reaching the saving
    throw from position p (total 36**n): the k-th wound's save fails with ``fails[group] / 36`` of
    the model at the position the first k - 1 unsaved wounds reached. Exact integers; positions
    with the same odds save after save share their lists."""
    total = adv.shape[0] - 1
    out: list[list[list[int]]] = []
    done: dict[tuple[int, ...], list[list[int]]] = {}
    for p in range(total + 1):
        fail = [fails[group_at[int(adv[p, min(u, total)])]] for u in range(most + 1)]
        same = done.get(tuple(fail))
        if same is None:
            same = [[1]]
            for n in range(1, most + 1):
                new = [0] * (n + 1)
                for u, w in enumerate(same[-1]):
                    new[u + 1] += w * fail[u]
                    new[u] += w * (36 - fail[u])
                same.append(new)
            done[tuple(fail)] = same
        out.append(same)
    return out


def _unsaved_rows(adv: npt.NDArray[np.int64], group_at: list[int], fails: list[int], most: int = TABLE_N
                  ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Alias rows of the unsaved count u of n = 0 .. ``most`` wounds reaching the saving throw from
    each position (:func:`_unsaved_dists`), row n at n (n + 1) / 2."""
    total = adv.shape[0] - 1
    size = (most + 1) * (most + 2) // 2
    t = np.zeros((total + 1, size), dtype=np.uint64)
    alias = np.zeros((total + 1, size), dtype=np.int64)
    rows: dict[int, tuple[list[int], list[int]]] = {}  # by the dists' identity: shared lists, shared rows
    for p, dists in enumerate(_unsaved_dists(adv, group_at, fails, most)):
        if id(dists) not in rows:
            row_t: list[int] = []
            row_alias: list[int] = []
            for n, dist in enumerate(dists):
                nt, na = _alias_row(dist, 36**n)
                row_t += nt
                row_alias += na
            rows[id(dists)] = (row_t, row_alias)
        t[p], alias[p] = rows[id(dists)]
    return t, alias


def _move_rows(adv: npt.NDArray[np.int64], group_at: list[int], fails: list[int], reach: dict[int, int], attacks: int
               ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """MOVE's alias rows: from each position p, the position p' = 0 .. P where ``attacks`` attacks
    leave the queue, each reaching the saving throw with ``reach[k]`` (k wounds; integer weights):
    the sum over w of P(w wounds reach it) (the attacks' convolution) times P(u unsaved of w from
    p) (:func:`_unsaved_dists`), at p' = ``adv[p, u]``. Exact integers."""
    total = adv.shape[0] - 1
    wounds: dict[int, int] = {0: 1}
    for _ in range(attacks):
        wounds = _convolve(wounds, reach)
    most = max(wounds)
    whole = sum(reach.values()) ** attacks * 36**most
    t = np.zeros((total + 1, total + 1), dtype=np.uint64)
    alias = np.zeros((total + 1, total + 1), dtype=np.int64)
    for p, dists in enumerate(_unsaved_dists(adv, group_at, fails, most)):
        weights = [0] * (total + 1)
        for w, ways in wounds.items():
            scale = ways * 36 ** (most - w)
            for u, k in enumerate(dists[w]):
                weights[int(adv[p, min(u, total)])] += scale * k
        t[p], alias[p] = _alias_row(weights, whole)
    return t, alias


def _reach(stages: npt.NDArray[np.int8], rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64],
           params: npt.NDArray[np.int64], g: int) -> tuple[dict[int, int], int] | None:
    """(the wounds one attack of weapon group g brings to the saving throw, integer weights; its
    attacks) when MOVE may apply: a fixed number of attacks and of Sustained Hits, no Devastating
    Wounds, no Command Re-roll, no stage breakdown. None otherwise."""
    flags = int(params[g, 0, _P_FLAGS])
    if flags & (_F_DEVASTATING | _F_STAGES) or int(params[g, 0, _P_COMMAND]) or \
            int(rolls[g, 0, _ATTACKS].sum()) or int(rolls[g, 0, _SUSTAINED].sum()):
        return None
    every_save_fails = stages[g, 0].copy()
    every_save_fails[_SAVE_ROW] = 1  # "unsaved" = reaches the saving throw
    reach = _attack(every_save_fails, bool(flags & _F_TORRENT), bool(flags & _F_LETHAL), False,
                    int(roll_maps[g, 0, _SUSTAINED, 0]))
    return reach, int(params[g, 0, _P_FIRING]) * int(roll_maps[g, 0, _ATTACKS, 0])


def _weapon_damage(rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64], params: npt.NDArray[np.int64],
                   g: int) -> int:
    """Weapon group g's Damage when it is fixed, the same at every model group and no group has
    Feel No Pain; 0 otherwise."""
    values = {int(roll_maps[g, j, _DAMAGE, 0]) for j in range(rolls.shape[1])}
    rolled = int(rolls[g, :, _DAMAGE].sum()) > 0
    fnp = bool((params[g, :, _P_FLAGS] & _F_FNP).any())
    if rolled or fnp or len(values) != 1:
        return 0
    return max(0, values.pop())


def _build(stages: npt.NDArray[np.int8], rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64],
           params: npt.NDArray[np.int64], groups: npt.NDArray[np.int64], bodyguard: int, most: tuple[int, ...]
           ) -> TrackTables:
    n_weapons, n_groups = stages.shape[0], stages.shape[1]
    mode = np.zeros((n_weapons, 3), dtype=np.int64)
    total = int((groups[:, 0] * groups[:, 1]).sum())
    one_queue = bodyguard == n_groups and bool((groups[:, 1] > 0).all()) and 0 < total <= MAX_POSITIONS
    if not one_queue:
        return no_tables(n_weapons, n_groups)
    track, base, end = _queue(groups)
    group_at = [int(track[p, 0]) for p in range(total + 1)]
    adv = np.zeros((n_weapons, total + 1, total + 1), dtype=np.int64)
    differ: dict[int, tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]] = {}
    for g in range(n_weapons):
        damage = _weapon_damage(rolls, roll_maps, params, g)
        if damage == 0:
            continue
        if int(params[g, 0, _P_FLAGS]) & _F_SAME_SAVES:
            adv[g] = _advance(end, damage)
            mode[g] = (ALIKE, 0, 0)
        elif int(params[g, 0, _P_COMMAND]) != _C_SAVE:  # a Command Re-roll ties one save to the others
            chunk = max(1, min(TABLE_N, most[g]))
            width = (chunk + 1) * (chunk + 2) // 2
            widest = max((rows[0].shape[1] for rows in differ.values()), default=0)

            def fits(row: int, widest: int = widest) -> bool:
                """t and alias, as wide as the widest group's rows, within MAX_BYTES with adv."""
                return adv.nbytes + n_weapons * (total + 1) * max(row, widest) * 16 <= MAX_BYTES

            if not fits(width):
                continue
            reach = _reach(stages, rolls, roll_maps, params, g)
            if reach is not None and ((total + 1) * ((reach[1] * max(reach[0]) + 1) ** 2 + 4 * (total + 1))
                                      > MOVE_WORK or not fits(width + total + 1)):
                reach = None  # DIFFER's two draws: MOVE's rows would take too long or too much
            adv[g] = _advance(end, damage)
            fails = [int((stages[g, j, _SAVE_ROW] & 1).sum()) for j in range(n_groups)]
            rows_t, rows_alias = _unsaved_rows(adv[g], group_at, fails, chunk)
            if reach is not None:
                move_t, move_alias = _move_rows(adv[g], group_at, fails, *reach)
                rows_t, rows_alias = np.hstack([rows_t, move_t]), np.hstack([rows_alias, move_alias])
            differ[g] = rows_t, rows_alias
            mode[g] = (MOVE, chunk, width) if reach is not None else (DIFFER, chunk, 0)
    size = max((rows[0].shape[1] for rows in differ.values()), default=0)
    t = np.zeros((n_weapons, total + 1 if differ else 0, size), dtype=np.uint64)
    alias = np.zeros(t.shape, dtype=np.int64)
    for g, (rows_t, rows_alias) in differ.items():
        t[g, :, :rows_t.shape[1]], alias[g, :, :rows_t.shape[1]] = rows_t, rows_alias
    return mode, track, base, adv, t, alias

def track_tables(stages: npt.NDArray[np.int8], rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64],
                 params: npt.NDArray[np.int64], groups: npt.NDArray[np.int64], bodyguard: int,
                 most: tuple[int, ...] | None = None) -> TrackTables:
    """The transition tables of the stacked [G, J, ...] tables of
    :class:`mathhammer.compile.UnitInputs` (``groups`` [J, 3] in allocation order, ``bodyguard``
    groups on the first track; a first model's missing wounds only move where a trial starts on
    the queue; ``most[g]``: the most wounds weapon group g can have in a trial, TABLE_N when not
    given): see TrackTables. Remembered by the bytes of the inputs, like
    :func:`mathhammer.kernel.simulation_tables`; each call gets its own copies."""
    most = tuple(most) if most is not None else (TABLE_N,) * stages.shape[0]
    key = (bodyguard, most, *((a.tobytes(), a.shape) for a in (stages, rolls, roll_maps, params, groups)))
    with _LOCK:
        built = _BUILT.pop(key, None)
    if built is None:
        built = _build(stages, rolls, roll_maps, params, groups, bodyguard, most)
    with _LOCK:
        _BUILT[key] = built  # most recently used last
        while len(_BUILT) > _KEPT:
            del _BUILT[next(iter(_BUILT))]
    mode, track, base, adv, t, alias = built
    return mode.copy(), track.copy(), base.copy(), adv.copy(), t.copy(), alias.copy()


_KEPT = 16
_BUILT: dict[tuple[object, ...], TrackTables] = {}
_LOCK = threading.Lock()
