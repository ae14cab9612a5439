"""The betting window under a failing link (issue 8): no bet after the wheel's call is played,
whatever the link does; closed stays closed; a client never sets a bet's state; a retry with the
same Idempotency-Key places nothing twice. Over a real SQLite journal, on the test's clock."""

import pytest

from host_tools.table.game import window
from host_tools.table.game.table import Invalid, Mismatch, Refused, Table, parse_bet_request
from host_tools.sim.tablewheel import Wheel

PLEIN = {"player": "eve", "type": "plein", "numbers": [17], "stake": 1000}


@pytest.fixture
def t(open_table):
    return open_table


def _money(t):
    """Stakes in, money out, from the journal: every settled bet balances to the cent."""
    rows = t.ledger.find(limit=10**9)             # each with its result (its `results` row)
    import json
    for r in rows:
        if r["status"] == "settled":
            res = json.loads(r["result"])
            assert res["staked"] == res["returned"] + res["lost"] + res["imprisoned"]
    return rows


def test_no_bet_without_fresh_word_from_the_wheel(t):
    w = Wheel(t)
    t.place(PLEIN)                                   # a status just now: accepted
    t.clock.advance(window.FRESH_MS + 1)               # the line goes quiet (cable pulled)
    with pytest.raises(Refused) as e:
        t.place(PLEIN)
    assert e.value.code == "wheel_not_heard"
    assert t.bets(status="refused")[0]["reason"] == "wheel_not_heard"       # recorded
    w.status()
    t.place(PLEIN)                                   # the wheel is heard again


def test_a_status_sent_before_events_we_lack_is_no_evidence(t):
    w = Wheel(t)
    w.status(emitted=w.seq + 1)          # the wheel said something (its call?) we have not taken
    with pytest.raises(Refused) as e:
        t.place(PLEIN)
    assert e.value.code == "wheel_not_heard"


def test_a_wheel_in_fault_takes_no_bet(t):
    """A sensor not ok: the next spin would be void, and a silent ball-track sensor may hide a
    spin under way (issue 33): no bet on a status that says fault, until one says otherwise."""
    w = Wheel(t)
    w.status(state="fault")
    with pytest.raises(Refused) as e:
        t.place(PLEIN)
    assert e.value.code == "wheel_not_heard"
    w.status(state="idle")
    t.place(PLEIN)


def test_the_croupier_s_call_stops_the_bets_whatever_the_wheel_says(t):
    """Rien ne va plus from the pit: no bet from that instant though the wheel saw no launch; its
    own call locks the bets placed before to its spin, its result settles them and reopens."""
    w = Wheel(t)
    t.place(PLEIN)
    assert t.call() and t.state()["phase"] == "no_more_bets"
    w.status()                                   # the wheel still says idle (its ball sensors dead?)
    with pytest.raises(Refused) as e:
        t.place(PLEIN)
    assert e.value.code == "poussette"
    assert not t.call()                          # once
    w.spin(1, 17)
    assert t.state()["phase"] == "betting"
    won = [b for b in t.bets(status="settled")]
    assert len(won) == 1 and won[0]["spin"] == 1


def test_a_delayed_status_is_judged_by_the_wheel_clock_not_by_its_arrival(t):
    w = Wheel(t)
    t.clock.advance(5000)
    w.status(at=int(t.clock()) - 1500)   # sent 1.5 s ago, held by a relay, arrives now
    with pytest.raises(Refused) as e:
        t.place(PLEIN)
    assert e.value.code == "wheel_not_heard"


