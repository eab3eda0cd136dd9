"""Integer codes shared by :mod:`mathhammer.compile` and the kernels (the array layout's names).

Kept free of numba and of the model so both sides can import it cheaply.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

__all__ = ["MAX_RAW", "PAIRS", "Flag", "Outcome", "Param", "Roll", "Stage"]

#: Largest raw sum of one roll's dice (12 dice of 6 faces); ``roll_maps`` rows are this + 1 long.
MAX_RAW = 72
#: Columns of ``stages``: (first face - 1) * 6 + (second face - 1), the second die being the
#: re-roll, used only where the first face is re-rolled.
PAIRS = 36


class Stage(IntEnum):
    """Rows of ``stages: int8[4, 36]``, each giving the result of one roll with its re-roll."""

    HIT = 0  # Outcome of the Hit roll
    WOUND = 1  # Outcome of the Wound roll
    SAVE = 2  # 1 if the saving throw fails
    FEEL_NO_PAIN = 3  # 1 if the Feel No Pain roll ignores the wound (never re-rolled)


class Outcome(IntEnum):
    """Result of a Hit or Wound roll."""

    FAIL = 0
    SUCCESS = 1
    CRIT = 2


class Roll(IntEnum):
    """Rows of ``rolls: int64[3, 2]`` (dice count, sides 3|6) and ``roll_maps: int64[3, MAX_RAW + 1]``
    (raw dice sum -> value; a roll of 0 dice has its value at column 0)."""

    ATTACKS = 0  # attacks made by one firing model
    SUSTAINED = 1  # extra hits scored by one Critical Hit
    DAMAGE = 2  # damage of one unsaved attack, after damage modifiers


class Param(IntEnum):
    """Entries of ``params: int64[4]``."""

    FLAGS = 0
    FIRING_MODELS = 1
    TARGET_MODELS = 2
    TARGET_WOUNDS = 3  # per model; 0 = unlimited wounds


class Flag(IntFlag):
    """Bits of ``params[Param.FLAGS]``."""

    TORRENT = 1  # no Hit roll: every attack hits, never critically
    LETHAL_HITS = 2  # a Critical Hit wounds automatically
    DEVASTATING_WOUNDS = 4  # a Critical Wound becomes deferred mortal wounds
    DEVASTATING_SPILL = 8  # 2023 text: those mortal wounds carry over to the next model
    FEEL_NO_PAIN = 16  # roll Stage.FEEL_NO_PAIN for each point of damage
