"""The daemon's port wired in-process to the firmware's own DeviceLink, served by a thread: the
link's real bytes both ways, without a pseudo-terminal. One rig for the daemon's tests (the
`loopback` fixture of tests/table/conftest.py makes them and stops their threads)."""

import threading
import time

from cylindre.link.device import DeviceLink

KEY = bytes(range(32))


def wait(cond, timeout=15):
    """True as soon as `cond()` holds, else its last answer after `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def ms():
    return int(time.monotonic() * 1000)


class Loopback:
    """The host's port (`open`, `read`, `write`, `close`, as the daemon's SerialPort) with a wheel
    on its cable: a DeviceLink of `key` and `wheel`, fed what the host writes and polled every
    5 ms by a thread. `plug` puts another wheel on the cable; while the port is closed nothing the
    host writes goes out, as with pyserial."""

    url = "pipe"

    def __init__(self, key=KEY, wheel="T1", serial=None, ctl=None):
        self.s = None
        self.to_host = bytearray()
        self.inbox = bytearray()
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.dev = None
        self.ctl = None
        if key is not None:
            self.plug(key=key, wheel=wheel, serial=serial, ctl=ctl)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def plug(self, key=KEY, wheel="T1", serial=None, ctl=None):
        """A wheel on the cable: its DeviceLink, attached to the controller `ctl` if given."""
        with self.lock:
            self.ctl = ctl
            self.dev = DeviceLink(self._dev_write, ms, key, wheel, serial=serial)
            if ctl is not None:
                self.dev.attach(ctl, lambda: int(time.monotonic() * 1e6))
            self.inbox.clear()

    def emit(self, ev):
        with self.lock:
            self.dev.emit(ev)

    def _dev_write(self, data):
        with self.lock:
            self.to_host.extend(data)

    def _take(self) -> bytes:
        """What the host sent since the last turn (a subclass may read it from a real cable)."""
        data = bytes(self.inbox)
        del self.inbox[:]
        return data

    def _run(self):
        while not self.stop.is_set():
            with self.lock:
                data = self._take()
                if self.dev is not None:
                    if data:
                        self.dev.feed(data)
                    self.dev.poll()
            time.sleep(0.005)

    def close_wheel(self):
        """The wheel's thread ends (a fixture's teardown)."""
        self.stop.set()
        self._thread.join(2)

    # the host's side
    def open(self):
        self.s = True
        return True

    def read(self):
        time.sleep(0.005)
        with self.lock:
            data = bytes(self.to_host)
            del self.to_host[:]
        return data

    def write(self, data):
        if self.s is None:
            return
        with self.lock:
            self.inbox.extend(data)

    def close(self):
        self.s = None


class Controller:
    """What the link asks of a controller, with the counter and its epoch as the flash keeps them."""

    def __init__(self, spin=0, epoch="e1"):
        self.spin = spin
        self.count_epoch = epoch
        self.games = []

    def open_table(self, t):
        pass

    def close_table(self, t):
        pass

    def history(self):
        return list(self.games)

    def get_settings(self):
        return {}

    def set_accepting(self, ok, reason=None):
        pass


def swap(port, ctl, serial="s1", key=KEY, wheel="T1"):
    """Another wheel on the cable (a DeviceLink and its controller): it boots, then says idle."""
    with port.lock:
        port.plug(key=key, wheel=wheel, serial=serial, ctl=ctl)
        port.dev.emit({"ev": "boot", "t": 0, "spin": ctl.spin, "history": ctl.history(), "interrupted": None})
        port.dev.emit({"ev": "status", "t": 0, "state": "idle", "spin": ctl.spin, "last": None})
