"""The Pico shell (firmware/cylindre/board/shell.py) on CPython with stand-ins for `machine`,
`rp2` and the MicroPython `time` functions: interrupts stamp edges into the ring, the main loop
drains them in order with the encoder count taken at the edge, the lamp follows rien ne va plus,
the rotor's speed samples come by the timer's interrupt through the same ring, the watchdog is
fed, a full ring is a fault, and the spin ends in the flash store."""

from __future__ import annotations

import json
import sys
import time
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "shared"))
import test_spin_kit as kit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class FakePin:
    IN, OUT, PULL_UP, PULL_DOWN, IRQ_RISING, IRQ_FALLING = 0, 1, 2, 3, 4, 8
    pins: dict[int, "FakePin"] = {}

    def __init__(self, gpio, mode=None, pull=None, value=None):
        self.gpio = gpio
        self.mode = mode
        self.raw = 1 if pull == self.PULL_UP else 0
        if value is not None:
            self.raw = value
        self.handler = None
        self.history = []
        FakePin.pins[gpio] = self

    def value(self, v=None):
        if v is None:
            return self.raw
        self.raw = v
        self.history.append(v)

    def irq(self, handler, trigger, hard=False):
        assert hard and trigger == self.IRQ_RISING | self.IRQ_FALLING
        self.handler = handler


class FakeWDT:
    fed = 0

    def __init__(self, timeout):
        assert timeout <= 8388
        self.timeout = timeout

    def feed(self):
        FakeWDT.fed += 1


class FakeTimer:
    """machine.Timer with a hard periodic callback; the tests' wheel time fires it
    (`fire_until`), never moving the clock back."""
    PERIODIC, ONE_SHOT = 1, 0
    timers: list["FakeTimer"] = []
    clock: dict = {"us": 0}

    def __init__(self, mode=PERIODIC, period=-1, callback=None, hard=False):
        assert mode == self.PERIODIC and period > 0 and hard
        self.period = period * 1000
        self.callback = callback
        self.next = FakeTimer.clock["us"] + self.period
        FakeTimer.timers.append(self)

    def deinit(self):
        if self in FakeTimer.timers:
            FakeTimer.timers.remove(self)

    @classmethod
    def fire_until(cls, t):
        clock = cls.clock
        for tm in cls.timers:
            while tm.next <= t:
                clock["us"] = max(clock["us"], tm.next)
                tm.callback(tm)
                tm.next += tm.period
        clock["us"] = max(clock["us"], t)


class FakeSM:
    count = staticmethod(lambda: 0)

    def __init__(self, sm_id, prog, freq=None, in_base=None):
        self.execs = []
        self.in_base = in_base

    def exec(self, instr):
        self.execs.append(instr)

    def active(self, v):
        self.on = v

    def rx_fifo(self):
        return 2

    def get(self, buf):
        buf[0] = FakeSM.count()


@pytest.fixture
def pico(monkeypatch):
    clock = {"us": 0}
    machine = types.ModuleType("machine")
    machine.Pin = FakePin
    machine.WDT = FakeWDT
    machine.Timer = FakeTimer
    machine.PWRON_RESET, machine.WDT_RESET = 1, 3
    machine.reset_cause = lambda: 1
    rp2 = types.ModuleType("rp2")
    rp2.PIO = types.SimpleNamespace(SHIFT_LEFT=0, SHIFT_RIGHT=1)
    rp2.asm_pio = lambda **kw: (lambda fn: ("assembled", fn.__name__, kw))
    rp2.StateMachine = FakeSM
    monkeypatch.setitem(sys.modules, "machine", machine)
    monkeypatch.setitem(sys.modules, "rp2", rp2)
    monkeypatch.setattr(time, "ticks_us", lambda: clock["us"] & 0x3FFFFFFF, raising=False)
    monkeypatch.setattr(time, "ticks_diff", lambda a, b: ((a - b + 0x20000000) & 0x3FFFFFFF) - 0x20000000,
                        raising=False)
    for m in ("cylindre.board.encoder", "cylindre.board.shell"):
        sys.modules.pop(m, None)
    FakePin.pins = {}
    FakeWDT.fed = 0
    FakeTimer.timers = []
    FakeTimer.clock = clock
    from cylindre.board import encoder, shell
    encoder._PROGRAM = None
    yield shell, clock
    for m in ("cylindre.board.encoder", "cylindre.board.shell"):
        sys.modules.pop(m, None)


def _board():
    return json.loads((ROOT / "boards" / "pico.json").read_text())


