"""The table app's behaviour: the guard, the error codes, money as integer cents, the audit trail,
the recall's audit rows, metrics, health; the config file; the key and journal modes; tokens."""

import os
import sqlite3
import stat

import pytest

from apikit import link_up, served, table  # noqa: F401  (fixture)
from host_tools.table import config
from host_tools.table.api.auth import digest
from host_tools.table.wheel.keys import KeyError_, load_key, new_key

BET = {"player": "ann", "type": "plein", "numbers": [17], "stake": 500}


# -- the guard --------------------------------------------------------------------------------------
def test_a_foreign_host_is_misdirected_dns_rebinding(table):
    r = table.call("admin", "GET", "/state", headers={"Host": "attacker.example:8737"})
    assert r.status_code == 421 and r.json()["error"] == "misdirected"
    assert table.call("admin", "GET", "/state", headers={"Host": "127.0.0.1:8737"}).status_code == 200


def test_a_cross_origin_request_is_refused_even_with_a_token(table):
    r = table.call("admin", "POST", "/table/close", headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and r.json()["error"] == "cross_origin"
    assert table.daemon.table.state()["phase"] == "betting"


def test_a_text_plain_post_is_refused(table):
    r = table.call("croupier", "POST", "/bets", content=b'{"player": "ann", "type": "rouge", "stake": 100}',
                   headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and table.daemon.table.bets() == []


def test_cors_is_off_unless_configured(tmp_path):
    from apikit import Table
    off = Table(tmp_path / "a.sqlite")
    on = Table(tmp_path / "b.sqlite", conf={"cors_origins": ["https://pit.example"]})
    try:
        pre = {"Origin": "https://pit.example", "Access-Control-Request-Method": "POST"}
        assert "access-control-allow-origin" not in off.client.options("/bets", headers=pre).headers
        r = on.client.options("/bets", headers={**pre, "Access-Control-Request-Headers": "Authorization"})
        assert r.headers["access-control-allow-origin"] == "https://pit.example"
        assert on.call("display", "GET", "/state", headers={"Origin": "https://pit.example"}).status_code == 200
    finally:
        off.close()
        on.close()


@pytest.mark.parametrize("raw,code", [
    (b"x" * 20000, 413),
    (b"[" * 40 + b"]" * 40, 400),
    (b'{"player": "a", "type": "plein", "numbers": [1], "stake": 1' + b"0" * 40 + b"}", 400),
    (b'{"player": "a", "type": "rouge", "stake": NaN}', 400),
    (b"\xff\xfe", 400),
    (b'{"player": "a", "type": "rouge", "stake": 1e3}', 400),
    (b'{"player": "a", "type": "rouge", "stake": "100"}', 400),
    (b'{"player": "a", "type": "rouge", "stake": true}', 400),
    (b'{"player": "a", "type": "rouge", "stake": 100, "house_edge": 0}', 400),
])
def test_a_bad_body_is_a_4xx_and_no_bet(table, raw, code):
    r = table.call("croupier", "POST", "/bets", content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == code and set(r.json()) == {"error", "message"}
    assert table.daemon.table.bets() == []


def test_a_bet_without_a_body_is_a_400_invalid_bet(table):
    for kw in ({}, {"content": b"", "headers": {"Content-Type": "application/json"}}):
        r = table.call("croupier", "POST", "/bets", **kw)
        assert r.status_code == 400 and r.json()["error"] == "invalid_bet", kw
    assert table.daemon.table.bets() == []


def test_answers_go_out_at_once_tcp_nodelay(served):
    """The daemon's listening socket is made with proto 0, so asyncio leaves Nagle on: an answer's
    head and body then went as two segments, the body held until the client's delayed ACK (40 ms a
    request). Each connection the server takes has TCP_NODELAY."""
    import socket as s
    with s.create_connection(("127.0.0.1", served.port), timeout=5) as c:
        c.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert c.recv(65536).startswith(b"HTTP/1.1 ")
        conns = list(served.served.server.server_state.connections)
        assert conns
        for proto in conns:
            sock = proto.transport.get_extra_info("socket")
            assert sock.getsockopt(s.IPPROTO_TCP, s.TCP_NODELAY) != 0


# -- the same semantics as before -------------------------------------------------------------------
def test_a_bet_placed_read_withdrawn(table):
    r = table.call("croupier", "POST", "/bets", json=BET)
    assert r.status_code == 201 and r.json()["stake"] == 500
    bid = r.json()["id"]
    assert table.call("croupier", "GET", f"/bets/{bid}").json()["status"] == "open"
    assert table.call("croupier", "DELETE", f"/bets/{bid}").json() == {"id": bid, "status": "cancelled"}
    r = table.call("croupier", "DELETE", f"/bets/{bid}")
    assert r.status_code == 409 and r.json()["error"] == "not_open"
    assert table.call("croupier", "GET", "/bets/B999999").status_code == 404


def test_a_poussette_is_409_with_the_recorded_bet(table):
    table.event(1, {"ev": "launch", "t": 1, "spin": 1})
    table.event(2, {"ev": "rnvp", "t": 2, "spin": 1})
    r = table.call("croupier", "POST", "/bets", json=BET)
    assert r.status_code == 409 and r.json()["error"] == "poussette" and r.json()["bet"]["status"] == "refused"


def test_a_wheel_refusal_is_502_and_a_silence_504(table):
    r = table.call("admin", "PUT", "/wheel/settings", json={"name": "status_us", "value": 0})
    assert r.status_code == 502 and r.json()["error"] == "wheel_refused"
    table.daemon.command = lambda cmd, args=None, timeout=5.0: None
    assert table.call("display", "GET", "/wheel/settings").status_code == 504


# -- the audit trail --------------------------------------------------------------------------------
def test_a_setting_change_is_audited_with_who_before_after_and_the_wheels_answer(table):
    table.wheel.settings["status_us"] = 500000
    r = table.call("admin", "PUT", "/wheel/settings", json={"name": "status_us", "value": 250000})
    assert r.status_code == 200 and r.json()["status_us"] == 250000
    table.call("admin", "PUT", "/wheel/settings", json={"name": "status_us", "value": 0})
    rows = table.call("chef", "GET", "/audit?action=wheel_setting").json()
    assert [(x["who"], x["target"], x["before"], x["after"], x["done"]) for x in rows] == [
        ("admin-1", "status_us", 250000, 0, False), ("admin-1", "status_us", 500000, 250000, True)]
    assert rows[0]["answer"]["error"] == "wheel_refused" and rows[1]["answer"] == {"ok": True}


def test_a_regulatory_setting_takes_two_people_at_the_tables_api(table):
    """The review's attempt: one admin alone set min_laps 1, rnvp_lead_laps_x10 5 and
    void_rotor_not_reversed 0 (Article 53's void off), each 200. Now each is a request (202) that
    the same person, whatever the case of their name, cannot approve; another admin does, audited."""
    bob = table.host.tokens.add("bob", "admin")
    shouting = "cyl_" + "B" * 43                     # BOB is no longer made beside bob; a journal may hold one
    with table.host.j.lock:
        table.host.j.db.execute("INSERT INTO tokens (name, role, hash, created) VALUES ('BOB', 'admin', ?, 0)",
                                (digest(shouting),))
    other = table.host.tokens.add("carla", "admin")
    table.wheel.settings.update(rnvp_lead_laps_x10=30)
    strict = table.wheel

    def wheel(cmd, args=None, timeout=5.0):          # takes 0 too (the real wheel's bounds are checked first)
        if cmd == "set_setting" and args["value"] == 0:
            strict.sent.append((cmd, args))
            strict.settings[args["name"]] = 0
            return {"ok": True, "result": dict(strict.settings)}
        return strict(cmd, args, timeout)
    table.daemon.command = wheel

    def call(token, method, path, **kw):
        return table.client.request(method, path, headers={"Authorization": "Bearer " + token}, **kw)
    for name, value in (("min_laps", 1), ("rnvp_lead_laps_x10", 5), ("void_rotor_not_reversed", 0)):
        before = dict(table.wheel.settings)
        r = call(bob, "PUT", "/wheel/settings", json={"name": name, "value": value})
        assert r.status_code == 202 and r.json()["state"] == "pending", r.json()
        assert table.wheel.settings == before and ("set_setting", {"name": name, "value": value}) not in table.wheel.sent
        rid = r.json()["request"]
        for same in (bob, shouting):
            r = call(same, "POST", f"/wheel/settings/requests/{rid}/approve")
            assert r.status_code == 409 and r.json()["error"] == "same_user"
        r = call(other, "POST", f"/wheel/settings/requests/{rid}/approve")
        assert r.status_code == 200 and r.json()["state"] == "applied" and r.json()["requested_by"] == "bob"
        assert ("set_setting", {"name": name, "value": value}) in table.wheel.sent
        assert call(other, "POST", f"/wheel/settings/requests/{rid}/approve").json()["error"] == "not_pending"
    assert table.call("admin", "PUT", "/wheel/settings", json={"name": "min_laps", "value": 99}).status_code == 400
    rows = table.call("chef", "GET", "/audit?limit=40").json()
    acts = [(x["who"], x["action"], x["done"]) for x in rows]
    assert ("bob", "setting_request", True) in acts and ("BOB", "setting_approve", False) in acts
    assert ("carla", "wheel_setting", True) in acts
    applied = [x for x in rows if x["action"] == "wheel_setting" and x["done"]]
    assert all(x["answer"]["requested_by"] == "bob" for x in applied)
    listed = call(other, "GET", "/wheel/settings/requests").json()
    assert [x["state"] for x in listed] == ["applied"] * 3


def test_a_throttled_address_still_serves_its_valid_tokens(table):
    """The review's attempt: after a brute force from one address, a valid display token from the
    same address got 429. The throttle slows unknown tokens only."""
    for i in range(30):
        table.client.get("/state", headers={"Authorization": "Bearer cyl_guess%d" % i})
    assert table.client.get("/state", headers={"Authorization": "Bearer cyl_guess-again"}).status_code == 429
    assert table.call("display", "GET", "/state").status_code == 200


def test_the_recall_of_a_spin_shows_the_actions_that_touched_it(table):
    table.event(1, {"ev": "launch", "t": 1, "spin": 7})
    table.call("chef", "POST", "/table/close")
    table.call("chef", "POST", "/table/open")
    recall = table.call("croupier", "GET", "/spins/7").json()
    assert [(a["action"], a["before"], a["after"], a["who"]) for a in recall["audit"]] == [
        ("table_open", {"phase": "closed"}, {"phase": "betting"}, "chef-1"),
        ("table_close", {"phase": "betting"}, {"phase": "closed"}, "chef-1")]


def test_the_audit_is_for_chef_and_admin(table):
    assert table.call("croupier", "GET", "/audit").status_code == 403
    assert table.call("chef", "GET", "/audit").status_code == 200


# -- operations -------------------------------------------------------------------------------------
def test_metrics_count_bets_spins_voids_and_settlement_latency(table):
    table.call("croupier", "POST", "/bets", json=BET)
    table.event(1, {"ev": "launch", "t": 1, "spin": 1})
    table.event(2, {"ev": "void", "t": 2, "spin": 1, "reason": "same_direction"})
    table.event(3, {"ev": "launch", "t": 3, "spin": 2})
    table.event(4, {"ev": "rnvp", "t": 4, "spin": 2})
    table.call("croupier", "POST", "/bets", json=BET)          # poussette
    table.event(5, {"ev": "result", "t": 5, "spin": 2, "number": 17})
    text = table.call("display", "GET", "/metrics").text
    for line in ('cylindre_bets_placed_total 1.0', 'cylindre_bets_refused_total{reason="poussette"} 1.0',
                 'cylindre_spins_total 1.0', 'cylindre_voids_total{reason="same_direction"} 1.0',
                 'cylindre_settlement_seconds_count 1.0', 'cylindre_link_up 0.0'):
        assert line in text.splitlines(), line


def test_health_says_why_it_is_unavailable(table):
    r = table.client.get("/health")
    assert r.status_code == 503 and r.json()["ok"] is False
    assert r.json()["reasons"] == ["link down: port none absent : câble débranché, cylindre éteint ou "
                                   "mauvais chemin ?"]
    link_up(table)
    assert table.client.get("/health").json() == {"ok": True, "reasons": []}

    def full_disk():
        raise sqlite3.OperationalError("database or disk is full")
    table.daemon.j.tx = full_disk
    r = table.client.get("/health")
    assert r.status_code == 503 and r.json()["reasons"] == ["journal not writable: database or disk is full"]


# -- config, keys, journal modes --------------------------------------------------------------------
def test_config_file_then_flags(tmp_path):
    f = tmp_path / "table.toml"
    f.write_text('port = "/dev/ttyACM0"\nwheel = "T7"\nhttp = "127.0.0.1:9000"\nallowed_hosts = ["pit.local"]\n')
    c = config.merge(config.load(f), {"wheel": "T8", "journal": None})
    assert (c["port"], c["wheel"], c["http"], c["journal"], c["allowed_hosts"]) == (
        "/dev/ttyACM0", "T8", "127.0.0.1:9000", "var/journal.sqlite", ["pit.local"])


@pytest.mark.parametrize("text,word", [('tls_crt = "a.pem"', "unknown key"), ("baud = \"fast\"", "baud"),
                                       ('http = "0.0.0.0:8737"', "non-loopback"), ("= broken", "not TOML"),
                                       ('tls_cert = "a.pem"', "go together")])
def test_a_wrong_config_is_refused_with_its_key(tmp_path, text, word):
    f = tmp_path / "table.toml"
    f.write_text(text + "\n")
    with pytest.raises(config.ConfigError, match=word):
        config.merge(config.load(f), {})


def test_a_non_loopback_bind_needs_tls_or_a_proxy():
    assert config.merge(config.defaults(), {"http": "0.0.0.0:8737", "behind_proxy": True})["behind_proxy"]
    assert config.merge(config.defaults(), {"http": "[::1]:8737"})
    with pytest.raises(config.ConfigError):
        config.merge(config.defaults(), {"http": "10.0.0.5:8737"})


def test_a_key_others_may_read_is_refused(tmp_path):
    p = tmp_path / "T1.key"
    new_key(p)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600 and len(load_key(p)) == 32
    os.chmod(p, 0o644)
    with pytest.raises(KeyError_, match="chmod 600"):
        load_key(p)


def test_token_cli_add_list_revoke(tmp_path, capsys):
    from host_tools.cli import main
    j = str(tmp_path / "j.sqlite")
    assert main(["token", "--journal", j, "add", "marie", "--role", "chef", "--create"]) == 0
    secret = capsys.readouterr().out.strip()
    assert secret.startswith("cyl_") and len(secret) > 40
    assert stat.S_IMODE(os.stat(j).st_mode) == 0o600
    assert main(["token", "--journal", j, "add", "marie", "--role", "chef"]) == 2      # one live token a name
    assert main(["token", "--journal", j, "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"role": "chef"' in out and secret not in out
    assert secret not in open(j, "rb").read().decode("latin-1")
    assert sqlite3.connect(j).execute("SELECT COUNT(*) FROM tokens WHERE hash LIKE 'cyl_%'").fetchone()[0] == 0
    assert main(["token", "--journal", j, "revoke", "marie"]) == 0
    assert main(["token", "--journal", j, "revoke", "marie"]) == 1


def test_the_example_config_of_packaging_is_valid():
    from pathlib import Path
    c = config.merge(config.load(Path(__file__).parents[3] / "packaging" / "table.toml"), {})
    assert (c["http"], c["log_format"], c["wheel"]) == ("127.0.0.1:8737", "json", "T1")


def test_the_documented_bet_has_exactly_the_fields_the_table_takes(table):
    from host_tools.table.game.table import BET_FIELDS
    doc = table.client.get("/openapi.json").json()
    bet = doc["components"]["schemas"]["BetIn"]
    assert set(bet["properties"]) == set(BET_FIELDS) and bet["additionalProperties"] is False
    post = doc["paths"]["/bets"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/BetIn"
    assert [p["name"] for p in post["parameters"]] == ["idempotency-key"]


# -- limits -----------------------------------------------------------------------------------------
def test_limits_change_between_spins_only_audited_and_kept_over_a_restart(tmp_path):
    from apikit import Table
    t = Table(tmp_path / "j.sqlite")
    try:
        assert t.call("display", "GET", "/table/limits").json()["plein"] == {"min": 50, "max": 100000}
        r = t.call("admin", "PUT", "/table/limits", json={"plein": {"min": 500}, "rouge": {"max": 50000}})
        assert r.status_code == 200 and r.json()["plein"] == {"min": 500, "max": 100000}
        assert r.json()["simple"] == {"min": 50, "max": 50000}
        small = t.call("croupier", "POST", "/bets", json={"player": "a", "type": "plein", "numbers": [3], "stake": 100})
        assert small.status_code == 400 and "minimum" in small.json()["message"]
        row = t.call("admin", "GET", "/audit?action=table_limits").json()[0]
        assert (row["who"], row["before"]["plein"], row["after"]["plein"]) == ("admin-1", {"min": 50, "max": 100000},
                                                                             {"min": 500, "max": 100000})
        for bad in ({"plein": {"min": 900, "max": 800}}, {"vert": {"min": 1}}, {"plein": {"min": "5"}}):
            r = t.call("admin", "PUT", "/table/limits", json=bad)
            assert r.status_code == 400 and r.json()["error"] in ("bad_request", "bad_json"), (bad, r.text)
        t.event(1, {"ev": "launch", "t": 1, "spin": 1})
        t.event(2, {"ev": "rnvp", "t": 2, "spin": 1})
        r = t.call("admin", "PUT", "/table/limits", json={"plein": {"min": 50}})
        assert r.status_code == 409 and r.json()["error"] == "spin_in_progress"
    finally:
        t.close()
    from apikit import NoPort
    from host_tools.table.daemon.host import TableHost
    again = TableHost.build(NoPort(), bytes(32), tmp_path / "j.sqlite")     # a restart: the journaled limits apply
    try:
        assert again.table.limits.min("plein") == 500
    finally:
        again.j.close()


def test_a_limits_file_at_start_wins_over_the_journal(tmp_path):
    from cylindre.rules.limits import Limits
    from host_tools.table.daemon.host import TableHost
    from apikit import NoPort
    f = TableHost.build(NoPort(), bytes(32), tmp_path / "j.sqlite")
    f.limits.save(Limits().updated({"plein": {"min": 700}}).to_json())
    f.j.close()
    g = TableHost.build(NoPort(), bytes(32), tmp_path / "j.sqlite", limits=Limits().updated({"plein": {"min": 200}}))
    try:
        assert g.table.limits.min("plein") == 200 and g.limits.load()["plein"]["min"] == 200
    finally:
        g.j.close()
