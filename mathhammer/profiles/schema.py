"""The profile schema: YAML data -> checked Unit and Weapon objects, and back (:func:`dump_unit`).

A profile file is ``{schema: 1, source: str, units: [unit, ...]}``; the unit layout is
documented in ``docs/profiles.md``. A statline (``models:`` entry) may carry its own
``invulnerable``, ``feel_no_pain`` and ``keywords``, and its default loadout as ``weapons:``
(names of the unit's weapons, each with how many every model of the statline uses); a unit
may name the Leader units ``attached`` to it (checked against the whole library in
:mod:`.library`). Besides what the engine uses, a profile keeps what it does not: ``unmodelled``
abilities of weapons and units (text), points per unit size (``sizes``) and the weapons a
statline may take instead of its default (``options``). Errors name the file, the YAML path and the value:
``profiles/orks.yaml: units[0].weapons[1].D: expected a dice expression (got 'd7x')``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any, TypeVar

from .. import dice
from ..errors import ProfileError
from ..limits import (
    MAX_AP,
    MAX_ATTACKING_MODELS,
    MAX_CHARACTERISTIC,
    MAX_DAMAGE_MOD,
    MAX_RANGE,
    MAX_TARGET_MODELS,
    MAX_WOUNDS,
)
from ..model import (
    WARGEAR_GIVES,
    AbilitySpec,
    DamageReroll,
    DiceExpr,
    ModelStats,
    RerollPolicy,
    SaveReroll,
    Unit,
    Wargear,
    Weapon,
    bear,
    worn,
)
from ..notation import parse_ability
from ._yaml import _empty, _show

_T = TypeVar("_T")

SCHEMA_VERSION = 1

_UNIT_KEYS = {"name", "aliases", "faction", "points", "source", "models", "invulnerable", "feel_no_pain",
              "damage_reduction", "deadly_demise", "firing_deck", "rules", "keywords", "weapons", "abilities",
              "modifiers", "attached", "unmodelled", "sizes", "wargear", "enhancements"}
_MODEL_KEYS = {"name", "count", "M", "T", "Sv", "W", "Ld", "OC", "invulnerable", "feel_no_pain", "keywords", "weapons",
               "options", "wargear"}
_WEAPON_KEYS = {"name", "aliases", "range", "A", "BS", "WS", "S", "AP", "D", "abilities", "modifiers", "unmodelled"}

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
        return ProfileError(what, where=where, value=_show(value), hint=hint)

    def mapping(self, allowed: set[str], required: Iterable[str]) -> None:
        if not isinstance(self.data, dict):
            raise self.fail("expected a mapping", self.data)
        for key in self.data:
            if key not in allowed:
                import difflib

                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                raise self.fail("unknown key", str(key), _show(str(key)), hint=f"did you mean {close[0]!r}?" if close
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
            raise self.fail(f"must be from {lo} to {hi}" if lo is not None and hi is not None else
                            f"must be at least {lo}" if lo is not None else f"must be at most {hi}", value, key)
        return value

    def name(self, key: str = "name") -> str:
        """A required name: a string with something in it."""
        value: str = self.get(key, str)
        if not value.strip():
            raise self.fail("a name cannot be blank", value, key)
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

    def dice(self, key: str) -> DiceExpr:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail("expected a dice expression like 'D6+1'", value, key)
        try:
            return _dice(str(value))
        except ProfileError as e:
            plain = "expected a dice expression"  # the notation's own words, given the example once
            what = (f"{plain} like 'D6+1'{e.what.removeprefix(plain)}" if e.what.startswith(plain)
                    else f"expected a dice expression like 'D6+1': {e.what}")
            raise self.fail(what, str(value), key, hint=e.hint) from None


# A library repeats a few spellings ("Twin-linked", "D6", "1") many times; both results are frozen.
@lru_cache(maxsize=1024)
def _dice(text: str) -> DiceExpr:
    return dice.parse(text)


@lru_cache(maxsize=1024)
def _ability(text: str) -> AbilitySpec:
    return parse_ability(text)


def _weapon(r: _Reader, unit: str) -> Weapon:
    r.mapping(_WEAPON_KEYS, ("name", "range", "A", "S", "D"))
    name = r.name()
    rng = r.data.get("range")
    melee = isinstance(rng, str) and rng.strip().lower() == "melee"
    if not melee and (isinstance(rng, bool) or not isinstance(rng, int) or not 0 <= rng <= MAX_RANGE):
        raise r.fail(f"expected a range in inches (0 to {MAX_RANGE}) or 'melee'", rng, "range")
    skill_key = "WS" if melee else "BS"
    other = "BS" if melee else "WS"
    if other in r.data:
        raise r.fail(f"{'melee' if melee else 'ranged'} weapons take {skill_key}, not {other}", r.data[other], other)
    abilities = []
    for i, text in enumerate(r.strings("abilities")):
        try:
            abilities.append(_ability(text))
        except ProfileError as e:
            raise r.fail(e.what, text, f"abilities[{i}]", hint=e.hint) from None
    modifiers = _modifiers(r)
    unmodelled = _unmodelled(r)
    return _built(r, lambda: Weapon(
        name=name, aliases=_aliases(r), range_inches=None if melee else rng, modifiers=modifiers, unmodelled=unmodelled,
        attacks=r.dice("A"), skill=r.get(skill_key, int, lo=2, hi=6),
        strength=r.get("S", int, lo=1, hi=MAX_CHARACTERISTIC), ap=r.get("AP", int, 0, lo=-MAX_AP, hi=0),
        damage=r.dice("D"), abilities=tuple(abilities), unit=unit))


def _unmodelled(r: _Reader) -> tuple[str, ...]:
    """A weapon's ``unmodelled:`` abilities: text the engine does not model, so never one it does
    (that belongs in ``abilities:``, where it takes effect)."""
    texts = _texts(r, "unmodelled")
    for i, text in enumerate(texts):
        try:
            _ability(text)
        except ProfileError:
            continue
        raise r.fail("an ability the engine models: give it in 'abilities'", text, f"unmodelled[{i}]")
    return texts


def _texts(r: _Reader, key: str) -> tuple[str, ...]:
    """A list of non-blank strings."""
    texts = r.strings(key)
    for i, text in enumerate(texts):
        if not text.strip():
            raise r.fail("an entry cannot be blank", text, f"{key}[{i}]")
    return texts


def _built(r: _Reader, make: Callable[[], _T]) -> _T:
    """``make()``, with an invariant error of the model (which knows no file) given r's file and path."""
    try:
        return make()
    except ProfileError as e:
        if e.where.startswith(r.file):
            raise
        raise r.fail(e.what, e.value, hint=e.hint) from None


