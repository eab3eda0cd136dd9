"""Chunked trial loop: every trial is one whole attack sequence of the firing unit.

attacks -> Hit rolls -> sustained / lethal -> Wound rolls and saves -> damage -> Feel No Pain
-> allocation, then the deferred Devastating-Wounds mortal wounds (R-6.3), then Hazardous
tests (R-9.7). Rules live in the tables; this module only draws dice and looks them up.

A call runs some of each chunk's trials and leaves each chunk's random stream where it
stopped (``streams``), so the engine can split a long run into short calls (a Ctrl-C is
seen between them) and the counts are the same however the trials are split. A call runs the
chunks its thread claims one at a time from a counter shared by the call's threads
(:mod:`.claim`) and adds to row ``slot`` of each histogram, so a small pool of Python threads
runs the chunks side by side (the kernel releases the GIL); integer counts add up to the same
totals whichever thread ran which chunk.

Dice are resolved stage by stage for the whole unit, as players roll fast dice. The dice of
one stage are independent with the same odds, so only how many score each result matters:
that count is drawn at once from a binomial table (:mod:`.binomial`), the same distribution as
rolling every die. Dice whose values matter one by one (random attacks, sustained hits and
damage, allocation to models, a lone Command Re-roll, Hazardous) are rolled as D6s. On one queue
of models with a fixed Damage, allocation itself is a table lookup (:mod:`.transition`).

Most runs take ``_run_fast``: with no Command Re-roll of a Hit roll, Wound roll or save and a
fixed Sustained Hits, each stage's joint outcome of up to 32 dice is one draw
(:mod:`.joint`), and without the stage breakdown one draw gives the (unsaved, devastating)
outcome of up to 32 whole attacks: one draw per trial for the reference scenario.
``_run_units`` handles every input. ``run_queue_chunks``, a kernel of its own, runs the units
whose weapon groups all move along one queue of models by table with dice from joint tables.
Helpers are ordinary numba functions: LLVM inlines the small ones, while the large ones stay
calls (each passes its arrays field by field, so the hot path keeps them out of its loop).
numba's IR inlining of every helper into one function made the first compile take over a
minute.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_by_constant
from .binomial import TABLE_N
from .claim import fetch_add
from .rng import GAMMA, LOW32, S32, d6, digit, next_value, refill
from .shapes import BUFFER, N_STAGES, S_COUNTER, S_POS  # noqa: F401 - N_STAGES: the breakdown's width (below)

# Rows, columns and flags of mathhammer.codes, repeated as plain ints so the kernel stays
# free of Python objects (tests/test_kernel.py checks they agree).
HIT, WOUND, SAVE, FEEL_NO_PAIN = 0, 1, 2, 3
ATTACKS, SUSTAINED, DAMAGE = 0, 1, 2
P_FLAGS, P_FIRING, P_MODELS, P_WOUNDS, P_COMMAND = 0, 1, 2, 3, 4
F_TORRENT, F_LETHAL, F_DEVASTATING, F_SPILL, F_FNP, F_HAZARDOUS, F_STAGES, F_PRECISION, F_SAME_SAVES = \
    1, 2, 4, 8, 16, 32, 64, 128, 256
# Entries of ``unit`` (mathhammer.codes.UnitParam) and the 36 pairs of one re-rolled die.
U_BODYGUARD, U_WOUNDS_LEFT = 0, 1
THIRTY_SIX = np.uint64(36)
REROLLABLE_BIT = 4
C_HIT, C_WOUND, C_DAMAGE, C_SAVE, C_ATTACKS = 1, 2, 3, 4, 5
R_REROLL, R_BELOW_AVERAGE = 1, 2
PAIRS = 36
# Kinds of count draw, rows of the binomial tables (mathhammer.kernel.binomial.KINDS).
K_HIT_CRIT, K_HIT, K_HIT_RR, K_WOUND_CRIT, K_WOUND, K_WOUND_RR = 0, 1, 2, 3, 4, 5
K_SAVE_FAIL, K_SAVE_FAIL_RR, K_SAVE_FAIL_OTHER, K_FNP_LOST = 6, 7, 8, 9
K_HIT_ANY, K_UNSAVED, K_UNSAVED_NOT_CRIT = 10, 11, 12
# Kinds of joint draw (mathhammer.kernel.joint) and the packing of their outcomes.
J_HIT, J_WOUND, J_FINAL = 0, 1, 2
# Modes of a weapon group's allocation (mathhammer.kernel.transition).
T_LOOP, T_ALIKE, T_MOVE = 0, 1, 3
SHIFT = np.int64(32)
MASK32 = np.int64(0xFFFFFFFF)


@jit
def count(table, alias, kind, n, buf, pos, s):
    """How many of ``n`` dice score, for draw ``kind`` of the alias tables: one value per
    TABLE_N dice (mathhammer.kernel.binomial). Returns (count, pos, s)."""
    total = np.int64(0)
    while n > 0:
        m = min(n, TABLE_N)
        r, pos, s = next_value(buf, pos, s)
        size = np.uint64(m + 1)
        column = np.int64(((r >> S32) * size + (((r & LOW32) * size) >> S32)) >> S32)
        j = ((m * (m + 1)) >> 1) + column
        total += column if r * size < table[kind, j] else np.int64(alias[kind, j])
        n -= m
    return total, pos, s


@jit
def _dice(kind, rolls, buf, pos, s):
    """Raw sum of the D6s and D3s of ``rolls[kind]``. Returns (raw, pos, s)."""
    raw = 0
    for _ in range(rolls[kind, 0]):
        f, pos, s = d6(buf, pos, s)
        raw += f
    for _ in range(rolls[kind, 1]):
        f, pos, s = d6(buf, pos, s)
        raw += (f + 1) >> 1
    return raw, pos, s


@jit
def _attacks(firing, command, rolls, roll_maps, roll_flags, buf, pos, s):
    """Attacks of the unit (R-1): each model's roll (Blast and Rapid Fire included, compile.py),
    the lowest taking a Command Re-roll when below average. Returns (attacks, 1 if the
    Command Re-roll was used else 0, pos, s)."""
    n_attacks = 0
    low_raw = -1
    for _m in range(firing):
        raw, pos, s = _dice(ATTACKS, rolls, buf, pos, s)
        n_attacks += roll_maps[ATTACKS, raw]
        if low_raw < 0 or roll_maps[ATTACKS, raw] < roll_maps[ATTACKS, low_raw]:
            low_raw = raw
    used = 0
    if command == C_ATTACKS and roll_flags[ATTACKS, low_raw] & R_BELOW_AVERAGE:
        raw, pos, s = _dice(ATTACKS, rolls, buf, pos, s)
        n_attacks += roll_maps[ATTACKS, raw] - roll_maps[ATTACKS, low_raw]
        used = 1
    return n_attacks, used, pos, s


@jit
def _lone(row, stages, buf, pos, s):
    """A lone re-roll of one die of ``stages[row]`` (Command Re-roll: never re-rolled again).
    Returns (0 fail, 1 success or 2 critical, pos, s)."""
    f, pos, s = d6(buf, pos, s)
    return stages[row, (f - 1) * 7] & 3, pos, s


@jit
def _hit_rolls(n, command, stages, table, alias, buf, pos, s):
    """Hit rolls of ``n`` attacks (R-2), with the Command Re-roll of one failed roll that was
    not re-rolled already. Returns (hits, critical hits, pos, s)."""
    crits, pos, s = count(table, alias, K_HIT_CRIT, n, buf, pos, s)
    hits, pos, s = count(table, alias, K_HIT, n - crits, buf, pos, s)
    if command == C_HIT:
        rerollable, pos, s = count(table, alias, K_HIT_RR, n - crits - hits, buf, pos, s)
        if rerollable > 0:
            o, pos, s = _lone(HIT, stages, buf, pos, s)
            hits += o & 1
            crits += o >> 1
    return hits, crits, pos, s


@jit
def _saves(n, command, table, alias, buf, pos, s):
    """Saving throws of ``n`` wounds (R-7). Returns (failed, failed and re-rollable, pos, s)."""
    if command != C_SAVE:
        failed, pos, s = count(table, alias, K_SAVE_FAIL, n, buf, pos, s)
        return failed, 0, pos, s
    rerollable, pos, s = count(table, alias, K_SAVE_FAIL_RR, n, buf, pos, s)
    other, pos, s = count(table, alias, K_SAVE_FAIL_OTHER, n - rerollable, buf, pos, s)
    return rerollable + other, rerollable, pos, s


@jit
def _wound_rolls(n, auto, command, devastating, stages, table, alias, buf, pos, s):
    """Wound rolls of ``n`` hits and the saves of the wounds (R-5, R-7), ``auto`` lethal hits
    wounding automatically; Devastating-Wounds crits skip the save and wait (R-6). With a
    Command Re-roll, one failed Wound roll or save that was not re-rolled is re-rolled.

    Returns (wounds, critical wounds, unsaved, devastating, pos, s).
    """
    crits, pos, s = count(table, alias, K_WOUND_CRIT, n, buf, pos, s)
    wounds, pos, s = count(table, alias, K_WOUND, n - crits, buf, pos, s)  # not critical
    pending = crits if devastating else 0
    unsaved, save_fails, pos, s = _saves(wounds + crits - pending + auto, command, table, alias, buf, pos, s)
    if command == C_WOUND:
        rerollable, pos, s = count(table, alias, K_WOUND_RR, n - crits - wounds, buf, pos, s)
        if rerollable > 0:
            o, pos, s = _lone(WOUND, stages, buf, pos, s)
            wounds += o & 1
            crits += o >> 1
            if devastating and o == 2:
                pending += 1
            elif o:
                f, pos, s = d6(buf, pos, s)
                g, pos, s = d6(buf, pos, s)
                unsaved += stages[SAVE, (f - 1) * 6 + g - 1] & 1
    elif command == C_SAVE and save_fails > 0:
        o, pos, s = _lone(SAVE, stages, buf, pos, s)
        unsaved -= 1 - o
    return wounds + crits + auto, crits, unsaved, pending, pos, s


@jit
def _unsaved(n, auto, devastating, table, alias, buf, pos, s):
    """Only the end result of the Wound rolls and saves of ``n`` hits and ``auto`` lethal hits
    (no stage breakdown, no Command Re-roll there): one count per kind of outcome that matters.
    Returns (unsaved, devastating, pos, s)."""
    pending = 0
    if devastating:
        pending, pos, s = count(table, alias, K_WOUND_CRIT, n, buf, pos, s)
    unsaved, pos, s = count(table, alias, K_UNSAVED_NOT_CRIT if devastating else K_UNSAVED, n - pending, buf, pos, s)
    lethal, pos, s = count(table, alias, K_SAVE_FAIL, auto, buf, pos, s)
    return unsaved + lethal, pending, pos, s


@jit
def _damage_roll(command, rolls, roll_maps, roll_flags, buf, pos, s):
    """One Damage roll with its re-roll (R-8.1): the policy's first, else the Command Re-roll
    if still available (``command`` 1) and the result is below average. Returns (damage,
    command left, pos, s)."""
    raw, pos, s = _dice(DAMAGE, rolls, buf, pos, s)
    flags = roll_flags[DAMAGE, raw]
    if flags & R_REROLL or (command and flags & R_BELOW_AVERAGE):
        if not flags & R_REROLL:
            command = 0
        raw, pos, s = _dice(DAMAGE, rolls, buf, pos, s)
    return roll_maps[DAMAGE, raw], command, pos, s


@jit
def _rolled_damage(n, command, fnp, rolls, roll_maps, roll_flags, table, alias, buf, pos, s):
    """Damage of ``n`` attacks to a target with unlimited wounds: nothing is allocated, so Feel
    No Pain (R-8.5) is one count over all the points. Returns (before FNP, after FNP, pos, s)."""
    if rolls[DAMAGE, 0] + rolls[DAMAGE, 1] == 0:
        before = n * roll_maps[DAMAGE, 0]
    else:
        before = 0
        for _ in range(n):
            dmg, command, pos, s = _damage_roll(command, rolls, roll_maps, roll_flags, buf, pos, s)
            before += dmg
    after = before
    if fnp:
        after, pos, s = count(table, alias, K_FNP_LOST, before, buf, pos, s)
    return before, after, pos, s


@jit
def _take(dmg, group, left, w, end, groups):
    """The allocation state machine (R-9.1/R-9.2), for one queue of models ("track"): models of
    groups ``group`` .. ``end`` - 1 (``groups[j]`` = (models, W, leader)) taken one at a time;
    ``left`` models remain in the current group, the current one with ``w`` wounds. ``dmg``
    goes to the current model, excess lost. Returns (wounds taken, the group of the model
    destroyed or -1, group, left, w); ``left`` 0 means the track is empty."""
    if left == 0 or dmg <= 0:
        return 0, -1, group, left, w
    take = dmg if dmg < w else w
    w -= take
    killed = -1
    if w == 0:
        killed = group
        left -= 1
        if left == 0 and group + 1 < end:
            group += 1
            left = groups[group, 0]
        w = groups[group, 1] if left > 0 else 0
    return take, killed, group, left, w


@jit
def _allocate(unsaved, pending, command, flags, groups, rolls, roll_maps, roll_flags, table, alias, buf, pos, s):
    """Damage, Feel No Pain and allocation (R-8, R-9) at one group of identical models
    (``groups[0]``): one model at a time, excess lost (:func:`_take`); then the deferred
    Devastating-Wounds mortal wounds (R-6.3/R-6.4): to the wounded model, excess lost, spilling
    over under the 2023 text. Returns (wounds lost, models destroyed, damage before and after
    Feel No Pain, pos, s)."""
    fnp = (flags & F_FNP) != 0
    spill = (flags & F_SPILL) != 0
    keep_stages = (flags & F_STAGES) != 0
    total = before = after = destroyed = 0
    group = 0
    left = groups[0, 0]
    w = groups[0, 1]
    for u in range(unsaved + pending):
        if left == 0 and not keep_stages:
            break
        dmg, command, pos, s = _damage_roll(command, rolls, roll_maps, roll_flags, buf, pos, s)
        before += dmg
        if fnp:
            dmg, pos, s = count(table, alias, K_FNP_LOST, dmg, buf, pos, s)
        after += dmg
        while dmg > 0 and left > 0:
            take, killed, group, left, w = _take(dmg, group, left, w, 1, groups)
            total += take
            dmg -= take
            destroyed += killed >= 0
            if u < unsaved or not spill:
                break
    return total, destroyed, before, after, pos, s


@jit
def _hazardous(attacker, buf, pos, s):
    """Hazardous (R-9.7): ``attacker[0, 0]`` tests (one per Hazardous weapon fired); each 1 is 3
    mortal wounds to one model of the groups ``attacker[1:]`` ((models, W, Feel No Pain) in the
    order they take them; W 0 when unknown): the wounded one first (:func:`_take`), its Feel No
    Pain for each, excess lost. Returns (wounds lost, models lost, pos, s)."""
    lost = 0
    dead = 0
    group = 1
    end = attacker.shape[0]
    left = attacker[1, 0]
    w = attacker[1, 1]
    for _h in range(attacker[0, 0]):
        f, pos, s = d6(buf, pos, s)
        if f != 1:
            continue
        mw = 3
        fnp = attacker[group, 2]
        if fnp < 7:
            for _p in range(3):
                g, pos, s = d6(buf, pos, s)
                mw -= g >= fnp
        if attacker[1, 1] == 0:
            lost += mw
        else:
            take, killed, group, left, w = _take(mw, group, left, w, end, attacker)
            lost += take
            dead += killed >= 0
    return lost, dead, pos, s


@jit
def _record(out_stages, out_over, offsets, i, value):
    """Count ``value`` in stage histogram ``i``; its last bin holds every value from there up,
    whose sum and sum of squares ``out_over[2i], [2i + 1]`` keep the exact mean and spread."""
    last = offsets[i + 1] - offsets[i] - 1
    if value < last:
        out_stages[offsets[i] + value] += 1
    else:
        out_stages[offsets[i] + last] += 1
        v = float(value)
        out_over[2 * i] += v
        out_over[2 * i + 1] += v * v


@jit
def _count_at(out_stages, out_over, i, base, last, value, times):
    """Count ``value`` ``times`` in stage histogram ``i`` (starting at ``base``, last bin
    ``base + last``): _record with the offsets read once per chunk, not once per trial."""
    if value < last:
        out_stages[base + value] += times
    else:
        out_stages[base + last] += times
        v = float(value)
        for _ in range(times):  # one addition per trial, as _record: the float sums come out
            out_over[2 * i] += v  # the same however a chunk's trials are split into calls
            out_over[2 * i + 1] += v * v


@jit
def _save_one(stages, command, buf, pos, s):
    """One saving throw with its re-roll (one random value picks the pair of dice, column
    (first - 1) * 6 + re-roll - 1 of the SAVE row) and, with ``command`` C_SAVE, the Command
    Re-roll of a failed save that was not re-rolled. Returns (1 if it failed, command left, pos, s)."""
    r, pos, s = next_value(buf, pos, s)
    column, _ = digit(r, THIRTY_SIX)
    v = stages[SAVE, column]
    if v & 1 and command == C_SAVE and v & REROLLABLE_BIT:
        f, pos, s = d6(buf, pos, s)
        v = stages[SAVE, (f - 1) * 7]
        command = 0
    return v & 1, command, pos, s


@jit
def _track_of(precision, left0, left1):
    """Which track takes the next attack: 0 (Bodyguard, or every model of a unit without a
    Leader) while it has models, else 1 (the Leaders); a PRECISION attack takes track 1 while it
    has models (R-9.4). -1: no model left."""
    if precision and left1 > 0:
        return 1
    if left0 > 0:
        return 0
    if left1 > 0:
        return 1
    return -1


@jit
def _land(dmg, t, g, state, n_bodyguard, groups, scratch, out_weapons):
    """``dmg`` wounds of weapon group ``g`` on the current model of track ``t`` (:func:`_take`):
    ``state`` = (g0, left0, w0, g1, left1, w1) of both tracks. Counts the kill in ``scratch``
    (per group) and the weapon's share in ``out_weapons``. Returns (wounds taken, state)."""
    g0, left0, w0, g1, left1, w1 = state
    if t == 0:
        take, killed, g0, left0, w0 = _take(dmg, g0, left0, w0, n_bodyguard, groups)
    else:
        take, killed, g1, left1, w1 = _take(dmg, g1, left1, w1, groups.shape[0], groups)
    out_weapons[2 * g] += take
    if killed >= 0:
        scratch[killed] += 1
        out_weapons[2 * g + 1] += 1
    return take, (g0, left0, w0, g1, left1, w1)


