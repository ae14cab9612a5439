"""Hostile clients on the HTTP API (issue 8): every bad input gets a 4xx with a reason, never a
500 and never a stored body; a retry with the same Idempotency-Key places nothing twice."""

import json
import socket

import pytest

from apikit import Served, Table

BET = {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000}


@pytest.fixture(params=["httptools", "h11"])
def srv(tmp_path, request):
    """The table served by the daemon's protocol on httptools, and by the one on h11 (its fallback)."""
    from host_tools.table.api.server import JsonH11, http_protocol
    http = http_protocol() if request.param == "httptools" else JsonH11
    if request.param == "httptools":
        assert http is not JsonH11, "httptools is a dependency (pyproject.toml)"
    t = Table(tmp_path / "j.sqlite", conf={"http": "127.0.0.1:0"})
    s = Served(t.app, http=http)
    _auth[0] = t.tokens
    yield t.daemon, s.port
    t.host.events.close()
    s.stop()
    t.close()


_auth = [None]          # the tokens of the table under test, by role


def _raw(port, head, body=b"", role="chef"):
    """Send bytes as they are (with a token of `role`); return (status, JSON answer)."""
    auth = b"\r\nAuthorization: Bearer " + _auth[0][role].encode()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(head + auth + b"\r\nConnection: close\r\n\r\n" + body)
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(rest)


def _post(port, body: bytes, extra=b""):
    return _raw(port, b"POST /bets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d%s"
                % (len(body), extra), body, role="croupier")


@pytest.mark.parametrize("length", [b"-1", b"abc", b"1e3"])
def test_a_malformed_content_length_is_refused_and_nothing_stored(srv, length):
    d, port = srv
    st, err = _raw(port, b"POST /bets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + length, b"x" * (1 << 20))
    assert st == 400 and "Content-Length" in err["message"]
    assert not d.table.bets()


@pytest.mark.parametrize("body,word", [
    (b"[" * 5000 + b"]" * 5000, "nested"),
    (b'{"player": "a", "type": "plein", "numbers": [' + b"9" * 5000 + b'], "stake": 1}', "JSON"),
    (b'{"player": "a", "type": "plein", "numbers": [17], "stake": 1000, "carried": true}', "carried"),
    (b'{"player": "a", "type": "plein", "numbers": [17], "stake": 1000, "colour": 1}', "colour"),
    (b'{"player": "a\\nINFO forged", "type": "rouge", "stake": 1000}', "control characters"),
])
def test_hostile_bodies_get_a_400_with_the_reason(srv, body, word):
    d, port = srv
    st, err = _post(port, body)
    assert st == 400 and word in err["message"], err
    assert not d.table.bets()


def test_a_retry_with_the_same_idempotency_key_returns_the_first_answer(srv):
    d, port = srv
    body = json.dumps(BET).encode()
    st1, a = _post(port, body, b"\r\nIdempotency-Key: 7f3a-01")
    st2, b = _post(port, body, b"\r\nIdempotency-Key: 7f3a-01")
    assert st1 == st2 == 201 and a == b
    assert len(d.table.bets()) == 1


def test_a_retry_with_the_same_key_and_another_body_is_a_422_naming_the_first_bet(srv):
    d, port = srv
    st1, a = _post(port, json.dumps(BET).encode(), b"\r\nIdempotency-Key: 7f3a-02")
    st2, b = _post(port, json.dumps(dict(BET, stake=500000)).encode(), b"\r\nIdempotency-Key: 7f3a-02")
    assert st1 == 201 and st2 == 422, b
    assert b["error"] == "idempotency_mismatch" and b["bet"]["id"] == a["id"] and a["id"] in b["message"]
    assert [x["stake"] for x in d.table.bets()] == [1000]


def test_the_chef_consents_to_a_straddle_through_its_own_endpoint(srv):
    d, port = srv
    st, b = _post(port, json.dumps({"player": "bo", "type": "colonne", "which": [1, 2], "stake": 2000}).encode())
    assert st == 201 and b["status"] == "awaiting_consent"
    st, ok = _raw(port, b"POST /bets/%s/consent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0" % b["id"].encode())
    assert st == 200 and ok["status"] == "open" and ok["bet"]["consent"] is True
