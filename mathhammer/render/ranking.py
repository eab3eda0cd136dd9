"""The ranking tables of ``compare``: one per target, from ``mathhammer.compare/1`` records.

Each row shows mean damage, models destroyed, P(destroy unit), damage and models destroyed per
100 points, and how far it is behind the best row in standard errors of the difference (Monte
Carlo) or "exact" (exact runs have no sampling error: the order is the order). The sorted
figure is coloured from green (the best) through yellow to red (a small fraction of it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..choices import SortKey
from .ascii import to_ascii

__all__ = ["SortKey", "order", "ranking_view", "sort_value"]


_LABEL_WIDTH = 32
_TITLES = {SortKey.MEAN: "mean damage", SortKey.PER_POINTS: "damage per 100 points",
           SortKey.P_DESTROY: "P(destroy unit)", SortKey.MODELS: "models destroyed"}


def sort_value(record: Mapping[str, Any], key: SortKey) -> tuple[float | None, float | None]:
    """The figure ``key`` ranks ``record`` by and its standard error (None for an exact run;
    the figure is None when the row has no points to divide by)."""
    exact = record["trials"] is None or record["method"] != "monte-carlo"
    if key is SortKey.MEAN:
        value, se = record["damage"]["mean"], record["damage"]["sem"]
    elif key is SortKey.MODELS:
        value, se = record["models_destroyed"]["mean"], record["models_destroyed"]["sem"]
    elif key is SortKey.P_DESTROY:
        value = record["p_destroy_unit"]
        se = math.sqrt(value * (1 - value) / record["trials"]) if not exact else None
    else:
        per, points = record["per_100_points"], record["points"]
        if per is None:
            return None, None
        value, se = per["damage"], (100 * record["damage"]["sem"] / points if not exact else None)
    return value, (None if exact else se)


def order(records: Sequence[Mapping[str, Any]], key: SortKey) -> list[Mapping[str, Any]]:
    """``records`` best first by ``key``; rows without the figure (no points) last; ties by
    row number, so the order never depends on the order the records arrived in."""
    def rank_key(r: Mapping[str, Any]) -> tuple[int, float, int]:
        value, _ = sort_value(r, key)
        return (1, 0.0, r["row"]) if value is None else (0, -value, r["row"])

    return sorted(records, key=rank_key)


def _gap(value: float | None, se: float | None, best: float | None, best_se: float | None, first: bool) -> str:
    """How far ``value`` is behind ``best``: in standard errors of the difference, "exact"
    when neither has sampling error."""
    if first:
        return "best"
    if value is None or best is None:
        return ""
    if se is None and best_se is None:
        return "exact"
    spread = math.hypot(se or 0.0, best_se or 0.0)
    diff = best - value
    if spread == 0:
        return "0.0" if diff == 0 else "∞"
    return f"{diff / spread:.1f}"


def _colour(value: float | None, best: float | None) -> str:
    """Green for the best, through yellow, to red at none of it."""
    if value is None or not best or best <= 0:
        return ""
    share = max(0.0, min(1.0, value / best))
    red, green = (255, int(510 * share)) if share < 0.5 else (int(255 * 2 * (1 - share)), 255)
    return f"rgb({red},{min(green, 255)},60)"


def _num(x: float | None, digits: int = 2) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _pct(p: float) -> str:
    if p == 0:
        return "0%"
    if 0.9995 <= p < 1:
        return ">99.9%"
    if p < 0.0005:
        return "<0.1%"
    return f"{100 * p:.1f}%"


def _points(p: float | None) -> str:
    return "" if p is None else (f"{p:g}")


def _table(target: str, records: Sequence[Mapping[str, Any]], key: SortKey, ascii: bool) -> Table:
    g = to_ascii if ascii else (lambda s: s)
    ranked = order(records, key)
    best, best_se = sort_value(ranked[0], key) if ranked else (None, None)
    name = ranked[0]["target_name"] if ranked else target
    title = f"vs {name}" + (f" ({target})" if target.lower() != str(name).lower() else "")
    table = Table(title=g(title), title_justify="left", title_style="bold", header_style="bold",
                  caption=g(f"sorted by {_TITLES[key]}; gap: behind the best, in standard errors"),
                  caption_justify="left", caption_style="dim")
    # a label wraps only past 32 characters: the table stays readable on an 80-column terminal
    label_width = min(max((len(str(r["label"])) for r in ranked), default=7), _LABEL_WIDTH)
    for header, justify in (("#", "right"), ("loadout", "left"), ("pts", "right"), ("damage", "right"),
                            ("models", "right"), ("P(destroy)", "right"), ("dmg/100pts", "right"),
                            ("models/100pts", "right"), ("gap", "right")):
        table.add_column(header, justify=justify, no_wrap=header != "loadout",  # type: ignore[arg-type]
                         min_width=label_width if header == "loadout" else None)
    sorted_column = {SortKey.MEAN: 3, SortKey.MODELS: 4, SortKey.P_DESTROY: 5, SortKey.PER_POINTS: 6}[key]
    for rank, r in enumerate(ranked, start=1):
        value, se = sort_value(r, key)
        per = r["per_100_points"] or {}
        cells: list[str | Text] = [
            str(rank), g(r["label"]), _points(r["points"]), _num(r["damage"]["mean"]),
            _num(r["models_destroyed"]["mean"]), _pct(r["p_destroy_unit"]), _num(per.get("damage")),
            _num(per.get("models_destroyed"), 3), g(_gap(value, se, best, best_se, rank == 1)),
        ]
        cells[sorted_column] = Text(str(cells[sorted_column]), style=_colour(value, best))
        table.add_row(*cells)
    return table


def ranking_view(records: Sequence[Mapping[str, Any]], key: SortKey = SortKey.MEAN, *,
                 targets: Sequence[str] = (), ascii: bool = False, footer: str = "") -> RenderableType:
    """A ranking table per target (in ``targets`` order, then any other target the records
    name), and ``footer`` (method, trials, seed) under them."""
    by_target: dict[str, list[Mapping[str, Any]]] = {t: [] for t in targets}
    for r in records:
        by_target.setdefault(r["target"], []).append(r)
    parts: list[RenderableType] = [_table(t, rs, key, ascii) for t, rs in by_target.items() if rs]
    if footer:
        parts.append(Text(to_ascii(footer) if ascii else footer, style="dim"))
    return Group(*parts)
