"""Reading BattleScribe data (BSData catalogues, game systems and rosters) into profile YAML.

:mod:`.xmlsafe` reads the files safely (no DTD, no entities, size-capped zips); :mod:`.convert`
turns one BSData profile into the project's weapon / statline dicts; :mod:`.catalogue` loads a set
of catalogues and resolves links by id as BattleScribe does; :mod:`.units` extracts the units;
:mod:`.write` writes deterministic YAML. Nothing here fetches anything from the network.
"""
