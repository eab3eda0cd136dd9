"""YAML profiles <-> model objects, and name lookup. The only module that reads profile files.

A profile file is ``{schema: 1, source: str, units: [unit, ...]}``; the unit layout is
documented in ``docs/profiles.md``. Errors name the file, the YAML path and the value:
``profiles/orks.yaml: units[0].weapons[1].D: expected a dice expression (got 'd7x')``.

Reading a file is guarded before YAML sees it (a regular file, at most ``MAX_PROFILE_BYTES``,
UTF-8) and while it is composed (no duplicate keys, at most ``MAX_YAML_NODES`` values after
expanding aliases, at most ``MAX_YAML_DEPTH`` levels), so a hostile file costs an error, not
the machine. The checked units are cached, keyed on the files' content and on this code, in
a format that is never executed (see :func:`_read_entry`).
"""

from __future__ import annotations

import codecs
import hashlib
import marshal
import os
import reprlib
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import dice, limits
from .errors import ProfileError
from .limits import (
    MAX_AP,
    MAX_CHARACTERISTIC,
    MAX_DAMAGE_MOD,
    MAX_PROFILE_BYTES,
    MAX_RANGE,
    MAX_TARGET_MODELS,
    MAX_WOUNDS,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
)
from .model import Ability, AbilitySpec, DamageReroll, DiceExpr, ModelStats, RerollPolicy, SaveReroll, Unit, Weapon
from .notation import parse_ability

if TYPE_CHECKING:
    from yaml.nodes import Node

__all__ = ["ENV_VAR", "SCHEMA_VERSION", "Library", "builtin_dirs", "dump_unit", "load_library", "load_file"]

_T = TypeVar("_T")

SCHEMA_VERSION = 1
ENV_VAR = "MATHHAMMER_PROFILES"

#: Longest integer read (every limit has far fewer digits; int() refuses more than 4300).
_MAX_DIGITS = 30
#: Longest value shown in an error message.
_SHOW_CHARS = 80

_UNIT_KEYS = {"name", "aliases", "faction", "points", "source", "models", "invulnerable", "feel_no_pain",
              "damage_reduction", "deadly_demise", "keywords", "weapons", "abilities", "modifiers"}
_MODEL_KEYS = {"name", "count", "M", "T", "Sv", "W", "Ld", "OC"}
_WEAPON_KEYS = {"name", "aliases", "range", "A", "BS", "WS", "S", "AP", "D", "abilities", "modifiers"}

#: Modifiers a profile may carry, merged with the command line (which wins): name -> type.
#: As an attacker a unit/weapon uses the first group; as a target a unit uses save_mod and
#: reroll_saves.
MODIFIERS: dict[str, type] = {
    "hit_mod": int, "wound_mod": int, "damage_mod": int, "bs_improve": int, "ap_improve": int, "crit_hit": int,
    "crit_wound": int, "reroll_hits": RerollPolicy, "reroll_wounds": RerollPolicy, "reroll_damage": DamageReroll,
    "save_mod": int, "reroll_saves": SaveReroll,
}
#: Defensive unit abilities (``abilities:`` of a unit).
_DEFENSIVE = {"STEALTH": "stealth", "HALF DAMAGE": "half_damage", "-1 DAMAGE": "damage_reduction"}


def _repr_limits() -> reprlib.Repr:
    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxdict, r.maxtuple, r.maxset = 3, 6, 6, 6, 6
    r.maxstring = r.maxother = _SHOW_CHARS
    return r


_REPR = _repr_limits()


def _show(value: Any) -> str:
    """A value as an error message quotes it: at most ``_SHOW_CHARS`` characters, whatever its size
    (an alias bomb's value must never be expanded into text)."""
    text = value if isinstance(value, str) else _REPR.repr(value)
    return text if len(text) <= _SHOW_CHARS else text[:_SHOW_CHARS - 3] + "..."


# --- reading a file: bytes -> text -> YAML data -----------------------------------------------


def _read_bytes(path: Path, file: str) -> bytes:
    """The bytes of a regular file of at most MAX_PROFILE_BYTES; never blocks on a FIFO or device."""
    try:
        st = os.stat(path)
        _check_regular(st, file)
        # O_NONBLOCK: if the file is swapped for a FIFO after the stat, open() still returns at once.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ProfileError(f"cannot read file: {e.strerror or e}", where=file) from None
    try:
        _check_regular(os.fstat(fd), file)
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_PROFILE_BYTES + 1)
    except OSError as e:
        raise ProfileError(f"cannot read file: {e.strerror or e}", where=file) from None
    finally:
        os.close(fd)
    if len(raw) > MAX_PROFILE_BYTES:
        raise _too_large(len(raw), file)
    return raw


def _check_regular(st: os.stat_result, file: str) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise ProfileError("a folder, not a profile file", where=file, hint="rename it, or move it out of the folder")
    if not stat.S_ISREG(st.st_mode):
        raise ProfileError("not a regular file (a FIFO, socket or device?)", where=file)
    if st.st_size > MAX_PROFILE_BYTES:
        raise _too_large(st.st_size, file)


def _too_large(size: int, file: str) -> ProfileError:
    return ProfileError(f"file too large: a profile file may have at most {MAX_PROFILE_BYTES:,} bytes", where=file,
                        value=f"{size:,} bytes",
                        hint="split it into several files in the same folder")


