"""A player's army from a roster file: BattleScribe/New Recruit .ros/.rosz, or the text the GW
app, New Recruit (GW and WTC-compact) or War Organ export.

One job per module:
    model    the roster as understood: units, models, weapon counts, points, enhancements,
             attached leaders, notes on what was not understood;
    names    how names are compared (quotes, case, plural ``s``);
    loadout  weapon totals of a model group -> per-model loadouts;
    text     the text formats -> an unmatched roster;
    ros      .ros/.rosz XML -> a roster whose units carry their own profiles;
    match    text units -> library units with the roster's loadout;
    load     :func:`load_roster`: any roster file -> units ready for the engine;
    view     the ``roster show`` table.
"""

from .load import load_roster, parse_roster
from .model import SCHEMA, Attachment, Note, Roster, RosterModel, RosterUnit

__all__ = ["SCHEMA", "Attachment", "Note", "Roster", "RosterModel", "RosterUnit", "load_roster", "parse_roster"]
