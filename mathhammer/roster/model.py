"""A player's army as a roster file states it: units, their models and wargear, points,
enhancements, attached leaders, and what could not be understood.

Frozen value types; no IO. A :class:`RosterUnit` keeps what the file says (names as written,
weapon counts as the file counts them) beside the engine's :class:`~mathhammer.model.Unit` built
from it, so ``mathhammer roster show`` can print both and say where they differ.

Weapon counts in :attr:`RosterModel.weapons` are **totals for the model group**: ``9x Pathfinder``
with ``6x Pulse carbine`` is ``(("Pulse carbine", 6),)`` on a group of 9, as the GW app, New
Recruit and BattleScribe count them. Formats that count per model (War Organ, WTC-compact's
``N with ...``) are multiplied out by the parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Unit

__all__ = ["Attachment", "Note", "Roster", "RosterModel", "RosterUnit", "SCHEMA"]

#: The ``schema`` of :meth:`Roster.to_dict` documents.
SCHEMA = "mathhammer.roster/1"


@dataclass(frozen=True, slots=True)
class Note:
    """Something the tool did not understand or had to decide: at ``line`` of the file (0: the
    file as a whole, or a .ros selection without a line). ``unread``: the line belongs to no unit
    and could not be read (:meth:`Roster.not_understood`)."""

    line: int
    text: str
    unread: bool = False

    def __str__(self) -> str:
        return f"line {self.line}: {self.text}" if self.line else self.text


@dataclass(frozen=True, slots=True)
class RosterModel:
    """``count`` models called ``name`` and what they carry: (weapon or wargear name as written,
    how many the ``count`` models carry in total), in the file's order."""

    name: str
    count: int
    weapons: tuple[tuple[str, int], ...] = ()
    line: int = 0


@dataclass(frozen=True, slots=True)
class RosterUnit:
    """One unit of the roster.

    ``models`` are the model groups the file lists; ``wargear`` the items it lists for the unit
    without a model (a one-model character's weapons, say), totals as in ``models``. ``size`` is
    the unit's model count when the file states it in the unit's line (``10x Kroot Carnivores``).
    ``role`` is ``"leader"`` or ``"bodyguard"`` when the file attaches the unit (GW app "Attached
    Units"). ``unit`` is the engine's unit (``None``: not matched, see ``notes``); ``matched`` the
    library unit it was matched to ("" when the file holds the profiles itself, as a .ros does).
    ``zero_models`` names the model groups a text export lists with a count of 0 and
    ``zero_items`` the items it lists for the unit with a count of 0 (``0x Kroot Carnivores`` may
    name its models): left out, with a note; a unit they leave without models has none, not the
    library's default (ruling M87).
    """

    name: str
    line: int
    faction: str = ""
    points: int | None = None
    size: int | None = None
    models: tuple[RosterModel, ...] = ()
    wargear: tuple[tuple[str, int], ...] = ()
    enhancements: tuple[str, ...] = ()
    warlord: bool = False
    role: str = ""
    section: str = ""
    #: the line of the heading ``section`` (0: none, or not kept): two headings of one name apart
    section_line: int = 0
    unit: Unit | None = None
    matched: str = ""
    notes: tuple[Note, ...] = ()
    #: keywords the wargear listed gives the unit beyond its datasheet's ("The bearer's unit has
    #: the Markerlight keyword": a Marker Drone; ruling M81): an attached unit's parts share them
    given_keywords: tuple[str, ...] = ()
    zero_models: tuple[str, ...] = ()
    zero_items: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the unit reached the engine (matched, or built from the file's profiles)."""
        return self.unit is not None

    def to_dict(self) -> dict[str, Any]:
        """The unit as JSON-ready data: as written, and as the engine will use it."""
        out: dict[str, Any] = {"name": self.name, "line": self.line, "faction": self.faction, "points": self.points,
                               "size": self.size, "section": self.section, "role": self.role, "warlord": self.warlord,
                               "enhancements": list(self.enhancements),
                               "models": [{"name": m.name, "count": m.count, "line": m.line,
                                           "weapons": [{"name": w, "count": n} for w, n in m.weapons]}
                                          for m in self.models],
                               "wargear": [{"name": w, "count": n} for w, n in self.wargear],
                               "matched": self.matched, "notes": [{"line": n.line, "text": n.text} for n in self.notes]}
        u = self.unit
        out["unit"] = None if u is None else {
            "name": u.name, "source": u.source, "points": u.points, "attached": list(u.attached),
            "models": [{"name": m.name, "count": m.count, "T": m.toughness, "Sv": m.save, "W": m.wounds,
                        "invulnerable": m.invulnerable or u.invulnerable,
                        "invulnerable_ranged_only": bool((m.invulnerable or u.invulnerable)
                                                         and u.invulnerable_ranged_only),
                        "feel_no_pain": m.feel_no_pain or u.feel_no_pain,
                        "weapons": [{"name": w, "count": n} for w, n in m.loadout]} for m in u.models]}
        return out


@dataclass(frozen=True, slots=True)
class Attachment:
    """Leaders attached to a Bodyguard unit, as the file states it: indexes into
    :attr:`Roster.entries`; ``line`` where the file says so."""

    leaders: tuple[int, ...]
    bodyguard: int
    line: int = 0


@dataclass(frozen=True, slots=True)
class Roster:
    """A roster file as understood. ``format`` names the file's format (``ros``, ``rosz``,
    ``gw-app``, ``new-recruit-gw``, ``wtc-compact``, ``war-organ``); ``entries`` its units in
    the file's order; ``notes`` what concerns the file as a whole."""

    file: str
    format: str
    name: str = ""
    faction: str = ""
    points: int | None = None
    entries: tuple[RosterUnit, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    notes: tuple[Note, ...] = field(default=())

    def units(self) -> list[Unit]:
        """The engine's units of every entry that has one, in the file's order: names unique
        within the roster (``Name``, ``Name (2)``, ...), ``source`` naming the roster file and
        line, a Bodyguard's ``attached`` naming its leaders."""
        return [e.unit for e in self.entries if e.unit is not None]

    def not_understood(self) -> list[Note]:
        """The file's lines that belong to no unit and could not be read: a unit whose line is
        one of them is missing from :meth:`units` (its weapons too)."""
        return [n for n in self.notes if n.unread]

    def unmatched(self) -> list[RosterUnit]:
        """The entries that did not reach the engine (their notes say why)."""
        return [e for e in self.entries if e.unit is None]

    def to_dict(self) -> dict[str, Any]:
        """The roster as a JSON-ready document (schema :data:`SCHEMA`)."""
        return {"schema": SCHEMA, "file": self.file, "format": self.format, "name": self.name,
                "faction": self.faction, "points": self.points,
                "units": [e.to_dict() for e in self.entries],
                "attachments": [{"leaders": [self._name(i) for i in a.leaders], "bodyguard": self._name(a.bodyguard),
                                 "line": a.line} for a in self.attachments],
                "notes": [{"line": n.line, "text": n.text} for n in self.notes]}

    def _name(self, i: int) -> str:
        """Entry ``i``'s unit name (as the engine knows it when matched)."""
        e = self.entries[i]
        return e.unit.name if e.unit is not None else e.name
