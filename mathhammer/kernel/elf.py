"""A small loader of relocatable x86-64 ELF objects (numba's kernels), so a warm run can call
kept machine code without loading LLVM.

LLVM's own loader (MCJIT, through llvmlite) costs a warm run 50-70 CPU-milliseconds and 45 MB
for what amounts to copying a few sections into memory and patching their addresses in. This
module does that for the objects numba writes for x86-64 with its large code model: the
sections the program uses (``SHF_ALLOC``; the unwind tables are left out: nothing unwinds
through a kernel), laid out in three private mappings (code, read-only data, writable data), then the relocations
numba's objects carry (absolute 64-bit addresses; 32-bit PC-relative ones too), then the code mapping
made read-and-execute (it is never writable and executable at once) and the read-only data
read-only, as LLVM's loader does. Anything else (another
machine, a relocation of another kind, a symbol nobody defines, a damaged object) is refused
with None, never guessed at: the caller then falls back to LLVM's loader.
"""

from __future__ import annotations

import ctypes
import mmap
import struct
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Linked", "link"]

_EM_X86_64 = 62
_ET_REL = 1
_SHT_NOBITS, _SHT_RELA, _SHT_REL = 8, 4, 9
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR, _SHF_TLS = 1, 2, 4, 0x400
_SHN_UNDEF, _SHN_ABS, _SHN_COMMON, _SHN_LORESERVE = 0, 0xFFF1, 0xFFF2, 0xFF00
_STB_LOCAL = 0
_STT_SECTION, _STT_GNU_IFUNC = 3, 10
#: The mappings: code (made read-and-execute), read-only data (made read-only), writable data.
_CODE, _CONSTANTS, _DATA = 0, 1, 2
#: Relocations: (size in bytes, PC-relative) by type: numba's large code model writes R_X86_64_64
#: alone outside the unwind tables; the small code model's two are taken too (a test builds them).
_RELOCATIONS = {1: (8, False),  # R_X86_64_64: S + A
                2: (4, True),  # R_X86_64_PC32: S + A - P
                4: (4, True)}  # R_X86_64_PLT32: S + A - P (a direct call: no PLT needed within reach)
_PROT_READ, _PROT_EXEC = mmap.PROT_READ, mmap.PROT_EXEC
#: Sections left out: unwind tables (and their relocations, whose target is then not loaded).
_SKIPPED = (b".eh_frame",)


class Linked:
    """Loaded machine code: the mappings (kept for the rest of the process, as LLVM keeps its
    own; never to be written through: the code and constants are no longer writable, whatever
    the mmap objects believe) and the address of every global symbol the objects define."""

    def __init__(self, maps: list[mmap.mmap], symbols: dict[str, int]) -> None:
        self._maps = maps
        self.symbols = symbols


