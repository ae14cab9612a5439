"""One daemon per journal (daemon/journal_lock.py): a second daemon on the same journal refuses to
start, naming the first (its pid and its API's address); a daemon killed without a word (kill -9)
leaves nothing that blocks its restart. Real `cylindre daemon` processes."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from host_tools.table.daemon.journal_lock import JournalBusy, JournalLock, lock_path
from host_tools.table.wheel.keys import new_key

ROOT = Path(__file__).resolve().parents[3]


def test_a_second_hold_of_one_journal_is_refused_naming_the_first(tmp_path):
    j = tmp_path / "journal.sqlite"
    first = JournalLock(j).acquire(http="http://127.0.0.1:8737/")
    try:
        with pytest.raises(JournalBusy) as e:
            JournalLock(j).acquire(http="http://127.0.0.1:9999/")
        assert e.value.holder["pid"] == os.getpid() and e.value.holder["http"] == "http://127.0.0.1:8737/"
        assert f"pid {os.getpid()}" in str(e.value) and "API http://127.0.0.1:8737/" in str(e.value)
        JournalLock(tmp_path / "other.sqlite").acquire().release()       # another journal: free
    finally:
        first.release()
    JournalLock(j).acquire().release()                                  # released: the next one gets it


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _daemon(tmp_path, port, name):
    log = open(tmp_path / f"{name}.err", "w")
    return subprocess.Popen([sys.executable, "-m", "host_tools.table", "--port", str(tmp_path / "no-wheel-here"),
                             "--key", str(tmp_path / "T1.key"), "--journal", str(tmp_path / "journal.sqlite"),
                             "--http", f"127.0.0.1:{port}"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def _up(port, proc, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "the daemon exited"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/openapi.json", timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the daemon never answered")


@pytest.mark.slow
def test_a_second_daemon_refuses_to_start_and_a_killed_one_restarts(tmp_path):
    new_key(tmp_path / "T1.key")
    p1, p2 = _free_port(), _free_port()
    first = _daemon(tmp_path, p1, "first")
    try:
        _up(p1, first)
        holder = json.loads(lock_path(tmp_path / "journal.sqlite").read_text())
        assert holder["pid"] == first.pid and holder["http"] == f"http://127.0.0.1:{p1}/"
        second = _daemon(tmp_path, p2, "second")
        assert second.wait(30) == 2
        said = (tmp_path / "second.err").read_text()
        assert re.search(rf"déjà tenu par un autre démon \(pid {first.pid} sur .*, API http://127\.0\.0\.1:{p1}/", said), said
        assert "daemon up" not in said
        with pytest.raises(OSError):                                    # it never served
            urllib.request.urlopen(f"http://127.0.0.1:{p2}/openapi.json", timeout=2)
        first.send_signal(signal.SIGKILL)                               # a crash: no word, no clean-up
        first.wait(10)
        third = _daemon(tmp_path, p2, "third")
        try:
            _up(p2, third)                                              # the stale lock file does not block it
            assert json.loads(lock_path(tmp_path / "journal.sqlite").read_text())["pid"] == third.pid
        finally:
            third.send_signal(signal.SIGTERM)
            assert third.wait(20) == 0
        assert lock_path(tmp_path / "journal.sqlite").read_text() == ""   # a clean stop leaves no holder named
    finally:
        for p in (first,):
            if p.poll() is None:
                p.kill()
                p.wait()
