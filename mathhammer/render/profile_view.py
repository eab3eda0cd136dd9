"""Views of the profile library: listings and single profiles."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .. import describe
from ..model import Unit, Weapon, describe_gives
from ..profiles import Library, dump_unit

__all__ = ["LIST_SCHEMA", "list_profiles", "listing_view", "nothing_listed", "show_json", "show_view"]


def _column(table: Table, header: str, *, text: bool) -> None:
    """Numbers never wrap; text wraps, and a word wider than its column is folded, never cut
    to an ellipsis (so the full name is always there)."""
    if text:
        table.add_column(header, overflow="fold")
    else:
        table.add_column(header, no_wrap=True)


#: Above this many rows a listing is drawn as aligned plain text: rich measures every cell of a
#: table, which took ~10 s for the whole library (1,600 units and 9,800 weapons).
PLAIN_ROWS = 300


#: The contract of ``profiles list --format json`` (schemas/profile-list-1.schema.json).
LIST_SCHEMA = "mathhammer.profile-list/1"


def list_profiles(lib: Library, kind: str | None, needle: str | None) -> dict[str, Any]:
    """What ``profiles list`` shows, as the ``mathhammer.profile-list/1`` document: the units
    and/or weapons (``kind``: ``unit``, ``weapon`` or None for both) whose name or an alias
    contains ``needle`` (any case), in the library's order. ``units`` and ``weapons`` are None
    when that kind is not listed (an empty list: none matched). A unit's numbers are those of its
    most numerous model group, as the table's (its own invulnerable save and Feel No Pain, else
    the unit's); a weapon's ``profile`` is the table's one-line profile."""
    from .records import WRITER

    n = (needle or "").lower()

    def keep(name: str, aliases: tuple[str, ...]) -> bool:
        return not n or n in name.lower() or any(n in a.lower() for a in aliases)

    units: list[dict[str, Any]] | None = None
    weapons: list[dict[str, Any]] | None = None
    if kind in (None, "unit"):
        units = []
        for u in lib.units:
            if keep(u.name, u.aliases):
                m = max(u.models, key=lambda x: x.count)
                units.append({"name": u.name, "aliases": list(u.aliases), "faction": u.faction,
                              "models": u.model_count, "T": m.toughness, "Sv": m.save, "W": m.wounds,
                              "invulnerable": m.invulnerable or u.invulnerable or None,
                              "invulnerable_ranged_only": bool(u.invulnerable_ranged_only),
                              "feel_no_pain": m.feel_no_pain or u.feel_no_pain or None, "points": u.points})
    if kind in (None, "weapon"):
        weapons = []
        owners = {id(w): u for u in lib.units for w in u.weapons}
        for w in lib.weapons:
            if keep(w.name, w.aliases):
                owner = owners.get(id(w)) or lib.owner(w)
                weapons.append({"name": w.name, "aliases": list(w.aliases), "unit": w.unit,
                                "faction": owner.faction if owner else "", "profile": describe.weapon_line(w)})
    return {"schema": LIST_SCHEMA, "writer": WRITER, "units": units, "weapons": weapons}


def nothing_listed(doc: dict[str, Any], needle: str | None, faction: str | None = None) -> str | None:
    """The note for a :func:`list_profiles` document that lists nothing (None when it lists
    something): what was looked for, and where."""
    kinds = [k for k in ("unit", "weapon") if doc[f"{k}s"] is not None]
    if any(doc[f"{k}s"] for k in kinds):
        return None
    text = f"nothing listed: no {' or '.join(kinds)}" + (f" of faction {faction!r}" if faction else "")
    return text + (f" has a name or alias containing {needle!r}" if needle else " to list")


def listing_view(doc: dict[str, Any]) -> RenderableType:
    """The tables of a :func:`list_profiles` document."""
    parts: list[RenderableType] = []
    rows: list[tuple[str, ...]]
    if doc["units"] is not None:
        rows = [(u["name"], ", ".join(u["aliases"]), u["faction"], str(u["models"]), str(u["T"]), f"{u['Sv']}+",
                 str(u["W"]),
                 f"{u['invulnerable']}+" + ("*" if u["invulnerable_ranged_only"] else "") if u["invulnerable"] else "",
                 f"{u['feel_no_pain']}+" if u["feel_no_pain"] else "", "" if u["points"] is None else str(u["points"]))
                for u in doc["units"]]
        parts.append(_table("Units", ("name", "aliases", "faction", "models", "T", "Sv", "W", "inv", "FNP", "points"),
                            ("name", "aliases", "faction"), rows))
    if doc["weapons"] is not None:
        rows = [(w["name"] + (f" ({', '.join(w['aliases'])})" if w["aliases"] else ""), w["unit"], w["faction"],
                 w["profile"]) for w in doc["weapons"]]
        parts.append(_table("Weapons", ("name", "unit", "faction", "profile"), ("name", "unit", "faction", "profile"),
                            rows))
    if doc["units"] is not None:
        parts.append(Text("* invulnerable save against ranged attacks only", style="dim"))
    return Group(*parts)


def _table(title: str, headers: tuple[str, ...], text_columns: tuple[str, ...],
           rows: list[tuple[str, ...]]) -> RenderableType:
    """A rich table, or past PLAIN_ROWS rows the same columns as aligned plain text (never cut)."""
    if len(rows) <= PLAIN_ROWS:
        t = Table(title=title, title_justify="left", header_style="bold")
        for col in headers:
            _column(t, col, text=col in text_columns)
        for row in rows:
            t.add_row(*row)
        return t
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if h in text_columns else c.rjust(w)
                         for c, w, h in zip(cells, widths, headers, strict=True)).rstrip()

    return _Lines([(f"{title} ({len(rows):,})", "bold"), (line(headers), "bold"), *((line(r), "") for r in rows)])


