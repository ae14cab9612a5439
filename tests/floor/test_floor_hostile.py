"""A hostile table's own credentials turned against the other tables, on a real nats-server made with
`cylindre floor-creds` and the floor on its own credentials: whatever T1 publishes on the subjects
the broker lets it use (message ids, headers, its key in the bucket, envelopes), T2's events, state
and wheel stay T2's, and nothing T1 sends stops the floor for anyone (docs/floor.md, "Security").
Each attack is the one the issue's review ran; each failed on the floor before this file."""

import asyncio
import json
import time

import nats
import pytest

from host_tools.floor import natsrv
from host_tools.floor.cli import connect_options
from host_tools.floor.link import creds as K
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S
from host_tools.floor.service import FloorService
from host_tools.table.floor import outbox as O
from host_tools.table.floor.publisher import FloorLink, load_creds

from apikit import Table
from floorkit import postgres, wait  # noqa: F401 - the PostgreSQL server fixture

SITE = "PARIS"


class Site:
    """A secured broker with tables T1 (the hostile one) and T2, and the floor service on its own
    credentials, in this process."""

    def __init__(self, tmp, db=None):
        self.tmp = tmp
        self.made = K.generate(SITE, ["T1", "T2"], tmp / "creds")
        self.srv = natsrv.Server(tmp / "js", config_extra=self.made["accounts"].read_text()).start()
        import argparse
        opts = connect_options(argparse.Namespace(nats_creds=str(self.made["floor"]), nats_ca=None,
                                                  nats_tls_ca=None))
        self.svc = FloorService.build(db or str(tmp / "floor.sqlite"), self.srv.url, connect=opts).start()
        wait(lambda: self.svc.link.connected, "the floor on the broker", 30)
        self.tables = []

    def creds(self, who):
        return json.loads(self.made["tables"][who].read_text())

    def table(self, who, path=None):
        """A real table (the daemon's host and publisher) with its own credentials."""
        t = Table(path or self.tmp / f"{who}.sqlite")
        fl = FloorLink(t.host, self.srv.url, SITE, table=who, creds=load_creds(self.made["tables"][who])).start()
        self.tables.append((t, fl))
        return t, fl

    async def as_table(self, who):
        c = self.creds(who)
        return await nats.connect(self.srv.url, user=c["user"], password=c["password"],
                                  inbox_prefix=c["inbox_prefix"], allow_reconnect=False)

    def close(self):
        for t, fl in self.tables:
            fl.stop()
            t.close()
        self.svc.stop()
        self.srv.close()


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path)
    try:
        yield s
    finally:
        s.close()


def outbox_ids(host) -> set:
    return {r["id"] for r in host.j.query(f"SELECT id FROM event_log WHERE {O.ROW_FILTER}")}


def stored(svc, table) -> set:
    return {r[0] for r in svc.store.query("SELECT event_id FROM events WHERE table_id=?", (table,))}


def play(t, spins, first=1):
    for n in range(first, first + spins):
        t.feed.spin(n, n % 37)


def drained(fl, host):
    return lambda: fl.cursor >= max(outbox_ids(host) or [0]) and fl.backlog == 0


def reaches_floor(svc, t, fl, spins, timeout=10) -> tuple[set, set]:
    """T2 plays `spins` coups; its outbox acknowledged by the broker: (its events, those at the floor)."""
    play(t, spins)
    wait(drained(fl, t.host), "the table's outbox acknowledged by the broker", 30)
    want = outbox_ids(t.host)
    try:
        wait(lambda: stored(svc, fl.table) >= want, f"every event of {fl.table} at the floor", timeout)
    except AssertionError:
        pass
    return want, stored(svc, fl.table)


def valid(table, eid, kind="result", body=None, serial=None, at=None):
    return E.build(SITE, table, serial, eid, kind, time.time() if at is None else at,
                   body if body is not None else {"spin": eid, "number": eid % 37})


# -- 1. message ids ---------------------------------------------------------------------------------
def test_a_tables_message_ids_cannot_suppress_anothers_events(site):
    """T1 publishes on its own subject with `Nats-Msg-Id` of T2's next 300 events, in both forms
    (with T2's journal identity, which floor tokens can read, and without, as before identities):
    every event T2 then journals reaches the floor all the same."""
    t2, fl2 = site.table("T2")
    journal = t2.host.events.journal_id

    async def forge():
        nc = await site.as_table("T1")
        js = nc.jetstream(timeout=2)
        for i in range(1, 301):
            for mid in (f"T2:{journal}:{i}", f"T2:{i}"):
                await js.publish(E.subject(SITE, "T1", "audit"), valid("T1", i * 2 + len(mid) % 2, "audit", {}),
                                 headers={E.MSG_ID: mid})
        await nc.close()
    asyncio.run(forge())
    want, got = reaches_floor(site.svc, t2, fl2, 15)
    missing = want - got
    assert not missing, f"{len(missing)} of T2's {len(want)} events suppressed by T1's message ids"


