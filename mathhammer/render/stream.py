"""Streams of records: ``--format json|ndjson|csv`` for every command's machine output (one
record for ``shoot``/``fight``, one per (row, target) for ``compare``, one per cell for ``sweep``).

A record is a JSON-ready dict. NDJSON writes each record as one compact line the moment it is
given; CSV writes a header row (the writer's ``columns``, dotted paths into the record) and then
one flattened line per record (:func:`flatten`); JSON formats each record as it comes, keeps
the text (in a temporary file past a few megabytes, so memory holds one record at a time) and
writes one document ``{"schema": ..., "writer": ..., "records": [...]}`` at the end. Each record reaches
the stream whole: Ctrl-C is held back while it is written (:func:`whole_record`), so an
interrupted run leaves valid NDJSON / CSV behind (every line a complete record).

A value may be a :class:`RawJSON` or :class:`JSONPieces`: JSON text already formatted (a
distribution's rows, written from numpy a block at a time), spliced in as it is.
"""

from __future__ import annotations

import itertools
import json
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO, Any, Protocol

from ..errors import InputError, MathhammerError
from . import OutputFormat
from .ascii import can_encode

__all__ = ["JSONPieces", "RawJSON", "RecordWriter", "TextSink", "csv_field", "flatten", "iter_json_text", "json_escape",
           "json_text", "open_records", "whole_record"]


class TextSink(Protocol):
    """Where records go: a text stream (``sys.stdout``, ``io.StringIO``, an open file)."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class RawJSON(str):
    """JSON text to be written as it is (never quoted): :func:`json_text` splices it into the
    text around it, :func:`flatten` writes it as its cell."""

    __slots__ = ()


class JSONPieces:
    """JSON text kept as the pieces it was formatted in (a distribution's rows, a block at a
    time), written like a :class:`RawJSON` but piece by piece and never joined, so text of tens
    of megabytes is never held twice (what the command line writes); ``str()`` joins them.

    Given a function instead (of no arguments, returning an iterable of the pieces), the pieces
    are made each time they are read, by that function: what a record writer writes is then
    formatted as it is written, a piece at a time, and never held at all."""

    __slots__ = ("_pieces", "_make")

    def __init__(self, pieces: Sequence[str] | Callable[[], Iterable[str]]) -> None:
        if callable(pieces):
            self._pieces: tuple[str, ...] | None = None
            self._make: Callable[[], Iterable[str]] | None = pieces
        else:
            self._pieces, self._make = tuple(pieces), None

    @property
    def pieces(self) -> Iterable[str]:
        """The pieces (made again, each time, from the function given)."""
        if self._make is not None:
            return self._make()
        assert self._pieces is not None
        return self._pieces

    def __str__(self) -> str:
        return "".join(self.pieces)

    def __repr__(self) -> str:
        if self._pieces is None:
            return "JSONPieces(made when read)"
        return f"JSONPieces({len(self._pieces)} pieces)"


#: JSON records kept in memory up to this many characters, the rest in a temporary file.
_SPOOL_BYTES = 8 << 20
#: Where a record starts in the JSON document: inside ``records``, two levels of indent=2.
_RECORD_INDENT = " " * 4


def iter_json_text(value: Any, *, indent: int | None = None) -> Iterator[str]:
    """:func:`json_text` in pieces (a :class:`RawJSON` is a piece of its own, the very object;
    a :class:`JSONPieces` gives its pieces: neither is copied)."""
    import secrets

    raws: list[RawJSON | JSONPieces] = []
    # a random tag, so that no string of the user's (a profile name, say) can pass for a placeholder
    tag = f"mathhammer-raw-{secrets.token_hex(16)}-"
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(_marked(value, raws, tag), indent=indent, ensure_ascii=False, separators=separators)
    start = 0
    for match in re.finditer(f'"{re.escape(tag)}([0-9]+)"', text) if raws else ():
        yield text[start:match.start()]
        raw = raws[int(match.group(1))]
        if isinstance(raw, JSONPieces):
            yield from raw.pieces
        else:
            yield raw
        start = match.end()
    yield text[start:]


def _marked(obj: Any, raws: list[RawJSON | JSONPieces], tag: str) -> Any:
    """``obj`` with each RawJSON or JSONPieces put in ``raws`` and replaced by ``tag`` and its index. A
    module-level function, not a closure that calls itself: such a closure is a reference
    cycle, and it kept the raws (megabytes of rows each) alive until the next garbage
    collection, which the command line makes rare."""
    if isinstance(obj, (RawJSON, JSONPieces)):
        raws.append(obj)
        return f"{tag}{len(raws) - 1}"
    if isinstance(obj, Mapping):
        return {k: _marked(v, raws, tag) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_marked(v, raws, tag) for v in obj]
    return obj


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``json.dumps(value)`` (compact, or indented by ``indent``; non-ASCII kept) with every
    :class:`RawJSON` inside spliced in as the text it holds."""
    return "".join(iter_json_text(value, indent=indent))


