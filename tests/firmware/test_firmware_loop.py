"""The Pico's main loop (firmware/cylindre/board/loop.py) on CPython with the shell's stand-ins:
it waits in select.poll until an edge, a link byte or the next deadline, not for a fixed 5 ms;
an edge ends the wait at once; the status period and the rotor's 100 ms speed samples are kept;
a whole spin through it names the right number. Each test runs with both wake-ups: the RingIO
the pin interrupt writes to (`RingIO` below stands in for MicroPython's, which the emulated chip
tests run for real) and `EdgeWake`, the loop's own pollable where there is no RingIO."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "shared"))
import test_spin_kit as kit  # noqa: E402
from test_firmware_shell import FakePin, FakeSM, FakeTimer, _board, pico  # noqa: E402,F401


class RingIO:
    """micropython.RingIO as py/objringio.c behaves: `size` bytes; a write to a full one writes
    what fits (nothing) and raises nothing; readable for select (MP_STREAM_POLL) while it holds
    a byte."""

    def __init__(self, size):
        self.size = size
        self.buf = bytearray()

    def write(self, b):
        n = min(len(b), self.size - len(self.buf))
        self.buf += b[:n]
        return n

    def readinto(self, b):
        n = min(len(b), len(self.buf))
        b[:n] = self.buf[:n]
        del self.buf[:n]
        return n

    def any(self):
        return len(self.buf)

    def ioctl(self, req, arg):
        return (arg & 1) if req == 3 and self.buf else 0


class Wheel:
    """Wheel time for the fake select: a wait ends at its timeout or at the next edge, which
    fires its pin's interrupt at its instant."""

    def __init__(self, clock, board, edges=()):
        self.clock = clock
        self.board = board
        self.edges = sorted(edges)
        self.waits = []
        self.woken_at_once = 0
        pins = board["pins"]
        self.gpio = {"Z": pins["z"], "VOID": pins["void"]}
        for i, g in enumerate(pins["ball"]):
            self.gpio["BALL%d" % i] = g
        for i, g in enumerate(pins["pocket"]):
            self.gpio["POCKET%d" % i] = g

    def poller(self):
        wheel = self

        class Poll:
            def __init__(self):
                self.objs = []

            def register(self, obj, mask=1):
                self.objs.append(obj)

            def ready(self):
                return [(o, 1) for o in self.objs if getattr(o, "ioctl", None) and o.ioctl(3, 1)]

            def poll(self, timeout=-1):
                """Interrupts come at their instants; the wait ends when one of them made an
                object readable (the timer's samples, an edge that only waits in the ring do
                not), else at its timeout."""
                wheel.waits.append(timeout)
                r = self.ready()                 # as select: what is ready already ends the wait
                if r:
                    wheel.woken_at_once += 1
                    return r
                end = wheel.clock["us"] + timeout * 1000
                while wheel.edges and wheel.edges[0][0] <= end:
                    t = wheel.edges[0][0]
                    FakeTimer.fire_until(t)
                    while wheel.edges and wheel.edges[0][0] == t:
                        _, name, level = wheel.edges.pop(0)
                        wheel.clock["us"] = t
                        pin = FakePin.pins[wheel.gpio[name]]
                        pin.raw = 1 - level              # active low
                        pin.handler(pin)
                    ready = self.ready()
                    if ready:
                        return ready
                FakeTimer.fire_until(end)
                return []

            def ipoll(self, timeout=-1, flags=0):
                """MicroPython's allocation-free poll: the same wait, an iterator."""
                return iter(self.poll(timeout))

        return Poll()


@pytest.fixture(params=["RingIO", "EdgeWake"])
def loop_mod(pico, monkeypatch, request):
    shell, clock = pico
    monkeypatch.setattr(shell, "RingIO", RingIO if request.param == "RingIO" else None)
    sel = types.ModuleType("select")
    sel.POLLIN = 1
    monkeypatch.setitem(sys.modules, "select", sel)
    sys.modules.pop("cylindre.board.loop", None)
    loop = importlib.import_module("cylindre.board.loop")     # with this test's select
    yield shell, clock, sel, loop
    sys.modules.pop("cylindre.board.loop", None)


