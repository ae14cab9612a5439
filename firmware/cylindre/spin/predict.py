"""Predicting the drop (la chute) to call "rien ne va plus" a set number of laps before it.

Model: the ball slows by rolling friction and air drag, dw/dt = -(A + C w^2) (w in laps/s), so
its squared lap rate u = w^2 falls along the track as du/dx = -2A - 2C u (x in laps). Each pair
of consecutive laps gives one slope; a straight line through (u, slope) over the spin's laps
gives A and C. The ball leaves the track when its lap period reaches `drop_lap_us` (its critical
speed): the laps and time left follow in closed form. With C about 0 it is constant deceleration.
"""

from math import atan, exp, log, sqrt, tan


def _line(xs, ys, use):
    """Least squares y = p + q x over the points flagged in `use` (None: all): (p, q, m) or None."""
    sx = 0.0
    sy = 0.0
    sxx = 0.0
    sxy = 0.0
    m = 0
    for i in range(len(xs)):
        if use is None or use[i]:
            x = xs[i]
            y = ys[i]
            sx += x
            sy += y
            sxx += x * x
            sxy += x * y
            m += 1
    return _solve(sx, sy, sxx, sxy, m)   # (no point: None; one or two: the mean slope)


class FitCache:
    """A spin's fit kept from lap to lap (the Pico computed it again from every lap at each lap,
    ~5 ms late in a spin): each lap's squared rate and each pair's point once, the first line's
    sums carried on. The same floats as a fit from scratch (`fit(laps)`): each value computed
    by the same expression, the sums added in the same order. A lap already fitted that changed
    (a lap split or paired back, a pass moved by its sensor's angle) starts it again."""

    def __init__(self):
        self.laps = []              # the laps the values below are of
        self.first = -1             # the first lap the points start from (the launch lap left out)
        self.prev = 0.0             # the last lap's squared rate
        self.xs = []
        self.ys = []
        self.sx = 0.0
        self.sy = 0.0
        self.sxx = 0.0
        self.sxy = 0.0

    def update(self, laps):
        """Bring the points to `laps`; (xs, ys, (p, q, m) of the first line or None)."""
        n = len(laps)
        first = 1 if n >= 5 else 0
        k = len(self.laps)
        # the laps fitted still as they were (compared in C: a Python loop over them cost the
        # Pico's core ~0.3 ms a lap late in a spin)
        ok = first == self.first and k <= n and self.laps == laps[:k]
        if not ok:
            self.__init__()
            self.first = first
            self.prev = 1e12 / (laps[first] * laps[first])
            self.laps.append(laps[first])
            if first:
                self.laps.insert(0, laps[0])
            k = first + 1
        xs = self.xs
        ys = self.ys
        prev = self.prev
        for i in range(k, n):
            lap = laps[i]
            u = 1e12 / (lap * lap)
            x = (u + prev) / 2
            y = u - prev
            xs.append(x)
            ys.append(y)
            self.sx += x
            self.sy += y
            self.sxx += x * x
            self.sxy += x * y
            self.laps.append(lap)
            prev = u
        self.prev = prev
        return xs, ys, _solve(self.sx, self.sy, self.sxx, self.sxy, len(xs))


def _solve(sx, sy, sxx, sxy, m):
    """`_line`'s answer from its sums."""
    if m == 0:
        return None
    d = m * sxx - sx * sx
    if m < 3 or d <= 1e-12 * sxx * m:
        return sy / m, 0.0, m
    q = (m * sxy - sx * sy) / d
    return (sy - q * sx) / m, q, m


def fit(laps, cache=None):
    """(p, q, u_last, sound): du/dx = p + q u from the lap periods (us), or None with fewer than 2
    laps; sound is False when the fit fell back on the mean slope (a fit that flipped sign).

    One slope per pair of consecutive laps, plotted against the pair's mean u. The launch lap is
    left out once there are enough (the croupier's throw is not the track's physics), and a
    slope far off the line (a lap mis-timed by a missed or spurious pulse) is dropped before a
    second fit. `cache` (a FitCache) keeps the points from call to call: the same answer.
    """
    n = len(laps)
    if n < 2:
        return None
    if cache is not None:
        xs, ys, f = cache.update(laps)
        prev = cache.prev
    else:
        first = 1 if n >= 5 else 0
        xs = []
        ys = []
        prev = 1e12 / (laps[first] * laps[first])
        for i in range(first + 1, n):
            u = 1e12 / (laps[i] * laps[i])
            xs.append((u + prev) / 2)
            ys.append(u - prev)
            prev = u
        f = _line(xs, ys, None)
    use = None
    if f is not None and len(xs) >= 5:
        p, q, _ = f
        res = [abs(ys[i] - p - q * xs[i]) for i in range(len(xs))]
        srt = sorted(res)
        lim = 4.0 * srt[len(srt) // 2] + 1e-9
        out = 0
        use = [True] * len(xs)
        for i in range(len(xs)):
            if res[i] > lim:
                use[i] = False
                out += 1
        if out and len(xs) - out >= 3:
            f = _line(xs, ys, use)
    if f is None:
        return None
    p, q, m = f
    if q > 0:                         # drag cannot speed the ball up: noise, use the mean slope
        return sum(ys) / len(ys), 0.0, prev, False
    return p, q, prev, True


def along(p, q, u, x):
    """The squared lap rate x laps further on from u, under du/dx = p + q u (closed form)."""
    if q > -1e-12:
        return u + p * x
    r = p / q
    return (u + r) * exp(q * x) - r


def rate_after(w, dt, a, c):
    """The lap rate (laps/s) dt seconds after rate w under dw/dt = -(a + c w^2), or 0.0 where the
    ball would have stopped (closed form)."""
    if c <= 1e-9:
        w = w - a * dt
        return w if w > 0.0 else 0.0
    k = sqrt(c / a)
    x = atan(w * k) - sqrt(a * c) * dt
    return tan(x) / k if x > 0.0 else 0.0


def _time(w1, w2, a, c):
    """Seconds for the rate to fall from w1 to w2 under dw/dt = -(a + c w^2)."""
    if c <= 1e-9:
        return (w1 - w2) / a
    k = sqrt(c / a)
    return (atan(w1 * k) - atan(w2 * k)) / sqrt(a * c)


def predict(laps, lap_end, drop_lap_us, lead_laps, cache=None):
    """(call_t, drop_t, laps_left, sound) from the lap periods so far, or None if no slowing shows.

    call_t is when `lead_laps` laps remain before the predicted drop; it may be in the past.
    sound is False for a fallback (the fit flipped sign: constant deceleration from the mean
    slope, which expects the drop early); the controller never lets such a prediction call
    earlier than the last sound one.
    """
    f = fit(laps, cache)
    if f is None:
        return None
    p, q, u_last, sound = f
    a = -p / 2.0
    c = -q / 2.0
    if a <= 1e-6:
        sound = False
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
        return t_end, t_end, 0.0, sound
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
    return call_t, drop_t, left, sound
