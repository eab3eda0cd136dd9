"""Explicit-state random numbers: splitmix64, and dice by exact multiply-shift.

One splitmix64 output ``pool`` is a 64-bit fraction U = pool / 2**64. A roll of ``base``
equally likely faces (6 for a D6, 36 for a D6 together with the D6 that may re-roll it) is
floor(base * U): the high word of the 128-bit product ``pool * base``, computed exactly from
32-bit halves; ``pool * base mod 2**64`` is the next fraction. So the rolls taken from one
output are the base-``base`` digits of a uniform number: the k-th of them is uniform up to
base**k / 2**64, which stays below 1e-9 for the at most 12 D6-digits (6 rolls of 36) taken.
"""

from __future__ import annotations

import numpy as np

from ._jit import inline

GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
LOW32 = np.uint64(0xFFFFFFFF)
SIX = np.uint64(6)
S30 = np.uint64(30)
S27 = np.uint64(27)
S31 = np.uint64(31)
S32 = np.uint64(32)
#: D6 digits taken from one splitmix64 output (a roll of 36 counts as two).
DIGITS_PER_DRAW = 12


@inline
def splitmix64(s):  # type: ignore[no-untyped-def]
    """Advance state ``s`` (uint64); return (new state, 64 random bits)."""
    s = s + GAMMA
    z = s
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return s, z ^ (z >> S31)


@inline
def digit(pool, base):  # type: ignore[no-untyped-def]
    """Take one roll of ``base`` (uint64) faces from ``pool``: returns (0..base-1 as int64, next pool)."""
    high = ((pool >> S32) * base + (((pool & LOW32) * base) >> S32)) >> S32
    return np.int64(high), pool * base


@inline
def d6(s, pool, left):  # type: ignore[no-untyped-def]
    """Roll one D6 from the buffered state. Returns (face 1..6 as int64, s, pool, left)."""
    if left == 0:
        s, pool = splitmix64(s)
        left = DIGITS_PER_DRAW
    f, pool = digit(pool, SIX)
    return f + 1, s, pool, left - 1
