"""`make typecheck`: every file that goes onto the Pico type-checks against the MicroPython stubs.

The committed firmware/pyrightconfig.json is run as is on a copy of firmware/ whose ../build/stubs
holds the distributions installed in this venv (micropython-rp2-rpi-pico-stubs and the stdlib
stubs it needs) in a stand-in virtual environment, as `make typecheck` installs them (no network
here). Nothing of the host's Python is visible to the check, so an import that MicroPython lacks
(dataclasses, numpy) is an error. About 5 s a pyright run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
CONFIG = FIRMWARE / "pyrightconfig.json"
PYRIGHT = Path(sys.executable).parent / "pyright"
STUB_DISTS = ("micropython-rp2-rpi-pico-stubs", "micropython-stdlib-stubs")
SITE = Path("lib") / "python3.4" / "site-packages"     # MicroPython's language level; any python3.N works


def _stub_env(dest: Path) -> Path:
    """A stand-in venv at dest holding only the stub distributions (as pip install --target makes)."""
    site = dest / SITE
    for name in STUB_DISTS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail("%s is not installed in the venv (pyproject.toml's dev extra)" % name)
        for f in dist.files or ():
            src = Path(str(dist.locate_file(f)))
            if ".." in f.parts or not src.is_file():
                continue
            out = site / f
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, out)
    return site


def _pyright(tmp_path: Path, probe: str | None = None) -> dict:
    """Run firmware/pyrightconfig.json as committed on a copy of firmware/ beside a build/stubs
    made from this venv's stub distributions (the config's paths are relative: ../build/stubs)."""
    fw = tmp_path / "firmware"
    shutil.copytree(FIRMWARE, fw, ignore=shutil.ignore_patterns("__pycache__"))
    if probe is not None:
        (fw / "cylindre" / "probe.py").write_text(probe)
    _stub_env(tmp_path / "build" / "stubs")
    cmd = [str(PYRIGHT), "-p", str(fw / "pyrightconfig.json"), "--outputjson"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    except FileNotFoundError:
        pytest.fail("pyright is not installed in the venv (pyproject.toml's dev extra)")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        text = (proc.stdout + proc.stderr).strip()
        if "node" in text.lower():     # the pyright wrapper downloads Node.js on first use
            pytest.skip("pyright could not get Node.js (offline?): %s" % text[-300:])
        pytest.fail("pyright gave no report (exit %d): %s" % (proc.returncode, text[-1000:]))
    for d in report["generalDiagnostics"]:
        d["file"] = str(Path(d["file"]).relative_to(tmp_path))
    return report


def test_the_config_covers_the_whole_firmware_tree_without_the_hosts_python():
    cfg = json.loads(CONFIG.read_text())
    assert cfg["include"] == ["."]
    # stubs from build/stubs (make typecheck), a stand-in venv: nothing names this venv's Python
    assert cfg["venvPath"] == "../build" and cfg["venv"] == "stubs"
    assert cfg["typeshedPath"] == "../build/stubs/" + SITE.as_posix()
    assert ".venv" not in CONFIG.read_text()


def test_firmware_type_checks(tmp_path):
    report = _pyright(tmp_path)
    problems = ["%s:%d: %s" % (d["file"], d["range"]["start"]["line"] + 1, d["message"])
                for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert problems == []
    on_pico = sorted(p for p in FIRMWARE.rglob("*.py") if "__pycache__" not in p.parts)
    assert report["summary"]["filesAnalyzed"] == len(on_pico) >= 40


def test_the_check_sees_micropython_not_cpython(tmp_path):
    probe = ("import dataclasses\n"
             "from machine import Pin\n"
             "Pin(25, Pin.OUT).no_such_method()\n")
    report = _pyright(tmp_path, probe)
    found = sorted((d["range"]["start"]["line"] + 1, d["rule"]) for d in report["generalDiagnostics"]
                   if d["file"].endswith("probe.py") and d["severity"] == "error")
    assert found == [(1, "reportMissingImports"), (3, "reportAttributeAccessIssue")]
