"""Issue 8, the kernel's design: exact count tables, chunks for every thread, the compile line."""

from __future__ import annotations

import io
import sys
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.kernel import _progress, binomial
from mathhammer.model import Context, Matchup, Target
from mathhammer.notation import parse_target, parse_weapon


def _stages(weapon: str = "A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", target: str = "T4 SV3+ W2 MODELS10") -> object:
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=parse_target(target),
                                   context=Context())).inputs.stages


def test_alias_tables_give_the_binomial_probabilities() -> None:
    """Each row's alias table puts on k exactly C(m,k) p^k (1-p)^(m-k), within (m+2) / 2**64;
    BS3+ re-rolling nothing: a Critical Hit is a 6 (6/36 of the pairs)."""
    stages = _stages()
    table, alias = binomial.tables(stages)  # type: ignore[arg-type]
    odds = binomial._odds(stages)  # type: ignore[arg-type]
    assert odds[binomial.KINDS.index("hit_crit")] == (6, 36)
    for kind, (a, b) in enumerate(odds):
        for m in (1, 7, binomial.TABLE_N):
            base = m * (m + 1) // 2
            got = [Fraction(0)] * (m + 1)
            for j in range(m + 1):
                own = Fraction(int(table[kind, base + j]), 2**64)
                got[j] += own / (m + 1)
                got[int(alias[kind, base + j])] += (1 - own) / (m + 1)
            exact = [Fraction(comb(m, k) * a**k * (b - a) ** (m - k), b**m) for k in range(m + 1)]
            assert max(abs(x - y) for x, y in zip(got, exact, strict=True)) <= Fraction(m + 2, 2**64)


def test_remembered_rows_are_never_written_through() -> None:
    """tables() hands out new, writable arrays built from the remembered rows of each odds: a
    caller writing into one (the kernel's arguments are its own) changes no later table."""
    stages = _stages()
    first_table, first_alias = binomial.tables(stages)  # type: ignore[arg-type]
    kept = first_table.copy(), first_alias.copy()
    assert first_table.flags.writeable and first_alias.flags.writeable
    first_table[:] = 0
    first_alias[:] = -1
    again = binomial.tables(stages)  # type: ignore[arg-type]
    assert (again[0] == kept[0]).all() and (again[1] == kept[1]).all()
    assert again[0] is not first_table and not np.shares_memory(again[0], first_table)
    t, a = binomial._rows(6, 36)
    assert not t.flags.writeable and not a.flags.writeable


def test_ten_thousand_trials_have_chunks_for_two_threads() -> None:
    assert montecarlo.chunk_plan(10_000).size >= 2
    assert montecarlo.chunk_plan(100_000).size % 2 == 0


def test_counts_identical_for_one_and_two_threads_on_a_small_run() -> None:
    inputs = compile_matchup(Matchup(weapon=parse_weapon("A D6 BS3+ S5 AP-1 D D3 [LETHAL HITS, DEVASTATING WOUNDS]"),
                                     target=parse_target("T4 SV3+ W2 MODELS10 FNP5+"),
                                     context=Context(firing_models=3))).inputs
    one = montecarlo.run(inputs, trials=10_000, seed=4, threads=1)
    two = montecarlo.run(inputs, trials=10_000, seed=4, threads=2)
    assert np.array_equal(one.damage.counts, two.damage.counts)
    assert all(np.array_equal(one.stages[k].counts, two.stages[k].counts) for k in one.stages)


def test_compile_line_is_plain_when_not_a_terminal() -> None:
    out = io.StringIO()
    with _progress.elapsed("compiling kernels…", out):
        pass
    assert out.getvalue() == "compiling kernels…\n"


def test_compile_line_counts_seconds_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    with _progress.elapsed("compiling kernels…", out):
        pass
    assert out.getvalue().startswith("\rcompiling kernels… 0 s") and out.getvalue().endswith(" s\n")


class _Closed(io.StringIO):
    """stderr whose file descriptor was closed under the running process (or a pipe whose
    reader left): every write fails."""

    def write(self, s: str) -> int:
        raise OSError(9, "Bad file descriptor")


