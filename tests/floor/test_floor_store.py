"""The floor's store on both engines (SQLite file, a real PostgreSQL server): an event stored once
whatever the deliveries, messages that are no envelope kept aside, alerts folded from their events
and acknowledged at the floor with a comment, escalated once, every action audited; tokens and
roles; and the durable consumer end to end on each engine through a real nats-server."""

import asyncio
import json
import time

import pytest

from host_tools.floor import natsrv
from host_tools.table.api.auth import TokenError
from host_tools.floor.access import Access, Identity
from host_tools.floor.alerts import AlertError, Alerts
from host_tools.floor.ingest import Link
from host_tools.floor.store import BadEnvelope, DeadLetter, Store, parse
from host_tools.floor.link import envelope as E

from floorkit import db_url, postgres, wait  # noqa: F401 - fixtures


def env(table, eid, kind="result", at=1000.0, body=None, site="S"):
    return parse(E.build(site, table, "W1", eid, kind, at, body if body is not None else {"spin": eid, "number": eid % 37}))


def test_an_event_is_stored_once_whatever_the_deliveries(db_url):
    s = Store(db_url)
    batch = [env("T1", i) for i in range(1, 6)]
    assert len(s.ingest(batch)) == 5
    assert s.ingest(batch + [env("T1", 6)]) == [env("T1", 6)]     # a redelivered batch: only the new one
    assert len(s.ingest([env("T2", 1)])) == 1                      # another table's id 1 is another event
    assert s.count() == 7
    assert [e["event_id"] for e in s.events(table="T1")] == [1, 2, 3, 4, 5, 6]
    s.close()


def test_bad_messages_are_refused_with_a_reason_and_kept(db_url):
    with pytest.raises(BadEnvelope, match="JSON"):
        parse(b"{nope")
    with pytest.raises(BadEnvelope, match="subject"):
        parse(E.build("S", "T1", None, 1, "result", 1.0, {}), "cylindre.S.T2.result")
    with pytest.raises(BadEnvelope, match="event_id"):
        parse(json.dumps({"v": 1, "site": "S", "table": "T1", "serial": None, "event_id": "7", "kind": "result",
                          "at": 1.0, "body": {}}).encode())
    s = Store(db_url)
    s.ingest([], dead=[DeadLetter("cylindre.S.T1.result", "not JSON", b"\xff\xfe\x00")])
    rows = s.query("SELECT table_id, subject, reason, data, size FROM dead_letters")
    assert [(r[0], r[1], r[2], bytes(r[3]), r[4]) for r in rows] == [("T1", "cylindre.S.T1.result", "not JSON",
                                                                     b"\xff\xfe\x00", 3)]
    alert = [a for a in Alerts(s, Access(s)).list() if a["code"] == "dead_letter"]
    assert len(alert) == 1 and alert[0]["table"] == "T1" and alert[0]["open"]
    s.ingest([], dead=[DeadLetter("cylindre.S.T1.audit", "x", b"")])     # one open alert per table, told the count
    alert = [a for a in Alerts(s, Access(s)).list() if a["code"] == "dead_letter"]
    assert len(alert) == 1 and alert[0]["message"].startswith("2 ")
    s.close()


def test_heartbeats_and_the_bucket_keep_the_newest_state(db_url):
    s = Store(db_url)
    hb = parse(E.build("S", "T1", "W1", 0, "heartbeat", 50.0, {"link": "up", "phase": "betting", "open": True}))
    s.ingest([hb])
    s.remember_state("S", "T1", {"open": False}, 40.0)             # older than the heartbeat: ignored
    assert s.tables()["T1"]["state"]["open"] is True
    s.remember_state("S", "T1", {"open": False}, 60.0)
    assert s.tables()["T1"]["state"]["open"] is False and s.count() == 0
    s.close()


