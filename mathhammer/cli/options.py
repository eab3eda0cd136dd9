"""Shared options, spelled and documented once (scripts depend on these names)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..limits import MAX_ATTACKING_MODELS, MAX_DAMAGE_MOD, MAX_ROLL_MOD, MAX_TARGET_MODELS, MAX_TRIALS
from ..model import Allocation, CommandReroll, DamageReroll, FtggWording, Method, RerollPolicy, RulesVersion, SaveReroll
from ..render import OutputFormat
from ._types import Choice, File, Folder, WholeNumber

__all__ = ["MAX_ROLL_MOD", "MAX_SEED", "OutputFormat", "WholeNumber"]

#: Seeds are 63-bit (what --seed draws and what every output format can carry).
MAX_SEED = 2**63 - 1


def _whole(lo: int | None = None, hi: int | None = None) -> WholeNumber:
    """A whole-number option: ``1e6``, ``1_000_000`` and ``1,000,000`` read as 1000000.

    A bound left open is checked later with a more specific message (``--models 0``: at least
    one model must fire).
    """
    return WholeNumber(lo, hi)


FormatOpt = Annotated[OutputFormat, typer.Option(
    "--format", "-f", case_sensitive=False, help="Output: table, json, ndjson (one record per line) or csv.",
)]
SvgOpt = Annotated[Path | None, typer.Option(
    "--svg", click_type=File("out.svg"), metavar="FILE",
    help="Also save what the table shows as a self-contained SVG picture.",
)]
HtmlOpt = Annotated[Path | None, typer.Option(
    "--html", click_type=File("out.html"), metavar="FILE",
    help="Also save what the table shows as a self-contained HTML page.",
)]
SeedOpt = Annotated[int | None, typer.Option(
    "--seed", click_type=_whole(0, MAX_SEED), metavar="N",
    help="RNG seed (default: drawn, and always printed).",
)]
TrialsOpt = Annotated[int, typer.Option(
    "--trials", click_type=_whole(1, MAX_TRIALS), metavar="N",
    help="Monte Carlo trials (1 to 1,000,000,000).",
)]
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", "--threads", click_type=_whole(1, 1024), metavar="N",
    help="Runs computed side by side, in worker processes or threads (default: every core); results do not "
         "depend on it.",
)]
StagesOpt = Annotated[bool, typer.Option(
    "--stages/--no-stages",
    help=("Count the per-stage breakdown (hits, wounds, saves failed...). --no-stages is quicker (the exact "
          "engine's much smaller too) and, in Monte Carlo, draws other random numbers: those of compare and "
          "sweep, so --no-stages with a record's seed repeats it."),
)]
ThreadsOpt = Annotated[int | None, typer.Option(
    "--threads", click_type=_whole(1), metavar="N",
    help="Threads (default: all cores); results do not depend on it.",
)]
TargetOpt = Annotated[str, typer.Option(
    "--target", "-t",
    help=("Target: a unit name, or inline like 'T4 SV3+ W2 MODELS10 INV4+ FNP5+ [STEALTH]'; model groups separated "
          "by ';' ('9x T5 SV5+ W1; 1x T5 SV5+ W2', a [CHARACTER] group is an attached Leader); "
          "'intercessors + captain' attaches a Leader."),
)]
ModelsOpt = Annotated[int, typer.Option(
    "--models", "-n", click_type=_whole(None, MAX_ATTACKING_MODELS), metavar="N",
    help="Models attacking with the weapon (with several weapons: multiplies every weapon's count).",
)]
OnlyOpt = Annotated[list[str] | None, typer.Option(
    "--only", metavar="NAME",
    help="Fire only this weapon of a unit's loadout (repeatable).",
)]
ExceptOpt = Annotated[list[str] | None, typer.Option(
    "--except", metavar="NAME",
    help="Leave this weapon of a unit's loadout out (repeatable).",
)]
WoundsLeftOpt = Annotated[int | None, typer.Option(
    "--wounds-left", click_type=_whole(), metavar="N",
    help="The first model attacks go to has lost wounds and has N left (also WOUNDS-LEFT=N inline).",
)]
AllocationOpt = Annotated[Allocation, typer.Option(
    "--allocation", case_sensitive=False,
    help=("How the defender allocates among the models it may choose: durable (most wounds first, then the best "
          "save) or listed (the groups in the order given)."),
)]
TargetModelsOpt = Annotated[int | None, typer.Option(
    "--target-models", click_type=_whole(1, MAX_TARGET_MODELS), metavar="N",
    help="Models in the target unit (default: the profile's unit size).",
)]
CoverOpt = Annotated[bool, typer.Option(
    "--cover",
    help="The target has the Benefit of Cover (+1 to armour saves vs ranged attacks).",
)]
HalfRangeOpt = Annotated[bool, typer.Option(
    "--half-range",
    help="The target is within half range (MELTA, RAPID FIRE).",
)]
StationaryOpt = Annotated[bool, typer.Option(
    "--stationary",
    help="The attacking unit Remained Stationary (HEAVY: +1 to hit).",
)]
NotVisibleOpt = Annotated[bool, typer.Option(
    "--not-visible",
    help="No model of the target is visible (INDIRECT FIRE).",
)]
OverwatchOpt = Annotated[bool, typer.Option("--overwatch", help="Fire Overwatch: hits only on unmodified 6s.")]
ChargedOpt = Annotated[bool, typer.Option(
    "--charged",
    help="The attacker made a Charge move this turn (LANCE: +1 to wound).",
)]
HitModOpt = Annotated[int | None, typer.Option(
    "--hit-mod", click_type=_whole(-MAX_ROLL_MOD, MAX_ROLL_MOD), metavar="N",
    help="Hit roll modifier, signed; all Hit modifiers together are capped at ±1.",
)]
WoundModOpt = Annotated[int | None, typer.Option(
    "--wound-mod", click_type=_whole(-MAX_ROLL_MOD, MAX_ROLL_MOD), metavar="N",
    help="Wound roll modifier, signed; capped at ±1 with the others.",
)]
SaveModOpt = Annotated[int | None, typer.Option(
    "--save-mod", click_type=_whole(-MAX_ROLL_MOD, MAX_ROLL_MOD), metavar="N",
    help="Saving throw modifier, signed (+1 = better save); net of AP and cover capped at +1.",
)]
DamageModOpt = Annotated[int | None, typer.Option(
    "--damage-mod", click_type=_whole(-MAX_DAMAGE_MOD, MAX_DAMAGE_MOD), metavar="N",
    help="Damage modifier, signed (added after halving; a subtraction never goes below 1).",
)]
BsImproveOpt = Annotated[int | None, typer.Option(
    "--bs-improve", click_type=_whole(-MAX_ROLL_MOD, MAX_ROLL_MOD), metavar="N",
    help="Improve BS/WS by N (characteristic change, not capped; negative worsens).",
)]
ApImproveOpt = Annotated[int | None, typer.Option(
    "--ap-improve", click_type=_whole(-MAX_ROLL_MOD, MAX_ROLL_MOD), metavar="N",
    help="Improve AP by N (AP-1 -> AP-2; negative worsens, never above 0).",
)]
CritHitOpt = Annotated[int | None, typer.Option(
    "--crit-hit", click_type=_whole(), metavar="N",
    help="Critical Hits on an unmodified N+ (2-6; default 6).",
)]
CritWoundOpt = Annotated[int | None, typer.Option(
    "--crit-wound", click_type=_whole(), metavar="N",
    help="Critical Wounds on an unmodified N+ (2-6; default 6).",
)]
RerollHitsOpt = Annotated[RerollPolicy | None, typer.Option(
    "--reroll-hits", click_type=Choice(RerollPolicy),
    help="Re-roll Hit rolls: none, ones, failed, non-crit or best (also read: non_crit, ev_optimal).",
)]
RerollWoundsOpt = Annotated[RerollPolicy | None, typer.Option(
    "--reroll-wounds", click_type=Choice(RerollPolicy),
    help="Re-roll Wound rolls: none, ones, failed, non-crit or best (also read: non_crit, ev_optimal).",
)]
RerollDamageOpt = Annotated[DamageReroll | None, typer.Option(
    "--reroll-damage", click_type=Choice(DamageReroll),
    help="Re-roll Damage rolls: none, ones or below-average.",
)]
RerollSavesOpt = Annotated[SaveReroll | None, typer.Option(
    "--reroll-saves", click_type=Choice(SaveReroll),
    help="The defender re-rolls saving throws: none, ones or failed.",
)]
CommandRerollOpt = Annotated[CommandReroll, typer.Option(
    "--command-reroll", click_type=Choice(CommandReroll),
    help="Command Re-roll (one die per attack sequence): none, hit, wound, damage, save or attacks.",
)]
CritSuccessfulOpt = Annotated[bool, typer.Option(
    "--crit-successful",
    help="The rule behind --crit-hit / --crit-wound says 'a successful unmodified roll of N+': one that fails "
         "is not critical (ruling A7; default: any unmodified N+ is critical and succeeds).",
)]
SkillFloorOpt = Annotated[int, typer.Option(
    "--skill-floor", click_type=_whole(0, 6), metavar="N",
    help="Characteristic changes never make BS/WS better than N+ (0 to 6; default 0: no limit, as 1; ruling A1).",
)]
RulesOpt = Annotated[RulesVersion, typer.Option(
    "--rules", case_sensitive=False,
    help="Core rules text: current (default) or 2023.",
)]
DetachmentOpt = Annotated[str | None, typer.Option(
    "--detachment", metavar="NAME",
    help="The attacker's detachment: kauyon or montka (its rule applies; needs --round). See docs/effects.md.",
)]
RoundOpt = Annotated[int | None, typer.Option(
    "--round", click_type=_whole(None, None), metavar="N",
    help="The battle round, 1 to 5 (detachment rules and stratagem restrictions depend on it).",
)]
StratagemOpt = Annotated[list[str] | None, typer.Option(
    "--stratagem", metavar="NAME",
    help=("A stratagem used (repeatable; names as printed, any case): 'focused fire', 'point-blank ambush', "
          "'a tempting trap', 'coordinate to engage', 'pinpoint counter-offensive', 'counterfire defence systems' "
          "(the defender's), 'command re-roll', 'fire overwatch'. Refused, with the reason, where its restrictions "
          "say."),
)]
GuidedOpt = Annotated[bool, typer.Option(
    "--guided",
    help="For the Greater Good: the attacker is a Guided unit (BS improved by 1 against the Spotted unit, worsened "
         "by 1 against any other).",
)]
ObserverOpt = Annotated[bool, typer.Option(
    "--observer",
    help="For the Greater Good: the attacker is the Observer unit (Coordinate to Engage; Patient Hunter's "
         "SUSTAINED HITS 2).",
)]
SpottedOpt = Annotated[bool, typer.Option(
    "--spotted/--not-spotted",
    help="With --guided or --observer: the target is (default) or is not their Spotted unit.",
)]
MarkerlightOpt = Annotated[bool, typer.Option(
    "--markerlight",
    help="The Observer unit has MARKERLIGHT: Guided attacks at the Spotted unit have [IGNORES COVER].",
)]
RangeOpt = Annotated[int | None, typer.Option(
    "--range", click_type=_whole(0, None), metavar="INCHES",
    help="Distance to the target in inches (Point-blank Ambush: within 9\").",
)]
FtggOpt = Annotated[FtggWording, typer.Option(
    "--ftgg", case_sensitive=False,
    help="Which text of For the Greater Good: index (default, the seed document: BS worsened by 1 for a Guided "
         "unit's attacks at another unit than the Spotted one) or codex (a unit is Guided only while it targets a "
         "Spotted unit: no penalty).",
)]
TrapOpt = Annotated[bool, typer.Option(
    "--trap",
    help="The target is within range of your Trap objective marker (A Tempting Trap).",
)]
EmbarkedOpt = Annotated[list[str] | None, typer.Option(
    "--embarked", metavar="UNIT",
    help=("A unit embarked in the attacking TRANSPORT that fires through its Firing Deck (repeatable): each model "
          "lends one ranged weapon, not ONE SHOT; '4x strike team' (4 models) or '4x strike team/pulse rifle'."),
)]
ExplainOpt = Annotated[bool, typer.Option(
    "--explain",
    help="List every rule applied (with its id) and every modifier as requested and as applied.",
)]
ExactOpt = Annotated[bool, typer.Option(
    "--exact",
    help="Exact distributions instead of Monte Carlo (same as --method exact).",
)]
MethodOpt = Annotated[Method | None, typer.Option(
    "--method", case_sensitive=False,
    help="monte-carlo (default), exact, or both (with an agreement check; exit code 3 when they disagree).",
)]
ProfilesOpt = Annotated[list[Path] | None, typer.Option(
    "--profiles", click_type=Folder(), metavar="DIR",
    help="Extra folder of profile YAML files (repeatable); also $MATHHAMMER_PROFILES.",
)]
RosterOpt = Annotated[list[Path] | None, typer.Option(
    "--roster", metavar="FILE",
    help=("Army roster (repeatable): .ros/.rosz, or the text the GW app, New Recruit or War Organ exports; its units, "
          "as listed (loadout, leaders), are found by name before the library's. See docs/rosters.md."),
)]
TargetRosterOpt = Annotated[list[Path] | None, typer.Option(
    "--target-roster", metavar="FILE",
    help="The opponent's roster (repeatable): --target may name its units (with their attached leaders).",
)]
#: ``--faction``: names of attacking units and weapons (or listed profiles) are looked up in one faction.
FactionOpt = Annotated[str | None, typer.Option(
    "--faction", metavar="FACTION",
    help="Look names up in this faction only, e.g. 'space marines' or \"t'au empire\" (case, spaces and "
         "apostrophes ignored); FACTION/UNIT does the same for one name.",
)]


def chosen_method(exact: bool, method: Method | None) -> Method:
    """``--exact`` and ``--method`` as one method (monte-carlo when neither is given).

    Raises:
        InputError: ``--exact`` with another ``--method``.
    """
    if exact and method not in (None, Method.EXACT):
        raise InputError("--exact means --method exact", where="--method", value=method.value if method else None,
                         hint="give one of them")
    return Method.EXACT if exact else (method or Method.MONTE_CARLO)


class DocumentFormat(StrEnum):
    """``--format`` of commands that print one document (a profile, a roster): table or json,
    not the record streams (ndjson, csv)."""

    TABLE = "table"
    JSON = "json"


DocumentFormatOpt = Annotated[DocumentFormat, typer.Option("--format", "-f", case_sensitive=False,
                                                           help="Output: table or json.")]


def typed(ctx: typer.Context) -> tuple[str, ...]:
    """The parameters of ``ctx``'s command given on the command line (not left at their defaults)."""
    return tuple(name for name in ctx.params if getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE")


def exact_unused(method: Method, given: tuple[str, ...]) -> tuple[str, ...]:
    """The warning for sampling options given with ``--exact`` (``given``: :func:`typed`): one,
    or none."""
    unused = [f"--{name}" for name in ("trials", "seed", "threads") if name in given] if method is Method.EXACT else []
    if not unused:
        return ()
    return (f"{', '.join(unused)} {'has' if len(unused) == 1 else 'have'} no effect with --exact: it samples nothing",)