@pytest.mark.parametrize("stderr", [_Closed(), None])
def test_the_compile_line_and_cache_notes_never_fail_a_run_on_a_broken_stderr(
        stderr: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """They are notes: with stderr broken or missing (pythonw) they are dropped, never written to
    stdout, and the compile goes on (a command whose stderr was closed after it started ended
    "internal error", exit 70, on its first run)."""
    from mathhammer.kernel import _cache

    monkeypatch.setattr(sys, "stderr", stderr)
    ran = []
    with _progress.elapsed("compiling kernels…"):
        ran.append("elapsed")
    with _progress.plain("compiling kernels…"):
        ran.append("plain")
    with _cache._announced("compiling kernels…", None):
        ran.append("announced")
    monkeypatch.setattr(_cache, "NOTES", ["note: numba cache at x was damaged; recompiling"])
    _cache.flush_notes()
    assert ran == ["elapsed", "plain", "announced"] and _cache.NOTES == []
    assert capsys.readouterr().out == ""


def test_live_compile_status_is_off_outside_its_block() -> None:
    assert montecarlo._LIVE.get() is False
    with montecarlo.live_compile_status():
        assert montecarlo._LIVE.get() is True
    assert montecarlo._LIVE.get() is False


def _target(text: str) -> Target:
    """An inline target, or one with unlimited wounds when ``text`` has no W."""
    if " W" in text:
        return parse_target(text)
    t = parse_target(text + " W1")
    return Target(name="unlimited", toughness=t.toughness, save=t.save, wounds=None)


def _alias_pmf(t: np.ndarray, own: np.ndarray, alias: np.ndarray, first: int, last: int) -> dict[int, Fraction]:
    """The exact distribution an alias table (rows first..last-1) draws: outcome -> probability."""
    size = last - first
    pmf: dict[int, Fraction] = {}
    for j in range(first, last):
        keep = Fraction(int(t[j]), 2**64)
        pmf[int(own[j])] = pmf.get(int(own[j]), Fraction(0)) + keep / size
        pmf[int(alias[j])] = pmf.get(int(alias[j]), Fraction(0)) + (1 - keep) / size
    return pmf


def _power(pmf: dict[int, Fraction], times: int) -> dict[int, Fraction]:
    out = {0: Fraction(1)}
    for _ in range(times):
        nxt: dict[int, Fraction] = {}
        for x, p in out.items():
            for y, q in pmf.items():
                nxt[x + y] = nxt.get(x + y, Fraction(0)) + p * q
        out = nxt
    return out


def test_joint_table_of_whole_attacks_gives_the_rules_distribution() -> None:
    """Reference scenario, one attack, derived from the rules: BS3+ re-rolling 1s hits
    critically on 6 or 1-then-6 (7/36), otherwise on 3-5 or 1-then-3-5 (21/36); a Critical Hit
    makes 2 hits (Sustained Hits 1); each hit is unsaved with 2/3 (wounds on 3+) x 1/2 (saves
    on 4+). m attacks draw the m-fold sum, within K / 2**64 per outcome."""
    from mathhammer.kernel import joint
    from mathhammer.model import RerollPolicy

    inputs = compile_matchup(Matchup(weapon=parse_weapon("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]"),
                                     target=_target("T4 SV3+"),
                                     context=Context(reroll_hits=RerollPolicy.ONES))).inputs
    t, own, alias, start, chunk = joint.joint_tables(inputs.stages, torrent=False, lethal=False, devastating=False,
                                                     split_devastating=False, sustained=1, keep_stages=False)
    u = Fraction(1, 3)
    crit, hit = Fraction(7, 36), Fraction(21, 36)
    one = {0: (1 - crit - hit) + hit * (1 - u) + crit * (1 - u) ** 2, 1: hit * u + crit * 2 * u * (1 - u),
           2: crit * u * u}
    assert chunk[joint.FINAL] == binomial.TABLE_N and chunk[joint.HIT] == 0
    for m in (1, 3, 10):
        got = _alias_pmf(t, own, alias, int(start[joint.FINAL, m]), int(start[joint.FINAL, m + 1]))
        want = _power(one, m)
        assert set(got) <= set(want)
        assert max(abs(got.get(k, Fraction(0)) - p) for k, p in want.items()) <= Fraction(2 * m + 2, 2**64)


def test_joint_hit_table_is_the_trinomial() -> None:
    """With the stage breakdown, m Hit rolls draw (non-critical hits, Critical Hits) at once:
    BS3+, no re-roll: 3-5 hit (1/2), 6 is critical (1/6)."""
    from mathhammer.kernel import joint

    t, own, alias, start, chunk = joint.joint_tables(_stages(), torrent=False, lethal=False,  # type: ignore[arg-type]
                                                     devastating=False, split_devastating=False, sustained=1,
                                                     keep_stages=True)
    assert chunk[joint.FINAL] == 0 and chunk[joint.HIT] == binomial.TABLE_N
    m = 5
    got = _alias_pmf(t, own, alias, int(start[joint.HIT, m]), int(start[joint.HIT, m + 1]))
    for a in range(m + 1):
        for c in range(m + 1 - a):
            want = Fraction(comb(m, a) * comb(m - a, c)) * Fraction(1, 2) ** a * Fraction(1, 6) ** c \
                * Fraction(1, 3) ** (m - a - c)
            assert abs(got.get(a | (c << joint.SHIFT), Fraction(0)) - want) <= Fraction(m + 2, 2**64)


@pytest.mark.statistical
@pytest.mark.parametrize(("weapon", "target", "command"), [
    ("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "T4 SV3+", "none"),
    ("A D6 BS3+ S5 AP-1 D D3 [LETHAL HITS, DEVASTATING WOUNDS]", "T4 SV3+ W2 MODELS10 FNP5+", "damage"),
    ("A 3 BS4+ S8 AP-2 D2 [DEVASTATING WOUNDS, SUSTAINED HITS 2]", "T8 SV3+ W12 MODELS2", "attacks"),
    ("A 2D6 BS N/A S4 AP0 D1 [TORRENT, DEVASTATING WOUNDS]", "T4 SV4+ W1 MODELS10", "none"),
    ("A 12 BS4+ S4 AP0 D1 [LETHAL HITS, SUSTAINED HITS 1]", "T4 SV5+", "none"),
    ("A 40 BS3+ S4 AP0 D1 [LETHAL HITS]", "T4 SV5+ W3 MODELS20", "none"),
])
def test_without_stages_whole_attack_draws_agree_with_exact(weapon: str, target: str, command: str) -> None:
    """The fast path without a stage breakdown (one joint draw per 32 attacks) against the
    exact engine, and the same sample must reject a planted bug (every Hit roll of 3 misses)."""
    from dataclasses import replace

    from mathhammer.codes import Stage
    from mathhammer.engine import exact
    from mathhammer.engine.agreement import compare
    from mathhammer.model import CommandReroll

    n = 200_000
    inputs = compile_matchup(Matchup(weapon=parse_weapon(weapon), target=_target(target),
                                     context=Context(command_reroll=CommandReroll[command.upper()]))).inputs
    mc = montecarlo.run(inputs, trials=n, seed=11, stages=False)
    ex = exact.run(inputs)
    assert compare(mc.damage, mc.models_destroyed, ex.damage, ex.models_destroyed, n).agrees
    stages = np.array(inputs.stages)
    row = stages[Stage.HIT]
    stages[Stage.HIT] = np.where(((np.arange(36) // 6) == 2) & ((row & 3) > 0), 0, row)
    stages.setflags(write=False)
    bug = exact.run(replace(inputs, stages=stages))
    if "BS3+" in weapon:  # else a Hit roll of 3 misses already
        assert not compare(mc.damage, mc.models_destroyed, bug.damage, bug.models_destroyed, n).agrees


def test_workers_run_every_share_and_are_shared_by_runs() -> None:
    # The kernel's idle threads: one set per process, each share on its own thread, results
    # identical to one thread (each chunk's stream is the same whichever thread runs it).
    from mathhammer import kernel
    from mathhammer.compile import compile_matchup
    from mathhammer.engine import montecarlo
    from mathhammer.model import Matchup
    from mathhammer.notation import parse_target, parse_weapon

    inputs = compile_matchup(Matchup(weapon=parse_weapon("A3 BS3+ S4 AP-1 D2 [LETHAL HITS]"),
                                     target=parse_target("T4 SV4+ W2 MODELS5"))).inputs
    one = montecarlo.run(inputs, trials=50_000, seed=3, threads=1)
    two = montecarlo.run(inputs, trials=50_000, seed=3, threads=2)
    assert (one.damage.counts == two.damage.counts).all()
    with kernel.worker_pool(2) as first, kernel.worker_pool(2) as second:
        assert first is not None and first is second and first.size >= 1


@pytest.mark.parametrize("stages", [True, False])
@pytest.mark.parametrize(("weapon", "command", "fast"), [
    ("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "none", True),
    ("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS D3]", "none", False),   # a rolled Sustained Hits
    ("A10 BS3+ S5 AP-1 D2", "hit", False),                          # a Command Re-roll ties dice
    ("A10 BS3+ S5 AP-1 D2", "wound", False),
    ("A10 BS3+ S5 AP-1 D2", "save", False),
    ("A10 BS3+ S5 AP-1 D2", "damage", True),                        # damage is rolled per attack anyway
])
def test_the_fast_path_exists_exactly_where_it_is_correct(weapon: str, command: str, fast: bool,
                                                          stages: bool) -> None:
    # The kernel takes its fast path iff the joint tables were built (kernel.takes_fast_path reads
    # the same tables): they must be empty wherever that path would be wrong.
    from mathhammer import kernel
    from mathhammer.codes import Flag, Param
    from mathhammer.compile import compile_matchup
    from mathhammer.model import CommandReroll, Context, Matchup
    from mathhammer.notation import parse_target, parse_weapon

    inputs = compile_matchup(Matchup(weapon=parse_weapon(weapon), target=parse_target("T4 SV3+ W2 MODELS10"),
                                     context=Context(command_reroll=CommandReroll(command)))).inputs
    params = inputs.params.copy()
    if stages:
        params[Param.FLAGS] |= Flag.STAGES
    joint = kernel.joint_tables_for(inputs.stages, inputs.rolls, inputs.roll_maps, params, inputs.stage_offsets)
    assert kernel.takes_fast_path(params, joint[4]) is fast