def _decode(raw: bytes, file: str) -> str:
    """UTF-8 text (a UTF-8 byte-order mark is allowed); UTF-16/32 and binary files are errors."""
    hint = "save it as UTF-8 text"
    if raw.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise ProfileError("not UTF-8 text: the file is UTF-32", where=file, hint=hint)
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ProfileError("not UTF-8 text: the file is UTF-16", where=file, hint=hint)
    nul = raw.find(b"\0")
    if nul >= 0:
        raise ProfileError(f"not UTF-8 text: a NUL byte at line {_line_of(raw, nul)} "
                           "(a binary or UTF-16 file?)", where=file, hint=hint)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ProfileError(f"not UTF-8 text: byte 0x{raw[e.start]:02x} at line {_line_of(raw, e.start)}",
                           where=file, hint=hint) from None
    if not text.strip():
        raise _empty(file)
    return text


def _line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def _empty(file: str) -> ProfileError:
    return ProfileError("empty profile file", where=file,
                        hint="a profile file starts with 'schema: 1' and lists 'units:'; remove the file if unused")


def _parse_yaml(text: str, file: str) -> Any:
    """Safe-load one YAML document, composed by :class:`_Composer` (duplicate keys, size and depth
    checked) from the C parser's events when libyaml is there."""
    import yaml  # here, not at the top: a warm start reads parsed profiles from the cache

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = _Composer(loader, file).document()
        if node is None:
            raise _empty(file)
        return loader.construct_document(node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        loc = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ProfileError(f"YAML syntax error{loc}: {_show(problem)}", where=file) from None
    except (ValueError, OverflowError, RecursionError) as e:  # e.g. a malformed !!timestamp
        raise ProfileError(f"unreadable YAML value: {_show(str(e))}", where=file) from None
    finally:
        loader.dispose()


class _Composer:
    """YAML events -> nodes, like PyYAML's composer, with three checks it does not make.

    A key given twice in one mapping is an error (PyYAML keeps the last silently); the number of
    values after expanding aliases is counted (memoised per anchor, so counting is linear in the
    file) and bounded before anything is constructed; nesting is bounded, because libyaml's own
    composer recurses in C and crashes on a file of 100,000 ``[``.
    """

    def __init__(self, loader: Any, file: str) -> None:
        import yaml

        self.yaml, self.loader, self.file = yaml, loader, file
        self.anchors: dict[str, Node] = {}
        self.sizes: dict[str, int] = {}  # anchor -> values under it, once it is complete

    def document(self) -> Node | None:
        """The single document's root node, or None for a stream with no document."""
        y, ld = self.yaml, self.loader
        ld.get_event()  # StreamStartEvent
        if ld.check_event(y.StreamEndEvent):
            return None
        ld.get_event()  # DocumentStartEvent
        node, _ = self.node(0)
        ld.get_event()  # DocumentEndEvent
        if not ld.check_event(y.StreamEndEvent):
            raise self.error("a profile file holds one YAML document; found another", ld.peek_event().start_mark)
        return node

    def error(self, what: str, mark: Any, value: Any = None, then: str = "") -> ProfileError:
        return ProfileError(f"{what} at line {mark.line + 1}, column {mark.column + 1}{then}", where=self.file,
                            value=None if value is None else _show(value))

    def node(self, depth: int) -> tuple[Node, int]:
        """The next node and the number of values in it with aliases expanded."""
        y, ld = self.yaml, self.loader
        event = ld.get_event()
        if isinstance(event, y.AliasEvent):
            if event.anchor not in self.anchors:
                raise self.error("undefined alias", event.start_mark, f"*{event.anchor}")
            if event.anchor not in self.sizes:
                raise self.error("an alias inside its own anchor", event.start_mark, f"*{event.anchor}")
            return self.anchors[event.anchor], self.sizes[event.anchor]
        if depth > MAX_YAML_DEPTH:
            raise self.error(f"nested more than {MAX_YAML_DEPTH} levels deep", event.start_mark)
        tag = event.tag
        if isinstance(event, y.ScalarEvent):
            if tag is None or tag == "!":
                tag = ld.resolve(y.ScalarNode, event.value, event.implicit)
            if tag == "tag:yaml.org,2002:int" and len(event.value) > _MAX_DIGITS:
                raise self.error(f"a number with more than {_MAX_DIGITS} digits", event.start_mark, event.value)
            node: Node = y.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            self.anchor(event, node)
            size = 1
        else:
            kind = y.SequenceNode if isinstance(event, y.SequenceStartEvent) else y.MappingNode
            if tag is None or tag == "!":
                tag = ld.resolve(kind, None, event.implicit)
            node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
            self.anchor(event, node)
            size = self.children(node, depth)
            node.end_mark = ld.get_event().end_mark  # SequenceEndEvent / MappingEndEvent
        if event.anchor is not None:
            self.sizes[event.anchor] = size
        return node, size

    def anchor(self, event: Any, node: Node) -> None:
        if event.anchor is None:
            return
        if event.anchor in self.anchors:
            raise self.error("duplicate anchor", event.start_mark, f"&{event.anchor}")
        self.anchors[event.anchor] = node

    def children(self, node: Node, depth: int) -> int:
        """Compose the items of a list or mapping into ``node.value``; returns the expanded size."""
        y, ld = self.yaml, self.loader
        size, mapping = 1, isinstance(node, y.MappingNode)
        seen: dict[tuple[str, str], Any] = {}
        end = y.MappingEndEvent if mapping else y.SequenceEndEvent
        while not ld.check_event(end):
            key_mark = ld.peek_event().start_mark
            item, n = self.node(depth + 1)
            if mapping:
                if isinstance(item, y.ScalarNode):
                    first = seen.setdefault((item.tag, item.value), key_mark)
                    if first is not key_mark:
                        raise self.error("duplicate key", key_mark, item.value,
                                         f" (first given at line {first.line + 1}, column {first.column + 1})")
                value, m = self.node(depth + 1)
                node.value.append((item, value))
                n += m
            else:
                node.value.append(item)
            size += n
            if size > MAX_YAML_NODES:
                raise self.error(f"more than {MAX_YAML_NODES:,} values once aliases are expanded", node.start_mark)
        return size


# --- YAML data -> units ----------------------------------------------------------------------


class _Reader:
    """Typed access to a YAML mapping that reports file and path on every error."""

    def __init__(self, file: str, path: str, data: Any) -> None:
        self.file, self.path, self.data = file, path, data

    def fail(self, what: str, value: Any, key: str = "", hint: str = "") -> ProfileError:
        path = ".".join(p for p in (self.path, key) if p)
        where = f"{self.file}: {path}" if path else self.file
        return ProfileError(what, where=where, value=_show(value), hint=hint)

    def mapping(self, allowed: set[str], required: Iterable[str]) -> None:
        if not isinstance(self.data, dict):
            raise self.fail("expected a mapping", self.data)
        for key in self.data:
            if key not in allowed:
                import difflib

                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                raise self.fail("unknown key", str(key), _show(str(key)), hint=f"did you mean {close[0]!r}?" if close
                                else f"allowed keys: {', '.join(sorted(allowed))}")
        for key in required:
            if key not in self.data:
                raise self.fail(f"missing key {key!r}", self.data.get("name", ""))

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, *, lo: int | None = None,
            hi: int | None = None) -> Any:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(f"expected {names}", value, key)
        if isinstance(value, int) and ((lo is not None and value < lo) or (hi is not None and value > hi)):
            raise self.fail(f"must be from {lo} to {hi}" if lo is not None and hi is not None else
                            f"must be at least {lo}" if lo is not None else f"must be at most {hi}", value, key)
        return value

    def name(self, key: str = "name") -> str:
        """A required name: a string with something in it."""
        value: str = self.get(key, str)
        if not value.strip():
            raise self.fail("a name cannot be blank", value, key)
        return value

    def child(self, key: str, index: int | None = None) -> _Reader:
        data = self.data[key] if index is None else self.data[key][index]
        path = f"{self.path}.{key}" if self.path else key
        return _Reader(self.file, path + ("" if index is None else f"[{index}]"), data)

    def items(self, key: str) -> list[_Reader]:
        value = self.data.get(key) or []
        if not isinstance(value, list):
            raise self.fail("expected a list", value, key)
        return [self.child(key, i) for i in range(len(value))]

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail("expected a list of strings", value, key)
        return tuple(value)

    def dice(self, key: str) -> DiceExpr:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail("expected a dice expression like 'D6+1'", value, key)
        try:
            return _dice(str(value))
        except ProfileError as e:
            raise self.fail(f"expected a dice expression like 'D6+1': {e.what}", str(value), key,
                            hint=e.hint) from None


