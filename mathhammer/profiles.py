"""YAML profiles <-> model objects, and name lookup. The only module that reads profile files.

A profile file is ``{schema: 1, source: str, units: [unit, ...]}``; the unit layout is
documented in ``docs/profiles.md``. Errors name the file, the YAML path and the value:
``profiles/orks.yaml: units[0].weapons[1].D: expected a dice expression (got 'd7x')``.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import pickle
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from . import dice
from .errors import ProfileError
from .model import DamageReroll, ModelStats, RerollPolicy, SaveReroll, Unit, Weapon
from .notation import parse_ability

__all__ = ["ENV_VAR", "SCHEMA_VERSION", "Library", "builtin_dirs", "dump_unit", "load_library", "load_file"]

SCHEMA_VERSION = 1
ENV_VAR = "MATHHAMMER_PROFILES"

_UNIT_KEYS = {"name", "aliases", "faction", "points", "source", "models", "invulnerable", "feel_no_pain",
              "damage_reduction", "deadly_demise", "keywords", "weapons", "abilities", "modifiers"}
_MODEL_KEYS = {"name", "count", "M", "T", "Sv", "W", "Ld", "OC"}
_WEAPON_KEYS = {"name", "aliases", "range", "A", "BS", "WS", "S", "AP", "D", "abilities", "modifiers"}

#: Modifiers a profile may carry, merged with the command line (which wins): name -> type.
#: As an attacker a unit/weapon uses the first group; as a target a unit uses save_mod and
#: reroll_saves.
MODIFIERS: dict[str, type] = {
    "hit_mod": int, "wound_mod": int, "damage_mod": int, "bs_improve": int, "ap_improve": int, "crit_hit": int,
    "crit_wound": int, "reroll_hits": RerollPolicy, "reroll_wounds": RerollPolicy, "reroll_damage": DamageReroll,
    "save_mod": int, "reroll_saves": SaveReroll,
}
#: Defensive unit abilities (``abilities:`` of a unit).
_DEFENSIVE = {"STEALTH": "stealth", "HALF DAMAGE": "half_damage", "-1 DAMAGE": "damage_reduction"}


class _Reader:
    """Typed access to a YAML mapping that reports file and path on every error."""

    def __init__(self, file: str, path: str, data: Any) -> None:
        self.file, self.path, self.data = file, path, data

    def fail(self, what: str, value: Any, key: str = "", hint: str = "") -> ProfileError:
        path = ".".join(p for p in (self.path, key) if p)
        where = f"{self.file}: {path}" if path else self.file
        return ProfileError(what, where=where, value=value if isinstance(value, str) else repr(value), hint=hint)

    def mapping(self, allowed: set[str], required: Iterable[str]) -> None:
        if not isinstance(self.data, dict):
            raise self.fail("expected a mapping", self.data)
        for key in self.data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                raise self.fail("unknown key", str(key), str(key), hint=f"did you mean {close[0]!r}?" if close
                                else f"allowed keys: {', '.join(sorted(allowed))}")
        for key in required:
            if key not in self.data:
                raise self.fail(f"missing key {key!r}", self.data.get("name", ""))

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, *, lo: int | None = None,
            hi: int | None = None) -> Any:
        value = self.data.get(key, default)
        if value is None:
            return default
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(f"expected {names}", value, key)
        if isinstance(value, int) and ((lo is not None and value < lo) or (hi is not None and value > hi)):
            raise self.fail(f"must be between {lo} and {hi}" if hi is not None else f"must be at least {lo}",
                            value, key)
        return value

    def child(self, key: str, index: int | None = None) -> _Reader:
        data = self.data[key] if index is None else self.data[key][index]
        path = f"{self.path}.{key}" if self.path else key
        return _Reader(self.file, path + ("" if index is None else f"[{index}]"), data)

    def items(self, key: str) -> list[_Reader]:
        value = self.data.get(key) or []
        if not isinstance(value, list):
            raise self.fail("expected a list", value, key)
        return [self.child(key, i) for i in range(len(value))]

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail("expected a list of strings", value, key)
        return tuple(value)

    def dice(self, key: str) -> Any:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail("expected a dice expression like 'D6+1'", value, key)
        try:
            return dice.parse(str(value))
        except ProfileError as e:
            raise self.fail("expected a dice expression like 'D6+1'", str(value), key, hint=e.hint) from None


def _weapon(r: _Reader, unit: str) -> Weapon:
    r.mapping(_WEAPON_KEYS, ("name", "range", "A", "S", "D"))
    name = r.get("name", str)
    rng = r.data.get("range")
    melee = isinstance(rng, str) and rng.strip().lower() == "melee"
    if not melee and (isinstance(rng, bool) or not isinstance(rng, int) or rng < 0):
        raise r.fail("expected a range in inches or 'melee'", rng, "range")
    skill_key = "WS" if melee else "BS"
    other = "BS" if melee else "WS"
    if other in r.data:
        raise r.fail(f"{'melee' if melee else 'ranged'} weapons take {skill_key}, not {other}", r.data[other], other)
    abilities = []
    for i, text in enumerate(r.strings("abilities")):
        try:
            abilities.append(parse_ability(text))
        except ProfileError as e:
            raise r.fail(e.what, text, f"abilities[{i}]", hint=e.hint) from None
    modifiers = _modifiers(r)
    try:
        return Weapon(name=name, aliases=r.strings("aliases"), range_inches=None if melee else rng, modifiers=modifiers,
                      attacks=r.dice("A"), skill=r.get(skill_key, int, lo=2, hi=6), strength=r.get("S", int, lo=1),
                      ap=r.get("AP", int, 0, hi=0, lo=-10), damage=r.dice("D"), abilities=tuple(abilities), unit=unit)
    except ProfileError as e:
        if e.where.startswith(r.file):
            raise
        raise r.fail(e.what, e.value, hint=e.hint) from None


def _modifiers(r: _Reader) -> tuple[tuple[str, object], ...]:
    """The ``modifiers:`` mapping of a unit or weapon, typed and checked."""
    if r.data.get("modifiers") is None:
        return ()
    mr = r.child("modifiers")
    mr.mapping(set(MODIFIERS), ())
    out: list[tuple[str, object]] = []
    for key, kind in MODIFIERS.items():
        if key not in mr.data:
            continue
        if kind is int:
            lo, hi = (2, 6) if key.startswith("crit") else (-6, 6)
            out.append((key, mr.get(key, int, lo=lo, hi=hi)))
        else:
            value = mr.data[key]
            try:
                out.append((key, kind(str(value).lower().replace("_", "-"))))
            except ValueError:
                choices = ", ".join(m.value for m in kind)  # type: ignore[attr-defined]
                raise mr.fail(f"expected one of {choices}", str(value), key) from None
    return tuple(out)


def _unit(r: _Reader) -> Unit:
    r.mapping(_UNIT_KEYS, ("name", "models"))
    name = r.get("name", str)
    models = []
    for m in r.items("models"):
        m.mapping(_MODEL_KEYS, ("name", "count", "T", "Sv", "W"))
        models.append(ModelStats(name=m.get("name", str), count=m.get("count", int, lo=1), move=m.get("M", int, lo=0),
                                 toughness=m.get("T", int, lo=1), save=m.get("Sv", int, lo=2, hi=7),
                                 wounds=m.get("W", int, lo=1), leadership=m.get("Ld", int, lo=2, hi=12),
                                 objective_control=m.get("OC", int, lo=0)))
    if not models:
        raise r.fail("a unit needs at least one model", [], "models")
    inv, inv_ranged = None, False
    if r.data.get("invulnerable") is not None:
        iv = r.child("invulnerable")
        iv.mapping({"save", "ranged_only"}, ("save",))
        inv, inv_ranged = iv.get("save", int, lo=2, hi=6), iv.get("ranged_only", bool, False)
    keywords = frozenset(k.upper() for k in r.strings("keywords"))
    defensive: dict[str, Any] = {}
    for i, text in enumerate(r.strings("abilities")):
        key = " ".join(text.upper().replace("_", " ").split())
        if key not in _DEFENSIVE:
            raise r.fail("unknown unit ability", text, f"abilities[{i}]", hint=f"known: {', '.join(sorted(_DEFENSIVE))}")
        defensive[_DEFENSIVE[key]] = 1 if key == "-1 DAMAGE" else True
    if "damage_reduction" in defensive and r.data.get("damage_reduction"):
        raise r.fail("give -1 DAMAGE once: in abilities or as damage_reduction", r.data["damage_reduction"],
                     "damage_reduction")
    reduction = defensive.pop("damage_reduction", 0) or r.get("damage_reduction", int, 0, lo=0)
    return Unit(name=name, aliases=r.strings("aliases"), faction=r.get("faction", str, ""), modifiers=_modifiers(r),
                stealth=defensive.get("stealth", False), half_damage=defensive.get("half_damage", False),
                points=r.get("points", int, lo=0), source=r.get("source", str, ""), models=tuple(models),
                invulnerable=inv, invulnerable_ranged_only=inv_ranged,
                feel_no_pain=r.get("feel_no_pain", int, lo=2, hi=6), damage_reduction=reduction,
                keywords=keywords, weapons=tuple(_weapon(w, name) for w in r.items("weapons")))


def load_file(path: Path, label: str | None = None) -> list[Unit]:
    """Load one profile file. ``label`` is how the file is named in errors (default: the path)."""
    file = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ProfileError(f"cannot read file: {e.strerror}", where=file) from None
    import yaml  # here, not at the top: a warm start reads parsed profiles from the cache

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        loc = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ProfileError(f"YAML syntax error at {loc}: {problem}", where=file) from None
    root = _Reader(file, "", data)
    root.mapping({"schema", "source", "units"}, ("schema", "units"))
    if root.get("schema", int) != SCHEMA_VERSION:
        raise root.fail(f"unsupported schema (this version reads schema {SCHEMA_VERSION})", data["schema"], "schema")
    return [_unit(u) for u in root.items("units")]


def builtin_dirs() -> list[Path]:
    """The reference profiles: the wheel's data package, or profiles/ of a source checkout."""
    try:
        return [Path(str(resources.files("mathhammer.builtin_profiles")))]
    except ModuleNotFoundError:
        return [Path(__file__).resolve().parent.parent / "profiles"]


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    aliases: tuple[str, ...]
    obj: Any
    label: str


