"""A Cammegh reader as the daemon's source of wheel events (docs/integrators/cammegh-reader.md):
the reader's lines in, the same records as the Cylindre link session out.

`CammeghSource` has the surface of `cylindre.link.host.HostLink` that the daemon uses (service.py,
"the source of wheel events"): `hello()` when the port opens; `feed(bytes)` and `poll()` return
records (`welcome`, `event`, `status`, `reply`, `timeout`, `reject`) that the daemon journals and
acts on the same way; `acknowledge(seq)`, `rewind(seq)`, `command(cmd, args)`, `busy`,
`in_session`, `boot`, `expected`, `acked`, `sessions`. The lines are decoded by
`host_tools.cammegh.decoder.CammeghDecoder`; each record carries the raw line it came from.

A reader has no clock, no boot, no sequence numbers. What stands in for them:

- The clock is the host's monotonic clock (ms) at the receipt of a line's last byte. A line was
  printed up to `EARLY_MS` before that (its 22 bytes at 9600 baud, the serial adapter's latency),
  so a status is taken to say "betting is open" as of `EARLY_MS` before its receipt (as old as it
  can be) and the call (state 4) at `EARLY_MS` before the receipt of the line before it (the
  earliest the reader can have called): the uncertainty, up to a status period, is counted against
  the player (bets in it are refused as poussettes); with no line saying betting was open heard
  before the call (the daemon started during a spin) it is 0: every open bet is a poussette. Statuses echo `[h, h]`, so the table's
  wheel clock (wheel/clock.py) maps a bet's host instant onto itself plus 1 ms.
- The boot is the host's boot (`host_boot()`): the monotonic clock restarts only with it, so bets
  and calls stay comparable across a restart of the daemon. Sequence numbers continue the
  journal's for that boot.
- Evidence that betting is open: a status line in state 2 or 3, or 5 once its number is dealt.
  States 1 and 6 (reader starting or stopped), 4 and 5 before the number is no evidence.

Pure apart from the injected `write` and `clock_ms`.
"""

from __future__ import annotations

import re

from host_tools.cammegh.decoder import MAX_LINE, PERIOD_US, CammeghDecoder

BAUD = 9600
EARLY_MS = 75               # a line's 22 bytes at 960 bytes/s (23 ms) + the adapter's latency (<= 50 ms)
ANSWER_MS = 2000            # a command to the reader unanswered this long is given up
REOPEN_MS = 1000            # `*P 1` again on a stopped reader (state 6) at most this often
COMMANDS = {"open_table": b"*P 1", "close_table": b"*P 0"}
_EOL = re.compile(rb"(?<=[\r\n])")


