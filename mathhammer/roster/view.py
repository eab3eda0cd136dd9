"""The ``mathhammer roster show`` view: the army as the tool understood it."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .model import Roster, RosterUnit

__all__ = ["roster_view"]


def _loadout(e: RosterUnit) -> str:
    """The engine's models and weapons (per model), or what the file listed when unmatched."""
    if e.unit is not None:
        return "\n".join(f"{m.count}x {m.name}: " + (", ".join(f"{n}x {w}" if n > 1 else w for w, n in m.loadout)
                                                     or "no weapons") for m in e.unit.models)
    lines = [f"{m.count}x {m.name}: " + ", ".join(f"{n}x {w}" for w, n in m.weapons) for m in e.models]
    if e.wargear:
        lines.append(", ".join(f"{n}x {w}" for w, n in e.wargear))
    return "\n".join(lines)


def roster_view(roster: Roster) -> RenderableType:
    """A heading (file, format, faction, points), one row per unit, then the file's notes."""
    ok = sum(e.ok for e in roster.entries)
    head = Text(f"{roster.name or roster.file} — {roster.format}, {roster.faction or 'faction not stated'}"
                + (f", {roster.points} points" if roster.points is not None else "")
                + f": {ok} of {len(roster.entries)} units usable"
                + (f", {len(lost)} {'line' if len(lost) == 1 else 'lines'} not understood (below)"
                   if (lost := roster.not_understood()) else ""), style="bold")
    t = Table(header_style="bold", show_lines=True)
    for col, wrap in (("line", False), ("unit", True), ("pts", False), ("models and weapons (each model)", True),
                      ("notes", True)):
        t.add_column(col, overflow="fold", no_wrap=not wrap)
    for e in roster.entries:
        name = e.unit.name if e.unit is not None else e.name
        extra = [f"leads {', '.join(_leads(roster, e))}" if e.role == "leader" and _leads(roster, e) else "",
                 f"leaders: {', '.join(e.unit.attached)}" if e.unit is not None and e.unit.attached else "",
                 "Warlord" if e.warlord else "", *(f"Enhancement: {x}" for x in e.enhancements)]
        label = Text(name, style="" if e.ok else "red")
        if any(extra):
            label.append("\n" + "\n".join(x for x in extra if x), style="dim")
        notes = "\n".join(n.text for n in e.notes) if e.ok else "NOT USED: " + "\n".join(n.text for n in e.notes)
        t.add_row(str(e.line or ""), label, "" if e.points is None else str(e.points), _loadout(e), notes)
    parts: list[RenderableType] = [head, t]
    if roster.notes:
        parts.append(Text("\n".join(str(n) for n in roster.notes), style="dim"))
    return Group(*parts)


def _leads(roster: Roster, e: RosterUnit) -> list[str]:
    out = []
    for a in roster.attachments:
        if any(roster.entries[i] is e for i in a.leaders):
            guard = roster.entries[a.bodyguard]
            out.append(guard.unit.name if guard.unit is not None else guard.name)
    return out
