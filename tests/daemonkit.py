"""A stand-in wheel for daemon table tests: it feeds a Table the events one boot of a wheel sends."""


def game(spin, number):
    """One game as the wheel's flash history keeps it."""
    return {"spin": spin, "number": number, "laps": 15, "rotor_dir": 1, "ball_dir": -1}


class Wheel:
    """The events one boot of a wheel sends, numbered from 1; `reboot` starts a new boot."""

    def __init__(self, table, boot="b0"):
        self.t = table
        self.boot = boot
        self.seq = 0

    def send(self, ev, seq=None):
        """Deliver one event; `seq` given re-sends an old sequence number."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        return self.t.on_event(self.boot, seq, ev, {"kind": "event", "ftype": "E", "seq": seq, "raw": b"x"})

    def spin(self, n, number, rnvp=True):
        self.send({"ev": "launch", "t": 1, "spin": n})
        if rnvp:
            self.send({"ev": "rnvp", "t": 2, "spin": n})
        self.send({"ev": "result", "t": 3, "spin": n, "number": number})

    def reboot(self, boot, counter, games, interrupted=None):
        self.boot, self.seq = boot, 0
        return self.send({"ev": "boot", "t": 0, "reset_cause": "power", "spin": counter, "interrupted": interrupted,
                          "fw": "test", "board": "sim", "history": [game(s, n) for s, n in games]})
