"""Compatibility output in the Cammegh reader format, for existing marquees and table systems.

9600 baud 8N1, plain ASCII (the board's second UART, or the main port when a board selects it):

- the winning number, bare, two characters then CR LF, as soon as it is confirmed: `" 5\\r\\n"`;
- every 500 ms a status line
  `*X;<state>;<spin 3 digits>;<last number 2 digits>;<flags hex 2 digits>;<rpm x10 3 digits>;<dir>\\r\\n`
  with states 1 start, 2 place bets, 3 ball in rim, 4 no more bets, 5 winning number,
  6 table closed; flags 1 rotor speed out of range, 2 ball and rotor same direction (void),
  4 sensor fault, 8 void game; direction 0 clockwise, 1 counter-clockwise.

Mapping from the controller's events (docs/events.md): table closed -> 6; idle -> 2; ball_in_rim
-> 3; no_more_bets, ball_dropped -> 4; a result -> 5, held at least `hold_ms` and until the next
launch; void -> 2 with flag 8 (and 1 or 2 by reason). State 1 is shown from boot until the table
first opens. Flags clear at the next launch. Before any result the last number reads `00` (the
format has no "none"); the spin number is shown modulo 1000.
"""

_STATES = {"idle": 2, "ball_in_rim": 3, "no_more_bets": 4, "ball_dropped": 4, "result": 5,
           "void": 2}
_SENSOR_FAULTS = ("sensor_stuck", "sensor_silent", "encoder_mismatch", "sensor_fault")
PERIOD_MS = 500


def number_line(number):
    """The bare winning-number line, e.g. b' 5\\r\\n', b'17\\r\\n'."""
    if not isinstance(number, int) or number < 0 or number > 36:
        raise ValueError("winning number must be 0..36")
    return ("%2d\r\n" % number).encode()


def status_line(state, spin, last, flags, rpm_x10, direction):
    """One `*X;...` line from already-mapped values (all integers)."""
    return ("*X;%d;%03d;%02d;%02X;%03d;%d\r\n" % (
        state, spin % 1000, last if last is not None else 0, flags & 0xFF,
        max(0, min(999, rpm_x10)), 1 if direction == -1 else 0)).encode()


class CammeghOutput:
    """Feeds on the controller's events (`event`) and writes on its own clock (`poll`)."""

    def __init__(self, write, period_ms=PERIOD_MS, hold_ms=3000):
        self._write = write
        self.period_ms = period_ms
        self.hold_ms = hold_ms
        self.state = 1
        self.spin = 0
        self.last = None
        self.flags = 0
        self.rpm_x10 = 0
        self.direction = 1
        self._opened = False
        self._result_at = None
        self._next_ms = None

    def event(self, ev, now_ms):
        kind = ev.get("ev")
        if isinstance(ev.get("spin"), int):
            self.spin = ev["spin"]
        if kind == "status":
            self.rpm_x10 = ev.get("rotor_rpm_x10") or 0
            self.direction = ev.get("rotor_dir") or 1
            if ev.get("last") is not None and self.last is None:
                self.last = ev["last"]
            if not ev.get("table_open"):
                self.state = 6 if self._opened else 1
                return
            self._opened = True
            st = _STATES.get(ev.get("state"))
            holding = self._result_at is not None and now_ms - self._result_at < self.hold_ms
            if st is not None and not (self.state == 5 and holding and st == 2):
                self.state = st
        elif kind == "launch":
            self.flags = 0
            self.state = 3
            self._result_at = None
            if ev.get("rotor_rpm_x10") is not None:
                self.rpm_x10 = ev["rotor_rpm_x10"]
            if ev.get("rotor_dir") is not None:
                self.direction = ev["rotor_dir"]
        elif kind == "rnvp":
            self.state = 4
        elif kind == "result":
            self.last = ev["number"]
            self.state = 5
            self._result_at = now_ms
            self._out(number_line(ev["number"]))
        elif kind == "void":
            reason = ev.get("reason")
            self.flags |= 8
            if reason == "same_direction":
                self.flags |= 2
            elif reason in ("rotor_slow", "rotor_not_reversed"):
                self.flags |= 1
            elif reason in _SENSOR_FAULTS:
                self.flags |= 4
            self.state = 2
        elif kind == "fault":
            if ev.get("code") in _SENSOR_FAULTS:
                self.flags |= 4

    def poll(self, now_ms):
        """Write the status line when its 500 ms are due."""
        if self._next_ms is None or now_ms >= self._next_ms:
            self._out(self.line())
            self._next_ms = now_ms + self.period_ms if self._next_ms is None or now_ms - self._next_ms > self.period_ms else self._next_ms + self.period_ms

    def line(self):
        return status_line(self.state, self.spin, self.last, self.flags, self.rpm_x10, self.direction)

    def _out(self, data):
        try:
            self._write(data)
        except Exception:
            pass  # a display unplugged must not disturb the wheel
