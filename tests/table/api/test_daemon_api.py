"""The HTTP API on a real server (the table app on uvicorn): bets, errors, state, history, recall,
SSE, OpenAPI. Calls carry the admin's token; the roles are test_api_roles.py's."""

import json
import threading
import urllib.error
import urllib.request

import pytest

from apikit import Served, Table


@pytest.fixture
def api(tmp_path):
    t = Table(tmp_path / "j.sqlite", conf={"http": "127.0.0.1:0"})
    t.daemon.command = lambda cmd, args=None, timeout=5.0: None      # no wheel: commands time out
    srv = Served(t.app)
    base = srv.base

    def call(method, path, body=None, raw=None, role="admin"):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer " + t.tokens[role]})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    call.daemon = t.daemon
    t.daemon.test_wheel = t.feed             # statuses and events of a stand-in wheel
    call.base = base
    call.table = t
    yield call
    t.host.events.close()
    srv.stop()
    t.close()


def _event(d, seq, ev):
    w = d.test_wheel
    w.seq = seq - 1
    w.send(ev, raw=b"\x01\x02")


def test_openapi_lists_every_route(api):
    st, doc = api("GET", "/openapi.json")
    assert st == 200 and doc["openapi"].startswith("3.")
    for path in ("/bets", "/bets/{bid}", "/bets/{bid}/consent", "/state", "/events", "/history", "/spins/{spin}", "/table/open"):
        assert path in doc["paths"]