def _make(shell, clock, sel, loop, tmp_path, edges=(), count=None, read=lambda: None):
    board = _board()
    FakeSM.count = staticmethod(count or (lambda: 0))
    events = []
    b = shell.Board(board, events.append, store_path=str(tmp_path / "rec"))
    b.start("power")
    wheel = Wheel(clock, board, edges)
    sel.poll = wheel.poller
    return loop.MainLoop(b, read, lambda: None, None, None), wheel, events


def test_an_idle_wheel_wakes_for_its_status_and_takes_its_speed_samples_by_the_timer(loop_mod, tmp_path):
    shell, clock, sel, loop = loop_mod
    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path)
    samples = []
    take = ml.board.ctl.rotor.take
    ml.board.ctl.rotor.take = lambda t, c: (samples.append(t), take(t, c))
    while clock["us"] < 10_000_000:
        ml.step()
    assert 19 <= ml.wakes <= 25, ml.wakes           # the status every 500 ms (100 with a wake-up a sample)
    st = [e["t"] for e in events if e["ev"] == "status"]
    assert len(st) == 20 and {b - a for a, b in zip(st, st[1:])} == {500_000}
    assert max(wheel.waits) <= 500
    # every 200 ms, those since the last turn waiting in the ring
    assert len(samples) + len(ml.board.ring) == clock["us"] // 200_000 and {b - a for a, b in zip(samples, samples[1:])} == {200_000}


def test_an_active_edge_ends_the_wait_at_its_instant_a_release_waits_for_the_next_turn(loop_mod, tmp_path):
    shell, clock, sel, loop = loop_mod
    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path, edges=[(1_234_567, "VOID", 1), (1_300_000, "VOID", 0)])
    while clock["us"] < 1_000_000:
        ml.step()
    assert clock["us"] == 1_000_000
    ml.step()                               # this wait ends at the edge, not at its deadline (1.5 s)
    assert clock["us"] == 1_234_567 and _signalled(ml.board) and len(ml.board.ring) == 2   # a sample, the edge
    ml.step()                 # drained at once; the release waits in the ring: the wait ends at 1.5 s
    assert ml.board.ctl.void_up == 1_234_567 and 1_500_000 <= clock["us"] < 1_501_000 and len(ml.board.ring) == 2
    ml.step()
    assert ml.board.ctl.void_up is None                 # the release, handed over at that turn


def test_a_spin_through_the_loop_names_its_number(loop_mod, tmp_path):
    shell, clock, sel, loop = loop_mod
    board = _board()
    w = kit.Wheel(kit.board(**{k: board[k] for k in ("cpr", "index_offset_deg", "ball_sensors_deg",
                                                      "pocket_sensors_deg")}), rotor_rpm=20.0)
    w.add_index(0, 45_000_000)
    w.spin(3_000_000, -1, 17)

    def count():
        w.now = clock["us"]
        return w.count()

    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path, edges=w.events, count=count)
    while clock["us"] < 40_000_000:
        ml.step()
    kinds = [e["ev"] for e in events if e["ev"] != "status"]
    assert kinds == ["boot", "launch", "rnvp", "drop", "result"], kinds
    assert [e["number"] for e in events if e["ev"] == "result"] == [17]
    assert ml.wakes < 40 * 40                                # 8000 turns with the 5 ms sleep


def _signalled(board):
    """The wake-up says an edge came: the RingIO holds a byte, or (without one) the ring's flag."""
    return board.wake.any() > 0 if board.wake is not None else bool(board.ring.wake)


def _edges_in(ring):
    """Edges waiting in the ring (not the timer's speed samples, which do not wake the loop)."""
    from cylindre.board.ring import SAMPLE
    n, j = 0, ring.tail
    while j != ring.head:
        n += ring.code[j] != SAMPLE
        j = 0 if j + 1 == ring.size else j + 1
    return n


def _interrupt(wheel, name, level):
    """The pin's hard interrupt, now (active-low wiring)."""
    pin = FakePin.pins[wheel.gpio[name]]
    pin.raw = 1 - level
    pin.handler(pin)


