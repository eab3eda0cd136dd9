"""The table view of a result, as rich renderables.

Numbers are never cut: number columns do not wrap, the histogram's bars take only the width
left over, and ``cli._io`` never renders narrower than the view's minimum width. With
``ascii=True`` every string is plain ASCII (for a C locale or ``PYTHONIOENCODING=ascii``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import describe
from ..model import Matchup
from ..result import DamageResult, Distribution
from .ascii import to_ascii

__all__ = ["result_view"]

_MAX_ROWS = 30
_BAR = 40
#: A string transform applied to every string a view shows (identity or ``to_ascii``).
Glyphs = Callable[[str], str]


def _same(text: str) -> str:
    return text


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
    if p.size == 0:
        return []
    # a row starts at 0 and wherever a value is not a zero following a zero; found with numpy,
    # since a distribution may have a million values and only _MAX_ROWS rows are ever shown
    zero = p == 0
    starts = np.flatnonzero(np.concatenate(([True], ~(zero[1:] & zero[:-1]))))
    if starts.size <= _MAX_ROWS:
        ends = np.append(starts[1:] - 1, p.size - 1)
        return [(int(lo), int(hi)) for lo, hi in zip(starts, ends, strict=True)]
    width = -(-p.size // _MAX_ROWS)
    return [(lo, min(p.size - 1, lo + width - 1)) for lo in range(0, p.size, width)]


class Histogram:
    """Horizontal bars with P(=k) and P(>=k) per row; the bars get the width the numbers leave."""

    def __init__(self, dist: Distribution, label: str, g: Glyphs = _same) -> None:
        rows = _bins(dist)
        probs = [float(dist.probabilities[lo:hi + 1].sum()) for lo, hi in rows]
        self.label = g(label)
        self.headers = (g("P(=k)"), g("P(≥k)"))
        self.rows = [(str(lo) if lo == hi else g(f"{lo}–{hi}"), p, _pct(p), _pct(dist.p_at_least(lo)))
                     for (lo, hi), p in zip(rows, probs, strict=True)]
        self.top = max(probs) or 1.0
        self.full, self.tick = g("█"), g("▏")

    def _fixed(self) -> int:
        """Width of everything but the bars: three number columns and the gaps between columns."""
        cols = zip((self.label, *self.headers), *[(key, at, least) for key, _, at, least in self.rows], strict=True)
        return sum(max(len(cell) for cell in col) for col in cols) + 6

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self._fixed() + 1, self._fixed() + _BAR)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        bar_width = max(1, min(_BAR, options.max_width - self._fixed()))
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
        table.add_column(self.label, justify="right", no_wrap=True)
        table.add_column("", width=bar_width, no_wrap=True, overflow="crop")
        table.add_column(self.headers[0], justify="right", no_wrap=True)
        table.add_column(self.headers[1], justify="right", no_wrap=True)
        for key, p, at, least in self.rows:
            bar = self.full * round(bar_width * p / self.top)
            if not bar and p > 0:
                bar = self.tick
            table.add_row(key, Text(bar, style="cyan"), at, least)
        yield table


def histogram(dist: Distribution, label: str, g: Glyphs = _same) -> Histogram:
    """The histogram of ``dist`` (rows labelled ``label``)."""
    return Histogram(dist, label, g)


def _sd(d: Distribution) -> str:
    """The sd shown: of the distribution when exact; the sample sd (n-1) of a Monte Carlo
    estimate, which is undefined below two trials."""
    sd = d.sd() if d.trials is None else d.sd_sample()
    return "n/a" if sd is None else f"{sd:.3f}"


def _stats_line(d: Distribution, what: str, g: Glyphs) -> Text:
    text = Text()
    text.append(g(f"{what}: "), style="bold")
    text.append(f"{d.mean():.3f}", style="bold green")
    sem = d.sem()
    if d.trials is not None and sem is not None:
        text.append(g(f" ± {sem:.3f} (s.e.)"))
    text.append(g(f"   sd {_sd(d)}   median {d.quantile(0.5)}   5–95%: {d.quantile(0.05)}–{d.quantile(0.95)}"))
    return text


_STAGE_LABELS = {
    "attacks": "attacks", "hits": "hits", "critical_hits": "  of them critical", "wounds": "wounds",
    "critical_wounds": "  critical wounds", "lethal": "  lethal auto-wounds", "devastating": "  devastating",
    "unsaved": "unsaved (failed saves)", "damage_before_fnp": "damage before Feel No Pain",
    "damage_after_fnp": "damage after Feel No Pain",
}


def _value(d: Distribution, q: float, g: Glyphs) -> str:
    """Quantile ``q`` of ``d``; "≥ K" at the last bin of a capped distribution, which holds
    every value from K up."""
    k = d.quantile(q)
    return g(f"≥ {k}") if d.capped_at is not None and k >= d.capped_at else str(k)


def _stage_row(label: str, d: Distribution, g: Glyphs) -> tuple[str, ...]:
    return (label, f"{d.mean():.3f}", _sd(d), _value(d, 0.5, g), f"{_value(d, 0.05, g)}{g('–')}{_value(d, 0.95, g)}")


def stages_table(result: DamageResult, g: Glyphs = _same) -> Table:
    """The per-stage breakdown: expected value and spread of each count."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", title="Stage by stage",
                  title_justify="left", title_style="bold")
    # wrap labels between words only: as wide as the longest word with its indent
    widest = max(len(label) - len(label.lstrip()) + max(map(len, label.split())) for label in _STAGE_LABELS.values())
    table.add_column("", justify="left", min_width=widest)
    for col in ("mean", "sd", "median", g("5–95%")):
        table.add_column(col, justify="right", no_wrap=True)
    plan = result.provenance.get("thresholds", {})
    skip = {"critical_hits"} if plan.get("hit", {}).get("automatic", True) else set()
    for name, label in _STAGE_LABELS.items():
        d = result.stages.get(name)
        if d is None or (name in skip) or (name in ("lethal", "devastating") and d.mean() == 0):
            continue
        if name == "damage_after_fnp" and not plan.get("damage", {}).get("feel_no_pain"):
            continue
        table.add_row(*_stage_row(label, d, g))
    table.add_row(*_stage_row("wounds lost (after allocation)", result.damage, g))
    return table


