"""Controller time: microseconds since the controller's time origin, a small int all day.

`time.ticks_us()` wraps every 2**30 us (about 17.9 minutes); the clock keeps the last raw value
and adds `ticks_diff` to its running total, so it must be read at least every few minutes (the
main loop reads it every few milliseconds). Raw stamps taken in interrupt handlers are turned
into controller time with `at(raw)`, valid for stamps within a few minutes of the last reading.

The total counts from the time origin, which the controller moves forward while it is idle
(`Controller.rebase`, spin/origin.py): the shell tells the clock (`rebase`), so the time stays
under 2**30, a small int on MicroPython, where microseconds since boot would be a long int (a
heap object) at every reading after the 18th minute. The link's clock, `ms()`, counts
milliseconds since boot and never goes back: a small int for 2**30 ms, 12.4 days.
"""


class Clock:
    def __init__(self, ticks_us, ticks_diff):
        self._ticks = ticks_us
        self._diff = ticks_diff
        self._raw = ticks_us()
        self._now = 0               # us since the time origin
        self._ms_raw = self._raw    # the link's clock: its own last raw value,
        self._ms = 0                # ms since boot
        self._us = 0                # and the us past it

    def now(self):
        raw = self._ticks()
        self._now += self._diff(raw, self._raw)
        self._raw = raw
        return self._now

    def at(self, raw):
        """Controller time of a raw `ticks_us()` stamp taken shortly before or after `now()`."""
        return self._now + self._diff(raw, self._raw)

    def rebase(self, d):
        """The controller moved its time origin forward by d us: read d less from now on."""
        self._now -= d

    def ms(self):
        """Milliseconds since boot, read now (the link's clock: resends, pacing, stamps). It
        keeps its own raw value, so `now()`, read more often, carries no milliseconds."""
        raw = self._ticks()
        us = self._us + self._diff(raw, self._ms_raw)
        self._ms_raw = raw
        if us >= 1000:
            q = us // 1000
            self._ms += q
            us -= q * 1000
        self._us = us
        return self._ms
