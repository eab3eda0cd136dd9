"""The kernels' machine code kept as object files and run without numba.

numba's own cache needs numba to load it, and importing numba costs 0.2-0.3 CPU-seconds of a
warm run (its compiler's modules and registries), more than the rest of a run together. So
once numba has compiled a kernel for an argument layout (or loaded it from its cache), the
object code numba keeps for it (relocatable machine code with every helper linked in) is
written here too, and later processes load it without numba: on x86-64 with a small loader of
their own (:mod:`.elf`: loading LLVM alone costs 50-70 CPU-milliseconds and 45 MB), elsewhere
or when that refuses an object with llvmlite, numba's code generator's own library, through
the object loader numba uses (MCJIT); then they call numba's C wrapper of the kernel through
ctypes, which releases the GIL as numba's own call does.

The file is used only when everything it was made with is the same: the kernel's sources
(every file of this package), numba's and llvmlite's installed files, Python, the machine's
processor (LLVM's name and features of it, kept for the boot: :func:`_cpu`), every
``NUMBA_*`` setting but the cache folder and the thread count, and ``.numba_config.yaml`` in
the current folder; when this user owns it and no one else may write it, its checksum holds
and every symbol it needs is found (else numba takes over, as without it). numba's C wrapper
would report an exception in the kernel by printing it, not raising it: the kernels have
nothing that raises (no division, no ``raise``, no bounds checks; a test reads their sources
for it).
Only ELF objects on 64-bit Linux are kept: elsewhere numba's cache alone serves, as it does
with ``MATHHAMMER_NATIVE_KERNELS=0``.

The wrapper's arguments are the kernel's, each array passed as numba's array structure (null
meminfo and parent, size, item size, data pointer, shape, strides) split into its fields, as
LLVM passes an aggregate argument; ``tests/test_native.py`` runs every kernel path both ways
and compares every output array.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import functools
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import pathlib
import platform
import stat
import struct
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from . import elf, handoff
from .shapes import layout_of

__all__ = ["NativeKernel", "data_pointer", "defined_symbols", "directory", "kernel_sources", "load",
           "private_temp_dir", "save", "sources_digest", "supported", "undefined_symbols"]

#: First line of a native cache file; a new format gets a new line.
_MAGIC = b"mathhammer-native 4\n"
_SUFFIX = ".native"
#: The entry point each file adds: ``int64 mathhammer_entry(int64 *flat)`` calls the kernel's C
#: wrapper with the flat arguments ``flat[0 .. width - 1]``. On x86-64 the file carries the
#: functions of :mod:`.handoff` too.
_ENTRY = "mathhammer_entry"
#: The numba extension modules whose C helpers the machine code calls (on its error path).
_HELPER_MODULES = ("_helperlib", "_dynfunc")


def sources_digest(folder: pathlib.Path) -> str:
    """A digest of every source file in ``folder`` (for the kernels: this package).

    numba marks a cached kernel stale only when the file defining it changes (its time and
    size), not when a helper it calls from another file does: a new rng.py under an unchanged
    simulate.py would run the old machine code. The digest joins that stamp (and keys the
    native cache), so a change to any file here compiles afresh."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.cache
def kernel_sources() -> str:
    """The digest of this package's sources (:func:`sources_digest`), worked out once."""
    return sources_digest(pathlib.Path(__file__).parent)


