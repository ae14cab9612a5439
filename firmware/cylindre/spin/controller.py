"""The wheel controller (contrôleur de cylindre): sensor edges in, events out.

A functional core: no hardware, no clock of its own. The Pico shell (cylindre.board) or a replay
calls `signal` for each sensor change, `tick` at least every 10 ms, and passes the encoder count
as a callable. Events are plain dicts handed to `emit` (docs/integrators/wheel-events.md). The spin's life:

    idle --first lap--> ball_in_rim --rien ne va plus--> no_more_bets --drop--> ball_dropped
         --confirmed pocket--> result            (any phase) --misspin/fault--> void

This module is the API and the checks that run on time; the state and the outcomes are
spin/core.py's, the ball on the track spin/track.py's, the ball in the pockets spin/rest.py's.
"""

from cylindre.spin.settings import check_one, coherence, index
from cylindre.spin.health import OK, STUCK, SILENT
from cylindre.spin.core import (FW, IDLE, IN_RIM, NO_MORE, DROPPED, RESULT, VOID, SPINNING,
                                new_epoch, int_or, s_ok)
from cylindre.spin.core import Core
from cylindre.spin import track as _track, rest as _rest
from cylindre.spin.track import MIN_FIT_LAPS
from cylindre.link.protocol import HISTORY
from cylindre.spin.geometry import POCKETS
from cylindre.spin.origin import REBASE_AT_US, REBASE_STEP_US, back

try:
    from micropython import const
except ImportError:  # CPython
    const = int

_SLOW_PACE_N = const(2)      # a lap past rnvp_max_lap_us calls rien ne va plus only at a pace of
_SLOW_PACE_D = const(3)      # at least 2/3 of it (not two short laps a missed pass ran together)
_ABSORB_X2 = const(3)        # after a restart mid-spin, the old ball's run for 3/2 slow laps
_STUCK_POCKETS = const(3)    # a pocket sensor active while the rotor turns over 3 pockets: stuck
_VOID_STUCK_X = const(10)    # the void button held 10 times stuck_us: stuck
_CHECK_US = const(500000)    # the checks without a time of their own (see tick) this often
_GROUP_TICK_US = const(100000)  # while a launch's group may end, a tick this often
_UNSEEN_X10 = const(13)      # a pass not seen 1.3 laps after the last: every sensor missed the ball
_UNSEEN_FAR_X10 = const(23)  # ... 2.3 laps while the call is over 2 laps away (a lap all missed)

# the phases, for the modules that import them from here
__all__ = ("Controller", "FW", "IDLE", "IN_RIM", "NO_MORE", "DROPPED", "RESULT", "VOID")


