"""The game at the table over a real SQLite journal: betting window, poussette, void, exactly once."""

import json

import pytest

from host_tools.table.journal.store import Journal
from host_tools.table.game.table import Invalid, NotFound, Refused, Table
from host_tools.sim.tablewheel import Wheel


@pytest.fixture
def jpath(tmp_path):
    return tmp_path / "j.sqlite"


def _table(jpath):
    t = Table(Journal(jpath), "T1")
    t.set_open(True)
    return t


def test_bets_settle_once_and_late_bets_are_poussettes(jpath):
    t = _table(jpath)
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    b = t.place({"player": "ben", "type": "rouge", "stake": 2000})
    w.send({"ev": "launch", "t": 1, "spin": 1})
    c = t.place({"player": "cy", "type": "noir", "stake": 500})        # ball in rim: still accepted
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    with pytest.raises(Refused) as e:
        t.place({"player": "eve", "type": "plein", "numbers": [17], "stake": 10000})
    assert e.value.code == "poussette"
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 17})
    assert not w.send({"ev": "result", "t": 3, "spin": 1, "number": 17}, seq=3)   # a resend: nothing happens
    rows = t.j.query("SELECT * FROM settlements")
    assert len(rows) == 1 and rows[0]["number"] == 17
    assert t.bet(a["id"])["result"]["won"] == 35000
    assert t.bet(b["id"])["result"]["outcome"] == "lost"
    assert t.bet(c["id"])["result"]["won"] == 500
    refused = t.bets(status="refused")
    assert len(refused) == 1 and refused[0]["reason"] == "poussette" and refused[0]["player"] == "eve"
    assert t.state()["phase"] == "betting"
    said = [r["text"] for r in t.j.query("SELECT text FROM announcements WHERE spin=1 ORDER BY id")]
    assert said[0] == "rien ne va plus" and said[1].startswith("dix-sept") and said[-1] == "faites vos jeux"
    assert any(s.startswith("tout est payé") for s in said)


def test_a_second_result_for_a_settled_spin_is_never_paid(jpath):
    t = _table(jpath)
    w = Wheel(t)
    t.place({"player": "ana", "type": "plein", "numbers": [5], "stake": 1000})
    w.spin(1, 5)
    t.place({"player": "ana", "type": "plein", "numbers": [5], "stake": 1000})
    w.send({"ev": "result", "t": 9, "spin": 1, "number": 5})    # a new seq, same spin: refused
    assert len(t.j.query("SELECT * FROM settlements")) == 1
    assert len(t.bets(status="open")) == 1


def test_void_returns_the_stakes_to_play_on_the_relaunch(jpath):
    t = _table(jpath)
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "douzaine", "which": 1, "stake": 1000})
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    assert t.bet(a["id"])["status"] == "locked"
    w.send({"ev": "void", "t": 3, "spin": 1, "reason": "void_button", "detail": ""})
    assert t.bet(a["id"])["status"] == "open" and t.state()["phase"] == "betting"
    w.spin(2, 3)
    bet = t.bet(a["id"])
    assert bet["status"] == "settled" and bet["spin"] == 2 and bet["result"]["won"] == 2000
    assert t.j.query("SELECT spin FROM settlements") == [{"spin": 2}]


def test_a_result_for_a_voided_spin_is_an_anomaly_and_settles_nothing(jpath, caplog):
    t = _table(jpath)
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "plein", "numbers": [8], "stake": 1000})
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    w.send({"ev": "void", "t": 3, "spin": 1, "reason": "same_direction", "detail": ""})
    # the voided spin's result, with the bets open for the relaunch, then again once the relaunch
    # called rien ne va plus (its bets locked to spin 2): neither settles anything
    with caplog.at_level("ERROR", logger="cylindre.table"):
        assert w.send({"ev": "result", "t": 4, "spin": 1, "number": 8})
        assert t.bet(a["id"])["status"] == "open" and t.state()["phase"] == "betting"
        w.send({"ev": "launch", "t": 5, "spin": 2})
        w.send({"ev": "rnvp", "t": 6, "spin": 2})
        w.send({"ev": "result", "t": 7, "spin": 1, "number": 8})
    assert t.bet(a["id"])["status"] == "locked" and t.bet(a["id"])["spin"] == 2
    assert t.j.query("SELECT spin FROM settlements") == []
    anomalies = t.j.query("SELECT seq, reason FROM frames WHERE kind='anomaly' ORDER BY id")
    assert [r["seq"] for r in anomalies] == [4, 7]
    assert all("voided" in r["reason"] and "spin 1" in r["reason"] for r in anomalies)
    assert sum("anomaly" in r.getMessage() for r in caplog.records) == 2
    # the relaunch's own result settles its bets, once
    w.send({"ev": "result", "t": 8, "spin": 2, "number": 8})
    bet = t.bet(a["id"])
    assert bet["status"] == "settled" and bet["spin"] == 2 and bet["result"]["won"] == 35000
    assert t.j.query("SELECT spin, number FROM settlements") == [{"spin": 2, "number": 8}]
    # the event is journaled all the same (the evidence of spin 1)
    assert [e["event"]["ev"] for e in t.recall(1)["events"]] == ["launch", "rnvp", "void", "result", "result"]


