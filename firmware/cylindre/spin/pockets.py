"""Pocket sightings (lectures de case) and the confirmation of the winning number.

A pocket sensor is active while the pocket holding the ball passes over it. At the middle of a
pulse the encoder names that pocket (geometry.py). The number is confirmed by `need` consecutive
sightings that agree, coming from at least `sensors` distinct sensors: with n sensors a sighting
comes every 1/n rotor turn, so the report waits for no more than the rule requires.

Once a pocket is seen, the encoder also says when it must pass each other sensor; a sensor that
lets it pass four times in a row without a pulse is silent. The run that confirms must also reach
back `confirm_span_us` from its last sighting to its first: a ball hopping between two pockets was
seen in one of them, run unbroken, for up to 2.13 s on the simulator's bounce (bench `rest`). Pulses shorter than `min_us` are contact
chatter or interference, not a pocket. A pulse much narrower (in encoder counts, so whatever the
rotor speed) than the full ones of the same run is the ball hopping out of the pocket while it
passed the sensor: the ball is not at rest, the run is broken.

A narrow pulse cut at its start instead (its middle lies past its pocket's centre in the direction
of rotation: the pulse ends where a full one ends) is the ball landing in the pocket while it
passed the sensor. It may start a run, as the first sighting of the ball in that pocket, but never
confirms by itself: the run goes on with full pulses only. Without it the report would wait for
one more sighting (1/n turn) on the spins where the ball lands over a sensor.
"""

from cylindre.spin.geometry import pocket_index, POCKETS, WHEEL_ORDER
from cylindre.spin.origin import back

MAX_SIGHTINGS = 16
MISSES = 4             # passes in a row without a pulse: silent (fewer can be missed pulses)
FULL_X10 = 6           # a pulse under 6/10 of a full one's width: the ball was not there all along


