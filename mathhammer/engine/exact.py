"""Exact engine: the distributions the Monte Carlo kernel samples, computed by probability arithmetic.

The kernel (``mathhammer/kernel/simulate.py``) is the definition; this module reproduces it stage
by stage, reading only the tables of :class:`~mathhammer.compile.KernelInputs` (no rule is coded
here twice: every outcome of every die is in the tables, this module only adds and multiplies
probabilities). It never imports numba.

Method
------
* A stage roll is uniform over the 36 (first die, re-roll die) pairs of its ``stages`` row; a lone
  die (Command Re-roll, Feel No Pain) is column (face - 1) * 7.
* Attacks: the per-model value pmf of ``Roll.ATTACKS`` convolved over the firing models. The
  Command Re-roll of attacks needs P(total, lowest value): ``sum_j L^j E G^(n-1-j)`` with G the
  pmf restricted to values >= v, L to values > v and E to v (first model at the minimum is the
  j+1-th); the flag of that model's roll is independent of the rest given its value.
* One attack is a generating function (a polynomial in the tracked counter) built from the
  Hit-roll outcomes, the Sustained Hits roll and, for each hit that rolls to wound, the joint
  (Wound roll, saving throw) outcome; Lethal auto-wounds roll a save. The attacks of a trial
  are independent except for the one Command Re-roll (hit, wound or save): the generating
  function is then an upper-triangular 2 x 2 matrix of polynomials over "re-roll still
  available / spent" (:class:`_Tri`); the first eligible failure (all are alike) takes it,
  which equals the kernel's "one of them if there is at least one". The distribution over the
  number of attacks mixes the powers of that matrix (divide and conquer over the counts,
  sum_lo + g^half sum_hi, with long products by FFT; squaring for a fixed number).
* Damage depends only on K = unsaved + devastating attacks (every roll is independent; the
  Command Re-roll of damage goes to the first below-average roll, and Devastating mortal
  wounds without spill-over are allocated like a normal attack). Without wound limits the
  damage is a mixture of powers of the per-roll (after Feel No Pain) pmf; with them (excess
  lost) a renewal process: the models are identical, so the number of rolls that destroys one
  has its own small distribution and the models destroyed are a renewal count
  (:meth:`_Alloc.renewal`). With the Command Re-roll of damage, a dynamic programme over the
  remaining wounds of the unit R (R = (models left - 1) * W + wounds left on the model being
  damaged; it fixes both the damage and the models destroyed), doubled with a "Command Re-roll
  available" flag. Under the 2023 text (spill-over) the
  Devastating attacks come after all the others with another transition: the attacks are mixed
  with rows x(p) = sum_u P(unsaved u, devastating p) start . T^u (a (p, states) matrix) and then
  sum_p x(p) . T_spill^p, each T applied by shifted copies (no matrix product, so no BLAS).
* Hazardous: the same renewal process on the firing unit (tests one per firing model).
* Before each phase (attacks, counters, damage) its time and memory are estimated from what is
  already known, and a request above the limits of :mod:`mathhammer.limits` is refused
  (:class:`_Cost`); a large unit's programme steps in memory of the order of its states.

Everything is float64; the test-suite checks it against an independent Fraction oracle to 1e-12.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ..codes import Command, Flag, Param, Roll, RollFlag, Stage, StageCount
from ..compile import STAGE_CAP
from ..errors import NotExactError
from ..limits import EXACT_MAX_BYTES, EXACT_MAX_SECONDS, size_text
from ..result import DamageResult, Distribution

if TYPE_CHECKING:
    from ..compile import KernelInputs

__all__ = ["run"]

Array = npt.NDArray[np.float64]

# The codes as plain ints (IntEnum / IntFlag arithmetic is slow on the fast path).
_F_TORRENT, _F_LETHAL, _F_DEVASTATING, _F_SPILL, _F_FNP, _F_HAZARDOUS = (
    int(Flag.TORRENT), int(Flag.LETHAL_HITS), int(Flag.DEVASTATING_WOUNDS), int(Flag.DEVASTATING_SPILL),
    int(Flag.FEEL_NO_PAIN), int(Flag.HAZARDOUS))
_C_NONE, _C_HIT, _C_WOUND, _C_DAMAGE, _C_SAVE, _C_ATTACKS = (int(c) for c in (
    Command.NONE, Command.HIT, Command.WOUND, Command.DAMAGE, Command.SAVE, Command.ATTACKS))
_S_HIT, _S_WOUND, _S_SAVE, _S_FNP = (int(s) for s in (Stage.HIT, Stage.WOUND, Stage.SAVE, Stage.FEEL_NO_PAIN))
_R_ATTACKS, _R_SUSTAINED, _R_DAMAGE = (int(r) for r in (Roll.ATTACKS, Roll.SUSTAINED, Roll.DAMAGE))
_RF_REROLL, _RF_BELOW = int(RollFlag.REROLL), int(RollFlag.BELOW_AVERAGE)
assert (int(Param.FLAGS), int(Param.FIRING_MODELS), int(Param.TARGET_MODELS), int(Param.TARGET_WOUNDS),
        int(Param.COMMAND)) == tuple(range(5))
#: Columns of a lone die (face - 1) * 7 in a ``stages`` row.
_LONE = np.arange(6) * 7
#: Counters that a generating function can track (the kernel's StageCount 1..7, less one).
_HITS, _CRITS, _WOUNDS, _CWOUNDS, _LETHAL, _DEV, _UNSAVED = (int(c) - 1 for c in (
    StageCount.HITS, StageCount.CRITICAL_HITS, StageCount.WOUNDS, StageCount.CRITICAL_WOUNDS, StageCount.LETHAL,
    StageCount.DEVASTATING, StageCount.UNSAVED))
_N_COUNTERS = 7
_ITEM_LEVEL = (_WOUNDS, _CWOUNDS, _DEV, _UNSAVED)  # set by Wound rolls and saves
#: Units with more remaining-wound states than this use scattered transitions, not matrices.
_DENSE_STATES = 256
#: Seconds per multiply-add of a convolution, per array element written, per numpy call, per
#: state of a scattered allocation step (:meth:`_Alloc.step`), per element of a dense one
#: (measured on one laptop core, rounded up): the estimate of :func:`_check_cost`.
_S_MUL, _S_ELEM, _S_CALL, _S_SCATTER, _S_DENSE = 0.4e-9, 8e-9, 3e-6, 10e-9, 0.2e-9
#: Seconds per element of one shifted copy of the states (:meth:`_Alloc._scattered`).
_S_SHIFT = 3e-9
#: Seconds of an FFT convolution per element of its size per log2 of the size (three transforms).
_S_FFT = 1e-8
#: Seconds per element of a shifted copy or a sum of (rows, states) arrays (the 2023 spill-over).
_S_ROW = 1.5e-9
#: The stage breakdown's keys, in the kernel's StageCount order.
_STAGE_KEYS = tuple(name.lower() for name in StageCount.__members__)
_ONE1 = np.ones(1)
#: Bits of the stage values 0..7.
_V = np.arange(8)
_BIT1, _BIT2 = _V & 1, (_V >> 1) & 1


# --- polynomials (1D: one tracked counter; 2D: unsaved x devastating) ---------------------------
#: Convolutions of two arrays at least this long, with a product of lengths at least _FFT_WORK,
#: go through the FFT (faster beyond about 300 x 300 on one core; measured).
_FFT_MIN, _FFT_WORK = 300, 1e6
#: An FFT convolution's error is about 2 eps |a|_2 |b|_2 (measured on binomial pmfs); values below
#: this many times eps |a|_2 |b|_2 are noise and set to 0 (so tails still end and cost nothing).
_FFT_NOISE = 16.0


def _fast_len(n: int) -> int:
    """The smallest 2^i 3^j >= n (a size the FFT handles quickly)."""
    best = 1 << (n - 1).bit_length()
    p3 = 1
    while p3 < best:
        size = p3 << max(0, (-(-n // p3) - 1).bit_length())
        best = min(best, size)
        p3 *= 3
    return best


def _convolve(a: Array, b: Array) -> Array:
    """np.convolve of two non-negative 1D arrays; through the FFT when both are long.

    The FFT result is exact to about 1e-16 of the largest probability (a far tail loses its
    relative accuracy, not its absolute one): values within the error bound, negatives included,
    are set to 0, so the result stays a non-negative distribution whose tails end."""
    if min(a.size, b.size) < _FFT_MIN or a.size * b.size < _FFT_WORK:
        return np.convolve(a, b)
    n = a.size + b.size - 1
    size = _fast_len(n)
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
    # |a|_2 by an explicit sum: np.linalg.norm calls BLAS, whose threads would spin on every core
    floor = _FFT_NOISE * np.finfo(np.float64).eps * math.sqrt(float((a * a).sum()) * float((b * b).sum()))
    out[out <= floor] = 0.0
    return out


def _conv(a: Array, b: Array) -> Array:
    if a.ndim == 1:
        return _convolve(a, b)
    if np.count_nonzero(a) < np.count_nonzero(b):
        a, b = b, a
    out = np.zeros((a.shape[0] + b.shape[0] - 1, a.shape[1] + b.shape[1] - 1))
    n0, n1 = a.shape
    for i, j in zip(*np.nonzero(b), strict=True):
        out[i:i + n0, j:j + n1] += b[i, j] * a
    return out


def _add(a: Array, b: Array) -> Array:
    if a.shape == b.shape:
        return a + b
    if a.ndim == 1:
        if a.size < b.size:
            a, b = b, a
        out = a.copy()
        out[:b.size] += b
        return out
    out = np.zeros(np.maximum(a.shape, b.shape))
    out[:a.shape[0], :a.shape[1]] += a
    out[:b.shape[0], :b.shape[1]] += b
    return out


def _shift(a: Array, e: tuple[int, ...]) -> Array:
    """``a`` times the monomial of exponent ``e``."""
    if not any(e):
        return a
    if a.ndim == 1:
        out = np.zeros(a.size + e[0])
        out[e[0]:] = a
        return out
    return np.pad(a, ((e[0], 0), (e[1], 0)))


def _poly(p: Array, e: npt.NDArray[np.int64], ndim: int) -> Array:
    """sum_i p[i] x^e[i] (``e``: (n, ndim) exponents)."""
    if ndim == 1:
        return _bincount(e[:, 0], weights=p) if p.size else np.zeros(1)
    if not p.size:
        return np.zeros((1, 1))
    out = np.zeros((int(e[:, 0].max()) + 1, int(e[:, 1].max()) + 1))
    np.add.at(out, (e[:, 0], e[:, 1]), p)
    return out


class _Tri:
    """[[aa, au], [0, uu]]: a generating function with a Command Re-roll. ``aa``: it stays
    available, ``au``: it is spent here, ``uu``: it was spent before. ``au is None`` and
    ``uu is aa``: no re-roll can happen (a plain polynomial)."""

    __slots__ = ("aa", "au", "uu")

    def __init__(self, aa: Array, au: Array | None = None, uu: Array | None = None) -> None:
        self.aa = aa
        self.au = au
        self.uu = aa if uu is None else uu

    @property
    def plain(self) -> bool:
        return self.au is None and self.uu is self.aa

    def __mul__(self, o: _Tri) -> _Tri:
        aa = _conv(self.aa, o.aa)
        if self.plain and o.plain:
            return _Tri(aa)
        uu = _conv(self.uu, o.uu)
        au = None if o.au is None else _conv(self.aa, o.au)
        if self.au is not None:
            t = _conv(self.au, o.uu)
            au = t if au is None else _add(au, t)
        return _Tri(aa, au, uu)

    def __add__(self, o: _Tri) -> _Tri:
        aa = _add(self.aa, o.aa)
        if self.plain and o.plain:
            return _Tri(aa)
        au = self.au if o.au is None else o.au if self.au is None else _add(self.au, o.au)
        return _Tri(aa, au, _add(self.uu, o.uu))

    def scale(self, c: float) -> _Tri:
        if self.plain:
            return _Tri(self.aa * c)
        return _Tri(self.aa * c, None if self.au is None else self.au * c, self.uu * c)

    def shift(self, e: tuple[int, ...]) -> _Tri:
        if not any(e):
            return self
        if self.plain:
            return _Tri(_shift(self.aa, e))
        return _Tri(_shift(self.aa, e), None if self.au is None else _shift(self.au, e), _shift(self.uu, e))

    def start(self) -> Array:
        """The distribution from "re-roll available": aa + au."""
        return self.aa if self.au is None else _add(self.aa, self.au)


def _one(ndim: int) -> _Tri:
    return _Tri(np.ones((1,) * ndim))


def _power(g: _Tri, n: int, ndim: int) -> _Tri:
    result = None
    base = g
    while n:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if n:
            base = base * base
    return _one(ndim) if result is None else result


#: Mixtures over at most this many counts use Horner's scheme directly (:func:`_compose`).
_LEAF = 32


def _horner(c: Array, lo: int, hi: int, g: _Tri, ndim: int) -> _Tri:
    """sum_{i=lo}^{hi-1} c[i] g^(i-lo) by Horner's scheme (a constant is c times the identity)."""
    acc = _one(ndim).scale(float(c[hi - 1]))
    for i in range(hi - 2, lo - 1, -1):
        acc = acc * g
        if c[i]:
            k = np.full((1,) * ndim, float(c[i]))
            acc = _Tri(_add(acc.aa, k)) if acc.plain else _Tri(_add(acc.aa, k), acc.au, _add(acc.uu, k))
    return acc


