"""`cylindre demo --tables 2`: a real broker, two whole tables (simulated wheels, daemons publishing
with --nats, players) and the floor; every game each table journaled reaches the floor, and the
floor page's address is printed with a token. About 25 s."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    # each simulated wheel reports the demo's --wheel-serial itself (it said sim-<table> whatever was asked)
    import sqlite3
    with sqlite3.connect(tmp_path / "floor.sqlite") as db:
        serials = set(db.execute("SELECT table_id, serial FROM events WHERE kind='result'").fetchall())
    assert serials == {("T1", "DEMO-0001"), ("T2", "DEMO-0002")}, serials


def _alive_with(marker: str) -> list[str]:
    """Command lines of running processes that name `marker` (the demo's folder)."""
    found = []
    for p in Path("/proc").iterdir():
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if p.name.isdigit() and marker in cmd:
            found.append(cmd)
    return found


@pytest.mark.slow
def test_a_lingering_demo_tells_its_counts_then_stops_everything_on_sigterm(tmp_path):
    """With --linger (docs/floor/overview.md: to look at the floor) the demo still prints each table's coups
    journaled against the coups at the floor once the spins are played; then `kill` (SIGTERM: a
    supervisor, a CI timeout) stops everything it started, as Ctrl-C does."""
    import queue
    import threading
    work = tmp_path / "demo"
    p = subprocess.Popen([sys.executable, "-m", "host_tools.cli", "demo", "--tables", "2", "--spins", "2",
                          "--linger", "--workdir", str(work)], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in p.stdout], daemon=True).start()
    try:
        seen, end = [], time.monotonic() + 180
        while not any("La salle reste ouverte" in x for x in seen):
            try:
                seen.append(lines.get(timeout=max(0.1, end - time.monotonic())))
            except queue.Empty:
                raise AssertionError("no summary while lingering:\n" + "".join(seen)) from None
        got = {t: (a, b) for t, a, b in re.findall(r"  (T\d) ?: (\d+) / (\d+)", "".join(seen))}
        assert set(got) == {"T1", "T2"} and all(a == b for a, b in got.values()), "".join(seen)
        assert len(_alive_with(str(work))) >= 3
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        end = time.monotonic() + 30
        while _alive_with(str(work)) and time.monotonic() < end:
            time.sleep(0.2)
        assert _alive_with(str(work)) == []
    finally:
        if p.poll() is None:            # a failed check: still stop the demo's children (SIGTERM), then it
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def test_the_demos_broker_dies_with_the_demo_even_killed_minus_9(tmp_path):
    """The floor demo's nats-server is started to die with the demo (PR_SET_PDEATHSIG): a demo
    killed by SIGKILL (no handler runs) leaves no broker behind holding its port and its store."""
    script = ("import sys, time\n"
              "from host_tools.floor import natsrv\n"
              "from host_tools.demo.children import die_with_parent\n"
              "s = natsrv.Server(sys.argv[1], preexec_fn=die_with_parent).start()\n"
              "print(s.proc.pid, flush=True)\n"
              "time.sleep(600)\n")
    p = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "js")], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        broker = int(p.stdout.readline())
        assert Path(f"/proc/{broker}").exists()
        p.kill()
        p.wait(timeout=30)
        end = time.monotonic() + 30
        while _running(broker) and time.monotonic() < end:
            time.sleep(0.1)
        assert not _running(broker), "nats-server outlived the demo killed -9"
    finally:
        if p.poll() is None:
            p.kill()


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie's parent, here init, has not reaped it yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False