def _drive(b, board, wheel, clock, t_end, start=0):
    """Replay the kit wheel's edges as pin interrupts and the speed samples as the timer's; the
    main loop polls every 5 ms."""
    gpio = {"Z": board["pins"]["z"]}
    for i, g in enumerate(board["pins"]["ball"]):
        gpio["BALL%d" % i] = g
    for i, g in enumerate(board["pins"]["pocket"]):
        gpio["POCKET%d" % i] = g
    gpio["VOID"] = board["pins"]["void"]
    ev = sorted(wheel.events)
    wheel.events = []
    i = 0
    t = start
    while t <= t_end:
        while i < len(ev) and ev[i][0] <= t:
            te, name, level = ev[i]
            FakeTimer.fire_until(te)
            clock["us"] = te
            wheel.now = te
            pin = FakePin.pins[gpio[name]]
            pin.raw = 1 - level                  # active low: the sensor pulls the line down
            pin.handler(pin)                     # the hard IRQ
            i += 1
        FakeTimer.fire_until(t)
        clock["us"] = t
        wheel.now = t
        b.poll()
        t += 5000


def test_a_spin_through_the_shell(pico, tmp_path):
    shell, clock = pico
    board = _board()
    wheel = kit.Wheel(kit.board(**{k: board[k] for k in ("cpr", "index_offset_deg", "ball_sensors_deg",
                                                          "pocket_sensors_deg")}), rotor_rpm=20.0)
    FakeSM.count = staticmethod(lambda: wheel.count_at(clock["us"]))    # the PIO's count at any instant
    events = []
    b = shell.Board(board, events.append, store_path=str(tmp_path / "rec"))
    assert b.encoder.sign == 1 and b.encoder.sm.in_base is FakePin.pins[2]
    assert "set(y, 0)" in b.encoder.sm.execs
    b.start("power")
    wheel.add_index(0, 45000000)
    drop, rest = wheel.spin(3000000, -1, 17)
    _drive(b, board, wheel, clock, 40000000)
    kinds = [e["ev"] for e in events if e["ev"] != "status"]
    assert kinds == ["boot", "launch", "rnvp", "drop", "result"], kinds
    assert [e["number"] for e in events if e["ev"] == "result"] == [17]
    lamp = FakePin.pins[board["pins"]["lamp"]].history
    assert lamp[-2:] == [1, 0]                   # on at rien ne va plus, off at the result
    assert FakeWDT.fed >= 40000000 // 5000
    rec = shell.FlashStore(str(tmp_path / "rec")).load()
    assert rec["spin"] == 1 and rec["dir"] == 1 and rec["in_spin"] is None and rec["hist"][0][1] == 17
    # controller time is the unwrapped clock from the controller's time origin, past the 2**30
    # us wrap of ticks_us (read often enough: here every 2**28 us); idle past 300 s the origin
    # moves forward by whole 2 s (spin/origin.py), so it stays a small int; the link's clock
    # counts ms since boot
    for k in range(1, 5):
        clock["us"] = 40000000 + k * (1 << 28)
        now = b.poll()
        assert now + b.ctl.epoch == clock["us"] and 0 <= now < 1 << 30
        assert b.clock.ms() == clock["us"] // 1000 and b.ctl.epoch % 2000000 == 0
    assert clock["us"] > 1 << 30 and time.ticks_us() < clock["us"] and b.ctl.epoch > 1 << 29
    st = [e for e in events if e["ev"] == "status"][-1]
    assert st["t"] == clock["us"]                 # the events in time since boot


def test_full_ring_is_a_fault_not_a_wrong_order(pico, tmp_path):
    shell, clock = pico
    board = _board()
    events = []
    b = shell.Board(board, events.append, store_path=str(tmp_path / "rec"), watchdog=False)
    b.start("power")
    pin = FakePin.pins[board["pins"]["void"]]
    for k in range(shell.RING + 10):              # chatter faster than the loop drains it
        clock["us"] = 1000 + k
        pin.raw = k & 1
        pin.handler(pin)
    clock["us"] = 5000
    b.poll()
    faults = [e for e in events if e["ev"] == "fault"]
    assert faults and faults[0]["code"] == "edges_lost" and "lost" in faults[0]["detail"]


def test_bad_board_file_is_refused(pico, tmp_path):
    shell, clock = pico
    board = _board()
    board["pins"]["enc_b"] = 9
    with pytest.raises(ValueError, match="adjacent"):
        shell.Board(board, print, store_path=str(tmp_path / "rec"))


