"""Issue 8 item 4: warm runs load the kernels' machine code without numba (mathhammer.kernel.native).

The native kernel must compute exactly what numba's does: every kernel path is run both ways on
the same arguments and every output array compared. The cache must never run code that does not
fit (another source, another numba setting, a damaged file) and never kill the process (a symbol
LLVM cannot resolve), and a warm process must not import numba at all."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest

from mathhammer import api, kernel
from mathhammer.kernel import _cache, native

from . import kernel_cache
from .documents import without_timings

pytestmark = pytest.mark.skipif(not native.supported(), reason="native kernels are kept on 64-bit Linux only")

#: (weapons, target, stages): together they take both kernels and every path of run_chunks.
#: Position of the kernels' ``chunk_trials`` argument (trials of each chunk in a call).
_CHUNK_TRIALS = kernel.run_chunks.py_func.__code__.co_varnames.index("chunk_trials")

CASES = {
    "fast path, breakdown": ("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "T4 SV3+ W2 MODELS10", True),
    "fast path, no breakdown": ("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "T4 SV3+ W2 MODELS10", False),
    "random attacks and damage": ("A D6+1 BS4+ S8 AP-2 D D3+1 [DEVASTATING WOUNDS]", "T8 SV3+ W12 MODELS1", True),
    "hazardous, feel no pain": ("A3 BS3+ S6 AP-1 D2 [HAZARDOUS, LETHAL HITS]", "T5 SV4+ W3 FNP5+ MODELS5", True),
    "unit of two weapons": (["2x A2 BS3+ S4 AP0 D1", "A1 BS4+ S9 AP-3 D D6"], "T4 SV3+ W2 MODELS10", True),
    "queue, no breakdown": (["2x A2 BS3+ S4 AP0 D1", "A4 BS4+ S5 AP-1 D2"], "T4 SV4+ W2 MODELS10", False),
    "queue, breakdown": (["2x A2 BS3+ S4 AP0 D1", "A4 BS4+ S5 AP-1 D2"], "T4 SV4+ W2 MODELS10", True),
}


def _copy(a: Any) -> Any:
    """A copy of an argument with the same layout (a read-only array stays read-only; the
    engine passes contiguous arrays only, which the spy below checks)."""
    if not isinstance(a, np.ndarray):
        return a
    c = a.copy()
    c.flags.writeable = a.flags.writeable
    return c


def _calls(weapons: Any, target: str, stages: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The arguments of every kernel call of a short run (copies, taken before the call)."""
    seen: list[tuple[Any, ...]] = []
    real = kernel.simulate_chunks

    def spy(*args: Any, **kw: Any) -> None:
        copies = tuple(_copy(a) for a in args)
        assert kernel.layout_of(copies) == kernel.layout_of(args)
        seen.append((kw["kernel"].__name__, copies))
        real(*args, **kw)

    with monkeypatch.context() as mp:
        mp.setattr(kernel, "simulate_chunks", spy)
        api.run(weapons, target, trials=3_000, seed=11, threads=2, stages=stages)  # a row for each of 2 threads
    return seen


def _native_of(name: str, args: tuple[Any, ...], folder: Path, monkeypatch: pytest.MonkeyPatch) -> native.NativeKernel:
    """Kernel ``name`` for ``args`` as the native cache in ``folder`` gives it back, written from
    numba's machine code for them."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(folder))
    dispatcher = getattr(kernel, name)
    kernel.prepare(dispatcher, args)
    sig = tuple(numba.typeof(a) for a in args)
    kept = _cache.object_code(dispatcher, sig)
    assert kept is not None, "numba's cache entry holds one object"
    layout = kernel.layout_of(args)
    assert native.save(name, layout, *kept) is not None
    loaded = native.load(name, layout)
    assert loaded is not None
    return loaded


def _loaders(monkeypatch: pytest.MonkeyPatch, loader: str) -> list[str]:
    """Make native.load use ``loader`` ("small": mathhammer.kernel.elf, or "llvm") from now on,
    forgetting what it loaded before; returns the list of the loaders it then uses."""
    used: list[str] = []
    real_link, real_add = native.elf.link, native._add
    monkeypatch.setattr(native, "_LOADED", {})
    monkeypatch.setattr(native, "_LINKER", loader == "small")
    monkeypatch.setattr(native.elf, "link", lambda *a: used.append("small") or real_link(*a))
    monkeypatch.setattr(native, "_add", lambda *a: used.append("llvm") or real_add(*a))
    return used


_X86_64 = platform.machine() == "x86_64"


@pytest.mark.parametrize("loader", ["small", "llvm"])
@pytest.mark.parametrize("case", list(CASES))
def test_native_kernel_computes_what_numbas_does(case: str, loader: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every output array, the random streams and the claim counters come out bit for bit the
    same from the native kernel (loaded by the small loader of mathhammer.kernel.elf or by
    LLVM's) and from numba's, call after call (the streams carry over)."""
    if loader == "small" and not _X86_64:
        pytest.skip("the small loader loads x86-64 objects only")
    weapons, target, stages = CASES[case]
    calls = _calls(weapons, target, stages, monkeypatch)
    assert calls
    name = calls[0][0]
    assert name == ("run_queue_chunks" if case.startswith("queue") else "run_chunks")
    first = calls[0][1]
    full = (*first, kernel.shapes.new_claims(), 0)
    used = _loaders(monkeypatch, loader)
    fast = _native_of(name, full, tmp_path, monkeypatch)
    assert used == [loader]  # the small loader took it (or LLVM's alone was asked)
    by_numba = [_copy(a) for a in first]
    by_native = [_copy(a) for a in first]
    slow = getattr(kernel, name)
    for _ in range(3):  # later calls continue the streams left by the first
        claims_numba, claims_native = kernel.shapes.new_claims(), kernel.shapes.new_claims()
        assert slow(*by_numba, claims_numba, 0) == fast(*by_native, claims_native, 0)
        assert np.array_equal(claims_numba, claims_native)
        for i, (x, y) in enumerate(zip(by_numba, by_native, strict=True)):
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y), f"argument {i} differs"
    damage = by_native[kernel._ARG_OUT_DAMAGE]
    assert damage.sum() > 0  # the calls did run trials


