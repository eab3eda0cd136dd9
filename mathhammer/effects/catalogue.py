"""The army rules, detachments and stratagems the effects layer knows, read from data files.

Each file (``tau.yaml`` beside this module) lists ``army_rules``, ``detachments`` and
``stratagems``. An effect is a condition (``when``) and a change (``give``); a stratagem adds
its CP cost, the phases and battle rounds it may be used in, its side (the attacker's or the
defender's) and what it ``requires`` to have any effect, each with the reason it is refused.
Every key and value is checked when the file is read, and an error names the file and the path.
Adding a detachment is a data entry (and its tests), not code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..errors import ProfileError

__all__ = ["CONDITIONS", "CHANGES", "Catalogue", "Detachment", "Effect", "Requirement", "Rule", "Stratagem",
           "catalogue", "name_key"]

#: Conditions an effect may name, and the type of their value.
CONDITIONS: dict[str, type] = {"rounds": list, "shooting": bool, "guided": bool, "observer": bool,
                               "at_spotted": bool, "markerlight": bool, "trap": bool, "within": int}
#: Changes an effect may make, and the type of their value.
CHANGES: dict[str, type] = {"abilities": list, "bs_improve": int, "ap_improve": int, "hit_mod": int, "wound_mod": int,
                            "reroll_hits": str, "command_reroll": str, "overwatch": bool, "damage_reduction": int}
PHASES = ("shooting", "overwatch", "fight")


def name_key(text: str) -> str:
    """A name as lookups compare it: any case, dashes, apostrophes and spacing ignored
    ("Point-blank Ambush", "point blank ambush" and "POINT_BLANK-AMBUSH" are one)."""
    return " ".join(re.sub(r"[-_'\u2019]", " ", text.lower()).split())


@dataclass(frozen=True, slots=True)
class Effect:
    """One change and the conditions under which it applies; ``says`` is its explain line."""

    when: tuple[tuple[str, Any], ...]
    give: tuple[tuple[str, Any], ...]
    says: str
    rule: str


@dataclass(frozen=True, slots=True)
class Requirement:
    """A condition a stratagem needs to have any effect, and why it is refused without it."""

    when: tuple[tuple[str, Any], ...]
    why: str


@dataclass(frozen=True, slots=True)
class Rule:
    """An army rule (For the Greater Good): its effects, for units with the rule."""

    id: str
    name: str
    faction: str
    effects: tuple[Effect, ...]


@dataclass(frozen=True, slots=True)
class Detachment:
    """A detachment: its faction and its rule's effects."""

    id: str
    name: str
    faction: str
    rule_name: str
    aliases: tuple[str, ...]
    effects: tuple[Effect, ...]


