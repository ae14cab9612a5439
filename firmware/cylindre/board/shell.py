"""The Pico shell: pins, PIO encoder, interrupts, flash store, watchdog, lamp and LED around one
Controller. `Board(board_dict, emit)` sets everything up; the main loop calls `poll()` every few
milliseconds: it drains the edge ring into `Controller.edge` in time order (with the encoder
count taken in the interrupt, not later), ticks the controller, and feeds the watchdog.
"""

import machine
from machine import Pin
import sys
import time

from cylindre.board.clock import Clock
from cylindre.board.ring import Ring, SAMPLE
from cylindre.board.store import FlashStore
from cylindre.spin.controller import Controller
from cylindre.spin.origin import REBASE_AT_US
from cylindre.spin.rotor import SAMPLE_US

try:
    from micropython import RingIO      # C stream: select.poll asks it in C (MicroPython >= 1.23)
except ImportError:
    RingIO = None                       # CPython, stand-ins: the loop polls the ring (loop.EdgeWake)

# Edges the ring holds between two turns of the main loop: a turn takes a few ms on the Pico and
# the sensors make at most a few hundred edges a second (pocket sensors at 60 rpm), so 128 is
# over 0.4 s of slack; a chattering sensor fills it anyway, and that is a fault (edges_lost).
# 9 bytes an entry (docs/wheel/on-the-board.md, "CPU load and heap").
RING = 128
WDT_MS = 8000          # the RP2040's watchdog tops out at 8388 ms
SAMPLES_LATE_US = 5 * SAMPLE_US     # no speed sample for this long: the timer stopped (a fault)
# The wake-up signal (`Board.wake`): a byte for each edge the loop wakes for, emptied at every
# turn of the main loop (loop.DRAIN bytes at a time). More such edges than this between two
# turns: the interrupt's byte is dropped and the signal stays readable, so the loop still wakes;
# the ring holds the edges.
WAKE = 16


def board_settings(board):
    """(error, spin settings) of a board file. The checker runs once, at boot: it is imported
    here and dropped after (`drop`), so its functions do not stay in the heap."""
    from cylindre.board import boardfile
    err = boardfile.check(board)
    s = None if err else boardfile.spin_settings(board)
    drop("cylindre.board.boardfile")
    return err, s


def drop(name):
    """Forget a boot-only module (sys.modules and its package's attribute), so the collector
    frees its dictionary and functions; its interned names stay."""
    sys.modules.pop(name, None)
    pkg, _, leaf = name.rpartition(".")
    parent = sys.modules.get(pkg)
    if parent is not None and leaf in parent.__dict__:
        try:
            delattr(parent, leaf)
        except (AttributeError, TypeError):
            pass


def reset_cause():
    c = machine.reset_cause()
    if c == getattr(machine, "WDT_RESET", -1):
        return "watchdog"
    if c == getattr(machine, "PWRON_RESET", -2):
        return "power"
    return "soft"


