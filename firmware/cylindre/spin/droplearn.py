"""Learning the wheel's critical lap period (the lap period at which the ball leaves the track).

Each drop bounds it: the ball passed the track sensors for the last time at the end of its last
lap and never came round again, so it left the track within the lap after that pass. The model's
fit of the spin (predict.fit) gives the ball's period at the last pass (`lo`) and one lap later
(`hi`): the critical period lies between. Where in that lap the ball left is unknown and about
uniform, and near the drop the period rises by a fifth over one lap: the middle of one interval
is a poor estimate (a running mean of middles left the prediction's |error| p99 at 815 ms from
the 20th spin, against 127 ms with the true period; docs/internals/spin-logic.md). The intervals of many
spins overlap where the critical period is: the estimate is the middle of the stretch covered by
the most intervals (a spin the fit got wrong covers elsewhere and does not move it), taken in the
squared lap rate, which runs linearly with the angle where the period does not.

A second bound on the same drop comes from the pockets: the ball rests in a pocket when a pocket
sensor first sights it, and it needs at least DROP_TO_POCKET_US to get there from the track (the
fall across the bowl's lower part onto the rotor, the first landing). So it left the track before
that sighting less DROP_TO_POCKET_US, and where that comes before the next pass would have, the
upper end of the spin's interval is lowered (`narrow`). Only the upper end: the ball's time
between the drop and its first sighting is long and varies by seconds (bounces, waiting for the
pocket to come under a sensor), so it says nothing about the lower end.

The last WINDOW intervals are kept, in flash with the controller's record, so a restarted
controller starts learnt. Each interval is about a lap wide (55 % of the squared lap rate) and
the estimate sharpens with their number, so the window is long: 48 spins, about an hour of play.
The critical speed is the track's slope and the ball's (wear, humidity and cleaning move it over
hours); a sudden change (another ball) is followed in about half a window (docs/internals/spin-logic.md).
"""

WINDOW = 48          # spins kept (24 before issue 13 round 11; docs/internals/spin-logic.md)
DROP_TO_POCKET_US = 700000   # the ball's shortest time from leaving the track to its first
                             # sighting in a pocket: the simulator's least, 0.79 s over 5,400 spins
                             # of both boards, less a margin (0.5 s before; docs/internals/spin-logic.md)
SPREAD = 0.015       # each bound widened by this fraction of its squared lap rate (see estimate):
_WIDEN_HI = 132      # in periods, the upper bound raised by 1/132 ((1 - SPREAD) ** -0.5 = 1 + 1/132)
_WIDEN_LO = 135      # and the lower lowered by 1/135 ((1 + SPREAD) ** -0.5 = 1 - 1/135)


class DropLearner:
    def __init__(self, lo_us, hi_us):
        self.lo_us = lo_us           # plausible critical periods (the setting's bounds)
        self.hi_us = hi_us
        self.lows = []               # lower bounds, oldest first
        self.highs = []              # upper bounds, paired with lows

    def add(self, lo, hi):
        """One drop: the critical period was between lo and hi (us). Implausible ones are left."""
        if lo > hi or hi < self.lo_us or lo > self.hi_us:
            return False
        self.lows.append(lo if lo > self.lo_us else self.lo_us)
        self.highs.append(hi if hi < self.hi_us else self.hi_us)
        if len(self.lows) > WINDOW:
            self.lows.pop(0)
            self.highs.pop(0)
        return True

    def narrow(self, hi):
        """The newest drop's critical period was also below hi (us): its upper bound lowered to
        it when that is tighter and still above its lower bound (a sighting that contradicts
        the track is left, never trusted over it). True when it moved."""
        n = len(self.highs)
        if n == 0 or hi >= self.highs[-1] or hi <= self.lows[-1]:
            return False
        self.highs[-1] = hi
        return True

    def estimate(self, default):
        """The critical period (us) from the spins kept, or `default` with none: the middle of
        the stretch that the most intervals cover, in squared lap rate."""
        n = len(self.lows)
        if n == 0:
            return default
        # Sweep the interval ends from the longest period down (the squared lap rate up; where
        # one opens and one closes at the same point, the opening first), each widened by
        # SPREAD. In periods, small ints: no float or tuple per end on the Pico's heap.
        opens = [h + h // _WIDEN_HI for h in self.highs]
        shuts = [lo - lo // _WIDEN_LO for lo in self.lows]
        opens.sort(reverse=True)
        shuts.sort(reverse=True)
        best = -1
        cover = 0
        a = b = 0
        i = j = 0
        while i < n:
            if opens[i] >= shuts[j]:
                cover += 1
                if cover > best:
                    best = cover
                    a = opens[i]
                    b = opens[i + 1] if i + 1 < n and opens[i + 1] > shuts[j] else shuts[j]
                i += 1
            else:
                cover -= 1
                j += 1
        ua = 1e6 / a
        ub = 1e6 / b
        return int(1.0 / ((ua * ua + ub * ub) / 2) ** 0.5 * 1e6)

    def record(self):
        """What flash keeps: [lo, hi, lo, hi, ...] oldest first."""
        out = []
        for i in range(len(self.lows)):
            out.append(self.lows[i])
            out.append(self.highs[i])
        return out

    def restore(self, flat):
        """Back from `record()`; anything malformed is dropped (a damaged record must not stop
        the wheel: the controller then starts from the setting)."""
        self.lows = []
        self.highs = []
        if not isinstance(flat, list):
            return
        for i in range(0, len(flat) - 1, 2):
            lo = flat[i]
            hi = flat[i + 1]
            if isinstance(lo, int) and isinstance(hi, int):
                self.add(lo, hi)
