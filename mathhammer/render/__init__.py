"""Renderers return a rich renderable, a string or (for a JSON document that may be large) an
iterator of strings; they never print.

Percentages and rounding happen here and only here.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["OutputFormat"]


class OutputFormat(str, Enum):
    """``--format`` values."""

    TABLE = "table"
    JSON = "json"
    NDJSON = "ndjson"
    CSV = "csv"
