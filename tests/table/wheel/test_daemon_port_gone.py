"""A port that disappears under a running daemon (a pulled USB cable: /dev/ttyACM0 vanishes; a
simulated wheel that exits) reads as a dead link within --silence-ms, whatever the port does:
the session ends, /health names the reason, the status says so (issue 21, item 1)."""

import os
import threading
import time

from cylindre.link.device import DeviceLink
from host_tools.table.daemon.service import Daemon, SerialPort
from host_tools.sim.ptywheel import PtyPort

KEY = bytes(range(32))
SILENCE_MS = 1500


class Wheel:
    """A DeviceLink on the board's end of a pty, served by a thread until `stop()`."""

    def __init__(self):
        self.pty = PtyPort()
        self.dev = DeviceLink(self.pty.write, lambda: int(time.monotonic() * 1000), KEY, "T1")
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            data = self.pty.read()
            if data:
                self.dev.feed(data)
            self.dev.poll()
            time.sleep(0.005)

    def stop(self):
        """The wheel's process ends: its thread, then both ends of its pty."""
        self._stop.set()
        self._t.join(2)
        for fd in (self.pty.master, self.pty.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def _wait(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def _run_until_gone(tmp_path, remove_link):
    wheel = Wheel()
    path = wheel.pty.path
    if remove_link:
        path = str(tmp_path / "ttyACM0")
        os.symlink(wheel.pty.path, path)
    d = Daemon(SerialPort(path), KEY, tmp_path / "j.sqlite", open_table=True, silence_ms=SILENCE_MS)
    d.start()
    try:
        assert _wait(lambda: d.link.in_session, 15), "no session with the wheel"
        assert d.health_reasons() == []
        wheel.stop()
        if remove_link:
            os.unlink(path)
        gone = time.monotonic()
        # down within the silence timeout (plus the I/O loop's own pace, on a busy machine)
        assert _wait(lambda: not d.link.in_session, SILENCE_MS / 1000 + 5), "the link still reads as up"
        took = time.monotonic() - gone
        reasons = d.health_reasons()
        assert reasons and "port" in " ".join(reasons), reasons
        st = d.status()["link"]
        assert st["session"] is False and st["up"] is False
        assert st["problem"], st
        return took
    finally:
        d.stop()


def test_a_removed_port_symlink_ends_the_session_within_the_silence_timeout(tmp_path):
    _run_until_gone(tmp_path, remove_link=True)


def test_a_wheel_process_that_exits_ends_the_session_within_the_silence_timeout(tmp_path):
    _run_until_gone(tmp_path, remove_link=False)


def test_the_metrics_name_the_cause_while_the_link_is_down(tmp_path):
    from host_tools.table.api.metrics import Metrics
    wheel = Wheel()
    d = Daemon(SerialPort(wheel.pty.path), KEY, tmp_path / "j.sqlite", open_table=True, silence_ms=SILENCE_MS)
    m = Metrics()
    m.watch(d)
    d.start()
    try:
        assert _wait(lambda: d.link.in_session, 15)
        text = m.render().decode()
        assert "cylindre_link_up 1.0" in text and "cylindre_link_problem{" not in text
        wheel.stop()
        assert _wait(lambda: not d.link.in_session, SILENCE_MS / 1000 + 5)
        text = m.render().decode()
        assert "cylindre_link_up 0.0" in text and 'cylindre_link_problem{code="port_missing"} 1.0' in text
    finally:
        d.stop()


def test_a_missing_port_is_said_in_a_few_words(tmp_path):
    """pyserial names the port three times in English ("could not open port P: [Errno 2] No such
    file or directory: 'P'"); the pit and the floor show the cause once, in French."""
    port = SerialPort(str(tmp_path / "ttyGONE"))
    assert port.open() is False
    assert port.error == "introuvable (errno 2)"
