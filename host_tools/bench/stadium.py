"""Bench part `stadium`: hundreds of betting terminals around one wheel (`make bench ARGS=stadium`).

The daemon (`cylindre daemon`, a fresh journal, the table open) and the simulated wheel each run
in their own process; TERMINALS terminal identities (role `terminal`, one token each) hold one
keep-alive connection each, from one asyncio loop in this process. Three loads, one after the
other:

1. coups: the wheel spins (`cylindre wheel --pause --speed`); at each coup every terminal sends
   one slip of 1 to 20 bets, most of them in the last 2 s before the wheel's call (its time
   learned from the coups before), some of them after it. At least COUPS coups are counted.
   Every answer is checked against the journal afterwards: a slip answered 201 and sent after
   the daemon received the call must not have a bet played (`accepted_after_call`, must be 0),
   and every slip is in the journal whole or not at all.
2. slips at a rate: the wheel idle (betting open), terminals send slips open-loop at RATE bets/s
   for SECONDS: the accepted bets/s and the latency to durable (each 201 comes after its
   commit) against the goal (>= 20,000 bets/s, p99 <= 100 ms).
3. single bets at a rate: croupier tokens send `POST /bets` open-loop at SINGLE bets/s (goal
   >= 2,500/s, p99 <= 50 ms).

RATE and SINGLE are 2 % over the goals by default: the rate accepted is counted from the first
request to the last answer, so a daemon that keeps up with 2,500/s is counted at 2,499/s. The two
rates are sent REPEAT times (`--repeat`), each time on a fresh daemon: a p99 over 8 s says as much
of what else the machine did then as of the daemon, so the page says in how many runs the goal was
met, and shows the run of median p99.

For each: the daemon's CPU a bet (/proc, user + system over the load) and the memory a bet on the
layout (its resident set before the first bet and at the most bets on the layout, over their
count). The figures go to bench/out/stadium.json and its section of docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import time
from pathlib import Path

from host_tools.bench.stadiumcheck import check_coups, pct
from host_tools.bench.stadiumrig import Conn, Rig

OUT = Path("bench/out/stadium.json")
GOAL_SLIP_BETS_S, GOAL_SLIP_P99_MS = 20000, 100
GOAL_SINGLE_BETS_S, GOAL_SINGLE_P99_MS = 2500, 50
RATE, SINGLE = 20400, 2550     # the rates sent by default: 2 % over the goals (the docstring says why)
FRONTS = 2              # the daemon's --fronts the bench runs with (a stadium's table: docs/operators/configuration.md)
REPEAT = 3              # runs of the rates: one run's p99 says as much of the machine's moment as of the daemon
POOL = 16               # requests made ahead for each connection, sent in turn (each with its own key)
KINDS = ("plein", "cheval", "rouge", "noir", "pair", "douzaine", "colonne", "voisins", "tiers", "transversale")


def add_arguments(p) -> None:
    p.add_argument("--terminals", type=int, default=500, help="terminals, each its own token and connection (default 500)")
    p.add_argument("--coups", type=int, default=20, help="coups counted with the wheel spinning (default 20)")
    p.add_argument("--rate", type=int, default=RATE,
                   help=f"bets/s sent in slips, open loop (default {RATE}: 2 %% over the goal)")
    p.add_argument("--single", type=int, default=SINGLE,
                   help=f"single bets/s sent, open loop (default {SINGLE}: 2 %% over the goal)")
    p.add_argument("--seconds", type=float, default=8.0, help="how long each rate is sent (default 8)")
    p.add_argument("--pause", type=float, default=3.0, help="the wheel's real seconds between coups (default 3)")
    p.add_argument("--speed", type=float, default=8.0, help="the wheel's simulated seconds per real second (default 8)")
    p.add_argument("--seed", type=int, default=32)
    p.add_argument("--fronts", type=int, default=FRONTS,
                   help=f"the daemon's HTTP fronts (its --fronts; default {FRONTS}; 0: the daemon serves HTTP itself)")
    p.add_argument("--skip", action="append", default=[], choices=("coups", "slips", "single"),
                   help="leave out one of the loads (repeatable)")
    p.add_argument("--repeat", type=int, default=REPEAT,
                   help=f"runs of the two rates, each on a fresh daemon (default {REPEAT}): the page says in how many "
                        "the goal was met, and shows the run of median p99")


# -- the slips ---------------------------------------------------------------------------------------
def slip_of(rnd: random.Random, player: str, n: int | None = None) -> dict:
    """A player's layout as a terminal sends it: 1 to 20 bets of the usual kinds."""
    bets = []
    for _ in range(n or rnd.randint(1, 20)):
        k = rnd.choice(KINDS)
        stake = rnd.choice([100, 200, 500, 1000])
        if k == "plein":
            b = {"type": k, "numbers": [rnd.randrange(37)], "stake": stake}
        elif k == "cheval":
            a = rnd.randrange(1, 34)
            b = {"type": k, "numbers": [a, a + 3], "stake": stake}
        elif k == "transversale":
            r = rnd.randrange(12) * 3 + 1
            b = {"type": k, "numbers": [r, r + 1, r + 2], "stake": stake}
        elif k in ("douzaine", "colonne"):
            b = {"type": k, "which": rnd.randint(1, 3), "stake": stake}
        elif k in ("voisins", "tiers"):
            b = {"type": k, "unit": rnd.choice([100, 200])}
        else:
            b = {"type": k, "stake": stake}
        bets.append(b)
    return {"player": player, "bets": bets}