def _hazard_lines(result: DamageResult, g: Glyphs) -> list[RenderableType]:
    if result.hazardous is None:
        return []
    h = result.hazardous
    text = Text("Hazardous: ", style="bold")
    text.append(g(f"wounds lost by the attacking unit {h.mean():.3f} on average, P(any) {_pct(h.p_at_least(1))}"))
    lines: list[RenderableType] = [text]
    if result.hazard_models is not None and result.provenance.get("attacker_known"):
        lines.append(Text(g(f"  P(the attacking unit loses a model): {_pct(result.hazard_models.p_at_least(1))}")))
    return lines + [Text("")]


def _indented(text: str, style: str = "") -> Padding:
    return Padding(Text(text, style=style), (0, 0, 0, 2), expand=False)


def _head(result: DamageResult, g: Glyphs) -> list[RenderableType]:
    """Who shoots what, the profiles and the thresholds in words."""
    m: Matchup = result.provenance["matchup"]
    head = Text()
    if len(m.weapons) == 1:
        who = f"{m.weapon.name}" + (f" ({m.weapon.unit})" if m.weapon.unit else "")
        head.append(g(who), style="bold")
        head.append(g(f" ×{m.firing(m.weapons[0])}  {'⚔' if m.context.melee else '→'}  "))
        weapons = [_indented(g(f"weapon: {describe.weapon_line(m.weapon)}"))]
    else:
        head.append(g(m.attacker.name if m.attacker else f"{len(m.weapons)} weapons"), style="bold")
        head.append(g(f"  {'⚔' if m.context.melee else '→'}  "))
        weapons = [_indented(g(f"weapon: {m.firing(w)}× {w.weapon.name}: {describe.weapon_line(w.weapon)}"))
                   for w in m.weapons]
    head.append(g(m.target.name), style="bold")
    target = [_indented(g(f"target: {line}")) for line in describe.unit_line(m.target)]
    summary = [_indented(g(line), "yellow") for line in _summaries(result)]
    used = result.provenance.get("stratagems") or []
    if used:
        names = ", ".join(f"{u['name']} ({u['cp']} CP{', defender' if u['side'] == 'defender' else ''})"
                          for u in used)
        total = sum(u["cp"] for u in used)
        summary.append(_indented(g(f"stratagems: {names}; {total} CP in all"), "yellow"))
    return [head, *weapons, *target, *summary, Text("")]


def _summaries(result: DamageResult) -> list[str]:
    """The thresholds in words: the one weapon's, or each weapon's (against the first model
    group, from the explain lines: one ``thresholds:`` line per weapon and model group)."""
    m: Matchup = result.provenance["matchup"]
    summary: str = result.provenance["thresholds"]["summary"]
    if len(m.weapons) == 1:
        return [summary]
    found = [line.removeprefix("thresholds: ") for line in result.provenance.get("explain", [])
             if line.startswith("thresholds: ")]
    groups = len(m.target.groups)
    if len(found) != len(m.weapons) * groups:
        return [f"{m.weapon.name}: {summary}"]
    return [f"{w.weapon.name}: {found[i * groups]}" for i, w in enumerate(m.weapons)]


