"""Predicting the drop (la chute) to call "rien ne va plus" a set number of laps before it.

Model: roughly constant angular deceleration, so the squared lap rate u = (1/T)^2 falls linearly
with the laps run; the ball leaves the track when its period reaches `drop_lap_us` (critical
speed). A straight line through the last few laps' u, extrapolated to the critical u, gives the
laps and the time left. Only the recent laps are fitted: the decay sharpens near the end.
"""

from math import sqrt

FIT_LAPS = 4


def fit(laps):
    """Least-squares line u = a + b * x through the last FIT_LAPS laps (x = lap number, from 1).

    Returns (a, b, x_last) or None with fewer than 2 laps.
    """
    n = len(laps)
    if n < 2:
        return None
    m = FIT_LAPS if n > FIT_LAPS else n
    sx = 0.0
    sy = 0.0
    sxx = 0.0
    sxy = 0.0
    for i in range(n - m, n):
        x = float(i + 1)
        p = laps[i] / 1e6
        y = 1.0 / (p * p)
        sx += x
        sy += y
        sxx += x * x
        sxy += x * y
    d = m * sxx - sx * sx
    if d == 0:
        return None
    b = (m * sxy - sx * sy) / d
    a = (sy - b * sx) / m
    return a, b, float(n)


def predict(laps, lap_end, drop_lap_us, lead_laps):
    """(call_t, drop_t, laps_left) from the lap periods so far, or None if no deceleration shows.

    call_t is when `lead_laps` laps remain before the predicted drop; it may be in the past.
    """
    f = fit(laps)
    if f is None:
        return None
    a, b, xn = f
    if b >= 0:
        return None
    # Speed at the end of the last lap: the lap's mean rate is its middle, half a lap earlier.
    u_end = a + b * (xn + 0.5)
    pc = drop_lap_us / 1e6
    u_c = 1.0 / (pc * pc)
    t_end = lap_end[-1]
    if u_end <= u_c:
        return t_end, t_end, 0.0
    decel = -b / 2.0                      # laps per s^2
    w_end = sqrt(u_end)
    left = (u_end - u_c) / (-b)           # laps to the drop
    drop_t = t_end + int((w_end - sqrt(u_c)) / decel * 1e6)
    u_call = u_c + lead_laps * (-b)
    if u_call >= u_end:
        call_t = t_end
    else:
        call_t = t_end + int((w_end - sqrt(u_call)) / decel * 1e6)
    return call_t, drop_t, left
