"""`make uf2`: a MicroPython UF2 for one board with the firmware frozen in, built from sources
pinned to a MicroPython tag.

The modules the Pico runs (firmware/manifest.py) and its entry point (main.py) are frozen into
the firmware image: they run from flash, take no heap for their bytecode, and nothing is
compiled at boot. The board file and the wheel's key are not in the image: they belong to one
wheel (the board file is calibrated on it and rewritten by `calib`), so they stay on the Pico's
file system (`make flash-config`).

Steps: check the toolchain; get the MicroPython sources at the pinned tag with the submodules
the rp2 port needs (a shallow clone from GitHub by default, or a local tree: `MICROPY_DIR`),
and check every commit against the tag's own pins; build picotool (no USB: the SDK only needs
it to write the UF2) and mpy-cross; then the port, with our manifest. Out:
build/uf2/<board>/cylindre-<board>.uf2 and its sha256.

    python -m host_tools.pico.uf2 --board pico [--micropython-dir DIR] [--picotool-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from host_tools.pico.firmware import FIRMWARE, MANIFEST, BuildError, board_file, load_board

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "uf2"
MICROPYTHON_TAG = "v1.28.0"
MICROPYTHON_URL = "https://github.com/micropython/micropython"
PICOTOOL_TAG = "2.2.0"
PICOTOOL_URL = "https://github.com/raspberrypi/picotool"
# The submodules an rp2 build reads (MicroPython's tree pins their commits).
SUBMODULES = ("lib/pico-sdk", "lib/tinyusb", "lib/micropython-lib", "lib/mbedtls")
# The firmware's entry points MicroPython runs by name at boot (frozen ones first: pyexec.c).
ENTRIES = ("boot.py", "main.py")
# MicroPython's board per chip (the board file's "mcu" names the chip first).
PORT_BOARDS = {"RP2040": "RPI_PICO", "RP2350": "RPI_PICO2"}
TOOLS = ("arm-none-eabi-gcc", "cmake", "make", "git", "cc", "c++")
APT = ("apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi "
       "libstdc++-arm-none-eabi-newlib cmake")


def say(msg: str) -> None:
    print("uf2: " + msg, flush=True)


def port_board(board: dict) -> str:
    """MicroPython's rp2 board for a board file, from its `mcu` (RP2040 or RP2350)."""
    mcu = str(board.get("mcu", ""))
    for chip, name in PORT_BOARDS.items():
        if mcu.startswith(chip):
            return name
    raise BuildError("board %r: its \"mcu\" (%r) names no chip this build knows (%s)"
                     % (board.get("board"), mcu, ", ".join(PORT_BOARDS)))


def entries(root: Path = FIRMWARE) -> list[str]:
    """The entry points present in firmware/ (main.py always)."""
    return [e for e in ENTRIES if (root / e).is_file()]


def uf2_manifest(root: Path = FIRMWARE, manifest: Path = MANIFEST) -> str:
    """The manifest the port is built with: ours (the package), and the entry points as
    top-level modules, so the image boots the wheel with nothing of ours on the file system
    but the board file and the key."""
    lines = ["# Written by host_tools/pico/uf2.py: firmware/manifest.py and the entry points.",
             "include(%r)" % str(manifest)]
    lines += ["module(%r, base_path=%r)" % (e, str(root)) for e in entries(root)]
    return "\n".join(lines) + "\n"


def check_toolchain() -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise BuildError("missing %s: install Debian's toolchain (as root): %s (make uf2 does it)"
                         % (", ".join(missing), APT))


