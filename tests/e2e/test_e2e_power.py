"""End to end over a pty: the simulated Pico loses power (its link state and outbox gone, its
controller rebooted from the same flash store) around a result; the daemon settles every result
exactly once, from the event or from the games the wheel kept in flash, and bets locked to a spin
the power cut voids play on the relaunch."""

import json
import threading
import time

import pytest

from e2ekit import Rig, check_settled_exactly_once

pytestmark = pytest.mark.slow


def _bettor(rig, stop):
    """One even-chance and one plein whenever the table takes bets and has none."""
    while not stop.is_set():
        try:
            st, s = rig.api("GET", "/state", timeout=1)
            if st == 200 and s["table"]["phase"] == "betting" and s["table"]["bets_on_table"] == 0:
                rig.api("POST", "/bets", {"player": "ana", "type": "rouge", "stake": 1000}, timeout=2)
                rig.api("POST", "/bets", {"player": "bo", "type": "plein", "numbers": [17], "stake": 500}, timeout=2)
        except Exception:
            pass
        time.sleep(0.03)


def _bets_on(rig):
    """The croupier launches once the players' bets are on the table (a condition, not a race
    between the bettor and the croupier on a busy machine)."""
    try:
        st, s = rig.api("GET", "/state", timeout=1)
        return st == 200 and s["table"]["bets_on_table"] > 0
    except Exception:
        return False


def _play(rig, spins, cuts):
    rig.board.cuts = cuts
    rig.board.need_host = True      # after a cut, the next spin waits for the daemon's new session
    rig.board.launch_when = lambda: _bets_on(rig)
    stop = threading.Event()
    t = threading.Thread(target=_bettor, args=(rig, stop), daemon=True)
    rig.start_daemon()
    rig.play(spins)                 # the croupier launches once the daemon has opened the table
    rig.wait_link()
    t.start()
    rig.finish(timeout=60)
    stop.set()
    t.join(5)
    assert rig.board.power_cuts == len(cuts)


def test_a_result_lost_with_the_power_is_settled_once_and_a_delivered_one_not_twice(tmp_path):
    rig = Rig(tmp_path, seed=21, speed=60.0, pause=0.4, silence_ms=2500)
    try:
        _play(rig, 4, {2: "result_unsent", 3: "result_unacked"})
        rows = check_settled_exactly_once(rig)
        assert [s for s, _ in rows] == [1, 2, 3, 4]
        c = rig.db()
        how = {r["spin"]: json.loads(r["result"]).get("recovered") for r in c.execute("SELECT spin, result FROM settlements")}
        assert how[2] and how[2]["from"] == "history"           # its result event never left the wheel
        assert how[1] is None and how[3] is None and how[4] is None
        locked2 = c.execute("SELECT COUNT(*) FROM bets_now WHERE spin=2 AND status='settled'").fetchone()[0]
        assert locked2 >= 1                                     # bets were on spin 2 and were paid from it
        assert c.execute("SELECT COUNT(*) FROM bets_now WHERE status IN ('held', 'locked')").fetchone()[0] == 0
        boots = {r[0] for r in c.execute("SELECT boot FROM events")}
        assert len(boots) == 3                                  # two power cuts, three boots of the wheel
        st, rec = rig.api("GET", "/spins/2")
        assert st == 200 and rec["settlement"]["number"] == dict(rows)[2]
        assert any(e["event"]["ev"] == "boot" and e["event"]["history"] for e in rec["events"])
    finally:
        rig.stop_daemon()


def test_a_power_cut_mid_spin_voids_it_and_its_bets_play_on_the_relaunch(tmp_path):
    rig = Rig(tmp_path, seed=22, speed=60.0, pause=0.4, silence_ms=2500)
    try:
        _play(rig, 3, {2: "after_rnvp"})
        rows = check_settled_exactly_once(rig)
        assert [s for s, _ in rows] == [1, 3]
        c = rig.db()
        voids = [json.loads(r[0]) for r in c.execute("SELECT body FROM events WHERE ev='void'")]
        assert [(v["spin"], v["reason"]) for v in voids] == [(2, "restart")]
        # the bets locked to spin 2 were released by the void and settled on spin 3
        st, rec = rig.api("GET", "/spins/3")
        ids = {b["id"] for b in rec["bets"]}
        assert ids and c.execute("SELECT COUNT(*) FROM bets WHERE spin=2").fetchone()[0] == 0
        said = [r[0] for r in c.execute("SELECT text FROM announcements WHERE spin=2")]
        assert any(s.startswith("coup nul : cylindre redémarré pendant le coup") for s in said)
        first = min(ids)
        placed = c.execute("SELECT at FROM bets WHERE id=?", (first,)).fetchone()[0]
        rnvp2 = c.execute("SELECT at FROM events WHERE ev='rnvp' AND spin=2").fetchone()[0]
        assert placed < rnvp2                                   # it was on the layout for spin 2
    finally:
        rig.stop_daemon()


def test_power_cut_arguments_are_checked():
    from host_tools.sim.ptywheel import parse_cuts
    assert parse_cuts(["2:result_unsent", "5:after_rnvp"]) == {2: "result_unsent", 5: "after_rnvp"}
    for bad in (["2"], ["x:after_rnvp"], ["3:later"], ["-1:after_rnvp"]):
        with pytest.raises(ValueError) as e:
            parse_cuts(bad)
        assert "SPIN:WHEN" in str(e.value)
