"""Army list text exports: the GW app's, New Recruit's "GW" text and WTC-compact text, War Organ's.

:func:`parse_text` detects the format and returns a :class:`~.model.Roster` whose units are not
yet matched to profiles (:mod:`.match` does that). Parsing is tolerant: typographic quotes and
bullets, non-breaking spaces, tabs, CRLF, ``points``/``pts`` (and a few other languages' words
for points) are all read; a line that fits nothing the format allows is kept as a note with its
line number, never silently dropped. A file that is none of these formats is one error naming
the file and the line that gave it away.

Counts follow :mod:`.model`: a model group's weapons are totals for the group. War Organ writes
per-model lists (``1 Crisis Shas’ui with 2 Fusion blaster``), WTC-compact per-model ``N with``
groups; both are multiplied out here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ..errors import ProfileError
from ..limits import MAX_ATTACKING_MODELS, MAX_ROSTER_POINTS
from .model import Attachment, Note, Roster, RosterModel, RosterUnit
from .names import clean, count_prefix

__all__ = ["FORMATS", "MAX_TEXT_BYTES", "detect", "parse_text"]

#: The text formats read, by the name :attr:`Roster.format` gives them.
FORMATS = ("gw-app", "new-recruit-gw", "wtc-compact", "war-organ")
#: The largest text export read (a 3,000-point list is under 20 kB).
MAX_TEXT_BYTES = 2_000_000

_BULLETS = "•◦▪●‣∙·*-–"
_POINTS_WORD = r"(?:points?|pts?|punkte|pkt\.?|puntos|punti|pontos|pkte)"
#: What a unit's (or the list's) line may write as its cost: digits, perhaps negative, perhaps
#: with separators or a decimal point (``7.5``, ``-5``, ``1,000``, ``99999999999999999999``), so
#: that a line that looks like one with a bad cost is refused (:func:`_cost`), not read as
#: another line. A price (``+20 pts``) is no cost: an enhancement's line.
_COST = r"(?P<pts>[-\u2212\u2013]?\d+(?:[.,'\u2019 _]\d+)*)"
#: ``Name (85 points)`` / ``Name (85 pts)`` (GW app, New Recruit GW).
_UNIT_HEAD = re.compile(rf"^(?P<name>\S.*?)\s*\(\s*{_COST}\s*{_POINTS_WORD}\s*\)\s*$", re.IGNORECASE)
#: War Organ's first line: ``Name [2000 points]``.
_WO_TITLE = re.compile(rf"^(?P<name>.*?)\s*\[\s*{_COST}\s*{_POINTS_WORD}\s*\]\s*$", re.IGNORECASE)
#: WTC-compact unit line: ``Char1: 1x Name (70 pts): items`` or ``2x Name (150 pts)``.
_WTC_UNIT = re.compile(rf"^(?:(?P<tag>[A-Za-z]{{1,12}}\d{{1,3}})\s*:\s*)?(?P<n>\d{{1,100}})\s*x\s+(?P<name>.+?)\s*"
                       rf"\(\s*{_COST}\s*{_POINTS_WORD}\s*\)\s*(?::\s*(?P<items>.*))?$", re.IGNORECASE)
_WTC_WITH = re.compile(r"^(?P<n>\d{1,100})\s+with\s+(?P<items>.+)$", re.IGNORECASE)
_WO_MODEL = re.compile(r"^(?P<n>\d{1,100})\s+(?P<name>.+?)\s+with\s+(?P<items>.+)$", re.IGNORECASE)
_WO_COUNT = re.compile(r"^(?P<n>\d{1,100})\s+(?P<name>\D.*)$")
_PRICE = re.compile(rf"\s*[\(\[]\s*\+\s*\d{{1,4}}\s*{_POINTS_WORD}\s*[\)\]]\s*$", re.IGNORECASE)
_ENHANCEMENT = re.compile(r"^(?:enhancements?|verbesserung|am[ée]lioration|optimizaci[oó]n)\s*:\s*(?P<name>.+)$",
                          re.IGNORECASE)
_ATTACHED_AS = re.compile(r"^attached as\s*:\s*(?P<role>.+)$", re.IGNORECASE)
_ATTACHED_BLOCK = re.compile(r"^attached units?\b(?:\s*(?P<n>\d{1,100}))?\s*$", re.IGNORECASE)
_WARLORD = re.compile(r"^(?:warlord|kriegsherr|seigneur de guerre|se[ñn]or de la guerra)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Line:
    no: int
    indent: int
    bullet: bool
    text: str


def _decode(raw: bytes, file: str) -> tuple[str, list[Note]]:
    """UTF-8 (with or without a byte-order mark); another encoding is read as Windows-1252, with a note."""
    if len(raw) > MAX_TEXT_BYTES:
        raise ProfileError(f"a roster text export larger than {MAX_TEXT_BYTES:,} bytes", where=file, value=len(raw))
    if b"\x00" in raw[:4096]:
        raise ProfileError("not a text file (it holds NUL bytes)", where=file,
                           hint="rosters are read from .ros/.rosz files or from the text an army app exports")
    try:
        return raw.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace"), [Note(0, "the file is not UTF-8: read as Windows-1252")]


def _lines(text: str) -> list[_Line]:
    out = []
    for no, raw in enumerate(text.splitlines(), 1):
        raw = raw.replace("\t", "    ").replace("\u00a0", " ").rstrip()
        stripped = raw.lstrip(" ")
        indent = len(raw) - len(stripped)
        bullet = False
        if stripped[:1] in _BULLETS and (len(stripped) == 1 or stripped[1:2] == " " or stripped[:1] not in "*-–"):
            bullet, stripped = True, stripped[1:].lstrip()
        out.append(_Line(no, indent, bullet, clean(stripped)))
    return out


def detect(lines: list[_Line], file: str) -> str:
    """The format of an export (one of :data:`FORMATS`).

    Raises:
        ProfileError: ``FILE:LINE``, naming the first line that fits no format.
    """
    body = [ln for ln in lines if ln.text]
    if not body:
        raise ProfileError("empty roster file", where=file)
    first = body[0]
    if first.text.startswith("+") and not first.bullet:
        for ln in body:
            if ln.text.startswith("+") and not ln.bullet:
                continue
            if _WTC_UNIT.match(ln.text):
                return "wtc-compact"
            if _UNIT_HEAD.match(ln.text) and ln.indent == 0 and not ln.bullet:
                return "new-recruit-gw"
        raise ProfileError("a New Recruit export with no unit this tool can read", where=f"{file}:{first.no}",
                           hint="export the list as 'GW' or 'WTC-compact' text")
    if _WO_TITLE.match(first.text) or any("warorgan" in ln.text.lower().replace(" ", "") for ln in body[-3:]):
        return "war-organ"
    if _UNIT_HEAD.match(first.text) and not first.bullet and any(ln.bullet for ln in body):
        return "gw-app"
    raise ProfileError("not a roster this tool reads (a .ros/.rosz file, or the text of the GW app, New Recruit "
                       "(GW or WTC-compact) or War Organ)", where=f"{file}:{first.no}", value=first.text[:80],
                       hint="the GW app's export starts 'LIST NAME (N points)'; New Recruit's with '+++'")


def parse_text(raw: bytes, file: str) -> Roster:
    """The roster an export states (units unmatched; see :func:`.match.match_roster`).

    Raises:
        ProfileError: naming the file (and line): not text, too large, an unknown format, or
            no unit at all.
    """
    text, notes = _decode(raw, file)
    lines = _lines(text)
    fmt = detect(lines, file)
    parser = {"gw-app": _gw_app, "new-recruit-gw": _new_recruit_gw, "wtc-compact": _wtc, "war-organ": _war_organ}[fmt]
    roster = parser(lines, file)
    if not roster.entries:
        raise ProfileError(f"no unit found in this {fmt} export", where=file,
                           hint="a unit line looks like 'Crisis Sunforge Battlesuits (125 points)'")
    return replace(roster, format=fmt, notes=tuple(notes) + roster.notes)


# --- shared: a unit's indented list -------------------------------------------------------


@dataclass
class _Node:
    line: _Line
    items: list[tuple[int, str]]
    children: list[_Node] = field(default_factory=list)

    def descendants(self) -> Iterator[_Node]:
        for c in self.children:
            yield c
            yield from c.descendants()


@dataclass
class _Unit:
    """A unit being read: its header and the list under it."""

    name: str
    line: int
    points: int | None
    section: str
    body: list[_Line] = field(default_factory=list)
    size: int | None = None
    group: int | None = None
    section_line: int = 0


def _split_items(text: str) -> list[tuple[int, str]]:
    """``"2x Gun Drone, Shield Drone"`` -> [(2, "Gun Drone"), (1, "Shield Drone")]."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if part:
            n, name = count_prefix(part)
            out.append((1 if n is None else n, name))
    return out