def git(args, cwd=None, check=True) -> str:
    r = subprocess.run(["git"] + list(args), cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise BuildError("git %s (in %s): %s" % (" ".join(args), cwd or ".", r.stderr.strip()))
    return r.stdout.strip()


def pins(tree: Path) -> dict[str, str]:
    """The commits the tree's HEAD pins for the rp2 submodules (its gitlinks)."""
    out = {}
    for sub in SUBMODULES:
        line = git(["ls-tree", "HEAD", sub], cwd=tree)
        parts = line.split()
        if len(parts) < 3 or parts[1] != "commit":
            raise BuildError("%s: %s is not a submodule of this tree" % (tree, sub))
        out[sub] = parts[2]
    return out


def verify(tree: Path) -> dict[str, str]:
    """The tree is MicroPython at the pinned tag, each submodule the tag's commit. Returns
    {path: commit} for the record."""
    if not (tree / "ports" / "rp2" / "Makefile").is_file():
        raise BuildError("%s is not a MicroPython source tree (no ports/rp2/Makefile)" % tree)
    head = git(["rev-parse", "HEAD"], cwd=tree)
    tag = git(["rev-parse", MICROPYTHON_TAG + "^{commit}"], cwd=tree, check=False)
    if not tag:
        raise BuildError("%s has no tag %s: fetch it (git fetch --depth 1 origin tag %s)"
                         % (tree, MICROPYTHON_TAG, MICROPYTHON_TAG))
    if head != tag:
        raise BuildError("%s is at %s, not %s (%s): git -C %s checkout %s"
                         % (tree, head[:10], MICROPYTHON_TAG, tag[:10], tree, MICROPYTHON_TAG))
    got = {"micropython": head}
    for sub, want in pins(tree).items():
        d = tree / sub
        # (an empty folder is not checked out: rev-parse there would answer MicroPython's HEAD)
        have = git(["rev-parse", "HEAD"], cwd=d, check=False) if (d / ".git").exists() else ""
        if not have:
            raise BuildError("%s is empty: git -C %s submodule update --init %s" % (d, tree, sub))
        if have != want:
            raise BuildError("%s is at %s, %s pins %s" % (d, have[:10], MICROPYTHON_TAG, want[:10]))
        got[sub] = have
    return got


def clone(dest: Path) -> Path:
    """A shallow clone of the tag and the submodules the rp2 port needs (GitHub)."""
    tree = dest / ("micropython-" + MICROPYTHON_TAG)
    if not tree.exists():
        say("cloning MicroPython %s into %s" % (MICROPYTHON_TAG, tree))
        dest.mkdir(parents=True, exist_ok=True)
        git(["clone", "--depth", "1", "--branch", MICROPYTHON_TAG, MICROPYTHON_URL, str(tree)])
    say("submodules %s" % " ".join(SUBMODULES))
    git(["submodule", "update", "--init", "--depth", "1"] + list(SUBMODULES), cwd=tree)
    return tree


def picotool_source(given: Path | None, tree: Path, dest: Path) -> Path:
    """picotool's sources at its pinned tag: given, beside a local MicroPython tree, or cloned."""
    for d in ([given] if given else []) + [tree.parent / "picotool"]:
        if d is not None and (d / "CMakeLists.txt").is_file():
            return _picotool_at_tag(d)
    if given:
        raise BuildError("%s is not a picotool source tree (no CMakeLists.txt)" % given)
    src = dest / ("picotool-" + PICOTOOL_TAG)
    if not src.exists():
        say("cloning picotool %s into %s" % (PICOTOOL_TAG, src))
        git(["clone", "--depth", "1", "--branch", PICOTOOL_TAG, PICOTOOL_URL, str(src)])
    return _picotool_at_tag(src)


def _picotool_at_tag(src: Path) -> Path:
    if (src / ".git").exists():
        head = git(["rev-parse", "HEAD"], cwd=src)
        tag = git(["rev-parse", PICOTOOL_TAG + "^{commit}"], cwd=src, check=False)
        if head != tag:
            raise BuildError("%s is at %s, not picotool %s: git -C %s checkout %s"
                             % (src, head[:10], PICOTOOL_TAG, src, PICOTOOL_TAG))
    return src


def run(cmd, log: Path, cwd=None, env=None) -> None:
    """A build step, its output appended to `log`; on failure the log's tail and its path."""
    with open(log, "a") as f:
        f.write("\n$ %s\n" % " ".join(str(c) for c in cmd))
        f.flush()
        r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-25:]
        raise BuildError("%s failed (exit %d); the end of %s:\n%s"
                         % (" ".join(str(c) for c in cmd[:3]), r.returncode, log, "\n".join(tail)))


def build_picotool(src: Path, sdk: Path, dest: Path, jobs: int, log: Path) -> Path:
    """picotool without USB, installed under dest: the SDK's cmake finds it by picotool_DIR."""
    inst = dest / "picotool-install"
    cfg = inst / "lib" / "cmake" / "picotool"
    if (cfg / "picotoolConfig.cmake").is_file():
        return cfg
    t = time.monotonic()
    say("building picotool %s (no USB)" % PICOTOOL_TAG)
    b = dest / "picotool-build"
    run(["cmake", "-S", src, "-B", b, "-DPICOTOOL_NO_LIBUSB=1", "-DPICO_SDK_PATH=%s" % sdk,
         "-DCMAKE_INSTALL_PREFIX=%s" % inst, "-DCMAKE_BUILD_TYPE=Release"], log)
    run(["make", "-C", b, "-j%d" % jobs], log)
    run(["make", "-C", b, "install"], log)
    say("picotool built in %.0f s" % (time.monotonic() - t))
    return cfg


