"""``mathhammer compare FILE.csv --target NAME [--target NAME ...]``: rank loadouts per target."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from ..compare import SortKey
from ..errors import InputError
from ..model import Method
from ..render import OutputFormat
from . import options as o
from ._io import ascii_stdout, check_writable, echo_err, emit_view, handle_errors, output_failed, report
from .shoot import _method

FileArg = Annotated[str, typer.Argument(
    metavar="FILE",
    help=("CSV file with a header row (- reads stdin): a weapon column (names or inline profiles, several joined by "
          "' & ', each with an optional count: '2x heavy rail rifle') or a unit column; optional name, models, "
          "points, target, melee and any situation or modifier named like the options (cover, half_range, "
          "hit_mod, reroll_hits, ...). See docs/compare.md."),
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
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", click_type=o.WholeNumber(1, 1024), metavar="N",
    help="Rows computed side by side (default: every core); results do not depend on it.",
)]
CompareTrialsOpt = Annotated[int, typer.Option(
    "--trials", click_type=o.WholeNumber(1, o.MAX_TRIALS), metavar="N",
    help="Monte Carlo trials per row and target (default 100,000: a standard error of ~0.3% of a typical mean).",
)]

#: A run shorter than this shows no progress bar.
_PROGRESS_AFTER = 1.0


@handle_errors
def compare(
    file: FileArg,
    target: TargetsOpt = None,
    sort: SortOpt = SortKey.MEAN,
    fmt: o.FormatOpt = OutputFormat.TABLE,
    exact: o.ExactOpt = False,
    method: o.MethodOpt = None,
    trials: CompareTrialsOpt = 100_000,
    seed: o.SeedOpt = None,
    keep_going: KeepGoingOpt = False,
    jobs: JobsOpt = None,
    svg: o.SvgOpt = None,
    html: o.HtmlOpt = None,
    profiles: o.ProfilesOpt = None,
) -> None:
    """Which of these loadouts does most to each target? Rows of a CSV file, ranked per target."""
    from ..compare import Comparison, Failed, record

    check_writable(svg=svg, html=html)
    if fmt is not OutputFormat.TABLE and (svg or html):
        raise InputError("pictures are of the table", where="--svg" if svg else "--html",
                         value=str(svg or html), hint="leave out --format, or the picture")
    chosen = _method(exact, method)
    run = Comparison(file, target or (), method=chosen, trials=trials, seed=seed, jobs=jobs, profiles=profiles or (),
                     keep_going=keep_going)
    for e in run.errors:
        report(e)
    records: list[dict[str, Any]] = []
    with _records(fmt, run.targets) as write, _progress(run.total) as advance:
        for done in run:
            advance()
            if isinstance(done, Failed):
                report(done.error)
                continue
            rec = record(done)
            records.append(rec)
            write(rec)
    if fmt is OutputFormat.TABLE:
        from ..render.ranking import ranking_view

        emit_view(ranking_view(records, sort, targets=run.targets, ascii=ascii_stdout(), footer=_footer(run)),
                  svg=svg, html=html)
    echo_err(run.summary())
    if run.failed:
        raise typer.Exit(1)


def _footer(run: Any) -> str:
    if run.method is Method.EXACT:
        return "exact distributions"
    return f"{run.method.value}, {run.trials:,} trials a row and target; seed {run.seed} (each row's: docs/compare.md)"


@contextmanager
def _records(fmt: OutputFormat, targets: tuple[str, ...]) -> Iterator[Any]:
    """Where each record goes: NDJSON and CSV lines at once, a JSON document (in file order,
    then target order) at the end; the table is drawn from the records afterwards."""
    if fmt is OutputFormat.TABLE:
        yield lambda rec: None
        return
    from ..compare import RECORD_COLUMNS, SCHEMA
    from ..render.stream import open_records

    writer = open_records(fmt, sys.stdout, schema=SCHEMA, columns=RECORD_COLUMNS)
    held: list[dict[str, Any]] = []
    rank = {t: i for i, t in enumerate(targets)}

    def write(rec: dict[str, Any]) -> None:
        try:
            writer.write(rec)
        except OSError as e:
            raise typer.Exit(output_failed(e)) from None

    yield held.append if fmt is OutputFormat.JSON else write
    for rec in sorted(held, key=lambda r: (r["row"], rank.get(r["target"], len(rank)))):
        write(rec)
    try:
        writer.close()
    except OSError as e:
        raise typer.Exit(output_failed(e)) from None


@contextmanager
def _progress(total: int) -> Iterator[Any]:
    """A progress bar on stderr, shown once the run has taken a second, on a terminal only."""
    stream = sys.stderr
    if stream is None or not stream.isatty() or total < 2:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress("compare", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(file=stream), transient=True)
    task = bar.add_task("rows", total=total)
    start = time.monotonic()
    shown = False

    def advance() -> None:
        nonlocal shown
        bar.advance(task)
        if not shown and time.monotonic() - start > _PROGRESS_AFTER:
            bar.start()
            shown = True

    try:
        yield advance
    finally:
        if shown:
            bar.stop()
