"""A line so slow that the session is up but no bet is possible (issue 21): every STATUS arrives
older than the freshness bound, so every bet is refused `wheel_not_heard`. /health says so (503,
"liaison lente …"), `link.up` is false with the problem `slow_line`; the rule is not loosened."""

import collections
import time

import pytest

from host_tools.table.daemon.service import Daemon
from host_tools.table.game.table import Refused

from loopkit import KEY, Controller, Loopback, swap, wait


class SlowPort(Loopback):
    """The in-process wheel behind a line that holds every byte `delay` seconds each way."""

    def __init__(self, delay):
        self.delay = delay
        self.up_q = collections.deque()          # wheel -> host
        self.down_q = collections.deque()        # host -> wheel
        super().__init__(key=None)

    def _dev_write(self, data):
        self.up_q.append((time.monotonic() + self.delay, bytes(data)))

    def _due(self, q):
        out = bytearray()
        while q and q[0][0] <= time.monotonic():
            out += q.popleft()[1]
        return bytes(out)

    def read(self):
        time.sleep(0.005)
        with self.lock:
            self.inbox.extend(self._due(self.down_q))
            return self._due(self.up_q)

    def write(self, data):
        if self.s is None:
            return
        with self.lock:
            self.down_q.append((time.monotonic() + self.delay, bytes(data)))


def _rig(loopback, delay):
    port = loopback(cls=SlowPort, delay=delay)
    swap(port, Controller(epoch="e1"))
    return port


@pytest.mark.parametrize("delay", [0.8])
def test_a_session_up_on_a_line_too_slow_for_any_bet_is_told_by_health(tmp_path, loopback, delay):
    port = _rig(loopback, delay)
    d = Daemon(port, KEY, tmp_path / "j.sqlite", open_table=True)
    d.start()
    try:
        assert wait(lambda: d.link.in_session, timeout=30)
        assert wait(lambda: d.health_reasons() != [], timeout=15), d.status()["link"]
        reason = d.health_reasons()[0]
        assert reason.startswith("liaison lente : les états du cylindre arrivent trop tard") and "ms)" in reason
        st = d.status()
        assert st["link"]["session"] and st["link"]["up"] is False and st["link"]["problem"]["code"] == "slow_line"
        with pytest.raises(Refused) as e:       # the truth: no bet is possible (the rule holds)
            d.table.place({"player": "ann", "type": "plein", "numbers": [17], "stake": 100})
        assert e.value.code == "wheel_not_heard"
    finally:
        d.stop()


def test_a_quick_line_is_healthy(tmp_path, loopback):
    port = _rig(loopback, 0.02)
    d = Daemon(port, KEY, tmp_path / "j.sqlite", open_table=True)
    d.start()
    try:
        assert wait(lambda: d.link.in_session and d.table.state()["accepting_bets"], timeout=30)
        time.sleep(2.5)                         # past LATE_STATUSES statuses
        assert d.health_reasons() == [] and d.table.window.late == 0
    finally:
        d.stop()
