"""Both ends of the link together: sessions, lossless delivery, replay and forgery, outbox limits."""

from linkkit import Rig

from cylindre.link import frame as fr
from cylindre.link.mac import Hmac


def _events(n, start=0, kind="result"):
    return [{"ev": kind, "t": (start + i) * 1000, "spin": start + i, "number": (start + i) % 37}
            for i in range(n)]


def _spins(rig):
    return [e["spin"] for (_b, _s, e) in rig.delivered]


def _journal(rig):
    """What a journal keyed by (boot, seq) keeps: each event once, in order."""
    seen = {}
    out = []
    for (b, s, e) in rig.delivered:
        if (b, s) not in seen:
            seen[(b, s)] = 1
            out.append(e["spin"])
    return out


def test_session_opens_and_events_arrive_in_order():
    r = Rig()
    r.run(1200)
    assert r.host.in_session and r.dev.in_session
    for e in _events(8):
        r.dev.emit(e)
    r.run(1000)
    assert _spins(r) == list(range(8))
    assert r.dev.outbox_len() == 0
    assert not r.kinds("reject")


def test_statuses_pass_and_are_not_queued():
    r = Rig()
    r.run(1200)
    r.dev.emit({"ev": "status", "t": 1, "state": "idle", "spin": 3})
    r.run(50)
    st = r.kinds("status")
    assert st and st[-1]["status"]["spin"] == 3
    assert r.dev.outbox_len() == 0


def test_a_status_the_link_cannot_pack_goes_out_as_unknown_and_the_wheel_runs_on():
    r = Rig()
    r.run(1200)
    r.dev.emit({"ev": "status", "t": 1, "state": "dancing", "spin": 3})
    r.run(50)
    assert r.kinds("status")[-1]["status"]["state"] == "unknown"
    r.dev.emit({"ev": "status", "t": 2, "state": "idle", "spin": 4, "sensors": {"Z": "ok", "VOID": "ok"}})
    r.run(50)
    last = r.kinds("status")[-1]["status"]
    assert last["spin"] == 4 and last["sensors"] == {"Z": "ok", "VOID": "ok"}
    assert not r.kinds("reject") and r.host.sessions == 1


def test_a_silent_controller_still_gets_a_heartbeat():
    r = Rig()
    r.run(1200)
    before = len(r.kinds("status"))
    r.run(5000)                           # no controller status at all for 5 s
    assert len(r.kinds("status")) >= before + 4
    assert r.host.sessions == 1           # the host never had to re-open the session


def test_events_before_any_host_wait_in_the_outbox():
    r = Rig()
    for e in _events(5):
        r.dev.emit(e)
    assert r.dev.outbox_len() == 5
    r.run(1500)
    assert _spins(r) == [0, 1, 2, 3, 4]


def test_the_controller_is_told_its_results_are_durable_once_the_host_acknowledged_them_all():
    # the controller holds a result in RAM until then (its flash written once a coup)
    r = Rig()
    r.run(1200)
    r.auto_ack = False
    r.dev.emit({"ev": "launch", "t": 0, "spin": 1})
    r.run(500)
    r.host.acknowledge(r.delivered[-1][1])
    r.run(200)
    assert r.ctl.durables == 0            # a launch acknowledged: no result to tell of
    r.dev.emit({"ev": "result", "t": 1, "spin": 1, "number": 17})
    r.dev.emit({"ev": "result", "t": 2, "spin": 2, "number": 4})
    r.run(500)
    assert [e["spin"] for (_b, _s, e) in r.delivered[-2:]] == [1, 2]
    r.host.acknowledge(r.delivered[-2][1])
    r.run(200)
    assert r.ctl.durables == 0            # spin 2's result still in the outbox
    r.host.acknowledge(r.delivered[-1][1])
    r.run(200)
    assert r.ctl.durables == 1 and r.dev.outbox_len() == 0


def test_a_void_is_durable_like_a_result_once_the_host_acknowledged_it():
    # the controller holds a void after the launch in RAM too, until the host's journal has it
    r = Rig()
    r.run(1200)
    r.auto_ack = False
    r.dev.emit({"ev": "void", "t": 1, "spin": 1, "reason": "few_laps", "detail": ""})
    r.dev.emit({"ev": "result", "t": 2, "spin": 2, "number": 4})
    r.run(500)
    r.host.acknowledge(r.delivered[-1][1])
    r.run(200)
    assert r.ctl.durables == 1 and r.dev.outbox_len() == 0
    r.dev.emit({"ev": "void", "t": 3, "spin": 3, "reason": "few_laps", "detail": ""})
    r.run(500)
    assert r.ctl.durables == 1            # not yet acknowledged
    r.host.acknowledge(r.delivered[-1][1])
    r.run(200)
    assert r.ctl.durables == 2


