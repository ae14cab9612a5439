"""A settlement does not rewrite the rows of the bets it settles (journal schema 4): its row is
`pending` and every reader says `settled` for the bets still `locked` to its spin in their rows,
until the next change to the locked bets writes `settled` into them. Money once, statuses right
for every reader, a restart in between, a spin number used again, a journal of schema 3."""

import json

import pytest

from host_tools.table.game.ledger import Ledger
from host_tools.table.journal.store import Journal
from host_tools.table.game.table import Refused, Table
from host_tools.sim.tablewheel import Wheel

from test_daemon_compiled import _bets, _place_all, _same_layout, _table


def _raw(t, spin):
    return {r["status"] for r in t.j.query("SELECT status FROM bets WHERE spin=?", (spin,))}


def _pending(t):
    return [r["spin"] for r in t.j.query("SELECT spin FROM settlements WHERE pending=1")]


def _view(t, spin):
    return {r["status"] for r in t.j.query("SELECT status FROM bets_now WHERE spin=?", (spin,))}


def test_a_settled_spins_bets_read_settled_everywhere_though_their_rows_still_say_locked(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    ids = _place_all(t, _bets(60, 3))
    w.spin(1, 17)
    assert _raw(t, 1) == {"locked"} and _pending(t) == [1]          # no row rewritten by the settlement
    assert _view(t, 1) == {"settled"}
    assert {t.bet(bid)["status"] for bid in ids} == {"settled"}
    assert sorted(b["id"] for b in t.bets(status="settled", limit=1000)) == ids
    assert t.bets(status="locked") == [] and t.bets(status="open") == []
    assert all(b["result"]["id"] == b["id"] for b in t.bets(spin=1, limit=1000))
    st = t.state()
    assert st["bets_on_table"] == 0 and st["stakes_on_table"] == 0
    with pytest.raises(Refused, match="is settled"):
        t.cancel(ids[0])
    assert len(t.tapis) == 0
    _same_layout(t)                                                   # the journal's layout is empty too

    again = Table(t.j, "T1")                                          # a restart before the next call
    assert len(again.tapis) == 0 and again.bet(ids[0])["status"] == "settled"


def test_the_next_call_writes_settled_into_the_rows_before_it_locks_its_own_bets(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    _place_all(t, _bets(20, 4))
    w.spin(1, 5)
    mine = _place_all(t, _bets(10, 5))
    w.send({"ev": "launch", "t": 1, "spin": 2})
    w.send({"ev": "rnvp", "t": 2, "spin": 2})
    assert _raw(t, 1) == {"settled"} and _pending(t) == []
    assert _raw(t, 2) == {"locked"} and _view(t, 2) == {"locked"}
    assert {t.bet(bid)["status"] for bid in mine} == {"locked"}
    assert sorted(b["id"] for b in t.bets(status="locked")) == mine
    assert t.state()["bets_on_table"] == 10
    w.send({"ev": "result", "t": 3, "spin": 2, "number": 5})
    assert _pending(t) == [2] and {t.bet(bid)["status"] for bid in mine} == {"settled"}
    assert len(t.j.query("SELECT * FROM settlements")) == 2


def test_a_void_after_a_settlement_unlocks_only_the_bets_still_in_play(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    first = _place_all(t, _bets(10, 6))
    w.spin(1, 8)
    second = _place_all(t, _bets(5, 7))
    w.send({"ev": "launch", "t": 1, "spin": 2})
    w.send({"ev": "rnvp", "t": 2, "spin": 2})
    w.send({"ev": "void", "t": 3, "spin": 2, "reason": "no_rest"})
    assert {t.bet(bid)["status"] for bid in first} == {"settled"}
    assert {t.bet(bid)["status"] for bid in second} == {"open"}
    assert sorted(t.tapis.bets) == second


def test_a_spin_number_used_again_while_its_settlement_is_pending_holds_the_new_bets_only(tmp_path):
    """The wheel's flash record was replaced: its counter goes back and spin 1 comes again before
    anything else touched the locked bets. The old bets stay settled once; the new ones are held."""
    t = Table(Journal(tmp_path / "j.sqlite"), "T1")
    t.set_open(True)
    w = Wheel(t)
    w.send({"ev": "boot", "t": 0, "reset_cause": "power", "spin": 0, "interrupted": None, "history": []})
    old = _place_all(t, _bets(8, 8))
    w.spin(1, 9)
    assert _pending(t) == [1]
    w.reboot("b1", 0, [])
    new = [t.place({"player": "ana", "type": "plein", "numbers": [9], "stake": 1000})["id"]]
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    assert {t.bet(bid)["status"] for bid in old} == {"settled"} and t.bet(new[0])["status"] == "locked"
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 9})
    assert t.bet(new[0])["status"] == "held" and "went back" in t.bet(new[0])["reason"]
    assert {t.bet(bid)["status"] for bid in old} == {"settled"}
    assert [r["spin"] for r in t.j.query("SELECT spin FROM settlements")] == [1]
    assert [r["id"] for r in t.recall(1)["settlement"]["results"]] == old      # paid once, to the old bets
    assert t.state()["bets_on_table"] == 0 and t.state()["bets_held"] == 1


def _as_schema_3(path):
    """The journal as a daemon of schema 3 leaves it: `settlements` without `pending`, result
    rows with their type and label written out, no `result_labels`."""
    j = Journal(path)
    with j.tx() as db:
        for r in db.execute("SELECT wheel, spin FROM spin_results").fetchall():
            ledger = Ledger(j, r["wheel"])          # (format 5's columns read back as rows of format 3)
            rows = ledger._packed(r["spin"])
            head = json.loads(db.execute("SELECT result FROM settlements WHERE wheel=? AND spin=?", (r["wheel"], r["spin"]))
                              .fetchone()[0])
            if head.pop("payments_in", None):
                pays = ledger.settlement(r["spin"])["payment_order"]
                head["payments"] = [[p["id"], p["kind"], p["combination"], p["stake"], p["won"]] for p in pays]
                db.execute("UPDATE settlements SET result=? WHERE wheel=? AND spin=?",
                           (json.dumps(head, sort_keys=True), r["wheel"], r["spin"]))
            db.execute("UPDATE spin_results SET rows=? WHERE wheel=? AND spin=?",
                       (json.dumps(rows, ensure_ascii=False), r["wheel"], r["spin"]))
        db.execute("DROP VIEW bets_now")
        db.execute("DROP VIEW all_results")
        db.execute("ALTER TABLE spin_results DROP COLUMN data")
        db.execute("DROP TABLE result_mores")
        db.execute("DROP INDEX settlements_pending")
        db.execute("ALTER TABLE settlements DROP COLUMN pending")
        db.execute("ALTER TABLE spin_results DROP COLUMN format")
        db.execute("DROP TABLE result_labels")
        db.execute("UPDATE meta SET value='3' WHERE key='schema'")
    j.close()


def test_a_journal_of_schema_3_with_a_spin_in_play_migrates_to_4_and_settles_it_once(tmp_path):
    path = tmp_path / "j.sqlite"
    t = _table(path)
    w = Wheel(t)
    first = _place_all(t, _bets(12, 9))
    w.spin(1, 0)
    second = _place_all(t, _bets(12, 10))
    w.send({"ev": "launch", "t": 1, "spin": 2})
    w.send({"ev": "rnvp", "t": 2, "spin": 2})            # spin 1's rows say settled, spin 2's locked
    state = t.state()
    spin1 = t.recall(1)["settlement"]
    view1 = t.j.query("SELECT * FROM all_results WHERE spin=1 ORDER BY pos")
    t.j.close()
    _as_schema_3(path)

    again = Table(Journal(path), "T1")
    assert again.j.one("SELECT value FROM meta WHERE key='schema'")["value"] == "5"
    assert [r["pending"] for r in again.j.query("SELECT pending FROM settlements")] == [0]
    assert sorted(again.tapis.bets) == second and again.state()["prisoners"] == state["prisoners"]
    assert {again.bet(bid)["status"] for bid in first} == {"settled"}
    assert again.recall(1)["settlement"] == spin1                   # schema 3's rows read back as written
    assert again.j.query("SELECT * FROM all_results WHERE spin=1 ORDER BY pos") == view1
    assert all(again.bet(bid)["result"] == r for bid, r in zip(first, spin1["results"]))
    w2 = Wheel(again)
    w2.seq = w.seq
    w2.send({"ev": "result", "t": 3, "spin": 2, "number": 14})
    assert {again.bet(bid)["status"] for bid in second} == {"settled"} and _pending(again) == [2]
    results2 = again.recall(2)["settlement"]["results"]
    assert sorted(r["id"] for r in results2 if not r.get("carried")) == second
    assert again.j.one("SELECT format FROM spin_results WHERE spin=2")["format"] == 5
    view2 = again.j.query("SELECT bet, type, label, staked, won FROM all_results WHERE spin=2 ORDER BY pos")
    assert view2 == [{"bet": r["id"], "type": r["type"], "label": r["label"], "staked": r["staked"], "won": r["won"]}
                     for r in results2]
    assert Journal(path).one("SELECT value FROM meta WHERE key='schema'")["value"] == "5"   # opens again as it is


def test_a_journal_of_a_later_schema_is_refused(tmp_path):
    j = Journal(tmp_path / "j.sqlite")
    with j.tx() as db:
        db.execute("UPDATE meta SET value='6' WHERE key='schema'")
    j.close()
    with pytest.raises(RuntimeError, match="schema 6"):
        Journal(tmp_path / "j.sqlite")


def test_the_settlement_event_is_compact_and_points_at_the_journals_results(tmp_path):
    """The live stream's settlement says the number, the totals and the counts; the per-bet
    results are read from the journal (GET /spins/{spin}), not copied into the event."""
    events = []
    t = Table(Journal(tmp_path / "j.sqlite"), "T1", publish=lambda kind, body: events.append((kind, body)))
    t.set_open(True)
    w = Wheel(t)
    ids = _place_all(t, _bets(2000, 11))
    w.spin(1, 23)
    body, = [b for k, b in events if k == "settlement"]
    results = t.recall(1)["settlement"]["results"]
    assert body["number"] == 23 and body["spin"] == 1
    assert body["totals"] == t.recall(1)["settlement"]["totals"]
    assert body["bets"] == len(results) == len(ids)
    assert body["won_bets"] == sum(r["outcome"] == "won" for r in results)
    assert body["lost_bets"] == sum(r["outcome"] == "lost" for r in results)
    assert body["results_in"] == {"spin_results": 1, "api": "/spins/1"}
    assert "results" not in body and "payment_order" not in body
    assert len(json.dumps(body)) < 1000


def test_a_settlement_that_rolls_back_takes_its_new_labels_with_it_and_settles_once_when_sent_again(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    ids = _place_all(t, _bets(50, 12))
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    settle = t.ledger.settle

    def fails(*args):
        settle(*args)
        raise OSError("disk full")          # after the rows and the labels were written

    t.ledger.settle = fails
    with pytest.raises(OSError):
        w.send({"ev": "result", "t": 3, "spin": 1, "number": 4})
    assert t.ledger.labels == {} and t.j.query("SELECT * FROM result_labels") == []
    assert t.j.query("SELECT * FROM settlements") == [] and len(t.tapis) == 50
    t.ledger.settle = settle
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 4}, seq=w.seq)      # the wheel sends it again
    results = t.recall(1)["settlement"]["results"]
    assert [r["id"] for r in results] == ids and {t.bet(b)["status"] for b in ids} == {"settled"}
    assert len(t.ledger.labels) == t.j.one("SELECT COUNT(*) AS n FROM result_labels")["n"] > 0
    assert t.bets(spin=1, limit=100)[0]["result"]["label"] == results[-1]["label"]


def test_the_full_garbage_collection_runs_at_the_call_that_locks_the_bets(tmp_path):
    """Not left to start on the result's path: the table runs it once the call has locked them."""
    import gc
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    _place_all(t, _bets(20, 13))
    w.send({"ev": "launch", "t": 1, "spin": 1})
    full = []

    def seen(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(info)

    gc.callbacks.append(seen)
    try:
        w.send({"ev": "rnvp", "t": 2, "spin": 1})
    finally:
        gc.callbacks.remove(seen)
    assert len(full) >= 1
