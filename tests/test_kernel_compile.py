"""How many versions of each kernel function numba compiles (issue 8: the first run's compile time).

numba types a constant argument of a call between jitted functions as a literal and compiles a
version of the callee per value; ``mathhammer.kernel._jit.jit`` asks for one version per
argument types instead (``jit_by_constant`` keeps numba's default). These tests run in a fresh
subprocess with an empty cache, on small functions decorated like the kernels (the real kernels
compile in ~13 CPU-s, too long to repeat here), so a numba
release that types such calls another way fails here rather than quietly tripling the compile.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_MODULE = """
from mathhammer.kernel._jit import jit, jit_by_constant


@jit
def row(table, kind, n):
    return table[kind] * n


@jit_by_constant
def row_by_constant(table, kind, n):
    return table[kind] * n


@jit
def caller(table, pair):
    a, b = pair  # plain int64 values: the same version as the constants' must serve them
    return (row(table, 0, 1) + row(table, 1, 2) + row(table, 2, 3) + row(table, a, b)
            + row_by_constant(table, 0, 1) + row_by_constant(table, 1, 2) + row_by_constant(table, 2, 3))
"""


def _compile_and_count(tmp_path: Path) -> list[str]:
    (tmp_path / "kernels_like.py").write_text(_MODULE, encoding="utf-8")
    code = """
        import numpy as np
        import kernels_like as k
        table = np.arange(3, dtype=np.int64) + 1
        print(k.caller(table, (0, 5)), len(k.row.overloads), len(k.row_by_constant.overloads))
    """
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_constant_arguments_compile_one_version_per_types(tmp_path: Path) -> None:
    value, versions, by_constant = _compile_and_count(tmp_path)
    # table = (1, 2, 3): 1*1 + 2*2 + 3*3 + 1*5, then 1*1 + 2*2 + 3*3 again
    assert int(value) == 14 + 5 + 14
    assert int(versions) == 1  # four calls, three constant kinds: one version (int64, int64)
    assert int(by_constant) == 3  # numba's default: a version per constant kind
