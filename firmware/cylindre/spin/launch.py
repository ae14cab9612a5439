"""Launch detection (le lancer): is a run on the ball track a new ball, and when is it launched?

A run of passes is a candidate launch when it starts with the table open, outside a spin's
run, and after the ball a restart cut (`absorb`). It is launched once the group closing its first
lap holds two sensors (a lone pass may be spurious) and the direction is known (`ready`), or when
that group's window is over with every group lone, a sensor dead (`window_over`), or when the
ball leaves the track after a group of two (`off_track`: a misspin). Between spins, two
two-sensor groups a launch's lap apart and far quicker than the followed ball's pace are a new
ball (`passed`): the ball cannot speed up.
"""

from cylindre.spin.ball import MIN_LAP_US
from cylindre.spin.origin import back

try:
    from micropython import const
except ImportError:  # CPython
    const = int

_RELAUNCH_X10 = const(7)    # a lap under 7/10 of the followed ball's pace: a new ball
_GROUP_FRACTION = const(4)  # a group lasts at most a quarter of the pace
_LONE_LAPS = const(4)       # lone groups from every sensor: wait this many laps for a full one


class Launch:
    def __init__(self, ball, max_lap_us):
        self.ball = ball
        self.max_lap = max_lap_us       # launch_max_lap_us: the slowest first lap of a launch
        self.candidate = False
        self.pending = 0                # first lap period, waiting for the direction
        self.absorb_until = -1          # after a restart mid-spin: the old ball's run until then
        self.last_t = 0                 # the last ball-sensor pass, and its sensor
        self.last_i = -1
        self.pair = [0, -1, 0, -1]      # the last two-sensor group: [t, sensor, t, sensor]

    def set_max(self, max_lap_us):
        self.max_lap = max_lap_us
        self.ball.set_first_max(max_lap_us)

    def rebase(self, d):
        """The time origin moved forward by d us (spin/origin.py): the kept passes' times and the
        restart's horizon with it."""
        self.absorb_until = back(self.absorb_until, d)
        self.last_t = back(self.last_t, d)
        pr = self.pair
        pr[0] = back(pr[0], d)
        pr[2] = back(pr[2], d)

    def absorb(self, until):
        """A restart cut a spin: a run starting before `until` is that spin's ball, not a launch."""
        self.absorb_until = until

    def waiting(self):
        """Is the run on the track a candidate launch not yet launched?"""
        return self.candidate

    def cancel(self):
        self.candidate = False

    def launched(self):
        self.candidate = False
        self.pending = 0

    def passed(self, t, i, table_open, in_rim, spinning):
        """A ball-track pass, before the ball counts it. True when it started a run (nothing more
        to do with it); `in_rim`: the spin's ball runs (rien ne va plus or not yet);
        `spinning`: a spin is in progress."""
        prev = self._pair(t, i)
        b = self.ball
        if not b.running():
            b.start(t, i)
            self.candidate = table_open and not in_rim and t > self.absorb_until
            self.pending = 0
            return True
        if prev is not None and not self.candidate and not spinning \
                and self._relaunched(self.pair[0] - prev[0]):
            # The ball still followed (a voided spin's, taken back by the croupier or not yet
            # dropped) is not this one: a new ball was launched, its first group `prev`.
            b.start(prev[0], prev[1])
            b.passed(prev[2], prev[3])
            b.passed(self.pair[0], self.pair[1])
            self.candidate = table_open and prev[0] > self.absorb_until
            self.pending = 0
        return False

    def ready(self):
        """After the ball counted a pass of a candidate: its first lap period when it is launched
        now, else 0."""
        b = self.ball
        # the first lap so far (0: none, or the run started again after a spurious pass)
        self.pending = b.first_lap()
        if self._slow_first():
            return 0
        # Launch once the group closing the first lap holds two sensors (a lone pass may be
        # spurious) and the direction is known; else when its window is over (window_over).
        if self.pending and b.direction() != 0 and b.group_size_now() >= 2:
            return self.pending
        return 0

    def window_over(self, t):
        """Time passes: the first lap's period once the group of a second lap is over with
        one sensor: a launch. When no group ever held two sensors (one is dead), without
        direction (a misspin); lone groups from every sensor in turn are misses, not a dead
        sensor: the next group will hold two, so wait for it, up to _LONE_LAPS laps. When the
        first group held two (the direction) and the groups closing the first two laps one
        each, a sensor died in the first lap (issue 33: the launch waited for a group of two
        to the drop): launched, and the silent sensor voids the spin. Else 0."""
        b = self.ball
        if not (self.candidate and self.pending and b.laps_done() >= 2
                and t - b.group_opened() > b.pace() // _GROUP_FRACTION):
            return 0
        if b.strong_groups() == 0:
            ok = b.laps_done() >= _LONE_LAPS or not b.all_seen()
        else:
            ok = b.direction() != 0 and b.group_size_now() < 2
        return self.pending if ok and not self._slow_first() else 0

    def off_track(self):
        """The ball stopped passing the sensors. A candidate seen by two sensors at once (not
        noise) that ran a lap or two is still a launch, and a misspin (few laps or too slow):
        its first lap period (0 when it never came round again). So is a candidate one sensor
        alone saw twice a lap apart in pulses a ball's width (a crawling ball the other sensor
        missed; spurious pulses are far narrower): a weak throw the table must hear of. Else -1."""
        b = self.ball
        was = self.candidate and (b.strong_groups() >= 1
                                  or (b.laps_done() >= 1 and b.wide_passes() >= 2))
        self.candidate = False
        return b.pending_first() if was else -1

    def _pair(self, t, i):
        """Two ball sensors passed within a launch's pace of each other (a group no lone
        spurious pulse makes): keep it in `pair`; return the pair before it, else None."""
        lt = self.last_t
        li = self.last_i
        self.last_t = t
        self.last_i = i
        if li < 0 or li == i or not self.ball.together(li, i, t - lt):
            return None
        prev = self.pair
        self.pair = [lt, li, t, i]
        return prev if prev[1] >= 0 else None

    def _relaunched(self, lap):
        """Between spins, a lap from one two-sensor group to the next far shorter than the pace
        of the ball still followed, and quick enough for a launch: the ball cannot speed up,
        so it is a new ball."""
        pace = self.ball.pace()
        if not pace or lap < MIN_LAP_US or lap > self.max_lap:
            return False
        return lap * 10 < pace * _RELAUNCH_X10

    def _slow_first(self):
        """A first lap over the launch limit waits for the second: it may be two laps with every
        sensor missing the ball once (then it is split), or a slow launch indeed."""
        b = self.ball
        if self.pending <= self.max_lap:
            return False
        if b.laps_done() < 2:
            return True
        b.split_first()
        p = b.first_lap()           # (laps_done() >= 2: the laps kept, the first of them)
        if p:
            self.pending = p
        return False