@jit
def _run_units(stages, rolls, roll_maps, roll_flags, params, groups, unit, attacker, st, n_trials, out_damage,
               out_models, offsets, out_stages, out_hazard, out_hazard_models, out_over, out_groups, group_offsets,
               out_weapons, table, alias, jt, jown, jalias, jstart, jchunk, tmode, track, tbase, adv, tt, ta, buf,
               scratch):
    """Every input: weapon groups g fired in order at the model groups j of a unit (tables
    [G, J, ...], see mathhammer.compile.UnitInputs), one trial at a time.

    Per weapon group: attacks, Hit rolls, Sustained and Lethal Hits and Wound rolls as counts
    (its tables against group 0: they do not depend on the group), Devastating-Wounds crits set
    aside. Its other wounds are allocated one at a time to the current model of a track
    (:func:`_track_of`, :func:`_take`): the saving throw, Damage and Feel No Pain of that model's
    group. When every group takes the weapon's saves alike they do not depend on the
    allocation, so they are drawn as a count first. After every weapon group: the
    Devastating-Wounds attacks (R-6.3), then Hazardous tests (R-9.7). ``scratch`` holds the
    per-trial counts (kills per group, pending Devastating wounds per weapon group) in place of
    allocated arrays, and each pair's Damage when it is fixed and no Feel No Pain applies (one read
    per wound in place of the stacked [G, J, ...] tables').

    On one queue of models, a weapon group whose Damage is fixed and alike at every group, without
    Feel No Pain (``tmode[g, 0]`` > 0, mathhammer.kernel.transition), moves the position along the
    queue by table instead: one lookup of where its unsaved wounds leave the queue, after a draw of
    how many are unsaved per ``tmode[g, 1]`` wounds when the groups' saves differ. When every
    weapon group does, with its dice from joint tables, :func:`run_queue_chunks` runs the trials
    instead.
    """
    n_weapons = stages.shape[0]
    n_groups = stages.shape[1]
    keep_stages = (params[0, 0, P_FLAGS] & F_STAGES) != 0
    n_bodyguard = unit[U_BODYGUARD]
    wounds_left = unit[U_WOUNDS_LEFT]
    unlimited = groups[0, 1] == 0
    hazard_firing = attacker[0, 0]
    # each stage histogram's start and last bin, read once (as in _run_fast)
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9 = offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], \
        offsets[5], offsets[6], offsets[7], offsets[8], offsets[9]
    l0, l1, l2, l3, l4 = b1 - b0 - 1, b2 - b1 - 1, b3 - b2 - 1, b4 - b3 - 1, b5 - b4 - 1
    l5, l6, l7, l8, l9 = b6 - b5 - 1, b7 - b6 - 1, b8 - b7 - 1, b9 - b8 - 1, offsets[10] - b9 - 1
    # Facts that hold for every trial, found once per call: each pair's Damage when it is fixed
    # and no Feel No Pain applies (scratch[fixed + g * J + j], 0 otherwise), and which stage
    # counts cannot vary (counted once, after the loop, as in _run_fast; without Feel No Pain
    # the engine copies the damage before it)
    fixed = n_groups + n_weapons
    fixed_attacks = 0
    lethal_any = devastating_any = fnp_any = False
    for g in range(n_weapons):
        flags = params[g, 0, P_FLAGS]
        lethal_any |= (flags & F_LETHAL) != 0
        devastating_any |= (flags & F_DEVASTATING) != 0
        if fixed_attacks >= 0 and rolls[g, 0, ATTACKS, 0] + rolls[g, 0, ATTACKS, 1] == 0:
            fixed_attacks += params[g, 0, P_FIRING] * roll_maps[g, 0, ATTACKS, 0]
        else:
            fixed_attacks = -1
        for j in range(n_groups):
            fnp = (params[g, j, P_FLAGS] & F_FNP) != 0
            fnp_any |= fnp
            plain = not fnp and rolls[g, j, DAMAGE, 0] + rolls[g, j, DAMAGE, 1] == 0
            scratch[fixed + g * n_groups + j] = roll_maps[g, j, DAMAGE, 0] if plain else 0
    last = tbase[n_groups]  # the queue's end (transition tables)
    pos = np.int64(st[S_POS])
    s = st[S_COUNTER]
    if pos < BUFFER:  # resume: the buffer holds the BUFFER values before the counter
        refill(buf, s - np.uint64(BUFFER) * GAMMA)
    for _ in range(n_trials):
        for j in range(n_groups):
            scratch[j] = 0
        w0 = wounds_left if wounds_left > 0 else groups[0, 1]
        left1 = groups[n_bodyguard, 0] if n_bodyguard < n_groups else 0
        w1 = groups[n_bodyguard, 1] if n_bodyguard < n_groups else 0
        state = (0, groups[0, 0], w0, n_bodyguard, left1, w1)
        command = params[0, 0, P_COMMAND]
        total = destroyed = 0
        n_attacks = hits = crits = wounds = crit_wounds = autos = pendings = unsaved = before = after = 0
        for g in range(n_weapons):
            flags = params[g, 0, P_FLAGS]
            torrent = (flags & F_TORRENT) != 0
            lethal = (flags & F_LETHAL) != 0
            devastating = (flags & F_DEVASTATING) != 0
            precision = (flags & F_PRECISION) != 0
            # every group takes this weapon's saves alike (identical models, or the same save
            # rows): the saves are a count, else one per wound at its model's group
            same_saves = (flags & F_SAME_SAVES) != 0
            firing = params[g, 0, P_FIRING]
            if rolls[g, 0, ATTACKS, 0] + rolls[g, 0, ATTACKS, 1] == 0:
                n = firing * roll_maps[g, 0, ATTACKS, 0]
            else:
                n, used, pos, s = _attacks(firing, command, rolls[g, 0], roll_maps[g, 0], roll_flags[g, 0], buf, pos,
                                           s)
                if used:
                    command = 0
            if not keep_stages and jchunk[g, J_FINAL] > 0:
                # one joint draw per TABLE_N attacks (mathhammer.kernel.joint): (unsaved, or reaching
                # the save against several groups, Devastating); no stage counts wanted
                o, pos, s = joint(jt, jown, jalias, jstart[g], J_FINAL, n, jchunk[g, J_FINAL], buf, pos, s)
                pending = o >> SHIFT
                scratch[n_groups + g] = pending
                failed = o & MASK32
            else:
                # views made only where they are read: making one (its shape and strides) in the trial
                # loop cost the path above about 4% of its speed (benchmarks: same process, alternating)
                hit_rows = stages[g, 0]
                t0, a0 = table[g, 0], alias[g, 0]
                # HIT and WOUND joint draws with the breakdown, where built (fixed Sustained Hits, no
                # Command Re-roll of a single die), else counts of each kind
                joint_hw = jchunk[g, J_HIT] > 0 and jchunk[g, J_WOUND] > 0
                # Hit rolls (R-2; TORRENT ), with the Command Re-roll of one failed roll
                if torrent:
                    h, c = n, 0
                elif joint_hw:
                    o, pos, s = joint(jt, jown, jalias, jstart[g], J_HIT, n, jchunk[g, J_HIT], buf, pos, s)
                    h = o & MASK32
                    c = o >> SHIFT
                else:
                    c, pos, s = count(t0, a0, K_HIT_CRIT, n, buf, pos, s)
                    h, pos, s = count(t0, a0, K_HIT, n - c, buf, pos, s)
                    if command == C_HIT:
                        rerollable, pos, s = count(t0, a0, K_HIT_RR, n - c - h, buf, pos, s)
                        if rerollable > 0:
                            o, pos, s = _lone(HIT, hit_rows, buf, pos, s)
                            h += o & 1
                            c += o >> 1
                            command = 0
                # Sustained Hits (R-4.1/4.2) and Lethal Hits (R-4.3/4.4)
                if rolls[g, 0, SUSTAINED, 0] + rolls[g, 0, SUSTAINED, 1] == 0:
                    extra = c * roll_maps[g, 0, SUSTAINED, 0]
                else:
                    extra = 0
                    for _c in range(c):
                        raw, pos, s = _dice(SUSTAINED, rolls[g, 0], buf, pos, s)
                        extra += roll_maps[g, 0, SUSTAINED, raw]
                auto = c if lethal else 0
                h += c + extra
                # Wound rolls, Devastating Wounds set aside
                if joint_hw:
                    o, pos, s = joint(jt, jown, jalias, jstart[g], J_WOUND, h - auto, jchunk[g, J_WOUND], buf, pos, s)
                    cw = o >> SHIFT
                    wd = o & MASK32
                else:
                    cw, pos, s = count(t0, a0, K_WOUND_CRIT, h - auto, buf, pos, s)
                    wd, pos, s = count(t0, a0, K_WOUND, h - auto - cw, buf, pos, s)
                if command == C_WOUND:
                    rerollable, pos, s = count(t0, a0, K_WOUND_RR, h - auto - cw - wd, buf, pos, s)
                    if rerollable > 0:
                        o, pos, s = _lone(WOUND, hit_rows, buf, pos, s)
                        wd += o & 1
                        cw += o >> 1
                        command = 0
                pending = cw if devastating else 0
                scratch[n_groups + g] = pending
                to_save = wd + cw - pending + auto
                n_attacks += n
                hits += h
                crits += c
                wounds += wd + cw + auto
                crit_wounds += cw
                autos += auto
                pendings += pending
                # saves, damage, Feel No Pain and allocation, one wound at a time (R-7 .. R-9)
                if same_saves:
                    if command == C_SAVE:
                        failed, pos, s = count(t0, a0, K_SAVE_FAIL_RR, to_save, buf, pos, s)
                        other, pos, s = count(t0, a0, K_SAVE_FAIL_OTHER, to_save - failed, buf, pos, s)
                        if failed > 0:
                            o, pos, s = _lone(SAVE, hit_rows, buf, pos, s)
                            failed -= 1 - o
                            command = 0
                        failed += other
                    else:
                        failed, pos, s = count(t0, a0, K_SAVE_FAIL, to_save, buf, pos, s)
                else:
                    failed = to_save
            if tmode[g, 0] != T_LOOP:
                # where the queue's position goes (mathhammer.kernel.transition): the wounds taken
                # are the positions passed, the models destroyed the model ends passed
                g0, left0, w0 = state[0], state[1], state[2]
                p0 = last if left0 == 0 else tbase[g0] + (groups[g0, 0] - left0 + 1) * groups[g0, 1] - w0
                if tmode[g, 0] == T_ALIKE:
                    u = failed
                    p = adv[g, p0, min(u, last)]
                else:  # a draw of the unsaved count per tmode[g, 1] wounds, from where the last one left
                    u = 0
                    p = p0
                    n = failed
                    while n > 0:
                        m = min(n, tmode[g, 1])
                        k, pos, s = count(tt[g], ta[g], p, m, buf, pos, s)
                        u += k
                        p = adv[g, p, min(k, last)]
                        n -= m
                dmg = scratch[fixed + g * n_groups] * u
                unsaved += u
                before += dmg
                after += dmg
                take = p - p0
                total += take
                out_weapons[2 * g] += take
                if take > 0:
                    kills = 0
                    for j in range(n_groups):
                        d = track[p, 3 + j] - track[p0, 3 + j]
                        scratch[j] += d
                        kills += d
                    out_weapons[2 * g + 1] += kills
                    state = (track[p, 0], track[p, 1], track[p, 2], state[3], state[4], state[5])
                continue
            for _w in range(failed):
                t = _track_of(precision, state[1], state[4])
                if t < 0 and not keep_stages:
                    break
                j = n_groups - 1 if t < 0 else (state[0] if t == 0 else state[3])
                if not same_saves:
                    fail, command, pos, s = _save_one(stages[g, j], command, buf, pos, s)
                    if fail == 0:
                        continue
                unsaved += 1
                dmg = scratch[fixed + g * n_groups + j]  # one read when the Damage is fixed, without FNP
                if dmg > 0:
                    before += dmg
                else:
                    if rolls[g, j, DAMAGE, 0] + rolls[g, j, DAMAGE, 1] == 0:
                        dmg = roll_maps[g, j, DAMAGE, 0]
                    else:
                        dc = 1 if command == C_DAMAGE else 0
                        dmg, dc, pos, s = _damage_roll(dc, rolls[g, j], roll_maps[g, j], roll_flags[g, j], buf, pos,
                                                       s)
                        if command == C_DAMAGE and dc == 0:
                            command = 0
                    before += dmg
                    if params[g, j, P_FLAGS] & F_FNP:
                        dmg, pos, s = count(table[g, j], alias[g, j], K_FNP_LOST, dmg, buf, pos, s)
                after += dmg
                if unlimited:
                    total += dmg
                    out_weapons[2 * g] += dmg
                elif t >= 0:  # excess lost
                    take, state = _land(dmg, t, g, state, n_bodyguard, groups, scratch, out_weapons)
                    total += take
        # the Devastating-Wounds attacks, after every other attack, no save
        for g in range(n_weapons):
            precision = (params[g, 0, P_FLAGS] & F_PRECISION) != 0
            spill = (params[g, 0, P_FLAGS] & F_SPILL) != 0
            for _p in range(scratch[n_groups + g]):
                t = _track_of(precision, state[1], state[4])
                if t < 0 and not keep_stages:
                    break
                j = n_groups - 1 if t < 0 else (state[0] if t == 0 else state[3])
                dc = 1 if command == C_DAMAGE else 0
                dmg, dc, pos, s = _damage_roll(dc, rolls[g, j], roll_maps[g, j], roll_flags[g, j], buf, pos, s)
                if command == C_DAMAGE and dc == 0:
                    command = 0
                before += dmg
                if spill and not unlimited:
                    # 2023 text: the mortal wounds carry over, each point to the model the rules
                    # pick then, with that model's Feel No Pain
                    for _point in range(dmg):
                        t = _track_of(precision, state[1], state[4])
                        if t < 0 and not keep_stages:
                            break
                        j = n_groups - 1 if t < 0 else (state[0] if t == 0 else state[3])
                        lost = 1
                        if params[g, j, P_FLAGS] & F_FNP:
                            lost, pos, s = count(table[g, j], alias[g, j], K_FNP_LOST, 1, buf, pos, s)
                        after += lost
                        if t >= 0:
                            take, state = _land(lost, t, g, state, n_bodyguard, groups, scratch, out_weapons)
                            total += take
                    continue
                if params[g, j, P_FLAGS] & F_FNP:
                    dmg, pos, s = count(table[g, j], alias[g, j], K_FNP_LOST, dmg, buf, pos, s)
                after += dmg
                if unlimited:
                    total += dmg
                    out_weapons[2 * g] += dmg
                elif t >= 0:  # excess lost
                    take, state = _land(dmg, t, g, state, n_bodyguard, groups, scratch, out_weapons)
                    total += take
        for j in range(n_groups):
            destroyed += scratch[j]
            out_groups[group_offsets[j] + scratch[j]] += 1
        out_damage[total] += 1
        out_models[destroyed] += 1
        if keep_stages:  # counts that cannot vary are counted once, after the loop
            if fixed_attacks < 0:
                _count_at(out_stages, out_over, 0, b0, l0, n_attacks, 1)
            _count_at(out_stages, out_over, 1, b1, l1, hits, 1)
            _count_at(out_stages, out_over, 2, b2, l2, crits, 1)
            _count_at(out_stages, out_over, 3, b3, l3, wounds, 1)
            _count_at(out_stages, out_over, 4, b4, l4, crit_wounds, 1)
            if lethal_any:
                _count_at(out_stages, out_over, 5, b5, l5, autos, 1)
            if devastating_any:
                _count_at(out_stages, out_over, 6, b6, l6, pendings, 1)
            _count_at(out_stages, out_over, 7, b7, l7, unsaved, 1)
            _count_at(out_stages, out_over, 8, b8, l8, before, 1)
            if fnp_any:  # else the engine copies DAMAGE_BEFORE_FNP: the same
                _count_at(out_stages, out_over, 9, b9, l9, after, 1)
        if hazard_firing > 0:
            lost, dead, pos, s = _hazardous(attacker, buf, pos, s)
            out_hazard[lost] += 1
            out_hazard_models[dead] += 1
    if keep_stages:
        if fixed_attacks >= 0:
            _count_at(out_stages, out_over, 0, b0, l0, fixed_attacks, n_trials)
        if not lethal_any:
            _count_at(out_stages, out_over, 5, b5, l5, 0, n_trials)
        if not devastating_any:
            _count_at(out_stages, out_over, 6, b6, l6, 0, n_trials)
    st[S_POS] = pos
    st[S_COUNTER] = s


