"""Machine formats: the JSON document of a result.

A distribution can hold a million rows (a unit of 1,000 models with 1,000 wounds each), so the
command line writes the document piece by piece (:func:`iter_json`): ``json.dumps`` formats
everything but the rows, each ``distribution`` list standing in as a placeholder, and the rows
are formatted from the numpy arrays a block at a time. The pieces join to exactly the bytes of
:func:`to_json`.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from typing import Any

from .. import __version__, describe
from ..result import ROW_BLOCK, DamageResult, Distribution, RowsHook

__all__ = ["WRITER", "document", "iter_json", "to_json"]

WRITER = {"name": "mathhammer", "version": __version__}

#: json.dumps' spelling of the floats that have no repr in JSON (``allow_nan``'s extensions).
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def document(result: DamageResult, rows: RowsHook | None = None) -> dict[str, Any]:
    """The ``mathhammer.result/1`` document: :meth:`DamageResult.to_dict`, with the ``weapons``
    and ``groups`` lists (:func:`mathhammer.describe.unit_blocks`) after ``p_destroy_unit``
    when it does not hold them itself."""
    doc = result.to_dict(WRITER, rows)
    if "weapons" in doc and "groups" in doc:
        return doc
    blocks = describe.unit_blocks(result, rows)
    out: dict[str, Any] = {}
    for key, value in doc.items():
        out[key] = value
        if key == "p_destroy_unit":
            out.update(blocks)
    return out


def to_json(result: DamageResult) -> str:
    """The ``mathhammer.result/1`` document, indented, keys in contract order."""
    return json.dumps(document(result), indent=2, ensure_ascii=False)


def iter_json(result: DamageResult, block: int = ROW_BLOCK) -> Iterator[str]:
    """:func:`to_json` in pieces whose concatenation is the same text; no piece holds more
    than ``block`` rows of a distribution, and the rows are never all in memory at once."""
    # a random tag, so that no string of the user's (a profile name, say) can pass for a placeholder
    tag = f"mathhammer-rows-{secrets.token_hex(16)}-"
    dists: list[Distribution] = []

    def placeholder(dist: Distribution) -> str:
        dists.append(dist)
        return f"{tag}{len(dists) - 1}"

    skeleton = json.dumps(document(result, rows=placeholder), indent=2, ensure_ascii=False)
    start = 0
    for match in re.finditer(f'"{re.escape(tag)}([0-9]+)"', skeleton):
        yield skeleton[start:match.start()]
        line = skeleton[skeleton.rfind("\n", 0, match.start()) + 1:match.start()]
        yield from _rows_json(dists[int(match.group(1))], len(line) - len(line.lstrip(" ")), block)
        start = match.end()
    yield skeleton[start:]


def _number(x: float) -> str:
    """A float as json.dumps writes it."""
    text = repr(x)
    return _NON_FINITE.get(text, text)


def _rows_json(dist: Distribution, indent: int, block: int) -> Iterator[str]:
    """The ``distribution`` list as json.dumps(indent=2) writes it inside a dict whose keys are
    ``indent`` spaces in: one piece per block of rows."""
    if dist.probabilities.size == 0:
        yield "[]"
        return
    pad = " " * (indent + 2)
    row = f'{pad}{{{{\n{pad}  "value": {{}},\n{pad}  "p": {{}},\n{pad}  "p_at_least": {{}}\n{pad}}}}}'
    sep = "[\n"
    for rows in dist.iter_rows(block):
        yield sep + ",\n".join([row.format(k, _number(p), _number(least)) for k, p, least in rows])
        sep = ",\n"
    yield "\n" + " " * indent + "]"
