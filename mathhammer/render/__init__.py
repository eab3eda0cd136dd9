"""Renderers return a rich renderable or a string; they never print.

Percentages and rounding happen here and only here.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["OutputFormat"]


class OutputFormat(str, Enum):
    """``--format`` values."""

    TABLE = "table"
    JSON = "json"
