"""Motion of the wheel: the rotor (cylindre) and the ball (bille) on the track, then in the pockets.

The ball on the track follows the model of the roulette literature: a constant angular deceleration
(rolling friction) plus air drag proportional to the square of the speed,

    dω/dt = -a - c·ω²

which has a closed form for the speed, the angle travelled and — what the sensor model needs — the
time at which a given angle is reached. The ball leaves the track when ω falls below a critical speed.
The default constants are fitted so that the figures of WHEEL.md come out (docs/internals/simulator.md).
All angles here are radians unless the name says `deg`; times are seconds.
"""

from __future__ import annotations

import math

import numpy as np

TWO_PI = 2.0 * math.pi


class BallTrack:
    """The ball's run on the track for one launch speed: closed forms for s(t), ω(t) and t(s)."""

    def __init__(self, omega0: float, a: float, c: float, omega_c: float):
        if not (omega0 > 0 and a > 0 and c > 0 and omega_c > 0):
            raise ValueError("ball speeds and decelerations must be positive")
        self.omega0, self.a, self.c, self.omega_c = omega0, a, c, omega_c
        self.k = math.sqrt(a * c)
        r = math.sqrt(c / a)
        self.u0 = math.atan(omega0 * r)
        uc = math.atan(min(omega_c, omega0) * r)
        self.cos_u0 = math.cos(self.u0)
        self.t_drop = (self.u0 - uc) / self.k          # launch to drop (0 if launched below ω_c)
        self.s_drop = self.angle(self.t_drop)           # angle run on the track

    @staticmethod
    def laps_for(omega0: float, a: float, c: float, omega_c: float) -> float:
        """Laps run on the track from launch speed omega0 (closed form)."""
        return math.log((a + c * omega0 ** 2) / (a + c * omega_c ** 2)) / (4 * math.pi * c)

    @staticmethod
    def omega0_for_laps(laps: float, a: float, c: float, omega_c: float) -> float:
        """The launch speed that makes `laps` laps before the drop (inverse of laps_for)."""
        return math.sqrt(((a + c * omega_c ** 2) * math.exp(4 * math.pi * c * laps) - a) / c)

    def speed(self, t):
        return np.sqrt(self.a / self.c) * np.tan(self.u0 - self.k * np.asarray(t, dtype=float))

    def angle(self, t):
        """Angle run since launch at time t after launch (valid up to t_drop)."""
        return np.log(np.cos(self.u0 - self.k * np.asarray(t, dtype=float)) / self.cos_u0) / self.c

    def time_at(self, s):
        """Time after launch at which the run angle reaches s (s <= s_drop)."""
        x = self.cos_u0 * np.exp(self.c * np.asarray(s, dtype=float))
        return (self.u0 - np.arccos(np.minimum(x, 1.0))) / self.k


class Rotor:
    """The rotor's angle over one spin, on a 1 ms grid: ramp up, slow decay, optional stop, ramp down.

    `start_rpm`: the rotor still turns at that speed (in `direction`) when the spin starts, and
    ramps from there to `rpm` (the same: left alone; more: pushed along); `stop` False: not
    stopped at the end (the next spin starts with it turning).

    `theta_deg` is the angle of the index mark in the bowl frame, clockwise, unwrapped; it is
    monotonic over the spin (the croupier reverses the rotor only between spins).
    """

    STEP = 0.001

    def __init__(self, theta0_deg: float, direction: int, rpm: float, duration: float, *,
                 ramp: float = 1.0, tau: float = 300.0, stop_at: float | None = None,
                 stop_over: float = 4.0, start_rpm: float = 0.0, stop: bool = True):
        n = int(math.ceil(duration / self.STEP)) + 1
        t = np.arange(n) * self.STEP
        w = rpm / 60.0 * 360.0 * np.exp(-np.maximum(t - ramp, 0.0) / tau)   # deg/s
        if start_rpm:                                                        # still turning: from there
            w0 = start_rpm / 60.0 * 360.0
            w = w0 + (w - w0) * np.clip(t / ramp, 0.0, 1.0)
        else:
            w *= np.clip(t / ramp, 0.0, 1.0)                                 # push by the croupier
        if stop:
            w *= np.clip((duration - t) / ramp, 0.0, 1.0)                    # stopped before reversing
        if stop_at is not None:                                              # fault: rotor stopping
            w *= np.clip(1.0 - (t - stop_at) / stop_over, 0.0, 1.0)
        theta = np.concatenate(([0.0], np.cumsum((w[1:] + w[:-1]) * 0.5 * self.STEP)))
        self.t = t
        self.w_deg = w
        self.direction = direction
        self.theta_deg = theta0_deg + direction * theta
        self.duration = float(t[-1])

    def at(self, t):
        """Index-mark angle (deg) at times t (seconds from the spin's start)."""
        return np.interp(t, self.t, self.theta_deg)

    def rpm_at(self, t) -> float:
        return float(np.interp(t, self.t, self.w_deg)) * 60.0 / 360.0

    def times_of(self, angles_deg):
        """Times at which the (monotonic) angle passes `angles_deg`."""
        if self.direction > 0:
            return np.interp(angles_deg, self.theta_deg, self.t)
        return np.interp(-np.asarray(angles_deg), -self.theta_deg, self.t)
