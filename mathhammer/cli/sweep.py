"""``mathhammer sweep WEAPON... [--toughness 1-14] [--save 2-7] [--metric mean]``: one attack
against every Toughness x Save, as a heat map or one record per cell."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..choices import DEFAULT_SAVES, DEFAULT_TOUGHNESS, DEFAULT_TRIALS, Metric
from ..limits import MAX_ATTACKING_MODELS, MAX_TARGET_MODELS, MAX_TRIALS, MAX_WOUNDS
from ..model import CommandReroll, FtggWording, Method, RulesVersion
from ..render import OutputFormat
from . import options as o
from ._heap import release_freed_memory
from ._io import (
    ExitCode,
    ascii_stdout,
    check_writable,
    emit_view,
    handle_errors,
    open_output,
    progress,
    save_view,
    warn,
)
from .shoot import WeaponArg

ToughnessOpt = Annotated[str, typer.Option(
    "--toughness", "-T", metavar="RANGE",
    help="Toughness values: a range '3-12', one value '4' or a list '3,5,8' (mixed: '1-3,8'); 1 to 100.",
)]
SaveOpt = Annotated[str, typer.Option(
    "--save", "-S", metavar="RANGE",
    help="Save values, like --toughness: '2-6', '3', '2,4,-'; 2 to 7, where 7 or '-' is no armour save.",
)]
InvulnOpt = Annotated[int | None, typer.Option(
    "--invuln", click_type=o.WholeNumber(2, 6), metavar="N",
    help="Every target has an N+ invulnerable save (4 for 4+).",
)]
FnpOpt = Annotated[int | None, typer.Option(
    "--fnp", click_type=o.WholeNumber(2, 6), metavar="N",
    help="Every target has an N+ Feel No Pain.",
)]
WoundsOpt = Annotated[int | None, typer.Option(
    "--wounds", "-W", click_type=o.WholeNumber(1, MAX_WOUNDS), metavar="W",
    help=("Wounds of each target model (default: the most the attack can deal, so that no damage is lost; "
          "the metrics other than mean need it)."),
)]
TargetModelsOpt = Annotated[int, typer.Option(
    "--models", click_type=o.WholeNumber(1, MAX_TARGET_MODELS), metavar="N",
    help="Models in each TARGET unit (the attacking models are --firing-models).",
)]
FiringModelsOpt = Annotated[int, typer.Option(
    "--firing-models", "-n", click_type=o.WholeNumber(None, MAX_ATTACKING_MODELS), metavar="N",
    help="Models attacking with the weapons (shoot's --models; multiplies every weapon's count).",
)]
KeywordOpt = Annotated[list[str] | None, typer.Option(
    "--keyword", metavar="WORD",
    help="A keyword or ability every target has: VEHICLE, INFANTRY, STEALTH... (repeatable).",
)]
MetricOpt = Annotated[Metric, typer.Option(
    "--metric", case_sensitive=False,
    help=("What the heat map shows: mean (damage), p-kill-model (P(at least one model destroyed)), models (mean "
          "destroyed) or p-destroy (P(unit destroyed)). Records carry all of them."),
)]
MeleeOpt = Annotated[bool, typer.Option(
    "--melee", help="Fight with melee weapons (as 'mathhammer fight'): WS, no shooting situations.",
)]
SweepTrialsOpt = Annotated[int, typer.Option(
    "--trials", click_type=o.WholeNumber(1, MAX_TRIALS), metavar="N",
    help=f"Monte Carlo trials per cell (default {DEFAULT_TRIALS:,}).",
)]

def _situation(values: dict[str, Any]) -> dict[str, Any]:
    """The situation, modifier and battle keywords for mathhammer.api.build (it refuses a
    shooting situation set for a melee sweep), by their parameter names."""
    from ..api import BATTLE, SITUATION

    return {**{k: values[k] for k in SITUATION}, **{k: values[k] for k in BATTLE},
            "embarked": tuple(values["embarked"] or ())}


def _cells(plan: Any, fmt: OutputFormat, jobs: int | None) -> list[Any]:
    """Run the cells (a progress bar on a terminal), streaming records for json, ndjson and
    csv; the cells, in grid order."""
    from ..render.records import rows_pieces
    from ..sweep import COLUMNS, SCHEMA, iter_cells, record

    cells = []
    with progress(len(plan.tasks), "sweep") as advance:
        if fmt is OutputFormat.TABLE:
            for cell in iter_cells(plan, jobs=jobs):
                advance()
                cells.append(cell.without_result())  # the table shows values only
                release_freed_memory()  # what the results before this one freed
            return cells
        with open_output(fmt, schema=SCHEMA, columns=COLUMNS) as out:
            for cell in iter_cells(plan, jobs=jobs):
                advance()
                out.write(record(plan, cell, rows_pieces))  # each distribution as its JSON text (blocks)
                cells.append(cell.without_result())  # written: its distributions are not kept
                release_freed_memory()
    return cells


@handle_errors
def sweep(
    ctx: typer.Context,
    weapon: WeaponArg,
    toughness: ToughnessOpt = DEFAULT_TOUGHNESS,
    save: SaveOpt = DEFAULT_SAVES,
    invuln: InvulnOpt = None,
    fnp: FnpOpt = None,
    wounds: WoundsOpt = None,
    models: TargetModelsOpt = 1,
    keyword: KeywordOpt = None,
    metric: MetricOpt = Metric.MEAN,
    firing_models: FiringModelsOpt = 1,
    melee: MeleeOpt = False,
    only: o.OnlyOpt = None,
    exclude: o.ExceptOpt = None,
    trials: SweepTrialsOpt = DEFAULT_TRIALS,
    seed: o.SeedOpt = None,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
    fmt: o.FormatOpt = OutputFormat.TABLE,
    svg: o.SvgOpt = None,
    html: o.HtmlOpt = None,
    cover: o.CoverOpt = False,
    half_range: o.HalfRangeOpt = False,
    stationary: o.StationaryOpt = False,
    not_visible: o.NotVisibleOpt = False,
    overwatch: o.OverwatchOpt = False,
    charged: o.ChargedOpt = False,
    hit_mod: o.HitModOpt = None,
    wound_mod: o.WoundModOpt = None,
    save_mod: o.SaveModOpt = None,
    damage_mod: o.DamageModOpt = None,
    bs_improve: o.BsImproveOpt = None,
    ap_improve: o.ApImproveOpt = None,
    crit_hit: o.CritHitOpt = None,
    crit_wound: o.CritWoundOpt = None,
    reroll_hits: o.RerollHitsOpt = None,
    reroll_wounds: o.RerollWoundsOpt = None,
    reroll_damage: o.RerollDamageOpt = None,
    reroll_saves: o.RerollSavesOpt = None,
    command_reroll: o.CommandRerollOpt = CommandReroll.NONE,
    rules: o.RulesOpt = RulesVersion.CURRENT,
    skill_floor: o.SkillFloorOpt = 0,
    crit_successful: o.CritSuccessfulOpt = False,
    detachment: o.DetachmentOpt = None,
    round: o.RoundOpt = None,  # noqa: A002 - the option's name
    stratagem: o.StratagemOpt = None,
    guided: o.GuidedOpt = False,
    observer: o.ObserverOpt = False,
    spotted: o.SpottedOpt = True,
    markerlight: o.MarkerlightOpt = False,
    range: o.RangeOpt = None,  # noqa: A002 - the option's name
    trap: o.TrapOpt = False,
    ftgg: o.FtggOpt = FtggWording.INDEX,
    embarked: o.EmbarkedOpt = None,
    jobs: o.JobsOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """How do these weapons fare against every Toughness x Save? A heat map, or one record per cell."""
    from ..api import library
    from ..engine.montecarlo import live_compile_status
    from ..sweep import Sweep, plan_sweep, warnings_of

    values = locals()
    check_writable(svg=svg, html=html)  # before the work, not after it
    chosen: Method = o.chosen_method(exact, method)
    plan = plan_sweep(weapon, toughness=toughness, save=save, invulnerable=invuln, feel_no_pain=fnp, wounds=wounds,
                      models=models, keywords=keyword or (), metric=metric, method=chosen, trials=trials, seed=seed,
                      melee=melee, firing_models=firing_models, only=only or (), exclude=exclude or (),
                      lib=library(profiles or ()), **_situation(values))
    with live_compile_status():
        cells = _cells(plan, fmt, jobs)
    for message in (*warnings_of(cells), *o.exact_unused(chosen, o.typed(ctx))):
        warn(message)
    if fmt is OutputFormat.TABLE or svg is not None or html is not None:
        from ..render.heatmap import heatmap_view

        if fmt is OutputFormat.TABLE:
            emit_view(heatmap_view(Sweep(plan=plan, cells=tuple(cells)), ascii=ascii_stdout()), svg=svg, html=html)
        else:  # the records on stdout, and the picture of the heat map they make
            save_view(heatmap_view(Sweep(plan=plan, cells=tuple(cells))), svg=svg, html=html)
    disagree = [c for c in cells if c.agrees is False]
    if disagree:
        warn(f"Monte Carlo and exact disagree in {len(disagree)} cell(s), first at {disagree[0].target!r}")
        raise typer.Exit(ExitCode.DISAGREE)
