"""How roster text compares names: the spellings apps vary in (typographic quotes, non-breaking
spaces, case, hyphens, a plural ``s``) are made equal, nothing else.

``Shas’vre``, ``Shas'vre`` and ``SHAS VRE`` have one key; ``Crisis Sunforge Battlesuits`` and
``crisis sunforge battlesuit`` too (:func:`singular_key`).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clean", "count_prefix", "key", "singular_key", "unaccented"]

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u00b4": "'", "\u201c": '"',
                         "\u201d": '"', "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u2013": "-", "\u2014": "-",
                         "\u2212": "-", "\u2011": "-"})
#: A count of up to 100 digits (more is no count: int() refuses over 4,300 digits).
_COUNT = re.compile(r"^(\d{1,100})\s*[x×]\s+(.+)$", re.IGNORECASE)
_NOT_KEY = re.compile(r"[^0-9a-z]+")


def clean(text: str) -> str:
    """Text with typographic quotes, dashes and odd spaces made plain, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).split())


def key(name: str) -> str:
    """A name as the matcher compares it: lower case, letters and digits only, single spaces
    (apostrophes dropped: ``shasvre``; hyphens are spaces: ``long quill``)."""
    text = clean(name).lower().replace("'", "")
    return " ".join(_NOT_KEY.sub(" ", text).split())


def singular_key(name: str) -> str:
    """:func:`key` without a plural ``s`` on each word (``battlesuits`` -> ``battlesuit``)."""
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                    for w in key(name).split())


def count_prefix(text: str) -> tuple[int | None, str]:
    """``"2x Fusion blaster"`` -> (2, "Fusion blaster"); without a count: (None, text)."""
    m = _COUNT.match(text.strip())
    return (int(m[1]), m[2].strip()) if m else (None, text.strip())


def unaccented(text: str) -> str:
    """``text`` without accents ("Brôkhyr" -> "Brokhyr")."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))

