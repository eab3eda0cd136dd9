"""The import summary: what was written, what was kept as text, what was not imported and why."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .build import Imported

__all__ = ["summary"]


def summary(imported: Imported, written: Sequence[tuple[Path, int]], *, assumptions: bool = False) -> str:
    """Plain text, one fact a line: files written (units each), totals, the weapon abilities and unit
    abilities the engine does not model (with counts), and every unit or weapon not imported, with
    the reason. ``assumptions`` adds the loadout choices made where the catalogue names no default."""
    lines = [f"Wrote {path}: {n} units" for path, n in written]
    units = [u for f in imported.factions for u in f.units]
    weapons = [w for u in units for w in u["weapons"]]
    weapon_text: Counter[str] = Counter(a for w in weapons for a in w.get("unmodelled", []))
    unit_text: Counter[str] = Counter(a for u in units for a in u.get("unmodelled", []))
    kept = sum(1 for w in weapons if w.get("unmodelled"))
    n_fac = len(imported.factions)
    lines.append(f"{len(units)} units, {len(weapons)} weapons in {n_fac} faction{'' if n_fac == 1 else 's'}; "
                 f"{kept} weapons keep {sum(weapon_text.values())} abilities as text "
                 f"({len(weapon_text)} distinct), units keep {sum(unit_text.values())} abilities as text "
                 f"({len(unit_text)} distinct)")
    if weapon_text:
        lines.append("Weapon abilities not modelled (kept as text): "
                     + ", ".join(f"{name} ({n})" for name, n in sorted(weapon_text.items(),
                                                                      key=lambda kv: (-kv[1], kv[0]))))
    problems = imported.problems
    lines.append(f"Not imported: {len(problems)}" + (":" if problems else ""))
    for f in imported.factions:
        for p in f.problems:
            lines.append(f"  {f.name}/{p.unit}: {p.what}: {p.reason}")
    notes = [(f.name, a) for f in imported.factions for a in f.assumptions]
    if assumptions:
        lines.append(f"Choices made where the catalogue gives no default: {len(notes)}" + (":" if notes else ""))
        lines.extend(f"  {faction}/{a}" for faction, a in notes)
    elif notes:
        lines.append(f"Choices made where the catalogue gives no default: {len(notes)} (--verbose lists them)")
    return "\n".join(lines)
