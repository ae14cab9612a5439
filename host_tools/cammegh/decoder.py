"""A decoder for what a Cammegh SS2 reader prints (docs/integrators/cammegh-output.md), written from the
doc alone: lines in, the events the Cylindre wheel sends (docs/integrators/wheel-events.md) out, on the host's clock.

Pure: `feed(data, now_us)` and `tick(now_us)` return lists of event dicts; no I/O, no clock of its
own. The format has no checksum, no sequence number and no MAC, so every rule below is a
consistency check between lines (docs/integrators/cammegh-reader.md):

- `launch` at the first state-3 line of a game (it moves no money: betting stays open while the
  ball runs); `spin` is the decoder's own launch count, from `first_spin` (a relaunch after a void
  is a new spin, the reader's `game` number stays);
- `rnvp` at the first state-4 line (or a state-5 line / bare number when 4 was never heard), with
  `since`: the arrival of the line before, the earliest the reader can have called it;
- `result` when the bare number is confirmed by a state-5 line of the same game showing it as the
  last number, or, without a bare line, by two consecutive state-5 lines agreeing;
- `void` when two consecutive lines of the launched game show flag 8 or state 2 (flags stay until
  the next launch, so a real void shows on every line; one garbled line does not void a game), or
  one such line in state 2 is followed by a relaunch;
- `fault` for a garbled line, a game number that jumps, a state sequence that breaks, a number not
  confirmed, a result lost (the game number stepped, or the reader restarted, with no result heard
  for a launched game: its bets must be held, never voided), a status line late (`line_missing`)
  and a reader not heard (`silent`);
- `status` for every status line; `answer` for the reader's `*P OK` / `*P NO` / `*u OK`.
"""

from __future__ import annotations

import re

PERIOD_US = 500_000
STATUS = re.compile(r"^\*X;([1-6]);(\d{3});( \d|\d\d|  );([0-9A-Fa-f]);(\d{3});([01])$")
NUMBER = re.compile(r"^( \d|\d\d)$")
ANSWER = re.compile(r"^\*([Pu]) (OK|NO)$")
MAX_LINE = 128
STATE_NAMES = {1: "idle", 2: "idle", 3: "ball_in_rim", 4: "no_more_bets", 5: "result", 6: "idle"}
# flags besides 8 -> the void reason of docs/integrators/wheel-events.md
VOID_REASONS = ((2, "same_direction"), (4, "sensor_fault"), (1, "no_result"))


