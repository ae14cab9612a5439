"""The production cluster on one machine, as packaging/nats/nats-server.conf makes it (client ports TLS,
routes TLS checked both ways, the accounts of `cylindre floor-creds`), the floor service on it
(`--nats` the three nodes, `--replicas 3`) and two real tables publishing with their own
credentials; each node is killed in turn, the stream's leader first, and brought back: the floor
keeps consuming, every table's journal is at the floor once (0 lost, 0 doubled), and the stream and
the bucket stay at 3 replicas. About a minute; the failover figures are the bench's
(`make bench ARGS=floor`)."""

import asyncio
import json
import threading
import time

import nats
import pytest

from host_tools.floor.link import creds as K
from host_tools.floor.link import stream as S
from host_tools.floor.natscluster import Cluster
from host_tools.floor.store import Store
from host_tools.table.floor import outbox as O
from host_tools.table.floor.publisher import FloorLink, load_creds

from apikit import Table
from floorkit import wait
from host_tools.floor.harness import FloorProcess

SITE = "PARIS"


def _floor(made):
    c = json.loads(made["floor"].read_text())
    return {"user": c["user"], "password": c["password"]}


def leader(cluster, made):
    i = cluster.elected(S.STREAM, 20, **_floor(made))
    assert i is not None, "the stream has no leader"
    return i


def replicas(cluster, made):
    return cluster.replicas(S.STREAM, S.KV_STREAM, **_floor(made))


def test_the_floor_rides_out_the_loss_of_each_node(tmp_path):
    made = K.generate(SITE, ["T1", "T2"], tmp_path / "creds")
    cluster = Cluster(tmp_path / "cluster", accounts=made["accounts"].read_text()).start()
    db = str(tmp_path / "floor.sqlite")
    floor = tables = player = None
    stop = threading.Event()
    try:
        async def plain(url):
            await nats.connect(url.replace("tls://", "nats://"), allow_reconnect=False, connect_timeout=2)
        for node in cluster.nodes:               # every client port is TLS, as shipped
            with pytest.raises(Exception):
                asyncio.run(plain(node.url))
        floor = FloorProcess(tmp_path, db, cluster.url, extra=["--nats-creds", str(made["floor"]), "--nats-tls-ca",
                                                            str(cluster.ca), "--replicas", "3"]).start()
        store = Store(db)
        wait(lambda: store.query("SELECT 1 FROM sqlite_master WHERE name='events'") and
             replicas(cluster, made) == [3, 3], "the stream and the bucket at 3 replicas", 60)
        tables = []
        for name in ("T1", "T2"):
            t = Table(tmp_path / f"{name}.sqlite")
            fl = FloorLink(t.host, cluster.url, SITE, table=name, creds=load_creds(made["tables"][name]),
                           tls_ca=str(cluster.ca), heartbeat_s=1.0).start()
            tables.append((name, t, fl))
        spins = {"n": 0}

        def play():
            while not stop.is_set():
                spins["n"] += 1
                for _, t, _ in tables:
                    t.feed.spin(spins["n"], spins["n"] % 37)
                stop.wait(0.25)
        player = threading.Thread(target=play, daemon=True)
        player.start()
        wait(lambda: store.count("result") >= 10, "the first results at the floor", 60)
        killed = []
        for _ in range(3):
            victim = leader(cluster, made)
            if victim in killed:                 # the leader was killed before: the next node in turn
                victim = next(i for i in range(3) if i not in killed)
            killed.append(victim)
            at_kill, n_kill = time.time(), spins["n"]
            cluster.kill(victim)
            # results played after the kill reach the floor through the other two nodes
            wait(lambda: store.query("SELECT COUNT(*) FROM events WHERE kind='result' AND at > ?", (at_kill + 1,))[0][0]
                 >= 2 * 4, f"results after node {victim} died", 60)
            assert spins["n"] > n_kill
            cluster.restart(victim)
            wait(lambda: leader(cluster, made) is not None, "a leader", 30)
        stop.set()
        player.join(10)
        for name, t, fl in tables:
            want = {r["id"] for r in t.host.j.query(f"SELECT id FROM event_log WHERE {O.ROW_FILTER}")}
            wait(lambda: fl.backlog == 0 and fl.cursor >= max(want), f"{name}'s outbox acknowledged", 60)
            wait(lambda: {r[0] for r in store.query("SELECT event_id FROM events WHERE table_id=?", (name,))} >= want,
                 f"{name}'s events at the floor", 60)
            got = store.query("SELECT event_id FROM events WHERE table_id=?", (name,))
            assert {r[0] for r in got} == want and len(got) == len(want)          # 0 lost, 0 doubled
            results = store.query("SELECT body FROM events WHERE table_id=? AND kind='result'", (name,))
            played = [json.loads(r[0])["spin"] for r in results]
            assert sorted(played) == list(range(1, spins["n"] + 1))
        assert sorted(killed) == [0, 1, 2]
        assert replicas(cluster, made) == [3, 3]
        wait(lambda: _health(floor)["status"] == "ok", "the floor healthy", 30)
        lags = sorted(r[0] for r in store.query("SELECT received_at - at FROM events WHERE kind='result'"))
        print(f"result -> floor over {len(lags)} results, three nodes killed in turn: p50 {lags[len(lags) // 2]:.3f} s, "
              f"p99 {lags[int(0.99 * len(lags))]:.3f} s, max {lags[-1]:.3f} s")
        store.close()
    finally:
        stop.set()
        if player is not None:
            player.join(10)
        for _, t, fl in tables or []:
            fl.stop()
            t.close()
        if floor is not None:
            floor.stop()
        cluster.close()


def _health(floor):
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(floor.base + "/health", timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())
