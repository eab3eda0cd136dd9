"""``mathhammer profiles list|show``."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from . import options as o
from ._command import Command
from ._io import emit_json, emit_view, handle_errors, warn
from .importer import import_

app = typer.Typer(help="List, show and import the unit and weapon profiles.", no_args_is_help=True)


class Kind(StrEnum):
    """What to list."""

    UNIT = "unit"
    WEAPON = "weapon"


@app.command("list", cls=Command)
@handle_errors
def list_(
    filter_: Annotated[str | None, typer.Argument(metavar="FILTER", help="Only names containing this text.")] = None,
    kind: Annotated[Kind | None, typer.Option(
        "--kind", case_sensitive=False,
        help="unit or weapon (default: both).",
    )] = None,
    fmt: o.DocumentFormatOpt = o.DocumentFormat.TABLE,
    faction: o.FactionOpt = None,
    roster: o.RosterOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """List units and weapons (name, aliases, key numbers)."""
    from ..api import library
    from ..render.profile_view import list_profiles, listing_view, nothing_listed

    lib = library(profiles or (), rosters=roster or (), faction=faction)
    doc = list_profiles(lib, kind.value if kind else None, filter_)
    if fmt is o.DocumentFormat.JSON:
        import json

        emit_json(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        emit_view(listing_view(doc))
    note = nothing_listed(doc, filter_, faction)
    if note is not None:  # a search that found nothing: said, not an error (the document says it too)
        warn(note)


@app.command("show", cls=Command)
@handle_errors
def show(
    name: Annotated[str, typer.Argument(help="A unit or weapon name, alias or unique part of one.")],
    fmt: o.DocumentFormatOpt = o.DocumentFormat.TABLE,
    faction: o.FactionOpt = None,
    roster: o.RosterOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """Show one unit (statlines, abilities, weapons) or weapon profile."""
    from ..api import library
    from ..render.profile_view import show_json, show_view

    lib = library(profiles or (), rosters=roster or (), faction=faction)
    obj = lib.find_any(name)
    if fmt is o.DocumentFormat.JSON:
        emit_json(show_json(obj))
    else:
        emit_view(show_view(obj))


app.command("import", cls=Command)(import_)