class Pockets:
    def __init__(self, sensors_deg, offset_deg, cpr, min_us=5000):
        self.deg = list(sensors_deg)
        self.n = len(self.deg)
        self.offset = offset_deg
        self.cpr = cpr
        self.min_us = min_us
        self.rise_t = [0] * self.n
        self.rise_raw = [0] * self.n
        self.active = [False] * self.n
        self.expect = [0] * self.n     # raw count at which the candidate pocket reaches sensor j
        self.misses = [0] * self.n
        self.miss_t = [0] * self.n     # when the latest miss of the current streak was
        self.k_t = 0                   # last sighting of the watched pocket
        self.full_w = 0                # width (counts) of a full pulse, learnt from results
        self.run_id = 0                # the agreeing runs begun so far (which run is the current one)
        self.clear()

    def clear(self):
        self.sightings = []          # [t, sensor, count_since_index, number], oldest first
        self.run = 0                 # length of the current agreeing run
        self.run_w = 0               # widest pulse (counts) of the current run
        self.partial = 0             # partial pulses seen (evidence of a hopping ball)
        self.landed = 0              # partial pulses taken as the ball landing
        self.landing_t = None        # time of the current run's first sighting if it is a landing
        self.last_t = [0] * self.n   # time of each sensor's last sighting
        self.k = -1                  # pocket (wheel-order index) of the current run
        self.watch_dir = 0
        for j in range(self.n):
            self.misses[j] = 0

    def rebase(self, d):
        """The time origin moved forward by d us (spin/origin.py): every time kept with it (a
        pulse's rise, the misses, the sightings)."""
        for j in range(self.n):
            self.rise_t[j] = back(self.rise_t[j], d)
            self.miss_t[j] = back(self.miss_t[j], d)
            self.last_t[j] = back(self.last_t[j], d)
        self.k_t = back(self.k_t, d)
        if self.landing_t is not None:
            self.landing_t = back(self.landing_t, d)
        for s in self.sightings:
            s[0] = back(s[0], d)

    def sensors(self):
        return self.n

    def seen_after(self, t):
        """Was the ball seen in a pocket after t (its latest sighting)?"""
        return bool(self.sightings) and self.sightings[-1][0] > t

    def held(self, sensor, raw, wide):
        """Is `sensor` active while the rotor moved over `wide` counts since it rose (stuck)?"""
        if not self.active[sensor]:
            return False
        d = raw - self.rise_raw[sensor]
        return d > wide or d < -wide

    def edge(self, t, sensor, level, raw, since):
        """One change of a pocket sensor. Returns the new sighting on a pulse end, else None.

        `raw` is the encoder count now, `since` the count since the index (None while the
        rotor's position is unknown).
        """
        if level:
            self.active[sensor] = True
            self.rise_t[sensor] = t
            self.rise_raw[sensor] = raw
            return None
        if not self.active[sensor]:
            return None
        self.active[sensor] = False
        if since is None or t - self.rise_t[sensor] < self.min_us:
            return None
        moved = raw - self.rise_raw[sensor]
        w = moved if moved >= 0 else -moved
        mid_raw = (self.rise_raw[sensor] + raw) // 2
        mid_c = (since - (raw - mid_raw)) % self.cpr
        mid_t = (self.rise_t[sensor] + t) // 2
        k = pocket_index(self.deg[sensor], self.offset, mid_c, self.cpr)
        num = WHEEL_ORDER[k]
        same = self.run and self.sightings and self.sightings[-1][3] == num
        ref = self.run_w if self.run_w > self.full_w else self.full_w
        landing = False
        if ref and w * 10 < ref * FULL_X10:
            if same or not self._cut_at_start(sensor, k, mid_c, moved, w, ref):
                self.run = 0             # the ball left the pocket during the pulse
                self.run_w = 0
                self.partial += 1
                return None
            landing = True               # the ball fell into the pocket during the pulse
            self.landed += 1
        s = [mid_t, sensor, mid_c, num]
        if same:
            self.run += 1
            if w > self.run_w:
                self.run_w = w
        else:
            self.run = 1
            self.run_id += 1
            self.run_w = w
            self.landing_t = mid_t if landing else None
        self.sightings.append(s)
        if len(self.sightings) > MAX_SIGHTINGS:
            self.sightings.pop(0)
        self.last_t[sensor] = mid_t
        return s, k, mid_raw, mid_c

    def centre(self, sensor, k):
        """Count since the index at which pocket k's centre sits over `sensor` (float)."""
        return ((self.deg[sensor] - self.offset) * POCKETS / 360.0 - k) * self.cpr / POCKETS

    def _cut_at_start(self, sensor, k, mid_c, moved, w, full):
        """Is a pulse w counts wide, a full one being about `full`, cut at its start? A landing
        puts its middle (full - w) / 2 past pocket k's centre in the direction the rotor moved
        during it, a hop out as much before it: past by at least half that."""
        if moved == 0:
            return False
        cpr = self.cpr
        d = (mid_c - self.centre(sensor, k)) % cpr
        if d > cpr / 2:
            d -= cpr
        if moved < 0:
            d = -d
        return d * 4 > full - w

    def watch(self, sensor, k, mid_raw, mid_c, direction, t):
        """After a sighting of pocket k: when must it next reach each sensor (raw counts)."""
        cpr = self.cpr
        self.k_t = t
        if direction == 0:
            self.watch_dir = 0
            return
        if k != self.k or direction != self.watch_dir:
            self.k = k
            self.watch_dir = direction
            for j in range(self.n):
                self.misses[j] = 0
                if j == sensor:
                    self.expect[j] = mid_raw + direction * cpr
                    continue
                cj = int(self.centre(j, k)) % cpr
                d = (cj - mid_c) % cpr if direction > 0 else (mid_c - cj) % cpr
                self.expect[j] = mid_raw + direction * d
        else:
            self.misses[sensor] = 0
            self.expect[sensor] = mid_raw + direction * cpr

    def check(self, raw, t):
        """Count the sensors the watched pocket passed without a pulse; return one that missed it
        MISSES times in a row while another sensor saw the pocket after the last of them (the ball
        was still there, not taken out), or -1. (With one sensor a silent sensor and a ball taken
        out of its pocket look alike: no verdict.)"""
        d = self.watch_dir
        if d == 0 or self.k < 0:
            return -1
        margin = self.cpr // POCKETS
        for j in range(self.n):
            if self.active[j]:
                continue
            if d * (raw - self.expect[j]) > margin:
                self.miss_t[j] = t
                self.misses[j] += 1
                self.expect[j] += d * self.cpr
            if self.misses[j] >= MISSES and self.k_t > self.miss_t[j]:
                return j
        return -1

    def learn_width(self):
        """A result was confirmed: its widest pulse is what a full pulse looks like."""
        if self.run_w:
            self.full_w = self.run_w if not self.full_w else (3 * self.full_w + self.run_w) // 4

    def confirmed(self, need, sensors, after_t, span_us=0):
        """The confirmed number, or None: the last `need` sightings after `after_t` agree and span
        at least `sensors` distinct sensors, and the last of them is a full pulse; the run reaches
        back at least `span_us` from its last sighting to its first."""
        if self.run < need:
            return None
        run = self.final_run(after_t)
        if len(run) < need or run[-1][0] == self.landing_t or run[-1][0] - run[0][0] < span_us:
            return None
        used = [0] * self.n
        distinct = 0
        for s in run:
            if not used[s[1]]:
                used[s[1]] = 1
                distinct += 1
        if distinct < sensors:
            return None
        return run[0][3]

    def run_first(self):
        """Time of the current agreeing run's first sighting still kept (None: no run)."""
        n = len(self.sightings)
        if not self.run or not n:
            return None
        k = self.run if self.run <= n else n
        return self.sightings[n - k][0]

    def final_run(self, after_t):
        """The agreeing sightings at the end of the list, later than after_t."""
        run = self.sightings[-self.run:] if 0 < self.run <= len(self.sightings) else []
        return [s for s in run if s[0] > after_t]
