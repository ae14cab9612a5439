"""A wheel as the table sees it, without a link: it feeds a `Table` the events and the STATUS
frames one boot of a wheel sends, on a clock the caller controls (host ms = wheel ms, no transit).
The table's tests and the bench (`make bench ARGS=api`: the placement path without HTTP) drive a
table with it."""


def game(spin, number):
    """One game as the wheel's flash history keeps it."""
    return {"spin": spin, "number": number, "laps": 15, "rotor_dir": 1, "ball_dir": -1}


class Clock:
    """The host's clock in ms; the stand-in wheel's link clock reads the same."""

    def __init__(self, ms=1_000_000.0):
        self.ms = ms

    def __call__(self):
        return self.ms

    def advance(self, ms):
        self.ms += ms


class Wheel:
    """The events one boot of a wheel sends, numbered from 1; `reboot` starts a new boot.

    Every event and every `status()` is stamped with the table's clock (`at_ms`); a status says
    every event sent so far was emitted and echoes an ACK sent at that same instant, so the table
    has fresh evidence that betting is open until the test moves its clock on or stops statuses."""

    def __init__(self, table, boot="b0", statuses=True):
        self.t = table
        if not isinstance(table.clock, Clock):
            table.clock = Clock()           # the test's time: 10 ms pass before each event
        self.boot = boot
        self.seq = 0
        self.statuses = statuses
        if statuses:
            self.status()

    def now(self):
        return int(self.t.clock())

    def status(self, state="idle", emitted=None, at=None, echo=None):
        now = self.now()
        st = {"ev": "status", "t": now * 1000, "state": state, "table_open": True,
              "at_ms": now if at is None else at, "emitted": self.seq if emitted is None else emitted,
              "echo": [now, now] if echo is None else echo}
        self.t.on_status(self.boot, st, self.seq)
        return st

    def send(self, ev, seq=None, at=None, raw=b"x"):
        """Deliver one event; `seq` given re-sends an old sequence number."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        self.t.clock.advance(10)
        ev = dict(ev)
        ev.setdefault("at_ms", self.now() if at is None else at)
        out = self.t.on_event(self.boot, seq, ev, {"kind": "event", "ftype": "E", "seq": seq, "raw": raw})
        if self.statuses and ev.get("ev") not in ("rnvp", "drop"):
            self.status()
        return out

    def spin(self, n, number, rnvp=True):
        self.send({"ev": "launch", "t": 1, "spin": n})
        if rnvp:
            self.send({"ev": "rnvp", "t": 2, "spin": n})
        self.send({"ev": "result", "t": 3, "spin": n, "number": number})

    def reboot(self, boot, counter, games, interrupted=None):
        self.boot, self.seq = boot, 0
        return self.send({"ev": "boot", "t": 0, "reset_cause": "power", "spin": counter, "interrupted": interrupted,
                          "fw": "test", "board": "sim", "history": [game(s, n) for s, n in games]})
