"""Identities at the table: failed authentication is throttled per client address, logged and
audited; a bet belongs to the token that placed it (chef and admin act on any); a display token
(a public screen) reads what a tote board shows, never the players' bets."""

import logging

import pytest

from apikit import Table, served, table  # noqa: F401  (fixtures)
from host_tools.table.api.server import server
from host_tools.table.api.auth import TokenError, digest

BET = {"player": "ann", "type": "rouge", "stake": 500}
WRONG = "cyl_" + "A" * 43


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


# -- (a) failed authentication is throttled -----------------------------------------------------------
def test_a_brute_force_of_tokens_is_throttled_logged_and_audited(table, caplog):
    clock = Clock()
    table.app.state.throttle.clock = clock
    with caplog.at_level(logging.INFO, logger="cylindre.api"):
        codes = [table.client.get("/state", headers={"Authorization": f"Bearer cyl_{n:043d}"}).status_code
                 for n in range(200)]
    burst = table.app.state.throttle.burst
    assert codes[:burst] == [401] * burst and codes[burst:] == [429] * (200 - burst)
    r = table.client.get("/state", headers={"Authorization": "Bearer cyl_" + "9" * 43})
    assert r.status_code == 429 and r.json()["error"] == "too_many_failures"     # an unknown token waits
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    lines = [rec.getMessage() for rec in caplog.records if "testclient" in rec.getMessage()]
    assert 1 <= len(lines) <= 3, lines                          # rate-limited: not 200 lines
    assert not any("cyl_0" in line for line in lines)           # never the token
    # the admin shares the address: a live token is never throttled
    assert table.client.get("/state", headers={"Authorization": "Bearer " + table.tokens["admin"]}).status_code == 200
    rows = table.call("admin", "GET", "/audit?action=auth_throttled").json()
    assert [(x["who"], x["target"], x["done"]) for x in rows] == [("-", "testclient", False)]
    assert rows[0]["after"]["failures"] == burst


def test_the_bucket_refills_with_time_and_a_missing_token_costs_nothing(table):
    clock = Clock()
    th = table.app.state.throttle
    th.clock = clock
    for _ in range(50):
        assert table.client.get("/state").status_code == 401                # no token: not a guess
    for _ in range(th.burst):
        assert table.client.get("/state", headers={"Authorization": "Bearer " + WRONG}).status_code == 401
    assert table.client.get("/state", headers={"Authorization": "Bearer " + WRONG}).status_code == 429
    clock.t += th.refill_s                                                    # one more guess allowed
    assert table.client.get("/state", headers={"Authorization": "Bearer " + WRONG}).status_code == 401
    assert table.client.get("/state", headers={"Authorization": "Bearer " + WRONG}).status_code == 429
    clock.t += th.refill_s
    assert table.call("display", "GET", "/state").status_code == 200


def test_the_throttle_core_on_a_simulated_clock():
    from host_tools.table.api.throttle import Throttle, client_of
    clock = Clock()
    th = Throttle(burst=3, refill_s=10, log_every_s=60, max_clients=2, clock=clock)
    said = [th.failed("a")[0] for _ in range(3)]
    assert said[0] and said[1] is None and "3 unknown tokens from a" in said[2]
    lines = []
    for _ in range(110):                                    # 66 s of guesses, 0.6 s apart
        clock.t += 0.6
        wait, line = th.check("a")
        if wait is None:                                    # a guess the refill allows: no new audit row
            line, audited = th.failed("a")
            assert audited is None
        lines.append(line)
    said = [x for x in lines if x]
    assert len(said) == 1 and "requests refused (429)" in said[0], said
    clock.t += 3 * 10                                       # refilled: a new episode is a new audit row
    assert th.check("a") == (None, None)
    assert [th.failed("a")[1] is not None for _ in range(3)] == [False, False, True]
    th.failed("b"), th.failed("c")                          # bounded: the least recently seen goes
    assert th.check("a") == (None, None) and len(th._b) == 2
    assert client_of("2001:db8::1") == client_of("2001:db8::ffff") == "2001:db8::/64"
    assert client_of("::ffff:10.0.0.1") == "10.0.0.1" and client_of(None) == "?"


def _served(t, behind_proxy):
    import socket
    import threading
    import time
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    srv = server(t.app, behind_proxy=behind_proxy)
    th = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    while not srv.started:
        time.sleep(0.01)
    return srv, th, sock.getsockname()[1]


@pytest.mark.parametrize("behind_proxy", (False, True))
def test_the_address_is_the_proxys_word_only_behind_a_proxy(tmp_path, behind_proxy):
    """A forged X-Forwarded-For gives a new address per guess only if the daemon trusts its proxy."""
    import http.client
    t = Table(tmp_path / "j.sqlite", conf={"http": "127.0.0.1:0"})
    t.app.state.throttle.clock = Clock()
    srv, th, port = _served(t, behind_proxy)
    try:
        codes = []
        for n in range(30):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/state", headers={"Authorization": "Bearer " + WRONG, "X-Forwarded-For": f"10.0.0.{n}"})
            codes.append(c.getresponse().status)
            c.close()
        assert codes.count(429) == (0 if behind_proxy else 30 - t.app.state.throttle.burst)
    finally:
        srv.should_exit = True
        th.join(5)
        t.host.events.close()
        t.close()


