"""The daemon's HTTP fronts (`fronts = N`: daemon/fronts.py, api/front.py, api/bridge.py): HTTP parsed
in processes of their own, every request answered by the daemon's app as without them — money,
tokens, roles, audit, the Guard, pages and the live stream — and a front that dies started again.
Real daemons on a simulated wheel (the stadium bench's rig), real sockets."""

import http.client
import json
import os
import random
import signal
import sqlite3
import time

import pytest
from hypothesis import given, settings, strategies as st

from host_tools.bench.procstat import children
from host_tools.bench.stadium import slip_of
from host_tools.bench.stadiumrig import Rig
from host_tools.table.api import bridge as B


# -- the frames -------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(frames=st.lists(st.tuples(st.dictionaries(st.text(max_size=5), st.integers(-2 ** 63, 2 ** 63 - 1) | st.text(max_size=20), max_size=4),
                                 st.binary(max_size=300)), max_size=6),
       cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=8))
def test_frames_come_out_whole_and_in_order_whatever_the_cuts(frames, cuts):
    data = b"".join(B.frame(h, b) for h, b in frames)
    f, got, at = B.Frames(), [], 0
    for c in sorted(set(cuts)) + [len(data)]:
        got += f.feed(data[at:c])
        at = max(at, c)
    assert got == frames and not f.buf


def test_a_frame_no_front_sends_is_refused_not_waited_for():
    with pytest.raises(B.BridgeError):
        B.Frames().feed(b"\x7f\xff\xff\xff\x00\x00\x00\x02{}")              # 2 GB announced
    with pytest.raises(B.BridgeError):
        B.Frames().feed(B.frame({"i": 1})[:4] + b"\x00\x01\x00\x00" + b"x" * 20)  # a header longer than its frame
    with pytest.raises(B.BridgeError):
        B.Frames().feed(b"\x00\x00\x00\x07\x00\x00\x00\x03[1]")       # a header that is no object


# -- a daemon with fronts -----------------------------------------------------------------------------------
@pytest.fixture
def rig():
    r = Rig(3, 1, 1e9, 1, False, fronts=2)
    try:
        assert r.wait_open(), "the daemon with fronts did not take bets"
        yield r
    finally:
        r.stop()


