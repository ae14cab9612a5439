"""Pocket sightings (lectures de case) and the confirmation of the winning number.

A pocket sensor is active while the pocket holding the ball passes over it. At the middle of a
pulse the encoder names that pocket (geometry.py). The number is confirmed by `need` consecutive
sightings that agree, coming from at least `sensors` distinct sensors: with n sensors a sighting
comes every 1/n rotor turn, so the report waits for no more than the rule requires.
"""

from cylindre.spin.geometry import number_at

MAX_SIGHTINGS = 16


class Pockets:
    def __init__(self, sensors_deg, offset_deg, cpr):
        self.deg = list(sensors_deg)
        self.n = len(self.deg)
        self.offset = offset_deg
        self.cpr = cpr
        self.rise_t = [0] * self.n
        self.rise_c = [0] * self.n
        self.active = [False] * self.n
        self.clear()

    def clear(self):
        self.sightings = []          # [t, sensor, count_since_index, number], oldest first
        self.run = 0                 # length of the current agreeing run
        self.last_t = [0] * self.n   # time of each sensor's last sighting

    def edge(self, t, sensor, level, count):
        """One change of a pocket sensor. Returns the sighting list on a pulse end, else None.

        `count` is the count since the index (None when the rotor position is not known yet).
        """
        if level:
            self.active[sensor] = True
            self.rise_t[sensor] = t
            self.rise_c[sensor] = count if count is not None else 0
            return None
        if not self.active[sensor]:
            return None
        self.active[sensor] = False
        if count is None:
            return None
        c0 = self.rise_c[sensor]
        # The count since the index may have wrapped a turn during the pulse.
        if count - c0 > self.cpr // 2:
            c0 += self.cpr
        elif c0 - count > self.cpr // 2:
            c0 -= self.cpr
        mid_c = ((c0 + count) // 2) % self.cpr
        mid_t = (self.rise_t[sensor] + t) // 2
        num = number_at(self.deg[sensor], self.offset, mid_c, self.cpr)
        s = [mid_t, sensor, mid_c, num]
        if self.sightings and self.sightings[-1][3] == num:
            self.run += 1
        else:
            self.run = 1
        self.sightings.append(s)
        if len(self.sightings) > MAX_SIGHTINGS:
            self.sightings.pop(0)
        self.last_t[sensor] = mid_t
        return s

    def confirmed(self, need, sensors, after_t):
        """The confirmed number, or None: the last `need` sightings after `after_t` agree and span
        at least `sensors` distinct sensors."""
        if self.run < need:
            return None
        run = self.sightings[-self.run:] if self.run <= len(self.sightings) else self.sightings
        run = [s for s in run if s[0] > after_t]
        if len(run) < need:
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

    def run_start(self, after_t):
        """Time of the first sighting of the current agreeing run later than after_t, or -1.
        Allocation-free: the controller asks it every tick while it waits for the result."""
        n = len(self.sightings)
        k = self.run if self.run <= n else n
        i = n - k
        while i < n:
            if self.sightings[i][0] > after_t:
                return self.sightings[i][0]
            i += 1
        return -1

    def final_run(self, after_t):
        """The agreeing sightings at the end of the list, later than after_t."""
        run = self.sightings[-self.run:] if 0 < self.run <= len(self.sightings) else []
        return [s for s in run if s[0] > after_t]
