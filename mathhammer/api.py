"""The library API: what ``shoot``, ``fight``, ``compare`` and ``sweep`` call, for notebooks
and scripts too.

    >>> import mathhammer
    >>> result = mathhammer.run("railgun", "knight", trials=100_000, seed=1)
    >>> round(result.damage.mean, 1) > 0
    True

Weapons and targets are what the command line takes: profile names, inline notation, counts
(``"2x heavy rail rifle"``), ``;``-separated model groups and ``+``-attached Leaders. Situations
and modifiers are keyword arguments named like the command-line options (``cover=True``,
``reroll_hits="ones"``, ``hit_mod=1``). Nothing here prints, reads the environment beyond
the profile folders, or leaves global state behind; numba is imported only when a Monte Carlo
run needs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError, MatchupError
from .limits import MAX_ATTACKING_MODELS, check_count, whole
from .model import Allocation, Battle, CommandReroll, Context, FtggWording, Matchup, Method, Unit, WeaponGroup
from .profiles import Layered, Library, unit_key
from .resolve import ResolvedTarget
from .result import DamageResult

if TYPE_CHECKING:
    from .effects import Used
    from .roster.model import Roster

__all__ = ["BATTLE", "SHOOTING_ONLY", "SITUATION", "Attack", "build", "enum_value", "libraries", "library",
           "read_roster", "run", "run_attack", "target", "with_rosters"]

#: Situation flags and modifiers a caller may give (Context fields, ``models`` for
#: ``firing_models``); ``melee`` is chosen by ``build(melee=...)``.
SITUATION: tuple[str, ...] = tuple(f.name for f in fields(Context) if f.name not in ("firing_models", "melee"))
#: The situations that only a ranged attack can be in.
SHOOTING_ONLY: tuple[str, ...] = ("cover", "half_range", "stationary", "not_visible", "overwatch")
#: The battle's circumstances that army rules, detachments and stratagems look at
#: (:class:`~mathhammer.model.Battle`; ``stratagem`` is one name or several).
BATTLE: tuple[str, ...] = ("round", "detachment", "stratagem", "guided", "observer", "spotted", "markerlight",
                           "range", "trap", "ftgg")
_DEFAULTS = Context()


@dataclass(frozen=True, slots=True)
class Attack:
    """A matchup ready to run, with what building it noticed: ``notes`` (warnings about how
    inline text was read), ``explain`` (profile values merged, Leaders attached, army rules
    and stratagems applied) and ``stratagems`` (those used, with their CP)."""

    matchup: Matchup
    notes: tuple[str, ...] = ()
    explain: tuple[str, ...] = ()
    stratagems: tuple[Used, ...] = ()


def library(profiles: Sequence[str | Path] = (), *, use_env: bool = True, rosters: Sequence[str | Path] = (),
            faction: str | None = None) -> Library:
    """The built-in profiles, then ``$MATHHAMMER_PROFILES`` (unless ``use_env`` is false), then
    the folders or files in ``profiles``; with ``rosters``, their units over it (a name finds a
    roster's unit first: :func:`with_rosters`); with ``faction``, only that faction's units.

    Raises:
        ProfileError: a bad profile or roster file, an unknown faction.
    """
    from .profiles import load_library

    _check_bool(use_env, "use_env")
    _check_faction(faction)
    lib = with_rosters(load_library(tuple(Path(p) for p in _paths(profiles, "profiles")), use_env=use_env),
                       _paths(rosters, "rosters", allow=_roster_type(rosters)))
    return lib if faction is None else lib.only(faction)


def libraries(profiles: Sequence[str | Path] = (), *, rosters: Sequence[str | Path] = (),
              target_rosters: Sequence[str | Path] = (), faction: str | None = None,
              use_env: bool = True) -> tuple[Library, Library]:
    """The attacker's library and the target's, as the commands use them: both start from
    :func:`library` of ``profiles``; the attacker's adds ``rosters`` and keeps ``faction``'s
    units only; the target's adds ``target_rosters`` (an enemy's army), never the attacker's
    rosters or faction.

    Raises:
        ProfileError: a bad profile or roster file, an unknown faction.
    """
    _check_faction(faction)
    base = library(profiles, use_env=use_env)
    rosters = _paths(rosters, "rosters", allow=_roster_type(rosters))
    target_rosters = _paths(target_rosters, "target_rosters", allow=_roster_type(target_rosters))
    own = with_rosters(base, rosters)
    return (own if faction is None else own.only(faction)), with_rosters(base, target_rosters)


def read_roster(path: str | Path, *, lib: Library | None = None) -> Roster:
    """A roster file (.ros/.rosz, or the text an army app exports) as understood: its units
    with the loadouts, leaders and points listed (``Roster.units()``), and what could not be
    matched to ``lib`` (default: :func:`library`) and why.

    Raises:
        ProfileError: naming the file (and line): unreadable, corrupt, of an unknown format.
    """
    from .roster import load_roster

    if not isinstance(path, (str, os.PathLike)):
        raise InputError("must be a file's path", where="roster", value=type(path).__name__)
    return load_roster(path, library() if lib is None else checked_library(lib))


def with_rosters(lib: Library, rosters: Sequence[str | Path | Roster]) -> Library:
    """``lib`` with the units of ``rosters`` (files, or rosters read by :func:`read_roster`) over
    it: aliases and whole names are looked up in the rosters first, then in ``lib``, then parts
    of names in the same order (ruling M53). A unit name already taken by an earlier roster gets
    the file's name (``Commander Farsight [list-2.txt]``). Units that a text roster could not
    match are left out (:func:`read_roster` lists them); what a roster unit carries but cannot
    fire is a note that :func:`build` passes on.

    Raises:
        ProfileError: a roster file that cannot be read.
    """
    lib = checked_library(lib)
    rosters = _paths(rosters, "rosters", allow=_roster_type(rosters))
    if not rosters:
        return lib
    from .profiles import Library as Plain

    units: list[Unit] = []
    notes: dict[str, tuple[str, ...]] = {}
    unusable: dict[str, str] = {}  # a unit the roster lists but cannot give: never the library's in its place
    for army in (r if not isinstance(r, (str, Path)) else read_roster(r, lib=lib) for r in rosters):
        taken = {u.name.lower() for u in units}
        rename = {e.unit.name: f"{e.unit.name} [{Path(army.file).name}]" for e in army.entries
                  if e.unit is not None and e.unit.name.lower() in taken}
        lost = army.not_understood()
        missing = (f"{Path(army.file).name} has {len(lost)} {'line' if len(lost) == 1 else 'lines'} not "
                   f"understood (line {lost[0].line}: {lost[0].text.split(': ', 1)[-1]}): a unit there is missing",
                   ) if lost else ()
        for e in army.entries:
            if e.unit is None:
                why = next((n.text for n in e.notes if "cannot be used" in n.text), e.notes[-1].text if e.notes
                           else "not matched to a profile")
                head = f"{e.name}: cannot be used ("
                why = why[len(head):-1] if why.startswith(head) and why.endswith(")") else why
                for name in (e.name, e.matched):
                    if name:
                        unusable.setdefault(unit_key(name), f"{Path(army.file).name} line {e.line}: {why}")
                continue
            unit = replace(e.unit, name=rename.get(e.unit.name, e.unit.name),
                           attached=tuple(rename.get(a, a) for a in e.unit.attached))
            units.append(unit)
            notes[unit.name] = tuple(n.text for n in e.notes) + missing
    return Layered(Plain(units), lib, notes=notes, unusable=unusable)


def target(text: str, *, lib: Library | None = None, target_models: int | None = None,
           wounds_left: int | None = None, allocation: Allocation | str = Allocation.DURABLE) -> ResolvedTarget:
    """A target resolved once, to :func:`build` many attacks against (what ``--target``,
    ``--target-models``, ``--wounds-left`` and ``--allocation`` make of their values).

    Raises:
        ProfileError, InputError, MatchupError: as ``--target`` reports them.
    """
    if not isinstance(text, str):
        raise InputError("must be a unit name or an inline target", where="target", value=type(text).__name__)
    return _resolve(library() if lib is None else checked_library(lib), text, target_models, wounds_left, allocation)


def _resolve(lib: Library, text: str, target_models: int | None, wounds_left: int | None,
             allocation: Allocation | str) -> ResolvedTarget:
    from .resolve import resolve_target_unit

    for name, value in (("--target-models", target_models), ("--wounds-left", wounds_left)):
        if value is not None:
            check_count(value, name=name.lstrip("-").replace("-", " "), lo=None, hi=None, where=name, error=InputError)
    return resolve_target_unit(lib, text, models=None if target_models is None else int(target_models),
                               wounds_left=None if wounds_left is None else int(wounds_left),
                               allocation=enum_value(Allocation, allocation, "allocation"))


def build(weapons: str | Sequence[str], target: str | ResolvedTarget, *, melee: bool = False, models: int = 1,
          target_models: int | None = None, wounds_left: int | None = None,
          allocation: Allocation | str = Allocation.DURABLE, only: Sequence[str] = (), exclude: Sequence[str] = (),
          embarked: Sequence[str] = (), lib: Library | None = None, **situation: Any) -> Attack:
    """Resolve ``weapons`` (one text or several, fired in order) against ``target``.

    Args:
        weapons: profile names, unit names (their loadout fires) or inline profiles, each with
            an optional ``Nx`` count.
        target: a profile name or inline target, ``;`` between model groups, ``+`` to attach
            a Leader; or a target from :func:`target` (then ``target_models``, ``wounds_left``
            and ``allocation`` are its own and must not be given).
        melee: a ``fight`` (melee weapons) rather than a ``shoot``.
        models: firing models (multiplies every weapon's count).
        target_models, wounds_left, allocation: as ``--target-models``, ``--wounds-left``
            and ``--allocation``.
        only, exclude: weapons of a unit's loadout to fire, or to leave out.
        embarked: units (or ``Nx UNIT/WEAPON``) embarked in the attacking TRANSPORT that fire
            through its Firing Deck (``--embarked``).
        lib: the profiles (default: :func:`library`).
        situation: Context fields named like the options (``cover``, ``charged``, ``hit_mod``,
            ``reroll_hits``, ``command_reroll``, ...). ``None`` means "not given": a profile's
            own modifier stands. Enum values may be given as their text (``"ones"``). And the
            battle (:data:`BATTLE`): ``round``, ``detachment``, ``stratagem`` (a name or a list),
            ``guided``, ``observer``, ``spotted``, ``markerlight``, ``range``, ``trap``, ``ftgg``
            (``"index"`` or ``"codex"``: which text of For the Greater Good).

    Raises:
        InputError: an unknown keyword, a value of the wrong kind, a shooting situation for a
            melee attack.
        ProfileError, MatchupError: as the command line reports them.
    """
    from .resolve import resolve_embarked, resolve_weapons

    battle = _battle({k: situation.pop(k) for k in BATTLE if k in situation})
    if not isinstance(melee, bool):
        raise InputError("must be true or false", where="melee", value=melee)
    options = _situation(situation, melee)
    only, exclude = checked_names(only, "--only"), checked_names(exclude, "--except")
    if not isinstance(target, (str, ResolvedTarget)):
        raise InputError("must be a unit name or an inline target, or what mathhammer.target() returns",
                         where="target", value=type(target).__name__,
                         hint="mathhammer.target('T4 SV3+ W2 MODELS10') resolves a target once for many attacks")
    texts = checked_names(weapons, "weapons")
    lib = library() if lib is None else checked_library(lib)
    if not isinstance(target, str) and (target_models is not None or wounds_left is not None
                                        or enum_value(Allocation, allocation, "allocation") is not Allocation.DURABLE):
        raise InputError("a resolved target carries its own models, wounds left and allocation",
                         where="target", value=target.target.name, hint="give them to api.target()")
    if not texts:
        raise InputError("no weapon given", where="weapon", value="")
    found, attacker, weapon_notes = resolve_weapons(lib, texts, melee=melee, only=tuple(only), exclude=tuple(exclude))
    owners = [r.unit for r in found]  # whose weapons they are, for what a rule asks of the attacker
    deck: tuple[str, ...] = ()
    if embarked:
        given = _names(embarked, "--embarked")
        if melee:
            raise InputError("a Firing Deck fires ranged weapons, in the Shooting phase", where="--embarked",
                             value=given[0])
        if models != 1:
            raise InputError("a Firing Deck counts the embarked models themselves; --models cannot multiply them",
                             where="--models", value=models, hint="give the transport's weapons' counts instead")
        more, deck = resolve_embarked(lib, attacker, given)
        found = (*found, *more)
        owners += [r.unit for r in more]  # the transport's: it counts as equipped with them
    if attacker is not None and isinstance(lib, Layered):  # what the roster lists but cannot fire
        weapon_notes = (*weapon_notes, *(f"{attacker.name} (roster): {n}" for n in lib.roster_notes(attacker)))
    resolved = _resolve(lib, target, target_models, wounds_left, allocation) if isinstance(target, str) else target
    matchup, merged = _matchup(found, attacker, resolved, {**options, "firing_models": _count(models), "melee": melee})
    notes, explain = weapon_notes + resolved.notes, resolved.explain + deck + merged
    if not battle.given and matchup.context.command_reroll is CommandReroll.NONE and not matchup.context.overwatch:
        return Attack(matchup, notes, explain)  # no army rule or stratagem to look at
    from .effects import apply

    applied = apply(matchup, battle, target_unit=resolved.unit, owners=owners)
    return Attack(applied.matchup, notes + applied.notes, explain + applied.explain, applied.stratagems)


def run_attack(attack: Attack, *, method: Method | str = Method.MONTE_CARLO, trials: int = 1_000_000,
               seed: int | None = None, threads: int | None = None, stages: bool = True) -> DamageResult:
    """Run a built attack: Monte Carlo (``trials``, ``seed``; results do not depend on
    ``threads``), exact, or both. ``stages=False`` skips Monte Carlo's stage histograms
    (hits, wounds, ...): quicker, and the damage and models destroyed are the same. ``trials``,
    ``seed`` and ``threads`` are checked whatever the method; exact does not use them."""
    from .engine import analyse
    from .engine.montecarlo import check_seed, check_threads, check_trials

    if not isinstance(attack, Attack):
        raise InputError("must be what mathhammer.build() returns", where="attack", value=type(attack).__name__)
    if not isinstance(stages, bool):
        raise InputError("must be true or false", where="stages", value=stages)
    chosen: Method = enum_value(Method, method, "method")
    check_trials(trials)
    check_seed(seed)  # whatever the method: a bad value is an error even where it would change nothing
    check_threads(threads)
    return analyse(attack.matchup, method=chosen, trials=trials, seed=seed, threads=threads, notes=attack.notes,
                   merged=attack.explain, stages=stages, stratagems=tuple(u.to_dict() for u in attack.stratagems))


def run(weapons: str | Sequence[str], target: str, *, method: Method | str = Method.MONTE_CARLO,
        trials: int = 1_000_000, seed: int | None = None, threads: int | None = None, stages: bool = True,
        **build_options: Any) -> DamageResult:
    """:func:`build` then :func:`run_attack`: what ``mathhammer shoot`` (``fight`` with
    ``melee=True``) computes, as a :class:`~mathhammer.result.DamageResult` (``to_dict()`` gives
    the JSON document's content). The same seed gives the command line's numbers."""
    return run_attack(build(weapons, target, **build_options), method=method, trials=trials, seed=seed,
                      threads=threads, stages=stages)


def _count(models: int) -> int:
    """A whole number (the range is the model's to check: Matchup says why 0 cannot fire)."""
    return _whole(models, "--models")


def _whole(value: Any, where: str) -> int:
    """``value`` as a Python int: a whole number, numpy's integers too (not a bool)."""
    number = whole(value)
    if number is None:
        raise InputError("must be a whole number", where=where, value=value)
    return number


def _battle(given: Mapping[str, Any]) -> Battle:
    """The battle from keyword arguments (:data:`BATTLE`), each value checked."""
    values: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        if name == "stratagem":
            values["stratagems"] = _names(value, "--stratagem")
        elif name == "detachment":
            if not isinstance(value, str) or not value.strip():
                raise InputError("a detachment is a name", where="detachment", value=value)
            values[name] = value
        elif name == "ftgg":
            values[name] = enum_value(FtggWording, value, "--ftgg")
        elif name in ("round", "range"):
            values[name] = _whole(value, name)
        else:
            if not isinstance(value, bool):
                raise InputError("must be true or false", where=name, value=value)
            values[name] = value
    return Battle(**values)


def checked_library(lib: Any, where: str = "lib") -> Library:
    """``lib``, checked to be a library (of :func:`library`); ``where`` names the argument."""
    if not isinstance(lib, Library):
        raise InputError("must be what mathhammer.library() returns", where=where, value=type(lib).__name__)
    return lib


def _roster_type(rosters: Any) -> type | None:
    """:class:`Roster` when ``rosters`` names any (imported only then: a run without rosters
    does without the module)."""
    if not rosters:
        return None
    from .roster.model import Roster

    return Roster


def _many(value: Any) -> bool:
    """A list, tuple, set, generator, array...: anything iterable but a text, bytes or a mapping."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _paths(value: Any, where: str, allow: type | None = None) -> tuple[Any, ...]:
    """Files or folders: one path (a text or a path object: not iterated letter by letter) or
    several (a list, a generator...); ``allow``: another type an item may be. An empty text is
    refused, as the command line refuses it (``Path('')`` would silently be the current folder)."""
    def one(item: Any) -> bool:
        return isinstance(item, (str, os.PathLike)) or (allow is not None and isinstance(item, allow))

    if one(value):
        items: tuple[Any, ...] = (value,)
    elif _many(value):
        items = tuple(value)
    else:
        items = (value,)  # (refused below, named by its type)
    for item in items:
        if not one(item):  # named by its type: None would show nothing
            raise InputError("must be a path or a list of paths", where=where, value=type(item).__name__)
        if isinstance(item, str) and not item.strip():
            raise InputError("empty path", where=where, value=item,
                             hint="give a file or folder, or . for the current one")
    return items


def _check_bool(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise InputError("must be true or false", where=where, value=value)


def _check_faction(faction: Any) -> None:
    if faction is not None and not isinstance(faction, str):
        raise InputError("a faction is a name", where="--faction", value=type(faction).__name__,
                         hint="one faction, e.g. \"t'au empire\"")


def checked_names(value: Any, where: str) -> tuple[str, ...]:
    """Names: one text (not iterated letter by letter) or several (a list, a set, a generator...)."""
    items = (value,) if isinstance(value, str) else tuple(value) if _many(value) else None
    bad = value if items is None else next((v for v in items if not isinstance(v, str)), "")
    if not isinstance(bad, str):  # named by its type: None would show nothing, an object its repr
        raise InputError("must be a name or a list of names", where=where, value=type(bad).__name__)
    assert items is not None
    return items


def _names(value: Any, where: str) -> tuple[str, ...]:
    """A name or a list of names (:func:`checked_names`), at least one, none of them empty."""
    names = checked_names(value, where)
    if not names:
        raise InputError("must be a name or a list of names", where=where, value=value)
    for n in names:
        if not n.strip():
            raise InputError("must be a name, not empty", where=where, value=n)
    return names


#: Keyword arguments spelled as the options' other names (``fight --ws-improve``), and the field
#: each sets.
_ALIASES = {"ws_improve": "bs_improve"}


def _situation(given: Mapping[str, Any], melee: bool) -> dict[str, Any]:
    """Context fields from keyword arguments: names checked, enum texts converted."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}  # a field given by another name: errors name it as given
    for alias, name in _ALIASES.items():
        if alias in given:
            if name in given:
                raise InputError(f"given twice: as {alias} and as {name}", where=alias, value=given[alias],
                                 hint="give one of them")
            given = {(name if k == alias else k): v for k, v in given.items()}
            spelled[name] = alias
    for name, value in given.items():
        where = spelled.get(name, name)
        if name not in SITUATION:
            from difflib import get_close_matches

            close = get_close_matches(name, (*SITUATION, *BATTLE, "embarked"), n=1)
            raise InputError("unknown situation or modifier", where="keyword", value=name,
                             hint=f"did you mean {close[0]!r}?" if close else f"one of: {', '.join(SITUATION)}")
        if melee and name in SHOOTING_ONLY and value:
            raise InputError("a shooting situation; a melee attack cannot be in it",
                             where=f"--{where.replace('_', '-')}", value=value)
        if value is None:
            out[name] = None
            continue
        default = getattr(_DEFAULTS, name)
        if isinstance(default, Enum):
            out[name] = enum_value(type(default), value, where)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise InputError("must be true or false", where=where, value=value)
            out[name] = value
        else:
            out[name] = _whole(value, where)
    return out


def enum_value(kind: type[Enum], value: Any, where: str) -> Any:
    """``value`` as a member of ``kind``: a member, or its text in any case.

    Raises:
        InputError: not one of the members (they are listed), naming ``where``.
    """
    if isinstance(value, kind):
        return value
    try:
        return kind(str(value).strip().lower())
    except ValueError:
        raise InputError("not one of: " + ", ".join(str(m.value) for m in kind), where=where, value=value) from None


def _matchup(found: Sequence[Any], attacker: Unit | None, target: Any,
             options: dict[str, Any]) -> tuple[Matchup, tuple[str, ...]]:
    """The weapon groups with their situations: profile modifiers merged per weapon; a group
    whose situation differs from the shared one keeps its own. One weapon: its count is folded
    into the firing models (so ``2x railgun`` and ``railgun -n 2`` are one and the same)."""
    from .resolve import build_context

    models = options["firing_models"]
    for r in found:  # a count of one leaves --models alone at fault: the context says so, naming it
        if r.count > 1 and r.count * models > MAX_ATTACKING_MODELS:
            raise MatchupError(f"{r.count} x --models {models} = {r.count * models:,} models would fire "
                               f"{r.weapon.name!r}; at most {MAX_ATTACKING_MODELS:,}", where="weapon", value=r.text)
    per = [build_context(options, weapon=r.weapon, attacker=r.unit, target_unit=target.unit) for r in found]
    lines = tuple(dict.fromkeys(line for _, merged in per for line in merged))
    if len(found) == 1:
        ctx = replace(per[0][0], firing_models=found[0].count * models)
        return Matchup(weapons=(WeaponGroup(weapon=found[0].weapon),), target=target.target, context=ctx,
                       attacker=attacker), lines
    if all(c == per[0][0] for c, _ in per):
        shared = per[0][0]
    else:
        shared, _ = build_context(options, weapon=None, attacker=attacker, target_unit=target.unit)
    groups = tuple(WeaponGroup(weapon=r.weapon, count=r.count, attacker=None if c == shared else c.attacker_side)
                   for r, (c, _) in zip(found, per, strict=True))
    return Matchup(weapons=groups, target=target.target, context=shared, attacker=attacker), lines
