"""``mathhammer compare FILE.csv --target NAME [--target NAME ...]``: rank loadouts per target."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from ..choices import SortKey
from ..model import Method
from ..render import OutputFormat
from . import options as o
from ._heap import release_freed_memory
from ._io import (
    ExitCode,
    ascii_stdout,
    check_writable,
    echo_err,
    emit_view,
    handle_errors,
    open_output,
    progress,
    report,
    save_view,
    warn,
)

FileArg = Annotated[str | None, typer.Argument(
    metavar="[FILE]",
    help=("CSV file with a header row (- reads stdin): a weapon column (names or inline profiles, several joined by "
          "' & ', each with an optional count: '2x heavy rail rifle') or a unit column; optional name, models, "
          "points, target, melee and any situation or modifier named like the options (cover, half_range, "
          "hit_mod, reroll_hits, ...). See docs/compare.md. Without it, --roster ranks every unit of the roster."),
)]
TargetsOpt = Annotated[list[str] | None, typer.Option(
    "--target", "-t", metavar="TARGET",
    help=("Target (repeatable: a ranking for each): a unit name or inline like 'T4 SV3+ W2 MODELS10'; a row's own "
          "target column overrides it."),
)]
SortOpt = Annotated[SortKey, typer.Option(
    "--sort", case_sensitive=False,
    help="Rank by mean damage (default), damage per 100 points, P(destroy unit) or models destroyed.",
)]
KeepGoingOpt = Annotated[bool, typer.Option(
    "--keep-going",
    help="Report every bad row on stderr and compute every good one (exit code 1 if any failed).",
)]
CompareTrialsOpt = Annotated[int, typer.Option(
    "--trials", click_type=o.WholeNumber(1, o.MAX_TRIALS), metavar="N",
    help="Monte Carlo trials per row and target (default 100,000: a standard error of ~0.3% of a typical mean).",
)]



@handle_errors
def compare(
    ctx: typer.Context,
    file: FileArg = None,
    target: TargetsOpt = None,
    sort: SortOpt = SortKey.MEAN,
    fmt: o.FormatOpt = OutputFormat.TABLE,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
    trials: CompareTrialsOpt = 100_000,
    seed: o.SeedOpt = None,
    keep_going: KeepGoingOpt = False,
    jobs: o.JobsOpt = None,
    svg: o.SvgOpt = None,
    html: o.HtmlOpt = None,
    roster: o.RosterOpt = None,
    target_roster: o.TargetRosterOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """Which of these loadouts does most to each target? Rows of a CSV file, ranked per target."""
    from ..compare import Comparison, Failed, disagrees, line_of, record
    from ..render.records import rows_pieces

    if file is None and not roster:  # a missing argument: a usage error, as click reports its own
        raise typer.BadParameter("give a CSV file, or --roster to rank the units of a roster", param_hint="FILE")
    check_writable(svg=svg, html=html)
    chosen = o.chosen_method(exact, method)
    run = Comparison(file, target or (), method=chosen, trials=trials, seed=seed, jobs=jobs, profiles=profiles or (),
                     keep_going=keep_going, rosters=roster or (), target_rosters=target_roster or ())
    for message in (*run.warnings, *o.exact_unused(chosen, o.typed(ctx))):
        warn(message)
    pending = list(run.errors)  # rows that never ran (file order): said in file order with the runs that fail
    records: list[dict[str, Any]] = []  # kept only for a table or a picture
    disagree: list[str] = []  # with --method both: the (row, target) runs whose engines disagree
    keep = fmt is OutputFormat.TABLE or svg is not None or html is not None
    with _records(fmt) as write, progress(run.total, "compare") as advance:
        try:
            for done in run:
                advance()
                while pending and line_of(pending[0]) <= done.row.line:
                    report(pending.pop(0))
                if isinstance(done, Failed):
                    report(done.error)
                else:
                    if disagrees(done):
                        disagree.append(f"row {done.row.line} against {done.target!r}")
                    rec = record(done, rows_pieces)  # each distribution as its JSON text (blocks), not a dict per row
                    write(rec)
                    if keep:
                        records.append(_without_rows(rec))
                    release_freed_memory()  # what the runs before this one freed
                for message in run.new_warnings():  # a row's, once its every target has run: as shoot's
                    warn(message)
        finally:  # a row cut short by an error: what its runs so far noticed is said before the error
            for message in run.new_warnings():
                warn(message)
    for e in pending:
        report(e)
    if fmt is OutputFormat.TABLE or svg is not None or html is not None:
        from ..render.ranking import ranking_view

        if fmt is OutputFormat.TABLE:
            emit_view(ranking_view(records, sort, targets=run.targets, ascii=ascii_stdout(), footer=_footer(run)),
                      svg=svg, html=html)
        else:  # the records on stdout, and the picture of the table they make
            save_view(ranking_view(records, sort, targets=run.targets, footer=_footer(run)), svg=svg, html=html)
    if disagree:
        warn(f"Monte Carlo and exact disagree in {len(disagree)} run(s), first at {run.where} {disagree[0]}")
    echo_err(run.summary())
    if run.failed:
        raise typer.Exit(1)
    if disagree:
        raise typer.Exit(ExitCode.DISAGREE)


def _footer(run: Any) -> str:
    if run.method is Method.EXACT:
        return "exact distributions"
    return f"{run.method.value}, {run.trials:,} trials a row and target; seed {run.seed} (each row's: docs/compare.md)"


def _without_rows(rec: dict[str, Any]) -> dict[str, Any]:
    """``rec`` without its distributions' rows, which the table and pictures never show (each
    would keep its distribution's arrays until the end)."""
    return {k: _without_rows(v) if isinstance(v, dict) else v for k, v in rec.items() if k != "distribution"}


@contextmanager
def _records(fmt: OutputFormat) -> Iterator[Any]:
    """Where each record goes (they come in file order, then target order): NDJSON and CSV
    lines at once, the JSON document at the end; the table is drawn from them afterwards."""
    if fmt is OutputFormat.TABLE:
        yield lambda rec: None
        return
    from ..compare import RECORD_COLUMNS, SCHEMA

    with open_output(fmt, schema=SCHEMA, columns=RECORD_COLUMNS) as writer:
        yield writer.write
