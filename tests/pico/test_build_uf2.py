"""`make uf2` without building (no toolchain, no MicroPython tree): what the image freezes is what
the Pico imports, each board maps to MicroPython's, and a source tree off the pinned commits is
refused with a message that says how to fix it. About 1 s (a few git commands)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from host_tools.pico import firmware as bf
from host_tools.pico import uf2 as bu

ROOT = Path(__file__).resolve().parents[2]


def _imports_of(path: Path) -> set[str]:
    """Every module a file may import, at any depth (in functions too: the Pico imports lazily)."""
    out = set()
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.ImportFrom) and n.module:
            out.add(n.module)
            out.update(n.module + "." + a.name for a in n.names)
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
    return out


def _closure(fw: Path, entries: list[str]) -> set[Path]:
    """The firmware files the entry points import, followed through (modules MicroPython has
    built in, `machine`, `rp2`..., resolve to no file of ours)."""
    seen: set[Path] = set()
    todo = [fw / e for e in entries]
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
    return seen


def test_the_image_freezes_every_module_the_pico_imports_from_its_entry_points():
    fw = bf.FIRMWARE
    entries = bu.entries()
    assert "main.py" in entries
    closure = _closure(fw, entries)
    frozen = {fw / p for p in bf.manifest_files()} | {fw / e for e in entries}
    missing = sorted(str(p.relative_to(fw)) for p in closure - frozen)
    assert not missing, "firmware/manifest.py lacks %s" % missing
    assert any(p.name == "controller.py" for p in closure) and any(p.name == "link" for p in
                                                                   (q.parent for q in closure))
    # and the manifest the port is built with takes ours whole, plus the entry points as modules
    text = bu.uf2_manifest()
    assert "include(%r)" % str(bf.MANIFEST) in text
    for e in entries:
        assert "module(%r, base_path=%r)" % (e, str(fw)) in text


def test_a_module_imported_only_inside_a_function_counts(tmp_path):
    fw = tmp_path / "fw"
    (fw / "cylindre").mkdir(parents=True)
    (fw / "main.py").write_text("def go():\n    from cylindre.late import x\n")
    (fw / "cylindre" / "__init__.py").write_text("")
    (fw / "cylindre" / "late.py").write_text("import machine\nx = 1\n")
    got = {p.relative_to(fw).as_posix() for p in _closure(fw, ["main.py"])}
    assert got == {"main.py", "cylindre/__init__.py", "cylindre/late.py"}


def test_each_board_maps_to_micropythons_board():
    for path in sorted((ROOT / "boards").glob("*.json")):
        board = bf.load_board(path)
        assert bu.port_board(board) in ("RPI_PICO", "RPI_PICO2"), path
    assert bu.port_board(bf.load_board(ROOT / "boards" / "pico.json")) == "RPI_PICO"
    with pytest.raises(bf.BuildError, match="names no chip"):
        bu.port_board({"board": "x", "mcu": "ESP32"})


def _git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def tree(tmp_path):
    """A stand-in MicroPython tree: tagged, its submodules pinned (gitlinks), each a repository."""
    subs = {}
    for s in bu.SUBMODULES:
        d = tmp_path / s.split("/")[-1]
        d.mkdir()
        _git(d, "init", "-q")
        (d / "f").write_text(s)
        _git(d, "add", "f")
        _git(d, "commit", "-q", "-m", "x")
        subs[s] = d
    t = tmp_path / "micropython"
    (t / "ports" / "rp2").mkdir(parents=True)
    (t / "ports" / "rp2" / "Makefile").write_text("all:\n")
    _git(t, "init", "-q")
    _git(t, "add", "ports")
    for s, d in subs.items():
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=d, capture_output=True, text=True).stdout.strip()
        _git(t, "update-index", "--add", "--cacheinfo", "160000,%s,%s" % (sha, s))
    _git(t, "commit", "-q", "-m", "tree")
    _git(t, "tag", bu.MICROPYTHON_TAG)
    (t / "lib").mkdir()
    for s, d in subs.items():
        (t / s).symlink_to(d)
    return t, subs


def test_a_tree_at_the_tag_with_its_pinned_submodules_is_taken(tree):
    t, subs = tree
    got = bu.verify(t)
    assert set(got) == {"micropython", *bu.SUBMODULES}


def test_a_submodule_off_its_pin_is_refused(tree):
    t, subs = tree
    d = subs["lib/tinyusb"]
    (d / "f").write_text("moved")
    _git(d, "commit", "-q", "-am", "moved")
    with pytest.raises(bf.BuildError, match="lib/tinyusb is at .*pins"):
        bu.verify(t)


def test_an_empty_submodule_is_refused_with_the_command_to_fill_it(tree):
    t, subs = tree
    (t / "lib" / "mbedtls").unlink()
    (t / "lib" / "mbedtls").mkdir()
    with pytest.raises(bf.BuildError, match="submodule update --init lib/mbedtls"):
        bu.verify(t)


def test_a_tree_off_the_tag_is_refused(tree, tmp_path):
    t, subs = tree
    (t / "x").write_text("x")
    _git(t, "add", "x")
    _git(t, "commit", "-q", "-m", "later")
    with pytest.raises(bf.BuildError, match="not %s" % bu.MICROPYTHON_TAG):
        bu.verify(t)
    with pytest.raises(bf.BuildError, match="not a MicroPython source tree"):
        bu.verify(tmp_path)


def test_the_command_line_says_what_is_wrong(tmp_path):
    r = subprocess.run([sys.executable, "-m", "host_tools.pico.uf2", "--board", "nope"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "no board 'nope'" in r.stderr