def private_temp_dir() -> str | None:
    """A folder only this user can write, in the temporary directory (None if there is none).

    Cache files are machine code (and numba's, pickles) that a run loads, so a folder another
    user could plant files in must never be used.
    """
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        path = os.path.join(tempfile.gettempdir(), f"mathhammer-numba-{uid if uid is not None else 'user'}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022 or (uid is not None and st.st_uid != uid):
        return None
    return path


def _usable(folder: pathlib.Path) -> bool:
    """Whether ``folder`` exists (or can be made) and this process can write in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def directory() -> pathlib.Path | None:
    """Where native kernels are kept: ``$NUMBA_CACHE_DIR/mathhammer-native`` when that is set
    (where numba caches then), else ``$MATHHAMMER_CACHE_DIR/native`` when that is set (where
    mathhammer's other caches go), else ``__pycache__/native`` beside these sources (where
    numba caches by default), else ``native`` in the user's cache folder
    (``$XDG_CACHE_HOME/mathhammer`` or ``~/.cache/mathhammer``), else a private temporary
    folder; None when none is writable (nothing is kept: numba decides alone)."""
    numba_dir, ours = os.environ.get("NUMBA_CACHE_DIR"), os.environ.get("MATHHAMMER_CACHE_DIR")
    if numba_dir:
        candidates = [pathlib.Path(numba_dir) / "mathhammer-native"]
    elif ours:
        candidates = [pathlib.Path(ours) / "native"]
    else:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        candidates = [pathlib.Path(__file__).parent / "__pycache__" / "native",
                      pathlib.Path(home) / "mathhammer" / "native"]
    for folder in candidates:
        if _usable(folder):
            return folder
    fallback = private_temp_dir()
    return pathlib.Path(fallback) / "native" if fallback is not None and _usable(pathlib.Path(fallback) / "native") \
        else None


#: Set to 0 (or no, off, false) to use numba's cache alone: nothing is read or written here.
SWITCH = "MATHHAMMER_NATIVE_KERNELS"


def supported() -> bool:
    """Whether native kernels are kept: on 64-bit little-endian Linux, unless switched off
    (:data:`SWITCH`)."""
    if os.environ.get(SWITCH, "").strip().lower() in ("0", "no", "off", "false"):
        return False
    return sys.platform.startswith("linux") and sys.maxsize > 2**32 and sys.byteorder == "little" \
        and platform.machine() in ("x86_64", "aarch64")


def _numba_folder() -> pathlib.Path | None:
    """numba's installed package folder, found without importing it."""
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.submodule_search_locations:
        return None
    return pathlib.Path(next(iter(spec.submodule_search_locations)))


def _installed_stamp() -> list[object]:
    """What identifies the installed numba and llvmlite: their versions' files (path, time,
    size) and llvmlite's version."""
    import llvmlite

    stamp: list[object] = [llvmlite.__version__]
    folder = _numba_folder()
    if folder is None:
        raise OSError("numba is not installed")
    for name in ("_version.py", "__init__.py"):
        st = os.stat(folder / name)
        stamp.append((str(folder / name), st.st_mtime_ns, st.st_size))
    return stamp


def _key(name: str, layout: tuple[object, ...]) -> str:
    """The cache key of ``name``'s machine code for argument ``layout`` on this machine."""
    parts = [_MAGIC.decode().strip(), name, repr(layout), kernel_sources(), _installed_stamp(), sys.version,
             platform.machine(), *_cpu(),
             sorted((k, v) for k, v in os.environ.items() if k.startswith("NUMBA_") and k not in _NOT_CODE),
             _numba_config_file()]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:40]


@functools.cache
def _cpu() -> list[str]:
    """LLVM's name and features of this machine's processor: what numba compiles for (numba's
    own cache keys on them too). Asking LLVM means loading it, 50-70 CPU-milliseconds of a warm
    run, so the answer is kept in the native folder for the rest of this boot of the machine
    (:func:`_cpu_file`: a machine does not change processor while it runs) and asked again
    after a reboot, or on every run where nothing can be kept."""
    path = _cpu_file()
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            data = _read_own(path)
            found = json.loads(data) if data is not None else None
            if isinstance(found, list) and len(found) == 2 and all(isinstance(x, str) and x for x in found):
                return found
    ll = _llvm()
    found = [str(ll.get_host_cpu_name()), str(ll.get_host_cpu_features().flatten())]
    if path is not None:
        _write_own(path, json.dumps(found).encode())
    return found


def _cpu_file() -> pathlib.Path | None:
    """Where this boot's answer of :func:`_cpu` is kept: named by the boot's id (a new one at
    every boot of every machine) and the identifying lines of every processor in
    /proc/cpuinfo (not their speeds); None where either cannot be read or nothing can be kept."""
    try:
        boot = pathlib.Path(_BOOT_ID).read_text(encoding="utf-8").strip()
        with open(_CPUINFO, encoding="utf-8", errors="replace") as f:
            info = f.read()
    except OSError:
        return None
    fields = (line.partition(":") for line in info.splitlines())
    lines = sorted({f"{field.strip()}:{value.strip()}" for field, _, value in fields if field.strip() in _CPU_FIELDS})
    folder = directory()
    if not boot or not lines or folder is None:
        return None
    digest = hashlib.sha256(json.dumps([boot, lines]).encode()).hexdigest()[:40]
    return folder / f"cpu-{digest}{_CPU_SUFFIX}"


