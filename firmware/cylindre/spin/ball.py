"""The ball (bille) on its track: launch, direction and lap periods from the ball-track sensors.

The ball-track sensors sit a few degrees apart, so each lap the ball passes them in a tight group.
A lap ends at each new group; its time is the reference sensor's pass (the sensor that saw the ball
first in this run), or, when that sensor missed the ball, another sensor's pass moved back by the
angle between them. Inside a group the order of the sensors gives the direction; a group timed
at another sensor before the direction was known (lone passes of a run whose first groups one
sensor or the other missed) is moved back by that angle once the direction is known. A pass that
comes far too soon for a new lap is noise (the ball cannot speed up), and contact chatter on one
sensor inside a group counts once.
"""

MAX_LAPS = 64          # lap periods kept per spin (a real spin has 13-21): bounded memory
MIN_LAP_US = 300000    # no ball laps a track faster than this (launches run 0.43-0.7 s)
FIRST_GROUP_US = 100000  # the first group, before any lap is known
WIDE_GAP = 8           # a crawling ball's pass: gap between two sensors at most 8 pulse widths
MIN_CRAWL_US = 4000    # and pulses at least this wide (spurious ones: 0.5-3 ms)
UNMOVED = 8            # groups timed at another sensor before the direction, kept to move later


class Ball:
    def __init__(self, sensors_deg, first_max_us=1000000):
        self.deg = list(sensors_deg)
        self.n = len(self.deg)
        self.first_max = first_max_us   # the slowest first lap taken as a launch (launch_max_lap_us)
        # The newest UNMOVED groups timed at another sensor than the reference before the
        # direction was known: their time and sensor (made once: nothing allocated per pass).
        self.unmoved_t = [0] * UNMOVED
        self.unmoved_s = bytearray(UNMOVED)
        self.reset()

    def reset(self):
        """Forget the run: the ball is off the track."""
        self.on_track = False
        self.ref = -1
        self.first_t = 0
        self.group_t = 0            # reference time of the current group (lap start)
        self.last_ref_t = 0         # same, the name the controller uses
        self.last_pass_t = 0
        self.laps = []              # lap periods (us), at most MAX_LAPS
        self.lap_end = []           # time each of those laps ended
        self.nlaps = 0              # complete laps, even past MAX_LAPS
        self.passes = 0
        self.seen = [0] * self.n    # passes per sensor in this run
        self.last_seen = [0] * self.n
        self.in_group = [0] * self.n  # which sensors the current group holds
        self.group_size = 0
        self.first_in_group = -1
        self.first_pass_t = 0       # time of the group's first pass
        self.prev_group_t = 0       # the group before the current one
        self.first_size = 0         # sensors in the run's first group
        self.groups = 0             # groups in the run, counting those a restart forgot
        self.strong = 0             # groups that held two sensors or more
        self.longest_first = 0      # the first lap, or the longest one a restart forgot
        self.split_last = False     # the last lap came from splitting a double one
        self.alt_t = 0              # a pass half a lap after a group: missed lap or noise?
        self.rb_t = 0               # a pass that may replace the current lone group (its time,
        self.rb_sensor = 0          # sensor and pace), once a second sensor sees it
        self.rb_pace = 0
        self.alt_ref = 0
        self.alt_sensor = 0
        self.alt_size = 0           # sensors that saw the half-way pass (a ball passes them all)
        self.votes = 0              # > 0 clockwise, < 0 counter-clockwise
        self.missed = [0] * self.n  # consecutive groups without this sensor
        self.fall_t = [0] * self.n  # each sensor's last falling edge (pulse widths)
        self.wide = 0               # passes with a ball's pulse width (MIN_CRAWL_US or more)
        self.wide_rise = [-1] * self.n  # the rise of each sensor's last pass counted wide
        self.unmoved = 0            # groups written in unmoved_t / unmoved_s (a ring past UNMOVED)

    def start(self, t, sensor):
        self.reset()
        self.on_track = True
        self.ref = sensor
        self.first_t = t
        self._open_group(t, t, sensor)

    def _cw_deg(self, i, j):
        return (self.deg[j] - self.deg[i]) % 360.0

    def _open_group(self, t, t_ref, sensor):
        self.groups += 1
        for s in range(self.n):
            if self.passes and not self.in_group[s]:
                self.missed[s] += 1
            self.in_group[s] = 0
        self.group_size = 0
        self.prev_group_t = self.group_t
        self._base(t, t_ref, sensor)
        self._mark(t, sensor)

    def _base(self, t, t_ref, sensor):
        if sensor != self.ref and t_ref == t and self.strong == 0:
            # timed at this sensor before any group of two (the direction unknown): moved once
            # one gives it (_move_unmoved). Not after: a first group's vote undone by the next
            # group's (a stray pulse) is no direction to move by.
            k = self.unmoved % UNMOVED
            self.unmoved_t[k] = t
            self.unmoved_s[k] = sensor
            self.unmoved += 1
        self.group_t = t_ref
        self.last_ref_t = t_ref
        self.first_in_group = sensor
        self.first_pass_t = t

    def _mark(self, t, sensor):
        self.passes += 1
        self.group_size += 1
        if self.group_size == 2:
            self.strong += 1
        self.in_group[sensor] = 1
        self.missed[sensor] = 0
        self.seen[sensor] += 1
        self.last_seen[sensor] = t
        self.last_pass_t = t

    # ---- what the controller and the launch ask ------------------------------------------
    def running(self):
        """Is a run on the track (the ball passing the sensors)?"""
        return self.on_track

    def leave_track(self):
        """The ball is off the track (in a pocket, or gone): the run ends."""
        self.on_track = False

    def set_first_max(self, first_max_us):
        self.first_max = first_max_us

    def laps_done(self):
        """Complete laps of the run, even past MAX_LAPS."""
        return self.nlaps

    def first_lap(self):
        """The first lap's period while the laps are whole (0: none yet)."""
        return self.laps[0] if self.nlaps and self.laps else 0

    def group_size_now(self):
        """Sensors the current group holds."""
        return self.group_size

    def group_opened(self):
        """Time of the current group's first pass."""
        return self.first_pass_t

    def strong_groups(self):
        """Groups of the run that held two sensors or more."""
        return self.strong

    def last_pass(self):
        """Time of the run's last pass."""
        return self.last_pass_t

    def lap_start(self):
        """Reference time of the current group: the start of the lap under way."""
        return self.last_ref_t

    def ref_sensor(self):
        """The run's reference sensor (-1: no run)."""
        return self.ref

    def lap_periods(self):
        """The lap periods (us) kept, oldest first: read, never changed, by the caller."""
        return self.laps

    def lap_ends(self):
        """When each of those laps ended."""
        return self.lap_end

    def ref_deg(self):
        """Angle of the reference sensor (the run's first; sensor 0 before any run)."""
        return self.deg[self.ref if self.ref >= 0 else 0]

    def released(self):
        """Time of the run's first pass (the ball's release, near enough)."""
        return self.first_t

    def together(self, a, b, gap):
        """Can passes of sensors a then b, `gap` us apart, be one group at a launch's pace?"""
        return self._close(a, b, gap, self.first_max)

    def pace(self):
        """The latest lap period (0 before a lap)."""
        return self.laps[-1] if self.laps else 0

    def last_period(self):
        return self.laps[-1] if self.laps else 0

    def _ref_time(self, t, sensor, period):
        """When the ball passed the reference sensor, from a pass at `sensor` at t."""
        if sensor == self.ref or period <= 0:
            return t
        return t + int(period * self._deg_to_ref(sensor) / 360.0)

    def _deg_to_ref(self, sensor):
        """The angle the ball still runs from `sensor` to the reference, in (-180, 180], by the
        direction (0 while it is unknown)."""
        d = self.direction()
        if d == 0:
            return 0.0
        a = self._cw_deg(sensor, self.ref) if d > 0 else self._cw_deg(self.ref, sensor)
        return a - 360.0 if a > 180.0 else a

    def _move_unmoved(self):
        """The direction is now known: move the groups timed at another sensor before it (lone
        passes of a run one sensor or the other missed) to the reference, as a group's passes
        are, each by the pace before it (issue 13: ~10 ms on those laps, the fit's first points).
        The laps they end or start change with them; a lap split in two keeps its middle."""
        k = self.unmoved
        self.unmoved = 0
        if k > UNMOVED:
            k = UNMOVED
        laps = self.laps
        ends = self.lap_end
        if not k or len(laps) != self.nlaps:
            return
        g = self.group_t
        pg = self.prev_group_t
        shift = 0                   # how far the end of the lap before was moved
        for i in range(len(laps)):
            e = ends[i]
            c = 0
            for j in range(k):
                if self.unmoved_t[j] == e:
                    a = self._deg_to_ref(self.unmoved_s[j])
                    # by the lap before; the first lap at its own pace (360 - a degrees in laps[0])
                    c = int(laps[i - 1] * a / 360.0) if i else int(laps[0] * a / (360.0 - a))
                    break
            laps[i] += c - shift
            if c:
                ends[i] = e + c
                if e == g:
                    self.group_t = e + c
                    self.last_ref_t = e + c
                if e == pg:
                    self.prev_group_t = e + c
            shift = c

    def passed(self, t, sensor):
        """A pass (rising edge) during the run. Returns the completed lap period (us) or 0."""
        if self.rb_t:
            rb = self.rb_t
            self.rb_t = 0
            if sensor != self.rb_sensor and self._close(self.rb_sensor, sensor, t - rb, self.rb_pace):
                # a second sensor confirms the pass that came too soon: the lone pass before
                # it was the stray one; the group starts there and this pass joins it
                self._rebase(rb, self.rb_sensor, self.rb_pace)
        pace = self.pace()
        window = pace // 4 if pace else FIRST_GROUP_US
        since = t - self.group_t
        if since < window:
            # Same group: the order of two sensors gives the direction; chatter counts once.
            if self.in_group[sensor]:
                return 0
            first = self.first_in_group
            gap = t - self.first_pass_t
            if not pace and self.nlaps == 0 and self.group_size == 1 and first != sensor \
                    and not self._close(first, sensor, gap, self.first_max) \
                    and not self._crawling(first, t, gap):
                # The run's first pass, and a second too late for a ball at a launch's pace
                # to have run between these sensors: two spurious pulses must not make a
                # two-sensor group (that is a launch). The run starts at this pass instead.
                self.start(t, sensor)
                return 0
            if pace and self.group_size == 1 and first != sensor and not self._close(first, sensor, gap, pace) \
                    and self._plausible(t - self.prev_group_t, self.laps[-2] if len(self.laps) >= 2 else 0):
                # Too far from the group's only pass for sensors a few degrees apart: that pass
                # was spurious. The group (and the lap it closed) start at this pass instead.
                return self._rebase(t, sensor, pace)
            if first >= 0 and first != sensor:
                if self._cw_deg(first, sensor) < 180.0:
                    self.votes += 1
                else:
                    self.votes -= 1
                if self.unmoved and self.votes != 0:
                    self._move_unmoved()
            self._mark(t, sensor)
            if self.nlaps >= 1 and self.group_size == 2 and self.strong == 1 and not self._smooth():
                # The run began with lone passes and the ball's first full group follows: they
                # were spurious (stray pulses between spins), however many. The run starts
                # again here. (Unless they ran laps a ball runs: two or more, from a launch's
                # pace, each a little longer than the one before: a ball that one sensor or the
                # other missed at each pass, issue 13.)
                self._restart()
            return 0
        if self.alt_t and sensor != self.alt_sensor and self.alt_size < 2 \
                and self._close(self.alt_sensor, sensor, t - self.alt_t, pace):
            self.alt_size += 1           # the half-way pass seen by a second sensor: a ball
            return 0
        t_ref = self._ref_time(t, sensor, pace if pace else since)
        if self.alt_t:
            a = self.alt_ref
            h1 = a - self.group_t
            h2 = t_ref - a
            self.alt_t = 0
            # A ball that every sensor missed once still passes them all half a lap later: while
            # the groups hold two sensors, a lone half-way pass is a stray pulse, and splitting
            # on it would halve every lap after it (rien ne va plus 6-13 laps early: issue 13).
            whole = self.alt_size >= 2 or self.strong < 2 or self.n < 2
            if whole and h1 * 95 <= h2 * 100 <= h1 * 120 and h1 >= MIN_LAP_US and len(self.laps) == self.nlaps:
                # Confirmed: the last "lap" was two. Split it; the half-way pass opens a group.
                p = self.laps[-1]
                half = p // 2
                self.laps[-1] = half
                self.lap_end[-1] = self.lap_end[-1] - (p - half)
                self._add_lap(p - half, self.group_t)
                self._open_group(a, a, self.alt_sensor)
                self._add_lap(h1, a)
                pace = h1
        period = t_ref - self.group_t
        # The ball cannot speed up: a lap shorter than the last one (beyond timing jitter) is a
        # spurious pulse, not the ball; the ball's own pass follows and is counted.
        if period < MIN_LAP_US or (pace and period * 100 < pace * 95):
            if self.strong == 0 and pace * 42 <= period * 100 <= pace * 60 and self.laps \
                    and len(self.laps) == self.nlaps and period >= MIN_LAP_US:
                # Every group lone (a sensor is dead) and this lap half the last: the last was
                # two, the live sensor having missed the ball once. Split it.
                p = self.laps[-1]
                half = p // 2
                self.laps[-1] = half
                self.lap_end[-1] = self.lap_end[-1] - (p - half)
                self._add_lap(p - half, self.group_t)
                self._open_group(t, t_ref, sensor)
                self._add_lap(period, t_ref)
                return period
            if self.nlaps == 1 and self.group_size >= 2 and pace * 42 <= period * 100 <= pace * 60 \
                    and len(self.laps) == 1:
                # Half the first lap: it may have been two laps, every sensor having missed the
                # ball once (later laps are split when they end, against the lap before); or
                # this is a spurious pulse. The next pass tells (see below).
                self.alt_t = t
                self.alt_ref = t_ref
                self.alt_sensor = sensor
                self.alt_size = 1
                return 0
            if self.group_size == 1 and self.n >= 2 and self.nlaps >= 1:
                # Unless the current group, a lone pass, was the spurious one. Which of two lone
                # passes is the ball? While the groups hold two sensors, the one a second
                # sensor confirms (a stray half a lap after a lone pass is no lap's end).
                p2 = t_ref - self.prev_group_t
                prev = self.laps[-2] if len(self.laps) >= 2 else 0
                if self._plausible(p2, prev):
                    if self.strong == 0:          # every group lone: a sensor is dead
                        return self._rebase(t, sensor, prev or p2)
                    self.rb_t = t
                    self.rb_sensor = sensor
                    self.rb_pace = prev or p2
            return 0
        if self.nlaps == 0:
            self.first_size = self.group_size
            if period > self.longest_first:
                self.longest_first = period
        elif self.nlaps == 1 and self.group_size == 1 and self.n >= 2 and self.laps \
                and (period * 10 > self.laps[0] * 14 or period * 10 < self.laps[0] * 7) \
                and not (self.strong == 0 and self.laps[0] * 17 <= period * 10 <= self.laps[0] * 24):
            # (With every group lone, a sensor is dead and a lap twice as long is a missed pass.)
            # The group that closed the first lap was a lone pass, and the lap after it does
            # not look like the first at all: that pass was spurious. The first lap ends here.
            first = t_ref - self.prev_group_t
            self.laps[0] = first
            self.lap_end[0] = t_ref
            self.groups -= 1
            g0 = self.prev_group_t
            self._open_group(t, t_ref, sensor)
            self.prev_group_t = g0
            if first > self.longest_first:
                self.longest_first = first
            return first
        self._open_group(t, t_ref, sensor)
        doubled = pace and pace * 17 <= period * 10 <= pace * 24 and period >= 2 * MIN_LAP_US
        if doubled and self.split_last:
            # A lap twice the pace right after one split for being twice the pace: the pace
            # was wrong by half (a stray pulse split the laps before, issue 13), not two misses
            # in a row. The laps before were halves: pair them back.
            self._pair_back(period)
        elif doubled:
            # Every sensor missed the ball once: two laps went by. (Never twice in a row: a
            # pace gone wrong by half would split every lap after it.)
            half = period // 2
            self._add_lap(half, t_ref - (period - half))
            period -= half
            self._add_lap(period, t_ref)
            self.split_last = True
            return period
        self.split_last = False
        self._add_lap(period, t_ref)
        return period

    def _add_lap(self, period, end):
        self.nlaps += 1
        if len(self.laps) < MAX_LAPS:
            self.laps.append(period)
            self.lap_end.append(end)

    def _pair_back(self, period):
        """Merge the latest laps two by two, from the last back, while each sum reads as the lap
        before the one after it (a ball's lap only grows, by at most a few % a lap)."""
        laps = self.laps
        if len(laps) != self.nlaps:
            return
        nxt = period
        k = len(laps)
        while k >= 2:
            m = laps[k - 2] + laps[k - 1]
            if m * 100 > nxt * 102 or m * 10 < nxt * 8:
                break
            laps[k - 2] = m
            self.lap_end[k - 2] = self.lap_end[k - 1]
            laps.pop(k - 1)
            self.lap_end.pop(k - 1)
            self.nlaps -= 1
            nxt = m
            k -= 2

    def split_first(self):
        """The first lap was two (every sensor missed the ball once): split it."""
        if len(self.laps) < 2 or self.laps[0] * 10 < self.laps[1] * 17 or self.laps[0] < 2 * MIN_LAP_US:
            return False
        p = self.laps[0]
        half = p // 2
        self.laps.insert(0, half)
        self.laps[1] = p - half
        self.lap_end.insert(0, self.lap_end[0] - (p - half))
        self.nlaps += 1
        return True

    def _restart(self):
        """Forget the laps: the current group is the run's first."""
        self.laps = []
        self.lap_end = []
        self.nlaps = 0
        self.votes = 0
        self.unmoved = 0
        first = self.first_in_group
        for s in range(self.n):
            if self.in_group[s] and s != first:
                self.votes += 1 if self._cw_deg(first, s) < 180.0 else -1
        self.ref = first
        self.group_t = self.first_pass_t
        self.last_ref_t = self.group_t
        self.first_t = self.group_t

    def _close(self, a, b, gap, pace):
        """Can passes of sensors a then b, `gap` us apart, be the ball at this pace?"""
        d = self._cw_deg(a, b)
        if d > 180.0:
            d = 360.0 - d
        expect = pace * d / 360.0
        return gap <= expect + pace // 50 + 2000

    def fell(self, t, sensor):
        """A ball-track pulse ended (its width tells a crawling ball from a spurious pulse)."""
        self.fall_t[sensor] = t
        rise = self.last_seen[sensor]
        if self.on_track and self.seen[sensor] and t - rise >= MIN_CRAWL_US \
                and rise != self.wide_rise[sensor]:
            self.wide += 1                   # a chattering pass counts once (its first rise)
            self.wide_rise[sensor] = rise

    def all_seen(self):
        """Has every ball-track sensor seen the ball in this run (none of them is dead)?"""
        for s in range(self.n):
            if not self.seen[s]:
                return False
        return self.n >= 2

    def last_wide(self):
        """Was the current group's first pass a pulse as wide as a ball's?"""
        f = self.first_in_group
        return f >= 0 and self.wide_rise[f] == self.last_seen[f]

    def wide_passes(self):
        """Passes of the run whose pulse was as wide as a ball's (spurious ones: 0.5-3 ms)."""
        return self.wide

    def _crawling(self, first, t, gap):
        """Is a pass of `first` then one `gap` us later too slow for a launch but a ball all
        the same? A ball crawling past sensors a few degrees apart gives pulses as wide as
        about half their gap (the sensor's arc over their spacing); spurious pulses last 0.5-3
        ms. So a first pulse at least 1/WIDE_GAP of the gap is a very weak throw's one pass
        (a void few_laps follows), never two spurious pulses (issue 13)."""
        f = self.fall_t[first]
        w = (f if f > self.first_pass_t else t) - self.first_pass_t
        return w >= MIN_CRAWL_US and gap <= w * WIDE_GAP + 2000

    def _smooth(self):
        """Are the laps so far (two or more, all kept) a ball's: the first at a launch's pace,
        each of the others plausible after the one before?"""
        laps = self.laps
        if self.nlaps < 2 or len(laps) != self.nlaps or laps[0] > self.first_max:
            return False
        for i in range(1, len(laps)):
            if not self._plausible(laps[i], laps[i - 1]):
                return False
        return True

    def _plausible(self, period, prev):
        """Can `period` follow a lap of `prev` (0: unknown)? A little longer, never shorter."""
        if period < MIN_LAP_US:
            return False
        return not prev or prev * 95 <= period * 100 <= prev * 130

    def _rebase(self, t, sensor, pace):
        """Replace the current group's lone pass by this one; the last lap ends here. Returns the
        corrected lap period."""
        self.in_group[self.first_in_group] = 0
        self.group_size = 0
        t_ref = self._ref_time(t, sensor, pace)
        self._base(t, t_ref, sensor)
        self._mark(t, sensor)
        self.passes -= 1
        period = t_ref - self.prev_group_t
        if self.laps and len(self.laps) == self.nlaps:
            self.laps[-1] = period
            self.lap_end[-1] = t_ref
        return period

    def pending_first(self):
        """The first lap period to report for a short run."""
        return self.laps[0] if self.laps else self.longest_first

    def direction(self):
        """1 clockwise, -1 counter-clockwise, 0 not known yet."""
        if self.votes > 0:
            return 1
        if self.votes < 0:
            return -1
        return 0

    def silent_sensor(self, t):
        """Index of a ball-track sensor absent from the last 3 groups while others saw the ball, or -1."""
        if not self.on_track or self.n < 2:
            return -1
        for s in range(self.n):
            if self.missed[s] >= 3:
                return s
        return -1
