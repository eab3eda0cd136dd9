"""Machine formats of a result: the ``mathhammer.result/1`` document (``--format json``, written
piece by piece), its one-line record (``ndjson``) and its CSV columns (``csv``).

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
from ..model import Context
from ..result import ROW_BLOCK, SCHEMA, DamageResult, Distribution, RowsHook
from .stream import JSONPieces, RawJSON

__all__ = ["SCHEMA", "STAT_KEYS", "WRITER", "document", "iter_json", "record", "result_columns", "rows_json",
           "rows_pieces", "stat_columns", "to_json"]

WRITER = {"name": "mathhammer", "version": __version__}

#: The keys of a stat block (``damage``, ``models_destroyed``, ...) in document order;
#: ``capped_at`` is there only for a capped distribution, ``distribution`` is a list of rows.
STAT_KEYS = ("mean", "sd", "sd_sample", "sem", "median", "p05", "p95", "distribution", "capped_at")
_WEAPON_KEYS = ("name", "unit", "range", "type", "A", "BS", "WS", "S", "AP", "D", "abilities")
_GROUP_KEYS = ("name", "models", "T", "Sv", "W", "invulnerable", "invulnerable_ranged_only", "feel_no_pain",
               "keywords")
_TARGET_KEYS = (*_GROUP_KEYS, "wounds_left", "allocation", "attached")
_MODIFIER_KEYS = ("requested", "applied", "clamped", "parts")
_THRESHOLD_KEYS = {
    "hit": ("automatic", "skill", "skill_applied", "needed", "critical_on", *(f"modifier.{k}" for k in _MODIFIER_KEYS),
            "reroll", "overwatch"),
    "wound": ("strength", "toughness", "base", "needed", "critical_on", *(f"modifier.{k}" for k in _MODIFIER_KEYS),
              "reroll", "twin_linked", "anti"),
    "save": ("kind", "needed", "armour_needed", "invulnerable_needed", "ap", "cover", "modifier", "reroll"),
    "damage": ("expression", "values", "half_damage", "added", "subtracted", "reroll", "feel_no_pain",
               "devastating_wounds", "devastating_excess"),
}
_AGREEMENT_KEYS = ("agrees", "mean_difference_se", "mean_bound_se", "max_cdf_gap", "models_max_cdf_gap", "dkw_bound",
                   "dkw_alpha", "hazardous_max_cdf_gap", "hazardous_models_max_cdf_gap")

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


def stat_columns(prefix: str) -> tuple[str, ...]:
    """The CSV columns of the stat block at ``prefix`` (``damage`` -> ``damage.mean``, ...,
    ``damage.distribution``): one per key of :data:`STAT_KEYS`; the rows are one cell of JSON text."""
    return tuple(f"{prefix}.{key}" for key in STAT_KEYS)


def result_columns() -> tuple[str, ...]:
    """The CSV columns of a ``mathhammer.result/1`` record, in document order: every scalar
    leaf of the document as a dotted path, the same set whatever the request (a key a result
    lacks, ``monte_carlo.*`` without ``--method both`` say, is an empty cell), so the CSV of
    several runs shares one header.

    Objects are flattened to their leaves; a list (a ``distribution``, ``keywords``, the
    ``weapons`` and ``groups`` lists), the ``stages`` object (its keys depend on the engine) and
    a modifier's ``parts`` (keyed by its sources) are one cell of compact JSON text. Commands
    whose records hold the same blocks (``compare``, ``sweep``) take their columns from
    :func:`stat_columns` the same way."""
    return (
        "schema", "writer.name", "writer.version", "method", "trials", "seed",
        *(f"attacker.weapon.{k}" for k in _WEAPON_KEYS), "attacker.models", "attacker.unit", "attacker.points",
        *(f"target.{k}" for k in _TARGET_KEYS),
        *(f"context.{k}" for k in Context.__slots__ if k not in _LATER_CONTEXT),
        *(f"thresholds.{stage}.{k}" for stage, keys in _THRESHOLD_KEYS.items() for k in keys), "thresholds.summary",
        *stat_columns("damage"), *stat_columns("models_destroyed"), "p_destroy_unit",
        "weapons", "groups", "stages",
        *stat_columns("hazardous"), *stat_columns("hazardous.models_lost"), "hazardous.p_lose_model",
        "explain", "stratagems",
        "monte_carlo.trials", "monte_carlo.seed", *stat_columns("monte_carlo.damage"),
        *stat_columns("monte_carlo.models_destroyed"), "monte_carlo.p_destroy_unit", "monte_carlo.simulate_seconds",
        *(f"agreement.{k}" for k in _AGREEMENT_KEYS),
        "warnings", "timing.compute_seconds",
        *(f"context.{k}" for k in _LATER_CONTEXT),
    )


#: Context keys added after the CSV's columns were first published: their columns come last,
#: so a script that reads the columns by position keeps working.
_LATER_CONTEXT = ("skill_floor", "crit_successful")


def rows_json(dist: Distribution, block: int = ROW_BLOCK) -> RawJSON:
    """A distribution's ``distribution`` list as compact JSON text, formatted from the numpy
    arrays a block of rows at a time (no dict per row): the text ``json.dumps`` would give."""
    return RawJSON(str(rows_pieces(dist, block)))


def rows_pieces(dist: Distribution, block: int = ROW_BLOCK) -> JSONPieces:
    """:func:`rows_json`'s text as its blocks, never joined, each formatted when it is read
    (what the command line's ``sweep`` and ``compare`` write: tens of megabytes a cell at a
    W1000 MODELS1000 target; a record writer writes each block as it is made)."""

    def pieces() -> Iterator[str]:
        yield "["
        sep = ""
        for rows in dist.iter_rows(block):
            yield sep + ",".join([f'{{"value":{k},"p":{_number(p)},"p_at_least":{_number(least)}}}'
                                  for k, p, least in rows])
            sep = ","
        yield "]"
    return JSONPieces(pieces)


def record(result: DamageResult) -> dict[str, Any]:
    """The ``mathhammer.result/1`` document as a record for :class:`~.stream.RecordWriter`
    (``--format ndjson`` and ``csv``): :func:`document` with each ``distribution`` list as
    :class:`~.stream.RawJSON` text (:func:`rows_json`), so a large one costs its text only."""
    return document(result, rows=rows_json)


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