class Library:
    """Every unit and weapon known, with case-insensitive lookup by alias, name or unique substring."""

    def __init__(self, units: Sequence[Unit]) -> None:
        self.units = tuple(units)
        self.weapons = tuple(w for u in self.units for w in u.weapons)

    def _entries(self, kind: str) -> list[_Entry]:
        if kind == "unit":
            return [_Entry(u.name, u.aliases, u, u.name) for u in self.units]
        return [_Entry(w.name, w.aliases, w, f"{w.unit}: {w.name}") for w in self.weapons]

    def find(self, query: str, kind: str, *, substring: bool = True) -> Any:
        """Find one unit or weapon. Declared aliases win over names, names over unique substrings;
        ``UNIT/WEAPON`` (or ``UNIT:WEAPON``) picks a weapon of one unit. With ``substring=False``
        only aliases and whole names match, and ``None`` is returned when nothing does.

        Raises:
            ProfileError: unknown (with the three closest names) or ambiguous (with the candidates).
        """
        q = " ".join(query.lower().split())
        if kind == "weapon" and ("/" in q or ":" in q):
            unit_q, _, weapon_q = q.replace(":", "/").partition("/")
            unit = self.find(unit_q, "unit")
            return Library([unit]).find(weapon_q, "weapon")
        entries = self._entries(kind)
        tests = [lambda e: q in (a.lower() for a in e.aliases), lambda e: e.name.lower() == q]
        if substring:
            tests.append(lambda e: q in e.name.lower() or any(q in a.lower() for a in e.aliases))
        for test in tests:
            hits = [e for e in entries if test(e)]
            if hits:
                distinct = _distinct(hits)
                if len(distinct) == 1:
                    return distinct[0].obj
                shown = ", ".join(sorted(e.label for e in distinct)[:8]) + (", …" if len(distinct) > 8 else "")
                raise ProfileError(f"ambiguous {kind} name, matches {len(distinct)}: {shown}", where=kind, value=query,
                                   hint="type more of the name" + (", or UNIT/WEAPON" if kind == "weapon" else ""))
        if not substring:
            return None
        raise self.unknown(query, (kind,))

    def unknown(self, query: str, kinds: tuple[str, ...]) -> ProfileError:
        """The error for a name that matches nothing, with the three closest names."""
        q = " ".join(query.lower().split())
        lower = {n.lower(): n for kind in kinds for e in self._entries(kind) for n in (e.name, *e.aliases)}
        close = difflib.get_close_matches(q, sorted(lower), n=3, cutoff=0.4)
        kind = " or ".join(kinds)
        hint = f"did you mean {', '.join(repr(lower[c]) for c in close)}?" if close else \
            f"`mathhammer profiles list --kind {kinds[0]}` lists them"
        return ProfileError(f"unknown {kind}", where=kinds[0], value=query, hint=hint)

    def unit_named(self, name: str) -> Unit | None:
        """The unit with exactly this name."""
        return next((u for u in self.units if u.name == name), None)