@jit
def _joint_of(jt, jown, jalias, jstart, g, kind, n, chunk, buf, pos, s):
    """:func:`joint` for weapon group g, reading the stacked ``jstart`` in place: making the view
    ``jstart[g]`` for each draw cost the queue kernel a fifth of its speed."""
    total = np.int64(0)
    while n > 0:
        m = min(n, chunk)
        first = jstart[g, kind, m]
        size = np.uint64(jstart[g, kind, m + 1] - first)
        r, pos, s = next_value(buf, pos, s)
        column, _ = digit(r, size)
        total += jown[first + column] if r * size < jt[first + column] else jalias[first + column]
        n -= m
    return total, pos, s


@jit
def _count_of(table, alias, g, kind, n, buf, pos, s):
    """:func:`count` for the pair (weapon group g, model group 0), reading the stacked binomial
    tables in place (as :func:`_joint_of`)."""
    total = np.int64(0)
    while n > 0:
        m = min(n, TABLE_N)
        r, pos, s = next_value(buf, pos, s)
        size = np.uint64(m + 1)
        column, _ = digit(r, size)
        j = ((m * (m + 1)) >> 1) + column
        total += column if r * size < table[g, 0, kind, j] else np.int64(alias[g, 0, kind, j])
        n -= m
    return total, pos, s


