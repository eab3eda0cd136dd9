"""The exact engine's scaling algorithms (issue 8, item 7) against straightforward references.

* mixtures sum_n w[n] g^n: divide and conquer with FFT products against Horner's scheme;
* allocation with excess lost: the renewal process of models destroyed against the step-by-
  step programme over the unit's remaining wounds (kept in exact.py for the Command Re-roll of
  damage), directly and through whole runs;
* the 2023 spill-over's row transitions (shifted copies, no BLAS) against explicit matrices;
* the Fraction oracle on more random small scenarios;
* large requests that used to take seconds or be refused are computed, sum to 1 and have the
  mean the rules give in closed form. No wall-clock assertions.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from mathhammer.compile import compile_matchup
from mathhammer.engine import exact
from mathhammer.model import Context, Matchup, RulesVersion, Target
from mathhammer.notation import parse_target, parse_weapon

from .test_exact import _check_oracle, _valid_random_scenario

TOL = 1e-12


def _inputs(weapon: str, target: str | Target, n: int = 1, **ctx: Any) -> Any:
    t = target if isinstance(target, Target) else parse_target(target)
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=t,
                                   context=Context(firing_models=n, **ctx))).inputs


def _pmf(rng: np.random.Generator, size: int, zero: bool = True) -> np.ndarray:
    p = rng.random(size) * (rng.random(size) < 0.7)
    if not zero:
        p[0] = 0.0
    p[-1] += 0.1
    return p / p.sum()


def _close(a: np.ndarray, b: np.ndarray, what: str = "") -> None:
    a, b = np.trim_zeros(a, "b"), np.trim_zeros(b, "b")
    n = max(a.size, b.size)
    gap = float(np.abs(np.pad(a, (0, n - a.size)) - np.pad(b, (0, n - b.size))).max())
    assert gap <= TOL, f"{what}: max |new - reference| = {gap:.3g}"


def _horner_plain(w: np.ndarray, g: np.ndarray) -> np.ndarray:
    """sum_n w[n] g^n by Horner's scheme with np.convolve (the previous algorithm)."""
    acc = np.full(1, w[-1])
    for n in range(w.size - 2, -1, -1):
        acc = np.convolve(acc, g)
        acc[0] += w[n]
    return acc


# --- mixtures ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_divide_and_conquer_mixture_equals_horner(seed: int) -> None:
    rng = np.random.default_rng(seed)
    span = int(rng.choice([5, 40, 300, 1500]))
    lo = int(rng.choice([0, 0, 7, 200]))
    w = np.zeros(lo + span)
    w[lo:] = _pmf(rng, span)
    g = _pmf(rng, int(rng.choice([2, 4, 13, 40])))
    _close(exact._mix_plain(w, g), _horner_plain(w, g), "plain mixture")


@pytest.mark.parametrize("seed", range(6))
def test_divide_and_conquer_mixture_with_a_command_reroll_equals_horner(seed: int) -> None:
    """The upper-triangular (re-roll available / spent) generating function, mixed."""
    rng = np.random.default_rng(100 + seed)
    size = int(rng.choice([3, 7]))
    stay, use, pol = (_pmf(rng, size) for _ in range(3))
    scale = rng.random() * 0.5
    g = exact._Tri(stay * (1 - scale), use * scale, pol)
    w = _pmf(rng, int(rng.choice([50, 400])))
    ref = exact._horner(w, 0, w.size, g, 1).start()
    _close(exact._mix(w, g, 1), ref, "mixture with a Command Re-roll")


def test_fft_products_stay_distributions() -> None:
    # Long pmfs go through the FFT: non-negative, sum to 1, tails end (far tails are 0).
    b = np.array([0.5, 0.5])
    p = exact._npower(b, 6000)
    assert (p >= 0).all() and abs(p.sum() - 1) <= 1e-12
    assert p[0] == 0.0 and p[-1] == 0.0  # 2^-6000 is below the smallest float
    # mean and variance of Binomial(6000, 1/2): 3000 and 1500
    k = np.arange(p.size)
    assert float(k @ p) == pytest.approx(3000, rel=1e-12)
    assert float(((k - 3000) ** 2) @ p) == pytest.approx(1500, rel=1e-10)