# A library repeats a few spellings ("Twin-linked", "D6", "1") many times; both results are frozen.
@lru_cache(maxsize=1024)
def _dice(text: str) -> DiceExpr:
    return dice.parse(text)


@lru_cache(maxsize=1024)
def _ability(text: str) -> AbilitySpec:
    return parse_ability(text)


def _weapon(r: _Reader, unit: str) -> Weapon:
    r.mapping(_WEAPON_KEYS, ("name", "range", "A", "S", "D"))
    name = r.name()
    rng = r.data.get("range")
    melee = isinstance(rng, str) and rng.strip().lower() == "melee"
    if not melee and (isinstance(rng, bool) or not isinstance(rng, int) or not 0 <= rng <= MAX_RANGE):
        raise r.fail(f"expected a range in inches (0 to {MAX_RANGE}) or 'melee'", rng, "range")
    skill_key = "WS" if melee else "BS"
    other = "BS" if melee else "WS"
    if other in r.data:
        raise r.fail(f"{'melee' if melee else 'ranged'} weapons take {skill_key}, not {other}", r.data[other], other)
    abilities = []
    for i, text in enumerate(r.strings("abilities")):
        try:
            abilities.append(_ability(text))
        except ProfileError as e:
            raise r.fail(e.what, text, f"abilities[{i}]", hint=e.hint) from None
    modifiers = _modifiers(r)
    return _built(r, lambda: Weapon(
        name=name, aliases=_aliases(r), range_inches=None if melee else rng, modifiers=modifiers,
        attacks=r.dice("A"), skill=r.get(skill_key, int, lo=2, hi=6),
        strength=r.get("S", int, lo=1, hi=MAX_CHARACTERISTIC), ap=r.get("AP", int, 0, lo=-MAX_AP, hi=0),
        damage=r.dice("D"), abilities=tuple(abilities), unit=unit))


