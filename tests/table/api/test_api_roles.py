"""Every route, every role: a change needs a token of the right role (401 without, 403 below it);
reads need display, but the bets (a player's name and stake) need croupier: a display token, which a
public screen carries in its address, reads what a tote board shows. /health and /openapi.json are
open. Refusals of a known token are audited."""

import pytest

from apikit import table  # noqa: F401  (fixture)

# route -> the lowest role allowed (None: no token needed)
ROUTES = {
    ("GET", "/health"): None,
    ("GET", "/openapi.json"): None,
    ("GET", "/metrics"): "display",
    ("GET", "/state"): "display",
    ("GET", "/bets"): "croupier",
    ("GET", "/bets/B000001"): "croupier",
    ("GET", "/history"): "display",
    ("GET", "/spins/1"): "croupier",
    ("GET", "/wheel/settings"): "display",
    ("GET", "/wheel/status"): "display",
    ("GET", "/wheel/history"): "display",
    ("GET", "/events?kinds=nope"): "display",       # a bad filter: answered (400) once the token is taken
    ("POST", "/bets"): "croupier",
    ("DELETE", "/bets/B000001"): "croupier",
    ("POST", "/table/open"): "chef",
    ("POST", "/table/close"): "chef",
    ("POST", "/table/call"): "croupier",
    ("POST", "/wheel/accept"): "chef",
    ("POST", "/bets/B000001/resolve"): "chef",
    ("POST", "/bets/B000001/consent"): "chef",
    ("GET", "/audit"): "chef",
    ("GET", "/table/limits"): "display",
    ("PUT", "/table/limits"): "admin",
    ("PUT", "/wheel/settings"): "admin",
    ("GET", "/wheel/settings/requests"): "admin",
    ("POST", "/wheel/settings/requests/r1/approve"): "admin",
    ("POST", "/wheel/time"): "admin",
    ("GET", "/alerts"): "chef",                     # the pit's routes (api/pages.py)
    ("POST", "/alerts/1/ack"): "chef",
    ("GET", "/table/croupier"): "display",
    ("GET", "/table/display"): "display",
    ("GET", "/me"): "display",
    ("GET", "/games"): "display",
    ("PUT", "/table/croupier"): "chef",
    ("GET", "/stats/analysis"): "chef",
    ("GET", "/stats/files/report.pdf"): "chef",
    ("POST", "/slips"): "terminal",                 # a terminal's slips (api/slips.py)
    ("GET", "/slips/S000001"): "terminal",
    ("DELETE", "/slips/S000001"): "terminal",
}
ROLES = ("display", "terminal", "croupier", "chef", "admin")
BODIES = {"/bets": {"player": "ann", "type": "rouge", "stake": 500}, "/wheel/settings": {"name": "min_laps", "value": 5},
          "/bets/B000001/resolve": {"action": "refund"}, "/table/limits": {"plein": {"min": 100}},
          "/alerts/1/ack": {"comment": "vu"}, "/table/croupier": {"croupier": "Marie"},
          "/slips": {"player": "ann", "bets": [{"type": "rouge", "stake": 500}]}}


def test_the_table_lists_every_route_of_the_document(table):
    doc = table.client.get("/openapi.json").json()
    documented = {(m.upper(), p) for p, item in doc["paths"].items() for m in item if m in ("get", "post", "put", "delete")}
    listed = {(m, p.replace("B000001", "{bid}").replace("/spins/1", "/spins/{spin}").replace("/alerts/1/", "/alerts/{aid}/")
               .replace("report.pdf", "{name}").replace("S000001", "{sid}").replace("/requests/r1/", "/requests/{rid}/")
               .split("?")[0]) for m, p in ROUTES}
    assert documented | {("GET", "/openapi.json")} == listed


@pytest.mark.parametrize("method,path", sorted(ROUTES))
@pytest.mark.parametrize("role", (None,) + ROLES)
def test_role_on_route(table, role, method, path):
    need = ROUTES[(method, path)]
    table.call("croupier", "POST", "/bets", json=BODIES["/bets"])          # B000001 exists
    r = table.call(role, method, path, json=BODIES.get(path) if method in ("POST", "PUT") else None)
    if need is None or (role is not None and ROLES.index(role) >= ROLES.index(need)):
        assert r.status_code not in (401, 403), r.text
    elif role is None:
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
    else:
        assert r.status_code == 403 and r.json()["error"] == "forbidden"
        if method != "GET":
            row = table.call("admin", "GET", "/audit").json()[0]
            assert (row["who"], row["role"], row["done"]) == (f"{role}-1", role, False)


def test_a_revoked_token_is_refused_at_once(table):
    assert table.call("chef", "GET", "/state").status_code == 200
    assert table.host.tokens.revoke("chef-1")
    assert table.call("chef", "GET", "/state").status_code == 401


def test_a_token_revoked_by_the_command_is_refused_at_the_next_request(table, tmp_path):
    """`cylindre token revoke` writes the journal from its own process, on its own connection, while
    the daemon runs: the daemon's token reader sees it at the next request (no cache to go stale)."""
    from host_tools.cli import main
    assert table.call("croupier", "GET", "/state").status_code == 200
    assert main(["token", "--journal", str(tmp_path / "j.sqlite"), "revoke", "croupier-1"]) == 0
    assert table.call("croupier", "GET", "/state").status_code == 401
    assert table.call("croupier", "POST", "/bets", json=BODIES["/bets"]).status_code == 401
    assert table.daemon.table.bets() == []


def test_tokens_are_read_from_a_journal_whose_path_has_uri_characters(tmp_path):
    from apikit import Table
    t = Table(tmp_path / "a?b#c%20 d.sqlite")
    try:
        assert t.call("display", "GET", "/state").status_code == 200
        assert t.host.tokens.revoke("display-1")
        assert t.call("display", "GET", "/state").status_code == 401
    finally:
        t.close()


def test_a_made_up_or_malformed_token_is_refused(table):
    for value in ("Bearer cyl_" + "A" * 43, "Bearer " + table.tokens["admin"] + "x", "Basic YWRtaW46YWRtaW4=", "Bearer"):
        r = table.client.post("/table/close", headers={"Authorization": value})
        assert r.status_code == 401, value
    assert table.daemon.table.state()["phase"] == "betting"