def _special(text: str, unit: dict[str, object], notes: list[Note], no: int) -> bool:
    """Warlord, Enhancement and Attached-as lines: recorded on ``unit``; True when ``text`` was one."""
    if _WARLORD.match(text):
        unit["warlord"] = True
        return True
    m = _ATTACHED_AS.match(text)
    if m:
        role = m["role"].lower()
        unit["role"] = "leader" if "leader" in role else "bodyguard" if "bodyguard" in role else ""
        if not unit["role"]:
            notes.append(Note(no, f"attachment role not understood: {m['role']!r}"))
        return True
    m = _ENHANCEMENT.match(text)
    name = m["name"] if m else (_PRICE.sub("", text) if _PRICE.search(text) else "")
    if name:
        name = re.sub(r"\s*\((?:upgrade|aufwertung|am[ée]lioration)\)\s*$", "", _PRICE.sub("", name),
                      flags=re.IGNORECASE)
        unit.setdefault("enhancements", [])
        unit["enhancements"].append(name.strip())  # type: ignore[attr-defined]
        return True
    return False


def _tree_unit(u: _Unit, faction: str, file: str) -> RosterUnit:
    """A GW-app / New Recruit GW unit: its bulleted list as a tree; top items with items under
    them are model groups, the rest the unit's wargear."""
    info: dict[str, object] = {}
    notes: list[Note] = []
    roots: list[_Node] = []
    stack: list[tuple[int, _Node]] = []
    for ln in u.body:
        if _special(ln.text, info, notes, ln.no):
            continue
        level = ln.indent if ln.bullet else ln.indent - 2
        node = _Node(ln, _split_items(ln.text))
        for n, name in node.items:
            _check_count(name, n, file, ln.no)
        while stack and stack[-1][0] >= level:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((level, node))
    models: list[RosterModel] = []
    wargear: list[tuple[int, str]] = []
    grouped = any(r.children for r in roots)
    for r in roots:
        if grouped and r.children and len(r.items) == 1:
            n, name = r.items[0]
            totals = [(w, k) for d in r.descendants() for k, w in d.items]
            models.append(RosterModel(name, n, tuple(totals), r.line.no))
        else:
            if r.children:
                notes.append(Note(r.line.no, f"a list of several items with items under it: {r.line.text!r}; "
                                  "all taken as the unit's wargear"))
            wargear += r.items + [i for d in r.descendants() for i in d.items]
    return _roster_unit(u, faction, models, [(w, n) for n, w in wargear], info, notes, file)