def _run(coro):
    """The load's event loop: uvloop's when installed (as the daemon's), so the terminals' side
    costs the machine as little as it can."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


# -- load 2 and 3: slips or single bets at a rate --------------------------------------------------------
async def _at_rate(rig, tokens, rate, seconds, seed, slips):
    """Open loop: requests spread over the connections at `rate` bets/s for `seconds`; each
    connection sends its next one when due and its last is answered. Latencies from due time."""
    rnd = random.Random(seed)
    conns = [Conn(rig.port, t) for t in tokens]
    await asyncio.gather(*(c.open() for c in conns))
    per = 10.5 if slips else 1.0                       # bets a request on average
    interval = len(conns) * per / rate                  # seconds between one connection's requests
    lat, refused, bets = [], {}, [0]

    def pool(k):
        """A connection's requests, made before the clock starts (the load's own CPU out of the way)."""
        out = []
        for _ in range(POOL):
            if slips:
                body = slip_of(rnd, "p%d" % k)
                out.append(("/slips", json.dumps(body).encode(), len(body["bets"])))
            else:
                body = dict(slip_of(rnd, "p%d" % k, 1)["bets"][0], player="p%d" % k)
                out.append(("/bets", json.dumps(body).encode(), 1))
        return out
    pools = [pool(k) for k in range(len(conns))]
    t0 = time.perf_counter() + 0.2
    stop = t0 + seconds
    cpu0 = rig.cpu_s()

    async def run(k, c):
        due = t0 + rnd.random() * interval
        n = 0
        while due < stop and time.perf_counter() < stop:       # (a daemon behind: it stops at the end all the same)
            now = time.perf_counter()
            if due > now:
                await asyncio.sleep(due - now)
            path, body, count = pools[k][n % POOL]
            status, data = await c.post(path, body, "k%d-%d" % (k, n))
            done = time.perf_counter()
            if status == 201:
                lat.append(done - due)
                bets[0] += count
            else:
                code = _code(status, data)
                refused[code] = refused.get(code, 0) + 1
            n += 1
            due += interval * (count / per if slips else 1)
    await asyncio.gather(*(run(k, c) for k, c in enumerate(conns)))
    wall = time.perf_counter() - t0
    cpu1 = rig.cpu_s()
    for c in conns:
        c.close()
    return {"rate_sent_bets_s": rate, "seconds": round(wall, 2), "connections": len(conns),
            "requests_accepted": len(lat), "bets_accepted": bets[0], "bets_per_s": round(bets[0] / wall),
            "requests_per_s": round(len(lat) / wall), "latency_ms_p50": pct(lat, 50), "latency_ms_p99": pct(lat, 99),
            "latency_ms_max": pct(lat, 100), "refused": refused,
            "daemon_cpu_us_per_bet": None if cpu0 is None else round((cpu1 - cpu0) / max(1, bets[0]) * 1e6, 1),
            "daemon_cpu_share": None if cpu0 is None else round((cpu1 - cpu0) / wall, 2)}


def _code(status, data):
    try:
        return "%d %s" % (status, json.loads(data).get("error"))
    except ValueError:
        return str(status)


# -- load 1: coups --------------------------------------------------------------------------------------
async def _events(rig, out):
    """The wheel's events as the daemon streams them: (host time, event) appended to `out`."""
    r, w = await asyncio.open_connection("127.0.0.1", rig.port)
    w.write(b"GET /events?kinds=wheel HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n"
            % rig.display.encode())
    while True:
        line = await r.readline()
        if not line:
            return
        if line.startswith(b"data:"):
            try:
                ev = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(ev, dict) and "ev" in ev:
                out.append((time.time(), ev))


