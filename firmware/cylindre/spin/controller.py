"""The wheel controller (contrôleur de cylindre): sensor edges in, events out.

A functional core: no hardware, no clock of its own. The Pico shell (cylindre.board) or a replay
calls `signal` for each sensor change, `tick` at least every 10 ms, and passes the encoder count
as a callable. Events are plain dicts handed to `emit` (docs/integrators/wheel-events.md). The spin's life:

    idle --first lap--> ball_in_rim --rien ne va plus--> no_more_bets --drop--> ball_dropped
         --confirmed pocket--> result            (any phase) --misspin/fault--> void
"""

from cylindre.spin.settings import build, check_one, coherence, bounds, index, confirm_sightings, confirm_sensors
from cylindre.spin.rotor import Rotor
from cylindre.spin.ball import Ball
from cylindre.spin.launch import Launch
from cylindre.spin.pockets import Pockets
from cylindre.spin.health import Health, OK, STUCK, SILENT
from cylindre.spin.predict import predict, fit, along, rate_after
from cylindre.spin.droplearn import DropLearner, DROP_TO_POCKET_US
from cylindre.link.protocol import HISTORY
from cylindre.link.status import names as signal_names
from cylindre.spin.geometry import POCKETS, number_at
from cylindre.spin.origin import REBASE_AT_US, REBASE_STEP_US, back, shift_times

try:
    from micropython import const
except ImportError:  # CPython
    const = int

FW = "cylindre-fw 0.1"
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

# Tuning ratios (integer arithmetic, x10 or x100: tenths or hundredths).
_SLOW_PACE_N = const(2)      # a lap past rnvp_max_lap_us calls rien ne va plus only at a pace of
_SLOW_PACE_D = const(3)      # at least 2/3 of it (not two short laps a missed pass ran together)
_ABSORB_X2 = const(3)        # after a restart mid-spin, the old ball's run for 3/2 slow laps
_FAR_WAIT_X10 = const(26)    # far from the drop, wait 2.6 laps without a pass (a lap all missed)
_OFF_WHEEL_X100 = const(50)  # no prediction and a last lap under half the critical one: off the wheel
_STUCK_POCKETS = const(3)    # a pocket sensor active while the rotor turns over 3 pockets: stuck
_VOID_STUCK_X = const(10)    # the void button held 10 times stuck_us: stuck
_BOUNCE_US = const(3000000)  # the ball bounces this long before its pocket can come round
_REST_US = const(4000000)    # before the result's turns (bounces and settling)
_SPARE_TURNS = const(4)      # turns for the pocket sensors to miss the ball a few times
_US_X10_MIN = const(600000000)  # us in a minute x10: a turn's us from rpm_x10
_SLOW_TURN_US = const(12000000)  # a turn while the rotor's speed is unknown (5 rpm)
_CHECK_US = const(500000)    # the checks without a time of their own (see tick) this often
_GROUP_TICK_US = const(100000)  # while a launch's group may end, a tick this often

IDLE = "idle"
IN_RIM = "ball_in_rim"
NO_MORE = "no_more_bets"
DROPPED = "ball_dropped"
RESULT = "result"
VOID = "void"
_SPINNING = (IN_RIM, NO_MORE, DROPPED)


def _zero():
    return 0


