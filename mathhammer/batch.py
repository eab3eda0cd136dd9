"""Run many attacks side by side: what ``compare`` and ``sweep`` use.

A :class:`Task` is one run: an attack (built already, or a :class:`Recipe` that the worker
builds, so that building is spread over the workers too), a method, trials, a seed. Each task
carries its own seed and a Monte Carlo result does not depend on the thread count, so what
:func:`run_many` yields for a task is the same whatever ``jobs`` is and whatever else runs.

How the work is spread (measured on two cores, see benchmarks/bench_compare.py):

- Monte Carlo: threads for a few runs. The kernel releases the GIL, so two runs on one
  thread each go side by side, but the Python around each run (compiling the matchup,
  building the result) does not: two threads measured 1.5x one. Many runs (more than
  ``_PROCESSES_FROM`` a worker) go to forked processes like exact ones, once the first has
  loaded the kernel here (the workers inherit it; each run uses one thread, never the
  kernel's thread pool).
- exact (Python and numpy, GIL-bound): processes forked from the caller (Linux; elsewhere
  threads). Tasks go in small batches to amortise the round trip; a worker says nothing:
  Ctrl-C ends it quietly, and it dies with its parent.

Nothing here prints. An expected failure of a task (a bad profile name in a recipe, a
scenario the exact engine refuses) is yielded as that task's result, so a caller can report
it and go on.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from .errors import MathhammerError
from .model import Method
from .result import DamageResult

if TYPE_CHECKING:
    from .api import Attack
    from .profiles import Library

__all__ = ["Outcome", "Recipe", "Task", "default_jobs", "run_many", "run_task"]

#: What run_many yields for a task: its result, or the expected error that stopped it.
Outcome: TypeAlias = DamageResult | MathhammerError

#: Monte Carlo tasks per worker above which they run in processes rather than threads.
_PROCESSES_FROM = 4

#: Tasks handed to a worker process at a time: one round trip costs about as much as a small
#: run (~0.2 ms to pickle a result), so a few at a time keep the workers busy without making
#: the results arrive in large lumps.
_PROCESS_BATCH = 8
#: ... but a batch's results take at most about this much (their arrays), once a result's size
#: is known: a sweep of a 1,000-model W1000 target has 7 MB results, and 2 x jobs batches of 8
#: of them in flight took 750 MB.
_BATCH_BYTES = 4_000_000


@dataclass(frozen=True, slots=True)
class Recipe:
    """What :func:`mathhammer.api.build` takes, for the worker to build: ``weapons`` and
    ``target`` as the command line spells them, ``options`` its keyword arguments
    (``melee``, ``models``, situation names...), ``profiles`` the extra profile folders,
    ``rosters`` the rosters whose units the weapons may name, ``target_rosters`` those the
    target may name."""

    weapons: tuple[str, ...]
    target: str
    options: tuple[tuple[str, Any], ...] = ()
    profiles: tuple[str, ...] = ()
    rosters: tuple[str, ...] = ()
    target_rosters: tuple[str, ...] = ()

    @classmethod
    def of(cls, weapons: Sequence[str], target: str, options: Mapping[str, Any] | None = None,
           profiles: Sequence[str | Path] = (), rosters: Sequence[str | Path] = (),
           target_rosters: Sequence[str | Path] = ()) -> Recipe:
        """A recipe from a mapping of build options."""
        return cls(tuple(weapons), target, tuple((options or {}).items()), tuple(str(p) for p in profiles),
                   tuple(str(p) for p in rosters), tuple(str(p) for p in target_rosters))

    def build(self, lib: Library | None = None, cache: dict[Any, Any] | None = None) -> Attack:
        """The attack (``lib``: the profiles to use for weapons and target, default those of
        ``profiles`` and the rosters). ``cache`` keeps what several recipes of one run share:
        their libraries and resolved targets."""
        from .api import build, target

        cache = {} if cache is None else cache
        given = lib
        aim_lib = lib
        if lib is None:
            lib = self._library(self.rosters, cache)
            aim_lib = self._library(self.target_rosters, cache)
        options = dict(self.options)
        aim = {k: options.pop(k) for k in ("target_models", "wounds_left", "allocation") if k in options}
        # a library given by the caller may differ from the one the profiles name: its targets apart
        source = (self.profiles, self.target_rosters) if given is None else id(given)
        key = ("target", source, self.target, tuple(sorted((k, str(v)) for k, v in aim.items())))
        resolved = cache.get(key)
        if resolved is None:
            resolved = cache[key] = target(self.target, lib=aim_lib, **aim)
        return build(self.weapons, resolved, lib=lib, **options)

    def _library(self, rosters: tuple[str, ...], cache: dict[Any, Any]) -> Library:
        from .api import library, with_rosters

        base = cache.get(("library", self.profiles))
        if base is None:
            base = cache[("library", self.profiles)] = library(self.profiles)
        if not rosters:
            return base
        layered = cache.get(("library", self.profiles, rosters))
        if layered is None:
            layered = cache[("library", self.profiles, rosters)] = with_rosters(base, rosters)
        return layered


@dataclass(frozen=True, slots=True)
class Task:
    """One run: ``attack`` (or a recipe for it), ``method``, ``trials``, ``seed`` (None draws
    one, recorded in the result) and ``stages`` (Monte Carlo's stage histograms; without them
    a run is quicker and draws different numbers)."""

    attack: Attack | Recipe
    method: Method = Method.MONTE_CARLO
    trials: int = 100_000
    seed: int | None = None
    stages: bool = True
    #: Keep only what a summary needs: the damage and models-destroyed distributions, and of the
    #: provenance the warnings, the target's description, the engines' agreement and the stratagems (a whole
    #: result costs a worker process more to send back than a quick exact run takes).
    slim: bool = False
    #: Whatever the caller wants to find again with the result (not used here).
    tag: Any = field(default=None, compare=False)


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


_SLIM_PROVENANCE = ("warnings", "target", "agreement", "stratagems")

#: A worker process's cache of libraries and resolved targets (it serves many tasks of one run,
#: and ends with it). In this process each run_many call has its own, dropped when it ends.
_WORKER_CACHE: dict[Any, Any] = {}


def run_task(task: Task, *, threads: int | None = None, cache: dict[Any, Any] | None = None) -> Outcome:
    """One task here and now: its result, or the expected error that stopped it. ``cache``:
    libraries and targets already resolved by other tasks of the same run."""
    from .api import run_attack

    try:
        attack = task.attack.build(cache=cache) if isinstance(task.attack, Recipe) else task.attack
        result = run_attack(attack, method=task.method, trials=task.trials, seed=task.seed, threads=threads,
                            stages=task.stages)
    except MathhammerError as e:
        return e
    if task.slim:
        prov = result.provenance
        result = replace(result, stages={}, groups=(), weapons=(),
                         provenance={k: prov[k] for k in _SLIM_PROVENANCE if k in prov})
    return result


def run_many(tasks: Sequence[Task], *, jobs: int | None = None
             ) -> Generator[tuple[int, Outcome], None, None]:
    """Run ``tasks`` on ``jobs`` workers (default: every core) and yield ``(index, outcome)``
    as each finishes (``index`` is the task's position in ``tasks``): its
    :class:`~mathhammer.result.DamageResult`, or the :class:`~mathhammer.errors.MathhammerError`
    that stopped it. The outcomes do not depend on ``jobs`` nor on the order they arrive in.

    Closing the iterator early (``break``, an exception in the caller) cancels what has not
    started and waits for what has.
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    cache: dict[Any, Any] = {}
    if jobs == 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks):
            yield i, run_task(task, cache=cache)
        return
    exact = [i for i, t in enumerate(tasks) if t.method is Method.EXACT]
    others = [i for i, t in enumerate(tasks) if t.method is not Method.EXACT]
    if len(exact) >= 2 * jobs and _can_fork():
        yield from _in_processes(tasks, exact, jobs)
    else:
        others = sorted(others + exact)
    if len(others) > _PROCESSES_FROM * jobs and _can_fork():
        # the first run here loads (or compiles) the kernel, so the forked workers start with it
        first = run_task(tasks[others[0]], threads=1, cache=cache)
        yield others[0], first
        yield from _in_processes(tasks, others[1:], jobs, largest=_result_bytes(first))
    elif others:
        yield from _in_threads(tasks, others, jobs, cache)


