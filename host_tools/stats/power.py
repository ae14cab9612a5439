"""Measured false-alarm rates and detection power of the wheel statistics on synthetic wheels.

    python -m host_tools.stats.power [--runs 200] [--seed 1] [--only fair] [--json FILE]

Each scenario plays `runs` independent synthetic sessions (host_tools.stats.synth) and runs the
same analysis `cylindre stats` runs. A fair wheel gives the false-alarm rates: of the chi-square
of the numbers alone at its nominal level, and of the whole family (any alarm after Holm) at
alpha = 0.01. A biased wheel gives the power: the share of sessions where the family raised any
alarm, and where the tests aimed at that bias did (`arc`; `croupier:bruno:` chi-square or Rayleigh).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from cylindre.rules import wheel as W

from . import analysis, synth

ARC5 = tuple(W.ORDER[i] for i in range(8, 13))          # five neighbouring pockets: 17 34 6 27 13


def scenarios():
    """(name, spins, synth.play keyword arguments, the test that should fire or None)."""
    out = []
    for n in (500, 2000, 5000):
        out.append((f"fair n={n}", n, {}, None))
    for share in (0.02, 0.04):
        for n in (1000, 2000, 5000):
            out.append((f"sector 5 pockets +{int(share * 100)}% n={n}", n, {"sector": (ARC5, share)}, "arc"))
    for share in (0.10, 0.20):
        for n in (600, 1500, 3000):         # three croupiers: a third of the games are bruno's
            out.append((f"dealer bruno {int(share * 100)}% ±2 n={n}", n,
                        {"dealer": ("bruno", 10, share, 2)}, "croupier:bruno:"))
    for n in (2000, 5000):
        out.append((f"pocket 17 +1% n={n}", n, {"sector": ((17,), 0.01)}, "arc"))
    return out


def measure(runs=200, seed=1, alpha=analysis.ALPHA, only=None):
    rows = []
    for name, n, kw, aimed in scenarios():
        if only and only not in name:
            continue
        t0 = time.time()
        any_alarm = aimed_hit = chi05 = chi01 = 0
        for r in range(runs):
            rec = synth.play(n, seed=seed * 100003 + r, **kw)
            a = analysis.analyse(rec, alpha=alpha)
            any_alarm += bool(a["alarms"])
            p = a["numbers"]["p"]
            chi05 += p < 0.05
            chi01 += p < 0.01
            if aimed and any(x.startswith(aimed) for x in a["alarms"]):
                aimed_hit += 1
        rows.append({"scenario": name, "spins": n, "runs": runs, "family_alarm_rate": any_alarm / runs,
                     "aimed_test": aimed, "aimed_rate": aimed_hit / runs if aimed else None,
                     "chi2_p_below_0.05": chi05 / runs, "chi2_p_below_0.01": chi01 / runs,
                     "seconds": round(time.time() - t0, 1)})
    return rows


def _ci(p, n):
    """95 % binomial interval half-width."""
    return 1.96 * math.sqrt(max(p * (1 - p), 1e-9) / n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m host_tools.stats.power", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200, help="sessions per scenario (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="only the scenarios whose name contains this (e.g. fair, dealer)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    args = ap.parse_args(argv)
    rows = measure(args.runs, args.seed, only=args.only)
    print(f"{'scenario':<34} {'any alarm':>10} {'aimed test':>11} {'chi2<.05':>9} {'chi2<.01':>9}   (alpha family {analysis.ALPHA}, Holm; {args.runs} runs, ±95 %)")
    for r in rows:
        aim = "" if r["aimed_rate"] is None else f"{r['aimed_rate']:.3f}"
        print(f"{r['scenario']:<34} {r['family_alarm_rate']:>6.3f}±{_ci(r['family_alarm_rate'], r['runs']):.3f} {aim:>11} "
              f"{r['chi2_p_below_0.05']:>9.3f} {r['chi2_p_below_0.01']:>9.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
