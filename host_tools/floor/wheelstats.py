"""Statistics that follow the wheel (item 6): per wheel serial, over all its games at every table.

A wheel's identity is its board serial (the envelope's `serial`, else the table id): moved to
another table it keeps its history. For each wheel:
  - the tests the table already runs (host_tools/stats/analysis.py: numbers, arcs, sectors, runs,
    serial correlation, croupier signatures), on the games of that wheel wherever it stood;
  - the sequential CUSUM of every number and sector (sequential.py), which sees a bias building up.

The family, corrected together: every (wheel, test) pair of the floor, i.e. each wheel's table tests
that have enough games plus its 46 CUSUMs (37 numbers, 9 sectors), over all wheels. Holm's step-down
at ALPHA = 0.01: the probability that ANY fair wheel of the floor raises an alarm in one run of these
statistics is at most 1 % (family-wise error rate), however many wheels and tests.

Beside them, described not tested: Article 53 compliance (the rotor turned opposite to the wheel's
previous spin, the ball launched opposite to the rotor) and misspin (void) rates, by wheel, by table
and by croupier across tables, and each croupier's signature (release-to-landing distance) over all
the wheels they spun.
"""

from __future__ import annotations

from collections import defaultdict

from host_tools.stats import analysis, inference
from host_tools.stats.games import Record

from . import sequential

ALPHA = 0.01
DIRS = {"cw": 1, "ccw": -1, 1: 1, -1: -1}
GAP_S = 3600.0            # a wheel idle longer than this (or moved) starts a new sequence for Article 53


def _int(v, lo=None, hi=None):
    if type(v) is not int or (lo is not None and v < lo) or (hi is not None and v > hi):
        return None
    return v


def _at(v, fallback):
    """A time the body gives, if it is one; the envelope's otherwise."""
    return float(v) if type(v) in (int, float) and v == v and abs(v) < 1e11 else float(fallback)


def launches(events) -> dict:
    """Per wheel: its launches (games and voids) in order, as the table statistics read them."""
    wheels = defaultdict(list)
    for e in sorted(events, key=lambda e: (e["at"], e["table"], e["event_id"])):
        if e["kind"] not in ("result", "void"):
            continue
        b = e["body"] if isinstance(e["body"], dict) else {}
        g = {"table": e["table"], "spin": _int(b.get("spin")), "at": _at(b.get("at"), e["at"]), "kind": e["kind"],
             "number": _int(b.get("number"), 0, 36) if e["kind"] == "result" else None,
             "rotor_dir": DIRS.get(b.get("rotor_dir"), 0), "ball_dir": DIRS.get(b.get("ball_dir"), 0),
             "rotor_rpm_x10": _int(b.get("rotor_rpm_x10"), 0), "launch_lap_us": _int(b.get("lap_us"), 1),
             "laps": _int(b.get("laps"), 0), "drop_angle_x10": _int(b.get("drop_angle_x10"), 0, 3599),
             "release_pocket": _int(b.get("release_pocket"), 0, 36), "drop_pocket": _int(b.get("drop_pocket"), 0, 36),
             "violations": [v for v in b.get("violations") or [] if isinstance(v, str)]
             if isinstance(b.get("violations"), list) else [],
             "reason": b.get("reason") if isinstance(b.get("reason"), str) else "?",
             "croupier": b.get("croupier") if isinstance(b.get("croupier"), str) else None,
             "source": "event"}
        if e["kind"] == "result" and g["number"] is None:
            continue
        wheels[e.get("wheel") or e["serial"] or e["table"]].append(g)
    for seq in wheels.values():
        _article53(seq)
    return wheels


def _article53(seq):
    """Each launch's compliance: rotor opposite to the same wheel's previous launch at the same
    table (not checked after a move or a long pause), ball opposite to the rotor."""
    prev = None
    for g in seq:
        checks = {}
        if g["rotor_dir"] and g["ball_dir"]:
            checks["ball_opposite"] = g["ball_dir"] == -g["rotor_dir"]
        if prev and prev["rotor_dir"] and g["rotor_dir"] and prev["table"] == g["table"] and g["at"] - prev["at"] < GAP_S:
            checks["rotor_reversed"] = g["rotor_dir"] == -prev["rotor_dir"]
        g["a53"] = checks
        prev = g


