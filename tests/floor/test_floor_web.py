"""The floor's API and commands against a real nats-server and a table that answers as the contract
says (signature, freshness and replay checked with host_tools/floor/link/command.py): roles, every
command audited at the floor with the table's answer, the two-person settings, alerts acknowledged
with a comment and told to the table, the floor seen at once from the key-value bucket after a
restart, /health and /metrics. About 10 s."""

import time

import pytest
from fastapi.testclient import TestClient

from host_tools.floor import natsrv
from host_tools.table.wheel.keys import new_key
from host_tools.floor.service import FloorService
from host_tools.floor.web import create_app
from host_tools.floor.link import command as C
from host_tools.table.api.auth import TokenError, digest

from host_tools.floor.harness import LoopThread

from floorkit import FloorTable as Table, wait


@pytest.fixture
def floor(tmp_path):
    srv = natsrv.Server(tmp_path / "js").start()
    key = new_key(tmp_path / "floor.key")
    bg = LoopThread()
    table = bg.submit(Table(srv.url, key).start()).result(10)
    svc = FloorService.build(str(tmp_path / "floor.sqlite"), srv.url, key, escalate_after_s=3600)
    svc.start()
    client = TestClient(create_app(svc))
    tokens = {r: svc.access.add(f"{r}-1", r) for r in ("surveillance", "pit_boss", "director", "admin")}
    tokens["director-2"] = svc.access.add("director-2", "director")
    wait(lambda: svc.link.connected, "the floor's link", 20)
    yield svc, client, tokens, table, bg, srv
    svc.stop()
    bg.submit(table.nc.close()).result(5)
    bg.close()
    srv.close()


def call(client, tokens, who, method, path, body=None):
    r = client.request(method, path, json=body, headers={"Authorization": "Bearer " + tokens[who]})
    return r.status_code, r.json()


def test_the_floor_shows_the_bucket_at_once_then_the_events(floor):
    svc, client, tokens, table, bg, _ = floor
    st, s = call(client, tokens, "surveillance", "GET", "/floor/api/state")
    tile = {t["table"]: t for t in s["tiles"]}["T1"]                   # from the bucket: no event yet
    assert (tile["open"], tile["croupier"], [n["n"] for n in tile["numbers"]]) == (False, "ana", [17, 0, 32])
    bg.submit(table.publish(1, "result", {"spin": 1, "number": 5, "croupier": "bruno", "rotor_dir": "cw",
                                          "ball_dir": "ccw"})).result(5)
    bg.submit(table.publish(2, "settlement", {"spin": 1, "number": 5, "staked": 12000, "paid": 3600,
                                              "result": 8400, "bets": 4})).result(5)
    wait(lambda: call(client, tokens, "surveillance", "GET", "/floor/api/state")[1]["tiles"][0]["turnover"] == 12000,
         "the settlement on the tile")
    tile = call(client, tokens, "surveillance", "GET", "/floor/api/state")[1]["tiles"][0]
    assert (tile["numbers"][0], tile["result"], tile["croupier"], tile["games"], tile["serial"]) == \
        ({"n": 5, "colour": "rouge"}, 8400, "bruno", 1, "W-17")
    assert client.get("/floor/api/state").status_code == 401
    m = client.get("/metrics").text
    assert 'cylindre_floor_events_total{kind="result"} 1.0' in m and "cylindre_floor_ingest_lag_seconds_bucket" in m
    svc.refresh_stats()
    wait(lambda: call(client, tokens, "surveillance", "GET", "/floor/api/wheels")[0] == 200 and
         call(client, tokens, "surveillance", "GET", "/floor/api/wheels")[1]["wheels"], "the wheels' statistics")
    w = call(client, tokens, "surveillance", "GET", "/floor/api/wheels")[1]
    assert [x["wheel"] for x in w["wheels"]] == ["W-17"] and w["days"] == 30 and w["correction"] == "holm"
    h = client.get("/health")
    assert h.status_code == 200 and h.json()["broker"] == "connected"


def test_commands_carry_the_user_and_are_audited_at_the_floor(floor):
    svc, client, tokens, table, bg, _ = floor
    bg.submit(table.publish(1, "result", {"spin": 1, "number": 5})).result(5)
    wait(lambda: svc.store.count() == 1, "the table known to the floor")
    assert call(client, tokens, "surveillance", "POST", "/floor/api/tables/T1/open")[0] == 403
    st, ans = call(client, tokens, "pit_boss", "POST", "/floor/api/tables/T1/open")
    assert st == 200 and ans["ok"], ans
    req = table.taken[-1]
    assert (req["op"], req["who"], req["role"]) == ("open", "pit_boss-1", "pit_boss")
    assert call(client, tokens, "pit_boss", "POST", "/floor/api/tables/T1/limits", {"plein": {"min": 100, "max": 50000}})[0] == 403
    st, ans = call(client, tokens, "director", "POST", "/floor/api/tables/T1/limits", {"plein": {"min": 100, "max": 50000}})
    assert st == 200 and table.taken[-1]["args"] == {"plein": {"min": 100, "max": 50000}}
    assert call(client, tokens, "director", "POST", "/floor/api/tables/T1/limits", {"plein": {"min": 900, "max": 100}})[0] == 400
    audit = call(client, tokens, "director", "GET", "/floor/api/audit")[1]
    got = [(a["who"], a["action"], a["done"]) for a in audit]
    assert ("pit_boss-1", "cmd.open", True) in got and ("director-1", "cmd.set_limits", True) in got
    assert ("surveillance-1", "refused POST /floor/api/tables/T1/open", False) in got
    assert ("pit_boss-1", "cmd.set_limits", False) in got or \
        ("pit_boss-1", "refused POST /floor/api/tables/T1/limits", False) in got
    assert next(a for a in audit if a["action"] == "cmd.open")["answer"] == {"ok": True, "result": {}}


