"""The table view of a Tank Shock or Deadly Demise result (:mod:`mathhammer.events`), as rich
renderables, in the style of :mod:`.rich_view` (whose histogram and stat lines it uses). With
``ascii=True`` every string is plain ASCII."""

from __future__ import annotations

import numpy as np
from rich.console import Group, RenderableType
from rich.text import Text

from .. import describe
from ..events import EventResult, TargetOutcome
from ..result import Distribution
from .ascii import to_ascii
from .rich_view import Glyphs, _indented, _pct, _plain_table, _same, _sd, _stats_line, _value, histogram

__all__ = ["event_view"]


def _outcome_lines(o: TargetOutcome, g: Glyphs, *, mortal: bool) -> list[RenderableType]:
    """One target: its mortal wounds (when ``mortal``), wounds lost, models destroyed."""
    lines: list[RenderableType] = []
    if mortal:
        lines += [_stats_line(o.mortal_wounds, "Mortal wounds", g), histogram(o.mortal_wounds, "mortal", g), Text("")]
    lines.append(_stats_line(o.damage, "Wounds lost", g))
    if not _same_distribution(o.damage, o.mortal_wounds):  # Feel No Pain, or wounds lost with the unit
        lines.append(histogram(o.damage, "wounds", g))
    lines.append(Text(""))
    if any(t.wounds is None for t in o.target.groups):
        return lines
    if o.target.models > 1:
        lines += [_stats_line(o.models_destroyed, f"Models destroyed (of {o.target.models})", g),
                  histogram(o.models_destroyed, "models", g)]
    p = Text("P(destroy unit): ", style="bold")
    p.append(_pct(o.p_destroy_unit()), style="bold red")
    lines += [p, Text("")]
    if len(o.groups) > 1:
        names = [r.name + (" (Leader)" if r.leader else "") for r in o.groups]
        table = _plain_table("By model group (allocation order)",
                             ("group", "models", "destroyed", "sd", "median", "5–95%", "P(destroyed)"), names, g)
        for name, r in zip(names, o.groups, strict=True):
            d = r.models_destroyed
            table.add_row(g(name), str(r.models), f"{d.mean():.3f}", _sd(d), _value(d, 0.5, g),
                          f"{_value(d, 0.05, g)}{g('–')}{_value(d, 0.95, g)}", _pct(r.p_destroyed()))
        lines += [table, Text("")]
    return lines


def _same_distribution(a: Distribution, b: Distribution) -> bool:
    """The same distribution up to float rounding (the exact engine sums in another order)."""
    pa, pb = a.probabilities, b.probabilities
    return pa.size == pb.size and bool(np.allclose(pa, pb, rtol=0, atol=1e-12))


def _target_head(o: TargetOutcome, g: Glyphs) -> list[RenderableType]:
    return [_indented(g(f"target: {line}")) for line in describe.unit_line(o.target)]


def _tank_shock(result: EventResult, g: Glyphs) -> list[RenderableType]:
    v = result.source
    o = result.targets[0]
    head = Text()
    head.append("Tank Shock: ", style="bold")
    head.append(g(v["unit"] or f"a T{v['T']} VEHICLE"), style="bold")
    head.append(g("  →  "))
    head.append(g(o.target.name), style="bold")
    model = v["model"] or "a VEHICLE model"
    lines: list[RenderableType] = [
        head, _indented(g(f"vehicle: {model}, T{v['T']}: {v['T']} D6, each 5+ one mortal wound, at most 6")),
        *_target_head(o, g)]
    used = result.stratagems
    if used:
        names = ", ".join(f"{u['name']} ({u['cp']} CP)" for u in used)
        lines.append(_indented(g(f"stratagems: {names}; {sum(u['cp'] for u in used)} CP in all"), "yellow"))
    return [*lines, Text(""), *_outcome_lines(o, g, mortal=True)]


def _deadly_demise(result: EventResult, g: Glyphs) -> list[RenderableType]:
    u = result.source
    n = u["destroyed"]
    head = Text()
    if u["name"]:
        head.append("Deadly Demise: ", style="bold")
        head.append(g(u["name"]), style="bold")
        head.append(g(f" ({u['deadly_demise']}), {n} of {u['models']} model{'s' if u['models'] > 1 else ''} "
                      "destroyed"))
    else:
        head.append(g(f"Deadly Demise {u['deadly_demise']}"), style="bold")
        head.append(g(f": {n} model{'s' if n > 1 else ''} destroyed"))
    lines: list[RenderableType] = [head]
    p = Text("P(at least one explodes): ", style="bold")
    p.append(_pct(result.p_explode or 0.0), style="bold red")
    lines += [Text(""), p]
    if n > 1 and result.explosions is not None:
        lines += [_stats_line(result.explosions, "Models exploding", g), histogram(result.explosions, "models", g)]
    lines += [Text(""), _stats_line(result.mortal_wounds, "Mortal wounds on each unit within 6\"", g),
              histogram(result.mortal_wounds, "mortal", g), Text("")]
    for o in result.targets:
        lines += [Text(g(f"→ {o.target.name}"), style="bold"), *_target_head(o, g), Text(""),
                  *_outcome_lines(o, g, mortal=False)]
    if len(result.targets) > 1:
        table = _plain_table("By target (means)", ("target", "mortal", "wounds", "destroyed", "P(destroyed)"),
                             [o.target.name for o in result.targets], g)
        for o in result.targets:
            table.add_row(g(o.target.name), f"{o.mortal_wounds.mean():.3f}", f"{o.damage.mean():.3f}",
                          f"{o.models_destroyed.mean():.3f}", _pct(o.p_destroy_unit()))
        lines += [table, Text("")]
    return lines


def _check_lines(result: EventResult, g: Glyphs) -> list[RenderableType]:
    mc, agreement = result.monte_carlo, result.agreement
    if mc is None or agreement is None:
        return []
    line = Text("Monte Carlo check: ", style="bold")
    sem = mc.mortal_wounds.sem()
    spread = "" if sem is None else f" ± {sem:.3f}"
    line.append(g(f"mortal wounds {mc.mortal_wounds.mean():.3f}{spread} ({mc.trials:,} trials, seed {mc.seed}, "
                  f"{mc.seconds:.2f} s)"))
    return [line, Text(g(agreement.line()), style="green" if agreement.agrees else "bold red"), Text("")]


def event_view(result: EventResult, *, explain: bool = False, ascii: bool = False) -> RenderableType:
    """Everything the table format shows, top to bottom (with ``explain``, every rule applied;
    with ``ascii``, plain ASCII only)."""
    g: Glyphs = to_ascii if ascii else _same
    lines = _tank_shock(result, g) if result.event == "tank-shock" else _deadly_demise(result, g)
    lines += _check_lines(result, g)
    if explain:
        lines.append(Text("Explain", style="bold"))
        lines += [_indented(g(line)) for line in result.explain]
        lines.append(Text(""))
    if result.method == "monte-carlo":
        trials = "1 trial" if result.trials == 1 else f"{result.trials:,} trials"
        foot = f"monte-carlo: {trials}, seed {result.seed}, {result.seconds:.2f} s"
    else:
        foot = f"{result.method}: {result.seconds * 1000:.2f} ms"
    lines.append(Text(g(foot), style="dim"))
    return Group(*lines)
