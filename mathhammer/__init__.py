"""mathhammer: what does this weapon do to that target? (Warhammer 40,000, 10th edition)

Architecture, one job per module:
    profiles (YAML) / notation (inline text) -> model (frozen dataclasses)
    -> compile (rules -> small typed tables, via rules) -> engine (montecarlo -> kernel/,
    the only numba user) -> result (DamageResult) -> render (table / JSON) -> cli (typer).
The kernel only compares dice against the tables; the CLI only parses, calls and renders.
"""

__version__ = "0.2.0"

__all__ = ["Attack", "__version__", "build", "deadly_demise", "libraries", "library", "read_roster", "run",
           "run_attack", "tank_shock", "target", "with_rosters"]

_API = ("Attack", "build", "libraries", "library", "read_roster", "run", "run_attack", "target", "with_rosters")
#: The mortal-wound events (:mod:`mathhammer.events`).
_EVENTS = ("deadly_demise", "tank_shock")


def __getattr__(name: str) -> object:
    """The library API (:mod:`mathhammer.api`), imported on first use so that ``--help`` stays quick."""
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _EVENTS:
        from . import events

        return getattr(events, name)
    raise AttributeError(f"module 'mathhammer' has no attribute {name!r}")
