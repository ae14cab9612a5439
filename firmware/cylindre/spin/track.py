"""The ball on the track (la bille sur la piste): launch, Article 53, rien ne va plus, the drop.

Ball-track edges come in (`_ball`), the launch is taken and checked (`_launch`), the drop is
predicted after each lap and *rien ne va plus* called ahead of it (`_predict`, `_rnvp`), the
drop is found (`_off_track`, `_dropped`, or a pocket pulse after the last pass: `_pocket`) and
the critical lap period learnt from it (spin/droplearn.py). The ball in the pockets is
spin/rest.py's. Functions of the controller (`self`): spin/controller.py makes them its methods.
"""

from cylindre.spin.core import IN_RIM, NO_MORE, DROPPED, VOID, SPINNING, fmt1
from cylindre.spin.health import OK, STUCK, SILENT
from cylindre.spin.predict import predict, fit, along, rate_after
from cylindre.spin.droplearn import DROP_TO_POCKET_US
from cylindre.spin.settings import bounds
from cylindre.spin.geometry import number_at

try:
    from micropython import const
except ImportError:  # CPython
    const = int

MIN_FIT_LAPS = 4       # laps before the prediction may call rien ne va plus (the lap limit may)
OFF_WHEEL_LAPS = 2.5    # gone this many laps before the predicted drop: off the wheel (a lap
                        # missed by every sensor is waited for up to there: see _drop_wait)
FAR_LAPS = 1.5          # predicted laps left over this: far from the drop (see _drop_wait)
LEARN_LEFT_LAPS = 1.0   # a voided spin's ball teaches the drop only if it left at most this
                        # many laps before the model's drop (not a ball taken by hand)
# Voids that leave the ball to run its course on the track: its drop is the wheel's physics all
# the same, and teaches the critical lap period (spin/droplearn.py) as a played spin's does.
BALL_RAN = ("rotor_not_reversed", "rotor_not_actuated", "same_direction", "launch_slow", "rotor_slow",
            "encoder_mismatch", "outbox_full", "sensor_fault", "restart")

_SLOW_PACE_N = const(2)      # a lap past rnvp_max_lap_us calls rien ne va plus only at a pace of
_SLOW_PACE_D = const(3)      # at least 2/3 of it (not two short laps a missed pass ran together)
_FAR_WAIT_X10 = const(26)    # far from the drop, wait 2.6 laps without a pass (a lap all missed)
_OFF_WHEEL_X100 = const(50)  # no prediction and a last lap under half the critical one: off the wheel
_US_X10_MIN = const(600000000)  # us in a minute x10


# ---- ball-track edges ---------------------------------------------------------------
def _ball(self, t, i, level):
    if not level:
        self.ball_up[i] = None
        self.ball.fell(t, i)
        if self.health.is_(1 + i, STUCK):
            self.health.set(1 + i, OK)
        return
    self.ball_up[i] = t
    if self.health.is_(1 + i, SILENT):
        self.health.set(1 + i, OK)
    b = self.ball
    L = self.launch
    ph = self.phase
    if L.passed(t, i, self.table_open, ph == IN_RIM or ph == NO_MORE, ph in SPINNING):
        return
    period = b.passed(t, i)
    if self.restarted is not None and self.phase == DROPPED \
            and (b.strong_groups() or b.laps_done()):
        self._still_running()       # the ball of the spin a restart cut had not dropped
    if L.waiting():
        p = L.ready()
        if p:
            self._launch(t, p)
        return
    if self.phase in (IN_RIM, NO_MORE):
        s = b.silent_sensor(t)
        if s >= 0 and self.health.set(1 + s, SILENT):
            self._sensor_fault(1 + s, SILENT, "missed the ball for a lap")
            return
        if period:
            self._predict(t)

# ---- the launch ---------------------------------------------------------------------
def _launch(self, t, period):
    self.launch.launched()
    if self.phase == DROPPED:
        p = self.pockets
        if p.seen_after(self._track_end()):
            self._void("no_result", "the ball was launched again before a result")
        else:
            self._unseen("before the relaunch")
    b = self.ball
    r = self.rotor
    self._new_spin_state()
    self.spin += 1
    self.pockets.clear()
    self.rotor_dir = r.dir
    self.ball_dir = b.direction()
    self.act = r.act
    self.launch_act = r.act
    violations = []
    a53 = self._article53()
    if a53:
        violations.append(a53)
    if self.ball_dir and self.ball_dir == self.rotor_dir:
        violations.append("same_direction")
    self.emit({"ev": "launch", "t": t, "spin": self.spin, "ball_dir": self.ball_dir,
               "rotor_dir": self.rotor_dir, "rotor_rpm_x10": r.rpm_x10, "lap_us": period,
               "violations": violations,
               "release_pocket": self._pocket_under(b.ref_deg(), b.released())})
    self.phase = IN_RIM
    # The coup's one write: the spin in progress with all that changed since the last record
    # (a void at the launch writes it instead, the spin counted and not in progress).
    why = self._misspin(period, a53, violations)
    if why is not None:
        self._void(why[0], why[1])
        return self._save(None)
    self._save(self.spin)
    if self.called:
        self.called = False
        self._rnvp(t, "croupier")   # the croupier called before the launch was seen

