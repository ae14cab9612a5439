"""Controller time: microseconds since boot as an int that never wraps.

`time.ticks_us()` wraps every 2**30 us (about 17.9 minutes); the clock keeps the last raw value
and adds `ticks_diff` to its running total, so it must be read at least every few minutes (the
main loop reads it every few milliseconds). Raw stamps taken in interrupt handlers are turned
into controller time with `at(raw)`, valid for stamps within a few minutes of the last reading.
"""


class Clock:
    def __init__(self, ticks_us, ticks_diff):
        self._ticks = ticks_us
        self._diff = ticks_diff
        self._raw = ticks_us()
        self._now = 0

    def now(self):
        raw = self._ticks()
        self._now += self._diff(raw, self._raw)
        self._raw = raw
        return self._now

    def at(self, raw):
        """Controller time of a raw `ticks_us()` stamp taken shortly before or after `now()`."""
        return self._now + self._diff(raw, self._raw)