class CammeghDecoder:
    """One reader's line stream. `first_spin`: the spin number the next launch gets."""

    def __init__(self, first_spin=1, silence_us=3 * PERIOD_US, late_us=3 * PERIOD_US // 2):
        self.spin = first_spin - 1
        self.silence_us = silence_us
        self.late_us = late_us
        self._buf = b""
        self.state = None           # the reader's state on the last status line
        self.game = None
        self.flags = 0
        self.heard_us = None        # the last valid line
        self._status_us = None      # the last status line
        self.silent = False
        self._odd = None            # a game number seen once, not yet believed
        self._new_game()
        self.counts = {}            # faults by code, for the bench and the tests

    def _new_game(self):
        self.launched = False       # a launch of this game is in play (no result, no void yet)
        self.called = False
        self.done = None            # the number dealt for this game
        self.pending = None         # the bare number waiting for a state-5 line
        self.fives = []             # last numbers on this game's state-5 lines, while no result
        self.heard_number = False   # a bare number line came for this game (right or wrong)
        self._void_lines = 0
        self._evidence = 0          # the flags on the last line that showed a void

    # -- bytes to lines ------------------------------------------------------------------
    def feed(self, data, now_us):
        """Bytes as they arrive (any split, CR, LF or both); the events they complete."""
        out = []
        self._buf += data
        parts = re.split(rb"[\r\n]", self._buf)
        self._buf = parts.pop()
        if len(self._buf) > MAX_LINE:
            self._fault(out, now_us, "garbled", "%d bytes without an end of line" % len(self._buf))
            self._buf = b""
        for raw in parts:
            # a torn line runs into the next one: every `*` past the first character starts a line
            for piece in re.split(rb"(?=\*)", raw):
                if piece:
                    self._line(piece.decode("latin-1"), now_us, out)
        return out

    def drop_partial(self):
        """The line being received belongs to no one (the port was reopened)."""
        self._buf = b""

    def tick(self, now_us):
        """Time passes: a reader silent for `silence_us` is reported once."""
        out = []
        if self.heard_us is not None and not self.silent and now_us - self.heard_us > self.silence_us:
            self.silent = True
            self._fault(out, now_us, "silent", "no line for %d ms" % ((now_us - self.heard_us) // 1000))
        return out

    def _line(self, text, now, out):
        m = STATUS.match(text)
        if m:
            self._heard(now)
            flags = int(m.group(4), 16)
            last = None if m.group(3) == "  " else int(m.group(3))
            if last is not None and last > 36:
                return self._fault(out, now, "garbled", repr(text))
            self._status(out, now, int(m.group(1)), int(m.group(2)), last, flags,
                         int(m.group(5)), 1 if m.group(6) == "0" else -1)
            return
        m = NUMBER.match(text)
        if m and int(m.group(1)) <= 36:
            self._heard(now)
            return self._number(out, now, int(m.group(1)))
        m = ANSWER.match(text)
        if m:
            self._heard(now)
            out.append({"ev": "answer", "t": now, "cmd": m.group(1), "ok": m.group(2) == "OK"})
            return
        self._fault(out, now, "garbled", repr(text))

    def _heard(self, now):
        self.heard_us = now
        self.silent = False

    # -- the game ------------------------------------------------------------------------
    def _status(self, out, now, st, game, last, flags, rpm, rdir):
        prev_us = self._status_us
        if prev_us is not None and now - prev_us > self.late_us and not self.silent:
            self._fault(out, now, "line_missing", "%d ms since the last status line" % ((now - prev_us) // 1000))
        self._status_us = now
        if not self._believe(out, now, st, game):
            return
        prev = self.state
        self.state, self.flags = st, flags
        out.append({"ev": "status", "t": now, "state": STATE_NAMES[st], "spin": self.spin, "game": game,
                    "rotor_rpm_x10": rpm, "rotor_dir": rdir, "flags": flags, "reader_state": st,
                    "sensors": {"reader": "fault" if flags & 4 else "ok"}, "last": last,
                    "table_open": st not in (1, 6)})
        if st == 1:
            self._lost(out, now, "the reader restarted")
            self._new_game()
            return
        if st == 3:
            if self.done is not None:
                self._fault(out, now, "sequence", "a launch after the result, game %03d not stepped" % game)
                self._new_game()
            if self.launched and prev == 2:
                # back in 2, then launched again before a second line could confirm the void: the
                # relaunch is the second line (a croupier is rarely this quick; a simulator is)
                self._void(out, now, self._evidence)
            if self.called:
                self._fault(out, now, "sequence", "state %s -> 3 after rien ne va plus" % prev)
            elif not self.launched:
                self._launch(out, now, rpm, rdir, flags)
        elif st in (4, 5) and self.done is None:
            self._call(out, now, rpm, rdir, flags, prev_us)
        if st == 5:
            self._five(out, now, last)
        elif st == 6 and self.launched and not flags & 8:
            self._fault(out, now, "sequence", "table closed during spin %d without a void" % self.spin)
        if self.launched:
            if flags & 8 or st == 2:
                self._evidence = flags
                self._void_lines += 1
                if self._void_lines == 2:
                    self._void(out, now, flags)
            else:
                self._void_lines = 0

    def _believe(self, out, now, st, game):
        """The game number: it steps by one when a game has been dealt, and changes otherwise only
        when the reader restarted or two lines in a row agree on it (one line may be garbled)."""
        if self.game is None or st == 1 or self.state == 1 or game == self.game:
            self.game, self._odd = game, None
            return True
        step = game == (self.game + 1) % 1000
        if step and self.done is not None:
            self.game, self._odd = game, None
            self._new_game()
            return True
        if self._odd != game:
            self._odd = game
            self._fault(out, now, "garbled", "game %03d on a line of game %03d: not believed yet" % (game, self.game))
            return False
        self._lost(out, now, "the game number went from %03d to %03d" % (self.game, game))
        if not step:
            self._fault(out, now, "game_jump", "game %03d after %03d" % (game, self.game))
        self.game, self._odd = game, None
        self._new_game()
        return True

    def _launch(self, out, now, rpm, rdir, flags):
        self.spin += 1
        self.launched = True
        self._void_lines = 0
        out.append({"ev": "launch", "t": now, "spin": self.spin, "game": self.game, "ball_dir": 0,
                    "rotor_dir": rdir, "rotor_rpm_x10": rpm, "lap_us": 0,
                    "violations": ["same_direction"] if flags & 2 else []})

    def _call(self, out, now, rpm, rdir, flags, since):
        if not self.launched:
            self._fault(out, now, "sequence", "rien ne va plus without a launch heard")
            self._launch(out, now, rpm, rdir, flags)
        if not self.called:
            self.called = True
            out.append({"ev": "rnvp", "t": now, "since": since if since is not None else now,
                        "spin": self.spin, "game": self.game, "why": "reader", "laps": None,
                        "lap_us": [], "predicted_drop_t": None, "lead_us": None})

    def _number(self, out, now, n):
        if self.done is not None:
            if n != self.done:
                self._fault(out, now, "result_mismatch", "number line %d after %d was dealt" % (n, self.done))
            return
        if not self.called:
            self._fault(out, now, "sequence", "number line %d before rien ne va plus" % n)
            self._call(out, now, 0, 0, 0, self._status_us)
        self.heard_number = True
        if self.fives and self.fives[-1] == n:
            return self._result(out, now, n, "number+status")
        self.pending = n

    def _five(self, out, now, last):
        if self.done is not None:
            if last != self.done:
                self._fault(out, now, "result_mismatch", "state 5 shows %s after %d was dealt" % (last, self.done))
            return
        if last is None:
            return
        if self.pending is not None:
            if self.pending == last:
                return self._result(out, now, last, "number+status")
            self._fault(out, now, "result_mismatch", "number line %d, state 5 shows %d" % (self.pending, last))
            self.pending = None
            self.fives = [last]
            return
        if self.fives and self.fives[-1] == last:
            if not self.heard_number:
                self._fault(out, now, "number_missing", "no number line: %d from two state-5 lines" % last)
            return self._result(out, now, last, "status x2")
        self.fives.append(last)

    def _result(self, out, now, n, by):
        self.done = n
        self.launched = False
        out.append({"ev": "result", "t": now, "spin": self.spin, "game": self.game, "number": n,
                    "confirmed_by": by})

    def _void(self, out, now, flags):
        reason = "misspin"
        for bit, name in VOID_REASONS:
            if flags & bit:
                reason = name
                break
        if not flags & 8:
            self._fault(out, now, "sequence", "back to place bets without flag 8")
        self._void_lines = 0
        self.launched = self.called = False
        self.pending, self.fives, self.heard_number = None, [], False
        out.append({"ev": "void", "t": now, "spin": self.spin, "game": self.game, "reason": reason,
                    "detail": "reader flags %X, state %d" % (flags, self.state)})

    def _lost(self, out, now, why):
        """A launched game whose number was never heard: its bets wait for a person, never void."""
        if self.launched:
            self._fault(out, now, "result_lost", "spin %d (game %03d): %s" % (self.spin, self.game, why),
                        spin=self.spin)
            self.launched = False

    def _fault(self, out, now, code, detail, spin=None):
        self.counts[code] = self.counts.get(code, 0) + 1
        ev = {"ev": "fault", "t": now, "code": code, "detail": detail, "signal": None}
        if spin is not None:
            ev["spin"] = spin
        out.append(ev)
