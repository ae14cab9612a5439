"""The table app's hooks into the daemon: an event, the money change it reports and the audit row of
the action commit together or not at all; live subscribers hear of it only after the commit; the
bet row says who placed and who withdrew it, and so does the recall."""

import json

import pytest

from apikit import table  # noqa: F401  (fixture)

BET = {"player": "ann", "type": "rouge", "stake": 500}


def _rows(t, sql, args=()):
    return t.daemon.j.query(sql, args)


def test_subscribers_hear_of_a_bet_only_once_it_is_committed(table):
    q = table.host.events.subscribe()
    with table.host.step():
        out = table.daemon.table.place(dict(BET))
        assert q.empty()                                   # published inside the transaction, not yet sent
        assert _rows(table, "SELECT kind FROM event_log ORDER BY id DESC LIMIT 1") == [{"kind": "bet"}]   # its row
    eid, kind, data = q.get_nowait()
    assert kind == "bet" and json.loads(data)["id"] == out["id"]
    assert table.host.events.since(eid - 1) == [(eid, kind, data)]


def test_a_change_that_rolls_back_leaves_no_event_and_tells_no_one(table):
    placed = table.call("croupier", "POST", "/bets", json=BET).json()
    q = table.host.events.subscribe()
    before = table.host.events.bounds()

    def broken(*a, **kw):
        raise OSError("disk full")
    table.host.audit.record = broken                      # the audit row of the withdrawal cannot be written
    r = table.call("croupier", "DELETE", "/bets/" + placed["id"])
    assert r.status_code == 500
    assert table.daemon.table.bet(placed["id"])["status"] == "open"           # the withdrawal rolled back
    assert table.host.events.bounds() == before and q.empty()                # and its event with it


def test_a_bet_whose_event_cannot_be_journaled_is_not_placed(table):
    def broken(kind, body):
        raise OSError("disk full")
    table.daemon.table.publish = broken
    r = table.call("croupier", "POST", "/bets", json=BET)
    assert r.status_code == 500 and table.daemon.table.bets() == []
    table.daemon.table.publish = table.daemon.publish
    again = table.call("croupier", "POST", "/bets", json=BET)
    assert again.status_code == 201 and again.json()["id"] == "B000001"     # the memory rolled back too


def test_a_wheel_event_and_its_settlement_are_one_transaction(table):
    table.call("croupier", "POST", "/bets", json=BET)
    q = table.host.events.subscribe(kinds=["wheel", "settlement"])
    table.event(1, {"ev": "launch", "t": 1, "spin": 3})
    table.event(2, {"ev": "rnvp", "t": 2, "spin": 3})
    table.event(3, {"ev": "result", "t": 3, "spin": 3, "number": 1})       # 1 is rouge
    heard = []
    while not q.empty():
        heard.append(q.get_nowait()[1])
    assert heard == ["wheel", "wheel", "wheel", "settlement"]
    settled = _rows(table, "SELECT spin FROM settlements")
    logged = _rows(table, "SELECT kind, data FROM event_log WHERE kind IN ('wheel', 'settlement') ORDER BY id")
    assert settled == [{"spin": 3}] and [r["kind"] for r in logged] == heard


def test_a_settlement_and_its_event_rows_commit_in_one_transaction(table):
    """The settlement's events are journaled inside the transaction that settles (a crash after
    its commit cannot leave a resumed stream without them), and go nowhere if it rolls back."""
    table.call("croupier", "POST", "/bets", json=BET)
    table.event(1, {"ev": "launch", "t": 1, "spin": 3})
    table.event(2, {"ev": "rnvp", "t": 2, "spin": 3})
    q = table.host.events.subscribe(kinds=["settlement"])
    with pytest.raises(RuntimeError):
        with table.daemon.j.tx():
            table.event(3, {"ev": "result", "t": 3, "spin": 3, "number": 1})
            assert _rows(table, "SELECT spin FROM settlements") == [{"spin": 3}]
            assert _rows(table, "SELECT kind FROM event_log WHERE kind='settlement'") == [{"kind": "settlement"}]
            assert q.empty()                               # not told before the commit
            raise RuntimeError("power lost before the commit")
    table.daemon.table.reload()
    assert _rows(table, "SELECT spin FROM settlements") == []
    assert _rows(table, "SELECT kind FROM event_log WHERE kind='settlement'") == [] and q.empty()
    table.event(3, {"ev": "result", "t": 3, "spin": 3, "number": 1})      # the wheel resends it
    assert [q.get_nowait()[1]] == ["settlement"] and q.empty()
    assert len(_rows(table, "SELECT kind FROM event_log WHERE kind='settlement'")) == 1


def test_who_placed_and_who_withdrew_a_bet(table):
    a = table.call("croupier", "POST", "/bets", json=BET).json()
    b = table.call("croupier", "POST", "/bets", json={**BET, "player": "bob"}).json()
    assert table.call("chef", "DELETE", "/bets/" + b["id"]).status_code == 200
    got = table.call("croupier", "GET", "/bets/" + b["id"]).json()
    assert got["placed_by"] == {"name": "croupier-1", "role": "croupier"}
    assert got["withdrawn_by"] == {"name": "chef-1", "role": "chef"}
    row = _rows(table, "SELECT placed_by, withdrawn_by FROM bets WHERE id=?", (a["id"],))[0]
    assert json.loads(row["placed_by"]) == {"name": "croupier-1", "role": "croupier"} and row["withdrawn_by"] is None
    table.event(1, {"ev": "launch", "t": 1, "spin": 4})
    table.event(2, {"ev": "rnvp", "t": 2, "spin": 4})
    table.event(3, {"ev": "result", "t": 3, "spin": 4, "number": 2})
    recall = table.call("croupier", "GET", "/spins/4").json()
    assert [(x["id"], x["placed_by"]["name"]) for x in recall["bets"]] == [(a["id"], "croupier-1")]


@pytest.mark.parametrize("path,action", [("/table/close", "table_close")])
def test_the_audit_row_of_a_table_change_has_the_wheel_answer(table, path, action):
    assert table.call("chef", "POST", path).status_code == 200
    row = table.call("chef", "GET", "/audit").json()[0]
    assert (row["action"], row["before"], row["after"], row["answer"]) == (
        action, {"phase": "betting"}, {"phase": "closed"}, {"ok": True})


def test_the_croupier_s_call_closes_the_bets_and_is_audited_with_the_wheel_answer(table):
    assert table.call("croupier", "POST", "/table/call").status_code == 200
    row = table.call("chef", "GET", "/audit").json()[0]
    assert (row["action"], row["before"], row["after"]) == ("table_call", {"phase": "betting"}, {"phase": "no_more_bets"})
    assert row["answer"] is not None
    r = table.call("croupier", "POST", "/bets", json={"player": "ann", "type": "rouge", "stake": 500})
    assert r.status_code == 409 and r.json()["error"] == "poussette"

