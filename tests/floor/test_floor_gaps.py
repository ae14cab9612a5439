"""An event a table published and the floor never got is told, not silent: each message names the
one before it (`prev`) and each heartbeat the last one the broker acknowledged; what the floor lacks
past the grace is an alert on the table. A message late (redelivered, out of order) is no gap."""

import time

from host_tools.floor import gaps
from host_tools.floor.access import Access
from host_tools.floor.alerts import Alerts
from host_tools.floor.link import envelope as E
from host_tools.floor.store import Store, parse
from host_tools.table.floor import outbox as O

from floorkit import TableToFloor, wait

J = "0123456789abcdef"


def env(eid, prev, kind="audit", table="T1"):
    return parse(E.build("S", table, None, eid, kind, 1000.0 + eid, {"id": eid}, J, prev))


def beat(last, table="T1"):
    return parse(E.build("S", table, None, last, "heartbeat", 2000.0,
                         {"last_event_id": last, "last_journal": J, "open": True}, J))


def floor_alerts(s):
    return [a for a in Alerts(s, Access(s)).list() if a["code"] == "floor_gap"]


def test_a_missing_link_is_alerted_after_the_grace_and_a_late_one_is_not(tmp_path):
    s = Store(str(tmp_path / "floor.sqlite"))
    s.ingest([env(1, 0), env(3, 2), env(5, 4)])          # 2 and 4 not (yet) here
    assert [g["event_id"] for g in gaps.missing(s)] == [2, 4]
    s.ingest([env(2, 1)])                               # 2 was only late
    assert gaps.alert(s, time.time() - 5, grace_s=1.0) == 0          # not yet past the grace
    s.ingest([beat(9)])                                 # the table's broker acknowledged up to 9
    told = gaps.alert(s, time.time() + 2, grace_s=1.0)
    assert told == 2 and [g["event_id"] for g in gaps.missing(s)] == [4, 9]
    (a,) = floor_alerts(s)
    assert a["table"] == "T1" and a["open"] and "4" in a["message"] and "9" in a["message"]
    assert gaps.alert(s, time.time() + 3, grace_s=1.0) == 0          # told once
    s.ingest([env(12, 10)])                                          # 10 missing, but the stream stalled since
    assert gaps.alert(s, time.time() + 60, grace_s=1.0, delivered_at=time.time() - 30) == 0
    assert gaps.alert(s, time.time() + 60, grace_s=1.0, delivered_at=time.time() + 60) == 1
    s.ingest([env(4, 3)])
    assert [g["event_id"] for g in gaps.missing(s)] == [9, 10]
    s.close()


def test_a_tables_chain_is_whole_at_the_floor(tmp_path):
    """A real table's messages: every `prev` names a message the floor holds, and nothing is
    missing once the outbox is drained."""
    rig = TableToFloor(tmp_path, site="S", heartbeat_s=0.2)
    srv, store, t, fl = rig.srv, rig.store, rig.table, rig.fl
    try:
        for n in range(1, 9):
            t.feed.spin(n, n)
        want = {r["id"] for r in t.host.j.query(f"SELECT id FROM event_log WHERE {O.ROW_FILTER}")}
        wait(lambda: {e["event_id"] for e in store.events()} >= want and fl.backlog == 0, "the outbox at the floor", 20)
        wait(lambda: store.tables().get("T1", {}).get("state", {}).get("last_event_id") == max(want),
             "a heartbeat naming the last event", 20)
        assert gaps.missing(store) == [] and {e["event_id"] for e in store.events()} == want

        async def chain():
            import nats
            from host_tools.floor.link import stream as S
            nc = await nats.connect(srv.url)
            js = nc.jetstream()
            info = await js.stream_info(S.STREAM)
            out = {}
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                e = E.parse((await js.get_msg(S.STREAM, seq)).data)
                if e["kind"] != "heartbeat":
                    out[e["event_id"]] = e["prev"]
            await nc.close()
            return out
        import asyncio
        links = asyncio.run(chain())
        ids = sorted(links)
        assert [links[i] for i in ids] == [0] + ids[:-1]       # each names the one before it
    finally:
        rig.close()
