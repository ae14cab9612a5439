"""A small exact wheel for the spin tests: rotor at constant speed, ball with constant angular
deceleration, then at rest in a chosen pocket. It produces the sensor changes of the feed format
(without A/B: the count is read from the model) and drives a Controller with ticks every 10 ms.

MicroPython subset: imported by the other test_spin_* modules on both runtimes.
"""

from math import sqrt

from cylindre.spin.controller import Controller
from cylindre.replay import MemoryStore
from cylindre.spin.geometry import WHEEL_ORDER

BOARD = {"cpr": 1024, "index_offset_deg": 17.0, "ball_sensors_deg": [30.0, 36.0],
         "pocket_sensors_deg": [200.0]}


def board(**kw):
    d = {}
    for k in BOARD:
        d[k] = BOARD[k]
    for k in kw:
        d[k] = kw[k]
    return d


class Wheel:
    """Sensor changes of one or more spins on an ideal wheel.

    rotor_rpm is signed (+ clockwise). Times are integer microseconds.
    """

    def __init__(self, settings, rotor_rpm=20.0, c0=100, z_width=6):
        self.cpr = settings["cpr"]
        self.offset = settings["index_offset_deg"]
        self.ball_deg = settings["ball_sensors_deg"]
        self.pocket_deg = settings["pocket_sensors_deg"]
        self.rpm = rotor_rpm
        self.dir = 1 if rotor_rpm > 0 else -1
        self.upc = int(60e6 / (abs(rotor_rpm) * self.cpr) + 0.5) if rotor_rpm else 0
        self.c0 = c0
        self.z_width = z_width
        self.events = []
        self.now = 0

    # rotor ----------------------------------------------------------------------------------
    # An integer number of microseconds per count keeps the model exact and allocation-free on
    # MicroPython (small ints only), so long test runs stay within the test runtime's heap.
    def rate(self):
        return 0 if self.upc == 0 else self.dir / self.upc     # counts per us

    def count_at(self, t):
        if self.upc == 0:
            return self.c0
        q = t // self.upc
        return self.c0 + q if self.dir > 0 else self.c0 - q

    def t_of_count(self, c):
        return int((c - self.c0) * self.upc * self.dir + 0.5)

    def count(self):
        return self.count_at(self.now)

    def add_index(self, t0, t1, skip=()):
        """Z pulses between t0 and t1 (pulse rises where the count crosses a multiple of cpr)."""
        r = self.dir
        if self.upc == 0:
            return
        c_a = self.count_at(t0)
        c_b = self.count_at(t1)
        lo = min(c_a, c_b)
        hi = max(c_a, c_b)
        k = lo // self.cpr
        while k * self.cpr <= hi:
            c = k * self.cpr
            k += 1
            if c < lo:
                continue
            ts = self.t_of_count(c + (0.5 if r > 0 else -0.5))
            te = self.t_of_count(c + (self.z_width if r > 0 else -self.z_width))
            if ts < t0 or te > t1 or c in skip:
                continue
            self.events.append((ts, "Z", 1))
            self.events.append((te, "Z", 0))

    # ball ------------------------------------------------------------------------------------
    def add_ball(self, t_launch, ball_dir, lap0_us=500000, decel=0.1, drop_lap_us=2300000,
                 start_deg=90.0, skip_sensor=-1, laps_max=1000):
        """Passes of a ball launched at t_launch; returns the drop time (us).

        decel is in laps/s^2; the ball leaves the track when its period reaches drop_lap_us.
        """
        w0 = 1e6 / lap0_us
        wc = 1e6 / drop_lap_us
        t_drop_s = (w0 - wc) / decel
        x_drop = w0 * t_drop_s - decel * t_drop_s * t_drop_s / 2     # laps run at the drop
        if x_drop > laps_max:
            x_drop = laps_max
            t_drop_s = (w0 - sqrt(w0 * w0 - 2 * decel * x_drop)) / decel
        for i in range(len(self.ball_deg)):
            if i == skip_sensor:
                continue
            d = (self.ball_deg[i] - start_deg) % 360.0
            if ball_dir < 0:
                d = (360.0 - d) % 360.0
            x = d / 360.0
            while x < x_drop:
                ts = (w0 - sqrt(w0 * w0 - 2 * decel * x)) / decel
                t = t_launch + int(ts * 1e6)
                self.events.append((t, "BALL%d" % i, 1))
                self.events.append((t + 1500, "BALL%d" % i, 0))
                x += 1.0
        return t_launch + int(t_drop_s * 1e6)

    # pockets ---------------------------------------------------------------------------------
    def add_rest(self, t0, t1, number, half_deg=4.0, skip_sensor=-1):
        """Pocket-sensor pulses for a ball resting in `number` from t0 to t1."""
        k = 0
        for i in range(37):
            if WHEEL_ORDER[i] == number:
                k = i
        cpr = self.cpr
        c_a = self.count_at(t0)
        c_b = self.count_at(t1)
        lo = min(c_a, c_b)
        hi = max(c_a, c_b)
        half = half_deg * cpr / 360.0
        for s in range(len(self.pocket_deg)):
            if s == skip_sensor:
                continue
            # pocket centre at sensor: offset + 360 c / cpr + k 360/37 = phi (mod 360)
            centre = ((self.pocket_deg[s] - self.offset - k * 360.0 / 37) % 360.0) * cpr / 360.0
            m = int(lo // cpr) - 1
            while m * cpr + centre - half <= hi + cpr:
                c = m * cpr + centre
                m += 1
                if c - half < lo or c + half > hi:
                    continue
                ta = self.t_of_count(c - half)
                tb = self.t_of_count(c + half)
                if ta > tb:
                    ta, tb = tb, ta
                self.events.append((ta, "POCKET%d" % s, 1))
                self.events.append((tb, "POCKET%d" % s, 0))

    def add(self, t, name, level):
        self.events.append((t, name, level))

    def spin(self, t_launch, ball_dir, number, lap0_us=500000, decel=0.1, settle_us=4000000,
             rest_us=14000000, **kw):
        """A whole spin: ball passes, drop, rest in `number`. Returns (drop_t, rest_t)."""
        drop = self.add_ball(t_launch, ball_dir, lap0_us, decel, **kw)
        rest = drop + settle_us
        self.add_rest(rest, rest + rest_us, number)
        return drop, rest

    # drive -----------------------------------------------------------------------------------
    def run(self, ctl, t_end, t_start=0, tick_us=10000):
        """Feed every event up to t_end to ctl, in time order, with ticks every tick_us."""
        ev = sorted(self.events)
        self.events = []
        i = 0
        t = t_start
        n = len(ev)
        while t <= t_end:
            while i < n and ev[i][0] <= t:
                self.now = ev[i][0]
                ctl.signal(ev[i][0], ev[i][1], ev[i][2])
                i += 1
            self.now = t
            ctl.tick(t)
            t += tick_us


class DrivenRotor:
    """A rotor the croupier drives: [(t_us, counts per second)] segments, count integrated."""

    def __init__(self, segments):
        self.seg = segments

    def at(self, t):
        c = 100
        for i in range(len(self.seg)):
            t0, v = self.seg[i]
            t1 = self.seg[i + 1][0] if i + 1 < len(self.seg) else t
            if t <= t0:
                break
            c += (min(t, t1) - t0) * v // 1000000
        return c

    def index(self, wheel, t_end, cpr=1024):
        """Index pulses on `wheel` where the count crosses a turn, up to t_end (every ms)."""
        prev = self.at(0)
        for t in range(1000, t_end, 1000):
            c = self.at(t)
            if c // cpr != prev // cpr:
                wheel.add(t, "Z", 1)
                wheel.add(t + 15000, "Z", 0)
            prev = c


class Log:
    """Collects events; helpers to find them."""

    def __init__(self):
        self.events = []

    def __call__(self, ev):
        self.events.append(ev)

    def of(self, kind):
        return [e for e in self.events if e["ev"] == kind]

    def kinds(self):
        return [e["ev"] for e in self.events if e["ev"] != "status"]


def make(settings=None, rpm=20.0, store=None, **kw):
    """(wheel, controller, log); status every 5 s unless the settings say otherwise (each status
    is an allocation, and the MicroPython test runtime must not need to collect garbage)."""
    s = settings if settings is not None else board(status_us=5000000)
    wheel = Wheel(s, rotor_rpm=rpm, **kw)
    log = Log()
    ctl = Controller(s, log, store=store if store is not None else MemoryStore(), count=wheel.count)
    return wheel, ctl, log


def valid_spin(rpm=20.0, ball_dir=-1, number=17, store=None, settings=None):
    """One valid spin on an ideal wheel, run to 45 s: (wheel, controller, log, drop, rest)."""
    w, ctl, log = make(settings=settings, rpm=rpm, store=store)
    ctl.boot(0)
    w.add_index(0, 45000000)
    drop, rest = w.spin(3000000, ball_dir, number)
    w.run(ctl, 45000000)
    return w, ctl, log, drop, rest


def test_kit_wheel_is_consistent():
    s = board()
    w = Wheel(s, rotor_rpm=15.0)
    w.add_index(0, 10000000)
    zs = [e for e in w.events if e[1] == "Z" and e[2] == 1]
    # 15 rpm for 10 s: 2.5 turns, so two or three index pulses, one turn apart
    assert 2 <= len(zs) <= 3, zs
    d = w.count_at(zs[1][0]) - w.count_at(zs[0][0])
    assert abs(d - 1024) <= 1, d
    w.events = []
    drop = w.add_ball(0, 1, 500000, 0.1)
    passes = sorted([e for e in w.events if e[1] == "BALL0" and e[2] == 1])
    assert 10 <= len(passes) <= 30, len(passes)
    assert passes[-1][0] < drop