def _distinct(hits: list[_Entry]) -> list[_Entry]:
    """Identical profiles found under one name in several units (e.g. a Meltagun) count once."""
    seen: dict[Any, _Entry] = {}
    for e in hits:
        key = (e.obj.name.lower(), _stats(e.obj)) if isinstance(e.obj, Weapon) else id(e.obj)
        seen.setdefault(key, e)
    return list(seen.values())


def _stats(w: Weapon) -> tuple[object, ...]:
    return (w.attacks, w.skill, w.strength, w.ap, w.damage, w.range_inches, frozenset(map(str, w.abilities)))


def load_library(extra_dirs: Sequence[Path] = (), *, use_env: bool = True) -> Library:
    """Built-in profiles, then ``$MATHHAMMER_PROFILES`` (os.pathsep-separated), then ``extra_dirs``.

    Raises:
        ProfileError: a missing folder, or any error in any file.
    """
    dirs = list(builtin_dirs())
    if use_env and os.environ.get(ENV_VAR):
        dirs += [Path(p) for p in os.environ[ENV_VAR].split(os.pathsep) if p]
    dirs += list(extra_dirs)
    units: list[Unit] = []
    for d in dirs:
        if not d.is_dir():
            raise ProfileError("not a folder", where="--profiles" if d in extra_dirs else ENV_VAR, value=str(d))
        for f in sorted(d.glob("*.yaml")) + sorted(d.glob("*.yml")):
            units += _load_cached(f, label=f"profiles/{f.name}" if d == dirs[0] else str(f))
    return Library(units)