# --- allocation: renewal against the step-by-step programme -----------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_renewal_equals_the_step_programme(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    models, w = int(rng.integers(1, 8)), int(rng.integers(1, 9))
    a = _pmf(rng, int(rng.integers(1, 11)), zero=bool(rng.random() < 0.5))  # damage 0.. after Feel No Pain
    k = _pmf(rng, int(rng.integers(1, 40)))
    alloc = exact._Alloc(models, w)
    damage, lost = alloc.renewal(k, a)
    ref_damage, ref_lost = alloc.outcome(alloc.final(k, exact._Tri(a)))
    _close(damage, ref_damage, "damage")
    _close(lost, ref_lost, "models destroyed")


def _step_programme(self: exact._Alloc, k_dist: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return self.outcome(self.final(k_dist, exact._Tri(a)))


SCENARIOS = [
    ("A 2D6 BS3+ S5 AP-1 D D6+6", "T4 SV3+ W9 MODELS6", 3, {}),
    ("A10 BS3+ S5 AP-1 D D6+6", "T4 SV3+ W99 MODELS1000", 5, {}),
    ("A D6 BS3+ S5 AP-1 D D3 [SUSTAINED HITS 1, DEVASTATING WOUNDS]", "T4 SV3+ W4 MODELS10 FNP5+", 4, {}),
    ("A4 BS3+ S4 AP0 D1", "T4 SV4+ W1 MODELS20 FNP6+", 6, {}),
    ("A3 BS4+ S8 AP-3 D 2D6 [LETHAL HITS]", "T8 SV2+ W12 MODELS3 INV4+", 4, {}),
    ("A 2D3 BS2+ S6 AP-1 D2 [DEVASTATING WOUNDS]", "T5 SV3+ W3 MODELS8", 3, {"rules": RulesVersion.V2023}),
    ("A 2D6 BS3+ S5 AP-1 D D6 [HAZARDOUS]", "T4 SV3+ W5 MODELS4 FNP4+", 4, {}),
]


@pytest.mark.parametrize(("weapon", "target", "n", "ctx"), SCENARIOS)
def test_whole_runs_equal_the_step_programme(monkeypatch: pytest.MonkeyPatch, weapon: str, target: str, n: int,
                                             ctx: dict[str, Any]) -> None:
    inputs = _inputs(weapon, target, n, **ctx)
    new = exact.run(inputs)
    monkeypatch.setattr(exact._Alloc, "renewal", _step_programme)
    ref = exact.run(inputs)
    for key in ("damage", "models_destroyed", "hazardous", "hazard_models"):
        a, b = getattr(new, key), getattr(ref, key)
        if a is None:
            assert b is None
            continue
        assert a.probabilities.size == b.probabilities.size, key
        _close(a.probabilities, b.probabilities, key)


@pytest.mark.parametrize("seed", range(40))
def test_exact_matches_oracle_more_random_scenarios(seed: int) -> None:
    _check_oracle(_valid_random_scenario(random.Random(5000 + seed)), stages=seed % 3 == 0)


# --- the 2023 spill-over without matrices ------------------------------------------------------
@pytest.mark.parametrize("spill", [False, True])
def test_row_transitions_equal_matrices(spill: bool) -> None:
    rng = np.random.default_rng(7 if spill else 8)
    for _ in range(20):
        alloc = exact._Alloc(int(rng.integers(1, 6)), int(rng.integers(1, 7)))
        a = _pmf(rng, int(rng.integers(1, 12))) * rng.choice([1.0, 0.4])  # a Command Re-roll part: mass < 1
        x = rng.random((3, alloc.size))
        _close(exact._rows_step(alloc, a, spill)(x).ravel(), (x @ alloc.matrix(a, spill)).ravel(), "rows")


# --- large requests are computed, with the rules' means ----------------------------------------
P_UNSAVED = 2 / 3 * 2 / 3 * 1 / 2  # BS3+, S5 vs T4 (3+), Sv3+ with AP-1 (fails on 1-3)


def _assert_distribution(p: np.ndarray) -> None:
    """Non-negative and sums to 1 (means below: rel 1e-10, float sums over 10^5 terms)."""
    assert (p >= 0).all() and abs(p.sum() - 1) <= 1e-9


def test_ten_thousand_attacks_at_unlimited_wounds() -> None:
    # 1000 models x A10; mean = attacks x P(unsaved) x E[D6+6] = 10,000 x 2/9 x 9.5.
    r = exact.run(_inputs("A10 BS3+ S5 AP-1 D D6+6", Target(name="u", toughness=4, save=3, wounds=None), 1000))
    _assert_distribution(r.damage.probabilities)
    assert r.damage.mean() == pytest.approx(10_000 * P_UNSAVED * 9.5, rel=1e-10)
    for d in r.stages.values():
        _assert_distribution(d.probabilities)
    assert r.stages["unsaved"].mean() == pytest.approx(10_000 * P_UNSAVED, rel=1e-10)


def test_random_attacks_at_unlimited_wounds() -> None:
    # 1000 models x 2D6 attacks (mean 7000): mean 7000 x 2/9 x 9.5.
    r = exact.run(_inputs("A 2D6 BS3+ S5 AP-1 D D6+6", Target(name="u", toughness=4, save=3, wounds=None), 1000),
                  stages=False)
    _assert_distribution(r.damage.probabilities)
    assert r.damage.mean() == pytest.approx(7000 * P_UNSAVED * 9.5, rel=1e-10)


def _binomial_mean(n: int, p: float, f: Any) -> float:
    """E[f(K)], K ~ Binomial(n, p), by log-gamma (an independent computation)."""
    total = 0.0
    for k in range(n + 1):
        log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p)
        log += (n - k) * math.log1p(-p)
        total += math.exp(log) * f(k) if log > -745 else 0.0
    return total