@jit
def _leave(tt, ta, adv, g, chunk, p, failed, last, buf, pos, s):
    """Where weapon group g's ``failed`` wounds reaching the saving throw leave the queue from
    position p when the groups' saves differ: their unsaved count drawn per ``chunk`` wounds
    from where the last draw left the queue (mathhammer.kernel.transition). Returns (position,
    unsaved, pos, s). (Where the saves are alike the unsaved count moves the position in one
    lookup, written where it is needed: a call of this function there cost 70% of the speed.)"""
    u = 0
    while failed > 0:
        m = min(failed, chunk)
        size = np.uint64(m + 1)
        r, pos, s = next_value(buf, pos, s)
        column, _ = digit(r, size)
        j = ((m * (m + 1)) >> 1) + column
        k = column if r * size < tt[g, p, j] else ta[g, p, j]
        u += k
        p = adv[g, p, min(k, last)]
        failed -= m
    return p, u, pos, s


@jit
def _run_queue(params, roll_maps, groups, wounds_left, n_trials, out_damage, out_models, offsets, out_stages, out_over,
               out_groups, group_offsets, out_weapons, table, alias, jt, jown, jalias, jstart, jchunk, tmode, track,
               adv, tt, ta, buf, pos, s, seen):
    """_run_units when every weapon group moves along one queue of models by table (``tmode``
    not T_LOOP), with fixed attacks and no Devastating Wounds, Hazardous tests or Command
    Re-roll, and its dice come from joint tables: one draw of the unsaved wounds (FINAL), or,
    with the stage breakdown, of the Hit rolls and of the Wound rolls (HIT, WOUND) and a count
    of the failed saves. The same draws, in the same order, as the loop, except that a MOVE
    group (mathhammer.kernel.transition, never with the breakdown) takes one draw of where its
    attacks leave the queue in place of the loop's two, of its wounds and of their saves.

    A trial's outcome is then the position p_g each weapon group leaves the queue at (the wounds
    taken and the models destroyed are read off ``track`` at the positions) and its stage
    counts, so a trial counts ``seen[g * (P + 1) + p_g]`` and the histograms are derived from
    those counts once per call: the wounds and models of weapon group g are its positions' sums
    less the previous group's, the unit's damage and models destroyed those of the last
    position less the start's."""
    n_weapons = jchunk.shape[0]
    n_groups = groups.shape[0]
    last = track.shape[0] - 1
    width = last + 1
    keep_stages = (params[0, 0, P_FLAGS] & F_STAGES) != 0
    lethal_any = False
    fixed_attacks = 0
    for g in range(n_weapons):
        lethal_any |= (params[g, 0, P_FLAGS] & F_LETHAL) != 0
        fixed_attacks += params[g, 0, P_FIRING] * roll_maps[g, 0, ATTACKS, 0]
    b1, b2, b3, b4, b5, b6, b7, b8 = offsets[1], offsets[2], offsets[3], offsets[4], offsets[5], offsets[6], \
        offsets[7], offsets[8]
    l1, l2, l3, l4, l5, l7, l8 = b2 - b1 - 1, b3 - b2 - 1, b4 - b3 - 1, b5 - b4 - 1, b6 - b5 - 1, b8 - b7 - 1, \
        offsets[9] - b8 - 1
    for i in range(n_weapons * width):
        seen[i] = 0
    # the start: the first model's missing wounds already taken
    start = groups[0, 1] - (wounds_left if wounds_left > 0 else groups[0, 1])
    if not keep_stages:
        for _ in range(n_trials):
            p = start
            for g in range(n_weapons):
                if tmode[g, 0] == T_MOVE:  # one draw: where the weapon group's attacks leave the queue
                    size = np.uint64(last + 1)
                    r, pos, s = next_value(buf, pos, s)
                    column, _ = digit(r, size)
                    j = tmode[g, 2] + column
                    p = column if r * size < tt[g, p, j] else ta[g, p, j]
                else:
                    n = params[g, 0, P_FIRING] * roll_maps[g, 0, ATTACKS, 0]
                    o, pos, s = _joint_of(jt, jown, jalias, jstart, g, J_FINAL, n, jchunk[g, J_FINAL], buf, pos, s)
                    failed = o & MASK32
                    if tmode[g, 0] == T_ALIKE:
                        p = adv[g, p, min(failed, last)]
                    else:
                        p, _u, pos, s = _leave(tt, ta, adv, g, tmode[g, 1], p, failed, last, buf, pos, s)
                seen[g * width + p] += 1
    else:
        for _ in range(n_trials):
            p = start
            hits = crits = wounds = crit_wounds = autos = unsaved = before = 0
            for g in range(n_weapons):
                n = params[g, 0, P_FIRING] * roll_maps[g, 0, ATTACKS, 0]
                flags = params[g, 0, P_FLAGS]
                # Hit rolls (R-2; TORRENT ), Sustained and Lethal Hits
                if flags & F_TORRENT:
                    h, c = n, 0
                else:
                    o, pos, s = _joint_of(jt, jown, jalias, jstart, g, J_HIT, n, jchunk[g, J_HIT], buf, pos, s)
                    h = o & MASK32
                    c = o >> SHIFT
                auto = c if flags & F_LETHAL else 0
                h += c + c * roll_maps[g, 0, SUSTAINED, 0]
                # Wound rolls, then the saving throws: a count when they are alike
                o, pos, s = _joint_of(jt, jown, jalias, jstart, g, J_WOUND, h - auto, jchunk[g, J_WOUND], buf, pos,
                                      s)
                cw = o >> SHIFT
                failed = (o & MASK32) + cw + auto
                hits += h
                crits += c
                wounds += failed
                crit_wounds += cw
                autos += auto
                if tmode[g, 0] == T_ALIKE:
                    u, pos, s = _count_of(table, alias, g, K_SAVE_FAIL, failed, buf, pos, s)
                    p = adv[g, p, min(u, last)]
                else:
                    p, u, pos, s = _leave(tt, ta, adv, g, tmode[g, 1], p, failed, last, buf, pos, s)
                seen[g * width + p] += 1
                unsaved += u
                before += u * roll_maps[g, 0, DAMAGE, 0]
            # as _run_units counts them (no Feel No Pain: the engine copies the damage before it)
            _count_at(out_stages, out_over, 1, b1, l1, hits, 1)
            _count_at(out_stages, out_over, 2, b2, l2, crits, 1)
            _count_at(out_stages, out_over, 3, b3, l3, wounds, 1)
            _count_at(out_stages, out_over, 4, b4, l4, crit_wounds, 1)
            if lethal_any:
                _count_at(out_stages, out_over, 5, b5, l5, autos, 1)
            _count_at(out_stages, out_over, 7, b7, l7, unsaved, 1)
            _count_at(out_stages, out_over, 8, b8, l8, before, 1)
        # the counts that cannot vary, once (as _run_units)
        _count_at(out_stages, out_over, 0, offsets[0], offsets[1] - offsets[0] - 1, fixed_attacks, n_trials)
        if not lethal_any:
            _count_at(out_stages, out_over, 5, b5, l5, 0, n_trials)
        _count_at(out_stages, out_over, 6, b6, offsets[7] - b6 - 1, 0, n_trials)
    # positions -> wounds taken, models destroyed (in all, per group), per weapon group
    kills0 = 0
    for j in range(n_groups):
        kills0 += track[start, 3 + j]
    took_before = n_trials * start
    killed_before = n_trials * kills0
    for g in range(n_weapons):
        took = killed = 0
        for p in range(width):
            c = seen[g * width + p]
            if c == 0:
                continue
            kills = 0
            for j in range(n_groups):
                kills += track[p, 3 + j]
            took += c * p
            killed += c * kills
            if g == n_weapons - 1:
                out_damage[p - start] += c
                out_models[kills - kills0] += c
                for j in range(n_groups):
                    out_groups[group_offsets[j] + track[p, 3 + j] - track[start, 3 + j]] += c
        out_weapons[2 * g] += took - took_before
        out_weapons[2 * g + 1] += killed - killed_before
        took_before, killed_before = took, killed
    return pos, s


