"""The ball in the pockets (la bille au repos): the winning number, and a ball no spin explains.

In a spin, once the ball left the track (`ball_dropped`), the pocket sensors' sightings confirm
the number (spin/pockets.py) or the spin is void: the ball unseen, no confirmation in time, a
pocket sensor silent, the rotor too slow for the pocket to come round.

Out of a spin, a ball at rest in a pocket is explained only by a run on the track that just
ended (a voided spin's ball, a misspin's) or by the last result's ball still in its pocket; any
other is a spin the ball-track sensors did not see (`_idle_sighting`): every ball-track sensor
is taken as silent, a fault, and no bet is taken until they see a ball again.

After a restart that cut a spin, the controller looks at the pockets before it voids anything
(`restart_pending`): the ball confirmed at rest is that spin's result; a ball still running on
the track had not dropped, and the spin is void (`restart`), as it is when no ball is found (its
actuation then counts as played: the result the host acknowledged is not in flash).
"""

from cylindre.spin.core import DROPPED, VOID, RESULT, SPINNING, VOID_HOLD_US, keep_history, history_entry
from cylindre.spin.health import STUCK, SILENT

try:
    from micropython import const
except ImportError:  # CPython
    const = int

_BOUNCE_US = const(3000000)  # the ball bounces this long before its pocket can come round
_REST_US = const(4000000)    # before the result's turns (bounces and settling)
_SPARE_TURNS = const(4)      # turns for the pocket sensors to miss the ball a few times
_US_X10_MIN = const(600000000)  # us in a minute x10: a turn's us from rpm_x10
_SLOW_TURN_US = const(12000000)  # a turn while the rotor's speed is unknown (5 rpm)


# ---- outcomes -----------------------------------------------------------------------
def _sensor_fault(self, i, state, detail):
    """Signal i turned bad (its index in `names`): told, the status at once (a wheel in
    fault takes no bet), and a spin in progress is void."""
    name = self.names[i]
    self._fault("sensor_stuck" if state == STUCK else "sensor_silent", detail, name)
    self._spin_over()
    if self.phase in SPINNING and i != self.void_i:
        self._void("sensor_fault", "%s %s: %s" % (name, state, detail))

def _void(self, reason, detail):
    if self.restarted is not None:
        # the spin a restart cut: whatever ends it, it ends as the restart's
        detail = "the controller restarted (%s) during this spin; %s" % (self.restarted, detail)
        reason = "restart"
        if not self.ball.on_track and self.act == self.rotor.act:
            # No ball found: the coup may have had its result before the cut (one the host
            # acknowledged is not in flash), so its actuation counts as played (Article 53: the
            # next coup needs an actuation of its own); a ball found on the track had not dropped.
            self.rotor.used = True
    self.voided = self.spin
    self.void_reason = reason
    self.emit({"ev": "void", "t": self.t, "spin": self.spin, "reason": reason, "detail": detail})
    if self.phase == DROPPED:
        # the ball is in the pockets: it may come to rest there with no spin open (not one
        # that left the wheel: a ball at rest then is one the track sensors lost)
        self.rest_ok_until = None if reason == "ball_off_wheel" else self.t + self._dropped_limits()[1]
    self.phase = VOID
    self.called = False
    self._spin_over()
    if self.in_spin == self.spin:
        # a void survives a restart (a voided spin is never paid): in the host's journal once it
        # acknowledges it, in flash if it has not by VOID_HOLD_US (spin/core.py); at once on a
        # board whose Cammegh readers know no journal
        if self.hold_voids:
            self._hold(VOID_HOLD_US)
        else:
            self._save(None)

# ---- a spin's ball in the pockets ---------------------------------------------------
def _confirm(self, t):
    if self.phase != DROPPED:
        return
    s = self.s
    p = self.pockets
    num = p.confirmed(self.need, self.need_sensors, self._track_end(), s["confirm_span_us"])
    if num is None:
        return
    if self.voided == self.spin:
        # Never reached by the phases above; kept as the one gate every result passes: a
        # spin voided is never paid, whatever a later change to the phases lets through.
        self._fault("result_refused", "spin %d was voided: pocket %d is not its result"
                    % (self.spin, num), None)
        self.phase = VOID
        return
    run = p.final_run(self._track_end())
    p.learn_width()
    sightings = [[x[0], x[1], x[2]] for x in run]
    laps = self.ball.laps_done() if self.restarted is None else None
    ev = {"ev": "result", "t": t, "spin": self.spin, "number": num,
          "rest_t": run[0][0], "sightings": sightings, "laps": laps}
    if self.restarted is not None:
        ev["restart"] = self.restarted      # a spin a restart cut, its ball found at rest
    self.emit(ev)
    self.last_number = num
    keep_history(self.hist, history_entry(self.spin, num, laps or 0, self.rotor_dir, self.ball_dir))
    self.phase = RESULT
    self.restarted = None
    self.called = False
    self.rest_run = p.run_id
    self._spin_over()
    if self.act == self.rotor.act:
        self.rotor.used = True      # this actuation has had its coup
    self._hold()                    # in flash with the next launch, or if the host lacks it

