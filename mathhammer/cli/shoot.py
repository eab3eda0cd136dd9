"""``mathhammer shoot WEAPON --target TARGET``."""

from __future__ import annotations

from typing import Annotated

import typer

from ..model import Context, Matchup, RerollPolicy, RulesVersion
from ..render import OutputFormat
from . import options as o
from ._io import emit_json, emit_view, handle_errors, warn


@handle_errors
def shoot(
    weapon: Annotated[str, typer.Argument(help="Weapon: a profile name (e.g. railgun), a unit with one ranged weapon, or inline like 'A2 BS3+ S4 AP-1 D1 [SUSTAINED HITS 1]'.")],
    target: o.TargetOpt,
    models: o.ModelsOpt = 1,
    target_models: o.TargetModelsOpt = None,
    trials: o.TrialsOpt = 1_000_000,
    seed: o.SeedOpt = None,
    fmt: o.FormatOpt = OutputFormat.TABLE,
    cover: o.CoverOpt = False,
    hit_mod: o.HitModOpt = 0,
    wound_mod: o.WoundModOpt = 0,
    save_mod: o.SaveModOpt = 0,
    reroll_hits: o.RerollHitsOpt = RerollPolicy.NONE,
    reroll_wounds: o.RerollWoundsOpt = RerollPolicy.NONE,
    rules: o.RulesOpt = RulesVersion.CURRENT,
    threads: o.ThreadsOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """What does this weapon do to that target? Mean, spread, histogram, models destroyed."""
    from ..engine import analyse
    from ..engine.montecarlo import check_trials
    from ..profiles import load_library
    from ..resolve import resolve_target, resolve_weapon

    check_trials(trials)
    lib = load_library(profiles or ())
    w, unit = resolve_weapon(lib, weapon)
    t, notes = resolve_target(lib, target, models=target_models)
    ctx = Context(firing_models=models, cover=cover, hit_mod=hit_mod, wound_mod=wound_mod, save_mod=save_mod,
                  reroll_hits=reroll_hits, reroll_wounds=reroll_wounds, rules=rules)
    result = analyse(Matchup(weapon=w, target=t, context=ctx, attacker=unit), trials=trials, seed=seed,
                     threads=threads, notes=notes)
    for message in result.provenance["warnings"]:
        warn(message)
    if fmt is OutputFormat.JSON:
        from ..render.records import to_json

        emit_json(to_json(result))
    else:
        from ..render.rich_view import result_view

        emit_view(result_view(result))