class Controller(Core):
    """The API (docs/internals/firmware-code.md, "The controller API").

    The ball on the track (spin/track.py) and in the pockets (spin/rest.py) are functions of the
    controller, made its methods here: a method found in the class itself costs the Pico's
    MicroPython about half as much as one found two or three base classes up, and the edge path
    calls dozens a second. Core's busiest are bound here too."""

    # the ball on the track
    _ball = _track._ball
    _launch = _track._launch
    _misspin = _track._misspin
    _pocket_under = _track._pocket_under
    _article53 = _track._article53
    _predict = _track._predict
    _rnvp = _track._rnvp
    _drop_wait = _track._drop_wait
    _off_track = _track._off_track
    _dropped = _track._dropped
    _vanished = _track._vanished
    _learn_void_drop = _track._learn_void_drop
    _learn_drop = _track._learn_drop
    _narrow_drop = _track._narrow_drop
    _pocket = _track._pocket
    # the ball in the pockets
    _sensor_fault = _rest._sensor_fault
    _void = _rest._void
    _confirm = _rest._confirm
    _track_end = _rest._track_end
    _unseen = _rest._unseen
    _dropped_tick = _rest._dropped_tick
    _turn_us = _rest._turn_us
    _dropped_limits = _rest._dropped_limits
    _may_rest = _rest._may_rest
    _idle_sighting = _rest._idle_sighting
    _ball_unseen = _rest._ball_unseen
    restart_pending = _rest.restart_pending
    _still_running = _rest._still_running
    # the state's busiest
    emit = Core.emit
    _status = Core._status
    _fault = Core._fault
    _spin_over = Core._spin_over
    _changed = Core._changed
    _save = Core._save
    _new_spin_state = Core._new_spin_state

    def boot(self, t_us, reset_cause="power"):
        """Start: restore the persisted record; a spin cut by the restart is decided by the
        pockets (spin/rest.py, `restart_pending`)."""
        self.t = t_us
        rec = None
        try:
            rec = self.store.load() if self.store is not None else None
        except Exception as e:  # a damaged store must not stop the wheel
            self._fault("store_failed", "cannot load: %s" % (e,), None)
        interrupted = None
        if isinstance(rec, dict):
            self.spin = int_or(rec.get("spin"), 0)
            self.last_dir = int_or(rec.get("dir"), 0)
            self.prev_dir = int_or(rec.get("pdir"), 0)
            self.used = rec.get("used") is True
            self.last_number = rec.get("last")
            h = rec.get("hist")
            if isinstance(h, list):
                self.hist = [e for e in h if isinstance(e, list) and len(e) == 5][-HISTORY:]
            d = int_or(rec.get("drop_us"), 0)
            if s_ok(d) and self.s["learn_drop"]:
                self.drop_us = d
                self.learner.restore(rec.get("drop_iv"))
            if rec.get("in_spin") is not None:
                interrupted = int_or(rec.get("in_spin"), None)
            ep = rec.get("epoch")
            if isinstance(ep, str) and 0 < len(ep) <= 32:
                self.count_epoch = ep
        fresh = self.count_epoch is None
        if fresh:
            self.count_epoch = new_epoch()      # saved with the record at the end of boot
        self.emit({"ev": "boot", "t": t_us, "reset_cause": reset_cause, "spin": self.spin,
                   "interrupted": interrupted, "fw": FW, "board": self.s.get("board")})
        if reset_cause == "watchdog":
            self._fault("watchdog_reset", "the watchdog restarted the controller", None)
        # The rotor found turning at boot is the actuation of the spin the restart cut (the
        # croupier may relaunch without touching it); otherwise it counts as a new one.
        self.rotor.seed(self.last_dir, self.prev_dir, interrupted is not None, self.used)
        self.saved_act = 0
        self.phase = IDLE
        self.in_spin = interrupted
        self._may_rest(t_us)            # the last coup's ball may still be in its pocket
        if interrupted is not None:
            self.restart_pending(t_us, interrupted, reset_cause)
            # The ball of the cut spin may still run: a run that starts within a slow lap of
            # the boot is that ball, not a launch.
            self.launch.absorb(t_us + self.drop_us * _ABSORB_X2 // 2)
        if fresh:
            self._save(interrupted)
        self.next_status = t_us
        self.check_t = t_us

    def signal(self, t_us, name, level):
        """One sensor change by name (replays, tests), in time order: see `edge`. "CALL" is the
        croupier's rien ne va plus button."""
        self.t = t_us
        names = self.names
        for i in range(len(names)):
            if names[i] == name:
                return self.edge(t_us, i, level)
        if name == "CALL":
            return self.edge(t_us, self.call_i, level)
        if name.startswith("BALL"):
            raise ValueError("unknown signal %r (this board has %s)"
                             % (name, " ".join(names[1:1 + self.nb])))
        if name.startswith("POCKET"):
            raise ValueError("unknown signal %r (this board has %s)"
                             % (name, " ".join(names[1 + self.nb:self.void_i])))
        raise ValueError("unknown signal %r" % (name,))

    def edge(self, t_us, i, level):
        """One sensor change, in time order, by the signal's index in `names` (Z, BALLn,
        POCKETn, VOID; then the call button, `call_i`): the Pico's edge path, which compares
        no strings."""
        self.t = t_us
        level = 1 if level else 0
        nb = self.nb
        if i == 0:
            self._index(t_us, level)
        elif 0 < i <= nb:
            self._ball(t_us, i - 1, level)
        elif nb < i < self.void_i:
            self._pocket(t_us, i - 1 - nb, level)
        elif i == self.void_i:
            self._void_button(t_us, level)
        elif i == self.call_i:
            if level:
                self.call(t_us)
        else:
            raise ValueError("no signal %d (this board has 0-%d)" % (i, self.call_i))

    def next_due(self):
        """Controller time of its next work without an edge, for the Pico's loop to wake then.
        With the board's timer taking the speed samples (`sampler`): the status, the checks every
        `_CHECK_US`, the earliest of `_timed`, and every 100 ms while a launch's group may end.
        Without it, the rotor's next sample (every 200 ms) or `_timed`, the status and
        the checks riding on the samples (at most one sample late), as on the replay's ticks."""
        e = self._timed()
        if not self.sampler:
            d = self.rotor.next_t
            return e if e < d else d
        # The samples come by the timer: a tick at the status, the checks, the timed work, and
        # every 100 ms while a launch's group may end.
        d = self.next_status
        if self.check_t < d:
            d = self.check_t
        if self.launch.candidate and self.launch.pending:
            s = self.t + _GROUP_TICK_US
            if s < d:
                d = s
        return e if e < d else d

    def _timed(self):
        """In a spin, the earliest work with a time of its own: the call of rien ne va plus on
        the prediction or on a slow lap, the drop (no pass for `_drop_wait`), and with the ball
        in the pockets the void of a ball unseen or unconfirmed (`_dropped_limits`); half a
        second from now when none comes sooner."""
        # Attributes, not the ball's accessors: asked at every tick and after every edge, and on
        # the Pico a method call costs far more than an attribute read.
        d = self.t + _CHECK_US
        b = self.ball
        if self.phase == IN_RIM:
            c = self.call_t
            if c is not None and c < d and b.nlaps >= MIN_FIT_LAPS:
                d = c
            lim = self.s["rnvp_max_lap_us"]
            laps = b.laps
            if laps and laps[-1] * _SLOW_PACE_D >= lim * _SLOW_PACE_N and b.last_ref_t + lim < d:
                d = b.last_ref_t + lim
            if laps and b.on_track:
                u = b.last_ref_t + laps[-1] * self._unseen_x10() // 10 + 1
                if u < d:
                    d = u
        elif self.phase == DROPPED and self.drop_t is not None:
            unseen, limit = self._dropped_limits()
            e = self.drop_t + 1 + (limit if self.pockets.seen_after(self._track_end()) else unseen)
            if e < d:
                d = e
        if b.on_track:
            gone = b.last_pass_t + self._drop_wait() + 1
            if gone < d:
                d = gone
        if self.held and self.phase == VOID:
            w = self.idle_save_t        # a void the host has not acknowledged: written then
            if w is not None and w < d:
                d = w
        return d

    def _unseen_x10(self):
        """Laps x10 without a pass before the call `unseen`: 1.3 near the predicted call, 2.3
        while it is over two laps away (a ball every sensor missed once is then not called
        early; one two laps from its call is: 1 pass in 10,000 with two sensors)."""
        p = self.pred
        if p is not None and p[2] * 10 - self.s["rnvp_lead_laps_x10"] > 20:
            return _UNSEEN_FAR_X10
        return _UNSEEN_X10 if p is not None else _UNSEEN_FAR_X10

    def rebase(self, at=REBASE_AT_US, step=REBASE_STEP_US):
        """Move the time origin forward, when controller time is past `at` and the controller
        is idle (no spin, no ball run on the track, no launch under way), by whole `step`s up to
        now; every time kept moves back by as much. Returns how far (us; 0: not now): the
        caller's clock must then read that much less (spin/origin.py). The ball's times are
        not moved: with no run on the track none is read, and the next run starts afresh."""
        t = self.t
        if t < at or self.phase in SPINNING or self.ball.running() or self.launch.waiting():
            return 0
        d = t - t % step
        if d <= 0:
            return 0
        self.epoch += d
        self.t = t - d
        self.next_status = back(self.next_status, d)
        self.check_t = back(self.check_t, d)
        ups = self.ball_up
        for i in range(len(ups)):
            if ups[i] is not None:
                ups[i] = back(ups[i], d)
        if self.void_up is not None:
            self.void_up = back(self.void_up, d)
        for k in ("rest_ok_until", "idle_save_t", "run_end_t", "vanished_t", "vanish_cut", "rnvp_t",
                  "call_t", "drop_t", "track_end_t"):
            v = getattr(self, k)
            if v is not None:
                setattr(self, k, back(v, d))
        # The last spin's times (read in a spin only; moved all the same)
        p = self.pred
        if p is not None:
            self.pred = (back(p[0], d), back(p[1], d), p[2], p[3])
        p = self.sound
        if p is not None:
            self.sound = (back(p[0], d), back(p[1], d), p[2], p[3])
        p = self.narrow
        if p is not None:
            self.narrow = (back(p[0], d), p[1], p[2], p[3])
        self.rotor.rebase(d)
        self.launch.rebase(d)
        self.pockets.rebase(d)
        return d

    def tick(self, t_us):
        """Time passes: speed, timeouts, rien ne va plus on time, health, periodic status."""
        self.t = t_us
        r = self.rotor
        if self.sampler:
            c = None
        else:
            c = self.count()
            r.sample(t_us, c)
            self._acted()
        # Before its next timed work a tick only takes the sample; the ball in the pockets (the
        # result's wait, a silent pocket sensor) and a launch whose group may end without a
        # second sensor (`Launch.window_over`) are looked at every tick.
        L = self.launch
        if t_us < self.next_status and t_us < self.check_t and t_us < self._timed() \
                and self.phase != DROPPED and not (L.candidate and L.pending):
            return
        if c is None:
            c = self.count()
        if t_us >= self.check_t:
            self.check_t = t_us + _CHECK_US
            self._check_index_health(t_us, c)
            self._check_stuck(t_us, c)
            self._check_launch_wait(t_us)
            self._check_vanished(t_us)
            self._check_record(t_us)
        elif self.held and self.phase == VOID:
            self._check_record(t_us)    # a void held past VOID_HOLD_US: the host did not acknowledge it
        ph = self.phase
        b = self.ball
        p = L.window_over(t_us)
        if p:
            # No group ever held two sensors: one is dead. Launch (a misspin: no direction).
            self._launch(t_us, p)     # the group is over and gave no direction
        if b.running() and t_us - b.last_pass() > self._drop_wait():
            self._off_track(t_us)
            ph = self.phase
        if ph == IN_RIM:
            if self.call_t is not None and t_us >= self.call_t and b.laps_done() >= MIN_FIT_LAPS:
                self._rnvp(t_us, "prediction")
            elif t_us - b.lap_start() >= self.s["rnvp_max_lap_us"] \
                    and b.pace() * _SLOW_PACE_D >= self.s["rnvp_max_lap_us"] * _SLOW_PACE_N:
                # a lap this long (not two short ones a missed pulse would run together)
                self._rnvp(t_us, "slow_lap")
            elif b.running() and b.nlaps and t_us - b.lap_start() > b.pace() * self._unseen_x10() // 10:
                # No sensor saw the ball where its next lap puts it: they all missed it at once
                # (one pass in ten thousand with two sensors), or the ball-track head died and the
                # ball runs on unseen. Called now, not when the drop's wait runs out (issue 33).
                self._rnvp(t_us, "unseen")
        if self.phase in SPINNING and r.known() and r.rpm_x10 < self.s["rotor_min_rpm_x10"]:
            if self.phase == DROPPED:
                # The ball is off the track: the spin was played, but with the rotor too slow
                # the pocket will not come round to the sensors.
                self._void("no_result", "rotor at %d rpm x10 before the ball's pocket was "
                           "confirmed" % r.rpm_x10)
            else:
                self._void("rotor_slow", "rotor at %d rpm x10, below %d during the spin"
                           % (r.rpm_x10, self.s["rotor_min_rpm_x10"]))
        if self.phase == DROPPED:
            self._dropped_tick(t_us, c)
        if t_us >= self.next_status:
            # Called (no_more_bets, ball_dropped), no bet can be taken on the status: every
            # other period. The spin's end brings the next one at once (`_spin_over`).
            ph = self.phase
            self.next_status = t_us + (self.s["status_us"] << 1 if ph == NO_MORE or ph == DROPPED
                                       else self.s["status_us"])
            self._status(t_us)

    def sample(self, t_us, count):
        """A speed sample the board's timer took at t_us (`sampler`), given in time order with
        the edges: the ticks then take none."""
        self.t = t_us
        self.rotor.take(t_us, count)
        self._acted()

    def _acted(self):
        if self.rotor.act != self.saved_act:
            # a new actuation: written with the launch under it (or when play stops); after a
            # power cut before that, the rotor found turning counts as a new actuation
            self.saved_act = self.rotor.act
            self._changed()

    def open_table(self, t_us):
        self.t = t_us
        self.table_open = True
        self.called = False
        self._status(t_us)

    def close_table(self, t_us):
        """Closing the table voids a spin in progress (no result may be paid from it)."""
        self.t = t_us
        if self.phase in SPINNING:
            self._void("table_closed", "the table was closed during the spin")
        self.table_open = False
        self.called = False
        self.launch.cancel()
        self._status(t_us)

    def call(self, t_us):
        """The croupier's *rien ne va plus* (his button, or the pit through the host): betting
        closes whatever the sensors say. A spin on the track is called now (`why: croupier`);
        with none seen, the controller says `no_more_bets` until a spin ends (the next launch
        is called at once) or the table is opened again."""
        self.t = t_us
        ph = self.phase
        if ph == IN_RIM:
            self._rnvp(t_us, "croupier")
        elif ph not in SPINNING and not self.called:
            self.called = True
        else:
            return
        self._spin_over()               # the status at once

    def get_settings(self):
        d = {}
        for k in self.s:
            v = self.s[k]
            d[k] = list(v) if isinstance(v, list) else v
        return d

    def set_setting(self, name, value):
        """Change one setting; returns None or an error string (nothing changes on error)."""
        if self.phase in SPINNING:
            return "a spin is in progress: settings change between spins"
        err = check_one(name, value)
        if err:
            return err
        if index(name) < 0 and name not in ("cpr", "index_offset_deg", "ball_sensors_deg",
                                             "pocket_sensors_deg"):
            return "%s is not a setting the controller changes at run time" % (name,)
        trial = self.get_settings()
        trial[name] = list(value) if isinstance(value, (list, tuple)) else value
        err = coherence(trial)
        if err:
            return err
        self.s = trial
        self.launch.set_max(trial["launch_max_lap_us"])
        if name in ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg",
                    "index_tolerance"):
            self._setup()
        return None

    def history(self):
        """The last 10 games with a result, oldest first."""
        return [{"spin": e[0], "number": e[1], "laps": e[2], "rotor_dir": e[3], "ball_dir": e[4]}
                for e in self.hist]

    def set_accepting(self, ok, reason=None):
        """The link says whether it can still carry events; when it cannot, no spin is valid."""
        if ok == self.accepting:
            return
        self.accepting = bool(ok)
        if not ok:
            self._fault("outbox_full", reason or "the link cannot carry events", None)
            if self.phase in SPINNING:
                self._void("outbox_full", reason or "the link cannot carry events")

    def fault(self, code, detail, signal=None, t_us=None):
        """A fault found by the shell (edges lost, samples lost, a link problem), told at t_us
        (None: the controller's last time): reported like the others; a spin in progress is
        void, as its evidence is incomplete."""
        if t_us is not None:
            self.t = t_us
        self._fault(code, detail, signal)
        if self.phase in SPINNING:
            self._void("sensor_fault", detail)

    # ---- rotor ----------------------------------------------------------------------------
    def _index(self, t, level):
        c = self.count()
        err = self.rotor.index(t, c, level)
        if level and not self.health.is_(0, OK):
            self.health.set(0, OK)
        if err is not None:
            self._fault("encoder_mismatch", "index seen %d counts off a whole turn" % err, "Z")
            if self.phase in SPINNING:
                self._void("encoder_mismatch", "the encoder count disagrees with the index by %d" % err)

    def _check_index_health(self, t, c):
        r = self.rotor
        if r.index_stuck(c):
            r.sync_next = True
            if self.health.set(0, STUCK):
                self._sensor_fault(0, STUCK, "index active over a quarter turn")
        elif r.index_silent(c):
            r.sync_next = True
            if self.health.set(0, SILENT):
                self._sensor_fault(0, SILENT, "no index over a turn and a quarter")

    def _check_record(self, t):
        """What changed in RAM since the last record with no launch to carry it (an actuation,
        the drop learnt from a voided ball) is written once play stops (IDLE_SAVE_US)."""
        if self.idle_save_t is not None and t >= self.idle_save_t and self.phase not in SPINNING:
            self._save(None)

    def _check_vanished(self, t):
        """The ball vanished from the track far from its drop (spin/track.py, `_vanished`) and
        no pocket saw it in the time a dropped ball takes to be seen: the ball-track sensors
        are taken as silent (they may have lost a ball running on), until they see one."""
        v = self.vanished_t
        if v is None or self.phase in SPINNING or t - v <= self._dropped_limits()[0]:
            return
        self.vanished_t = None
        detail = "the ball vanished from the track %d ms ago far from its drop, and no pocket " \
                 "sensor saw it: it left the wheel, or the ball-track sensors stopped seeing it" \
                 % ((t - v) // 1000)
        for i in range(self.nb):
            if self.health.set(1 + i, SILENT):
                self._sensor_fault(1 + i, SILENT, detail)

    def _check_launch_wait(self, t):
        """The rotor actuated for a coup and no launch seen `launch_wait_us` after it (or after
        the last run on the track ended, if later): the ball-track sensors are taken as silent
        before the ball they may have missed comes to rest. Once an actuation; a launch seen
        clears it (the sensors' health turns ok at their first pass)."""
        w = self.s["launch_wait_us"]
        r = self.rotor
        if not w or not self.table_open or r.act == self.launch_act or r.act == self.unseen_act \
                or not r.act_seen or self.phase in SPINNING or self.ball.running() \
                or self.launch.waiting():
            return
        since = r.act_t
        e = self.run_end_t
        if e is not None and e > since:
            since = e
        if t - since <= w:
            return
        self.unseen_act = r.act
        detail = "the rotor was actuated %d ms ago and no launch was seen" % ((t - r.act_t) // 1000)
        for i in range(self.nb):
            if self.health.set(1 + i, SILENT):
                self._sensor_fault(1 + i, SILENT, detail)

    # ---- void button, stuck sensors -------------------------------------------------------
    def _void_button(self, t, level):
        if not level:
            self.void_up = None
            if self.health.is_(self.void_i, STUCK):
                self.health.set(self.void_i, OK)
            return
        self.void_up = t
        if self.phase in SPINNING:
            self._void("void_button", "the croupier pressed the void button")

    def _check_stuck(self, t, c):
        # Every 500 ms: only a sensor active now can be stuck, so the loops look at that first.
        lim = self.s["stuck_us"]
        ups = self.ball_up
        for i in range(len(ups)):
            u = ups[i]
            if u is not None and t - u > lim and self.health.set(1 + i, STUCK):
                self._sensor_fault(1 + i, STUCK, "active for over %d us" % lim)
        u = self.void_up
        if u is not None and t - u > _VOID_STUCK_X * lim and self.health.set(self.void_i, STUCK):
            self._sensor_fault(self.void_i, STUCK, "void button held for over %d us" % (_VOID_STUCK_X * lim))
        p = self.pockets
        act = p.active
        for i in range(len(act)):
            if act[i] and p.held(i, c, _STUCK_POCKETS * self.s["cpr"] // POCKETS):
                k = 1 + self.nb + i
                if self.health.set(k, STUCK):
                    self._sensor_fault(k, STUCK,
                                       "active while the rotor turned over 3 pockets")