def _misspin(self, period, a53, violations):
    """(reason, detail) of a launch the rules void at once, else None; in this order."""
    s = self.s
    b = self.ball
    r = self.rotor
    stuck = self.health.stuck()
    if not self.accepting:
        return "outbox_full", "the link cannot carry events"
    if stuck:
        return "sensor_fault", "stuck: %s" % " ".join(stuck)
    if not r.known() or r.rpm_x10 < s["rotor_min_rpm_x10"]:
        return "rotor_slow", "rotor at %d rpm x10, below %d" % (r.rpm_x10, s["rotor_min_rpm_x10"])
    if r.rpm_x10 > s["rotor_max_rpm_x10"]:
        return "rotor_slow", "rotor at %d rpm x10, out of range (above %d)" % (r.rpm_x10, s["rotor_max_rpm_x10"])
    if period > s["launch_max_lap_us"]:
        # before the direction: a ball this slow may pass one sensor alone (a weak throw)
        return "launch_slow", "first lap %d us, slower than %d" % (period, s["launch_max_lap_us"])
    if self.ball_dir == 0:
        j = 1 if b.ref_sensor() == 0 else 0
        name = self.names[1 + j]
        if self.health.set(1 + j, SILENT):
            self._fault("sensor_silent", "no direction: only one ball sensor saw the ball", name)
        return "sensor_fault", "ball direction unknown: %s silent" % name
    if a53 and s["void_rotor_not_reversed"]:
        if a53 == "rotor_not_actuated":
            return a53, ("the rotor turns %d under the actuation of a coup already played: it was "
                         "not actuated again" % self.rotor_dir)
        return a53, "rotor actuated %d as the actuation before" % self.rotor_dir
    if "same_direction" in violations and s["void_same_direction"]:
        return "same_direction", "ball and rotor both turn %d" % self.ball_dir
    return None

def _pocket_under(self, deg, t):
    """The number of the rotor pocket under bowl angle `deg` (the board's frame: degrees
    clockwise from the index detector) at time t, the count taken back or forward from now
    at the rotor's speed (its 1 s window: within a count or two over a lap), or None while
    the rotor's position is unknown. For the wheel statistics (issue 10)."""
    r = self.rotor
    c = self.count()
    c -= r.dir * r.rpm_x10 * self.s["cpr"] * (self.t - t) // _US_X10_MIN
    since = r.since_index(c)
    if since is None:
        return None
    return number_at(deg, self.s["index_offset_deg"], since, self.s["cpr"])

def _article53(self):
    """Article 53 ("actionner chaque fois le cylindre dans un sens opposé au précédent"), read
    by actuation, at a launch: None, or the violation. Every coup played to a result has an
    actuation of its own: a launch under the actuation of a coup already played is
    `rotor_not_actuated`. Each actuation turns opposite to the one before it (launched,
    voided or missed; a push the same way without a stop is one): else `rotor_not_reversed`.
    A relaunch under a voided coup's actuation (the ball taken back, the rotor still
    turning) is held to that coup's rule. Remembered in flash across a power cut."""
    r = self.rotor
    d = self.rotor_dir
    if not d:
        return None
    if d == r.act_dir:
        if r.used:
            return "rotor_not_actuated"
        rule = r.prev_dir
    else:
        rule = r.act_dir        # turning the other way, not yet counted (below 3 rpm)
    return "rotor_not_reversed" if rule and d == rule else None

# ---- rien ne va plus ----------------------------------------------------------------
def _predict(self, t):
    b = self.ball
    p = predict(b.lap_periods(), b.lap_ends(), self.drop_us, self.s["rnvp_lead_laps_x10"] / 10.0,
                self.fitc)
    if p is None:
        return
    sound = self.sound
    if p[3] and b.laps_done() >= MIN_FIT_LAPS:
        self.sound = p
    elif sound is not None and p[1] < sound[1]:
        # A fit that flipped sign (one lap mis-timed by a few ms does it on 5-8 laps)
        # expects the drop too early: never earlier than the last sound fit said.
        p = (sound[0], sound[1], p[2] if p[2] > sound[2] else sound[2], False)
    self.pred = p
    self.call_t = p[0]
    if t >= p[0] and self.phase == IN_RIM and b.laps_done() >= MIN_FIT_LAPS:
        self._rnvp(t, "prediction")

