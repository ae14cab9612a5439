"""The wheel's clock on the link and the one-handshake rule, both ends together: STATUS frames
carry the link's clock, the last event number emitted and the echo of the host's ACK stamp; a
session's WELCOME is taken once (a replay would rewind it)."""

from linkkit import Rig


def _capture(rig):
    got = []

    def keep(d):
        got.append(d)
        return d

    rig.wire.tamper = keep
    return got


def test_a_replayed_welcome_never_rewinds_the_session():
    r = Rig()
    got = _capture(r)
    r.run(1200)
    r.wire.tamper = None
    assert r.host.sessions == 1
    for i in range(3):
        r.dev.emit({"ev": "result", "t": i, "spin": i, "number": 5})
    r.run(500)
    assert r.host.expected == 4
    recs = []
    for d in got:                        # the wheel's WELCOME (and statuses) played again
        recs += r.host.feed(d)
    welcomes = [x for x in recs if x.get("ftype") == "W"]
    assert welcomes and all(x["kind"] == "stale" and x["detail"] == "welcome replayed" for x in welcomes)
    assert r.host.replays == len(welcomes)
    assert r.host.sessions == 1 and r.host.expected == 4      # nothing rewound
    assert not [x for x in recs if x["kind"] == "welcome"]


def test_a_real_restart_is_a_new_handshake_with_fresh_nonces():
    r = Rig()
    r.run(1200)
    r.new_host(seed=9)                   # the host process restarted: a new HELLO, a new session
    r.run(1500)
    assert r.host.sessions == 1 and r.host.in_session and not r.host.replays


def test_statuses_carry_the_wheel_clock_what_was_emitted_and_the_echo():
    r = Rig()
    r.run(1200)
    r.dev.emit({"ev": "launch", "t": 1, "spin": 1})
    r.dev.emit({"ev": "status", "t": 2, "state": "ball_in_rim", "spin": 1})
    r.run(1100)
    st = [x["status"] for x in r.kinds("status")]
    last = st[-1]
    assert last["state"] == "ball_in_rim" and last["emitted"] == 1
    assert 0 <= r.clock.ms - last["at_ms"] <= 550       # repeated at least every 500 ms
    h, got = last["echo"]                               # the host's ACK stamp, and when it came
    assert h <= got <= r.clock.ms                       # the rig's ends share one clock
    ev = r.delivered[-1][2]
    assert ev["ev"] == "launch" and isinstance(ev["at_ms"], int)


def test_a_silent_controller_is_repeated_every_half_second():
    r = Rig()
    r.run(1200)
    n = len(r.kinds("status"))
    r.run(3000)
    assert len(r.kinds("status")) >= n + 5
