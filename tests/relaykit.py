"""A relay we control on the serial line (cable between the simulated wheel and the daemon):
delay, cut, replay and corrupt the wheel's bytes, with players betting all along. Used by the
end-to-end money test and by `host_tools/drills.py`-style runs (`make drill`)."""

from __future__ import annotations

import heapq
import json
import random
import threading
import time

from e2ekit import Rig, flip_bit


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
            data = flip_bit(self.rng, data)
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
    return moments_of(rig).calls


class Moments:
    """When the board emitted each spin's events (monotonic): launch, call, result or void."""

    def __init__(self):
        self.at = {}            # {spin: {"launch": t, "rnvp": t, "result": t, "void": t}}
        self.calls = {}         # {spin: t of its rien ne va plus}
        self.ends = {}          # {spin: t of its result or void}
        self.cv = threading.Condition()

    def saw(self, text):
        head, _, what = text.partition(": ")
        if not head.startswith("spin "):
            return
        spin = int(head.split()[1])
        kind = ("rnvp" if what == "rien ne va plus" else "launch" if what == "launch"
                else "void" if what.startswith("void") else "result")
        with self.cv:
            self.at.setdefault(spin, {}).setdefault(kind, time.monotonic())
            if kind == "rnvp":
                self.calls.setdefault(spin, self.at[spin]["rnvp"])
            if kind in ("result", "void"):
                self.ends.setdefault(spin, self.at[spin][kind])
            self.cv.notify_all()

    def wait(self, spin, kind, stop, timeout=120):
        """The instant spin `spin` emitted `kind` (waiting for it), or None."""
        end = time.monotonic() + timeout
        with self.cv:
            while not stop.is_set() and time.monotonic() < end:
                t = self.at.get(spin, {}).get(kind)
                if t is None and kind == "result":
                    t = self.at.get(spin, {}).get("void")
                if t is not None:
                    return t
                self.cv.wait(0.2)
        return None


def moments_of(rig):
    """Hook the simulated board's log: a Moments of its spins."""
    m = Moments()
    log = rig.board.log

    def hooked(text):
        m.saw(text)
        log(text)

    rig.board.log = hooked
    return m


def relay_rig(tmp, seed=1, speed=60.0, pause=0.3):
    rig = Rig(tmp, seed=seed, speed=speed, pause=pause)
    relay = Relay(rig.line.pty, seed)
    rig.line = relay
    rig.board.port = relay
    return rig, relay


def audit(rig, players, calls, ends=None):
    """Counts from the journal: bets sent after their spin's call (or its result) yet played, and
    money (every settled bet balances to the cent)."""
    c = rig.db()
    sent = {bid: t0 for bid, t0, _st in players.sent}
    out = {"bets": len(sent), "accepted": 0, "played": 0, "played_after_call": 0, "played_after_result": 0,
           "won_after_call": 0, "refused": {}, "money_delta": 0, "settled_spins": 0}
    for r in c.execute("SELECT b.id, b.status, b.spin, b.reason, b.stake, json_object('staked', r.staked, 'returned', "
                       "r.returned, 'lost', r.lost, 'imprisoned', r.imprisoned, 'won', r.won) AS result FROM bets_now b "
                       "LEFT JOIN all_results r ON r.wheel=b.wheel AND r.bet=b.id AND r.spin=b.spin"):
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
                out["won_after_call"] += res.get("won", 0) > 0
                end = (ends or {}).get(r["spin"])
                out["played_after_result"] += end is not None and t0 > end
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


PHASES = ("before_launch", "ball_in_rim", "before_call", "after_call", "between_call_and_result", "after_result")


def pulls(relay, moments, spins, stop, kinds=("cut", "delay"), rng=None, log=None):
    """A fault at every phase of the spin, one spin after another: spin k gets phase
    PHASES[(k-1) % 6] with fault kinds[(k-1) // 6 % len(kinds)]: a cable pull of 2 to 15 s, or the
    line slowed by 1.5 s for 8 s. The instants before the call are taken from the spins before
    (launch to call, call to result). Returns what was done, one dict per spin."""
    rng = rng or random.Random(1)
    done, to_call, to_end = [], [], []
    for k in range(1, spins + 1):
        if stop.is_set():
            break
        phase, kind = PHASES[(k - 1) % len(PHASES)], kinds[(k - 1) // len(PHASES) % len(kinds)]
        call_gap = sum(to_call) / len(to_call) if to_call else 15.0
        end_gap = sum(to_end) / len(to_end) if to_end else 2.0
        anchor, offset = {"before_launch": ("result", 0.3), "ball_in_rim": ("launch", 3.0),
                          "before_call": ("launch", call_gap - 1.0), "after_call": ("rnvp", 0.05),
                          "between_call_and_result": ("rnvp", end_gap / 2), "after_result": ("result", 0.05)}[phase]
        t = moments.wait(k - 1 if phase == "before_launch" else k, anchor, stop) if k > 1 or phase != "before_launch" else time.monotonic()
        if t is not None:
            time.sleep(max(0.0, t + offset - time.monotonic()))
            dur = rng.uniform(2.0, 15.0) if kind == "cut" else 8.0
            if kind == "cut":
                relay.cut = True
            else:
                relay.delay_s = 1.5
            stop.wait(dur)
            relay.cut, relay.delay_s = False, 0.0
            done.append({"spin": k, "phase": phase, "fault": kind, "seconds": round(dur, 1)})
            if log:
                log(done[-1])
        at = moments.at.get(k, {})
        if "launch" in at and "rnvp" in at:
            to_call.append(at["rnvp"] - at["launch"])
        if "rnvp" in at and "result" in at:
            to_end.append(at["result"] - at["rnvp"])
    return done
