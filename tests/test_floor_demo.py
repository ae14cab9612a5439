"""`cylindre demo --tables 2`: a real broker, two whole tables (simulated wheels, daemons publishing
with --nats, players) and the floor; every game each table journaled reaches the floor, and the
floor page's address is printed with a token. About 25 s."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_floor_of_two_tables(tmp_path):
    out = subprocess.run([sys.executable, "-m", "host_tools.cli", "demo", "--tables", "2", "--spins", "3",
                          "--workdir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert re.search(r"directeur +http://127\.0\.0\.1:\d+/floor#token=cyl_\S+", out.stdout)
    got = dict(re.findall(r"  (T\d) ?: (\d+ / \d+)", out.stdout))
    assert set(got) == {"T1", "T2"}
    for table, counts in got.items():
        journal, floor = map(int, counts.split(" / "))
        assert journal >= 1 and journal == floor, (table, counts, out.stdout)
