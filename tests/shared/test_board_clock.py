"""The Pico's clock (cylindre.board.clock) and the link's timing on it: `time.ticks_us()` wraps
every 2**30 us; controller time counts from an origin the controller moves forward while idle
(spin/origin.py), the link's milliseconds from boot and never go back.

MicroPython subset: the ticks are a stand-in wrapping as the Pico's do."""

from cylindre.board.clock import Clock
from cylindre.link import frame as fr
from cylindre.link.device import DeviceLink
from linkkit import KEY, Rand, Rig

MASK = 0x3FFFFFFF        # ticks_us() period: 2**30 us
HALF = 0x20000000


def ticks_diff(a, b):
    return ((a - b + HALF) & MASK) - HALF


class Ticks:
    """ticks_us() of a Pico `start` us before its wrap; `us` is the true time since boot."""

    def __init__(self, start):
        self.us = 0
        self.start = start

    def __call__(self):
        return (self.start + self.us) & MASK


def test_the_clock_runs_on_across_the_ticks_wrap_and_counts_from_the_moved_origin():
    tk = Ticks(MASK + 1 - 1500000)             # the ticks wrap 1.5 s after boot
    c = Clock(tk, ticks_diff)
    seen = []
    for _ in range(40):                         # 4 s in 100 ms steps, through the wrap
        tk.us += 100000
        seen.append(c.now())
    assert seen == [100000 * (i + 1) for i in range(40)]
    assert c.ms() == 4000
    raw = tk()                                  # an edge stamped in an interrupt
    tk.us += 2500
    assert c.now() == 4002500 and c.at(raw) == 4000000
    c.rebase(4000000)                           # the controller moved its origin 4 s on
    assert c.now() == 2500 and c.at(raw) == 0
    assert c.ms() == 4002                       # the link's clock does not move back
    tk.us += 999
    assert c.now() == 3499 and c.ms() == 4003   # whole ms carried from the us under them
    tk.us += 1
    assert c.ms() == 4003


def test_the_link_resends_every_rto_across_the_ticks_wrap_and_a_rebase():
    """No ACK comes: the link sends its unacknowledged events again every `rto_ms` of its
    clock, `Clock.ms`, through the ticks' wrap and a move of the controller's origin; the
    stamps it gives events (`at_ms`) never go back."""
    r = Rig()
    boot = r.clock.ms                           # the rig's ms; the Pico's ticks wrap 2 s after boot
    start = MASK + 1 - 2000000 - boot * 1000
    c = Clock(lambda: (start + r.clock.ms * 1000) & MASK, ticks_diff)
    dev = DeviceLink(r.wire.dev_write, c.ms, KEY, "T1", urandom=Rand(1))
    dev.attach(r.ctl, c.now)
    r.dev = dev
    sent = []
    send = dev._send

    def spy(ftype, seq, ack, payload):
        if ftype == fr.EVENT:
            sent.append((r.clock.ms, seq))
        send(ftype, seq, ack, payload)

    dev._send = spy
    r.run(1200)                                 # the handshake
    assert r.host.sessions == 1
    r.auto_ack = False
    t0 = r.clock.ms
    ev = {"ev": "launch", "t": 5, "spin": 2}
    dev.emit(ev)
    for _ in range(100):                        # 5 s of 50 ms turns
        r.step(50)
        if r.clock.ms == t0 + 2000:
            c.rebase(c.now() - c.now() % 2000000)   # the controller moved its origin
    # sent at once, then again each time 400 ms (rto_ms) passed without progress
    times = [t - t0 for t, seq in sent if seq == 1]
    assert t0 - boot == 1200 and ev["at_ms"] == 1200     # stamped in ms since boot
    assert times == [400 * i for i in range(13)]         # the wrap at 800, the rebase at 2000
    assert c.ms() == r.clock.ms - boot == 6200 and c.now() == 6200000 - 2000000
