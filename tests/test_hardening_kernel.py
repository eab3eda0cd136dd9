"""Issue 7 item 4, the kernel's environment: a damaged or unwritable numba cache, Ctrl-C during a
long run, numba's thread setting, and the trials limit.

A cold compile of the kernel is slow, so the end-to-end cache tests start from a copy of the
already-warm cache of this process and only the damaged ones (marked ``slow``) compile again;
the repair logic itself is also exercised on a one-line cached function.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numba
import numpy as np
import pytest

from mathhammer import kernel, limits
from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.errors import InputError
from mathhammer.kernel import _cache
from mathhammer.model import Context, Matchup
from mathhammer.notation import parse_target, parse_weapon

from . import kernel_cache

ROOT = Path(__file__).resolve().parent.parent
WEAPON = "A D6 BS3+ S5 AP-1 D D3 [SUSTAINED HITS D3, DEVASTATING WOUNDS, HAZARDOUS]"
TARGET = "T4 SV3+ W2 MODELS10 FNP5+"
CLI = ["-m", "mathhammer", "shoot", "A10 BS3+ S5 AP-1 D2", "-t", "T4 SV3+ W2 MODELS10", "--trials", "20000",
       "--seed", "7", "--format", "json"]
DAMAGED = "was damaged; recompiling"
COMPILING = "compiling kernels"


def _inputs(weapon: str = WEAPON, target: str = TARGET, firing: int = 3) -> Any:
    return compile_matchup(Matchup(weapon=parse_weapon(weapon), target=parse_target(target),
                                   context=Context(firing_models=firing))).inputs


def _counts(r: Any) -> list[list[int]]:
    parts = [r.damage, r.models_destroyed, r.hazardous, r.hazard_models, *r.stages.values()]
    return [p.counts.tolist() for p in parts if p is not None]


# --- limits and threads -------------------------------------------------------------------------

def test_trials_limit_is_the_documented_one() -> None:
    assert montecarlo.MAX_TRIALS == limits.MAX_TRIALS
    montecarlo.check_trials(limits.MAX_TRIALS)
    for bad in (0, -1, limits.MAX_TRIALS + 1):
        with pytest.raises(InputError) as e:
            montecarlo.check_trials(bad)
        assert e.value.where == "--trials" and e.value.value == bad


@pytest.mark.parametrize("threads", [0, -1, 10_000])
def test_threads_out_of_range_is_an_input_error(threads: int) -> None:
    with pytest.raises(InputError) as e:
        montecarlo.run(_inputs(), trials=10, seed=1, threads=threads)
    assert e.value.where == "--threads"


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs at least 2 numba threads")
def test_thread_setting_is_restored_after_a_run() -> None:
    """numba's thread count is global state of the caller: a run with --threads leaves it as it was."""
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        montecarlo.run(_inputs(), trials=1000, seed=1, threads=1)
        assert numba.get_num_threads() == 2
    finally:
        numba.set_num_threads(before)


# --- Ctrl-C: the work is split into short kernel calls --------------------------------------------

#: Position of the kernel's ``chunk_trials`` argument (trials of each chunk in this call).
_BATCH = kernel.run_chunks.py_func.__code__.co_varnames.index("chunk_trials")


class _Spy:
    """Stands in for the kernel dispatcher: records each call's trials and can raise SIGINT."""

    def __init__(self, real: Any, interrupt_after: int | None = None) -> None:
        self.real = real
        self.calls: list[int] = []
        self.interrupt_after = interrupt_after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        batch = args[_BATCH]
        assert int(batch.sum()) < limits.MAX_TRIALS, "the whole run was handed to one kernel call"
        self.real(*args, **kwargs)
        self.calls.append(int(batch.sum()))
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            signal.raise_signal(signal.SIGINT)  # as if the user pressed Ctrl-C during this call


