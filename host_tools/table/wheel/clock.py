"""The wheel's clock seen from the host (horloge du cylindre): a lower bound of the offset.

The offset is host ms − wheel ms (both monotonic: the host's `time.monotonic`, the wheel's link
clock, which on the Pico is the controller's clock). Every ACK the host sends carries its clock
`h`; the wheel notes its own clock `r` when the ACK arrives and echoes the pair in its STATUS
frames. The wheel took the ACK after the host sent it, so at wheel instant `r` the host's clock
read at least `h`: offset ≥ h − r (− 1 ms for the two clocks' truncation to whole ms). A relay
that delays, drops or replays frames can only make that bound lower (an older `h`), never higher:
it cannot forge an ACK. Between echoes the two clocks may drift apart; the bound is lowered by
`DRIFT` per ms elapsed (1,000 ppm, ten times a crystal's and twice NTP's largest slew).

Mapping a wheel instant `w` onto host time with the lower bound gives the earliest host instant
it can have been (w + lower), and a host instant `h` onto the wheel's the latest (h − lower): both
count the uncertainty against the player. Pure: no I/O, no clock of its own.
"""

DRIFT = 1e-3


class WheelClock:
    def __init__(self):
        self.boot = None
        self._lo = None         # (lower bound of the offset, host ms when it was measured)

    def reset(self, boot):
        """A new boot of the wheel restarts its clock: nothing known until its next echo."""
        self.boot = boot
        self._lo = None

    def echo(self, boot, echo):
        """Take the `echo` of a STATUS of wheel boot `boot`: [host ms of an ACK, wheel ms it came]."""
        if boot != self.boot:
            self.reset(boot)
        if not (isinstance(echo, list) and len(echo) == 2 and all(_int(x) for x in echo)):
            return
        h, r = echo
        lo = h - r - 1
        if self._lo is None or lo > self.lower(h):
            self._lo = (lo, h)

    def lower(self, now_ms):
        """The offset's lower bound at host instant `now_ms`, or None before the first echo."""
        if self._lo is None:
            return None
        lo, at = self._lo
        return lo - DRIFT * abs(now_ms - at)

    def latest_wheel_ms(self, host_ms):
        """The latest wheel instant host instant `host_ms` can be (None: not synchronised)."""
        lo = self.lower(host_ms)
        return None if lo is None else host_ms - lo


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)
