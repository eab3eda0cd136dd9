"""The simulation kernels: the only package that imports numba, and only when numba must
provide a kernel (compile it, or load it from numba's cache).

Kernels know nothing of rules: they compare dice against the tables that
:mod:`mathhammer.compile` prepared (layout in :mod:`mathhammer.codes`). A run asks
:func:`prepare_simulation` for the kernel it needs: machine code kept from an earlier process
(:mod:`.native`, loaded without numba), else numba's (from numba's cache, or compiled).
``run_chunks`` and ``run_queue_chunks`` here are numba's dispatchers (importing numba).
"""

from __future__ import annotations

import atexit
import os
import platform
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from ..limits import max_threads
from . import _progress, handoff, native
from .binomial import KINDS, tables
from .joint import JointTables, joint_tables
from .placement import Placement, release
from .shapes import BUFFER, N_STAGES, N_STREAM, S_COUNTER, S_POS, layout_of, new_claims
from .transition import no_tables, track_tables

__all__ = ["BUFFER", "KERNELS", "N_STAGES", "cache_path", "joint_tables_for", "layout_of", "max_threads",
           "new_streams", "prepare", "prepare_simulation", "run_chunks", "run_queue_chunks", "simulate_chunks",
           "simulation_tables", "tables", "takes_fast_path", "takes_queue_path", "no_tables", "track_tables",
           "Workers", "worker_pool"]

#: The kernels a run can ask :func:`prepare_simulation` for, by name (functions of :mod:`.simulate`).
KERNELS = ("run_chunks", "run_queue_chunks")


def __getattr__(name: str) -> Any:
    """``run_chunks`` and ``run_queue_chunks``: numba's dispatchers, imported on first use."""
    if name in KERNELS:
        from . import simulate

        return getattr(simulate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Rows, parameters and flags of mathhammer.codes (kept free of it, as simulate.py is).
_SUSTAINED = 1
_P_FLAGS, _P_WOUNDS, _P_COMMAND = 0, 3, 4
_SAVE_ROW = 2
_F_TORRENT, _F_LETHAL, _F_DEVASTATING, _F_STAGES, _F_SAME_SAVES = 1, 2, 4, 64, 256
_ATTACKS = 0
_J_HIT, _J_WOUND, _J_FINAL = 0, 1, 2
_C_HIT, _C_WOUND, _C_SAVE = 1, 2, 4


#: The only binomial tables the kernel's fast path reads (saves; Feel No Pain).
_FAST_KINDS = ("save_fail", "fnp_lost")


def simulation_tables(stages: npt.NDArray[np.int8], rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64],
                      params: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64], single: bool = True
                      ) -> tuple[Any, ...]:
    """The table arguments of :func:`run_chunks` (binomial, then joint) for the stacked
    [G, J, ...] tables of :class:`mathhammer.compile.UnitInputs`, building only what the path
    the kernel will take reads (the same test as run_chunks'): joint tables only for a
    ``single`` weapon group at one untouched group of identical models.

    Building them takes 1-5 ms of Python a pair, more than a run of 1e5 trials on two threads,
    so the last few sets are remembered by the bytes of the inputs (a pure function: no run's
    state) and each call gets its own copies.
    """
    key = (single, *((a.tobytes(), a.shape) for a in (stages, rolls, roll_maps, params, offsets)))
    with _TABLES_LOCK:
        built = _TABLES.pop(key, None)
    if built is None:
        if single:
            joint = _stacked([joint_tables_for(stages[0, 0], rolls[0, 0], roll_maps[0, 0], params[0, 0], offsets)])
        else:
            joint = _stacked([_weapon_joint(stages[g, 0], rolls[g, 0], roll_maps[g, 0], params[g, 0], offsets,
                                            several_groups=not int(params[g, 0, _P_FLAGS]) & _F_SAME_SAVES)
                              for g in range(stages.shape[0])])
        kinds = _FAST_KINDS if single and takes_fast_path(params[0, 0], joint[4][0]) else KINDS
        pairs = [[tables(stages[g, j], kinds) for j in range(stages.shape[1])] for g in range(stages.shape[0])]
        binomial = tuple(np.stack([np.stack([pair[i] for pair in row]) for row in pairs]) for i in (0, 1))
        built = (*binomial, *joint)
    with _TABLES_LOCK:
        _TABLES[key] = built  # most recently used last
        while len(_TABLES) > _TABLES_KEPT:
            del _TABLES[next(iter(_TABLES))]
    return tuple(a.copy() for a in built)


