"""YAML profiles <-> model objects, and name lookup. The only package that reads profile files.

One job per module:
    _yaml    reading one file safely: bytes -> text -> YAML data (type, size, encoding,
             duplicate keys, alias bombs, depth);
    schema   YAML data -> checked Unit / Weapon objects, and :func:`dump_unit` back;
    library  folders and files to read, unique names across them, :class:`Library` lookup;
    cache    the parsed units kept between runs (marshal, checksummed, never executed).

Errors name the file, the YAML path and the value:
``profiles/orks.yaml: units[0].weapons[1].D: expected a dice expression (got 'd7x')``.
"""

# _plain and _Rebuild are private; the tests of the cache reach them here (`as` re-exports them).
from .cache import CACHE_ENV_VAR, cache_dir
from .cache import _plain as _plain
from .cache import _Rebuild as _Rebuild
from .library import ENV_VAR, Layered, Library, builtin_dirs, load_file, load_library, unit_key
from .schema import MODIFIERS, SCHEMA_VERSION, dump_unit

__all__ = ["CACHE_ENV_VAR", "ENV_VAR", "MODIFIERS", "SCHEMA_VERSION", "Layered", "Library", "builtin_dirs", "cache_dir",
           "dump_unit", "load_file", "load_library", "unit_key"]