def _roster_unit(u: _Unit, faction: str, models: list[RosterModel], wargear: list[tuple[str, int]],
                 info: dict[str, object], notes: list[Note], file: str) -> RosterUnit:
    if any(_WARLORD.match(w) for w, _ in wargear):  # WTC-compact: "Char1: 1x Farsight (70 pts): Warlord, ..."
        info["warlord"] = True
        wargear = [(w, n) for w, n in wargear if not _WARLORD.match(w)]
    enhancements = info.get("enhancements", [])
    assert isinstance(enhancements, list)
    kept, kept_gear = _counted(u, models, wargear, notes, file)
    return RosterUnit(name=u.name, line=u.line, faction=faction, points=u.points, size=u.size, models=tuple(kept),
                      wargear=tuple(kept_gear), enhancements=tuple(enhancements), warlord=bool(info.get("warlord")),
                      role=str(info.get("role", "")), section=u.section, section_line=u.section_line,
                      notes=tuple(notes), zero_models=tuple(m.name for m in models if m.count == 0),
                      zero_items=tuple(w for w, n in wargear if n == 0))


def _counted(u: _Unit, models: list[RosterModel], wargear: list[tuple[str, int]], notes: list[Note],
             file: str) -> tuple[list[RosterModel], list[tuple[str, int]]]:
    """The unit's models and wargear without the ones counted 0 (each left out with a note).

    Raises:
        ProfileError: a count above MAX_ATTACKING_MODELS (no profile may add up to more): a
            damaged export, refused before anything is spread over that many models.
    """
    if u.size is not None:
        _check_count(u.name, u.size, file, u.line)
    kept: list[RosterModel] = []
    for m in models:
        for w, n in ((m.name, m.count), *m.weapons):
            _check_count(w, n, file, m.line or u.line)
        if m.count == 0:
            notes.append(Note(m.line or u.line, f"0x {m.name}: left out, with what it carries"))
            continue
        for w, n in m.weapons:
            if n == 0:
                notes.append(Note(m.line or u.line, f"0x {w} ({m.name}): left out"))
        kept.append(replace(m, weapons=tuple((w, n) for w, n in m.weapons if n)))
    for w, n in wargear:
        _check_count(w, n, file, u.line)
        if n == 0:
            notes.append(Note(u.line, f"0x {w}: left out"))
    return kept, [(w, n) for w, n in wargear if n]


