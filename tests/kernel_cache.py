"""Copies of numba's warm cache of the kernel for subprocess tests that must load it, not
compile it (a compile costs a subprocess 13-15 CPU-seconds)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mathhammer import kernel
from mathhammer.compile import compile_matchup
from mathhammer.engine import montecarlo
from mathhammer.kernel import native
from mathhammer.model import Matchup
from mathhammer.notation import parse_target, parse_weapon

ROOT = Path(__file__).resolve().parent.parent


def warm_files() -> list[Path]:
    """numba's cache files of ``run_chunks`` in this process's cache folder, loaded or compiled
    here first (skips the test where numba caches nothing). numba itself provides the kernel
    for that run: a native kernel would leave numba's cache as it found it, maybe written for
    other kernel sources (a developer's cache after an edit), which a subprocess would not use."""
    inputs = compile_matchup(Matchup(weapon=parse_weapon("A10 BS3+ S5 AP-1 D2"),
                                     target=parse_target("T4 SV3+ W2 MODELS10"))).inputs
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(native.SWITCH, "0")
        mp.setattr(kernel, "_NAMED", {})
        montecarlo.run(inputs, trials=100, seed=1)
    folder = kernel.cache_path()
    if folder is None:
        pytest.skip("numba caching is disabled here")
    files = sorted(Path(folder).glob("simulate.run_chunks-*.nb[ic]"))
    assert any(f.suffix == ".nbi" for f in files) and any(f.suffix == ".nbc" for f in files)
    return files


def seed(env: dict[str, str], files: list[Path], cwd: Path = ROOT) -> Path:
    """Copy ``files`` (:func:`warm_files`) to where the kernel looks for them under ``env``;
    returns that folder."""
    where = subprocess.run([sys.executable, "-c", "from mathhammer import kernel; print(kernel.cache_path())"],
                           env=env, cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    assert where.returncode == 0, where.stderr
    folder = Path(where.stdout.strip())
    folder.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy2(f, folder / f.name)
    return folder
