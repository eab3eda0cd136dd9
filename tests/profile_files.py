"""Profile files written by tests, and the error a bad one gives (shared by the profile tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathhammer.errors import ProfileError
from mathhammer.profiles import load_file


def write_profile(folder: Path, text: str | bytes, name: str = "test.yaml") -> Path:
    """``text`` (UTF-8, or the bytes as given) as ``folder/name``; the folder is made if needed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def profile_error(path: Path, label: str = "test.yaml") -> ProfileError:
    """The ProfileError that loading ``path`` raises (the test fails if it loads)."""
    with pytest.raises(ProfileError) as e:
        load_file(path, label=label)
    return e.value