class _Object:
    """One parsed object: its sections (type, flags, offset, size, link, info, alignment,
    entry size) and names."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not a 64-bit little-endian ELF object")
        e_type, e_machine = struct.unpack_from("<HH", data, 0x10)
        if e_type != _ET_REL or e_machine != _EM_X86_64:
            raise ValueError("not a relocatable x86-64 object")
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        if shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
            raise ValueError("damaged section table")
        self.data = data
        self.sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        for sec in self.sections:
            if sec[1] != _SHT_NOBITS and sec[4] + sec[5] > len(data):
                raise ValueError("a section beyond the end of the object")
        names = self.sections[shstrndx]
        self.names = [self._string(names[4], names[5], sec[0]) for sec in self.sections]

    def _string(self, start: int, size: int, at: int) -> bytes:
        if at >= size:
            raise ValueError("a name beyond its string table")
        end = self.data.index(b"\0", start + at, start + size)
        return self.data[start + at:end]

    def loaded(self, index: int) -> bool:
        sec = self.sections[index]
        return bool(sec[2] & _SHF_ALLOC) and self.names[index] not in _SKIPPED

    def symbols(self) -> list[tuple[bytes, int, int, int, int]]:
        """(name, binding, section index, value, size) of each symbol table entry (a section's
        own symbol unnamed: it stands for its section)."""
        out: list[tuple[bytes, int, int, int, int]] = []
        tables = [sec for sec in self.sections if sec[1] == 2]  # SHT_SYMTAB
        if len(tables) != 1 or tables[0][9] != 24 or tables[0][5] % 24:
            raise ValueError("not one symbol table of 24-byte entries")
        table = tables[0]
        strings = self.sections[table[6]]
        for at in range(table[4], table[4] + table[5], 24):
            st_name, st_info, _other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", self.data, at)
            name = self._string(strings[4], strings[5], st_name) if st_name else b""
            if st_info & 0xF == _STT_SECTION:
                name = b""
            elif st_info & 0xF == _STT_GNU_IFUNC:
                raise ValueError("an indirect function: its address is its resolver's")
            out.append((name, st_info >> 4, st_shndx, st_value, st_size))
        return out


def _align(at: int, alignment: int) -> int:
    return -(-at // max(1, alignment)) * max(1, alignment)


def link(objects: Sequence[bytes], resolve: Callable[[str], int | None]) -> Linked | None:
    """Load ``objects`` (relocatable x86-64 ELF) into memory of their own, with every symbol
    they need but do not define from ``resolve`` (its address, None when unknown). Returns the
    loaded code, or None when it cannot be loaded exactly (see the module docstring)."""
    try:
        parsed = [_Object(data) for data in objects]
        return _link(parsed, resolve)
    except (ValueError, struct.error, IndexError, OSError, OverflowError, UnicodeDecodeError):
        return None


def _link(parsed: list[_Object], resolve: Callable[[str], int | None]) -> Linked | None:
    # lay the loaded sections out: code, constants and writable data in mappings of their own
    places: list[dict[int, tuple[int, int]]] = []  # per object: section -> (mapping, offset)
    sizes = [0, 0, 0]
    for obj in parsed:
        where: dict[int, tuple[int, int]] = {}
        for i, sec in enumerate(obj.sections):
            if not obj.loaded(i):
                continue
            if sec[2] & _SHF_EXECINSTR and sec[2] & _SHF_WRITE or sec[2] & _SHF_TLS:
                return None  # writable code, or thread-local storage: refused
            if sec[8] > mmap.PAGESIZE:
                return None  # aligned beyond a page: a mapping's start is not enough
            kind = _CODE if sec[2] & _SHF_EXECINSTR else _DATA if sec[2] & _SHF_WRITE or sec[1] == _SHT_NOBITS \
                else _CONSTANTS
            at = _align(sizes[kind], sec[8] or 1)
            where[i] = (kind, at)
            sizes[kind] = at + sec[5]
        places.append(where)
    # common symbols (numba's environment pointers): zeroed room of their own in the data mapping
    tables = [obj.symbols() for obj in parsed]
    common: dict[str, int] = {}
    for table in tables:
        for name, binding, shndx, value, size in table:
            if shndx == _SHN_COMMON:
                if binding == _STB_LOCAL or not name or name.decode() in common or value > mmap.PAGESIZE:
                    return None
                at = _align(sizes[_DATA], value)
                common[name.decode()] = at
                sizes[_DATA] = at + size
    maps = [mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) for size in sizes]
    bases = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in maps]
    for obj, where in zip(parsed, places, strict=True):
        for i, (kind, at) in where.items():
            sec = obj.sections[i]
            if sec[1] != _SHT_NOBITS:  # NOBITS (.bss) stays zero, as a fresh mapping is
                maps[kind][at:at + sec[5]] = obj.data[sec[4]:sec[4] + sec[5]]

    # every object's global symbols first: one object may call another's
    globals_ = {name: bases[_DATA] + at for name, at in common.items()}
    for n, table in enumerate(tables):
        for name, binding, shndx, value, _size in table:
            if binding == _STB_LOCAL or not name or shndx in (_SHN_UNDEF, _SHN_COMMON):
                continue
            if name.decode() in globals_:
                return None  # defined twice: which one a call meant is not known
            if shndx == _SHN_ABS:
                globals_[name.decode()] = value
            elif shndx < _SHN_LORESERVE and shndx in places[n]:
                kind, at = places[n][shndx]
                globals_[name.decode()] = bases[kind] + at + value
            else:
                return None  # common symbols, or defined in a section not loaded
    for n, (obj, table) in enumerate(zip(parsed, tables, strict=True)):
        for rela in obj.sections:
            if rela[1] == _SHT_REL and obj.loaded(rela[7]):
                return None  # relocations without addends: not what LLVM writes for x86-64
            if rela[1] != _SHT_RELA or not obj.loaded(rela[7]):
                continue
            if rela[9] != 24 or rela[5] % 24:
                return None
            target = rela[7]
            kind, base = places[n][target]
            for at in range(rela[4], rela[4] + rela[5], 24):
                r_offset, r_info, r_addend = struct.unpack_from("<QQq", obj.data, at)
                how = _RELOCATIONS.get(r_info & 0xFFFFFFFF)
                if how is None or r_offset + how[0] > obj.sections[target][5]:
                    return None
                symbol = _symbol_address(table[r_info >> 32], n, globals_, places, bases, resolve)
                if symbol is None:
                    return None
                size, relative = how
                result = symbol + r_addend - (bases[kind] + base + r_offset if relative else 0)
                if size == 8:
                    patch = struct.pack("<Q", result & 0xFFFFFFFFFFFFFFFF)
                elif -(1 << 31) <= result < (1 << 31):
                    patch = struct.pack("<i", result)
                else:
                    return None  # out of reach of a 32-bit displacement
                maps[kind][base + r_offset:base + r_offset + size] = patch
    if not (_protect(bases[_CODE], len(maps[_CODE]), _PROT_READ | _PROT_EXEC)
            and _protect(bases[_CONSTANTS], len(maps[_CONSTANTS]), _PROT_READ)):
        return None
    return Linked(maps, globals_)


def _symbol_address(entry: tuple[bytes, int, int, int, int], n: int, globals_: dict[str, int],
                    places: list[dict[int, tuple[int, int]]], bases: list[int],
                    resolve: Callable[[str], int | None]) -> int | None:
    """The address a relocation's symbol stands for (``entry`` of object ``n``'s symbol table);
    None when nobody defines it or it lies in a section not loaded."""
    name, binding, shndx, value, _size = entry
    if shndx == _SHN_UNDEF:
        text = name.decode()
        found = globals_.get(text)
        if found is not None:
            return found
        try:
            return resolve(text) or None
        except Exception:  # noqa: BLE001 - a lookup that fails is a symbol nobody defines
            return None
    if shndx == _SHN_ABS:
        return value
    if binding != _STB_LOCAL and name:  # defined here, or common
        return globals_.get(name.decode())
    if shndx in places[n]:
        kind, at = places[n][shndx]
        return bases[kind] + at + value
    return None


def _protect(address: int, size: int, prot: int) -> bool:
    """Give a mapping these protections (code: read and execute; constants: read)."""
    libc: Any = ctypes.CDLL(None, use_errno=True)
    mprotect = libc.mprotect
    mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    mprotect.restype = ctypes.c_int
    return mprotect(address, size, prot) == 0