def csv_field(text: str) -> str:
    """One CSV field as the ``csv`` module writes it by default (RFC 4180): in double quotes,
    its quotes doubled, when it holds a comma, a quote or a line break."""
    if any(ch in text for ch in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def json_escape(text: str, encoding: str | None) -> str:
    """JSON text with every character a stream in ``encoding`` cannot write as a ``\\uXXXX``
    escape (only strings hold non-ASCII characters, so the document means the same; the escaping
    is per character, so text escaped piece by piece gives the same bytes)."""
    out = []
    for ch in text:
        if ch.isascii() or can_encode(ch, encoding):
            out.append(ch)
        else:
            data = ch.encode("utf-16-be")
            out.extend(f"\\u{int.from_bytes(data[i:i + 2], 'big'):04x}" for i in range(0, len(data), 2))
    return "".join(out)


def flatten(record: Mapping[str, Any], columns: Sequence[str]) -> list[str]:
    """The CSV cells of ``record`` for ``columns`` (dotted paths: ``damage.mean``). A missing
    path or ``None`` is an empty cell; a string is its text (a :class:`RawJSON` too); a list or
    dict is its compact JSON text; ``True``/``False`` are ``true``/``false``; numbers as
    ``json.dumps`` writes them."""
    cells = []
    for column in columns:
        value: Any = record
        for part in column.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            cells.append("")
        elif isinstance(value, (str, JSONPieces)):
            cells.append(str(value))
        else:
            cells.append(json_text(value))
    return cells


@contextmanager
def whole_record() -> Iterator[None]:
    """Ctrl-C waits until the block is done, then acts as it would have (the console script's
    handler exits 130; Python's default raises KeyboardInterrupt).

    Two holds, because either alone leaves a gap: SIGINT is blocked for this thread (a write in
    progress is not cut short by it), and the Python-level handler is swapped for one that only
    remembers the signal (the signal may be delivered to another thread, numba's say, and Python
    would then run the handler between two partial writes of this one). Only the main thread
    can do either (it is where Python runs signal handlers); elsewhere the block runs as is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    pending: list[Any] = []
    if callable(handler):
        signal.signal(signal.SIGINT, lambda signum, frame: pending.append(frame))
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if callable(handler):
            signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)  # a SIGINT that waited is handled here
        if pending and callable(handler):
            handler(signal.SIGINT, pending[0])


class RecordWriter:
    """Writes records to ``stream`` in ``fmt`` (not TABLE). Use as a context manager, or call
    :meth:`close` to finish the JSON document.

    A stream that cannot encode a character (an ASCII stdout) gets it escaped: ``\\uXXXX`` in
    JSON and NDJSON (the data stays exact), Python's backslash escape in a CSV cell.
    """

    def __init__(self, fmt: OutputFormat, stream: TextSink, *, schema: str, writer: Mapping[str, Any],
                 columns: Sequence[str] = ()) -> None:
        if fmt is OutputFormat.TABLE:
            raise ValueError("a RecordWriter writes json, ndjson or csv")
        if fmt is OutputFormat.CSV and not columns:
            raise ValueError("CSV needs its columns")
        self.fmt, self.stream, self.schema = fmt, stream, schema
        self.writer, self.columns = dict(writer), tuple(columns)
        self._spool: IO[str] | None = None  # JSON: each record's text, until the document is written
        self.count = 0
        self._started = False
        self._closed = False

    def _emit(self, pieces: Iterable[str]) -> None:
        """Write ``pieces`` and flush, as one whole (:func:`whole_record`)."""
        encoding = getattr(self.stream, "encoding", None)
        with whole_record():
            for text in pieces:
                if not can_encode(text, encoding):
                    text = (text.encode(encoding or "utf-8", "backslashreplace").decode(encoding or "utf-8")
                            if self.fmt is OutputFormat.CSV else json_escape(text, encoding))
                self.stream.write(text)
            self.stream.flush()

    def _csv_lines(self, *rows: Sequence[str]) -> Iterator[str]:
        """The header (before the first record) and ``rows``, field by field."""
        if not self._started:
            rows = (self.columns, *rows)
        for row in rows:
            if len(row) == 1 and not row[0]:
                yield '""'  # an empty line would read back as no field at all
            for i, cell in enumerate(row if len(row) != 1 or row[0] else ()):
                if i:
                    yield ","
                yield csv_field(cell)
            yield "\n"

    def write(self, record: Mapping[str, Any]) -> None:
        """One record: written at once (NDJSON, CSV; the CSV header with the first) or kept for
        the document (JSON). A record that cannot be formatted changes nothing."""
        if self.fmt is OutputFormat.JSON:
            self._keep(record)
        elif self.fmt is OutputFormat.NDJSON:
            self._emit((*iter_json_text(record), "\n"))  # the whole line made before any of it is written
        else:
            self._emit(self._csv_lines(flatten(record, self.columns)))
        self.count += 1
        self._started = True

    def _keep(self, record: Mapping[str, Any]) -> None:
        """A record of the JSON document, formatted as it will stand in the document (at the
        depth of the ``records`` list) and kept as text: in memory up to _SPOOL_BYTES, then in
        a temporary file (a sweep's cells can hold hundreds of megabytes of rows). The text
        goes there piece by piece as it is formatted (a :class:`JSONPieces` of a distribution's
        rows, a block at a time), never whole in memory."""
        # json.dumps formats all but the pieces before anything is written: a record it refuses
        # leaves the document as it was; one stopped part-way (Ctrl-C, an error making a piece)
        # is cut off again. Every line break is json.dumps' indentation (a JSON string holds
        # none); a piece without one is kept as it is (replace would copy a RawJSON of megabytes)
        texts = iter_json_text(record, indent=2)
        first = next(texts)
        try:
            if self._spool is None:
                import tempfile  # imported when used, as secrets is: neither is needed to start up

                self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, mode="w+", encoding="utf-8",
                                                            newline="\n")
            spool = self._spool
            start = spool.tell()  # 0: the first record (also after one cut off)
        except OSError as e:
            self._discard()
            raise _spool_failed(e) from None
        try:
            for text in itertools.chain((",\n",) if start else (), (first,), texts):  # (indented as the rest)
                self._put(spool, text.replace("\n", "\n" + _RECORD_INDENT) if "\n" in text else text)
        except BaseException:
            if self._spool is spool:  # (a write that failed has deleted it)
                if start:
                    self._cut(start)
                else:
                    self._discard()  # as if it had never been: close() writes "records": []
            raise

    def _put(self, spool: IO[str], text: str) -> None:
        """Write ``text`` to the records' file; a write that fails deletes it (one error naming
        TMPDIR): the document cannot be finished."""
        try:
            spool.write(text)
        except OSError as e:
            self._discard()
            raise _spool_failed(e) from None

    def _cut(self, at: int) -> None:
        """Drop what the records' file holds from ``at`` on (a record stopped part-way)."""
        assert self._spool is not None
        try:
            self._spool.seek(at)
            self._spool.truncate()
        except OSError as e:
            self._discard()
            raise _spool_failed(e) from None

    def _discard(self) -> None:
        """Close the records' temporary file (and so delete it)."""
        spool, self._spool = self._spool, None
        if spool is not None:
            spool.close()

    def close(self) -> None:
        """Finish (once): the JSON document; the CSV header when there was no record."""
        if self._closed:
            return
        self._closed = True
        if self.fmt is OutputFormat.JSON:
            spool, self._spool = self._spool, None
            if spool is None:
                self._emit((*iter_json_text({"schema": self.schema, "writer": self.writer, "records": []}, indent=2),
                            "\n"))
                return
            import secrets

            with spool:
                tag = f"mathhammer-records-{secrets.token_hex(16)}"
                frame = json_text({"schema": self.schema, "writer": self.writer, "records": [tag]}, indent=2)
                head, _, tail = frame.partition(f'"{tag}"')
                try:
                    spool.seek(0)
                except OSError as e:
                    raise _spool_failed(e) from None
                self._emit(itertools.chain((head,), _read_all(spool), (tail + "\n",)))
        elif self.fmt is OutputFormat.CSV and not self._started:
            self._emit(self._csv_lines())
            self._started = True

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:  # no document after an error; the temporary file goes at once
            self._discard()


def _read_all(spool: IO[str]) -> Iterator[str]:
    """The spooled records' text, _SPOOL_BYTES characters at a time."""
    while True:
        try:
            text = spool.read(_SPOOL_BYTES)
        except OSError as e:
            raise _spool_failed(e) from None
        if not text:
            return
        yield text


def _spool_failed(e: OSError) -> MathhammerError:
    """The one-line error of a temporary file that cannot take the JSON document's records."""
    import tempfile

    return InputError(f"cannot keep the JSON document's records in a temporary file: {e.strerror or e}",
                      where="TMPDIR", value=tempfile.gettempdir(),
                      hint="free space there, set TMPDIR to a folder with room, or use --format ndjson")


def open_records(fmt: OutputFormat, stream: TextSink, *, schema: str, columns: Sequence[str] = ()) -> RecordWriter:
    """A :class:`RecordWriter` whose documents name this mathhammer as their writer."""
    from .records import WRITER

    return RecordWriter(fmt, stream, schema=schema, writer=WRITER, columns=columns)
