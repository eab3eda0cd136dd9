"""Views of the profile library: listings and single profiles."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .. import describe
from ..model import Unit, Weapon
from ..profiles import Library, dump_unit

__all__ = ["listing", "show_json", "show_view"]


def _column(table: Table, header: str, *, text: bool) -> None:
    """Numbers never wrap; text wraps, and a word wider than its column is folded, never cut
    to an ellipsis (so the full name is always there)."""
    if text:
        table.add_column(header, overflow="fold")
    else:
        table.add_column(header, no_wrap=True)


def listing(lib: Library, kind: str | None, needle: str | None) -> RenderableType:
    """Units and/or weapons whose name or alias contains ``needle``."""
    n = (needle or "").lower()

    def keep(name: str, aliases: tuple[str, ...]) -> bool:
        return not n or n in name.lower() or any(n in a.lower() for a in aliases)

    parts: list[RenderableType] = []
    if kind in (None, "unit"):
        t = Table(title="Units", title_justify="left", header_style="bold")
        for col in ("name", "aliases", "models", "T", "Sv", "W", "inv", "FNP", "points"):
            _column(t, col, text=col in ("name", "aliases"))
        for u in lib.units:
            if keep(u.name, u.aliases):
                m = max(u.models, key=lambda x: x.count)
                inv, fnp = m.invulnerable or u.invulnerable, m.feel_no_pain or u.feel_no_pain
                t.add_row(u.name, ", ".join(u.aliases), str(u.model_count), str(m.toughness), f"{m.save}+",
                          str(m.wounds), f"{inv}+" + ("*" if u.invulnerable_ranged_only else "") if inv else "",
                          f"{fnp}+" if fnp else "", "" if u.points is None else str(u.points))
        parts.append(t)
    if kind in (None, "weapon"):
        t = Table(title="Weapons", title_justify="left", header_style="bold")
        for col in ("name", "unit", "profile"):
            _column(t, col, text=True)
        for w in lib.weapons:
            if keep(w.name, w.aliases):
                name = w.name + (f" ({', '.join(w.aliases)})" if w.aliases else "")
                t.add_row(name, w.unit, describe.weapon_line(w))
        parts.append(t)
    if kind in (None, "unit"):
        parts.append(Text("* invulnerable save against ranged attacks only", style="dim"))
    return Group(*parts)


def show_view(obj: Unit | Weapon) -> RenderableType:
    """One unit or weapon in full."""
    if isinstance(obj, Weapon):
        return Group(Text(obj.name, style="bold"), Text(f"  unit: {obj.unit or '-'}"),
                     Text(f"  {describe.weapon_line(obj)}"))
    u = obj
    head = Text(u.name, style="bold")
    about = [part for part in (u.faction, f"{u.points} pts" if u.points is not None else "") if part]
    if about:
        head.append(f"  ({', '.join(about)})")
    stats = Table(header_style="bold")
    for col in ("model", "count", "M", "T", "Sv", "W", "inv", "FNP", "Ld", "OC", "carries (each)"):
        _column(stats, col, text=col in ("model", "carries (each)"))
    for m in u.models:
        inv, fnp = m.invulnerable or u.invulnerable, m.feel_no_pain or u.feel_no_pain
        stats.add_row(m.name, str(m.count), f'{m.move}"' if m.move is not None else "", str(m.toughness), f"{m.save}+",
                      str(m.wounds), f"{inv}+" if inv else "", f"{fnp}+" if fnp else "",
                      f"{m.leadership}+" if m.leadership else "", str(m.objective_control or 0),
                      ", ".join(f"{n}x {w}" for w, n in m.loadout))
    lines: list[RenderableType] = [head, stats]
    if u.loadout():
        lines.append(Text("  default loadout: " + ", ".join(f"{n}x {w}" for w, n in u.loadout())))
    if u.attached:
        lines.append(Text("  attached Leaders when it is the target: " + ", ".join(u.attached)))
    extra = []
    if u.invulnerable:
        extra.append(f"{u.invulnerable}+ invulnerable save" + (" (ranged only)" if u.invulnerable_ranged_only else ""))
    if u.feel_no_pain:
        extra.append(f"{u.feel_no_pain}+ Feel No Pain")
    if u.damage_reduction:
        extra.append(f"-{u.damage_reduction} Damage")
    if extra:
        lines.append(Text("  " + "; ".join(extra)))
    lines.append(Text("  keywords: " + ", ".join(sorted(u.keywords))))
    if u.aliases:
        lines.append(Text("  aliases: " + ", ".join(u.aliases)))
    if u.weapons:
        wt = Table(header_style="bold")
        for col in ("weapon", "range", "A", "BS/WS", "S", "AP", "D", "abilities"):
            _column(wt, col, text=col in ("weapon", "abilities"))
        for w in u.weapons:
            wt.add_row(w.name, "melee" if w.melee else f'{w.range_inches}"', str(w.attacks),
                       "N/A" if w.skill is None else f"{w.skill}+", str(w.strength), str(w.ap), str(w.damage),
                       ", ".join(str(a) for a in w.abilities))
        lines.append(wt)
    if u.source:
        lines.append(Text(f"  source: {u.source}", style="dim"))
    return Group(*lines)


def show_json(obj: Unit | Weapon) -> str:
    """One unit (profile schema) or weapon (result schema's weapon object) as JSON."""
    data: dict[str, Any] = describe.weapon_dict(obj) if isinstance(obj, Weapon) else dump_unit(obj)
    return json.dumps(data, indent=2, ensure_ascii=False)