def _in_threads(tasks: Sequence[Task], indices: list[int], jobs: int, cache: dict[Any, Any]
                ) -> Iterator[tuple[int, Outcome]]:
    """Each task on one kernel thread, ``jobs`` tasks at a time. The first runs alone: a
    first run may load or compile the kernel, and two threads doing that at once raced on
    numba's cache files (a crash, seen once)."""
    from concurrent.futures import ThreadPoolExecutor

    first, rest = indices[0], indices[1:]
    yield first, run_task(tasks[first], threads=1, cache=cache)
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="mathhammer-batch") as pool:
        pending = {pool.submit(run_task, tasks[i], threads=1, cache=cache): i for i in rest[:2 * jobs]}
        yield from _collect(pool, pending, iter(rest[2 * jobs:]),
                            lambda i: (pool.submit(run_task, tasks[i], threads=1, cache=cache), i))


def _in_processes(tasks: Sequence[Task], indices: list[int], jobs: int, *, largest: int | None = None
                  ) -> Iterator[tuple[int, Outcome]]:
    """Batches of tasks in ``jobs`` worker processes, 2 x ``jobs`` batches at a time (``jobs`` + 1
    when ``largest`` already says a result is too large to batch: Monte Carlo tasks, whose first
    runs in this process first; exact tasks start with none known and keep 2 x ``jobs``), each sized
    for the largest result seen so far (:func:`_batch_size`; ``largest``: its bytes, None for
    none yet, and then a task a batch), so that memory stays bounded however large a result is."""
    import itertools
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    left = iter(indices)
    most = [largest]

    def next_batch() -> list[int] | None:
        size = 1 if most[0] is None else _batch_size(most[0])
        return list(itertools.islice(left, size)) or None

    def seen(outcomes: list[Outcome]) -> None:
        most[0] = max([most[0] or 0, *(_result_bytes(o) for o in outcomes)])

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=_quiet_worker, initargs=(os.getpid(),))
    try:
        def submit(keys: list[int]) -> tuple[Future[Any], list[int]]:
            return pool.submit(_run_batch, [tasks[i] for i in keys]), keys

        # results too large to batch wait in this process while it writes them: one lot more
        # than the workers then, not two (each waiting result is its arrays: 7-21 MB in a sweep
        # of a W1000 x 1000 target, whose records this process is slower to write than the
        # workers are to compute)
        lot = jobs + 1 if (largest or 0) > _BATCH_BYTES else 2 * jobs
        first = (next_batch() for _ in range(lot))
        pending = dict(submit(keys) for keys in first if keys is not None)
        for keys, outcomes in _collect(pool, pending, iter(next_batch, None), submit, seen):
            yield from zip(keys, outcomes, strict=True)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _batch_size(result_bytes: int) -> int:
    """Tasks per batch for results of ``result_bytes`` each: _PROCESS_BATCH, fewer when that
    many would take over _BATCH_BYTES, at least one."""
    return max(1, min(_PROCESS_BATCH, _BATCH_BYTES // max(1, result_bytes)))


def _result_bytes(outcome: object) -> int:
    """The bytes of a result's distributions, its Monte Carlo check's too (an error: none)."""
    if not isinstance(outcome, DamageResult):
        return 0
    dists = [outcome.damage, outcome.models_destroyed, outcome.hazardous, outcome.hazard_models,
             *outcome.stages.values(), *(g.models_destroyed for g in outcome.groups)]
    own = sum(d.probabilities.nbytes + (0 if d.counts is None else d.counts.nbytes) for d in dists if d is not None)
    return own + _result_bytes(outcome.provenance.get("monte_carlo"))


def _can_fork() -> bool:
    """Whether tasks may go to forked processes: Linux only (fork is unsafe on macOS, absent
    on Windows; there they run in threads). A forked worker runs the exact engine (numpy and
    Python) or the kernel's compiled code on its own thread (no numba threading layer, no
    compile: the parent loaded the kernel first), and the kernel's idle threads hold no lock
    a child could need; spawn or forkserver would re-import the caller's main module (a script
    without a ``__main__`` guard fails) and pay a start-up of ~0.5 s a worker."""
    import multiprocessing
    import threading

    # only from a process with one thread: a thread that holds a lock at the fork (the kernel's
    # workers, a progress bar's refresh) leaves it held for ever in the child, and Python 3.12
    # warns about forking a multi-threaded process; then the tasks run in threads
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1)


def _collect(pool: Executor, pending: dict[Future[Any], Any], rest: Iterator[Any], submit: Any,
             seen: Callable[[Any], None] | None = None) -> Iterator[tuple[Any, Any]]:
    """Yield (key, future's result) as futures finish, submitting one more from ``rest`` for
    each one done (so that no more than the first lot is ever queued: an early stop leaves
    little to cancel); ``seen`` is shown each result before the next is taken from ``rest``."""
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                key = pending.pop(future)
                result = future.result()
                if seen is not None:
                    seen(result)
                following = next(rest, None)
                if following is not None:
                    new, new_key = submit(following)
                    pending[new] = new_key
                yield key, result
    finally:
        for future in pending:
            future.cancel()


def _run_batch(batch: list[Task]) -> list[Outcome]:
    """In a worker process: the outcomes of a batch of tasks, in order."""
    return [run_task(task, threads=1, cache=_WORKER_CACHE) for task in batch]


def _quiet_worker(parent: int) -> None:
    """A worker process of ``parent``: Ctrl-C (sent to the whole foreground process group) ends
    it at once and without a traceback, and it does not outlive its parent (Linux): killed when
    the parent ends, or ending at once if the parent already has (a Ctrl-C while the pool was
    starting: the kill is asked for only now, and a worker left waiting for tasks would hold the
    command's output open for ever)."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown ends the workers
        pass
    if os.getppid() != parent:  # the parent ended before the kill was asked for
        os._exit(130)