def _check_count(name: str, n: int, file: str, line: int) -> None:
    """Raises ProfileError for a count above MAX_ATTACKING_MODELS (what a profile's counts may add up to)."""
    if n > MAX_ATTACKING_MODELS:
        raise ProfileError(f"{name!r}: a count must be from 0 to {MAX_ATTACKING_MODELS:,}", where=f"{file}:{line}",
                           value=n)


def _cost(head: re.Match[str], file: str, line: int) -> int:
    """The points a unit's (or the list's) line says: a whole number from 0 to MAX_ROSTER_POINTS.

    Raises:
        ProfileError: ``FILE:LINE``, naming the line's name and its cost as written (``7.5``,
            ``-5``, ``1,000``, twenty digits): never read as a model of the unit above it.
    """
    raw = head["pts"]
    if raw.isdecimal() and len(raw) <= len(str(MAX_ROSTER_POINTS)) and int(raw) <= MAX_ROSTER_POINTS:
        return int(raw)
    raise ProfileError(f"{clean(head['name'])!r}: a cost of points must be a whole number from 0 to "
                       f"{MAX_ROSTER_POINTS:,}", where=f"{file}:{line}", value=raw,  # (a long one is cut short)
                       hint="a unit's line reads like 'Crisis Sunforge Battlesuits (125 points)'")


def _is_heading(ln: _Line) -> bool:
    """A section heading: a line of capitals (``CHARACTERS``, ``OTHER DATASHEETS``)."""
    letters = [c for c in ln.text if c.isalpha()]
    return not ln.bullet and len(letters) >= 3 and all(c.isupper() for c in letters)


def _strip_faction(text: str) -> str:
    """``Xenos - T'au Empire`` -> ``T'au Empire`` (New Recruit prefixes the grand faction)."""
    return re.sub(r"^(?:xenos|imperium|chaos|unaligned)\s*-\s*", "", text.strip(), flags=re.IGNORECASE).strip()


# --- GW app ---------------------------------------------------------------------------------


def _gw_app(lines: list[_Line], file: str) -> Roster:
    body = [ln for ln in lines if ln.text]
    title = _UNIT_HEAD.match(body[0].text)
    assert title is not None
    name, points = title["name"], _cost(title, file, body[0].no)
    faction = ""
    notes: list[Note] = []
    units: list[_Unit] = []
    current: _Unit | None = None
    section = ""
    in_header = True
    group: int | None = None
    for ln in lines[body[0].no:]:
        if not ln.text:
            current = None
            continue
        if ln.text.lower().startswith("exported with app version"):
            break
        block = _ATTACHED_BLOCK.match(ln.text)
        if ln.indent == 0 and not ln.bullet and (block or _is_heading(ln)):
            in_header = False
            current = None
            if block and block["n"]:
                group = int(block["n"])
            elif block:
                section, group = "Attached Units", None
            else:
                section, group = ln.text, None
            continue
        if in_header:
            if not faction:
                faction = ln.text
            continue
        head = _UNIT_HEAD.match(ln.text)
        if head and ln.indent == 0 and not ln.bullet:
            current = _Unit(head["name"], ln.no, _cost(head, file, ln.no), section, group=group)
            units.append(current)
        elif current is not None:
            current.body.append(ln)
        else:
            notes.append(Note(ln.no, f"not understood (outside any unit): {ln.text!r}", unread=True))
    entries = [_tree_unit(u, faction, file) for u in units]
    return Roster(file=file, format="gw-app", name=name, faction=faction, points=points, entries=tuple(entries),
                  attachments=tuple(_attachments(units, entries, notes)), notes=tuple(notes))