def _rnvp(self, t, why):
    b = self.ball
    pred_drop = self.pred[1] if self.pred else None
    self.rnvp_t = t
    ev = {"ev": "rnvp", "t": t, "spin": self.spin, "laps": b.laps_done(),
          "lap_us": b.lap_periods()[-6:], "predicted_drop_t": pred_drop,
          "lead_us": (pred_drop - t) if pred_drop is not None else None, "why": why}
    self.emit(ev)
    self.phase = NO_MORE

# ---- the drop -----------------------------------------------------------------------
def _drop_wait(self):
    b = self.ball
    n = b.nlaps
    if n == 0:
        # No lap yet: a ball slower than this on its first lap was not launched (or noise).
        return self.s["launch_max_lap_us"] * 3
    laps = b.laps
    base = (laps[-1] if laps else 0) or self.drop_us
    if base > self.drop_us:
        base = self.drop_us             # no lap on the track is slower than the critical one
    if base < self.s["launch_max_lap_us"] // 2:
        base = self.s["launch_max_lap_us"] // 2
    if n < MIN_FIT_LAPS or (self.pred is not None and self.pred[2] > FAR_LAPS):
        # Far from the drop: survive a lap where every sensor missed the ball.
        return base * _FAR_WAIT_X10 // 10
    return base * self.s["drop_wait_x100"] // 100

def _off_track(self, t):
    """The ball stopped passing the track sensors: in a spin, that is the drop."""
    p = self.launch.off_track()
    if p >= 0:
        # A launch not yet confirmed, and a misspin (few laps or too slow).
        self._launch(t, p)
    ph = self.phase
    b = self.ball
    if ph in (IN_RIM, NO_MORE):
        self._dropped(t)
    else:
        if ph == VOID and self.void_reason in BALL_RAN and self.s["learn_drop"] \
                and b.laps_done() >= self.s["min_laps"]:
            self._learn_void_drop()
        if b.laps_done() or b.strong_groups():
            self._may_rest(t)       # a ball's run ended: it may rest in a pocket, no spin open
    if b.laps_done():
        self.run_end_t = t          # a ball ran laps: the launch awaited counts from its end
    b.leave_track()

def _dropped(self, t, seen=False):
    """The ball left the track (`seen`: a pocket sensor sees it, so it is in the wheel)."""
    b = self.ball
    s = self.s
    if self.phase == IN_RIM:
        self._rnvp(t, "drop")
    self.drop_t = t
    self.track_end_t = b.last_pass()
    left = self.pred[2] if self.pred else -1.0
    # Where the ball left the track: the part of a lap past the reference sensor the model
    # still expected at the last pass (half a lap when it expected none or over one).
    frac = left if 0.0 <= left < 1.0 else 0.5
    angle = int((b.ref_deg() + self.ball_dir * frac * 360.0) * 10) % 3600
    t_off = b.last_pass() + int(frac * b.last_period())
    self.emit({"ev": "drop", "t": t, "spin": self.spin, "laps": b.laps_done(),
               "lap_us": list(b.lap_periods()), "last_pass_t": b.last_pass(),
               "predicted_left_x10": int(left * 10) if left >= 0 else None,
               "drop_angle_x10": angle, "drop_pocket": self._pocket_under(angle / 10.0, t_off)})
    self.phase = DROPPED
    last = b.last_period()
    if b.laps_done() < s["min_laps"]:
        self._void("few_laps", "%d ball revolutions, fewer than %d" % (b.laps_done(), s["min_laps"]))
        return self._vanished(t)
    if not seen and (left > OFF_WHEEL_LAPS or (left < 0 and last * 100 < self.drop_us * _OFF_WHEEL_X100)):
        self._void("ball_off_wheel", "the ball left the track at a %d us lap, %s laps"
                   " before its predicted drop" % (last, fmt1(left)))
        return self._vanished(t)
    if s["learn_drop"]:
        self._learn_drop()
    self._confirm(t)

