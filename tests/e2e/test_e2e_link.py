"""End to end over a real pseudo-terminal: the firmware's code on the simulated board, the daemon
in its own process, bets through the API; then faults on the line and a daemon killed at random."""

import random
import threading
import time

import pytest

from e2ekit import Rig, check_settled_exactly_once

pytestmark = pytest.mark.slow


def _bettor(rig, stop, placed):
    """A player who bets whenever the table takes bets (and tries late bets too)."""
    rng = random.Random(5)
    while not stop.is_set():
        try:
            st, s = rig.api("GET", "/state", timeout=1)
            if st == 200 and s["table"]["phase"] == "betting" and s["table"]["bets_on_table"] < 3:
                for body in ({"player": "ana", "type": "plein", "numbers": [rng.randrange(37)], "stake": 1000},
                             {"player": "bo", "type": rng.choice(["rouge", "noir", "pair"]), "stake": 2000},
                             {"player": "cy", "type": "voisins", "unit": 100}):
                    st, b = rig.api("POST", "/bets", body, timeout=2)
                    placed.append(st)
        except Exception:       # the daemon may be killed mid-request: try again later
            pass
        time.sleep(0.05)


def _run(rig, spins, during=None):
    stop = threading.Event()
    placed = []
    t = threading.Thread(target=_bettor, args=(rig, stop, placed), daemon=True)
    rig.start_daemon()
    rig.play(spins)         # the board answers the link while it plays (events wait in its outbox)
    rig.wait_link()
    t.start()
    if during:
        during()
    rig.finish()
    stop.set()
    t.join(5)
    return placed


def test_spins_over_a_pty_are_settled_once_with_the_wheels_number(tmp_path):
    rig = Rig(tmp_path, seed=3)
    try:
        placed = _run(rig, 5)
        rows = check_settled_exactly_once(rig)
        assert len(rows) == 5 and 201 in placed
        st, state = rig.api("GET", "/state")
        assert state["link"]["counts"]["rejects"] == 0
        c = rig.db()
        settled = c.execute("SELECT COUNT(*) FROM bets_now WHERE status='settled'").fetchone()[0]
        assert settled >= 3
        st, rec = rig.api("GET", "/spins/%d" % rows[-1][0])
        assert st == 200 and rec["settlement"]["number"] == rows[-1][1]
        assert any(e["event"]["ev"] == "result" and e["event"]["sightings"] for e in rec["events"])
    finally:
        rig.stop_daemon()


def test_garbage_flipped_bits_forgery_replay_and_a_pulled_cable(tmp_path):
    rig = Rig(tmp_path, seed=4)
    line = rig.line

    def faults():
        time.sleep(1.0)
        line.flip_rate = 0.05
        line.garbage_rate = 0.05
        time.sleep(2.0)
        line.flip_rate = line.garbage_rate = 0.0
        with line.lock:
            line.inject.append(b"\x00" + rig.forged_result(spin=99, number=0))
            line.inject.extend(line.captured[5:15])      # frames of this session, replayed
        time.sleep(0.5)
        line.cut = True                                   # the cable is pulled mid-game ...
        time.sleep(rig.board.pause + 4.0)                 # ... long enough for the host to give up the session
        line.cut = False                                  # ... and put back

    try:
        _run(rig, 6, during=faults)
        check_settled_exactly_once(rig)
        c = rig.db()
        kinds = {(r[0], r[1]) for r in c.execute("SELECT kind, COALESCE(reason, '') FROM frames")}
        reasons = {r for k, r in kinds if k == "reject"}
        assert any(r.startswith("mac") or "not authentic" in r for r in reasons), kinds
        assert any(r.startswith("crc") or r.startswith("cobs") or r.startswith("short") for r in reasons), kinds
        assert 99 not in [r[0] for r in c.execute("SELECT spin FROM settlements")]
        st, state = rig.api("GET", "/state")
        assert state["link"]["sessions"] >= 2               # the pulled cable cost a session, nothing else
    finally:
        rig.stop_daemon()


def test_daemon_killed_at_random_instants_settles_every_result_once(tmp_path):
    rig = Rig(tmp_path, seed=5, speed=80.0, pause=0.2)
    rng = random.Random(11)
    kills = []

    def killer():
        while rig.playing():
            time.sleep(rng.uniform(0.2, 1.0))
            rig.kill_daemon()
            kills.append(time.monotonic())
            time.sleep(rng.uniform(0.0, 0.3))
            rig.start_daemon()

    try:
        _run(rig, 8, during=killer)
        rows = check_settled_exactly_once(rig)
        assert len(rows) == 8 and len(kills) >= 3
    finally:
        rig.stop_daemon()


def test_host_to_wheel_commands_through_the_api(tmp_path):
    rig = Rig(tmp_path, seed=6, speed=60.0, pause=0.2)
    try:
        rig.start_daemon()
        rig.play(2)
        rig.wait_link()
        st, s = rig.api("GET", "/wheel/settings")
        assert st == 200 and s["min_laps"] == 4
        st, err = rig.api("PUT", "/wheel/settings", {"name": "min_laps", "value": 99})
        assert st == 400 and "min_laps" in err["message"]             # the controller's safe bounds, checked first
        assert rig.board.replay.ctl.s["min_laps"] == 4
        st, req = rig.api("PUT", "/wheel/settings", {"name": "rnvp_lead_laps_x10", "value": 25})
        assert st == 202 and req["state"] == "pending"                 # a regulatory setting: a second person approves
        from host_tools.table.api.auth import issue
        mine, rig.token = rig.token, issue(rig.journal, "e2e-second", "admin")
        try:
            # settings change between spins only: while the wheel plays its two spins an approval
            # may be refused (the request is then failed, and asked again); once they are played
            # the wheel is still, and it must be applied. A deadline, not a count: a busy machine
            # plays slowly.
            end = time.monotonic() + 90
            while time.monotonic() < end:
                st, s = rig.api("POST", f"/wheel/settings/requests/{req['request']}/approve")
                if st == 200:
                    break
                assert st in (409, 502, 504), (st, s)     # not_pending; the wheel refused; busy
                if s.get("error") == "not_pending":         # asked again by its first requester
                    second, rig.token = rig.token, mine
                    req = rig.api("PUT", "/wheel/settings", {"name": "rnvp_lead_laps_x10", "value": 25})[1]
                    rig.token = second
                time.sleep(0.1)
        finally:
            rig.token = mine
        assert st == 200 and s["wheel"]["rnvp_lead_laps_x10"] == 25, (st, s)
        st, t = rig.api("POST", "/wheel/time")
        assert st == 200 and rig.board.link.wall_offset_ms is not None
        st, ws = rig.api("GET", "/wheel/status")
        assert st == 200 and ws["link"]["wheel"] == "T1"
        rig.finish()
        st, hist = rig.api("GET", "/wheel/history")
        assert st == 200 and [(g["spin"], g["number"]) for g in hist] == rig.board_results()
        st, r = rig.api("POST", "/table/close")
        assert st == 200 and r["wheel_confirmed"] and not rig.board.replay.ctl.table_open
        assert r["table"]["phase"] == "closed"
        st, e = rig.api("POST", "/bets", {"player": "ana", "type": "rouge", "stake": 1000})
        assert st == 409 and e["error"] == "table_closed"
        st, r = rig.api("POST", "/table/open")
        assert st == 200 and rig.board.replay.ctl.table_open and r["table"]["phase"] == "betting"
    finally:
        rig.stop_daemon()
