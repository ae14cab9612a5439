"""Bench part `outbox`: one table's floor publisher (host_tools/table/floor/publisher.py) on a
local nats-server. `make bench ARGS=outbox`.

- latency: coups played one at a time (a spin every `--gap-ms`), the time from the settlement's
  commit in the journal to the cursor passing it (the broker's PubAck, in order);
- catch-up: `--backlog` coups journaled while no broker is there (a result and a settlement
  each), then the time the link takes to have them all acknowledged.
Figures to bench/out/outbox.json; `markdown(figures)` gives the page's section.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

COMMAND = "make bench ARGS=outbox"


def add_arguments(p):
    p.add_argument("--coups", type=int, default=200, help="coups for the latency, one at a time (default 200)")
    p.add_argument("--gap-ms", type=float, default=20.0, help="pause between two coups (default 20 ms)")
    p.add_argument("--backlog", type=int, default=10000, help="coups waiting for the catch-up (default 10000)")
    p.add_argument("--out", default="bench/out", help="output folder (default bench/out)")


class _NoPort:
    url = "none"
    s = None

    def open(self):
        self.error = "no port: a bench table"
        return False

    def close(self):
        pass

    def write(self, data):
        pass


def _table(path):
    from host_tools.table.daemon.host import TableHost
    return TableHost.build(_NoPort(), bytes(32), path, open_table=True)


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs))) - 1))]


def latency(srv, folder: Path, coups: int, gap_ms: float) -> dict:
    from host_tools.table.floor.publisher import FloorLink
    host = _table(folder / "latency.sqlite")
    fl = FloorLink(host, srv.url, "BENCH").start()
    ev = host.events
    try:
        end = time.monotonic() + 20
        while not fl.watch.up and time.monotonic() < end:
            time.sleep(0.01)
        out = []
        for n in range(1, coups + 1):
            with host.j.tx():
                ev.publish("wheel", {"ev": "result", "spin": n, "number": n % 37})
                ev.publish("settlement", {"spin": n, "number": n % 37, "totals": {"staked": 1000, "paid": 0},
                                          "bets": 1})
            t0 = time.perf_counter()
            top = ev.bounds()[1]
            while fl.cursor < top:
                time.sleep(0.0002)
            out.append((time.perf_counter() - t0) * 1000.0)
            time.sleep(gap_ms / 1000.0)
    finally:
        fl.stop()
        host.j.close()
    return {"coups": coups, "gap_ms": gap_ms, "p50_ms": round(_pct(out, 0.5), 2), "p99_ms": round(_pct(out, 0.99), 2),
            "max_ms": round(max(out), 2)}


def catch_up(srv, folder: Path, backlog: int) -> dict:
    from host_tools.table.floor.publisher import FloorLink
    host = _table(folder / "catchup.sqlite")
    ev = host.events
    with host.j.tx():
        for n in range(1, backlog + 1):
            ev.publish("wheel", {"ev": "result", "spin": n, "number": n % 37})
            ev.publish("settlement", {"spin": n, "number": n % 37, "totals": {"staked": 1000, "paid": 360}, "bets": 3})
    t0 = time.perf_counter()
    fl = FloorLink(host, srv.url, "BENCH", table="T2").start()
    try:
        top = ev.bounds()[1]
        while fl.cursor < top:
            time.sleep(0.01)
        dt = time.perf_counter() - t0
    finally:
        fl.stop()
        host.j.close()
    return {"events": 2 * backlog, "seconds": round(dt, 2), "events_per_s": round(2 * backlog / dt)}


def run(args) -> int:
    from host_tools.floor import natsrv
    with tempfile.TemporaryDirectory(prefix="bench-outbox-") as tmp:
        folder = Path(tmp)
        srv = natsrv.Server(folder / "js").start()
        try:
            figures = {"command": COMMAND, "latency": latency(srv, folder, args.coups, args.gap_ms),
                       "catch_up": catch_up(srv, folder, args.backlog)}
        finally:
            srv.close()
    lat, cu = figures["latency"], figures["catch_up"]
    print(f"commit -> PubAck, {lat['coups']} coups one at a time: p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms, "
          f"max {lat['max_ms']} ms")
    print(f"catch-up: {cu['events']} events acknowledged in {cu['seconds']} s ({cu['events_per_s']} events/s)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "outbox.json").write_text(json.dumps(figures, indent=1))
    print("figures: %s" % (out / "outbox.json"))
    return 0


def markdown(figures: dict) -> str:
    lat, cu = figures["latency"], figures["catch_up"]
    return (f"## A table's outbox to the floor\n\n`{figures['command']}`: one table's publisher on a local "
            f"nats-server ([the table's side of the floor](floor/table-side.md)).\n\n"
            f"| figure | value |\n|---|---|\n"
            f"| settlement committed -> broker's PubAck, {lat['coups']} coups one at a time, p50 | {lat['p50_ms']} ms |\n"
            f"| same, p99 (max) | {lat['p99_ms']} ms ({lat['max_ms']} ms) |\n"
            f"| catch-up after an outage: {cu['events']} events waiting | {cu['seconds']} s, "
            f"{cu['events_per_s']} events/s |\n")