def test_an_edge_after_the_turn_drained_the_ring_ends_the_wait_at_once(loop_mod, tmp_path):
    """The race the wake-up must not lose: an interrupt after the turn drained the ring (here while
    the turn reads the link) leaves its edge in the ring for the next turn; the wait must end at
    once for it, not at its deadline up to 100 ms later. (With the signal emptied after the ring
    instead of before it, this edge waited for the next speed sample.)"""
    shell, clock, sel, loop = loop_mod
    late = []

    def read():
        if late:
            late.pop()()

    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path, read=read)
    while clock["us"] < 1_200_000:
        ml.step()
    t = clock["us"]
    late.append(lambda: _interrupt(wheel, "VOID", 1))
    ml.step()
    assert clock["us"] == t and _edges_in(ml.board.ring) == 1         # woken at once, edge waiting
    ml.step()
    assert ml.board.ctl.void_up == t and _edges_in(ml.board.ring) == 0
    assert clock["us"] > t                                        # the signal spent: it waited


def test_more_edges_between_two_turns_than_the_signal_holds_all_wake_the_loop(loop_mod, tmp_path):
    """A burst of edges between two turns (a sensor chattering): the RingIO holds shell.WAKE bytes
    and the interrupt's write finds it full, which only drops the extra bytes; the loop still
    wakes at once, takes every edge from the ring (none lost) and then waits again (the signal
    does not stay set and spin the loop)."""
    shell, clock, sel, loop = loop_mod
    assert loop.DRAIN >= shell.WAKE                  # one read empties the signal
    burst = 2 * (shell.WAKE + 8)                 # every other one active: WAKE + 8 signalled
    late = []

    def read():
        if late:
            late.pop()()

    def chatter():
        for k in range(burst):
            clock["us"] += 200
            _interrupt(wheel, "VOID", 1 - k % 2)

    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path, read=read)
    while clock["us"] < 1_200_000:
        ml.step()
    late.append(chatter)
    ml.step()
    t = clock["us"]
    assert _edges_in(ml.board.ring) == burst and wheel.woken_at_once == 1
    ml.step()
    assert _edges_in(ml.board.ring) == 0 and ml.board.ring.lost == 0
    assert clock["us"] > t and wheel.woken_at_once == 1            # waited again
    assert not [e for e in events if e["ev"] == "fault"]
    if ml.board.wake is not None:
        assert ml.board.wake.any() == 0


def test_an_edge_between_the_signal_and_the_ring_costs_one_turn_at_most(loop_mod, tmp_path):
    """An interrupt after the turn emptied the signal but before it drained the ring: its edge is
    taken in this turn, its byte wakes the next wait once for nothing, then the loop waits."""
    shell, clock, sel, loop = loop_mod
    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path)
    while clock["us"] < 1_200_000:
        ml.step()
    real = ml.board.poll
    fired = []

    def poll():
        if not fired:
            fired.append(clock["us"])
            _interrupt(wheel, "VOID", 1)
        return real()

    ml.board.poll = poll
    ml.step()
    assert ml.board.ctl.void_up == fired[0] and _edges_in(ml.board.ring) == 0
    before = clock["us"]
    ml.step()
    ml.step()
    assert wheel.woken_at_once <= 1 and clock["us"] > before


def test_an_edge_just_after_the_turn_read_its_clock_ends_the_wait_at_once(loop_mod, tmp_path):
    """An edge stamped after `Board.poll` read the clock waits in the ring for the next turn (the
    tick at `now` follows everything handed over); its wake-up must still be there at the wait,
    so that turn comes at once. (With the ring's flag cleared after the clock reading, as it was,
    an edge in between lost its wake-up and waited for the next deadline, up to a second.)"""
    shell, clock, sel, loop = loop_mod
    ml, wheel, events = _make(shell, clock, sel, loop, tmp_path)
    while clock["us"] < 1_200_000:
        ml.step()
    b = ml.board
    real_now = b.clock.now
    armed = [1]

    def now():
        t = real_now()
        if armed:
            armed.pop()
            clock["us"] += 1
            _interrupt(wheel, "VOID", 1)
        return t

    b.clock.now = now
    t = clock["us"]
    ml.step()
    assert _edges_in(b.ring) == 1 and clock["us"] == t + 1          # left for the next turn, at once
    ml.step()
    assert b.ctl.void_up == t + 1 and _edges_in(b.ring) == 0