def _aliases(r: _Reader) -> tuple[str, ...]:
    aliases = r.strings("aliases")
    for i, alias in enumerate(aliases):
        if not alias.strip():
            raise r.fail("an alias cannot be blank", alias, f"aliases[{i}]")
    return aliases


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
                if not isinstance(value, str):
                    raise ValueError(value)
                out.append((key, kind(value.lower().replace("_", "-"))))
            except ValueError:
                choices = ", ".join(m.value for m in kind)  # type: ignore[attr-defined]
                raise mr.fail(f"expected one of {choices}", value, key) from None
    return tuple(out)


class _Defences:
    """What a statline's default wargear is given against: the unit's own invulnerable save
    (``ranged_only``), Feel No Pain and ``wargear:`` entries."""

    def __init__(self, invulnerable: int | None, ranged_only: bool, feel_no_pain: int | None,
                 wargear: tuple[Wargear, ...]) -> None:
        self.invulnerable, self.ranged_only, self.feel_no_pain = invulnerable, ranged_only, feel_no_pain
        self.wargear = {_key(w.name): w for w in wargear}


def _model(m: _Reader, unit: str, weapons: tuple[Weapon, ...], own: _Defences) -> ModelStats:
    m.mapping(_MODEL_KEYS, ("name", "count", "T", "Sv", "W"))
    name: str = m.get("name", str)
    if isinstance(m.data.get("invulnerable"), dict):
        raise m.fail("a statline's invulnerable save is a number, e.g. 'invulnerable: 4'", m.data["invulnerable"],
                     "invulnerable", hint="ranged_only is given once, on the unit's invulnerable")
    loadout = _loadout(m, unit, name, weapons)
    options = _options(m, unit, name, weapons)
    bare = _built(m, lambda: ModelStats(
        name=name, count=m.get("count", int, lo=1, hi=MAX_TARGET_MODELS),
        move=m.get("M", int, lo=0, hi=MAX_RANGE), toughness=m.get("T", int, lo=1, hi=MAX_CHARACTERISTIC),
        save=m.get("Sv", int, lo=2, hi=7), wounds=m.get("W", int, lo=1, hi=MAX_WOUNDS),
        leadership=m.get("Ld", int, lo=2, hi=12), objective_control=m.get("OC", int, lo=0, hi=MAX_WOUNDS),
        invulnerable=m.get("invulnerable", int, lo=2, hi=6), feel_no_pain=m.get("feel_no_pain", int, lo=2, hi=6),
        keywords=_keywords(m), loadout=loadout, options=options))
    borne = _borne(m, unit, name, own)
    if not borne:
        return bare
    stats = _equipped(bare, borne, own)
    return _built(m, lambda: replace(stats, wargear=tuple(w.name for w in borne), bare=bare))