def _attachments(units: list[_Unit], entries: list[RosterUnit], notes: list[Note]) -> list[Attachment]:
    """The GW app's "Attached Unit N" blocks: the units marked Leader onto the one marked Bodyguard."""
    groups: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        if u.group is not None:
            groups.setdefault(u.group, []).append(i)
    out = []
    for n, members in groups.items():
        leaders = tuple(i for i in members if entries[i].role == "leader")
        guards = [i for i in members if entries[i].role == "bodyguard"]
        line = units[members[0]].line
        if len(guards) == 1 and leaders and len(leaders) + 1 == len(members):
            out.append(Attachment(leaders, guards[0], line))
        else:
            found = ", ".join(f"{entries[i].name} ({entries[i].role or 'no role'})" for i in members)
            notes.append(Note(line, f"Attached Unit {n}: expected Leader units and one Bodyguard unit, found {found}: "
                              "not attached"))
    return out


# --- New Recruit: GW text ------------------------------------------------------------------------


#: New Recruit's header line "+ ENHANCEMENT: Starflare Ignition System (on Char7: Commander in Enforcer Battlesuit)".
_NR_ENHANCEMENT = re.compile(r"(?P<name>.+?)\s*\(on\s+(?:[^:()]*\d+\s*:\s*)?(?P<unit>[^()]+)\)\s*$", re.IGNORECASE)


@dataclass
class _Header:
    """What New Recruit's ``+`` header says: faction, points, the enhancements and who takes
    them (name, unit, line), and the index of the line after it."""

    faction: str = ""
    points: int | None = None
    enhancements: list[tuple[str, str, int]] = field(default_factory=list)
    end: int = 0


def _nr_header(lines: list[_Line], file: str) -> _Header:
    """The ``+ FACTION KEYWORD``, ``+ TOTAL ARMY POINTS`` and ``+ ENHANCEMENT`` lines of New
    Recruit's header, and the index after it.

    Raises:
        ProfileError: a total that is not a whole number of points (``2000.5pts``), as a unit's
            cost would be.
    """
    out = _Header()
    for i, ln in enumerate(lines):
        if not ln.text:
            continue
        if not ln.text.startswith("+") or ln.bullet:
            break
        out.end = i + 1
        body = ln.text.lstrip("+ ").strip()
        k, _, v = body.partition(":")
        if k.strip().upper() == "FACTION KEYWORD":
            out.faction = _strip_faction(v)
        elif k.strip().upper() == "TOTAL ARMY POINTS":
            m = re.fullmatch(r"([0-9]{1,7})\s*(?:pts|points)?", v.strip(), re.IGNORECASE)
            if m is None or int(m[1]) > MAX_ROSTER_POINTS:
                raise ProfileError(f"the army's total must be a whole number of points from 0 to "
                                   f"{MAX_ROSTER_POINTS:,}", where=f"{file}:{ln.no}", value=v.strip(),
                                   hint="New Recruit writes it as '+ TOTAL ARMY POINTS: 2000pts'")
            out.points = int(m[1])
        elif k.strip().upper() in ("ENHANCEMENT", "ENHANCEMENTS"):
            m = _NR_ENHANCEMENT.match(v.strip())
            if m:
                out.enhancements.append((clean(m["name"]), clean(m["unit"]), ln.no))
    return out


def _header_enhancements(entries: list[RosterUnit], header: _Header, notes: list[Note]) -> list[RosterUnit]:
    """The header's enhancements given to the units they name where the unit's own lines do not
    list them already (a file may say it only once): the first unit of that name without an
    enhancement, with a note; one whose unit is not found is named in a note."""
    out = list(entries)
    for name, unit, line in header.enhancements:
        same = [i for i, e in enumerate(out) if e.name.lower() == unit.lower()]
        if any(name.lower() == x.lower() for i in same for x in out[i].enhancements):
            continue
        free = [i for i in same if not out[i].enhancements]
        if not free:
            notes.append(Note(line, f"enhancement {name!r} for {unit!r}: no such unit without an enhancement in the "
                                    "list: not given"))
            continue
        i = free[0]
        out[i] = replace(out[i], enhancements=(*out[i].enhancements, name), notes=(*out[i].notes, Note(
            line, f"Enhancement {name}: from the header" + (f" (the first of {len(same)} units of this name)"
                                                             if len(same) > 1 else ""))))
    return out


