"""Safe reading of BattleScribe XML: .cat/.gst/.ros files and their zipped .catz/.gstz/.rosz forms.

BSData files are plain XML without a DTD. Any DOCTYPE or ENTITY declaration is refused before the
document is built, so neither external entities nor entity-expansion bombs ("billion laughs") can
be read: a short first pass with expat stops at the root element (declarations can only come
before it), then ElementTree's C parser builds the tree, in which an undeclared entity is an error.
Zipped files must hold one XML member, read with a size cap that does not trust the zip's header.
"""

from __future__ import annotations

import io
import lzma
import xml.etree.ElementTree as ET
import zipfile
import zlib
from pathlib import Path
from typing import NoReturn
from xml.parsers import expat

from ..errors import ProfileError

__all__ = ["MAX_XML_BYTES", "ZIPPED_SUFFIXES", "parse_xml", "read_bsdata_file"]

#: The largest XML document read (a whole catalogue is under 4 MB; a roster far less).
MAX_XML_BYTES = 64_000_000
#: Suffixes of zipped BattleScribe files.
ZIPPED_SUFFIXES = (".catz", ".gstz", ".rosz")
_XML_SUFFIXES = (".cat", ".gst", ".ros", ".xml")


class _Declaration(Exception):
    """Raised from inside expat when the prolog declares a DOCTYPE or an entity."""


class _RootReached(Exception):
    """Raised from inside expat at the root element: the prolog had no declaration."""


def _refuse_declaration(*_args: object) -> NoReturn:
    raise _Declaration


def _stop_at_root(*_args: object) -> NoReturn:
    raise _RootReached


def _check_prolog(raw: bytes, file: str) -> None:
    """Refuse a DOCTYPE or ENTITY declaration; stop reading at the root element."""
    scan = expat.ParserCreate()
    scan.StartDoctypeDeclHandler = _refuse_declaration
    scan.EntityDeclHandler = _refuse_declaration
    scan.UnparsedEntityDeclHandler = _refuse_declaration
    scan.NotationDeclHandler = _refuse_declaration
    scan.ExternalEntityRefHandler = _refuse_declaration
    scan.StartElementHandler = _stop_at_root
    try:
        scan.Parse(raw, True)
    except _RootReached:
        return
    except _Declaration:
        raise ProfileError("XML with a DOCTYPE or ENTITY declaration is refused (BSData files have none)",
                           where=f"{file}:{scan.CurrentLineNumber}",
                           hint="a DTD could read other files or expand without bound") from None
    except expat.ExpatError as e:
        raise ProfileError(f"not well-formed XML: {expat.ErrorString(e.code)}", where=f"{file}:{e.lineno}") from None
    raise ProfileError("no XML element in the file", where=file)


def parse_xml(raw: bytes, file: str) -> ET.Element:
    """The root element of ``raw``, with the namespace stripped from every tag.

    Raises:
        ProfileError: where=``file:line``, for a DOCTYPE/ENTITY declaration, XML that is not
            well-formed, or a document over :data:`MAX_XML_BYTES`.
    """
    if len(raw) > MAX_XML_BYTES:
        raise ProfileError(f"XML larger than {MAX_XML_BYTES:,} bytes", where=file, value=len(raw))
    _check_prolog(raw, file)
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        line = e.position[0] if getattr(e, "position", None) else 0
        reason = str(e).split(":")[0]
        raise ProfileError(f"not well-formed XML: {reason}", where=f"{file}:{line}" if line else file) from None
    for elem in root.iter():
        tag = elem.tag
        if isinstance(tag, str) and tag[:1] == "{":
            elem.tag = tag.rpartition("}")[2]
    return root


def read_bsdata_file(path: Path) -> tuple[bytes, str]:
    """The XML bytes of a .cat/.gst/.ros file, or of the one XML member of a .catz/.gstz/.rosz, and the
    file's name as errors show it.

    Raises:
        ProfileError: a file that cannot be read, is too large, or a zip that is corrupt or does
            not hold exactly one XML member (one line naming the file).
    """
    file = str(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_XML_BYTES + 1)
    except IsADirectoryError:
        raise ProfileError("expected a file, got a folder", where=file) from None
    except OSError as e:
        raise ProfileError(f"cannot read the file: {e.strerror or e}", where=file) from None
    zipped = path.suffix.lower() in ZIPPED_SUFFIXES or raw[:4] == b"PK\x03\x04"
    if len(raw) > MAX_XML_BYTES:
        raise ProfileError(f"file larger than {MAX_XML_BYTES:,} bytes", where=file)
    return (_unzip(raw, file) if zipped else raw), file


def _unzip(raw: bytes, file: str) -> bytes:
    """The single XML member of a zip, read at most :data:`MAX_XML_BYTES` bytes whatever its header says."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            members = [i for i in zf.infolist() if not i.is_dir()]
            xml = [i for i in members if i.filename.lower().endswith(_XML_SUFFIXES)] or members
            if len(xml) != 1:
                raise ProfileError(f"a zipped BattleScribe file holds one XML file, this one holds {len(xml)}",
                                   where=file, hint="unzip it and import the .cat/.gst/.ros inside")
            with zf.open(xml[0]) as member:
                data = member.read(MAX_XML_BYTES + 1)
    except ProfileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError,
            RuntimeError, zlib.error, lzma.LZMAError) as e:  # damaged deflate / LZMA data: errors of their own
        raise ProfileError(f"corrupt or unreadable zip: {e}", where=file) from None
    if len(data) > MAX_XML_BYTES:
        raise ProfileError(f"zipped XML larger than {MAX_XML_BYTES:,} bytes", where=file)
    return data