def test_a_regulatory_setting_needs_a_second_person(floor):
    svc, client, tokens, table, bg, _ = floor
    bg.submit(table.publish(1, "result", {"spin": 1, "number": 5})).result(5)
    wait(lambda: svc.store.count() == 1, "the table known to the floor")
    st, ans = call(client, tokens, "director", "POST", "/floor/api/tables/T1/settings", {"setting": "min_laps", "value": 4})
    assert st == 200 and ans["ok"] and table.taken[-1]["args"] == {"name": "min_laps", "value": 4}
    pid = ans["pending"]
    st, ans = call(client, tokens, "director", "POST", f"/floor/api/pending/{pid}/approve")
    assert (st, ans["error"]) == (409, "same_person") and table.taken[-1]["op"] == "request_setting"
    assert call(client, tokens, "pit_boss", "POST", f"/floor/api/pending/{pid}/approve")[0] == 403
    st, ans = call(client, tokens, "director-2", "POST", f"/floor/api/pending/{pid}/approve")
    assert st == 200 and ans["ok"]
    assert (table.taken[-1]["op"], table.taken[-1]["who"], table.taken[-1]["args"]["request"]) == \
        ("approve_setting", "director-2", "t-" + table.taken[-2]["id"][:8])
    st, ans = call(client, tokens, "director-2", "POST", f"/floor/api/pending/{pid}/approve")
    assert st == 409
    p = call(client, tokens, "surveillance", "GET", "/floor/api/state")[1]["pending"][0]
    assert (p["requested_by"], p["approved_by"], p["outcome"]) == ("director-1", "director-2", "applied")
    assert call(client, tokens, "director", "POST", "/floor/api/tables/T1/settings", {"setting": "speed", "value": 4})[0] == 400


def test_a_name_in_capitals_is_the_same_person(floor):
    """The review's attempt: `BOB` approved `bob`'s request, at the floor and over NATS."""
    svc, client, tokens, table, bg, _ = floor
    bg.submit(table.publish(1, "result", {"spin": 1, "number": 5})).result(5)
    wait(lambda: svc.store.count() == 1, "the table known to the floor")
    tokens["bob"] = svc.access.add("bob", "director")
    with pytest.raises(TokenError, match="by case alone"):       # not made any more,
        svc.access.add("BOB", "director")
    tokens["BOB"] = "cyl_" + "B" * 43                           # but a store may hold one from before
    with svc.store.tx() as c:
        c.execute("INSERT INTO tokens (name, role, hash, created, revoked) VALUES (?,?,?,?,NULL)",
                  ("BOB", "director", digest(tokens["BOB"]), time.time()))
    st, ans = call(client, tokens, "bob", "POST", "/floor/api/tables/T1/settings", {"setting": "min_laps", "value": 5})
    assert st == 200
    st, ans = call(client, tokens, "BOB", "POST", f"/floor/api/pending/{ans['pending']}/approve")
    assert (st, ans["error"]) == (409, "same_person") and table.taken[-1]["op"] == "request_setting"


@pytest.mark.parametrize("knows_ack", [True, False])
def test_an_alert_is_acknowledged_with_a_comment_and_told_to_the_table(floor, knows_ack):
    svc, client, tokens, table, bg, _ = floor
    # a table of an older release does not take ack_alert: the floor closes the alert and says so
    table.ops = C.OPS if knows_ack else tuple(op for op in C.OPS if op != "ack_alert")
    bg.submit(table.publish(1, "alert", {"id": "a9", "code": "link_lost", "message": "liaison perdue", "level": "critical",
                                         "raised_at": time.time(), "acked_at": None, "acked_by": None,
                                         "comment": None})).result(5)
    wait(lambda: call(client, tokens, "surveillance", "GET", "/floor/api/state")[1]["alerts"], "the alert at the floor")
    assert call(client, tokens, "pit_boss", "POST", "/floor/api/alerts/T1/a9/ack", {"comment": ""})[0] == 422
    st, a = call(client, tokens, "pit_boss", "POST", "/floor/api/alerts/T1/a9/ack", {"comment": "câble remis"})
    assert st == 200 and a["floor_acked_by"] == "pit_boss-1"
    if knows_ack:
        assert a["table_told"] == "transmis"
        assert (table.taken[-1]["op"], table.taken[-1]["args"]) == ("ack_alert", {"id": "a9", "comment": "câble remis"})
    else:                                   # a table that does not take it: closed at the floor, and said
        assert a["table_told"].startswith("refusé par la table: unknown_op") and not table.taken
    s = call(client, tokens, "surveillance", "GET", "/floor/api/state")[1]
    assert s["alerts"][0]["open"] is False and s["tiles"][0]["alerts"] == 0


def test_a_table_that_does_not_answer_is_said_and_audited(floor):
    svc, client, tokens, table, bg, _ = floor
    bg.submit(table.publish(1, "result", {"spin": 1, "number": 5})).result(5)
    wait(lambda: svc.store.count() == 1, "the table known to the floor")
    table.answer = False
    svc.commands.timeout = 1.0
    st, ans = call(client, tokens, "pit_boss", "POST", "/floor/api/tables/T1/close")
    assert st == 502 and ans["error"] == "no_answer"
    row = call(client, tokens, "director", "GET", "/floor/api/audit")[1][0]
    assert (row["action"], row["done"], row["answer"]["error"]) == ("cmd.close", False, "no_answer")
    assert call(client, tokens, "pit_boss", "POST", "/floor/api/tables/T9/close")[0] == 404
