"""Bets through the HTTP API: `make bench ARGS="api [--clients 32] [--seconds 10] [--against DIR]"`.

Starts the simulated wheel (`cylindre wheel`, idle: its STATUS frames say betting is open, no
ball is launched) on a pseudo-terminal and `cylindre daemon` on it, each its own process (table
open, a fresh journal in a temporary folder), then CLIENTS threads each place bets back to back on
a keep-alive connection for SECONDS. A 201 comes back only after the bet's transaction is
committed (SQLite, synchronous FULL): the time to the 201 is the latency to durable. Prints bets/s
and latency percentiles; writes bench/out/api.json.

By default the same load first runs on the daemon of commit bb83dd9 (before group commit:
one transaction and one fsync a bet; extracted with `git archive` into build/, run by this
Python with its tree first on PYTHONPATH, on the same simulated wheel), then on this one, and
both are printed side by side with the goal (1,000 bets/s, p99 <= 50 ms); `--no-before` runs
this daemon only; `--before REV` runs the daemon of another commit first (`--before main`).
Each daemon's CPU time over the load (from /proc, Linux) is printed a bet: on a machine shared
with other work it says what the throughput cannot, what a request costs.

`--against DIR`: the same load on the daemon of another checkout (an earlier version, with its own
`.venv`), for before/after figures in the same conditions; it is run without a wheel (before issue
8 the daemon took bets without word from the wheel) and its answers to the token are ignored.
"""

from __future__ import annotations

import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from host_tools.bench import procstat

OUT = Path("bench/out/api.json")
PATH_FIGURES = {}
GOAL_BETS_PER_S = 1000
GOAL_P99_MS = 50


def add_arguments(p):
    p.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    p.add_argument("--seconds", type=float, default=10.0, help="how long they place bets (default 10)")
    p.add_argument("--against", metavar="DIR", help="run the daemon of this checkout (its .venv) instead: before/after")
    p.add_argument("--no-before", action="store_true", help="do not run the daemon of the commit before group commit first")
    p.add_argument("--before", metavar="REV", default=None,
                   help="the commit whose daemon runs first (default bb83dd9, before group commit); e.g. main")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _client(port, token, n, stop, lat, errors):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    i = 0
    while not stop.is_set():
        body = json.dumps({"player": f"p{n}", "type": "plein", "numbers": [i % 37], "stake": 100 + i % 50})
        t0 = time.perf_counter()
        try:
            c.request("POST", "/bets", body, headers)
            r = c.getresponse()
            answer = r.read()
        except (OSError, http.client.HTTPException):
            errors.append("connection")
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            continue
        if r.status == 201:
            lat.append(time.perf_counter() - t0)
        else:
            try:
                errors.append(f"{r.status} {json.loads(answer).get('error')}")
            except ValueError:
                errors.append(str(r.status))
        i += 1
    c.close()


