"""Documented limits on every count a user can give (one place; docs/limits.md lists them).

They keep memory and time bounded for every legal input and sit far above anything a real
army fields (the largest 10th-edition statlines: S/T around 30, Wounds around 100, units of
at most a few dozen models). Each check raises an error naming the option or token, the value
and the limit, before anything is allocated.

The budgets at the end bound what one request may cost: :mod:`mathhammer.compile` refuses a
Monte Carlo request whose histograms would outgrow ``MONTE_CARLO_MAX_BYTES`` and the exact
engine estimates its work before it starts (``EXACT_MAX_SECONDS``, ``EXACT_MAX_BYTES``).
"""

from __future__ import annotations

import operator
import os
from typing import SupportsIndex, cast

from .errors import MathhammerError

__all__ = [
    "EXACT_MAX_BYTES",
    "EXACT_MAX_SECONDS",
    "MAX_AP",
    "MAX_ATTACKING_MODELS",
    "MAX_CHARACTERISTIC",
    "MAX_CHUNKS",
    "MAX_DAMAGE_MOD",
    "MAX_DICE",
    "MAX_DICE_VALUE",
    "MAX_PROFILE_BYTES",
    "MAX_RANGE",
    "MAX_SHEET_BYTES",
    "MAX_ROLL_MOD",
    "MAX_ROSTER_POINTS",
    "MAX_TARGET_MODELS",
    "MAX_PAIRS",
    "MAX_TRIALS",
    "MAX_WEAPON_GROUPS",
    "MAX_WOUNDS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "MONTE_CARLO_MAX_BYTES",
    "check_count",
    "size_text",
    "whole",
    "max_threads",
    "threads_setting",
]

#: Models attacking with one weapon (``--models``/``-n``, a weapon group's count).
MAX_ATTACKING_MODELS = 1_000
#: Models in the target unit (``MODELS``, ``--target-models``, a profile's ``count``s summed).
MAX_TARGET_MODELS = 1_000
#: Weapon groups of one attack (each weapon given, each weapon of a unit's loadout), and weapon
#: groups times the target's model groups (statlines, ``;`` groups, Leaders): each such pair
#: has tables of its own, about half a megabyte to a megabyte, so these keep a run within the
#: 200 MB of issue 8 (64 weapon groups at 4 model groups: 185 MB measured).
MAX_WEAPON_GROUPS = 64
MAX_PAIRS = 256
#: Wounds characteristic of one model (``W``).
MAX_WOUNDS = 1_000
#: Strength and Toughness (``S``, ``T``).
MAX_CHARACTERISTIC = 100
#: Most negative AP (``AP-10``); AP is never positive.
MAX_AP = 10
#: Range in inches.
MAX_RANGE = 1_000
#: A cost of points in a roster: a ``.ros`` cost (from minus this: a swap may cost less), a text
#: export's unit or list line (a whole number from 0). A whole army is a few thousand.
MAX_ROSTER_POINTS = 1_000_000
#: Monte Carlo trials (``--trials``).
MAX_TRIALS = 1_000_000_000
#: Largest magnitude of a roll modifier or characteristic change (``--hit-mod``, ``--bs-improve``,
#: ...): anything beyond is the same as 6 after the rules' caps.
MAX_ROLL_MOD = 6
#: Largest magnitude of ``--damage-mod``.
MAX_DAMAGE_MOD = 100
#: Dice in one dice expression (``12D6``) and the largest value one may have (``D6+993``): the
#: attacks, damage and ability values of a weapon. ``dice.parse`` enforces the same numbers.
MAX_DICE = 12
MAX_DICE_VALUE = 999
#: A profile file: its size in bytes, its values (scalars, lists, mappings) once YAML aliases are
#: expanded (a file under the size limit without aliases stays below it; an alias bomb does not),
#: and how deeply lists and mappings nest (a profile needs 6).
MAX_PROFILE_BYTES = 1_000_000
#: A ``compare`` sheet (CSV), in bytes: about 100,000 rows of loadouts.
MAX_SHEET_BYTES = 10_000_000
MAX_YAML_NODES = 1_000_000
MAX_YAML_DEPTH = 100

#: Most chunks the Monte Carlo engine runs, whatever the number of trials.
MAX_CHUNKS = 64
#: Memory the Monte Carlo histograms may take (one row per thread, and their sums): with the
#: ~170 MB of a process that has numba loaded, a run stays within 200 MB peak.
MONTE_CARLO_MAX_BYTES = 40_000_000
#: Estimated time and memory above which the exact engine refuses a request before it starts.
EXACT_MAX_SECONDS = 10.0
EXACT_MAX_BYTES = 1_000_000_000


def threads_setting() -> int | str | None:
    """``NUMBA_NUM_THREADS`` as numba reads it (Python's ``int``): the number when it is at least
    1, None when it is unset, else the text as given (numba, once imported, prints a warning
    with a traceback for a value it cannot read, an empty one too, and fails for one below 1)."""
    value = os.environ.get("NUMBA_NUM_THREADS")
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        return value
    return number if number >= 1 else value


def max_threads() -> int:
    """Threads a Monte Carlo run may use on this machine: ``NUMBA_NUM_THREADS`` when set to a
    whole number of at least 1, else the cores this process may run on (numba's own rule, read
    here without importing numba, nor the kernel package: an exact run checks ``--threads``
    too)."""
    given = threads_setting()
    if isinstance(given, int):
        return given
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


def whole(value: object) -> int | None:
    """``value`` as a Python int when it is a whole number (numpy's integers too; not a bool, a
    float or a text), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(cast("SupportsIndex", value))
    except TypeError:
        return None


def check_count(value: object, *, name: str, lo: int | None, hi: int | None, where: str,
                error: type[MathhammerError], shown: str = "") -> None:
    """Raise ``error`` unless ``value`` is a whole number in ``lo..hi`` (``None``: no bound).

    Python ints of any size are compared as they are, so a huge value gets this error, never
    an ``OverflowError`` later from a fixed-width array. The message names ``name`` (the field,
    token or option), the limit, and the value (``shown`` + value, e.g. ``AP`` + ``-99``).
    """
    number = whole(value)
    if number is None:
        shown = value if isinstance(value, str) else repr(value)  # (a text as it is: the message quotes it once)
        raise error(f"{name} must be a whole number", where=where, value=shown)
    if (lo is None or number >= lo) and (hi is None or number <= hi):
        return
    if lo is not None and hi is not None:
        bounds = f"from {lo:,} to {hi:,}" if lo >= 0 else f"from {lo:+d} to {hi:+d}"
    elif lo is not None:
        bounds = f"at least {lo:,}"
    else:
        bounds = f"at most {hi:,}"
    raise error(f"{name} must be {bounds}", where=where, value=f"{shown}{number}" if shown else number)


def size_text(n_bytes: float) -> str:
    """``1.5 GB``, ``200 MB``: a size for people."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.0f} B"
