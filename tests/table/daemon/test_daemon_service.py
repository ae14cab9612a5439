"""The daemon's shell with the firmware's device link in the same process (no pty): an event the
journal cannot store is taken again later, never skipped; commands reach the wheel."""

import time

from host_tools.table.daemon.service import Daemon

from loopkit import KEY, wait


def test_an_event_the_journal_refused_is_settled_when_sent_again(tmp_path, loopback):
    pipe = loopback()
    d = Daemon(pipe, KEY, tmp_path / "j.sqlite", open_table=True)
    real = d.table.on_event
    failures = []

    def flaky(boot, seq, ev, rec):
        if ev.get("ev") == "result" and not failures:
            failures.append(seq)
            raise OSError("disk full (simulated)")
        return real(boot, seq, ev, rec)

    d.table.on_event = flaky
    d.start()
    try:
        assert wait(lambda: d.link.in_session)
        assert wait(lambda: d.table.state()["accepting_bets"])    # fresh word from the wheel
        bet = d.table.place({"player": "ana", "type": "plein", "numbers": [8], "stake": 1000})
        time.sleep(0.1)     # the call comes later than the link's transit (counted against the bet)
        for ev in ({"ev": "launch", "t": 1, "spin": 1}, {"ev": "rnvp", "t": 2, "spin": 1},
                   {"ev": "result", "t": 3, "spin": 1, "number": 8}, {"ev": "launch", "t": 4, "spin": 2}):
            pipe.emit(ev)
        assert wait(lambda: pipe.dev.outbox_len() == 0)
        assert failures
        rows = d.j.query("SELECT ev FROM events ORDER BY seq")
        assert [r["ev"] for r in rows] == ["launch", "rnvp", "result", "launch"]
        assert d.table.bet(bet["id"])["result"]["won"] == 35000
        assert len(d.j.query("SELECT * FROM settlements")) == 1
        # a command through the same link
        reply = d.command("status", timeout=5)
        assert reply["ok"] and reply["result"]["link"]["wheel"] == "T1"
    finally:
        d.stop()


def test_the_log_file_is_reopened_after_logrotate_moves_it(tmp_path):
    import logging
    from host_tools.table.daemon.cli import setup_logging
    path = tmp_path / "daemon.log"
    setup_logging(str(path))
    try:
        logging.getLogger("cylindre.test").info("before the rotation")
        path.rename(tmp_path / "daemon.log.1")
        logging.getLogger("cylindre.test").info("after the rotation")
        assert "before" in (tmp_path / "daemon.log.1").read_text()
        assert "after the rotation" in path.read_text()
    finally:
        logging.basicConfig(handlers=[logging.NullHandler()], force=True)