def build(board_name: str, micropython_dir: Path | None = None, picotool_dir: Path | None = None,
          out: Path = OUT, jobs: int = 2) -> Path:
    t0 = time.monotonic()
    path = board_file(board_name)
    board = load_board(path)
    name = path.stem
    mp_board = port_board(board)
    check_toolchain()
    cache = out / "src"
    here = out / name
    here.mkdir(parents=True, exist_ok=True)
    log = here / "build.log"
    log.write_text("")
    tree = Path(micropython_dir).resolve() if micropython_dir else clone(cache)
    got = verify(tree)
    say("MicroPython %s at %s, %s" % (MICROPYTHON_TAG, got["micropython"][:10], ", ".join(
        "%s %s" % (k.split("/")[-1], v[:10]) for k, v in got.items() if k != "micropython")))
    cfg = build_picotool(picotool_source(picotool_dir, tree, cache), tree / "lib" / "pico-sdk",
                         out / "tools", jobs, log)
    t = time.monotonic()
    say("building mpy-cross")
    run(["make", "-C", tree / "mpy-cross", "-j%d" % jobs], log)
    say("mpy-cross ready in %.0f s" % (time.monotonic() - t))
    manifest = here / "manifest.py"
    text = uf2_manifest()
    if not manifest.is_file() or manifest.read_text() != text:
        manifest.write_text(text)
    t = time.monotonic()
    say("building MicroPython %s with the firmware frozen in (%s, %s)" % (mp_board, ", ".join(entries()),
                                                                         MANIFEST.relative_to(ROOT)))
    env = dict(os.environ, CMAKE_ARGS="-Dpicotool_DIR=%s" % cfg)
    port_build = here / ("build-" + mp_board)
    run(["make", "-C", tree / "ports" / "rp2", "-j%d" % jobs, "BOARD=%s" % mp_board,
         "FROZEN_MANIFEST=%s" % manifest, "BUILD=%s" % port_build], log, env=env)
    say("port built in %.0f s" % (time.monotonic() - t))
    src = port_build / "firmware.uf2"
    if not src.is_file():
        raise BuildError("the port built no %s (see %s)" % (src, log))
    uf2 = here / ("cylindre-%s.uf2" % name)
    shutil.copyfile(src, uf2)
    data = uf2.read_bytes()
    say("%s: %d bytes, sha256 %s (%.0f s in all)" % (uf2.relative_to(ROOT) if uf2.is_relative_to(ROOT) else uf2,
                                                    len(data), hashlib.sha256(data).hexdigest(),
                                                    time.monotonic() - t0))
    return uf2


# Run on the Pico before the copies: a /cylindre folder left by `make flash` comes first on
# sys.path and would shadow the frozen package (a /main.py is harmless: the frozen one runs first).
_UNSHADOW = """import os
def rm(p):
    try:
        for e in os.ilistdir(p):
            rm(p + '/' + e[0])
        os.rmdir(p)
    except OSError:
        try:
            os.remove(p)
        except OSError:
            pass
rm('/cylindre')
"""


def flash_config(board_name: str, port: str, key: Path) -> None:
    """The wheel's own files on a Pico running the UF2: board.json and wheel.key."""
    path = board_file(board_name)
    load_board(path)
    if not key.is_file():
        raise BuildError("no key %s: make one with 'cylindre daemon --new-key %s'" % (key, key))
    mpremote = Path(sys.executable).with_name("mpremote")
    cmd = [str(mpremote) if mpremote.exists() else "mpremote", "connect", port, "exec", _UNSHADOW,
           "+", "fs", "cp", str(path), ":board.json", "+", "fs", "cp", str(key), ":wheel.key"]
    say("copying %s as board.json and %s as wheel.key (%s)" % (path.name, key, port))
    if subprocess.run(cmd).returncode != 0:
        raise BuildError("mpremote failed: is the Pico on %s and running MicroPython?" % port)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="build_uf2", description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="pico", help="board name (boards/NAME.json) or path")
    p.add_argument("--micropython-dir", type=Path, default=os.environ.get("MICROPY_DIR") or None,
                   help="a MicroPython tree at %s with its submodules (default: clone it)" % MICROPYTHON_TAG)
    p.add_argument("--picotool-dir", type=Path, default=os.environ.get("PICOTOOL_DIR") or None,
                   help="picotool's sources at %s (default: beside the MicroPython tree, else clone)"
                   % PICOTOOL_TAG)
    p.add_argument("--out", type=Path, default=OUT, help="output folder (default build/uf2)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compile jobs")
    p.add_argument("--flash-config", action="store_true",
                   help="instead of building: copy the board file and the key to a Pico (make flash-config)")
    p.add_argument("--port", default="auto", help="with --flash-config: the Pico's serial port")
    p.add_argument("--key", type=Path, default=Path("keys/T1.key"), help="with --flash-config: the key file")
    a = p.parse_args(argv)
    try:
        if a.flash_config:
            flash_config(a.board, a.port, a.key)
            return 0
        build(a.board, a.micropython_dir, a.picotool_dir, a.out.resolve(), a.jobs)
    except BuildError as exc:
        print("uf2: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
