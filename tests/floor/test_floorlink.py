"""The floor contract's plain functions (host_tools/floorlink): subjects, envelope, signed commands."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from host_tools.floor.link import command as C
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S

KEY = bytes(range(32))


def test_subjects_and_tokens():
    assert E.subject("PARIS", "T1", "result") == "cylindre.PARIS.T1.result"
    assert E.cmd_subject("PARIS", "T-2_b") == "cylindre.PARIS.T-2_b.cmd"
    assert E.parse_subject("cylindre.PARIS.T1.heartbeat") == ("PARIS", "T1", "heartbeat")
    for bad in ("T.1", "T*", ">", "", "x" * 33, "T 1", None, 7):
        with pytest.raises(E.EnvelopeError):
            E.subject("S", bad, "result")
    with pytest.raises(E.EnvelopeError):
        E.subject("S", "T1", "nonsense")
    for bad in ("cylindre.S.T1", "other.S.T1.result", "cylindre.S.T1.result.x", "cylindre.S.T.1.result"):
        with pytest.raises(E.EnvelopeError):
            E.parse_subject(bad)
    assert S.kv_key("PARIS", "T1") == "PARIS.T1"
    assert E.msg_id("T1", 42, "0123456789abcdef") == "T1:0123456789abcdef:42"
    assert E.msg_id("T1", 42) == "T1:42" and E.heartbeat_msg_id("T1", 1700000000123) == "T1:hb:1700000000123"


def test_envelope_round_trip_and_refusals():
    raw = E.build("S", "T1", "PICO-1", 7, "result", 1.5, {"spin": 3, "number": 17}, "0123456789abcdef")
    env = E.parse(raw)
    assert env == {"v": 1, "site": "S", "table": "T1", "serial": "PICO-1", "journal": "0123456789abcdef",
                   "event_id": 7, "kind": "result", "at": 1.5, "body": {"spin": 3, "number": 17}}
    good = json.loads(raw)
    older = {k: v for k, v in good.items() if k != "journal"}      # a table from before journal identities
    assert E.parse(json.dumps(older))["journal"] == ""
    for field, value in (("v", 2), ("journal", "a:b"), ("journal", 7), ("journal", "x" * 33), ("event_id", -1), ("event_id", True), ("event_id", "7"), ("kind", "x"),
                         ("at", "now"), ("body", []), ("serial", ""), ("table", "a.b")):
        with pytest.raises(E.EnvelopeError):
            E.parse(json.dumps({**good, field: value}))
    with pytest.raises(E.EnvelopeError):
        E.parse(b"{not json")
    with pytest.raises(E.EnvelopeError):
        E.parse(json.dumps({k: v for k, v in good.items() if k != "body"}))
    with pytest.raises(ValueError):
        E.build("S", "T1", None, 1, "result", float("nan"), {})


def test_what_no_store_takes_is_refused_by_the_contract():
    good = json.loads(E.build("S", "T1", "PICO-1", 7, "result", 1.5, {"spin": 3, "number": 17}))
    deep = 1
    for _ in range(E.MAX_DEPTH + 1):
        deep = [deep]
    deep = {"a": deep}
    for field, value in (("event_id", 2 ** 63), ("event_id", 2 ** 64), ("prev", -1), ("prev", 2 ** 63),
                         ("serial", "a\u0000b"), ("serial", "\ud800"), ("serial", "x" * 65), ("serial", "é"),
                         ("table", "T1\n"), ("body", deep)):
        with pytest.raises(E.EnvelopeError):
            E.parse(json.dumps({**good, field: value}))
    assert E.parse(json.dumps({**good, "event_id": 2 ** 63 - 1, "prev": 5}))["prev"] == 5
    with pytest.raises(E.EnvelopeError, match="bytes"):
        E.parse(json.dumps({**good, "body": {"pad": "x" * E.MAX_PAYLOAD}}))
    with pytest.raises(E.EnvelopeError, match="JSON"):
        E.parse(b'[' * 100_000)                         # too deep for any parser: refused, not a crash


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=400), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=30).map(lambda v: json.dumps(v).encode())))
def test_no_payload_raises_anything_but_a_refusal(payload):
    """Whatever bytes a table publishes, the contract answers an envelope or EnvelopeError."""
    try:
        E.parse(payload)
    except E.EnvelopeError:
        pass


def test_a_tables_message_ids_are_its_own():
    """With its NATS password a table's ids carry a tag no other table can make; the same event
    gets the same id after a restart (the broker still drops a resend)."""
    mine = E.msg_id("T2", 42, "0123456789abcdef", "secret-of-T2")
    assert mine.startswith("T2:0123456789abcdef:42:") and len(mine.rsplit(":", 1)[1]) == 32
    assert mine == E.msg_id("T2", 42, "0123456789abcdef", "secret-of-T2")
    assert mine != E.msg_id("T2", 42, "0123456789abcdef", "secret-of-T1")
    assert E.msg_id("T2", 42, "", "s").startswith("T2:42:")


def test_command_signed_verified_once_and_fresh():
    now = 1_700_000_000.0
    req = C.request("open", {}, "marie", "pit_boss", KEY, now=now)
    replay = C.Replay()
    assert C.verify(req, KEY, now + 5, replay)["op"] == "open"
    with pytest.raises(C.CommandError) as e:
        C.verify(req, KEY, now + 6, replay)
    assert e.value.code == "replayed"
    # canonical: key order and spacing do not matter, content does
    req2 = C.request("set_limits", {"plein": {"max": 500}, "cheval": {"min": 100}}, "marie", "director", KEY, now=now)
    shuffled = json.loads(json.dumps(dict(reversed(list(req2.items())))))
    assert C.verify(shuffled, KEY, now, C.Replay())
    forged = dict(req2, args={"plein": {"max": 50000}})
    with pytest.raises(C.CommandError) as e:
        C.verify(forged, KEY, now, C.Replay())
    assert e.value.code == "bad_signature"
    with pytest.raises(C.CommandError) as e:
        C.verify(C.sign(dict(req2, who="eve"), bytes(32)), KEY, now, C.Replay())
    assert e.value.code == "bad_signature"
    for dt in (31, -31):
        with pytest.raises(C.CommandError) as e:
            C.verify(C.request("close", {}, "marie", "pit_boss", KEY, now=now + dt), KEY, now, C.Replay())
        assert e.value.code == "stale"


def test_forged_request_does_not_spend_its_id():
    now = 1_700_000_000.0
    real = C.request("open", {}, "marie", "pit_boss", KEY, now=now)
    replay = C.Replay()
    with pytest.raises(C.CommandError):
        C.verify(dict(real, sig="0" * 64), KEY, now, replay)
    assert C.verify(real, KEY, now, replay)


def test_command_shape_refusals():
    now = 1_700_000_000.0
    base = C.request("open", {}, "marie", "pit_boss", KEY, now=now)
    for field, value, code in (("op", "drop_table", "unknown_op"), ("role", "croupier", "bad_request"),
                               ("who", "a b", "bad_request"), ("args", [], "bad_request"), ("v", 2, "bad_request"),
                               ("id", "x", "bad_request"), ("at", "now", "bad_request"), ("sig", "zz", "bad_signature")):
        req = dict(base, **{field: value})
        with pytest.raises(C.CommandError) as e:
            C.verify(req if field == "sig" else C.sign(req, KEY), KEY, now, C.Replay())
        assert e.value.code == code, field
    with pytest.raises(C.CommandError):
        C.verify("open", KEY, now, C.Replay())
    with pytest.raises(C.CommandError):
        C.verify(C.sign(dict(base, extra=1), KEY), KEY, now, C.Replay())
    assert C.table_role("pit_boss") == "chef" and C.table_role("director") == "admin"
    assert C.table_role("surveillance") == "display"


def test_replay_forgets_only_what_is_stale_anyway():
    r = C.Replay(window_s=30)
    for i in range(100):
        assert not r.seen(f"id-{i:04d}", 1000.0 + i)
    assert r.seen("id-0099", 1100.0)
    assert not r.seen("fresh-one", 2000.0)          # a sweep runs; the old ids go
    assert "id-0000" not in r._seen and r.seen("fresh-one", 2000.0)