def test_cable_pulled_mid_stream_loses_nothing_and_duplicates_nothing():
    r = Rig()
    r.run(1200)
    for e in _events(3):
        r.dev.emit(e)
    r.wire.cut = True
    for e in _events(4, start=3):
        r.dev.emit(e)
    r.run(5000)                       # long enough for the host to give the session up
    assert _spins(r) == [0, 1, 2]
    r.wire.cut = False
    r.run(3000)
    assert _journal(r) == list(range(7))   # acks of 0..2 were lost with the cable: sent again
    assert r.dev.outbox_len() == 0


def test_host_restart_gets_unacked_events_again_and_nothing_else():
    r = Rig()
    r.run(1200)
    r.auto_ack = False                # the host dies before making these durable
    for e in _events(3):
        r.dev.emit(e)
    r.run(100)
    assert len(r.delivered) == 3
    r.delivered = []
    r.auto_ack = True
    r.new_host(seed=77)               # a new daemon process: new nonce, nothing in memory
    r.run(2000)
    assert _spins(r) == [0, 1, 2]     # delivered again: the journal dedups by (boot, seq)
    assert [s for (_b, s, _e) in r.delivered] == [1, 2, 3]


def test_garbage_and_flipped_bits_on_the_line_are_refused_and_recovered():
    r = Rig()
    r.run(1200)
    state = {"n": 0}

    def tamper(data):
        state["n"] += 1
        if state["n"] % 3 == 0:
            b = bytearray(data)
            b[len(b) // 2] ^= 0x10
            return b"\x13\x37garbage" + bytes(b)
        return data

    r.wire.tamper = tamper
    for e in _events(10):
        r.dev.emit(e)
        r.run(50)
    r.run(1500)
    r.wire.tamper = None
    r.run(1000)
    assert _spins(r) == list(range(10))
    assert r.kinds("reject")


def test_forged_event_is_refused():
    r = Rig()
    r.run(1200)
    forged = fr.build(Hmac(b"not the wheel key, not the wheel"), fr.EVENT, r.host.expected, 0,
                      b'{"ev": "result", "spin": 9, "number": 0}', b"\x00" * 8, b"\x00" * 8)
    recs = r.host.feed(forged)
    assert [x["kind"] for x in recs] == ["reject"] and recs[0]["reason"] == "mac"
    assert r.delivered == []


def test_an_event_the_host_could_not_store_comes_again():
    r = Rig()
    r.run(1200)
    r.auto_ack = False
    state = {"fail": True}
    got = []
    orig = r.host.feed

    def feed(data):
        out = []
        for rec in orig(data):
            if rec["kind"] == "event":
                if state["fail"] and rec["seq"] == 2:
                    state["fail"] = False
                    r.host.rewind(2)          # the journal refused it: nothing from 2 on is taken
                    out.append({"kind": "dropped"})
                    continue
                if rec["seq"] != len(got) + 1:
                    continue                  # what came after the failure in the same batch
                got.append(rec["seq"])
                r.host.acknowledge(rec["seq"])
            out.append(rec)
        return out

    r.host.feed = feed
    for e in _events(4):
        r.dev.emit(e)
        r.run(50)
    r.run(2000)
    assert got == [1, 2, 3, 4]
    assert r.dev.outbox_len() == 0


def test_a_boot_event_carries_the_games_kept_in_flash():
    r = Rig()
    boot = {"ev": "boot", "t": 0, "spin": 1, "interrupted": None}
    r.dev.emit(boot)
    r.dev.emit({"ev": "launch", "t": 5, "spin": 2})
    r.run(1200)
    got = [e for (_b, _s, e) in r.delivered]
    assert got[0]["ev"] == "boot" and got[0]["history"] == [{"spin": 1, "number": 17}]
    assert "history" not in got[1]
    assert "history" not in boot                  # the controller's own dict is left alone


def test_a_history_too_long_for_a_frame_is_sent_as_null_not_cut():
    r = Rig()
    r.ctl.games = [{"spin": i, "number": 1, "pad": "x" * 200} for i in range(10)]
    r.dev.emit({"ev": "boot", "t": 0, "spin": 10, "interrupted": None})
    r.run(1200)
    assert r.delivered[0][2]["history"] is None


def test_an_event_too_long_for_a_frame_keeps_its_number_and_says_it_was_cut():
    r = Rig()
    r.dev.emit({"ev": "result", "t": 1, "spin": 4, "number": 26, "sightings": [[1, 2, 3]] * 200})
    r.run(1200)
    ev = r.delivered[0][2]
    assert ev["number"] == 26 and ev["spin"] == 4 and ev["truncated"] > 1536 and "sightings" not in ev
