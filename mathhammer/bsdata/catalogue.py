"""A set of BSData files loaded together, with links resolved by id as BattleScribe resolves them.

A catalogue names its game system (``gameSystemId``) and the catalogues it links
(``catalogueLinks``; with ``importRootEntries`` their root entries become its own). Entries,
groups, profiles and rules are shared by id across the game system and every loaded catalogue
(``entryLink``/``infoLink`` ``targetId``). File names are never used to find anything: a linked
catalogue or game system missing from the files given is looked up by id among the BSData files
in the same folder, and is an error naming the file if it is not there.

Which faction a unit belongs to: the non-library catalogues whose own root entries reach it
(its root ``selectionEntries`` and root ``entryLinks``). A unit only imported (the root entries of
a library imported with ``importRootEntries``, e.g. the Imperial Knights library) belongs to the
importing catalogue that holds the fewest units of its own (the thin faction catalogue built on
that library, not an army that may take the units as allies); ties go to the first catalogue
by name. A unit no loaded non-library catalogue reaches belongs to the library that holds it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ProfileError
from .xmlsafe import parse_xml, read_bsdata_file

__all__ = ["BSDATA_SUFFIXES", "Catalogue", "Index", "faction_name", "find_files", "load"]

#: Files read as BSData catalogues / game systems.
BSDATA_SUFFIXES = (".cat", ".gst", ".catz", ".gstz")
#: Elements found by id (targets of entryLink / infoLink / categoryLink).
_INDEXED = frozenset({"selectionEntry", "selectionEntryGroup", "profile", "rule", "infoGroup", "categoryEntry"})
_UNIT_TYPES = ("unit", "model")


@dataclass
class Catalogue:
    """One loaded .cat or .gst file."""

    id: str
    name: str
    file: str
    root: ET.Element
    library: bool
    game_system: bool
    #: (target catalogue id, importRootEntries) of each catalogueLink
    links: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def faction(self) -> str:
        return faction_name(self.name)


def faction_name(catalogue_name: str) -> str:
    """The faction a catalogue's name stands for: its last ``" - "`` part that is not "Library".

    ``Xenos - T'au Empire`` -> ``T'au Empire``; ``Imperium - Adeptus Astartes - Space Marines`` ->
    ``Space Marines``; ``Imperium - Astra Militarum - Library`` -> ``Astra Militarum``;
    ``Aeldari - Aeldari Library`` -> ``Aeldari``.
    """
    parts = [p.strip() for p in catalogue_name.split(" - ") if p.strip()]
    kept = [p for p in parts if p.lower() != "library"] or parts or [catalogue_name.strip()]
    last = kept[-1]
    return re.sub(r"\s+library$", "", last, flags=re.IGNORECASE) or last


def _same_faction(faction: str, library_faction: str) -> bool:
    """True when a faction catalogue is the one a library is named for ("Chaos Daemons" / "Daemons")."""
    a, b = faction.lower(), library_faction.lower()
    return a == b or a.endswith(" " + b)


def find_files(paths: Sequence[Path]) -> list[Path]:
    """The BSData files named: files as given, folders searched (recursively) for .cat/.gst/.catz/.gstz."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix.lower() in BSDATA_SUFFIXES and f.is_file()
                              and not any(part.startswith(".") for part in f.relative_to(p).parts)))
        else:
            out.append(p)
    return list(dict.fromkeys(out))