def test_alerts_acknowledged_with_a_comment_escalated_once_and_audited(db_url):
    s = Store(db_url)
    acc = Access(s)
    al = Alerts(s, acc, escalate_after_s=60)
    raised = {"id": "7", "code": "link_lost", "message": "liaison perdue", "level": "critical", "raised_at": 1000.0,
              "acked_at": None, "acked_by": None, "comment": None}
    s.ingest([env("T1", 1, "alert", 1000.0, raised), env("T2", 1, "alert", 1000.0, dict(raised, id="8"))])
    assert al.open_counts() == {"T1": 1, "T2": 1}
    assert al.escalate(1030.0) == []
    assert {a["table"] for a in al.escalate(1061.0)} == {"T1", "T2"}
    assert al.escalate(2000.0) == []                                # once
    boss = Identity("paul", "pit_boss")
    with pytest.raises(AlertError, match="commentaire"):
        al.acknowledge(boss, "T1", "7", "  ")
    row = al.acknowledge(boss, "T1", "7", "bille changée, vu avec le chef")
    assert (row["open"], row["floor_acked_by"]) == (False, "paul")
    with pytest.raises(AlertError):
        al.acknowledge(boss, "T1", "7", "encore")
    # the table acknowledges T2's alert itself: its event closes it at the floor
    s.ingest([env("T2", 2, "alert", 1100.0, dict(raised, id="8", acked_at=1100.0, acked_by="chef-1", comment="ok"))])
    assert al.open_counts() == {}
    actions = [(r["who"], r["action"], r["target"]) for r in acc.rows()]
    assert ("paul", "alert.ack", "T1/7") in actions
    assert sorted((a[0], a[2]) for a in actions if a[1] == "alert.escalate") == [("floor", "T1/7"), ("floor", "T2/8")]
    s.close()


def test_tokens_roles_and_revocation(db_url):
    s = Store(db_url)
    acc = Access(s)
    secret = acc.add("sophie", "director")
    me = acc.identify(secret)
    assert (me.name, me.role) == ("sophie", "director") and me.may("pit_boss") and not me.may("admin")
    with pytest.raises(TokenError):
        acc.add("sophie", "admin")
    with pytest.raises(TokenError):
        acc.add("x", "chef")                                       # a table role is no floor role
    assert acc.identify(secret + "x") is None and acc.identify(None) is None
    assert acc.revoke("sophie") and acc.identify(secret) is None
    s.close()


def test_the_consumer_stores_every_table_on_each_engine(db_url, tmp_path):
    srv = natsrv.Server(tmp_path / "js").start()
    store = Store(db_url)
    link = Link(srv.url, store).start()
    try:
        async def publish(n):
            import nats
            nc = await nats.connect(srv.url)
            js = nc.jetstream()
            for t in ("T1", "T2", "T3"):
                for i in range(1, n + 1):
                    data = E.build("S", t, "W" + t, i, "result", time.time(), {"spin": i, "number": i % 37})
                    for _ in range(2):                             # a table resends: the broker drops it
                        await js.publish(E.subject("S", t, "result"), data, headers={E.MSG_ID: E.msg_id(t, i)})
            await nc.close()
        wait(lambda: link.connected, "the floor's link", 20)
        asyncio.run(publish(20))
        wait(lambda: store.count() == 60, "60 events stored", 20)
        srv.restart()
        asyncio.run(publish(25))
        wait(lambda: store.count() == 75, "75 events stored after a broker restart", 30)
        assert store.query("SELECT COUNT(DISTINCT table_id) FROM events")[0][0] == 3
    finally:
        link.stop()
        store.close()
        srv.close()


class FailingStore(Store):
    """A store whose first commits fail (a full disk, a lost PostgreSQL connection): its probe
    write fails too, so nothing is set aside."""

    def __init__(self, url, failures):
        super().__init__(url)
        self.failures = failures

    def ingest(self, envelopes, dead=()):
        if envelopes and self.failures > 0:
            self.failures -= 1
            raise OSError("disk full (test)")
        return super().ingest(envelopes, dead)

    def ping(self):
        if self.failures > 0:
            raise OSError("disk full (test)")
        return super().ping()


class PickyStore(Store):
    """A store that refuses one event whatever it is tried with (a value its engine cannot take),
    and takes everything else."""

    def __init__(self, url, refused):
        super().__init__(url)
        self.refused, self.tries = refused, 0

    def ingest(self, envelopes, dead=()):
        if any(e["event_id"] == self.refused for e in envelopes):
            self.tries += 1
            raise ValueError("value out of range (test)")
        return super().ingest(envelopes, dead)


