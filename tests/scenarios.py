"""Translate an oracle :class:`~tests.oracles.Scenario` into a mathhammer Matchup.

The oracle is written from RULES.md alone; this module is the only bridge between the two.
"""

from __future__ import annotations

from mathhammer import dice
from mathhammer.model import Ability, AbilitySpec, Context, Matchup, RerollPolicy, Target, Weapon

from .oracles import Scenario


def matchup(s: Scenario) -> Matchup:
    """The same attack as ``s``, in mathhammer's model."""
    abilities = []
    if s.bs is None:
        abilities.append(AbilitySpec(ability=Ability.TORRENT))
    if s.sustained != "0":
        abilities.append(AbilitySpec(ability=Ability.SUSTAINED_HITS, value=dice.parse(s.sustained)))
    for flag, ability in ((s.lethal, Ability.LETHAL_HITS), (s.twin_linked, Ability.TWIN_LINKED),
                          (s.devastating, Ability.DEVASTATING_WOUNDS), (s.ignores_cover, Ability.IGNORES_COVER)):
        if flag:
            abilities.append(AbilitySpec(ability=ability))
    weapon = Weapon(name="scenario", attacks=dice.parse(s.attacks), skill=s.bs, strength=s.strength, ap=s.ap,
                    damage=dice.parse(s.damage), range_inches=24, abilities=tuple(abilities))
    target = Target(name="scenario target", toughness=s.toughness, save=s.save, wounds=s.target_wounds,
                    models=s.target_models, invulnerable=s.invuln, feel_no_pain=s.fnp)
    ctx = Context(firing_models=s.models_firing, cover=s.cover, hit_mod=s.hit_mod, wound_mod=s.wound_mod,
                  save_mod=s.save_mod, reroll_hits=RerollPolicy(s.reroll_hits),
                  reroll_wounds=RerollPolicy(s.reroll_wounds))
    return Matchup(weapon=weapon, target=target, context=ctx)
