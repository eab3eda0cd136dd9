"""The effects layer: army rules, detachment rules and stratagems as data, applied to an attack
before it is compiled (docs/effects.md). :mod:`.catalogue` reads the data; :mod:`.apply`
applies it."""

from __future__ import annotations

from .apply import Applied, Used, apply
from .catalogue import Catalogue, catalogue

__all__ = ["Applied", "Catalogue", "Used", "apply", "catalogue"]