def host_boot() -> str:
    """The host's boot, the era of its monotonic clock."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return "cammegh:" + f.read().strip()
    except OSError:
        import time
        return "cammegh:%d" % round(time.time() - time.monotonic())


class CammeghSource:
    """One reader on one port. `opener()`: is the table open in the daemon (then a stopped reader
    is asked to run, `*P 1`, as integrators do; a table the chef closed stays closed)."""

    def __init__(self, write, clock_ms, boot, first_seq=1, first_spin=1, opener=None, port="",
                 silence_ms=3 * PERIOD_US // 1000):
        self._write = write
        self._clock = clock_ms
        self.boot = boot
        self.port = port
        self.opener = opener or (lambda: False)
        self.silence_ms = silence_ms
        self.dec = CammeghDecoder(first_spin=first_spin, silence_us=silence_ms * 1000)
        self.expected = first_seq           # the next event's number
        self.acked = first_seq - 1
        self.sessions = 0
        self.faults = {}                    # the decoder's faults by code (garbled lines included)
        self._raw = b""                     # the line being received
        self._unacked = {}                  # seq -> record, until acknowledged (rewind resends)
        self._redo = []
        self._queue = []                    # records for the next feed/poll (replies)
        self._up = False
        self._pending = None                # [seq, letter, sent ms, cmd]
        self._cmd_seq = 0
        self._open_ms = None                # receipt ms of the last line that was evidence of betting
        self._called = None                 # the spin whose rnvp went out
        self._dealt_game = None             # the game whose number went out
        self._reopen_at = None

    # -- the session ------------------------------------------------------------------------
    @property
    def in_session(self):
        """The reader was heard within `silence_ms`."""
        h = self.dec.heard_us
        return self._up and h is not None and self._clock() * 1000 - h <= self.silence_ms * 1000

    @property
    def busy(self):
        return self._pending is not None

    def hello(self):
        """The port (re)opened: a line half received before belongs to no one."""
        self._raw = b""
        self.dec.drop_partial()
        self._up = False

    def describe(self) -> dict:
        """The reader as /state shows it."""
        d = self.dec
        return {"source": "cammegh", "reader": {"state": d.state, "game": d.game, "flags": d.flags,
                                                "heard_ms": None if d.heard_us is None else d.heard_us / 1000,
                                                "faults": dict(self.faults)}}

    def down_reason(self) -> str:
        h = self.dec.heard_us
        if h is None:
            return "reader not heard: no line from the Cammegh reader on %s yet" % self.port
        return "reader not heard: no line from the Cammegh reader for %d ms" % (self._clock() - h / 1000)

    # -- lines in ----------------------------------------------------------------------------
    def feed(self, data):
        out = self._take_queued()
        now_ms = self._clock()
        now_us = int(now_ms * 1000)
        was_up = self._up
        heard = self.dec.heard_us
        for seg in _EOL.split(data):
            if not seg:
                continue
            self._raw += seg
            evs = self.dec.feed(seg, now_us)
            if seg[-1:] in (b"\r", b"\n"):
                raw, self._raw = self._raw.rstrip(b"\r\n"), b""
            elif len(self._raw) > MAX_LINE:
                raw, self._raw = self._raw, b""     # the decoder dropped it too (garbled)
            else:
                raw = None
            if evs:
                self._line(evs, raw or b"", now_ms, out)
        if not was_up and self.dec.heard_us != heard and self.dec.heard_us is not None:
            self._up = True
            self.sessions += 1
            out.insert(0, {"kind": "welcome", "raw": b"", "info": {
                "wheel": "cammegh", "boot": self.boot, "fw": "Cammegh reader on %s" % self.port,
                "first": self.acked + 1, "source": "cammegh"}})
        return out

    def poll(self):
        out = self._take_queued()
        now = self._clock()
        evs = self.dec.tick(int(now * 1000))
        if evs:
            self._line(evs, b"", now, out)
        if not self.in_session:
            self._up = False
        p = self._pending
        if p is not None and now - p[2] >= ANSWER_MS:
            self._pending = None
            out.append({"kind": "timeout", "seq": p[0], "cmd": p[3]})
        if (self.dec.state == 6 and self._up and self._pending is None and self.opener()
                and (self._reopen_at is None or now >= self._reopen_at)):
            # a stopped reader at an open table: ask it to run, until it shows state 2
            self._reopen_at = now + REOPEN_MS
            self._send(b"*P 1")
        return out

    def _take_queued(self):
        out = self._redo + self._queue
        self._redo, self._queue = [], []
        return out

    def _line(self, evs, raw, now_ms, out):
        """The decoder's output for one line: its events, then its status (taken when they are)."""
        status = None
        for ev in evs:
            kind = ev["ev"]
            if kind == "status":
                if status is not None:
                    out.append(self._status(status, raw))
                status = ev
            elif kind == "answer":
                out.append(self._answer(ev, raw))
            elif kind == "fault" and ev["code"] == "garbled":
                self.faults["garbled"] = self.faults.get("garbled", 0) + 1
                out.append({"kind": "reject", "reason": "garbled", "detail": ev["detail"], "raw": raw})
            else:
                self._event(ev, raw, out)
        if status is not None:
            out.append(self._status(status, raw))

    def _event(self, ev, raw, out):
        body = {k: v for k, v in ev.items() if k != "t"}
        body["t_us"] = ev["t"]
        body["at_ms"] = int(ev["t"] // 1000)
        kind = ev["ev"]
        if kind == "rnvp":
            # the reader called between the line before and this one: the earliest is counted
            body["at_ms"] = self._earliest(ev["since"] / 1000)
            self._called = ev["spin"]
        elif kind == "result":
            self._dealt_game = ev.get("game")
        elif kind == "fault":
            self.faults[ev["code"]] = self.faults.get(ev["code"], 0) + 1
            if ev["code"] == "result_lost" and ev.get("spin") is not None and self._called != ev["spin"]:
                # the number went by unheard and so did the call: it came after the last line that
                # said betting was open; the bets before it are locked to the lost spin and held
                self._emit({"ev": "rnvp", "spin": ev["spin"], "game": ev.get("game"), "why": "result_lost",
                            "at_ms": self._earliest(self._open_ms), "t_us": ev["t"]}, raw, out)
                self._called = ev["spin"]
        self._emit(body, raw, out)

    def _earliest(self, since_ms):
        """The earliest instant a call can have been, given the line before it: `EARLY_MS` before
        it, and never after the last line that said betting was open. With no such line heard
        (the daemon started during a spin), any instant: 0, so every bet still open, from an
        earlier run of the daemon, is refused as a poussette rather than played after a call."""
        if self._open_ms is None or since_ms is None:
            return 0
        return int(min(since_ms, self._open_ms)) - EARLY_MS

    def _emit(self, body, raw, out):
        seq = self.expected
        self.expected += 1
        rec = {"kind": "event", "ftype": "line", "boot": self.boot, "seq": seq, "event": body, "raw": raw}
        self._unacked[seq] = rec
        out.append(rec)

    def _status(self, ev, raw):
        st, now = ev["reader_state"], ev["t"] / 1000
        betting = st in (2, 3) or (st == 5 and ev.get("game") == self._dealt_game)
        if betting:
            self._open_ms = now
        body = {k: v for k, v in ev.items() if k not in ("t", "ev")}
        body.update({"received_ms": now, "emitted": self.expected - 1, "echo": [int(now), int(now)],
                     "at_ms": int(now) - EARLY_MS if betting else None,     # no at_ms: no evidence
                     "state": ev["state"] if betting or st in (1, 6) else "no_more_bets"})
        return {"kind": "status", "ftype": "line", "status": body, "raw": raw}

    # -- acknowledgements ---------------------------------------------------------------------
    def acknowledge(self, seq):
        """Event `seq` is durable: nothing to tell a reader; forget it."""
        if seq > self.acked:
            self.acked = seq
        for s in [s for s in self._unacked if s <= seq]:
            del self._unacked[s]

    def rewind(self, seq):
        """The daemon could not make event `seq` durable: a reader never resends, so this source
        hands it (and every later one) over again at the next feed or poll, in order."""
        self._redo = [self._unacked[s] for s in sorted(self._unacked) if s >= seq]

    # -- commands to the reader -----------------------------------------------------------------
    def command(self, cmd, args=None):
        """`open_table` is `*P 1`, `close_table` `*P 0`; the reader's `*P OK` / `*P NO` is the
        reply. Anything else is refused at once: a reader takes no other command."""
        if self._pending is not None:
            raise RuntimeError("a command is already waiting for its reply")
        self._cmd_seq += 1
        text = COMMANDS.get(cmd)
        if text is None:
            self._queue.append({"kind": "reply", "seq": self._cmd_seq, "raw": b"", "reply": {
                "ok": False, "error": "%s: a Cammegh reader takes only *P 1 / *P 0 (open, close)" % cmd}})
        else:
            self._pending = [self._cmd_seq, "P", self._clock(), cmd]
            self._send(text)
        return self._cmd_seq

    def _send(self, text):
        try:
            self._write(text + b"\r\n")
        except Exception:
            pass        # the port is gone: the reader goes unheard, the daemon reopens it

    def _answer(self, ev, raw):
        p = self._pending
        text = "*%s %s" % (ev["cmd"], "OK" if ev["ok"] else "NO")
        if p is not None and p[1] == ev["cmd"]:
            self._pending = None
            reply = {"ok": ev["ok"], "result": {"reader": text}}
            if not ev["ok"]:
                reply["error"] = "the reader answered %s" % text
            return {"kind": "reply", "seq": p[0], "reply": reply, "raw": raw}
        return {"kind": "reply", "seq": 0, "reply": {"ok": ev["ok"], "result": {"reader": text}}, "raw": raw}
