"""The simulated wheel (cylindre simulé): spin by spin, the sensor edges a real wheel would give.

`WheelSimulator(geometry, seed)` keeps the wheel's state between spins (rotor angle, direction, the
clock) so consecutive spins make one continuous feed; `spin(scenario)` returns a `Spin` with its
sorted changes and its truth, kept apart. Physics in `physics.py`, scenarios in `scenarios.py`,
settings and presets in `presets.py`, the feed file in `feedfile.py`, the model and its sources
in docs/internals/simulator.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from cylindre.spin.geometry import POCKETS, WHEEL_ORDER

from .feedfile import Spin, write_feed
from .physics import BallTrack, Rotor
from .presets import WHEEL, geometry_from, imperfections_from
from .scenarios import KEEP_TURNING, SCENARIOS

PITCH = 360.0 / POCKETS

class WheelSimulator:
    """A wheel and its croupier, reproducible from `seed`."""

    def __init__(self, geometry: dict | None = None, seed: int | list[int] | None = 1,
                 imperfections: dict | None = None, wheel: dict | None = None, start_us: int = 1_000_000):
        self.geometry = geometry_from(geometry)
        self.names = tuple(self.geometry["signals"])
        self.code = {n: i for i, n in enumerate(self.names)}
        self.imp = imperfections_from(imperfections)
        self.wheel = dict(WHEEL, **(wheel or {}))
        self.rng = np.random.default_rng(seed)
        self.cpr = int(self.geometry["cpr"])
        self.t0 = start_us / 1e6
        n0 = 4 * int(self.rng.integers(1, self.cpr // 4))            # A=B=0, index off: all signals 0
        self.theta = (n0 + 0.5) * 360.0 / self.cpr
        self.rotor_dir = 0
        self.count = 0
        self.turning = None          # rpm the spin before left the rotor turning at, told `then`
                                     # (0.0: it stopped of itself, rotor_stopping); None: not told

    # -- one spin ---------------------------------------------------------------------------------
    def spins(self, plan):
        """The spins of a plan (a scenario or None each), each told the next one's."""
        for i, sc in enumerate(plan):
            yield self.spin(sc, then=plan[i + 1] if i + 1 < len(plan) else None)

    def spin(self, scenario: str | None = None, then: str | None = None) -> Spin:
        """One spin. `then`: the next spin's scenario; for one of KEEP_TURNING the croupier does
        not stop the rotor at the end of this spin."""
        if scenario is not None and scenario not in SCENARIOS:
            raise ValueError("unknown scenario %r" % scenario)
        if then is not None and then not in SCENARIOS:
            raise ValueError("unknown scenario %r" % then)
        if scenario in KEEP_TURNING and self.turning is None:
            raise ValueError("%s: the spin before must leave the rotor turning: give it then=%r "
                             "(or use spins(plan))" % (scenario, scenario))
        rng, W = self.rng, self.wheel
        self.count += 1
        if self.rotor_dir == 0:          # first spin: either way, unless told it must repeat
            self.rotor_dir = 1 if rng.random() < 0.5 else -1
        # Article 53, by actuation: the croupier stops the rotor after every spin and pushes it
        # again, so every spin is an actuation, opposite to the previous one (played or void);
        # unless he leaves it turning (KEEP_TURNING), the way it turns
        same = scenario == "rotor_not_reversed" or scenario in KEEP_TURNING
        rotor_dir = self.rotor_dir if same else -self.rotor_dir
        ball_dir = rotor_dir if scenario == "same_direction" else -rotor_dir
        rpm = rng.uniform(*W["rotor_rpm"])
        tau = rng.uniform(*W["rotor_tau_s"])
        start_rpm = 0.0
        if scenario in KEEP_TURNING:
            start_rpm = self.turning
            # left alone it keeps its speed; pushed along, 2-8 rpm faster
            rpm = start_rpm if scenario == "rotor_not_actuated" else start_rpm + rng.uniform(2.0, 8.0)
        t_launch = rng.uniform(2.0, 3.0)
        sp = W["spread"]
        a = W["decel"] * rng.uniform(1 - sp, 1 + sp)
        c = W["drag"] * rng.uniform(1 - sp, 1 + sp)
        wc = 2 * math.pi / W["critical_lap_s"] * rng.uniform(0.99, 1.01)
        if scenario == "few_laps":
            w0 = BallTrack.omega0_for_laps(rng.uniform(1.8, 3.6), a, c, wc)
        elif scenario == "weak_throw":
            # thrown so weakly the ball crawls: it clings to the track down to a 3.0-3.3 s lap,
            # so its one pass of sensors 6 degrees apart is 50-55 ms long (issue 13's feeds)
            wc = 2 * math.pi / rng.uniform(3.0, 3.3)
            w0 = BallTrack.omega0_for_laps(rng.uniform(1.5, 1.7), a, c, wc)
        elif scenario == "launch_slow":
            w0 = 2 * math.pi / rng.uniform(1.1, 1.35)
        else:
            w0 = 2 * math.pi / rng.uniform(*W["launch_lap_s"])
        ball = BallTrack(w0, a, c, wc)
        t_drop = t_launch + ball.t_drop
        phi_launch = rng.uniform(0.0, 360.0)
        if W["release_deg"] is not None:      # a croupier's habit: the same spot of the bowl
            phi_launch = (float(W["release_deg"][0]) + rng.normal(0.0, float(W["release_deg"][1]))) % 360.0

        truth = {"spin": self.count, "launch_us": None, "drop_us": None, "rest_us": None, "number": None,
                 "rotor_dir": rotor_dir, "ball_dir": ball_dir, "laps": None, "fault": scenario,
                 "valid": scenario is None}
        track_end = t_drop           # the ball stops passing the track sensors
        sits = []                    # (t1, t2, pocket index k) the ball lies in a pocket
        rest = None
        stop_at = None
        void_press = None
        if scenario == "rotor_stopping":
            stop_at = t_launch + rng.uniform(2.0, 6.0)
        if scenario == "void_button":
            void_press = t_launch + rng.uniform(3.0, max(3.5, min(12.0, ball.t_drop - 1.0)))
            track_end = min(t_drop, void_press + rng.uniform(0.3, 1.2))   # the croupier takes the ball
        elif scenario == "ball_off_wheel":
            track_end = min(t_drop, t_launch + rng.uniform(4.0, ball.t_drop + 0.8))
        # rotor speed when the ball rests decides how long the ball is left in its pocket
        rpm_late = rpm * math.exp(-(t_drop + 4 - 1.0) / tau)
        hold = max(8.0, 4.0 * 60.0 / max(rpm_late, 1.0) + 1.0) if stop_at is None else 8.0
        if track_end >= t_drop and scenario != "ball_off_wheel":
            duration = t_drop + 5.0 + hold + 1.2
        else:                           # the croupier looks for the ball, then stops the rotor
            duration = track_end + rng.uniform(4.0, 10.0)
        left_turning = then in KEEP_TURNING and stop_at is None
        rotor = Rotor(self.theta, rotor_dir, rpm, duration, tau=tau, stop_at=stop_at,
                      stop_over=rng.uniform(2.0, 5.0), start_rpm=start_rpm, stop=not left_turning)

        if track_end >= t_drop and scenario != "ball_off_wheel":
            sits, rest, landing = self._bounce(rotor, ball, ball_dir, rotor_dir, t_drop, phi_launch, wc)
            t_pick = min(rest + hold, duration - 1.1)      # the croupier takes the ball out
            sits[-1] = (rest, t_pick, sits[-1][2])
            truth["number"] = WHEEL_ORDER[sits[-1][2]]
            truth["rest_us"] = self._us(rest)
            truth["bounced_pockets"] = landing
        if scenario != "void_button" and (scenario != "ball_off_wheel" or track_end >= t_drop):
            truth["drop_us"] = self._us(t_drop)
        s_end = float(ball.angle(track_end - t_launch))
        truth["laps"] = round(s_end / (2 * math.pi), 2)
        truth["launch_us"] = self._us(t_launch)
        truth["rotor_rpm_x10"] = int(round(rotor.rpm_at(t_launch) * 10))
        truth["first_lap_us"] = int(round(float(ball.time_at(2 * math.pi)) * 1e6))
        # the ball's closed-form run, so that its laps at any moment can be told (bench: lead in laps)
        truth["ball_track"] = {"w0": w0, "a": a, "c": c, "wc": wc}
        if scenario == "ball_off_wheel":
            truth["off_us"] = self._us(track_end)

        pulses = {}   # signal -> list of [t_on, t_off, tag] (seconds from the spin's start)
        self._ball_pulses(pulses, ball, ball_dir, t_launch, phi_launch, track_end)
        self._pocket_pulses(pulses, rotor, sits)
        if void_press is not None:
            pulses.setdefault("VOID", []).append([void_press, void_press + rng.uniform(0.3, 1.0), 0])
        if scenario == "power_cut":
            cut = t_launch + rng.uniform(2.0, ball.t_drop + 2.0)
            pulses["RESET"] = [[cut, cut + rng.uniform(0.05, 0.5), 0]]
            truth["cut_us"] = self._us(cut)
        z_fault = None
        if scenario in ("sensor_stuck", "sensor_dead"):
            z_fault = self._fault_sensor(scenario, pulses, t_launch, duration, truth)
        self._release_truth(truth, pulses, rotor, ball, ball_dir, phi_launch, t_launch, t_drop)
        self._imperfect(pulses, duration)
        seen = sorted(p[0] for lst in pulses.values() for p in lst if p[2] == 2 and p[1] > p[0])
        truth["seen_us"] = self._us(seen[0]) if seen else None

        t_us, code, level = self._encoder(rotor, scenario, t_launch, t_drop, z_fault)
        parts_t, parts_c, parts_l = [t_us], [code], [level]
        for name, lst in pulses.items():
            if not lst:
                continue
            arr = np.array([(p[0], p[1]) for p in lst if p[1] > p[0]], dtype=float).reshape(-1, 2)
            on = self._abs_us(arr[:, 0])
            off = self._abs_us(arr[:, 1])
            keep = off > on
            n = int(keep.sum())
            # rise, fall, rise, fall...: a fall and the next rise in the same microsecond stay in order
            parts_t += [np.column_stack((on[keep], off[keep])).ravel()]
            parts_c += [np.full(2 * n, self.code[name], dtype=np.int16)]
            parts_l += [np.tile(np.array([1, 0], dtype=np.int8), n)]
        t_all = np.concatenate(parts_t)
        c_all = np.concatenate(parts_c)
        l_all = np.concatenate(parts_l)
        # encoder (A/B then Z) before the other signals at the same microsecond
        prio = np.where(c_all <= 1, 0, np.where(c_all == 2, 1, 2))
        order = np.lexsort((np.arange(len(t_all)), prio, t_all))
        t_all, c_all, l_all = t_all[order], c_all[order], l_all[order]
        truth["start_us"] = self._us(0.0)
        truth["end_us"] = self._us(duration)
        self.t0 += duration
        self.theta = float(rotor.theta_deg[-1])
        self.rotor_dir = rotor_dir
        self.turning = None if then not in KEEP_TURNING else rotor.rpm_at(duration) if left_turning else 0.0
        return Spin(self.names, t_all, c_all, l_all, truth)

    def counted(self, played: bool) -> None:
        """The wheel's verdict on the last spin (a result: True, a void: False). Kept for the
        drivers that tell it; the croupier no longer needs it: every spin of the simulator is a
        new actuation of the rotor (stopped and pushed again), opposite to the previous one
        whether that spin was played or voided (Article 53 read by actuation, issue 13)."""
        return None

    # -- pieces -----------------------------------------------------------------------------------
    def _us(self, t):
        return int(round((self.t0 + t) * 1e6))

    def _abs_us(self, t):
        return np.rint((self.t0 + np.asarray(t, dtype=float)) * 1e6).astype(np.int64)

    def _bounce(self, rotor, ball, ball_dir, rotor_dir, t_drop, phi_launch, wc):
        """Spiral down, land in a pocket, hop across pockets, rest. Returns (sits, t_rest, pockets)."""
        rng, W = self.rng, self.wheel
        spiral = rng.uniform(0.5, 1.0)
        phi_hit = phi_launch + ball_dir * math.degrees(ball.s_drop + 0.7 * wc * spiral)
        t = t_drop + spiral
        theta0 = float(rotor.at(t)) + self.geometry["index_offset_deg"]
        k = int(round((phi_hit - theta0) / PITCH)) % POCKETS
        rel_speed = ball_dir * math.degrees(0.7 * wc) - rotor.direction * rotor.rpm_at(t) * 6.0
        rel = 1 if rel_speed >= 0 else -1
        mean, sd, lo, hi = W["bounce_pockets"]
        total = int(min(hi, max(lo, round(rng.normal(mean, sd)))))
        sits = []
        remaining = total
        first = True
        while remaining > 0:
            if not first and rng.random() < 0.12:
                hop = -1                                   # a bounce back on a fret
            else:
                hop = min(remaining, max(1, int(round(remaining * rng.uniform(0.3, 0.6)))))
            first = False
            t += 0.08 + 0.035 * abs(hop) * rng.uniform(0.8, 1.2)     # in flight
            k = (k + rel * hop) % POCKETS
            remaining -= hop
            sit = rng.uniform(0.03, 0.2)
            sits.append((t, t + sit, k))
            t += sit
        bias = W.get("bias")
        if bias and rng.random() < float(bias[1]):
            # a biased wheel: the ball hops on into the favoured pocket (a worn fret, a tilt)
            kb = WHEEL_ORDER.index(int(bias[0]))
            hop = (kb - k) % POCKETS
            if hop:
                t = sits[-1][1] + 0.08 + 0.035 * min(hop, POCKETS - hop)
                sits.append((t, t + 0.1, kb))
                total += min(hop, POCKETS - hop)
        rest = sits[-1][0]
        return sits, rest, total

    def _ball_pulses(self, pulses, ball, ball_dir, t_launch, phi_launch, track_end):
        hw = self.wheel["ball_sensor_width_deg"] / 2.0
        s_max = math.degrees(float(ball.angle(max(0.0, track_end - t_launch))))
        for i, psi in enumerate(self.geometry["ball_sensors_deg"]):
            first = ((psi - phi_launch) * ball_dir) % 360.0
            centres = np.arange(first, s_max, 360.0)
            centres = centres[(centres - hw > 0) & (centres + hw < s_max)]
            on = t_launch + ball.time_at(np.radians(centres - hw))
            off = t_launch + ball.time_at(np.radians(centres + hw))
            pulses["BALL%d" % i] = [[a, b, 1] for a, b in zip(on.tolist(), off.tolist())]
        self._track = (ball, t_launch, phi_launch, ball_dir, s_max)

    def _pocket_pulses(self, pulses, rotor, sits):
        """Pulses of each pocket sensor while a pocket holding the ball passes over it."""
        hw = self.wheel["pocket_sensor_width"] * PITCH / 2.0
        off = self.geometry["index_offset_deg"]
        for j, chi in enumerate(self.geometry["pocket_sensors_deg"]):
            lst = pulses.setdefault("POCKET%d" % j, [])
            for n, (t1, t2, k) in enumerate(sits):
                tag = 2 if n == len(sits) - 1 else 3
                th1, th2 = float(rotor.at(t1)), float(rotor.at(t2))
                lo, hi = min(th1, th2), max(th1, th2)
                base = chi - off - k * PITCH - hw            # window [base, base + 2hw] + 360 m
                m0 = math.floor((lo - base - 2 * hw) / 360.0)
                m1 = math.floor((hi - base) / 360.0)
                for m in range(m0, m1 + 1):
                    wl = base + 360.0 * m
                    wh = wl + 2 * hw
                    a, b = max(wl, lo), min(wh, hi)
                    if a > b or (a == b and hi > lo):
                        continue
                    ends = []
                    for ang in (a, b):
                        if ang == th1:
                            ends.append(t1)
                        elif ang == th2:
                            ends.append(t2)
                        else:
                            ends.append(float(rotor.times_of(ang)))
                    if th1 == th2:
                        ends = [t1, t2]
                    lst.append([max(t1, min(ends)), min(t2, max(ends)), tag])
            lst.sort()

    def _fault_sensor(self, scenario, pulses, t_launch, duration, truth):
        """A dead or stuck sensor: a ball-track, pocket or index sensor. Returns the Z fault, if any."""
        names = ["BALL%d" % i for i in range(len(self.geometry["ball_sensors_deg"]))] + \
                ["POCKET%d" % i for i in range(len(self.geometry["pocket_sensors_deg"]))] + ["Z"]
        name = names[int(self.rng.integers(0, len(names)))]
        truth["sensor"] = name
        if name == "Z":
            if scenario == "sensor_dead":
                return (0.0, duration - 0.2, 0)
            t_stuck = t_launch + self.rng.uniform(-1.0, 8.0)
            truth["stuck_us"] = self._us(t_stuck)
            return (t_stuck, duration - 0.2, 1)
        if scenario == "sensor_dead":
            pulses[name] = []
            return None
        t_stuck = t_launch + self.rng.uniform(-1.0, 8.0)
        kept = [p for p in pulses.get(name, []) if p[1] < t_stuck]
        inside = [p for p in pulses.get(name, []) if p[0] < t_stuck <= p[1]]
        start = inside[0][0] if inside else t_stuck
        kept.append([start, duration - 0.2, 0])       # stuck active until repaired after the spin
        pulses[name] = kept
        truth["stuck_us"] = self._us(t_stuck)
        return None

    def _pocket_at(self, rotor, deg, t):
        k = int(round((deg - float(rotor.at(t)) - self.geometry["index_offset_deg"]) / PITCH)) % POCKETS
        return WHEEL_ORDER[k]

    def _release_truth(self, truth, pulses, rotor, ball, ball_dir, phi_launch, t_launch, t_drop):
        """Truth for the wheel statistics: the rotor pocket under the first ball-track sensor
        the ball passed, at that pass (`release_pocket`); the bowl angle where it left the track
        (`drop_angle_deg`, the board's frame) and the rotor pocket under it then (`drop_pocket`)."""
        first = None
        for i in range(len(self.geometry["ball_sensors_deg"])):
            lst = [p for p in pulses.get("BALL%d" % i, []) if p[2] == 1]
            if lst and (first is None or lst[0][0] < first[0]):
                first = (lst[0][0], self.geometry["ball_sensors_deg"][i])
        truth["release_pocket"] = self._pocket_at(rotor, first[1], first[0]) if first else None
        ang = (phi_launch + ball_dir * math.degrees(ball.s_drop)) % 360.0
        truth["drop_angle_deg"] = round(ang, 1)
        truth["drop_pocket"] = self._pocket_at(rotor, ang, t_drop)

    def _track_artefacts(self, pulses):
        """Stray pulse half a lap after the second pass, one lap mis-timed by 1-3 ms, chattering
        ball-track pulses (imperfections stray, lap_jitter, chatter)."""
        imp, rng = self.imp, self.rng
        balls = sorted(n for n in pulses if n.startswith("BALL"))
        if not balls or not getattr(self, "_track", None):
            return
        ball, t_launch, phi_launch, ball_dir, s_max = self._track
        passes = sorted(p[0] for p in pulses[balls[0]] if p[2] == 1)
        if imp["stray"] > 0 and rng.random() < imp["stray"] and len(passes) >= 3:
            t = passes[1] + (passes[2] - passes[1]) * rng.uniform(0.45, 0.55)
            n = balls[int(rng.integers(0, len(balls)))]
            pulses[n].append([t, t + rng.uniform(0.0005, 0.003), 4])
        if imp["lap_jitter"] > 0 and rng.random() < imp["lap_jitter"] and len(passes) >= 4:
            k = int(rng.integers(1, len(passes) - 1))          # that lap's passes, every sensor
            shift = rng.choice((-1.0, 1.0)) * rng.uniform(0.001, 0.003)
            lo, hi = passes[k] - 0.05, passes[k] + 0.1
            for n in balls:
                for p in pulses[n]:
                    if p[2] == 1 and lo <= p[0] <= hi:
                        p[0] += shift
                        p[1] += shift
        if imp["chatter"] > 0:
            for _ in range(int(rng.poisson(imp["chatter"]))):
                n = balls[int(rng.integers(0, len(balls)))]
                real = [p for p in pulses[n] if p[2] == 1 and p[1] - p[0] > 0.002]
                if not real:
                    continue
                p = real[int(rng.integers(0, len(real)))]
                for _ in range(int(rng.integers(1, 4))):          # breaks 1-3 times at its make
                    d_on = rng.uniform(0.0001, 0.0004)
                    d_off = rng.uniform(0.0001, 0.0004)
                    pulses[n].append([p[0], p[0] + d_on, 5])
                    p[0] = p[0] + d_on + d_off

    def _imperfect(self, pulses, duration):
        imp, rng = self.imp, self.rng
        self._track_artefacts(pulses)
        sensors = [n for n in pulses if n.startswith(("BALL", "POCKET"))]
        if imp["miss"] > 0:
            for n in sensors:
                pulses[n] = [p for p in pulses[n] if p[2] == 0 or rng.random() >= imp["miss"]]
        if imp["spurious"] > 0 and sensors:
            for _ in range(int(rng.poisson(imp["spurious"]))):
                n = sensors[int(rng.integers(0, len(sensors)))]
                t = rng.uniform(0.5, duration - 0.5)
                pulses[n].append([t, t + rng.uniform(0.0005, 0.003), 4])
        if imp["jitter_us"] > 0:
            sd = imp["jitter_us"] / 1e6
            for n, lst in pulses.items():
                for p in lst:
                    a = p[0] + rng.normal(0.0, sd)
                    b = p[1] + rng.normal(0.0, sd)
                    p[0], p[1] = max(0.0, min(a, b)), max(a, b)
        if imp["bounce"]:
            for n, lst in pulses.items():
                if n != "VOID" and not n.startswith("POCKET"):
                    continue
                chatter = []
                for p in lst:
                    if p[1] - p[0] < 0.006:
                        continue
                    for _ in range(int(rng.integers(1, 4))):      # the contact makes, breaks, makes
                        d_on = rng.uniform(0.0001, 0.0004)
                        d_off = rng.uniform(0.0001, 0.0004)
                        chatter.append([p[0], p[0] + d_on, 5])
                        p[0] = p[0] + d_on + d_off
                lst.extend(chatter)
        for n in pulses:
            pulses[n] = self._merge(pulses[n])

    @staticmethod
    def _merge(lst):
        """Sort pulses and merge overlaps so a signal alternates 1/0."""
        lst = sorted([p for p in lst if p[1] > p[0]])
        out = []
        for p in lst:
            if out and p[0] <= out[-1][1]:
                out[-1][1] = max(out[-1][1], p[1])
                if p[2] == 2:
                    out[-1][2] = 2
            else:
                out.append(list(p))
        return out

    def _encoder(self, rotor, scenario, t_launch, t_drop, z_fault=None):
        """A/B quadrature edges and the index Z, from the rotor's angle (closed-form inversion).

        z_fault: (t_from, t_to, level) seconds: the index sensor holds `level` (dead 0, stuck 1)
        over that span, then shows the real index again."""
        cpr = self.cpr
        th = rotor.theta_deg * (cpr / 360.0)
        n_start, n_end = math.floor(th[0]), math.floor(th[-1])
        if rotor.direction > 0:
            bounds = np.arange(n_start + 1, n_end + 1, dtype=np.int64)   # crossing j: enter state j
            states = bounds
        else:
            bounds = np.arange(n_start, n_end, -1, dtype=np.int64)       # crossing j downwards: state j-1
            states = bounds - 1
        times = rotor.times_of(bounds * (360.0 / cpr))
        if scenario == "encoder_loss":
            keep = np.ones(len(states), dtype=bool)
            for _ in range(int(self.rng.integers(1, 4))):
                t_loss = t_launch + self.rng.uniform(0.5, max(1.0, t_drop - t_launch))
                i = max(0, min(int(np.searchsorted(times, t_loss)), len(states) - 5))
                while i + 5 <= len(states) and (np.any(states[i:i + 5] % cpr == 0)
                                                or np.any(states[i:i + 5] % cpr == cpr - 1)):
                    i += 8                      # not across the index: step past it
                if i + 5 <= len(states):
                    keep[i:i + 4] = False       # a whole quadrature cycle lost: the count is 4 short
            states, times = states[keep], times[keep]
        mod4 = states % 4
        prev = states - rotor.direction
        a_new = ((mod4 == 1) | (mod4 == 2)).astype(np.int8)
        b_new = ((mod4 == 2) | (mod4 == 3)).astype(np.int8)
        pm = prev % 4
        a_old = ((pm == 1) | (pm == 2)).astype(np.int8)
        code = np.where(a_new != a_old, 0, 1).astype(np.int16)
        level = np.where(code == 0, a_new, b_new).astype(np.int8)
        t_us = self._abs_us(times)
        z_on = states % cpr == 0
        z_off = prev % cpr == 0
        zt = np.concatenate((t_us[z_on], t_us[z_off]))
        zl = np.concatenate((np.ones(int(z_on.sum()), np.int8), np.zeros(int(z_off.sum()), np.int8)))
        if z_fault is not None:
            ta, tb = int(self._abs_us(z_fault[0])), int(self._abs_us(z_fault[1]))
            forced = z_fault[2]

            def real(t):              # the index level the rotor's position gives at time t
                i = int(np.searchsorted(t_us, t, side="right")) - 1
                return 1 if (states[i] if i >= 0 else n_start) % cpr == 0 else 0

            out = (zt < ta) | (zt > tb)
            zt, zl = zt[out], zl[out]
            extra_t, extra_l = [], []
            if real(ta) != forced:
                extra_t.append(ta)
                extra_l.append(forced)
            if real(tb) != forced:
                extra_t.append(tb)
                extra_l.append(real(tb))
            zt = np.concatenate((zt, np.array(extra_t, dtype=np.int64)))
            zl = np.concatenate((zl, np.array(extra_l, dtype=np.int8)))
        return (np.concatenate((t_us, zt)), np.concatenate((code, np.full(len(zt), 2, np.int16))),
                np.concatenate((level, zl)))

    # -- files ------------------------------------------------------------------------------------
    def header(self) -> dict:
        return dict(self.geometry)

    def write_feed(self, path, spins, extra_header=None) -> Path:
        """Write the header and every spin's changes to `path`, and the truth to PATH.truth.jsonl."""
        return write_feed(path, self.header() if extra_header is None else dict(self.header(), **extra_header),
                          spins)