class Controller:
    def __init__(self, settings, emit, store=None, count=None):
        s, err = build(settings)
        if s is None:
            raise ValueError(err)
        self.s = s
        self.out = emit             # the events' consumer (`emit` adds the origin back)
        self.epoch = 0              # the time origin, us since boot (spin/origin.py; `rebase`)
        self.store = store          # None: nothing is kept (replays and tests: cylindre.replay.MemoryStore)
        self.count = count if count is not None else _zero
        # True when the board's timer takes the speed samples (`sample`); else each tick takes
        # one (replays, tests)
        self.sampler = False
        self.phase = IDLE
        self.spin = 0
        # the spin counter's epoch (époque du compteur): a random id made when the counter starts
        # from nothing (a new board, a wiped flash) and kept with it in flash; the link tells it
        # to the host, which keys the wheel's spin numbers by it (docs/integrators/link-protocol.md, WELCOME)
        self.count_epoch = None
        # Article 53 by actuation: the rotor keeps the ways of its latest actuation and of the
        # one before (Rotor.act_dir, Rotor.prev_dir) and whether a coup was played under the
        # latest (Rotor.used); they are kept in flash (dir, pdir, used) and given back to the
        # rotor at boot. `saved_act`: the actuation last written to flash.
        self.last_dir = 0
        self.prev_dir = 0
        self.used = False
        self.saved_act = 0
        self.last_number = None
        self.voided = -1            # the last spin voided: none of its pockets is ever a result
        self.hist = []
        self.table_open = bool(s["open_at_boot"])
        self.drop_us = s["drop_lap_us"]   # critical lap period, learnt from the spins seen
        d = bounds("drop_lap_us")
        self.learner = DropLearner(d[1], d[2])
        self.accepting = True
        self.t = 0
        self.next_status = 0
        self.check_t = 0
        self._new_spin_state()
        self._setup()

    # ---- set-up -------------------------------------------------------------------------
    def _setup(self):
        s = self.s
        old = getattr(self, "rotor", None)
        self.rotor = Rotor(s["cpr"], s["index_tolerance"])
        if old is not None:             # settings changed between spins: the same motion
            self.rotor.seed(old.act_dir, old.prev_dir, True, old.used)
        self.ball = Ball(s["ball_sensors_deg"], s["launch_max_lap_us"])
        self.pockets = Pockets(s["pocket_sensors_deg"], s["index_offset_deg"], s["cpr"],
                               s["pocket_min_us"])
        self.need = confirm_sightings(s)
        self.need_sensors = confirm_sensors(s)
        nb = len(s["ball_sensors_deg"])
        npk = len(s["pocket_sensors_deg"])
        self.nb = nb
        # The signal order (indices for `edge` and `health`): Z, BALL0.., POCKET0.., VOID, as the
        # STATUS payload packs the sensors (link/status.py); one list, shared with Health (the
        # Pico's heap keeps each name once).
        self.names = signal_names(nb, npk)
        self.void_i = 1 + nb + npk
        self.health = Health(self.names)
        # the rise time of each ball-track sensor while it is active, else None
        self.ball_up = [None] * nb  # type: list[int | None]
        self.void_up = None
        self.launch = Launch(self.ball, s["launch_max_lap_us"])

    def _new_spin_state(self):
        self.rnvp_t = None
        self.call_t = None
        self.pred = None
        self.sound = None           # the last prediction from a sound fit (see predict.predict)
        self.drop_t = None
        self.track_end_t = None     # the spin's ball's last pass (later passes: a relaunch or noise)
        self.narrow = None          # (last pass, rate there, a, c): the drop just learnt, until
                                    # its first pocket sighting narrows it (_narrow_drop)
        self.rotor_dir = 0
        self.ball_dir = 0
        self.act = -1               # the rotor's actuation this spin was launched under
        self.void_reason = None     # why this spin was voided (None: not voided)

    # ---- the API --------------------------------------------------------------------------
    def boot(self, t_us, reset_cause="power"):
        """Start: restore the persisted record; a spin cut by the restart is void ("restart")."""
        self.t = t_us
        rec = None
        try:
            rec = self.store.load() if self.store is not None else None
        except Exception as e:  # a damaged store must not stop the wheel
            self._fault("store_failed", "cannot load: %s" % (e,), None)
        interrupted = None
        if isinstance(rec, dict):
            self.spin = _int(rec.get("spin"), 0)
            self.last_dir = _int(rec.get("dir"), 0)
            self.prev_dir = _int(rec.get("pdir"), 0)
            self.used = rec.get("used") is True
            self.last_number = rec.get("last")
            h = rec.get("hist")
            if isinstance(h, list):
                self.hist = [e for e in h if isinstance(e, list) and len(e) == 5][-HISTORY:]
            d = _int(rec.get("drop_us"), 0)
            if s_ok(d) and self.s["learn_drop"]:
                self.drop_us = d
                self.learner.restore(rec.get("drop_iv"))
            if rec.get("in_spin") is not None:
                interrupted = _int(rec.get("in_spin"), None)
            ep = rec.get("epoch")
            if isinstance(ep, str) and 0 < len(ep) <= 32:
                self.count_epoch = ep
        if self.count_epoch is None:
            self.count_epoch = new_epoch()      # saved with the record at the end of boot
        self.emit({"ev": "boot", "t": t_us, "reset_cause": reset_cause, "spin": self.spin,
                   "interrupted": interrupted, "fw": FW, "board": self.s.get("board")})
        if reset_cause == "watchdog":
            self._fault("watchdog_reset", "the watchdog restarted the controller", None)
        # The rotor found turning at boot is the actuation of the spin the restart cut (the
        # croupier may relaunch without touching it); otherwise it counts as a new one.
        self.rotor.seed(self.last_dir, self.prev_dir, interrupted is not None, self.used)
        self.saved_act = 0
        if interrupted is not None:
            self.voided = interrupted
            self.void_reason = "restart"
            self.emit({"ev": "void", "t": t_us, "spin": interrupted, "reason": "restart",
                       "detail": "the controller restarted (%s) during this spin" % (reset_cause,)})
        self.phase = IDLE
        if interrupted is not None:
            # The ball of the voided spin may still run: a run that starts within a slow lap of
            # the boot is that ball, not a launch.
            self.phase = VOID
            self.launch.absorb(t_us + self.drop_us * _ABSORB_X2 // 2)
        self._save(None)
        self.next_status = t_us
        self.check_t = t_us

    def signal(self, t_us, name, level):
        """One sensor change by name (replays, tests), in time order: see `edge`."""
        self.t = t_us
        names = self.names
        for i in range(len(names)):
            if names[i] == name:
                return self.edge(t_us, i, level)
        if name.startswith("BALL"):
            raise ValueError("unknown signal %r (this board has %s)"
                             % (name, " ".join(names[1:1 + self.nb])))
        if name.startswith("POCKET"):
            raise ValueError("unknown signal %r (this board has %s)"
                             % (name, " ".join(names[1 + self.nb:self.void_i])))
        raise ValueError("unknown signal %r" % (name,))

    def edge(self, t_us, i, level):
        """One sensor change, in time order, by the signal's index in `names` (Z, BALLn,
        POCKETn, VOID): the Pico's edge path, which compares no strings."""
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
        else:
            raise ValueError("no signal %d (this board has 0-%d)" % (i, self.void_i))

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
        elif self.phase == DROPPED and self.drop_t is not None:
            unseen, limit = self._dropped_limits()
            e = self.drop_t + 1 + (limit if self.pockets.seen_after(self._track_end()) else unseen)
            if e < d:
                d = e
        if b.on_track:
            gone = b.last_pass_t + self._drop_wait() + 1
            if gone < d:
                d = gone
        return d

    def rebase(self, at=REBASE_AT_US, step=REBASE_STEP_US):
        """Move the time origin forward, when controller time is past `at` and the controller
        is idle (no spin, no ball run on the track, no launch under way), by whole `step`s up to
        now; every time kept moves back by as much. Returns how far (us; 0: not now): the
        caller's clock must then read that much less (spin/origin.py). The ball's times are
        not moved: with no run on the track none is read, and the next run starts afresh."""
        t = self.t
        if t < at or self.phase in _SPINNING or self.ball.running() or self.launch.waiting():
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
        # The last spin's times (read in a spin only; moved all the same)
        if self.rnvp_t is not None:
            self.rnvp_t = back(self.rnvp_t, d)
        if self.call_t is not None:
            self.call_t = back(self.call_t, d)
        if self.drop_t is not None:
            self.drop_t = back(self.drop_t, d)
        if self.track_end_t is not None:
            self.track_end_t = back(self.track_end_t, d)
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

    def emit(self, ev):
        """An event out, its times in time since boot (the origin added back)."""
        self.out(shift_times(ev, self.epoch, True))

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
        if self.phase in _SPINNING and r.known() and r.rpm_x10 < self.s["rotor_min_rpm_x10"]:
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
            # a new actuation: in flash at once, so a power cut before the launch keeps it
            self.saved_act = self.rotor.act
            self._save(self.spin if self.phase in _SPINNING else None)

    def open_table(self, t_us):
        self.t = t_us
        self.table_open = True
        self._status(t_us)

    def close_table(self, t_us):
        """Closing the table voids a spin in progress (no result may be paid from it)."""
        self.t = t_us
        if self.phase in _SPINNING:
            self._void("table_closed", "the table was closed during the spin")
        self.table_open = False
        self.launch.cancel()
        self._status(t_us)

    def get_settings(self):
        d = {}
        for k in self.s:
            v = self.s[k]
            d[k] = list(v) if isinstance(v, list) else v
        return d

    def set_setting(self, name, value):
        """Change one setting; returns None or an error string (nothing changes on error)."""
        if self.phase in _SPINNING:
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
            if self.phase in _SPINNING:
                self._void("outbox_full", reason or "the link cannot carry events")

    def fault(self, code, detail, signal=None, t_us=None):
        """A fault found by the shell (edges lost, samples lost, a link problem), told at t_us
        (None: the controller's last time): reported like the others; a spin in progress is
        void, as its evidence is incomplete."""
        if t_us is not None:
            self.t = t_us
        self._fault(code, detail, signal)
        if self.phase in _SPINNING:
            self._void("sensor_fault", detail)

    # ---- rotor ----------------------------------------------------------------------------
    def _index(self, t, level):
        c = self.count()
        err = self.rotor.index(t, c, level)
        if level and not self.health.is_(0, OK):
            self.health.set(0, OK)
        if err is not None:
            self._fault("encoder_mismatch", "index seen %d counts off a whole turn" % err, "Z")
            if self.phase in _SPINNING:
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

    # ---- ball -----------------------------------------------------------------------------
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
        if L.passed(t, i, self.table_open, ph == IN_RIM or ph == NO_MORE, ph in _SPINNING):
            return
        period = b.passed(t, i)
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

    def _launch(self, t, period):
        self.launch.launched()
        if self.phase == DROPPED:
            p = self.pockets
            if p.seen_after(self._track_end()):
                self._void("no_result", "the ball was launched again before a result")
            else:
                self._unseen("before the relaunch")
        s = self.s
        b = self.ball
        r = self.rotor
        self._new_spin_state()
        self.spin += 1
        self.pockets.clear()
        self.rotor_dir = r.dir
        self.ball_dir = b.direction()
        self.act = r.act
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
        self._save(self.spin)
        stuck = self.health.stuck()
        if not self.accepting:
            return self._void("outbox_full", "the link cannot carry events")
        if stuck:
            return self._void("sensor_fault", "stuck: %s" % " ".join(stuck))
        if not r.known() or r.rpm_x10 < s["rotor_min_rpm_x10"]:
            return self._void("rotor_slow", "rotor at %d rpm x10, below %d"
                              % (r.rpm_x10, s["rotor_min_rpm_x10"]))
        if r.rpm_x10 > s["rotor_max_rpm_x10"]:
            return self._void("rotor_slow", "rotor at %d rpm x10, out of range (above %d)"
                              % (r.rpm_x10, s["rotor_max_rpm_x10"]))
        if period > s["launch_max_lap_us"]:
            # before the direction: a ball this slow may pass one sensor alone (a weak throw)
            return self._void("launch_slow", "first lap %d us, slower than %d"
                              % (period, s["launch_max_lap_us"]))
        if self.ball_dir == 0:
            j = 1 if b.ref_sensor() == 0 else 0
            name = self.names[1 + j]
            if self.health.set(1 + j, SILENT):
                self._fault("sensor_silent", "no direction: only one ball sensor saw the ball", name)
            return self._void("sensor_fault", "ball direction unknown: %s silent" % name)
        if a53 and s["void_rotor_not_reversed"]:
            if a53 == "rotor_not_actuated":
                return self._void(a53, "the rotor turns %d under the actuation of a coup already "
                                  "played: it was not actuated again" % self.rotor_dir)
            return self._void(a53, "rotor actuated %d as the actuation before" % self.rotor_dir)
        if "same_direction" in violations and s["void_same_direction"]:
            return self._void("same_direction", "ball and rotor both turn %d" % self.ball_dir)

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

    def _predict(self, t):
        b = self.ball
        p = predict(b.lap_periods(), b.lap_ends(), self.drop_us, self.s["rnvp_lead_laps_x10"] / 10.0)
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

    def _track_end(self):
        """The last pass of this spin's ball on the track."""
        return self.track_end_t if self.track_end_t is not None else self.ball.last_pass()

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
        if ph in (IN_RIM, NO_MORE):
            self._dropped(t)
        elif ph == VOID and self.void_reason in BALL_RAN and self.s["learn_drop"] \
                and self.ball.laps_done() >= self.s["min_laps"]:
            self._learn_void_drop()
        self.ball.leave_track()

    def _dropped(self, t):
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
            return self._void("few_laps", "%d ball revolutions, fewer than %d" % (b.laps_done(), s["min_laps"]))
        if left > OFF_WHEEL_LAPS or (left < 0 and last * 100 < self.drop_us * _OFF_WHEEL_X100):
            return self._void("ball_off_wheel", "the ball left the track at a %d us lap, %s laps"
                              " before its predicted drop" % (last, _fmt1(left)))
        if s["learn_drop"]:
            self._learn_drop()
        self._confirm(t)

    def _learn_void_drop(self):
        """A voided spin's ball left the track untouched (BALL_RAN): its drop bounds the
        critical period too, if it came where the model expects a drop (within LEARN_LEFT_LAPS
        of it: a ball taken off the track by hand comes laps early)."""
        b = self.ball
        p = predict(b.lap_periods(), b.lap_ends(), self.drop_us, 0.0)
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
        f = fit(b.lap_periods())
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

    # ---- pockets --------------------------------------------------------------------------
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
        if self.phase not in _SPINNING or sight[0] <= self._track_end():
            return
        self.pockets.watch(i, got[1], got[2], got[3], self.rotor.dir, sight[0])
        if self.phase in (IN_RIM, NO_MORE) and t - b.last_pass() > b.last_period() // 2:
            b.leave_track()              # the ball is in a pocket: it left the track
            self._dropped(t)
            self._narrow_drop(sight[0])
            return
        if self.phase == DROPPED:
            self._narrow_drop(sight[0])
            self._confirm(t)

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
        self.emit({"ev": "result", "t": t, "spin": self.spin, "number": num,
                   "rest_t": run[0][0], "sightings": sightings, "laps": self.ball.laps_done()})
        self.last_number = num
        self.hist.append([self.spin, num, self.ball.laps_done(), self.rotor_dir, self.ball_dir])
        if len(self.hist) > HISTORY:
            self.hist.pop(0)
        self.phase = RESULT
        self._spin_over()
        if self.act == self.rotor.act:
            self.rotor.used = True      # this actuation has had its coup
        self._save(None)

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
        waited = t - self.drop_t
        unseen, limit = self._dropped_limits()
        if waited > unseen and not p.seen_after(self._track_end()):
            return self._unseen("%d us after the drop" % waited)
        if waited > limit:
            self._void("no_result", "no confirmed pocket %d us after the drop" % waited)

    def _dropped_limits(self):
        """(us after the drop with the ball unseen in a pocket, us with no confirmed pocket) at
        the rotor's speed now: past either the spin is void."""
        r = self.rotor
        turn = _US_X10_MIN // r.rpm_x10 if r.rpm_x10 > 0 else _SLOW_TURN_US
        # bounces, then a turn for the pocket to come round, and one more if it was missed
        unseen = _BOUNCE_US + 2 * turn + turn // 4
        p = self.pockets
        turns = (self.need + p.sensors() - 1) // p.sensors()
        # bounces, the turns the rule needs, and room for a sensor to miss the ball a few times
        limit = _REST_US + (turns + _SPARE_TURNS) * turn + self.s["confirm_span_us"]
        if limit > self.s["result_timeout_us"]:
            limit = self.s["result_timeout_us"]
        return unseen, limit

    # ---- void button, stuck sensors -------------------------------------------------------
    def _void_button(self, t, level):
        if not level:
            self.void_up = None
            if self.health.is_(self.void_i, STUCK):
                self.health.set(self.void_i, OK)
            return
        self.void_up = t
        if self.phase in _SPINNING:
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

    # ---- outcomes -------------------------------------------------------------------------
    def _sensor_fault(self, i, state, detail):
        """Signal i turned bad (its index in `names`)."""
        name = self.names[i]
        self._fault("sensor_stuck" if state == STUCK else "sensor_silent", detail, name)
        if self.phase in _SPINNING and i != self.void_i:
            self._void("sensor_fault", "%s %s: %s" % (name, state, detail))

    def _fault(self, code, detail, signal):
        self.emit({"ev": "fault", "t": self.t, "code": code, "detail": detail, "signal": signal})

    def _void(self, reason, detail):
        self.voided = self.spin
        self.void_reason = reason
        self.emit({"ev": "void", "t": self.t, "spin": self.spin, "reason": reason, "detail": detail})
        self.phase = VOID
        self._spin_over()
        self._save(None)

    def _spin_over(self):
        """A result or a void: the status at once, so the host has its fresh word that the spin
        is no longer called (and the table takes bets again) without waiting out a period."""
        if self.t < self.next_status:
            self.next_status = self.t

    def _save(self, in_spin):
        self.last_dir = self.rotor.act_dir
        self.prev_dir = self.rotor.prev_dir
        self.used = self.rotor.used
        rec = {"v": 1, "spin": self.spin, "dir": self.last_dir, "pdir": self.prev_dir,
               "used": self.used, "in_spin": in_spin,
               "last": self.last_number, "hist": self.hist, "drop_us": self.drop_us,
               "drop_iv": self.learner.record(), "epoch": self.count_epoch}
        if self.store is None:
            return
        try:
            self.store.save(rec)
        except Exception as e:
            self._fault("store_failed", "cannot save: %s" % (e,), None)

    def _status(self, t):
        r = self.rotor
        ph = self.phase
        if not self.table_open and ph not in _SPINNING:
            state = IDLE
        elif ph in (IDLE, RESULT, VOID) and self.health.bad():
            state = "fault"
        else:
            state = ph
        # its one time shifted here: `emit`'s look at every key costs the Pico ~0.3 ms a status
        self.out({"ev": "status", "t": t + self.epoch, "state": state, "spin": self.spin,
                   "rotor_rpm_x10": r.rpm_x10, "rotor_dir": r.dir,
                   "sensors": self.health.snapshot(), "last": self.last_number,
                   "table_open": self.table_open})


def _fmt1(x):
    return "%.1f" % x if x >= 0 else "?"


def s_ok(drop_us):
    """A plausible critical lap period (the bounds of the drop_lap_us setting)."""
    d = bounds("drop_lap_us")
    return d[1] <= drop_us <= d[2]


def new_epoch():
    """16 hex digits from the board's random source; from its clocks where there is none."""
    try:
        from os import urandom
        raw = urandom(8)
    except (ImportError, AttributeError, OSError, NotImplementedError):
        import time
        t = time.time_ns() if hasattr(time, "time_ns") else int(time.time() * 1000000)
        raw = bytes([(t >> (8 * i)) & 0xFF for i in range(8)])
    return "".join(["%02x" % b for b in raw])


def _int(v, default):
    return v if isinstance(v, int) and not isinstance(v, bool) else default
