"""Predicting the drop (la chute) to call "rien ne va plus" a set number of laps before it.

Model: the ball slows by rolling friction and air drag, dw/dt = -(A + C w^2) (w in laps/s), so
its squared lap rate u = w^2 falls along the track as du/dx = -2A - 2C u (x in laps). Each pair
of consecutive laps gives one slope; a straight line through (u, slope) over the spin's laps
gives A and C. The ball leaves the track when its lap period reaches `drop_lap_us` (its critical
speed): the laps and time left follow in closed form. With C about 0 it is constant deceleration.
"""

from math import atan, exp, log, sqrt


def fit(laps):
    """(p, q, u_last): du/dx = p + q u from the lap periods (us), or None with fewer than 2 laps."""
    n = len(laps)
    if n < 2:
        return None
    sx = 0.0
    sy = 0.0
    sxx = 0.0
    sxy = 0.0
    m = 0
    prev = 1e12 / (laps[0] * laps[0])
    for i in range(1, n):
        u = 1e12 / (laps[i] * laps[i])
        x = (u + prev) / 2
        y = u - prev
        prev = u
        sx += x
        sy += y
        sxx += x * x
        sxy += x * y
        m += 1
    d = m * sxx - sx * sx
    if m < 3 or d <= 1e-12 * sxx * m:
        return sy / m, 0.0, prev      # constant deceleration: the mean slope
    q = (m * sxy - sx * sy) / d
    p = (sy - q * sx) / m
    if q > 0:                         # drag cannot speed the ball up: noise, use the mean slope
        return sy / m, 0.0, prev
    return p, q, prev


def _time(w1, w2, a, c):
    """Seconds for the rate to fall from w1 to w2 under dw/dt = -(a + c w^2)."""
    if c <= 1e-9:
        return (w1 - w2) / a
    k = sqrt(c / a)
    return (atan(w1 * k) - atan(w2 * k)) / sqrt(a * c)


def predict(laps, lap_end, drop_lap_us, lead_laps):
    """(call_t, drop_t, laps_left) from the lap periods so far, or None if no slowing shows.

    call_t is when `lead_laps` laps remain before the predicted drop; it may be in the past.
    """
    f = fit(laps)
    if f is None:
        return None
    p, q, u_last = f
    a = -p / 2.0
    c = -q / 2.0
    if a <= 1e-6:
        # No rolling friction is not a ball on a track (noise in a short fit): constant
        # deceleration from the mean slope instead.
        p = (p + q * u_last)
        q = 0.0
        a = -p / 2.0
        c = 0.0
        if a <= 1e-6:
            return None
    t_end = lap_end[-1]
    u_end = u_last + (p + q * u_last) * 0.5     # the last period is the lap's middle
    pc = drop_lap_us / 1e6
    u_c = 1.0 / (pc * pc)
    if u_end <= u_c:
        return t_end, t_end, 0.0
    w_end = sqrt(u_end)
    w_c = sqrt(u_c)
    if c > 1e-9:
        r = p / q                     # > 0: both p and q are negative here
        left = log((u_c + r) / (u_end + r)) / q
        u_call = (u_c + r) * exp(-q * lead_laps) - r
    else:
        left = (u_end - u_c) / (-p)
        u_call = u_c - p * lead_laps
    drop_t = t_end + int(_time(w_end, w_c, a, c) * 1e6)
    if u_call >= u_end:
        call_t = t_end
    else:
        call_t = t_end + int(_time(w_end, sqrt(u_call), a, c) * 1e6)
    return call_t, drop_t, left
