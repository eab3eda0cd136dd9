"""Issue 8 item 6: Monte Carlo memory is bounded for every legal input.

The damage histogram of a target stops at its total wounds; each stage histogram is capped at
STAGE_CAP bins, its last bin holding every larger value, and the stage keeps its exact mean and
sd from the kernel's sums of those values; memory is one row per thread, and no more threads
run than the budget holds.

Tolerances come from theory (N trials, fixed seeds): a mean within 4 standard errors
(sd / sqrt(N)); an sd within 4 standard errors of a sample sd, sqrt(mu4 - sd^4) / (2 sd sqrt(N))
with mu4 the fourth central moment of the exact distribution; a probability within 4
binomial standard errors; a CDF within the DKW bound (fails by chance with probability 1e-6).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from mathhammer import kernel, limits
from mathhammer.codes import StageCount
from mathhammer.compile import (
    STAGE_CAP,
    KernelInputs,
    check_monte_carlo,
    compile_matchup,
    monte_carlo_bytes,
    monte_carlo_threads,
)
from mathhammer.engine import exact, montecarlo
from mathhammer.model import Context, Matchup
from mathhammer.notation import parse_target, parse_weapon
from mathhammer.render.rich_view import stages_table
from mathhammer.result import Distribution

N = 20_000
DKW = math.sqrt(math.log(2 / 1e-6) / (2 * N))


def _inputs(weapon: str, target: str, n: int) -> KernelInputs:
    m = Matchup(weapon=parse_weapon(weapon), target=parse_target(target), context=Context(firing_models=n))
    return compile_matchup(m).inputs


def _moments(d: Distribution) -> tuple[float, float, float]:
    """Mean, sd and fourth central moment of an exact distribution."""
    k = d.support.astype(np.float64)
    mean = float(k @ d.probabilities)
    var = float(((k - mean) ** 2) @ d.probabilities)
    return mean, math.sqrt(var), float(((k - mean) ** 4) @ d.probabilities)


def _assert_capped_stage_agrees(mc: Distribution, ex: Distribution) -> None:
    mean, sd, mu4 = _moments(ex)
    assert mc.capped_at == STAGE_CAP and mc.probabilities.size == STAGE_CAP + 1
    assert abs(mc.mean() - mean) <= 4 * sd / math.sqrt(N)
    assert abs(mc.sd() - sd) <= 4 * math.sqrt(mu4 - sd**4) / (2 * sd * math.sqrt(N))
    p_over = ex.p_at_least(STAGE_CAP)
    assert abs(mc.probabilities[STAGE_CAP] - p_over) <= 4 * math.sqrt(p_over * (1 - p_over) / N)
    assert np.abs(mc.cdf()[:STAGE_CAP] - ex.cdf()[:STAGE_CAP]).max() <= DKW


# 40 models x 2D6 attacks (at most 480), 2+ to hit, S8 vs T4 wounds on 2+, AP-6 leaves no save:
# about 280 x 25/36 unsaved wounds of 6D6 (mean 21), i.e. 4,083 damage on average, around the
# cap (at most 480 x 36 = 17,280): part of the samples below it, part in its last bin.
STRADDLE = ("A 2D6 BS2+ S8 AP-6 D 6D6", "T4 SV3+ W1 MODELS10", 40)
# 60 models and a 5+ Feel No Pain: ~6,125 damage before it (all in the last bin), ~4,083 after.
STRADDLE_FNP = ("A 2D6 BS2+ S8 AP-6 D 6D6", "T4 SV3+ W1 MODELS10 FNP5+", 60)


@pytest.mark.parametrize("case", [STRADDLE, STRADDLE_FNP], ids=["no_fnp", "fnp"])
def test_capped_stage_mean_and_sd_match_the_exact_engine(case: tuple[str, str, int]) -> None:
    inputs = _inputs(*case)
    capped = [i for i in StageCount if inputs.stage_capped(i)]
    assert capped == [StageCount.DAMAGE_BEFORE_FNP, StageCount.DAMAGE_AFTER_FNP]
    ex = exact.run(inputs)  # the whole distributions (the engines combine them), for the reference moments
    ex_capped = replace(ex, stages={k: exact.capped_stage(v) for k, v in ex.stages.items()})  # as shown
    mc = montecarlo.run(inputs, trials=N, seed=8)
    for i in capped:
        name = i.name.lower()
        _assert_capped_stage_agrees(mc.stages[name], ex.stages[name])
        whole, cut = ex.stages[name], ex_capped.stages[name]
        mean, sd, _ = _moments(whole)
        assert cut.capped_at == STAGE_CAP and (cut.mean(), cut.sd()) == pytest.approx((mean, sd), rel=1e-12)
        assert cut.probabilities[STAGE_CAP] == pytest.approx(whole.p_at_least(STAGE_CAP), abs=1e-12)
        assert np.array_equal(cut.probabilities[:STAGE_CAP], whole.probabilities[:STAGE_CAP])


def test_without_feel_no_pain_the_damage_after_it_is_the_damage_before_it() -> None:
    # The kernel counts the damage once without Feel No Pain; its sums must be copied with it,
    # else the capped "after" stage has a last bin but no values in it.
    mc = montecarlo.run(_inputs(*STRADDLE), trials=2_000, seed=1)
    before, after = mc.stages["damage_before_fnp"], mc.stages["damage_after_fnp"]
    assert before.capped_at == after.capped_at == STAGE_CAP
    assert (after.mean(), after.sd()) == (before.mean(), before.sd())


def test_the_issue_7_request_is_computed_with_exact_stage_moments() -> None:
    # -n 1000 "A 2D6 BS3+ S4 AP0 D D6+993" -t "T4 SV3+ W1000 MODELS1000" (refused before).
    inputs = _inputs("A 2D6 BS3+ S4 AP0 D D6+993", "T4 SV3+ W1000 MODELS1000", 1000)
    check_monte_carlo(inputs)
    # damage stops at the unit's 1,000,000 wounds; stages at STAGE_CAP; models 0..1000;
    # Hazardous 3 x 1000 wounds and 1000 models (sized even when unused); 2 sums per stage.
    # Each row is padded to a multiple of 8 bins plus 8 (no two threads' rows share a cache line).
    # Hazardous: no such weapon, one bin each; one model group (1,001 bins), one weapon group
    # (2 sums); the per-trial scratch of groups + weapons (2).
    stage_bins = [STAGE_CAP + 1] * 5 + [1, 1] + [STAGE_CAP + 1] * 3  # no Lethal/Devastating
    widths = [1_000_001, 1_001, sum(stage_bins), 1, 1, 1_001, 2, 2, 2 * len(StageCount)]
    assert monte_carlo_bytes(inputs, chunks=1) == 8 * sum((w + 7) // 8 * 8 + 8 for w in widths)
    trials = 400
    r = montecarlo.run(inputs, trials=trials, seed=5)
    # 1000 independent 2D6: mean 7,000, sd sqrt(1000 x 35/6); every value >= STAGE_CAP.
    attacks = r.stages["attacks"]
    sd = math.sqrt(1000 * 35 / 6)
    assert attacks.capped_at == STAGE_CAP and attacks.probabilities[STAGE_CAP] == 1.0
    assert abs(attacks.mean() - 7000) <= 4 * sd / math.sqrt(trials)
    assert abs(attacks.sd() - sd) <= 4 * sd / math.sqrt(2 * trials)  # ~normal: mu4 = 3 sd^4
    assert r.damage.probabilities.size <= 1_000_001


def test_every_legal_command_line_request_fits_the_budget() -> None:
    # The command line always gives W, so the largest damage histogram is MODELS x W + 1 bins,
    # and every stage is capped whatever the attacks, Sustained Hits and Damage.
    inputs = _inputs("A 12D6 BS2+ S100 AP-10 D D6+993 [SUSTAINED HITS 999, LETHAL HITS, DEVASTATING WOUNDS, "
                     "HAZARDOUS]", f"T1 SV7+ W{limits.MAX_WOUNDS} MODELS{limits.MAX_TARGET_MODELS}",
                     limits.MAX_ATTACKING_MODELS)
    assert inputs.damage_max == limits.MAX_WOUNDS * limits.MAX_TARGET_MODELS
    assert all(b - a <= STAGE_CAP + 1 for a, b in zip(inputs.stage_offsets, inputs.stage_offsets[1:], strict=False))
    check_monte_carlo(inputs)
    assert monte_carlo_threads(inputs, 2) == 2


def test_threads_stay_within_the_memory_budget() -> None:
    inputs = _inputs("A 2D6 BS3+ S4 AP0 D D6+993", "T4 SV3+ W1000 MODELS1000", 1000)
    for asked in (1, 2, 64, 10_000):
        t = monte_carlo_threads(inputs, asked)
        assert 1 <= t <= asked
        # t rows and two more for the sums fit; one more thread would not (unless all asked run)
        assert monte_carlo_bytes(inputs, t + 2) <= limits.MONTE_CARLO_MAX_BYTES
        assert t == asked or monte_carlo_bytes(inputs, t + 3) > limits.MONTE_CARLO_MAX_BYTES


def test_monte_carlo_bytes_is_what_the_engine_allocates(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, ...]] = []
    real = kernel.simulate_chunks

    def spy(*args: Any, **kwargs: Any) -> None:
        seen.append(args)
        real(*args, **kwargs)

    monkeypatch.setattr(kernel, "simulate_chunks", spy)
    inputs = _inputs("A2 BS3+ S4 AP0 D D3 [HAZARDOUS, SUSTAINED HITS 2]", "T4 SV3+ W2 MODELS10", 5)
    montecarlo.run(inputs, trials=5_000, seed=2, threads=2)
    args = seen[0]
    # out_damage, out_models, out_stages, out_hazard, out_hazard_models, out_over
    # out_damage, out_models, out_stages, out_hazard, out_hazard_models, out_groups, out_weapons, scratch
    outputs = [args[i] for i in (10, 11, 13, 14, 15, 17, 19)] + [args[-1]]
    rows = {a.shape[0] for a in outputs}
    assert rows == {2}  # one row per thread, not per chunk (5,000 trials run 5 chunks)
    assert args[16].shape[0] == 5  # the float sums of capped stages: one row per chunk
    assert sum(a.nbytes for a in outputs) + args[16].nbytes == monte_carlo_bytes(inputs, 2, chunks=5)


def test_uncapped_stages_are_unchanged() -> None:
    inputs = _inputs("A2 BS3+ S4 AP0 D3", "T4 SV3+ W2 MODELS10", 5)
    assert not any(inputs.stage_capped(i) for i in StageCount)
    r = montecarlo.run(inputs, trials=2_000, seed=4)
    for d in r.stages.values():
        assert d.capped_at is None and d.moments is None and "capped_at" not in d.to_dict()
        assert d.mean() == pytest.approx(float(d.support @ d.probabilities), rel=0, abs=0)


def test_a_capped_distribution_reports_the_moments_of_all_its_samples() -> None:
    # samples 1, 2, 5, 9 with a cap of 4: counts of 0..3 and of ">= 4" (5 and 9: sum 14, squares 106)
    d = Distribution.from_capped_counts(np.array([0, 1, 1, 0, 2]), 4, 14.0, 106.0)
    assert d.capped_at == 4 and d.mean() == 17 / 4
    assert d.sd() == pytest.approx(math.sqrt(111 / 4 - (17 / 4) ** 2), rel=1e-15)
    block = d.to_dict()
    assert block["capped_at"] == 4 and block["mean"] == 17 / 4
    assert block["distribution"][-1] == {"value": 4, "p": 0.5, "p_at_least": 0.5}
    assert block["median"] == 2 and block["p95"] == 4  # p95 at the last bin: "4 or more"
    # nothing reached the cap: nothing was cut off, a plain histogram
    plain = Distribution.from_capped_counts(np.array([1, 1, 0, 0, 0]), 4, 0.0, 0.0)
    assert plain.capped_at is None and plain.mean() == 0.5


def test_the_table_shows_a_capped_quantile_as_at_least_the_cap() -> None:
    import io

    from rich.console import Console

    inputs = _inputs("A 2D6 BS3+ S4 AP0 D D6+993", "T4 SV3+ W1000 MODELS1000", 1000)
    r = montecarlo.run(inputs, trials=50, seed=6)
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(stages_table(r))
    text = console.export_text()
    assert f"≥ {STAGE_CAP}" in text


def test_capped_stage_moments_do_not_depend_on_threads_or_batching() -> None:
    # The float sums behind a capped stage's mean and sd are kept per chunk and added trial by
    # trial, so they are bit-identical for any thread count (sums beyond 2**53 round, and the
    # order of additions would otherwise show).
    target = replace(parse_target("T4 SV3+ W1"), wounds=None)
    m = Matchup(weapon=parse_weapon("A999 BS2+ S10 AP0 D999"), target=target, context=Context())
    inputs = compile_matchup(m).inputs
    runs = [montecarlo.run(inputs, trials=300_000, seed=7, threads=t) for t in (1, 2, 2)]
    blocks = [r.stages["damage_before_fnp"] for r in runs]
    assert blocks[0].capped_at is not None
    assert len({(b.mean(), b.sd()) for b in blocks}) == 1