@jit_by_constant
def joint(jt, jown, jalias, start, kind, n, chunk, buf, pos, s):
    """Sum of the packed joint outcomes (mathhammer.kernel.joint) of ``n`` units of ``kind``,
    ``chunk`` units per draw. Returns (outcome, pos, s)."""
    total = np.int64(0)
    while n > 0:
        m = min(n, chunk)
        first = start[kind, m]
        size = np.uint64(start[kind, m + 1] - first)
        r, pos, s = next_value(buf, pos, s)
        j = first + np.int64(((r >> S32) * size + (((r & LOW32) * size) >> S32)) >> S32)
        total += jown[j] if r * size < jt[j] else jalias[j]
        n -= m
    return total, pos, s


@jit
def _run_fast(stages, rolls, roll_maps, roll_flags, params, groups, attacker, st, n_trials, out_damage, out_models,
              offsets, out_stages, out_hazard, out_hazard_models, out_over, table, alias, jt, jown, jalias, jstart,
              jchunk, buf):
    """_run_units when no Command Re-roll of a Hit roll, Wound roll or save ties dice together and
    Sustained Hits is fixed: each stage's outcome is one joint draw per TABLE_N dice
    (mathhammer.kernel.joint), or, without the stage breakdown, one draw per TABLE_N attacks."""
    flags = params[P_FLAGS]
    torrent = (flags & F_TORRENT) != 0
    lethal = (flags & F_LETHAL) != 0
    devastating = (flags & F_DEVASTATING) != 0
    fnp = (flags & F_FNP) != 0
    hazardous = (flags & F_HAZARDOUS) != 0
    keep_stages = (flags & F_STAGES) != 0
    firing = params[P_FIRING]
    w_model = params[P_WOUNDS]
    command = params[P_COMMAND]
    damage_command = 1 if command == C_DAMAGE else 0
    fixed_attacks = firing * roll_maps[ATTACKS, 0] if rolls[ATTACKS, 0] + rolls[ATTACKS, 1] == 0 else -1
    sustained = roll_maps[SUSTAINED, 0]
    # damage known from the count alone: nothing allocated, no dice, no Feel No Pain
    fixed_damage = roll_maps[DAMAGE, 0] if w_model == 0 and not fnp and rolls[DAMAGE, 0] + rolls[DAMAGE, 1] == 0 \
        else -1
    hit_chunk, wound_chunk, final_chunk = jchunk[J_HIT], jchunk[J_WOUND], jchunk[J_FINAL]
    # each stage histogram's start and last bin, as locals: LLVM cannot keep them in registers
    # when read from ``offsets`` (an int64 array like the histograms, so maybe the same memory)
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9 = offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], \
        offsets[5], offsets[6], offsets[7], offsets[8], offsets[9]
    l0, l1, l2, l3, l4 = b1 - b0 - 1, b2 - b1 - 1, b3 - b2 - 1, b4 - b3 - 1, b5 - b4 - 1
    l5, l6, l7, l8, l9 = b6 - b5 - 1, b7 - b6 - 1, b8 - b7 - 1, b9 - b8 - 1, offsets[10] - b9 - 1
    pos = np.int64(st[S_POS])
    s = st[S_COUNTER]
    if pos < BUFFER:  # resume: the buffer holds the BUFFER values before the counter
        refill(buf, s - np.uint64(BUFFER) * GAMMA)
    hits = crits = wounds = crit_wounds = auto = 0
    for _ in range(n_trials):
        if fixed_attacks >= 0:
            n_attacks = fixed_attacks
        else:
            n_attacks, _used, pos, s = _attacks(firing, command, rolls, roll_maps, roll_flags, buf, pos, s)
        if not keep_stages:
            o, pos, s = joint(jt, jown, jalias, jstart, J_FINAL, n_attacks, final_chunk, buf, pos, s)
            unsaved = o & MASK32
            pending = o >> SHIFT
        else:
            # Hit rolls (R-2, TORRENT ), Sustained and Lethal Hits
            if torrent:
                hits, crits = n_attacks, 0
            else:
                o, pos, s = joint(jt, jown, jalias, jstart, J_HIT, n_attacks, hit_chunk, buf, pos, s)
                hits = o & MASK32
                crits = o >> SHIFT
            auto = crits if lethal else 0
            hits += crits + crits * sustained
            # Wound rolls, Devastating Wounds, saving throws
            o, pos, s = joint(jt, jown, jalias, jstart, J_WOUND, hits - auto, wound_chunk, buf, pos, s)
            crit_wounds = o >> SHIFT
            wounds = (o & MASK32) + crit_wounds
            pending = crit_wounds if devastating else 0
            unsaved, pos, s = count(table, alias, K_SAVE_FAIL, wounds - pending + auto, buf, pos, s)
            wounds += auto
        if fixed_damage >= 0:
            total = before = after = (unsaved + pending) * fixed_damage
            destroyed = 0
        elif w_model == 0:
            before, after, pos, s = _rolled_damage(unsaved + pending, damage_command, fnp, rolls, roll_maps,
                                                   roll_flags, table, alias, buf, pos, s)
            total, destroyed = after, 0
        else:
            total, destroyed, before, after, pos, s = _allocate(unsaved, pending, damage_command, flags, groups,
                                                                rolls, roll_maps, roll_flags, table, alias, buf, pos,
                                                                s)
        out_damage[total] += 1
        out_models[destroyed] += 1
        if keep_stages:  # counts that cannot vary are counted once, after the loop
            if fixed_attacks < 0:
                _count_at(out_stages, out_over, 0, b0, l0, n_attacks, 1)
            _count_at(out_stages, out_over, 1, b1, l1, hits, 1)
            if not torrent:
                _count_at(out_stages, out_over, 2, b2, l2, crits, 1)
            _count_at(out_stages, out_over, 3, b3, l3, wounds, 1)
            _count_at(out_stages, out_over, 4, b4, l4, crit_wounds, 1)
            if lethal:
                _count_at(out_stages, out_over, 5, b5, l5, auto, 1)
            if devastating:
                _count_at(out_stages, out_over, 6, b6, l6, pending, 1)
            _count_at(out_stages, out_over, 7, b7, l7, unsaved, 1)
            _count_at(out_stages, out_over, 8, b8, l8, before, 1)
            if fnp:  # else the engine copies DAMAGE_BEFORE_FNP: the same
                _count_at(out_stages, out_over, 9, b9, l9, after, 1)
        if hazardous:
            lost, dead, pos, s = _hazardous(attacker, buf, pos, s)
            out_hazard[lost] += 1
            out_hazard_models[dead] += 1
    if keep_stages:
        if fixed_attacks >= 0:
            _count_at(out_stages, out_over, 0, b0, l0, fixed_attacks, n_trials)
        if torrent:
            _count_at(out_stages, out_over, 2, b2, l2, 0, n_trials)
        if not lethal:
            _count_at(out_stages, out_over, 5, b5, l5, 0, n_trials)
        if not devastating:
            _count_at(out_stages, out_over, 6, b6, l6, 0, n_trials)
    st[S_POS] = pos
    st[S_COUNTER] = s