@pytest.mark.parametrize("n", [100, 1000])
def test_the_issue_allocation_request_is_computed(n: int) -> None:
    # A10 D12 at 1000 models of W99 (R-9.1, excess lost): each model takes ceil(99/12) = 9
    # unsaved attacks, so K unsaved destroy min(1000, K // 9) models and the damage is
    # 99 (K // 9) + 12 (K mod 9) up to 99,000. K ~ Binomial(10 n, 2/9).
    r = exact.run(_inputs("A10 BS3+ S5 AP-1 D12", "T4 SV3+ W99 MODELS1000", n))
    _assert_distribution(r.damage.probabilities)
    _assert_distribution(r.models_destroyed.probabilities)

    def damage(k: int) -> int:
        return min(99_000, 99 * (k // 9) + 12 * (k % 9))

    assert r.damage.mean() == pytest.approx(_binomial_mean(10 * n, P_UNSAVED, damage), rel=1e-10)
    assert r.models_destroyed.mean() == pytest.approx(
        _binomial_mean(10 * n, P_UNSAVED, lambda k: min(1000, k // 9)), rel=1e-10)
    # the issue's D6+6 request: computed (not refused), a distribution up to every model destroyed
    big = exact.run(_inputs("A10 BS3+ S5 AP-1 D D6+6", "T4 SV3+ W99 MODELS1000", n), stages=False)
    _assert_distribution(big.damage.probabilities)
    assert big.damage.probabilities.size <= 99_001


def test_devastating_wounds_excess_lost_at_a_large_unit() -> None:
    # Current rules: Devastating mortal wounds go to the wounded model, excess lost, so with D1
    # every damaging roll removes one wound: damage = min(M W, K), K = unsaved + devastating.
    # S4 vs T4: 4+ wounds (1/2), a 6 is critical (1/6, no save), else Sv5+ fails on 1-4 (2/3);
    # hit 3+ (2/3): P(damage per attack) = 2/3 (1/6 + 2/6 x 2/3) = 7/27.
    r = exact.run(_inputs("A10 BS3+ S4 AP0 D1 [DEVASTATING WOUNDS]", "T4 SV5+ W10 MODELS100", 300), stages=False)
    assert r.damage.mean() == pytest.approx(_binomial_mean(3000, 7 / 27, lambda k: min(1000, k)), rel=1e-10)
