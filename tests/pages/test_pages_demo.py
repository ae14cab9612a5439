"""`cylindre demo --linger`: it prints the pages' addresses with their tokens, and the table stays
up after the last spin, serving them, until it is told to stop."""

import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _get(url, token=None):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read()


@pytest.mark.slow
def test_demo_prints_the_pages_and_lingers_serving_them(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "host_tools.cli", "demo", "--spins", "2", "--speed", "60", "--pause", "0.3",
                          "--void-rate", "0", "--workdir", str(tmp_path), "--linger"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            line = p.stdout.readline()
            if not line:
                break
            out.append(line)
            if line.startswith("La table reste ouverte"):
                break
        text = "".join(out)
        assert "Fin de partie : 2 coups payés" in text, text[-2000:]
        urls = dict(re.findall(r"^\s+(tableau des numéros|chef de table|statistiques)\s+(\S+)$", text, re.M))
        base, marquee_token = urls["tableau des numéros"].split("/marquee#token=")
        pit_token = urls["chef de table"].split("#token=")[1]
        assert urls["statistiques"] == f"{base}/stats#token={pit_token}"
        st, kind, body = _get(base + "/marquee")
        assert st == 200 and kind.startswith("text/html") and b"/assets/marquee.js" in body
        state = json.loads(_get(base + "/state", marquee_token)[2])
        assert state["table"]["croupier"] == "Marie" and state["table"]["session_since"] > 0
        with pytest.raises(urllib.error.HTTPError) as e:
            _get(base + "/alerts", marquee_token)                       # a display token is not a chef's
        assert e.value.code == 403
        stats = json.loads(_get(base + "/stats/analysis", pit_token)[2])
        assert stats["games"] == 2 and "report.pdf" in stats["files"]
        assert p.poll() is None                                          # still up after the last spin
        p.send_signal(signal.SIGINT)
        assert p.wait(20) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
