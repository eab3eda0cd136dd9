"""Chunked trial loop: every trial is one whole attack sequence of the firing unit.

attacks -> Hit rolls -> sustained / lethal -> Wound rolls and saves -> damage -> Feel No Pain
-> allocation, then the deferred Devastating-Wounds mortal wounds (R-6.3). Rules live in the
tables; this module only rolls dice and looks them up.

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
from .rng import BUFFER, LOW32, S32, d6, pair_index, reserve

# Rows, columns and flags of mathhammer.codes, repeated as plain ints so the kernel stays
# free of Python objects (tests/test_kernel.py checks they agree).
HIT, WOUND, SAVE, FEEL_NO_PAIN = 0, 1, 2, 3
ATTACKS, SUSTAINED, DAMAGE = 0, 1, 2
P_FLAGS, P_FIRING, P_MODELS, P_WOUNDS = 0, 1, 2, 3
F_TORRENT, F_LETHAL, F_DEVASTATING, F_SPILL, F_FNP = 1, 2, 4, 8, 16
SUCCESS, CRIT = 1, 2
PAIRS = 36


@inline
def _roll(kind, rolls, roll_maps, buf, pos, s, pool, left):  # type: ignore[no-untyped-def]
    """Roll the dice of ``rolls[kind]`` and map their raw sum. Returns (value, pos, s, pool, left)."""
    n = rolls[kind, 0]
    raw = 0
    if n > 0:
        half = rolls[kind, 1] == 3
        for _ in range(n):
            f, pos, s, pool, left = d6(buf, pos, s, pool, left)
            raw += (f + 1) >> 1 if half else f
    return roll_maps[kind, raw], pos, s, pool, left


@inline
def _count_rolls(n, row, stages, buf, pos, s):  # type: ignore[no-untyped-def]
    """Make ``n`` rolls of ``stages[row]`` (each a D6 with the D6 that may re-roll it), two per
    stream value. Returns (rolls giving 1, rolls giving 2, pos, s)."""
    ones = 0
    twos = 0
    while n > 0:
        k = min(n, 2 * BUFFER)
        need = (k + 1) >> 1
        pos, s = reserve(need, buf, pos, s)
        for i in range(k >> 1):
            r = buf[pos + i]
            o = stages[row, pair_index(r & LOW32)]
            ones += o & 1
            twos += o >> 1
            o = stages[row, pair_index(r >> S32)]
            ones += o & 1
            twos += o >> 1
        if k & 1:
            o = stages[row, pair_index(buf[pos + (k >> 1)] & LOW32)]
            ones += o & 1
            twos += o >> 1
        pos += need
        n -= k
    return ones, twos, pos, s


@inline
def _wound_and_save(n, stages, devastating, buf, pos, s):  # type: ignore[no-untyped-def]
    """Wound roll and saving throw of ``n`` hits, one stream value each (R-5, R-7).

    Returns (unsaved wounds, Devastating-Wounds critical wounds, pos, s); with Devastating
    Wounds a Critical Wound skips the save and is counted apart (R-6.1).
    """
    dev = 1 if devastating else 0
    normal_crit = 1 - dev
    unsaved = 0
    pending = 0
    while n > 0:
        k = min(n, BUFFER)
        pos, s = reserve(k, buf, pos, s)
        for i in range(k):
            r = buf[pos + i]
            o = stages[WOUND, pair_index(r & LOW32)]
            fails = stages[SAVE, pair_index(r >> S32)]
            unsaved += ((o & 1) | ((o >> 1) & normal_crit)) & fails
            pending += (o >> 1) & dev
        pos += k
        n -= k
    return unsaved, pending, pos, s


@inline
def _feel_no_pain(damage, stages, buf, pos, s, pool, left):  # type: ignore[no-untyped-def]
    """R-8.5: one FNP roll per point; returns (points not ignored, pos, s, pool, left)."""
    lost = 0
    for _ in range(damage):
        f, pos, s, pool, left = d6(buf, pos, s, pool, left)
        lost += stages[FEEL_NO_PAIN, (f - 1) * 6] == 0
    return lost, pos, s, pool, left


@inline
def _run_chunk(stages, rolls, roll_maps, params, seed, n_trials, out_damage, out_models):  # type: ignore[no-untyped-def]
    flags = params[P_FLAGS]
    torrent = (flags & F_TORRENT) != 0
    lethal = (flags & F_LETHAL) != 0
    devastating = (flags & F_DEVASTATING) != 0
    spill = (flags & F_SPILL) != 0
    fnp = (flags & F_FNP) != 0
    firing = params[P_FIRING]
    n_models = params[P_MODELS]
    w_model = params[P_WOUNDS]
    unlimited = w_model == 0
    fixed_damage = rolls[DAMAGE, 0] == 0 and not fnp
    fixed_attacks = firing * roll_maps[ATTACKS, 0] if rolls[ATTACKS, 0] == 0 else 0
    buf = np.empty(BUFFER, dtype=np.uint64)
    pos = BUFFER
    s = seed
    pool = np.uint64(0)
    left = 0
    for _ in range(n_trials):
        if fixed_attacks:
            n_attacks = fixed_attacks
        else:
            n_attacks = 0
            for _m in range(firing):
                a, pos, s, pool, left = _roll(ATTACKS, rolls, roll_maps, buf, pos, s, pool, left)
                n_attacks += a
        # Hit rolls: TORRENT hits automatically and never critically.
        if torrent:
            hits, crits = n_attacks, 0
        else:
            hits, crits, pos, s = _count_rolls(n_attacks, HIT, stages, buf, pos, s)
        # Critical Hits: Sustained Hits add non-critical hits (R-4.1/4.2); Lethal Hits
        # wound automatically, without a Critical Wound (R-4.3/4.4).
        if rolls[SUSTAINED, 0] == 0:  # fixed X: no dice to roll
            extra = crits * roll_maps[SUSTAINED, 0]
        else:
            extra = 0
            for _c in range(crits):
                x, pos, s, pool, left = _roll(SUSTAINED, rolls, roll_maps, buf, pos, s, pool, left)
                extra += x
        auto = crits if lethal else 0
        # Wound rolls and saves; Devastating Wounds crits skip the save and wait.
        unsaved, pending, pos, s = _wound_and_save(hits + crits + extra - auto, stages, devastating, buf, pos, s)
        if auto > 0:
            auto_unsaved, _x, pos, s = _count_rolls(auto, SAVE, stages, buf, pos, s)
            unsaved += auto_unsaved
        # Damage, Feel No Pain and allocation: one model at a time, excess lost.
        total = 0
        models_left = n_models
        w_left = w_model
        if unlimited and fixed_damage:  # nothing random left: unsaved * D
            total = unsaved * roll_maps[DAMAGE, 0]
            unsaved = 0
        for _u in range(unsaved):
            if models_left == 0:
                break
            dmg, pos, s, pool, left = _roll(DAMAGE, rolls, roll_maps, buf, pos, s, pool, left)
            if fnp:
                dmg, pos, s, pool, left = _feel_no_pain(dmg, stages, buf, pos, s, pool, left)
            if unlimited:
                total += dmg
            else:
                take = dmg if dmg < w_left else w_left
                total += take
                w_left -= take
                if w_left == 0:
                    models_left -= 1
                    w_left = w_model
        # Deferred Devastating-Wounds mortal wounds: to the wounded model,
        # excess lost; under the 2023 text they spill over.
        for _d in range(pending):
            if models_left == 0:
                break
            dmg, pos, s, pool, left = _roll(DAMAGE, rolls, roll_maps, buf, pos, s, pool, left)
            if fnp:
                dmg, pos, s, pool, left = _feel_no_pain(dmg, stages, buf, pos, s, pool, left)
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


@parallel
def simulate_chunks(stages, rolls, roll_maps, params, seeds, chunk_trials, out_damage, out_models):  # type: ignore[no-untyped-def]
    """Fill ``out_damage[c, d]`` with how many trials of chunk c made the target lose d wounds,
    and ``out_models[c, k]`` with how many of them destroyed k models.

    stages: int8[4, 36]  rows of mathhammer.codes.Stage; column (first face-1)*6 + (re-roll face-1)
    rolls: int64[3, 2]  (dice count, sides 3|6) per mathhammer.codes.Roll
    roll_maps: int64[3, MAX_RAW + 1]  raw dice sum -> value
    params: int64[4]  mathhammer.codes.Param (flags, firing models, target models, wounds per model or 0)
    seeds: uint64[n_chunks]  one stream per chunk
    chunk_trials: int64[n_chunks]  trials in each chunk
    out_damage: int64[n_chunks, damage_max + 1]  zeroed by the caller
    out_models: int64[n_chunks, target_models + 1]  zeroed by the caller
    """
    for c in prange(seeds.shape[0]):
        _run_chunk(stages, rolls, roll_maps, params, seeds[c], chunk_trials[c], out_damage[c], out_models[c])