def _weapon_joint(stages: npt.NDArray[np.int8], rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64],
                  params: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64], *, several_groups: bool
                  ) -> JointTables:
    """One weapon group's joint tables for the units path: without the stage breakdown, FINAL
    counts (unsaved, Devastating) of whole attacks when every model group takes its saves alike,
    or, against groups whose saves differ (``several_groups``), (wounds that need a save,
    Devastating): the same table with every save failing. With the breakdown, HIT and WOUND."""
    if several_groups:
        stages = stages.copy()
        stages[_SAVE_ROW] = 1  # "fails" = reaches the saving throw, rolled later for its model
    # Devastating wounds kept apart: they are allocated after every weapon group
    return joint_tables_for(stages, rolls, roll_maps, params, offsets, split_devastating=True)


def _stacked(tables: list[JointTables]) -> tuple[Any, ...]:
    """Weapon groups' joint tables end to end: (T, own, alias) concatenated, ``start``
    [G, N_JOINT, TABLE_N + 2] shifted to the concatenation, ``chunk`` [G, N_JOINT]."""
    starts, shift = [], 0
    for t in tables:
        starts.append(t[3] + shift)
        shift += t[0].size
    return (np.concatenate([t[0] for t in tables]), np.concatenate([t[1] for t in tables]),
            np.concatenate([t[2] for t in tables]), np.stack(starts), np.stack([t[4] for t in tables]))


#: Table sets kept by simulation_tables (each at most about a megabyte), by their inputs' bytes.
_TABLES_KEPT = 16
_TABLES: dict[tuple[object, ...], tuple[Any, ...]] = {}
_TABLES_LOCK = threading.Lock()


def takes_fast_path(params: npt.NDArray[np.int64], jchunk: npt.NDArray[np.int64]) -> bool:
    """Whether :func:`run_chunks` takes its fast path: exactly when the joint tables it reads were
    built (the same test as run_chunks', on the same ``jchunk`` array of the joint tables)."""
    if int(params[_P_FLAGS]) & _F_STAGES:
        return bool(jchunk[0] > 0 and jchunk[1] > 0)
    return bool(jchunk[2] > 0)


def joint_tables_for(stages: npt.NDArray[np.int8], rolls: npt.NDArray[np.int64], roll_maps: npt.NDArray[np.int64],
                     params: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64], *,
                     split_devastating: bool | None = None) -> JointTables:
    """The joint tables (:mod:`.joint`) the kernel's fast path needs for these inputs (the
    STAGES flag of ``params`` decides which); empty ones when it takes the general path.
    ``offsets`` (the stage histograms') bound the attacks and hits of one trial; FINAL keeps
    Devastating wounds apart against a finite target unless ``split_devastating`` says otherwise."""
    flags = int(params[_P_FLAGS])
    tied = int(params[_P_COMMAND]) in (_C_HIT, _C_WOUND, _C_SAVE)  # a Command Re-roll of one die
    fixed = int(rolls[_SUSTAINED].sum()) == 0
    return joint_tables(stages, torrent=bool(flags & _F_TORRENT), lethal=bool(flags & _F_LETHAL),
                        devastating=bool(flags & _F_DEVASTATING),
                        split_devastating=bool(flags & _F_DEVASTATING) and (
                            int(params[_P_WOUNDS]) > 0 if split_devastating is None else split_devastating),
                        sustained=int(roll_maps[_SUSTAINED, 0]) if fixed and not tied else None,
                        keep_stages=bool(flags & _F_STAGES) and fixed and not tied,
                        most_attacks=int(offsets[1] - offsets[0]) - 1, most_hits=int(offsets[2] - offsets[1]) - 1)


