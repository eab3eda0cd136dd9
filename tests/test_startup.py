"""Issue 8, items 4 and 8: the command line's trimmed numba start-up, and a library user's
process left alone.

Every check runs in a fresh subprocess: what is imported, stubbed or hidden is a property of
the whole process. The console script's ``main()`` is run for real (``os._exit`` included), so a
numba or typer release that moves what these tricks rely on fails here rather than for users.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathhammer.cli import app

from .documents import without_timings

PY = [sys.executable, "-m", "mathhammer"]
_SCRIPT = Path(sys.executable).with_name("mathhammer")
#: What pip installed next to this Python (what a user runs), else whatever is on PATH.
SCRIPT = [str(_SCRIPT)] if _SCRIPT.exists() else ([w] if (w := shutil.which("mathhammer")) else None)
MC = ["shoot", "railgun", "-t", "knight", "--trials", "1000", "-f", "json", "--seed", "7"]
#: stderr lines a successful run may print: a compile (cold numba cache) and cache notes.
_ALLOWED_STDERR = ("compiling kernels", "note: numba")


def _run(args: list[str], cwd: Path, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """``args`` with this process's environment, NO_COLOR and ``env`` (None: the variable unset)."""
    merged = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(args, cwd=cwd, env={k: v for k, v in merged.items() if v is not None},
                          capture_output=True, text=True, timeout=600)