def _vanished(self, t):
    """The ball stopped passing the track sensors far from any drop its laps allow (a
    misspin: too few laps, or gone at speed): it left the wheel, or the ball-track sensors
    stopped seeing it and it runs on unseen. No bet until the pockets see it (it dropped:
    the sensors were right); if they do not, the ball-track sensors are taken as silent
    (spin/controller.py, `_check_vanished`)."""
    if self.pockets.seen_after(self._track_end()):
        return
    self.vanished_t = t
    # a ball that really left the track is in a pocket before the drop its laps predicted
    # (without a prediction, within two laps of its pace, or of the critical lap when it ran
    # none: a weak throw): seen later, it may have run on
    b = self.ball
    lap = b.last_period() or self.drop_us
    self.vanish_cut = self.pred[1] if self.pred else b.last_pass() + 2 * lap
    self._spin_over()

def _learn_void_drop(self):
    """A voided spin's ball left the track untouched (BALL_RAN): its drop bounds the
    critical period too, if it came where the model expects a drop (within LEARN_LEFT_LAPS
    of it: a ball taken off the track by hand comes laps early)."""
    b = self.ball
    p = predict(b.lap_periods(), b.lap_ends(), self.drop_us, 0.0, self.fitc)
    if p is None or p[2] > LEARN_LEFT_LAPS:
        return
    self._learn_drop()

def _learn_drop(self):
    """The ball left the track within the lap after its last pass: the model's period at that
    pass and one lap later bound the critical period (spin/droplearn.py)."""
    b = self.ball
    if b.group_size_now() < 2 and b.strong_groups() >= 1 and not b.last_wide():
        # The last pass was one sensor's, in a pulse narrower than a ball's, while the
        # ball's groups held two: a stray pulse after the drop (one of 0.7 ms 1.3 s after
        # it made a bound 4.5 % off, and the estimate with it for 24 spins, issue 13).
        # Nothing learnt from this spin.
        return
    f = fit(b.lap_periods(), self.fitc)
    if f is None:
        return
    p, q, u = f[0], f[1], f[2]
    u_pass = along(p, q, u, 0.5)        # at the last pass (u: the last lap's middle)
    u_next = along(p, q, u, 1.5)        # where the next pass would have been
    if u_pass <= 0:
        return
    lo = int(1e6 / (u_pass ** 0.5))
    hi = int(1e6 / (u_next ** 0.5)) if u_next > 0 else bounds("drop_lap_us")[2]
    if self.learner.add(lo, hi):
        self.drop_us = self.learner.estimate(self.drop_us)
        self._changed()
        if p < 0.0:
            self.narrow = (b.last_pass(), u_pass ** 0.5, -p / 2.0, -q / 2.0)

def _narrow_drop(self, seen_t):
    """The first pocket sighting after a learnt drop: the ball left the track at least
    DROP_TO_POCKET_US before it, so the critical period was at most the model's period
    then (spin/droplearn.py). Once a spin."""
    nw = self.narrow
    if nw is None:
        return
    self.narrow = None
    w = rate_after(nw[1], (seen_t - DROP_TO_POCKET_US - nw[0]) / 1e6, nw[2], nw[3])
    if w > 0.0 and self.learner.narrow(int(1e6 / w)):
        self.drop_us = self.learner.estimate(self.drop_us)

# ---- pocket edges -------------------------------------------------------------------
def _pocket(self, t, i, level):
    c = self.count()
    since = self.rotor.since_index(c)
    h = self.health
    k = 1 + self.nb + i
    if (level and h.is_(k, SILENT)) or (not level and h.is_(k, STUCK)):
        h.set(k, OK)
    got = self.pockets.edge(t, i, level, c, since)
    if got is None:
        return
    sight = got[0]
    b = self.ball
    if self.phase not in SPINNING:
        if self.vanished_t is not None and sight[0] <= self.vanish_cut:
            self.vanished_t = None  # the ball is in the pockets in time: it did drop
        self._idle_sighting()
        return
    if sight[0] <= self._track_end():
        return
    self.pockets.watch(i, got[1], got[2], got[3], self.rotor.dir, sight[0])
    if self.phase in (IN_RIM, NO_MORE) and t - b.last_pass() > b.last_period() // 2:
        b.leave_track()              # the ball is in a pocket: it left the track
        self._dropped(t, True)
        self._narrow_drop(sight[0])
        return
    if self.phase == DROPPED:
        self._narrow_drop(sight[0])
        self._confirm(t)


# the controller's methods this module holds (spin/controller.py binds them)
METHODS = ("_ball", "_launch", "_misspin", "_pocket_under", "_article53", "_predict", "_rnvp", "_drop_wait", "_off_track", "_dropped", "_vanished", "_learn_void_drop", "_learn_drop", "_narrow_drop", "_pocket")

__all__ = ("METHODS", "DROP_TO_POCKET_US", "MIN_FIT_LAPS", "BALL_RAN")