def test_ctrl_c_stops_a_long_run_between_short_kernel_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10**9-trial run is many short kernel calls, so KeyboardInterrupt (which Python sees only
    when numba returns) stops it after the current call; the thread setting is restored."""
    spy = _Spy(kernel.simulate_chunks, interrupt_after=4)
    monkeypatch.setattr(kernel, "simulate_chunks", spy)
    before = numba.get_num_threads()
    # Python's own Ctrl-C handler, also where the run inherited SIGINT ignored (a background job)
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            montecarlo.run(_inputs(), trials=limits.MAX_TRIALS, seed=3, threads=1)
    finally:
        if previous is not None:  # None: a handler installed from C, which Python cannot put back
            signal.signal(signal.SIGINT, previous)
    assert len(spy.calls) == 4 and 0 < sum(spy.calls) < limits.MAX_TRIALS
    assert numba.get_num_threads() == before


def test_batch_size_follows_the_measured_speed() -> None:
    """The next batch aims at BATCH_SECONDS, grows at most _MAX_GROWTH times and never stops."""
    assert montecarlo.next_batch(1000, montecarlo.BATCH_SECONDS) == 1000
    assert montecarlo.next_batch(1000, 4 * montecarlo.BATCH_SECONDS) == 250
    assert montecarlo.next_batch(1000, 0.0) == 1000 * montecarlo._MAX_GROWTH
    assert montecarlo.next_batch(1, 1e9) == 1


@pytest.mark.parametrize(("per_chunk", "calls"), [(500, [40, 39_960]), (400, [40, 16_000, 23_960])])
def test_a_run_ends_with_one_call_when_the_rest_takes_at_most_two_batches(
        monkeypatch: pytest.MonkeyPatch, per_chunk: int, calls: list[int]) -> None:
    """40 chunks of 1,000 trials: after the first call (a trial per chunk), batches of 500 per
    chunk leave 999 <= 2 x 500 to run, so one call runs them all instead of 500 + 499; batches
    of 400 run 400, and then the 599 left <= 800 in one call."""
    spy = _Spy(kernel.simulate_chunks)
    monkeypatch.setattr(kernel, "simulate_chunks", spy)
    monkeypatch.setattr(montecarlo, "next_batch", lambda trials, seconds: per_chunk)
    assert montecarlo.chunk_plan(40_000).tolist() == [1_000] * 40
    montecarlo.run(_inputs(), trials=40_000, seed=11)
    assert spy.calls == calls


@pytest.mark.parametrize("per_call", [1, 7, 10**9])
def test_counts_do_not_depend_on_the_batching(monkeypatch: pytest.MonkeyPatch, per_call: int) -> None:
    """Each chunk's random stream resumes where the previous call stopped, so any split of the
    trials into calls gives the same counts (here random attacks, sustained hits, devastating
    wounds, Feel No Pain and Hazardous, which use every part of the stream state)."""
    inputs = _inputs()
    reference = montecarlo.run(inputs, trials=40_000, seed=11)
    spy = _Spy(kernel.simulate_chunks)
    monkeypatch.setattr(kernel, "simulate_chunks", spy)
    monkeypatch.setattr(montecarlo, "next_batch", lambda trials, seconds: per_call)
    batched = montecarlo.run(inputs, trials=40_000, seed=11)
    assert _counts(batched) == _counts(reference)
    assert len(spy.calls) >= (2 if per_call < 10**9 else 1)


def test_new_streams_start_empty_at_the_seed() -> None:
    seeds = np.array([5, 2**64 - 1], dtype=np.uint64)
    streams = kernel.new_streams(seeds)
    assert streams.dtype == np.uint64 and streams.shape == (2, 2)
    assert streams[:, 1].tolist() == seeds.tolist() and streams[:, 0].tolist() == [512, 512]


# --- damaged cache files, on a one-line cached function -------------------------------------------

_TINY = "import numba\n\n\n@numba.njit(cache=True)\ndef add_one(x):\n    return x + 1\n"


def _load_tiny(path: Path, n: int) -> ModuleType:
    """A fresh import of ``path`` (a new dispatcher, which reads the cache files again)."""
    spec = importlib.util.spec_from_file_location(f"_tiny_{n}_{id(path)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _damage(files: list[Path], how: str) -> None:
    assert files
    for f in files:
        data = f.read_bytes()
        f.write_bytes(b"" if how == "empty" else data[: len(data) // 2])


@pytest.fixture()
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A cached one-line function (source, cache folder), compiled once into its cache."""
    source = tmp_path / "tiny.py"
    source.write_text(_TINY)
    cache = tmp_path / "cache"
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache))
    kernel.prepare(_load_tiny(source, 0).add_one, (np.int64(1),))
    return source, cache


