"""The cache of parsed profiles: the checked units of a library, kept between runs.

An entry is keyed on the profile files' contents and on the code that reads them, written in a
format that is never executed, and read only when it is this user's own, intact and well-typed
(see :func:`_read_entry`), so a warm start parses no YAML. It holds the library's name index
and each unit as a blob of its own (:class:`.index.Index`), so a start rebuilds only the units
it looks up.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import Any

from .. import dice, limits
from ..limits import MAX_PROFILE_BYTES
from ..model import Ability, AbilitySpec, DiceExpr, ModelStats, Unit, Wargear, Weapon
from .index import Index, unit_blob
from .schema import MODIFIERS

CACHE_ENV_VAR = "MATHHAMMER_CACHE_DIR"
#: Bumped when the layout of a cache entry changes.
_CACHE_FORMAT = 9  # 2: statlines' invulnerable, feel_no_pain, keywords, loadout; units' attached
# 3: unmodelled, sizes, options; one marshal blob per unit, rebuilt when it is looked up; the name index
# 4: units' deadly_demise, firing_deck, rules
# 5: units' wargear; 6: wargear's keywords; 7: statlines' wargear and bare statline; 8: units' enhancements;
# 9: wargear's alternatives


def cache_dir() -> Path:
    """Where parsed profiles are kept: $MATHHAMMER_CACHE_DIR, else $XDG_CACHE_HOME/mathhammer,
    else ~/.cache/mathhammer."""
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mathhammer"


def _entry_for(contents: Iterable[bytes]) -> tuple[Path, str]:
    """The entry file and the key for a library of files with these contents, in reading order."""
    key = hashlib.sha256(_code_fingerprint().encode())
    for raw in contents:
        key.update(hashlib.sha256(raw).digest())
    return cache_dir() / "profiles" / f"{key.hexdigest()[:40]}.marshal", key.hexdigest()


def _read_entry(entry: Path, key: str) -> Index | None:
    """The index of the cache entry for ``key``, or None when there is no usable one.

    An entry holds the *checked units* of every profile file and their names, under a key made of the files'
    contents (SHA-256 of their bytes) and :func:`_code_fingerprint`: an edit, another set of
    folders, or another version of the code that reads files is a miss. Nothing in an entry is
    ever executed, and nothing but this code's own output is decoded:

    * it is used only if it is a regular file of this user that no one else may write;
    * its payload is in :mod:`marshal` format (plain data: unlike pickle, decoding calls no
      code), decoded only after its SHA-256, stored in front of it, matches (a truncated or
      damaged entry never reaches the decoder);
    * every value must have exactly the type this code writes, and the units are rebuilt
      through the model's constructors, so its invariants (the documented limits) hold: the
      index when the entry is read, each unit when it is first looked up (a unit that fails
      then makes the library read the files again, see :meth:`.index.Index.unit`).

    marshal rather than JSON: importing :mod:`json` alone costs more than a warm load (1.5 ms
    against 2 ms), and this runs on every start. An entry that fails any check is ignored and
    the files parsed again. Libraries with errors are never cached.
    """
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022 or st.st_size > 64 * MAX_PROFILE_BYTES \
                or hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            blob = f.read(st.st_size + 1)
        if hashlib.sha256(blob[32:]).digest() != blob[:32]:
            return None
        doc = marshal.loads(blob[32:])
        if not (type(doc) is dict and doc.get("format") == _CACHE_FORMAT and doc.get("key") == key):
            return None
        rebuild = _Rebuild()
        return Index.from_plain(doc, lambda blob: rebuild.unit(marshal.loads(blob)))
    except Exception:  # noqa: BLE001 - truncated, damaged, foreign or stale: parse the files instead
        return None
    finally:
        os.close(fd)


def _write_entry(entry: Path, key: str, index: Index) -> None:
    """Store the index and its units, atomically, if every unit comes back equal; a cache that
    cannot be written (a read-only home, a full disk) only makes the next start slower."""
    try:
        payload = _payload(key, index)
        rebuild = _Rebuild()
        back = Index.from_plain(marshal.loads(payload), lambda blob: rebuild.unit(marshal.loads(blob)))
        if any(back.unit(i) != index.unit(i) for i in range(index.n_units)):
            return  # the model gained something the cache does not carry: better no cache than a wrong one
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = entry.with_name(f"{entry.stem}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, entry)
        _prune(entry.parent)
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def _payload(key: str, index: Index) -> bytes:
    """The marshal bytes of an entry's document (what follows its checksum)."""
    return marshal.dumps({"format": _CACHE_FORMAT, "key": key, **index.plain(unit_blob(_plain))})


