"""Comparing result documents of two runs: everything but their wall-clock times."""

from __future__ import annotations

from typing import Any


def without_timings(doc: Any) -> Any:
    """A JSON document (or ``to_dict()``) without wall-clock fields: every key naming seconds,
    at any depth (the only part two runs of the same request may differ in)."""
    if isinstance(doc, dict):
        return {k: without_timings(v) for k, v in doc.items() if "seconds" not in k}
    if isinstance(doc, list):
        return [without_timings(v) for v in doc]
    return doc
