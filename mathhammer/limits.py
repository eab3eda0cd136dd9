"""Documented limits on every count a user can give (one place; docs/limits.md lists them).

They keep memory and time bounded for every legal input and sit far above anything a real
army fields (the largest 10th-edition statlines: S/T around 30, Wounds around 100, units of
at most a few dozen models). Each check raises an error naming the option or token, the value
and the limit, before anything is allocated.
"""

from __future__ import annotations

__all__ = [
    "MAX_AP",
    "MAX_ATTACKING_MODELS",
    "MAX_CHARACTERISTIC",
    "MAX_DAMAGE_MOD",
    "MAX_RANGE",
    "MAX_ROLL_MOD",
    "MAX_TARGET_MODELS",
    "MAX_TRIALS",
    "MAX_WOUNDS",
]

#: Models attacking with one weapon (``--models``/``-n``, a weapon group's count).
MAX_ATTACKING_MODELS = 1_000
#: Models in the target unit (``MODELS``, ``--target-models``, a profile's ``count``s summed).
MAX_TARGET_MODELS = 1_000
#: Wounds characteristic of one model (``W``).
MAX_WOUNDS = 1_000
#: Strength and Toughness (``S``, ``T``).
MAX_CHARACTERISTIC = 100
#: Most negative AP (``AP-10``); AP is never positive.
MAX_AP = 10
#: Range in inches.
MAX_RANGE = 1_000
#: Monte Carlo trials (``--trials``).
MAX_TRIALS = 1_000_000_000
#: Largest magnitude of a roll modifier or characteristic change (``--hit-mod``, ``--bs-improve``,
#: ...): anything beyond is the same as 6 after the rules' caps.
MAX_ROLL_MOD = 6
#: Largest magnitude of ``--damage-mod``.
MAX_DAMAGE_MOD = 100