def _open_entry(blob: bytes) -> dict[str, Any]:
    """An entry's document with ``units`` as a list of each unit's plain data, to inspect or edit
    an entry (tests do); :func:`_seal_entry` is the inverse. The checksum is not checked here."""
    from array import array

    doc: dict[str, Any] = marshal.loads(blob[32:])
    starts = array("i", doc["unit blob starts"])
    return {**doc, "units": [marshal.loads(doc["units"][a:b]) for a, b in zip(starts, starts[1:], strict=False)]}


def _seal_entry(doc: dict[str, Any]) -> bytes:
    """The bytes of an entry holding ``doc`` (``units`` as plain data), with its checksum."""
    from array import array

    blobs = [marshal.dumps(u) for u in doc["units"]]
    starts = array("i", [0])
    for b in blobs:
        starts.append(starts[-1] + len(b))
    payload = marshal.dumps({**doc, "units": b"".join(blobs), "unit blob starts": starts.tobytes()})
    return hashlib.sha256(payload).digest() + payload


def _prune(folder: Path, days: int = 30) -> None:
    """Remove entries not written for ``days`` (left by edited files and older versions)."""
    import time

    cutoff = time.time() - days * 86400
    for e in os.scandir(folder):
        if e.name.endswith((".marshal", ".tmp", ".pickle")) and e.stat(follow_symlinks=False).st_mtime < cutoff:
            os.unlink(e.path)


def _plain(value: Any) -> Any:
    """A model object as plain data: dataclasses as mappings of their fields, enums as values."""
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(value)
    return value


class _Rebuild:
    """Data of :func:`_plain` -> model objects, through their constructors. Every field is
    type-checked here or by the constructor; anything unexpected raises (and the file is parsed)."""

    def __init__(self) -> None:
        self.dice: dict[tuple[int, int, int], DiceExpr] = {}
        self.abilities: dict[tuple[str, tuple[int, int, int] | None, str], AbilitySpec] = {}

    def units(self, data: list[dict[str, Any]]) -> list[Unit]:
        return [self.unit(u) for u in _of(data, list)]

    def unit(self, u: dict[str, Any]) -> Unit:
        unit = self._unit(u)
        names = {w.name for w in unit.weapons}
        if not {name for name, _ in unit.loadout()} <= names or not all(set(m.options) <= names for m in unit.models):
            raise ValueError(f"{unit.name}: a loadout or option names a weapon the unit does not have")
        return unit

    def _unit(self, u: dict[str, Any]) -> Unit:
        return Unit(name=_of(u["name"], str), aliases=self.strings(u["aliases"]), faction=_of(u["faction"], str),
                    points=_of(u["points"], int, optional=True), source=_of(u["source"], str),
                    models=tuple(self.model(m) for m in _of(u["models"], list)),
                    invulnerable=_of(u["invulnerable"], int, optional=True),
                    invulnerable_ranged_only=_of(u["invulnerable_ranged_only"], bool),
                    feel_no_pain=_of(u["feel_no_pain"], int, optional=True),
                    damage_reduction=_of(u["damage_reduction"], int),
                    stealth=_of(u["stealth"], bool), half_damage=_of(u["half_damage"], bool),
                    keywords=frozenset(self.strings(u["keywords"])), modifiers=self.modifiers(u["modifiers"]),
                    weapons=tuple(self.weapon(w) for w in _of(u["weapons"], list)),
                    attached=self.strings(u["attached"]), unmodelled=self.strings(u["unmodelled"]),
                    sizes=self.sizes(u["sizes"]),
                    deadly_demise=None if u["deadly_demise"] is None else self.die(u["deadly_demise"]),
                    firing_deck=_of(u["firing_deck"], int, optional=True), rules=self.strings(u["rules"]),
                    wargear=self.wargear(u["wargear"]), enhancements=self.wargear(u["enhancements"]))

    def wargear(self, pieces: list[Any]) -> tuple[Wargear, ...]:
        return tuple(Wargear(name=_of(w["name"], str), gives=self.loadout(w["gives"]),
                             keywords=self.strings(w["keywords"]), alternatives=self.strings(w["alternatives"]))
                     for w in _of(pieces, list))

    def model(self, m: dict[str, Any]) -> ModelStats:
        return ModelStats(name=_of(m["name"], str), count=_of(m["count"], int), toughness=_of(m["toughness"], int),
                          save=_of(m["save"], int), wounds=_of(m["wounds"], int),
                          move=_of(m["move"], int, optional=True),
                          leadership=_of(m["leadership"], int, optional=True),
                          objective_control=_of(m["objective_control"], int, optional=True),
                          invulnerable=_of(m["invulnerable"], int, optional=True),
                          feel_no_pain=_of(m["feel_no_pain"], int, optional=True),
                          keywords=frozenset(self.strings(m["keywords"])), loadout=self.loadout(m["loadout"]),
                          options=self.strings(m["options"]), wargear=self.strings(m["wargear"]),
                          bare=None if m["bare"] is None else self.model(m["bare"]))

    def loadout(self, pairs: list[Any]) -> tuple[tuple[str, int], ...]:
        out: list[tuple[str, int]] = []
        for pair in _of(pairs, list):
            name, count = _of(pair, list)
            out.append((_of(name, str), _of(count, int)))
        return tuple(out)

    def weapon(self, w: dict[str, Any]) -> Weapon:
        return Weapon(name=_of(w["name"], str), attacks=self.die(w["attacks"]),
                      skill=_of(w["skill"], int, optional=True),
                      strength=_of(w["strength"], int), ap=_of(w["ap"], int), damage=self.die(w["damage"]),
                      range_inches=_of(w["range_inches"], int, optional=True), aliases=self.strings(w["aliases"]),
                      abilities=tuple(self.ability(a) for a in _of(w["abilities"], list)), unit=_of(w["unit"], str),
                      modifiers=self.modifiers(w["modifiers"]), unmodelled=self.strings(w["unmodelled"]))

    def sizes(self, pairs: list[Any]) -> tuple[tuple[int, int], ...]:
        out: list[tuple[int, int]] = []
        for pair in _of(pairs, list):
            models, points = _of(pair, list)
            out.append((_of(models, int), _of(points, int)))
        if any(n < 1 or p < 0 for n, p in out) or any(a[0] >= b[0] for a, b in zip(out, out[1:], strict=False)):
            raise ValueError(f"unit sizes out of order or below 1 model / 0 points: {out}")
        return tuple(out)

    def die(self, d: dict[str, Any]) -> DiceExpr:
        key = (_of(d["count"], int), _of(d["sides"], int), _of(d["plus"], int))
        if key not in self.dice:
            self.dice[key] = DiceExpr(count=key[0], sides=key[1], plus=key[2])
        return self.dice[key]

    def ability(self, a: dict[str, Any]) -> AbilitySpec:
        value = None if a["value"] is None else self.die(a["value"])
        key = (_of(a["ability"], str), None if value is None else (value.count, value.sides, value.plus),
               _of(a["keyword"], str))
        if key not in self.abilities:
            self.abilities[key] = AbilitySpec(ability=Ability(key[0]), value=value, keyword=key[2])
        return self.abilities[key]

    def modifiers(self, pairs: list[list[Any]]) -> tuple[tuple[str, object], ...]:
        out: list[tuple[str, object]] = []
        for name, value in _of(pairs, list):
            kind = MODIFIERS[name]
            out.append((name, _of(value, int) if kind is int else kind(_of(value, str))))
        return tuple(out)

    def strings(self, values: list[Any]) -> tuple[str, ...]:
        return tuple(_of(v, str) for v in _of(values, list))


