"""`cylindre demo` runs the whole table by itself and ends with the result against the edge."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_demo_runs_and_reports(tmp_path):
    p = subprocess.run([sys.executable, "-m", "host_tools.cli", "demo", "--spins", "3", "--speed", "60",
                        "--pause", "0.3", "--void-rate", "0", "--workdir", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "faites vos jeux" in out and "rien ne va plus" in out
    assert re.search(r"Fin de partie: 3 coups payés", out), out[-2000:]
    assert "Avantage théorique" in out and "Résultat de la table" in out
    assert (tmp_path / "journal.sqlite").exists() and (tmp_path / "daemon.log").exists()
    assert f"cylindre stats --journal {tmp_path / 'journal.sqlite'}" in out      # kept, and said so


def test_summary_is_exact_integer_cents():
    from host_tools.demo import summarize
    res = {"results": [{"type": "plein", "staked": 1000, "won": 35000, "lost": 0, "returned": 1000, "imprisoned": 0},
                       {"type": "rouge", "staked": 740, "won": 0, "lost": 740, "returned": 0, "imprisoned": 0},
                       {"type": "rouge", "staked": 500, "won": 0, "lost": 500, "returned": 0, "imprisoned": 0, "carried": True}],
           "prisoners": []}
    s = summarize([{"number": 17, "result": res}])
    assert s["staked"] == 1740 and s["house"] == 740 + 500 - 35000
    assert s["expected"] * 74 * 37 == 1000 * 74 + 740 * 37