@jit
def run_chunks(stages, rolls, roll_maps, roll_flags, params, groups, unit, attacker, streams, chunk_trials, out_damage,
               out_models, offsets, out_stages, out_hazard, out_hazard_models, out_over, out_groups, group_offsets,
               out_weapons, table, alias, jt, jown, jalias, jstart, jchunk, tmode, track, tbase, adv, tt, ta, buffers,
               scratch, claims, slot):
    """Simulate ``chunk_trials[c]`` more trials of the chunks c this thread claims (the next
    unclaimed chunk from ``claims[0]``, shared by the call's threads: :mod:`.claim`), adding to
    row ``slot`` of every histogram.

    stages: int8[G, J, 4, 36]  per weapon group g and model group j (mathhammer.compile.UnitInputs):
        rows of mathhammer.codes.Stage; column (first face-1)*6 + (re-roll face-1)
    rolls: int64[G, J, 3, 2]  (number of D6, number of D3) per mathhammer.codes.Roll
    roll_maps: int64[G, J, 3, MAX_RAW + 1]  raw dice sum -> value
    roll_flags: int8[G, J, 3, MAX_RAW + 1]  mathhammer.codes.RollFlag bits per raw sum
    params: int64[G, J, 7]  mathhammer.codes.Param
    groups: int64[J, 3]  (models, W (0: unlimited), leader) of each model group in allocation order
    unit: int64[2]  (Bodyguard groups: groups 0 .. unit[0] - 1 take attacks first; wounds left of the
        first model, 0: untouched)
    attacker: int64[1 + H, 3]  (Hazardous tests, 0, 0), then (models, W (0: unknown), Feel No Pain (7: none))
              of each group of models taking their mortal wounds, in order (H >= 1)
    streams: uint64[n_chunks, N_STREAM]  each chunk's random stream (S_POS, ...), advanced in place;
        a new chunk's row is (BUFFER, seed, 0, 0) (mathhammer.kernel.new_streams)
    chunk_trials: int64[n_chunks]  trials to run now in each chunk (0 for a finished chunk)
    out_damage: int64[slots, >= damage_max + 1]  trials by wounds lost by the target
    out_models: int64[slots, >= target_models + 1]  trials by models destroyed
    offsets: int64[11]  where each mathhammer.codes.StageCount histogram starts in a row of out_stages
    out_stages: int64[slots, >= offsets[10]]  trials by each stage count (filled with Flag.STAGES);
        the last bin of each holds that value and every larger one. Without Feel No Pain the
        damage after it may be left empty: it is the damage before it (the engine copies it)
    out_hazard: int64[slots, >= 3 * firing + 1]  trials by wounds lost to Hazardous tests
    out_hazard_models: int64[slots, >= firing + 1]  trials by firing models lost to them
    out_over: float64[n_chunks, >= 2 * N_STAGES]  sum and sum of squares of the values in each stage
        histogram's last bin, per chunk (so that the float sums, added trial by trial in the chunk's
        order, never depend on the thread count or on how the trials were split into calls)
    out_groups: int64[slots, >= group_offsets[J]]  trials by models destroyed in each group (group j's
        histogram at group_offsets[j]; filled by the general path only)
    out_weapons: int64[slots, >= 2 G]  wounds taken and models destroyed by each weapon group, summed
        (general path only)
    table, alias: int64/uint64[G, J, kinds, size]  the binomial tables of each pair (mathhammer.kernel.binomial)
    jt, jown, jalias, jstart, jchunk: the joint tables (mathhammer.kernel.joint) of each weapon group
        end to end (jstart [G, N_JOINT, TABLE_N + 2], jchunk [G, N_JOINT]; kind k of group g not built
        when jchunk[g, k] is 0): the fast path's for a single pair, the units path's otherwise
    tmode, track, tbase, adv, tt, ta: the allocation transition tables of the units path
        (mathhammer.kernel.transition.TrackTables; ``no_tables`` when no weapon group takes them:
        tmode[g, 0] 0 allocates wound by wound). Always arrays of the same types, so one compile
        serves every run
    buffers: uint64[slots, >= BUFFER]  scratch space for the random streams (the kernel allocates nothing)
    scratch: int64[slots, >= J + G + G J]  the general path's per-trial counts and per-pair fixed Damage
        (mathhammer.compile.scratch_width)
    claims: int64[2]  (the next chunk to hand out, chunks finished), zeros at the start of a call;
        shared by its threads (:mod:`.claim`)
    All outputs are zeroed by the caller before the first call and only added to.
    Returns the chunks finished when this thread found none left to claim: all of them means
    every other thread's writes are done and seen.
    """
    keep_stages = (params[0, 0, P_FLAGS] & F_STAGES) != 0
    # The fast path runs exactly when its joint tables were built (mathhammer.kernel.takes_fast_path
    # decides the same from the same tables, and builds them only for one weapon group at one
    # untouched group of identical models); they are empty whenever a Command Re-roll ties dice
    # together or Sustained Hits is rolled.
    single = stages.shape[0] == 1 and stages.shape[1] == 1 and unit[U_WOUNDS_LEFT] == 0
    fast = single and ((jchunk[0, J_HIT] > 0 and jchunk[0, J_WOUND] > 0) if keep_stages else jchunk[0, J_FINAL] > 0)
    while True:
        c = fetch_add(claims, 0, 1)
        if c >= streams.shape[0]:
            return fetch_add(claims, 1, 0)
        if fast:
            _run_fast(stages[0, 0], rolls[0, 0], roll_maps[0, 0], roll_flags[0, 0], params[0, 0], groups, attacker,
                      streams[c], chunk_trials[c], out_damage[slot], out_models[slot], offsets, out_stages[slot],
                      out_hazard[slot], out_hazard_models[slot], out_over[c], table[0, 0], alias[0, 0], jt, jown,
                      jalias, jstart[0], jchunk[0], buffers[slot])
        else:
            _run_units(stages, rolls, roll_maps, roll_flags, params, groups, unit, attacker, streams[c],
                       chunk_trials[c], out_damage[slot], out_models[slot], offsets, out_stages[slot],
                       out_hazard[slot], out_hazard_models[slot], out_over[c], out_groups[slot], group_offsets,
                       out_weapons[slot], table, alias, jt, jown, jalias, jstart, jchunk, tmode, track, tbase, adv, tt,
                       ta, buffers[slot], scratch[slot])
        fetch_add(claims, 1, 1)  # after every write of the chunk