async def _coups(rig, coups, seed):
    rnd = random.Random(seed)
    events = []
    reader = asyncio.ensure_future(_events(rig, events))
    conns = [Conn(rig.port, t) for t in rig.terminals]
    await asyncio.gather(*(c.open() for c in conns))
    sent = []                       # (terminal, slip id or None, time sent, time answered, status, code, bets)
    delay = None                    # seconds from a result to the next call, learned
    placed_now = [0]
    per_coup = []                   # (bets placed, resident set growth from the coup's start to its call)
    cpu = 0.0                       # the daemon's CPU over the coups' bets: from each coup's start to its last answer
    t_start = time.time()
    counted = 0
    seen = 0
    bodies = {}                     # an accepted slip's id -> its bets as sent

    async def next_event(kinds, timeout=60):
        nonlocal seen
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while seen < len(events):
                t, ev = events[seen]
                seen += 1
                if ev["ev"] in kinds:
                    return t, ev
            await asyncio.sleep(0.005)
        raise RuntimeError("no %s from the wheel in %d s" % ("/".join(kinds), timeout))

    async def terminal(k, c, at, spin_hint):
        now = time.time()
        if at > now:
            await asyncio.sleep(at - now)
        body = slip_of(rnd, "p%d" % k)
        t0 = time.time()
        status, data = await c.post("/slips", json.dumps(body).encode(), "c%d-%d" % (spin_hint, k))
        t1 = time.time()
        sid = None
        if status in (201, 409):
            try:
                sid = json.loads(data).get("slip", {}) if status == 409 else json.loads(data)
                sid = sid.get("slip") if isinstance(sid, dict) else None
            except ValueError:
                sid = None
        if status == 201:
            placed_now[0] += len(body["bets"])
            if sid is not None:
                bodies[sid] = body["bets"]
        sent.append((k, sid, t0, t1, status, _code(status, data) if status != 201 else None, len(body["bets"]), spin_hint))

    t_result, _ = await next_event(("result", "void"), 120)     # a coup begins at the last one's end
    while counted < coups + 1:
        placed_now[0] = 0
        rss0, cpu0 = rig.rss_bytes(), rig.cpu_s()
        expect = t_result + (delay if delay is not None else 2.5)
        tasks = []
        for k, c in enumerate(conns):
            x = rnd.random()
            if delay is None:                        # the first coup: learn when the call comes
                at = t_result + rnd.random() * 2.0
            elif x < 0.85:
                at = expect - 0.15 - rnd.random() * 1.85      # most in the last 2 s before the call
            elif x < 0.97:
                at = t_result + rnd.random() * max(0.1, delay - 2.0)
            else:
                at = expect + rnd.random() * 0.3     # a few after it
            tasks.append(asyncio.ensure_future(terminal(k, c, at, counted)))
        t_call, call = await next_event(("rnvp",), 120)
        rss = rig.rss_bytes()
        if counted and rss and rss0:
            per_coup.append((placed_now[0], rss - rss0))
        await asyncio.gather(*tasks)
        if counted and cpu0 is not None:
            cpu += rig.cpu_s() - cpu0
        t_res, res = await next_event(("result", "void"), 120)
        d = t_call - t_result
        delay = d if delay is None else 0.7 * delay + 0.3 * d
        t_result = t_res
        counted += 1
    wall = time.time() - t_start
    reader.cancel()
    for c in conns:
        c.close()
    return sent, {"cpu_s": cpu, "wall_s": wall, "per_coup": per_coup, "rss": rig.rss_bytes(), "bodies": bodies}


