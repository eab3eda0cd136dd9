"""mathhammer.batch: every task's outcome once, the same for any number of workers, errors as
outcomes, in threads (Monte Carlo) and worker processes (exact)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mathhammer import api
from mathhammer.batch import Recipe, Task, run_many, run_task
from mathhammer.errors import MathhammerError
from mathhammer.model import Method

WEAPONS = ["A2 BS3+ S5 AP-1 D1", "A1 BS4+ S9 AP-4 D D6", "A4 BS4+ S6 AP-1 D2", "A3 BS3+ S8 AP-2 D3"]


def _tasks(method: Method, n: int = 10) -> list[Task]:
    return [Task(Recipe.of([WEAPONS[i % 4]], "boyz" if i % 2 else "knight", {"models": 1 + i % 3}),
                 method=method, trials=4_000, seed=100 + i) for i in range(n)]


@pytest.mark.parametrize("method", [Method.MONTE_CARLO, Method.EXACT])
def test_outcomes_do_not_depend_on_jobs(method):
    tasks = _tasks(method)
    runs = {jobs: dict(run_many(tasks, jobs=jobs)) for jobs in (1, 2, 3)}
    for jobs, got in runs.items():
        assert sorted(got) == list(range(len(tasks))), jobs
        for i, result in got.items():
            np.testing.assert_array_equal(result.damage.probabilities, runs[1][i].damage.probabilities)


def test_each_outcome_equals_the_api_run():
    tasks = _tasks(Method.MONTE_CARLO, 4)
    for i, result in run_many(tasks, jobs=2):
        recipe = tasks[i].attack
        assert isinstance(recipe, Recipe)
        single = api.run(list(recipe.weapons), recipe.target, trials=4_000, seed=100 + i, **dict(recipe.options))
        np.testing.assert_array_equal(result.damage.probabilities, single.damage.probabilities)


@pytest.mark.parametrize("method", [Method.MONTE_CARLO, Method.EXACT])
def test_an_expected_error_is_that_tasks_outcome(method):
    tasks = _tasks(method, 6)
    tasks[3] = Task(Recipe.of(["no such weapon anywhere"], "knight"), method=method)
    got = dict(run_many(tasks, jobs=2))
    assert isinstance(got[3], MathhammerError) and "no such weapon" in str(got[3].value)
    assert all(not isinstance(got[i], MathhammerError) for i in got if i != 3)


def test_a_built_attack_runs_too():
    attack = api.build("A2 BS3+ S5 AP-1 D1", "boyz")
    result = run_task(Task(attack, trials=1_000, seed=4))
    assert not isinstance(result, MathhammerError)
    assert result.seed == 4 and result.trials == 1_000


def test_stopping_early_cancels_the_rest():
    tasks = _tasks(Method.EXACT, 40)
    runs = run_many(tasks, jobs=2)
    first = next(runs)
    runs.close()
    assert first[0] in range(40)


def test_jobs_below_one_is_refused():
    with pytest.raises(ValueError):
        list(run_many(_tasks(Method.EXACT, 2), jobs=0))


def test_a_profile_edited_between_two_runs_is_seen(tmp_path):
    """Each run_many call resolves libraries and targets afresh (its cache ends with it): a
    notebook that edits a profile between two runs gets the new numbers."""
    folder = tmp_path / "p"
    folder.mkdir()
    unit = ("schema: 1\nunits:\n  - name: Test Wall\n    models:\n      - {{name: Wall, count: 1, M: 0, T: 4, "
            "Sv: {sv}, W: 10, Ld: 6, OC: 0}}\n")
    (folder / "wall.yaml").write_text(unit.format(sv=2), encoding="utf-8")
    task = Task(Recipe.of(["A6 BS2+ S8 AP0 D1"], "test wall", profiles=[folder]), method=Method.EXACT)
    (_, first), = list(run_many([task], jobs=1))
    assert not isinstance(first, MathhammerError), first.message()
    (folder / "wall.yaml").write_text(unit.format(sv=6), encoding="utf-8")
    (_, second), = list(run_many([task], jobs=1))
    # 6 attacks, hit 2+ (5/6), S8 vs T4 wounds on 2+ (5/6); the save fails 1/6 at Sv2+, 5/6 at Sv6+
    assert first.damage.mean() == pytest.approx(6 * 5 / 6 * 5 / 6 * 1 / 6)
    assert second.damage.mean() == pytest.approx(6 * 5 / 6 * 5 / 6 * 5 / 6)


def test_recipes_share_one_resolved_target_per_run():
    cache: dict = {}
    tasks = [Task(Recipe.of([f"A{a} BS3+ S5 AP-1 D1"], "intercessors"), method=Method.EXACT) for a in (1, 2, 3)]
    outcomes = [run_task(t, cache=cache) for t in tasks]
    assert [k[0] for k in cache] == ["library", "target"]
    for a, outcome in zip((1, 2, 3), outcomes, strict=True):
        assert outcome.damage.mean() == pytest.approx(api.run(f"A{a} BS3+ S5 AP-1 D1", "intercessors",
                                                              method="exact").damage.mean())


def test_no_fork_while_another_thread_runs(monkeypatch):
    """A thread holding a lock at a fork would leave it held in the child: with another thread
    alive, the tasks run in threads, with the same outcomes."""
    import threading

    from mathhammer import batch

    def refuse(*args, **kwargs):
        raise AssertionError("forked while another thread was running")

    tasks = _tasks(Method.EXACT, 8)
    alone = [o for _, o in sorted(run_many(tasks, jobs=1), key=lambda x: x[0])]
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        monkeypatch.setattr(batch, "_in_processes", refuse)
        together = [o for _, o in sorted(run_many(tasks, jobs=2), key=lambda x: x[0])]
    finally:
        stop.set()
        other.join()
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a.damage.probabilities, b.damage.probabilities)
        np.testing.assert_array_equal(a.models_destroyed.probabilities, b.models_destroyed.probabilities)


def test_batch_size_follows_the_results_size(monkeypatch):
    """Worker processes get up to _PROCESS_BATCH tasks at a time, fewer when that many results
    would take over _BATCH_BYTES (their distributions' arrays, the Monte Carlo check's of
    ``--method both`` too), never none; an error weighs nothing."""
    from dataclasses import replace

    from mathhammer import batch
    from mathhammer.result import Distribution

    real = run_task(_tasks(Method.MONTE_CARLO, 1)[0])
    assert isinstance(real, api.DamageResult)
    # 100,000 damage values and 10 model counts, each an int64 count and a float64 probability
    result = replace(real, damage=Distribution.from_counts(np.ones(100_000, dtype=np.int64)),
                     models_destroyed=Distribution.from_counts(np.ones(10, dtype=np.int64)), stages={}, groups=(),
                     hazardous=None, hazard_models=None, provenance={})
    assert batch._result_bytes(result) == 16 * 100_010
    both = replace(result, provenance={"monte_carlo": result})
    assert batch._result_bytes(both) == 2 * 16 * 100_010
    assert batch._result_bytes(MathhammerError("x")) == 0
    assert batch._batch_size(0) == batch._PROCESS_BATCH == 8
    monkeypatch.setattr(batch, "_BATCH_BYTES", 4_000_000)
    assert batch._batch_size(16 * 100_010) == 2  # 4 MB // 1.6 MB
    assert batch._batch_size(100_000) == 8  # 40 would fit: at most 8
    assert batch._batch_size(7_000_000) == 1  # not even one fits: still one


_ONE_TASK_BATCHES = """
import sys
import numpy as np
from mathhammer import batch
from mathhammer.batch import Recipe, Task, run_many, run_task
from mathhammer.model import Method

