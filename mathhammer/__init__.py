"""mathhammer: what does this weapon do to that target? (Warhammer 40,000, 10th edition)

Architecture, one job per module:
    profiles (YAML) / notation (inline text) -> model (frozen dataclasses)
    -> compile (rules -> small typed tables, via rules) -> engine (montecarlo -> kernel/,
    the only numba user) -> result (DamageResult) -> render (table / JSON) -> cli (typer).
The kernel only compares dice against the tables; the CLI only parses, calls and renders.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