def _built(r: _Reader, make: Callable[[], _T]) -> _T:
    """``make()``, with an invariant error of the model (which knows no file) given r's file and path."""
    try:
        return make()
    except ProfileError as e:
        if e.where.startswith(r.file):
            raise
        raise r.fail(e.what, e.value, hint=e.hint) from None


def _aliases(r: _Reader) -> tuple[str, ...]:
    aliases = r.strings("aliases")
    for i, alias in enumerate(aliases):
        if not alias.strip():
            raise r.fail("an alias cannot be blank", alias, f"aliases[{i}]")
    return aliases


def _modifiers(r: _Reader) -> tuple[tuple[str, object], ...]:
    """The ``modifiers:`` mapping of a unit or weapon, typed and checked."""
    if r.data.get("modifiers") is None:
        return ()
    mr = r.child("modifiers")
    mr.mapping(set(MODIFIERS), ())
    out: list[tuple[str, object]] = []
    for key, kind in MODIFIERS.items():
        if key not in mr.data:
            continue
        if kind is int:
            lo, hi = (2, 6) if key.startswith("crit") else (-6, 6)
            out.append((key, mr.get(key, int, lo=lo, hi=hi)))
        else:
            value = mr.data[key]
            try:
                if not isinstance(value, str):
                    raise ValueError(value)
                out.append((key, kind(value.lower().replace("_", "-"))))
            except ValueError:
                choices = ", ".join(m.value for m in kind)  # type: ignore[attr-defined]
                raise mr.fail(f"expected one of {choices}", value, key) from None
    return tuple(out)


def _model(m: _Reader) -> ModelStats:
    m.mapping(_MODEL_KEYS, ("name", "count", "T", "Sv", "W"))
    return _built(m, lambda: ModelStats(
        name=m.get("name", str), count=m.get("count", int, lo=1, hi=MAX_TARGET_MODELS),
        move=m.get("M", int, lo=0, hi=MAX_RANGE), toughness=m.get("T", int, lo=1, hi=MAX_CHARACTERISTIC),
        save=m.get("Sv", int, lo=2, hi=7), wounds=m.get("W", int, lo=1, hi=MAX_WOUNDS),
        leadership=m.get("Ld", int, lo=2, hi=12), objective_control=m.get("OC", int, lo=0, hi=MAX_WOUNDS)))


def _unit(r: _Reader) -> Unit:
    r.mapping(_UNIT_KEYS, ("name", "models"))
    name = r.name()
    models = [_model(m) for m in r.items("models")]
    if not models:
        raise r.fail("a unit needs at least one model", [], "models")
    total = sum(m.count for m in models)
    if total > MAX_TARGET_MODELS:
        raise r.fail(f"the counts add up to more than {MAX_TARGET_MODELS} models", total, "models")
    inv, inv_ranged = None, False
    if r.data.get("invulnerable") is not None:
        iv = r.child("invulnerable")
        iv.mapping({"save", "ranged_only"}, ("save",))
        inv, inv_ranged = iv.get("save", int, lo=2, hi=6), iv.get("ranged_only", bool, False)
    if r.data.get("deadly_demise") is not None:
        r.dice("deadly_demise")  # informational, but a dice value all the same
    keywords = frozenset(k.upper() for k in r.strings("keywords"))
    defensive: dict[str, Any] = {}
    for i, text in enumerate(r.strings("abilities")):
        key = " ".join(text.upper().replace("_", " ").split())
        if key not in _DEFENSIVE:
            raise r.fail("unknown unit ability", text, f"abilities[{i}]",
                         hint=f"known: {', '.join(sorted(_DEFENSIVE))}")
        defensive[_DEFENSIVE[key]] = 1 if key == "-1 DAMAGE" else True
    if "damage_reduction" in defensive and r.data.get("damage_reduction"):
        raise r.fail("give -1 DAMAGE once: in abilities or as damage_reduction", r.data["damage_reduction"],
                     "damage_reduction")
    reduction = defensive.pop("damage_reduction", 0) or r.get("damage_reduction", int, 0, lo=0,
                                                               hi=MAX_DAMAGE_MOD)
    return _built(r, lambda: Unit(
        name=name, aliases=_aliases(r), faction=r.get("faction", str, ""), modifiers=_modifiers(r),
        stealth=defensive.get("stealth", False), half_damage=defensive.get("half_damage", False),
        points=r.get("points", int, lo=0), source=r.get("source", str, ""), models=tuple(models),
        invulnerable=inv, invulnerable_ranged_only=inv_ranged, feel_no_pain=r.get("feel_no_pain", int, lo=2, hi=6),
        damage_reduction=reduction, keywords=keywords, weapons=tuple(_weapon(w, name) for w in r.items("weapons"))))


