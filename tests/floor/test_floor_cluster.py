"""The production cluster on one machine: three nats-servers joined by the cluster block of
packaging/nats/nats-server.conf (TLS routes, certificates checked both ways), the stream and the
bucket replicated three times; a table publishing to the three nodes loses the one it is
connected to mid-game and goes on through another: 0 lost, 0 doubled."""

import asyncio
import re
import time
from pathlib import Path

import nats

from host_tools.floor import natsrv
from host_tools.table.floor import outbox as O
from host_tools.table.floor.publisher import FloorLink
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S

from apikit import Table
from natskit import make_tls

CONF = Path(__file__).resolve().parents[2] / "packaging" / "nats" / "nats-server.conf"


def cluster_block(tls: Path, port: int, routes: list[int]) -> str:
    """The shipped cluster block, on this machine's ports and this test's certificates."""
    block = re.search(r"(?ms)^cluster \{.*?^\}$", CONF.read_text()).group(0)
    block = block.replace("/etc/nats/tls", str(tls)).replace("host: 0.0.0.0", "host: 127.0.0.1")
    block = re.sub(r"port: 6222", f"port: {port}", block)
    return re.sub(r"(?s)routes: \[.*?\]", "routes: [%s]" % ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in routes),
                  block)


def wait(cond, timeout=30.0, what="condition"):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_table_rides_out_the_loss_of_its_node(tmp_path):
    tls = tmp_path / "tls"
    tls.mkdir()
    make_tls(tls)
    routes = [natsrv.free_port() for _ in range(3)]
    nodes = [natsrv.Server(tmp_path / f"js{i}", config_extra=cluster_block(tls, routes[i], routes)) for i in range(3)]
    for n in nodes:
        n.start(wait=False)
    t = None
    try:
        for n in nodes:
            n.wait_healthy(60)
        url = ",".join(n.url for n in nodes)

        async def prepare():
            for _ in range(100):                # the meta leader is being elected
                try:
                    nc = await nats.connect(nodes[0].url)
                    try:
                        await S.ensure_stream(nc.jetstream(), replicas=3)
                        await S.ensure_bucket(nc.jetstream(), replicas=3)
                        return
                    finally:
                        await nc.close()
                except Exception:
                    await asyncio.sleep(0.2)
            raise AssertionError("no stream on the cluster")
        asyncio.run(prepare())
        t = Table(tmp_path / "j.sqlite")
        fl = FloorLink(t.host, url, "PARIS").start()
        for n in range(1, 11):
            t.feed.spin(n, n)
        wait(lambda: fl.status()["server"] is not None and fl.cursor > 0, what="connected and publishing")
        mine = fl.status()["server"]
        victim = next(n for n in nodes if n.url.endswith(mine))
        victim.kill()                           # the node the table is connected to dies
        for n in range(11, 21):
            t.feed.spin(n, n % 37)
        want = [r["id"] for r in t.host.j.query(f"SELECT id FROM event_log WHERE {O.ROW_FILTER} ORDER BY id")]
        wait(lambda: fl.cursor >= want[-1] and fl.backlog == 0, what="everything acknowledged by the cluster")
        assert fl.status()["server"] != mine
        fl.stop()
        alive = next(n for n in nodes if n is not victim)

        async def stored():
            nc = await nats.connect(alive.url)
            js = nc.jetstream()
            info = await js.stream_info(S.STREAM)
            assert info.config.num_replicas == 3
            ids = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                env = E.parse((await js.get_msg(S.STREAM, seq)).data)
                if env["kind"] != "heartbeat":
                    ids.append(env["event_id"])
            await nc.close()
            return ids
        ids = asyncio.run(stored())
        assert sorted(ids) == want and len(ids) == len(set(ids))
    finally:
        if t is not None:
            t.close()
        for n in nodes:
            n.close()
