"""The Cammegh compatibility output (sortie Cammegh): the lines an SS2 reader prints, for the
marquees and table systems already on the floor. docs/integrators/cammegh-output.md is the reference.

9600 baud 8N1, ASCII, CR LF after every line:

- the winning number bare, two characters space-padded, once, when it is known: `" 7"`, `"17"`,
  followed at once by the first state-5 status line;
- a status line every 500 ms, and at once on every change of state:
  `*X;<state>;<game 3 digits>;<last 2 chars>;<flags 1 hex digit>;<rotor rpm x10 3 digits>;<dir>`.

One game: 2 (faites vos jeux) -> 3 (launch) -> 4 (rien ne va plus) -> bare number -> 5 (held
`hold_ms`) -> 2 with the game number one up. A void (misspin) sets flag 8 and goes back to 2 with
the same game number: the game is played again. 6 while the table is closed, 1 only from power-up
until the controller's first status. Flags (OR'ed, cleared at the next launch): 8 the game is void,
2 ball thrown the same way as the rotor, 4 a sensor fault (also while a sensor is not ok), 1 the
ball was not sensed in a pocket.

Commands read on the same UART (`read`), one a line, answered on their own line: `*P 1` / `*P 0`
open / close the table through `power(on)` (given by main.py; it returns False to refuse: `*P NO`),
`*u 1` (start a game: the croupier launches by hand here) is answered `*u OK`.
"""

# the state each event of the controller leads to is decided in `event`; these are the numbers
POWER_UP, BETS, IN_RIM, NO_MORE, RESULT, CLOSED = 1, 2, 3, 4, 5, 6
MISSPIN, NOT_SENSED, SAME_DIRECTION, SENSOR = 8, 1, 2, 4
PERIOD_MS = 500
_LINE_MAX = 16          # a command is 4 characters; a longer line is noise and is dropped
# void reason -> flags besides 8 (docs/integrators/wheel-events.md reasons; a reason not named here is 8 alone)
_VOID_FLAGS = {"same_direction": SAME_DIRECTION, "no_result": NOT_SENSED, "ball_off_wheel": NOT_SENSED,
               "sensor_fault": SENSOR, "encoder_mismatch": SENSOR}
_SENSOR_FAULTS = ("sensor_stuck", "sensor_silent", "encoder_mismatch", "edges_lost", "samples_lost")


def number_line(number):
    """The bare winning-number line: b' 5\\r\\n', b'17\\r\\n'."""
    if not isinstance(number, int) or isinstance(number, bool) or number < 0 or number > 36:
        raise ValueError("winning number must be 0..36")
    return ("%2d\r\n" % number).encode()


def status_line(state, game, last, flags, rpm_x10, direction):
    """One `*X` line from already-mapped values: `last` None prints two spaces (no result yet),
    `direction` is the controller's (1 clockwise -> 0, -1 counter-clockwise -> 1)."""
    return ("*X;%d;%03d;%s;%X;%03d;%d\r\n" % (
        state, game % 1000, "  " if last is None else "%2d" % last, flags & 0xF,
        max(0, min(999, rpm_x10)), 1 if direction == -1 else 0)).encode()


def table_power(ctl, link, on, t_us):
    """What `*P 1` / `*P 0` do: open / close the controller's table (closing voids a spin in
    progress), unless a Cylindre host is in session on `link`: it owns the table and sets it after
    every WELCOME, so the answer is `*P NO`. False also before the controller exists."""
    if ctl is None or (link is not None and link.in_session):
        return False
    if on:
        ctl.open_table(t_us)
    else:
        ctl.close_table(t_us)
    return True


