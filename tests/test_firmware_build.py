"""`make firmware`: every firmware file compiles with mpy-cross, the output folder is what goes
onto a Pico (main.py as source, the rest .mpy, board.json checked), and a bad board is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from host_tools import build_firmware as bf

ROOT = Path(__file__).resolve().parent.parent


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
    assert len([s for s in bf.sources()]) + 1 == len(files)
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
    r = subprocess.run([sys.executable, "-m", "host_tools.build_firmware", "--board", "nope",
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "no board 'nope'" in r.stderr and "pico" in r.stderr