def publish(url, rows):
    """Results (table, event id, with a Nats-Msg-Id) published to the broker at `url`."""
    async def go():
        import nats
        nc = await nats.connect(url)
        js = nc.jetstream()
        for table, eid, with_id in rows:
            data = E.build("S", table, "W" + table, eid, "result", time.time(), {"spin": eid, "number": eid % 37})
            await js.publish(E.subject("S", table, "result"), data,
                             headers={E.MSG_ID: E.msg_id(table, eid)} if with_id else None)
        await nc.close()
    asyncio.run(go())


def test_a_batch_the_store_refused_is_not_acknowledged_and_comes_back(tmp_path):
    srv = natsrv.Server(tmp_path / "js").start()
    store = FailingStore(str(tmp_path / "floor.sqlite"), failures=2)
    link = Link(srv.url, store).start()
    try:
        wait(lambda: link.connected, "the floor's link", 20)
        publish(srv.url, [("T1", i, True) for i in range(1, 31)])
        wait(lambda: store.count() == 30, "every event stored once the store takes them again", 30)
        assert store.failures == 0 and link.store_error is None
        assert [e["event_id"] for e in store.events()] == list(range(1, 31))
        assert store.query("SELECT COUNT(*) FROM dead_letters")[0][0] == 0     # the store's fault: nothing aside
    finally:
        link.stop()
        store.close()
        srv.close()


def test_a_message_the_store_refuses_is_set_aside_after_its_tries_and_blocks_nobody(tmp_path):
    """Event 7 of T1 is one the store cannot take: the events around it and T2's are stored at once,
    7 is tried MAX_TRIES times, then kept aside with its bytes and an alert naming T1."""
    from host_tools.floor.ingest import MAX_TRIES
    srv = natsrv.Server(tmp_path / "js").start()
    store = PickyStore(str(tmp_path / "floor.sqlite"), refused=7)
    link = Link(srv.url, store).start()
    try:
        wait(lambda: link.connected, "the floor's link", 20)
        publish(srv.url, [(t, i if t == "T1" else 100 + i, False) for i in range(1, 21) for t in ("T1", "T2")])
        wait(lambda: store.count() == 39, "every other event stored", 20)
        wait(lambda: store.query("SELECT COUNT(*) FROM dead_letters")[0][0] == 1, "event 7 set aside", 20)
        (table, reason, data, tries), = store.query("SELECT table_id, reason, data, tries FROM dead_letters")
        assert table == "T1" and "value out of range" in reason and tries == MAX_TRIES
        assert E.parse(bytes(data))["event_id"] == 7
        assert link.store_error is None
        assert [a["table"] for a in Alerts(store, Access(store)).list() if a["code"] == "dead_letter"] == ["T1"]
    finally:
        link.stop()
        store.close()
        srv.close()


@pytest.mark.slow
def test_a_silent_broker_is_told_within_seconds(tmp_path):
    """A cut with no FIN or RST (a pulled cable, a frozen broker: SIGSTOP here) is told within
    seconds, as at the table, not after nats-py's default two pings of 2 minutes each."""
    import os
    import signal
    srv = natsrv.Server(tmp_path / "js").start()
    store = Store(str(tmp_path / "floor.sqlite"))
    link = Link(srv.url, store).start()
    try:
        wait(lambda: link.connected, "the floor's link", 20)
        os.kill(srv.pid, signal.SIGSTOP)
        try:
            wait(lambda: not link.connected, "the frozen broker told at the floor", 30)
        finally:
            os.kill(srv.pid, signal.SIGCONT)
        wait(lambda: link.connected, "the floor's link back", 30)
    finally:
        link.stop()
        store.close()
        srv.close()


def test_a_broker_the_floor_cannot_reach_is_logged_and_told(tmp_path, caplog):
    """`--nats a,b` with neither up: the floor says so in its log (not once a second) and its link is down."""
    import logging
    store = Store(str(tmp_path / "floor.sqlite"))
    url = f"nats://127.0.0.1:{natsrv.free_port()},nats://127.0.0.1:{natsrv.free_port()}"
    with caplog.at_level(logging.WARNING, logger="cylindre.floor"):
        link = Link(url, store).start()
        try:
            wait(lambda: any("cannot reach" in r.getMessage() for r in caplog.records), "a line in the log", 20)
            assert not link.connected and link.servers == url.split(",")
        finally:
            link.stop()
            store.close()
    assert sum("cannot reach" in r.getMessage() for r in caplog.records) <= 2
