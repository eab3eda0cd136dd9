"""Explicit-state random numbers: a counter-based splitmix64 stream, buffered, and dice by
multiply-shift.

The stream of a chunk is splitmix64's output for counter values seed + k * GAMMA, k = 1, 2, ...
It is produced ``BUFFER`` values at a time into a small array (a loop the compiler vectorises),
so the dice loops only load, multiply and shift. The state is (buf, pos, s): the buffer, the
next unread position, and the counter of the last value written.

Hit, Wound and save rolls (the hot loops): each 32-bit half of a value gives one roll of 36
faces (a D6 and the D6 that may re-roll it) by multiply-shift, uniform within 2**-32
(relative error below 1e-8).

Single D6 (attacks, sustained, damage, Feel No Pain): one value is a 64-bit fraction
U = pool / 2**64; a D6 is floor(6U) + 1, the high word of the 128-bit product ``pool * 6``
computed exactly from 32-bit halves, and ``pool * 6 mod 2**64`` is the next fraction. The
twelve faces taken from one value are the base-6 digits of a uniform number: the k-th is
uniform up to 6**k / 2**64 < 1e-10.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
LOW32 = np.uint64(0xFFFFFFFF)
SIX = np.uint64(6)
THIRTY_SIX = np.uint64(36)
S30 = np.uint64(30)
S27 = np.uint64(27)
S31 = np.uint64(31)
S32 = np.uint64(32)
#: Values produced per refill of the buffer.
BUFFER = 512
#: D6 faces taken from one value.
FACES_PER_VALUE = 12


@inline
def splitmix64(s):
    """Advance counter ``s`` (uint64) by one step; return (new counter, 64 random bits)."""
    s = s + GAMMA
    z = s
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return s, z ^ (z >> S31)


@inline
def refill(buf, s):
    """Write the next ``buf.size`` values of the stream after counter ``s``; return the counter."""
    for j in range(buf.size):
        z = s + np.uint64(j + 1) * GAMMA
        z = (z ^ (z >> S30)) * MIX1
        z = (z ^ (z >> S27)) * MIX2
        buf[j] = z ^ (z >> S31)
    return s + np.uint64(buf.size) * GAMMA


@inline
def reserve(k, buf, pos, s):
    """Make ``k`` (<= buf.size) unread values available from ``pos``: returns (pos, s),
    refilling (and skipping the unread rest) when fewer are left."""
    if pos + k > buf.size:
        s = refill(buf, s)
        pos = 0
    return pos, s


@inline
def pair_index(half):
    """A D6 and the D6 that may re-roll it, as one roll of 36 faces from a 32-bit fraction
    ``half`` (uint64 < 2**32): floor(36 * half / 2**32) = (first-1)*6 + (second-1)."""
    return np.int64((half * THIRTY_SIX) >> S32)


@inline
def digit(pool, base):
    """Take one roll of ``base`` (uint64) faces from ``pool``: returns (0..base-1 as int64, next pool)."""
    high = ((pool >> S32) * base + (((pool & LOW32) * base) >> S32)) >> S32
    return np.int64(high), pool * base


@inline
def d6(buf, pos, s, pool, left):
    """Roll one D6. Returns (face 1..6 as int64, pos, s, pool, left)."""
    if left == 0:
        pos, s = reserve(1, buf, pos, s)
        pool = buf[pos]
        pos += 1
        left = FACES_PER_VALUE
    f, pool = digit(pool, SIX)
    return f + 1, pos, s, pool, left - 1
