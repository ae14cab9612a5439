"""Sensors failing at a moment of a feed (capteurs en panne): dead, stuck or bouncing from then on.

The simulator's `sensor_dead` and `sensor_stuck` scenarios fail one sensor for a whole spin; a
wheel in service loses a cable or a head at any moment, one sensor or a whole head at once (the
two ball-track sensors share one). `fail` rewrites a spin's changes so: the property tests of
the controller (tests/firmware/test_spin_unseen_property.py) and the bench read what it does.
"""

from __future__ import annotations

import random

MODES = ("dead", "stuck", "bounce")


def fail(changes, signals, t_from: int, mode: str = "dead", seed: int = 0):
    """`changes` ([(t_us, signal, level)], sorted) with each of `signals` failed from `t_from` on:
    `dead` gives no edge (a pulse under way ends at t_from), `stuck` holds it active, `bounce`
    breaks each of its pulses 1-3 times at the make and at the break, 0.1-0.4 ms each (a worn
    contact; `seed` draws them). A new sorted list."""
    if mode not in MODES:
        raise ValueError("mode %r: one of %s" % (mode, ", ".join(MODES)))
    names = set(signals)
    level = {n: 0 for n in names}
    out = []
    rng = random.Random(seed)
    for t, sig, lv in changes:
        if sig in names:
            if t < t_from:
                level[sig] = lv
                out.append((t, sig, lv))
            elif mode == "bounce":
                out += _bounced(rng, t, sig, lv)
            continue
        out.append((t, sig, lv))
    for n in sorted(names):
        if mode == "dead" and level[n]:
            out.append((t_from, n, 0))
        elif mode == "stuck" and not level[n]:
            out.append((t_from, n, 1))
    out.sort(key=lambda c: c[0])
    return out


def _bounced(rng, t, sig, lv):
    """An edge at t as a bouncing contact gives it: the new level, then 1-3 times the old and
    the new again, each 0.1-0.4 ms later."""
    out = [(t, sig, lv)]
    for _ in range(rng.randint(1, 3)):
        t += rng.randint(100, 400)
        out.append((t, sig, 1 - lv))
        t += rng.randint(100, 400)
        out.append((t, sig, lv))
    return out