@pytest.mark.parametrize("which", ["nbi", "nbc"])
@pytest.mark.parametrize("how", ["empty", "truncated"])
def test_damaged_cache_file_is_replaced_with_one_note(tiny: tuple[Path, Path], which: str, how: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    source, cache = tiny
    _damage(sorted(cache.rglob(f"*.{which}")), how)
    capsys.readouterr()
    again = _load_tiny(source, 1).add_one
    kernel.prepare(again, (np.int64(41),))
    assert again(np.int64(41)) == 42
    err = capsys.readouterr().err
    assert err.count(DAMAGED) == 1 and str(cache) in err, err
    # repaired: the next process loads the new entry without compiling and without a note
    third = _load_tiny(source, 2).add_one
    kernel.prepare(third, (np.int64(1),))
    assert third(np.int64(1)) == 2 and third.stats.cache_hits and capsys.readouterr().err == ""


def test_damaged_cache_that_cannot_be_removed_compiles_without_it(
        tiny: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    source, cache = tiny
    _damage(sorted(cache.rglob("*.nbi")), "empty")

    def refuse(path: str) -> None:
        raise PermissionError(13, "Read-only file system", path)

    monkeypatch.setattr(_cache.os, "remove", refuse)
    capsys.readouterr()
    again = _load_tiny(source, 1).add_one
    kernel.prepare(again, (np.int64(1),))
    assert again(np.int64(1)) == 2
    err = capsys.readouterr().err
    assert err.count("cannot be removed; compiling without it") == 1, err


def test_a_compile_error_is_not_taken_for_a_damaged_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a failure while loading from the cache is repaired; a typing error still raises."""
    source = tmp_path / "bad.py"
    source.write_text("import numba\n\n\n@numba.njit(cache=True)\ndef bad(x):\n    return x + 'a'\n")
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(numba.core.errors.TypingError):
        kernel.prepare(_load_tiny(source, 0).bad, (np.int64(1),))


# --- no writable cache folder --------------------------------------------------------------------

def test_no_writable_folder_falls_back_to_a_private_temporary_folder(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache, "NOTES", [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(_cache, "_can_cache", lambda directory: directory is not None)
    location = _cache.choose_location()
    assert location.enabled and location.directory is not None
    assert Path(location.directory).parent == tmp_path and oct(os.stat(location.directory).st_mode & 0o777) == "0o700"
    assert len(_cache.NOTES) == 1 and location.directory in _cache.NOTES[0]


def test_no_writable_folder_at_all_compiles_without_a_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache, "NOTES", [])
    monkeypatch.setattr(_cache, "_can_cache", lambda directory: False)
    monkeypatch.setattr(_cache, "_private_temp_dir", lambda: None)
    assert _cache.choose_location() == _cache.Location(enabled=False)
    assert len(_cache.NOTES) == 1 and "without a cache" in _cache.NOTES[0]


@pytest.mark.parametrize("planted", ["shared", "symlink", "file"])
def test_temporary_folder_another_user_could_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              planted: str) -> None:
    """Cache files are pickles numba loads: never from a folder someone else could plant them in."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = tmp_path / f"mathhammer-numba-{os.getuid()}"
    if planted == "shared":
        path.mkdir()
        path.chmod(0o777)
    elif planted == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        path.symlink_to(tmp_path / "elsewhere")
    else:
        path.write_text("")
    assert _cache._private_temp_dir() is None


# --- end to end, through the CLI, starting from a copy of the warm kernel cache ------------------

@pytest.fixture(scope="module")
def warm_cache() -> list[Path]:
    """The kernel's cache files in this process's cache folder (loaded or compiled here once)."""
    return kernel_cache.warm_files()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "MATHHAMMER_"))}
    env.update(NO_COLOR="1", **extra)
    return env


