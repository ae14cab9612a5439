"""The ball (bille) on its track: launch, direction and lap periods from the ball-track sensors.

A pass is the rising edge of a ball-track sensor. The lap period is the time between two passes
of the reference sensor (the first one the ball passed in this run). The direction comes from
the order and spacing of passes: sensors a few degrees apart are passed close together in the
ball's direction, then a long gap follows.
"""

MAX_LAPS = 64          # lap periods kept per spin (a real spin has 13-21): bounded memory
MIN_LAP_US = 150000    # no ball laps a track faster than this


class Ball:
    def __init__(self, sensors_deg):
        self.deg = list(sensors_deg)
        self.n = len(self.deg)
        self.reset()

    def reset(self):
        """Forget the run: the ball is off the track."""
        self.on_track = False
        self.ref = -1
        self.first_t = 0
        self.last_ref_t = 0
        self.last_pass_t = 0
        self.laps = []              # lap periods (us) at the reference sensor, at most MAX_LAPS
        self.lap_end = []           # time each of those laps ended
        self.nlaps = 0              # complete laps, even past MAX_LAPS
        self.passes = 0
        self.seen = [0] * self.n    # passes per sensor in this run
        self.last_seen = [0] * self.n
        self._p = [-1, -1, -1]      # last three passes: sensor, time
        self._pt = [0, 0, 0]
        self.votes = 0              # > 0 clockwise, < 0 counter-clockwise
        self.any_period = 0         # latest lap period at any sensor (the reference may fail)

    def start(self, t, sensor):
        self.reset()
        self.on_track = True
        self.ref = sensor
        self.first_t = t
        self.last_ref_t = t
        self.last_pass_t = t
        self._pass(t, sensor)

    def _cw_deg(self, i, j):
        return (self.deg[j] - self.deg[i]) % 360.0

    def _pass(self, t, sensor):
        self.passes += 1
        if self.seen[sensor]:
            self.any_period = t - self.last_seen[sensor]
        self.seen[sensor] += 1
        self.last_seen[sensor] = t
        self.last_pass_t = t
        p = self._p
        pt = self._pt
        p[0] = p[1]
        p[1] = p[2]
        p[2] = sensor
        pt[0] = pt[1]
        pt[1] = pt[2]
        pt[2] = t
        i = p[0]
        j = p[1]
        k = p[2]
        if i < 0 or i == j or j == k:
            return
        g1 = pt[1] - pt[0]
        g2 = pt[2] - pt[1]
        if g1 + g2 <= 0:
            return
        r = g1 / (g1 + g2)
        a1 = self._cw_deg(i, j)
        a2 = self._cw_deg(j, k)
        if a1 + a2 <= 0 or (360.0 - a1) + (360.0 - a2) <= 0:
            return
        rcw = a1 / (a1 + a2)
        rccw = (360.0 - a1) / ((360.0 - a1) + (360.0 - a2))
        if abs(r - rcw) < abs(r - rccw):
            self.votes += 1
        elif abs(r - rccw) < abs(r - rcw):
            self.votes -= 1

    def passed(self, t, sensor):
        """A pass during the run. Returns the completed lap period (us) or 0."""
        if sensor == self.ref:
            period = t - self.last_ref_t
            prev = self.laps[-1] if self.laps else 0
            # The ball cannot speed up: a pass far too soon is noise or a bounce, not a lap.
            if period < MIN_LAP_US or period * 10 < prev * 6:
                return 0
        self._pass(t, sensor)
        if sensor != self.ref:
            return 0
        self.last_ref_t = t
        self.nlaps += 1
        if len(self.laps) < MAX_LAPS:
            self.laps.append(period)
            self.lap_end.append(t)
        return period

    def direction(self):
        """1 clockwise, -1 counter-clockwise, 0 not known yet."""
        if self.votes > 0:
            return 1
        if self.votes < 0:
            return -1
        return 0

    def last_period(self):
        return self.laps[-1] if self.laps else 0

    def pace(self):
        """The longest recent lap period seen by any sensor (0 before a lap)."""
        p = self.laps[-1] if self.laps else 0
        return p if p > self.any_period else self.any_period

    def silent_sensor(self, t):
        """Index of a ball-track sensor that missed the ball for two laps while others saw it, or -1."""
        if not self.on_track or self.nlaps < 2 or self.n < 2:
            return -1
        span = t - self.lap_end[-2] if len(self.lap_end) >= 2 else 0
        for s in range(self.n):
            if s == self.ref:
                # The others still see the ball a lap after the reference last did.
                if t - self.last_ref_t > span and t - self.last_pass_t < span // 2:
                    return s
                continue
            if self.seen[s] == 0 or t - self.last_seen[s] > span:
                return s
        return -1
