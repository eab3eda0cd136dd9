"""``mathhammer profiles import PATH... [--out DIR] [--faction NAME]``: BSData catalogues -> profile files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._io import emit_text, handle_errors

__all__ = ["import_"]


@handle_errors
def import_(
    paths: Annotated[list[Path], typer.Argument(
        metavar="PATH...", help="BSData .cat/.gst/.catz/.gstz files, or a folder (a clone of the BSData "
                                "repository: every catalogue in it).")],
    out: Annotated[Path, typer.Option(
        "--out", metavar="DIR",
        help="Folder to write one profile file (JSON syntax, which is YAML) per faction into.",
    )] = Path("profiles-imported"),
    faction: Annotated[str | None, typer.Option(
        "--faction", metavar="NAME", help="Only this faction, e.g. \"t'au empire\" (case ignored).")] = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", help="Also list the loadout choices made where a catalogue gives no default.")] = False,
) -> None:
    """Import units and weapons from BSData catalogues into profile files (nothing is fetched)."""
    from ..bsdata.build import import_files
    from ..bsdata.report import summary
    from ..bsdata.write import write_factions

    imported = import_files(paths, faction=faction)
    written = write_factions(imported, out)
    emit_text(summary(imported, written, assumptions=verbose))
