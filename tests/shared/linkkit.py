"""Test fixtures for the link, in the MicroPython subset: a fake controller, a wire, a clock."""

from cylindre.link.device import DeviceLink
from cylindre.link.host import HostLink

KEY = b"0123456789abcdef0123456789abcdef"


class Clock:
    def __init__(self):
        self.ms = 1000

    def __call__(self):
        return self.ms


class Rand:
    """Deterministic nonces (MicroPython's wasm build has no `random`)."""

    def __init__(self, seed):
        self.n = seed

    def __call__(self, k):
        out = bytearray()
        for _ in range(k):
            self.n = (self.n * 1103515245 + 12345) & 0x7FFFFFFF
            out.append((self.n >> 16) & 0xFF)
        return bytes(out)


class FakeController:
    """Records what the link asks of a controller; settings bounded like the real one's contract."""

    def __init__(self):
        self.table_open = False
        self.accepting = []
        self.settings = {"rnvp_lead_ms": 3000}
        self.games = [{"spin": 1, "number": 17}]
        self.durables = 0           # times the link said every result emitted is acknowledged

    def open_table(self, t):
        self.table_open = True

    def close_table(self, t):
        self.table_open = False

    def get_settings(self):
        return dict(self.settings)

    def set_setting(self, name, value):
        if name not in self.settings:
            return "unknown setting %r" % name
        if not isinstance(value, int) or value < 500 or value > 10000:
            return "%s out of bounds 500..10000" % name
        self.settings[name] = value
        return None

    def history(self):
        return list(self.games)

    def set_accepting(self, ok, reason=None):
        self.accepting.append((ok, reason))

    def durable(self):
        self.durables += 1


class Wire:
    """Two byte queues between a DeviceLink and a HostLink; `cut` drops everything sent."""

    def __init__(self):
        self.to_host = bytearray()
        self.to_dev = bytearray()
        self.cut = False
        self.tamper = None      # function(bytes) -> bytes applied to wheel->host traffic

    def dev_write(self, data):
        if not self.cut:
            self.to_host.extend(data)

    def host_write(self, data):
        if not self.cut:
            self.to_dev.extend(data)


class Rig:
    """A wheel and a host over a Wire; `run` moves bytes and time; the host acks every event.

    Steps are coarse (50 ms) on purpose: the WASI MicroPython used for the shared tests cannot
    collect garbage, so a test module must allocate under about 1 MB in all."""

    def __init__(self, capacity=64, reserve=16, seed=1):
        self.clock = Clock()
        self.wire = Wire()
        self.ctl = FakeController()
        self.dev = DeviceLink(self.wire.dev_write, self.clock, KEY, "T1", capacity=capacity,
                              reserve=reserve, urandom=Rand(seed))
        self.dev.attach(self.ctl, lambda: self.clock.ms * 1000)
        self.new_host(seed + 100)
        self.delivered = []
        self.records = []
        self.auto_ack = True

    def new_host(self, seed):
        self.host = HostLink(self.wire.host_write, self.clock, KEY, wheel="T1", urandom=Rand(seed))

    def step(self, ms=10):
        self.clock.ms += ms
        for r in self.host.poll():
            self.records.append(r)
        if self.wire.to_dev:
            data = bytes(self.wire.to_dev)
            self.wire.to_dev = bytearray()
            self.dev.feed(data)
        self.dev.poll()
        if self.wire.to_host:
            data = bytes(self.wire.to_host)
            self.wire.to_host = bytearray()
            if self.wire.tamper is not None:
                data = self.wire.tamper(data)
            for r in self.host.feed(data):
                self.records.append(r)
                if r["kind"] == "event":
                    self.delivered.append((r["boot"], r["seq"], r["event"]))
                    if self.auto_ack:
                        self.host.acknowledge(r["seq"])

    def run(self, ms, step=50):
        for _ in range(ms // step):
            self.step(step)

    def kinds(self, kind):
        return [r for r in self.records if r["kind"] == kind]

    def ask(self, cmd, args=None, ms=2000):
        self.host.command(cmd, args)
        for _ in range(ms // 50):
            self.step(50)
            for r in self.records:
                if r["kind"] in ("reply", "timeout") and not r.get("seen"):
                    r["seen"] = True
                    return r
        return None
