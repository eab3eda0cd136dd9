"""Allocation transition tables of the units path (mathhammer.kernel.transition, issue 9 item 8).

On one queue of models, a weapon group with fixed Damage alike at every group and no Feel No
Pain moves the queue's position by table instead of one wound at a time (R-7, R-9.1, R-9.2).
The tables are checked against hand-derived cases and a brute-force enumeration of the saves
(and, for MOVE's rows, of the attacks) with fractions; the kernels that read them against the
exact engine (mean within 5 standard errors, CDFs within the DKW bound), with a planted bug in
each kind of table (a save one worse, a Damage one higher) that the same check must reject. The
queue kernel (simulate._run_queue) must give the wound-by-wound loop's counts draw for draw.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
import pytest

from mathhammer import kernel
from mathhammer.codes import Flag, Param
from mathhammer.compile import UnitInputs, compile_matchup
from mathhammer.engine import exact_units, montecarlo
from mathhammer.engine.agreement import MEAN_BOUND_SE, compare, dkw_bound
from mathhammer.kernel import transition
from mathhammer.kernel.binomial import TABLE_N
from mathhammer.model import Allocation, CommandReroll, Context, Matchup, Target, TargetUnit, WeaponGroup
from mathhammer.notation import parse_weapon
from mathhammer.result import DamageResult, Distribution

N = 200_000


def _unit(target: TargetUnit, *weapons: tuple[str, int], context: Context | None = None) -> UnitInputs:
    groups = tuple(WeaponGroup(weapon=parse_weapon(text), count=n) for text, n in weapons)
    u = compile_matchup(Matchup(weapons=groups, target=target, context=context or Context())).unit
    assert u is not None and not u.single
    return u


def _with_stages(params: np.ndarray) -> np.ndarray:
    """``params`` as a run with the stage breakdown passes them (no MOVE rows then)."""
    params = params.copy()
    params[..., Param.FLAGS] |= Flag.STAGES
    return params


def _tables(u: UnitInputs, *, stages: bool = False) -> transition.TrackTables:
    params = _with_stages(u.params) if stages else u.params
    return transition.track_tables(u.stages, u.rolls, u.roll_maps, params, u.groups, u.bodyguard_groups)


def _squad(sergeant_save: int, trooper_save: int = 3) -> TargetUnit:
    """5 troopers W2 then a sergeant W3 with a 5+ invulnerable save (listed order: troopers first)."""
    return TargetUnit(name="squad", groups=(
        Target(name="trooper", toughness=4, save=trooper_save, wounds=2, models=5),
        Target(name="sergeant", toughness=4, save=sergeant_save, wounds=3, models=1, invulnerable=5)),
        allocation=Allocation.LISTED)


SQUAD_WEAPONS = (("A2 BS3+ S4 AP-1 D1", 5), ("A1 BS3+ S8 AP-2 D2", 5))


def _row(t: np.ndarray, alias: np.ndarray, n: int) -> list[float]:
    """Probabilities of outcomes 0 .. n of the alias row for n wounds (laid out as binomial's)."""
    at = n * (n + 1) // 2
    probs = [0.0] * (n + 1)
    for j in range(n + 1):
        own = float(int(t[at + j])) / 2.0**64
        probs[j] += own / (n + 1)
        probs[int(alias[at + j])] += (1 - own) / (n + 1)
    return probs


# --- the tables, by hand and by enumeration ---------------------------------------------------------

def test_positions_along_the_queue_are_the_loops_states() -> None:
    """A W3 model, then two W2 models: positions 0..7, each with (group, models left in it, wounds
    left on the current model) and the models destroyed so far in each group; the last position
    is every model destroyed (the loop's state: last group, 0, 0)."""
    track, base, end = transition._queue(np.array([[1, 3, 0], [2, 2, 0]], dtype=np.int64))
    assert base.tolist() == [0, 3, 7]
    assert track.tolist() == [[0, 1, 3, 0, 0], [0, 1, 2, 0, 0], [0, 1, 1, 0, 0],
                              [1, 2, 2, 1, 0], [1, 2, 1, 1, 0], [1, 1, 2, 1, 1], [1, 1, 1, 1, 1],
                              [1, 0, 0, 1, 2]]
    assert end.tolist() == [3, 3, 3, 5, 5, 7, 7, 7]


def test_unsaved_wounds_move_the_position_with_excess_lost() -> None:
    """D2 (R-9.2, excess lost): from 0 the W3 model takes 2, then 1 (destroyed), then 2 per W2 model."""
    _, _, end = transition._queue(np.array([[1, 3, 0], [2, 2, 0]], dtype=np.int64))
    adv = transition._advance(end, 2)
    assert adv[0].tolist() == [0, 2, 3, 5, 7, 7, 7, 7]
    assert adv[4].tolist() == [4, 5, 7, 7, 7, 7, 7, 7]  # the wounded W2 model loses its last wound
    assert transition._advance(end, 5)[1].tolist() == [1, 3, 5, 7, 7, 7, 7, 7]


def test_save_rows_by_hand() -> None:
    """D1 at a W1 model saving on 3+ (fails 12/36), then a W1 model saving on 2+ (fails 6/36):
    two wounds from the start fail 0, 1, 2 times with (2/3)^2, 1/3 * 5/6 + 2/3 * 1/3, 1/3 * 1/6
    (a failed save moves the next save to the second model); from the last position every save
    is the last group's."""
    _, _, end = transition._queue(np.array([[1, 1, 0], [1, 1, 0]], dtype=np.int64))
    adv = transition._advance(end, 1)
    t, alias = transition._unsaved_rows(adv, [0, 1, 1], [12, 6])
    want = [Fraction(4, 9), Fraction(1, 3) * Fraction(5, 6) + Fraction(2, 3) * Fraction(1, 3), Fraction(1, 18)]
    assert _row(t[0], alias[0], 2) == pytest.approx([float(w) for w in want], abs=1e-15)
    assert _row(t[2], alias[2], 1) == pytest.approx([5 / 6, 1 / 6], abs=1e-15)
    assert _row(t[0], alias[0], 0) == [1.0]


def _save_sequences(groups: list[tuple[int, int]], fails: list[int], damage: int, start: int, n: int
                    ) -> Iterator[tuple[Fraction, int, int]]:
    """Every sequence of save results of n wounds reaching the save, as (probability, unsaved,
    position): each save at the model the earlier unsaved wounds left current (the last group's
    when none is left), each unsaved wound taking ``damage`` from it, excess lost; the position is
    the wounds the queue has lost (a destroyed model's whole W), ``start`` of them before."""
    models = [(j, w) for j, (count, w) in enumerate(groups) for _ in range(count)]
    for saves in itertools.product((True, False), repeat=n):  # True: the save fails
        # the queue: wounds left on each model; ``start`` wounds already gone from the front
        left = [w for _, w in models]
        gone = start
        for i in range(len(left)):
            take = min(gone, left[i])
            left[i] -= take
            gone -= take
        p = Fraction(1)
        unsaved = 0
        for fail in saves:
            current = next((i for i, w in enumerate(left) if w > 0), None)
            group = models[current][0] if current is not None else len(groups) - 1
            p *= Fraction(fails[group], 36) if fail else Fraction(36 - fails[group], 36)
            if fail:
                unsaved += 1
                if current is not None:
                    left[current] -= min(damage, left[current])
        yield p, unsaved, sum(w for _, w in models) - sum(left)


def _enumerated(groups: list[tuple[int, int]], fails: list[int], damage: int, start: int, n: int) -> list[Fraction]:
    """The unsaved count of n wounds reaching the save (:func:`_save_sequences`)."""
    out = [Fraction(0)] * (n + 1)
    for p, unsaved, _position in _save_sequences(groups, fails, damage, start, n):
        out[unsaved] += p
    return out


@pytest.mark.parametrize(("groups", "fails", "damage"), [
    ([(2, 2), (1, 3)], [12, 6], 1),
    ([(1, 3), (3, 1)], [24, 6], 2),
    ([(2, 1), (1, 2), (1, 1)], [6, 30, 18], 1),
])
def test_save_rows_match_an_enumeration_of_every_save(groups: list[tuple[int, int]], fails: list[int],
                                                      damage: int) -> None:
    g = np.array([[m, w, 0] for m, w in groups], dtype=np.int64)
    track, _, end = transition._queue(g)
    adv = transition._advance(end, damage)
    t, alias = transition._unsaved_rows(adv, [int(x) for x in track[:, 0]], fails)
    for start in range(end.size):
        for n in range(7):
            want = _enumerated(groups, fails, damage, start, n)
            assert _row(t[start], alias[start], n) == pytest.approx([float(w) for w in want], abs=1e-14), (start, n)


# --- which weapon groups take the tables --------------------------------------------------------------

def test_modes_follow_the_saves_and_the_damage() -> None:
    alike = _tables(_unit(_squad(3), *SQUAD_WEAPONS))
    differ = _tables(_unit(_squad(2), *SQUAD_WEAPONS))
    assert alike[0][:, 0].tolist() == [transition.ALIKE, transition.ALIKE] and alike[4].size == 0
    # without the stage breakdown, each position's row ends with where the attacks leave the queue
    rows = (TABLE_N + 1) * (TABLE_N + 2) // 2
    assert differ[0].tolist() == [[transition.MOVE, TABLE_N, rows]] * 2
    assert differ[4].shape == (2, 14, rows + 14)
    with_stages = _tables(_unit(_squad(2), *SQUAD_WEAPONS), stages=True)
    assert with_stages[0].tolist() == [[transition.DIFFER, TABLE_N, 0]] * 2
    assert with_stages[4].shape == (2, 14, rows)
    rolled = _tables(_unit(_squad(2), ("A2 BS3+ S4 AP-1 D1", 5), ("A1 BS3+ S8 AP-2 D D3", 5)))
    assert rolled[0][:, 0].tolist() == [transition.MOVE, transition.LOOP]


def test_rows_stop_at_the_most_wounds_a_weapon_group_can_have() -> None:
    """5 x A2 (at most 10 wounds) and 5 x A1 (at most 5): rows for n = 0 .. 10 and 0 .. 5."""
    u = _unit(_squad(2), *SQUAD_WEAPONS)
    mode, *_, t, _alias = transition.track_tables(u.stages, u.rolls, u.roll_maps, _with_stages(u.params), u.groups,
                                                  u.bodyguard_groups, (10, 5))
    assert mode.tolist() == [[transition.DIFFER, 10, 0], [transition.DIFFER, 5, 0]]
    assert t.shape == (2, 14, 11 * 12 // 2)


@pytest.mark.parametrize("case", ["leader", "fnp", "too many wounds", "command re-roll of a save"])
def test_everything_else_keeps_the_loop(case: str) -> None:
    trooper = Target(name="trooper", toughness=4, save=3, wounds=2, models=5)
    ctx = None
    if case == "leader":
        target = TargetUnit(name="u", groups=(trooper, Target(name="captain", toughness=4, save=2, wounds=5, models=1,
                                                                keywords=frozenset({"CHARACTER"}), leader=True)))
    elif case == "fnp":
        target = TargetUnit(name="u", groups=(trooper, Target(name="medic", toughness=4, save=2, wounds=2, models=1,
                                                                feel_no_pain=5)))
    elif case == "too many wounds":
        target = TargetUnit(name="u", groups=(Target(name="big", toughness=4, save=3, wounds=10, models=13),
                                              Target(name="boss", toughness=4, save=2, wounds=10, models=1)))
    else:
        target = _squad(2)  # the saves differ: the re-roll ties one save to the others
        ctx = Context(command_reroll=CommandReroll.SAVE)
    u = _unit(target, *SQUAD_WEAPONS, context=ctx)
    assert _tables(u)[0][:, 0].tolist() == [transition.LOOP, transition.LOOP]


# --- the kernel against the exact engine ----------------------------------------------------------------

def _agrees(mc: DamageResult, ex: DamageResult, u: UnitInputs, trials: int) -> None:
    a = compare(mc.damage, mc.models_destroyed, ex.damage, ex.models_destroyed, trials)
    assert a.agrees, a.line()
    for got, want in zip(mc.groups, ex.groups, strict=True):
        gap = compare(got.models_destroyed, got.models_destroyed, want.models_destroyed, want.models_destroyed, trials)
        assert gap.max_cdf_gap <= dkw_bound(trials), f"group {want.name}: CDF gap {gap.max_cdf_gap:.5f}"
    spread = u.damage_max / 2  # a weapon group's damage per trial lies in 0 .. the unit's wounds
    for got_w, want_w in zip(mc.weapons, ex.weapons, strict=True):
        assert abs(got_w.damage_mean - want_w.damage_mean) <= MEAN_BOUND_SE * spread / math.sqrt(trials) + 1e-12
        assert abs(got_w.models_destroyed_mean - want_w.models_destroyed_mean) \
            <= MEAN_BOUND_SE * u.target_models / 2 / math.sqrt(trials) + 1e-12


def _many_wounds() -> UnitInputs:
    """60 Torrent attacks wounding on 2+: about 50 wounds reach the saves, more than TABLE_N, at
    8 models W2 saving on 2+ then 8 models W2 saving on 5+ (32 wounds in all)."""
    target = TargetUnit(name="horde", groups=(Target(name="shield", toughness=4, save=2, wounds=2, models=8),
                                              Target(name="mob", toughness=4, save=5, wounds=2, models=8)),
                        allocation=Allocation.LISTED)
    return _unit(target, ("A20 BS N/A S8 AP0 D1 [TORRENT]", 3))


def _wounded_with_devastating() -> UnitInputs:
    """A first model with 1 wound left, and Devastating Wounds landing after the table moved."""
    target = TargetUnit(name="u", groups=(Target(name="a", toughness=5, save=3, wounds=3, models=3),
                                          Target(name="b", toughness=5, save=4, wounds=2, models=2)),
                        allocation=Allocation.LISTED, wounds_left=1)
    return _unit(target, ("A4 BS3+ S5 AP-1 D2 [DEVASTATING WOUNDS]", 3), ("A2 BS4+ S5 AP0 D1", 2))


def _wounded() -> UnitInputs:
    """A first model with 1 wound left of 3, two weapon groups, saves that differ by group."""
    target = TargetUnit(name="u", groups=(Target(name="a", toughness=5, save=3, wounds=3, models=3),
                                          Target(name="b", toughness=5, save=5, wounds=2, models=2)),
                        allocation=Allocation.LISTED, wounds_left=1)
    return _unit(target, ("A4 BS3+ S5 AP-1 D2", 3), ("A2 BS4+ S5 AP0 D1", 2))


SCENARIOS = {
    "saves alike": lambda: _unit(_squad(3), *SQUAD_WEAPONS),
    "saves differ": lambda: _unit(_squad(2), *SQUAD_WEAPONS),
    "more wounds than a table row": _many_wounds,
    "wounded, devastating": _wounded_with_devastating,
    "wounded": _wounded,
    "sustained and lethal": lambda: _unit(_squad(2), ("A3 BS4+ S5 AP-1 D1 [SUSTAINED HITS 1, LETHAL HITS]", 3),
                                          ("A1 BS N/A S8 AP-2 D2 [TORRENT]", 4)),
}


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("stages", [True, False])
def test_kernel_with_tables_agrees_with_exact(name: str, stages: bool) -> None:
    u = SCENARIOS[name]()
    assert (_tables(u)[0][:, 0] != transition.LOOP).all()  # the tables are what this test runs
    ex = exact_units.run(u)
    mc = montecarlo.run(u, trials=N, seed=2024, threads=1, stages=stages)
    _agrees(mc, ex, u, N)


def test_short_rows_chain_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows for at most 2 wounds: every weapon group's saves are drawn 2 wounds at a time, each
    draw from where the previous one left the queue; the same distribution."""
    real = transition.track_tables
    monkeypatch.setattr(kernel, "track_tables", lambda *args: real(*args[:6], (2,) * args[0].shape[0]))
    u = SCENARIOS["saves differ"]()
    ex = exact_units.run(u)
    for stages in (True, False):
        _agrees(montecarlo.run(u, trials=N, seed=31, threads=1, stages=stages), ex, u, N)


@pytest.mark.statistical
@pytest.mark.parametrize("name", ["saves differ", "more wounds than a table row"])
def test_stage_counts_match_the_wound_by_wound_loop(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unsaved wounds and the damage (stage counts the exact engine gives for one group only)
    against the loop's, which the tables replace: two samples of N trials, means within 5
    standard errors of their difference, CDFs within twice the DKW bound."""
    u = SCENARIOS[name]()
    with_tables = montecarlo.run(u, trials=N, seed=41, threads=1)
    real = transition.track_tables

    def loop_only(*args: object) -> transition.TrackTables:
        mode, *rest = real(*args)  # type: ignore[arg-type]
        return (np.zeros_like(mode), *rest)  # type: ignore[return-value]

    monkeypatch.setattr(kernel, "track_tables", loop_only)
    loop = montecarlo.run(u, trials=N, seed=42, threads=1)
    for key in ("unsaved", "damage_before_fnp", "damage_after_fnp"):
        a, b = with_tables.stages[key], loop.stages[key]
        se = math.sqrt((a.sd() ** 2 + b.sd() ** 2) / N)
        assert abs(a.mean() - b.mean()) <= MEAN_BOUND_SE * se + 1e-12, key
        gap = compare(a, a, b, b, N).max_cdf_gap
        assert gap <= 2 * dkw_bound(N), f"stage {key}: CDF gap {gap:.5f}"


def test_many_wounds_need_several_draws() -> None:
    """The scenario above does reach more than TABLE_N wounds at the saves (the chained draws)."""
    r = montecarlo.run(_many_wounds(), trials=2_000, seed=3, threads=1)
    assert r.stages["wounds"].counts[TABLE_N + 1:].sum() > 1_000


def test_results_are_the_same_for_any_thread_count() -> None:
    for name in ("saves differ", "more wounds than a table row"):
        u = SCENARIOS[name]()
        one = montecarlo.run(u, trials=150_000, seed=9, threads=1)
        two = montecarlo.run(u, trials=150_000, seed=9, threads=2)
        assert np.array_equal(one.damage.counts, two.damage.counts)
        assert all(np.array_equal(a.models_destroyed.counts, b.models_destroyed.counts)
                   for a, b in zip(one.groups, two.groups, strict=True))


# --- planted bugs: the check above can fail ----------------------------------------------------------------

def test_a_save_row_one_off_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables built with the troopers' save one worse (AP-1 on 3+: fails 18/36 read as 24/36) give
    the answer of troopers saving on 4+: the agreement check must reject it against the true
    exact answer (and accept it against the troopers-on-4+ one, so the bug is that and no other)."""
    real = transition._unsaved_rows

    def one_worse(adv: np.ndarray, group_at: list[int], fails: list[int], most: int = TABLE_N
                  ) -> tuple[np.ndarray, np.ndarray]:
        return real(adv, group_at, [fails[0] + 6, *fails[1:]], most)

    monkeypatch.setattr(transition, "_unsaved_rows", one_worse)
    monkeypatch.setattr(transition, "_BUILT", {})
    _troopers_read_as_saving_on_4(montecarlo.run(_unit(_squad(2), *SQUAD_WEAPONS), trials=N, seed=5, threads=1))


def _troopers_read_as_saving_on_4(mc: DamageResult) -> None:
    """The agreement check rejects ``mc`` (a run of the squad, saves differing) against the true
    exact answer and accepts it against the answer for troopers saving on 4+."""
    caught = compare(mc.damage, mc.models_destroyed, *_exact(_unit(_squad(2), *SQUAD_WEAPONS)), N)
    assert not caught.agrees, caught.line()
    bugged = _unit(_squad(2, trooper_save=4), *SQUAD_WEAPONS)
    same = compare(mc.damage, mc.models_destroyed, *_exact(bugged), N)
    assert same.agrees, same.line()


def test_a_damage_one_off_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = transition._advance
    monkeypatch.setattr(transition, "_advance", lambda end, damage: real(end, damage + 1))
    monkeypatch.setattr(transition, "_BUILT", {})
    u = _unit(_squad(3), *SQUAD_WEAPONS)
    mc = montecarlo.run(u, trials=N, seed=6, threads=1, stages=False)
    caught = compare(mc.damage, mc.models_destroyed, *_exact(u), N)
    assert not caught.agrees, caught.line()


def _exact(u: UnitInputs) -> tuple[Distribution, Distribution]:
    ex = exact_units.run(u)
    return ex.damage, ex.models_destroyed


def test_kernel_reads_the_tables_it_is_given() -> None:
    """kernel.track_tables is what the engine passes (the planted-bug tests patch its builder)."""
    assert kernel.track_tables is transition.track_tables


def test_a_budget_too_small_for_move_rows_keeps_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    """14 positions, rows for 0 .. 32 wounds (561 entries) and MOVE's 14 more, 16 bytes an entry,
    for 2 weapon groups, after adv (2 x 14 x 14 x 8 = 3,136 bytes): 254,464 bytes without MOVE's
    rows, 260,736 with them. A budget between the two keeps DIFFER's rows for both groups (the
    second's MOVE row would widen the first's rows too) rather than sending them to the loop."""
    monkeypatch.setattr(transition, "MAX_BYTES", 256_000)
    monkeypatch.setattr(transition, "_BUILT", {})
    mode = _tables(_unit(_squad(2), *SQUAD_WEAPONS))[0]
    assert mode[:, 0].tolist() == [transition.DIFFER, transition.DIFFER]
    monkeypatch.setattr(transition, "MAX_BYTES", 260_736)
    monkeypatch.setattr(transition, "_BUILT", {})
    mode = _tables(_unit(_squad(2), *SQUAD_WEAPONS))[0]
    assert mode[:, 0].tolist() == [transition.MOVE, transition.MOVE]


def test_tables_past_the_byte_budget_keep_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget too small for the save rows: the groups whose saves differ keep the loop (and the
    results stay right: the loop is the path every other test checks)."""
    monkeypatch.setattr(transition, "MAX_BYTES", 4_000)
    monkeypatch.setattr(transition, "_BUILT", {})
    differ = _tables(_unit(_squad(2), *SQUAD_WEAPONS))
    assert differ[0][:, 0].tolist() == [transition.LOOP, transition.LOOP] and differ[4].size == 0
    alike = _tables(_unit(_squad(3), *SQUAD_WEAPONS))
    assert alike[0][:, 0].tolist() == [transition.ALIKE, transition.ALIKE]


QUEUE_CASES = ("saves alike", "saves differ", "more wounds than a table row", "wounded", "sustained and lethal")


@pytest.mark.parametrize("stages", [False, True])
@pytest.mark.parametrize("name", QUEUE_CASES)
def test_counting_positions_gives_the_loops_counts_draw_for_draw(name: str, stages: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """When every weapon group moves along the queue by table, the queue kernel counts trials by
    the position each group leaves the queue at (and their stage counts) and derives the
    histograms from those counts (simulate._run_queue). With DIFFER's two draws in place of
    MOVE's one it draws the same numbers as the wound-by-wound loop, so for a seed every count
    must be the very same, stage breakdown included; the loop runs when the scratch row has no
    room for the positions' counts."""
    u = SCENARIOS[name]()
    real_tables = transition.track_tables

    def no_move(*args: object) -> transition.TrackTables:
        mode, *rest = real_tables(*args)  # type: ignore[arg-type]
        mode[mode[:, 0] == transition.MOVE, 0] = transition.DIFFER
        return (mode, *rest)  # type: ignore[return-value]

    monkeypatch.setattr(kernel, "track_tables", no_move)
    scratch: list[np.ndarray] = []
    real = kernel.simulate_chunks

    def keep_scratch(*args: object, **kw: object) -> None:
        scratch.append(args[-1])  # type: ignore[arg-type]
        real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(kernel, "simulate_chunks", keep_scratch)
    by_position = montecarlo.run(u, trials=30_000, seed=17, threads=2, stages=stages)
    seen = u.n_groups + u.n_weapons + u.n_weapons * u.n_groups
    assert scratch[-1][:, seen:].sum() > 0  # the positions were counted: the queue path ran
    monkeypatch.setattr(montecarlo, "scratch_width", lambda v: seen)
    scratch.clear()
    loop = montecarlo.run(u, trials=30_000, seed=17, threads=2, stages=stages)
    assert scratch[-1][:, seen:].sum() == 0  # the loop ran
    assert np.array_equal(by_position.damage.counts, loop.damage.counts)
    assert np.array_equal(by_position.models_destroyed.counts, loop.models_destroyed.counts)
    for a, b in zip(by_position.groups, loop.groups, strict=True):
        assert np.array_equal(a.models_destroyed.counts, b.models_destroyed.counts)
    for wa, wb in zip(by_position.weapons, loop.weapons, strict=True):
        assert (wa.damage_mean, wa.models_destroyed_mean) == (wb.damage_mean, wb.models_destroyed_mean)
    assert by_position.stages.keys() == loop.stages.keys() and bool(loop.stages) == stages
    for key, dist in loop.stages.items():
        got = by_position.stages[key]
        assert np.array_equal(got.counts, dist.counts), key
        assert (got.mean(), got.sd()) == (dist.mean(), dist.sd()), key



# --- MOVE: one draw of where a weapon group's attacks leave the queue ---------------------------------------

def _outcomes(t: np.ndarray, alias: np.ndarray) -> list[float]:
    """Probabilities of outcomes 0 .. len - 1 of one alias row."""
    size = len(t)
    probs = [0.0] * size
    for j in range(size):
        own = float(int(t[j])) / 2.0**64
        probs[j] += own / size
        probs[int(alias[j])] += (1 - own) / size
    return probs


def test_move_rows_match_an_enumeration_of_every_attack_and_save() -> None:
    """2 models firing A2 BS3+ S4 AP-1 D1 (4 attacks; each hits on 3+, 2/3, and wounds T4 on 4+,
    1/2: 1/3 reaches the saving throw) at 2 troopers W2 saving on 4+ after AP-1 (fails 18/36)
    and a sergeant W3 on 3+ (fails 12/36): from every start position, P(where the queue is left)
    is the binomial mixture over the wounds of the enumeration of their saves."""
    target = TargetUnit(name="squad", groups=(Target(name="trooper", toughness=4, save=3, wounds=2, models=2),
                                              Target(name="sergeant", toughness=4, save=2, wounds=3, models=1)),
                        allocation=Allocation.LISTED)
    u = _unit(target, ("A2 BS3+ S4 AP-1 D1", 2), ("A1 BS3+ S4 AP-1 D1", 1))
    mode, _track, _base, _adv, t, alias = _tables(u)
    assert mode[0].tolist()[:1] == [transition.MOVE]
    q = Fraction(1, 3)
    for start in range(8):
        want = [Fraction(0)] * 8
        for w in range(5):
            binomial = math.comb(4, w) * q**w * (1 - q) ** (4 - w)
            for prob, _unsaved, position in _save_sequences([(2, 2), (1, 3)], [18, 12], 1, start, w):
                want[position] += binomial * prob
        at = int(mode[0, 2])
        got = _outcomes(t[0, start, at:at + 8], alias[0, start, at:at + 8])
        assert got == pytest.approx([float(w) for w in want], abs=1e-14), start


def test_a_move_row_one_off_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """MOVE rows built with the troopers' save one worse: the agreement check of a run without the
    stage breakdown (the kernel that draws them) must reject it against the exact answer and accept
    it against the answer for troopers saving on 4+."""
    real = transition._move_rows

    def one_worse(adv: np.ndarray, group_at: list[int], fails: list[int], reach: dict[int, int], attacks: int
                  ) -> tuple[np.ndarray, np.ndarray]:
        return real(adv, group_at, [fails[0] + 6, *fails[1:]], reach, attacks)

    monkeypatch.setattr(transition, "_move_rows", one_worse)
    monkeypatch.setattr(transition, "_BUILT", {})
    u = _unit(_squad(2), *SQUAD_WEAPONS)
    assert (_tables(u)[0][:, 0] == transition.MOVE).all()
    _troopers_read_as_saving_on_4(montecarlo.run(u, trials=N, seed=5, threads=1, stages=False))


def test_move_is_built_only_where_it_is_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MOVE_WORK, (positions) x ((wounds + 1) ** 2 + 4 (positions)), a group whose saves
    differ keeps DIFFER's two draws: 14 x (11 ** 2 + 56) for 10 attacks, 14 x (6 ** 2 + 56) for 5."""
    monkeypatch.setattr(transition, "_BUILT", {})
    monkeypatch.setattr(transition, "MOVE_WORK", 14 * (6**2 + 56))
    mode = _tables(_unit(_squad(2), *SQUAD_WEAPONS))[0]
    assert mode[:, 0].tolist() == [transition.DIFFER, transition.MOVE]