def test_a_run_uses_the_native_kernel_and_gets_the_same_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a native file in place a run loads it (not numba's dispatcher) and, for a seed,
    gives numba's result exactly."""
    weapons, target, stages = CASES["fast path, breakdown"]
    with monkeypatch.context() as mp:  # numba's kernel for certain: no native file read, none remembered
        mp.setenv(native.SWITCH, "0")
        mp.setattr(kernel, "_NAMED", {})
        seen: list[Any] = []
        real_simulate = kernel.simulate_chunks
        mp.setattr(kernel, "simulate_chunks", lambda *a, **kw: (seen.append(kw["kernel"]), real_simulate(*a, **kw)))
        by_numba = api.run(weapons, target, trials=20_000, seed=3, threads=2, stages=stages)
    assert seen and not any(isinstance(k, native.NativeKernel) for k in seen)
    calls = _calls(weapons, target, stages, monkeypatch)
    _native_of("run_chunks", (*calls[0][1], kernel.shapes.new_claims(), 0), tmp_path, monkeypatch)
    monkeypatch.setattr(kernel, "_NAMED", {})
    used: list[Any] = []
    real = kernel.simulate_chunks

    def spy(*args: Any, **kw: Any) -> None:
        used.append(kw["kernel"])
        real(*args, **kw)

    monkeypatch.setattr(kernel, "simulate_chunks", spy)
    by_native = api.run(weapons, target, trials=20_000, seed=3, threads=2, stages=stages)
    assert used and all(isinstance(k, native.NativeKernel) for k in used)
    assert np.array_equal(by_native.damage.counts, by_numba.damage.counts)
    assert without_timings(by_native.to_dict()) == without_timings(by_numba.to_dict())  # stages too


def test_first_run_keeps_the_kernel_and_a_new_process_runs_without_numba(tmp_path: Path) -> None:
    """A run whose kernel numba provides (here from a copy of numba's cache: no compile) writes
    the native file; a later process then neither imports numba nor compiles (nor, on x86-64,
    loads LLVM), and prints the same numbers for the same seed."""
    script = textwrap.dedent("""
        import sys
        from mathhammer import api
        r = api.run("A10 BS3+ S5 AP-1 D2 [SUSTAINED HITS 1]", "T4 SV3+ W2 MODELS10", trials=5000, seed=9)
        print(list(r.damage.counts), "llvmlite.binding" in sys.modules, "numba" in sys.modules)
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    kernel_cache.seed(env, kernel_cache.warm_files())
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "compiling" not in first.stderr, "the copied numba cache was not used"
    assert list((tmp_path / "mathhammer-native").glob("run_chunks-*.native"))
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    counts_first, _, numba_first = first.stdout.rsplit(" ", 2)
    counts_second, llvm_second, numba_second = second.stdout.rsplit(" ", 2)
    assert counts_first == counts_second
    assert numba_first.strip() == "True" and numba_second.strip() == "False"
    if _X86_64:  # the small loader: not LLVM's either
        assert llvm_second == "False"
    assert "compiling" not in second.stderr


def _kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[object, ...], Path]:
    """(layout, file) of a native run_chunks written into ``tmp_path``."""
    weapons, target, stages = CASES["fast path, no breakdown"]
    args = (*_calls(weapons, target, stages, monkeypatch)[0][1], kernel.shapes.new_claims(), 0)
    _native_of("run_chunks", args, tmp_path, monkeypatch)
    (path,) = (tmp_path / "mathhammer-native").glob("run_chunks-*.native")
    return kernel.layout_of(args), path


def _objects(path: Path) -> list[bytes]:
    parsed = native._parse(path.read_bytes())
    assert parsed is not None
    return parsed[1]


def _patched(obj: bytes, at: int, value: bytes) -> bytes:
    return obj[:at] + value + obj[at + len(value):]


@pytest.mark.skipif(not _X86_64, reason="the small loader loads x86-64 objects only")
def test_the_small_loader_refuses_what_it_cannot_load_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another machine, a relocation of a kind it does not apply, a damaged object, a symbol
    nobody defines or one defined twice: None (LLVM's loader then), never a guess or a crash."""
    import struct

    _, path = _kept(tmp_path, monkeypatch)
    obj, entry = _objects(path)
    symbols = native._numba_symbols()
    assert symbols is not None
    process = ctypes.CDLL(None)

    def resolve(name: str) -> int | None:
        return symbols.get(name) or ctypes.cast(process[name], ctypes.c_void_p).value

    linked = native.elf.link([obj, entry], resolve)
    assert linked is not None and linked.symbols[native._ENTRY]
    shoff = struct.unpack_from("<Q", obj, 0x28)[0]
    rela = next(shoff + i * 64 for i in range(struct.unpack_from("<H", obj, 0x3C)[0])
                if struct.unpack_from("<I", obj, shoff + i * 64 + 4)[0] == 4)  # the first SHT_RELA section
    first_relocation = struct.unpack_from("<Q", obj, rela + 24)[0]
    assert native.elf.link([_patched(obj, first_relocation + 8, struct.pack("<I", 10)), entry], resolve) is None
    assert native.elf.link([_patched(obj, 0x12, struct.pack("<H", 183)), entry], resolve) is None  # aarch64
    assert native.elf.link([obj[:len(obj) // 2], entry], resolve) is None
    assert native.elf.link([obj, entry], lambda name: None) is None
    assert native.elf.link([obj, entry, entry], resolve) is None  # mathhammer_entry twice
    first_info = first_relocation + 8
    assert native.elf.link([_patched(obj, first_info + 4, struct.pack("<I", 1 << 30)), entry], resolve) is None
    assert native.elf.link([_patched(obj, first_relocation, struct.pack("<Q", 1 << 40)), entry], resolve) is None
    assert native.elf.link([obj, entry], lambda name: 1 // 0) is None  # a lookup that fails


def test_load_falls_back_to_llvms_loader_when_the_small_one_refuses(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    layout, _ = _kept(tmp_path, monkeypatch)
    used = _loaders(monkeypatch, "small")
    monkeypatch.setattr(native.elf, "link", lambda *a: used.append("small") and None)
    assert native.load("run_chunks", layout) is not None
    assert used == (["small", "llvm"] if _X86_64 else ["llvm"])


def test_the_processor_llvm_names_is_kept_for_the_boot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key names the processor as LLVM does (what numba compiles for); a warm run reads it
    from the native folder instead of loading LLVM, for the same boot of the same processors
    only, and asks LLVM again after a reboot."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    boot = tmp_path / "boot_id"
    boot.write_text("1111\n")
    monkeypatch.setattr(native, "_BOOT_ID", str(boot))
    asked: list[bool] = []
    real_llvm = native._llvm
    monkeypatch.setattr(native, "_llvm", lambda: asked.append(True) or real_llvm())
    ll = real_llvm()
    truth = [ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten()]
    native._cpu.cache_clear()
    try:
        assert native._cpu() == truth and len(asked) == 1
        assert len(list((tmp_path / "mathhammer-native").glob("cpu-*.cpu"))) == 1
        native._cpu.cache_clear()
        assert native._cpu() == truth and len(asked) == 1  # read back: LLVM not asked
        boot.write_text("2222\n")  # rebooted
        native._cpu.cache_clear()
        assert native._cpu() == truth and len(asked) == 2
        monkeypatch.setattr(native, "_BOOT_ID", str(tmp_path / "none"))  # no boot id: asked every time
        native._cpu.cache_clear()
        assert native._cpu() == truth and len(asked) == 3
    finally:
        native._cpu.cache_clear()


@pytest.mark.skipif(not _X86_64, reason="the small loader loads x86-64 objects only")
def test_the_small_loader_applies_pc_relative_relocations() -> None:
    """Objects of LLVM's small code model (what numba's do not use, but the loader takes): a
    RIP-relative load of a constant (R_X86_64_PC32) and a call to another object's function
    (R_X86_64_PLT32) come out right; a call out of 32-bit reach is refused."""
    import llvmlite.binding as ll

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    twice = "define i64 @twice(i64 %x) noinline {\n  %y = mul i64 %x, 2\n  ret i64 %y\n}\n"
    entry = textwrap.dedent("""
        @table = private unnamed_addr constant [4 x i64] [i64 10, i64 20, i64 30, i64 40]
        declare i64 @twice(i64)
        define i64 @entry(i64 %i) {
          %p = getelementptr [4 x i64], ptr @table, i64 0, i64 %i
          %v = load i64, ptr %p
          %r = call i64 @twice(i64 %v)
          ret i64 %r
        }
    """)
    machine = ll.Target.from_default_triple().create_target_machine(codemodel="small", reloc="pic", opt=2)
    objects = []
    for source in (twice, entry):
        module = ll.parse_assembly(source, context=ll.create_context())
        objects.append(bytes(machine.emit_object(module)))
    linked = native.elf.link(objects, lambda name: None)
    assert linked is not None
    call = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(linked.symbols["entry"])
    assert [call(i) for i in range(4)] == [20, 40, 60, 80]
    assert native.elf.link(objects[1:], lambda name: 1 << 46) is None  # twice far out of reach


def test_the_file_fits_only_the_same_sources_settings_and_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, _ = _kept(tmp_path, monkeypatch)
    assert native.load("run_chunks", layout) is not None
    assert native.load("run_queue_chunks", layout) is None  # another kernel
    other = (*layout[:-1], np.int64)  # the last argument a numpy integer instead of a Python int
    assert native.load("run_chunks", other) is None
    monkeypatch.setenv("NUMBA_OPT", "1")  # a numba setting that changes the machine code
    assert native.load("run_chunks", layout) is None
    monkeypatch.delenv("NUMBA_OPT")
    monkeypatch.setattr(native, "kernel_sources", lambda: "another version of the kernel sources")
    assert native.load("run_chunks", layout) is None


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "not ours", "header"])
def test_a_damaged_file_is_never_run(damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged file is passed over (numba's code is used) and written afresh by the next run
    that gets the kernel from numba."""
    layout, path = _kept(tmp_path, monkeypatch)
    data = bytearray(path.read_bytes())
    if damage == "flipped byte":
        data[-2000] ^= 0x40
    elif damage == "truncated":
        del data[len(data) // 2:]
    elif damage == "not ours":
        data = bytearray(b"\x7fELF" + bytes(100))
    else:
        data = data.replace(b'"sizes"', b'"sizez"', 1)
    path.write_bytes(bytes(data))
    monkeypatch.setattr(native, "_LOADED", {})
    assert native.load("run_chunks", layout) is None
    monkeypatch.setattr(kernel, "_NAMED", {})
    weapons, target, stages = CASES["fast path, no breakdown"]
    api.run(weapons, target, trials=1_000, seed=1, threads=1, stages=stages)  # numba's code, then kept again
    assert native.load("run_chunks", layout) is not None


def test_a_symbol_nobody_defines_means_no_load_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LLVM ends the process on a symbol it cannot resolve, so every symbol the object needs is
    looked up first (the small loader refuses such an object itself: see above)."""
    layout, _ = _kept(tmp_path, monkeypatch)
    _loaders(monkeypatch, "llvm")
    real = native.undefined_symbols
    monkeypatch.setattr(native, "undefined_symbols", lambda obj: [*real(obj), "mathhammer_no_such_symbol"])
    assert native.load("run_chunks", layout) is None


def test_undefined_symbols_reads_the_objects_symbol_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The symbols numba's object code takes from elsewhere: Python's C API, numba's C helpers,
    libc; never the kernel itself. The entry object needs the kernel's C wrapper alone and
    defines the entry point the file names, and on x86-64 the handoff functions (which need
    nothing from elsewhere either)."""
    _, path = _kept(tmp_path, monkeypatch)
    parsed = native._parse(path.read_bytes())
    assert parsed is not None
    _, (obj, entry) = parsed
    needs = native.undefined_symbols(obj)
    assert needs is not None and "numba_gil_ensure" in needs and "PyErr_Clear" in needs
    assert all(n.startswith(("Py", "_Py", "numba_")) or n in ("memset", "memcpy", "memmove") for n in needs), needs
    defined = native.defined_symbols(obj) or []
    assert not [n for n in defined if n.startswith(".")]  # local constants are not callable from outside
    wrapper = [n for n in defined if n.startswith("cfunc.")]
    assert len(wrapper) == 1 and wrapper[0] not in needs
    assert native.undefined_symbols(entry) == wrapper
    from mathhammer.kernel import handoff

    expected = ["mathhammer_entry", *(handoff.FUNCTIONS if handoff.supported_triple(platform.machine()) else ())]
    assert sorted(native.defined_symbols(entry) or []) == sorted(expected)
    assert native.undefined_symbols(b"not an object") is None
    assert native.undefined_symbols(obj[:200]) is None


def test_the_kept_symbol_is_the_one_in_numbas_cache_entry_even_when_another_process_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numba's symbols carry a per-process counter, and when two processes compile the same
    kernel at once the last one's cache entry wins (CI's two test workers did): the symbol kept
    with the object is the entry's own, which the object defines, not this process's. Two
    dispatchers of one file in this process stand for the two processes."""
    source = tmp_path / "tiny_kernel.py"
    source.write_text("import numba\n\n@numba.njit(cache=True)\ndef f(a):\n    return a.sum()\n")
    a = np.arange(3, dtype=np.int64)

    def compiled(cache: Path) -> Any:
        """f of a fresh import of the file (module name tiny_kernel: only numba's counter differs)."""
        monkeypatch.setattr(numba.config, "CACHE_DIR", str(cache))
        spec = importlib.util.spec_from_file_location("tiny_kernel", source)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        assert mod.f(a) == 3
        return mod.f

    other = compiled(tmp_path / "other")  # the process that wrote last
    mine = compiled(tmp_path / "mine")
    sig = (numba.typeof(a),)
    assert other.overloads[sig].fndesc.mangled_name != mine.overloads[sig].fndesc.mangled_name
    ours = _cache.object_code(mine, sig)
    assert ours is not None and ours[1] in (native.defined_symbols(ours[0]) or ())
    shutil.rmtree(tmp_path / "mine")
    shutil.copytree(tmp_path / "other", tmp_path / "mine")
    kept = _cache.object_code(mine, sig)
    assert kept is not None
    obj, symbol = kept
    assert symbol == other.overloads[sig].fndesc.llvm_cfunc_wrapper_name
    assert symbol in (native.defined_symbols(obj) or ())


def test_a_native_kernel_refuses_arguments_of_another_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, _ = _kept(tmp_path, monkeypatch)
    loaded = native.load("run_chunks", layout)
    assert loaded is not None
    weapons, target, stages = CASES["unit of two weapons"]
    other = _calls(weapons, target, stages, monkeypatch)[0][1]
    wrong = list(other)
    wrong[0] = wrong[0].astype(np.int64)  # int8 stage table -> int64: another layout
    with pytest.raises(TypeError, match="another layout"):
        loaded(*wrong, kernel.shapes.new_claims(), 0)


def _idle_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[object, ...], native.NativeKernel,
                                                                      list[Any]]:
    """(layout, native run_chunks, a copy of a run's arguments with no trials to run)."""
    layout, _ = _kept(tmp_path, monkeypatch)
    loaded = native.load("run_chunks", layout)
    assert loaded is not None
    weapons, target, stages = CASES["fast path, no breakdown"]
    args = [_copy(a) for a in _calls(weapons, target, stages, monkeypatch)[0][1]]
    args[_CHUNK_TRIALS][:] = 0  # no trials: only the call itself
    return layout, loaded, args


def test_prepare_binds_the_runs_arrays_so_its_first_call_checks_nothing_again(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """prepare() has the arguments' layout at hand (it finds the kernel by it): the native kernel
    it returns has their flat values worked out, and its first call with them neither works out
    their layout again nor flattens more than the call's counters and row; other arrays are
    flattened anew. A layout that is not the machine code's is refused by bind as by a call."""
    layout, loaded, args = _idle_call(tmp_path, monkeypatch)
    call = (*args, kernel.shapes.new_claims(), 0)
    monkeypatch.setitem(kernel._NAMED, ("run_chunks", layout), loaded)
    assert kernel.prepare("run_chunks", call) is loaded
    layouts, flats = [], []
    real_layout, real_flat = native.layout_of, native._flat
    monkeypatch.setattr(native, "layout_of", lambda a: layouts.append(len(a)) or real_layout(a))
    monkeypatch.setattr(native, "_flat", lambda a: flats.append(len(a)) or real_flat(a))
    loaded(*call)
    assert (layouts, flats) == ([2], [2])  # the counters and row only
    other = list(call)
    other[kernel._ARG_OUT_DAMAGE] = other[kernel._ARG_OUT_DAMAGE].copy()
    layouts.clear()
    flats.clear()
    loaded(*other)
    assert (layouts, flats) == ([len(call)], [len(call) - 2, 2])
    layouts.clear()
    flats.clear()
    weapons, target, stages = CASES["fast path, no breakdown"]
    api.run(weapons, target, trials=3_000, seed=11, threads=2, stages=stages)  # as _calls ran it: this kernel
    assert flats and layouts and set(layouts) == {2}  # every call of the run: its counters and row only
    wrong = list(call)
    wrong[0] = wrong[0].astype(np.int64)
    with pytest.raises(TypeError, match="another layout"):
        loaded.bind(tuple(wrong), kernel.layout_of(tuple(wrong)))


def test_the_flat_arguments_carry_each_arrays_data_pointer_shape_and_strides() -> None:
    """Whichever way the data pointer is read, it is numpy's own, for plain arrays, views with
    an offset and strides, read-only and empty arrays."""
    base = np.arange(60, dtype=np.int64).reshape(6, 10)
    frozen = np.arange(5, dtype=np.int8)
    frozen.flags.writeable = False
    arrays = (base, base[2:, 3::2], frozen, np.empty((2, 0)), np.zeros(1, dtype=np.uint64)[0:])
    assert native._data_pointer() is not native._interface_pointer  # CPython: read directly
    for a in arrays:
        flat = native._flat((a, 7))
        assert flat == [0, 0, a.size, a.itemsize, a.__array_interface__["data"][0], *a.shape, *a.strides, 7]


def test_the_data_pointer_is_read_through_numpy_when_the_probe_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the array object is not laid out as expected (another Python build, another numpy),
    the probe sees it and numpy's interface is used."""
    native._data_pointer.cache_clear()
    try:
        monkeypatch.setattr(native, "_interface_pointer", lambda a: int(a.__array_interface__["data"][0]) + 8)
        assert native._data_pointer() is native._interface_pointer
    finally:
        native._data_pointer.cache_clear()
    monkeypatch.undo()
    assert native._data_pointer() is not native._interface_pointer


def test_where_native_kernels_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHHAMMER_CACHE_DIR", str(tmp_path / "ours"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert native.directory() == tmp_path / "numba" / "mathhammer-native"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert native.directory() == tmp_path / "ours" / "native"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocked))  # not a folder: the private temporary one
    monkeypatch.setattr(native, "private_temp_dir", lambda: str(tmp_path / "private"))
    assert native.directory() == tmp_path / "private" / "native"
    monkeypatch.setattr(native, "private_temp_dir", lambda: None)
    assert native.directory() is None


def test_nothing_is_kept_where_nothing_can_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, path = _kept(tmp_path, monkeypatch)
    parsed = native._parse(path.read_bytes())
    assert parsed is not None
    obj = parsed[1][0]
    symbol = next(n for n in native.defined_symbols(obj) or () if n.startswith("cfunc."))
    path.unlink()
    assert native.save("run_chunks", layout, obj, symbol) == path  # a good object is kept...
    monkeypatch.setattr(native, "directory", lambda: None)
    path.unlink()
    assert native.save("run_chunks", layout, obj, symbol) is None  # ...but not where nothing can be written
    assert not path.exists() and not list(path.parent.glob("*.tmp"))
    monkeypatch.undo()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert native.save("run_chunks", layout, obj, "cfunc.not_in_this_object") is None


def test_a_file_someone_else_may_write_is_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Machine code is loaded only from a file of this user's that no one else may write; the
    files are written so (mode 0600, whatever the umask)."""
    layout, path = _kept(tmp_path, monkeypatch)
    assert path.stat().st_mode & 0o777 == 0o600
    monkeypatch.setattr(native, "_LOADED", {})
    path.chmod(0o666)
    assert native.load("run_chunks", layout) is None
    path.chmod(0o600)
    assert native.load("run_chunks", layout) is not None


def test_the_kernels_have_nothing_that_raises() -> None:
    """numba's C wrapper, which the native call goes through, prints an exception instead of
    raising it and returns 0: the kernels must have no operation that can raise (numba raises
    ZeroDivisionError for / // %, and for a raise or an assert)."""
    import ast

    folder = Path(kernel.__file__).parent
    for name in ("simulate.py", "rng.py", "claim.py"):
        tree = ast.parse((folder / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            assert not isinstance(node, ast.Raise | ast.Assert), f"{name}:{node.lineno}"
            if isinstance(node, ast.BinOp | ast.AugAssign):
                assert not isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod), f"{name}:{node.lineno}"


def test_max_threads_is_numbas_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read without numba, the same number numba's configuration gives."""
    assert kernel.max_threads() == numba.config.NUMBA_NUM_THREADS
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    assert kernel.max_threads() == 1
    monkeypatch.setenv("NUMBA_NUM_THREADS", "none")
    assert kernel.max_threads() == len(os.sched_getaffinity(0))


def test_a_native_kernel_keeps_no_run_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flat values of the last call's arrays are reused only for the very same arrays, and
    those arrays are not kept alive by the kernel once the run has dropped them."""
    import gc
    import weakref

    _, loaded, args = _idle_call(tmp_path, monkeypatch)
    loaded(*args, kernel.shapes.new_claims(), 0)
    again = list(args)
    again[kernel._ARG_OUT_DAMAGE] = args[kernel._ARG_OUT_DAMAGE].copy()  # a new array in the same place
    out = again[kernel._ARG_OUT_DAMAGE]
    again[_CHUNK_TRIALS][:] = 100
    loaded(*again, kernel.shapes.new_claims(), 0)
    assert out.sum() > 0  # the new array was written, not the old one the flat values first named
    watched = weakref.ref(out)  # held by the kernel's memory of its last call, and by this test only
    del args, again, out
    gc.collect()
    assert watched() is None


def test_a_share_that_runs_after_its_call_returned_finds_its_arguments_alive(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The calling thread returns as soon as every chunk is done, maybe before the other
    thread has even woken: that thread's share holds the call's arrays, the claim counters
    above all, until it has run (a share holding only their flat values, tried once, read freed
    memory: a crash); then the idle thread lets them go (it used to keep the last run's arrays,
    histograms and all, until its next share)."""
    import gc
    import queue
    import threading
    import weakref

    layout, _ = _kept(tmp_path, monkeypatch)
    loaded = native.load("run_chunks", layout)
    assert loaded is not None
    loaded.handoff = None  # its shares go through the thread's queue, as numba's kernel's do
    weapons, target, stages = CASES["fast path, no breakdown"]
    args = [_copy(a) for a in _calls(weapons, target, stages, monkeypatch)[0][1]]
    args[_CHUNK_TRIALS][:] = 100
    claims = kernel.shapes.new_claims()
    pool = kernel.Workers(1)
    gate = threading.Event()
    pool._queues[0].put((gate.wait, (), queue.SimpleQueue(), None))  # the other thread is busy for now
    try:
        pool.run((*args, claims), 2, loaded)  # this thread runs every chunk and returns
        n = args[kernel._ARG_STREAMS].shape[0]
        assert claims.tolist() == [n + 1, n]  # every chunk finished here (and one claim found none)
        watched = weakref.ref(claims), weakref.ref(args[kernel._ARG_OUT_DAMAGE])
        del args, claims
        gc.collect()
        assert all(w() is not None for w in watched)  # the waiting share holds them
    finally:
        gate.set()  # the share runs (finds no chunk left) and the idle thread lets its arrays go
    deadline = time.monotonic() + 30
    while any(w() is not None for w in watched) and time.monotonic() < deadline:
        time.sleep(0.01)
        gc.collect()
    assert all(w() is None for w in watched)


def _handed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[native.NativeKernel, list[Any]]:
    """A native run_chunks that hands its shares over (mathhammer.kernel.handoff), and a copy of a
    run's arguments with 100 trials a chunk."""
    layout, _ = _kept(tmp_path, monkeypatch)
    loaded = native.load("run_chunks", layout)
    assert loaded is not None and loaded.handoff is not None
    weapons, target, stages = CASES["fast path, no breakdown"]
    args = [_copy(a) for a in _calls(weapons, target, stages, monkeypatch)[0][1]]
    args[_CHUNK_TRIALS][:] = 100
    return loaded, args


def _asleep(pool: Any) -> None:
    """Wait (a few milliseconds: a thread spins half a millisecond after its last share) until
    every thread of ``pool`` dozes in its wait (or never entered it), then stop the waits: each
    thread is then out of its wait (ASLEEP)."""
    from mathhammer.kernel import handoff

    deadline = time.monotonic() + 30
    while not np.isin(pool._boxes[:, handoff.STATE], (handoff.DOZING, handoff.ASLEEP)).all():
        assert time.monotonic() < deadline, pool._boxes[:, :6]
        time.sleep(0.001)
    pool.stop_waiting()
    assert (pool._boxes[:, handoff.STATE] == handoff.ASLEEP).all(), pool._boxes[:, :6]


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_a_waiting_thread_runs_a_share_and_the_counts_are_one_threads(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls on two threads through the boxes: the other thread runs shares (its row filled),
    the rows add up to what one thread counts alone, nothing of a call is held once it
    returned, and the thread dozes after its linger."""
    from mathhammer.kernel import handoff

    loaded, args = _handed(tmp_path, monkeypatch)
    alone = [_copy(a) for a in args]
    loaded(*alone, kernel.shapes.new_claims(), 0)
    pool = kernel.Workers(1)
    n = args[kernel._ARG_STREAMS].shape[0]
    calls = 0
    while calls < 200:  # until the other thread has run a share (it wakes during the first)
        calls += 1
        again = [_copy(a) for a in args]
        claims = kernel.shapes.new_claims()
        pool.run((*again, claims), 2, loaded)
        assert claims[1] == n and pool._held == [None]
        rows = again[kernel._ARG_OUT_DAMAGE]
        assert np.array_equal(rows.sum(axis=0), alone[kernel._ARG_OUT_DAMAGE][0])
        assert pool._boxes[0, handoff.STATE] in (handoff.WAITING, handoff.DOZING, handoff.ASLEEP)
        if rows[1].any():
            break
    assert pool._boxes[0, handoff.SHARES] >= 1 and rows[1].any(), f"no share ran in {calls} calls"
    _asleep(pool)


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_a_share_through_the_queue_reaches_a_thread_dozing_in_its_wait(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A share handed through the thread's queue (a numba kernel's: a compiling run) after native
    runs left the thread dozing in its wait: the thread leaves its wait and runs it (a dozing
    thread never reads its queue: such a run waited for ever)."""
    from mathhammer.kernel import handoff

    monkeypatch.setattr(kernel, "_LINGER_SECONDS", 0.001)
    loaded, args = _handed(tmp_path, monkeypatch)
    pool = kernel.Workers(1)
    pool.run((*args, kernel.shapes.new_claims()), 2, loaded)
    deadline = time.monotonic() + 30
    while pool._boxes[0, handoff.STATE] != handoff.DOZING:
        assert time.monotonic() < deadline, pool._boxes[:, :6]
        time.sleep(0.001)
    rows: list[int] = []

    def share(*a: Any) -> int:  # this thread's share finishes no chunk: the call waits for the other
        rows.append(a[-1])
        return 0

    queued = [None] * 10
    queued[kernel._ARG_STREAMS] = np.zeros((2, 2), dtype=np.uint64)
    call = threading.Thread(target=pool.run, args=((*queued, None), 2, share), daemon=True)
    call.start()
    call.join(30)
    try:
        assert not call.is_alive(), "the share through the queue never ran"
        assert sorted(rows) == [0, 1] and pool._boxes[0, handoff.STATE] == handoff.ASLEEP
    finally:
        pool.stop_waiting()


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_a_share_whose_thread_is_busy_is_taken_back_and_holds_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread busy elsewhere when a call posts its share: the calling thread runs every chunk,
    takes the share back and returns; nothing of the call is held afterwards, and the thread,
    once free, runs nothing of it."""
    import gc
    import queue
    import weakref

    from mathhammer.kernel import handoff

    loaded, args = _handed(tmp_path, monkeypatch)
    claims = kernel.shapes.new_claims()
    pool = kernel.Workers(1)
    gate = threading.Event()
    pool._queues[0].put((gate.wait, (), queue.SimpleQueue(), None))  # the other thread is busy for now
    try:
        pool.run((*args, claims), 2, loaded)
        n = args[kernel._ARG_STREAMS].shape[0]
        assert claims.tolist() == [n + 1, n]  # every chunk claimed and finished here
        assert pool._boxes[0, handoff.STATE] == handoff.WAITING and pool._held == [None]
        watched = weakref.ref(claims), weakref.ref(args[kernel._ARG_OUT_DAMAGE])
        del args, claims
        gc.collect()
        assert all(w() is None for w in watched)
    finally:
        gate.set()
    _asleep(pool)
    assert pool._boxes[0, handoff.SHARES] == 0


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_an_error_in_the_calling_threads_share_still_collects_the_other(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever ends the calling thread's share early (a KeyboardInterrupt between its calls),
    the share it posted is taken back or waited for before the error goes on: no thread runs
    on a call's arrays after it."""
    from mathhammer.kernel import handoff

    loaded, args = _handed(tmp_path, monkeypatch)
    pool = kernel.Workers(1)
    real_call = loaded.call

    def interrupted(flat: Any) -> int:
        time.sleep(0.002)  # the other thread is awake by now and running the share
        raise KeyboardInterrupt

    monkeypatch.setattr(loaded, "call", interrupted)
    claims = kernel.shapes.new_claims()
    with pytest.raises(KeyboardInterrupt):
        pool.run((*args, claims), 2, loaded)
    assert pool._boxes[0, handoff.STATE] in (handoff.WAITING, handoff.DOZING, handoff.ASLEEP) and pool._held == [None]
    n = args[kernel._ARG_STREAMS].shape[0]
    assert claims[1] in (0, n)  # taken back before it started, or run to the end
    monkeypatch.setattr(loaded, "call", real_call)
    _asleep(pool)


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_an_interruption_right_after_a_post_still_collects_the_share(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt as the post returns (Python checks for signals there) comes out of the
    run only once the share is taken back or has ended: nothing of the call is held after it."""
    from mathhammer.kernel import handoff

    loaded, args = _handed(tmp_path, monkeypatch)
    functions = loaded.handoff
    assert functions is not None
    real_post = functions.post

    def post_then_interrupt(*a: Any) -> int:
        real_post(*a)
        raise KeyboardInterrupt

    monkeypatch.setattr(functions, "post", post_then_interrupt)
    pool = kernel.Workers(1)
    claims = kernel.shapes.new_claims()
    with pytest.raises(KeyboardInterrupt):
        pool.run((*args, claims), 2, loaded)
    assert pool._held == [None]
    assert pool._boxes[0, handoff.STATE] in (handoff.WAITING, handoff.DOZING, handoff.ASLEEP)
    monkeypatch.setattr(functions, "post", real_post)
    _asleep(pool)


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_a_refused_post_holds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread that goes to sleep between the look at its box and the post: the calling thread
    runs every chunk, and nothing of the call stays held (it did, until the next post)."""
    import gc
    import weakref

    loaded, args = _handed(tmp_path, monkeypatch)
    assert loaded.handoff is not None
    monkeypatch.setattr(loaded.handoff, "post", lambda *a: 0)
    pool = kernel.Workers(1)
    pool.wake(1, loaded)
    claims = kernel.shapes.new_claims()
    pool.run((*args, claims), 2, loaded)
    n = args[kernel._ARG_STREAMS].shape[0]
    assert claims[1] == n and not args[kernel._ARG_OUT_DAMAGE][1].any() and pool._held == [None]
    watched = weakref.ref(args[kernel._ARG_OUT_DAMAGE])
    del args, claims
    gc.collect()
    assert watched() is None
    _asleep(pool)


@pytest.mark.skipif(not _X86_64, reason="the handoff functions exist on x86-64 only")
def test_a_process_ends_cleanly_with_a_thread_still_waiting_for_shares(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A script that ends right after a run on two threads, its other thread still waiting for a
    share (here for 50 ms) or dozing in its wait, exits normally: that thread is stopped at exit,
    and the machine code it runs stays mapped while the interpreter shuts down (it crashed, exit
    -11, every time)."""
    from mathhammer.kernel import handoff

    _kept(tmp_path, monkeypatch)  # the native file the run below loads
    weapons, target, stages = CASES["fast path, no breakdown"]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    for linger, then in ((0.05, ""), (0.001, "dozing")):  # still spinning; asleep in its wait (dozing)
        code = textwrap.dedent(f"""
            import time
            from mathhammer import api, kernel
            from mathhammer.kernel import handoff
            kernel._LINGER_SECONDS = {linger!r}
            api.run({weapons!r}, {target!r}, trials=3_000, seed=11, threads=2, stages={stages!r})
            pool = kernel._WORKERS[0]
            print(pool._functions is not None)
            deadline = time.monotonic() + 30
            while {then!r} and pool._boxes[0, handoff.STATE] != handoff.DOZING and time.monotonic() < deadline:
                time.sleep(0.001)
            print(int(pool._boxes[0, handoff.STATE]))
        """)
        for _ in range(3):
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
            assert r.returncode == 0, r.stderr[-2000:]
            took, state = r.stdout.split()
            assert took == "True"  # the run took the handoff path
            if then:
                assert int(state) == handoff.DOZING


def test_files_unused_for_a_month_are_removed_when_one_is_written(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every change of sources, numba or settings leaves a file behind: those not loaded or
    written for 30 days go when a new file is written; one in use has its time refreshed."""
    layout, path = _kept(tmp_path, monkeypatch)
    folder = path.parent
    month = time.time() - 31 * 86400
    old, stray, other = folder / "run_chunks-old.native", folder / "x.native.1.2.tmp", folder / "notes.txt"
    for f in (old, stray, other):
        f.write_bytes(b"")
        os.utime(f, (month, month))
    os.utime(path, (month, month))
    monkeypatch.setattr(native, "_LOADED", {})
    assert native.load("run_chunks", layout) is not None
    assert path.stat().st_mtime > month + 86400  # loaded: its time refreshed
    parsed = native._parse(path.read_bytes())
    assert parsed is not None
    obj = parsed[1][0]
    symbol = next(n for n in native.defined_symbols(obj) or () if n.startswith("cfunc."))
    assert native.save("run_queue_chunks", layout, obj, symbol) is not None
    assert path.exists() and other.exists() and not old.exists() and not stray.exists()
