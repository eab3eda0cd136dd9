"""Translate an oracle :class:`~tests.oracles.Scenario` into a mathhammer Matchup.

The oracle is written from RULES.md alone; this module is the only bridge between the two.
"""

from __future__ import annotations

from mathhammer import dice
from mathhammer.model import (
    Ability,
    AbilitySpec,
    CommandReroll,
    Context,
    DamageReroll,
    DiceExpr,
    Matchup,
    RerollPolicy,
    RulesVersion,
    SaveReroll,
    Target,
    Weapon,
)

from .oracles import Scenario

_KEYWORD = "TESTKEYWORD"


def _policy(text: str) -> str:
    return text.replace("_", "-")


def matchup(s: Scenario) -> Matchup:
    """The same attack as ``s``, in mathhammer's model."""
    g = lambda name, default=None: getattr(s, name, default)  # noqa: E731 - older oracles lack newer fields
    abilities = []
    if s.bs is None:
        abilities.append(AbilitySpec(ability=Ability.TORRENT))
    if s.sustained != "0":
        abilities.append(AbilitySpec(ability=Ability.SUSTAINED_HITS, value=dice.parse(s.sustained)))
    for flag, ability in ((s.lethal, Ability.LETHAL_HITS), (s.twin_linked, Ability.TWIN_LINKED),
                          (s.devastating, Ability.DEVASTATING_WOUNDS), (s.ignores_cover, Ability.IGNORES_COVER),
                          (g("heavy_stationary", False), Ability.HEAVY), (g("indirect", False), Ability.INDIRECT_FIRE),
                          (g("lance_charged", False), Ability.LANCE), (g("blast", False), Ability.BLAST)):
        if flag:
            abilities.append(AbilitySpec(ability=ability))
    if g("anti"):
        abilities.append(AbilitySpec(ability=Ability.ANTI, keyword=_KEYWORD, value=DiceExpr(plus=s.anti)))
    if g("melta", 0):
        abilities.append(AbilitySpec(ability=Ability.MELTA, value=DiceExpr(plus=s.melta)))
    if g("rapid_fire", "0") != "0":
        abilities.append(AbilitySpec(ability=Ability.RAPID_FIRE, value=dice.parse(s.rapid_fire)))
    melee = g("melee", False)
    weapon = Weapon(name="scenario", attacks=dice.parse(s.attacks), skill=s.bs, strength=s.strength, ap=s.ap,
                    damage=dice.parse(s.damage), range_inches=None if melee else 24, abilities=tuple(abilities))
    target = Target(name="scenario target", toughness=s.toughness, save=s.save, wounds=s.target_wounds,
                    models=s.target_models, invulnerable=s.invuln, feel_no_pain=s.fnp,
                    invulnerable_ranged_only=g("invuln_ranged_only", False),
                    keywords=frozenset({_KEYWORD}) if g("anti") else frozenset(),
                    stealth=g("stealth", False), half_damage=g("half_damage", False),
                    damage_reduction=g("damage_reduction", 0))
    ctx = Context(firing_models=s.models_firing, melee=melee, cover=s.cover, hit_mod=s.hit_mod, wound_mod=s.wound_mod,
                  save_mod=s.save_mod, reroll_hits=RerollPolicy(_policy(s.reroll_hits)),
                  reroll_wounds=RerollPolicy(_policy(s.reroll_wounds)),
                  half_range=bool(g("melta", 0)) or g("rapid_fire", "0") != "0",
                  stationary=g("heavy_stationary", False), not_visible=g("indirect", False),
                  overwatch=g("overwatch", False), charged=g("lance_charged", False),
                  damage_mod=g("damage_mod", 0), bs_improve=g("bs_improve", 0), ap_improve=g("ap_improve", 0),
                  crit_hit=g("crit_hit", 6), crit_wound=g("crit_wound", 6),
                  reroll_damage=DamageReroll(_policy(g("reroll_damage", "none"))),
                  reroll_saves=SaveReroll(g("reroll_saves", "none")),
                  command_reroll=CommandReroll(g("command_reroll", "none")),
                  rules=RulesVersion(g("rules", "current")))
    return Matchup(weapon=weapon, target=target, context=ctx)
