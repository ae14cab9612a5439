"""The few distributions and tests the wheel statistics need, in plain Python (no scipy).

Chi-square and normal tail probabilities, the binomial z-score, the Wald–Wolfowitz runs test, the
Rayleigh test of circular concentration and Holm's step-down correction. Each is a textbook
formula; tests/stats/test_stats_inference.py checks them against tabulated values.
"""

from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) (series below a+1, continued fraction above)."""
    if x <= 0:
        return 1.0
    lg = math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - lg))
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - lg) * h


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with `df` degrees of freedom."""
    return _gamma_q(df / 2.0, x / 2.0)


def normal_sf2(z: float) -> float:
    """Two-sided tail P(|Z| >= |z|) of the standard normal."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def chi_square_uniform(counts) -> tuple[float, int, float]:
    """Pearson's chi-square of counts against equal cells: (statistic, df, p-value)."""
    k = len(counts)
    n = sum(counts)
    if n == 0 or k < 2:
        return 0.0, max(k - 1, 0), 1.0
    e = n / k
    stat = sum((c - e) ** 2 for c in counts) / e
    return stat, k - 1, chi2_sf(stat, k - 1)


def binomial_z(k: int, n: int, p: float) -> tuple[float, float]:
    """z-score of k successes in n trials of probability p, and its two-sided p-value."""
    if n == 0:
        return 0.0, 1.0
    z = (k - n * p) / math.sqrt(n * p * (1 - p))
    return z, normal_sf2(z)


def runs_test(seq) -> tuple[int, float, float]:
    """Wald–Wolfowitz runs test on a sequence of two symbols: (runs, z, two-sided p).

    Too few runs means streaks (a sticky wheel, a pattern of play); too many, alternation."""
    seq = list(seq)
    if not seq:
        return 0, 0.0, 1.0
    a = seq[0]
    n1 = sum(1 for s in seq if s == a)
    n2 = len(seq) - n1
    runs = 1 + sum(1 for i in range(1, len(seq)) if seq[i] != seq[i - 1])
    n = n1 + n2
    if n1 == 0 or n2 == 0 or n < 3:
        return runs, 0.0, 1.0
    mu = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    if var <= 0:
        return runs, 0.0, 1.0
    z = (runs - mu) / math.sqrt(var)
    return runs, z, normal_sf2(z)


def longest_run(seq) -> tuple[object, int]:
    """The symbol of the longest run of equal symbols and its length."""
    best, best_n, cur, n = None, 0, None, 0
    for s in seq:
        n = n + 1 if s == cur else 1
        cur = s
        if n > best_n:
            best, best_n = s, n
    return best, best_n


def lag1_correlation(xs) -> tuple[float, float, float]:
    """Lag-1 autocorrelation r of a series, z = r·sqrt(n) and its two-sided p (independence)."""
    n = len(xs)
    if n < 3:
        return 0.0, 0.0, 1.0
    m = sum(xs) / n
    den = sum((x - m) ** 2 for x in xs)
    if den == 0:
        return 0.0, 0.0, 1.0
    r = sum((xs[i] - m) * (xs[i + 1] - m) for i in range(n - 1)) / den
    z = r * math.sqrt(n)
    return r, z, normal_sf2(z)


def rayleigh(angles) -> tuple[float, float, float]:
    """Rayleigh test of uniformity on the circle (angles in radians), powerful against one
    preferred direction: (mean resultant length R, mean direction, p-value)."""
    n = len(angles)
    if n == 0:
        return 0.0, 0.0, 1.0
    c = sum(math.cos(a) for a in angles)
    s = sum(math.sin(a) for a in angles)
    r = math.hypot(c, s) / n
    z = n * r * r
    # Zar (1999), eq. 27.4: accurate to n of about 10
    p = math.exp(math.sqrt(1 + 4 * n + 4 * (n * n - n * n * r * r)) - (1 + 2 * n))
    return r, math.atan2(s, c), min(1.0, max(0.0, p if z > 0 else 1.0))


def holm(pvalues: dict) -> dict:
    """Holm's step-down adjusted p-values for a family {name: p}: rejecting where the adjusted p
    is below alpha keeps the family-wise error rate at or below alpha, with no assumption on
    how the tests depend on each other."""
    items = sorted(pvalues.items(), key=lambda kv: kv[1])
    m = len(items)
    out, running = {}, 0.0
    for i, (name, p) in enumerate(items):
        running = max(running, min(1.0, (m - i) * p))
        out[name] = running
    return out