def _units(data: Any, file: str) -> list[Unit]:
    """The units of one file's YAML data, every value checked."""
    if data is None:
        raise _empty(file)
    root = _Reader(file, "", data)
    root.mapping({"schema", "source", "units"}, ("schema", "units"))
    if root.get("schema", int) != SCHEMA_VERSION:
        raise root.fail(f"unsupported schema (this version reads schema {SCHEMA_VERSION})", data["schema"], "schema")
    root.get("source", str)
    return [_unit(u) for u in root.items("units")]


def load_file(path: Path, label: str | None = None) -> list[Unit]:
    """Load one profile file. ``label`` is how the file is named in errors (default: the path).

    Raises:
        ProfileError: naming the file (and the YAML path and value where there is one).
    """
    file = label or str(path)
    units = _units(_parse_yaml(_decode(_read_bytes(path, file), file), file), file)
    _check_unique([(u, file, i) for i, u in enumerate(units)])
    return units


# --- the library ---------------------------------------------------------------------------


def builtin_dirs() -> list[Path]:
    """The reference profiles: the wheel's data package, or profiles/ of a source checkout."""
    import importlib.util  # not importlib.resources: its import costs a start-up ~7 ms

    try:
        spec = importlib.util.find_spec("mathhammer.builtin_profiles")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return [Path(next(iter(spec.submodule_search_locations)))]
    return [Path(__file__).resolve().parent.parent / "profiles"]


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    aliases: tuple[str, ...]
    obj: Any
    label: str


class Library:
    """Every unit and weapon known, with case-insensitive lookup by alias, name or unique substring."""

    def __init__(self, units: Sequence[Unit]) -> None:
        self.units = tuple(units)
        self.weapons = tuple(w for u in self.units for w in u.weapons)

    def _entries(self, kind: str) -> list[_Entry]:
        if kind == "unit":
            return [_Entry(u.name, u.aliases, u, u.name) for u in self.units]
        return [_Entry(w.name, w.aliases, w, f"{w.unit}: {w.name}") for w in self.weapons]

    def find(self, query: str, kind: str, *, substring: bool = True) -> Any:
        """Find one unit or weapon. Declared aliases win over names, names over unique substrings;
        ``UNIT/WEAPON`` (or ``UNIT:WEAPON``) picks a weapon of one unit. With ``substring=False``
        only aliases and whole names match, and ``None`` is returned when nothing does.

        Raises:
            ProfileError: unknown (with the three closest names) or ambiguous (with the candidates).
        """
        q = " ".join(query.lower().split())
        if kind == "weapon" and ("/" in q or ":" in q):
            unit_q, _, weapon_q = q.replace(":", "/").partition("/")
            if not unit_q.strip() or not weapon_q.strip():
                raise ProfileError("expected UNIT/WEAPON, with both parts", where=kind, value=query,
                                   hint="e.g. hammerhead/railgun")
            unit = self.find(unit_q, "unit")
            return Library([unit]).find(weapon_q, "weapon")
        entries = self._entries(kind)
        tests: list[Callable[[_Entry], bool]] = [lambda e: q in (a.lower() for a in e.aliases),
                                                 lambda e: e.name.lower() == q]
        if substring:
            tests.append(lambda e: q in e.name.lower() or any(q in a.lower() for a in e.aliases))
        for test in tests:
            hits = [e for e in entries if test(e)]
            if hits:
                distinct = _distinct(hits)
                if len(distinct) == 1:
                    return distinct[0].obj
                shown = ", ".join(sorted(e.label for e in distinct)[:8]) + (", …" if len(distinct) > 8 else "")
                raise ProfileError(f"ambiguous {kind} name, matches {len(distinct)}: {shown}", where=kind, value=query,
                                   hint="type more of the name" + (", or UNIT/WEAPON" if kind == "weapon" else ""))
        if not substring:
            return None
        raise self.unknown(query, (kind,))

    def unknown(self, query: str, kinds: tuple[str, ...]) -> ProfileError:
        """The error for a name that matches nothing, with the three closest names."""
        import difflib

        q = " ".join(query.lower().split())
        lower = {n.lower(): n for kind in kinds for e in self._entries(kind) for n in (e.name, *e.aliases)}
        close = difflib.get_close_matches(q, sorted(lower), n=3, cutoff=0.4)
        kind = " or ".join(kinds)
        hint = f"did you mean {', '.join(repr(lower[c]) for c in close)}?" if close else \
            f"`mathhammer profiles list --kind {kinds[0]}` lists them"
        return ProfileError(f"unknown {kind}", where=kinds[0], value=query, hint=hint)

    def unit_named(self, name: str) -> Unit | None:
        """The unit with exactly this name."""
        return next((u for u in self.units if u.name == name), None)


def _distinct(hits: list[_Entry]) -> list[_Entry]:
    """Identical profiles found under one name in several units (e.g. a Meltagun) count once."""
    seen: dict[Any, _Entry] = {}
    for e in hits:
        key = (e.obj.name.lower(), _stats(e.obj)) if isinstance(e.obj, Weapon) else id(e.obj)
        seen.setdefault(key, e)
    return list(seen.values())


def _stats(w: Weapon) -> tuple[object, ...]:
    return (w.attacks, w.skill, w.strength, w.ap, w.damage, w.range_inches, frozenset(map(str, w.abilities)))


def _key(name: str) -> str:
    """A name as lookup compares it: case-insensitive, single spaces."""
    return " ".join(name.lower().split())


