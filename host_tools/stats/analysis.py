"""The wheel's integrity statistics on a `Record`: one dict, the same for the text summary, the
plots, the PDF and `/stats`.

The family of tests (each with a p-value, corrected together by Holm at `alpha`):
  numbers        chi-square of the 37 counts, 36 df
  arc            the most favoured arc of 1, 3, 5 or 9 neighbouring pockets anywhere on the wheel
                 (one-sided binomial z, Bonferroni over the 148 arcs scanned): far more
                 powerful than the chi-square against one hot pocket or a hot stretch of frets
  sector:*       binomial z of voisins, tiers, orphelins, two halves and four quarters
  runs:*         Wald–Wolfowitz runs on rouge/noir, pair/impair, manque/passe (zero left out)
  serial:*       lag-1 correlation of the numbers; chi-square of the pockets from one result to
                 the next on the wheel (36 df)
  croupier:X:*   per croupier, the release-to-landing pocket distance: chi-square (36 df) and
                 Rayleigh (one preferred distance)
A test with too few games to be valid is reported and kept out of the family (`min_*`).
Drop zone, landing distance, games per hour and voids are described, not tested: a wheel is
expected to have a drop zone and a bounce length.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter

from cylindre.rules import wheel as W

from . import inference as I
from . import wording
from .games import Record, pocket_distance

ALPHA = 0.01                # family-wise error rate of an integrity alarm
MIN_CHI2 = 185              # 5 expected per cell over 37 cells
MIN_SECTOR = 100
MIN_RUNS = 50
MIN_SIGNATURE = 185         # per croupier (chi-square); the Rayleigh test needs MIN_RAYLEIGH
MIN_RAYLEIGH = 30
MINIMUM = {"numbers": MIN_CHI2, "arc": MIN_SECTOR, "sector": MIN_SECTOR, "runs": MIN_RUNS, "serial": MIN_CHI2,
           "signature": MIN_SIGNATURE, "rayleigh": MIN_RAYLEIGH}


def _half(a, b):
    return tuple(W.ORDER[i] for i in range(a, b + 1))


SECTORS = (
    ("voisins", W.VOISINS), ("tiers", W.TIERS), ("orphelins", W.ORPHELINS),
    # halves and quarters of the wheel's 36 numbered pockets, clockwise after zero
    ("moitie_1", _half(1, 18)), ("moitie_2", _half(19, 36)),
    ("quart_1", _half(1, 9)), ("quart_2", _half(10, 18)), ("quart_3", _half(19, 27)), ("quart_4", _half(28, 36)),
)

CHANCE_PAIRS = (("rouge", "noir"), ("pair", "impair"), ("manque", "passe"))


def _mean_sd(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"n": 0, "mean": None, "sd": None}
    return {"n": len(xs), "mean": statistics.fmean(xs), "sd": statistics.pstdev(xs) if len(xs) > 1 else 0.0}


def signature_distances(games):
    """Pockets from the release pocket to the landing pocket, the way the ball ran."""
    return [pocket_distance(g["release_pocket"], g["number"], g["ball_dir"])
            for g in games if g.get("release_pocket") is not None]


def landing_distances(games):
    """Pockets from the pocket under the drop point to the landing pocket, the way the ball ran."""
    return [pocket_distance(g["drop_pocket"], g["number"], g["ball_dir"])
            for g in games if g.get("drop_pocket") is not None]


ARC_WIDTHS = (1, 3, 5, 9)


def best_arc(counts, n) -> dict:
    """The arc of neighbouring pockets hit most above its share, and its Bonferroni p-value."""
    best = {"numbers": [], "hits": 0, "expected": 0.0, "z": 0.0, "p": 1.0, "scanned": 37 * len(ARC_WIDTHS)}
    if n == 0:
        return best
    for w in ARC_WIDTHS:
        for i in range(37):
            members = [W.ORDER[(i + j) % 37] for j in range(w)]
            k = sum(counts[m] for m in members)
            z, _ = I.binomial_z(k, n, w / 37)
            if z > best["z"]:
                best.update(numbers=members, hits=k, expected=n * w / 37, z=z)
    best["p"] = min(1.0, best["scanned"] * I.normal_sf2(best["z"]) / 2) if best["z"] > 0 else 1.0
    return best


def _peak(hist, half=2):
    """Centre of the circular window of 2·half+1 distances holding the most games."""
    return max(range(37), key=lambda c: (sum(hist[(c + j) % 37] for j in range(-half, half + 1)), -c))


def analyse(rec: Record, alpha: float = ALPHA, hot: int = 5) -> dict:
    games = rec.games
    numbers = [g["number"] for g in games]
    n = len(numbers)
    tests = {}                 # name -> p, for the family

    counts = [0] * 37
    for x in numbers:
        counts[x] += 1
    chi, df, p = I.chi_square_uniform(counts)
    freq = {"n": n, "counts": counts, "chi2": chi, "df": df, "p": p, "valid": n >= MIN_CHI2}
    if freq["valid"]:
        tests["numbers"] = p
    order = sorted(range(37), key=lambda k: (-counts[k], k))
    freq["hot"] = order[:hot]
    freq["cold"] = sorted(range(37), key=lambda k: (counts[k], k))[:hot]

    arc = best_arc(counts, n)
    arc["valid"] = n >= MIN_SECTOR
    if arc["valid"]:
        tests["arc"] = arc["p"]

    sectors = []
    for name, members in SECTORS:
        members = set(members)
        k = sum(1 for x in numbers if x in members)
        z, sp = I.binomial_z(k, n, len(members) / 37)
        row = {"name": name, "pockets": len(members), "hits": k, "expected": n * len(members) / 37,
               "z": z, "p": sp, "valid": n >= MIN_SECTOR}
        sectors.append(row)
        if row["valid"]:
            tests["sector:" + name] = sp

    runs = []
    for a, b in CHANCE_PAIRS:
        seq = [a if W.chance_wins(a, x) else b for x in numbers if x != 0]
        r, z, rp = I.runs_test(seq)
        who, longest = I.longest_run(seq)
        row = {"chance": a + "/" + b, "n": len(seq), "runs": r, "z": z, "p": rp, "longest": longest,
               "longest_of": who, "valid": len(seq) >= MIN_RUNS}
        runs.append(row)
        if row["valid"]:
            tests["runs:" + a] = rp

    r1, z1, p1 = I.lag1_correlation(numbers)
    steps = [0] * 37
    for i in range(1, n):
        steps[pocket_distance(numbers[i - 1], numbers[i], 1)] += 1
    chi_s, df_s, p_s = I.chi_square_uniform(steps)
    serial = {"lag1_r": r1, "lag1_z": z1, "lag1_p": p1, "steps": steps, "steps_chi2": chi_s, "steps_df": df_s,
              "steps_p": p_s, "valid": n >= MIN_CHI2}
    if serial["valid"]:
        tests["serial:lag1"] = p1
        tests["serial:steps"] = p_s

    # the drop zone and the bounce (described)
    angles = [g["drop_angle_x10"] for g in games if g.get("drop_angle_x10") is not None]
    zone = [0] * 36
    for a in angles:
        zone[min(a // 100, 35)] += 1
    rz, mean_dir, pz = I.rayleigh([a / 1800 * math.pi for a in angles])
    landing = landing_distances(games)
    land_hist = [0] * 37
    for d in landing:
        land_hist[d] += 1
    drop = {"n": len(angles), "zone_10deg": zone, "concentration": rz,
            "main_angle_deg": (math.degrees(mean_dir) % 360) if angles else None, "rayleigh_p": pz,
            "landing_n": len(landing), "landing_hist": land_hist,
            "landing_mean": statistics.fmean(landing) if landing else None}

    # pace: games per clock hour of the journal, every hour from the first game's to the last's
    # (an hour without a game counts 0); only the hours between them are whole hours
    stamps = [g["at"] for g in games if g.get("at") is not None]
    first_at, last_at = (min(stamps), max(stamps)) if stamps else (None, None)
    hours = Counter(int(t // 3600) for t in stamps)
    h0 = min(hours) if hours else 0
    per_hour = [hours[h] for h in range(h0, max(hours) + 1)] if hours else []
    full = per_hour[1:-1]
    span = (last_at - first_at) if stamps else None
    pace = {"hours": len(per_hour), "per_hour": per_hour, "first_hour_at": h0 * 3600 if hours else None,
            "full_hours": len(full),
            "median": statistics.median(full) if full else None,
            "min": min(full) if full else None, "max": max(full) if full else None,
            "span_s": span,
            "rate_per_hour": (len(stamps) - 1) * 3600 / span if span else None,
            # a session without a whole hour is drawn game by game: seconds from the first
            "offsets_s": sorted(t - first_at for t in stamps) if stamps and not full else [],
            "first_at": first_at, "last_at": last_at}

    launches = len(rec.launches)
    by_reason = Counter(v["reason"] for v in rec.voids)
    voids = {"launches": launches, "voids": len(rec.voids),
             "rate": len(rec.voids) / launches if launches else None,
             "by_reason": dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0])))}
    a53 = Counter(v for g in rec.launches for v in g.get("violations") or [])
    article53 = {"launches_with_violation": sum(1 for g in rec.launches if g.get("violations")),
                 "by_kind": dict(a53)}

    # per croupier: rotor speed, ball laps, launch pace, and the signature
    croupiers = []
    names = sorted({g.get("croupier") or "" for g in rec.launches} | {g.get("croupier") or "" for g in games})
    for name in names:
        mine = [g for g in games if (g.get("croupier") or "") == name]
        launched = [g for g in rec.launches if (g.get("croupier") or "") == name]
        dist = signature_distances(mine)
        hist = [0] * 37
        for d in dist:
            hist[d] += 1
        c2, _, cp = I.chi_square_uniform(hist)
        rr, rdir, rp = I.rayleigh([d * 2 * math.pi / 37 for d in dist])
        label = name or "(inconnu)"
        row = {"croupier": label, "games": len(mine), "launches": len(launched),
               "voids": sum(1 for v in rec.voids if (v.get("croupier") or "") == name),
               "rotor_rpm": _mean_sd([g["rotor_rpm_x10"] / 10 for g in launched if g.get("rotor_rpm_x10") is not None]),
               "laps": _mean_sd([g.get("laps") for g in mine]),
               "launch_lap_ms": _mean_sd([g["launch_lap_us"] / 1000 for g in launched if g.get("launch_lap_us")]),
               "signature_n": len(dist), "signature_hist": hist, "signature_chi2": c2, "signature_p": cp,
               "signature_r": rr, "signature_peak": _peak(hist) if dist else None,
               "signature_rayleigh_p": rp}
        croupiers.append(row)
        if name and len(dist) >= MIN_SIGNATURE:
            tests[f"croupier:{label}:chi2"] = cp
        if name and len(dist) >= MIN_RAYLEIGH:
            tests[f"croupier:{label}:rayleigh"] = rp

    adjusted = I.holm(tests)
    family = [{"test": k, "p": tests[k], "p_holm": adjusted[k], "significant": adjusted[k] < alpha}
              for k in sorted(tests, key=lambda k: tests[k])]
    out = {"wheel": rec.wheel, "games": n, "skipped": rec.skipped, "alpha": alpha, "correction": "holm",
           "numbers": freq, "arc": arc, "sectors": sectors, "runs": runs, "serial": serial, "drop": drop, "pace": pace,
           "voids": voids, "article53": article53, "croupiers": croupiers, "family": family,
           "alarms": [f["test"] for f in family if f["significant"]]}
    out["provenance"] = getattr(rec, "provenance", None)
    out["tests"] = wording.tests(out, MINIMUM)
    out["verdict"] = wording.verdict(out, out["tests"])
    out["period"] = wording.periode(out)
    return out
