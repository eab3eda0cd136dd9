"""The heat map of a sweep: one row per Toughness, one column per Save, each cell coloured by
its value (a viridis-like scale: dark for little, yellow for much).

Probabilities are coloured on the fixed scale 0 to 100%; means from 0 to the largest value
in the grid (the legend says which). Without colour (piped, ``NO_COLOR``) the numbers alone
remain, in the same layout. With ``ascii=True`` every string is plain ASCII.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich import box
from rich.color import Color
from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from ..sweep import NO_SAVE, Cell, Metric, Sweep, save_label
from .ascii import to_ascii

__all__ = ["heatmap_view", "scale_colour"]

#: Colour stops from low to high (viridis' ends and three points between): readable on dark
#: and light terminals, and still ordered for the colour-blind.
_STOPS: tuple[tuple[int, int, int], ...] = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
_SWATCHES = 10


def scale_colour(x: float) -> tuple[int, int, int]:
    """The RGB colour of ``x`` in [0, 1] (clamped) on the scale."""
    x = min(1.0, max(0.0, x)) if x == x else 0.0
    pos = x * (len(_STOPS) - 1)
    i = min(int(pos), len(_STOPS) - 2)
    f = pos - i
    a, b = _STOPS[i], _STOPS[i + 1]
    r, g, bl = (round(a[k] + (b[k] - a[k]) * f) for k in range(3))
    return r, g, bl


def _style(x: float) -> Style:
    """The cell's background by value, and a foreground that stays readable on it."""
    r, g, b = scale_colour(x)
    light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 140
    return Style(color="black" if light else "white", bgcolor=Color.from_rgb(r, g, b))


def _text(value: float, metric: Metric) -> str:
    """A cell's number: a percentage for probabilities, else two decimals."""
    if not metric.probability:
        return f"{value:.2f}"
    if value == 0:
        return "0%"
    if value < 0.0005:
        return "<0.1%"
    if 0.9995 <= value < 1:
        return ">99.9%"
    return "100%" if value >= 1 else f"{100 * value:.1f}%"


def _top(cells: Sequence[Cell], metric: Metric) -> float:
    """The value coloured brightest: 1 for a probability, else the grid's largest (1 if none)."""
    if metric.probability:
        return 1.0
    return max((c.value for c in cells), default=0.0) or 1.0


def _target_line(sweep: Sweep) -> str:
    grid = sweep.plan.grid
    text = f"each target: {grid.models} model{'s' if grid.models != 1 else ''} of W{grid.wounds}"
    if not grid.wounds_given:
        text += " (the most this attack can deal: no damage is lost)"
    if grid.invulnerable is not None:
        text += f", {grid.invulnerable}+ invulnerable"
    if grid.feel_no_pain is not None:
        text += f", {grid.feel_no_pain}+ Feel No Pain"
    if grid.keywords:
        text += f" [{', '.join(grid.keywords)}]"
    return text


def _method_line(sweep: Sweep) -> str:
    plan = sweep.plan
    if plan.method.value == "exact":
        return "exact distributions"
    sems = [c.sem for c in sweep.cells if c.sem is not None]
    text = f"{plan.method.value}: {plan.trials:,} trials per cell, sweep seed {plan.seed} (each cell derives its own)"
    if sems and plan.method.value == "monte-carlo":
        worst = max(sems)
        text += f"; largest s.e. {100 * worst:.2f}%" if plan.metric.probability else f"; largest s.e. {worst:.3f}"
    return text


def _legend(top: float, metric: Metric, g: Callable[[str], str]) -> Text:
    text = Text(g(f"{metric.label}: "))
    text.append(_text(0.0, metric) + " ")
    for k in range(_SWATCHES):
        text.append("  ", style=_style(k / (_SWATCHES - 1)))
    text.append(" " + _text(top, metric))
    return text


def heatmap_view(sweep: Sweep, *, ascii: bool = False) -> RenderableType:
    """The sweep as a titled Toughness x Save table of coloured cells, with its legend."""
    g: Callable[[str], str] = to_ascii if ascii else (lambda s: s)
    plan, grid = sweep.plan, sweep.plan.grid
    top = _top(sweep.cells, plan.metric)
    title = Text(g(f"{' & '.join(plan.weapons)}{' (melee)' if plan.melee else ''} → Toughness × Save: "
                   f"{plan.metric.label}"), style="bold")
    table = Table(box=box.ASCII if ascii else box.SIMPLE_HEAD, pad_edge=False, header_style="bold",
                  show_edge=False)
    table.add_column("", justify="right", no_wrap=True)
    for sv in grid.saves:
        table.add_column(save_label(sv) if sv != NO_SAVE else g("no save"), justify="right", no_wrap=True)
    width = len(grid.saves)
    for i, t in enumerate(grid.toughness):
        row = sweep.cells[i * width:(i + 1) * width]
        table.add_row(f"T{t}", *(Text(f" {_text(c.value, plan.metric)} ", style=_style(c.value / top)) for c in row))
    return Group(title, Text(g(_target_line(sweep))), Text(g(_method_line(sweep))), Text(""), table, Text(""),
                 _legend(top, plan.metric, g))