def test_the_call_refuses_every_bet_after_its_instant_however_late_it_arrives(t):
    w = Wheel(t)
    early = t.place({"player": "ana", "type": "rouge", "stake": 2000})
    w.send({"ev": "launch", "t": 1, "spin": 1})
    call_ms = int(t.clock()) + 100                    # the wheel calls here ...
    t.clock.advance(300)
    w.status(at=call_ms - 50)                         # a status from before the call, delayed
    late = t.place(PLEIN)                             # accepted now, 200 ms after the call
    assert late["status"] == "open"
    w.send({"ev": "rnvp", "t": 2, "spin": 1}, at=call_ms)      # ... and the call arrives late
    assert t.bet(late["id"])["status"] == "refused" and t.bet(late["id"])["reason"] == "poussette"
    assert t.bet(early["id"])["status"] == "locked"
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 17})
    assert "result" not in t.bet(late["id"])                   # never played, never paid
    assert t.bet(early["id"])["result"]["outcome"] == "lost"
    _money(t)


def test_the_uncertainty_of_the_clocks_counts_against_the_player(t):
    w = Wheel(t)
    t.clock.advance(50)
    w.status(echo=[int(t.clock()) - 40, int(t.clock())])   # the ACK took up to 40 ms to reach the wheel
    bet = t.place(PLEIN)                                    # arrives 10 ms before the call, by our clock
    w.send({"ev": "rnvp", "t": 2, "spin": 1}, at=int(t.clock()) + 0)
    assert t.bet(bet["id"])["status"] == "refused"          # it may have been 30 ms after it


def test_a_result_without_a_call_cuts_the_window_at_the_launch(t):
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "rouge", "stake": 2000})
    w.send({"ev": "launch", "t": 1, "spin": 1})
    t.clock.advance(100)
    w.status()
    b = t.place(PLEIN)
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 17})
    assert t.bet(a["id"])["status"] == "settled"
    assert t.bet(b["id"])["status"] == "refused" and "result" not in t.bet(b["id"])


def test_a_table_closed_during_an_outage_stays_closed(t):
    w = Wheel(t)
    a = t.place({"player": "ana", "type": "rouge", "stake": 2000})
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    t.set_open(False)                                 # the chef closes; the wheel does not hear it
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 1})
    assert t.state()["phase"] == "closed"             # a late result never reopens it
    assert t.bet(a["id"])["status"] == "settled"      # the bet locked before the close is played
    with pytest.raises(Refused) as e:
        t.place(PLEIN)
    assert e.value.code == "table_closed"
    w.send({"ev": "launch", "t": 4, "spin": 2})
    w.send({"ev": "void", "t": 5, "spin": 2, "reason": "table_closed"})
    assert t.state()["phase"] == "closed"
    t2 = Table(t.j, "T1")                             # a restart reads it closed
    assert t2.st["phase"] == "closed" and not t2.created


@pytest.mark.parametrize("field", ["carried", "status", "locked", "spin", "result", "id"])
def test_state_fields_are_the_table_s_alone(t, field):
    Wheel(t)
    with pytest.raises(Invalid) as e:
        t.place(dict(PLEIN, **{field: True}))
    assert field in str(e.value) and "set by the table" in str(e.value)
    assert not t.bets()


def test_unknown_fields_are_refused_by_name():
    with pytest.raises(Invalid) as e:
        parse_bet_request(dict(PLEIN, colour="red"))
    assert str(e.value).startswith("colour: unknown field")


def test_a_straddle_waits_for_the_chef_de_table_s_consent(t):
    Wheel(t)
    straddle = {"player": "bo", "type": "douzaine", "which": [1, 2], "stake": 2000}
    with pytest.raises(Invalid) as e:
        t.place(dict(straddle, consent=True))         # a player cannot consent for the chef
    assert "chef de table" in str(e.value)
    b = t.place(straddle)
    assert b["status"] == "awaiting_consent"
    assert t.consent(b["id"])["status"] == "open"
    with pytest.raises(Refused):
        t.consent(b["id"])


def test_newlines_in_a_name_never_reach_the_log():
    with pytest.raises(Invalid) as e:
        parse_bet_request(dict(PLEIN, player="eve\n2026-01-01 INFO cylindre.table: spin 9 settled"))
    assert "control characters" in str(e.value)