# -- 1. the bucket ----------------------------------------------------------------------------------
def test_a_tables_key_cannot_wipe_the_others_state(site):
    """`Nats-Rollup: all` on T1's own key must not delete T2's key (nor any other)."""
    async def go():
        c2 = site.creds("T2")
        nc2 = await nats.connect(site.srv.url, user=c2["user"], password=c2["password"],
                                 inbox_prefix=c2["inbox_prefix"])
        kv2 = await nc2.jetstream().key_value(S.BUCKET)
        await kv2.put(S.kv_key(SITE, "T2"), json.dumps({"phase": "betting", "open": True}).encode())
        await nc2.close()
        nc1 = await site.as_table("T1")
        js1 = nc1.jetstream(timeout=2)
        for rollup in ("all", "sub"):
            try:
                await js1.publish(f"$KV.{S.BUCKET}.{SITE}.T1", b"{}", headers={"Nats-Rollup": rollup})
            except Exception:                   # noqa: BLE001 - refused by the broker: what we want
                pass
        await nc1.close()
        import argparse
        f = connect_options(argparse.Namespace(nats_creds=str(site.made["floor"]), nats_ca=None, nats_tls_ca=None))
        nc = await nats.connect(site.srv.url, **f)
        kv = await nc.jetstream().key_value(S.BUCKET)
        try:
            entry = await kv.get(S.kv_key(SITE, "T2"))
            value = json.loads(entry.value)
        except Exception as e:                  # noqa: BLE001
            value = f"gone: {type(e).__name__}"
        await nc.close()
        return value
    assert asyncio.run(go()) == {"phase": "betting", "open": True}


