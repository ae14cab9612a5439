"""The Pico's file system as `make flash` leaves it, as a littlefs image for the emulated chip.

`make flash` copies build/firmware/<board>/ (main.py, board.json, the compiled package,
host_tools/pico/firmware.py) and the wheel's key (/wheel.key) onto the MicroPython file system.
`image()` writes the same files into a littlefs image in the format MicroPython v1.28's rp2 port
mounts (4 KB blocks, 256-byte programs, on-disk version 2.0), ready for `Chip(fs=...)`: no
raw-REPL upload (about 25 s of wall time for the firmware), the same files in the same places.
With a frozen UF2 (`frozen=True`) the package is in the UF2 and only main.py, board.json and the
key are copied, as for a frozen deployment.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from host_tools.rp2emu.chip import FS_LAYOUT

ROOT = Path(__file__).resolve().parents[2]


def build_firmware(board: str = "pico", out: Path | None = None) -> Path:
    """`make firmware BOARD=board` into `out` (default a fresh temporary folder); returns it."""
    from host_tools.pico import firmware as bf

    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="cylindre-fw-")) / board
    bf.build(board, out)
    return out


def files_of(folder: Path, key: bytes | None, frozen: bool = False,
             extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Path on the Pico -> content: the build folder's files (only main.py and board.json when
    the package is frozen in the UF2), /wheel.key, then `extra` (which may replace any)."""
    files: dict[str, bytes] = {}
    for p in sorted(Path(folder).rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(folder).as_posix()
        if frozen and rel not in ("main.py", "board.json"):
            continue
        files["/" + rel] = p.read_bytes()
    if key is not None:
        files["/wheel.key"] = key
    files.update(extra or {})
    return files


def image(files: dict[str, bytes]) -> bytes:
    """A littlefs image holding `files` (path -> bytes), folders made as needed."""
    from littlefs import LittleFS, UserContext

    size = FS_LAYOUT.fs_blocksize * FS_LAYOUT.fs_blockcount
    fs = LittleFS(context=UserContext(buffsize=size), block_size=FS_LAYOUT.fs_blocksize,
                  block_count=FS_LAYOUT.fs_blockcount, prog_size=256, disk_version=0x00020000)
    fill(fs, files)
    fs.unmount()
    return bytes(fs.context.buffer)


def fill(fs, files: dict[str, bytes]) -> None:
    """Write `files` (path -> bytes) into a mounted littlefs-python `fs`, folders made as needed."""
    made = set()
    for path in sorted(files):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in made:
                fs.mkdir(d)
                made.add(d)
        with fs.open("/".join(parts), "wb") as f:
            f.write(files[path])


def read(flash: bytes, path: str) -> bytes:
    """A file of the file system in a chip's flash (`Chip.mcu.flash`), as the firmware left it:
    `image()`'s counterpart, for what a probe writes on the Pico."""
    from littlefs import LittleFS, UserContext

    size = FS_LAYOUT.fs_blocksize * FS_LAYOUT.fs_blockcount
    ctx = UserContext(buffsize=size)
    ctx.buffer[:] = bytes(flash[FS_LAYOUT.fs_start:FS_LAYOUT.fs_start + size])
    fs = LittleFS(context=ctx, block_size=FS_LAYOUT.fs_blocksize, block_count=FS_LAYOUT.fs_blockcount,
                  prog_size=256, mount=True)
    with fs.open(path.lstrip("/"), "rb") as f:
        return f.read()