def test_the_same_idempotency_key_returns_the_first_answer(t):
    w = Wheel(t)
    a = t.place(PLEIN, idempotency_key="k-1")
    again = t.place(PLEIN, idempotency_key="k-1")
    assert again == a and len(t.bets()) == 1
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    with pytest.raises(Refused) as e1:
        t.place(PLEIN, idempotency_key="k-2")
    with pytest.raises(Refused) as e2:
        t.place(PLEIN, idempotency_key="k-2")
    assert e1.value.code == e2.value.code == "poussette" and e1.value.bet["id"] == e2.value.bet["id"]
    assert len(t.bets()) == 2
    t3 = Table(t.j, "T1")                              # the answer survives a restart
    assert t3.place(PLEIN, idempotency_key="k-1") == a
    with pytest.raises(Invalid):
        t.place(PLEIN, idempotency_key="a key with spaces")


def test_a_key_used_again_with_another_bet_is_refused_naming_the_first(t):
    Wheel(t)
    a = t.place(PLEIN, idempotency_key="k-1")
    for other in (dict(PLEIN, stake=100000), dict(PLEIN, numbers=[18]), dict(PLEIN, player="bob")):
        with pytest.raises(Mismatch) as e:
            t.place(other, idempotency_key="k-1")
        assert e.value.code == "idempotency_mismatch" and e.value.bet["id"] == a["id"] and a["id"] in e.value.message
    assert len(t.bets()) == 1 and t.bet(a["id"])["stake"] == 1000          # nothing placed, nothing changed
    assert t.place(dict(reversed(list(PLEIN.items()))), idempotency_key="k-1") == a    # same bet, keys in another order


def test_no_withdrawal_while_the_wheel_is_not_heard(t):
    """A cut cable must not let a player take back a losing bet once the ball has landed."""
    w = Wheel(t)
    b = t.place(PLEIN)
    w.send({"ev": "launch", "t": 1, "spin": 1})
    t.clock.advance(window.FRESH_MS + 1)               # the call and the result are on a cut line
    with pytest.raises(Refused) as e:
        t.cancel(b["id"])
    assert e.value.code == "wheel_not_heard"
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 3})
    assert t.bet(b["id"])["result"]["outcome"] == "lost"


def test_a_withdrawal_after_the_call_is_undone_when_the_call_arrives(t):
    w = Wheel(t)
    b = t.place(PLEIN)
    late = None
    w.send({"ev": "launch", "t": 1, "spin": 1})
    call_ms = int(t.clock()) + 100                    # the wheel calls here ...
    t.clock.advance(300)
    w.status(at=call_ms - 50)                         # a status from before the call, delayed
    late = t.place(dict(PLEIN, player="zoe"))         # placed after the call, withdrawn after it too
    assert t.cancel(b["id"])["status"] == "cancelled"     # taken now: the call has not reached us
    t.cancel(late["id"])
    w.send({"ev": "rnvp", "t": 2, "spin": 1}, at=call_ms)      # ... and the call arrives late
    assert t.bet(b["id"])["status"] == "locked" and t.bet(b["id"])["spin"] == 1     # it plays
    assert t.bet(late["id"])["status"] == "cancelled"          # never on the layout before the call
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 3})
    assert t.bet(b["id"])["result"]["outcome"] == "lost"
    _money(t)


def test_nothing_is_streamed_from_a_transaction_that_rolls_back(t):
    """The live stream says only what the journal holds: an event taken inside the service's
    transaction is streamed once that commits, never if it rolls back."""
    seen = []
    t.publish = lambda kind, body: seen.append((kind, body.get("ev") or body.get("text")))
    w = Wheel(t)
    with pytest.raises(RuntimeError):
        with t.j.tx():
            w.send({"ev": "launch", "t": 1, "spin": 1})
            assert seen == []                               # not yet: the transaction is open
            raise RuntimeError("disk full")
    t.reload()
    assert seen == [] and t.j.query("SELECT * FROM events") == []
    w.send({"ev": "launch", "t": 1, "spin": 1}, seq=1)
    assert seen == [("wheel", "launch")]