class Index:
    """Every element with an id, the catalogues, and who links what."""

    def __init__(self) -> None:
        self.catalogues: dict[str, Catalogue] = {}
        self.by_id: dict[str, ET.Element] = {}
        #: selectionEntry id -> the catalogue whose file defines it
        self.home: dict[str, Catalogue] = {}
        #: entryLink id -> (the catalogue whose file holds it, its target's id), each file's: a
        #: group's default may name a link of another group (ids repeat across files)
        self.links: dict[str, list[tuple[str, str]]] = {}
        #: selectionEntryGroup id -> the catalogue whose file holds it
        self.group_home: dict[str, str] = {}

    def add(self, cat: Catalogue) -> None:
        self.catalogues[cat.id] = cat
        by_id = self.by_id
        for elem in cat.root.iter():
            if elem.tag in _INDEXED:
                ident = elem.get("id")
                if ident and ident not in by_id:
                    by_id[ident] = elem
                    if elem.tag == "selectionEntry":
                        self.home[ident] = cat
                    elif elem.tag == "selectionEntryGroup":
                        self.group_home[ident] = cat.id
            elif elem.tag == "entryLink":
                ident = elem.get("id")
                if ident:
                    self.links.setdefault(ident, []).append((cat.id, elem.get("targetId", "")))

    def target(self, link: ET.Element) -> ET.Element | None:
        """The element an entryLink / infoLink / categoryLink points to, or None."""
        return self.by_id.get(link.get("targetId", ""))

    # -- root entries and faction membership ---------------------------------------------------

    def root_entries(self, cat: Catalogue) -> Iterator[tuple[ET.Element, ET.Element | None]]:
        """(entry, entryLink or None) of a catalogue's own root selectionEntries and root entryLinks."""
        for holder in cat.root:
            if holder.tag == "selectionEntries":
                for e in holder:
                    if e.tag == "selectionEntry":
                        yield e, None
            elif holder.tag == "entryLinks":
                for link in holder:
                    target = self.target(link)
                    if target is not None:
                        yield target, link

    def units_of(self, cat: Catalogue) -> list[tuple[ET.Element, ET.Element | None]]:
        """The unit entries (type unit/model) among a catalogue's own root entries, groups expanded."""
        out: list[tuple[ET.Element, ET.Element | None]] = []
        seen: set[str] = set()

        def visit(entry: ET.Element, link: ET.Element | None, depth: int) -> None:
            if entry.tag == "selectionEntry":
                if entry.get("type") in _UNIT_TYPES and entry.get("id", "") not in seen:
                    seen.add(entry.get("id", ""))
                    out.append((entry, link))
            elif entry.tag == "selectionEntryGroup" and depth < 8:
                for child, child_link in self.children(entry):
                    visit(child, child_link, depth + 1)

        for entry, link in self.root_entries(cat):
            visit(entry, link, 0)
        return out

    def defined_units(self, cat: Catalogue) -> list[tuple[ET.Element, ET.Element | None]]:
        """A catalogue's root units and the unit entries of its sharedSelectionEntries (a library's units)."""
        out = self.units_of(cat)
        seen = {e.get("id", "") for e, _ in out}
        for holder in cat.root:
            if holder.tag == "sharedSelectionEntries":
                for e in holder:
                    if e.tag == "selectionEntry" and e.get("type") in _UNIT_TYPES and e.get("id", "") not in seen:
                        seen.add(e.get("id", ""))
                        out.append((e, None))
        return out

    def imported(self, cat: Catalogue) -> list[Catalogue]:
        """Catalogues whose root entries ``cat`` imports (importRootEntries), transitively, in link order."""
        out: list[Catalogue] = []
        todo = [cid for cid, imp in cat.links if imp]
        while todo:
            cid = todo.pop(0)
            linked = self.catalogues.get(cid)
            if linked is None or linked is cat or linked in out:
                continue
            out.append(linked)
            todo.extend(c for c, imp in linked.links if imp)
        return out

    def owners(self) -> dict[str, list[Catalogue]]:
        """Unit entry id -> the catalogues (factions) it belongs to (see the module's docstring)."""
        cats = sorted((c for c in self.catalogues.values() if not c.game_system), key=lambda c: (c.name, c.id))
        direct = {c.id: self.units_of(c) for c in cats}
        reach: dict[str, list[Catalogue]] = {}  # unit id -> faction catalogues reaching it
        reach_direct: dict[str, list[Catalogue]] = {}
        for c in cats:
            if c.library:
                continue
            for entry, _ in direct[c.id]:
                reach_direct.setdefault(entry.get("id", ""), []).append(c)
            for lib in (c, *self.imported(c)):
                for entry, _ in direct[lib.id]:
                    found = reach.setdefault(entry.get("id", ""), [])
                    if c not in found:
                        found.append(c)
        owner: dict[str, list[Catalogue]] = {}
        for c in cats:
            for entry, _ in direct[c.id]:
                uid = entry.get("id", "")
                if uid in owner:
                    continue
                home = self.home.get(uid)
                reachers = reach.get(uid, [])
                if home is not None and not home.library and not home.game_system and home in reachers:
                    owner[uid] = [home]
                    continue
                if home is not None:
                    named = [r for r in reachers if _same_faction(r.faction, home.faction)]
                    if named:
                        owner[uid] = [min(named, key=lambda r: (len(direct[r.id]), r.name, r.id))]
                        continue
                owner[uid] = reach_direct.get(uid) or [c]
        return owner

    # -- walking an entry ----------------------------------------------------------------------

    def children(self, entry: ET.Element) -> Iterator[tuple[ET.Element, ET.Element | None]]:
        """(child, entryLink or None): an entry's selectionEntries, selectionEntryGroups and entryLinks."""
        for holder in entry:
            tag = holder.tag
            if tag == "selectionEntries" or tag == "selectionEntryGroups":
                for child in holder:
                    if child.tag in ("selectionEntry", "selectionEntryGroup"):
                        yield child, None
            elif tag == "entryLinks":
                for link in holder:
                    target = self.target(link)
                    if target is not None and target.tag in ("selectionEntry", "selectionEntryGroup"):
                        yield target, link

    def profiles(self, entry: ET.Element, link: ET.Element | None = None) -> Iterator[ET.Element]:
        """An entry's profiles: its own, those of its infoLinks and infoGroups (and its link's)."""
        for node in (entry, link):
            if node is None:
                continue
            yield from self._profiles(node, 0)

    def _profiles(self, node: ET.Element, depth: int) -> Iterator[ET.Element]:
        for holder in node:
            if holder.tag == "profiles":
                yield from (p for p in holder if p.tag == "profile")
            elif holder.tag == "infoLinks":
                for il in holder:
                    target = self.target(il)
                    if target is None:
                        continue
                    if target.tag == "profile":
                        yield target
                    elif target.tag == "infoGroup" and depth < 4:
                        yield from self._profiles(target, depth + 1)
            elif holder.tag == "infoGroups" and depth < 4:
                for group in holder:
                    yield from self._profiles(group, depth + 1)

    def rule_names(self, entry: ET.Element, link: ET.Element | None = None) -> Iterator[tuple[str, str]]:
        """(name, description) of an entry's rules: its own and its rule infoLinks, name modifiers applied
        (``Feel No Pain`` + append ``5+`` -> ``Feel No Pain 5+``)."""
        for node in (entry, link):
            if node is None:
                continue
            for holder in node:
                if holder.tag == "rules":
                    for r in holder:
                        if r.tag == "rule":
                            yield r.get("name", ""), _description(r)
                elif holder.tag == "infoLinks":
                    for il in holder:
                        if il.get("type") != "rule":
                            continue
                        target = self.target(il)
                        base = il.get("name") or (target.get("name") if target is not None else None) or ""
                        yield _renamed(base, il), _description(target) if target is not None else ""


