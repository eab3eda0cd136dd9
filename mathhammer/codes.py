"""Integer codes shared by :mod:`mathhammer.compile` and the kernels (the array layout's names).

Kept free of numba and of the model so both sides can import it cheaply.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

__all__ = ["MAX_QUEUE_POSITIONS", "MAX_RAW", "PAIRS", "Command", "Flag", "Param", "Roll", "RollFlag", "Stage",
           "StageCount", "UnitParam"]

#: Largest raw sum of one roll's dice (12 dice of 6 faces); ``roll_maps`` rows are this + 1 long.
MAX_RAW = 72
#: Columns of ``stages``: (first face - 1) * 6 + (second face - 1), the second die being the
#: re-roll, used only where the first face is re-rolled. Column (face - 1) * 7 is a lone die.
PAIRS = 36
#: Longest queue of models (total wounds of a target unit without a Leader) that gets allocation
#: transition tables (mathhammer.kernel.transition.MAX_POSITIONS, which must agree).
MAX_QUEUE_POSITIONS = 128


class Stage(IntEnum):
    """Rows of ``stages: int8[4, 36]``, each giving the result of one roll with its re-roll.

    HIT and WOUND: 0 fail, 1 success, 2 critical, +4 on a fail whose die was not re-rolled (it
    may still take a Command Re-roll). SAVE: 1 the save fails, +4 likewise. FEEL_NO_PAIN: 1 the
    wound is ignored.
    """

    HIT = 0
    WOUND = 1
    SAVE = 2
    FEEL_NO_PAIN = 3


#: Added to a stage value when the roll failed and its die may take a Command Re-roll.
REROLLABLE = 4


class Roll(IntEnum):
    """Rows of ``rolls: int64[3, 2]`` (number of D6, number of D3), ``roll_maps: int64[3, MAX_RAW + 1]``
    (raw dice sum -> value; a roll of no dice has its value at column 0) and ``roll_flags:
    int8[3, MAX_RAW + 1]`` (RollFlag bits per raw sum)."""

    ATTACKS = 0  # attacks made by one firing model (Blast and Rapid Fire included)
    SUSTAINED = 1  # extra hits scored by one Critical Hit
    DAMAGE = 2  # damage of one unsaved attack, after damage modifiers


class RollFlag(IntFlag):
    """Bits of ``roll_flags``."""

    REROLL = 1  # the re-roll policy re-rolls this result (--reroll-damage)
    BELOW_AVERAGE = 2  # below the average of a fresh roll: a Command Re-roll takes it


class Command(IntEnum):
    """``params[Param.COMMAND]``: which roll the one Command Re-roll of a trial is kept for."""

    NONE = 0
    HIT = 1
    WOUND = 2
    DAMAGE = 3
    SAVE = 4
    ATTACKS = 5


class Param(IntEnum):
    """Entries of ``params: int64[5]``."""

    FLAGS = 0
    FIRING_MODELS = 1
    TARGET_MODELS = 2
    TARGET_WOUNDS = 3  # per model; 0 = unlimited wounds
    COMMAND = 4  # Command


class Flag(IntFlag):
    """Bits of ``params[Param.FLAGS]``."""

    TORRENT = 1  # no Hit roll: every attack hits, never critically
    LETHAL_HITS = 2  # a Critical Hit wounds automatically
    DEVASTATING_WOUNDS = 4  # a Critical Wound becomes deferred mortal wounds
    DEVASTATING_SPILL = 8  # 2023 text: those mortal wounds carry over to the next model
    FEEL_NO_PAIN = 16  # roll Stage.FEEL_NO_PAIN for each point of damage
    HAZARDOUS = 32  # one Hazardous test per firing model after the attacks
    STAGES = 64  # fill the per-stage histograms
    PRECISION = 128  # the weapon's attacks go to a Leader first
    SAME_SAVES = 256  # every model group takes this weapon's saves alike: saves are a count


class UnitParam(IntEnum):
    """Entries of ``unit: int64[2]`` (mathhammer.compile.UnitInputs)."""

    BODYGUARD = 0  # groups 0 .. this - 1 take attacks first (track 0); the rest are Leaders
    WOUNDS_LEFT = 1  # wounds left on the first model of group 0 (0: untouched)


class StageCount(IntEnum):
    """Per-trial counts kept in ``out_stages`` (the stage breakdown), in this order."""

    ATTACKS = 0
    HITS = 1  # successful Hit rolls + Sustained Hits extra hits (TORRENT: every attack)
    CRITICAL_HITS = 2
    WOUNDS = 3  # successful Wound rolls (critical included) + lethal automatic wounds
    CRITICAL_WOUNDS = 4
    LETHAL = 5
    DEVASTATING = 6
    UNSAVED = 7  # wounds whose saving throw failed (devastating ones excluded)
    DAMAGE_BEFORE_FNP = 8  # damage of unsaved and devastating attacks, no allocation cap
    DAMAGE_AFTER_FNP = 9