def new_streams(seeds: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The ``streams`` argument of :func:`simulate_chunks` before any trial: one row per seed."""
    streams = np.zeros((seeds.size, N_STREAM), dtype=np.uint64)
    streams[:, S_POS] = BUFFER  # empty buffer: the first roll fills it
    streams[:, S_COUNTER] = seeds
    return streams


#: Positions in run_chunks' arguments of ``streams`` (a row per chunk) and ``out_damage`` (a row
#: per thread); tests/test_kernel_threads.py checks them against its signature.
_ARG_STREAMS, _ARG_OUT_DAMAGE = 8, 10


def simulate_chunks(*args: Any, threads: int = 1, pool: Workers | None = None, kernel: Any = None) -> None:
    """Run ``kernel`` (what :func:`prepare_simulation` returned; None: numba's :func:`run_chunks`)
    on ``args`` (its arguments up to ``claims``) for every chunk, on
    ``threads`` threads: thread w takes the next unrun chunk until none is left (:mod:`.claim`),
    adding to histogram row w.

    The kernel releases the GIL, so plain Python threads run side by side; each chunk's trials
    and random stream are the same whichever thread runs it, so the summed counts are too.
    ``threads`` is capped by the number of chunks and of histogram rows. ``pool`` is the
    :func:`worker_pool` of the run (the process's workers when not given).
    """
    if kernel is None:
        from .simulate import run_chunks as kernel
    n_chunks = args[_ARG_STREAMS].shape[0]
    workers = max(1, min(threads, n_chunks, args[_ARG_OUT_DAMAGE].shape[0]))
    claims = new_claims()
    if workers == 1:
        kernel(*args, claims, 0)
        return
    if pool is None:
        with worker_pool(workers) as own:
            assert own is not None
            own.run((*args, claims), workers, kernel)
    else:
        pool.run((*args, claims), workers, kernel)


class Workers:
    """Idle threads, each with its own queue, that join a kernel call.

    Share w always goes to thread w, so two shares never wait for each other (a
    ThreadPoolExecutor may queue both on one thread while it thinks another is idle); the
    calling thread runs share 0 itself. A share is the kernel taking chunks until none is
    left, so a thread that wakes late simply runs fewer of them.

    A kernel from the native cache with the functions of :mod:`.handoff` (x86-64) is handed
    to threads that are already awake: :meth:`wake` has each thread wait in machine code,
    without the GIL, for shares posted to its box, spinning for half a millisecond after its last
    one, then dozing there (asleep in the kernel) until a later run rouses it; the calling thread
    posts them, runs its own share and takes back a share its thread has not
    started, or waits for it to end. Otherwise (numba's kernels) a share goes through the
    thread's queue, and when the calling thread's share ends with every chunk finished (the
    kernel says so), or the count of finished chunks reaches them all while it watches
    (:func:`_finished_soon`), it returns without waiting for the others to report: handing the
    GIL over and waking up again cost 0.1-0.5 ms, as much as the second core saves on a run of
    1e5 trials. Either way the threads that are woken wake off the calling thread's CPU
    (:mod:`.placement`).
    """

    def __init__(self, n: int) -> None:
        self.size = n
        self._queues: list[queue.SimpleQueue[Any]] = [queue.SimpleQueue() for _ in range(n)]
        # the threads' boxes (mathhammer.kernel.handoff), a row each; the threads' own frames
        # hold this pool, so a box is never freed while its thread may watch it
        self._boxes = np.zeros((n, handoff.BOX), dtype=np.int64)
        self._boxes[:, handoff.STATE] = handoff.ASLEEP
        self._box_at = [int(self._boxes[w].ctypes.data) for w in range(n)]
        #: What each thread's posted share reads (its call's arguments and flat values), kept
        #: until that share is collected: a share must never outlive its arrays, even when the
        #: calling thread is interrupted before it collects it.
        self._held: list[tuple[Any, ...] | None] = [None] * n
        self._post_lock = threading.Lock()
        self._watch_ticks = 1
        self._functions: handoff.Handoff | None = None  # the last used (for stop_waiting)
        self._pid = os.getpid()
        atexit.register(self.stop_waiting)
        ids = []
        for q in self._queues:
            thread = threading.Thread(target=self._serve, args=(q,), daemon=True, name="mathhammer-kernel")
            thread.start()
            if thread.native_id is not None:
                ids.append(thread.native_id)
        self._placement = Placement(ids)

    def _serve(self, q: queue.SimpleQueue[Any]) -> None:
        while True:
            kernel, args, done, cpus = q.get()
            release(cpus)  # placed only to wake off the calling thread's CPU (mathhammer.kernel.placement)
            try:
                kernel(*args)
            except BaseException as e:  # noqa: BLE001 - handed to the calling thread
                if done is not None:
                    done.put(e)
            else:
                if done is not None:  # (none for a wait: handoff's serve)
                    done.put(None)
            del kernel, args, done, cpus  # an idle thread keeps no finished run's arrays alive

    def wake(self, count: int, kernel: Any) -> None:
        """Have threads 1 .. ``count`` wait for shares of ``kernel`` (when it can hand them over:
        a native kernel with :mod:`.handoff`'s functions), rousing those that doze in their wait
        (no GIL needed) and waking those asleep (out of it: a thread's first run, through its
        queue); a run calls this before its first kernel call, so that they wake while it gets
        ready."""
        functions = getattr(kernel, "handoff", None)
        count = min(count, self.size)
        if functions is None or count <= 0:
            return
        with self._post_lock:
            self._functions = functions
            rate = functions.ticks_per_second()
            self._watch_ticks = max(1, int(rate * _COLLECT_SECONDS))
            states = self._boxes[:count, handoff.STATE].tolist()
            dozing = [w for w, state in enumerate(states) if state == handoff.DOZING]
            asleep = [w for w, state in enumerate(states) if state == handoff.ASLEEP]
            if not dozing and not asleep:
                return
            linger = max(1, int(rate * _LINGER_SECONDS))  # (the rate is measured after a first run's start)
            cpus = self._placement.away(dozing + asleep)
            try:
                for w in dozing:
                    self._boxes[w, handoff.LINGER] = linger  # (read after the rouse, which publishes it)
                    functions.rouse(self._box_at[w])
            finally:
                # a roused thread wakes where the kernel put it as it roused it: it takes its whole
                # set back now (it runs no Python to do so itself)
                self._placement.restore(dozing, cpus)
            for w in asleep:  # each thread is out of serve: only this writes its box now
                self._boxes[w, handoff.LINGER] = linger
                self._boxes[w, handoff.STATE] = handoff.WAITING
                self._queues[w].put((functions.wait_for_shares, (self._box_at[w],), None, cpus))

    def _out_of_waits(self, count: int) -> list[int]:
        """Which of threads 1 .. ``count`` (their positions) can take a share through their queues
        (a numba kernel's: a first, compiling run, in a process that ran native kernels): each is
        first asked to leave its wait for handed shares (a thread in it, dozing there too,
        never reads its queue); one busy with another caller's share stays in its wait, and
        gets none. Called with ``_post_lock`` held, so that no :meth:`wake` puts a wait in a
        queue between this look and the shares put after it."""
        functions = self._functions
        ready = []
        for w in range(min(count, self.size)):
            if functions is not None:
                functions.stop(self._box_at[w])
            if self._boxes[w, handoff.STATE] in _OUT_OF_WAIT:  # (STOP: it is on its way out)
                ready.append(w)
        return ready

    def stop_waiting(self) -> None:
        """Have the threads that wait for shares, spinning or dozing, leave their waits now (at
        exit: run once the interpreter starts to shut down, so that no thread runs the loaded
        machine code while it does)."""
        functions = self._functions
        if functions is None or os.getpid() != self._pid:
            return
        for at in self._box_at:
            functions.stop(at)
        deadline = time.monotonic() + _STOP_SECONDS
        while (self._boxes[:, handoff.STATE] == handoff.STOP).any() and time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS)

    def run(self, args: tuple[Any, ...], workers: int, kernel: Any) -> None:
        """Shares 1 .. workers - 1 of ``kernel`` on the idle threads, share 0 here; returns when
        every chunk is done (a share that has not started yet will find none left and write
        nothing, or is taken back). ``args`` end with the call's ``claims`` counters; share w
        adds to row w. A thread busy with another caller's share gets none: its chunks are run
        by the others. An error in a share is raised here (its chunk is never finished, so this
        waits for it)."""
        if getattr(kernel, "handoff", None) is not None:
            self._run_handed(args, workers, kernel)
            return
        done: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()
        with self._post_lock:
            ready = self._out_of_waits(workers - 1)
            cpus = self._placement.away(ready)  # else Linux may wake them on this thread's CPU
            for w in ready:
                self._queues[w].put((kernel, (*args, w + 1), done, cpus))
        n_chunks = args[_ARG_STREAMS].shape[0]
        if kernel(*args, 0) >= n_chunks or _finished_soon(args[-1], n_chunks):
            return
        for _ in ready:
            error = done.get()
            if error is not None:
                try:
                    raise error
                finally:  # the traceback holds this frame: no cycle keeping the run's arrays
                    del error

    def _run_handed(self, args: tuple[Any, ...], workers: int, kernel: native.NativeKernel) -> None:
        """:meth:`run` for a kernel whose shares are posted to waiting threads (:mod:`.handoff`),
        or dozing ones (the post wakes them). A thread that is busy with another caller's share,
        or out of its wait (asleep, or stopped for a share through its queue), gets none: its
        chunks are run by the others."""
        functions = kernel.handoff
        assert functions is not None
        self.wake(workers - 1, kernel)
        own = kernel.flat((*args, 0))
        posted: list[tuple[int, tuple[Any, ...]]] = []
        try:
            self._post(args, workers, kernel, functions, own, posted)
            kernel.call(own)
        finally:
            self._collect(posted, functions)

    def _post(self, args: tuple[Any, ...], workers: int, kernel: native.NativeKernel, functions: handoff.Handoff,
              own: npt.NDArray[np.int64], posted: list[tuple[int, tuple[Any, ...]]]) -> None:
        """Post shares 1 .. workers - 1 of ``kernel`` (``functions``: its handoff; ``own``: share
        0's flat arguments) to the threads that wait, each listed in ``posted`` (and its arrays
        held) before it is posted, so that it is collected even if this thread is interrupted
        right after."""
        pointer = native.data_pointer()
        for w in range(workers - 1):
            flat = own.copy()
            flat[-1] = w + 1
            held = (args, flat)
            with self._post_lock:
                if self._boxes[w, handoff.STATE] not in _POSTABLE:  # busy with another call's share, or asleep
                    continue
                self._held[w] = held  # (the box says the share held before is over)
                posted.append((w, held))
                if not functions.post(self._box_at[w], kernel.address, pointer(flat)):  # busy just now
                    posted.pop()
                    self._held[w] = None

    def _collect(self, posted: list[tuple[int, tuple[Any, ...]]], functions: handoff.Handoff) -> None:
        """Return once no thread runs, or can still start, a share in ``posted``: each is taken
        back if its thread has not started it, else waited for (in machine code for a moment,
        then sleeping a little longer each time: its thread was held up by a busy machine).
        An interruption meanwhile is raised once every share is collected."""
        interrupted: BaseException | None = None
        for w, held in posted:
            delay = -1.0  # (first a wait in machine code)
            while True:
                try:
                    if self._collected(w, held, functions):
                        break
                    if delay < 0:
                        functions.wait(self._box_at[w], self._watch_ticks)  # without the GIL
                        delay = 0.0
                    else:
                        delay = min(2 * delay or _POLL_SECONDS, _POLL_MAX_SECONDS)
                        time.sleep(delay)
                except BaseException as e:  # noqa: BLE001 - raised below, once nothing runs on the arrays
                    interrupted = interrupted or e
        if interrupted is not None:
            try:
                raise interrupted
            finally:
                del interrupted

    def _collected(self, w: int, held: tuple[Any, ...], functions: handoff.Handoff) -> bool:
        """Whether thread w's share ``held`` is over (taken back now, or run): then its arrays
        are let go. While the pool holds ``held`` for thread w, no other caller can post to its
        box, so a share in the box is this one; once it holds another, this one was over before."""
        at = self._box_at[w]
        with self._post_lock:
            if self._held[w] is not held:
                return True
            if functions.take_back(at) or functions.wait(at, 0):
                self._held[w] = None
                return True
        return False


#: The states of a box a share can be posted to (a dozing thread is woken by the post).
_POSTABLE = (handoff.WAITING, handoff.DOZING)
#: The states of a box whose thread reads its queue next (stopped: on its way out of its wait).
_OUT_OF_WAIT = (handoff.STOP, handoff.ASLEEP)
#: How long a thread that ran a share waits for the next before it dozes (mathhammer.kernel.handoff):
#: the next batch of a run comes within microseconds, the next run of a script within a quarter of
#: a millisecond (and a run wakes its threads before its first kernel call anyway).
_LINGER_SECONDS = 0.0005
#: How long the calling thread waits in machine code for a thread to end its share.
_COLLECT_SECONDS = 0.0002
#: When a thread holding a share was held up (by a busy machine) for longer than that, how long
#: the calling thread sleeps before it looks again, at first and at most (doubling each time).
_POLL_SECONDS = 0.00005
_POLL_MAX_SECONDS = 0.001
#: How long stop_waiting waits for the threads to stop waiting.
_STOP_SECONDS = 0.05


#: How long the calling thread watches the count of finished chunks, once its share ends,
#: before it sleeps until the other threads report: they are then in their last chunk, often
#: a few microseconds from its end, and a thread woken from sleep took 50-100 us to run again
#: (two threads on runs of 1e4-1e5 trials: 0.01-0.08x more, in each of 16 cases measured).
#: Only on x86-64, whose loads are never reordered with each other: seeing the count, this
#: thread then sees the histograms written before it. Elsewhere a plain load gives no such
#: promise, and this thread waits for the others' reports (which do).
_WATCH_SECONDS = 0.0002 if platform.machine().lower() in ("x86_64", "amd64") else 0.0


def _finished_soon(claims: Any, n_chunks: int) -> bool:
    """Whether every chunk is finished within _WATCH_SECONDS (``claims``: the call's counters;
    the other threads add to the count without the GIL, so watching it holds them up in nothing)."""
    if not isinstance(claims, np.ndarray) or _WATCH_SECONDS <= 0:
        return False
    deadline = time.perf_counter() + _WATCH_SECONDS
    while time.perf_counter() < deadline:
        if claims[1] >= n_chunks:
            return True
    return bool(claims[1] >= n_chunks)


_WORKERS: list[Workers] = []
_WORKERS_LOCK = threading.Lock()


def _forget_workers() -> None:
    """In a forked child: the parent's idle threads do not exist here (a share handed to them
    would wait in a queue for ever, holding its run's arrays, and their ids are the parent's
    threads'), so the child starts its own on first use."""
    global _WORKERS_LOCK
    _WORKERS.clear()
    _WORKERS_LOCK = threading.Lock()  # (a lock held by another thread at the fork stays held)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


@contextmanager
def worker_pool(threads: int) -> Iterator[Workers | None]:
    """The idle threads for the kernel calls of a run on ``threads`` threads (``None`` for one).

    One set of idle daemon threads serves every run of the process, as numba's own threading
    layer does (they hold nothing of any run): starting threads for each run cost 0.3-0.6 ms,
    much of what a second core saves on a run of 1e5 trials.
    """
    if threads <= 1:
        yield None
        return
    with _WORKERS_LOCK:
        if not _WORKERS or _WORKERS[0].size < threads - 1:
            _WORKERS[:] = [Workers(max(threads, max_threads()) - 1)]
        pool = _WORKERS[0]
    yield pool


def prepare(kernel: Any, args: tuple[object, ...], *, live: bool = False) -> Callable[..., Any]:
    """The machine code of ``kernel`` for these arguments, ready to call: for a kernel's name
    (:data:`KERNELS`), from the native cache (:mod:`.native`) when it holds it, else numba's
    dispatcher, loaded from numba's cache or compiled (and then kept in the native cache for
    later processes); for a numba dispatcher, that dispatcher, loaded or compiled.

    Prints one line on stderr before a compile (with ``live`` and a terminal, it counts the
    seconds until the compile ends), and one note when the cache location was unusable or a
    cache file was damaged (which is removed and compiled again).
    """
    layout = layout_of(args)
    if not isinstance(kernel, str):
        _load_or_compile(kernel, args, layout, live)
        return kernel
    found = _NAMED.get((kernel, layout))
    if found is None:
        found = _named(kernel, args, layout, live)
    if isinstance(found, native.NativeKernel):  # its first call then skips layout_of (20 us)
        found.bind(args, layout)
    return found


def _named(kernel: str, args: tuple[object, ...], layout: tuple[object, ...], live: bool) -> Callable[..., Any]:
    """The machine code of kernel ``kernel`` for ``args`` (of ``layout``) when this process has
    none yet: from the native cache, else numba's (then kept in the native cache)."""
    if kernel not in KERNELS:
        raise ValueError(f"no kernel named {kernel!r} (known: {', '.join(KERNELS)})")
    with _NAMED_LOCK:
        found = _NAMED.get((kernel, layout)) or native.load(kernel, layout)
        if found is None:
            from . import _cache, simulate

            found = getattr(simulate, kernel)
            _load_or_compile(found, args, layout, live)
            kept = _cache.object_code(found, _signature(args))
            if kept is not None:
                native.save(kernel, layout, *kept)
        _NAMED[(kernel, layout)] = found
    return found


#: What :func:`prepare` found for each kernel name and argument layout in this process.
_NAMED: dict[tuple[str, tuple[object, ...]], Callable[..., Any]] = {}
_NAMED_LOCK = threading.Lock()


def _load_or_compile(dispatcher: Any, args: tuple[object, ...], layout: tuple[object, ...], live: bool) -> None:
    """Make numba's ``dispatcher`` hold machine code for ``args`` (whose :func:`layout_of` is
    ``layout``)."""
    ready = _READY.setdefault(dispatcher, set())
    if layout in ready:  # numba.typeof of every argument costs about 0.4 ms a run
        return
    sig = _signature(args)
    if sig not in dispatcher.overloads:
        from . import _cache

        enabled = _cache.cache_path(dispatcher) is not None
        announce = ("compiling kernels (first run only)…" if enabled
                    else "compiling kernels (no cache: every run)…")
        _cache.load_or_compile(dispatcher, sig, announce, status=_progress.elapsed if live else _progress.plain)
    ready.add(layout)


def _signature(args: tuple[object, ...]) -> tuple[Any, ...]:
    """numba's types of ``args`` (imports numba)."""
    import numba

    return tuple(numba.typeof(a) for a in args)


#: The argument layouts (see layout_of) each numba dispatcher has machine code for in this process.
_READY: weakref.WeakKeyDictionary[Any, set[tuple[object, ...]]] = weakref.WeakKeyDictionary()


def prepare_simulation(args: tuple[object, ...], *, live: bool = False, kernel: Any = "run_chunks"
                       ) -> Callable[..., Any]:
    """:func:`prepare` ``kernel`` for :func:`simulate_chunks` on ``args``; returns what to pass
    it as ``kernel``."""
    return prepare(kernel, (*args, new_claims(), 0), live=live)


def takes_queue_path(params: npt.NDArray[np.int64], rolls: npt.NDArray[np.int64], attacker: npt.NDArray[np.int64],
                     jchunk: npt.NDArray[np.int64], tmode: npt.NDArray[np.int64], tbase: npt.NDArray[np.int64],
                     scratch: npt.NDArray[np.int64]) -> bool:
    """Whether :func:`run_queue_chunks` can run these inputs (arguments of :func:`run_chunks`): no
    Hazardous tests, and every weapon group with fixed attacks, no Devastating Wounds, its dice
    from joint tables (``jchunk``: FINAL, or HIT and WOUND with the stage breakdown, then no
    Command Re-roll either) and a move along one queue of models by table (``tmode``,
    mathhammer.kernel.transition), with room in the ``scratch`` rows for the trials by position."""
    n_weapons, n_groups = params.shape[0], params.shape[1]
    last = int(tbase[n_groups]) if tbase.size > n_groups else 0
    seen = n_groups + n_weapons + n_weapons * n_groups
    flags = params[:, 0, _P_FLAGS]
    if (flags & _F_STAGES).any():
        joint = bool((jchunk[:, _J_HIT] > 0).all() and (jchunk[:, _J_WOUND] > 0).all()
                     and (params[:, 0, _P_COMMAND] == 0).all())
    else:
        joint = bool((jchunk[:, _J_FINAL] > 0).all())
    return bool(joint and not (flags & _F_DEVASTATING).any() and int(attacker[0, 0]) == 0 and last > 0
                and (rolls[:, 0, _ATTACKS].sum(axis=1) == 0).all() and (tmode[:, 0] != 0).all()
                and scratch.shape[1] - seen >= n_weapons * (last + 1))


def cache_path(kernel: Any = None) -> str | None:
    """The folder numba caches ``kernel`` in (None: compiled on every run; default
    :func:`run_chunks`)."""
    from . import _cache, simulate

    return _cache.cache_path(simulate.run_chunks if kernel is None else kernel)
