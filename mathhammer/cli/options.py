"""Shared options, spelled and documented once (scripts depend on these names)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..model import RerollPolicy, RulesVersion
from ..render import OutputFormat

FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output: table or json.")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="RNG seed (default: drawn, and always printed).")]
TrialsOpt = Annotated[int, typer.Option("--trials", help="Monte Carlo trials (1 to 1,000,000,000).")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="Threads (default: all cores); results do not depend on it.")]
TargetOpt = Annotated[str, typer.Option("--target", "-t", help="Target: a unit name, or inline like 'T4 SV3+ W2 MODELS10 INV4+ FNP5+'.")]
ModelsOpt = Annotated[int, typer.Option("--models", "-n", help="Models firing the weapon.")]
TargetModelsOpt = Annotated[int | None, typer.Option("--target-models", help="Models in the target unit (default: the profile's unit size).")]
CoverOpt = Annotated[bool, typer.Option("--cover", help="The target has the Benefit of Cover (+1 to armour saves vs ranged attacks).")]
HitModOpt = Annotated[int, typer.Option("--hit-mod", help="Hit roll modifier, signed; capped at ±1 (R-0.3).")]
WoundModOpt = Annotated[int, typer.Option("--wound-mod", help="Wound roll modifier, signed; capped at ±1 (R-0.3).")]
SaveModOpt = Annotated[int, typer.Option("--save-mod", help="Saving throw modifier, signed (+1 = better save); net of AP and cover capped at +1.")]
RerollHitsOpt = Annotated[RerollPolicy, typer.Option("--reroll-hits", help="Re-roll Hit rolls: none, ones or failed.")]
RerollWoundsOpt = Annotated[RerollPolicy, typer.Option("--reroll-wounds", help="Re-roll Wound rolls: none, ones or failed.")]
RulesOpt = Annotated[RulesVersion, typer.Option("--rules", help="Core rules text: current (default) or 2023.")]
ProfilesOpt = Annotated[list[Path] | None, typer.Option("--profiles", help="Extra folder of profile YAML files (repeatable); also $MATHHAMMER_PROFILES.")]
