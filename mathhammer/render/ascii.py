"""Plain-ASCII fallbacks for the symbols the views use (a C locale or ``PYTHONIOENCODING=ascii``)."""

from __future__ import annotations

import unicodedata

__all__ = ["can_encode", "escape_ascii", "to_ascii"]

#: Symbols with a readable ASCII spelling; everything else loses its accents (é -> e) or
#: becomes ``?``.
_ASCII = {
    "×": "x", "±": "+/-", "…": "...", "≥": ">=", "≤": "<=", "→": "->", "←": "<-", "⚔": "vs", "·": "-",
    "–": "-", "—": "-", "−": "-", "‘": "'", "’": "'", "‚": ",", "“": '"', "”": '"', "„": '"', "•": "*",
    "█": "#", "▏": "|", "½": "1/2", "⅓": "1/3", "⅔": "2/3", "°": " deg", "\u00a0": " ",
}


def can_encode(text: str, encoding: str | None) -> bool:
    """Whether a stream with ``encoding`` can write ``text`` as it is."""
    try:
        text.encode(encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def to_ascii(text: str) -> str:
    """``text`` with every non-ASCII character spelled in ASCII (meaning kept where possible)."""
    if text.isascii():
        return text
    out = []
    for ch in text:
        if ch.isascii():
            out.append(ch)
        elif ch in _ASCII:
            out.append(_ASCII[ch])
        else:
            base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(base or "?")
    return "".join(out)


def escape_ascii(text: str) -> str:
    """``text`` with every non-ASCII character escaped (``\\uff11``), never folded: for lines
    that may quote what the user typed, where ``１０`` must not turn into ``10``."""
    return text.encode("ascii", "backslashreplace").decode("ascii")