class Board:
    def __init__(self, board, emit, store_path="/cylindre.rec", watchdog=True, store=None):
        from cylindre.board.encoder import Encoder
        err, settings = board_settings(board)
        if err:
            raise ValueError("board.json: " + err)
        pins = board["pins"]
        self.clock = Clock(time.ticks_us, time.ticks_diff)
        self.encoder = Encoder(int(pins.get("pio_sm", 0)), pins["enc_a"], pins["enc_b"])
        self._enc_count = self.encoder.count
        self.ring = Ring(RING, time.ticks_us, self._enc_count)
        self._pending = None
        self._out = emit
        low = bool(board.get("active_low", False))
        # The pins in the controller's signal order (Z, BALL0.., POCKET0.., VOID, then the
        # croupier's call button): the signal index; Z and the pocket sensors also take the
        # encoder count. The void and call buttons are optional.
        nb = len(pins["ball"])
        npk = len(pins["pocket"])
        gpio = [pins["z"]] + pins["ball"] + pins["pocket"] + [pins.get("void"), pins.get("call")]
        self._low = low
        self._codes = {}
        self._pins = []
        self._counted = [i == 0 or nb < i <= nb + npk for i in range(len(gpio))]
        # The edges the main loop wakes for: a ball, pocket or void sensor (or the call button)
        # turning active. The others (the index Z, every release) wait in the ring for its next
        # turn, in order: what they tell (the index's check, a pulse's width, a sensor no longer
        # stuck) has no time of its own, and the checks every 500 ms drain the ring first.
        self._wakes = [i > 0 for i in range(len(gpio))]
        self._index = []                    # the signal index of each pin in _pins
        for i, g in enumerate(gpio):
            if g is None:
                continue
            p = Pin(g, Pin.IN, Pin.PULL_UP if low else Pin.PULL_DOWN)
            self._pins.append(p)
            self._index.append(i)
            self._codes[p] = i
        self.lamp = Pin(pins["lamp"], Pin.OUT, value=0) if pins.get("lamp") is not None else None
        self.led = Pin(pins.get("led", 25), Pin.OUT, value=0)
        self.store = store if store is not None else FlashStore(store_path)
        self.ctl = Controller(settings, self._emit, store=self.store, count=self._count)
        # A void after the launch waits in RAM for the host's journal (spin/core.py); with the
        # Cammegh output it is written at once: a table system reading that output knows no
        # journal, and after a power cut would take the number the pockets name for that spin.
        self.ctl.hold_voids = not board.get("cammegh")
        if self.ctl.nb != nb or self.ctl.void_i != 1 + nb + npk or self.ctl.call_i != 2 + nb + npk:
            raise ValueError("board.json: %d ball and %d pocket pins, the controller's signals %s"
                             % (nb, npk, " ".join(self.ctl.names)))
        # The main loop's wake-up: the interrupt writes a byte after each edge it wakes the loop
        # for; `select.poll` finds the RingIO readable in C (loop.py). None: no RingIO here.
        self.wake = RingIO(WAKE) if RingIO is not None else None
        self._signal = self.wake.write if self.wake is not None else self._flag
        self._irq = self._on_edge           # bound once: the IRQ must not allocate
        self._tick_irq = self._on_sample
        self.timer = None
        self._sampled = 0                   # controller time of the last speed sample handed over
        self.wdt = machine.WDT(timeout=WDT_MS) if watchdog else None
        self.state = "idle"
        self._led_state = None              # the state and time the LED was last set for
        self._led_until = 0
        self._lost = 0
        self._due = None                    # the controller's next_due as `due` last read it

    # -- interrupts ---------------------------------------------------------------------------
    def _on_edge(self, pin):
        i = self._codes[pin]
        v = pin.value()
        if self._low:
            v = 1 - v
        self.ring.stamp((i << 1) | v, self._counted[i])
        if v and self._wakes[i]:
            self._signal(b"\x01")          # after the edge: a constant, nothing allocated

    def _on_sample(self, timer):
        """The rotor's speed sample every 200 ms: the time and the count into the ring, for the
        loop's next turn (it does not wake the loop). The pin and timer interrupts run at the
        same priority (the SDK's default), so neither cuts into the other's `stamp`."""
        self.ring.stamp(SAMPLE, True)

    def _flag(self, b):
        """The wake-up where there is no RingIO: the ring's flag, which loop.EdgeWake reads."""
        self.ring.wake = 1

    def start(self, reset="power"):
        """Boot the controller, then let the interrupts in; inputs already active are told."""
        now = self.clock.now()
        self.ctl.boot(now, reset_cause=reset)
        for k, p in enumerate(self._pins):
            v = p.value()
            if self._low:
                v = 1 - v
            if v:
                self.ctl.edge(now, self._index[k], 1)
            p.irq(self._irq, Pin.IRQ_RISING | Pin.IRQ_FALLING, hard=True)
        # The speed samples by a hard timer interrupt: the core does not wake the loop for them
        # (each wake-up costs ~1 ms of Python). A `machine` without a Timer
        # (the CPython stand-ins of some tests) leaves them to the ticks.
        if getattr(machine, "Timer", None) is not None:
            self.ctl.sampler = True
            self._sampled = now
            self._arm()

    def _arm(self):
        Timer = getattr(machine, "Timer")   # untyped: the Pico stubs' Timer has no `hard`
        self.timer = Timer(mode=Timer.PERIODIC, period=SAMPLE_US // 1000, callback=self._tick_irq, hard=True)

    def _samples_stopped(self, now):
        """No speed sample for SAMPLES_LATE_US: MicroPython stops a timer whose hard callback
        raised. Told (the rotor's speed and actuations went unmeasured: a spin in progress is
        void), and the timer started again."""
        self.ctl.fault("samples_lost", "no rotor speed sample for %d ms: the sampling timer was "
                       "started again" % ((now - self._sampled) // 1000), None, now)
        try:
            self.timer.deinit()
        except Exception:
            pass
        self._sampled = now
        self._arm()

    # -- main loop ----------------------------------------------------------------------------
    def _count(self):
        p = self._pending
        return p if p is not None else self._enc_count()

    def due(self):
        """Controller time of the next thing to do without an edge: the controller's next work
        (`Controller.next_due`: the status, the checks, rien ne va plus, the drop). The LED
        changes at the first turn at or after its time (turns come at least every 500 ms at
        work, every second at most): a wake-up of its own for a blink costs as much as a turn.
        Asked of the controller only after what can move it (a tick, edges, the host's bytes:
        `invalidate`), ~0.2 ms a time."""
        d = self._due
        if d is None:
            d = self._due = self.ctl.next_due()
        return d

    def invalidate(self):
        """The host's bytes may have changed the controller (a command): ask `next_due` again."""
        self._due = None

    def poll(self):
        """Hand the ring's edges and speed samples up to now to the controller in time order,
        tick when it has work due, move the time origin when the controller allows it, feed the
        watchdog. Returns controller time now.

        A wake-up for an edge or for the host's bytes alone does not tick: the controller's
        timed work (the status, the checks, rien ne va plus, the drop) has its time in
        `next_due`, which the edges drained here may move, so it is asked again only after
        edges (`Replay(pico=True)` runs the controller on this schedule). What the interrupts
        stamp after `now` waits for the next turn, so the tick at `now` follows everything the
        controller was given."""
        r = self.ring
        # Cleared before the clock reading: an edge after it (left for the next turn) sets it
        # again and wakes the loop (without a RingIO: loop.EdgeWake).
        r.wake = 0
        ctl = self.ctl
        clock = self.clock
        now = clock.now()
        due = self._due
        while r.tail != r.head:
            j = r.tail
            code = r.code[j]
            t = clock.at(r.t[j])
            if t > now:
                break
            if code == SAMPLE:
                ctl.sample(t, r.k[j])
                self._sampled = t
            else:
                due = None
                i = code >> 1
                if self._counted[i]:
                    self._pending = r.k[j]
                ctl.edge(t, i, code & 1)
                self._pending = None
            j += 1
            r.tail = 0 if j == r.size else j
        if self.timer is not None and now - self._sampled > SAMPLES_LATE_US:
            self._samples_stopped(now)
        if r.lost != self._lost:
            self._lost = r.lost
            ctl.fault("edges_lost", "%d sensor edges lost: a sensor chatters faster than the "
                      "loop drains them" % r.lost, None)
        if due is None:
            due = self._due = ctl.next_due()
        if now >= due:
            self._due = None
            ctl.tick(now)
            d = ctl.rebase() if now >= REBASE_AT_US else 0  # (its first test, without the call)
            if d:
                # Idle past REBASE_AT_US: the controller moved its time origin (spin/origin.py),
                # so its times stay small ints; the clock follows. The LED's cycle divides d.
                clock.rebase(d)
                now -= d
                self._sampled -= d
                self._led_until = 0
        if self.wdt is not None:
            self.wdt.feed()
        self._led(now)
        return now

    # -- outputs ------------------------------------------------------------------------------
    def _emit(self, ev):
        k = ev["ev"]
        if k == "rnvp":
            self._lamp(1)
        elif k in ("launch", "result", "void", "boot"):
            self._lamp(0)
        if k == "status":
            self.state = ev["state"]
        self._out(ev)

    def _lamp(self, on):
        if self.lamp is not None:
            self.lamp.value(on)

    def _led(self, now):
        """LED: steady while a spin runs, blinking on a fault, a short blink every 2 s idle. Set
        at its changes only (`_led_until`): the main loop asks at every turn."""
        st = self.state
        if now < self._led_until and st is self._led_state:
            return
        if st == "fault":
            on = (now // 250000) & 1
            until = now - now % 250000 + 250000
        elif st in ("ball_in_rim", "no_more_bets", "ball_dropped"):
            on = 1
            until = now + 1000000
        else:
            p = now % 2000000
            on = 1 if p < 50000 else 0
            until = now - p + (50000 if on else 2000000)
        self._led_state = st
        self._led_until = until
        self.led.value(on)
