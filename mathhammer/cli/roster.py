"""``mathhammer roster show FILE``: the army of a roster file as the tool understood it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import options as o
from ._command import Command
from ._io import emit_json, emit_view, handle_errors

app = typer.Typer(help="Read army rosters (.ros/.rosz, GW app, New Recruit, War Organ text).",
                  no_args_is_help=True)


@app.command("show", cls=Command)
@handle_errors
def show(
    file: Annotated[Path, typer.Argument(help="A .ros/.rosz roster, or the text an army app exports.")],
    fmt: o.DocumentFormatOpt = o.DocumentFormat.TABLE,
    profiles: o.ProfilesOpt = None,
) -> None:
    """Show the units, models, weapons, points, enhancements and attached leaders of a roster,
    and what could not be matched to a profile, and why."""
    import json

    from ..profiles import load_library
    from ..roster import load_roster
    from ..roster.view import roster_view

    roster = load_roster(file, load_library(profiles or ()))
    if fmt is o.DocumentFormat.JSON:
        emit_json(json.dumps(roster.to_dict(), ensure_ascii=False, indent=2))
    else:
        emit_view(roster_view(roster))