@jit
def run_queue_chunks(stages, rolls, roll_maps, roll_flags, params, groups, unit, attacker, streams, chunk_trials,
                     out_damage, out_models, offsets, out_stages, out_hazard, out_hazard_models, out_over, out_groups,
                     group_offsets, out_weapons, table, alias, jt, jown, jalias, jstart, jchunk, tmode, track, tbase,
                     adv, tt, ta, buffers, scratch, claims, slot):
    """:func:`run_chunks` for the inputs that :func:`_run_queue` handles, and only for them
    (mathhammer.kernel.takes_queue_path decides): the same arguments, the same draws and counts.
    A kernel of its own, compiled the first time a run needs it, so that runs that never do (a
    single weapon, a Leader, rolled Damage, ...) do not pay for its compile."""
    n_weapons, n_groups = stages.shape[0], stages.shape[1]
    seen = n_groups + n_weapons + n_weapons * n_groups  # where scratch keeps the positions' counts
    while True:
        c = fetch_add(claims, 0, 1)
        if c >= streams.shape[0]:
            return fetch_add(claims, 1, 0)
        st = streams[c]
        pos = np.int64(st[S_POS])
        s = st[S_COUNTER]
        buf = buffers[slot]
        if pos < BUFFER:  # resume: the buffer holds the BUFFER values before the counter
            refill(buf, s - np.uint64(BUFFER) * GAMMA)
        pos, s = _run_queue(params, roll_maps, groups, unit[U_WOUNDS_LEFT], chunk_trials[c], out_damage[slot],
                            out_models[slot], offsets, out_stages[slot], out_over[c], out_groups[slot], group_offsets,
                            out_weapons[slot], table, alias, jt, jown, jalias, jstart, jchunk, tmode, track, adv, tt,
                            ta, buf, pos, s, scratch[slot, seen:])
        st[S_POS] = pos
        st[S_COUNTER] = s
        fetch_add(claims, 1, 1)  # after every write of the chunk