CACHE_ENV_VAR = "MATHHAMMER_CACHE_DIR"


def cache_dir() -> Path:
    """Where parsed profiles are kept: $MATHHAMMER_CACHE_DIR, else $XDG_CACHE_HOME/mathhammer,
    else ~/.cache/mathhammer."""
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mathhammer"


def _load_cached(path: Path, label: str) -> list[Unit]:
    """:func:`load_file`, remembering the parsed units (keyed by version, path, size and mtime) so
    that start-up does not re-parse unchanged YAML. Files with errors are never cached; a cache
    that cannot be read or written is ignored."""
    from . import __version__

    try:
        st = path.stat()
        key = hashlib.sha256(f"{__version__}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:32]
        cached = cache_dir() / "profiles" / f"{key}.pickle"
        return list(pickle.loads(cached.read_bytes()))  # noqa: S301 - the user's own cache, written below
    except Exception:  # noqa: BLE001 - any miss or damage: parse the file
        pass
    units = load_file(path, label)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(units, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(cached)
    except Exception:  # noqa: BLE001 - a read-only home is fine: just slower
        pass
    return units


def dump_unit(u: Unit) -> dict[str, Any]:
    """A unit as YAML-ready data (the inverse of loading: loading it back gives an equal unit)."""
    out: dict[str, Any] = {"name": u.name}
    if u.aliases:
        out["aliases"] = list(u.aliases)
    if u.faction:
        out["faction"] = u.faction
    out["points"] = u.points
    if u.source:
        out["source"] = u.source
    out["models"] = [{"name": m.name, "count": m.count, **({"M": m.move} if m.move is not None else {}),
                      "T": m.toughness, "Sv": m.save, "W": m.wounds,
                      **({"Ld": m.leadership} if m.leadership is not None else {}),
                      **({"OC": m.objective_control} if m.objective_control is not None else {})} for m in u.models]
    if u.invulnerable:
        out["invulnerable"] = {"save": u.invulnerable, "ranged_only": u.invulnerable_ranged_only}
    if u.feel_no_pain:
        out["feel_no_pain"] = u.feel_no_pain
    if u.damage_reduction:
        out["damage_reduction"] = u.damage_reduction
    abilities = [name for name, attr in _DEFENSIVE.items() if attr != "damage_reduction" and getattr(u, attr)]
    if abilities:
        out["abilities"] = abilities
    if u.modifiers:
        out["modifiers"] = _dump_modifiers(u.modifiers)
    out["keywords"] = sorted(u.keywords)
    out["weapons"] = [_dump_weapon(w) for w in u.weapons]
    return out


def _dump_weapon(w: Weapon) -> dict[str, Any]:
    out: dict[str, Any] = {"name": w.name}
    if w.aliases:
        out["aliases"] = list(w.aliases)
    out["range"] = "melee" if w.melee else w.range_inches
    out["A"] = str(w.attacks)
    out["WS" if w.melee else "BS"] = w.skill
    out.update({"S": w.strength, "AP": w.ap, "D": str(w.damage), "abilities": [str(a) for a in w.abilities]})
    if w.modifiers:
        out["modifiers"] = _dump_modifiers(w.modifiers)
    return out


def _dump_modifiers(mods: tuple[tuple[str, object], ...]) -> dict[str, object]:
    return {k: (v.value if hasattr(v, "value") else v) for k, v in mods}