# -- (b) a bet belongs to who placed it ---------------------------------------------------------------
def test_a_croupier_withdraws_only_the_bets_it_placed(table):
    other = table.host.tokens.add("croupier-2", "croupier")
    bid = table.call("croupier", "POST", "/bets", json=BET).json()["id"]
    r = table.client.delete(f"/bets/{bid}", headers={"Authorization": "Bearer " + other})
    assert r.status_code == 403 and r.json()["error"] == "not_your_bet", r.text
    assert table.call("croupier", "GET", f"/bets/{bid}").json()["status"] == "open"
    row = table.call("chef", "GET", "/audit?action=bet_cancel").json()[0]
    assert (row["who"], row["target"], row["done"]) == ("croupier-2", bid, False)
    assert row["answer"] == {"refused": "placed by croupier-1"}
    assert table.call("croupier", "DELETE", f"/bets/{bid}").status_code == 200      # its owner may
    bid = table.call("croupier", "POST", "/bets", json=BET).json()["id"]
    with pytest.raises(TokenError, match="by case alone"):                          # not made any more,
        table.host.tokens.add("CROUPIER-1", "croupier")
    shouting = "cyl_" + "S" * 43                                                    # but a journal may hold one
    with table.host.j.lock:
        table.host.j.db.execute("INSERT INTO tokens (name, role, hash, created) VALUES ('CROUPIER-1', 'croupier', ?, 0)",
                                (digest(shouting),))
    r = table.client.delete(f"/bets/{bid}", headers={"Authorization": "Bearer " + shouting})
    assert r.status_code == 200, r.text                                            # names compared without case


@pytest.mark.parametrize("role", ("chef", "admin"))
def test_the_chef_and_the_admin_withdraw_any_bet(table, role):
    bid = table.call("croupier", "POST", "/bets", json=BET).json()["id"]
    assert table.call(role, "DELETE", f"/bets/{bid}").status_code == 200
    b = table.call("chef", "GET", f"/bets/{bid}").json()
    assert b["placed_by"]["name"] == "croupier-1" and b["withdrawn_by"] == {"name": f"{role}-1", "role": role}


def test_a_bet_with_no_recorded_owner_is_withdrawn_by_a_chef_only(table):
    bid = table.daemon.table.place(dict(BET))["id"]               # placed in process: no token recorded
    assert table.call("croupier", "DELETE", f"/bets/{bid}").json()["error"] == "not_your_bet"
    assert table.call("chef", "DELETE", f"/bets/{bid}").status_code == 200


# -- (c) the display role reads what a tote board shows ----------------------------------------------
def test_a_display_token_reads_no_bet(table):
    bid = table.call("croupier", "POST", "/bets", json=BET).json()["id"]
    for path in ("/bets", f"/bets/{bid}", "/spins/1", "/bets?player=ann"):
        r = table.call("display", "GET", path)
        assert r.status_code == 403 and r.json()["error"] == "forbidden", path
    for path in ("/state", "/history", "/table/limits", "/metrics"):
        assert table.call("display", "GET", path).status_code == 200, path
    st = table.call("display", "GET", "/state").json()["table"]
    assert st["bets_on_table"] == 1 and st["stakes_on_table"] == 500     # the totals, as a tote board


def test_a_display_token_reads_no_stake_of_a_prisoner_or_a_carried_bet(table):
    """/state carried each prisoner's and each carried bet's id and stake to a display token (a
    player's bet at zero: `{"id": "B000001", "chance": "rouge", "stake": 500, ...}`)."""
    table.call("croupier", "POST", "/bets", json=BET)
    table.call("croupier", "POST", "/bets", json={"player": "bo", "type": "voisins", "unit": 200, "replay": "refaire"})
    table.event(1, {"ev": "launch", "t": 1, "spin": 1})
    table.event(2, {"ev": "rnvp", "t": 2, "spin": 1})
    table.event(3, {"ev": "result", "t": 3, "spin": 1, "number": 0})
    full = table.call("chef", "GET", "/state").json()["table"]
    assert full["prisoners"] and full["prisoners"][0]["stake"] == 500 and full["carry"]   # the chef sees them
    shown = table.call("display", "GET", "/state").json()["table"]
    for key in ("prisoners", "carry"):
        assert len(shown[key]) == len(full[key]), key
        for p in shown[key]:
            assert not {"id", "stake", "player"} & set(p), (key, p)


def test_a_display_token_is_not_streamed_the_bets(served):
    import http.client
    for kinds in ("bet", "wheel,cancel"):
        c = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
        c.request("GET", "/events?kinds=" + kinds, headers={"Authorization": "Bearer " + served.tokens["display"]})
        r = c.getresponse()
        assert r.status == 403, kinds               # (before: 200, every bet streamed with its player and stake)
        c.close()


def test_a_journal_from_before_placed_by_opens_and_its_bets_are_the_chefs_to_withdraw(tmp_path):
    """A journal whose bets have no `placed_by` column: the daemon adds it when it opens it; the old
    bets have no owner (a chef or an admin withdraws them), the new ones their token's."""
    from host_tools.table.journal.store import Journal
    path = tmp_path / "j.sqlite"
    t = Table(path)
    old = t.daemon.table.place(dict(BET))["id"]
    for name in list(t.tokens):
        t.host.tokens.revoke(f"{name}-1")                # the next Table makes its own
    t.host.events.close()
    t.close()
    j = Journal(path)
    with j.tx() as db:
        db.execute("DROP VIEW bets_now")
        db.execute("ALTER TABLE bets DROP COLUMN placed_by")
        db.execute("ALTER TABLE bets DROP COLUMN withdrawn_by")
    j.close()
    t = Table(path)                                     # re-opened: the columns are added back
    try:
        new = t.call("croupier", "POST", "/bets", json=BET).json()["id"]
        assert t.call("croupier", "GET", f"/bets/{old}").json()["placed_by"] is None
        assert t.call("croupier", "DELETE", f"/bets/{old}").json()["error"] == "not_your_bet"
        assert t.call("chef", "DELETE", f"/bets/{old}").status_code == 200
        assert t.call("croupier", "DELETE", f"/bets/{new}").status_code == 200
    finally:
        t.host.events.close()
        t.close()