def _models_lines(result: DamageResult, g: Glyphs) -> list[RenderableType]:
    """Models destroyed and P(destroy unit), for a target with a Wounds characteristic."""
    if any(t.wounds is None for t in result.provenance["matchup"].target.groups):
        return []
    lines: list[RenderableType] = []
    md = result.models_destroyed
    if result.target_models > 1:
        lines.append(_stats_line(md, f"Models destroyed (of {result.target_models})", g))
        lines.append(histogram(md, "models", g))
    p = Text("P(destroy unit): ", style="bold")
    p.append(_pct(result.p_destroy_unit()), style="bold red")
    return [*lines, p, Text("")]


def _plain_table(title: str, columns: tuple[str, ...], names: list[str], g: Glyphs) -> Table:
    """A borderless table: the first column text (wrapping between words, never narrower than
    the longest word of ``names``), numbers never wrap."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", title=g(title),
                  title_justify="left", title_style="bold")
    widest = max(len(word) for text in [columns[0], *names] for word in g(text).split() or [""])
    table.add_column(g(columns[0]), justify="left", overflow="fold", min_width=widest)
    for col in columns[1:]:
        table.add_column(g(col), justify="right", no_wrap=True)
    return table


def _weapon_lines(result: DamageResult, g: Glyphs) -> list[RenderableType]:
    """With several weapon groups: each one's share of the damage and of the models destroyed."""
    shares = describe.weapon_shares(result)
    if len(shares) < 2:
        return []
    total = result.damage.mean()
    # one-word headers: a number column never wraps, so a header with a space could be cut
    table = _plain_table("By weapon (means)",
                         ("weapon", "models", "damage", "share", "destroyed"),
                         [s.name for s in shares], g)
    for s in shares:
        table.add_row(g(s.name), str(s.count), f"{s.damage_mean:.3f}", _pct(s.damage_mean / total) if total else "-",
                      f"{s.models_destroyed_mean:.3f}")
    return [table, Text("")]


def _group_lines(result: DamageResult, g: Glyphs) -> list[RenderableType]:
    """With several model groups: each one's models destroyed and P(group destroyed)."""
    groups = describe.group_results(result)
    if len(groups) < 2:
        return []
    table = _plain_table("By model group (allocation order)",
                         ("group", "models", "destroyed", "sd", "median", "5–95%", "P(destroyed)"),
                         [r.name + (" (Leader)" if r.leader else "") for r in groups], g)
    for r in groups:
        d = r.models_destroyed
        table.add_row(g(r.name + (" (Leader)" if r.leader else "")), str(r.models), f"{d.mean():.3f}", _sd(d),
                      _value(d, 0.5, g), f"{_value(d, 0.05, g)}{g('–')}{_value(d, 0.95, g)}", _pct(r.p_destroyed()))
    return [table, Text("")]


def _check_lines(result: DamageResult, g: Glyphs) -> list[RenderableType]:
    """With ``--method both``: the Monte Carlo estimate and the agreement verdict."""
    mc = result.provenance.get("monte_carlo")
    if mc is None:
        return []
    agreement = result.provenance["agreement"]
    sem = mc.damage.sem()
    spread = "" if sem is None else f" ± {sem:.3f}"
    line = Text("Monte Carlo check: ", style="bold")
    line.append(g(f"damage {mc.damage.mean():.3f}{spread}, P(destroy unit) {_pct(mc.p_destroy_unit())} "
                  f"({mc.trials:,} trials, seed {mc.seed}, {mc.seconds:.2f} s)"))
    return [line, Text(g(agreement.line()), style="green" if agreement.agrees else "bold red"), Text("")]


def result_view(result: DamageResult, *, explain: bool = False, ascii: bool = False) -> RenderableType:
    """Everything the table format shows, top to bottom (with ``explain``, every rule applied;
    with ``ascii``, plain ASCII only)."""
    g: Glyphs = to_ascii if ascii else _same
    prov: dict[str, Any] = result.provenance
    lines: list[RenderableType] = [*_head(result, g), _stats_line(result.damage, "Damage (wounds lost)", g),
                                   histogram(result.damage, "damage", g), Text("")]
    lines += _models_lines(result, g)
    lines += _weapon_lines(result, g)
    lines += _group_lines(result, g)
    lines += _check_lines(result, g)
    if result.stages:
        lines += [stages_table(result, g), Text("")]
    lines += _hazard_lines(result, g)
    if explain:
        lines.append(Text("Explain", style="bold"))
        lines += [_indented(g(line)) for line in prov.get("explain", [])]
        lines.append(Text(""))
    if result.method == "monte-carlo":
        trials = "1 trial" if result.trials == 1 else f"{result.trials:,} trials"
        foot = f"monte-carlo: {trials}, seed {result.seed}, {result.seconds:.2f} s"
    else:
        foot = f"exact: {result.seconds * 1000:.2f} ms"
    lines.append(Text(g(foot + f" · rules: {prov.get('rules', 'current')}"), style="dim"))
    return Group(*lines)