class CammeghOutput:
    """Fed the controller's events (`event`), writes on its own clock (`poll`, every loop)."""

    def __init__(self, write, period_ms=PERIOD_MS, hold_ms=3000, read=None, power=None):
        self._write = write
        self._read = read
        self.power = power          # power(on) -> True done / False refused; None: `*P NO`
        self.period_ms = period_ms
        self.hold_ms = hold_ms
        self.state = POWER_UP
        self.game = 1
        self._synced = False        # the game number taken from the controller's spin count
        self.last = None
        self.flags = 0              # latched since the launch: 8, 2, 1, 4
        self.sensor_bad = False     # a sensor not ok in the last status
        self.rpm_x10 = 0
        self.direction = 1
        self._result_at = 0
        self._next_ms = None
        self._buf = bytearray(_LINE_MAX)
        self._n = 0

    # -- the controller's events -------------------------------------------------------
    def event(self, ev, now_ms):
        kind = ev.get("ev")
        if kind == "status":
            self._status(ev, now_ms)
        elif kind == "boot":
            spin = ev.get("spin")
            if isinstance(spin, int):
                self.game = spin + 1     # the game a power-up bets on: the next launch
                self._synced = True
            self.state = POWER_UP
        elif kind == "launch":
            if self.state == RESULT:
                self._end_result(now_ms)  # the next launch came within the hold: 2 is still shown
            self.flags = SAME_DIRECTION if "same_direction" in (ev.get("violations") or ()) else 0
            self._rotor(ev)
            self._go(IN_RIM, now_ms)
        elif kind == "rnvp":
            self._go(NO_MORE, now_ms)
        elif kind == "result":
            self.last = ev["number"]
            self._out(number_line(ev["number"]))
            self._result_at = now_ms
            self._go(RESULT, now_ms)
        elif kind == "void":
            self.flags |= MISSPIN | _VOID_FLAGS.get(ev.get("reason"), 0)
            if self.state in (IN_RIM, NO_MORE):
                self._go(BETS, now_ms)    # same game number: the game is played again
            else:
                self._send(now_ms)        # the flag shows at once
        elif kind == "fault":
            if ev.get("code") in _SENSOR_FAULTS:
                self.flags |= SENSOR
                self._send(now_ms)

    def _status(self, ev, now_ms):
        self._rotor(ev)
        if not self._synced and isinstance(ev.get("spin"), int):
            self.game = ev["spin"] + 1   # no boot event seen (output started late)
            self._synced = True
        if ev.get("last") is not None:
            self.last = ev["last"]
        sensors = ev.get("sensors") or {}
        self.sensor_bad = False
        for name in sensors:
            if sensors[name] != "ok":
                self.sensor_bad = True
        if not ev.get("table_open"):
            if self.state == RESULT:
                self.game += 1
            if self.state != CLOSED:
                self._go(CLOSED, now_ms)
        elif self.state in (POWER_UP, CLOSED):
            self._go(BETS, now_ms)

    def _rotor(self, ev):
        if ev.get("rotor_rpm_x10") is not None:
            self.rpm_x10 = ev["rotor_rpm_x10"]
        if ev.get("rotor_dir") in (1, -1):
            self.direction = ev["rotor_dir"]

    def _end_result(self, now_ms):
        """State 5 ends: the next game's betting, its number one up."""
        self.game += 1
        self._go(BETS, now_ms)

    def _go(self, state, now_ms):
        self.state = state
        self._send(now_ms)

    # -- the clock and the commands ----------------------------------------------------
    def poll(self, now_ms):
        """Every loop: commands in, the end of the result's hold, the 500 ms status line."""
        if self._read is not None:
            try:
                data = self._read()
            except Exception:
                data = None
            if data:
                self.feed(data, now_ms)
        if self.state == RESULT and now_ms - self._result_at >= self.hold_ms:
            self._end_result(now_ms)
        if self._next_ms is None or now_ms >= self._next_ms:
            self._send(now_ms)

    def feed(self, data, now_ms):
        """Bytes from the table system: CR, LF or both end a command; noise is dropped."""
        for b in data:
            if b == 13 or b == 10:
                if self._n:
                    self._command(bytes(self._buf[:self._n]), now_ms)
                self._n = 0
            elif self._n < _LINE_MAX:
                if b != 32:               # `*P 1` and `*P1` alike
                    self._buf[self._n] = b
                    self._n += 1
            else:
                self._n = _LINE_MAX       # too long: ignored up to its end of line

    def _command(self, cmd, now_ms):
        if len(cmd) >= _LINE_MAX:
            return
        if cmd == b"*P1" or cmd == b"*P0":
            ok = False
            if self.power is not None:
                try:
                    ok = bool(self.power(cmd == b"*P1"))
                except Exception:
                    ok = False
            self._out(b"*P OK\r\n" if ok else b"*P NO\r\n")
        elif cmd == b"*u1":
            self._out(b"*u OK\r\n")

    def line(self):
        return status_line(self.state, self.game, self.last, self.flags | (SENSOR if self.sensor_bad else 0),
                           self.rpm_x10, self.direction)

    def _send(self, now_ms):
        """The status line now, and the next one a period after the last one due (no drift)."""
        self._out(self.line())
        if self._next_ms is None or now_ms - self._next_ms >= self.period_ms:
            self._next_ms = now_ms + self.period_ms
        elif now_ms >= self._next_ms:
            self._next_ms += self.period_ms

    def _out(self, data):
        try:
            self._write(data)
        except Exception:
            pass  # a display unplugged must not disturb the wheel