@dataclass(frozen=True, slots=True)
class Stratagem:
    """A stratagem: its cost, where it may be used and what it changes (``effects``: the main
    one first, then any further ones with their own conditions). ``command`` names the command
    that resolves it when it is not a change to an attack (Tank Shock)."""

    id: str
    name: str
    cp: int
    rule: str
    detachment: str | None
    side: str
    phases: tuple[str, ...]
    not_rounds: tuple[int, ...]
    attacker_not: tuple[str, ...]
    requires: tuple[Requirement, ...]
    effects: tuple[Effect, ...]
    command: str | None


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Everything the data files define."""

    rules: tuple[Rule, ...]
    detachments: tuple[Detachment, ...]
    stratagems: tuple[Stratagem, ...]

    def detachment(self, name: str) -> Detachment:
        """The detachment ``name`` means (its id, name or an alias, any case).

        Raises:
            ProfileError: unknown (the known ones listed)."""
        key = name_key(name)
        for d in self.detachments:
            if key in (name_key(d.id), name_key(d.name), *(name_key(a) for a in d.aliases)):
                return d
        raise ProfileError("unknown detachment", where="--detachment", value=name,
                           hint="known: " + ", ".join(d.id for d in self.detachments))

    def stratagem(self, name: str) -> Stratagem:
        """The stratagem ``name`` means (as printed, any case, dashes or spaces).

        Raises:
            ProfileError: unknown (close names suggested)."""
        key = name_key(name)
        for s in self.stratagems:
            if key in (name_key(s.id), name_key(s.name)):
                return s
        from difflib import get_close_matches

        names = [s.name for s in self.stratagems]
        close = get_close_matches(name, names, n=1, cutoff=0.5)
        raise ProfileError("unknown stratagem", where="--stratagem", value=name,
                           hint=f"did you mean {close[0]!r}?" if close else "known: " + ", ".join(names))


class _Data:
    """Typed access to one entry of a data file; errors name the file and the path."""

    def __init__(self, file: str, path: str, data: Any) -> None:
        self.file, self.path, self.data = file, path, data

    def fail(self, what: str, value: Any = None) -> ProfileError:
        return ProfileError(what, where=f"{self.file}: {self.path}", value=value)

    def mapping(self, keys: set[str], required: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(self.data, dict):
            raise self.fail("must be a mapping", self.data)
        for key in self.data:
            if key not in keys:
                raise self.fail(f"unknown key (known: {', '.join(sorted(keys))})", key)
        for key in required:
            if key not in self.data:
                raise self.fail(f"{key!r} is required")
        return self.data

    def child(self, key: str) -> _Data:
        return _Data(self.file, f"{self.path}.{key}" if self.path else key, self.data[key])

    def items(self, key: str) -> list[_Data]:
        value = self.data.get(key, [])
        if not isinstance(value, list):
            raise self.child(key).fail("must be a list", value)
        return [_Data(self.file, f"{self.path}.{key}[{i}]" if self.path else f"{key}[{i}]", v)
                for i, v in enumerate(value)]

    def text(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str) or not value.strip():
            raise self.child(key).fail("must be a non-empty text", value) if key in self.data else \
                self.fail(f"{key!r} is required")
        return value


def _pairs(d: _Data, key: str, kinds: dict[str, type]) -> tuple[tuple[str, Any], ...]:
    """A ``when`` or ``give`` mapping, every key known and every value of its type."""
    if key not in d.data:
        return ()
    c = d.child(key)
    values = c.mapping(set(kinds), ())
    out = []
    for name, value in values.items():
        kind = kinds[name]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise c.child(name).fail("must be a whole number", value)
        if kind is not int and not isinstance(value, kind):
            raise c.child(name).fail(f"must be a {kind.__name__}", value)
        if name == "rounds" and not all(isinstance(r, int) and 1 <= r <= 5 for r in value):
            raise c.child(name).fail("battle rounds are 1 to 5", value)
        if name == "abilities":
            from ..notation import parse_ability

            for i, text in enumerate(value):
                try:
                    parse_ability(str(text))
                except ProfileError as e:
                    raise c.child(f"{name}[{i}]").fail(e.what, text) from None
            value = tuple(value)
        if name == "rounds":
            value = tuple(value)
        out.append((name, value))
    return tuple(out)


def _effect(d: _Data, rule: str) -> Effect:
    d.mapping({"when", "give", "says", "rule"}, ("give", "says"))
    return Effect(when=_pairs(d, "when", CONDITIONS), give=_pairs(d, "give", CHANGES), says=d.text("says"),
                  rule=d.text("rule", rule))


def _rounds(d: _Data, key: str) -> tuple[int, ...]:
    value = d.data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= 5
                                              for r in value):
        raise d.child(key).fail("must be a list of battle rounds (1 to 5)", value)
    return tuple(value)


def _stratagem(d: _Data, detachments: set[str]) -> Stratagem:
    d.mapping({"id", "name", "cp", "rule", "detachment", "side", "phases", "not_rounds", "attacker_not", "requires",
               "give", "says", "then", "command"}, ("id", "name", "cp", "rule"))
    cp = d.data["cp"]
    if isinstance(cp, bool) or not isinstance(cp, int) or cp < 0:
        raise d.child("cp").fail("must be a whole number, 0 or more", cp)
    detachment = d.data.get("detachment")
    if detachment is not None and detachment not in detachments:
        raise d.child("detachment").fail("not a detachment of the file", detachment)
    side = d.data.get("side", "attacker")
    if side not in ("attacker", "defender"):
        raise d.child("side").fail("must be attacker or defender", side)
    phases = d.data.get("phases", [])
    if not isinstance(phases, list) or not all(p in PHASES for p in phases):
        raise d.child("phases").fail(f"must be a list of {', '.join(PHASES)}", phases)
    command = d.data.get("command")
    rule = d.text("rule")
    effects: list[Effect] = []
    if command is None:
        d.mapping(set(d.data), ("give", "says", "phases"))
        effects.append(Effect(when=(), give=_pairs(d, "give", CHANGES), says=d.text("says"), rule=rule))
        effects += [_effect(e, rule) for e in d.items("then")]
    requires = []
    for r in d.items("requires"):
        r.mapping({"when", "why"}, ("when", "why"))
        requires.append(Requirement(when=_pairs(r, "when", CONDITIONS), why=r.text("why")))
    attacker_not = d.data.get("attacker_not", [])
    if not isinstance(attacker_not, list) or not all(isinstance(k, str) for k in attacker_not):
        raise d.child("attacker_not").fail("must be a list of keywords", attacker_not)
    return Stratagem(id=d.text("id"), name=d.text("name"), cp=cp, rule=rule, detachment=detachment, side=side,
                     phases=tuple(phases), not_rounds=_rounds(d, "not_rounds"),
                     attacker_not=tuple(k.upper() for k in attacker_not), requires=tuple(requires),
                     effects=tuple(effects), command=command)


def read(file: str, data: Any) -> Catalogue:
    """A catalogue from one file's data.

    Raises:
        ProfileError: naming the file and path of the first bad entry."""
    root = _Data(file, "", data)
    root.mapping({"schema", "source", "army_rules", "detachments", "stratagems"}, ("schema",))
    if root.data["schema"] != 1:
        raise root.child("schema").fail("this version reads schema 1", root.data["schema"])
    rules = []
    for d in root.items("army_rules"):
        d.mapping({"id", "name", "faction", "rule", "effects"}, ("id", "name", "faction", "rule", "effects"))
        rules.append(Rule(id=d.text("id"), name=d.text("name"), faction=d.text("faction"),
                          effects=tuple(_effect(e, d.text("rule")) for e in d.items("effects"))))
    detachments = []
    for d in root.items("detachments"):
        d.mapping({"id", "name", "faction", "rule_name", "aliases", "effects"}, ("id", "name", "faction", "effects"))
        aliases = d.data.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise d.child("aliases").fail("must be a list of names", aliases)
        detachments.append(Detachment(id=d.text("id"), name=d.text("name"), faction=d.text("faction"),
                                      rule_name=d.text("rule_name", d.text("name")), aliases=tuple(aliases),
                                      effects=tuple(_effect(e, "") for e in d.items("effects"))))
    ids = {d.id for d in detachments}
    stratagems = tuple(_stratagem(d, ids) for d in root.items("stratagems"))
    return Catalogue(rules=tuple(rules), detachments=tuple(detachments), stratagems=stratagems)


@cache
def catalogue() -> Catalogue:
    """The shipped catalogue (read once per process; it is immutable)."""
    import yaml

    text = resources.files(__package__).joinpath("tau.yaml").read_text(encoding="utf-8")
    return read("mathhammer/effects/tau.yaml", yaml.safe_load(text))
