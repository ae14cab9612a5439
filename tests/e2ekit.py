"""End-to-end rig: the simulated board in a thread on a real pty, the daemon as a subprocess,
and a faulty line between them (cut, flipped bits, garbage, forged and replayed frames)."""

from __future__ import annotations

import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from cylindre.link import frame as fr
from cylindre.link.mac import Hmac
from host_tools.table.api.auth import issue
from host_tools.table.wheel.keys import new_key
from host_tools.sim.ptywheel import PtyPort, SimulatedBoard

ROOT = Path(__file__).resolve().parent.parent


def flip_bit(rng, data: bytes) -> bytes:
    """`data` with one bit flipped at random: the corruption a frame's CRC and MAC must catch."""
    b = bytearray(data)
    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


class FaultyLine:
    """The cable: board side calls write/read; faults are switched on by the test."""

    def __init__(self, pty: PtyPort, seed=1):
        self.pty = pty
        self.path = pty.path
        self.cut = False
        self.flip_rate = 0.0
        self.garbage_rate = 0.0
        self.rng = random.Random(seed)
        self.captured: list[bytes] = []
        self.inject: list[bytes] = []
        self.lock = threading.Lock()

    def write(self, data):
        with self.lock:
            extra, self.inject = self.inject, []
        for e in extra:
            self.pty.write(e)
        if self.cut:
            return
        if len(self.captured) < 400:
            self.captured.append(bytes(data))
        if self.flip_rate and self.rng.random() < self.flip_rate:
            data = flip_bit(self.rng, data)
        if self.garbage_rate and self.rng.random() < self.garbage_rate:
            data = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 40))) + data
        self.pty.write(data)

    def read(self):
        data = self.pty.read()
        return b"" if self.cut else data


