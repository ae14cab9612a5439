"""Every event of every table lands in the floor's store exactly once, whatever the broker, the
network or the floor itself does: simulated tables (their own journals and cursors, as the daemon's
outbox) publish to a real nats-server; the broker is stopped and restarted, one table's network is
cut and mended, the floor process is killed (SIGKILL) mid-ingest and restarted; then every table's
journal is counted against the store. About 25 s."""

import json
import time
import urllib.error
import urllib.request

import pytest

from host_tools.floor import natsrv
from host_tools.floor.simtables import Fleet, Proxy
from host_tools.floor.store import Store

from host_tools.floor.harness import FloorProcess, LoopThread

from floorkit import wait


def journal_vs_store(fleet, store):
    stored = {}
    for k in store.query("SELECT table_id, journal, event_id FROM events"):
        stored[tuple(k)] = stored.get(tuple(k), 0) + 1
    sent = set().union(*(t.keys() for t in fleet.tables))
    lost = sent - set(stored)
    doubled = sum(n - 1 for n in stored.values())
    spins = {}
    for (t, j, body) in store.query("SELECT table_id, journal, body FROM events WHERE kind='result'"):
        k = (t, j, json.loads(body)["spin"])
        spins[k] = spins.get(k, 0) + 1
    return lost, doubled, sum(n - 1 for n in spins.values()), set(stored) - sent


def health(floor):
    try:
        with urllib.request.urlopen(floor.base + "/health", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture
def broker(tmp_path):
    srv = natsrv.Server(tmp_path / "js").start()
    yield srv
    srv.close()


def test_outage_cut_and_floor_crash_lose_and_double_nothing(tmp_path, broker):
    db = str(tmp_path / "floor.sqlite")
    floor = FloorProcess(tmp_path, db, broker.url).start()
    bg = LoopThread()
    proxy = bg.submit(Proxy("127.0.0.1", broker.port).start()).result(10)
    fleet = Fleet(broker.url, tables=4, conns=2, game_s=0.15, heartbeat_s=0.5, via=proxy.url, via_tables=1)
    run = bg.submit(fleet.run())
    store = Store(db)
    try:
        wait(lambda: store.count("result") >= 20, "the floor's first results", 30)
        broker.stop()                                            # the broker goes away; the tables keep playing
        wait(lambda: health(floor)[0] == 503, "the floor's /health to say the broker is gone", 20)
        assert health(floor)[1]["broker"].startswith("unreachable since")
        grown = wait(lambda: fleet.backlog() >= 10 and fleet.backlog(), "the tables' backlogs to grow", 20)
        broker.restart()
        wait(lambda: store.count("result") >= 60, "ingest after the broker came back", 30)
        failed = fleet.tables[0].failures
        bg.call(proxy.cut)                                       # one table's cable pulled
        wait(lambda: fleet.tables[0].failures > failed, "the cut table to miss a PubAck", 20)
        wait(lambda: len(fleet.tables[0].journal) - fleet.tables[0].cursor >= 3, "the cut table's backlog to grow", 20)
        bg.call(proxy.mend)
        floor.kill()                                             # the floor crashes mid-ingest
        time.sleep(0.5)
        floor.start()
        time.sleep(1.0)
        fleet.producing = False                                  # the tables stop; everything drains
        wait(lambda: fleet.backlog() == 0, "the tables' backlogs drained", 30)
        total = fleet.total()
        wait(lambda: store.count() >= total, f"the floor to hold all {total} events", 30)
        lost, doubled, spins_doubled, foreign = journal_vs_store(fleet, store)
        assert grown > 0, "the outage should have grown the tables' backlog"
        assert (lost, doubled, spins_doubled, foreign) == (set(), 0, 0, set())
        assert store.count() == total
        assert health(floor)[0] == 200 and health(floor)[1]["broker"] == "connected"
    finally:
        fleet.stop()
        try:
            run.result(15)
        except Exception:                                         # noqa: BLE001
            pass
        bg.submit(proxy.close()).result(5)
        bg.close()
        floor.stop()
        store.close()
