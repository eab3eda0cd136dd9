"""The built-in library profiles/*.json, generated from BSData: it is what the generator makes from the
pinned snapshot, and every file loads through the profile schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mathhammer.bsdata.write import SPLIT_BYTES

ROOT = Path(__file__).resolve().parents[1]
#: the built-in library: every file of profiles/ is generated (scripts/build_profiles.py)
GENERATED = sorted((ROOT / "profiles").glob("*.json"))


def test_there_is_a_generated_library() -> None:
    assert len(GENERATED) >= 30
    assert {"tau-empire.json", "imperial-knights.json", "space-marines.json", "orks.json"} <= {p.name for p in
                                                                                             GENERATED}
    assert not sorted((ROOT / "profiles").glob("*.y*ml"))  # no hand-written file beside them


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.name)
def test_generated_file_loads_through_the_schema(path: Path) -> None:
    from mathhammer.profiles.library import load_file

    assert path.stat().st_size <= SPLIT_BYTES
    units = load_file(path)
    assert units
    assert all(u.faction for u in units)
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["units"]  # JSON syntax, which is YAML


def test_regenerating_gives_the_committed_files(shared_data: Path) -> None:
    snapshot = shared_data / "bsdata-wh40k-10e"
    if not snapshot.is_dir():
        pytest.skip(f"{snapshot} not found: the BSData snapshot is not available")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_profiles.py"), "--bsdata", str(snapshot),
                        "--check"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_check_reports_a_changed_file(shared_data: Path, tmp_path: Path) -> None:
    snapshot = shared_data / "bsdata-wh40k-10e"
    if not snapshot.is_dir():
        pytest.skip(f"{snapshot} not found: the BSData snapshot is not available")
    out = tmp_path / "profiles"
    out.mkdir()
    for p in GENERATED:
        (out / p.name).write_bytes(p.read_bytes())
    orks = (out / "orks.json").read_bytes()
    assert b'"points": 80,' in orks
    (out / "orks.json").write_bytes(orks.replace(b'"points": 80,', b'"points": 81,', 1))
    (out / "stale.json").write_text('{"schema": 1, "units": []}\n', encoding="utf-8")
    (out / "tau-empire.json").unlink()
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_profiles.py"), "--bsdata", str(snapshot),
                        "--out", str(out), "--check"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1
    assert f"{out / 'orks.json'}: differs" in r.stdout and f"{out / 'stale.json'}: not produced" in r.stdout
    assert f"{out / 'tau-empire.json'}: missing" in r.stdout
    assert f"{out / 'necrons.json'}" not in r.stdout  # the files left as generated match