class _Lines:
    """Lines printed as they are: never wrapped or cut to the terminal's width (a listing is
    read with grep and less -S as often as on screen)."""

    def __init__(self, lines: list[tuple[str, str]]) -> None:
        self.lines = lines

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        widest = max(len(text) for text, _ in self.lines)
        return Measurement(widest, widest)

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment
        from rich.style import Style

        for text, style in self.lines:
            yield Segment(text, Style.parse(style) if style else None)
            yield Segment.line()


def show_view(obj: Unit | Weapon) -> RenderableType:
    """One unit or weapon in full: what the engine uses, and what it does not model (listed, so
    nothing is dropped silently)."""
    if isinstance(obj, Weapon):
        rows = [Text(obj.name, style="bold"), Text(f"  unit: {obj.unit or '-'}"),
                Text(f"  {describe.weapon_line(obj)}")]
        if obj.unmodelled:
            rows.append(Text("  not modelled: " + ", ".join(obj.unmodelled)))
        return Group(*rows)
    u = obj
    head = Text(u.name, style="bold")
    about = [part for part in (u.faction, f"{u.points} pts" if u.points is not None else "") if part]
    if about:
        head.append(f"  ({', '.join(about)})")
    stats = Table(header_style="bold")
    options = any(m.options for m in u.models)
    for col in ("model", "count", "M", "T", "Sv", "W", "inv", "FNP", "Ld", "OC", "carries (each)",
                *(("may take",) if options else ())):
        _column(stats, col, text=col in ("model", "carries (each)", "may take"))
    for m in u.models:
        inv, fnp = m.invulnerable or u.invulnerable, m.feel_no_pain or u.feel_no_pain
        stats.add_row(m.name, str(m.count), f'{m.move}"' if m.move is not None else "", str(m.toughness), f"{m.save}+",
                      str(m.wounds), f"{inv}+" if inv else "", f"{fnp}+" if fnp else "",
                      f"{m.leadership}+" if m.leadership else "", str(m.objective_control or 0),
                      ", ".join(f"{n}x {w}" for w, n in m.loadout), *((", ".join(m.options),) if options else ()))
    lines: list[RenderableType] = [head, stats]
    if u.loadout():
        lines.append(Text("  default loadout: " + ", ".join(f"{n}x {w}" for w, n in u.loadout())))
    if u.sizes:
        lines.append(Text("  unit sizes: " + ", ".join(f"{n} models {p} pts" for n, p in u.sizes)))
    if u.attached:
        lines.append(Text("  attached Leaders when it is the target: " + ", ".join(u.attached)))
    extra = []
    if u.invulnerable:
        extra.append(f"{u.invulnerable}+ invulnerable save" + (" (ranged only)" if u.invulnerable_ranged_only else ""))
    if u.feel_no_pain:
        extra.append(f"{u.feel_no_pain}+ Feel No Pain")
    if u.damage_reduction:
        extra.append(f"-{u.damage_reduction} Damage")
    if u.deadly_demise is not None:
        extra.append(f"Deadly Demise {u.deadly_demise}")
    if u.firing_deck is not None:
        extra.append(f"Firing Deck {u.firing_deck}")
    if u.rules:
        extra.append("rules: " + ", ".join(u.rules))
    if extra:
        lines.append(Text("  " + "; ".join(extra)))
    lines.append(Text("  keywords: " + ", ".join(sorted(u.keywords))))
    if u.unmodelled:
        lines.append(Text("  abilities not modelled: " + ", ".join(u.unmodelled)))
    borne = [f"{m.name}: {', '.join(m.wargear)}" for m in u.models if m.wargear]
    if borne:
        lines.append(Text("  wargear borne by default (in the statlines above): " + "; ".join(borne)))
    for label, pieces in (("wargear, for the rosters that list it", u.wargear),
                          ("enhancements, for the rosters that list one", u.enhancements)):
        if pieces:
            lines.append(Text(f"  {label}: " + "; ".join(
                f"{w.name}: " + ", ".join([*([describe_gives(w.gives) + " (its bearer)"] if w.gives else []),
                                           *([", ".join(w.keywords) + " (its unit)"] if w.keywords else [])])
                for w in pieces)))
    if u.aliases:
        lines.append(Text("  aliases: " + ", ".join(u.aliases)))
    if u.weapons:
        wt = Table(header_style="bold")
        unmodelled = any(w.unmodelled for w in u.weapons)
        for col in ("weapon", "range", "A", "BS/WS", "S", "AP", "D", "abilities", *(("not modelled",) if unmodelled
                                                                                    else ())):
            _column(wt, col, text=col in ("weapon", "abilities", "not modelled"))
        for w in u.weapons:
            wt.add_row(w.name, "melee" if w.melee else f'{w.range_inches}"', str(w.attacks),
                       "N/A" if w.skill is None else f"{w.skill}+", str(w.strength), str(w.ap), str(w.damage),
                       ", ".join(str(a) for a in w.abilities), *((", ".join(w.unmodelled),) if unmodelled else ()))
        lines.append(wt)
    if u.source:
        lines.append(Text(f"  source: {u.source}", style="dim"))
    return Group(*lines)


def show_json(obj: Unit | Weapon) -> str:
    """One unit (profile schema) or weapon (result schema's weapon object) as JSON."""
    data: dict[str, Any] = describe.weapon_dict(obj) if isinstance(obj, Weapon) else dump_unit(obj)
    return json.dumps(data, indent=2, ensure_ascii=False)
