"""The placements' fast path (api/fastpath.py): POST /bets and POST /slips answered in front of
FastAPI give the routes' own answers, request for request; anything but the ordinary request
goes on to the routes; a token revoked after it was cached places nothing."""

import json
import sqlite3
import warnings

import pytest

from apikit import Table
from placementkit import BET, SCRIPT, SLIP
from host_tools.table.api.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

def _send(t, role, path, body, headers):
    h = dict(headers)
    if role == "bad":
        h["Authorization"] = "Bearer cyl_" + "x" * 43
    elif role == "basic":
        h["Authorization"] = "Basic " + t.tokens["croupier"]
    elif role is not None:
        h["Authorization"] = "Bearer " + t.tokens[role]
    if isinstance(body, bytes):
        if body:
            h["Content-Type"] = "application/json"
        return t.client.post(path, content=body, headers=h)
    return t.client.post(path, json=body, headers=h)


def _rows(t, sql):
    return [dict(r) for r in t.host.j.query(sql)]


@pytest.fixture
def pair(tmp_path):
    fast, slow = Table(tmp_path / "fast.sqlite"), Table(tmp_path / "slow.sqlite")
    slow.app = create_app(slow.host, {"allowed_hosts": ["testserver"]}, fast_path=False)
    slow.client = TestClient(slow.app, raise_server_exceptions=False)
    yield fast, slow
    fast.close()
    slow.close()


def test_the_fast_path_answers_as_the_routes_request_for_request(pair):
    fast, slow = pair
    for role, path, body, headers, served in SCRIPT:
        if role == "call":
            for t in pair:
                assert t.call("croupier", "POST", "/table/call").status_code == 200
            continue
        before = fast.app.state.fast_served[0]
        a, b = _send(fast, role, path, body, headers), _send(slow, role, path, body, headers)
        said = (role, path, body if isinstance(body, bytes) else json.dumps(body)[:60], headers)
        assert (a.status_code, a.json()) == (b.status_code, b.json()), said
        assert a.headers["content-type"] == b.headers["content-type"] == "application/json", said
        assert fast.app.state.fast_served[0] - before == (1 if served else 0), said
    assert slow.app.state.fast_served[0] == 0
    # and the journals hold the same: bets, slips, the refusals' audit rows
    for sql in ("SELECT id, player, body, stake, status, slip, placed_by FROM bets ORDER BY id",
                "SELECT id, player, body, n, stake, status, reason, idem_key, answer, placed_by FROM slips ORDER BY id",
                "SELECT who, role, action, done FROM audit ORDER BY id"):
        assert _rows(fast, sql) == _rows(slow, sql), sql
    assert _rows(fast, "SELECT COUNT(*) AS n FROM bets WHERE status='open'")[0]["n"] > 0


def test_a_token_revoked_by_another_process_after_it_was_cached_places_nothing(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    try:
        secret = t.host.tokens.add("T042", "terminal")
        h = {"Authorization": "Bearer " + secret}
        assert t.client.post("/slips", json=SLIP, headers=h).status_code == 201       # cached from now on
        served = t.app.state.fast_served[0]
        # `cylindre token revoke T042`: another connection to the journal file, as the CLI is
        other = sqlite3.connect(tmp_path / "j.sqlite", isolation_level=None)
        other.execute("UPDATE tokens SET revoked=1 WHERE name='T042'")
        other.close()
        n = _rows(t, "SELECT COUNT(*) AS n FROM bets")[0]["n"]
        r = t.client.post("/slips", json=SLIP, headers=h)
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
        assert t.app.state.fast_served[0] == served                 # the routes' guard answered
        assert _rows(t, "SELECT COUNT(*) AS n FROM bets")[0]["n"] == n and \
            _rows(t, "SELECT COUNT(*) AS n FROM slips")[0]["n"] == 1
        # revoked in the daemon itself: the same
        croupier = t.tokens["croupier"]
        assert t.client.post("/bets", json=BET, headers={"Authorization": "Bearer " + croupier}).status_code == 201
        assert t.host.tokens.revoke("croupier-1")
        assert t.client.post("/bets", json=BET, headers={"Authorization": "Bearer " + croupier}).status_code == 401
    finally:
        t.close()


def test_a_new_token_of_the_same_name_leaves_the_old_one_dead(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    try:
        old = t.host.tokens.add("T001", "terminal")
        assert t.client.post("/slips", json=SLIP, headers={"Authorization": "Bearer " + old}).status_code == 201
        t.host.tokens.revoke("T001")
        new = t.host.tokens.add("T001", "terminal")
        assert t.client.post("/slips", json=SLIP, headers={"Authorization": "Bearer " + old}).status_code == 401
        assert t.client.post("/slips", json=SLIP, headers={"Authorization": "Bearer " + new}).status_code == 201
    finally:
        t.close()


def test_a_group_refuses_the_placements_of_a_token_changed_since_it_was_read(tmp_path):
    """The check in the group's transaction itself: a voucher of an older generation is read
    again; one of a token revoked since places nothing, the others go through."""
    t = Table(tmp_path / "j.sqlite")
    try:
        tokens = t.host.tokens
        a, b = tokens.add("A", "terminal"), tokens.add("B", "terminal")
        (who_a, va), (who_b, vb) = tokens.vouch(a), tokens.vouch(b)
        assert who_a.name == "A" and who_b.name == "B" and va[1] == vb[1]
        with t.host.j.tx() as db:
            assert tokens.unvouched(db, [va, vb]) == set()
        tokens.revoke("A")
        assert tokens.vouch(a)[0].name == "A"              # the door's cache has not seen it yet: the group decides
        with t.host.j.tx() as db:
            assert tokens.unvouched(db, [va, vb, None]) == {va}
        assert tokens.vouch(a) == (None, None)             # the group saw the new generation: read again
        assert tokens.vouch(b)[0].name == "B"
    finally:
        t.close()
