"""Replay a sensor feed through the firmware's spin logic (rejouer un flux de capteurs).

The same driver runs on the host (CPython) and on MicroPython: A/B edges go to the software model
of the PIO quadrature counter, `Z`, `BALLn`, `POCKETn` and `VOID` go to `Controller.signal`,
`Controller.tick` runs every `tick_us` of feed time, and a `RESET` pulse is a power cut: the
controller is lost at its rising edge and a new one boots at its falling edge with the same store
(flash survives, RAM does not). The controller's clock is microseconds since its time origin,
as on the Pico: feed time less `origin`, which is `boot_at` (the feed time of the last boot, 0
until a RESET) until the controller moves it forward. It does so by the Pico's rule, run after
each tick as the Pico's shell runs it (`Controller.rebase`: idle and past `rebase_at`, by whole
`rebase_step`s; spin/origin.py); `rebase_at=None` never moves it. `pico=True` schedules the
controller as the Pico's shell does instead (board/shell.py): a speed sample every 200 ms
(`Controller.sample`, the timer's) and a tick only at `Controller.next_due`. Its events leave the
controller in time since its boot; they are handed on in feed time (`shift_times`), so that they
line up with the feed and its truth across power cuts; `feed_clock=False` hands them on as the
controller said them.
"""

from cylindre.spin.controller import Controller
from cylindre.spin.origin import REBASE_AT_US, REBASE_STEP_US, shift_times
from cylindre.spin.quadrature import Quadrature
from cylindre.spin.rotor import SAMPLE_US

GEOMETRY_KEYS = ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg")
TICK_US = 10000
def settings_from(header, overrides=None):
    """Controller settings: the feed header's geometry plus spin-setting overrides (a dict)."""
    s = {}
    for k in GEOMETRY_KEYS:
        s[k] = header[k]
    if overrides:
        for k in overrides:
            s[k] = overrides[k]
    return s


class MemoryStore:
    """A controller's flash record kept in RAM: survives a replayed power cut, nothing more (for
    replays and tests; the Pico's is cylindre.board.store.FlashStore)."""

    def __init__(self, record=None):
        self.record = record

    def load(self):
        return self.record

    def save(self, record):
        self.record = record


class Replay:
    """Drive a Controller from (t_us, signal, level) changes; `emit` receives every event dict."""

    def __init__(self, header, emit, overrides=None, tick_us=TICK_US, store=None, feed_clock=True,
                 rebase_at=REBASE_AT_US, rebase_step=REBASE_STEP_US, pico=False):
        self.settings = settings_from(header, overrides)
        self.pico = pico
        self.next_sample = 0
        self.due = 0                # pico: feed time of the controller's next_due
        self.at = 0                 # pico: feed time of the last change (a tick is never before)
        self.out = emit
        self.feed_clock = feed_clock
        self.tick_us = tick_us
        self.store = store if store is not None else MemoryStore()
        self.levels = {}            # every non-encoder signal's current level (the wires)
        self.a = 0
        self.b = 0
        self.ctl = None
        self.quad = None
        self.next_tick = 0
        self.changes = 0
        self.ticks = 0
        self.boots = 0
        self.boot_at = 0            # feed time of the current controller's boot
        self.origin = 0             # feed time of its time origin (controller time 0)
        self.rebase_at = rebase_at  # the origin moves past this controller time (None: never)
        self.rebase_step = rebase_step
        self.rebases = 0

    def emit(self, ev):
        """The controller's events to `emit`, in feed time unless `feed_clock` is False."""
        self.out(shift_times(ev, self.boot_at) if self.feed_clock else ev)

    def power_on(self, t_us, cause="power"):
        """A fresh counter and controller boot; inputs already active are reported to it."""
        q = Quadrature()
        q.a = self.a
        q.b = self.b
        self.quad = q
        self.boot_at = t_us
        self.origin = t_us
        self.ctl = Controller(self.settings, self.emit, store=self.store, count=q)
        self.ctl.sampler = self.pico
        self.ctl.boot(0, reset_cause=cause)
        self.boots += 1
        for name in sorted(self.levels):
            if self.levels[name]:
                self.ctl.signal(0, name, 1)
        self.next_tick = t_us + self.tick_us
        self.next_sample = t_us + SAMPLE_US
        self.due = self.ctl.next_due() + self.origin

    def now_us(self, t):
        """Controller time at feed time t (for a link or a command driving the controller)."""
        return t - self.origin

    def run(self, changes, start_us=0):
        """Boot at `start_us` (unless already on) and replay an iterable of changes in order."""
        if self.ctl is None and self.boots == 0:
            self.power_on(start_us)
        pico = self.pico
        tick_us = self.tick_us
        ctl = self.ctl
        quad_edge = self.quad.edge if self.quad is not None else None
        next_tick = self.next_tick
        at = self.origin
        rb = self.rebase_at
        n = 0
        for t, sig, level in changes:
            n += 1
            if pico:
                if ctl is not None:     # the samples and ticks due by t, in time order
                    self._until(t)
                    at = self.origin
                self.at = t
            elif t >= next_tick and ctl is not None:
                while next_tick <= t:
                    ctl.tick(next_tick - at)
                    self.ticks += 1
                    next_tick += tick_us
                    if rb is not None:
                        at += self._rebase(ctl)     # as the Pico's shell, after each tick
            if sig == "A":
                self.a = level
                if quad_edge is not None:
                    quad_edge("A", level)
            elif sig == "B":
                self.b = level
                if quad_edge is not None:
                    quad_edge("B", level)
            elif sig == "RESET":
                if level and ctl is not None:           # power lost: RAM and counter gone
                    self.ctl = ctl = None
                    self.quad = quad_edge = None
                elif not level and ctl is None:          # power back
                    self.power_on(t)
                    ctl = self.ctl
                    quad_edge = self.quad.edge
                    next_tick = self.next_tick
                    at = self.origin
            else:
                self.levels[sig] = level
                if ctl is not None:
                    ctl.signal(t - at, sig, level)
                    if pico:            # as the Pico's shell, asked again after edges
                        self.due = ctl.next_due() + at
        self.next_tick = next_tick
        self.changes += n
        return n

    def _until(self, t):
        """The Pico schedule up to feed time t: the timer's samples and the ticks at next_due."""
        ctl = self.ctl
        q = self.quad
        while ctl is not None and q is not None:
            s = self.next_sample
            d = self.due
            if s <= d and s <= t:
                ctl.sample(s - self.origin, q())
                self.next_sample = s + SAMPLE_US
            elif d < s and d <= t:
                ctl.tick((d if d > self.at else self.at) - self.origin)
                self.ticks += 1
                if self.rebase_at is not None:
                    self._rebase(ctl)
                self.due = ctl.next_due() + self.origin
            else:
                return

    def finish(self, end_us):
        """Let feed time run on to `end_us` (ticks only), e.g. past the last line."""
        ctl = self.ctl
        if ctl is None:
            return
        if self.pico:
            self._until(end_us)
            return
        while self.next_tick <= end_us:
            ctl.tick(self.next_tick - self.origin)
            self.ticks += 1
            self.next_tick += self.tick_us
            if self.rebase_at is not None:
                self._rebase(ctl)

    def _rebase(self, ctl):
        """After a tick, the Pico's rule: the controller moves its time origin when idle past
        `rebase_at` (spin/origin.py); the replay's origin follows. Returns how far (us)."""
        d = ctl.rebase(self.rebase_at, self.rebase_step)
        if d:
            self.origin += d
            self.rebases += 1
        return d