def _wheel(work, key):
    """The simulated wheel, idle on a pseudo-terminal: (process, pty path)."""
    path_file = work / "wheel.path"
    wheel = subprocess.Popen([sys.executable, "-m", "host_tools.sim.ptywheel", "--key", str(key), "--pause", "1e9",
                              "--path-file", str(path_file), "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 20
    while not (path_file.exists() and path_file.read_text().strip()):
        if wheel.poll() is not None or time.monotonic() > end:
            raise RuntimeError("the simulated wheel did not start")
        time.sleep(0.05)
    return wheel, path_file.read_text().split()[0]


def _stop(p):
    if p is None:
        return
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()


def placement_path(clients, seconds, grouped):
    """The placement path without HTTP, in this process: `clients` threads place bets back to back
    for `seconds`, each bet its own transaction (`Table.place`, as before group commit) or through
    the committer (grouped). The journal, publisher (event rows) and window are the daemon's."""
    import logging
    from host_tools.sim.tablewheel import Wheel
    from host_tools.table.game.committer import Committer
    from host_tools.table.journal.events_log import EventLog
    from host_tools.table.journal.store import Journal
    from host_tools.table.game.table import Table
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        j = Journal(Path(tmp) / "j.sqlite")
        table = Table(j, "T1", publish=EventLog(j).publish)
        table.set_open(True)
        Wheel(table)                                     # a fresh STATUS on a still clock: betting open
        place = Committer(table).place if grouped else table.place
        lat = []
        stop = time.perf_counter() + seconds

        def client(n):
            i = 0
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                place({"player": f"p{n}", "type": "plein", "numbers": [i % 37], "stake": 100 + i % 50})
                lat.append(time.perf_counter() - t0)
                i += 1
        threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        j.close()
    logging.disable(logging.NOTSET)
    lat.sort()
    return {"bets_per_s": round(len(lat) / wall), "latency_ms_p50": round(lat[len(lat) // 2] * 1e3, 2),
            "latency_ms_p99": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1e3, 2)}


def run(args) -> int:
    if not args.against:
        a = placement_path(args.clients, min(args.seconds, 5), False)
        b = placement_path(args.clients, min(args.seconds, 5), True)
        print(f"placement path without HTTP, {args.clients} threads in one process: a transaction a bet "
              f"{a['bets_per_s']} bets/s (p99 {a['latency_ms_p99']} ms); group commit {b['bets_per_s']} bets/s "
              f"(p99 {b['latency_ms_p99']} ms)")
        PATH_FIGURES.update(one_by_one=a, grouped=b)
    if args.against:
        return _report(args, _load(args, against=args.against), None)
    before = None
    if not args.no_before:
        from host_tools.bench.durable import BEFORE, before_tree
        rev = args.before or BEFORE
        if rev != BEFORE:           # a name (main, HEAD~2) is resolved: the folder is per commit
            rev = subprocess.run(["git", "rev-parse", "--short", rev], check=True, capture_output=True,
                                 text=True, cwd=Path(__file__).resolve().parents[2]).stdout.strip()
        tree = before_tree(rev)
        if tree is None:
            print("[bench] api: no git checkout, the daemon before group commit is not run")
        else:
            before = _load(args, tree=tree)
            if before is not None:
                before["daemon"] = rev
    return _report(args, _load(args), before)


def _load(args, against=None, tree=None):
    """The load on one daemon: its figures, or None if it did not come up."""
    from host_tools.table.api.auth import issue
    from host_tools.table.wheel.keys import new_key
    work = Path(tempfile.mkdtemp(prefix="cylindre-bench-api-"))
    new_key(work / "T1.key")
    port = _free_port()
    python, cwd, wheel, env = sys.executable, None, None, None
    if tree is None:
        token = issue(work / "journal.sqlite", "bench", "croupier")
    else:       # the journal made by that daemon's own code (its schema)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(Path(tree) / "firmware")]))
        token = subprocess.run([python, "-c", "import sys; from host_tools.table.api.auth import issue; "
                                "print(issue(sys.argv[1], 'bench', 'croupier'))", str(work / "journal.sqlite")],
                               cwd=tree, env=env, check=True, capture_output=True, text=True).stdout.split()[-1]
    if against:
        cwd = Path(against).resolve()
        python = str(cwd / ".venv" / "bin" / "python")
        tty = str(work / "no-wheel")
    else:
        wheel, tty = _wheel(work, work / "T1.key")
    if tree is not None:
        cwd = tree
    daemon = subprocess.Popen([python, "-m", "host_tools.table", "--port", tty,
                               "--key", str(work / "T1.key"), "--journal", str(work / "journal.sqlite"),
                               "--http", f"127.0.0.1:{port}", "--open", "--log", str(work / "daemon.log")],
                              cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/state", headers={"Authorization": "Bearer " + token})
                r = c.getresponse()
                st = json.loads(r.read()) if r.status == 200 else None
                if st is not None and (against or st["table"].get("accepting_bets")):
                    break
            except (OSError, ValueError):
                pass
            if daemon.poll() is not None or time.monotonic() > end:
                print(f"[bench] api: the daemon did not come up (or took no bets); see {work / 'daemon.log'}")
                return None
            time.sleep(0.1)
        stop = threading.Event()
        lats = [[] for _ in range(args.clients)]
        errors: list = []
        threads = [threading.Thread(target=_client, args=(port, token, n, stop, lats[n], errors), daemon=True)
                   for n in range(args.clients)]
        t0, cpu0 = time.perf_counter(), procstat.cpu_s(daemon.pid)
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join(35)
        wall, cpu1 = time.perf_counter() - t0, procstat.cpu_s(daemon.pid)
    finally:
        _stop(daemon)
        _stop(wheel)
        shutil.rmtree(work, ignore_errors=True)
    lat = sorted(x for ls in lats for x in ls)
    if not lat:
        print("[bench] api: no bet placed")
        return None

    def pct(p):
        return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1e3

    figures = {"clients": args.clients, "seconds": round(wall, 2), "bets": len(lat), "errors": len(errors),
               "bets_per_s": round(len(lat) / wall, 1), "latency_ms_p50": round(pct(50), 2),
               "latency_ms_p99": round(pct(99), 2), "latency_ms_max": round(lat[-1] * 1e3, 2),
               "latency_ms_mean": round(statistics.fmean(lat) * 1e3, 2), "against": against,
               "daemon_cpu_ms_per_bet": None if cpu0 is None or cpu1 is None else round((cpu1 - cpu0) / len(lat) * 1e3, 3),
               "daemon_cpu_share": None if cpu0 is None or cpu1 is None else round((cpu1 - cpu0) / wall, 2),
               "refused": {str(k): errors.count(k) for k in set(errors)},
               "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
               "load_average": os.getloadavg()[0]}
    return figures


def _line(name, f):
    cpu = f.get("daemon_cpu_ms_per_bet")
    print(f"  {name:28} {f['bets_per_s']:8.0f} {f['latency_ms_p50']:9.1f} {f['latency_ms_p99']:9.1f} "
          f"{f['latency_ms_max']:9.1f} {f['errors']:7d} {'-' if cpu is None else f'{cpu:.2f}':>12} "
          f"(daemon on {f.get('daemon_cpu_share') or 0:.0%} of a core, load average {f['load_average']:.1f})")


def _report(args, after, before) -> int:
    if after is None:
        return 1
    print(f"api: {args.clients} clients placing bets for {after['seconds']:.1f} s through POST /bets "
          f"(each 201 after its commit)" + (f", daemon of {args.against}" if args.against else ""))
    print(f"  {'daemon':28} {'bets/s':>8} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'errors':>7} {'CPU ms/bet':>12}")
    if before is not None:
        _line("before (" + before["daemon"] + ")", before)
    _line("this one" if not args.against else args.against, after)
    met = after["bets_per_s"] >= GOAL_BETS_PER_S and after["latency_ms_p99"] <= GOAL_P99_MS
    print(f"  goal >= {GOAL_BETS_PER_S} bets/s with p99 <= {GOAL_P99_MS} ms: {'met' if met else 'MISSED'}")
    for f in (before, after):
        if f is not None and f["errors"]:
            print(f"  answers other than 201: {f['refused']}")
    out = OUT if not args.against else OUT.with_name("api-against.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"after": after, "before": before, "goal_met": met, "placement_path": PATH_FIGURES},
                              indent=2) + "\n")
    print(f"  written {out}")
    return 0 if not after["errors"] else 1


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    a = figures["after"]
    L = ["## Bets through the API (`api`)", "",
         f"{a['clients']} clients placing bets through `POST /bets` for {a['seconds']:.0f} s, each answered 201 after "
         f"its commit to the journal (`make bench ARGS='api'`).", "",
         "| bets/s | p50 | p99 | max | answers other than 201 | daemon CPU a bet | goal |", "|---|---|---|---|---|---|---|",
         f"| {a['bets_per_s']:,.0f} | {a['latency_ms_p50']:.1f} ms | {a['latency_ms_p99']:.1f} ms | "
         f"{a['latency_ms_max']:.1f} ms | {a['errors']:,}"
         + (" (" + ", ".join(f"{k}: {n:,}" for k, n in sorted(a.get("refused", {}).items())) + ")" if a["errors"] else "")
         + " | "
         + (f"{a['daemon_cpu_ms_per_bet']:.2f} ms" if a.get("daemon_cpu_ms_per_bet") is not None else "—")
         + f" | ≥ {GOAL_BETS_PER_S:,} bets/s with p99 ≤ {GOAL_P99_MS} ms: {'met' if figures['goal_met'] else 'missed'} |"]
    if a["errors"]:
        L += ["", "A `409 wheel_not_heard` is the daemon refusing a bet while it has no fresh word from the wheel "
                  "that betting is open ([the betting window](internals/betting-window.md)): on a loaded machine the simulated wheel's status frames "
                  "come late."]
    p = figures.get("placement_path")
    if p:
        L += ["", "Without HTTP (the placement path, 32 threads in one process): " + _path_words(p) + "."]
    return "\n".join(L) + "\n"


def _path_words(p) -> str:
    if isinstance(p, dict):
        parts = []
        names = {"one_by_one": "a transaction a bet", "grouped": "group commit"}
        for k, v in p.items():
            if isinstance(v, dict) and "bets_per_s" in v:
                parts.append(f"{names.get(k, k.replace('_', ' '))} {v['bets_per_s']:,.0f} bets/s"
                             + (f" (p99 {v['latency_ms_p99']:.1f} ms)" if "latency_ms_p99" in v else ""))
        if parts:
            return "; ".join(parts)
    return json.dumps(p)