def test_a_spin_through_the_api(api):
    st, a = api("POST", "/bets", {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    assert st == 201 and a["id"] and a["status"] == "open"
    st, v = api("POST", "/bets", {"player": "bo", "type": "voisins", "unit": 100})
    assert st == 201 and v["stake"] == 900
    st, c = api("POST", "/bets", {"player": "ana", "type": "rouge", "stake": 500})
    assert api("DELETE", "/bets/" + c["id"])[0] == 200
    d = api.daemon
    _event(d, 1, {"ev": "launch", "t": 1, "spin": 7})
    _event(d, 2, {"ev": "rnvp", "t": 2, "spin": 7})
    st, late = api("POST", "/bets", {"player": "eve", "type": "plein", "numbers": [17], "stake": 1000})
    assert st == 409 and late["error"] == "poussette"
    _event(d, 3, {"ev": "result", "t": 3, "spin": 7, "number": 17, "sightings": [[3, 0, 12]]})
    st, bet = api("GET", "/bets/" + a["id"])
    assert bet["status"] == "settled" and bet["result"]["won"] == 35000
    st, hist = api("GET", "/history")
    assert st == 200 and hist[0]["spin"] == 7 and hist[0]["number"] == 17
    st, rec = api("GET", "/spins/7")
    assert st == 200 and [e["event"]["ev"] for e in rec["events"]] == ["launch", "rnvp", "result"]
    assert rec["events"][2]["frame_hex"] == "0102" and rec["settlement"]["number"] == 17
    assert {b["status"] for b in rec["bets"]} == {"settled", "refused"}
    st, state = api("GET", "/state")
    assert state["table"]["phase"] == "betting" and state["table"]["last_number"] == 17
    assert state["link"]["session"] is False


@pytest.mark.parametrize("method,path,body,raw,status", [
    ("POST", "/bets", None, b"{not json", 400),
    ("POST", "/bets", {"player": "a", "type": "plein", "numbers": [99], "stake": 100}, None, 400),
    ("POST", "/bets", {"player": "a", "type": "plein", "numbers": [9], "stake": "100"}, None, 400),
    ("GET", "/bets/B424242", None, None, 404),
    ("DELETE", "/bets/B424242", None, None, 404),
    ("GET", "/spins/99", None, None, 404),
    ("GET", "/history?limit=abc", None, None, 400),
    ("GET", "/nowhere", None, None, 404),
    ("PUT", "/bets", {}, None, 405),
    ("PUT", "/wheel/settings", {"nom": 1}, None, 400),
])
def test_bad_requests_get_clear_4xx(api, method, path, body, raw, status):
    st, err = api(method, path, body, raw)
    assert st == status and err["error"] and err["message"]


def test_a_choice_at_zero_on_a_bet_that_is_not_an_even_chance_is_refused_when_placed(api):
    for body in ({"player": "a", "type": "plein", "numbers": [0], "stake": 1000, "zero_choice": "partage"},
                 {"player": "a", "type": "douzaine", "which": 1, "stake": 1000, "zero_choice": "prison"},
                 {"player": "a", "type": "voisins", "unit": 100, "zero_choice": {"move": "noir"}}):
        st, err = api("POST", "/bets", body)
        assert st == 400 and err["error"] == "invalid_bet", (body, err)
        assert "zero_choice" in err["message"] and "not an even chance" in err["message"]
    st, err = api("POST", "/bets", {"player": "a", "type": "rouge", "stake": 1000, "zero_choice": {"move": "vert"}})
    assert st == 400 and "even chance" in err["message"]
    st, ok = api("POST", "/bets", {"player": "a", "type": "rouge", "stake": 1000, "zero_choice": {"move": "noir"}})
    assert st == 201
    st, bets = api("GET", "/bets")
    assert [b["id"] for b in bets] == [ok["id"]]           # nothing of the refused ones was recorded


def test_a_held_bet_is_resolved_through_the_api(api):
    st, a = api("POST", "/bets", {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    d = api.daemon
    _event(d, 1, {"ev": "boot", "t": 0, "spin": 0, "history": []})
    _event(d, 2, {"ev": "launch", "t": 1, "spin": 1})
    _event(d, 3, {"ev": "rnvp", "t": 2, "spin": 1})
    d.table.on_event("boot1", 1, {"ev": "boot", "t": 0, "spin": 1}, {"kind": "event", "raw": b""})  # no history
    st, held = api("GET", "/bets?status=held")
    assert st == 200 and [b["id"] for b in held] == [a["id"]]
    assert api("POST", "/bets/%s/resolve" % a["id"], {"action": "pay"})[0] == 400
    st, r = api("POST", "/bets/%s/resolve" % a["id"], {"action": "refund"})
    assert st == 200 and r["status"] == "refunded"
    st, err = api("POST", "/bets/%s/resolve" % a["id"], {"action": "refund"})
    assert st == 409 and err["error"] == "not_held"


def test_wheel_commands_without_a_wheel_time_out_clearly(api, monkeypatch):
    monkeypatch.setattr(api.daemon, "command", lambda cmd, args=None, timeout=5.0: None)
    st, err = api("GET", "/wheel/settings")
    assert st == 504 and err["error"] == "wheel_timeout"


def test_live_event_stream(api):
    got = []
    ready = threading.Event()

    def listen():
        req = urllib.request.Request(api.base + "/events", headers={"Authorization": "Bearer " + api.table.tokens["croupier"]})
        with urllib.request.urlopen(req, timeout=10) as r:
            ready.set()
            for raw in r:
                line = raw.decode().strip()
                if line.startswith("event: "):
                    got.append(line[7:])
                if "bet" in got:
                    return

    t = threading.Thread(target=listen, daemon=True)
    t.start()
    assert ready.wait(5)
    import time
    time.sleep(0.2)
    api("POST", "/bets", {"player": "ana", "type": "noir", "stake": 1000})
    t.join(5)
    assert "bet" in got


def test_status_command_prints_link_wheel_and_table(api, capsys):
    import argparse
    from host_tools.table.daemon import status_cli
    api("POST", "/bets", {"player": "ana", "type": "noir", "stake": 1000})
    code = status_cli.run(argparse.Namespace(http=api.base[len("http://"):], json=False,
                                             token=api.table.tokens["display"]))
    out = capsys.readouterr().out
    assert code == 1                                   # the link is down: no wheel on this port
    assert out.startswith("liaison  COUPÉE") and "cylindre T1 : " in out
    assert "table    ouverte — " in out and "1 mise sur le tapis, 10,00\u202f€" in out
    assert "None" not in out and "0.00" not in out


def test_status_command_without_a_daemon(capsys):
    import argparse
    from host_tools.table.daemon import status_cli
    assert status_cli.run(argparse.Namespace(http="127.0.0.1:9", json=False)) == 2
    assert "aucun démon" in capsys.readouterr().err
