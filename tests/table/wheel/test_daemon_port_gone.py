"""A port that disappears under a running daemon (a pulled USB cable: /dev/ttyACM0 vanishes; a
simulated wheel that exits) reads as a dead link within --silence-ms, whatever the port does:
the session ends, /health names the reason, the status says so (issue 21, item 1)."""

import os
import time

from host_tools.table.daemon.service import Daemon
from host_tools.table.wheel.port import SerialPort
from host_tools.sim.ptywheel import PtyPort

from loopkit import KEY, Loopback, wait

SILENCE_MS = 1500


class Wheel(Loopback):
    """The wheel's DeviceLink on the board's end of a real pty (the daemon opens the other end as a
    serial port), served by the loop's thread until `unplug()`."""

    def __init__(self):
        self.pty = PtyPort()
        super().__init__()

    def _dev_write(self, data):
        self.pty.write(data)

    def _take(self):
        return self.pty.read()

    def unplug(self):
        """The wheel's process ends: its thread, then both ends of its pty."""
        self.close_wheel()
        for fd in (self.pty.master, self.pty.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def _run_until_gone(tmp_path, remove_link):
    wheel = Wheel()
    path = wheel.pty.path
    if remove_link:
        path = str(tmp_path / "ttyACM0")
        os.symlink(wheel.pty.path, path)
    d = Daemon(SerialPort(path), KEY, tmp_path / "j.sqlite", open_table=True, silence_ms=SILENCE_MS)
    d.start()
    try:
        assert wait(lambda: d.link.in_session, 15), "no session with the wheel"
        assert d.health_reasons() == []
        wheel.unplug()
        if remove_link:
            os.unlink(path)
        gone = time.monotonic()
        # down within the silence timeout (plus the I/O loop's own pace, on a busy machine)
        assert wait(lambda: not d.link.in_session, SILENCE_MS / 1000 + 5), "the link still reads as up"
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
        assert wait(lambda: d.link.in_session, 15)
        text = m.render().decode()
        assert "cylindre_link_up 1.0" in text and "cylindre_link_problem{" not in text
        wheel.unplug()
        assert wait(lambda: not d.link.in_session, SILENCE_MS / 1000 + 5)
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
