"""``mathhammer shoot WEAPON --target TARGET`` and ``mathhammer fight WEAPON --target TARGET``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..model import Allocation, CommandReroll, FtggWording, RulesVersion
from ..render import OutputFormat
from . import options as o
from ._io import (
    ExitCode,
    ascii_stdout,
    check_writable,
    emit_json_pieces,
    emit_view,
    handle_errors,
    open_output,
    save_view,
    warn,
)

if TYPE_CHECKING:
    from ..result import DamageResult

WeaponArg = Annotated[list[str], typer.Argument(
    metavar="WEAPON...",
    help=("One or more weapons, each a profile name (e.g. railgun), a unit (every ranged weapon of its loadout) or "
          "inline like 'A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS 1]', with an optional count: '2x heavy rail rifle'."),
)]
MeleeWeaponArg = Annotated[list[str], typer.Argument(
    metavar="WEAPON...",
    help=("One or more melee weapons, each a profile name (e.g. 'knight paladin/reaper chainsword - strike'), a unit "
          "(every melee weapon of its loadout) or inline like 'A4 WS3+ S6 AP-1 D2 [LANCE]', with an optional "
          "count: '5x A3 WS3+ S4 AP-1 D1'."),
)]


#: Command parameters by where they go: the run, the situation (Context flags), and the
#: modifiers that profiles may also carry (None = not given, so a profile value stands).
_RUN = ("trials", "seed", "threads", "target_models", "exact", "method", "wounds_left", "allocation", "only",
        "exclude", "svg", "html", "stages", "roster", "target_roster", "faction", "embarked")
_SHOOT_FLAGS = ("models", "cover", "half_range", "stationary", "not_visible", "overwatch", "charged", "command_reroll",
                "rules", "skill_floor", "crit_successful")
_FIGHT_FLAGS = ("models", "charged", "command_reroll", "rules", "skill_floor", "crit_successful")
#: The battle: army rules, detachment and stratagems (the effects layer).
_SHOOT_BATTLE = ("round", "detachment", "stratagem", "guided", "observer", "spotted", "markerlight", "range", "trap",
                 "ftgg")
_FIGHT_BATTLE = ("round", "detachment", "stratagem")
_MODIFIERS = ("hit_mod", "wound_mod", "save_mod", "damage_mod", "bs_improve", "ap_improve", "crit_hit", "crit_wound",
              "reroll_hits", "reroll_wounds", "reroll_damage", "reroll_saves")


def _pick(values: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {("firing_models" if n == "models" else n): values[n] for n in names}


def _attack(melee: bool, weapons: list[str], target: str, fmt: OutputFormat, explain: bool, run: dict[str, Any],
            flags: dict[str, Any], mods: dict[str, Any], battle: dict[str, Any], profiles: Any,
            typed: tuple[str, ...] = ()) -> None:
    """The shared body: resolve profiles, merge modifiers, analyse, render."""
    from ..api import build, libraries, run_attack
    from ..api import target as api_target
    from ..engine.montecarlo import check_trials, live_compile_status

    check_trials(run["trials"])
    method = o.chosen_method(run["exact"], run["method"])
    check_writable(svg=run["svg"], html=run["html"])  # before the work, not after it
    situation = {k: v for k, v in {**mods, **flags}.items() if k != "firing_models"}
    situation.update({k: v for k, v in battle.items() if v is not None})
    # the target is looked up in the library and --target-roster only (never the attacker's
    # roster or --faction)
    lib, aim_lib = libraries(profiles or (), rosters=run["roster"] or (), target_rosters=run["target_roster"] or (),
                             faction=run["faction"])
    aim = api_target(target, lib=aim_lib, target_models=run["target_models"], wounds_left=run["wounds_left"],
                     allocation=run["allocation"])
    attack = build(weapons, aim, melee=melee, models=flags["firing_models"], only=run["only"] or (),
                   exclude=run["exclude"] or (), embarked=run.get("embarked") or (), lib=lib, **situation)
    # said with the result's warnings (the JSON document's too), as other options that change nothing
    attack = replace(attack, notes=(*attack.notes, *o.exact_unused(method, typed)))
    with live_compile_status():  # a first-run compile counts its seconds on a terminal
        result = run_attack(attack, method=method, trials=run["trials"], seed=run["seed"], threads=run["threads"],
                            stages=run["stages"])
    for message in result.provenance["warnings"]:
        warn(message)
    _emit(result, fmt, explain, svg=run["svg"], html=run["html"])
    agreement = result.provenance.get("agreement")
    if agreement is not None and not agreement.agrees:
        raise typer.Exit(ExitCode.DISAGREE)


def _emit(result: DamageResult, fmt: OutputFormat, explain: bool, *, svg: Path | None, html: Path | None) -> None:
    """The result in ``fmt``; with ``--svg``/``--html`` also the table view saved as a picture
    (whatever the format: one run gives both the data and its picture)."""
    if fmt is OutputFormat.TABLE:
        from ..render.rich_view import result_view

        emit_view(result_view(result, explain=explain, ascii=ascii_stdout()), svg=svg, html=html)
        return
    from ..render import records

    if fmt is OutputFormat.JSON:
        from ..render.stream import whole_record

        with whole_record():  # Ctrl-C leaves the whole document or none of it
            emit_json_pieces(records.iter_json(result))
    else:
        with open_output(fmt, schema=records.SCHEMA, columns=records.result_columns()) as out:
            out.write(records.record(result))
    if svg is not None or html is not None:
        from ..render.rich_view import result_view

        save_view(result_view(result, explain=explain), svg=svg, html=html)


@handle_errors
def shoot(
    ctx: typer.Context,
    weapon: WeaponArg,
    target: o.TargetOpt,
    models: o.ModelsOpt = 1,
    target_models: o.TargetModelsOpt = None,
    only: o.OnlyOpt = None,
    exclude: o.ExceptOpt = None,
    wounds_left: o.WoundsLeftOpt = None,
    allocation: o.AllocationOpt = Allocation.DURABLE,
    trials: o.TrialsOpt = 1_000_000,
    seed: o.SeedOpt = None,
    fmt: o.FormatOpt = OutputFormat.TABLE,
    svg: o.SvgOpt = None,
    html: o.HtmlOpt = None,
    explain: o.ExplainOpt = False,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
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
    stages: o.StagesOpt = True,
    threads: o.ThreadsOpt = None,
    roster: o.RosterOpt = None,
    target_roster: o.TargetRosterOpt = None,
    faction: o.FactionOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """What do these ranged weapons do to that target? Mean, spread, histogram, models destroyed."""
    values = locals()
    _attack(False, weapon, target, fmt, explain, _pick(values, _RUN), _pick(values, _SHOOT_FLAGS),
            _pick(values, _MODIFIERS), _pick(values, _SHOOT_BATTLE), profiles, o.typed(ctx))


@handle_errors
def fight(
    ctx: typer.Context,
    weapon: MeleeWeaponArg,
    target: o.TargetOpt,
    models: o.ModelsOpt = 1,
    target_models: o.TargetModelsOpt = None,
    only: o.OnlyOpt = None,
    exclude: o.ExceptOpt = None,
    wounds_left: o.WoundsLeftOpt = None,
    allocation: o.AllocationOpt = Allocation.DURABLE,
    trials: o.TrialsOpt = 1_000_000,
    seed: o.SeedOpt = None,
    fmt: o.FormatOpt = OutputFormat.TABLE,
    svg: o.SvgOpt = None,
    html: o.HtmlOpt = None,
    explain: o.ExplainOpt = False,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
    charged: o.ChargedOpt = False,
    hit_mod: o.HitModOpt = None,
    wound_mod: o.WoundModOpt = None,
    save_mod: o.SaveModOpt = None,
    damage_mod: o.DamageModOpt = None,
    bs_improve: Annotated[int | None, typer.Option(
        "--ws-improve", "--bs-improve", click_type=o.WholeNumber(-o.MAX_ROLL_MOD, o.MAX_ROLL_MOD), metavar="N",
        help="Improve WS by N (characteristic change, not capped; negative worsens).",
    )] = None,
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
    stages: o.StagesOpt = True,
    threads: o.ThreadsOpt = None,
    roster: o.RosterOpt = None,
    target_roster: o.TargetRosterOpt = None,
    faction: o.FactionOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """What do these melee weapons do to that target? WS, no cover, ranged-only invulnerable saves ignored."""
    values = locals()
    run = {**_pick(values, tuple(n for n in _RUN if n != "embarked")), "embarked": None}
    _attack(True, weapon, target, fmt, explain, run, _pick(values, _FIGHT_FLAGS),
            _pick(values, _MODIFIERS), _pick(values, _FIGHT_BATTLE), profiles, o.typed(ctx))
