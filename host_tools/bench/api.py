"""Bets through the HTTP API: `make bench ARGS="api [--clients 32] [--seconds 10] [--against DIR]"`.

Starts the simulated wheel (`cylindre wheel`, idle: its STATUS frames say betting is open, no
ball is launched) on a pseudo-terminal and `cylindre daemon` on it, each its own process (table
open, a fresh journal in a temporary folder), then CLIENTS threads each place bets back to back on
a keep-alive connection for SECONDS. A 201 comes back only after the bet's transaction is
committed (SQLite, synchronous FULL): the time to the 201 is the latency to durable. Prints bets/s
and latency percentiles; writes bench/out/api.json.

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
import sys
import tempfile
import threading
import time
from pathlib import Path

OUT = Path("bench/out/api.json")


def add_arguments(p):
    p.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    p.add_argument("--seconds", type=float, default=10.0, help="how long they place bets (default 10)")
    p.add_argument("--against", metavar="DIR", help="run the daemon of this checkout (its .venv) instead: before/after")


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
    wheel = subprocess.Popen([sys.executable, "-m", "host_tools.simwheel", "--key", str(key), "--pause", "1e9",
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


def run(args) -> int:
    from host_tools.daemon.auth import issue
    from host_tools.daemon.keys import new_key
    work = Path(tempfile.mkdtemp(prefix="cylindre-bench-api-"))
    new_key(work / "T1.key")
    token = issue(work / "journal.sqlite", "bench", "croupier")
    port = _free_port()
    python, cwd, wheel = sys.executable, None, None
    if args.against:
        cwd = Path(args.against).resolve()
        python = str(cwd / ".venv" / "bin" / "python")
        tty = str(work / "no-wheel")
    else:
        wheel, tty = _wheel(work, work / "T1.key")
    daemon = subprocess.Popen([python, "-m", "host_tools.daemon", "--port", tty,
                               "--key", str(work / "T1.key"), "--journal", str(work / "journal.sqlite"),
                               "--http", f"127.0.0.1:{port}", "--open", "--log", str(work / "daemon.log")],
                              cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/state", headers={"Authorization": "Bearer " + token})
                r = c.getresponse()
                st = json.loads(r.read()) if r.status == 200 else None
                if st is not None and (args.against or st["table"].get("accepting_bets")):
                    break
            except (OSError, ValueError):
                pass
            if daemon.poll() is not None or time.monotonic() > end:
                print(f"[bench] api: the daemon did not come up (or took no bets); see {work / 'daemon.log'}")
                return 1
            time.sleep(0.1)
        stop = threading.Event()
        lats = [[] for _ in range(args.clients)]
        errors: list = []
        threads = [threading.Thread(target=_client, args=(port, token, n, stop, lats[n], errors), daemon=True)
                   for n in range(args.clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join(35)
        wall = time.perf_counter() - t0
    finally:
        _stop(daemon)
        _stop(wheel)
    lat = sorted(x for ls in lats for x in ls)
    if not lat:
        print("[bench] api: no bet placed")
        return 1

    def pct(p):
        return lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1e3

    figures = {"clients": args.clients, "seconds": round(wall, 2), "bets": len(lat), "errors": len(errors),
               "bets_per_s": round(len(lat) / wall, 1), "latency_ms_p50": round(pct(50), 2),
               "latency_ms_p99": round(pct(99), 2), "latency_ms_max": round(lat[-1] * 1e3, 2),
               "latency_ms_mean": round(statistics.fmean(lat) * 1e3, 2), "against": args.against,
               "refused": {str(k): errors.count(k) for k in set(errors)},
               "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    print(f"api: {args.clients} clients placing bets for {wall:.1f} s through POST /bets (each 201 after its commit)"
          + (f", daemon of {args.against}" if args.against else ""))
    print(f"  {figures['bets_per_s']:.0f} bets/s ({len(lat)} bets, {len(errors)} errors); latency to durable "
          f"p50 {figures['latency_ms_p50']:.1f} ms, p99 {figures['latency_ms_p99']:.1f} ms, max {figures['latency_ms_max']:.1f} ms")
    if errors:
        print(f"  answers other than 201: {figures['refused']}")
    out = OUT if not args.against else OUT.with_name("api-against.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"  written {out}")
    return 0 if not errors else 1