_BOOT_ID = "/proc/sys/kernel/random/boot_id"
_CPUINFO = "/proc/cpuinfo"
#: The lines of /proc/cpuinfo that identify a processor and what it can run (x86 and Arm).
_CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags", "CPU implementer",
               "CPU architecture", "CPU variant", "CPU part", "CPU revision", "Features")
_CPU_SUFFIX = ".cpu"


#: numba settings that change where its cache is or how many threads run, not the machine code.
_NOT_CODE = ("NUMBA_CACHE_DIR", "NUMBA_NUM_THREADS")


def _numba_config_file() -> str | None:
    """The digest of ``.numba_config.yaml`` in the current folder (numba reads its settings from
    it, as from ``NUMBA_*`` variables), None when there is none."""
    try:
        return hashlib.sha256(pathlib.Path(".numba_config.yaml").read_bytes()).hexdigest()
    except OSError:
        return None


def _path(folder: pathlib.Path, name: str, key: str) -> pathlib.Path:
    return folder / f"{name}-{key}{_SUFFIX}"


def _symbols(obj: bytes) -> tuple[list[str], list[str]] | None:
    """(undefined, defined) symbol names of a relocatable ELF64 little-endian object (defined:
    global or weak ones, those another object can call); None when it is not such an object,
    or is damaged."""
    try:
        if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
            return None
        (shoff,) = struct.unpack_from("<Q", obj, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
        if shentsize < 64 or shoff + shnum * shentsize > len(obj):
            return None
        sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
        undefined: list[str] = []
        defined: list[str] = []
        for sec in sections:
            if sec[1] != 2:  # SHT_SYMTAB
                continue
            strtab = sections[sec[6]]
            if sec[4] + sec[5] > len(obj) or strtab[4] + strtab[5] > len(obj):
                return None
            strings = obj[strtab[4]:strtab[4] + strtab[5]]
            for at in range(sec[4], sec[4] + sec[5], 24):
                st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", obj, at)
                if not st_name or st_info & 0xF in (3, 4):  # a section's or the source file's name
                    continue
                end = strings.index(b"\0", st_name)
                if st_shndx == 0:
                    undefined.append(strings[st_name:end].decode())
                elif st_info >> 4 in (1, 2):  # global or weak: what another object can call
                    defined.append(strings[st_name:end].decode())
        return undefined, defined
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


def undefined_symbols(obj: bytes) -> list[str] | None:
    """The symbols a relocatable ELF64 object needs from elsewhere (None: not such an object)."""
    found = _symbols(obj)
    return None if found is None else found[0]


def defined_symbols(obj: bytes) -> list[str] | None:
    """The symbols a relocatable ELF64 object defines (None: not such an object)."""
    found = _symbols(obj)
    return None if found is None else found[1]


def save(name: str, layout: tuple[object, ...], obj: bytes, symbol: str) -> pathlib.Path | None:
    """Keep ``obj`` (numba's object code of kernel ``name`` for argument ``layout``, whose C
    wrapper is ``symbol``) for later processes, with a small entry point of its own
    (:func:`_entry_object`). Best effort: returns the file, or None when nothing was written
    (unsupported platform or object, no writable folder, a failed write)."""
    if not supported() or not _flat_layout(layout):
        return None
    folder = directory()
    if undefined_symbols(obj) is None or symbol not in (defined_symbols(obj) or ()) or folder is None:
        return None
    try:
        ll = _llvm()
        entry = _entry_object(ll, symbol, _width(layout))
        header = {"sizes": [len(obj), len(entry)], "sha256": hashlib.sha256(obj + entry).hexdigest()}
        path = _path(folder, name, _key(name, layout))
    except (OSError, ImportError, ValueError, RuntimeError):
        return None
    if not _write_own(path, _MAGIC + json.dumps(header).encode() + b"\n" + obj + entry):
        return None
    _prune(folder, keep=path)
    return path


def _write_own(path: pathlib.Path, data: bytes) -> bool:
    """Write ``path`` whole (a temporary file renamed over it), readable and writable by this
    user alone whatever the umask (:func:`_read_own` refuses others); False when it failed."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(data)
        os.replace(temp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False


#: A native file not loaded or written for this long is removed when a new one is written (one
#: is left behind by every change of sources, numba or settings); a removed file that is still
#: wanted is written again from numba's cache by the next run that needs it.
_MAX_AGE_DAYS = 30


def _prune(folder: pathlib.Path, keep: pathlib.Path) -> None:
    """Remove native files, kept processor names (one a boot) and temporary files of failed
    writes, unused for _MAX_AGE_DAYS."""
    cutoff = time.time() - _MAX_AGE_DAYS * 86400
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.path == str(keep) or not entry.name.endswith((_SUFFIX, _CPU_SUFFIX, ".tmp")):
            continue
        with contextlib.suppress(OSError):
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)


def _entry_object(ll: Any, symbol: str, width: int) -> bytes:
    """Object code of ``int64 mathhammer_entry(int64 *flat)``, which calls ``symbol`` with
    ``flat[0 .. width - 1]``: one pointer through ctypes instead of hundreds of converted
    arguments (0.3 ms a call; this way a few microseconds). Every field of numba's array
    structure is 64 bits wide, so its split fields go where these 64-bit arguments go. On
    x86-64, with the functions that hand a share to a waiting thread (:mod:`.handoff`)."""
    from llvmlite import ir

    i64 = ir.IntType(64)
    module = ir.Module(name=_ENTRY)
    module.triple = ll.get_default_triple()
    callee = ir.Function(module, ir.FunctionType(i64, [i64] * width), name=symbol)
    entry = ir.Function(module, ir.FunctionType(i64, [i64.as_pointer()]), name=_ENTRY)
    builder = ir.IRBuilder(entry.append_basic_block())
    values = [builder.load(builder.gep(entry.args[0], [ir.Constant(i64, i)])) for i in range(width)]
    builder.ret(builder.call(callee, values))
    if handoff.supported_triple(module.triple):
        handoff.add_functions(module)
    parsed = ll.parse_assembly(str(module), context=ll.create_context())  # not numba's (shared) context
    parsed.verify()
    return bytes(ll.Target.from_default_triple().create_target_machine(jit=True).emit_object(parsed))


def load(name: str, layout: tuple[object, ...]) -> NativeKernel | None:
    """Kernel ``name``'s machine code for argument ``layout`` from the native cache, ready to
    call; None when there is none that fits this machine (or it is damaged, or a symbol it
    needs is missing): numba then loads or compiles the kernel."""
    if not supported() or not _flat_layout(layout):
        return None
    with _LOCK:
        try:
            folder = directory()
            if folder is None:
                return None
            data = _read_own(_path(folder, name, _key(name, layout)))
        except (OSError, ImportError, ValueError):
            return None
        if data is None:
            return None
        parsed = _parse(data)
        if parsed is None:
            return None
        header, objects = parsed
        addresses = _LOADED.get(header["sha256"])
        if addresses is None:
            addresses = _link(objects, _SYMBOLS)
            if addresses is None:  # not x86-64, or the small loader refused it: LLVM's loader then
                try:
                    addresses = _add(_llvm(), objects, _SYMBOLS)
                except (RuntimeError, OSError, ImportError, ValueError):  # refused: numba's code then
                    addresses = None
            if addresses is None:
                return None
            _LOADED[header["sha256"]] = addresses
        found = handoff.Handoff(addresses, keep=_ENGINES) if all(addresses.get(f) for f in handoff.FUNCTIONS) else None
        return NativeKernel(name, addresses[_ENTRY], layout, found)


#: The symbols :func:`load` looks up: the entry point (needed) and the handoff functions (on x86-64).
_SYMBOLS = (_ENTRY, *handoff.FUNCTIONS)


def _link(objects: list[bytes], wanted: tuple[str, ...]) -> dict[str, int] | None:
    """Load ``objects`` with the small loader (:mod:`.elf`, x86-64 only: no LLVM to load) and
    return the addresses of those of ``wanted`` they define; None when it refuses them or the
    first symbol is missing."""
    if platform.machine() != "x86_64" or not _LINKER:
        return None
    symbols = _numba_symbols()
    if symbols is None:
        return None
    process = ctypes.CDLL(None)

    def resolve(name: str) -> int | None:
        found = symbols.get(name)
        if found is None:
            try:  # process[name]: dlsym, never one of the CDLL object's own attributes
                found = ctypes.cast(process[name], ctypes.c_void_p).value
            except (AttributeError, TypeError, ValueError, ctypes.ArgumentError):
                return None
        return found

    linked = elf.link(objects, resolve)
    if linked is None or not linked.symbols.get(wanted[0]):
        return None
    _ENGINES.append(linked)
    return {s: linked.symbols[s] for s in wanted if linked.symbols.get(s)}


#: Whether the small loader is tried first (tests turn it off to check LLVM's loader).
_LINKER = True


def _read_own(path: pathlib.Path) -> bytes | None:
    """The bytes of ``path`` when this user owns it and no one else may write it (machine code a
    run executes: never from a file another user could have planted); else None. A file in use
    has its time refreshed (:func:`_prune` removes those unused for a month)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
            return None
        data = f.read()
    if st.st_mtime < time.time() - 86400:  # in use: not pruned (its time refreshed once a day at most)
        with contextlib.suppress(OSError):
            os.utime(path)
    return data


def _add(ll: Any, objects: list[bytes], wanted: tuple[str, ...]) -> dict[str, int] | None:
    """Load ``objects`` into an execution engine of their own (two files may define the same
    symbols: numba names a kernel by its signature) and return the addresses of those of
    ``wanted`` they define; None when the first is missing, or numba's helpers or a symbol
    they need cannot be found (checked first: LLVM ends the process on a symbol it cannot
    resolve)."""
    if not _define_numba_symbols(ll):
        return None
    target = ll.Target.from_default_triple().create_target_machine(jit=True)
    # an LLVM context of its own: llvmlite's global one is numba's, which a numba compile on
    # another thread may be using (numba guards it with its own lock, not taken here)
    context = ll.create_context()
    engine = ll.create_mcjit_compiler(ll.parse_assembly("", context=context), target)
    defined: set[str] = set()
    for obj in objects:
        needs = undefined_symbols(obj)
        if needs is None:
            return None
        defined |= set(defined_symbols(obj) or ())
        if any(s not in defined and ll.address_of_symbol(s) is None for s in needs):
            return None
    for obj in objects:
        engine.add_object_file(ll.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    found = {s: int(engine.get_function_address(s)) for s in wanted if s in defined}
    if not found.get(wanted[0]):
        return None
    _ENGINES.append((engine, context))
    return {s: a for s, a in found.items() if a}


def _parse(data: bytes) -> tuple[dict[str, Any], list[bytes]] | None:
    """(header, object files) of a native cache file; None when it is not one or is damaged."""
    if not data.startswith(_MAGIC):
        return None
    end = data.find(b"\n", len(_MAGIC))
    if end < 0:
        return None
    try:
        header = json.loads(data[len(_MAGIC):end])
    except ValueError:
        return None
    body = data[end + 1:]
    if not isinstance(header, dict) or header.get("sha256") != hashlib.sha256(body).hexdigest():
        return None
    sizes = header.get("sizes")
    if not isinstance(sizes, list) or not all(isinstance(n, int) and n > 0 for n in sizes) or sum(sizes) != len(body):
        return None
    objects, at = [], 0
    for n in sizes:
        objects.append(body[at:at + n])
        at += n
    return header, objects


_LOCK = threading.Lock()
#: What holds loaded machine code (LLVM's engines with their contexts, or the small loader's
#: mappings; kept for the rest of the process, as numba keeps its own), and each object's
#: addresses of _SYMBOLS by the object's checksum.
_ENGINES: list[Any] = []
_LOADED: dict[str, dict[str, int]] = {}
#: Whether the symbols numba's machine code calls are defined in LLVM's symbol table.
_DEFINED: list[bool] = []


def _llvm() -> Any:
    """llvmlite's binding layer, with the native target set up (its assembly parser too: the
    handoff functions make a system call in inline assembly)."""
    import llvmlite.binding as ll

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    ll.initialize_native_asmparser()
    return ll


def _define_numba_symbols(ll: Any) -> bool:
    """Define the symbols numba's machine code calls (:func:`_numba_symbols`) in LLVM's symbol
    table; False when numba's C helpers cannot be loaded."""
    if _DEFINED:
        return _DEFINED[0]
    symbols = _numba_symbols()
    for name, address in (symbols or {}).items():
        ll.add_symbol(name, address)
    _DEFINED.append(symbols is not None)
    return _DEFINED[0]


@functools.cache
def _numba_symbols() -> dict[str, int] | None:
    """The symbols numba's machine code calls, at the addresses numba itself defines them at
    (numba.core.base._load_global_helpers): its C helpers, Python's None and exception types
    (by the objects' own addresses); None when numba's C helpers cannot be loaded. Any other
    symbol is the process's own (Python's C API, the C library)."""
    helpers = _numba_helpers()
    if helpers is None:
        return None
    symbols = {"_Py_NoneStruct": id(None)}
    for table in helpers:
        for py_name, address in table.items():
            symbols[f"numba_{py_name}"] = address
    for obj in vars(builtins).values():
        if isinstance(obj, type) and issubclass(obj, BaseException):
            symbols[f"PyExc_{obj.__name__}"] = id(obj)
    return symbols


def _numba_helpers() -> list[dict[str, int]] | None:
    """The ``c_helpers`` tables of numba's C extension modules, loaded without importing the
    numba package (the modules are self-contained C; numba loads the same files, so the
    addresses are the ones numba itself registers)."""
    folder = _numba_folder()
    if folder is None:
        return None
    tables = []
    for module in _HELPER_MODULES:
        full = f"numba.{module}"
        found = sys.modules.get(full)
        if found is None:
            path = next((folder / f"{module}{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES
                         if (folder / f"{module}{suffix}").is_file()), None)
            if path is None:
                return None
            try:
                loader = importlib.machinery.ExtensionFileLoader(full, str(path))
                spec = importlib.util.spec_from_file_location(full, path, loader=loader)
                if spec is None:
                    return None
                found = importlib.util.module_from_spec(spec)
                loader.exec_module(found)
            except (ImportError, OSError):
                return None
        table = getattr(found, "c_helpers", None)
        if not isinstance(table, dict):
            return None
        tables.append(table)
    return tables


def _flat_layout(layout: tuple[object, ...]) -> bool:
    """Whether every argument of ``layout`` (kernel.layout_of) is one the wrapper's flat call
    passes: an array of a fixed-size numeric type, or a Python int (numba's int64)."""
    for item in layout:
        if isinstance(item, tuple):
            if item[0][1:2] not in ("i", "u", "f", "b"):
                return False
        elif item is not int:
            return False
    return True


def _width(layout: tuple[object, ...]) -> int:
    """How many 64-bit values the flat call passes for ``layout``."""
    return sum(5 + 2 * int(item[1]) if isinstance(item, tuple) else 1 for item in layout)


class NativeKernel:
    """A kernel's machine code from the native cache, called like the numba kernel with the
    arguments of the layout it was compiled for, and returning its int64 result.

    Arguments of another layout are a TypeError, never a wrong call. A run calls its kernel
    with the same arrays batch after batch, on each of its threads, only the call's counters
    and the thread's row differing (the last two arguments): the flat values of the others
    (pointers, shapes, strides) are worked out and their layout checked once, and reused while
    the very same array objects come again, so an array must not be reshaped or resized in
    place between two calls (the engine never does). They are held by weak references: a
    finished run's arrays are not kept alive."""

    def __init__(self, name: str, address: int, layout: tuple[object, ...],
                 functions: handoff.Handoff | None = None) -> None:
        self.__name__ = name
        self.layout = layout
        #: The entry point (``int64 entry(int64 *flat)``), and the functions that hand a share of it
        #: to a waiting thread (None where the file has none: not x86-64).
        self.address = address
        self.handoff = functions
        self._width = _width(layout)
        self._entry: Callable[[int], int] = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(address)
        #: (the last bound arguments but their last two, their flat values: see bind); replaced whole
        #: (one attribute store), so threads calling at once at worst work it out twice.
        self._last: tuple[tuple[Any, ...], npt.NDArray[np.int64]] | None = None

    def __repr__(self) -> str:
        return f"<native kernel {self.__name__}>"

    def __call__(self, *args: Any) -> int:
        return self.call(self.flat(args))

    def flat(self, args: tuple[Any, ...]) -> npt.NDArray[np.int64]:
        """The flat arguments of a call with ``args`` (what :meth:`call` takes): the arrays in it
        must stay alive, unchanged in shape, until that call has returned."""
        head, tail = args[:-2], args[-2:]
        last = self._last
        if last is None or not _same(last[0], head):
            last = self.bind(args, layout_of(args))
        elif layout_of(tail) != self.layout[-2:]:
            raise TypeError(f"{self.__name__}: arguments of another layout than the machine code's")
        flat = np.empty(self._width, dtype=np.int64)
        prefix = last[1]
        flat[:prefix.size] = prefix
        flat[prefix.size:] = _flat(tail)
        return flat

    def call(self, flat: npt.NDArray[np.int64]) -> int:
        """Run the kernel on flat arguments from :meth:`flat` (the GIL released meanwhile)."""
        return int(self._entry(_data_pointer()(flat)))

    def bind(self, args: tuple[Any, ...], layout: tuple[object, ...]) -> tuple[tuple[Any, ...], npt.NDArray[np.int64]]:
        """Work out the flat values of ``args`` (a call's arguments; ``layout`` is their
        :func:`layout_of`, which the engine has already worked out to find this kernel) for the
        calls that follow with the same arrays. Raises TypeError when ``layout`` is not the
        machine code's."""
        if layout != self.layout:
            raise TypeError(f"{self.__name__}: arguments of another layout than the machine code's")
        head = args[:-2]
        last = (tuple(weakref.ref(a) if isinstance(a, np.ndarray) else a for a in head),
                np.array(_flat(head), dtype=np.int64))
        self._last = last
        return last


def _same(kept: tuple[Any, ...], args: tuple[Any, ...]) -> bool:
    """Whether ``args`` are the very arrays (and equal other values) ``kept`` refers to."""
    if len(kept) != len(args):
        return False
    for k, a in zip(kept, args, strict=True):
        if isinstance(k, weakref.ref):
            if k() is not a:
                return False
        elif type(k) is not type(a) or k != a:
            return False
    return True


def _flat(args: tuple[Any, ...]) -> list[int]:
    """The 64-bit values of ``args`` as the C wrapper takes them: an array as numba's array
    structure split into its fields (null meminfo and parent, size, item size, data pointer,
    shape, strides); an int as itself."""
    data = _data_pointer()
    flat: list[int] = []
    extend = flat.extend
    for a in args:
        if isinstance(a, np.ndarray):
            extend((0, 0, a.size, a.itemsize, data(a)))
            extend(a.shape)
            extend(a.strides)
        else:
            flat.append(int(a))
    return flat


def _interface_pointer(a: npt.NDArray[Any]) -> int:
    """An array's data pointer, as numpy hands it out (about 1.2 us: it builds a dict)."""
    return int(a.__array_interface__["data"][0])


@functools.cache
def _data_pointer() -> Callable[[npt.NDArray[Any]], int]:
    """How to read an array's data pointer quickly: straight from the array object (numpy's
    array structure starts with it, after Python's object header; about 0.2 us), where probe
    arrays show that layout in this process (CPython, this numpy); else through
    ``__array_interface__``. A run's first kernel call reads some forty of them."""
    if sys.implementation.name != "cpython":  # id() is an address on CPython alone
        return _interface_pointer
    offset, read = object.__basicsize__, ctypes.c_void_p.from_address

    def direct(a: npt.NDArray[Any]) -> int:
        return read(id(a) + offset).value or 0

    probes = (np.arange(7.0), np.arange(12).reshape(3, 4)[1:, ::2], np.zeros(3, dtype=np.uint8)[1:])
    if all(direct(p) == _interface_pointer(p) for p in probes):
        return direct
    return _interface_pointer


#: How to read an array's data pointer quickly (:func:`_data_pointer`): ``data_pointer()(a)``.
data_pointer = _data_pointer
