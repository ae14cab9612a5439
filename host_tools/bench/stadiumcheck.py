"""The stadium bench's check of its coups (host_tools/bench/stadium.py): every slip's answer
against the journal and the wheel's call, and every accepted slip's bets against what the
terminal sent, at the stakes the shared rules give under the journaled limits."""

from __future__ import annotations

import json

from cylindre.rules.limits import Limits

from host_tools.table.game.tapis import compiled


def pct(xs, p):
    """The p-th percentile of seconds `xs`, in ms to 0.1 (None with none)."""
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1e3, 1) if xs else None


def check_coups(rig, sent, meta):
    """Every slip's answer against the journal and the call's time."""
    db = rig.db()
    calls = {r["spin"]: r["at"] for r in db.execute("SELECT spin, MIN(at) AS at FROM events WHERE ev='rnvp' GROUP BY spin")}
    slips = {r["id"]: dict(r) for r in db.execute("SELECT id, status, n FROM slips")}
    bets = {}
    for r in db.execute("SELECT slip, status, spin, reason FROM bets_now WHERE slip IS NOT NULL"):
        bets.setdefault(r["slip"], []).append(dict(r))
    out = {"slips_sent": 0, "slips_accepted": 0, "bets_accepted": 0, "slips_refused": {}, "accepted_after_call": 0,
           "answered_201_after_call": 0, "refused_whole": 0, "played": 0, "not_whole": 0, "latency": []}
    for k, sid, t0, t1, status, code, n, coup in sent:
        if coup == 0:
            continue                                   # the first coup only learns the call's time
        out["slips_sent"] += 1
        if status != 201:
            out["slips_refused"][code] = out["slips_refused"].get(code, 0) + 1
            if sid is not None and bets.get(sid):
                out["not_whole"] += 1                  # a refused slip with bets in the journal
            continue
        out["slips_accepted"] += 1
        out["bets_accepted"] += n
        out["latency"].append(t1 - t0)
        rows = bets.get(sid, [])
        if len(rows) != n or len(slips.get(sid, {}) or {}) == 0:
            out["not_whole"] += 1
        states = {r["status"] for r in rows}
        spins = {r["spin"] for r in rows}
        if len(states) > 1 or len(spins) > 1:
            out["not_whole"] += 1                      # part of it played, part not
        spin = rows[0]["spin"] if rows else None
        late = spin in calls and t0 > calls[spin]      # sent after the daemon had the spin's call
        out["answered_201_after_call"] += late
        if states == {"refused"}:
            out["refused_whole"] += 1                  # accepted, then refused whole by the call (poussette)
        if states <= {"settled", "locked"} and rows:
            out["played"] += 1
            out["accepted_after_call"] += late         # ... and played: never
    out["not_as_sent"] = not_as_sent(db, meta.get("bodies") or {})
    db.close()
    lat = out.pop("latency")
    out["latency_ms_p50"], out["latency_ms_p99"], out["latency_ms_max"] = pct(lat, 50), pct(lat, 99), pct(lat, 100)
    out["coups"] = len({s[7] for s in sent}) - 1
    out["daemon_cpu_us_per_bet"] = round(meta["cpu_s"] / max(1, out["bets_accepted"]) * 1e6, 1)
    grown = sorted(g / n for n, g in meta["per_coup"] if n)
    if grown:                       # the median coup's resident set growth, a bet placed
        out["memory_bytes_per_bet_on_layout"] = round(grown[len(grown) // 2])
    if meta["rss"]:
        out["daemon_rss_mb"] = round(meta["rss"] / 2 ** 20, 1)
    return out


def not_as_sent(db, bodies):
    """Accepted slips whose bets the journal does not hold as the terminal sent them: each bet's
    body, in order, and its stake as the shared rules compile it under the table's limits
    (what the slips' receipt, its memo included, must give), and the slip's stake their sum."""
    row = db.execute("SELECT body FROM table_limits").fetchone()
    limits = Limits().updated(json.loads(row["body"])) if row else Limits()
    rows = {}
    for r in db.execute("SELECT slip, id, body, stake FROM bets WHERE slip IS NOT NULL ORDER BY id"):
        rows.setdefault(r["slip"], []).append((json.loads(r["body"]), r["stake"]))
    stakes = {r["id"]: r["stake"] for r in db.execute("SELECT id, stake FROM slips")}
    bad = 0
    for sid, sent in bodies.items():
        got = rows.get(sid, [])
        want = []
        for b in sent:
            c = compiled(dict(b, id="b"), limits)           # the table's own reading of a placed bet
            want.append((b, None if c is None else c[1] * c[0].units + c[2]))
        if [({k: v for k, v in body.items() if k != "id"}, stake) for body, stake in got] != want \
                or None in [w[1] for w in want] or stakes.get(sid) != sum(w[1] for w in want):
            bad += 1
    return bad
