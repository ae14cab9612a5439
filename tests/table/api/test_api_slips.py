"""POST /slips, GET and DELETE /slips/{slip}: a terminal's identity places and withdraws its own
slips only, answered after the commit, refused whole; listed and revoked like any token."""

from apikit import table  # noqa: F401  (fixture)

SLIP = {"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100}, {"type": "pair", "stake": 200}]}


def test_a_terminal_places_its_slip_whole_and_reads_it_back(table):
    r = table.call("terminal", "POST", "/slips", json=SLIP, headers={"Idempotency-Key": "t1-1"})
    assert r.status_code == 201, r.text
    slip = r.json()
    assert slip["status"] == "open" and [b["status"] for b in slip["bets"]] == ["open", "open"]
    again = table.call("terminal", "POST", "/slips", json=SLIP, headers={"Idempotency-Key": "t1-1"})
    assert again.status_code == 201 and again.json() == slip                 # the first answer, nothing new
    got = table.call("terminal", "GET", f"/slips/{slip['slip']}").json()
    assert [b["id"] for b in got["bets"]] == [b["id"] for b in slip["bets"]]
    assert all(b["placed_by"] == {"name": "terminal-1", "role": "terminal"} for b in got["bets"])
    assert table.call("croupier", "GET", f"/slips/{slip['slip']}").status_code == 200


def test_a_terminal_places_no_single_bet_and_reads_no_bet(table):
    assert table.call("terminal", "POST", "/bets", json=dict(SLIP["bets"][0], player="ana")).status_code == 403
    assert table.call("terminal", "GET", "/bets").status_code == 403
    assert table.call("display", "POST", "/slips", json=SLIP).status_code == 403
    assert table.call(None, "POST", "/slips", json=SLIP).status_code == 401


def test_another_terminal_may_neither_read_nor_withdraw_a_slip_and_is_audited(table):
    other = table.host.tokens.add("T099", "terminal")
    sid = table.call("terminal", "POST", "/slips", json=SLIP).json()["slip"]
    h = {"Authorization": "Bearer " + other}
    assert table.client.get(f"/slips/{sid}", headers=h).status_code == 403
    r = table.client.delete(f"/slips/{sid}", headers=h)
    assert r.status_code == 403 and r.json()["error"] == "not_your_slip"
    rows = table.call("chef", "GET", "/audit", params={"action": "slip_cancel"}).json()
    assert rows[0]["who"] == "T099" and not rows[0]["done"]
    out = table.call("terminal", "DELETE", f"/slips/{sid}")
    assert out.status_code == 200 and out.json()["status"] == "withdrawn"
    assert {table.call("croupier", "GET", f"/bets/{b}").json()["status"] for b in out.json()["bets"]} == {"cancelled"}


def test_a_bad_bet_is_a_400_naming_it_and_a_closed_table_a_409_with_no_bet(table):
    bad = {"player": "ana", "bets": [SLIP["bets"][0], {"type": "plein", "numbers": [40], "stake": 100}]}
    r = table.call("terminal", "POST", "/slips", json=bad)
    assert r.status_code == 400 and r.json()["error"] == "invalid_slip" and r.json()["message"].startswith("bets[1]")
    assert table.call("chef", "POST", "/table/close").status_code == 200
    r = table.call("terminal", "POST", "/slips", json=SLIP)
    assert r.status_code == 409 and r.json()["error"] == "table_closed" and r.json()["slip"]["bets"] == []
    assert table.call("croupier", "GET", "/bets").json() == []


def test_terminal_tokens_are_listed_and_revoked_like_the_others(table):
    secret = table.host.tokens.add("T500", "terminal")
    assert {"name": "T500", "role": "terminal"}.items() <= next(t for t in table.host.tokens.list() if t["name"] == "T500").items()
    assert table.client.post("/slips", json=SLIP, headers={"Authorization": "Bearer " + secret}).status_code == 201
    assert table.host.tokens.revoke("T500")
    assert table.client.post("/slips", json=SLIP, headers={"Authorization": "Bearer " + secret}).status_code == 401
