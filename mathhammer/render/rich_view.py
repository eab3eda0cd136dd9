"""The table view of a result, as rich renderables."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import describe
from ..result import DamageResult, Distribution

__all__ = ["result_view"]

_MAX_ROWS = 30
_BAR = 40


def _pct(p: float) -> str:
    if p == 0:
        return "0%"
    if p >= 0.9995 and p < 1:
        return ">99.9%"
    if p < 0.0005:
        return "<0.1%"
    return f"{100 * p:.1f}%"


def _bins(dist: Distribution) -> list[tuple[int, int]]:
    """Value ranges shown as histogram rows: one per value (runs of impossible or never-seen
    values merged into one row), or equal-width bins when that is more than _MAX_ROWS rows."""
    p = dist.probabilities
    rows: list[tuple[int, int]] = []
    for k in range(p.size):
        if rows and p[k] == 0 and p[rows[-1][1]] == 0:
            rows[-1] = (rows[-1][0], k)
        else:
            rows.append((k, k))
    if len(rows) <= _MAX_ROWS:
        return rows
    width = -(-p.size // _MAX_ROWS)
    return [(lo, min(p.size - 1, lo + width - 1)) for lo in range(0, p.size, width)]


def histogram(dist: Distribution, label: str) -> Table:
    """Horizontal bars with P(=k) and P(>=k) per row."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column(label, justify="right")
    table.add_column("", min_width=_BAR, no_wrap=True)
    table.add_column("P(=k)", justify="right")
    table.add_column("P(≥k)", justify="right")
    rows = _bins(dist)
    probs = [float(dist.probabilities[lo:hi + 1].sum()) for lo, hi in rows]
    top = max(probs) or 1.0
    for (lo, hi), p in zip(rows, probs):
        bar = "█" * round(_BAR * p / top)
        if not bar and p > 0:
            bar = "▏"
        key = str(lo) if lo == hi else f"{lo}–{hi}"
        table.add_row(key, Text(bar, style="cyan"), _pct(p), _pct(dist.p_at_least(lo)))
    return table


def _stats_line(d: Distribution, what: str) -> Text:
    text = Text()
    text.append(f"{what}: ", style="bold")
    text.append(f"{d.mean():.3f}", style="bold green")
    if d.trials is not None:
        text.append(f" ± {d.sem():.3f} (s.e.)")
    text.append(f"   sd {d.sd():.3f}   median {d.quantile(0.5)}   5–95%: {d.quantile(0.05)}–{d.quantile(0.95)}")
    return text


_STAGE_LABELS = {
    "attacks": "attacks", "hits": "hits", "critical_hits": "  of them critical", "wounds": "wounds",
    "critical_wounds": "  critical wounds", "lethal": "  lethal auto-wounds", "devastating": "  devastating",
    "unsaved": "unsaved (failed saves)", "damage_before_fnp": "damage before Feel No Pain",
    "damage_after_fnp": "damage after Feel No Pain",
}


def stages_table(result: DamageResult) -> Table:
    """The per-stage breakdown: expected value and spread of each count."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", title="Stage by stage",
                  title_justify="left", title_style="bold")
    for col, just in (("", "left"), ("mean", "right"), ("sd", "right"), ("median", "right"), ("5–95%", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    plan = result.provenance.get("thresholds", {})
    skip = {"critical_hits"} if plan.get("hit", {}).get("automatic", True) else set()
    for name, label in _STAGE_LABELS.items():
        d = result.stages.get(name)
        if d is None or (name in skip) or (name in ("lethal", "devastating") and d.mean() == 0):
            continue
        if name == "damage_after_fnp" and not plan.get("damage", {}).get("feel_no_pain"):
            continue
        table.add_row(label, f"{d.mean():.3f}", f"{d.sd():.3f}", str(d.quantile(0.5)),
                      f"{d.quantile(0.05)}–{d.quantile(0.95)}")
    d = result.damage
    table.add_row("wounds lost (after allocation)", f"{d.mean():.3f}", f"{d.sd():.3f}", str(d.quantile(0.5)),
                  f"{d.quantile(0.05)}–{d.quantile(0.95)}")
    return table


def _hazard_lines(result: DamageResult) -> list[RenderableType]:
    if result.hazardous is None:
        return []
    h = result.hazardous
    text = Text("Hazardous: ", style="bold")
    text.append(f"wounds lost by the attacking unit {h.mean():.3f} on average, P(any) {_pct(h.p_at_least(1))}")
    lines: list[RenderableType] = [text]
    if result.hazard_models is not None and result.provenance.get("attacker_known"):
        lines.append(Text(f"  P(the attacking unit loses a model): {_pct(result.hazard_models.p_at_least(1))}"))
    return lines + [Text("")]


def result_view(result: DamageResult, *, explain: bool = False) -> RenderableType:
    """Everything the table format shows, top to bottom (with ``explain``, every rule applied)."""
    prov: dict[str, Any] = result.provenance
    m = prov["matchup"]
    head = Text()
    who = f"{m.weapon.name}" + (f" ({m.weapon.unit})" if m.weapon.unit else "")
    head.append(who, style="bold")
    head.append(f" ×{m.context.firing_models}  {'⚔' if m.context.melee else '→'}  ")
    head.append(m.target.name, style="bold")
    lines: list[RenderableType] = [
        head,
        Padding(Text(f"weapon: {describe.weapon_line(m.weapon)}"), (0, 0, 0, 2), expand=False),
        Padding(Text(f"target: {describe.target_line(m.target)}"), (0, 0, 0, 2), expand=False),
        Padding(Text(prov["thresholds"]["summary"], style="yellow"), (0, 0, 0, 2), expand=False),
        Text(""),
        _stats_line(result.damage, "Damage (wounds lost)"),
        histogram(result.damage, "damage"),
        Text(""),
    ]
    if m.target.wounds:
        md = result.models_destroyed
        if result.target_models > 1:
            lines.append(_stats_line(md, f"Models destroyed (of {result.target_models})"))
            lines.append(histogram(md, "models"))
        p = Text("P(destroy unit): ", style="bold")
        p.append(_pct(result.p_destroy_unit()), style="bold red")
        lines.append(p)
        lines.append(Text(""))
    mc = prov.get("monte_carlo")
    if mc is not None:
        agreement = prov["agreement"]
        line = Text("Monte Carlo check: ", style="bold")
        line.append(f"damage {mc.damage.mean():.3f} ± {mc.damage.sem():.3f}, P(destroy unit) {_pct(mc.p_destroy_unit())} "
                    f"({mc.trials:,} trials, seed {mc.seed}, {mc.seconds:.2f} s)")
        lines += [line, Text(agreement.line(), style="green" if agreement.agrees else "bold red"), Text("")]
    if result.stages:
        lines += [stages_table(result), Text("")]
    lines += _hazard_lines(result)
    if explain:
        lines.append(Text("Explain", style="bold"))
        lines += [Padding(Text(line), (0, 0, 0, 2), expand=False) for line in prov.get("explain", [])]
        lines.append(Text(""))
    if result.method == "monte-carlo":
        foot = f"monte-carlo: {result.trials:,} trials, seed {result.seed}, {result.seconds:.2f} s"
    else:
        foot = f"exact: {result.seconds * 1000:.2f} ms"
    lines.append(Text(foot + f" · rules: {prov.get('rules', 'current')}", style="dim"))
    return Group(*lines)