def holders(path) -> list:
    """Other processes that hold `path` open (pid and command): on a shared machine a daemon left
    running by someone else's test retries its old /dev/pts/N and takes half of a new pty's bytes."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == path:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmd = f.read().replace(bytes(1), b" ").decode(errors="replace")
                    out.append(f"{pid} {cmd[:160]}")
                    break
            except OSError:
                continue
    return out


def private_pty() -> PtyPort:
    """A pty no other process holds (a daemon left running elsewhere may hold a number that the
    system hands out again: that pty is set aside)."""
    aside = []
    pty = PtyPort()
    while holders(pty.path) and len(aside) < 8:
        aside.append(pty)
        pty = PtyPort()
    for p in aside:
        for fd in (p.master, p.slave):
            os.close(fd)
    return pty


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Rig:
    def __init__(self, tmp: Path, seed=1, speed=60.0, pause=0.3, void_rate=0.0, silence_ms=None):
        self.silence_ms = silence_ms
        self.tmp = tmp
        self.key_path = tmp / "T1.key"
        self.key = new_key(self.key_path)
        self.journal = tmp / "journal.sqlite"
        self.token = issue(self.journal, "e2e", "admin")
        self.http = free_port()
        self.base = f"http://127.0.0.1:{self.http}"
        self.line = FaultyLine(private_pty(), seed)
        # the daemon opens the pty through a link of this test's own (removed when the daemon
        # stops), as a udev name: a daemon left behind never retries someone else's /dev/pts/N
        self.port_link = tmp / "ttyCYL"
        os.symlink(self.line.path, self.port_link)
        self.results = []
        self.board = SimulatedBoard(self.line, self.key, "T1", seed=seed, speed=speed, pause=pause,
                                    void_rate=void_rate, log=self._log)
        self.daemon = None
        self.daemons = 0
        self.python, self.root = sys.executable, ROOT      # the daemon under test (a drill may run another)
        self._thread = None
        self.closed = threading.Event()

    def _log(self, text):
        pass

    # -- the daemon -----------------------------------------------------------------------------
    def start_daemon(self):
        self.daemon = subprocess.Popen(
            [self.python, "-m", "host_tools.table", "--port", str(self.port_link), "--key", str(self.key_path),
             "--journal", str(self.journal), "--http", f"127.0.0.1:{self.http}", "--open",
             "--log", str(self.tmp / "daemon.log")]
            + ([] if self.silence_ms is None else ["--silence-ms", str(self.silence_ms)]),
            cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.daemons += 1

    def kill_daemon(self):
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.kill()
            self.daemon.wait()

    def stop_daemon(self):
        self.closed.set()
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(5)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        try:
            os.unlink(self.port_link)
        except OSError:
            pass

    def api(self, method, path, body=None, timeout=5):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json", "Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def wait_link(self, timeout=30):
        end = time.monotonic() + timeout
        s = None
        while time.monotonic() < end:
            try:
                st, s = self.api("GET", "/state", timeout=2)
                if st == 200 and s["link"]["session"]:
                    return s
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        others = [h for h in holders(self.line.path) if self.daemon is None or not h.startswith(f"{self.daemon.pid} ")]
        raise AssertionError("the daemon never opened a session with the wheel (link: %s; pty %s also held by: %s)"
                             % ((s or {}).get("link", {}).get("problem"), self.line.path, others or "nobody else"))

    # -- the wheel ------------------------------------------------------------------------------
    def play(self, spins):
        """The wheel plays `spins` in a thread once a daemon has opened a session with it (the
        croupier waits for the table host; after that it plays on whatever the link does), then
        stays on the line (it answers HELLOs, resends its outbox) until `finish`. On a busy machine
        a daemon may take seconds to start: the spins, bets and faults of a test still meet."""
        self._played = threading.Event()
        self._handoff = threading.Event()

        def go():
            end = time.monotonic() + 60
            while not self.board.link.in_session and time.monotonic() < end and not self.closed.is_set():
                self.board.service()
                time.sleep(0.005)
            self.board.play(spins)
            self._played.set()
            while not (self._handoff.is_set() or self.closed.is_set()):
                self.board.service()
                time.sleep(0.005)
        self._thread = threading.Thread(target=go, daemon=True)
        self._thread.start()

    def playing(self):
        return self._thread is not None and self._thread.is_alive() and not self._played.is_set()

    def finish(self, timeout=60):
        self._played.wait(timeout)
        assert self._played.is_set(), "the wheel did not finish its spins"
        self._handoff.set()
        self._thread.join(timeout)
        end = time.monotonic() + timeout
        while self.board.link.outbox_len() and time.monotonic() < end:
            self.board.service()
            time.sleep(0.005)
        assert self.board.link.outbox_len() == 0, "the host never acknowledged every event"
        # the board stays on the line (answers commands) until the test ends
        self._svc = threading.Thread(target=self._serve, daemon=True)
        self._svc.start()

    def _serve(self):
        while not self.closed.is_set():
            self.board.service()
            time.sleep(0.005)

    def board_results(self):
        """(spin, number) of every result the wheel's controller emitted."""
        return list(self.board.results)

    # -- attack material ------------------------------------------------------------------------
    def forged_result(self, spin, number):
        """A result frame under a wrong key: what an intruder on the line could make."""
        payload = json.dumps({"ev": "result", "t": 1, "spin": spin, "number": number}).encode()
        return fr.build(Hmac(b"an intruder's guess of the key!!"), fr.EVENT, 1, 0, payload, b"\x00" * 8, b"\x00" * 8)

    # -- the journal ----------------------------------------------------------------------------
    def db(self):
        c = sqlite3.connect(self.journal)
        c.row_factory = sqlite3.Row
        return c


def check_settled_exactly_once(rig):
    """Every result the wheel produced is settled once, with its number; nothing else is."""
    want = rig.board_results()
    c = rig.db()
    rows = [(r["spin"], r["number"]) for r in c.execute("SELECT spin, number FROM settlements ORDER BY spin")]
    assert rows == want, (rows, want)
    seen = {}
    for res in c.execute("SELECT spin, bet, staked, returned, lost, imprisoned, more FROM all_results"):
        if json.loads(res["more"] or "{}").get("carried"):
            continue
        assert res["bet"] not in seen, f"bet {res['bet']} settled in spins {seen[res['bet']]} and {res['spin']}"
        seen[res["bet"]] = res["spin"]
        assert res["staked"] == res["returned"] + res["lost"] + res["imprisoned"]
    for b in c.execute("SELECT id, status, spin FROM bets_now WHERE status='settled'"):
        assert seen.get(b["id"]) == b["spin"]
    c.close()
    return rows
