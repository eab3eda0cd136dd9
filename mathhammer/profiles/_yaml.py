"""Reading one profile file safely: bytes -> text -> YAML data, with every guard on the way.

Before YAML sees a file it must be a regular file of at most ``MAX_PROFILE_BYTES`` in UTF-8;
while it is composed no key may repeat in a mapping, there may be at most ``MAX_YAML_NODES``
values after expanding aliases and at most ``MAX_YAML_DEPTH`` levels, so a hostile file costs
an error, not the machine. Also :func:`_show`, how every error message of the package quotes
a value.
"""

from __future__ import annotations

import codecs
import os
import reprlib
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ProfileError
from ..limits import MAX_PROFILE_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES

if TYPE_CHECKING:
    from yaml.nodes import Node

#: Longest integer read (every limit has far fewer digits; int() refuses more than 4300).
_MAX_DIGITS = 30
#: Longest value shown in an error message.
_SHOW_CHARS = 80


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


def _read_bytes(path: Path | str, file: str) -> bytes:
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
    checked) from the C parser's events when libyaml is there.

    A file written in JSON syntax (JSON is YAML: the same text gives the same data) is read by
    :func:`_json_document`, some 50 times faster; the generated library is written that way.
    """
    data = _json_document(text)
    if data is not None:
        return data
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


class _NotPlainJson(Exception):
    """The text is not JSON that YAML reads as the same data within the limits: let YAML read it."""


def _json_document(text: str) -> Any:
    """The data of a profile file in strict JSON syntax, or None when it is anything else.

    None also for JSON the YAML path must judge with its line numbers: a key given twice, a
    number longer than ``_MAX_DIGITS`` digits, ``NaN``/``Infinity`` (not YAML), nesting deeper
    than ``MAX_YAML_DEPTH``. JSON has no aliases, so its size is bounded by the file's.
    """
    if not text.lstrip().startswith("{"):
        return None
    import json

    def mapping(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            raise _NotPlainJson
        return out

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > _MAX_DIGITS:
            raise _NotPlainJson
        return int(digits)

    def constant(name: str) -> Any:
        raise _NotPlainJson

    try:
        data = json.loads(text, object_pairs_hook=mapping, parse_int=integer, parse_constant=constant)
    except (ValueError, RecursionError, _NotPlainJson):  # JSONDecodeError is a ValueError
        return None
    level, depth = [data], 0
    while level:
        depth += 1
        if depth > MAX_YAML_DEPTH:  # let YAML judge (and name the line)
            return None
        level = [v for node in level if isinstance(node, (dict, list))
                 for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, (dict, list))]
    return data


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
