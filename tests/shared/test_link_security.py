"""Replays, commands and the outbox limit, both link ends together (split from test_link_session:
the WASI MicroPython build faults when its ~1 MB heap has to be collected, so modules stay small).
"""

from linkkit import Rig


def _events(n, start=0, kind="result"):
    return [{"ev": kind, "t": (start + i) * 1000, "spin": start + i, "number": (start + i) % 37}
            for i in range(n)]


def _spins(rig):
    return [e["spin"] for (_b, _s, e) in rig.delivered]


def test_replayed_event_from_an_earlier_session_is_refused():
    r = Rig()
    r.run(1200)
    captured = []

    def keep(d):
        captured.append(d)
        return d

    r.wire.tamper = keep
    r.dev.emit(_events(1)[0])
    r.run(100)
    r.wire.tamper = None
    assert _spins(r) == [0]
    r.new_host(seed=5)
    r.run(1500)
    before = len(r.delivered)
    recs = []
    for c in captured:
        recs += r.host.feed(c)
    assert recs and all(x["kind"] in ("reject", "stale") for x in recs)
    assert len(r.delivered) == before


def test_replayed_command_inside_a_session_is_not_run_twice():
    r = Rig()
    r.run(1200)
    sent = []
    orig = r.host._write

    def spy(data):
        sent.append(data)
        orig(data)

    r.host._write = spy
    rep = r.ask("open_table")
    assert rep["reply"]["ok"] and r.ctl.table_open
    r.ask("close_table")
    assert not r.ctl.table_open
    for d in sent:                    # replay the open_table frame
        r.dev.feed(d)
    assert not r.ctl.table_open


def test_replayed_hello_cannot_revive_old_commands():
    r = Rig()
    r.run(1200)
    sent = []
    orig = r.host._write
    r.host._write = lambda d: (sent.append(d), orig(d))
    hello_then_open = []
    r.host.hello()
    r.run(200)
    r.ask("open_table")
    hello_then_open = list(sent)
    r.ask("close_table")
    assert not r.ctl.table_open
    r.dev.feed(b"".join(hello_then_open))   # the attacker replays the hello and the command
    assert not r.ctl.table_open


def test_commands_and_bounds():
    r = Rig()
    r.run(1200)
    rep = r.ask("set_setting", {"name": "rnvp_lead_ms", "value": 99})
    assert not rep["reply"]["ok"] and "bounds" in rep["reply"]["error"]
    rep = r.ask("set_setting", {"name": "rnvp_lead_ms", "value": 2500})
    assert rep["reply"]["ok"] and rep["reply"]["result"]["rnvp_lead_ms"] == 2500
    assert r.ask("history")["reply"]["result"] == [{"spin": 1, "number": 17}]
    assert not r.ask("self_destruct")["reply"]["ok"]
    rep = r.ask("set_time", {"epoch_ms": 1700000000000})
    assert rep["reply"]["ok"] and r.dev.wall_offset_ms == 1700000000000 - r.clock.ms
    st = r.ask("status")["reply"]["result"]
    assert st["link"]["wheel"] == "T1" and st["link"]["outbox"] == 0


def test_lost_reply_is_resent_without_running_twice():
    r = Rig()
    r.run(1200)
    calls = []
    r.ctl.open_table = lambda t: calls.append(t)
    state = {"drop": True}

    def tamper(data):
        if state["drop"] and b"R" in data:
            state["drop"] = False
            return b""
        return data

    r.wire.tamper = tamper
    rep = r.ask("open_table")
    assert rep["kind"] == "reply" and len(calls) == 1


def test_command_times_out_without_a_wheel():
    r = Rig()
    r.wire.cut = True
    rep = r.ask("status", ms=5000)
    assert rep["kind"] == "timeout"


def test_full_outbox_stops_spins_and_never_drops_a_result():
    r = Rig(capacity=12, reserve=4)
    for e in _events(8):
        r.dev.emit(e)
    assert r.ctl.accepting == []            # never from inside the controller's emit ...
    r.dev.poll()
    assert r.ctl.accepting == [(False, "outbox_full")]   # ... but at the next poll
    assert not r.dev.accepting
    for e in _events(4, start=8, kind="launch") + _events(3, start=12):
        r.dev.emit(e)
    assert r.dev.evicted == 3 and r.dev.overrun == 0
    r.run(2000)
    got = r.delivered
    results = [e["spin"] for (_b, _s, e) in got if e["ev"] == "result"]
    assert results == list(range(8)) + [12, 13, 14]
    assert [s for (_b, s, _e) in got] == list(range(1, 16))    # no gap in sequence numbers
    assert r.ctl.accepting[-1] == (True, None)
