"""Chunked trial loop: every trial is one whole attack sequence of the firing unit.

attacks -> Hit rolls -> sustained / lethal -> Wound rolls and saves -> damage -> Feel No Pain
-> allocation, then the deferred Devastating-Wounds mortal wounds (R-6.3), then Hazardous
tests (R-9.7). Rules live in the tables; this module only rolls dice and looks them up.

A call runs some of each chunk's trials and leaves each chunk's random stream where it
stopped (``streams``), so the engine can split a long run into short calls (a Ctrl-C is
seen between them) and the counts are the same however the trials are split.

Dice are rolled stage by stage for the whole unit (all Hit rolls, then each hit's Wound roll
and saving throw, ...) as players roll fast dice. Attacks are independent and every unsaved
attack's damage is an independent roll, so this gives the same distribution as resolving
attacks one by one, with short branch-free loops instead of nested, unpredictable branches.
A hit's saving throw is rolled even when its Wound roll fails (and then ignored): it costs
less than a second loop.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, parallel, prange
from .rng import BUFFER, GAMMA, LOW32, S32, d6, pair_index, refill, reserve

# Rows, columns and flags of mathhammer.codes, repeated as plain ints so the kernel stays
# free of Python objects (tests/test_kernel.py checks they agree).
HIT, WOUND, SAVE, FEEL_NO_PAIN = 0, 1, 2, 3
ATTACKS, SUSTAINED, DAMAGE = 0, 1, 2
P_FLAGS, P_FIRING, P_MODELS, P_WOUNDS, P_COMMAND, P_HAZ_WOUNDS, P_HAZ_FNP = 0, 1, 2, 3, 4, 5, 6
F_TORRENT, F_LETHAL, F_DEVASTATING, F_SPILL, F_FNP, F_HAZARDOUS, F_STAGES = 1, 2, 4, 8, 16, 32, 64
C_HIT, C_WOUND, C_DAMAGE, C_SAVE, C_ATTACKS = 1, 2, 3, 4, 5
R_REROLL, R_BELOW_AVERAGE = 1, 2
PAIRS = 36
N_STAGES = 10
MASK21 = (1 << 21) - 1
MASK12 = (1 << 12) - 1
#: Columns of a row of ``streams``: next unread buffer position, counter, D6 pool, faces left.
S_POS, S_COUNTER, S_POOL, S_LEFT = 0, 1, 2, 3
N_STREAM = 4


@inline
def _dice(kind, rolls, buf, pos, s, pool, left):
    """Raw sum of the D6s and D3s of ``rolls[kind]``. Returns (raw, pos, s, pool, left)."""
    raw = 0
    for _ in range(rolls[kind, 0]):
        f, pos, s, pool, left = d6(buf, pos, s, pool, left)
        raw += f
    for _ in range(rolls[kind, 1]):
        f, pos, s, pool, left = d6(buf, pos, s, pool, left)
        raw += (f + 1) >> 1
    return raw, pos, s, pool, left


@inline
def _pack_counts(stages, row):
    """``stages[row]`` with each value's bits 1, 2 and 4 spread into 21-bit counter fields,
    so that one addition per roll counts all three."""
    packed = np.empty(PAIRS, dtype=np.int64)
    for i in range(PAIRS):
        o = np.int64(stages[row, i])
        packed[i] = (o & 1) | (((o >> 1) & 1) << 21) | ((o >> 2) << 42)
    return packed


@inline
def _pack_wound_save(stages, devastating):
    """For each (Wound roll, saving throw) pair of 36-face rolls, its contribution to five 12-bit
    counter fields: unsaved, wounds, critical wounds, re-rollable failed Wound rolls,
    re-rollable failed saves. With Devastating Wounds a Critical Wound skips the save (R-6.1)."""
    packed = np.empty(PAIRS * PAIRS, dtype=np.int64)
    normal_crit = 0 if devastating else 1
    for iw in range(PAIRS):
        o = np.int64(stages[WOUND, iw])
        crit = (o >> 1) & 1
        saveable = (o & 1) | (crit & normal_crit)
        for i_s in range(PAIRS):
            fails = np.int64(stages[SAVE, i_s])
            packed[iw * PAIRS + i_s] = ((saveable & fails) | (((o & 1) | crit) << 12) | (crit << 24)
                                        | ((o >> 2) << 36) | ((saveable & (fails >> 2)) << 48))
    return packed


@inline
def _count_rolls(n, packed, buf, pos, s):
    """Make ``n`` rolls of one stage (``packed`` by _pack_counts), two per stream value.
    Returns (values with bit 1, with bit 2, with bit 4, pos, s)."""
    ones = 0
    twos = 0
    fours = 0
    while n > 0:
        k = min(n, 2 * BUFFER)
        need = (k + 1) >> 1
        pos, s = reserve(need, buf, pos, s)
        acc = 0
        for i in range(k >> 1):
            r = buf[pos + i]
            acc += packed[pair_index(r & LOW32)] + packed[pair_index(r >> S32)]
        if k & 1:
            acc += packed[pair_index(buf[pos + (k >> 1)] & LOW32)]
        ones += acc & MASK21
        twos += (acc >> 21) & MASK21
        fours += acc >> 42
        pos += need
        n -= k
    return ones, twos, fours, pos, s


@inline
def _wound_and_save(n, packed, devastating, buf, pos, s):
    """Wound roll and saving throw of ``n`` hits, one stream value each (R-5, R-7), ``packed``
    by _pack_wound_save.

    Returns (wounds, critical wounds, unsaved, devastating, re-rollable failed Wound rolls,
    re-rollable failed saves, pos, s).
    """
    wounds = 0
    crits = 0
    unsaved = 0
    wound_fails = 0
    save_fails = 0
    while n > 0:
        k = min(n, BUFFER)
        pos, s = reserve(k, buf, pos, s)
        acc = 0
        for i in range(k):
            r = buf[pos + i]
            acc += packed[pair_index(r & LOW32) * PAIRS + pair_index(r >> S32)]
        unsaved += acc & MASK12
        wounds += (acc >> 12) & MASK12
        crits += (acc >> 24) & MASK12
        wound_fails += (acc >> 36) & MASK12
        save_fails += acc >> 48
        pos += k
        n -= k
    return wounds, crits, unsaved, crits if devastating else 0, wound_fails, save_fails, pos, s


@inline
def _feel_no_pain(damage, stages, buf, pos, s, pool, left):
    """R-8.5: one FNP roll per point; returns (points not ignored, pos, s, pool, left)."""
    lost = 0
    for _ in range(damage):
        f, pos, s, pool, left = d6(buf, pos, s, pool, left)
        lost += stages[FEEL_NO_PAIN, (f - 1) * 7] == 0
    return lost, pos, s, pool, left


@inline
def _damage(rolls, roll_maps, roll_flags, command, buf, pos, s, pool, left):
    """One Damage roll with its re-roll (R-8.1): the policy's first, else the Command Re-roll
    if still available (``command`` 1) and the result is below average. Returns (damage,
    command left, pos, s, pool, left)."""
    raw, pos, s, pool, left = _dice(DAMAGE, rolls, buf, pos, s, pool, left)
    flags = roll_flags[DAMAGE, raw]
    if flags & R_REROLL or (command and flags & R_BELOW_AVERAGE):
        if not flags & R_REROLL:
            command = 0
        raw, pos, s, pool, left = _dice(DAMAGE, rolls, buf, pos, s, pool, left)
    return roll_maps[DAMAGE, raw], command, pos, s, pool, left


@inline
def _fresh(row, stages, buf, pos, s, pool, left):
    """A lone re-roll of one die of ``stages[row]`` (Command Re-roll: never re-rolled again)."""
    f, pos, s, pool, left = d6(buf, pos, s, pool, left)
    return stages[row, (f - 1) * 7] & 3, pos, s, pool, left


@inline
def _run_chunk(stages, rolls, roll_maps, roll_flags, params, stream, n_trials, out_damage, out_models,
               offsets, out_stages, out_hazard, out_hazard_models):
    flags = params[P_FLAGS]
    torrent = (flags & F_TORRENT) != 0
    lethal = (flags & F_LETHAL) != 0
    devastating = (flags & F_DEVASTATING) != 0
    spill = (flags & F_SPILL) != 0
    fnp = (flags & F_FNP) != 0
    hazardous = (flags & F_HAZARDOUS) != 0
    keep_stages = (flags & F_STAGES) != 0
    firing = params[P_FIRING]
    n_models = params[P_MODELS]
    w_model = params[P_WOUNDS]
    command = params[P_COMMAND]
    haz_w = params[P_HAZ_WOUNDS]
    haz_fnp = params[P_HAZ_FNP]
    unlimited = w_model == 0
    fixed_damage = rolls[DAMAGE, 0] + rolls[DAMAGE, 1] == 0 and not fnp
    fixed_attacks = firing * roll_maps[ATTACKS, 0] if rolls[ATTACKS, 0] + rolls[ATTACKS, 1] == 0 else 0
    fixed_sustained = rolls[SUSTAINED, 0] + rolls[SUSTAINED, 1] == 0
    hit_packed = _pack_counts(stages, HIT)
    save_packed = _pack_counts(stages, SAVE)
    wound_save_packed = _pack_wound_save(stages, devastating)
    buf = np.empty(BUFFER, dtype=np.uint64)
    pos = np.int64(stream[S_POS])
    s = stream[S_COUNTER]
    pool = stream[S_POOL]
    left = np.int64(stream[S_LEFT])
    if pos < BUFFER:  # resume: the buffer holds the BUFFER values before counter s
        refill(buf, s - np.uint64(BUFFER) * GAMMA)
    for _ in range(n_trials):
        # Attacks: Blast and Rapid Fire are part of each model's roll (compile.py).
        if fixed_attacks:
            n_attacks = fixed_attacks
        else:
            n_attacks = 0
            low_raw = -1
            for _m in range(firing):
                raw, pos, s, pool, left = _dice(ATTACKS, rolls, buf, pos, s, pool, left)
                n_attacks += roll_maps[ATTACKS, raw]
                if low_raw < 0 or roll_maps[ATTACKS, raw] < roll_maps[ATTACKS, low_raw]:
                    low_raw = raw
            if command == C_ATTACKS and roll_flags[ATTACKS, low_raw] & R_BELOW_AVERAGE:
                raw, pos, s, pool, left = _dice(ATTACKS, rolls, buf, pos, s, pool, left)
                n_attacks += roll_maps[ATTACKS, raw] - roll_maps[ATTACKS, low_raw]
        # Hit rolls: TORRENT hits automatically and never critically.
        if torrent:
            hits, crits = n_attacks, 0
        else:
            hits, crits, hit_fails, pos, s = _count_rolls(n_attacks, hit_packed, buf, pos, s)
            if command == C_HIT and hit_fails > 0:
                o, pos, s, pool, left = _fresh(HIT, stages, buf, pos, s, pool, left)
                hits += o & 1
                crits += o >> 1
        # Critical Hits: Sustained Hits add non-critical hits (R-4.1/4.2); Lethal Hits
        # wound automatically, without a Critical Wound (R-4.3/4.4).
        if fixed_sustained:
            extra = crits * roll_maps[SUSTAINED, 0]
        else:
            extra = 0
            for _c in range(crits):
                raw, pos, s, pool, left = _dice(SUSTAINED, rolls, buf, pos, s, pool, left)
                extra += roll_maps[SUSTAINED, raw]
        auto = crits if lethal else 0
        # Wound rolls and saves; Devastating Wounds crits skip the save and wait.
        wounds, crit_wounds, unsaved, pending, wound_fails, save_fails, pos, s = _wound_and_save(
            hits + crits + extra - auto, wound_save_packed, devastating, buf, pos, s)
        if auto > 0:
            auto_unsaved, _x, auto_fails, pos, s = _count_rolls(auto, save_packed, buf, pos, s)
            unsaved += auto_unsaved
            save_fails += auto_fails
        if command == C_WOUND and wound_fails > 0:
            o, pos, s, pool, left = _fresh(WOUND, stages, buf, pos, s, pool, left)
            if o:
                wounds += 1
                crit_wounds += o >> 1
                if devastating and o == 2:
                    pending += 1
                else:
                    f, pos, s, pool, left = d6(buf, pos, s, pool, left)
                    g, pos, s, pool, left = d6(buf, pos, s, pool, left)
                    fail = stages[SAVE, (f - 1) * 6 + g - 1] & 1
                    unsaved += fail
        elif command == C_SAVE and save_fails > 0:
            o, pos, s, pool, left = _fresh(SAVE, stages, buf, pos, s, pool, left)
            unsaved -= 1 - o
        hits += crits + extra
        wounds += auto
        # Damage, Feel No Pain and allocation: one model at a time, excess lost.
        total = 0
        before = 0
        after = 0
        models_left = n_models
        w_left = w_model
        damage_command = 1 if command == C_DAMAGE else 0
        if unlimited and fixed_damage:  # nothing random left: (unsaved + devastating) * D
            total = before = after = (unsaved + pending) * roll_maps[DAMAGE, 0]
            to_roll = 0
            pending_left = 0
        else:
            to_roll = unsaved
            pending_left = pending
        for _u in range(to_roll):
            if models_left == 0 and not keep_stages:
                break
            dmg, damage_command, pos, s, pool, left = _damage(rolls, roll_maps, roll_flags, damage_command,
                                                              buf, pos, s, pool, left)
            before += dmg
            if fnp:
                dmg, pos, s, pool, left = _feel_no_pain(dmg, stages, buf, pos, s, pool, left)
            after += dmg
            if unlimited:
                total += dmg
            elif models_left > 0:
                take = dmg if dmg < w_left else w_left
                total += take
                w_left -= take
                if w_left == 0:
                    models_left -= 1
                    w_left = w_model
        # Deferred Devastating-Wounds mortal wounds: to the wounded model,
        # excess lost; under the 2023 text they spill over.
        for _d in range(pending_left):
            if models_left == 0 and not keep_stages:
                break
            dmg, damage_command, pos, s, pool, left = _damage(rolls, roll_maps, roll_flags, damage_command,
                                                              buf, pos, s, pool, left)
            before += dmg
            if fnp:
                dmg, pos, s, pool, left = _feel_no_pain(dmg, stages, buf, pos, s, pool, left)
            after += dmg
            if unlimited:
                total += dmg
                continue
            while dmg > 0 and models_left > 0:
                take = dmg if dmg < w_left else w_left
                total += take
                dmg -= take
                w_left -= take
                if w_left == 0:
                    models_left -= 1
                    w_left = w_model
                if not spill:
                    break
        out_damage[total] += 1
        out_models[n_models - models_left] += 1
        if keep_stages:
            out_stages[offsets[0] + n_attacks] += 1
            out_stages[offsets[1] + hits] += 1
            out_stages[offsets[2] + crits] += 1
            out_stages[offsets[3] + wounds] += 1
            out_stages[offsets[4] + crit_wounds] += 1
            out_stages[offsets[5] + auto] += 1
            out_stages[offsets[6] + pending] += 1
            out_stages[offsets[7] + unsaved] += 1
            out_stages[offsets[8] + before] += 1
            out_stages[offsets[9] + after] += 1
        # Hazardous: one test per firing model; each 1 is 3 mortal wounds to one model
        # (the wounded one first), Feel No Pain per point, excess lost.
        if hazardous:
            lost = 0
            dead = 0
            haz_left = haz_w
            for _h in range(firing):
                f, pos, s, pool, left = d6(buf, pos, s, pool, left)
                if f != 1:
                    continue
                mw = 3
                if haz_fnp < 7:
                    for _p in range(3):
                        g, pos, s, pool, left = d6(buf, pos, s, pool, left)
                        mw -= g >= haz_fnp
                if haz_w == 0:
                    lost += mw
                elif dead < firing:
                    take = mw if mw < haz_left else haz_left
                    lost += take
                    haz_left -= take
                    if haz_left == 0:
                        dead += 1
                        haz_left = haz_w
            out_hazard[lost] += 1
            out_hazard_models[dead] += 1
    stream[S_POS] = pos
    stream[S_COUNTER] = s
    stream[S_POOL] = pool
    stream[S_LEFT] = left


@parallel
def simulate_chunks(stages, rolls, roll_maps, roll_flags, params, streams, chunk_trials, out_damage, out_models,
                    offsets, out_stages, out_hazard, out_hazard_models):
    """Simulate ``chunk_trials[c]`` more trials of every chunk c, adding to its histogram rows.

    stages: int8[4, 36]  rows of mathhammer.codes.Stage; column (first face-1)*6 + (re-roll face-1)
    rolls: int64[3, 2]  (number of D6, number of D3) per mathhammer.codes.Roll
    roll_maps: int64[3, MAX_RAW + 1]  raw dice sum -> value
    roll_flags: int8[3, MAX_RAW + 1]  mathhammer.codes.RollFlag bits per raw sum
    params: int64[7]  mathhammer.codes.Param
    streams: uint64[n_chunks, N_STREAM]  each chunk's random stream (S_POS, ...), advanced in place;
        a new chunk's row is (BUFFER, seed, 0, 0) (mathhammer.kernel.new_streams)
    chunk_trials: int64[n_chunks]  trials to run now in each chunk (0 for a finished chunk)
    out_damage: int64[n_chunks, damage_max + 1]  trials by wounds lost by the target
    out_models: int64[n_chunks, target_models + 1]  trials by models destroyed
    offsets: int64[11]  where each mathhammer.codes.StageCount histogram starts in a row of out_stages
    out_stages: int64[n_chunks, offsets[10]]  trials by each stage count (filled with Flag.STAGES)
    out_hazard: int64[n_chunks, 3 * firing + 1]  trials by wounds lost to Hazardous tests
    out_hazard_models: int64[n_chunks, firing + 1]  trials by firing models lost to them
    All outputs are zeroed by the caller before the first call and only added to.
    """
    for c in prange(streams.shape[0]):
        _run_chunk(stages, rolls, roll_maps, roll_flags, params, streams[c], chunk_trials[c], out_damage[c],
                   out_models[c], offsets, out_stages[c], out_hazard[c], out_hazard_models[c])
