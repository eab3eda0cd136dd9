"""Words from the command line -> model objects: inline notation, or names in the library."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .errors import InputError, MatchupError, ProfileError
from .limits import MAX_ATTACKING_MODELS, MAX_TARGET_MODELS
from .model import Ability, Allocation, Context, TargetUnit, Unit, Weapon, attach, unit_target
from .notation import looks_inline, parse_target_unit, parse_weapon_noted, spelled_models, split_count
from .profiles import Library

__all__ = ["ResolvedTarget", "ResolvedWeapon", "build_context", "resolve_embarked", "resolve_target",
           "resolve_target_unit", "resolve_weapon", "resolve_weapons"]


def resolve_weapon(lib: Library, text: str, *, melee: bool = False
                   ) -> tuple[Weapon, Unit | None, tuple[str, ...]]:
    """A weapon, the unit that carries it (``None`` for an inline profile) and warnings about
    how an inline profile was read (``D6`` is Damage 6, ruling M6).

    Order: inline notation; a weapon's alias or name; a unit's alias or name (its only ranged
    weapon, or its only melee weapon when ``melee``); a unique substring of a weapon name,
    then of a unit name.

    Raises:
        ProfileError: empty, unknown, ambiguous, or a unit with several ranged weapons (listed).
        MatchupError: an inline melee weapon given to ``shoot`` (or a ranged one to ``fight``).
    """
    _not_empty(text, "weapon", "weapon")
    if looks_inline(text):
        weapon, notes = parse_weapon_noted(text)
        _inline_kind(weapon, text, melee)
        return weapon, None, notes
    found = _lookup(lib, text)
    if isinstance(found, Weapon):
        return found, lib.owner(found), ()
    return _only_weapon(found, text, melee, ()), found, ()


@dataclass(frozen=True, slots=True)
class ResolvedWeapon:
    """One weapon group as the command line gave it: ``count`` models fire ``weapon``;
    ``unit`` carries it (its profile modifiers apply; None for an inline profile); ``text`` is
    the argument it came from."""

    weapon: Weapon
    count: int
    unit: Unit | None
    text: str


def resolve_weapons(lib: Library, texts: Sequence[str], *, melee: bool = False, only: Sequence[str] = (),
                    exclude: Sequence[str] = ()) -> tuple[tuple[ResolvedWeapon, ...], Unit | None, tuple[str, ...]]:
    """The weapon groups of one attack, in the order given, the attacking unit (the one unit
    every named weapon belongs to, else None) and warnings about inline profiles.

    Each text is a weapon (:func:`resolve_weapon`'s lookup) or a unit, with an optional count
    (``2x heavy rail rifle``, see :func:`mathhammer.notation.split_count`). A unit fires every
    weapon of the kind (ranged, or melee when ``melee``) of its default loadout
    (:meth:`Unit.loadout`), times its count; a unit without a loadout fires its only weapon of
    the kind. ``only`` / ``exclude`` select weapons of the units' loadouts by name.

    Raises:
        ProfileError: a name unknown or ambiguous, a unit whose weapon cannot be chosen, an
            ``only``/``exclude`` name that no unit given has (its weapons listed).
        MatchupError: a count below 1, a melee weapon for ``shoot`` (ranged for ``fight``).
        InputError: ``only``/``exclude`` without a unit, or one name in both.
    """
    both = {_key(n) for n in only} & {_key(n) for n in exclude}
    if both:
        raise InputError("a weapon cannot be both selected and left out", where="--only/--except",
                         value=sorted(both)[0])
    found: list[tuple[str, int, Weapon | Unit, tuple[str, ...]]] = []  # (text, count, what, inline notes)
    for text in texts:
        _not_empty(text, "weapon", "weapon")
        count, body = split_count(text, what="weapon count", hi=MAX_ATTACKING_MODELS, where="weapon",
                                  error=MatchupError)
        n = 1 if count is None else count
        if looks_inline(body):
            weapon, read = parse_weapon_noted(body)
            _inline_kind(weapon, text, melee)
            found.append((text, n, weapon, read))
        else:
            named = _lookup(lib, body)
            if isinstance(named, Weapon):
                _named_kind(named, text, melee, "weapon")
            found.append((text, n, named, ()))
    given = [what for _, _, what, _ in found if isinstance(what, Unit)]
    _check_selection(only, exclude, given)
    out: list[ResolvedWeapon] = []
    units: list[Unit] = []  # every unit a weapon comes from
    for text, n, what, _ in found:
        if isinstance(what, Unit):
            units.append(what)
            out += [ResolvedWeapon(w, k * n, what, text) for w, k in _unit_weapons(what, text, melee, only, exclude)]
            continue
        owner = lib.owner(what) if what.unit else None
        if owner is not None:
            units.append(owner)
        out.append(ResolvedWeapon(what, n, owner, text))
    distinct = {id(u): u for u in units}
    attacker = next(iter(distinct.values())) if len(distinct) == 1 else None
    return tuple(out), attacker, tuple(note for *_, read in found for note in read)


def resolve_embarked(lib: Library, transport: Unit | None, texts: Sequence[str]
                     ) -> tuple[tuple[ResolvedWeapon, ...], tuple[str, ...]]:
    """The weapons embarked models fire through ``transport``'s Firing Deck, and explain lines.

    Each text is a unit embarked in it (each of its models, or the first N of ``Nx UNIT`` in
    statline order, lends the first ranged weapon of its loadout that is not ONE SHOT) or a
    weapon of such a unit with the number of models firing it (``4x strike team/pulse rifle``).
    At most the Firing Deck's number of models in all. The weapons are the transport's (it
    "counts as being equipped with" them): its profile modifiers apply, not their unit's.

    Raises:
        InputError: no TRANSPORT attacker.
        MatchupError: a transport without Firing Deck, too many models, a ONE SHOT or melee
            weapon, a unit with no ranged weapon that may fire.
        ProfileError: a name unknown or ambiguous.
    """
    if transport is None:
        raise InputError("fires through the Firing Deck of the attacking TRANSPORT, and no one unit is attacking",
                         where="--embarked", value=texts[0], hint="name the transport as WEAPON, e.g. gunrig")
    if transport.firing_deck is None:
        raise MatchupError(f"{transport.name} has no Firing Deck, so embarked models cannot shoot from it",
                           where="--embarked", value=texts[0])
    out: list[ResolvedWeapon] = []
    lines: list[str] = []
    total = 0
    for text in texts:
        _not_empty(text, "--embarked", "embarked unit")
        count, body = split_count(text, what="count of models", hi=MAX_ATTACKING_MODELS, where="--embarked",
                                  error=MatchupError)
        found = _lookup(lib, body, where="--embarked")
        carrier = lib.owner(found) if isinstance(found, Weapon) else found
        if carrier is transport:
            raise MatchupError(f"{transport.name} is the transport; it cannot be embarked in itself",
                               where="--embarked", value=text.strip(), hint="name a unit embarked in it")
        if carrier is not None and "TITANIC" in carrier.keywords:
            raise MatchupError(f"{carrier.name} is TITANIC: no transport carries it", where="--embarked",
                               value=text.strip(), hint="name a unit the transport can carry, e.g. 'strike team'")
        if isinstance(found, Weapon):
            _named_kind(found, text, False, "--embarked")
            if found.has(Ability.ONE_SHOT):
                raise MatchupError("a ONE SHOT weapon cannot be fired through a Firing Deck", where="--embarked",
                                   value=text.strip())
            n = 1 if count is None else count
            if carrier is not None and n > carrier.model_count:
                raise MatchupError(f"{carrier.name} has {carrier.model_count} model"
                                   f"{'s' if carrier.model_count > 1 else ''}", where="--embarked", value=text.strip())
            out.append(ResolvedWeapon(found, n, transport, text))
            total += n
            lines.append(f"Firing Deck: {n} embarked model{'s' if n > 1 else ''} fire{'s' if n == 1 else ''} "
                         f"{found.name}")
            continue
        unit = found
        wanted = unit.model_count if count is None else count
        if wanted > unit.model_count:
            raise MatchupError(f"{unit.name} has {unit.model_count} models", where="--embarked", value=text.strip())
        by_name = {w.name: w for w in unit.weapons}
        left = wanted
        for m in unit.models:
            take = min(m.count, left)
            if take == 0:
                break
            names = [name for name, _ in m.loadout] or [w.name for w in unit.weapons]
            usable = [by_name[n] for n in names if n in by_name and not by_name[n].melee
                      and not by_name[n].has(Ability.ONE_SHOT)]
            if not usable:
                raise MatchupError(f"{m.name} ({unit.name}) has no ranged weapon that may fire through a Firing Deck "
                                   "(ONE SHOT weapons may not)", where="--embarked", value=text.strip())
            out.append(ResolvedWeapon(usable[0], take, transport, text))
            lines.append(f"Firing Deck: {take} {m.name} ({unit.name}) fire{'s' if take == 1 else ''} "
                         f"{usable[0].name}")
            left -= take
            total += take
    if total > transport.firing_deck:
        raise MatchupError(f"{total} embarked models would fire; {transport.name}'s Firing Deck "
                           f"{transport.firing_deck} allows at most {transport.firing_deck}", where="--embarked",
                           value=", ".join(texts), hint="give a count of models, e.g. '5x strike team'")
    lines.append(f"Firing Deck {transport.firing_deck}: {transport.name} fires its own weapons and {total} "
                 "embarked model" + ("s'" if total != 1 else "'s") + " weapons; their units may not shoot this phase")
    return tuple(out), tuple(lines)


def _check_selection(only: Sequence[str], exclude: Sequence[str], given: list[Unit]) -> None:
    """Every ``--only`` / ``--except`` name is a weapon of some unit given as WEAPON."""
    named_units = list({id(u): u for u in given}.values())
    for option, names in (("--only", only), ("--except", exclude)):
        for name in names:
            if not named_units:
                raise InputError("selects weapons of a unit's loadout, and no unit was given as WEAPON",
                                 where=option, value=name, hint="give a unit name, e.g. 'crisis sunforge'")
            if not any(_match(u, name, option) is not None for u in named_units):
                raise _lacks(named_units, name, option)


def _lacks(units: list[Unit], name: str, option: str) -> ProfileError:
    def names(u: Unit) -> str:
        return ", ".join(w.name for w in u.weapons) or "no weapons"

    if len(units) == 1:
        return ProfileError(f"unit {units[0].name!r} has no weapon of that name", where=option, value=name,
                            hint=f"it has: {names(units[0])}")
    return ProfileError("no unit given has a weapon of that name", where=option, value=name,
                        hint="they have: " + "; ".join(f"{u.name}: {names(u)}" for u in units))


def _key(name: str) -> str:
    return " ".join(name.lower().split())


def _match(unit: Unit, name: str, option: str) -> Weapon | None:
    """The weapon of ``unit`` that ``name`` means: its name or alias, else a unique part of one."""
    q = _key(name)
    for w in unit.weapons:
        if q == _key(w.name) or q in (_key(a) for a in w.aliases):
            return w
    parts = {w.name: w for w in unit.weapons if q in _key(w.name) or any(q in _key(a) for a in w.aliases)}
    if len(parts) > 1:
        raise ProfileError(f"ambiguous in unit {unit.name!r}, matches {len(parts)}: {', '.join(parts)}", where=option,
                           value=name, hint="type more of the name")
    return next(iter(parts.values()), None)


def _unit_weapons(unit: Unit, text: str, melee: bool, only: Sequence[str],
                  exclude: Sequence[str]) -> list[tuple[Weapon, int]]:
    """What ``unit`` fires: its loadout's weapons of the kind (or its only one), as selected."""
    by_name = {w.name: w for w in unit.weapons}
    loadout = []
    for name, n in unit.loadout():
        if name not in by_name:
            raise ProfileError(f"the loadout of unit {unit.name!r} names a weapon it does not have", where="weapon",
                               value=name)
        loadout.append((by_name[name], n))
    kind = [(w, n) for w, n in loadout if w.melee == melee]
    picked = [w for w in (_match(unit, name, "--only") for name in only) if w is not None]
    dropped = [w for w in (_match(unit, name, "--except") for name in exclude) if w is not None]
    if loadout:
        for w in dropped:
            if all(w is not v for v, _ in kind):
                raise ProfileError(f"is not among the {'melee' if melee else 'ranged'} weapons unit {unit.name!r} "
                                   f"{'fights' if melee else 'fires'} by default, so there is nothing to leave out",
                                   where="--except", value=w.name, hint=f"it {'fights' if melee else 'fires'}: "
                                   + ", ".join(f"{n}x {v.name}" for v, n in kind))
    for w in picked:
        _named_kind(w, w.name, melee, "--only")
        if loadout and all(w is not v for v, _ in loadout):
            raise ProfileError(f"is not in the default loadout of unit {unit.name!r} "
                               f"({', '.join(f'{n}x {v.name}' for v, n in loadout)})", where="--only", value=w.name,
                               hint=f"give it as a weapon with a count, e.g. '1x {_unit_ref(unit)}/{w.name}'")
    if only or exclude:
        if not picked and only:
            chosen: list[tuple[Weapon, int]] = []
        elif loadout:
            chosen = [(w, n) for w, n in kind if (not only or any(w is p for p in picked))
                      and all(w is not d for d in dropped)]
        elif only:
            chosen = [(w, 1) for w in unit.weapons if any(w is p for p in picked)]
        else:
            chosen = [(_only_weapon(unit, text, melee, dropped), 1)]
        if not chosen:
            option = "--only" if only else "--except"
            raise ProfileError(f"leaves no {'melee' if melee else 'ranged'} weapon of unit {unit.name!r} to "
                               f"{'fight' if melee else 'fire'}", where=option,
                               value=", ".join(only if only else exclude), hint=f"it has: {_listing(unit, melee)}")
        return chosen
    if loadout:
        if not kind:
            raise ProfileError(f"the default loadout of unit {unit.name!r} has no {'melee' if melee else 'ranged'} "
                               "weapon", where="weapon", value=text,
                               hint=f"it has: {_listing(unit, melee)}; use `mathhammer "
                                    f"{'shoot' if melee else 'fight'}`")
        return kind
    return [(_only_weapon(unit, text, melee, ()), 1)]


def _unit_ref(unit: Unit) -> str:
    return unit.aliases[0] if unit.aliases else unit.name


def _listing(unit: Unit, melee: bool) -> str:
    loadout = unit.loadout()
    if loadout:
        return ", ".join(f"{n}x {name}" for name, n in loadout)
    return ", ".join(w.name for w in unit.weapons if w.melee == melee) or "no such weapon"


def _not_empty(text: str, where: str, noun: str) -> None:
    if not text.strip():
        raise ProfileError(f"no {noun} given", where=where, value=text,
                           hint="give a profile name or an inline profile")


def _inline_kind(weapon: Weapon, text: str, melee: bool) -> None:
    """An inline weapon of the wrong kind, named by what the user typed."""
    if weapon.melee == melee:
        return
    command, other = ("fight", "shoot") if melee else ("shoot", "fight")
    kind, needed = ("ranged", "melee") if melee else ("melee", "ranged")
    raise MatchupError(f"is a {kind} weapon; {command} resolves {needed} attacks", where="weapon",
                       value=text.strip(), hint=f"use `mathhammer {other}` for {kind} weapons")


def _named_kind(weapon: Weapon, text: str, melee: bool, where: str) -> None:
    """A named weapon of the wrong kind: the error names the weapon."""
    if weapon.melee == melee:
        return
    command, other = ("fight", "shoot") if melee else ("shoot", "fight")
    kind, needed = ("ranged", "melee") if melee else ("melee", "ranged")
    owner = f" of {weapon.unit}" if weapon.unit else ""
    raise MatchupError(f"{weapon.name!r}{owner} is a {kind} weapon; {command} resolves {needed} attacks", where=where,
                       value=text.strip(), hint=f"use `mathhammer {other}` for {kind} weapons")


def _lookup(lib: Library, text: str, *, where: str | None = None) -> Weapon | Unit:
    """A weapon or a unit: whole names and aliases (weapons first), then a unique part of a
    weapon's name, then of a unit's. ``where``: the option an error names (default: the
    library's own)."""
    if where is not None:
        try:
            return _lookup(lib, text)
        except ProfileError as e:
            raise ProfileError(e.what, where=where, value=e.value, hint=e.hint) from None
    weapon = lib.find(text, "weapon", substring=False)
    if weapon is not None:
        return weapon  # type: ignore[no-any-return]
    unit = lib.find(text, "unit", substring=False)
    if unit is not None:
        return unit  # type: ignore[no-any-return]
    try:
        return lib.find(text, "weapon")  # type: ignore[no-any-return]
    except ProfileError as e:
        if not e.what.startswith("unknown"):
            raise
    try:
        return lib.find(text, "unit")  # type: ignore[no-any-return]
    except ProfileError as e:
        if not e.what.startswith("unknown"):
            raise
    raise lib.unknown(text, ("weapon", "unit"))


def _only_weapon(unit: Unit, text: str, melee: bool, dropped: Sequence[Weapon]) -> Weapon:
    kind = "melee" if melee else "ranged"
    found = [w for w in unit.weapons if w.melee == melee and all(w is not d for d in dropped)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ProfileError(f"unit {unit.name!r} has no {kind} weapon", where="weapon", value=text)
    names = ", ".join(w.name for w in found)
    raise ProfileError(f"unit {unit.name!r} has {len(found)} {kind} weapons: {names}", where="weapon", value=text,
                       hint=f"name one, e.g. '{_unit_ref(unit)}/{found[0].name}', or select with --only NAME")


@dataclass(frozen=True, slots=True)
class ResolvedTarget:
    """The target, the profile of its Bodyguard (or only) unit (None when inline; its
    modifiers apply), warnings, and explain lines (Leaders attached)."""

    target: TargetUnit
    unit: Unit | None
    notes: tuple[str, ...] = ()
    explain: tuple[str, ...] = ()


def resolve_target(lib: Library, text: str, *, models: int | None = None
                   ) -> tuple[TargetUnit, Unit | None, tuple[str, ...]]:
    """:func:`resolve_target_unit` as (target, unit, warnings)."""
    found = resolve_target_unit(lib, text, models=models)
    return found.target, found.unit, found.notes


#: ``+`` between two parts of a target (``intercessors + captain``); a ``+`` after a digit or
#: another ``+`` belongs to a value (``SV3+``, ``5++``).
_ATTACH = re.compile(r"(?<![0-9+])\+")


def resolve_target_unit(lib: Library, text: str, *, models: int | None = None, wounds_left: int | None = None,
                        allocation: Allocation = Allocation.DURABLE) -> ResolvedTarget:
    """A target: an inline profile (model groups separated by ``;``) or a unit name, then any
    Leaders attached with ``+`` (``intercessors + captain``); a unit profile's own ``attached``
    Leaders when none are given. ``models`` overrides the size of the Bodyguard (or only)
    unit, ``wounds_left`` what its first model has left, ``allocation`` the defender's order.

    Raises:
        ProfileError: empty, unknown or ambiguous, a malformed inline profile, a Leader that is
            not a CHARACTER, a wounded Leader.
        InputError: ``models`` outside 1 to MAX_TARGET_MODELS or for several inline groups;
            ``wounds_left`` given twice.
        MatchupError: ``wounds_left`` outside 1 to the first model's W.
    """
    _not_empty(text, "--target", "target")
    if models is not None and not 1 <= models <= MAX_TARGET_MODELS:
        raise InputError(f"the target unit must have 1 to {MAX_TARGET_MODELS} models", where="--target-models",
                         value=models)
    parts = _ATTACH.split(text)
    for part in parts:
        if not part.strip():
            raise ProfileError("nothing on one side of '+'", where="--target", value=text.strip(),
                               hint="attach a Leader as 'intercessors + captain'")
    head, unit = _target_part(lib, parts[0], models, allocation)
    explain: list[str] = []
    leaders = [_leader_part(lib, part, allocation) for part in parts[1:]]
    if unit is not None and unit.attached and not leaders:
        leaders = [unit_target(lib.find(name, "unit"))[0] for name in unit.attached]
        explain.append(f"{unit.name}: Leader{'s' if len(leaders) > 1 else ''} attached by its profile: "
                       f"{', '.join(t.name for t in leaders)}")
    elif unit is not None and unit.attached:
        explain.append(f"{unit.name}: Leaders as given ({', '.join(t.name for t in leaders)}), not its profile's "
                       f"({', '.join(unit.attached)})")
    if len(leaders) > 1:
        explain.append(f"{len(leaders)} Leaders attached to {head.name} (most datasheets allow one; some allow two)")
    for leader in leaders:
        if leader.wounds_left is not None:
            raise ProfileError("a wounded Leader takes no attacks while a Bodyguard model lives, so only a Bodyguard "
                               "model can start wounded", where="--target", value=leader.name)
    target = attach(head, *(replace(t, allocation=allocation) for t in leaders)) if leaders else head
    if wounds_left is not None:
        if target.wounds_left is not None:
            raise InputError("given twice: as an option and as WOUNDS-LEFT in the target", where="--wounds-left",
                             value=wounds_left, hint="give one of them")
        target = replace(target, wounds_left=wounds_left)
    return ResolvedTarget(target, unit, (), tuple(explain))


def _target_part(lib: Library, text: str, models: int | None, allocation: Allocation) -> tuple[TargetUnit, Unit | None]:
    """The Bodyguard (or only) part of a target."""
    if looks_inline(text):
        target = parse_target_unit(text.strip(), allocation=allocation)
        if models is not None:
            if len(target.groups) > 1:
                raise InputError("applies to a target of one model group", where="--target-models", value=models,
                                 hint="give each group its count: '9x T5 SV5+ W1; 1x T5 SV5+ W2'")
            spelled = spelled_models(text)
            if spelled is not None:  # as for a count before a unit's name: never silently one of them
                raise InputError("the number of models is given twice", where="--target-models",
                                 value=f"{models} and {spelled}", hint="give one of them")
            target = replace(target, groups=(replace(target.groups[0], models=models),))
        return target, None
    count, body = split_count(text, what="count of models", hi=MAX_TARGET_MODELS, where="--target")
    if count is not None and models is not None:
        raise InputError("the number of models is given twice", where="--target-models",
                         value=f"{models} and {count}x", hint="give one of them")
    unit = _target_unit(lib, body)
    target, _ = unit_target(unit, models=count if models is None else models)
    return replace(target, allocation=allocation), unit


def _target_unit(lib: Library, text: str, *, leader: bool = False) -> Unit:
    """The unit a part of ``--target`` names; an unknown or ambiguous name is an error of
    ``--target`` (saying when it is a Leader after '+')."""
    try:
        unit: Unit = lib.find(text.strip(), "unit")
    except ProfileError as e:
        what = f"{e.what} (a Leader after '+')" if leader else e.what
        raise ProfileError(what, where="--target", value=text.strip(), hint=e.hint) from None
    return unit


def _leader_part(lib: Library, text: str, allocation: Allocation) -> TargetUnit:
    """A Leader attached with ``+``: a CHARACTER unit, or an inline profile of CHARACTER groups."""
    if looks_inline(text):
        target = parse_target_unit(text.strip(), allocation=allocation)
    else:
        count, body = split_count(text, what="count of models", hi=MAX_TARGET_MODELS, where="--target")
        unit = _target_unit(lib, body, leader=True)
        target, _ = unit_target(unit, models=count)
    plain = [g.name for g in target.groups if "CHARACTER" not in g.keywords]
    if plain:
        raise ProfileError("only a CHARACTER leads a unit: the part after '+' must be one", where="--target",
                           value=text.strip(), hint="inline, add [CHARACTER] to its keywords")
    return target


#: Context fields a profile may set for its unit as the attacker, and as the target.
_ATTACKER_KEYS = ("hit_mod", "wound_mod", "damage_mod", "bs_improve", "ap_improve", "crit_hit", "crit_wound",
                  "reroll_hits", "reroll_wounds", "reroll_damage")
_TARGET_KEYS = ("save_mod", "reroll_saves")


def build_context(options: dict[str, Any], *, weapon: Weapon | None, attacker: Unit | None,
                  target_unit: Unit | None) -> tuple[Context, tuple[str, ...]]:
    """Merge the command line with the modifiers carried by the profiles.

    ``options`` holds Context fields; a value of ``None`` means "not given on the command
    line". Profile values come from the attacking unit, then its weapon (the more specific
    wins; no weapon: the unit's alone), and for save_mod / reroll_saves from the target unit;
    the command line wins over both. Returns the context and one explain line per merged value.
    """
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    layers: list[tuple[str, dict[str, object], tuple[str, ...]]] = []
    if attacker is not None:
        layers.append((f"unit {attacker.name}", dict(attacker.modifiers), _ATTACKER_KEYS))
    if weapon is not None:
        layers.append((f"weapon {weapon.name}", dict(weapon.modifiers), _ATTACKER_KEYS))
    if target_unit is not None:
        layers.append((f"target {target_unit.name}", dict(target_unit.modifiers), _TARGET_KEYS))
    for source, mods, keys in layers:
        for key in keys:
            if key in mods:
                merged[key] = mods[key]
                origin[key] = source
    lines = []
    for key, value in options.items():
        if value is None:
            continue
        if key in merged and merged[key] != value:
            lines.append(f"--{key.replace('_', '-')} {_show(value)} overrides {_show(merged[key])} from {origin[key]}")
            origin.pop(key)
        merged[key] = value
    for key, source in origin.items():
        lines.append(f"{key.replace('_', '-')} {_show(merged[key])} from {source}")
    return Context(**merged), tuple(lines)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:+d}" if value else "0"
    return str(getattr(value, "value", value))

