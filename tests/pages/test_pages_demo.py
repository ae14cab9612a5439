"""`cylindre demo --linger`: it prints the pages' addresses with their tokens, and the table stays
up after the last spin, serving them, until it is told to stop."""

import json
import os
import re
import signal
import socket
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


def _left(work) -> list[str]:
    """Processes still running whose command line names the demo's folder (its wheels, daemons,
    tables, floor service: each is given a file in it)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(work) in cmd and int(d.name) != os.getpid():
            out.append(f"{d.name}: {cmd[:160]}")
    return out


def _read_until(p, text, lines, timeout=150):
    if any(text in line for line in lines):
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return
    raise AssertionError(f"never said {text!r}:\n" + "".join(lines)[-3000:])


@pytest.mark.slow
def test_the_floor_demo_starts_every_table_and_sigterm_stops_all_it_started(tmp_path):
    """`cylindre demo --tables 2`: each table says it is up; SIGTERM to the demo alone (not its
    group) ends the tables, their wheels and daemons, the floor service and the broker."""
    work = tmp_path / "floor"
    p = subprocess.Popen([sys.executable, "-m", "host_tools.cli", "demo", "--tables", "2", "--spins", "500", "--speed", "60",
                          "--pause", "0.3", "--workdir", str(work)], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        _read_until(p, "courtier NATS", lines)
        broker = re.search(r"courtier NATS nats://127\.0\.0\.1:(\d+)", "".join(lines)).group(1)
        _read_until(p, "table T1 prête", lines)
        _read_until(p, "table T2 prête", lines)
        assert len(_left(work)) >= 5, _left(work)          # 2 tables x (demo, wheel, daemon) + the floor
        p.send_signal(signal.SIGTERM)
        p.wait(60)
        end = time.monotonic() + 10
        while _left(work) and time.monotonic() < end:
            time.sleep(0.2)
        assert _left(work) == []
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", int(broker)), timeout=2).close()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_the_table_demo_holds_its_pty_and_a_killed_demo_takes_its_children_with_it(tmp_path):
    """The table's pseudo-terminal is locked from its birth by the daemon it is handed to: another
    program cannot take it (the lost-table race). Ctrl-C to a lingering demo ends all it started;
    a demo killed outright (SIGKILL: no clean-up of its own) too."""
    for how in (signal.SIGINT, signal.SIGKILL):
        work = tmp_path / how.name
        p = subprocess.Popen([sys.executable, "-m", "host_tools.cli", "demo", "--spins", "6", "--speed", "60",
                              "--pause", "0.3", "--workdir", str(work), "--linger"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        lines = []
        try:
            _read_until(p, "Démonstration Cylindre :", lines)
            pty = re.search(r"cylindre T1 sur (/dev/pts/\d+)", "".join(lines)).group(1)
            if how == signal.SIGINT:                                  # while the wheel plays
                import fcntl
                fd = os.open(pty, os.O_RDWR | os.O_NOCTTY)
                try:
                    with pytest.raises(BlockingIOError):              # the daemon's, from the start
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                finally:
                    os.close(fd)
            _read_until(p, "La table reste ouverte", lines)
            assert _left(work)
            p.send_signal(how)
            p.wait(60)
            end = time.monotonic() + 15
            while _left(work) and time.monotonic() < end:
                time.sleep(0.2)
            assert _left(work) == [], how
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_table_s_pty_is_locked_from_its_birth_before_any_daemon_opens_it():
    """No window between a pty's birth and its daemon: a program that opens the same /dev/pts/N
    (one left from an earlier run, retrying its old port) cannot lock it, even before the daemon starts."""
    import fcntl
    from host_tools.demo.children import TablePty
    line = TablePty()
    try:
        fd = os.open(line.path, os.O_RDWR | os.O_NOCTTY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    finally:
        line.handed_over()
