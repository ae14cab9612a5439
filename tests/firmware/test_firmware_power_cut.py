"""A power cut in the middle of a spin, on CPython, through the Pico's own code: the wiring
(firmware/cylindre/board/wiring.py: shell, main loop, flash store on disk, device link) with
stand-ins for `machine`, `rp2`, `select` and the MicroPython clock, and the host's end of the
link (HostLink, HELLO every second without a session, each event acknowledged at once).

The simulator's `power_cut` spin goes on while the board is off: the rotor keeps turning (the
PIO count restarts at 0), the ball runs, the pins keep their levels. The power comes back, the
firmware takes `BOOT_US` to import (no interrupt yet, USB off the bus, as on the chip), boots the
controller from the flash record that says a spin was cut (phase VOID, `launch.absorb`) and runs
the loop. Every turn must wait (no deadline left in the past), the host must get a new session
within the silence it waits before its next HELLO, the void `restart` and the next spin's
result, and nothing the link refuses. ~1 s a seed.
"""

from __future__ import annotations

import importlib
import sys
import time
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_firmware_shell import FakePin, FakeSM, FakeTimer, _board, pico  # noqa: E402,F401

from cylindre.board.store import FlashStore  # noqa: E402
from cylindre.link.host import HostLink  # noqa: E402
from cylindre.link.mac import parse_key  # noqa: E402
from cylindre.spin.quadrature import Quadrature  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KEY = ("5f" * 32).encode()
BOOT_US = 600_000           # MicroPython's imports from littlefs before the loop (measured on the emulated chip)
HOST_TURN_US = 20_000