def _run(env: dict[str, str], *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=900, check=False)


def _result(proc: subprocess.CompletedProcess[str]) -> tuple[Any, Any]:
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return doc["damage"], doc["models_destroyed"]


def _check_recovers(tmp_path: Path, warm: list[Path], suffixes: tuple[str, ...]) -> None:
    # numba's cache alone: a native kernel kept by the first run would serve the later ones
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba"), MATHHAMMER_NATIVE_KERNELS="0")
    folder = kernel_cache.seed(env, warm)
    healthy = _run(env, *CLI)
    assert COMPILING not in healthy.stderr, "the copied cache was not used"
    expected = _result(healthy)
    for suffix in suffixes:
        damaged = sorted(folder.glob(f"*{suffix}"))
        half = len(damaged) // 2  # a fresh cache holds one file of each kind: truncate it
        if half:
            _damage(damaged[:half], "empty")
        _damage(damaged[half:], "truncated")
    repaired = _run(env, *CLI)
    assert _result(repaired) == expected
    assert repaired.stderr.count(DAMAGED) == 1 and str(folder) in repaired.stderr, repaired.stderr
    again = _run(env, *CLI)
    assert _result(again) == expected and DAMAGED not in again.stderr and COMPILING not in again.stderr


#: The damaged-cache scenarios: each recompiles the kernel in its own subprocesses (~25 CPU-s).
_DAMAGE = {"every file": (".nbi", ".nbc"), "data file": (".nbc",)}


@pytest.fixture(scope="module")
def recoveries(tmp_path_factory: pytest.TempPathFactory, warm_cache: list[Path]) -> Iterator[dict[str, Any]]:
    """Both scenarios started at once, on two threads (their work is in subprocesses, so they use
    two cores: the suite's two slowest checks take the time of one); each test waits for and
    checks its own (an assertion inside one is raised in that test)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(_DAMAGE)) as pool:
        yield {name: pool.submit(_check_recovers, tmp_path_factory.mktemp(name.replace(" ", "-")), warm_cache,
                                 suffixes) for name, suffixes in _DAMAGE.items()}


@pytest.mark.slow
def test_every_cache_file_damaged_recompiles_with_a_note(recoveries: dict[str, Any]) -> None:
    """Truncated/empty index and data files: exit 0, the same result, one note; then healthy."""
    recoveries["every file"].result()


@pytest.mark.slow
def test_damaged_data_file_recompiles_with_a_note(recoveries: dict[str, Any]) -> None:
    """A readable index pointing at an unreadable data file fails later, inside numba's load."""
    recoveries["data file"].result()


def test_read_only_installation_without_home_uses_a_temporary_cache(tmp_path: Path, warm_cache: list[Path]) -> None:
    """No writable __pycache__ beside the package, NUMBA_CACHE_DIR and HOME unusable: the kernel
    is cached in a private temporary folder, with one note, instead of numba's "no locator"."""
    copy = tmp_path / "install"
    shutil.copytree(ROOT / "mathhammer", copy / "mathhammer", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "profiles", copy / "mathhammer" / "builtin_profiles")
    (copy / "mathhammer" / "kernel" / "__pycache__").write_text("")  # as unwritable as a read-only tree
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = _env(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", HOME="/dev/null",
               NUMBA_CACHE_DIR="/dev/null/numba", TMPDIR=str(temp))
    env.pop("XDG_CACHE_HOME", None)
    folder = kernel_cache.seed(env, warm_cache, cwd=copy)
    assert folder.is_relative_to(temp)
    proc = _run(env, *CLI, cwd=copy)
    damage, _models = _result(proc)
    assert "cannot cache compiled kernels" in proc.stderr and proc.stderr.count("note:") == 1, proc.stderr
    assert COMPILING not in proc.stderr, proc.stderr
    assert damage["mean"] > 0
