"""The rotor (cylindre): absolute position from the index, speed and direction from the count.

The encoder count comes from the PIO counter (or the quadrature model in replays). Every rising
edge of the index Z fixes the absolute position and checks the count: between two crossings in
the same direction the count must have moved a whole number of turns (within `tolerance`).
"""

from cylindre.spin.origin import back

_SAMPLES = 6           # one count sample every 200 ms: a 1 s speed window
SAMPLE_US = 200000     # (the Pico's timer takes them: board/shell.py)
REST_RPM_X10 = 30      # below 3 rpm over the last 200 ms the rotor stopped (a push then is an
                       # actuation): a croupier's stop-and-push dips that low for a moment only
PUSH_MIN_X10 = 10      # the rotor sped up by 1 rpm and 1/32 of its speed without stopping: pushed
PUSH_FRAC = 32         # the same way (friction only slows it; two lost quadrature cycles in the
                       # 1 s window move the speed by 0.47 rpm on a 1024-count encoder)
_RISE_US = 2500000     # a croupier's push shows as a rise through the 1 s window for at most this


class Rotor:
    def __init__(self, cpr, tolerance):
        self.cpr = cpr
        self.tolerance = tolerance
        self.z_count = None        # count at the last rising edge of Z (None: position unknown)
        self.z_dir = 0             # direction of that crossing
        self.z_t = None
        self.z_active_count = None  # count at the rise while Z is active
        self.z_width = 0            # counts the index pulse lasts (0: not measured yet)
        self.sync_next = False      # the next index only fixes the position (no check)
        self.mismatches = 0
        self.last_error = 0
        self._st = [0] * _SAMPLES  # ring of (t, count) samples, preallocated
        self._sc = [0] * _SAMPLES
        self._n = 0                # samples taken
        self._i = 0                # next slot
        self.next_t = 0            # time of the next sample (0: take one now)
        self.rpm_x10 = 0
        self.dir = 0
        self.start_count = None    # first count seen: judges a silent index before any index
        # Actuations (Article 53: each actuation of the rotor opposite to the previous one): the
        # rotor started from rest, turning the other way, or sped up (pushed the same way: a
        # forbidden actuation). `act` counts them since boot, `act_dir` is the latest's way and
        # `prev_dir` the way of the one before it, whether a launch followed them or not (a
        # throw the sensors missed must not shift the rule); `used`: a coup was played to a
        # result under the latest (the controller sets it), so no other coup may be.
        self.act = 0
        self.act_dir = 0
        self.prev_dir = 0
        self.used = False
        # The speed since the latest actuation (counted at `act_t`): still rising through the
        # 1 s window (`_low` -1, `_peak` the highest) until it falls or _RISE_US pass, then the
        # lowest since: a rise over that is a push.
        self._peak = 0
        self._low = -1
        self.act_t = 0              # when the latest actuation was counted
        self.act_seen = False       # ... seen happening (a start, a reversal, a push), not found
                                    # turning at boot
        self._resting = False
        self._boot = True           # the first full speed window is still to come
        self._continues = False     # the motion found at boot is the remembered actuation

    def seed(self, last, prev, continues, used=False):
        """The actuations remembered in flash: the latest's way and the one before, and whether
        a coup was played under the latest. `continues`: a spin was cut by the restart, so a
        rotor found turning that way is still its actuation."""
        self.act_dir = last
        self.prev_dir = prev
        self.used = bool(used)
        self._continues = continues

    def sample(self, t, count):
        """Take a speed sample if 200 ms have passed since the last one (a tick's sample)."""
        if self._n and t < self.next_t:
            if self.start_count is None:
                self.start_count = count
            return
        self.take(t, count)

    def take(self, t, count):
        """One speed sample, 200 ms after the one before (the Pico's timer takes them on time:
        board/shell.py): update rpm, direction and the actuations."""
        if self.start_count is None:
            self.start_count = count
        self.next_t = t + SAMPLE_US
        self._st[self._i] = t
        self._sc[self._i] = count
        self._i = (self._i + 1) % _SAMPLES
        if self._n < _SAMPLES:
            self._n += 1
        if self._n < 2:
            return
        old = self._i % _SAMPLES if self._n == _SAMPLES else 0
        dt = t - self._st[old]
        dc = count - self._sc[old]
        if dt <= 0:
            return
        # In milliseconds so the product stays a small int on the Pico (no allocation).
        dt_ms = dt // 1000
        if dt_ms <= 0:
            return
        a = dc if dc >= 0 else -dc
        self.rpm_x10 = a * 600000 // (self.cpr * dt_ms)
        self.dir = 1 if dc > 0 else (-1 if dc < 0 else 0)
        d2 = dc
        if self._n >= 2:
            j = (self._i - 2) % _SAMPLES             # the sample 200 ms back
            d2 = count - self._sc[j]
            ms2 = (t - self._st[j]) // 1000
            if ms2 > 0 and (d2 if d2 >= 0 else -d2) * 600000 // (self.cpr * ms2) < REST_RPM_X10:
                self._resting = True
                return
        # An actuation is judged only while the last 200 ms turn the way the 1 s window does: a
        # rotor slowing to a stop, or stopped and pushed back, shows the old way in the 1 s
        # window for a second after, and that second is no actuation of its own.
        if self._n == _SAMPLES and (d2 > 0) == (dc > 0) and (d2 < 0) == (dc < 0):
            self._actuation(t)

    def _actuation(self, t):
        """Count an actuation: started from rest, turning the other way, or sped up. A rotor
        found turning at boot is a new actuation unless it continues the spin the restart cut
        (the controller cannot tell a push made while it was off: the safe reading)."""
        rpm = self.rpm_x10
        if rpm < REST_RPM_X10 or self.dir == 0:
            self._resting = True
            return
        boot = self._boot
        self._boot = False
        if boot and not self._resting and self._continues and self.dir == self.act_dir:
            self._peak = rpm
            self._low = -1
            self.act_t = t
            return
        if boot or self._resting or self.dir != self.act_dir:
            self._actuated(t, self._resting or not boot)
            return
        low = self._low
        if low < 0:
            # the push still shows as a rise through the 1 s window: one actuation until it falls
            if rpm < self._peak or t - self.act_t >= _RISE_US:
                self._low = rpm
            else:
                self._peak = rpm
        elif rpm < low:
            self._low = rpm
        elif rpm - low >= PUSH_MIN_X10 and rpm - low >= low // PUSH_FRAC:
            self._actuated(t, True)         # pushed the same way without a stop

    def _actuated(self, t, seen):
        self.act += 1
        self.act_seen = seen
        self.prev_dir = self.act_dir
        self.act_dir = self.dir
        self.used = False
        self._resting = False
        self._peak = self.rpm_x10
        self._low = -1
        self.act_t = t

    def rebase(self, d):
        """The time origin moved forward by d us (spin/origin.py): the samples' times with it."""
        st = self._st
        for i in range(_SAMPLES):
            st[i] = back(st[i], d)
        if self.z_t is not None:
            self.z_t = back(self.z_t, d)
        self.act_t = back(self.act_t, d)
        if self._n:
            self.next_t = back(self.next_t, d)

    def due(self):
        """Controller time of the next speed sample (the Pico's main loop wakes for it)."""
        return self.next_t

    def known(self):
        """True once enough samples exist to judge the speed (about 1 s after boot)."""
        return self._n == _SAMPLES

    def index(self, t, count, level):
        """One change of Z. Returns the count error (int) on a mismatch, else None.

        The mark spans `w` counts: crossing clockwise the pulse rises at its first count,
        counter-clockwise at its last, so after a reversal the rise moves by w - 1 counts.
        """
        if not level:
            if self.z_active_count is not None:
                w = count - self.z_active_count
                w = w if w >= 0 else -w
                if w <= self.cpr // 16:
                    self.z_width = w
                else:
                    self.sync_next = True   # a pulse that long is a fault, not the mark
            self.z_active_count = None
            return None
        self.z_active_count = count
        err = None
        d = self._dir_now(count)
        if self.sync_next:
            # after a stuck or silent index (or a mismatch) this crossing only sets the position
            self.sync_next = False
        elif self.z_count is not None and d != 0 and self.z_dir != 0:
            cpr = self.cpr
            e = (count - self.z_count + cpr // 2) % cpr - cpr // 2
            expect = 0
            if d != self.z_dir:
                expect = (self.z_width - 1) if d < 0 else (1 - self.z_width)
            if d == self.z_dir or self.z_width > 0:
                e -= expect
                if e > self.tolerance or e < -self.tolerance:
                    err = e
                    self.mismatches += 1
                    self.last_error = e
                    self.sync_next = True
        self.z_count = count
        self.z_dir = d
        self.z_t = t
        return err

    def _dir_now(self, count):
        """Direction at this instant: against the latest speed sample (at most 200 ms old)."""
        if self._n:
            c = self._sc[(self._i - 1) % _SAMPLES]
            if count > c:
                return 1
            if count < c:
                return -1
        return self.dir

    def since_index(self, count):
        """Count since the index, reduced to one turn; None before the first index."""
        if self.z_count is None:
            return None
        return (count - self.z_count) % self.cpr

    def index_silent(self, count):
        """True when the rotor turned more than a turn and a quarter since the last index."""
        ref = self.z_count if self.z_count is not None else self.start_count
        if ref is None:
            return False
        d = count - ref
        if d < 0:
            d = -d
        return d > self.cpr + self.cpr // 4 + self.tolerance

    def index_stuck(self, count):
        """True when Z stays active while the rotor turned a quarter turn."""
        if self.z_active_count is None:
            return False
        d = count - self.z_active_count
        return d > self.cpr // 4 or d < -(self.cpr // 4)
