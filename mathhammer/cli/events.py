"""``mathhammer tank-shock VEHICLE --target T`` and ``mathhammer deadly-demise UNIT [--target T ...]``:
thin bodies over :func:`mathhammer.events.tank_shock` and :func:`mathhammer.events.deadly_demise`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..limits import MAX_TARGET_MODELS
from ..model import Allocation
from . import options as o
from ._io import ExitCode, ascii_stdout, emit_json, emit_view, handle_errors, warn
from ._types import WholeNumber

if TYPE_CHECKING:
    from ..events import EventResult
    from ..profiles import Library

VehicleArg = Annotated[str, typer.Argument(
    metavar="VEHICLE",
    help="The VEHICLE unit that made the Charge move (a profile name, e.g. 'hammerhead'), or its Toughness "
         "inline: 'T10'.",
)]
DemiseUnitArg = Annotated[str, typer.Argument(
    metavar="UNIT",
    help="The unit with Deadly Demise whose models are destroyed (a profile name, e.g. gunrig), or the ability "
         "inline: 'D3', 'D6', '1'.",
)]
TargetsOpt = Annotated[list[str] | None, typer.Option(
    "--target", "-t",
    help=("A unit within 6\" (repeatable): a unit name, or inline like 'T4 SV3+ W2 MODELS10 FNP5+'; '5x intercessors' "
          "sets its size; 'intercessors + captain' attaches a Leader. None: the mortal wounds any unit within 6\" "
          "suffers."),
)]
DestroyedOpt = Annotated[int, typer.Option(
    "--models", "-n", click_type=WholeNumber(1, MAX_TARGET_MODELS), metavar="N",
    help="How many of the unit's models are destroyed (1 to its size); each rolls for Deadly Demise.",
)]


def _libraries(profiles: list[Path] | None, roster: list[Path] | None, target_roster: list[Path] | None,
               faction: str | None) -> tuple[Library, Library]:
    """The attacker's library (with --roster, --faction) and the target's (with --target-roster)."""
    from ..api import libraries

    return libraries(profiles or (), rosters=roster or (), target_rosters=target_roster or (), faction=faction)


def _emit(result: EventResult, fmt: o.DocumentFormat, explain: bool, unused: tuple[str, ...]) -> None:
    if unused:  # with the result's warnings (the JSON document's too), as in shoot
        from dataclasses import replace

        result = replace(result, warnings=(*result.warnings, *unused))
    for message in result.warnings:
        warn(message)
    if fmt is o.DocumentFormat.JSON:
        import json

        emit_json(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        from ..render.events_view import event_view

        emit_view(event_view(result, explain=explain, ascii=ascii_stdout()))
    if result.agreement is not None and not result.agreement.agrees:
        raise typer.Exit(ExitCode.DISAGREE)


@handle_errors
def tank_shock(
    ctx: typer.Context,
    vehicle: VehicleArg,
    target: o.TargetOpt,
    target_models: o.TargetModelsOpt = None,
    wounds_left: o.WoundsLeftOpt = None,
    allocation: o.AllocationOpt = Allocation.DURABLE,
    trials: o.TrialsOpt = 1_000_000,
    seed: o.SeedOpt = None,
    fmt: o.DocumentFormatOpt = o.DocumentFormat.TABLE,
    explain: o.ExplainOpt = False,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
    roster: o.RosterOpt = None,
    target_roster: o.TargetRosterOpt = None,
    faction: o.FactionOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """Tank Shock (1CP): D6s equal to the VEHICLE model's Toughness, each 5+ one mortal wound (at most 6), spilling
    over the target's models."""
    from ..events import tank_shock as run

    chosen = o.chosen_method(exact, method)
    lib, aim_lib = _libraries(profiles, roster, target_roster, faction)
    _emit(run(vehicle, target, lib=lib, target_lib=aim_lib, method=chosen, trials=trials, seed=seed,
              target_models=target_models, wounds_left=wounds_left, allocation=allocation), fmt, explain,
          o.exact_unused(chosen, o.typed(ctx)))


@handle_errors
def deadly_demise(
    ctx: typer.Context,
    unit: DemiseUnitArg,
    target: TargetsOpt = None,
    models: DestroyedOpt = 1,
    target_models: o.TargetModelsOpt = None,
    wounds_left: o.WoundsLeftOpt = None,
    allocation: o.AllocationOpt = Allocation.DURABLE,
    trials: o.TrialsOpt = 1_000_000,
    seed: o.SeedOpt = None,
    fmt: o.DocumentFormatOpt = o.DocumentFormat.TABLE,
    explain: o.ExplainOpt = False,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
    roster: o.RosterOpt = None,
    target_roster: o.TargetRosterOpt = None,
    faction: o.FactionOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """Deadly Demise: the chance the destroyed models explode and, for each unit within 6", the mortal wounds (x
    rolled per unit) and the models destroyed."""
    from ..events import deadly_demise as run

    chosen = o.chosen_method(exact, method)
    lib, aim_lib = _libraries(profiles, roster, target_roster, faction)
    given = o.typed(ctx)
    _emit(run(unit, list(target or ()), models=models, lib=lib, target_lib=aim_lib, method=chosen, trials=trials,
              seed=seed, target_models=target_models, wounds_left=wounds_left,
              allocation=allocation if "allocation" in given else None), fmt, explain, o.exact_unused(chosen, given))
