"""The casino floor's numbers: `make bench ARGS=floor` (`python -m host_tools.bench floor`).

Lightweight simulated tables (host_tools/floor/simtables.py: each table's own journal and cursor,
publishing in order with its Nats-Msg-Id, resending from its cursor after a failure, as the daemon's
outbox does) into one real nats-server and the floor service (`cylindre floor`, its own process,
SQLite store) on this machine. Everything shares the machine's cores: the broker, the floor and
the tables' publishers.

The rate: a fast real table plays 60 coups an hour (French roulette runs 30 to 60); each coup is a
`result` and its `settlement`, a `void` before it in 4 % of them, a croupier change (`table` and its
`audit`) every 30 coups, an alert now and then: about 2.1 journaled events per coup, 0.035 a second
per table. Ten times that is a coup every 6 s per table: 0.35 journaled events a second, plus the
heartbeat every 5 s (a timer, not scaled), 0.55 messages a second per table.

Phases (one broker, one floor, one fleet):
  steady   `--seconds` at `--tables`: events/s stored, result at a table -> committed in the floor's
           store p50/p99 (goal p99 <= 1 s), CPU of the broker, the floor and the tables (/proc);
  outage   the broker stopped (SIGTERM) `--outage-s`, the tables playing on; catch-up time from
           its restart until every event journaled before the restart is in the floor's store;
  crash    the floor SIGKILLed mid-ingest and started again; catch-up time;
  cut      `--cut-tables` tables reach the broker through a relay that is cut `--cut-s` (their
           connections dropped, new ones refused) and mended;
  renew    `--renew-tables` tables start again on a new, empty journal (event ids from 1 again,
           a new journal identity) and play on;
  drain    the tables stop; every table's journals are counted against the floor's store: lost,
           doubled (rows for one (table, journal, event id), results for one (table, journal, spin));
  largest  `--scale` table counts, each on a fresh broker and floor for `--scale-seconds`: the
           largest floor whose p99 stays within the goal and whose ingest keeps up;
  cluster  the 3-node production cluster losing each node in turn (floorcluster.py).
Prints the figures and writes bench/out/floor.json; `markdown(figures)` renders them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

OUT = Path("bench/out/floor.json")
GOAL_P99_S = 1.0
REAL_GAME_S = 60.0              # a fast real table: 60 coups an hour
EVENTS_PER_GAME = 2.1


def add_arguments(p):
    p.add_argument("--tables", type=int, default=1000, help="simulated tables (default 1000)")
    p.add_argument("--rate-x", type=float, default=10.0, help="times a real table's event rate (default 10)")
    p.add_argument("--seconds", type=float, default=60.0, help="steady phase, seconds (default 60)")
    p.add_argument("--outage-s", type=float, default=60.0, help="broker outage, seconds (default 60; 0 skips)")
    p.add_argument("--cut-tables", type=int, default=10, help="tables behind the relay that is cut (default 10)")
    p.add_argument("--cut-s", type=float, default=15.0, help="network cut, seconds (default 15; 0 skips)")
    p.add_argument("--renew-tables", type=int, default=5, help="tables started again on a new, empty journal "
                   "before the drain (default 5; 0 skips)")
    p.add_argument("--no-crash", action="store_true", help="skip the floor's SIGKILL")
    p.add_argument("--conns", type=int, default=50, help="NATS connections the tables share (default 50)")
    p.add_argument("--scale", default="2000,3000,4000", help="table counts for the largest floor (default "
                                                              "2000,3000,4000; '' skips)")
    p.add_argument("--scale-seconds", type=float, default=30.0, help="seconds per scale step (default 30)")
    p.add_argument("--db", help="the floor's store (default a SQLite file in a temporary folder)")
    from . import floorcluster
    floorcluster.add_arguments(p)


# -- processes and /proc ----------------------------------------------------------------------------
def cpu_seconds(pid) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


# -- the store, read-only ---------------------------------------------------------------------------
class Reader:
    def __init__(self, db):
        self.db = db
        self.conn = None

    def _c(self):
        if self.conn is None:
            self.conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        return self.conn

    def count(self) -> int:
        try:
            return self._c().execute("SELECT COUNT(*) FROM events").fetchone()[0]
        except sqlite3.OperationalError:
            return 0

    def lags(self, since, until) -> list[float]:
        return [r[0] for r in self._c().execute(
            "SELECT received_at - at FROM events WHERE kind='result' AND at >= ? AND at < ?", (since, until))]

    def keys(self) -> dict:
        out = {}
        for k in self._c().execute("SELECT table_id, journal, event_id FROM events"):
            out[k] = out.get(k, 0) + 1
        return out

    def spins_doubled(self) -> int:
        seen = {}
        for t, j, body in self._c().execute("SELECT table_id, journal, body FROM events WHERE kind='result'"):
            k = (t, j, json.loads(body)["spin"])
            seen[k] = seen.get(k, 0) + 1
        return sum(n - 1 for n in seen.values())

    def stored_before(self, fleet, t_cut) -> tuple[int, int]:
        """(events journaled before t_cut, how many of them the store holds)."""
        want = {(t.table, t.journal_id, ev[0]) for t in fleet.tables for ev in t.journal if ev[2] < t_cut}
        have = set(self._c().execute("SELECT table_id, journal, event_id FROM events WHERE at < ?", (t_cut,)))
        return len(want), len(want & have)

    def close(self):
        if self.conn is not None:
            self.conn.close()


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def wait_until(cond, timeout, every=0.25):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return time.monotonic() - t0
        time.sleep(every)
    return None


# -- one floor --------------------------------------------------------------------------------------
class Rig:
    """A broker, the floor and a fleet of `tables` simulated tables."""

    def __init__(self, tables, rate_x, conns, db=None, cut_tables=0):
        from host_tools.floor import natsrv
        from host_tools.floor.harness import FloorProcess, LoopThread
        from host_tools.floor.simtables import Fleet, Proxy
        self.work = Path(tempfile.mkdtemp(prefix="cylindre-bench-floor-"))
        self.db = db or str(self.work / "floor.sqlite")
        self.broker = natsrv.Server(self.work / "jetstream").start()
        self.floor = FloorProcess(self.work, self.db, self.broker.url, log="floor.log", ready="connected").start()
        self.loop = LoopThread()
        self.proxy = self.loop.run(Proxy("127.0.0.1", self.broker.port).start()) if cut_tables else None
        self.fleet = Fleet(self.broker.url, tables, conns=conns, game_s=REAL_GAME_S / rate_x, heartbeat_s=5.0,
                           via=self.proxy.url if self.proxy else None, via_tables=cut_tables)
        self.run = self.loop.submit(self.fleet.run())
        self.reader = Reader(self.db)

    def cpu(self):
        return {"broker": cpu_seconds(self.broker.pid), "floor": cpu_seconds(self.floor.proc.pid),
                "tables": cpu_seconds(os.getpid())}

    def steady(self, seconds, warmup=5.0) -> dict:
        time.sleep(warmup)
        t0, n0, c0 = time.time(), self.reader.count(), self.cpu()
        p0, j0 = self.fleet.published, self.fleet.total()
        time.sleep(seconds)
        t1, n1, c1 = time.time(), self.reader.count(), self.cpu()
        p1, j1 = self.fleet.published, self.fleet.total()
        time.sleep(2.0)                                  # the last events of the window reach the store
        lags = self.reader.lags(t0, t1)
        acks = [b - a for a, b in list(self.fleet.acked) if t0 <= a < t1]
        dt = t1 - t0
        return {"tables": len(self.fleet.tables), "seconds": round(dt, 1),
                "events_per_s": round((n1 - n0) / dt, 1), "published_per_s": round((p1 - p0) / dt, 1),
                "journaled_per_s": round((j1 - j0) / dt, 1),
                "results": len(lags), "p50_s": _r(pct(lags, 0.5)), "p99_s": _r(pct(lags, 0.99)),
                "puback_p50_s": _r(pct(acks, 0.5)), "puback_p99_s": _r(pct(acks, 0.99)),
                "max_s": _r(max(lags) if lags else None),
                "cpu_pct": {k: round(100 * (c1[k] - c0[k]) / dt, 1) for k in c0},
                "backlog_end": self.fleet.backlog()}

    def close(self):
        self.fleet.stop()
        try:
            self.run.result(120)
        except Exception:                                # noqa: BLE001 - Loop.close cancels what is left
            pass
        if self.proxy:
            self.loop.run(self.proxy.close())
        self.loop.close()
        self.reader.close()
        self.floor.stop()
        self.broker.close()


def _r(x, n=3):
    return None if x is None else round(x, n)


def run(args) -> int:
    rate_per_table = EVENTS_PER_GAME / (REAL_GAME_S / args.rate_x)
    figures = {"tables": args.tables, "rate_x": args.rate_x, "game_s": REAL_GAME_S / args.rate_x,
               "journaled_per_table_s": round(rate_per_table, 3), "heartbeat_s": 5.0, "conns": args.conns,
               "cores": os.cpu_count(), "goal_p99_s": GOAL_P99_S, "loadavg_start": list(os.getloadavg()),
               "command": "make bench ARGS='floor" + _argline(args) + "'"}
    print(f"[floor] {args.tables} tables x{args.rate_x:g}: a coup every {REAL_GAME_S / args.rate_x:g} s per table, "
          f"~{rate_per_table * args.tables:.0f} journaled events/s + {args.tables / 5:.0f} heartbeats/s", flush=True)
    rig = Rig(args.tables, args.rate_x, args.conns, args.db, args.cut_tables if args.cut_s > 0 else 0)
    try:
        figures["steady"] = s = rig.steady(args.seconds)
        print(f"[floor] steady: {s['events_per_s']} events/s stored, result -> floor store p50 {s['p50_s']} s, "
              f"p99 {s['p99_s']} s (max {s['max_s']}; of which table -> PubAck p50 {s['puback_p50_s']} s, "
              f"p99 {s['puback_p99_s']} s), CPU broker {s['cpu_pct']['broker']} %, floor "
              f"{s['cpu_pct']['floor']} %, tables {s['cpu_pct']['tables']} % of one core", flush=True)
        if args.outage_s > 0:
            rig.broker.stop()
            down = time.time()
            time.sleep(args.outage_s)
            backlog = rig.fleet.backlog()
            rig.broker.restart()
            back = time.time()
            catch = wait_until(lambda: _caught_up(rig, back), 600)
            figures["outage"] = {"seconds": round(back - down, 1), "backlog_at_restart": backlog,
                                 "catch_up_s": _r(catch, 1)}
            print(f"[floor] outage {back - down:.0f} s: {backlog} events waiting at the tables, caught up "
                  f"{catch:.1f} s after the broker's restart" if catch is not None else "[floor] outage: NOT caught up",
                  flush=True)
        if not args.no_crash:
            time.sleep(3)
            before = rig.reader.count()
            rig.floor.kill()
            time.sleep(2)
            restart = time.monotonic()
            rig.floor.start()                            # returns once it is connected to the broker
            up = time.monotonic() - restart
            t_cut = time.time()
            catch = wait_until(lambda: _caught_up(rig, t_cut), 600)
            figures["crash"] = {"down_s": 2.0, "stored_at_kill": before, "start_s": _r(up, 1),
                                "catch_up_s": _r(None if catch is None else up + catch, 1)}
            print(f"[floor] floor SIGKILLed, restarted 2 s later: up in {up:.1f} s, every event journaled until then "
                  f"stored {up + catch:.1f} s after the restart" if catch is not None else "[floor] crash: NOT caught up",
                  flush=True)
        if args.cut_s > 0 and rig.proxy:
            rig.loop.call(rig.proxy.cut)
            time.sleep(args.cut_s)
            cut_backlog = sum(len(t.journal) - t.cursor for t in rig.fleet.tables[:args.cut_tables])
            rig.loop.call(rig.proxy.mend)
            catch = wait_until(lambda: all(t.cursor == len(t.journal) for t in rig.fleet.tables[:args.cut_tables]), 300)
            figures["cut"] = {"tables": args.cut_tables, "seconds": args.cut_s, "backlog_at_mend": cut_backlog,
                              "resent_s": _r(catch, 1)}
            print(f"[floor] network cut of {args.cut_tables} tables for {args.cut_s:g} s: {cut_backlog} events waiting, "
                  f"all acknowledged {catch:.1f} s after the mend" if catch is not None else "[floor] cut: NOT resent",
                  flush=True)
        if args.renew_tables > 0:
            renewed = rig.fleet.tables[-args.renew_tables:]
            for t in renewed:
                t.renew_asked = True
            ok = wait_until(lambda: all(t.past and t.journal and t.cursor == len(t.journal) for t in renewed), 120)
            figures["renew"] = {"tables": len(renewed), "events_on_new_journals": sum(len(t.journal) for t in renewed),
                                "published": ok is not None}
            print(f"[floor] {len(renewed)} tables started again on a new, empty journal: "
                  f"{figures['renew']['events_on_new_journals']} events journaled there "
                  + ("and acknowledged" if ok is not None else "NOT all acknowledged"), flush=True)
        rig.fleet.producing = False
        drained = wait_until(lambda: rig.fleet.backlog() == 0, 300)
        total = rig.fleet.total()
        stored = wait_until(lambda: rig.reader.count() >= total, 300)
        keys = rig.reader.keys()
        sent = set().union(*(t.keys() for t in rig.fleet.tables))
        figures["integrity"] = {"journaled": total, "stored": len(keys), "lost": len(sent - set(keys)),
                                "doubled_rows": sum(n - 1 for n in keys.values()),
                                "doubled_results": rig.reader.spins_doubled(),
                                "unknown": len(set(keys) - sent), "drained": drained is not None and stored is not None,
                                "redeliveries_absorbed": (rig.floor.health() or {}).get("duplicates")}
        i = figures["integrity"]
        print(f"[floor] every journal against the store: {i['journaled']} journaled, {i['stored']} stored, "
              f"{i['lost']} lost, {i['doubled_rows']} doubled rows, {i['doubled_results']} doubled results", flush=True)
    finally:
        rig.close()
    figures["largest"] = largest(args, figures["steady"])
    if args.failover_tables > 0:
        from . import floorcluster
        figures["cluster"] = floorcluster.run(args, Reader, wait_until, REAL_GAME_S)
    figures["loadavg_end"] = list(os.getloadavg())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"[floor] wrote {OUT}")
    ok = figures["integrity"]["lost"] == 0 and figures["integrity"]["doubled_rows"] == 0 \
        and figures["integrity"]["doubled_results"] == 0
    if "cluster" in figures:
        ok = ok and figures["cluster"]["integrity"]["lost"] == 0 and figures["cluster"]["integrity"]["doubled"] == 0
    return 0 if ok else 1


def _caught_up(rig, t_cut) -> bool:
    want, have = rig.reader.stored_before(rig.fleet, t_cut)
    return want == have


def largest(args, first) -> dict:
    """The largest floor within the goal: the first steady run and each `--scale` count in turn, a
    fresh broker and floor each, until p99 passes the goal or the store falls behind the tables."""
    keep = ("tables", "p50_s", "p99_s", "puback_p99_s", "events_per_s", "journaled_per_s", "published_per_s", "cpu_pct")
    steps = [dict({k: first[k] for k in keep}, within=_within(first))]
    for n in [int(x) for x in args.scale.split(",") if x.strip()]:
        if not steps[-1]["within"]:
            break
        rig = Rig(n, args.rate_x, args.conns)
        try:
            s = rig.steady(args.scale_seconds)
        finally:
            rig.close()
        steps.append(dict({k: s[k] for k in keep}, within=_within(s)))
        print(f"[floor] {n} tables: p99 {s['p99_s']} s (PubAck p99 {s['puback_p99_s']} s), {s['events_per_s']} events/s stored "
              f"({s['published_per_s']} published/s), CPU broker {s['cpu_pct']['broker']} %, floor "
              f"{s['cpu_pct']['floor']} %, tables {s['cpu_pct']['tables']} %", flush=True)
    ok = [x["tables"] for x in steps if x["within"]]
    return {"steps": steps, "largest_within_goal": max(ok) if ok else None,
            "tried_up_to": steps[-1]["tables"]}


def _within(s) -> bool:
    """p99 within the goal, and the store kept up with what the tables journaled (95 %)."""
    return s["p99_s"] is not None and s["p99_s"] <= GOAL_P99_S and s["events_per_s"] >= 0.95 * s["journaled_per_s"]


def _argline(args) -> str:
    parts = []
    for k, default in (("tables", 1000), ("seconds", 60.0), ("outage_s", 60.0), ("scale", "2000,3000,4000"),
                       ("failover_tables", 50), ("failover_s", 20.0)):
        v = getattr(args, k)
        if v != default:
            parts.append(f"--{k.replace('_', '-')} {v}")
    return (" " + " ".join(parts)) if parts else ""


def _load(f):
    """The one-minute load average at the start, as a person reads it."""
    load = f.get("loadavg_start") or ["?"]
    return f"{load[0]:.2f}" if isinstance(load[0], (int, float)) else str(load[0])


def markdown(figures: dict) -> str:
    """The floor's figures as a Markdown section, with the command that produced them."""
    f = figures
    s = f["steady"]
    lines = ["## The casino floor (NATS JetStream, floor service)", "",
             f"`{f['command']}` on this {f['cores']}-core machine (broker, floor service and simulated tables share it; "
             f"load average {_load(f)} at the start). "
             f"{f['tables']} tables at {f['rate_x']:g} times a fast real table's rate (a coup every {f['game_s']:g} s, "
             f"{f['journaled_per_table_s']} journaled events/s per table, a heartbeat every {f['heartbeat_s']:g} s).", "",
             "| figure | value |", "|---|---|",
             f"| events stored at the floor | {s['events_per_s']}/s (the tables journaled {s['journaled_per_s']}/s) |",
             f"| result at a table -> committed in the floor's store | p50 {s['p50_s']} s, p99 {s['p99_s']} s "
             f"(goal p99 <= {f['goal_p99_s']:g} s) |",
             f"| of which: result at a table -> its PubAck at the table | p50 {s.get('puback_p50_s')} s, "
             f"p99 {s.get('puback_p99_s')} s |",
             f"| CPU (% of one core) | broker {s['cpu_pct']['broker']}, floor {s['cpu_pct']['floor']}, "
             f"simulated tables {s['cpu_pct']['tables']} |"]
    if "outage" in f:
        o = f["outage"]
        lines.append(f"| broker stopped {o['seconds']:g} s | {o['backlog_at_restart']} events waiting at the tables, "
                     f"caught up {o['catch_up_s']} s after its restart |")
    if "crash" in f:
        c = f["crash"]
        lines.append(f"| floor SIGKILLed mid-ingest, restarted 2 s later | up in {c['start_s']} s, caught up "
                     f"{c['catch_up_s']} s after its restart |")
    if "cut" in f:
        c = f["cut"]
        lines.append(f"| network cut, {c['tables']} tables, {c['seconds']:g} s | {c['backlog_at_mend']} events waiting, "
                     f"all acknowledged {c['resent_s']} s after the mend |")
    if "renew" in f:
        r = f["renew"]
        lines.append(f"| {r['tables']} tables started again on a new, empty journal | {r['events_on_new_journals']} "
                     f"events journaled there, {'all' if r['published'] else 'NOT all'} acknowledged (counted below) |")
    i = f["integrity"]
    lines.append(f"| every journal against the store | {i['journaled']} journaled, {i['lost']} lost, "
                 f"{i['doubled_rows'] + i['doubled_results']} doubled |")
    lg = f.get("largest") or {}
    if lg:
        steps = ", ".join(f"{x['tables']}: p99 {x['p99_s']} s{'' if x['within'] else ' (over)'}" for x in lg["steps"])
        lines.append(f"| largest floor within the goal | {lg['largest_within_goal']} tables (tried {steps}) |")
    if f.get("cluster"):
        from . import floorcluster
        lines += floorcluster.markdown(f["cluster"])
    return "\n".join(lines) + "\n"
