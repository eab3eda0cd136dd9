"""Shared fixtures: the reference library, paths, and the shared data folder (skipped if absent)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@pytest.fixture(scope="session")
def library():
    """The reference profiles only (no user folders from the environment)."""
    from mathhammer.profiles import load_library

    return load_library(use_env=False)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, or skip with the reason."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"../shared/data not found beside the project ({path}); shared test inputs unavailable")
    return path


@pytest.fixture(autouse=True)
def _no_user_profiles(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.delenv("MATHHAMMER_PROFILES", raising=False)
    monkeypatch.setenv("MATHHAMMER_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "mathhammer-cache"))
    monkeypatch.setenv("NO_COLOR", "1")
    loaded = sys.modules.get("mathhammer.profiles.library")
    if loaded is not None:  # each test loads its profiles afresh (tests/test_profiles.py checks the sharing)
        monkeypatch.setattr(loaded, "_LAST", {})


def pytest_report_header() -> list[str]:
    return [f"NUMBA_CACHE_DIR={os.environ.get('NUMBA_CACHE_DIR', '(default)')}"]
