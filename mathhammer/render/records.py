"""Machine formats: the JSON document of a result."""

from __future__ import annotations

import json

from .. import __version__
from ..result import DamageResult

__all__ = ["WRITER", "to_json"]

WRITER = {"name": "mathhammer", "version": __version__}


def to_json(result: DamageResult) -> str:
    """The ``mathhammer.result/1`` document, indented, keys in contract order."""
    return json.dumps(result.to_dict(WRITER), indent=2, ensure_ascii=False)