def _check_unique(found: Sequence[tuple[Unit, str, int]]) -> None:
    """Every unit name and every alias names one profile across all loaded files.

    ``found`` is (unit, file, index in the file's ``units``). Unit names and unit aliases may not
    repeat; weapon aliases may repeat only on identical weapons (a Meltagun carried by several
    units). A weapon's *name* may repeat: ``UNIT/WEAPON`` tells them apart.

    Raises:
        ProfileError: at the second place, naming the first.
    """
    names: dict[str, str] = {}
    unit_aliases: dict[str, str] = {}
    weapon_aliases: dict[str, tuple[object, str]] = {}
    for unit, file, i in found:
        here = f"{file}: units[{i}]"
        _claim(names, _key(unit.name), f"{here}.name", "unit name", unit.name)
        own: set[str] = set()
        for k, alias in enumerate(unit.aliases):
            if _key(alias) not in own:
                own.add(_key(alias))
                _claim(unit_aliases, _key(alias), f"{here}.aliases[{k}]", "unit alias", alias)
        for j, w in enumerate(unit.weapons):
            same = (_key(w.name), _stats(w))
            for k, alias in enumerate(w.aliases):
                place = f"{here}.weapons[{j}].aliases[{k}]"
                first = weapon_aliases.setdefault(_key(alias), (same, place))
                if first[0] != same:
                    raise _duplicate("weapon alias", alias, place, first[1])


def _claim(seen: dict[str, str], key: str, place: str, what: str, value: str) -> None:
    first = seen.setdefault(key, place)
    if first != place:
        raise _duplicate(what, value, place, first)


def _duplicate(what: str, value: str, place: str, first: str) -> ProfileError:
    return ProfileError(f"duplicate {what}, also given at {first}", where=place, value=_show(value),
                        hint="names and aliases must be unique across all profile folders: rename or remove one")


def load_library(extra_dirs: Sequence[Path] = (), *, use_env: bool = True) -> Library:
    """Built-in profiles, then ``$MATHHAMMER_PROFILES`` (os.pathsep-separated), then ``extra_dirs``.

    A folder (or file) reached twice, by the same path or another (a symlink), is read once.
    Files whose names start with ``.`` (editor back-ups and lock files) are skipped. The checked
    units are cached (see :func:`_read_entry`): a start with unchanged files parses no YAML.

    Raises:
        ProfileError: a missing folder, any error in any file, or a name given twice.
    """
    files = [(label, _read_bytes(path, label)) for path, label in _library_files(extra_dirs, use_env)]
    key = hashlib.sha256(_code_fingerprint().encode())
    for _, raw in files:
        key.update(hashlib.sha256(raw).digest())
    entry = cache_dir() / "profiles" / f"{key.hexdigest()[:40]}.marshal"
    units = _read_entry(entry, key.hexdigest())
    if units is None:
        found: list[tuple[Unit, str, int]] = []
        for label, raw in files:
            found += [(u, label, i) for i, u in enumerate(_units(_parse_yaml(_decode(raw, label), label), label))]
        _check_unique(found)
        units = [u for u, _, _ in found]
        _write_entry(entry, key.hexdigest(), units)
    return Library(units)


def _library_files(extra_dirs: Sequence[Path], use_env: bool) -> list[tuple[Path, str]]:
    """(path, label) of every profile file to load, each folder and file once."""
    folders = [(d, "built-in profiles") for d in builtin_dirs()]
    if use_env and os.environ.get(ENV_VAR):
        folders += [(Path(p), ENV_VAR) for p in os.environ[ENV_VAR].split(os.pathsep) if p]
    folders += [(Path(d), "--profiles") for d in extra_dirs]
    seen: set[tuple[int, int]] = set()
    files: list[tuple[Path, str]] = []
    for n, (folder, origin) in enumerate(folders):
        try:
            st = os.stat(folder)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            raise ProfileError("not a folder", where=origin, value=str(folder))
        for path in _profile_files(folder, origin) if (st.st_dev, st.st_ino) not in seen else ():
            try:
                fst = os.stat(path)
            except OSError:  # a dangling link: reading it reports the error, naming the file
                fst = None
            if fst is None or (fst.st_dev, fst.st_ino) not in seen:
                files.append((path, f"profiles/{path.name}" if n == 0 else str(path)))
                seen.add((fst.st_dev, fst.st_ino) if fst else (-1, len(files)))
        seen.add((st.st_dev, st.st_ino))
    return files


def _profile_files(folder: Path, origin: str) -> list[Path]:
    """``*.yaml`` then ``*.yml`` in ``folder``, each sorted, without hidden files."""
    try:
        names = [e.name for e in os.scandir(folder)]
    except OSError as e:
        raise ProfileError(f"cannot list the folder: {e.strerror or e}", where=origin, value=str(folder)) from None
    visible = [name for name in names if not name.startswith(".")]
    return [folder / name for ext in (".yaml", ".yml") for name in sorted(n for n in visible if n.endswith(ext))]


# --- the cache of parsed files ---------------------------------------------------------------

CACHE_ENV_VAR = "MATHHAMMER_CACHE_DIR"
#: Bumped when the layout of a cache entry changes.
_CACHE_FORMAT = 1


