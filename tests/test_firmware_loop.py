"""The Pico's main loop (firmware/cylindre/board/loop.py) on CPython with the shell's stand-ins:
it waits in select.poll until an edge, a link byte or the next deadline, not for a fixed 5 ms;
an edge ends the wait at once; the status period and the rotor's 100 ms speed samples are kept;
a whole spin through it names the right number."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "shared"))
import test_spin_kit as kit  # noqa: E402
from test_firmware_shell import FakePin, FakeSM, FakeTimer, _board, pico  # noqa: E402,F401


class Wheel:
    """Wheel time for the fake select: a wait ends at its timeout or at the next edge, which
    fires its pin's interrupt at its instant."""

    def __init__(self, clock, board, edges=()):
        self.clock = clock
        self.board = board
        self.edges = sorted(edges)
        self.waits = []
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

            def poll(self, timeout=-1):
                """Interrupts come at their instants; the wait ends when one of them made an
                object readable (the timer's samples, an edge that only waits in the ring do
                not), else at its timeout."""
                wheel.waits.append(timeout)
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
                    ready = [(o, 1) for o in self.objs if getattr(o, "ioctl", None) and o.ioctl(3, 1)]
                    if ready:
                        return ready
                FakeTimer.fire_until(end)
                return []

            def ipoll(self, timeout=-1, flags=0):
                """MicroPython's allocation-free poll: the same wait, an iterator."""
                return iter(self.poll(timeout))

        return Poll()


@pytest.fixture
def loop_mod(pico, monkeypatch):
    shell, clock = pico
    sel = types.ModuleType("select")
    sel.POLLIN = 1
    monkeypatch.setitem(sys.modules, "select", sel)
    sys.modules.pop("cylindre.board.loop", None)
    loop = importlib.import_module("cylindre.board.loop")     # with this test's select
    yield shell, clock, sel, loop
    sys.modules.pop("cylindre.board.loop", None)


def _make(shell, clock, sel, loop, tmp_path, edges=(), count=None):
    board = _board()
    FakeSM.count = staticmethod(count or (lambda: 0))
    events = []
    b = shell.Board(board, events.append, store_path=str(tmp_path / "rec"))
    b.start("power")
    wheel = Wheel(clock, board, edges)
    sel.poll = wheel.poller
    return loop.MainLoop(b, lambda: None, lambda: None, None, None), wheel, events


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
    assert clock["us"] == 1_234_567 and ml.board.ring.wake and len(ml.board.ring) == 2   # a sample, the edge
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
