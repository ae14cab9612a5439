"""A sequential test that sees a bias building up: Bernoulli CUSUM on each number and each sector.

For a pocket set of share p0 (1/37 for a number, k/37 for a sector of k pockets), each game adds
the log-likelihood ratio of "the set is hit at rate p1 = RATIO·p0" against "at p0":
    hit: ln(p1/p0)       miss: ln((1-p1)/(1-p0))
and the CUSUM S_t = max(0, S_{t-1} + step) forgets the past whenever the evidence falls back to
zero, so a bias that starts after thousands of fair games (a fret working loose) is seen as fast
as one present from the start.

Its p-value, valid whenever it is looked at: starting at game s, exp(sum of steps from s) is a
nonnegative martingale of mean 1 under a fair wheel, so by Ville's inequality it ever reaches e^h
with probability at most e^-h. S_max over n games reaches h only if one of the n starts does:
    P(max_t S_t >= h) <= n·e^-h,  p = min(1, n·e^-S_max).
A conservative bound (a union over the starts), but exact in its promise, so these p-values can
be corrected with the table's tests over every wheel of the floor (wheelstats.py: Holm).
"""

from __future__ import annotations

import math

RATIO_NUMBER = 1.5        # the alternative: a pocket 50 % more often than its share
RATIO_SECTOR = 1.2        # a sector 20 % more often


def steps(p0: float, ratio: float) -> tuple[float, float]:
    p1 = min(ratio * p0, 0.999)
    return math.log(p1 / p0), math.log((1 - p1) / (1 - p0))


def cusum(hits, p0: float, ratio: float) -> dict:
    """The CUSUM of a 0/1 sequence (1: the set was hit). `max` is the largest S, `at` the game where
    it was reached (0-based), `since` the game where that run of evidence started, `last` S now."""
    up, down = steps(p0, ratio)
    s = best = 0.0
    start = best_at = best_since = 0
    n = 0
    for i, h in enumerate(hits):
        n += 1
        s += up if h else down
        if s <= 0:
            s, start = 0.0, i + 1
        elif s > best:
            best, best_at, best_since = s, i, start
    return {"n": n, "max": best, "at": best_at if best > 0 else None, "since": best_since if best > 0 else None,
            "last": s, "p": pvalue(best, n)}


def pvalue(s_max: float, n: int) -> float:
    if n == 0 or s_max <= 0:
        return 1.0
    return min(1.0, n * math.exp(-s_max))


def _fast(hits, p0: float, ratio: float) -> dict:
    """`cusum` in numpy: with C the running sum of the steps (C_0 = 0), S_t = C_t - min(C_0..C_t)."""
    import numpy as np
    n = len(hits)
    if n == 0:
        return cusum([], p0, ratio)
    up, down = steps(p0, ratio)
    c = np.concatenate(([0.0], np.cumsum(np.where(hits, up, down))))
    low = np.minimum.accumulate(c)
    s = c - low
    k = int(np.argmax(s[1:])) + 1                  # the first time the maximum is reached
    best = float(s[k])
    if best <= 0:
        return {"n": n, "max": 0.0, "at": None, "since": None, "last": float(s[-1]), "p": 1.0}
    since = int(np.nonzero(c[:k] <= low[k - 1])[0][-1])  # where that run of evidence started
    return {"n": n, "max": best, "at": k - 1, "since": since, "last": float(s[-1]), "p": pvalue(best, n)}


def scan(numbers, sectors) -> dict:
    """CUSUM p-values for every number (37) and every named sector of a wheel's games in order:
    {"number:17": {...}, "sector:voisins": {...}} (numpy; the same as `cusum`, tested)."""
    import numpy as np
    x = np.asarray(list(numbers), dtype=np.int16)
    out = {}
    for k in range(37):
        out[f"number:{k}"] = _fast(x == k, 1 / 37, RATIO_NUMBER)
    for name, members in sectors:
        m = sorted(set(members))
        out[f"sector:{name}"] = _fast(np.isin(x, m), len(m) / 37, RATIO_SECTOR)
    return out
