"""A simulated Cammegh SS2 reader (lecteur simulé), written from ../shared/WHEEL.md and
docs/integrators/cammegh-output.md alone, independent of Cylindre's own output: what the table host
reads from a reader installed on a casino's wheel.

`ReaderSim` is pure, on an injected reader clock (ms): `advance(now_ms)` returns the bytes printed
up to then, `feed(data, now_ms)` takes the host's commands. As a real reader it changes state only
on its 500 ms tick (the bare number goes out just before the first state-5 line), runs the rotor
down to 000 during state 2 and restarts it the other way, steps the game number when 5 turns to 2,
keeps it through a misspin (flag 8, 8|2 for a ball thrown the same way as the rotor), shows 1 at
power-up and 6 while stopped, and answers `*P 1` / `*P 0` / `*u 1`. Options add what a cable adds:
garbage lines, and status lines cut short (the next line runs into them).

`run_pty` paces those bytes at 9600 baud (in reader time, `speed` times real time) on a
pseudo-terminal: `cylindre wheel --cammegh-only`.
"""

from __future__ import annotations

import random

PERIOD_MS = 500
BAUD_BYTES_PER_S = 960          # 9600 baud 8N1: ten bits a byte


class ReaderSim:
    """One reader. `games`: stop after that many games dealt (0: never)."""

    def __init__(self, seed=1, games=0, void_rate=0.0, closed=False, close_every=0, garbage=0.0,
                 cut_every=0, first_game=1, last=None, power_up_ms=1500):
        self.rng = random.Random(seed)
        self.games = games
        self.void_rate = void_rate
        self.close_every = close_every
        self.garbage = garbage
        self.cut_every = cut_every
        self.game = first_game % 1000
        self.last = last
        self.state = 1
        self.flags = 0
        self.rpm_x10 = 0
        self.direction = 0
        self.want_closed = closed
        self.power_up_ms = power_up_ms
        self.results = []           # (game, number) dealt
        self.voids = []             # (game, flags)
        self.answers = []           # what it answered, in order
        self._tick = 0              # the next 500 ms tick
        self._until = 0             # the current state ends at its first tick from then
        self._spin_void = None      # this launch's misspin: (at_ms, flags) or None
        self._number = None
        self._rotor_target = 0
        self._lines = 0
        self._out = b""
        self._inbuf = b""

    @property
    def finished(self):
        return bool(self.games) and len(self.results) >= self.games and self.state in (2, 6)

    # -- the host's commands -------------------------------------------------------------
    def feed(self, data, now_ms):
        self._inbuf += data
        while True:
            cut = min((i for i in (self._inbuf.find(b"\r"), self._inbuf.find(b"\n")) if i >= 0), default=-1)
            if cut < 0:
                self._inbuf = self._inbuf[-64:]
                return
            cmd, self._inbuf = self._inbuf[:cut].strip(), self._inbuf[cut + 1:]
            if cmd == b"*P 1":
                ok = self.state != 1
                if ok and self.state == 6:
                    self._enter(2, now_ms)
                self._answer(b"*P OK" if ok else b"*P NO")
            elif cmd == b"*P 0":
                ok = self.state in (2, 5, 6)      # not with a ball in play
                if ok and self.state != 6:
                    self._close(now_ms)
                self._answer(b"*P OK" if ok else b"*P NO")
            elif cmd == b"*u 1":
                self._answer(b"*u OK")

    def _answer(self, text):
        self.answers.append(text.decode())
        self._out += text + b"\r\n"

    # -- the reader's clock ----------------------------------------------------------------
    def advance(self, now_ms):
        """Everything printed up to `now_ms` (reader time)."""
        while self._tick <= now_ms:
            self._step(self._tick)
            self._status(self._tick)
            self._tick += PERIOD_MS
        out, self._out = self._out, b""
        return out

    def _enter(self, state, t):
        self.state = state
        r = self.rng
        if state == 2:
            self._until = t + r.randint(4000, 7000)
            if not self.flags & 8:          # the rotor is reversed after a game, not a misspin
                self._rotor_target = r.randint(150, 300)
        elif state == 3:
            self._until = t + r.randint(6000, 11000)
            self.flags = 0
            self._spin_void = None
            if self.void_rate and r.random() < self.void_rate:
                self._spin_void = (t + r.randint(500, 3000), 8 | (2 if r.random() < 0.5 else 0))
        elif state == 4:
            self._until = t + r.randint(2500, 5000)
        elif state == 5:
            self._until = t + r.randint(3000, 6000)

    def _close(self, t):
        if self.state == 5:
            self.game = (self.game + 1) % 1000
        self.state = 6

    def _step(self, t):
        """The state this tick shows: transitions happen only here, as on a real reader."""
        st = self.state
        self._rotor(st)
        if st == 1:
            if t >= self.power_up_ms:
                if self.want_closed:
                    self.state = 6
                else:
                    self._enter(2, t)
        elif st == 2 and t >= self._until and not self.finished:
            if self.close_every and self.results and len(self.results) % self.close_every == 0 \
                    and self._closed_after != len(self.results):
                self._closed_after = len(self.results)
                self._close(t)
            else:
                self._enter(3, t)
        elif st == 3:
            if self._spin_void is not None and t >= self._spin_void[0]:
                self.flags = self._spin_void[1]
                self.voids.append((self.game, self.flags))
                self._enter(2, t)           # the same game is played again; flag 8 shows until the launch
            elif t >= self._until:
                self._enter(4, t)
        elif st == 4 and t >= self._until:
            n = self.rng.randint(0, 36)
            self.last = n
            self.results.append((self.game, n))
            self._out += b"%2d\r\n" % n
            self._enter(5, t)
        elif st == 5 and t >= self._until:
            self.game = (self.game + 1) % 1000
            self._enter(2, t)

    _closed_after = None

    def _rotor(self, st):
        """Automatic reversal: in state 2 the rotor runs down to 000 and restarts the other way."""
        if st in (1, 6):
            self.rpm_x10 = max(0, self.rpm_x10 - 20)
        elif st == 2 and self._rotor_target:
            self.rpm_x10 = max(0, self.rpm_x10 - 40)
            if self.rpm_x10 == 0:
                self.direction ^= 1
                self.rpm_x10 = self._rotor_target
                self._rotor_target = 0
        else:
            self.rpm_x10 = max(0, self.rpm_x10 - self.rng.randint(0, 3))

    def _status(self, t):
        line = b"*X;%d;%03d;%s;%X;%03d;%d\r\n" % (
            self.state, self.game, b"  " if self.last is None else b"%2d" % self.last, self.flags,
            min(999, self.rpm_x10), self.direction)
        self._lines += 1
        if self.cut_every and self._lines % self.cut_every == 0:
            line = line[:self.rng.randint(3, len(line) - 4)]      # torn: no end of line
        self._out += line
        if self.garbage and self.rng.random() < self.garbage:
            self._out += bytes(self.rng.randint(1, 255) for _ in range(self.rng.randint(1, 12))) + b"\r\n"


