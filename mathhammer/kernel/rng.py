"""Explicit-state random numbers: a counter-based splitmix64 stream, buffered, and dice by
multiply-shift.

The stream of a chunk is splitmix64's output for counter values seed + k * GAMMA, k = 1, 2, ...
It is produced ``BUFFER`` values at a time into a small array (a loop the compiler vectorises),
so drawing is a load. The state is (buf, pos, s): the buffer, the next unread position and the
counter of the last value written; the helpers take it and return it, so that once LLVM has
inlined them it lives in registers (kept in an array, its store and reload cost seven times
the draw). A chunk's row of ``streams`` keeps (pos, s) between kernel calls.

Counts of successes take one value per draw (:mod:`.binomial`). A D6 (attacks, sustained,
damage, lone re-rolls, Hazardous) takes one value U = r / 2**64: floor(6U) + 1, the high word
of the 128-bit product ``r * 6`` computed exactly from 32-bit halves (uniform within 6 / 2**64).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .shapes import BUFFER

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
LOW32 = np.uint64(0xFFFFFFFF)
SIX = np.uint64(6)
S30 = np.uint64(30)
S27 = np.uint64(27)
S31 = np.uint64(31)
S32 = np.uint64(32)


@jit
def splitmix64(s):
    """Advance counter ``s`` (uint64) by one step; return (new counter, 64 random bits)."""
    s = s + GAMMA
    z = s
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return s, z ^ (z >> S31)


@jit
def refill(buf, s):
    """Write the next BUFFER values of the stream after counter ``s`` into ``buf[:BUFFER]`` (a
    buffer may be longer: rows are padded to keep threads off each other's cache lines);
    return the counter."""
    for j in range(BUFFER):
        z = s + np.uint64(j + 1) * GAMMA
        z = (z ^ (z >> S30)) * MIX1
        z = (z ^ (z >> S27)) * MIX2
        buf[j] = z ^ (z >> S31)
    return s + np.uint64(BUFFER) * GAMMA


@jit
def digit(pool, base):
    """Take one roll of ``base`` (uint64) faces from ``pool``: returns (0..base-1 as int64, next pool)."""
    high = ((pool >> S32) * base + (((pool & LOW32) * base) >> S32)) >> S32
    return np.int64(high), pool * base


@jit
def next_value(buf, pos, s):
    """The next 64 random bits of the stream at buffer position ``pos`` and counter ``s``
    (refilling ``buf`` when spent). Returns (value, pos, s)."""
    if pos >= BUFFER:
        s = refill(buf, s)
        pos = 0
    return buf[pos], pos + 1, s


@jit
def d6(buf, pos, s):
    """Roll one D6 from one value of the stream. Returns (face 1..6 as int64, pos, s)."""
    r, pos, s = next_value(buf, pos, s)
    f, _ = digit(r, SIX)
    return f + 1, pos, s