def _of(value: Any, kind: type, optional: bool = False) -> Any:
    """``value`` if its type is exactly ``kind`` (a bool is not an int here), or None if ``optional``."""
    if type(value) is kind or (optional and value is None):
        return value
    raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")


_FINGERPRINT: list[str] = []


def _code_fingerprint() -> str:
    """The identity of the code that turns YAML into units: path, size and modification time of
    the source of every module of this package and of model, notation, dice and limits (the test
    Python itself uses to decide that a .pyc is stale; a few stat calls, where hashing the sources
    would cost more than the rest of a warm load), the version of mathhammer, Python and PyYAML."""
    if not _FINGERPRINT:
        from .. import __version__, model, notation
        from . import _yaml, library, schema  # imported already: library imports this module

        parts = [str(_CACHE_FORMAT), __version__, sys.version, _yaml_identity()]
        for module in (_yaml, schema, library, sys.modules[__name__], model, notation, dice, limits):
            path = module.__file__ or module.__name__
            try:
                st = os.stat(path)
                parts.append(f"{path}|{st.st_size}|{st.st_mtime_ns}")
            except OSError:
                parts.append(path)
        _FINGERPRINT.append("\n".join(parts))
    return _FINGERPRINT[0]


def _yaml_identity() -> str:
    """PyYAML's location, size and time stamp, without importing it (a warm start never does)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("yaml")
        origin = spec.origin if spec and spec.origin else ""
        st = os.stat(origin)
        return f"{origin}|{st.st_size}|{st.st_mtime_ns}"
    except (OSError, ImportError, ValueError):
        return "yaml ?"