def cache_dir() -> Path:
    """Where parsed profiles are kept: $MATHHAMMER_CACHE_DIR, else $XDG_CACHE_HOME/mathhammer,
    else ~/.cache/mathhammer."""
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mathhammer"


def _read_entry(entry: Path, key: str) -> list[Unit] | None:
    """The units of the cache entry for ``key``, or None when there is no usable one.

    An entry holds the *checked units* of every profile file, under a key made of the files'
    contents (SHA-256 of their bytes) and :func:`_code_fingerprint`: an edit, another set of
    folders, or another version of the code that reads files is a miss. Nothing in an entry is
    ever executed, and nothing but this code's own output is decoded:

    * it is used only if it is a regular file of this user that no one else may write;
    * its payload is in :mod:`marshal` format (plain data: unlike pickle, decoding calls no
      code), decoded only after its SHA-256, stored in front of it, matches (a truncated or
      damaged entry never reaches the decoder);
    * every value must have exactly the type this code writes, and the units are rebuilt
      through the model's constructors, so its invariants (the documented limits) hold.

    marshal rather than JSON: importing :mod:`json` alone costs more than a warm load (1.5 ms
    against 2 ms), and this runs on every start. An entry that fails any check is ignored and
    the files parsed again. Libraries with errors are never cached.
    """
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022 or st.st_size > 64 * MAX_PROFILE_BYTES \
                or hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            blob = f.read(st.st_size + 1)
        if hashlib.sha256(blob[32:]).digest() != blob[:32]:
            return None
        doc = marshal.loads(blob[32:])
        if not (type(doc) is dict and doc.get("format") == _CACHE_FORMAT and doc.get("key") == key):
            return None
        return _Rebuild().units(doc["units"])
    except Exception:  # noqa: BLE001 - truncated, damaged, foreign or stale: parse the files instead
        return None
    finally:
        os.close(fd)