method = Method(sys.argv[1])
weapons = {weapons!r}
tasks = [Task(Recipe.of([weapons[i % 4]], "boyz" if i % 2 else "knight", {{"models": 1 + i % 3}}),
              method=method, trials=4_000, seed=100 + i) for i in range(12)]
alone = {{i: run_task(t, threads=1) for i, t in enumerate(tasks)}}  # no kernel threads: workers may fork
assert batch._can_fork()
batch._BATCH_BYTES = 1
sizes = []
real = batch._batch_size
batch._batch_size = lambda result_bytes: sizes.append(real(result_bytes)) or sizes[-1]
together = dict(run_many(tasks, jobs=2))
assert sizes and set(sizes) == {{1}}, sizes  # the worker processes ran, a task at a time
assert sorted(together) == list(range(12))
for i, result in together.items():
    np.testing.assert_array_equal(result.damage.probabilities, alone[i].damage.probabilities)
print("ok")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
@pytest.mark.parametrize("method", [Method.MONTE_CARLO, Method.EXACT])
def test_one_task_batches_give_the_same_outcomes(method):
    """With results too large for more than one a batch, every task still comes back once from
    the worker processes, the same as run alone (in a fresh process: a process whose kernel
    threads have started runs its tasks in threads instead)."""
    code = _ONE_TASK_BATCHES.format(weapons=WEAPONS)
    r = subprocess.run([sys.executable, "-c", code, method.value], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_a_pickled_result_is_the_same_result_at_half_the_size():
    """A worker process's result travels pickled: a Monte Carlo distribution without its
    probabilities (divided again on loading, to the same bits), an exact one as it is."""
    import pickle

    from mathhammer.result import Distribution

    counts = np.array([3, 0, 5, 1, 0, 2], dtype=np.int64)
    for dist in (Distribution.from_counts(counts), Distribution.from_capped_counts(counts, 5, 11.0, 61.0),
                 Distribution(probabilities=np.array([0.25, 0.75]), trials=None),
                 Distribution(probabilities=np.array([0.5, 0.5]), trials=4, counts=np.array([1, 3]))):  # odd: kept
        back = pickle.loads(pickle.dumps(dist))
        assert back.probabilities.tobytes() == dist.probabilities.tobytes()
        assert (back.trials, back.capped_at, back.moments) == (dist.trials, dist.capped_at, dist.moments)
        assert (back.counts is None) == (dist.counts is None)
        if dist.counts is not None:
            np.testing.assert_array_equal(back.counts, dist.counts)
    big = Distribution.from_counts(np.arange(1, 100_001, dtype=np.int64))
    assert len(pickle.dumps(big)) < 0.6 * (big.counts.nbytes + big.probabilities.nbytes)
    result = run_task(_tasks(Method.MONTE_CARLO, 1)[0])
    assert isinstance(result, api.DamageResult)
    back = pickle.loads(pickle.dumps(result))
    assert back.damage.probabilities.tobytes() == result.damage.probabilities.tobytes()
    assert {k: v.probabilities.tobytes() for k, v in back.stages.items()} == \
        {k: v.probabilities.tobytes() for k, v in result.stages.items()}



@pytest.mark.skipif(sys.platform != "linux", reason="worker processes are forked on Linux only")
def test_a_worker_whose_parent_has_already_ended_ends_at_once() -> None:
    """A Ctrl-C while the pool starts can end the parent before a worker asks to be killed with
    it; such a worker must not wait for tasks for ever (it would hold the output pipe open). A
    worker whose parent is alive carries on. (Forked from a fresh process, not from pytest's.)"""
    script = """if True:
        import os
        from mathhammer import batch
        for parent, expected in ((os.getpid() + 1_000_000, 130), (os.getpid(), 0)):
            pid = os.fork()
            if pid == 0:
                batch._quiet_worker(parent)
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            print(os.WEXITSTATUS(status) if os.WIFEXITED(status) else "signal", expected)
    """
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert r.stdout.split() == ["130", "130", "0", "0"], r.stderr