def test_a_void_in_another_boot_does_not_refuse_a_result(jpath):
    """A wheel whose flash record was lost counts again from an old number: a void of spin 1 in
    its earlier boot says nothing of the new spin 1."""
    t = _table(jpath)
    Wheel(t, boot="b0").send({"ev": "launch", "t": 1, "spin": 1})
    Wheel(t, boot="b0").send({"ev": "void", "t": 2, "spin": 1, "reason": "void_button", "detail": ""}, seq=2)
    a = t.place({"player": "ana", "type": "rouge", "stake": 1000})
    w = Wheel(t, boot="b1")
    w.spin(1, 1)
    assert t.bet(a["id"])["status"] == "settled"
    assert t.j.query("SELECT spin FROM settlements") == [{"spin": 1}]
    assert t.j.query("SELECT id FROM frames WHERE kind='anomaly'") == []


def test_a_result_named_after_a_restart_of_a_spin_voided_in_the_boot_before_is_an_anomaly(jpath):
    """The controller holds a void after the launch in RAM until the host has it (firmware
    spin/core.py): a power cut then leaves its flash saying the spin is in progress, and after
    the reboot the ball at rest names it (`restart`). The void in the journal stands."""
    t = _table(jpath)
    w0 = Wheel(t, boot="b0")
    a = t.place({"player": "ana", "type": "plein", "numbers": [4], "stake": 1000})
    w0.send({"ev": "launch", "t": 1, "spin": 1})
    w0.send({"ev": "rnvp", "t": 2, "spin": 1}, seq=2)
    w0.send({"ev": "void", "t": 3, "spin": 1, "reason": "few_laps", "detail": ""}, seq=3)
    assert t.bet(a["id"])["status"] == "open"
    w1 = Wheel(t, boot="b1")
    w1.send({"ev": "boot", "t": 0, "spin": 1, "interrupted": 1, "reset_cause": "power", "fw": "x"})
    w1.send({"ev": "result", "t": 5, "spin": 1, "number": 4, "restart": "power"}, seq=2)
    assert t.j.query("SELECT spin FROM settlements") == []
    assert t.bet(a["id"])["status"] == "open"               # it plays on the relaunch
    anomalies = t.j.query("SELECT reason FROM frames WHERE kind='anomaly'")
    assert len(anomalies) == 1 and "voided" in anomalies[0]["reason"]
    w1.spin(2, 4)
    bet = t.bet(a["id"])
    assert bet["status"] == "settled" and bet["spin"] == 2 and bet["result"]["won"] == 35000


def test_prison_carries_across_spins_and_restarts(jpath):
    t = _table(jpath)
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "rouge", "stake": 1000})
    w.spin(1, 0)
    assert t.bet(a["id"])["result"]["outcome"] == "imprisoned"
    assert t.state()["prisoners"] == [{"id": a["id"], "chance": "rouge", "stake": 1000, "wins_needed": 1}]
    t.j.close()
    t2 = Table(Journal(jpath), "T1")           # the daemon restarts
    w2 = Wheel(t2, boot="b1")
    w2.spin(2, 1)                               # 1 is red: released
    st = t2.ledger.settlement(2)
    freed = [r for r in st["results"] if r["id"] == a["id"]]
    assert freed and freed[0]["outcome"] == "released" and freed[0]["returned"] == 1000
    assert t2.state()["prisoners"] == []


def test_partage_chosen_with_the_bet(jpath):
    t = _table(jpath)
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "pair", "stake": 1000, "zero_choice": "partage"})
    w.spin(1, 0)
    r = t.bet(a["id"])["result"]
    assert r["outcome"] == "partage" and r["returned"] == 500 and r["lost"] == 500