def _compose(c: Array, g: _Tri, ndim: int) -> _Tri:
    """sum_i c[i] g^i, divide and conquer: sum_lo + g^half sum_hi with g^half (half a power of
    two) by squaring, so the long products are few and go through the FFT: about
    log2(len(c)) FFT convolutions of the result's length per level instead of Horner's
    len(c) convolutions of growing length (quadratic)."""
    powers: dict[int, _Tri] = {1: g}

    def power(m: int) -> _Tri:
        if m not in powers:
            h = power(m // 2)
            powers[m] = h * h
        return powers[m]

    def part(lo: int, hi: int) -> _Tri:
        if hi - lo <= _LEAF:
            return _horner(c, lo, hi, g, ndim)
        half = 1 << ((hi - lo - 1).bit_length() - 1)
        return part(lo, lo + half) + power(half) * part(lo + half, hi)

    return part(0, c.size)


def _mix(w: Array, g: _Tri, ndim: int) -> Array:
    """sum_n w[n] g^n, from "re-roll available" (:func:`_compose`; squaring for a fixed n)."""
    nz = np.flatnonzero(w)
    lo, hi = int(nz[0]), int(nz[-1])
    if lo == hi:
        return _power(g, lo, ndim).scale(float(w[lo])).start()
    acc = _compose(w[lo:hi + 1], g, ndim)
    if lo:
        acc = acc * _power(g, lo, ndim)
    return acc.start()


def _npower(p: Array, n: int) -> Array:
    """The n-fold convolution of a 1D pmf."""
    result = None
    base = p
    while n:
        if n & 1:
            result = base if result is None else _convolve(result, base)
        n >>= 1
        if n:
            base = _convolve(base, base)
    return _ONE1 if result is None else result


def _raw_pmf(n6: int, n3: int) -> Array:
    """pmf of the raw sum of n6 D6 and n3 D3 (a D3 is (face + 1) // 2)."""
    p = _ONE1
    if n6:
        p = np.convolve(p, _npower(np.array([0.0] + [1 / 6] * 6), n6))
    if n3:
        p = np.convolve(p, _npower(np.array([0.0, 1 / 3, 1 / 3, 1 / 3]), n3))
    return p


def _bincount(x: npt.NDArray[np.integer[Any]], weights: npt.ArrayLike, minlength: int = 0) -> Array:
    """np.bincount with weights, typed as what it returns: float64 sums."""
    return cast(Array, np.bincount(x, weights=weights, minlength=minlength))


def _trim_tail(p: Array) -> Array:
    """``p`` without its trailing zeros (a far tail below the smallest float is exactly 0)."""
    nz = np.flatnonzero(p)
    return p[: nz[-1] + 1] if nz.size and nz[-1] + 1 < p.size else p


def _trim(p: Array) -> Distribution:
    p = np.asarray(p, dtype=np.float64)
    if p[-1] != 0.0:
        return Distribution(probabilities=p.copy(), trials=None)
    nz = np.flatnonzero(p)
    return Distribution(probabilities=p[: (nz[-1] + 1) if nz.size else 1].copy(), trials=None)


def capped_stage(d: Distribution) -> Distribution:
    """A whole exact stage distribution as Monte Carlo gives one: values 0 .. STAGE_CAP - 1 one
    by one and P(X >= STAGE_CAP) in the last, with the mean and sd of the whole (``capped_at``),
    when it reaches further (an exact stage can span tens of millions of values: a document of
    gigabytes). Only for what is shown: the engines combine whole distributions."""
    p = d.probabilities
    if d.capped_at is not None or p.size <= STAGE_CAP + 1:
        return d
    support = np.arange(p.size, dtype=np.float64)
    mean = float(support @ p)
    sd = math.sqrt(max(0.0, float(((support - mean) ** 2) @ p)))
    head = np.append(p[:STAGE_CAP], p[STAGE_CAP:].sum())
    return Distribution(probabilities=head, trials=None, capped_at=STAGE_CAP, moments=(mean, sd))


# --- the tables -------------------------------------------------------------------------------
class _Tables:
    """What one run needs from KernelInputs, as probabilities (computed when first needed)."""

    def __init__(self, k: KernelInputs) -> None:
        st = np.asarray(k.stages, dtype=np.int64)
        if st.min() < 0 or st.max() > 7:
            raise NotExactError("stage values outside 0..7", where="tables", value=int(st.max()))
        self.st = st
        flags, self.firing, self.models, self.wounds, self.command = k.params.tolist()
        self.torrent = bool(flags & _F_TORRENT)
        self.lethal = bool(flags & _F_LETHAL)
        self.dev = bool(flags & _F_DEVASTATING)
        self.spill = bool(flags & _F_SPILL)
        self.fnp = bool(flags & _F_FNP)
        self.hazardous = bool(flags & _F_HAZARDOUS)
        self.rolls = k.rolls.tolist()
        self.maps = k.roll_maps
        self.rflags = k.roll_flags

    def raw(self, row: int) -> Array:
        """pmf of the raw dice sum of roll ``row`` (the index of roll_maps / roll_flags)."""
        return _raw_pmf(*self.rolls[row])

    @cached_property
    def hit_groups(self) -> dict[tuple[int, int, int], float]:
        """Hit roll: P((bit 1, bit 2, bit 4)) of its stage value (hit, critical, re-rollable)."""
        groups: dict[tuple[int, int, int], float] = {}
        for v, n in enumerate(np.bincount(self.st[_S_HIT], minlength=8).tolist()):
            if n:
                key = (v & 1, (v >> 1) & 1, v >> 2)
                groups[key] = groups.get(key, 0.0) + n / 36.0
        return groups

    @cached_property
    def hit_list(self) -> list[tuple[int, int, float]]:
        """(bit 1, bit 2, probability) of the Hit-roll values that score, re-rollable or not."""
        out: dict[tuple[int, int], float] = {}
        for (h1, h2, _), p in self.hit_groups.items():
            if h1 or h2:
                out[h1, h2] = out.get((h1, h2), 0.0) + p
        return [(h1, h2, p) for (h1, h2), p in out.items()]

    @cached_property
    def p_no_hit(self) -> float:
        return sum(p for (h1, h2, _), p in self.hit_groups.items() if not (h1 or h2))

    @cached_property
    def max_items(self) -> int:
        """Most hits one Hit roll can send to the Wound roll (before Sustained Hits)."""
        return max([1] + [h1 + h2 for h1, h2, _ in self.hit_list] + [s for s, _ in self.sus_items])

    @cached_property
    def hit_fresh(self) -> Array:
        return np.bincount(self.st[_S_HIT, _LONE] & 3, minlength=4) / 6.0

    @cached_property
    def wound_p(self) -> Array:
        return np.bincount(self.st[_S_WOUND], minlength=8) / 36.0

    @cached_property
    def save_p(self) -> Array:
        return np.bincount(self.st[_S_SAVE], minlength=8) / 36.0

    @cached_property
    def items(self) -> tuple[Array, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Wound roll and save of one hit (kernel _pack_wound_save): every (wound value, save
        value) pair as (probability, counters (n, 7), re-rollable Wound roll, re-rollable save)."""
        wp, sp = self.wound_p, self.save_p
        wv, sv = np.nonzero(np.outer(wp, sp))
        crit = (wv >> 1) & 1
        saveable = (wv & 1) | (crit & (0 if self.dev else 1))
        c = np.zeros((wv.size, _N_COUNTERS), dtype=np.int64)
        c[:, _WOUNDS] = (wv & 1) | crit
        c[:, _CWOUNDS] = crit
        c[:, _DEV] = crit if self.dev else 0
        c[:, _UNSAVED] = saveable & sv & 1
        return wp[wv] * sp[sv], c, (wv >> 2).astype(bool), (saveable & (sv >> 2)).astype(bool)

    @cached_property
    def item_probs(self) -> tuple[float, float, float, float]:
        """P(a hit's Wound roll succeeds, is critical, is a Devastating critical, its save fails)."""
        wp, sp = self.wound_p, self.save_p
        crit = _BIT2
        saveable = _BIT1 | (crit & (0 if self.dev else 1))
        p_fail = float(sp @ _BIT1)
        return (float(wp @ (_BIT1 | crit)), float(wp @ crit), float(wp @ crit) if self.dev else 0.0,
                float(wp @ saveable) * p_fail)

    def item_poly(self, ww: int, wcw: int, wd: int, wu: int) -> Array:
        """One hit's Wound roll and save as a polynomial in the counter of weights (wounds,
        critical wounds, devastating, unsaved) (kernel _pack_wound_save)."""
        if not (ww or wcw or wd or wu):
            return _ONE1
        if ww + wcw + wd + wu == 1 or (ww, wcw, wd, wu) == (0, 0, 1, 1):  # 0 or 1 per hit
            pw, pc, pd, pu = self.item_probs
            p = ww * pw + wcw * pc + wd * pd + wu * pu
            return np.array([1.0 - p, p])
        crit = _BIT2
        saveable = _BIT1 | (crit & (0 if self.dev else 1))
        a = ww * (_BIT1 | crit) + (wcw + (wd if self.dev else 0)) * crit
        e = a[:, None] + (wu * saveable)[:, None] * _BIT1[None, :]
        return _bincount(e.ravel(), weights=np.outer(self.wound_p, self.save_p).ravel())

    @cached_property
    def auto_poly(self) -> Array:
        """A Lethal Hits automatic wound's save, in the unsaved counter."""
        p = float(self.save_p @ _BIT1)
        return np.array([1.0 - p, p])

    @cached_property
    def sus_items(self) -> list[tuple[int, float]]:
        return [(int(s), float(self.sus[s])) for s in np.flatnonzero(self.sus)]

    @cached_property
    def wound_fresh(self) -> list[int]:
        fresh: list[int] = (self.st[_S_WOUND, _LONE] & 3).tolist()
        return fresh

    @cached_property
    def save_fresh(self) -> Array:
        return np.bincount(self.st[_S_SAVE, _LONE] & 3, minlength=4) / 6.0

    @cached_property
    def sus(self) -> Array:
        """pmf of the Sustained Hits extra hits of one Critical Hit."""
        r = self.raw(_R_SUSTAINED)
        return _bincount(self.maps[_R_SUSTAINED, :r.size], weights=r)

    @cached_property
    def fnp_lost(self) -> float:
        """Feel No Pain: probability that one point is lost (a lone die whose value is 0)."""
        return float(np.count_nonzero(self.st[_S_FNP, _LONE] == 0)) / 6.0 if self.fnp else 1.0


# --- attacks (R-1) ----------------------------------------------------------------------------
def _attacks(t: _Tables) -> Array:
    """pmf of the number of attacks of the unit (kernel: one Attacks roll per firing model)."""
    n = t.firing
    if not any(t.rolls[_R_ATTACKS]):  # no dice: the kernel's fixed number of attacks
        out = np.zeros(n * int(t.maps[_R_ATTACKS, 0]) + 1)
        out[-1] = 1.0
        return out
    r = t.raw(_R_ATTACKS)
    vm = t.maps[_R_ATTACKS, :r.size]
    pv = _bincount(vm, weights=r)
    below = (t.rflags[_R_ATTACKS, :r.size] & _RF_BELOW) != 0
    if t.command != _C_ATTACKS or not below.any():
        return _npower(pv, n)
    # R-3.7 (M14): the lowest model's roll (the first lowest) is re-rolled if below average.
    pb = _bincount(vm, weights=r * below, minlength=pv.size)
    out = np.zeros(1)
    for v in np.flatnonzero(pv).tolist():
        ge = pv.copy()
        ge[:v] = 0.0
        if not pb[v:].any():  # no value left that is re-rolled: P(total, lowest >= v)
            out = _add(out, _npower(ge, n))
            break
        gt = ge.copy()
        gt[v] = 0.0
        e = np.zeros(v + 1)
        e[v] = pv[v]
        m = e  # P(total, lowest = v) for k models: sum_j gt^j e ge^(k-1-j)
        gk = _ONE1
        for _ in range(n - 1):
            gk = np.convolve(gk, ge)
            m = _add(np.convolve(gt, m), np.convolve(e, gk))
        frac = pb[v] / pv[v]  # P(that model's roll is flagged | its value is v)
        if frac < 1.0:
            out = _add(out, m * (1.0 - frac))
        if frac > 0.0:
            out = _add(out, np.convolve(m[v:], pv) * frac)
    return out


# --- one attack as a generating function (R-2 .. R-7) -----------------------------------------
def _plain_attack(t: _Tables, wt: npt.NDArray[np.int64]) -> Array:
    """One attack's generating function in one tracked counter when no Command Re-roll can
    change it (the fast path; :func:`_attack_gf` is the general one)."""
    wh, wc, ww, wcw, wl, wd, wu = wt[:, 0].tolist()
    item = t.item_poly(ww, wcw, wd, wu)
    if t.torrent:  # every attack hits, never critically
        return _shift(item, (wh,))
    auto = t.auto_poly if (t.lethal and wu) else _ONE1
    trivial = item.size == 1
    powers = [_ONE1, item]
    for _ in range(t.max_items - 1):
        powers.append(_ONE1 if trivial else np.convolve(powers[-1], item))
    sus = None
    if t.sus_items:
        size = max(s * wh + powers[s].size for s, _ in t.sus_items)
        sus = np.zeros(size)
        for s, q in t.sus_items:
            e = s * wh
            sus[e:e + powers[s].size] += q * powers[s]
    terms = []
    size = 1
    for h1, h2, p in t.hit_list:
        lethal = h2 if t.lethal else 0
        g = powers[h1 + h2 - lethal]
        for _ in range(lethal):
            g = np.convolve(g, auto)
        for _ in range(h2):
            assert sus is not None  # h2 > 0 only with Sustained Hits
            g = np.convolve(g, sus)
        e = (h1 + h2) * wh + h2 * wc + lethal * (wl + ww)
        terms.append((e, g, p))
        size = max(size, e + g.size)
    out = np.zeros(size)
    out[0] = t.p_no_hit
    for e, g, p in terms:
        out[e:e + g.size] += g * p
    return out


def _exps(c: npt.NDArray[np.int64], wt: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Exponents of counter rows ``c`` (n, 7) under the tracking weights ``wt`` (7, ndim)."""
    return c @ wt


def _item_gf(t: _Tables, wt: npt.NDArray[np.int64], cmd: int) -> _Tri:
    """One hit that rolls to wound: Wound roll and saving throw (kernel _wound_and_save)."""
    ndim = wt.shape[1]
    p, c, wound_fr, save_fr = t.items
    e = _exps(c, wt)
    full = _poly(p, e, ndim)
    if cmd == _C_WOUND and wound_fr.any():
        # The kernel's re-rolled Wound roll: a lone die; a success that is not a Devastating
        # Critical Wound rolls its save as a (die, re-roll die) pair.
        (sv,) = np.nonzero(t.save_p)
        f = np.zeros((1,) * ndim)
        for o in t.wound_fresh:
            c1 = np.zeros((1, _N_COUNTERS), dtype=np.int64)
            if o:
                c1[0, _WOUNDS] = 1
                c1[0, _CWOUNDS] = o >> 1
                if not (t.dev and o == 2):
                    cs = np.repeat(c1, sv.size, axis=0)
                    cs[:, _UNSAVED] = sv & 1
                    f = _add(f, _poly(t.save_p[sv] / 6.0, _exps(cs, wt), ndim))
                    continue
                c1[0, _DEV] = 1
            f = _add(f, _poly(np.full(1, 1 / 6.0), _exps(c1, wt), ndim))
        au = _conv(_poly(p[wound_fr], e[wound_fr], ndim), f)
        return _Tri(_poly(p[~wound_fr], e[~wound_fr], ndim), au, full)
    if cmd == _C_SAVE and save_fr.any():
        return _Tri(_poly(p[~save_fr], e[~save_fr], ndim), _save_reroll(t, p[save_fr], c[save_fr], wt), full)
    return _Tri(full)


def _save_reroll(t: _Tables, p: Array, c: npt.NDArray[np.int64], wt: npt.NDArray[np.int64]) -> Array:
    """Wounds whose failed save takes the Command Re-roll: ``unsaved -= 1 - o``, o a lone die."""
    ndim = wt.shape[1]
    out = np.zeros((1,) * ndim)
    for o in np.flatnonzero(t.save_fresh).tolist():
        c2 = c.copy()
        c2[:, _UNSAVED] += o - 1
        if (c2 < 0).any():
            raise NotExactError("R-3.7: a Command Re-roll of a save that did not fail", where="tables")
        out = _add(out, _poly(p * t.save_fresh[o], _exps(c2, wt), ndim))
    return out


def _auto_gf(t: _Tables, wt: npt.NDArray[np.int64], cmd: int) -> _Tri:
    """A Lethal Hits automatic wound: its saving throw (kernel: _count_rolls on the SAVE row)."""
    ndim = wt.shape[1]
    (av,) = np.nonzero(t.save_p)
    p = t.save_p[av]
    c = np.zeros((av.size, _N_COUNTERS), dtype=np.int64)
    c[:, _UNSAVED] = av & 1
    e = _exps(c, wt)
    full = _poly(p, e, ndim)
    fr = (av >> 2).astype(bool)
    if cmd == _C_SAVE and fr.any():
        return _Tri(_poly(p[~fr], e[~fr], ndim), _save_reroll(t, p[fr], c[fr], wt), full)
    return _Tri(full)


def _attack_gf(t: _Tables, wt: npt.NDArray[np.int64]) -> _Tri:
    """One attack: Hit roll, Critical-Hit effects, then each hit's Wound roll and save, with the
    Command Re-roll of a Hit roll, Wound roll or save (the general path)."""
    ndim = wt.shape[1]
    item_level = bool(wt[list(_ITEM_LEVEL)].any())
    cmd = t.command
    item_cmd = cmd if cmd in (_C_WOUND, _C_SAVE) and item_level else _C_NONE
    one = _one(ndim)
    if item_level:
        item = _item_gf(t, wt, item_cmd)
        auto = _auto_gf(t, wt, item_cmd) if t.lethal else one
    else:
        item = auto = one
    powers = [one, item]

    def ipow(k: int) -> _Tri:
        while len(powers) <= k:
            powers.append(powers[-1] * item)
        return powers[k]

    def mono(hits: int, crits: int = 0, lethal: int = 0) -> tuple[int, ...]:
        c = np.zeros(_N_COUNTERS, dtype=np.int64)
        c[_HITS], c[_CRITS], c[_LETHAL], c[_WOUNDS] = hits, crits, lethal, lethal
        return tuple((c @ wt).tolist())

    sus_cache: list[_Tri] = []

    def sustained() -> _Tri:
        if not sus_cache:
            acc = None
            for s in np.flatnonzero(t.sus).tolist():
                term = ipow(s).scale(float(t.sus[s])).shift(mono(s))
                acc = term if acc is None else acc + term
            sus_cache.append(acc if acc is not None else one)
        return sus_cache[0]

    outcomes: dict[tuple[int, int], _Tri] = {}

    def outcome(h1: int, h2: int) -> _Tri:
        """h1 successful (bit 1) and h2 critical Hit rolls (kernel: hits + crits + extra - auto
        roll to wound, auto = crits with Lethal Hits)."""
        key = (h1, h2)
        if key not in outcomes:
            lethal = h2 if t.lethal else 0
            g = ipow(h1 + h2 - lethal)
            for _ in range(lethal):
                g = g * auto
            for _ in range(h2):
                g = g * sustained()
            outcomes[key] = g.shift(mono(h1 + h2, h2, lethal))
        return outcomes[key]

    if t.torrent:  # every attack hits, never critically; no Hit roll to re-roll
        return outcome(1, 0)
    groups = t.hit_groups
    hit_cmd = cmd == _C_HIT and any(fr for (_, _, fr) in groups)
    aa: _Tri | None = None
    uu: _Tri | None = None
    au: _Tri | None = None
    for (h1, h2, fr), p in groups.items():
        term = outcome(h1, h2).scale(p)
        uu = term if uu is None else uu + term
        if hit_cmd and fr:  # the kernel's fresh lone die: hits += o & 1, crits += o >> 1
            for o in np.flatnonzero(t.hit_fresh).tolist():
                x = outcome(h1 + (o & 1), h2 + (o >> 1)).scale(p * float(t.hit_fresh[o]))
                au = x if au is None else au + x
        elif hit_cmd:
            aa = term if aa is None else aa + term
    assert uu is not None
    if not hit_cmd:
        return uu
    zero = np.zeros((1,) * ndim)
    return _Tri(zero if aa is None else aa.aa, zero if au is None else au.aa, uu.aa)


def _weights(*axes: tuple[int, ...]) -> npt.NDArray[np.int64]:
    wt = np.zeros((_N_COUNTERS, len(axes)), dtype=np.int64)
    for j, counters in enumerate(axes):
        for c in counters:
            wt[c, j] = 1
    return wt


def _counter(t: _Tables, p_attacks: Array, *axes: tuple[int, ...]) -> Array:
    """pmf of the tracked counters (one per axis) over a whole attack sequence."""
    wt = _weights(*axes)
    item_level = bool(wt[list(_ITEM_LEVEL)].any())
    cmd = t.command
    if wt.shape[1] == 1 and _FAST and not ((cmd == _C_HIT and not t.torrent) or
                                           (cmd in (_C_WOUND, _C_SAVE) and item_level)):
        return _mix_plain(p_attacks, _plain_attack(t, wt))
    return _mix(p_attacks, _attack_gf(t, wt), wt.shape[1])


#: Use the fast path of _counter (tests switch it off to check the general path).
_FAST = True


def _mix_plain(w: Array, g: Array) -> Array:
    """sum_n w[n] g^n for a 1D polynomial (:func:`_compose` on plain arrays)."""
    nz = np.flatnonzero(w)
    lo, hi = int(nz[0]), int(nz[-1])
    if lo == hi:
        single: Array = _npower(g, lo) * w[lo]
        return single
    acc = _compose(w[lo:hi + 1], _Tri(g), 1).aa
    return _convolve(acc, _npower(g, lo)) if lo else acc


# --- damage, Feel No Pain, allocation (R-9) ---------------------------------------------
def _damage_tri(t: _Tables) -> _Tri:
    """Damage of one roll (before FNP), kernel _damage: stays available / spends the Command
    Re-roll here / after it was spent."""
    if not any(t.rolls[_R_DAMAGE]):  # no dice: any re-roll gives the same value
        out = np.zeros(int(t.maps[_R_DAMAGE, 0]) + 1)
        out[-1] = 1.0
        return _Tri(out)
    r = t.raw(_R_DAMAGE)
    vm = t.maps[_R_DAMAGE, :r.size]
    fl = t.rflags[_R_DAMAGE, :r.size]
    size = int(vm.max()) + 1
    fresh = _bincount(vm, weights=r, minlength=size)
    rr = (fl & _RF_REROLL) != 0
    below = ((fl & _RF_BELOW) != 0) & ~rr
    plain = ~rr & ~below
    stay = _bincount(vm[plain], weights=r[plain], minlength=size) + r[rr].sum() * fresh
    pol = stay + _bincount(vm[below], weights=r[below], minlength=size)
    p_below = float(r[below].sum())
    if t.command == _C_DAMAGE and p_below > 0:
        return _Tri(stay, np.asarray(p_below * fresh, dtype=np.float64), pol)
    return _Tri(pol)


def _fnp_tri(t: _Tables, d: _Tri) -> _Tri:
    """R-8.5: each point is lost with probability ``fnp_lost`` (binomial thinning)."""
    if not t.fnp:
        return d
    size = max(d.aa.size, d.uu.size, 0 if d.au is None else d.au.size)
    q = t.fnp_lost
    b = np.zeros((size, size))
    b[0, 0] = 1.0
    for k in range(1, size):
        b[k, :k + 1] = np.convolve(b[k - 1, :k], [1.0 - q, q])

    def thin(a: Array) -> Array:
        return a @ b[:a.size]

    if d.plain:
        return _Tri(thin(d.aa))
    return _Tri(thin(d.aa), None if d.au is None else thin(d.au), thin(d.uu))


def _sum_rolls(k_dist: Array, d: _Tri) -> Array:
    """Damage summed over K rolls (uncapped), K ~ k_dist."""
    if d.plain and d.aa[-1] == 1.0:  # a fixed value v
        v = d.aa.size - 1
        if v == 0:
            return _ONE1
        out = np.zeros((k_dist.size - 1) * v + 1)
        out[::v] = k_dist
        return out
    if d.plain:
        return _mix_plain(k_dist, d.aa)
    return _mix(k_dist, d, 1)


class _Alloc:
    """Transitions of the remaining wounds R of a unit of ``models`` models of ``w`` wounds for
    one damage roll (R-9.1, R-9.2: one model at a time, excess lost; ``spill``: carried over)."""

    def __init__(self, models: int, w: int) -> None:
        self.models, self.w = models, w
        self.size = models * w + 1
        r = np.arange(self.size)
        self.room = np.where(r > 0, (r - 1) % w + 1, 0)

    def _dest(self, n: int, spill: bool) -> npt.NDArray[np.int64]:
        """R after a roll of d = 0..n-1 points, for every R: (states, n)."""
        r = np.arange(self.size)[:, None]
        d = np.arange(n)[None, :]
        return np.maximum(r - d, 0) if spill else r - np.minimum(d, self.room[:, None])

    def matrix(self, a: Array, spill: bool) -> Array:
        s = self.size
        idx = (np.arange(s)[:, None] * s + self._dest(a.size, spill)).ravel()
        return _bincount(idx, weights=np.broadcast_to(a, (s, a.size)).ravel(), minlength=s * s).reshape(s, s)

    def step(self, a: Array) -> Callable[[Array], Array]:
        """v -> v . T(a) for row vectors (dense for small units; for large ones, in memory of
        the order of the states: see :meth:`_scattered`)."""
        if self.size <= _DENSE_STATES:
            m = self.matrix(a, False)
            return lambda v: v @ m
        return lambda v: self._scattered(v, a)

    def _scattered(self, v: Array, a: Array) -> Array:
        """v . T(a) without the (states, damage) table: a roll of d < room (the wounds left on
        the model being damaged) moves R down by d, one of d >= room destroys that model and
        the excess is lost (R - room), with probability tail[room] = P(d >= room)."""
        s, room = self.size, self.room
        out = np.zeros(s)
        for d in np.flatnonzero(a[:self.w]).tolist():  # d < room <= W
            moved = np.where(room[d:] > d, v[d:], 0.0)
            out[:s - d] += a[d] * moved
        tail = np.zeros(max(a.size, self.w + 1))
        tail[:a.size] = np.cumsum(a[::-1])[::-1]
        return out + _bincount(self._landing, weights=v * tail[room], minlength=s)

    @cached_property
    def _landing(self) -> npt.NDArray[np.int64]:
        """R once the model being damaged is destroyed (excess lost)."""
        return np.arange(self.size) - self.room

    def final(self, k_dist: Array, d: _Tri) -> Array:
        """State distribution after K rolls, K ~ k_dist (excess lost)."""
        stay = self.step(d.aa)
        use = None if d.plain or d.au is None else self.step(d.au)
        pol = stay if d.plain else self.step(d.uu)
        va = np.zeros(self.size)
        va[-1] = 1.0
        vu = None
        res: Array = k_dist[0] * va
        for n in range(1, k_dist.size):
            if use is None:
                va = stay(va)
                if vu is not None:
                    vu = pol(vu)
            else:
                va, vu = stay(va), use(va) if vu is None else use(va) + pol(vu)
            if k_dist[n]:
                res = res + k_dist[n] * (va if vu is None else va + vu)
        return res

    def renewal(self, k_dist: Array, a: Array) -> tuple[Array, Array]:
        """(damage pmf, models destroyed pmf) after K rolls of damage ``a`` (plain, after Feel No
        Pain), K ~ k_dist, excess lost: the same numbers as ``outcome(final(k_dist, _Tri(a)))``
        without a step over all the unit's states for every roll.

        The models are identical and a model's excess damage is lost, so each model takes its
        own i.i.d. number of rolls to destroy (:meth:`_kill_chain`), and the kills are a renewal
        process: u_k(m) = P(the k-th model falls with m rolls left) is u_0 = k_dist correlated k
        times with that number's pmf, P(k destroyed, the next at x wounds left) = sum_m u_k(m)
        P(alive at x after m rolls), and the damage is k W + W - x (all M: M W). Rolls of 0
        damage change nothing and are dropped first (binomial thinning of K)."""
        w, models = self.w, self.models
        if a[0] > 0.0:
            if a[0] >= 1.0 or a.size == 1:
                return _ONE1, _ONE1
            k_dist = _trim_tail(_mix_plain(k_dist, np.array([a[0], 1.0 - a[0]])))
            a = a / (1.0 - a[0])
            a[0] = 0.0
        tau, alive = self._kill_chain(a)
        first = int(np.flatnonzero(tau)[0])
        taps = _trim_tail(tau[first:])
        surv = alive.sum(axis=1)
        m_len = alive.shape[0]
        heads: list[Array] = []
        lost = np.zeros(models + 1)
        u = k_dist
        for k in range(models):
            head = np.zeros(m_len)
            head[:min(m_len, u.size)] = u[:m_len]
            heads.append(head)
            lost[k] = float((head * surv).sum())
            if u.size <= first:
                break
            rest = np.concatenate((u[first:], np.zeros(taps.size - 1)))
            u = _trim_tail(np.correlate(rest, taps, "valid"))
            if not u.any():
                break
        else:
            lost[models] = float(u.sum())
        joint = np.zeros((len(heads), w))
        table = np.array(heads)
        for m in range(m_len):  # P(k, x) = sum_m u_k(m) alive(m, x): a band of x per m, no BLAS
            row = alive[m, w:0:-1]  # x = W .. 1: damage k W + (W - x)
            nz = np.flatnonzero(row)
            if nz.size:
                lo, hi = int(nz[0]), int(nz[-1]) + 1
                joint[:, lo:hi] += table[:, m:m + 1] * row[lo:hi]
        damage = np.concatenate((joint.ravel(), [lost[models]]))
        return damage, lost

    def _kill_chain(self, a: Array) -> tuple[Array, Array]:
        """One model under rolls of damage ``a`` (a[0] = 0): tau[j] = P(destroyed by exactly the
        j-th roll) and alive[m, x] = P(alive with x wounds left after m rolls) for m < len(tau)
        (at most W rows: every roll removes at least one wound)."""
        w = self.w
        cap = np.zeros(w + 1)  # a roll of W or more destroys whatever is left
        cap[:min(a.size, w)] = a[:w]
        cap[w] += float(a[w:].sum())
        tail = np.cumsum(cap[::-1])[::-1]  # P(d >= x): a model at x wounds left falls
        v = np.zeros(w + 1)
        v[w] = 1.0
        steps = np.flatnonzero(cap[:w]).tolist()
        rows: list[Array] = []
        tau = [0.0]
        while v.any():
            rows.append(v)
            tau.append(float((v * tail).sum()))
            nxt = np.zeros(w + 1)
            for d in steps:  # x -> x - d for d < x
                nxt[1:w + 1 - d] += cap[d] * v[1 + d:]
            v = nxt
        return np.array(tau), np.array(rows)

    def outcome(self, state: Array) -> tuple[Array, Array]:
        """(damage pmf, models destroyed pmf) from the distribution of R."""
        r = np.arange(self.size)
        damage = state[::-1].copy()
        models = _bincount(self.models - (r + self.w - 1) // self.w, weights=state, minlength=self.models + 1)
        return damage, models


def _rows_step(alloc: _Alloc, a: Array, spill: bool) -> Callable[[Array], Array]:
    """X -> X . T(a) for a (rows, states) array of row vectors, by shifted copies (one per
    damage value) and sums, never a matrix product: no states x states matrix, no BLAS (whose
    threads would spin on every core). ``spill``: R -> max(R - d, 0); otherwise excess lost."""
    s, w = alloc.size, alloc.w
    values = np.flatnonzero(a).tolist()
    if spill:
        above = np.cumsum(a[::-1])[::-1]  # a[R:].sum() (a need not sum to 1: a Command Re-roll part)
        over = np.zeros(s)  # P(d > R): the unit is destroyed
        n = min(s, a.size - 1)
        over[:n] = above[1:n + 1]

        def spill_step(x: Array) -> Array:
            out = np.zeros_like(x)
            for d in values:
                if d < s:
                    out[:, :s - d] += a[d] * x[:, d:]
            out[:, 0] += (x * over).sum(axis=1)
            return out

        return spill_step
    room = alloc.room
    tail = np.zeros(max(a.size, w + 1))
    tail[:a.size] = np.cumsum(a[::-1])[::-1]
    fall = tail[room]  # P(d >= room): the model being damaged is destroyed (R -> R - room)
    keep = [(d, room[d:] > d) for d in values if d < w]

    def lost_step(x: Array) -> Array:
        out = np.zeros_like(x)
        for d, mask in keep:
            out[:, :s - d] += a[d] * np.where(mask, x[:, d:], 0.0)
        out[:, 0] += x[:, 0] * fall[0]
        if s > 1:  # R in ((k - 1) W, k W] lands on (k - 1) W
            out[:, 0:s - 1:w] += (x[:, 1:] * fall[1:]).reshape(x.shape[0], alloc.models, w).sum(axis=2)
        return out

    return lost_step


def _tri_rows(alloc: _Alloc, d: _Tri, spill: bool) -> Callable[[Array], Array]:
    """One damage roll on (rows, states) row vectors, with the Command Re-roll flag when it
    matters: the columns are then (available | spent) and T = [[stay, use], [0, pol]]."""
    stay = _rows_step(alloc, d.aa, spill)
    if d.plain:
        return stay
    use = None if d.au is None else _rows_step(alloc, d.au, spill)
    pol = _rows_step(alloc, d.uu, spill)
    s = alloc.size

    def step(x: Array) -> Array:
        avail, spent = x[:, :s], x[:, s:]
        later = pol(spent) if use is None else pol(spent) + use(avail)
        return np.concatenate((stay(avail), later), axis=1)

    return step


def _spill_state(t: _Tables, p_attacks: Array, d: _Tri, alloc: _Alloc) -> Array:
    """R-6.4 (2023 text): every normal attack, then the Devastating ones spilling over.

    Needs P(unsaved u, devastating p) only through start . Tn^u . Td^p (Tn, Td: one damage roll
    on the remaining wounds, with the Command Re-roll flag when it matters), so the attacks are
    mixed with the rows x(p) = sum_u P(u, p) start . Tn^u kept as a (p, states) matrix instead of
    the full (u, p) joint. Tn and Td are applied by shifted copies (:func:`_rows_step`)."""
    wt = _weights((_UNSAVED,), (_DEV,))
    g = _attack_gf(t, wt)
    tn = _tri_rows(alloc, d, False)
    td = _tri_rows(alloc, d, True)
    states = alloc.size * (1 if d.plain else 2)
    n_max = p_attacks.size - 1
    start = np.zeros(states)
    start[alloc.size - 1] = 1.0

    def times(x: Array, poly: Array) -> Array:
        """x(p) . poly(Tn, p): rows by devastating count."""
        out = np.zeros((x.shape[0] + poly.shape[1] - 1, states))
        power = x
        for i in range(poly.shape[0]):
            if i:
                power = tn(power)
            for j in np.flatnonzero(poly[i]).tolist():
                out[j:j + x.shape[0]] += poly[i, j] * power
        return out

    # Horner with right multiplication: [R_a, R_u] = [1, 0] . sum_n w_n G^n (G: [[aa, au], [0, uu]])
    ra = p_attacks[-1] * start[None, :]
    ru = np.zeros((1, states))
    for n in range(n_max - 1, -1, -1):
        if g.plain:
            ra = times(ra, g.aa)
        else:
            aa, au = times(ra, g.aa), times(ra, g.au if g.au is not None else np.zeros((1, 1)))
            ra, ru = aa, _add(au, times(ru, g.uu))
        ra[0] += p_attacks[n] * start
    rows = ra if g.plain else _add(ra, ru)
    acc: Array = rows[-1:]
    for p in range(rows.shape[0] - 2, -1, -1):
        acc = td(acc) + rows[p:p + 1]
    out: Array = acc[0]
    return out if states == alloc.size else out[:alloc.size] + out[alloc.size:]


# --- Hazardous (R-9.7) ------------------------------------------------------------------------
def hazardous(tests: int, groups: Sequence[tuple[int, int, int]]) -> tuple[Array, Array]:
    """R-9.7: the distributions of wounds and models lost to ``tests`` Hazardous tests: each 1
    (1/6) is 3 mortal wounds to one model of ``groups`` ((models, W, Feel No Pain) in the order
    they take them, :attr:`mathhammer.compile.UnitInputs.hazard_groups`), the wounded one first,
    its Feel No Pain for each, excess lost. W 0 (unknown): the wounds, no model.

    The models form one queue, so wounds and models lost are both read off one number, the
    wounds taken from the queue so far: a chain on it, one step per test, over the positions
    the tests can reach (at most 3 wounds each)."""
    if not tests or not groups:
        return _ONE1, _ONE1
    if groups[0][1] == 0:
        x = _mortal(groups[0][2]) / 6.0
        x[0] += 5 / 6
        return _npower(x, tests), _ONE1
    counts = [models for models, _, _ in groups]
    wounds = np.repeat(np.array([w for _, w, _ in groups], dtype=np.int64), counts)
    fnps = np.repeat(np.array([f for _, _, f in groups], dtype=np.int64), counts)
    ends = np.cumsum(wounds)
    n, cap = wounds.size, min(int(ends[-1]), 3 * tests)
    pos = np.arange(cap + 1)
    dead = np.searchsorted(ends, pos, side="right")  # models destroyed; the next wound goes to model ``dead``
    alive = dead < n
    current = np.minimum(dead, n - 1)
    left = np.where(alive, ends[current] - pos, 0)
    mortal = {int(f): _mortal(int(f)) / 6.0 for f in np.unique(fnps)}
    steps = [(np.minimum(pos + np.minimum(k, left), cap),
              np.where(alive, np.array([mortal[int(f)][k] for f in fnps])[current], 0.0)) for k in range(4)]
    idle = np.where(alive, 5 / 6, 1.0)  # a passed test, or nobody left to take the wounds
    v = np.zeros(cap + 1)
    v[0] = 1.0
    for _ in range(tests):
        out = idle * v
        for dest, p in steps:
            out += np.bincount(dest, weights=v * p, minlength=cap + 1)
        v = out
    return v, np.asarray(np.bincount(dead, weights=v, minlength=n + 1), dtype=np.float64)


def _mortal(fnp: int) -> Array:
    """Mortal wounds suffered from a failed Hazardous test: 3, less each Feel No Pain ``fnp``+ (7: none)."""
    q = min(6, max(0, fnp - 1)) / 6.0  # a point is lost unless the FNP die is >= fnp
    b = _ONE1
    for _ in range(3):
        b = np.convolve(b, [1.0 - q, q])
    return b


def cost_hazard(cost: _Cost, tests: int, groups: Sequence[tuple[int, int, int]]) -> None:
    """The Hazardous tests' chain: a step per test over the wounds of the models taking them."""
    if tests and groups and groups[0][1]:
        size = min(sum(models * w for models, w, _ in groups), 3 * tests) + 1
        cost.add(f"resolving {tests} Hazardous tests on {sum(m for m, _, _ in groups)} models",
                 tests * (4 * _S_SHIFT * size + 5 * _S_CALL), 8.0 * 12 * size)


# --- cost estimate: nothing large is computed before it --------------------------------------
class _Cost:
    """Estimated seconds (summed over the parts) and peak bytes (the largest part) of one run.

    :func:`run` adds the parts in three phases, each estimated from what is already known just
    before it is computed (the attacks from the tables, the counters from the support of the
    number of attacks, the damage from the support of the number of damage rolls: far tails
    below the smallest float are exactly 0 and cost nothing), and checks after each one.
    """

    def __init__(self) -> None:
        self.parts: list[tuple[str, float, float]] = []
        self.stage_parts: set[str] = set()  # parts only the stage breakdown needs

    def add(self, what: str, seconds: float, n_bytes: float, *, stage: bool = False) -> None:
        self.parts.append((what, seconds, n_bytes))
        if stage:
            self.stage_parts.add(what)

    def check(self) -> None:
        """Raise NotExactError, naming the costliest part and the limits, when over a limit."""
        seconds = sum(p[1] for p in self.parts)
        peak = max((p[2] for p in self.parts), default=0.0)
        if seconds <= EXACT_MAX_SECONDS and peak <= EXACT_MAX_BYTES:
            return
        key = 1 if seconds > EXACT_MAX_SECONDS else 2
        what = max(self.parts, key=lambda p: p[key])[0]
        shown = f"{seconds:,.0f}" if seconds >= 100 else f"{seconds:.1f}"
        raise NotExactError(f"{what} is too large to compute exactly: about {shown} s and {size_text(peak)} "
                            f"estimated (limits {EXACT_MAX_SECONDS:g} s, {size_text(EXACT_MAX_BYTES)})",
                            where="--method exact", hint="Monte Carlo (without --exact) estimates it"
                            + ("; --no-stages leaves out the stage distributions, this part" if what in
                               self.stage_parts else ""))


def _direct_s(n: float, m: float) -> float:
    """Seconds of one np.convolve of lengths n and m."""
    return _S_MUL * n * m + _S_ELEM * (n + m) + _S_CALL


def _conv_s(n: float, m: float) -> float:
    """Seconds of one :func:`_convolve` of lengths n and m (direct or FFT)."""
    if min(n, m) < _FFT_MIN or n * m < _FFT_WORK:
        return _direct_s(n, m)
    size = n + m
    return _S_FFT * size * math.log2(size) + _S_ELEM * size + _S_CALL


def _power_s(top: float, base: float) -> float:
    """Seconds of an n-fold convolution power (by squaring) whose result has length ``top``:
    a squaring and a product into the result per doubling of the length."""
    seconds, n = 0.0, max(base, 1.0)
    while n < top:
        seconds += 2 * _conv_s(n, n)
        n *= 2
    return seconds + _S_CALL


def _mix_s(lo: int, hi: int, size: int, calls: int) -> tuple[float, float]:
    """Seconds and bytes of sum_n w[n] g^n over n = lo..hi, g of length ``size``
    (:func:`_compose`: Horner on blocks of _LEAF counts, then a product per block and level and
    a squaring per level; then g^lo and one product); ``calls`` convolutions per product (1
    plain, 4 with a Command Re-roll)."""
    e, span = max(size - 1, 1), hi - lo + 1
    leaf = min(span, _LEAF)
    seconds = calls * span * (_conv_s(leaf * e / 2, size) + _S_ELEM)
    b = leaf
    while b < span:
        blocks = math.ceil(span / (2 * b))
        seconds += calls * (blocks * _conv_s(b * e + 1, b * e + 1) + _conv_s(b * e / 2 + 1, b * e / 2 + 1))
        b *= 2
    top = lo * e + 1
    if lo:
        seconds += calls * (_power_s(top, size) + (_conv_s(span * e + 1, top) if span > 1 else 0.0))
    return seconds, 8.0 * 6 * (hi * e + 1) * (3 if calls > 1 else 1)


def _value_range(t: _Tables, row: int) -> tuple[int, int]:
    """Smallest and largest value of roll ``row``."""
    if not any(t.rolls[row]):
        v = int(t.maps[row, 0])
        return v, v
    r = t.raw(row)
    values = t.maps[row, :r.size][r > 0]
    return int(values.min()), int(values.max())


def _support(p: Array) -> tuple[int, int]:
    nz = np.flatnonzero(p)
    return int(nz[0]), int(nz[-1])


def _step_s(size: int, width: int) -> float:
    """Seconds of one step v -> v . T of the allocation programme (:meth:`_Alloc.step`):
    ``width`` shifted copies of the states (one per damage value below W) and one scatter."""
    if size <= _DENSE_STATES:
        return _S_DENSE * size * size + _S_CALL
    return size * (_S_SHIFT * width + _S_SCATTER) + _S_CALL * (width + 4)


def _cost_attacks(cost: _Cost, t: _Tables) -> None:
    """Phase 1: the number of attacks (a convolution power over the firing models) and Hazardous."""
    a_lo, a_hi = _value_range(t, _R_ATTACKS)
    top = t.firing * a_hi + 1
    if any(t.rolls[_R_ATTACKS]):
        seconds = _power_s(top, a_hi + 1)
        if t.command == _C_ATTACKS:  # a loop over the firing models for each lowest value up to
            r = t.raw(_R_ATTACKS)  # the last one re-rolled, on arrays of half the length on average
            flagged = t.maps[_R_ATTACKS, :r.size][(r > 0) & ((t.rflags[_R_ATTACKS, :r.size] & _RF_BELOW) != 0)]
            values = int(flagged.max()) - a_lo + 2 if flagged.size else 0
            seconds += values * t.firing * 3 * _conv_s(top / 2, a_hi + 1)
        cost.add(f"rolling the Attacks of {t.firing} models", seconds, 8.0 * 4 * top)
    cost.check()


def _renewal_s(models: int, w: int, rolls: int, a: Array, thin: bool) -> tuple[float, float]:
    """Seconds and bytes of :meth:`_Alloc.renewal` (``a``: the damage pmf of one roll, or any
    array with its support; ``thin``: rolls of 0 damage are dropped first): the chain of one
    model (at most W/d_min steps), a correlation with the rolls-per-model pmf per model
    destroyed (at most rolls/first + 1 of them) and the (models, W) joint by bands."""
    values = np.flatnonzero(a)
    positive = values[values > 0]
    if not positive.size:
        return _S_CALL, 0.0
    d_lo, d_hi = int(positive[0]), int(positive[-1])
    first, m_len = -(-w // d_hi), -(-w // d_lo)  # fewest and most rolls to destroy a model
    kills = min(models, rolls // first + 1)
    steps = int(np.count_nonzero(positive < w))
    seconds = m_len * (w * (_S_SHIFT * steps + 3 * _S_ELEM) + _S_CALL * (steps + 5))
    seconds += kills * ((rolls + 1) * (_S_MUL * (m_len - first + 1) + 4 * _S_ELEM) + 8 * _S_CALL)
    band = np.minimum(w, np.arange(m_len) * (d_hi - d_lo) + 1).sum()
    seconds += kills * float(band) * 2 * _S_ELEM + m_len * 4 * _S_CALL
    if thin:
        seconds += _mix_s(0, rolls, 2, 1)[0]
    return seconds, 8.0 * (2 * kills * (w + m_len) + m_len * (w + 1) + 4 * (rolls + 1))


def _hits_per_attack(t: _Tables) -> int:
    """Most hits (so Wound rolls, saves and damage rolls) one attack can make."""
    return 1 if t.torrent else 1 + _value_range(t, _R_SUSTAINED)[1]


def _cost_counters(cost: _Cost, t: _Tables, p_attacks: Array, stages: bool) -> None:
    """Phase 2: the counters of the attack sequence, mixed over the number of attacks."""
    lo, hi = _support(p_attacks)
    per_attack = _hits_per_attack(t)
    calls = 4 if t.command in (_C_HIT, _C_WOUND, _C_SAVE) else 1
    sizes = [per_attack]  # damage rolls; then wounds, critical wounds (+ hits, critical hits, unsaved)
    if stages:
        sizes += [per_attack] * 2 + ([] if t.torrent else [per_attack, 1]) + ([per_attack] if t.dev else [])
    for size in sizes:
        seconds, n_bytes = _mix_s(lo, hi, size + 1, calls)
        cost.add(f"resolving up to {hi:,} attacks", seconds, n_bytes)
    cost.check()


def _cost_damage(cost: _Cost, t: _Tables, p_attacks: Array, k_dist: Array, before: _Tri, after: _Tri,
                 stages: bool) -> None:
    """Phase 3: the damage of the damage rolls, summed (no wound limit, the stage breakdown) or
    allocated to the target's models, and the 2023 spill-over (``before``/``after``: one roll
    before and after Feel No Pain)."""
    rolls = _support(k_dist)[1]
    d_max = max(after.aa.size, after.uu.size) - 1
    sums = ([] if t.wounds else [after]) + ([before] + ([after] if t.wounds and t.fnp else []) if stages else [])
    random_sums = [d for d in sums if not (d.plain and d.aa[-1] == 1.0)]  # the calls of _sum_rolls in run()
    for d in random_sums:
        seconds, n_bytes = _mix_s(0, rolls, d_max + 1, 1 if d.plain else 6)
        cost.add(f"summing the damage of up to {rolls:,} rolls of up to {d_max}", seconds, n_bytes,
                 stage=bool(t.wounds))
    d = after
    if t.fnp:
        cost.add("Feel No Pain on the damage", _S_ELEM * (d_max + 1) ** 2 + _S_CALL * d_max, 8.0 * 2 * (d_max + 1) ** 2)
    if sums and not random_sums:  # fixed damage: every sum is one strided copy (three alive at once:
        # 1.76 GB traced for 70 million values, 0.56 GB each)
        cost.add(f"summing the damage of up to {rolls:,} rolls of {d_max}", _S_ELEM * rolls * d_max * len(sums),
                 8.0 * rolls * d_max * 3, stage=bool(t.wounds))
    if t.wounds:
        size = t.models * t.wounds + 1
        if t.dev and t.spill:
            _cost_spill(cost, t, p_attacks.size - 1, size, d)
        elif d.plain:
            seconds, n_bytes = _renewal_s(t.models, t.wounds, rolls, d.aa, bool(d.aa[0] > 0))
            cost.add(f"allocating up to {rolls:,} damage rolls to {t.models} models of W{t.wounds}", seconds, n_bytes)
        else:
            fns = 1 if d.plain else 3
            width = max(int(np.count_nonzero(x[:t.wounds])) for x in (d.aa, d.au, d.uu) if x is not None)
            cost.add(f"allocating up to {rolls:,} damage rolls to {t.models} models of W{t.wounds}",
                     rolls * (fns * _step_s(size, width) + _S_ELEM * size),
                     8.0 * size * 12 if size > _DENSE_STATES else 8.0 * size * size * 2)
    cost.check()


def _cost_spill(cost: _Cost, t: _Tables, n_max: int, size: int, d: _Tri) -> None:
    """The 2023 spill-over (:func:`_spill_state`): (devastating, states) rows through one damage
    roll (shifted copies of ``size`` states, three of them with the Command Re-roll of damage)
    for each power of Tn in each Horner step over the attacks, then once per devastating count."""
    g = _attack_gf(t, _weights((_UNSAVED,), (_DEV,)))
    p_max = n_max * (g.uu.shape[1] - 1) + 1
    states = size * (1 if d.plain else 2)
    width = max(int(np.count_nonzero(x)) for x in (d.aa, d.au, d.uu) if x is not None) + 3
    flag = 1 if d.plain else 3
    row = size * width * _S_ROW * flag  # one row through one roll
    apps, terms = g.uu.shape[0] - 1, int(np.count_nonzero(g.uu))
    per_step = (p_max / 2) * (apps * row + terms * states * _S_ROW) + (apps * width * flag + terms) * _S_CALL
    seconds = n_max * per_step * (1 if g.plain else 3) + p_max * (row + states * _S_ELEM + width * flag * _S_CALL)
    cost.add(f"R-6.4 (2023 text): Devastating Wounds spilling over with up to {n_max:,} attacks",
             seconds, 8.0 * 6 * p_max * states)


# --- the engine -------------------------------------------------------------------------------
def run(inputs: KernelInputs, *, stages: bool = True,
        hazard: tuple[int, Sequence[tuple[int, int, int]]] | None = None) -> DamageResult:
    """The exact distributions of what ``inputs`` does (see the module docstring).

    ``hazard``: the Hazardous tests and the models taking their mortal wounds (:func:`hazardous`;
    a whole attack's, :class:`mathhammer.compile.UnitInputs`); None: ``inputs``' own (its weapon
    alone).

    Returns a DamageResult with method "exact": damage (wounds lost by the target after Feel No
    Pain and allocation), models destroyed, the per-stage breakdown (``stages``) and the
    Hazardous distributions, with exactly the Monte Carlo kernel's definitions.

    Raises:
        NotExactError: for a scenario whose estimated time or memory is above the limits of
        :mod:`mathhammer.limits` (EXACT_MAX_SECONDS, EXACT_MAX_BYTES), before it is computed.
    """
    start = time.perf_counter()
    t = _Tables(inputs)
    tests, carriers = hazard if hazard is not None else (t.firing if t.hazardous else 0, inputs.hazard_groups)
    cost = _Cost()
    cost_hazard(cost, tests, carriers)
    _cost_attacks(cost, t)
    p_attacks = _trim_tail(_attacks(t))
    _cost_counters(cost, t, p_attacks, stages)
    limited = t.wounds > 0
    d_before = _damage_tri(t)
    d_after = _fnp_tri(t, d_before)
    unsaved = devastating = None
    k_dist = _trim_tail(_counter(t, p_attacks, (_UNSAVED, _DEV)))  # damage rolls: unsaved + devastating attacks
    _cost_damage(cost, t, p_attacks, k_dist, d_before, d_after, stages)
    if not t.dev:
        unsaved, devastating = k_dist, _ONE1
    if limited:
        alloc = _Alloc(t.models, t.wounds)
        if t.dev and t.spill:
            state = _spill_state(t, p_attacks, d_after, alloc)
        elif d_after.plain:  # excess lost: a Devastating attack is allocated like a normal one
            state = None
            damage, models = alloc.renewal(k_dist, d_after.aa)
        else:  # the Command Re-roll of damage: the first roll below average takes it
            state = alloc.final(k_dist, d_after)
        if state is not None:
            damage, models = alloc.outcome(state)
        after = None
    else:
        damage = after = _sum_rolls(k_dist, d_after)
        models = _ONE1
    breakdown: dict[str, Distribution] = {}
    if stages:
        # Kernel identities: TORRENT: hits = attacks, no crits; auto = crits with Lethal Hits;
        # pending = critical wounds with Devastating Wounds (a re-rolled Wound roll included).
        hits = p_attacks if t.torrent else _counter(t, p_attacks, (_HITS,))
        crits = _ONE1 if t.torrent else _counter(t, p_attacks, (_CRITS,))
        lethal = crits if t.lethal else _ONE1
        crit_wounds = _counter(t, p_attacks, (_CWOUNDS,))
        if unsaved is None:
            unsaved, devastating = _counter(t, p_attacks, (_UNSAVED,)), crit_wounds
        before = _sum_rolls(k_dist, d_before)
        if after is None:
            after = _sum_rolls(k_dist, d_after) if t.fnp else before
        assert devastating is not None  # set with unsaved above
        values = (p_attacks, hits, crits, _counter(t, p_attacks, (_WOUNDS,)), crit_wounds, lethal, devastating,
                  unsaved, before, after)
        breakdown = {key: _trim(v) for key, v in zip(_STAGE_KEYS, values, strict=True)}
    lost_to_hazard = hazard_models = None
    if tests:
        lost, dead = hazardous(tests, carriers)
        lost_to_hazard, hazard_models = _trim(lost), _trim(dead)
    seconds = time.perf_counter() - start
    return DamageResult(method="exact", trials=None, seed=None, damage=_trim(damage), models_destroyed=_trim(models),
                        target_models=int(inputs.target_models), seconds=seconds, stages=breakdown,
                        hazardous=lost_to_hazard, hazard_models=hazard_models)