def _fronts(rig):
    return [p for p in children(rig.daemon.pid) if b"host_tools.table.api.front" in _cmdline(p)]


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _ask(rig, method, path, body=None, token=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", rig.port, timeout=10)
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    if body is not None:
        h.setdefault("Content-Type", "application/json")
        body = body if isinstance(body, bytes) else json.dumps(body).encode()
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, r


def _wait(cond, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("not within %s s" % timeout)


def test_through_the_fronts_every_answer_is_the_daemons(rig):
    assert len(_fronts(rig)) == 2
    slip = slip_of(random.Random(3), "p1", 4)
    status, data, _ = _ask(rig, "POST", "/slips", slip, rig.terminals[0], {"Idempotency-Key": "k1"})
    assert status == 201, data
    first = json.loads(data)
    status, data, _ = _ask(rig, "POST", "/slips", slip, rig.terminals[0], {"Idempotency-Key": "k1"})
    assert status == 201 and json.loads(data) == first             # the retry: its first answer
    with rig.db() as db:
        assert db.execute("SELECT COUNT(*) FROM bets").fetchone()[0] == len(slip["bets"])
    # the token, the role and the audit are the daemon's
    status, data, _ = _ask(rig, "POST", "/slips", slip, "not-a-token")
    assert status == 401 and json.loads(data)["error"] == "unauthorized"
    status, data, _ = _ask(rig, "POST", "/slips", slip, rig.display, {"Idempotency-Key": "k2"})
    assert status == 403, data
    with rig.db() as db:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT who, role, done FROM audit WHERE who='board'").fetchall()
    assert rows and all(r["role"] == "display" and r["done"] == 0 for r in rows)
    # the Guard, in the front
    status, data, _ = _ask(rig, "GET", "/state", token=rig.display, headers={"Host": "evil.example"})
    assert status == 421 and json.loads(data)["error"] == "misdirected"
    status, data, _ = _ask(rig, "POST", "/slips", b"not json", rig.terminals[0], {"Content-Type": "text/plain"})
    assert status == 415
    status, data, _ = _ask(rig, "POST", "/slips", b"{" * 5000, rig.terminals[0])
    assert status == 400
    # reads and pages
    status, data, r = _ask(rig, "GET", "/state", token=rig.display)
    assert status == 200 and json.loads(data)["table"]["accepting_bets"] is True
    status, data, r = _ask(rig, "GET", "/")
    assert status == 200 and r.getheader("content-type").startswith("text/html")


def test_the_throttle_counts_the_clients_address_through_the_fronts(rig):
    """Guessed tokens cost the address the front saw: the 11th from it is 429 (api/throttle.py)."""
    from host_tools.table.api.throttle import BURST
    codes = [_ask(rig, "GET", "/state", token=f"guess-{k}")[0] for k in range(BURST + 1)]
    assert codes[:BURST] == [401] * BURST and codes[BURST] == 429
    status, data, r = _ask(rig, "GET", "/state", token=rig.display)
    assert status == 200                            # a live token is still served
    log = (rig.work / "daemon.log").read_text()
    assert f"{BURST} unknown tokens from 127.0.0.1: its requests are refused (429)" in log   # the client's address


def test_the_live_stream_goes_through_and_stops_when_its_reader_leaves(rig):
    s = http.client.HTTPConnection("127.0.0.1", rig.port, timeout=10)
    s.request("GET", "/events", headers={"Authorization": "Bearer " + rig.croupiers[0]})
    r = s.getresponse()
    assert r.status == 200 and r.getheader("content-type").startswith("text/event-stream")
    status, data, _ = _ask(rig, "POST", "/slips", slip_of(random.Random(4), "p2", 2), rig.terminals[1],
                           {"Idempotency-Key": "s1"})
    assert status == 201
    sid = json.loads(data)["slip"]
    seen = b""
    end = time.monotonic() + 20
    while sid.encode() not in seen and time.monotonic() < end:
        seen += r.fp.readline()
    assert sid.encode() in seen, seen[-500:]
    s.close()                                        # the reader leaves: the daemon's stream ends
    status, data, _ = _ask(rig, "GET", "/state", token=rig.display)
    assert status == 200


def test_a_killed_front_is_started_again_and_the_daemons_stop_takes_them_all(rig):
    before = _fronts(rig)
    os.kill(before[0], signal.SIGKILL)
    after = _wait(lambda: (lambda f: f if len(f) == 2 and before[0] not in f else None)(_fronts(rig)))
    assert before[1] in after
    for k in range(6):                              # answered all along, by either front
        status, _, _ = _ask(rig, "POST", "/slips", slip_of(random.Random(k), "p3", 1), rig.terminals[2],
                            {"Idempotency-Key": f"r{k}"})
        assert status == 201
    log = (rig.work / "daemon.log").read_text()
    assert f"pid {before[0]}) is gone" in log and "started again" in log
    rig.daemon.send_signal(signal.SIGTERM)
    assert rig.daemon.wait(20) == 0
    _wait(lambda: not any(os.path.exists(f"/proc/{p}") and b"front" in _cmdline(p) for p in after))


def test_a_daemon_killed_outright_leaves_no_front_behind(rig):
    fronts = _fronts(rig)
    rig.daemon.kill()
    rig.daemon.wait(10)
    _wait(lambda: not any(os.path.exists(f"/proc/{p}") and b"front" in _cmdline(p) for p in fronts))


def test_a_front_dying_again_and_again_waits_longer_and_one_that_served_a_while_at_once():
    from host_tools.table.daemon.fronts import RESTART_S, STEADY_S, restart_delay
    restarts, delays = 0, []
    for _ in range(6):                          # dies before it listens, or just after
        delay, restarts = restart_delay(restarts, None if not delays else 1.0)
        delays.append(delay)
    assert delays == [RESTART_S[0], RESTART_S[1], RESTART_S[2], RESTART_S[3], RESTART_S[3], RESTART_S[3]]
    assert restart_delay(restarts, STEADY_S - 0.1) == (RESTART_S[3], restarts + 1)
    assert restart_delay(restarts, STEADY_S) == (RESTART_S[0], 1)   # a day of service, then a death


def test_fronts_out_of_range_are_refused():
    from host_tools.table import config
    with pytest.raises(config.ConfigError, match="fronts must be 0 to 16"):
        config.merge(config.defaults(), {"fronts": 17})


def test_through_the_fronts_as_without_them_request_for_request():
    """The fast path's script (tests/table/api/test_api_fastpath.py) sent to a daemon with 2 fronts
    and to one without: the same answers, and the journals hold the same bets, slips and audit rows."""
    from placementkit import SCRIPT
    pair = [Rig(1, 1, 1e9, 1, False, fronts=2), Rig(1, 1, 1e9, 1, False, fronts=0)]
    try:
        assert all(r.wait_open() for r in pair)
        for role, path, body, headers, _ in SCRIPT:
            if role in ("call", "chef"):
                continue
            got = []
            for r in pair:
                h = dict(headers)
                token = {"croupier": r.croupiers[0], "terminal": r.terminals[0], "display": r.display}.get(role)
                if role == "bad":
                    h["Authorization"] = "Bearer cyl_" + "x" * 43
                elif role == "basic":
                    h["Authorization"] = "Basic " + r.croupiers[0]
                status, data, resp = _ask(r, "POST", path, body if body != b"" else None, token, h)
                got.append((status, json.loads(data), resp.getheader("content-type")))
            assert got[0] == got[1], (role, path, body, headers)
        for sql in ("SELECT id, player, body, stake, status, slip, placed_by FROM bets ORDER BY id",
                    "SELECT id, player, body, n, stake, status, reason, idem_key, answer, placed_by FROM slips ORDER BY id",
                    "SELECT who, role, action, done FROM audit ORDER BY id"):
            rows = []
            for r in pair:
                with r.db() as db:
                    rows.append([tuple(x) for x in db.execute(sql)])
            assert rows[0] == rows[1], sql
        assert rows[0]                                  # the audit rows of the refusals are there
    finally:
        for r in pair:
            r.stop()


def test_a_token_revoked_after_it_was_cached_places_nothing_through_the_fronts(rig):
    h = {"Idempotency-Key": "v1"}
    assert _ask(rig, "POST", "/slips", slip_of(random.Random(5), "p4", 2), rig.terminals[1], h)[0] == 201
    with rig.db() as db:
        n = db.execute("SELECT COUNT(*) FROM bets").fetchone()[0]
    other = sqlite3.connect(rig.journal, isolation_level=None)     # `cylindre token revoke T001`
    other.execute("UPDATE tokens SET revoked=1 WHERE name='T001'")
    other.close()
    status, data, resp = _ask(rig, "POST", "/slips", slip_of(random.Random(6), "p4", 2), rig.terminals[1],
                              {"Idempotency-Key": "v2"})
    assert status == 401 and json.loads(data)["error"] == "unauthorized" and resp.getheader("www-authenticate") == "Bearer"
    with rig.db() as db:
        assert db.execute("SELECT COUNT(*) FROM bets").fetchone()[0] == n


def test_a_front_keeps_the_daemons_heap_policy_and_scans_its_whole_heap_when_due(monkeypatch):
    """In process, with a stand-in for the policy: the front installs it before serving and asks
    `collect_if_due` from its loop, until its daemon's end of the pair closes."""
    import socket as S
    import threading

    from host_tools.table.api import front

    installed, turns = [], []
    mine, theirs = S.socketpair()

    class Policy:
        def install(self):
            installed.append(True)
            return self

    def collect_if_due():
        turns.append(True)
        if len(turns) == 3:
            mine.close()                # the daemon gone: the front stops

    monkeypatch.setattr(front, "Heap", Policy)
    monkeypatch.setattr(front, "collect_if_due", collect_if_due)
    monkeypatch.setattr(front, "HEAP_TURN_S", 0.01)
    conf = {"bind": ["127.0.0.1", 0], "family": int(S.AF_INET), "hosts": ["127.0.0.1"], "origins": [],
            "max_body": 65536, "behind_proxy": False, "tls_cert": None, "tls_key": None, "access_log": False}
    stop = threading.Timer(10.0, mine.close)     # a front that never asks stops all the same
    stop.start()
    try:
        assert front.main(["--bridge-fd", str(theirs.detach()), "--conf", json.dumps(conf)]) == 0
    finally:
        stop.cancel()
    assert installed == [True] and len(turns) >= 3
