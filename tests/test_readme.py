"""Every command in the README runs, exits 0 and prints no warning (issue 7)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
#: Options that make a Monte Carlo run quick (appended when a command takes no --exact).
QUICK = ["--trials", "2000", "--seed", "1"]
#: Installs completion into the user's shell profile: listed in --help, never run by a test.
SIDE_EFFECTS = ("--install-completion",)


def readme_commands() -> list[str]:
    """Each ``mathhammer ...`` command of the README's shell code blocks (continuations joined,
    the part after ``&&`` of the install lines, pipes kept)."""
    found = []
    for block in re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", README, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" # ")[0].strip()
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("mathhammer"):
                    found.append(part)
    return found


COMMANDS = readme_commands()


def test_readme_has_commands() -> None:
    assert len(COMMANDS) >= 10 and any("fight" in c for c in COMMANDS) and any("|" in c for c in COMMANDS)


def test_first_two_commands_unchanged() -> None:
    lines = [ln for ln in README.splitlines() if ln.startswith("python3 -m pip install")]
    assert lines[:2] == ['python3 -m pip install . && mathhammer shoot railgun --target knight',
                         'python3 -m pip install ".[test]" && python3 -m pytest']


def test_readme_points_only_inside_the_repository() -> None:
    assert "../shared" not in README and "RULES.md" not in README
    for target in re.findall(r"\]\(([^)#]+)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def _quick(args: list[str]) -> list[str]:
    if args and args[0] in ("shoot", "fight", "compare", "sweep") and "--exact" not in args and "--help" not in args:
        return [*args, *QUICK]
    return args


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs_without_warning(command: str) -> None:
    if any(flag in command for flag in SIDE_EFFECTS):
        pytest.skip("changes the user's shell profile")
    head, _, pipe = command.partition("|")
    args = _quick(shlex.split(head)[1:])
    exe = [shutil.which("mathhammer") or ""] if shutil.which("mathhammer") else [sys.executable, "-m", "mathhammer"]
    env = {**os.environ, "NO_COLOR": "1", "SHELL": "/bin/bash"}
    if pipe:
        line = " ".join(shlex.quote(a) for a in [*exe, *args]) + " |" + pipe
        r = subprocess.run(["bash", "-o", "pipefail", "-c", line], capture_output=True, text=True, env=env, timeout=300,
                           cwd=ROOT)
    else:
        r = subprocess.run([*exe, *args], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "Warning" not in r.stderr and "Error" not in r.stderr, r.stderr
    assert r.stdout.strip()