def _new_recruit_gw(lines: list[_Line], file: str) -> Roster:
    header = _nr_header(lines, file)
    faction, points, start = header.faction, header.points, header.end
    notes: list[Note] = []
    units: list[_Unit] = []
    current: _Unit | None = None
    section = ""
    for ln in lines[start:]:
        if not ln.text:
            continue
        head = _UNIT_HEAD.match(ln.text)
        if ln.indent == 0 and not ln.bullet and head:
            current = _Unit(head["name"], ln.no, _cost(head, file, ln.no), section)
            units.append(current)
        elif ln.indent == 0 and not ln.bullet and _is_heading(ln):
            section, current = ln.text, None
        elif current is not None and (ln.bullet or ln.indent > 0):
            current.body.append(ln)
        else:
            notes.append(Note(ln.no, f"not understood: {ln.text!r}", unread=True))
    entries = _header_enhancements([_tree_unit(u, faction, file) for u in units], header, notes)
    return Roster(file=file, format="new-recruit-gw", faction=faction, points=points, entries=tuple(entries),
                  notes=tuple(notes))


# --- New Recruit: WTC-compact ------------------------------------------------------------------------


def _wtc_items(text: str, times: int = 1) -> list[tuple[str, int]]:
    return [(name, n * times) for n, name in _split_items(text)]


def _wtc(lines: list[_Line], file: str) -> Roster:
    header = _nr_header(lines, file)
    faction, points, start = header.faction, header.points, header.end
    notes: list[Note] = []
    entries: list[RosterUnit] = []
    unit: _Unit | None = None
    models: list[RosterModel] = []
    wargear: list[tuple[str, int]] = []
    info: dict[str, object] = {}
    unotes: list[Note] = []
    pending: list[object] = []  # [name, models not yet given a "N with" list, line] of "• 9x Pathfinders"

    def flush() -> None:
        if pending:
            name, left, line = pending
            assert isinstance(name, str) and isinstance(left, int) and isinstance(line, int)
            if left > 0:
                models.append(RosterModel(name, left, (), line))
            pending.clear()

    def close() -> None:
        flush()
        if unit is not None:
            entries.append(_roster_unit(unit, faction, list(models), list(wargear), dict(info), list(unotes), file))
        models.clear()
        wargear.clear()
        info.clear()
        unotes.clear()

    for ln in lines[start:]:
        if not ln.text:
            continue
        head = _WTC_UNIT.match(ln.text)
        if head and not ln.bullet and ln.indent == 0:
            close()
            unit = _Unit(head["name"], ln.no, _cost(head, file, ln.no), "", size=int(head["n"]))
            wargear.extend(_wtc_items(head["items"] or ""))
            continue
        if unit is None:
            notes.append(Note(ln.no, f"not understood (outside any unit): {ln.text!r}", unread=True))
            continue
        with_ = _WTC_WITH.match(ln.text)
        if ln.bullet:
            flush()
            name_part, _, items = ln.text.partition(":")
            n, name = count_prefix(name_part)
            for k, item in ([(n, name)] if n is not None else []) + _split_items(items):
                _check_count(item, k, file, ln.no)
            if n is None:
                if not _special(ln.text, info, unotes, ln.no):
                    unotes.append(Note(ln.no, f"not understood: {ln.text!r}"))
                continue
            w = _WTC_WITH.match(items.strip())
            if w:  # "2x Crisis Shas'ui: 2 with Gun Drone, 2x Plasma rifle": per model
                k = int(w["n"])
                models.append(RosterModel(name, k, tuple(_wtc_items(w["items"], k)), ln.no))
                if k != n:
                    unotes.append(Note(ln.no, f"{n}x {name}, but the list is for {k}"))
            elif items.strip():
                models.append(RosterModel(name, n, tuple(_wtc_items(items)), ln.no))
            elif n == 0:  # "• 0x Pathfinders": left out with a note, as any model counted 0
                models.append(RosterModel(name, 0, (), ln.no))
            else:
                pending.extend([name, n, ln.no])
        elif with_ and pending:
            # "6 with ..." under "• 9x Pathfinders": that many of the model, each with these
            k = int(with_["n"])
            held, left = pending[0], pending[1]
            assert isinstance(held, str) and isinstance(left, int)
            if k > left:
                unotes.append(Note(ln.no, f"{k} with ..., but only {left} {held} are left: taken as {k}"))
            models.append(RosterModel(held, k, tuple(_wtc_items(with_["items"], k)), ln.no))
            pending[1] = max(0, left - k)
        elif not ln.bullet and _special(ln.text, info, unotes, ln.no):
            continue
        else:
            unotes.append(Note(ln.no, f"not understood: {ln.text!r}"))
    close()
    entries = _header_enhancements(entries, header, notes)
    return Roster(file=file, format="wtc-compact", faction=faction, points=points, entries=tuple(entries),
                  notes=tuple(notes))


