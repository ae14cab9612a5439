"""A session opens, once, on a slow line (issue 21, item 3): the project's own link objects (the
wheel's DeviceLink, the host's HostLink) on a simulated clock, joined by a line that holds every
byte back `delay` ms each way; and a replayed WELCOME still opens nothing."""

import json

import pytest

from cylindre.link import frame as fr
from cylindre.link.device import DeviceLink
from cylindre.link.host import HostLink
from cylindre.link.mac import Hmac

KEY = b"0123456789abcdef0123456789abcdef"


class Rand:
    def __init__(self, seed):
        self.n = seed

    def __call__(self, k):
        out = bytearray()
        for _ in range(k):
            self.n = (self.n * 1103515245 + 12345) & 0x7FFFFFFF
            out.append((self.n >> 16) & 0xFF)
        return bytes(out)


class SlowLine:
    """Wheel and host on one clock; each byte reaches the other end `delay` ms after it left."""

    def __init__(self, delay, silence_ms=3000, seed=1):
        self.ms = 1000
        self.delay = delay
        self.to_host = []       # (arrives at, bytes)
        self.to_dev = []
        self.dev = DeviceLink(lambda b: self.to_host.append((self.ms + self.delay, b)), lambda: self.ms, KEY, "T1",
                              urandom=Rand(seed))
        self.host = HostLink(lambda b: self.to_dev.append((self.ms + self.delay, b)), lambda: self.ms, KEY, wheel="T1",
                             silence_ms=silence_ms, urandom=Rand(seed + 100))
        self.records = []
        self.opened_at = None
        self.spin = 0

    def _due(self, q):
        out = b"".join(b for (at, b) in q if at <= self.ms)
        q[:] = [(at, b) for (at, b) in q if at > self.ms]
        return out

    def run(self, ms, step=10):
        for _ in range(ms // step):
            self.ms += step
            self.records += self.host.poll()
            data = self._due(self.to_dev)
            if data:
                self.dev.feed(data)
            if self.ms % 500 == 0:
                self.dev.emit({"ev": "status", "t": self.ms * 1000, "state": "idle"})
            if self.ms % 4000 == 0:
                self.spin += 1
                self.dev.emit({"ev": "result", "t": self.ms * 1000, "spin": self.spin, "number": self.spin % 37})
            self.dev.poll()
            data = self._due(self.to_host)
            for r in self.host.feed(data) if data else ():
                self.records.append(r)
                if r["kind"] == "event":
                    self.host.acknowledge(r["seq"])
            if self.opened_at is None and self.host.in_session:
                self.opened_at = self.ms

    def kinds(self, kind):
        return [r for r in self.records if r["kind"] == kind]


@pytest.mark.parametrize("delay, silence_ms", [(0, 3000), (600, 3000), (1400, 3000), (2500, 8000)])
def test_a_session_opens_once_and_stays_open_on_a_slow_line(delay, silence_ms):
    line = SlowLine(delay, silence_ms)
    line.run(30_000)
    assert line.host.in_session and line.dev.in_session, "no session in 30 s at %d ms each way" % delay
    assert line.host.sessions == 1, "the session was re-opened %d times" % (line.host.sessions - 1)
    # open within a few round trips of the first HELLO
    assert line.opened_at - 1000 <= 2 * (2 * delay) + 3 * 1000, line.opened_at
    assert not line.kinds("reject"), line.kinds("reject")[:3]
    # the events arrive, each once, in order, and the wheel forgets them (acked)
    spins = [r["event"]["spin"] for r in line.kinds("event")]
    assert spins == list(range(1, len(spins) + 1)) and len(spins) >= line.spin - 2
    assert line.dev.outbox_len() <= 2
    assert line.host.rtt_ms == pytest.approx(2 * delay, abs=30)


def test_a_round_trip_past_the_silence_timeout_is_measured_and_told():
    line = SlowLine(2000, 3000)         # 4 s round trip, 3 s silence: the wheel's statuses still come every 0.5 s
    line.run(20_000)
    slow = [r for r in line.kinds("stale") if r.get("slow")]
    assert slow and slow[0]["rtt_ms"] == pytest.approx(4000, abs=30)
    assert line.host.sessions == 1 and line.host.in_session


def test_a_welcome_replayed_later_opens_nothing_and_rewinds_nothing():
    line = SlowLine(1400)
    captured = []
    real = line.dev._write

    def tap(b):
        captured.append(b)
        real(b)
    line.dev._write = tap
    line.run(12_000)
    assert line.host.sessions == 1
    welcomes = [b for b in captured if fr.parse(b[:-1]).ftype == fr.WELCOME]
    assert welcomes
    expected, acked = line.host.expected, line.host.acked
    for w in welcomes:                  # every WELCOME the wheel sent, played again
        for r in line.host.feed(w):
            assert r["kind"] in ("stale",), r
    assert line.host.in_session and line.host.sessions == 1
    assert (line.host.expected, line.host.acked) == (expected, acked)
    # and a WELCOME forged with another key to a nonce of ours is refused as not authentic
    hn = line.host._hellos[-1][0]
    info = {"wheel": "T1", "nonce": "00" * 8, "peer": hn.hex(), "boot": "x", "first": 1}
    forged = fr.build(Hmac(b"another key, 32 bytes long......"), fr.WELCOME, 0, 0, json.dumps(info).encode(),
                      bytes(8), hn)
    assert [r["kind"] for r in line.host.feed(forged)] == ["reject"]