class Pacer:
    """Bytes leave at 9600 baud in reader time: `take(now_ms)` returns those due by then."""

    def __init__(self):
        self._queue = b""
        self._credit = 0.0
        self._at = None

    def put(self, data):
        self._queue += data

    def take(self, now_ms):
        if self._at is not None:
            self._credit = min(self._credit + (now_ms - self._at) * BAUD_BYTES_PER_S / 1000, 4096)
        self._at = now_ms
        n = int(self._credit)
        if n <= 0 or not self._queue:
            if not self._queue:
                self._credit = min(self._credit, 1.0)
            return b""
        out, self._queue = self._queue[:n], self._queue[n:]
        self._credit -= len(out)
        return out


def run_pty(port, sim, speed=1.0, clock=None, sleep=None, stop=None, log=None):
    """Play `sim` on `port` (write/read) until it has finished (or `stop()`): reader time runs
    `speed` times real time; returns the sim."""
    import time
    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    pacer = Pacer()
    real0 = clock()
    done_at = None
    while not (stop and stop()):
        now = int((clock() - real0) * 1000 * speed)
        data = port.read()
        if data:
            sim.feed(data, now)
        before = len(sim.results), len(sim.voids)
        pacer.put(sim.advance(now))
        if log and (len(sim.results), len(sim.voids)) != before:
            if len(sim.results) != before[0]:
                log("game %03d: %d" % sim.results[-1])
            else:
                log("game %03d: misspin (flags %X)" % sim.voids[-1])
        out = pacer.take(now)
        if out:
            port.write(out)
        if sim.finished:
            done_at = done_at if done_at is not None else now
            if now - done_at >= 2 * PERIOD_MS and not pacer._queue:
                break               # a few more lines so the last game's state 2 is heard
        sleep(0.002)
    return sim
