"""End to end over pseudo-terminals: a simulated Cammegh reader (host_tools.cammegh.reader_sim,
what `cylindre wheel --cammegh-only` plays) -> `cylindre daemon --source cammegh:PTY` as a
subprocess -> bets placed through the HTTP API and settled with the reader's numbers. The reader
starts stopped (the daemon's `*P 1` starts it), misspins, and its cable adds garbage and cut
lines; no bet that reached the table after the reader's call is ever played. Also a recorded
session played on the pty (host_tools.cammegh.replay.play, what `cylindre wheel --cammegh-replay`
runs) settles every game, and that command prints the file's lines."""

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from host_tools.cammegh.reader_sim import ReaderSim, run_pty
from host_tools.cammegh.replay import play, timed_lines
from host_tools.table.api.auth import issue
from host_tools.sim.ptywheel import PtyPort

from e2ekit import ROOT, free_port

SPEED = 8.0
SESSION = Path(__file__).parents[1] / "data" / "cammegh_session.txt"


class Daemon:
    def __init__(self, tmp: Path, pty_path):
        self.journal = tmp / "journal.sqlite"
        self.token = issue(self.journal, "e2e", "admin")
        self.base = "http://127.0.0.1:%d" % free_port()
        self.p = subprocess.Popen(
            [sys.executable, "-m", "host_tools.table", "--source", "cammegh:" + pty_path, "--journal", str(self.journal),
             "--http", self.base.rsplit("/", 1)[1], "--open", "--log", str(tmp / "daemon.log")],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def api(self, method, path, body=None, timeout=5, raw=False):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Content-Type": "application/json", "Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                text = r.read()
                return r.status, (text.decode() if raw else json.loads(text))
        except urllib.error.HTTPError as e:
            text = e.read()
            return e.code, (text.decode() if raw else json.loads(text or b"{}"))

    def wait_up(self, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if self.api("GET", "/state", timeout=1)[0] == 200:
                    return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise AssertionError("the daemon did not come up")

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


class Clock:
    """time.monotonic, remembering the first reading (run_pty's start: reader time 0)."""

    def __init__(self):
        self.t0 = None

    def __call__(self):
        t = time.monotonic()
        if self.t0 is None:
            self.t0 = t
        return t


def test_a_simulated_reader_runs_the_table_through_the_daemon(tmp_path):
    pty = PtyPort()
    d = Daemon(tmp_path, pty.path)
    sim = ReaderSim(seed=7, games=5, void_rate=0.3, closed=True, garbage=0.05, cut_every=13)
    calls = []
    enter = sim._enter

    def spy(state, t):
        if state == 4:
            calls.append(t)
        enter(state, t)
    sim._enter = spy
    clock = Clock()
    sent, stop = [], threading.Event()

    def player():
        i = 0
        while not stop.is_set():
            at = time.monotonic()
            st, body = d.api("POST", "/bets", {"player": "p%d" % (i % 3), "type": "plein", "numbers": [i % 37],
                                               "stake": 100 + i % 5})
            sent.append((at, st, body))
            i += 1
            time.sleep(0.05)
    try:
        d.wait_up()
        bettor = threading.Thread(target=player, daemon=True)
        bettor.start()
        run_pty(pty, sim, speed=SPEED, clock=clock, stop=lambda: time.monotonic() - (clock.t0 or 1e18) > 120)
        end = time.monotonic() + 30                      # the daemon reads the last lines (a busy machine: late)
        while len(d.api("GET", "/history?limit=100")[1]) < len(sim.results) and time.monotonic() < end:
            time.sleep(0.05)
        stop.set()
        bettor.join(5)
        assert sim.finished and sim.voids and "*P OK" in sim.answers      # started by the daemon's *P 1
        st, hist = d.api("GET", "/history?limit=100")
        assert st == 200
        assert [h["number"] for h in sorted(hist, key=lambda h: h["spin"])] == [n for _, n in sim.results]
        _, bets = d.api("GET", "/bets?limit=100000")
        by_id = {b["id"]: b for b in bets}
        spins = {h["spin"]: h["number"] for h in hist}
        took = [(at, body["id"]) for at, code, body in sent if code == 201]
        assert len(took) > 50
        for at, bid in took:
            b = by_id[bid]
            # settled, or still on the layout (a void puts a bet back: it plays the relaunch), or
            # taken after the instant the call is counted from (the line before it), refused at the call
            assert b["status"] in ("settled", "open") or (b["status"], b["reason"]) == ("refused", "poussette"), b
            if b["status"] == "settled":
                assert b["spin"] in spins and b["result"]["staked"] == b["stake"]
        # no bet sent at or after the reader's call of a game was played in that game
        settled_spins = sorted(spins)
        assert len(calls) == len(settled_spins)               # a misspin happens in state 3
        for spin, call_ms in zip(settled_spins, calls):
            call = clock.t0 + call_ms / 1000 / SPEED
            late = [bid for at, bid in took if at >= call and by_id[bid]["status"] == "settled"
                    and by_id[bid]["spin"] == spin]
            assert late == [], (spin, late)
        refused = {body.get("error") for _, code, body in sent if code == 409}
        assert refused <= {"poussette", "wheel_not_heard"}, refused
        st, state = d.api("GET", "/state")
        assert state["link"]["source"] == "cammegh" and state["link"]["reader"]["faults"].get("garbled", 0) > 0
        assert "result_lost" not in state["link"]["reader"]["faults"]
        st, metrics = d.api("GET", "/metrics", raw=True)
        assert 'cylindre_source{source="cammegh"} 1.0' in metrics
        assert "cylindre_voids_total" in metrics and 'cylindre_reader_faults_total{code="garbled"}' in metrics
        assert d.api("GET", "/health")[0] == 200
    finally:
        stop.set()
        d.stop()


def test_a_recorded_session_played_on_the_port_settles_every_game(tmp_path):
    pty = PtyPort()
    d = Daemon(tmp_path, pty.path)
    try:
        d.wait_up()
        time.sleep(0.2)                                  # the port is open (a reader's lines before are not ours)
        play(pty, timed_lines(SESSION.read_bytes()), speed=16)
        end = time.monotonic() + 30                      # the daemon reads the last lines (a busy machine: late)
        while True:
            st, hist = d.api("GET", "/history?limit=100")
            if len(hist) >= 6 or time.monotonic() > end:
                break
            time.sleep(0.05)
        assert [h["number"] for h in sorted(hist, key=lambda h: h["spin"])] == [7, 35, 25, 26, 15, 13]
        st, recall = d.api("GET", "/spins/%d" % min(h["spin"] for h in hist))
        assert bytes.fromhex(recall["events"][-1]["frame_hex"]) == b"*X;5;013; 7;0;168;1"
    finally:
        d.stop()


def test_cylindre_wheel_cammegh_replay_prints_the_session_at_its_pace(tmp_path):
    """The command the recorded sessions are played with: every line of the file, in order."""
    import os
    reader = subprocess.Popen([sys.executable, "-m", "host_tools.sim.ptywheel", "--cammegh-replay", str(SESSION),
                               "--speed", "100", "--path-file", str(tmp_path / "pty")],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 20
        while not (tmp_path / "pty").exists() and time.monotonic() < end:
            time.sleep(0.01)
        # already raw (ptywheel.PtyPort); setting it again would flush what is queued
        fd = os.open((tmp_path / "pty").read_text().split()[0], os.O_RDONLY | os.O_NONBLOCK)
        got = b""
        while reader.poll() is None and time.monotonic() < end:
            try:
                got += os.read(fd, 4096)
            except BlockingIOError:
                time.sleep(0.005)
        os.close(fd)
    finally:
        if reader.poll() is None:
            reader.kill()
        reader.wait()
    want = b"".join(line for _, line in timed_lines(SESSION.read_bytes()))
    assert reader.returncode == 0 and got == want
