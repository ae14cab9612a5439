"""The controller's state and its outcomes (spin/controller.py is the API on top of it).

What every part of the controller shares: the settings, the parts of the wheel (rotor, ball,
launch, pockets, health), the spin's state, and the few ways the controller speaks and remembers:
an event (`emit`), a fault, a void, the status, the flash record. The ball on the track
(spin/track.py) and in the pockets (spin/rest.py) build on it.

The flash record is written once a coup, at the launch (the spin in progress, with whatever
changed since the record before: the last result, the rotor's actuations, the drop learnt); a
void at the launch is that write. A result, or a void after the launch, is held in RAM until
the host has it (`durable`: the link's ACK, once its journal holds it): the next launch writes
it. Not acknowledged within `HOLD_US` (a result; the next checks write it) or `VOID_HOLD_US` (a
void; the controller wakes for it, `Controller._timed`), it is written. A power cut before
either is decided by the ball at the reboot (spin/rest.py, `restart_pending`): the same number
for a result; for a void the host's journal decides, which refuses a result of a spin it has
voided. A board with the Cammegh output writes
a void after the launch at once (`hold_voids` False): the table systems that read that output
know no journal, and would take the number the pockets name after a cut.
A record left newer in RAM than in flash when play stops (an acknowledged result, an actuation
with no launch, a drop learnt from a voided ball) is written after `IDLE_SAVE_US` with no launch
(docs/internals/spin-logic.md, "The flash record").
"""

from cylindre.spin.settings import build, bounds, confirm_sightings, confirm_sensors
from cylindre.spin.rotor import Rotor
from cylindre.spin.ball import Ball
from cylindre.spin.launch import Launch
from cylindre.spin.pockets import Pockets
from cylindre.spin.health import Health
from cylindre.spin.droplearn import DropLearner
from cylindre.spin.predict import FitCache
from cylindre.link.protocol import HISTORY
from cylindre.link.status import names as signal_names
from cylindre.spin.origin import shift_times

try:
    from micropython import const
except ImportError:  # CPython
    const = int

FW = "cylindre-fw 0.1"
IDLE_SAVE_US = const(300000000)  # a record newer in RAM than in flash, no launch this long: written
HOLD_US = const(1500000)     # a result the host has not acknowledged this long: written
VOID_HOLD_US = const(100000)  # a void after the launch not acknowledged this long: written then
                             # (a ball at rest after a cut must not name a voided spin the host
                             # never heard voided: the ACK usually comes within ms)

IDLE = "idle"
IN_RIM = "ball_in_rim"
NO_MORE = "no_more_bets"
DROPPED = "ball_dropped"
RESULT = "result"
VOID = "void"
SPINNING = (IN_RIM, NO_MORE, DROPPED)
CALLED = (NO_MORE, DROPPED)


def _zero():
    return 0


class Core:
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
        # rotor at boot.
        self.last_dir = 0
        self.prev_dir = 0
        self.used = False
        self.saved_act = 0          # the rotor's actuation the record in RAM last took
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
        # The croupier called rien ne va plus with no spin open (his button, the pit): betting is
        # closed until a spin ends (the next launch is called at once) or the table is opened.
        self.called = False
        # A ball may come to rest in a pocket without a spin until then: the end of a run on the
        # track, or a boot (spin/rest.py, `_idle_sighting`); None: none may.
        self.rest_ok_until = None
        self.rest_run = -1          # the pockets' run of the ball at rest the controller knows of
        self.launch_act = 0         # the rotor's actuation of the last launch (Rotor.act)
        self.unseen_act = 0         # the actuation told for no launch after it (`_check_launch_wait`)
        self.in_spin = None         # the spin the flash record says is in progress
        self.dirty = False          # the record in RAM is newer than the one in flash
        self.idle_save_t = None     # ... and is written then if no launch comes first
        self.held = False           # a result not yet in flash nor acknowledged by the host
        self.hold_voids = True      # False: a void after the launch written at once (a board that
                                    # prints the Cammegh format: board/shell.py)
        self.run_end_t = None       # the last run on the track ended then (`_check_launch_wait`)
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
        # Pico's heap keeps each name once). The croupier's call button comes after VOID
        # (`call_i`): an input, not a sensor with a health.
        self.names = signal_names(nb, npk)
        self.void_i = 1 + nb + npk
        self.call_i = self.void_i + 1
        self.health = Health(self.names)
        # the rise time of each ball-track sensor while it is active, else None
        self.ball_up = [None] * nb  # type: list[int | None]
        self.void_up = None
        self.launch = Launch(self.ball, s["launch_max_lap_us"])
        self.fitc = FitCache()      # the drop's fit, kept from lap to lap (spin/predict.py)

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
        self.vanished_t = None      # the ball vanished from the track far from its drop then
        self.vanish_cut = 0         # ... and had dropped if a pocket saw it by then
        self.restarted = None       # the reset cause, while the spin a restart cut is decided

    # ---- speaking -----------------------------------------------------------------------
    def emit(self, ev):
        """An event out, its times in time since boot (the origin added back)."""
        self.out(shift_times(ev, self.epoch, True))

    def _fault(self, code, detail, signal):
        self.emit({"ev": "fault", "t": self.t, "code": code, "detail": detail, "signal": signal})

    def _spin_over(self):
        """A result, a void or a sensor turning bad: the status at once, so the host has its
        fresh word (the table takes bets again, or stops) without waiting out a period."""
        if self.t < self.next_status:
            self.next_status = self.t

    # ---- remembering --------------------------------------------------------------------
    def _changed(self):
        """The record in RAM moved (a result, an actuation, the drop learnt): written with the
        next launch, or after IDLE_SAVE_US with none."""
        if not self.dirty:
            self.dirty = True
            self.idle_save_t = self.t + IDLE_SAVE_US

    def _hold(self, us=HOLD_US):
        """A result (or a void) in RAM only: written with the next launch once the host has it
        (`durable`), after `us` if the host has not acknowledged it by then."""
        self.dirty = True
        self.held = True
        self.idle_save_t = self.t + us

    def durable(self):
        """The link: the host has acknowledged every result and void emitted so far (durable in
        its journal). What is held waits for the next launch's write (or `IDLE_SAVE_US`)."""
        if self.held:
            self.held = False
            self.idle_save_t = self.t + IDLE_SAVE_US

    def _save(self, in_spin):
        self.last_dir = self.rotor.act_dir
        self.prev_dir = self.rotor.prev_dir
        self.used = self.rotor.used
        self.in_spin = in_spin
        self.dirty = False
        self.held = False
        self.idle_save_t = None
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
        if not self.table_open and ph not in SPINNING:
            state = IDLE
        elif ph in (IDLE, RESULT, VOID) and (self.health.nbad or self.vanished_t is not None):
            state = "fault"
        elif self.called and ph not in SPINNING:
            state = NO_MORE             # the croupier's call, no spin seen yet
        else:
            state = ph
        # its one time shifted here: `emit`'s look at every key costs the Pico ~0.3 ms a status
        self.out({"ev": "status", "t": t + self.epoch, "state": state, "spin": self.spin,
                   "rotor_rpm_x10": r.rpm_x10, "rotor_dir": r.dir,
                   "sensors": self.health.snapshot(), "last": self.last_number,
                   "table_open": self.table_open})


def history_entry(spin, number, laps, rotor_dir, ball_dir):
    return [spin, number, laps, rotor_dir, ball_dir]


def keep_history(hist, entry):
    hist.append(entry)
    if len(hist) > HISTORY:
        hist.pop(0)


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


def int_or(v, default):
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def fmt1(x):
    return "%.1f" % x if x >= 0 else "?"
