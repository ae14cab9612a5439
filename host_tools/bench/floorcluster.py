"""The floor on the production cluster, losing each node in turn: part of `make bench ARGS=floor`.

Three nats-servers of packaging/nats/nats-server.conf (client ports and routes TLS; host_tools/floor/
natscluster.py), the floor service on them (`--nats` the three, `--replicas 3`), `--failover-tables`
simulated tables publishing through the three nodes (each its journal, cursor and outbox, a result
also published as it is played, as the daemon does). After a steady phase, each node is killed
(SIGKILL) in turn, the stream's leader first, left down `--failover-s` seconds, and started again
before the next. Measured: result at a table -> committed in the floor's store, p50/p99/max, in the
steady phase and over each node's loss (the results played from its kill to its return), the
seconds the floor's /health was not 200 while a node was down, and at the end every journal against
the store (lost, doubled) and the replicas of the stream and the bucket. The goal: p99 <= 2 s
through the failover, 0 lost, 0 doubled. Then, for comparison, the leader's loss once more with
the floor on the stream alone (`--no-live`) and the tables without their live publish.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

GOAL_P99_S = 2.0


def add_arguments(p):
    p.add_argument("--failover-tables", type=int, default=50, help="tables on the 3-node cluster (default 50; "
                   "0 skips the failover phase)")
    p.add_argument("--failover-s", type=float, default=20.0, help="seconds each node stays down (default 20)")
    p.add_argument("--failover-rate-x", type=float, default=10.0, help="times a real table's rate on the cluster "
                   "(default 10: a coup every 6 s per table)")


def _pct(xs, q):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 3) if xs else None


def _lags(reader, since, until):
    return reader.lags(since, until)


def run(args, Reader, wait_until, REAL_GAME_S) -> dict:
    """The figures of the failover phase (`floor.py` lends its store reader and its waiting)."""
    import logging

    from host_tools.floor.harness import FloorProcess, LoopThread
    from host_tools.floor.link import stream as S
    from host_tools.floor.natscluster import Cluster
    from host_tools.floor.simtables import Fleet
    logging.getLogger("asyncio").setLevel(logging.ERROR)      # the TLS transports' closing notes
    work = Path(tempfile.mkdtemp(prefix="cylindre-bench-cluster-"))
    cluster = Cluster(work / "cluster").start()
    db = str(work / "floor.sqlite")
    floor = FloorProcess(work, db, cluster.url, extra=["--nats-tls-ca", str(cluster.ca), "--replicas", "3"],
                         log="floor.log", ready="connected").start()
    loop = LoopThread()
    fleet = Fleet(cluster.url, args.failover_tables, conns=min(args.failover_tables, 12),
                  game_s=REAL_GAME_S / args.failover_rate_x, heartbeat_s=5.0, connect={"tls": cluster.ssl_context()},
                  seed=7)
    running = loop.submit(fleet.run())
    reader = Reader(db)
    out = {"tables": args.failover_tables, "game_s": REAL_GAME_S / args.failover_rate_x, "down_s": args.failover_s,
           "goal_p99_s": GOAL_P99_S, "kills": []}

    def leader():
        return cluster.elected(S.STREAM, 30)

    try:
        time.sleep(8)                                 # connected, warmed up
        t0 = time.time()
        time.sleep(20)
        steady = _lags(reader, t0, time.time() - 1)
        out["steady"] = {"results": len(steady), "p50_s": _pct(steady, 0.5), "p99_s": _pct(steady, 0.99),
                         "max_s": _pct(steady, 1.0)}
        print(f"[floor/cluster] {args.failover_tables} tables on 3 nodes, steady: result -> floor p50 "
              f"{out['steady']['p50_s']} s, p99 {out['steady']['p99_s']} s", flush=True)
        killed, during = [], []
        for _ in range(3):
            lead = leader()
            victim = lead if lead is not None and lead not in killed else next(i for i in range(3) if i not in killed)
            killed.append(victim)
            down_at = time.time()
            cluster.kill(victim)
            unhealthy, end = 0.0, down_at + args.failover_s
            while time.time() < end:
                h = floor.health() or {}
                if h.get("status") != "ok":
                    unhealthy += 0.5
                time.sleep(0.5)
            cluster.restart(victim)
            back = time.time()
            wait_until(lambda: leader() is not None, 60)
            time.sleep(3)
            lags = _lags(reader, down_at, back)
            during += lags
            k = {"node": victim, "leader": victim == lead, "results": len(lags), "p50_s": _pct(lags, 0.5),
                 "p99_s": _pct(lags, 0.99), "max_s": _pct(lags, 1.0), "floor_not_ok_s": unhealthy}
            out["kills"].append(k)
            print(f"[floor/cluster] node {victim}{' (the stream leader)' if k['leader'] else ''} killed for "
                  f"{args.failover_s:g} s: {k['results']} results, result -> floor p99 {k['p99_s']} s "
                  f"(max {k['max_s']}), floor /health not ok {unhealthy:g} s", flush=True)
        out["failover"] = {"results": len(during), "p50_s": _pct(during, 0.5), "p99_s": _pct(during, 0.99),
                           "max_s": _pct(during, 1.0)}
        # the same loss of the stream's leader without the live paths: the stream alone, as it was
        floor.stop()
        floor = FloorProcess(work, db, cluster.url, extra=["--nats-tls-ca", str(cluster.ca), "--replicas", "3",
                                                           "--no-live"], log="floor-stream-only.log",
                             ready="connected").start()
        fleet.live = False
        time.sleep(8)
        victim = leader()
        down_at = time.time()
        cluster.kill(victim)
        time.sleep(args.failover_s)
        cluster.restart(victim)
        back = time.time()
        wait_until(lambda: leader() is not None, 60)
        time.sleep(5)
        lags = _lags(reader, down_at, back)
        out["stream_only"] = {"node": victim, "results": len(lags), "p50_s": _pct(lags, 0.5), "p99_s": _pct(lags, 0.99),
                              "max_s": _pct(lags, 1.0)}
        print(f"[floor/cluster] the same without the live paths (the stream alone), stream leader killed: "
              f"result -> floor p50 {out['stream_only']['p50_s']} s, p99 {out['stream_only']['p99_s']} s", flush=True)
        fleet.producing = False
        wait_until(lambda: fleet.backlog() == 0, 300)
        total = fleet.total()
        wait_until(lambda: reader.count() >= total, 300)
        keys = reader.keys()
        sent = set().union(*(t.keys() for t in fleet.tables))
        out["integrity"] = {"journaled": total, "lost": len(sent - set(keys)),
                            "doubled": sum(n - 1 for n in keys.values()) + reader.spins_doubled()}

        out["replicas"] = cluster.replicas(S.STREAM, S.KV_STREAM)
        out["within_goal"] = out["failover"]["p99_s"] is not None and out["failover"]["p99_s"] <= GOAL_P99_S \
            and out["integrity"]["lost"] == 0 and out["integrity"]["doubled"] == 0
        f, i = out["failover"], out["integrity"]
        print(f"[floor/cluster] through the three losses: result -> floor p50 {f['p50_s']} s, p99 {f['p99_s']} s "
              f"(goal {GOAL_P99_S:g} s); {i['journaled']} journaled, {i['lost']} lost, {i['doubled']} doubled; "
              f"replicas {out['replicas']}", flush=True)
    finally:
        fleet.stop()
        try:
            running.result(60)
        except Exception:                              # noqa: BLE001
            pass
        loop.close()
        reader.close()
        floor.stop()
        cluster.close()
    return out


def markdown(f: dict) -> list[str]:
    """The failover's rows for the floor's table of figures."""
    s, fo, i = f["steady"], f["failover"], f["integrity"]
    rows = [f"| 3-node cluster (TLS, replicas {f['replicas'][0]}), {f['tables']} tables, a coup every {f['game_s']:g} s "
            f"| steady: result -> floor p50 {s['p50_s']} s, p99 {s['p99_s']} s |"]
    for k in f["kills"]:
        rows.append(f"| node {k['node']}{' (stream leader)' if k['leader'] else ''} killed, down {f['down_s']:g} s "
                    f"| {k['results']} results: p99 {k['p99_s']} s, max {k['max_s']} s; floor /health not ok "
                    f"{k['floor_not_ok_s']:g} s |")
    rows.append(f"| through the three losses | p50 {fo['p50_s']} s, p99 {fo['p99_s']} s (goal <= {f['goal_p99_s']:g} s); "
                f"{i['journaled']} journaled, {i['lost']} lost, {i['doubled']} doubled |")
    so = f.get("stream_only")
    if so:
        rows.append(f"| the stream leader killed, without the live paths (`--no-live`: the stream alone) | "
                    f"{so['results']} results: p50 {so['p50_s']} s, p99 {so['p99_s']} s, max {so['max_s']} s |")
    return rows