def test_the_led_blinks_its_pattern_and_is_written_only_when_it_changes(pico, tmp_path):
    """Idle: on 50 ms every 2 s; a spin: steady; a fault: 250 ms on, 250 ms off. The main loop
    asks at every turn; the pin is written at the pattern's changes only (and once a second
    while steady)."""
    shell, clock = pico
    b = shell.Board(_board(), lambda ev: None, store_path=str(tmp_path / "rec"))
    led = b.led

    def want(state, t):
        if state == "fault":
            return (t // 250000) & 1
        if state == "ball_in_rim":
            return 1
        return 1 if t % 2000000 < 50000 else 0

    t = 0
    for state in ("idle", "ball_in_rim", "fault", "idle"):
        b.state = state
        led.history = []
        end = t + 6000000
        while t < end:
            b._led(t)
            assert led.raw == want(state, t), (state, t)
            t += 5000
        assert len(led.history) <= 30, (state, len(led.history))      # 1200 turns
    b._led_until = 0            # as after a move of the time origin (Board.poll)
    b._led(1000)
    assert led.raw == 1


def test_what_an_interrupt_stamps_during_the_drain_waits_for_the_next_turn(pico, tmp_path):
    """The tick at `now` must follow everything the controller was given: an edge stamped after
    the turn read its clock stays in the ring for the next turn."""
    shell, clock = pico
    board = _board()
    b = shell.Board(board, lambda ev: None, store_path=str(tmp_path / "rec"), watchdog=False)
    b.start("power")
    void = FakePin.pins[board["pins"]["void"]]
    given = []
    edge = b.ctl.edge

    def edge_while_an_interrupt_comes(t, i, level):
        given.append((t, level))
        if len(given) == 1:                   # the release, 300 us after the turn's `now`
            clock["us"] += 300
            void.raw = 1
            void.handler(void)
        return edge(t, i, level)

    b.ctl.edge = edge_while_an_interrupt_comes
    clock["us"] = 1000
    void.raw = 0                              # active low: pressed
    void.handler(void)
    clock["us"] = 2000
    now = b.poll()
    assert now == 2000 and given == [(1000, 1)] and len(b.ring) == 1 and b.ctl.t == 2000
    clock["us"] = 3000
    b.poll()
    assert given == [(1000, 1), (2300, 0)] and len(b.ring) == 0


def test_speed_samples_that_stop_are_a_fault_and_the_timer_is_started_again(pico, tmp_path):
    """MicroPython stops a timer whose hard callback raised: the rotor's speed and actuations
    would go unmeasured without a word. A spin in progress is void (its evidence is incomplete)."""
    shell, clock = pico
    events = []
    b = shell.Board(_board(), events.append, store_path=str(tmp_path / "rec"), watchdog=False)
    b.start("power")
    for t in range(5000, 2_000_000, 5000):
        FakeTimer.fire_until(t)
        b.poll()
    assert not [e for e in events if e["ev"] == "fault"] and len(FakeTimer.timers) == 1
    FakeTimer.timers.clear()                    # the callback raised: MicroPython dropped it
    for t in range(2_000_000, 2_805_000, 5000):
        clock["us"] = t
        b.poll()
    assert not [e for e in events if e["ev"] == "fault"]         # the last sample at 1.8 s: 1 s
    for t in range(2_805_000, 3_500_000, 5000):
        clock["us"] = t
        b.poll()
    faults = [e for e in events if e["ev"] == "fault"]
    assert [f["code"] for f in faults] == ["samples_lost"] and faults[0]["t"] == 2_805_000
    assert "no rotor speed sample for 1005 ms" in faults[0]["detail"]
    assert len(FakeTimer.timers) == 1           # armed again: the samples come back
    n = len(events)
    for t in range(3_500_000, 6_000_000, 5000):
        FakeTimer.fire_until(t)
        b.poll()
    assert not [e for e in events[n:] if e["ev"] == "fault"]


def test_a_board_with_the_cammegh_output_writes_a_void_at_once_the_others_hold_it(pico, tmp_path):
    shell, clock = pico
    held = shell.Board(_board(), lambda ev: None, store_path=str(tmp_path / "a"), watchdog=False)
    three = json.loads((ROOT / "boards" / "pico2-3pockets.json").read_text())
    assert three.get("cammegh")
    at_once = shell.Board(three, lambda ev: None, store_path=str(tmp_path / "b"), watchdog=False)
    assert held.ctl.hold_voids is True and at_once.ctl.hold_voids is False