def _track_end(self):
    """The last pass of this spin's ball on the track."""
    return self.track_end_t if self.track_end_t is not None else self.ball.last_pass()

def _unseen(self, when):
    """No pocket sensor saw the ball after the drop. With two sensors or more the ball has
    left the wheel; with one, that sensor may as well be silent: no result, both said."""
    if self.pockets.sensors() >= 2:
        return self._void("ball_off_wheel", "no pocket sensor saw the ball " + when)
    return self._void("no_result", "the pocket sensor did not see the ball %s: the ball left "
                      "the wheel or %s is silent" % (when, self.names[1 + self.nb]))

def _dropped_tick(self, t, c):
    """Waiting for the ball at rest: a silent pocket sensor, the ball gone, no result."""
    p = self.pockets
    j = p.check(c, t)
    if j >= 0:
        k = 1 + self.nb + j
        self.health.set(k, SILENT)
        self._sensor_fault(k, SILENT, "the ball's pocket passed it four times unseen")
        return
    drop_t = self.drop_t if self.drop_t is not None else t
    waited = t - drop_t
    unseen, limit = self._dropped_limits()
    if waited > unseen and not p.seen_after(self._track_end()):
        return self._unseen("%d us after the drop" % waited)
    if waited > limit:
        self._void("no_result", "no confirmed pocket %d us after the drop" % waited)

def _turn_us(self):
    r = self.rotor
    return _US_X10_MIN // r.rpm_x10 if r.rpm_x10 > 0 else _SLOW_TURN_US

def _dropped_limits(self):
    """(us after the drop with the ball unseen in a pocket, us with no confirmed pocket) at
    the rotor's speed now: past either the spin is void."""
    turn = self._turn_us()
    # bounces, then a turn for the pocket to come round, and one more if it was missed
    unseen = _BOUNCE_US + 2 * turn + turn // 4
    p = self.pockets
    turns = (self.need + p.sensors() - 1) // p.sensors()
    # bounces, the turns the rule needs, and room for a sensor to miss the ball a few times
    limit = _REST_US + (turns + _SPARE_TURNS) * turn + self.s["confirm_span_us"]
    if limit > self.s["result_timeout_us"]:
        limit = self.s["result_timeout_us"]
    return unseen, limit

# ---- a ball at rest with no spin ----------------------------------------------------
def _may_rest(self, t):
    """A ball may come to rest from now, no spin open: a run on the track just ended, the
    ball of a spin voided in the pockets, a boot."""
    self.rest_ok_until = t + self._dropped_limits()[1]

def _idle_sighting(self):
    """A pocket sighting with no spin open. A run of them confirming a ball at rest (the
    sightings the rule needs, agreeing) is the last result's ball, a ball that a run on the
    track just left, a voided spin's ball, or a voided ball still followed on the track;
    anything else is a spin the ball-track sensors missed."""
    p = self.pockets
    if p.run < self.need or p.run_id == self.rest_run:
        return
    self.rest_run = p.run_id
    ok = self.rest_ok_until
    if self.ball.running() or (ok is not None and p.run_first() <= ok):
        return
    self._ball_unseen(p.sightings[-1][3])

def _ball_unseen(self, num):
    """A ball at rest in `num` that no run on the track explains: the launch, the laps and
    the drop went by unseen. Every ball-track sensor is silent until it sees a ball again (a
    fault: the status says so at once and the host takes no bet)."""
    detail = "a ball came to rest in %d with no launch seen" % num
    for i in range(self.nb):
        if self.health.set(1 + i, SILENT):
            self._sensor_fault(1 + i, SILENT, detail)

# ---- a restart that cut a spin ------------------------------------------------------
def restart_pending(self, t, spin, cause):
    """The restart cut `spin`: it is decided by the pockets, not voided at once. The spin is
    called (`ball_dropped`: no bet) while the controller looks: a ball confirmed at rest
    is its result (`restart` in the event); a ball still running on the track, or none
    found in time, makes it void (`restart`)."""
    self._new_spin_state()
    self.spin = spin
    self.phase = DROPPED
    self.restarted = cause
    self.drop_t = t
    self.track_end_t = t - 1
    self.rotor_dir = self.last_dir
    self.act = self.rotor.act
    self.pockets.clear()

def _still_running(self):
    """The ball of the spin a restart cut is on the track: it had not dropped."""
    self._void("restart", "the ball still ran on the track: it had not dropped")


# the controller's methods this module holds (spin/controller.py binds them)
METHODS = ("_sensor_fault", "_void", "_confirm", "_track_end", "_unseen", "_dropped_tick", "_turn_us", "_dropped_limits", "_may_rest", "_idle_sighting", "_ball_unseen", "restart_pending", "_still_running")

__all__ = ("METHODS",)