# -- the part --------------------------------------------------------------------------------------------
def run(args) -> int:
    figures = {"terminals": args.terminals, "fronts": args.fronts, "python": platform.python_version(), "cpus": os.cpu_count(),
               "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    status = 0
    if args.repeat < 1:
        print("[bench] stadium: --repeat is the number of runs of the rates, 1 or more")
        return 2
    runs = {"slips": [], "single": []}
    for n in range(args.repeat if "slips" not in args.skip or "single" not in args.skip else 0):
        if args.repeat > 1:
            print(f"stadium, the rates, run {n + 1} of {args.repeat} (a fresh daemon)")
        if not _rates(args, runs):
            return 1
    for k, goal_rate, goal_p99 in (("slips", GOAL_SLIP_BETS_S, GOAL_SLIP_P99_MS),
                                   ("single", GOAL_SINGLE_BETS_S, GOAL_SINGLE_P99_MS)):
        if runs[k]:
            figures[k] = _median_run(runs[k])
            if len(runs[k]) > 1:
                print(f"stadium, {k}: goal met in {figures[k]['runs_met']} of {len(runs[k])} runs (p99 "
                      + ", ".join(f"{r['latency_ms_p99']} ms" for r in runs[k]) + "); the page shows the run of median p99")
    if "coups" not in args.skip:
        rig = Rig(args.terminals, 0, args.pause, args.speed, spins=True, fronts=args.fronts)
        try:
            if not rig.wait_open():
                print("[bench] stadium: the daemon did not take bets; see", rig.work / "daemon.log")
                return 1
            sent, meta = _run(_coups(rig, args.coups, args.seed + 2))
            f = check_coups(rig, sent, meta)
            f["seconds"] = round(meta["wall_s"], 1)
            f["ok"] = f["accepted_after_call"] == 0 and f["not_whole"] == 0 and f["not_as_sent"] == 0
            figures["coups"] = f
            print(f"stadium, {f['coups']} coups of {args.terminals} terminals with the wheel spinning: "
                  f"{f['slips_accepted']:,} slips ({f['bets_accepted']:,} bets) accepted, "
                  f"refused {f['slips_refused']}; to durable p50 {f['latency_ms_p50']} ms, p99 {f['latency_ms_p99']} ms, "
                  f"max {f['latency_ms_max']} ms; accepted after the call {f['accepted_after_call']} (must be 0), "
                  f"slips not whole {f['not_whole']} (must be 0), not as sent {f['not_as_sent']} (must be 0); daemon CPU {f['daemon_cpu_us_per_bet']} us a bet, "
                  f"{f.get('memory_bytes_per_bet_on_layout')} B a bet on the layout")
            if not f["ok"]:
                status = 1
        finally:
            rig.stop()
    figures["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"  written {OUT}")
    return status


def _rates(args, runs) -> bool:
    """One run of the two rates on a fresh daemon (each run starts from an empty layout, as the
    first): its figures appended to `runs`; False when the daemon did not take bets."""
    rig = Rig(args.terminals, 100, 0, 0, spins=False, fronts=args.fronts)
    try:
        if not rig.wait_open():
            print("[bench] stadium: the daemon did not take bets; see", rig.work / "daemon.log")
            return False
        if "slips" not in args.skip:
            rss0 = rig.rss_bytes()
            f = _run(_at_rate(rig, rig.terminals, args.rate, args.seconds, args.seed, True))
            rss1 = rig.rss_bytes()
            if rss0 and rss1 and f["bets_accepted"]:
                f["daemon_rss_mb"] = round(rss1 / 2 ** 20, 1)
                f["memory_bytes_per_bet_on_layout"] = round((rss1 - rss0) / f["bets_accepted"])
            f["goal_met"] = f["bets_per_s"] >= GOAL_SLIP_BETS_S and (f["latency_ms_p99"] or 1e9) <= GOAL_SLIP_P99_MS
            runs["slips"].append(f)
            _print("slips at a rate", f, GOAL_SLIP_BETS_S, GOAL_SLIP_P99_MS)
        if "single" not in args.skip:
            f = _run(_at_rate(rig, rig.croupiers, args.single, args.seconds, args.seed + 1, False))
            f["goal_met"] = f["bets_per_s"] >= GOAL_SINGLE_BETS_S and (f["latency_ms_p99"] or 1e9) <= GOAL_SINGLE_P99_MS
            runs["single"].append(f)
            _print("single bets at a rate", f, GOAL_SINGLE_BETS_S, GOAL_SINGLE_P99_MS)
    finally:
        rig.stop()
    return True


def _median_run(runs: list[dict]) -> dict:
    """The run of median p99 (the lower middle one of an even count), with every run's rate, p99
    and verdict beside it and how many met the goal."""
    ranked = sorted(runs, key=lambda f: f["latency_ms_p99"] if f["latency_ms_p99"] is not None else 1e9)
    out = dict(ranked[(len(ranked) - 1) // 2])
    out["runs"] = [{"bets_per_s": f["bets_per_s"], "latency_ms_p99": f["latency_ms_p99"], "goal_met": f["goal_met"]}
                   for f in runs]
    out["runs_met"] = sum(1 for f in runs if f["goal_met"])
    return out


def _print(name, f, goal_rate, goal_p99):
    print(f"stadium, {name} ({f['connections']} connections, {f['rate_sent_bets_s']:,} bets/s sent for {f['seconds']} s): "
          f"{f['bets_per_s']:,} bets/s accepted ({f['requests_per_s']:,} requests/s), to durable p50 "
          f"{f['latency_ms_p50']} ms, p99 {f['latency_ms_p99']} ms, max {f['latency_ms_max']} ms; refused {f['refused']}; "
          f"daemon CPU {f['daemon_cpu_us_per_bet']} us a bet (on {f['daemon_cpu_share']} of a core)"
          f"; goal >= {goal_rate:,}/s with p99 <= {goal_p99} ms: {'met' if f['goal_met'] else 'MISSED'}")


def _verdict(f: dict) -> str:
    """The goal's column: met or missed, or over several runs in how many it was met, and their p99s."""
    runs = f.get("runs")
    if not runs or len(runs) == 1:
        return "met" if f["goal_met"] else "missed"
    return (f"met in {f['runs_met']} of {len(runs)} runs (p99 "
            + ", ".join(f"{r['latency_ms_p99']} ms" for r in runs) + ")")


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    L = ["## A stadium of terminals (`stadium`)", "",
         f"{figures['terminals']} terminal identities, one keep-alive connection each, against the daemon"
         + (f" with {figures['fronts']} HTTP fronts (`fronts = {figures['fronts']}`)" if figures.get("fronts") else "")
         + " and a simulated wheel. Latency is to durable: each 201 comes after its commit. The daemon's CPU a bet is"
         " its own with its fronts'.", ""]
    c = figures.get("coups")
    if c:
        L += [f"**Coups** ({c['coups']} coups, the wheel spinning; each terminal sends one slip of 1 to 20 bets a coup, "
              "most in the last 2 s before the call, a few after it; every answer is checked against the journal: a slip "
              "not as sent is one whose bets there are not those sent, or their stakes not the shared rules'):", "",
              "| slips accepted | bets accepted | refused | p50 | p99 | max | accepted after the call | slips not whole |"
              " slips not as sent | daemon CPU a bet | resident set grown a bet placed (median coup) |",
              "|---|---|---|---|---|---|---|---|---|---|---|",
              f"| {c['slips_accepted']:,} | {c['bets_accepted']:,} | "
              + (", ".join(f"{k}: {v:,}" for k, v in sorted(c["slips_refused"].items())) or "0")
              + f" | {c['latency_ms_p50']} ms | {c['latency_ms_p99']} ms | {c['latency_ms_max']} ms | "
              f"{c['accepted_after_call']} | {c['not_whole']} | {c.get('not_as_sent', '—')} | {c['daemon_cpu_us_per_bet']} µs | "
              f"{c.get('memory_bytes_per_bet_on_layout', '—')} B |", ""]
    rows = [("slips", "Slips at a rate", GOAL_SLIP_BETS_S, GOAL_SLIP_P99_MS),
            ("single", "Single bets at a rate", GOAL_SINGLE_BETS_S, GOAL_SINGLE_P99_MS)]
    if any(figures.get(k) for k, *_ in rows):
        L += ["| load | sent | accepted | p50 | p99 | max | refused | daemon CPU a bet (share of a core) | goal |",
              "|---|---|---|---|---|---|---|---|---|"]
        for k, name, rate, p99 in rows:
            f = figures.get(k)
            if not f:
                continue
            L.append(f"| {name} ({f['connections']} connections) | {f['rate_sent_bets_s']:,} bets/s | "
                     f"{f['bets_per_s']:,} bets/s | {f['latency_ms_p50']} ms | {f['latency_ms_p99']} ms | "
                     f"{f['latency_ms_max']} ms | " + (", ".join(f"{a}: {b:,}" for a, b in sorted(f["refused"].items())) or "0")
                     + f" | {f['daemon_cpu_us_per_bet']} µs ({f['daemon_cpu_share']}) | ≥ {rate:,}/s, p99 ≤ {p99} ms: "
                     + _verdict(f) + " |")
    if any(figures.get(k, {}).get("runs") for k, *_ in rows):
        L += ["", "Each rate was sent in %d runs, each on a fresh daemon; the row is the run of median p99, and its last "
              "column every run's p99 in order." % max(len(figures[k]["runs"]) for k, *_ in rows if figures.get(k, {}).get("runs"))]
    if any(figures.get(k) for k, *_ in rows):
        L += ["", "The rates are sent 2 % over the goals: the rate accepted counts from the first request to the last "
              "answer, so a daemon that keeps up with a rate is counted just under it."]
    L += ["", f"Load average before {figures['load_average_before']}, after {figures['load_average_after']}. The resident "
          "set grows little a bet because the memory of the coup before, settled, is used again; the daemon's figure is "
          "its CPU time over the load (/proc), whatever share of the cores it was given."]
    return "\n".join(L) + "\n"