def _python(code: str, cwd: Path, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-c", textwrap.dedent(code)], cwd, env)


def _unexpected(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not line.lstrip().startswith(_ALLOWED_STDERR)]


# --- the console script: fast exit, one JSON document, nothing else ----------------------------

ENTRY_POINTS = [pytest.param(PY, id="python -m mathhammer"),
                pytest.param(SCRIPT, id="console script",
                             marks=pytest.mark.skipif(SCRIPT is None, reason="console script not installed"))]


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
def test_entry_point_prints_the_same_json_as_the_library(cmd: list[str], tmp_path: Path) -> None:
    """The trimmed process (light cache loads, hidden modules) computes exactly what the
    untrimmed in-process application computes for the same seed."""
    r = _run([*cmd, *MC], tmp_path)
    assert r.returncode == 0, r.stderr
    assert _unexpected(r.stderr) == []
    doc = json.loads(r.stdout)
    assert doc["trials"] == 1000 and doc["seed"] == 7
    in_process = CliRunner().invoke(app, MC, env={"NO_COLOR": "1"})
    assert in_process.exit_code == 0, in_process.output
    assert without_timings(doc) == without_timings(json.loads(in_process.stdout))


_PROBE = """
    import json, os, sys
    real_exit = os._exit

    def probe():
        # What the process looks like at its end (numba internals only read, never needed).
        from mathhammer.cli import _startup
        entry = sys.modules.get("numba.core.entrypoints")
        config = sys.modules.get("numba.core.config")
        return {{"hook": _startup.installed(),
                "stub": entry is not None and entry.init_all is _startup._no_extensions,
                "loaded": sorted(m for m in ("numba", "llvmlite", "scipy.linalg", "cffi", "numba.np.arraymath",
                                             "mathhammer.kernel")
                                 if sys.modules.get(m) is not None),
                "yaml_for_numba": getattr(config, "_HAVE_YAML", None),
                "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}}

    def exit_now(code):
        sys.stderr.write("PROBE " + json.dumps({{"os._exit": code, **probe()}}) + "\\n")
        sys.stderr.flush()
        real_exit(code)

    os._exit = exit_now
    sys.argv = ["mathhammer", *{args!r}]
    from mathhammer.cli import main
    try:
        main()
    except SystemExit as e:
        sys.stderr.write("PROBE " + json.dumps({{"sys.exit": e.code, **probe()}}) + "\\n")
"""


def _probe(args: list[str], cwd: Path, env: dict[str, str | None] | None = None,
           ) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    r = _python(_PROBE.format(args=args), cwd, env)
    lines = [line for line in r.stderr.splitlines() if line.startswith("PROBE ")]
    assert len(lines) == 1, r.stderr
    return json.loads(lines[0][len("PROBE "):]), r


#: numba's cache alone (no native kernel): what the trims are for.
NUMBA_ONLY = {"MATHHAMMER_NATIVE_KERNELS": "0"}


def test_warm_run_loads_the_native_kernel_without_numba(tmp_path: Path) -> None:
    """Item 4: once a run has kept the kernel's machine code, a run neither imports numba nor
    compiles, ends through os._exit, and prints what numba's kernel prints."""
    _run([*PY, *MC], tmp_path)  # keeps the native kernel (loaded or compiled by numba)
    found, r = _probe(MC, tmp_path)
    assert found["os._exit"] == 0, r.stderr
    loaded = set(found["loaded"])
    assert "numba" not in loaded and "llvmlite" in loaded, r.stderr
    assert [line for line in _unexpected(r.stderr) if not line.startswith("PROBE ")] == [], r.stderr
    by_numba, r2 = _probe(MC, tmp_path, NUMBA_ONLY)
    assert "numba" in set(by_numba["loaded"]), r2.stderr
    assert without_timings(json.loads(r.stdout)) == without_timings(json.loads(r2.stdout))


def test_monte_carlo_run_is_trimmed_and_ends_through_os_exit(tmp_path: Path) -> None:
    _run([*PY, *MC], tmp_path, NUMBA_ONLY)  # warm numba's cache: the probed run must load, not compile
    found, r = _probe(MC, tmp_path, {"OPENBLAS_NUM_THREADS": None, **NUMBA_ONLY})
    assert found["os._exit"] == 0, r.stderr  # numba loaded: no slow interpreter teardown
    assert found["hook"] and found["stub"]  # numba's entry points (importlib.metadata) skipped
    json.loads(r.stdout)
    loaded = set(found["loaded"])
    assert "numba" in loaded
    assert "scipy.linalg" not in loaded  # numba's BLAS probe skipped
    if importlib.util.find_spec("cffi") is not None:
        assert "cffi" not in loaded
    assert found["yaml_for_numba"] is False  # no .numba_config.yaml here: numba need not import yaml
    assert found["blas_threads"] == "1"  # no OpenBLAS thread per core for a process that calls no threaded BLAS
    if "compiling kernels" not in r.stderr:
        # a cache load sets up numba's runtime only, not its typing and lowering registries
        assert "numba.np.arraymath" not in loaded


def test_exact_and_help_never_load_numba(tmp_path: Path) -> None:
    """Nor the kernel package: ``--threads`` is checked without it."""
    for args in (["shoot", "railgun", "-t", "knight", "--exact", "-f", "json"], ["--help"],
                 ["shoot", "railgun", "-t", "knight", "--exact", "--threads", "1", "-f", "json"]):
        found, r = _probe(args, tmp_path)
        assert found.get("sys.exit") == 0 and "os._exit" not in found, r.stderr
        assert found["loaded"] == [], args


def test_users_openblas_thread_setting_is_kept(tmp_path: Path) -> None:
    found, r = _probe(["shoot", "railgun", "-t", "knight", "--exact", "-f", "json"], tmp_path,
                      {"OPENBLAS_NUM_THREADS": "2"})
    assert found.get("sys.exit") == 0, r.stderr
    assert found["blas_threads"] == "2"


def test_numba_config_file_still_read_by_the_command_line(tmp_path: Path) -> None:
    """yaml is hidden from numba only when there is no numba config file to read."""
    (tmp_path / ".numba_config.yaml").write_text("# nothing set\n", encoding="utf-8")
    found, r = _probe(MC, tmp_path, NUMBA_ONLY)
    assert found["os._exit"] == 0, r.stderr
    assert found["yaml_for_numba"] is True


# --- library use: nothing trimmed ----------------------------------------------------------------

def test_library_process_is_left_alone(tmp_path: Path) -> None:
    """Importing the kernel (and running the application in-process) installs no hook, keeps
    numba's extension loading, and leaves scipy.linalg importable."""
    r = _python("""
        import os, sys
        import mathhammer.kernel
        import numba  # a native kernel may serve the run: numba as a library user imports it
        from typer.testing import CliRunner
        from mathhammer.cli import app, _startup
        res = CliRunner().invoke(app, ["shoot", "railgun", "-t", "knight", "--trials", "1000", "-f", "json"])
        assert res.exit_code == 0, res.output
        entry = sys.modules["numba.core.entrypoints"]
        print(_startup.installed(), entry.init_all is _startup._no_extensions,
              "scipy.linalg" in sys.modules and sys.modules["scipy.linalg"] is None,
              "OPENBLAS_NUM_THREADS" in os.environ)
    """, tmp_path, {"OPENBLAS_NUM_THREADS": None})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False", "False", "False"]


def test_library_users_jitted_code_keeps_blas(tmp_path: Path) -> None:
    """A process that imported mathhammer's kernel and ran it keeps numba's BLAS for the user's
    own jitted code: numba decides once, when its array functions are first loaded, whether
    np.convolve and np.correlate may call BLAS (np.dot), and the command line alone skips that."""
    if importlib.util.find_spec("scipy") is None:
        pytest.skip("scipy is not installed: numba has no BLAS anyway")
    r = _python("""
        import json
        import mathhammer.kernel
        import numba
        import numpy as np
        from typer.testing import CliRunner
        from mathhammer.cli import app

        res = CliRunner().invoke(app, ["shoot", "railgun", "-t", "knight", "--trials", "1000", "-f", "json"])
        assert res.exit_code == 0, res.output

        @numba.njit
        def smooth(a, b):
            return np.convolve(a, b), np.dot(a, b)

        conv, dot = smooth(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
        from numba.np import arraymath
        print(json.dumps([conv.tolist(), dot, getattr(arraymath, "_HAVE_BLAS", True)]))
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    conv, dot, blas = json.loads(r.stdout)
    assert conv == [0.0, 1.0, 2.5, 4.0, 1.5]  # (1,2,3) * (0,1,0.5): 0, 1, 2+0.5, 3+1, 1.5
    assert dot == 3.5  # 1*0 + 2*1 + 3*0.5
    assert blas is True


# --- the hook itself: compile, then load from the cache --------------------------------------------

_TINY = """
import numba
import numpy as np


@numba.njit(cache=True)
def total(n):
    a = np.empty(n, dtype=np.int64)  # allocates: needs numba's runtime (NRT) after a cache load too
    for i in range(n):
        a[i] = i
    s = 0
    for i in range(n):
        s += a[i]
    return s
"""


def test_hooked_process_compiles_then_loads_from_cache(tmp_path: Path) -> None:
    """Under the hook a cache miss still compiles (every registry set up), and a later
    process loads that code with the runtime only and gets the same answer (without the
    runtime, that load crashes the process: this checks it is set up)."""
    (tmp_path / "tiny.py").write_text(_TINY, encoding="utf-8")
    code = """
        import sys
        from mathhammer.cli import _startup
        _startup.install()
        import tiny
        print(tiny.total(10), sum(tiny.total.stats.cache_hits.values()), "numba.np.arraymath" in sys.modules)
    """
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}
    first = _run([sys.executable, "-c", textwrap.dedent(code)], tmp_path, env)
    second = _run([sys.executable, "-c", textwrap.dedent(code)], tmp_path, env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.split() == ["45", "0", "True"]  # 0+1+...+9; compiled with every registry
    assert second.stdout.split() == ["45", "1", "False"]  # loaded from the cache, runtime only


def test_install_is_a_no_op_once_numba_is_loaded(tmp_path: Path) -> None:
    r = _python("""
        import numba
        from mathhammer.cli import _startup
        _startup.install()
        print(_startup.installed())
    """, tmp_path)
    assert r.returncode == 0 and r.stdout.split() == ["False"], r.stderr


# --- the table views: one console, text shown as written -------------------------------------------

_ODD = """
schema: 1
source: "test"
units:
  - name: "Odd [b]Walker[/b] :smile:"
    aliases: ["oddwalker"]
    faction: "Test"
    points: null
    source: "test"
    models:
      - {name: "Odd [b]Walker[/b] :smile:", count: 1, M: 6, T: 6, Sv: 3, W: 5, Ld: 6, OC: 2}
    keywords: [VEHICLE]
    weapons: []
"""


@pytest.mark.parametrize("args", [["profiles", "list", "odd"], ["profiles", "show", "oddwalker"]])
def test_names_are_shown_as_written(args: list[str], tmp_path: Path) -> None:
    """A name is data: rich markup (``[b]``) and emoji codes (``:smile:``) in it are not
    interpreted (they were: the list showed "Odd Walker 😄")."""
    (tmp_path / "odd.yaml").write_text(_ODD, encoding="utf-8")
    r = CliRunner().invoke(app, [*args, "--profiles", str(tmp_path)], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    table_rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert any("Odd [b]Walker[/b] :smile:" in row for row in table_rows), r.stdout