# --- War Organ --------------------------------------------------------------------------------------


def _wo_items(text: str, times: int) -> list[tuple[str, int]]:
    """War Organ's ``2 Fusion blaster, Battlesuit fists and Gun drone with twin pulse carbine``:
    items separated by commas and ``and``, each ``N name`` per model (``times`` models)."""
    out = []
    for part in re.split(r",\s*|\s+and\s+", text):
        part = part.strip()
        if not part:
            continue
        m = _WO_COUNT.match(part)
        n, name = (int(m["n"]), m["name"]) if m else (1, part)
        out.append((name.strip(), n * times))
    return out


def _war_organ(lines: list[_Line], file: str) -> Roster:
    body = [ln for ln in lines if ln.text]
    title = _WO_TITLE.match(body[0].text)
    name, points = (title["name"], _cost(title, file, body[0].no)) if title else (body[0].text, None)
    faction = ""
    notes: list[Note] = []
    units: list[dict[str, object]] = []
    section, section_line = "", 0
    for ln in lines[body[0].no:]:
        if not ln.text or "warorgan" in ln.text.lower().replace(" ", ""):
            continue
        head = _UNIT_HEAD.match(ln.text)
        if ln.indent == 0 and not ln.bullet:
            if not faction:
                faction = ln.text
            elif re.match(r"^(battle size|detachments?|force disposition)\s*:", ln.text, re.IGNORECASE):
                pass
            else:
                section, section_line = ln.text, ln.no
        elif head and not ln.bullet:
            units.append({"name": head["name"], "line": ln.no, "points": _cost(head, file, ln.no), "section": section,
                          "section_line": section_line, "models": [], "wargear": [], "info": {}, "notes": []})
        elif ln.bullet and units:
            u = units[-1]
            info, unotes, models, wargear = u["info"], u["notes"], u["models"], u["wargear"]
            assert isinstance(info, dict) and isinstance(unotes, list) and isinstance(models, list)
            assert isinstance(wargear, list)
            if _special(ln.text, info, unotes, ln.no):
                continue
            m = _WO_MODEL.match(ln.text)
            if m:
                k = int(m["n"])
                _check_count(m["name"], k, file, ln.no)  # before models of one name are added up
                models.append(RosterModel(m["name"], k, tuple(_wo_items(m["items"], k)), ln.no))
            else:
                wargear += _wo_items(ln.text, 1)
        else:
            notes.append(Note(ln.no, f"not understood: {ln.text!r}", unread=True))
    entries = []
    for u in units:
        models = u["models"]
        assert isinstance(models, list)
        merged: dict[tuple[str, tuple[tuple[str, int], ...]], RosterModel] = {}
        for mo in models:  # "1 Crisis Shas'ui with ..." twice: one group of 2
            same = (mo.name, tuple((w, n // max(mo.count, 1)) for w, n in mo.weapons))
            have = merged.get(same)
            merged[same] = mo if have is None else replace(
                have, count=have.count + mo.count,
                weapons=tuple((w, n + m) for (w, n), (_, m) in zip(have.weapons, mo.weapons, strict=True)))
        u["models"] = list(merged.values())
        name_, line, pts, sec = u["name"], u["line"], u["points"], u["section"]
        assert isinstance(name_, str) and isinstance(line, int) and isinstance(pts, int) and isinstance(sec, str)
        wargear, info, unotes = u["wargear"], u["info"], u["notes"]
        assert isinstance(wargear, list) and isinstance(info, dict) and isinstance(unotes, list)
        heading = u["section_line"]
        assert isinstance(heading, int)
        entries.append(_roster_unit(_Unit(name_, line, pts, sec, section_line=heading), faction,
                                    u["models"], wargear, info, unotes, file))  # type: ignore[arg-type]
    return Roster(file=file, format="war-organ", name=name, faction=faction, points=points, entries=tuple(entries),
                  notes=tuple(notes))
