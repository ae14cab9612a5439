"""`cylindre demo` runs the whole table by itself and ends with the result against the edge."""

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_demo_runs_and_reports(tmp_path):
    p = subprocess.run([sys.executable, "-m", "host_tools.cli", "demo", "--spins", "3", "--speed", "60",
                        "--pause", "0.3", "--void-rate", "0", "--workdir", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "faites vos jeux" in out and "rien ne va plus" in out
    assert re.search(r"Fin de partie : 3 coups payés", out), out[-2000:]
    assert "Avantage théorique" in out and "Résultat de la table" in out
    assert (tmp_path / "journal.sqlite").exists() and (tmp_path / "daemon.log").exists()
    assert f"cylindre stats --journal {tmp_path / 'journal.sqlite'} --out {tmp_path / 'rapport'}" in out  # kept, and said so


@pytest.mark.slow
def test_a_one_spin_demo_sees_its_whole_game(tmp_path):
    """Before: with one spin and no pause the wheel played and settled its spin before the demo's
    first look, and the demo told a game it never saw (no "faites vos jeux", no launch, 0 staked;
    3 runs of 3). The table now opens once the demo listens."""
    p = subprocess.run([sys.executable, "-m", "host_tools.cli", "demo", "--spins", "1", "--speed", "60",
                        "--pause", "0", "--void-rate", "0", "--workdir", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Croupier : faites vos jeux" in out and "— lancer, coup 1 —" in out and "(coup 1 : misé" in out, out
    assert "Fin de partie : 1 coup payé" in out


@pytest.mark.slow
def test_a_lingering_demo_never_reopens_a_pty_number_another_program_may_get(tmp_path):
    """Its wheel gone, a lingering demo's daemon kept reopening /dev/pts/N: the next program given
    that number (a test's wheel: 'pty /dev/pts/7 also held by: ... host_tools.table --port
    /dev/pts/7 ... var/demo/...') lost its line to it. The daemon's port is the demo's own link to
    the pty, gone with the wheel."""
    # 3 spins a second apart: the demo sees its wheel's session before the wheel is done (with one
    # spin the wheel could finish and leave before the demo's first look, under load)
    p = subprocess.Popen([sys.executable, "-m", "host_tools.cli", "demo", "--spins", "3", "--speed", "60",
                          "--pause", "1", "--void-rate", "0", "--workdir", str(tmp_path), "--linger", "30"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=open(tmp_path / "demo.err", "w"), text=True)
    try:
        out = ""
        for line in p.stdout:
            out += line
            if "reste ouverte" in line:
                break
        found = re.search(r"(http://127\.0\.0\.1:\d+)/marquee#token=(\S+)", out)
        assert found and "reste ouverte" in out, (out, (tmp_path / "demo.err").read_text())
        base, token = found.groups()
        end = time.monotonic() + 30
        while True:
            req = urllib.request.Request(base + "/state", headers={"Authorization": "Bearer " + token})
            link = json.load(urllib.request.urlopen(req, timeout=5))["link"]
            if (link["problem"] or {}).get("code") == "port_missing" or time.monotonic() > end:
                break
            time.sleep(0.2)
        assert (link["problem"] or {}).get("code") == "port_missing", link      # the wheel has gone
        port = Path(link["port"])
        assert not link["port"].startswith("/dev/") and not port.exists() and not port.is_symlink(), link["port"]
    finally:
        p.terminate()
        p.wait(20)


def test_summary_is_exact_integer_cents():
    from host_tools.demo.table import summarize
    res = {"results": [{"type": "plein", "staked": 1000, "won": 35000, "lost": 0, "returned": 1000, "imprisoned": 0},
                       {"type": "rouge", "staked": 740, "won": 0, "lost": 740, "returned": 0, "imprisoned": 0},
                       {"type": "rouge", "staked": 500, "won": 0, "lost": 500, "returned": 0, "imprisoned": 0, "carried": True}],
           "prisoners": []}
    s = summarize([{"number": 17, "result": res}])
    assert s["staked"] == 1740 and s["house"] == 740 + 500 - 35000
    assert s["expected"] * 74 * 37 == 1000 * 74 + 740 * 37