# -- 2. messages the floor cannot store -------------------------------------------------------------
def nasty() -> list[tuple[str, bytes]]:
    """Envelopes on T1's own subjects that no floor can store: (kind, payload)."""
    now = time.time()

    def raw(**over):
        env = {"v": 1, "site": SITE, "table": "T1", "serial": "W1", "journal": "", "event_id": 7,
               "kind": "result", "at": now, "body": {"spin": 1, "number": 3}}
        env.update(over)
        return json.dumps(env, ensure_ascii=True).encode()
    deep = b'{"v":1,"site":"PARIS","table":"T1","serial":null,"event_id":1,"kind":"result","at":1,"body":' \
        + b'{"a":' * 50_000 + b'1' + b'}' * 50_001
    return [
        ("result", raw(event_id=2 ** 64)),                # the review's: OverflowError on every batch
        ("result", raw(event_id=2 ** 63)),                # one past PostgreSQL's BIGINT
        ("result", raw(event_id=-1)),
        ("result", raw(event_id="12")),
        ("result", raw(event_id=1.5)),
        ("result", raw(event_id=True)),
        ("result", raw(at="yesterday")),
        ("result", raw(at=1e308, event_id=8)),           # far future: stored, the money unaffected
        ("result", raw(body=[1, 2])),
        ("result", raw(kind="void")),                     # the kind is not its subject's
        ("result", raw(table="T2")),                      # another table's name on T1's subject
        ("result", raw(serial="a\u0000b", event_id=9)),   # NUL: PostgreSQL text refuses it
        ("result", raw(serial="\ud800", event_id=10)),    # a lone surrogate: no UTF-8 for it
        ("alert", raw(kind="alert", event_id=11, body={"id": "\ud800", "code": {"x": [1]}, "message": "\u0000" * 9,
                                                       "level": 5, "raised_at": "x"})),
        ("settlement", raw(kind="settlement", event_id=12, body={"spin": 1, "staked": 10 ** 40, "paid": -5})),
        ("heartbeat", raw(kind="heartbeat", event_id=2 ** 70, body={"open": {"x": 1}})),
        ("heartbeat", raw(kind="heartbeat", event_id=3, body={"open": [1], "last_numbers": ["x", 99, -1, None],
                                                              "serial": "\ud800", "clock": "?"})),
        ("result", raw(body={"spin": 1, "number": 3, "pad": "x" * 900_000}, event_id=13)),   # a megabyte
        ("result", deep),
        ("result", raw(body={"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
                       event_id=14)),
        ("result", b'{"v":1,"site":"PARIS","table":"T1","serial":"\xff\xfe","event_id":15,"kind":"result",'
                   b'"at":1,"body":{}}'),          # invalid UTF-8
        ("result", b"\x00\x01\x02"),
        ("result", b""),
        ("result", b"12"),
        ("result", raw(v=2, event_id=16)),
        ("result", raw(body={"spin": "x", "number": "17", "at": "never", "croupier": {"a": 1}, "rotor_dir": [],
                             "laps": 10 ** 30}, event_id=17)),
    ]


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_no_message_stops_the_floor_for_the_others(tmp_path, engine, request):
    """T1 sends every envelope in `nasty()` on its own subjects; T2's next events are all stored,
    each unstorable message is set aside (its bytes and why) with an alert naming T1, and the
    floor stays healthy."""
    db = None
    if engine == "postgresql":
        pg = request.getfixturevalue("postgres")
        db = pg.new_db(f"hostile_{int(time.time() * 1000) % 10 ** 9}")
    s = Site(tmp_path, db)
    try:
        t2, fl2 = s.table("T2")
        sent = nasty()

        async def attack():
            nc = await s.as_table("T1")
            js = nc.jetstream(timeout=5)
            for kind, payload in sent:
                await js.publish(E.subject(SITE, "T1", kind), payload)
            await nc.close()
        asyncio.run(attack())
        want, got = reaches_floor(s.svc, t2, fl2, 12, 15)
        assert got >= want, f"only {len(got & want)} of T2's {len(want)} events stored; store error: " \
                            f"{s.svc.link.store_error}"
        dead = s.svc.store.query("SELECT table_id, subject, reason, size FROM dead_letters")
        assert dead and {d[0] for d in dead} == {"T1"}
        assert all(d[2] for d in dead)
        assert len(dead) >= len(sent) - 6        # the few that were storable envelopes are stored
        alerts = s.svc.alerts.list()
        assert any(a["table"] == "T1" and a["code"] == "dead_letter" for a in alerts)
        assert s.svc.health()["status"] == "ok"
        # the bytes are kept as they came
        kept = {bytes(r[0]) for r in s.svc.store.query("SELECT data FROM dead_letters")}
        assert sent[0][1] in kept
        # T1 cannot close the floor's alert about itself by naming it in an alert of its own
        floor_alert = next(a for a in alerts if a["table"] == "T1" and a["code"] == "dead_letter")

        async def close_it():
            nc = await s.as_table("T1")
            js = nc.jetstream(timeout=5)
            await js.publish(E.subject(SITE, "T1", "alert"), valid("T1", 900, "alert", {
                "id": floor_alert["id"], "code": "x", "message": "ok", "level": "info", "raised_at": time.time(),
                "acked_at": time.time(), "acked_by": "T1", "comment": "nothing to see"}))
            await nc.close()
        asyncio.run(close_it())
        wait(lambda: s.svc.store.query("SELECT 1 FROM events WHERE table_id='T1' AND event_id=900"), "T1's alert", 10)
        assert s.svc.alerts.get("T1", floor_alert["id"])["open"]
    finally:
        s.close()


# -- 1. the wheel's serial ----------------------------------------------------------------------------
def test_a_table_cannot_claim_another_tables_wheel(site):
    """T2's wheel is W-T2. T1 publishes 300 results of 17 claiming W-T2: the floor keeps W-T2's
    history T2's, raises an alert (a serial claimed by two tables), and no alarm falls on W-T2."""
    import random
    rnd = random.Random(29)

    async def go():
        nc2 = await site.as_table("T2")
        js2 = nc2.jetstream(timeout=5)
        now = time.time() - 4000
        for i in range(1, 121):
            await js2.publish(E.subject(SITE, "T2", "result"),
                              valid("T2", i, body={"spin": i, "number": rnd.randrange(37), "serial": "W-T2"},
                                    serial="W-T2", at=now + i))
        await nc2.close()
        nc1 = await site.as_table("T1")
        js1 = nc1.jetstream(timeout=5)
        for i in range(1, 301):
            await js1.publish(E.subject(SITE, "T1", "result"),
                              valid("T1", i, body={"spin": i, "number": 17, "serial": "W-T2"}, serial="W-T2",
                                    at=now + 200 + i))
        await nc1.close()
    asyncio.run(go())
    wait(lambda: site.svc.store.count("result") >= 420, "every result at the floor", 20)
    site.svc.refresh_stats()
    wait(lambda: (site.svc.wheel_stats() or {}).get("computed_at", 0) > time.time() - 5
         and sum(w["games"] for w in site.svc.wheel_stats()["wheels"]) >= 420, "the statistics", 30)
    wheels = {w["wheel"]: w for w in site.svc.wheel_stats()["wheels"]}
    assert wheels["W-T2"]["tables"] == ["T2"] and wheels["W-T2"]["games"] == 120
    assert not wheels["W-T2"]["alarms"]
    alerts = [a for a in site.svc.alerts.list() if a["code"] == "serial_disputed"]
    assert alerts and alerts[0]["table"] == "T1" and "W-T2" in alerts[0]["message"]