def _write_entry(entry: Path, key: str, units: list[Unit]) -> None:
    """Store the units, atomically, if they come back equal; a cache that cannot be written
    (a read-only home, a full disk) only makes the next start slower."""
    try:
        payload = marshal.dumps({"format": _CACHE_FORMAT, "key": key, "units": [_plain(u) for u in units]})
        if _Rebuild().units(marshal.loads(payload)["units"]) != units:
            return  # the model gained something the cache does not carry: better no cache than a wrong one
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = entry.with_name(f"{entry.stem}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, entry)
        _prune(entry.parent)
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def _prune(folder: Path, days: int = 30) -> None:
    """Remove entries not written for ``days`` (left by edited files and older versions)."""
    import time

    cutoff = time.time() - days * 86400
    for e in os.scandir(folder):
        if e.name.endswith((".marshal", ".tmp", ".pickle")) and e.stat(follow_symlinks=False).st_mtime < cutoff:
            os.unlink(e.path)


def _plain(value: Any) -> Any:
    """A model object as plain data: dataclasses as mappings of their fields, enums as values."""
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(value)
    return value


class _Rebuild:
    """Data of :func:`_plain` -> model objects, through their constructors. Every field is
    type-checked here or by the constructor; anything unexpected raises (and the file is parsed)."""

    def __init__(self) -> None:
        self.dice: dict[tuple[int, int, int], DiceExpr] = {}
        self.abilities: dict[tuple[str, tuple[int, int, int] | None, str], AbilitySpec] = {}

    def units(self, data: list[dict[str, Any]]) -> list[Unit]:
        return [self.unit(u) for u in _of(data, list)]

    def unit(self, u: dict[str, Any]) -> Unit:
        return Unit(name=_of(u["name"], str), aliases=self.strings(u["aliases"]), faction=_of(u["faction"], str),
                    points=_of(u["points"], int, optional=True), source=_of(u["source"], str),
                    models=tuple(self.model(m) for m in _of(u["models"], list)),
                    invulnerable=_of(u["invulnerable"], int, optional=True),
                    invulnerable_ranged_only=_of(u["invulnerable_ranged_only"], bool),
                    feel_no_pain=_of(u["feel_no_pain"], int, optional=True),
                    damage_reduction=_of(u["damage_reduction"], int),
                    stealth=_of(u["stealth"], bool), half_damage=_of(u["half_damage"], bool),
                    keywords=frozenset(self.strings(u["keywords"])), modifiers=self.modifiers(u["modifiers"]),
                    weapons=tuple(self.weapon(w) for w in _of(u["weapons"], list)))

    def model(self, m: dict[str, Any]) -> ModelStats:
        return ModelStats(name=_of(m["name"], str), count=_of(m["count"], int), toughness=_of(m["toughness"], int),
                          save=_of(m["save"], int), wounds=_of(m["wounds"], int),
                          move=_of(m["move"], int, optional=True),
                          leadership=_of(m["leadership"], int, optional=True),
                          objective_control=_of(m["objective_control"], int, optional=True))

    def weapon(self, w: dict[str, Any]) -> Weapon:
        return Weapon(name=_of(w["name"], str), attacks=self.die(w["attacks"]),
                      skill=_of(w["skill"], int, optional=True),
                      strength=_of(w["strength"], int), ap=_of(w["ap"], int), damage=self.die(w["damage"]),
                      range_inches=_of(w["range_inches"], int, optional=True), aliases=self.strings(w["aliases"]),
                      abilities=tuple(self.ability(a) for a in _of(w["abilities"], list)), unit=_of(w["unit"], str),
                      modifiers=self.modifiers(w["modifiers"]))

    def die(self, d: dict[str, Any]) -> DiceExpr:
        key = (_of(d["count"], int), _of(d["sides"], int), _of(d["plus"], int))
        if key not in self.dice:
            self.dice[key] = DiceExpr(count=key[0], sides=key[1], plus=key[2])
        return self.dice[key]

    def ability(self, a: dict[str, Any]) -> AbilitySpec:
        value = None if a["value"] is None else self.die(a["value"])
        key = (_of(a["ability"], str), None if value is None else (value.count, value.sides, value.plus),
               _of(a["keyword"], str))
        if key not in self.abilities:
            self.abilities[key] = AbilitySpec(ability=Ability(key[0]), value=value, keyword=key[2])
        return self.abilities[key]

    def modifiers(self, pairs: list[list[Any]]) -> tuple[tuple[str, object], ...]:
        out: list[tuple[str, object]] = []
        for name, value in _of(pairs, list):
            kind = MODIFIERS[name]
            out.append((name, _of(value, int) if kind is int else kind(_of(value, str))))
        return tuple(out)

    def strings(self, values: list[Any]) -> tuple[str, ...]:
        return tuple(_of(v, str) for v in _of(values, list))


def _of(value: Any, kind: type, optional: bool = False) -> Any:
    """``value`` if its type is exactly ``kind`` (a bool is not an int here), or None if ``optional``."""
    if type(value) is kind or (optional and value is None):
        return value
    raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")


_FINGERPRINT: list[str] = []


def _code_fingerprint() -> str:
    """The identity of the code that turns YAML into units: path, size and modification time of
    the source of this module and of model, notation, dice and limits (the test Python itself
    uses to decide that a .pyc is stale; a few stat calls, where hashing the sources would cost
    more than the rest of a warm load), the version of mathhammer, Python and PyYAML."""
    if not _FINGERPRINT:
        from . import __version__, model, notation

        parts = [str(_CACHE_FORMAT), __version__, sys.version, _yaml_identity()]
        for module in (sys.modules[__name__], model, notation, dice, limits):
            path = module.__file__ or module.__name__
            try:
                st = os.stat(path)
                parts.append(f"{path}|{st.st_size}|{st.st_mtime_ns}")
            except OSError:
                parts.append(path)
        _FINGERPRINT.append("\n".join(parts))
    return _FINGERPRINT[0]


def _yaml_identity() -> str:
    """PyYAML's location, size and time stamp, without importing it (a warm start never does)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("yaml")
        origin = spec.origin if spec and spec.origin else ""
        st = os.stat(origin)
        return f"{origin}|{st.st_size}|{st.st_mtime_ns}"
    except (OSError, ImportError, ValueError):
        return "yaml ?"


def dump_unit(u: Unit) -> dict[str, Any]:
    """A unit as YAML-ready data (the inverse of loading: loading it back gives an equal unit)."""
    out: dict[str, Any] = {"name": u.name}
    if u.aliases:
        out["aliases"] = list(u.aliases)
    if u.faction:
        out["faction"] = u.faction
    out["points"] = u.points
    if u.source:
        out["source"] = u.source
    out["models"] = [{"name": m.name, "count": m.count, **({"M": m.move} if m.move is not None else {}),
                      "T": m.toughness, "Sv": m.save, "W": m.wounds,
                      **({"Ld": m.leadership} if m.leadership is not None else {}),
                      **({"OC": m.objective_control} if m.objective_control is not None else {})} for m in u.models]
    if u.invulnerable:
        out["invulnerable"] = {"save": u.invulnerable, "ranged_only": u.invulnerable_ranged_only}
    if u.feel_no_pain:
        out["feel_no_pain"] = u.feel_no_pain
    if u.damage_reduction:
        out["damage_reduction"] = u.damage_reduction
    abilities = [name for name, attr in _DEFENSIVE.items() if attr != "damage_reduction" and getattr(u, attr)]
    if abilities:
        out["abilities"] = abilities
    if u.modifiers:
        out["modifiers"] = _dump_modifiers(u.modifiers)
    out["keywords"] = sorted(u.keywords)
    out["weapons"] = [_dump_weapon(w) for w in u.weapons]
    return out


def _dump_weapon(w: Weapon) -> dict[str, Any]:
    out: dict[str, Any] = {"name": w.name}
    if w.aliases:
        out["aliases"] = list(w.aliases)
    out["range"] = "melee" if w.melee else w.range_inches
    out["A"] = str(w.attacks)
    out["WS" if w.melee else "BS"] = w.skill
    out.update({"S": w.strength, "AP": w.ap, "D": str(w.damage), "abilities": [str(a) for a in w.abilities]})
    if w.modifiers:
        out["modifiers"] = _dump_modifiers(w.modifiers)
    return out


def _dump_modifiers(mods: tuple[tuple[str, object], ...]) -> dict[str, object]:
    return {k: (v.value if hasattr(v, "value") else v) for k, v in mods}