def _equipped(bare: ModelStats, borne: list[Wargear], own: _Defences) -> ModelStats:
    """``bare`` with the wargear ``borne`` (a piece twice: two) given to each of its models."""
    return bear(bare, worn(borne), invulnerable=own.invulnerable, ranged_only=own.ranged_only,
                feel_no_pain=own.feel_no_pain)[0]


def _borne(m: _Reader, unit: str, model: str, own: _Defences) -> list[Wargear]:
    """A statline's ``wargear:``: names of the unit's ``wargear:`` entries each of its models bears
    by default (a name twice: two), given to it (ruling M81)."""
    out: list[Wargear] = []
    for i, raw in enumerate(_texts(m, "wargear")):
        found = own.wargear.get(_key(raw)) if isinstance(raw, str) else None
        if found is None:
            have = (f"it lists {', '.join(w.name for w in own.wargear.values())}" if own.wargear else
                    "it lists none")
            raise m.fail(f"model {model!r} bears wargear that unit {unit!r} does not list in its wargear ({have})",
                         raw, f"wargear[{i}]", hint="give each piece once in the unit's wargear: {name, W/add_W/...}")
        out.append(found)
    return out


def _keywords(r: _Reader) -> frozenset[str]:
    """``keywords:`` in capitals."""
    return frozenset(k.upper() for k in r.strings("keywords"))


def _options(m: _Reader, unit: str, model: str, weapons: tuple[Weapon, ...]) -> tuple[str, ...]:
    """A statline's ``options:``: names (or aliases) of the unit's weapons its models may take,
    stored as the weapons' names, each once, in the order given."""
    names = _weapon_names(weapons)
    out: dict[str, None] = {}
    for i, raw in enumerate(_texts(m, "options")):
        out[_one_weapon(m, f"options[{i}]", raw, (unit, model, "options"), weapons, names)] = None
    return tuple(out)


def _weapon_names(weapons: tuple[Weapon, ...]) -> tuple[dict[str, list[Weapon]], dict[str, list[Weapon]]]:
    """The unit's weapons by name and by alias, as lookup compares them."""
    names: dict[str, list[Weapon]] = {}
    aliases: dict[str, list[Weapon]] = {}
    for w in weapons:
        names.setdefault(_key(w.name), []).append(w)
        for alias in dict.fromkeys(_key(a) for a in w.aliases):
            aliases.setdefault(alias, []).append(w)
    return names, aliases


def _one_weapon(r: _Reader, key: str, raw: str, place: tuple[str, str, str], weapons: tuple[Weapon, ...],
                names: tuple[dict[str, list[Weapon]], dict[str, list[Weapon]]]) -> str:
    """The name of the one weapon of the unit that ``raw`` names (by name, else alias); ``place``
    is (unit, model, "loadout" or "options"), for the error."""
    unit, model, part = place
    found = names[0].get(_key(raw)) or names[1].get(_key(raw)) or []
    if len(found) != 1:
        have = f"it has {', '.join(w.name for w in weapons)}" if weapons else "it lists no weapons"
        verb = "carries" if part == "loadout" else "may take"
        what = (f"unit {unit!r} has {len(found)} weapons of this name, so the {part} of model {model!r} "
                "cannot tell which" if found else
                f"model {model!r} {verb} a weapon unit {unit!r} does not have ({have})")
        raise r.fail(what, raw, key, hint="give each weapon of the unit its own name" if found else
                     "use a name or alias of the unit's weapons, or add the weapon to them")
    return found[0].name


