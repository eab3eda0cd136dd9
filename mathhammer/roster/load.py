"""``load_roster(path, lib)``: any roster file -> a :class:`~.model.Roster` whose units are ready
for the engine.

The format is told by the file's content (a zip, XML, or text; the suffix only names the zip
kind): .ros/.rosz are read by :mod:`.ros` (self-contained, no library needed), text exports by
:mod:`.text` and matched to ``lib`` by :mod:`.match`. Then every engine unit gets a name unique
within the roster (``Name``, ``Name (2)``, ...), ``source`` = ``roster FILE line N``, and a
Bodyguard unit's ``attached`` names its leaders as the file attaches them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..bsdata.xmlsafe import read_bsdata_file
from ..errors import ProfileError
from ..profiles import Library
from .model import Note, Roster, RosterUnit
from .text import MAX_TEXT_BYTES

__all__ = ["load_roster", "parse_roster"]


def load_roster(path: Path | str, lib: Library | None = None) -> Roster:
    """Read, parse and (for text) match a roster file.

    ``lib`` is needed for text exports (their units are looked up in it); a .ros/.rosz carries
    its own profiles. Units that match nothing are kept, with the reason in their notes.

    Raises:
        ProfileError: one line naming the file (and the line, for text): unreadable, a corrupt
            zip, XML that is not a roster, a text export of an unknown format.
    """
    path = Path(path)
    file = str(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except IsADirectoryError:
        raise ProfileError("expected a roster file, got a folder", where=file) from None
    except OSError as e:
        raise ProfileError(f"cannot read the roster: {e.strerror or e}", where=file) from None
    if head.startswith(b"PK") or path.suffix.lower() in (".ros", ".rosz") or head.lstrip(b"\xef\xbb\xbf \r\n\t")[:1] \
            == b"<":
        raw, file = read_bsdata_file(path)
        return parse_roster(raw, file, lib, zipped=head.startswith(b"PK"))
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TEXT_BYTES + 1)
    except OSError as e:
        raise ProfileError(f"cannot read the roster: {e.strerror or e}", where=file) from None
    return parse_roster(raw, file, lib)


def parse_roster(raw: bytes, file: str, lib: Library | None = None, *, zipped: bool = False) -> Roster:
    """:func:`load_roster` of bytes already read (``raw``: the XML of a .ros/.rosz, or the text)."""
    if raw.lstrip(b"\xef\xbb\xbf \r\n\t")[:1] == b"<":
        from .ros import parse_ros

        return finish(parse_ros(raw, file, "rosz" if zipped else "ros"))
    from .match import match_roster
    from .text import parse_text

    roster = parse_text(raw, file)
    if lib is None:
        from ..profiles import load_library

        lib = load_library()
    return finish(match_roster(roster, lib))


def finish(roster: Roster) -> Roster:
    """Unique names, ``source`` and attached leaders on the roster's engine units."""
    label = Path(roster.file).name
    seen: dict[str, int] = {}
    entries: list[RosterUnit] = []
    for e in roster.entries:
        if e.unit is None:
            entries.append(e)
            continue
        base = e.unit.name
        n = seen[base.lower()] = seen.get(base.lower(), 0) + 1
        name = base if n == 1 else f"{base} ({n})"
        while name.lower() in seen and n > 1:  # "X (2)" is itself a unit's name
            n += 1
            name = f"{base} ({n})"
        seen.setdefault(name.lower(), 1)
        unit = replace(e.unit, name=name, source=f"roster {label} line {e.line}" if e.line else f"roster {label}",
                       weapons=tuple(replace(w, unit=name) for w in e.unit.weapons))
        entries.append(replace(e, unit=unit))
    for a in roster.attachments:
        guard = entries[a.bodyguard]
        leaders = tuple(entries[i].unit.name for i in a.leaders if entries[i].unit is not None)  # type: ignore[union-attr]
        if guard.unit is not None and leaders:
            entries[a.bodyguard] = replace(guard, unit=replace(guard.unit, attached=leaders))
        _share_keywords(entries, [a.bodyguard, *a.leaders])
        _note_unmatched(entries, [a.bodyguard, *a.leaders])
    return replace(roster, entries=tuple(entries), notes=roster.notes + _points_check(roster))


def _note_unmatched(entries: list[RosterUnit], parts: list[int]) -> None:
    """A note on each part of an attached unit that reached the engine naming the parts that did
    not (not in the library, say): they are left out of the attached unit."""
    missing = [entries[i] for i in parts if entries[i].unit is None]
    if not missing:
        return
    said = ", ".join(f"{e.name} (line {e.line})" for e in missing)
    for i in parts:
        e = entries[i]
        if e.unit is not None:
            entries[i] = replace(e, notes=(*e.notes, Note(e.line, f"attached unit: {said} could not be used, so it is "
                                                                  "left out (see its notes)")))


def _share_keywords(entries: list[RosterUnit], parts: list[int]) -> None:
    """The keywords wargear gives "the bearer's unit" (a Leader's Marker Drone: MARKERLIGHT) go to
    every part of the attached unit ``parts`` (entries' indexes), which is one unit for rules
    purposes (ruling M84), with a note on each part that gains one."""
    given: dict[str, str] = {}  # keyword -> the part whose wargear gives it
    for i in parts:
        e = entries[i]
        if e.unit is not None:
            for k in e.given_keywords:
                given.setdefault(k, e.unit.name)
    for i in parts:
        e = entries[i]
        if e.unit is None:
            continue
        new = {k: giver for k, giver in given.items() if k not in e.unit.keywords}
        if new:
            notes = tuple(Note(e.line, f"{e.unit.name}: the attached unit has {k}, which {giver}'s wargear gives "
                                       "its unit (ruling M84)") for k, giver in new.items())
            entries[i] = replace(e, unit=replace(e.unit, keywords=e.unit.keywords | set(new)), notes=e.notes + notes)


def _points_check(roster: Roster) -> tuple[Note, ...]:
    """A note when the file's total differs from its units' points added up (every sample
    export's agree): a unit may be in the file but not read, or the total counts something else."""
    priced = [e.points for e in roster.entries]
    if roster.points is None or not priced or any(p is None for p in priced):
        return ()
    total = sum(p for p in priced if p is not None)
    if total == roster.points:
        return ()
    return (Note(0, f"the file's total is {roster.points} points, its units add up to {total}: a unit it lists may "
                    "not have been read (the table shows the units that were), or the total counts something else"),)
