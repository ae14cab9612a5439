"""A wrong key or a wrong wheel is diagnosed, said once in the log, and alerted (issue 21, item 4):
the daemon's shell in-process, its port wired to the firmware's DeviceLink served by a thread."""

import logging
import time

from host_tools.table.alerts import rules as A
from host_tools.table.wheel.linkwatch import QuietLog
from host_tools.table.daemon.service import Daemon

from loopkit import KEY, wait

OTHER_KEY = bytes(range(1, 33))


def _daemon_lines(caplog):
    return [r for r in caplog.records if r.name == "cylindre.daemon"]


def _problem(d):
    return d.status()["link"]["problem"] or {}


def test_a_wheel_of_another_id_is_named_said_once_and_alerted(tmp_path, caplog, loopback):
    caplog.set_level(logging.INFO)
    pipe = loopback(wheel="T1")
    d = Daemon(pipe, KEY, tmp_path / "j.sqlite", wheel="T2", open_table=True)
    d.start()
    try:
        assert wait(lambda: _problem(d).get("code") == "wrong_wheel")
        time.sleep(3)           # the wheel keeps talking in the session the host refused
        text = _problem(d)["text"]
        assert text == "le cylindre T1 a répondu, T2 attendu"
        assert d.health_reasons() == ["link down: " + text]
        lines = _daemon_lines(caplog)
        # before: one clear line, then ~50 lines a second of "frame reject: mac not authentic"
        assert len(lines) <= 6, [r.getMessage() for r in lines]
        assert any("wheel T1 answered, T2 expected" in r.getMessage() for r in lines)
        out = A.evaluate({"table_open": True, "link_up": False, "link_down_since": time.time(), "link_problem": d.problem()}, A.thresholds({}), time.time())
        assert [a["code"] for a in out] == ["link_fault"] and "T1" in out[0]["message"]
    finally:
        d.stop()


def test_frames_that_never_verify_are_diagnosed_as_a_wrong_key(tmp_path, caplog, loopback):
    """A wheel in session with a daemon of the right key; that daemon is replaced by one started
    with another key: the wheel's statuses keep coming and none verifies."""
    caplog.set_level(logging.INFO)
    pipe = loopback()
    d = Daemon(pipe, KEY, tmp_path / "j.sqlite", open_table=True)
    d.start()
    assert wait(lambda: d.link.in_session)
    d.stop()
    d2 = Daemon(pipe, OTHER_KEY, tmp_path / "j2.sqlite", open_table=True)
    caplog.clear()
    d2.start()
    try:
        assert wait(lambda: _problem(d2).get("code") == "not_authentic"), _problem(d2)
        time.sleep(2)
        assert "aucune n'est authentique : clé différente ?" in _problem(d2)["text"]
        assert len(_daemon_lines(caplog)) <= 5, [r.getMessage() for r in _daemon_lines(caplog)]
        out = A.evaluate({"link_problem": d2.problem()}, A.thresholds({}), time.time())
        assert [a["code"] for a in out] == ["link_fault"]
    finally:
        d2.stop()


def test_a_wheel_with_another_key_that_stays_silent_is_told_with_the_key_as_a_cause(tmp_path, loopback):
    pipe = loopback(key=OTHER_KEY)
    d = Daemon(pipe, KEY, tmp_path / "j.sqlite", open_table=True)
    d.start()
    try:
        assert wait(lambda: _problem(d).get("code") == "silent")
        p = _problem(d)
        assert "aucune trame du cylindre" in p["text"] and "clé différente" in p["text"]
        assert d.status()["link"]["up"] is False and d.health_reasons()
    finally:
        d.stop()


def test_a_link_that_never_comes_up_is_said_in_the_log_with_its_cause(tmp_path, caplog, loopback):
    """A wheel of another key from the daemon's start: the log said nothing at all (only "port
    open"), while /health and the pit named the cause. The log says it once the silence is over."""
    caplog.set_level(logging.INFO)
    pipe = loopback(key=OTHER_KEY)
    d = Daemon(pipe, KEY, tmp_path / "j.sqlite", open_table=True, silence_ms=1500)
    d.start()
    try:
        assert wait(lambda: any("liaison coupée :" in r.getMessage() for r in _daemon_lines(caplog)), timeout=8), \
            [r.getMessage() for r in _daemon_lines(caplog)]
        time.sleep(2)
        down = [r.getMessage() for r in _daemon_lines(caplog) if "liaison coupée :" in r.getMessage()]
        assert len(down) == 1 and "clé différente" in down[0], down
    finally:
        d.stop()


def test_a_repeated_line_is_written_once_then_with_a_count():
    said = []

    class Log:
        def log(self, level, fmt, *args):
            said.append(fmt % args)

    now = [0.0]
    q = QuietLog(Log(), every_s=10, clock=lambda: now[0])
    for i in range(500):
        now[0] = i * 0.02
        q("mac", logging.WARNING, "frame reject: %s", "mac")
    assert said == ["frame reject: mac"]
    now[0] = 10.5
    q("mac", logging.WARNING, "frame reject: %s", "mac")
    assert said[-1] == "frame reject: mac (and 499 more like it in the last 10 s)"
    q("other", logging.WARNING, "another line")
    assert said[-1] == "another line"