class Table:
    """Feed time, the wheel's wires, the USB serial and the host. `poller()` is the stand-in for
    `select.poll`: a wait ends at its timeout, at a sensor edge (its hard interrupt fired at its
    instant) or at a byte from the host; encoder edges only move the PIO count."""

    def __init__(self, clock, board, changes):
        self.clock = clock
        self.changes = changes
        self.i = 0
        pins = board["pins"]
        self.gpio = {"Z": pins["z"], "VOID": pins["void"]}
        for i, g in enumerate(pins["ball"]):
            self.gpio["BALL%d" % i] = g
        for i, g in enumerate(pins["pocket"]):
            self.gpio["POCKET%d" % i] = g
        self.levels = {}
        self.a = self.b = 0
        self.quad = None            # the PIO count while powered
        self.powered = False
        self.off = False            # a RESET pulse is on
        self.rx = bytearray()       # host -> board, waiting on the board's USB input
        self.tx = bytearray()       # board -> host
        self.next_host = 0
        self.records = []
        self.host = HostLink(write=self._host_write, clock_ms=lambda: clock["us"] // 1000, key=parse_key(KEY))

    # -- the host ----------------------------------------------------------------------------
    def _host_write(self, data):
        if self.powered:            # a port without its device drops what is written
            self.rx.extend(data)

    def _host_turn(self):
        data = bytes(self.tx)
        self.tx.clear()
        recs = self.host.feed(data) if data else []
        recs += self.host.poll()
        for r in recs:
            self.records.append((self.clock["us"], r))
            if r["kind"] == "event":
                self.host.acknowledge(r["seq"])

    def run_to(self, t):
        while self.next_host <= t:
            FakeTimer.fire_until(self.next_host)    # the speed samples (none while the power is off)
            self._host_turn()
            self.next_host += HOST_TURN_US
        FakeTimer.fire_until(t)

    # -- the wheel -----------------------------------------------------------------------------
    def play(self):
        """The next change at its instant; True if it was a sensor edge or the power."""
        t, name, level = self.changes[self.i]
        self.i += 1
        self.run_to(t)
        if name in ("A", "B"):
            if name == "A":
                self.a = level
            else:
                self.b = level
            if self.quad is not None:
                self.quad.edge(name, level)
            return False
        if name == "RESET":
            self.off = bool(level)
            return True
        self.levels[name] = level
        pin = FakePin.pins.get(self.gpio[name])
        if self.powered and pin is not None:
            pin.raw = 1 - level                     # active low
            if pin.handler is not None:
                pin.handler(pin)                    # the hard interrupt
        return True

    def next_t(self):
        return self.changes[self.i][0] if self.i < len(self.changes) else 1 << 62

    def poller(self):
        table = self

        class Poll:
            def __init__(self):
                self.objs = []

            def register(self, obj, mask=1):
                self.objs.append(obj)

            def _ready(self):
                return [(o, 1) for o in self.objs
                        if (o is table.port and table.rx) or (o is not table.port and o.ioctl(3, 1))]

            def poll(self, timeout=-1):
                end = table.clock["us"] + timeout * 1000
                while True:
                    r = self._ready()
                    if r or timeout == 0 or table.off:
                        return r
                    if min(table.next_t(), table.next_host) > end:
                        table.run_to(end)
                        return []
                    if table.next_host <= table.next_t():
                        table.run_to(table.next_host)
                    else:
                        table.play()

            def ipoll(self, timeout=-1, flags=0):
                """MicroPython's allocation-free poll: the same wait, an iterator."""
                return iter(self.poll(timeout))

        return Poll()


@pytest.fixture
def wired(pico, monkeypatch):
    shell, clock = pico
    upy = types.ModuleType("micropython")
    upy.alloc_emergency_exception_buf = lambda n: None
    upy.kbd_intr = lambda c: None
    upy.const = int
    sel = types.ModuleType("select")
    sel.POLLIN = 1
    monkeypatch.setitem(sys.modules, "micropython", upy)
    monkeypatch.setitem(sys.modules, "select", sel)
    for m in ("cylindre.board.loop", "cylindre.board.wiring"):
        sys.modules.pop(m, None)
    wiring = importlib.import_module("cylindre.board.wiring")
    yield shell, clock, sel, wiring
    for m in ("cylindre.board.loop", "cylindre.board.wiring"):
        sys.modules.pop(m, None)


def _play(wired, monkeypatch, tmp_path, changes):
    """The wired firmware through `changes` (a RESET pulse: the power off, then back after the
    imports): (table, the instant the power came back)."""
    shell, clock, sel, wiring = wired
    board = _board()
    table = Table(clock, board, changes)
    sel.poll = table.poller
    boot_at = [0]
    monkeypatch.setattr(time, "ticks_us", lambda: (clock["us"] - boot_at[0]) & 0x3FFFFFFF, raising=False)
    store = str(tmp_path / "cylindre.rec")
    real_start = shell.Board.start

    def start(b, reset="power"):        # the wires' levels as the pins read them at boot
        for name, level in table.levels.items():
            FakePin.pins[table.gpio[name]].raw = 1 - level
        return real_start(b, reset)

    monkeypatch.setattr(shell.Board, "start", start)

    def power_on():
        t = clock["us"]
        while table.next_t() <= t + BOOT_US:        # the imports: the wheel goes on, unseen
            table.play()
        table.run_to(t + BOOT_US)
        boot_at[0] = t
        table.quad = Quadrature()
        table.quad.a, table.quad.b = table.a, table.b
        FakeSM.count = staticmethod(table.quad)
        table.powered = True
        table.rx.clear()
        table.port = types.SimpleNamespace(read=lambda n: table._take(n), readinto=lambda b: table._take_into(b))
        out = types.SimpleNamespace(write=lambda d: table.tx.extend(d) if table.powered else None)
        return wiring.main(board, key=KEY, usb=(out, table.port), store=FlashStore(store), run=False)

    def take(n):
        d = bytes(table.rx[:n])
        del table.rx[:n]
        return d

    def take_into(b):
        d = take(len(b))
        b[:len(d)] = d
        return len(d)

    table._take = take
    table._take_into = take_into
    loop = power_on()
    end = changes[-1][0] + 3_000_000
    busy = 0
    while clock["us"] < end:
        if table.off:
            table.powered = False
            table.quad = None
            FakeTimer.timers.clear()
            while table.off:
                table.play()
            back = clock["us"]
            loop = power_on()
        t = clock["us"]
        loop.step()
        busy = busy + 1 if clock["us"] == t and not table.off else 0
        assert busy < 20, "the loop stopped waiting at %d us" % t
    return table, back


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_the_board_comes_back_from_a_power_cut_mid_spin(wired, monkeypatch, tmp_path, seed):
    from host_tools.bench.rp2 import spins
    changes, truths = spins(ROOT / "boards" / "pico.json", 0, seed, True)
    cut = [t for t, name, level in changes if name == "RESET"]
    table, back = _play(wired, monkeypatch, tmp_path, changes)
    assert len(cut) == 2 and back == cut[1]
    kinds = [r["kind"] for _, r in table.records]
    assert "reject" not in kinds and "gap" not in kinds, kinds
    welcomes = [t for t, r in table.records if r["kind"] == "welcome"]
    assert len(welcomes) == 2
    # the host waits 3 s of silence, then says HELLO every second; the board answers at once
    assert welcomes[1] - back <= BOOT_US + table.host.silence_ms * 1000 + 100_000, welcomes
    events = [r["event"] for _, r in table.records if r["kind"] == "event"]
    after = [e for e in events if e["ev"] in ("boot", "void", "result")][1:]
    assert after[0]["ev"] == "boot" and after[0]["interrupted"] == 1
    assert after[1]["ev"] == "void" and after[1]["reason"] == "restart" and after[1]["spin"] == 1
    assert [(e["spin"], e["number"]) for e in after if e["ev"] == "result"] == [(2, truths[1]["number"])]


@pytest.mark.parametrize("phase", ["launch", "track", "bounce", "rest", "confirmed"])
def test_a_power_cut_at_each_phase_of_a_spin_is_decided_by_the_ball(wired, monkeypatch, tmp_path, phase):
    """The one-sensor board, the power off 155 ms at `phase` (host_tools.bench.rp2.cut_at), the
    host acknowledging every event: a ball that had not dropped voids the spin (`restart`); one
    that had is that spin's number, from the pockets after the boot, or from the event the host
    already had (after the result: named again or, the ball gone, voided; the table ignores
    either). The same judge as the emulated chip's bench (check_outcomes)."""
    from host_tools.bench.rp2 import check_outcomes, spins
    changes, truths = spins(ROOT / "boards" / "pico.json", 0, 3, False, cuts=[phase])
    table, back = _play(wired, monkeypatch, tmp_path, changes)
    events = [r["event"] for _, r in table.records if r["kind"] == "event"]
    boots = [e for e in events if e["ev"] == "boot"]
    assert [b["interrupted"] for b in boots] == [None, 1], boots
    host = types.SimpleNamespace(events=[{"event": e} for e in events])
    o = check_outcomes(truths, [e for e in events if e["ev"] in ("result", "void")], host)
    assert o["right"] == 1 and o["doubled"] == 0, o["rows"]
    got = o["rows"][0]["got"]
    if phase in ("launch", "track"):
        assert got == ["void:restart"]
    else:
        assert got[0] == "result:%d" % truths[0]["number"]
        first = [e for e in events if e["ev"] == "result"][0]
        assert (first.get("restart") == "power") == (phase != "confirmed"), first


@pytest.mark.micropython
def test_the_board_comes_back_from_a_power_cut_mid_spin_on_micropython(tmp_path):
    """The same wiring on a real MicroPython runtime, up to 6 s after the power is back: a new
    session, the boot that names the spin cut and its void; the loop woken by the runtime's own
    RingIO, every pin interrupt run with the heap locked (none allocates). ~15 s."""
    import json

    from host_tools.bench.rp2 import spins
    from host_tools.pico.micropython import MicroPythonRuntime

    changes, _ = spins(ROOT / "boards" / "pico.json", 0, 1, True)
    back = [t for t, name, level in changes if name == "RESET" and not level][0]
    (tmp_path / "feed.json").write_text(json.dumps([[int(t), n, int(v)] for t, n, v in changes]))
    (tmp_path / "board.json").write_text((ROOT / "boards" / "pico.json").read_text())
    with MicroPythonRuntime(extra={"guest": Path(__file__).parents[1] / "guest", "data": tmp_path}) as rt:
        out = rt.run("import power_cut\npower_cut.main('/input/data/feed.json', '/input/data/board.json', %d)\n"
                     % (back + 6_000_000), paths=("guest",), timeout=600).stdout
    res = json.loads(out.split("@@RESULT@@")[1])
    assert res["back"] == back and res["wake"] == "RingIO"
    kinds = [r["kind"] for r in res["records"]]
    assert "reject" not in kinds and "gap" not in kinds, kinds
    welcomes = [r["t"] for r in res["records"] if r["kind"] == "welcome"]
    assert len(welcomes) == 2 and welcomes[1] - back <= BOOT_US + 3_100_000, welcomes
    events = [r["event"] for r in res["records"] if r["kind"] == "event"]
    boots = [e for e in events if e["ev"] == "boot"]
    assert len(boots) == 2 and boots[1]["interrupted"] == 1
    assert [(e["spin"], e["reason"]) for e in events if e["ev"] == "void"] == [(1, "restart")]