def test_called_bet_and_money_is_conserved(jpath):
    t = _table(jpath)
    w = Wheel(t)
    t.place({"player": "bo", "type": "voisins", "unit": 200})
    t.place({"player": "bo", "type": "tiers", "unit": 100})
    t.place({"player": "bo", "type": "orphelins", "unit": 100})
    w.spin(1, 26)
    st = t.ledger.settlement(1)
    for r in st["results"]:
        assert r["staked"] == r["returned"] + r["lost"] + r["imprisoned"]
    assert st["totals"]["won"] > 0


def test_bad_bets_are_clear_errors(jpath):
    t = _table(jpath)
    for body, word in (({"type": "plein", "numbers": [17], "stake": 1000}, "player"),
                       ({"player": "a", "type": "plein", "numbers": [37], "stake": 1000}, "37"),
                       ({"player": "a", "type": "plein", "numbers": [17], "stake": 10.5}, "integer"),
                       ({"player": "a", "type": "plein", "numbers": [17], "stake": -5}, "between"),
                       ({"player": "a", "type": "cheval", "numbers": [1, 5], "stake": 1000}, "cheval"),
                       ({"player": "a", "type": "nonsense", "stake": 1000}, "nonsense"),
                       ({"player": "a", "type": "rouge", "stake": 1000, "zero_choice": "keep"}, "zero_choice"),
                       ({"player": "a", "type": "plein", "numbers": [5], "stake": 1000, "zero_choice": "partage"},
                        "not an even chance"),
                       ({"player": "a", "type": "pair", "stake": 1000, "zero_choice": {"move": 3}}, "zero_choice"),
                       ([1, 2], "object")):
        with pytest.raises(Invalid) as e:
            t.place(body)
        assert word in str(e.value), (body, str(e.value))
    assert t.bets() == []


def test_closed_table_and_cancel(jpath):
    t = Table(Journal(jpath), "T1")
    with pytest.raises(Refused) as e:
        t.place({"player": "a", "type": "rouge", "stake": 1000})
    assert e.value.code == "table_closed"
    t.set_open(True)
    with pytest.raises(Refused) as e:
        t.place({"player": "a", "type": "rouge", "stake": 1000})
    assert e.value.code == "wheel_not_heard"       # open, but no word from the wheel yet
    Wheel(t)
    a = t.place({"player": "a", "type": "rouge", "stake": 1000})
    assert t.cancel(a["id"])["status"] == "cancelled"
    with pytest.raises(Refused):
        t.cancel(a["id"])
    with pytest.raises(NotFound):
        t.cancel("B999999")
    with pytest.raises(NotFound):
        t.recall(42)


def test_a_choice_at_zero_journaled_on_a_plein_before_the_check_does_not_refuse_the_bet(jpath):
    """Journals written before placing refused it may hold one: the choice is moot, the bet plays."""
    t = _table(jpath)
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "plein", "numbers": [0], "stake": 1000})
    with t.j.tx() as db:
        db.execute("UPDATE bets SET body=? WHERE id=?", (json.dumps({"id": a["id"], "type": "plein", "numbers": [0],
                                                                    "stake": 1000, "zero_choice": "partage"}), a["id"]))
    w.spin(1, 0)
    bet = t.bet(a["id"])
    assert bet["status"] == "settled" and bet["result"]["won"] == 35000


def test_the_table_speaks_french_in_its_calls_log_and_bet_rows(jpath, caplog):
    """A void is called with the trade's words (the code stays in the wheel's event); the log's
    table lines name the spin, or the table when there is none; bets carry the rules' label."""
    t = _table(jpath)
    w = Wheel(t)
    with caplog.at_level("INFO", logger="cylindre.table"):
        t.set_open(False)
        t.set_open(True)
        a = t.place({"player": "ana", "type": "cheval", "numbers": [17, 14], "stake": 500})
        w.send({"ev": "launch", "t": 1, "spin": 1})
        w.send({"ev": "rnvp", "t": 2, "spin": 1})
        w.send({"ev": "void", "t": 3, "spin": 1, "reason": "rotor_not_reversed", "detail": ""})
    said = [r["text"] for r in t.j.query("SELECT text FROM announcements ORDER BY id")]
    assert "coup nul : cylindre non inversé ; les mises restent en jeu pour le prochain lancer" in said
    lines = [r.getMessage() for r in caplog.records]
    assert not any("None" in m for m in lines), lines
    assert any(m.startswith("[table] ") for m in lines), lines              # was "[spin None] faites vos jeux"
    assert any(m.startswith("[coup 1] coup nul : cylindre non inversé") for m in lines), lines
    assert t.bet(a["id"])["label"] == "cheval 14/17" and t.bets()[0]["label"] == "cheval 14/17"
