"""Shared options, spelled and documented once (scripts depend on these names)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..model import CommandReroll, DamageReroll, Method, RerollPolicy, RulesVersion, SaveReroll
from ..render import OutputFormat

FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output: table or json.")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="RNG seed (default: drawn, and always printed).")]
TrialsOpt = Annotated[int, typer.Option("--trials", help="Monte Carlo trials (1 to 1,000,000,000).")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="Threads (default: all cores); results do not depend on it.")]
TargetOpt = Annotated[str, typer.Option("--target", "-t", help="Target: a unit name, or inline like 'T4 SV3+ W2 MODELS10 INV4+ FNP5+ [STEALTH]'.")]
ModelsOpt = Annotated[int, typer.Option("--models", "-n", help="Models attacking with the weapon.")]
TargetModelsOpt = Annotated[int | None, typer.Option("--target-models", help="Models in the target unit (default: the profile's unit size).")]
CoverOpt = Annotated[bool, typer.Option("--cover", help="The target has the Benefit of Cover (+1 to armour saves vs ranged attacks).")]
HalfRangeOpt = Annotated[bool, typer.Option("--half-range", help="The target is within half range (MELTA, RAPID FIRE).")]
StationaryOpt = Annotated[bool, typer.Option("--stationary", help="The attacking unit Remained Stationary (HEAVY: +1 to hit).")]
NotVisibleOpt = Annotated[bool, typer.Option("--not-visible", help="No model of the target is visible (INDIRECT FIRE).")]
OverwatchOpt = Annotated[bool, typer.Option("--overwatch", help="Fire Overwatch: hits only on unmodified 6s.")]
ChargedOpt = Annotated[bool, typer.Option("--charged", help="The attacker made a Charge move this turn (LANCE: +1 to wound).")]
HitModOpt = Annotated[int | None, typer.Option("--hit-mod", help="Hit roll modifier, signed; all Hit modifiers together are capped at ±1.")]
WoundModOpt = Annotated[int | None, typer.Option("--wound-mod", help="Wound roll modifier, signed; capped at ±1 with the others.")]
SaveModOpt = Annotated[int | None, typer.Option("--save-mod", help="Saving throw modifier, signed (+1 = better save); net of AP and cover capped at +1.")]
DamageModOpt = Annotated[int | None, typer.Option("--damage-mod", help="Damage modifier, signed (added after halving; a subtraction never goes below 1).")]
BsImproveOpt = Annotated[int | None, typer.Option("--bs-improve", help="Improve BS/WS by N (characteristic change, not capped; negative worsens).")]
ApImproveOpt = Annotated[int | None, typer.Option("--ap-improve", help="Improve AP by N (AP-1 -> AP-2; negative worsens, never above 0).")]
CritHitOpt = Annotated[int | None, typer.Option("--crit-hit", help="Critical Hits on an unmodified N+ (2-6; default 6).")]
CritWoundOpt = Annotated[int | None, typer.Option("--crit-wound", help="Critical Wounds on an unmodified N+ (2-6; default 6).")]
RerollHitsOpt = Annotated[RerollPolicy | None, typer.Option("--reroll-hits", help="Re-roll Hit rolls: none, ones, failed, non-crit or best.")]
RerollWoundsOpt = Annotated[RerollPolicy | None, typer.Option("--reroll-wounds", help="Re-roll Wound rolls: none, ones, failed, non-crit or best.")]
RerollDamageOpt = Annotated[DamageReroll | None, typer.Option("--reroll-damage", help="Re-roll Damage rolls: none, ones or below-average.")]
RerollSavesOpt = Annotated[SaveReroll | None, typer.Option("--reroll-saves", help="The defender re-rolls saving throws: none, ones or failed.")]
CommandRerollOpt = Annotated[CommandReroll, typer.Option("--command-reroll", help="Command Re-roll (one die per attack sequence): none, hit, wound, damage, save or attacks.")]
RulesOpt = Annotated[RulesVersion, typer.Option("--rules", help="Core rules text: current (default) or 2023.")]
ExplainOpt = Annotated[bool, typer.Option("--explain", help="List every rule applied (with its id) and every modifier as requested and as applied.")]
ExactOpt = Annotated[bool, typer.Option("--exact", help="Exact distributions instead of Monte Carlo (same as --method exact).")]
MethodOpt = Annotated[Method | None, typer.Option("--method", help="monte-carlo (default), exact, or both (with an agreement check; exit code 3 when they disagree).")]
ProfilesOpt = Annotated[list[Path] | None, typer.Option("--profiles", help="Extra folder of profile YAML files (repeatable); also $MATHHAMMER_PROFILES.")]
