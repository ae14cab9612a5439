"""A relay we control on the serial line (cable between the simulated wheel and the daemon):
delay, cut, replay and corrupt the wheel's bytes, with players betting all along. Used by the
end-to-end money test and by `host_tools/drills.py`-style runs (`make drill`)."""

from __future__ import annotations

import heapq
import json
import random
import threading
import time

from e2ekit import Rig


class Relay:
    """The board's port goes through here. Wheel->host bytes can be held back (`delay_s`),
    dropped (`cut`), flipped (`flip_rate`) or played again later (`replay()`); host->wheel bytes
    are dropped while `cut` and delayed like the rest."""

    def __init__(self, pty, seed=1):
        self.pty = pty
        self.path = pty.path
        self.delay_s = 0.0
        self.cut = False
        self.flip_rate = 0.0
        self.rng = random.Random(seed)
        self.captured: list[bytes] = []
        self._q: list = []
        self._n = 0
        self._lock = threading.Lock()
        self._inbox: list = []
        self._stop = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    def write(self, data):
        if self.cut:
            return
        if len(self.captured) < 2000:
            self.captured.append(bytes(data))
        if self.flip_rate and self.rng.random() < self.flip_rate:
            b = bytearray(data)
            i = self.rng.randrange(len(b))
            b[i] ^= 1 << self.rng.randrange(8)
            data = bytes(b)
        with self._lock:
            self._n += 1
            heapq.heappush(self._q, (time.monotonic() + self.delay_s, self._n, bytes(data)))

    def read(self):
        data = self.pty.read()
        if self.cut:
            return b""
        if data and self.delay_s:
            with self._lock:
                self._inbox.append((time.monotonic() + self.delay_s, data))
            data = b""
        with self._lock:
            now = time.monotonic()
            ready = [d for (at, d) in self._inbox if at <= now]
            self._inbox = [(at, d) for (at, d) in self._inbox if at > now]
        return data + b"".join(ready)

    def replay(self, n=20):
        """Play old wheel frames again (WELCOMEs, statuses, events, replies)."""
        for d in self.rng.sample(self.captured, min(n, len(self.captured))):
            with self._lock:
                self._n += 1
                heapq.heappush(self._q, (time.monotonic(), self._n, d))

    def _pump(self):
        while not self._stop.is_set():
            out = []
            with self._lock:
                now = time.monotonic()
                while self._q and self._q[0][0] <= now:
                    out.append(heapq.heappop(self._q)[2])
            for d in out:
                if not self.cut:
                    self.pty.write(d)
            time.sleep(0.002)

    def stop(self):
        self._stop.set()


class Players:
    """Players betting continuously through the API; each bet remembers when it was sent."""

    def __init__(self, rig, seed=1):
        self.rig = rig
        self.rng = random.Random(seed)
        self.sent = []          # (bet id, monotonic time the request left, HTTP status)
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._t.start()

    def stop(self):
        self._stop.set()
        if self._t.is_alive():
            self._t.join(10)

    def _run(self):
        while not self._stop.is_set():
            body = {"player": "p%d" % self.rng.randrange(5), "type": "plein",
                    "numbers": [self.rng.randrange(37)], "stake": 100 * self.rng.randrange(1, 20)}
            t0 = time.monotonic()
            try:
                st, out = self.rig.api("POST", "/bets", body, timeout=5)
            except OSError:
                continue
            bet = out.get("bet") if st == 409 else out
            if isinstance(bet, dict) and bet.get("id"):
                self.sent.append((bet["id"], t0, st))
            time.sleep(self.rng.uniform(0.005, 0.03))


def calls_of(rig):
    """Hook the simulated board: {spin: monotonic instant it emitted its rien ne va plus}."""
    calls = {}
    log = rig.board.log

    def hooked(text):
        if text.endswith("rien ne va plus"):
            calls.setdefault(int(text.split()[1].rstrip(":")), time.monotonic())
        log(text)

    rig.board.log = hooked
    return calls


def relay_rig(tmp, seed=1, speed=60.0, pause=0.3):
    rig = Rig(tmp, seed=seed, speed=speed, pause=pause)
    relay = Relay(rig.line.pty, seed)
    rig.line = relay
    rig.board.port = relay
    return rig, relay


def audit(rig, players, calls):
    """Counts from the journal: bets sent after their spin's call yet played, and money."""
    c = rig.db()
    sent = {bid: t0 for bid, t0, _st in players.sent}
    out = {"bets": len(sent), "accepted": 0, "played": 0, "played_after_call": 0, "refused": {},
           "money_delta": 0, "settled_spins": 0}
    for r in c.execute("SELECT id, status, spin, reason, stake, result FROM bets"):
        if r["status"] == "refused":
            out["refused"][r["reason"]] = out["refused"].get(r["reason"], 0) + 1
        else:
            out["accepted"] += 1
        if r["status"] == "settled":
            out["played"] += 1
            res = json.loads(r["result"])
            out["money_delta"] += res["staked"] - (res["returned"] + res["lost"] + res["imprisoned"])
            t0 = sent.get(r["id"])
            call = calls.get(r["spin"])
            if t0 is not None and call is not None and t0 > call:
                out["played_after_call"] += 1
    out["settled_spins"] = c.execute("SELECT COUNT(*) FROM settlements").fetchone()[0]
    c.close()
    return out


def chaos(rig, relay, seconds, rng, kill=False):
    """Faults, one after another, for `seconds`: delays, cuts, replays, noise (and daemon kills)."""
    end = time.monotonic() + seconds
    counts = {"delays": 0, "cuts": 0, "replays": 0, "noise": 0, "kills": 0}
    while time.monotonic() < end:
        what = rng.choice(["delay", "cut", "replay", "noise", "kill" if kill else "delay"])
        if what == "delay":
            relay.delay_s = rng.uniform(0.2, 1.5)
            time.sleep(rng.uniform(0.5, 2.0))
            relay.delay_s = 0.0
        elif what == "cut":
            relay.cut = True
            time.sleep(rng.uniform(0.3, 2.0))
            relay.cut = False
        elif what == "replay":
            relay.replay(30)
        elif what == "noise":
            relay.flip_rate = 0.2
            time.sleep(rng.uniform(0.3, 1.0))
            relay.flip_rate = 0.0
        else:
            rig.kill_daemon()
            rig.start_daemon()
        counts[what + ("s" if what != "noise" else "")] += 1
        time.sleep(rng.uniform(0.2, 0.8))
    return counts