def _description(rule: ET.Element) -> str:
    for holder in rule:
        if holder.tag == "description":
            return " ".join((holder.text or "").split())
    return ""


def _renamed(name: str, link: ET.Element) -> str:
    """A name with the link's unconditional ``append``/``set`` name modifiers applied."""
    for holder in link:
        if holder.tag != "modifiers":
            continue
        for m in holder:
            if m.get("field") != "name" or any(c.tag in ("conditions", "conditionGroups") for c in m):
                continue
            if m.get("type") == "append":
                name = f"{name}{m.get('join', ' ')}{m.get('value', '')}"
            elif m.get("type") == "set":
                name = m.get("value", name)
    return " ".join(name.split())


# -- loading -------------------------------------------------------------------------------------

_HEAD_ID = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(catalogue|gameSystem)\b[^>]*?\sid=\"([^\"]+)\"")


def _read_catalogue(path: Path) -> Catalogue:
    raw, file = read_bsdata_file(path)
    root = parse_xml(raw, file)
    if root.tag not in ("catalogue", "gameSystem"):
        raise ProfileError(f"not a BattleScribe catalogue or game system (its root element is <{root.tag}>)",
                           where=file, hint="import .cat/.gst files (or .catz/.gstz) of a BSData repository")
    ident = root.get("id", "")
    if not ident:
        raise ProfileError(f"a BattleScribe {root.tag} without an id", where=file)
    cat = Catalogue(id=ident, name=" ".join(root.get("name", "").split()) or Path(file).stem, file=file, root=root,
                    library=root.get("library") == "true", game_system=root.tag == "gameSystem")
    for holder in root:
        if holder.tag == "catalogueLinks":
            cat.links = [(lk.get("targetId", ""), lk.get("importRootEntries") == "true")
                         for lk in holder if lk.tag == "catalogueLink"]
    return cat


def _head_id(path: Path) -> str:
    """The id of a BSData file's root element, read from its first bytes ('' when unknown or zipped)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return ""
    m = _HEAD_ID.search(head)
    return m[2].decode("ascii", "replace") if m else ""


@dataclass
class Loaded:
    """The result of :func:`load`: the index and which catalogues were named (not only needed)."""

    index: Index
    named: list[Catalogue]


def load(paths: Sequence[Path]) -> Loaded:
    """Load the named BSData files and every catalogue / game system they need (by id, from the same folders).

    Raises:
        ProfileError: a file that cannot be read or is not BattleScribe data, a game system or
            linked catalogue found nowhere, naming the file that needs it.
    """
    files = find_files(paths)
    if not files:
        raise ProfileError("no BSData files (.cat, .gst, .catz, .gstz) found", where=", ".join(map(str, paths)))
    index = Index()
    named: list[Catalogue] = []
    for f in files:
        cat = _read_catalogue(f)
        if cat.id in index.catalogues:
            continue
        index.add(cat)
        named.append(cat)
    folders = list(dict.fromkeys(f.parent for f in files))
    spare: dict[str, Path] | None = None
    todo = list(named)
    while todo:
        cat = todo.pop(0)
        needed = [(cid, "catalogue") for cid, _ in cat.links]
        if not cat.game_system:
            needed.append((cat.root.get("gameSystemId", ""), "game system"))
        for cid, what in needed:
            if not cid or cid in index.catalogues:
                continue
            if spare is None:
                spare = {}
                for folder in folders:
                    for p in sorted(folder.iterdir()):
                        if p.suffix.lower() in BSDATA_SUFFIXES and p not in files and p.is_file():
                            spare.setdefault(_head_id(p), p)
            found = spare.get(cid)
            if found is None:
                raise ProfileError(f"its {what} (id {cid}) is missing: not among the files given nor in "
                                   f"{', '.join(str(f) for f in folders)}", where=cat.file,
                                   hint="import the whole BSData folder, or give the .gst and linked .cat files too")
            extra = _read_catalogue(found)
            index.add(extra)
            todo.append(extra)
    return Loaded(index=index, named=named)