def record(wheel, seq) -> Record:
    games = [g for g in seq if g["kind"] == "result"]
    voids = [{"spin": g["spin"], "at": g["at"], "reason": g["reason"], "croupier": g["croupier"]}
             for g in seq if g["kind"] == "void"]
    return Record(wheel, games, voids, seq, 0, [wheel])


def compliance(seq) -> dict:
    checked = [g for g in seq if g["a53"]]
    bad = [g for g in checked if not all(g["a53"].values())]
    by = defaultdict(int)
    for g in bad:
        for k, ok in g["a53"].items():
            if not ok:
                by[k] += 1
    flagged = sum(1 for g in seq if g["violations"])
    return {"launches": len(seq), "checked": len(checked), "compliant": len(checked) - len(bad),
            "rate": (len(checked) - len(bad)) / len(checked) if checked else None, "by_kind": dict(by),
            "flagged_by_wheel": flagged}


def _voids(seq):
    v = [g for g in seq if g["kind"] == "void"]
    by = defaultdict(int)
    for g in v:
        by[g["reason"]] += 1
    return {"launches": len(seq), "voids": len(v), "rate": len(v) / len(seq) if seq else None, "by_reason": dict(by)}


def floor_stats(events, alpha: float = ALPHA) -> dict:
    """Every wheel's statistics, the floor-wide family corrected by Holm, and the croupiers."""
    per = launches(events)
    wheels, family = [], {}
    for wheel in sorted(per):
        seq = per[wheel]
        a = analysis.analyse(record(wheel, seq), alpha=alpha)
        numbers = [g["number"] for g in seq if g["kind"] == "result"]
        seqt = sequential.scan(numbers, analysis.SECTORS)
        for f in a["family"]:
            family[(wheel, f["test"])] = f["p"]
        for name, r in seqt.items():
            if r["max"] > 0:
                family[(wheel, "cusum:" + name)] = r["p"]
        top = sorted(seqt.items(), key=lambda kv: kv[1]["p"])[:5]
        wheels.append({"wheel": wheel, "tables": sorted({g["table"] for g in seq}), "games": len(numbers),
                       "first_at": seq[0]["at"] if seq else None, "last_at": seq[-1]["at"] if seq else None,
                       "analysis": {k: a[k] for k in ("numbers", "arc", "sectors", "runs", "serial", "pace")},
                       "cusum_top": [dict(v, test=k) for k, v in top],
                       "article53": compliance(seq), "voids": _voids(seq)})
    keys = list(family)
    adjusted = inference.holm({i: family[k] for i, k in enumerate(keys)})
    rows = sorted(({"wheel": k[0], "test": k[1], "p": family[k], "p_holm": adjusted[i],
                    "significant": adjusted[i] < alpha} for i, k in enumerate(keys)), key=lambda r: r["p"])
    alarms = [r for r in rows if r["significant"]]
    for w in wheels:
        w["alarms"] = [r["test"] for r in alarms if r["wheel"] == w["wheel"]]
    return {"alpha": alpha, "correction": "holm", "family_size": len(keys),
            "family": "every (wheel, test): each wheel's table tests with enough games and its CUSUMs (37 numbers, 9 sectors)",
            "wheels": wheels, "alarms": alarms, "top": rows[:20], "croupiers": croupiers(per)}


def croupiers(per) -> list[dict]:
    """By croupier over every wheel and table: games, misspin rate, Article 53 compliance and the
    signature (release-to-landing distance; its chi-square and Rayleigh tests as at the table)."""
    allseq = [g for seq in per.values() for g in seq]
    a = analysis.analyse(record("*", allseq), alpha=ALPHA)
    out = []
    for row in a["croupiers"]:
        name = None if row["croupier"] == "(inconnu)" else row["croupier"]
        mine = [g for g in allseq if g["croupier"] == name]
        c = compliance(mine)
        out.append({"croupier": row["croupier"], "games": row["games"], "launches": row["launches"],
                    "tables": sorted({g["table"] for g in mine}), "voids": row["voids"],
                    "void_rate": row["voids"] / row["launches"] if row["launches"] else None,
                    "article53_rate": c["rate"], "article53_checked": c["checked"],
                    "signature_n": row["signature_n"], "signature_peak": row["signature_peak"],
                    "signature_p": row["signature_p"], "signature_rayleigh_p": row["signature_rayleigh_p"],
                    "rotor_rpm": row["rotor_rpm"], "laps": row["laps"]})
    return out
