"""Army rules, detachment rules and stratagems applied to an attack before it is compiled.

:func:`apply` checks what the battle asks for (a detachment needs a battle round; a stratagem
its phase, rounds, detachment and what it needs to have any effect), then applies every effect
whose conditions hold: abilities given to the ranged weapons (never stacking with the same
ability, R-4.5), characteristic changes and modifiers added to the attack's context, re-rolls
broadened (R-3.9), the defender's Damage reduction added to the target's models. Each
application is an explain line with its rule id; the stratagems used are listed with their CP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import MatchupError
from ..model import (
    AbilitySpec,
    AttackerSide,
    Battle,
    CommandReroll,
    FtggWording,
    Matchup,
    RerollPolicy,
    Unit,
    Weapon,
)
from ..profiles.index import faction_key
from .catalogue import Catalogue, Effect, Stratagem, catalogue

__all__ = ["Applied", "Used", "apply"]

_RULE_FTGG = "For the Greater Good"
_ROUND_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


@dataclass(frozen=True, slots=True)
class Used:
    """A stratagem used: its name, cost, whose it is and its detachment (None: a core one)."""

    name: str
    cp: int
    side: str
    detachment: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "cp": self.cp, "side": self.side, "detachment": self.detachment}


@dataclass(frozen=True, slots=True)
class Applied:
    """The attack with the effects applied, what was applied (explain lines with rule ids) and
    the stratagems used."""

    matchup: Matchup
    explain: tuple[str, ...]
    stratagems: tuple[Used, ...]
    #: warnings: a battle option given that nothing in this attack looked at
    notes: tuple[str, ...] = ()


def apply(matchup: Matchup, battle: Battle, *, target_unit: Unit | None = None,
          owners: Sequence[Unit | None] | None = None, cat: Catalogue | None = None) -> Applied:
    """``matchup`` with the effects of ``battle`` (and of the Command Re-roll and Fire Overwatch
    its context asks for, listed as stratagems used). ``target_unit``: the target's profile (a
    defender's stratagem must be of its faction); ``owners``: the unit each weapon group comes
    from (``None``: an inline profile; default: the matchup's one attacker), each checked for
    what the battle asks of the attacker; ``cat``: the rules (default: the shipped ones).

    Raises:
        MatchupError / ProfileError: a detachment without a battle round, an unknown detachment
            or stratagem, a stratagem refused (its phase, rounds, detachment, a keyword of the
            attacker, or nothing for it to do), a unit without For the Greater Good made Guided.
    """
    ctx = matchup.context
    if not battle.given and ctx.command_reroll is CommandReroll.NONE and not ctx.overwatch:
        return Applied(matchup, (), ())
    cat = catalogue() if cat is None else cat
    state = _State(matchup, battle, cat, target_unit, (matchup.attacker,) if owners is None else owners)
    state.run()
    return Applied(state.matchup, tuple(state.explain), tuple(state.used), state.unread())


class _State:
    def __init__(self, matchup: Matchup, battle: Battle, cat: Catalogue, target_unit: Unit | None,
                 owners: Sequence[Unit | None]) -> None:
        self.matchup, self.battle, self.cat, self.target_unit = matchup, battle, cat, target_unit
        self.phase = "shooting"
        self.explain: list[str] = []
        self.used: list[Used] = []
        #: every attacking unit (a rule's condition on the attacker must hold for each), and
        #: whether some weapon is an inline profile (no unit to check)
        self.attackers: tuple[Unit, ...] = tuple({id(u): u for u in owners if u is not None}.values())
        self.inline = any(u is None for u in owners)
        self.read: set[str] = set()  # the battle's fields a rule looked at

    # -- the steps ------------------------------------------------------------------------------
    def run(self) -> None:
        b = self.battle
        stratagems = self._stratagems()
        for s in stratagems:  # the ones that set the scene first: Fire Overwatch sets the phase
            if any(k == "overwatch" for e in s.effects for k, _ in e.give):
                self._give(s.effects[0], f"{s.name} ({s.cp} CP, {s.rule})", source=s.name)
        ctx = self.matchup.context
        if ctx.overwatch and not any(s.id == "fire-overwatch" for s in stratagems):
            self._use(self.cat.stratagem("fire overwatch"))
        if ctx.command_reroll is not CommandReroll.NONE and not any(s.id == "command-re-roll" for s in stratagems):
            self._use(self.cat.stratagem("command re-roll"))
        self.phase = "fight" if ctx.melee else ("overwatch" if ctx.overwatch else "shooting")
        self._check_guided()
        if b.detachment is not None:
            d = self.cat.detachment(b.detachment)
            if b.round is None:
                raise MatchupError(f"the {d.name} detachment rule ({d.rule_name}) depends on the battle round",
                                   where="--detachment", value=b.detachment, hint="give --round N (1 to 5)")
            self._same_faction(d.faction, f"--detachment {d.id}", f"the {d.name} detachment")
            self.read.add("round")
        for rule in self.cat.rules:
            for e in rule.effects:
                if self._holds(e.when):
                    self._give(e, e.rule, name=f"{rule.name} ({e.rule})", source=rule.name)
        if b.detachment is not None:
            d = self.cat.detachment(b.detachment)
            for e in d.effects:
                if self._holds(e.when):
                    self._give(e, f"{d.name} ({e.rule}, battle round {b.round})", source=d.rule_name)
        for s in stratagems:
            self._check(s)
            self._use(s)
            label = f"{s.name} ({s.cp} CP, {s.rule})"
            for i, e in enumerate(s.effects):
                if any(k == "overwatch" for k, _ in e.give):
                    continue  # applied first
                if i == 0 or self._holds(e.when):
                    self._give(e, label, source=s.name)

    def unread(self) -> tuple[str, ...]:
        """A warning for each battle option given that no rule looked at (a typo or a
        misunderstanding must not pass in silence)."""
        b, out = self.battle, []
        given = {"round": b.round is not None, "range": b.range is not None, "trap": b.trap,
                 "spotted": not b.spotted, "ftgg": b.ftgg is not FtggWording.INDEX}
        options = {"round": "--round", "range": "--range", "trap": "--trap", "spotted": "--not-spotted",
                   "ftgg": "--ftgg"}
        for name, is_given in given.items():
            if is_given and name not in self.read:
                out.append(f"{options[name]}: no army rule, detachment rule or stratagem of this attack depends on "
                           "it, so it changes nothing")
        return tuple(out)

    def _stratagems(self) -> list[Stratagem]:
        out: list[Stratagem] = []
        for name in self.battle.stratagems:
            s = self.cat.stratagem(name)
            if any(s is t for t in out):
                raise MatchupError("the same stratagem is given twice", where="--stratagem", value=name)
            if s.command is not None:
                raise MatchupError(f"{s.name} is not a change to an attack: it is its own command", where="--stratagem",
                                   value=name, hint=f"mathhammer {s.command} VEHICLE --target TARGET")
            out.append(s)
        return out

    def _use(self, s: Stratagem) -> None:
        if all(u.name != s.name for u in self.used):
            self.used.append(Used(s.name, s.cp, s.side, s.detachment))

    # -- checks ---------------------------------------------------------------------------------
    def _check_guided(self) -> None:
        b = self.battle
        role = "Guided" if b.guided else ("Observer" if b.observer else None)
        option = "--guided" if b.guided else "--observer"
        a_role = "a Guided" if b.guided else "an Observer"
        if role is None:
            if b.markerlight:
                raise MatchupError("the Observer's MARKERLIGHT matters only to a Guided or Observer unit",
                                   where="--markerlight", value=True, hint="give --guided or --observer")
            return
        if self.phase != "shooting":
            raise MatchupError(f"For the Greater Good pairs units in your Shooting phase only, so {a_role} unit "
                               f"cannot make this {'fight' if self.phase == 'fight' else 'Fire Overwatch'} attack",
                               where=option, value=True)
        for a in self.attackers:
            if "FORTIFICATION" in a.keywords:
                raise MatchupError(f"{a.name} cannot be {a_role} unit: a FORTIFICATION never is (R-11.1), and it has "
                                   "no For the Greater Good ability (R-11.3)", where=option, value=a.name)
            if not a.has_rule(_RULE_FTGG):
                raise MatchupError(f"{a.name} cannot be {a_role} unit: it does not have the For the Greater Good "
                                   "ability (R-11.1)", where=option, value=a.name)
            if b.observer and b.markerlight and "MARKERLIGHT" not in a.keywords:
                raise MatchupError(f"{a.name} is the Observer and has no MARKERLIGHT keyword", where="--markerlight",
                                   value=True)
        if (b.observer and not b.markerlight and self.attackers and not self.inline
                and all("MARKERLIGHT" in a.keywords for a in self.attackers)):
            self.battle = replace(b, markerlight=True)
            self.explain.append(f"{' and '.join(a.name for a in self.attackers)} "
                                f"{'is' if len(self.attackers) == 1 else 'are'} the Observer and "
                                f"{'has' if len(self.attackers) == 1 else 'have'} MARKERLIGHT")
        if self.inline:
            self.explain.append(f"--{role.lower()}: {'an' if self.attackers else 'the'} attacker is inline, so it is "
                                "taken to have For the Greater Good")

    def _same_faction(self, faction: str, option: str, what: str) -> None:
        for a in self.attackers:
            if a.faction and faction_key(a.faction) != faction_key(faction):
                raise MatchupError(f"{what} is {faction}'s; {a.name} is {a.faction}", where=option, value=a.name)

    def _check(self, s: Stratagem) -> None:
        b = self.battle
        if self.phase not in s.phases:
            when = {"shooting": "your Shooting phase", "overwatch": "Fire Overwatch (your opponent's Movement or "
                    "Charge phase)", "fight": "the Fight phase"}[self.phase]
            allowed = " or ".join({"shooting": "a Shooting phase", "overwatch": "Fire Overwatch",
                                   "fight": "the Fight phase"}[p] for p in s.phases)
            raise MatchupError(f"{s.name} cannot be used in {when} (only in {allowed})", where="--stratagem",
                               value=s.name)
        if s.detachment is not None:
            d = self.cat.detachment(s.detachment)
            if s.side == "attacker":
                if b.detachment is None or self.cat.detachment(b.detachment) is not d:
                    raise MatchupError(f"{s.name} is a {d.name} stratagem", where="--stratagem", value=s.name,
                                       hint=f"give --detachment {d.id}")
            else:
                self.explain.append(f"{s.name} is the defender's stratagem: their detachment is {d.name}")
                self._target_faction(d.faction, s)
        if s.not_rounds:
            self.read.add("round")
            if b.round is None:
                rounds = ", ".join(_ROUND_WORDS[r] for r in s.not_rounds)
                raise MatchupError(f"{s.name} cannot be used in the {rounds} battle rounds, so it needs the round",
                                   where="--stratagem", value=s.name, hint="give --round N (1 to 5)")
            if b.round in s.not_rounds:
                rounds = " or ".join(_ROUND_WORDS[r] for r in s.not_rounds)
                raise MatchupError(f"{s.name} cannot be used in battle round {b.round} (RESTRICTIONS: not in the "
                                   f"{rounds} battle rounds)", where="--stratagem", value=s.name)
        for keyword in s.attacker_not:
            for a in self.attackers:
                if keyword in a.keywords:
                    raise MatchupError(f"{s.name} excludes {keyword} units, and {a.name} is one",
                                       where="--stratagem", value=s.name)
        for r in s.requires:
            if not self._holds(r.when, for_=s.name):
                raise MatchupError(f"{s.name} has no effect here: {r.why}", where="--stratagem", value=s.name)

    def _target_faction(self, faction: str, s: Stratagem) -> None:
        unit = self.target_unit
        if unit is not None and unit.faction and faction_key(unit.faction) != faction_key(faction):
            raise MatchupError(f"{s.name} is a {faction} stratagem and the target is {unit.faction}",
                               where="--stratagem", value=s.name)

    # -- conditions -----------------------------------------------------------------------------
    def _holds(self, when: tuple[tuple[str, Any], ...], *, for_: str = "") -> bool:
        b = self.battle
        for key, value in when:
            self.read.add({"rounds": "round", "at_spotted": "spotted", "within": "range"}.get(key, key))
            if key == "guided" and b.guided:  # which text, and under the codex text whether the target is Spotted
                self.read.update(("ftgg", "spotted") if b.ftgg is FtggWording.CODEX else ("ftgg",))
            if key == "rounds":
                ok = b.round in value
            elif key == "shooting":
                ok = (self.phase != "fight") == value
            elif key == "guided":
                # the codex text: a unit is a Guided unit only while it targets a Spotted unit (A17)
                ok = (b.guided and (b.spotted or b.ftgg is FtggWording.INDEX)) == value
            elif key == "observer":
                ok = b.observer == value
            elif key == "at_spotted":
                ok = ((b.guided or b.observer) and b.spotted) == value
            elif key == "markerlight":
                ok = b.markerlight == value
            elif key == "trap":
                ok = b.trap == value
            elif key == "within":
                if b.range is None:
                    raise MatchupError(f"{for_ or 'a rule'} applies only within {value}\" of the target, so it needs "
                                       "the range", where="--stratagem", value=for_, hint="give --range N (inches)")
                ok = b.range <= value
            else:  # pragma: no cover - the catalogue checks the keys
                raise AssertionError(key)
            if not ok:
                return False
        return True

    # -- changes --------------------------------------------------------------------------------
    def _give(self, e: Effect, label: str, *, name: str | None = None, source: str | None = None) -> None:
        """Apply ``e``; ``label`` starts its explain line, ``name`` (default: ``label``) names
        it in an error, ``source`` (default: ``label``) in the roll modifiers it adds to
        (Matchup.sources)."""
        for key, value in e.give:
            if key == "abilities":
                self._abilities(value, label)
        m = self.matchup
        ctx = m.context
        side_changes: dict[str, Any] = {}
        for key, value in e.give:
            if key == "abilities":
                continue
            if key in _NAMED:
                side_changes[key] = value
            elif key == "reroll_hits":
                side_changes[key] = RerollPolicy(value)
            elif key == "command_reroll":
                if ctx.command_reroll is CommandReroll.NONE:
                    ctx = replace(ctx, command_reroll=CommandReroll(value))
            elif key == "overwatch":
                ctx = replace(ctx, overwatch=bool(value))
            elif key == "damage_reduction":
                groups = tuple(replace(g, damage_reduction=g.damage_reduction + value) for g in m.target.groups)
                m = _with(m, target=replace(m.target, groups=groups))
        if side_changes:
            try:
                ctx = ctx.with_attacker(_changed(ctx.attacker_side, side_changes))
                weapons = tuple(g if g.attacker is None else replace(g, attacker=_changed(g.attacker, side_changes))
                                for g in m.weapons)
            except MatchupError as err:  # the option given plus the effect's change is out of range
                raise MatchupError(f"{err.what}, once {name or label} adds its change", where=err.where,
                                   value=err.value, hint=err.hint) from None
            named = tuple((key, source or label, value) for key, value in side_changes.items() if key in _NAMED)
            m = _with(m, weapons=weapons, sources=(*m.sources, *named))
        if ctx is not self.matchup.context or m is not self.matchup:
            m = _with(m, context=ctx)
        self.matchup = m
        self.explain.append(f"{label}: {e.says}")

    def _abilities(self, texts: tuple[str, ...], label: str) -> None:
        from ..notation import parse_ability

        m = self.matchup
        groups = []
        for g in m.weapons:
            w = g.weapon
            if not w.melee:
                for text in texts:
                    w = self._gain(w, parse_ability(text), label)
            groups.append(g if w is g.weapon else replace(g, weapon=w))
        self.matchup = _with(m, weapons=tuple(groups))

    def _gain(self, w: Weapon, spec: AbilitySpec, label: str) -> Weapon:
        """``w`` with ``spec``; the same ability is never had twice (R-4.5): the larger value stays."""
        same = [a for a in w.abilities if a.ability is spec.ability and a.keyword == spec.keyword]
        if not same:
            return replace(w, abilities=(*w.abilities, spec))
        if max(a.rank for a in same) >= spec.rank:
            self.explain.append(f"{label}: {w.name} already has [{same[0]}], so [{spec}] adds nothing (R-4.5)")
            return w
        kept = tuple(a for a in w.abilities if not (a.ability is spec.ability and a.keyword == spec.keyword))
        self.explain.append(f"{label}: {w.name}'s [{same[0]}] becomes [{spec}] (the same ability never stacks, "
                            "R-4.5)")
        return replace(w, abilities=(*kept, spec))


#: The changes added to a number the options set too, whose source the explanations name
#: (Matchup.sources).
_NAMED = ("bs_improve", "ap_improve", "hit_mod", "wound_mod")


def _changed(side: AttackerSide, changes: dict[str, Any]) -> AttackerSide:
    """``side`` with characteristic changes and modifiers added and a re-roll broadened."""
    values = {}
    for key, value in changes.items():
        if key == "reroll_hits":
            # a full re-roll permission: the broadest of it and what is already there
            if side.reroll_hits in (RerollPolicy.NONE, RerollPolicy.ONES):
                values[key] = value
        else:
            values[key] = getattr(side, key) + value
    return replace(side, **values)


def _with(m: Matchup, **changes: Any) -> Matchup:
    fields = {"weapons": m.weapons, "target": m.target, "context": m.context, "attacker": m.attacker,
              "sources": m.sources, **changes}
    return Matchup(**fields)