def _loadout(m: _Reader, unit: str, model: str, weapons: tuple[Weapon, ...]) -> tuple[tuple[str, int], ...]:
    """A statline's ``weapons:``: what each of its models attacks with by default, as (weapon name,
    how many).

    Either a list whose entries are a weapon name (one of it) or ``{name: NAME, count: N}``, or a
    mapping ``{NAME: N, ...}``; in the order given. A name is one of the unit's weapons, by name
    or alias (case and spacing ignored), stored as the weapon's name; a weapon given twice counts
    twice (its counts are added, at its first place).
    """
    value = m.data.get("weapons")
    if value is None:
        return ()
    # (reader, key of the name in it, the name as written, its count)
    entries: list[tuple[_Reader, str, Any, int]] = []
    if isinstance(value, dict):
        lr = m.child("weapons")
        for raw in value:
            if not isinstance(raw, str) or not raw.strip():
                raise lr.fail("expected a weapon name", raw)
            entries.append((lr, _show(raw), raw, _count(lr, raw, None)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                ir = m.child("weapons", i)
                ir.mapping({"name", "count"}, ("name",))
                entries.append((ir, "name", item["name"], _count(ir, "count", 1)))
            else:
                entries.append((m, f"weapons[{i}]", item, 1))
    else:
        raise m.fail("expected a list of weapon names (or a mapping of weapon name to count)", value, "weapons",
                     hint="e.g. weapons: [plasma rifle, {name: missile pod, count: 2}]")
    names = _weapon_names(weapons)
    total: dict[str, int] = {}
    for r, key, raw, count in entries:
        if not isinstance(raw, str) or not raw.strip():
            raise r.fail("expected a weapon name", raw, key)
        name = _one_weapon(r, key, raw, (unit, model, "loadout"), weapons, names)
        total[name] = total.get(name, 0) + count
    if any(n > MAX_ATTACKING_MODELS for n in total.values()):
        raise m.fail(f"a weapon's counts add up to more than {MAX_ATTACKING_MODELS:,}", max(total.values()),
                     "weapons")
    return tuple(total.items())


def _count(r: _Reader, key: str, default: int | None) -> int:
    """How many of a weapon each model carries: 1 to MAX_ATTACKING_MODELS (``default`` when not given)."""
    value = r.data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise r.fail(f"a weapon count must be a whole number from 1 to {MAX_ATTACKING_MODELS:,}", value, _show(key))
    if not 1 <= value <= MAX_ATTACKING_MODELS:
        raise r.fail(f"a weapon count must be from 1 to {MAX_ATTACKING_MODELS:,}", value, _show(key),
                     hint="leave a weapon out of the loadout when the model does not carry it" if value < 1 else "")
    return value


def _key(name: str) -> str:
    """A name as lookup compares it: case-insensitive, single spaces."""
    return " ".join(name.lower().split())


def _unit(r: _Reader) -> Unit:
    r.mapping(_UNIT_KEYS, ("name", "models"))
    name = r.name()
    weapons = tuple(_weapon(w, name) for w in r.items("weapons"))
    inv, inv_ranged = None, False
    if r.data.get("invulnerable") is not None:
        iv = r.child("invulnerable")
        iv.mapping({"save", "ranged_only"}, ("save",))
        inv, inv_ranged = iv.get("save", int, lo=2, hi=6), iv.get("ranged_only", bool, False)
    fnp = r.get("feel_no_pain", int, lo=2, hi=6)
    wargear = _wargear(r)
    own = _Defences(inv, inv_ranged, fnp, wargear)
    models = [_model(m, name, weapons, own) for m in r.items("models")]
    if not models:
        raise r.fail("a unit needs at least one model", [], "models")
    total = sum(m.count for m in models)
    if total > MAX_TARGET_MODELS:
        raise r.fail(f"the counts add up to more than {MAX_TARGET_MODELS} models", total, "models")
    demise = r.dice("deadly_demise") if r.data.get("deadly_demise") is not None else None
    # a keyword that a statline's default wargear gives its unit (a Marker Drone: MARKERLIGHT)
    keywords = _keywords(r) | {k for m in models for w in m.wargear for k in own.wargear[_key(w)].keywords}
    attached = r.strings("attached")
    for i, leader in enumerate(attached):
        if not leader.strip():
            raise r.fail("a unit name cannot be blank", leader, f"attached[{i}]")
    defensive: dict[str, Any] = {}
    for i, text in enumerate(r.strings("abilities")):
        key = " ".join(text.upper().replace("_", " ").split())
        if key not in _DEFENSIVE:
            raise r.fail("unknown unit ability", text, f"abilities[{i}]",
                         hint=f"known: {', '.join(sorted(_DEFENSIVE))}")
        defensive[_DEFENSIVE[key]] = 1 if key == "-1 DAMAGE" else True
    if "damage_reduction" in defensive and r.data.get("damage_reduction"):
        raise r.fail("give -1 DAMAGE once: in abilities or as damage_reduction", r.data["damage_reduction"],
                     "damage_reduction")
    reduction = defensive.pop("damage_reduction", 0) or r.get("damage_reduction", int, 0, lo=0,
                                                               hi=MAX_DAMAGE_MOD)
    sizes = _sizes(r)
    unmodelled = _texts(r, "unmodelled")
    rules = _texts(r, "rules")
    return _built(r, lambda: Unit(
        name=name, aliases=_aliases(r), faction=r.get("faction", str, ""), modifiers=_modifiers(r),
        stealth=defensive.get("stealth", False), half_damage=defensive.get("half_damage", False),
        points=r.get("points", int, sizes[0][1] if sizes else None, lo=0), source=r.get("source", str, ""),
        models=tuple(models),
        invulnerable=inv, invulnerable_ranged_only=inv_ranged, feel_no_pain=fnp,
        damage_reduction=reduction, keywords=keywords, weapons=weapons, attached=attached, unmodelled=unmodelled,
        sizes=sizes, deadly_demise=demise, firing_deck=r.get("firing_deck", int, None, lo=1, hi=MAX_ATTACKING_MODELS),
        rules=rules, wargear=wargear, enhancements=_wargear(r, "enhancements")))


def _wargear(r: _Reader, key: str = "wargear") -> tuple[Wargear, ...]:
    """``wargear: [{name: Shield Drone, add_W: 1}, ...]``: what each gives its bearer (ruling M81),
    each name once; ``enhancements:`` alike (ruling M85)."""
    out: list[Wargear] = []
    seen: set[str] = set()
    for wr in r.items(key):
        wr.mapping({"name", "keywords", "alternatives", *WARGEAR_GIVES}, ("name",))
        name = wr.name()
        if _key(name) in seen:
            raise wr.fail(f"{'an enhancement' if key == 'enhancements' else 'wargear'} is given once", name, "name")
        seen.add(_key(name))
        gives = tuple((k, wr.get(k, int)) for k in WARGEAR_GIVES if wr.data.get(k) is not None)
        keywords = tuple(dict.fromkeys(" ".join(k.upper().split()) for k in wr.strings("keywords")))
        if any(not k for k in keywords):
            raise wr.fail("a keyword cannot be blank", list(wr.strings("keywords")), "keywords")
        alternatives = tuple(dict.fromkeys(" ".join(a.split()) for a in _texts(wr, "alternatives")))
        out.append(_built(wr, partial(Wargear, name=name, gives=gives, keywords=keywords, alternatives=alternatives)))
    return tuple(out)


def _sizes(r: _Reader) -> tuple[tuple[int, int], ...]:
    """``sizes: [{models: N, points: P}, ...]``: each size once, ascending; ``points:`` (when
    given) is the first size's, the default size's."""
    out: list[tuple[int, int]] = []
    for sr in r.items("sizes"):
        sr.mapping({"models", "points"}, ("models", "points"))
        size = (sr.get("models", int, lo=1, hi=MAX_TARGET_MODELS), sr.get("points", int, lo=0))
        if out and size[0] <= out[-1][0]:
            raise sr.fail("unit sizes must be given in ascending number of models, each once", size[0], "models")
        out.append(size)
    points = r.get("points", int, lo=0)
    if out and points is not None and points != out[0][1]:
        raise r.fail(f"points are those of the smallest unit size ({out[0][0]} models: {out[0][1]} points)", points,
                     "points", hint="give the default size's points, or leave 'points' out")
    return tuple(out)


def _units(data: Any, file: str) -> list[Unit]:
    """The units of one file's YAML data, every value checked."""
    if data is None:
        raise _empty(file)
    root = _Reader(file, "", data)
    root.mapping({"schema", "source", "units"}, ("schema", "units"))
    if root.get("schema", int) != SCHEMA_VERSION:
        raise root.fail(f"unsupported schema (this version reads schema {SCHEMA_VERSION})", data["schema"], "schema")
    root.get("source", str)
    return [_unit(u) for u in root.items("units")]


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
    out["models"] = [_dump_model(m, u) for m in u.models]
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
    if u.deadly_demise is not None:
        out["deadly_demise"] = str(u.deadly_demise)
    if u.firing_deck is not None:
        out["firing_deck"] = u.firing_deck
    if u.rules:
        out["rules"] = list(u.rules)
    out["keywords"] = sorted(u.keywords)
    if u.unmodelled:
        out["unmodelled"] = list(u.unmodelled)
    if u.sizes:
        out["sizes"] = [{"models": n, "points": p} for n, p in u.sizes]
    out["weapons"] = [_dump_weapon(w) for w in u.weapons]
    if u.attached:
        out["attached"] = list(u.attached)
    for key, pieces in (("wargear", u.wargear), ("enhancements", u.enhancements)):
        if pieces:
            out[key] = [{"name": w.name, **dict(w.gives), **({"keywords": list(w.keywords)} if w.keywords else {}),
                         **({"alternatives": list(w.alternatives)} if w.alternatives else {})} for w in pieces]
    return out


def _dump_model(m: ModelStats, u: Unit) -> dict[str, Any]:
    if m.bare is not None:  # the characteristics before its default wargear, and that wargear
        bare = replace(m.bare, name=m.name, count=m.count, loadout=m.loadout, options=m.options, keywords=m.keywords)
        own = _Defences(u.invulnerable, u.invulnerable_ranged_only, u.feel_no_pain, u.wargear)
        borne = [own.wargear[_key(w)] for w in m.wargear if _key(w) in own.wargear]
        if len(borne) == len(m.wargear) and _equipped(bare, borne, own) == replace(m, bare=None, wargear=()):
            return {**_dump_model(bare, u), "wargear": list(m.wargear)}
        # changed since it was loaded (a library caller's replace): its own values stand
    out: dict[str, Any] = {"name": m.name, "count": m.count}
    if m.move is not None:
        out["M"] = m.move
    out.update({"T": m.toughness, "Sv": m.save, "W": m.wounds})
    optional = {"Ld": m.leadership, "OC": m.objective_control, "invulnerable": m.invulnerable,
                "feel_no_pain": m.feel_no_pain}
    out.update({k: v for k, v in optional.items() if v is not None})
    if m.keywords:
        out["keywords"] = sorted(m.keywords)
    if m.loadout:
        out["weapons"] = [name if n == 1 else {"name": name, "count": n} for name, n in m.loadout]
    if m.options:
        out["options"] = list(m.options)
    return out


def _dump_weapon(w: Weapon) -> dict[str, Any]:
    out: dict[str, Any] = {"name": w.name}
    if w.aliases:
        out["aliases"] = list(w.aliases)
    out["range"] = "melee" if w.melee else w.range_inches
    out["A"] = str(w.attacks)
    out["WS" if w.melee else "BS"] = w.skill
    out.update({"S": w.strength, "AP": w.ap, "D": str(w.damage), "abilities": [str(a) for a in w.abilities]})
    if w.unmodelled:
        out["unmodelled"] = list(w.unmodelled)
    if w.modifiers:
        out["modifiers"] = _dump_modifiers(w.modifiers)
    return out


def _dump_modifiers(mods: tuple[tuple[str, object], ...]) -> dict[str, object]:
    return {k: (v.value if hasattr(v, "value") else v) for k, v in mods}
