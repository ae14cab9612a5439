"""Calibration (étalonnage): measure the index offset and the pocket sensors' angles.

Routine: put the ball in a known pocket (say 0), then turn the rotor slowly by hand or at low
speed for a few turns, in either direction. Each time the pocket passes a pocket sensor, the
middle of its pulse gives the count since the index c, and there pocket k's centre is at the
sensor: angle = index_offset + 360 c / cpr + k 360/37. Only angle - offset can be seen, so one
sensor is the reference: its angle is the one measured on the bowl (board file), and the offset
follows from it; the other sensors' angles follow from the offset. Several passes are averaged
on the circle, and their spread says how good the measurement is.

`Calibration` takes the same inputs as the controller (`signal`, a count callable); `result()`
gives {"index_offset_deg", "pocket_sensors_deg", "spread_deg", "passes"} or an error string.
"""

from math import atan2, cos, sin, pi

from cylindre.spin.geometry import WHEEL_ORDER, POCKETS


def _zero():
    return 0


class Calibration:
    def __init__(self, cpr, pocket_sensors_deg, number=0, ref=0, count=None):
        if number not in WHEEL_ORDER:
            raise ValueError("number must be 0-36")
        self.cpr = cpr
        self.deg = list(pocket_sensors_deg)
        self.n = len(self.deg)
        if not 0 <= ref < self.n:
            raise ValueError("ref must name a pocket sensor")
        self.k = WHEEL_ORDER.index(number)
        self.ref = ref
        self.count = count if count is not None else _zero
        self.z = None
        self.rise = [0] * self.n
        self.up = [False] * self.n
        self.samples = [[] for _ in range(self.n)]    # angle - offset, degrees, per pass

    def signal(self, t, name, level):
        c = self.count()
        if name == "Z":
            if level:
                self.z = c
            return
        if not name.startswith("POCKET"):
            return
        i = int(name[6:])
        if level:
            self.rise[i] = c
            self.up[i] = True
            return
        if not self.up[i] or self.z is None:
            return
        self.up[i] = False
        mid = (self.rise[i] + c) / 2.0
        since = (mid - self.z) % self.cpr
        # sensor angle minus index offset, for the pocket k at the sensor
        self.samples[i].append((360.0 * since / self.cpr + self.k * 360.0 / POCKETS) % 360.0)

    def result(self, passes=2):
        """The calibration, or an error string when some sensor saw the pocket too few times."""
        means = []
        spread = 0.0
        for i in range(self.n):
            s = self.samples[i]
            if len(s) < passes:
                return "POCKET%d saw the pocket %d times, %d needed: turn the rotor more" % (
                    i, len(s), passes)
            x = sum(cos(a * pi / 180) for a in s) / len(s)
            y = sum(sin(a * pi / 180) for a in s) / len(s)
            m = (atan2(y, x) * 180 / pi) % 360.0
            means.append(m)
            for a in s:
                d = abs((a - m + 180.0) % 360.0 - 180.0)
                if d > spread:
                    spread = d
        offset = (self.deg[self.ref] - means[self.ref]) % 360.0
        angles = [round((m + offset) % 360.0, 2) for m in means]
        return {"index_offset_deg": round(offset, 2), "pocket_sensors_deg": angles,
                "spread_deg": round(spread, 2), "passes": [len(s) for s in self.samples]}
