"""The host's end of the link: sessions, in-order delivery, acks after durability, commands.

Pure protocol: bytes in (`feed`), bytes out (injected `write`), time from `clock_ms`. Every
chunk received becomes exactly one record (a dict) for the caller to journal:

| `kind`      | meaning |
|-------------|---------|
| `welcome`   | the wheel accepted our HELLO: `info` (wheel, boot, first, ...) |
| `event`     | the next event, in order: `boot`, `seq`, `event`; call `acknowledge(seq)` once durable |
| `duplicate` | an event already delivered in this session (re-acked, not delivered again) |
| `gap`       | an event ahead of the next expected one (dropped; the wheel goes back and resends) |
| `status`    | a periodic status: `status` |
| `reply`     | the reply to command `seq`: `reply` |
| `stale`     | authentic but from an earlier session, or a replay inside this session (a WELCOME to a HELLO already answered: `detail` "welcome replayed", counted in `replays`), or a WELCOME to an earlier HELLO on a slow line (`slow` True, `rtt_ms`) |
| `reject`    | not authentic or not a frame: `reason` (cobs, short, crc, length, type, version, mac, json) |

Kinds `event`, `duplicate` and `gap` carry `seq`; every record carries `raw` (the wire chunk).

A slow line: the host sends a HELLO every `hello_ms` with a fresh nonce until one is answered,
and keeps the nonces of the last `KEEP` sent (those of the last `silence_ms` at least). Each is
answered at most once. The wheel opens a session at every HELLO it receives, so it ends in the
session of the last HELLO that reaches it: a WELCOME to an earlier one tells the host the line
works and its round trip; it then sends no new HELLO and opens its session on the WELCOME to
its latest, expected one round trip after that HELLO left (a new HELLO only if that one never
comes). So a session opens, once, on any line whose round trip is under `silence_ms` (and
longer ones, up to `KEEP` HELLO periods, while the wheel's frames come more often than that).
Lives in the shared package and runs on MicroPython too, so both ends test together there.
"""

import json
import os
import struct
from binascii import hexlify, unhexlify

from cylindre.link import frame as fr
from cylindre.link import status
from cylindre.link.mac import Hmac


KEEP = 16           # HELLO nonces kept for their WELCOME (16 s of them at the default period)


def _json(obj):
    return json.dumps(obj).encode()


class HostLink:
    """Talks to one wheel. Only the host opens sessions; it re-opens one after `silence_ms`."""

    def __init__(self, write, clock_ms, key, wheel=None, urandom=None, hello_ms=1000,
                 silence_ms=3000, rto_ms=300, tries=10, keepalive_ms=3000):
        self._write = write
        self._clock = clock_ms
        self._hmac = Hmac(key)
        self._urandom = urandom or os.urandom
        self.wheel = wheel          # expected wheel id, or None to take the first authentic one
        self.hello_ms = hello_ms
        self.silence_ms = silence_ms
        self.rto_ms = rto_ms
        self.tries = tries
        self.keepalive_ms = keepalive_ms
        self._split = fr.Splitter()
        self._hn = None             # our nonce of the current HELLO (of the session once open)
        self._hellos = []           # [nonce, sent at, answered] of our recent HELLOs, oldest first
        self._wait_until = None     # a WELCOME to an earlier HELLO came: no new HELLO before this
        self.rtt_ms = None          # the round trip of the last HELLO answered
        self._dn = None             # the wheel's nonce, once welcomed
        self._old = []              # nonce pairs of earlier sessions (to tell stale from forged)
        self._hello_at = None
        self._heard_at = 0
        self._acked_at = 0
        self.boot = None
        self.info = None
        self.expected = 1
        self.acked = 0
        self._status_seq = 0
        self._cmd_seq = 0
        self._pending = None        # [seq, payload, sent_at, tries, cmd, created_at]
        self.sessions = 0
        self.replays = 0            # frames refused because they would rewind a session

    @property
    def in_session(self):
        return self._dn is not None

    # -- session --------------------------------------------------------------------------------
    def hello(self):
        """Open a new session (fresh nonce); frames of the old one no longer verify."""
        if self._dn is not None:
            self._old = ([(self._hn, self._dn)] + self._old)[:2]
        self._hn = self._urandom(8)
        self._dn = None
        now = self._clock()
        self._hello_at = now
        self._wait_until = None
        keep = max(self.silence_ms, KEEP * self.hello_ms)
        self._hellos = [h for h in self._hellos if now - h[1] < keep][-(KEEP - 1):] + [[self._hn, now, False]]
        payload = _json({"nonce": hexlify(self._hn).decode(), "v": fr.VERSION})
        self._raw_send(fr.build(self._hmac, fr.HELLO, 0, 0, payload, self._hn, fr.NO_NONCE))

    def lost(self):
        """The port went away (a pulled cable): the session ends now, not at the silence timeout;
        the next HELLO opens a new one once the port is back."""
        if self._dn is not None:
            self._old = ([(self._hn, self._dn)] + self._old)[:2]
            self._dn = None
            self._hello_at = None

    def poll(self):
        """Call every few tens of ms: HELLO retries, silence detection, command retries, keepalive.

        Returns records of kind `timeout` (a command given up: `seq`, `cmd`)."""
        now = self._clock()
        out = []
        p = self._pending
        if p is not None and now - p[5] >= self.rto_ms * self.tries:
            self._pending = None
            out.append({"kind": "timeout", "seq": p[0], "cmd": p[4]})
        if self._dn is None:
            if self._wait_until is not None and now < self._wait_until:
                return out      # the WELCOME to our latest HELLO is on its way (slow line)
            if self._hello_at is None or now - self._hello_at >= self.hello_ms or self._wait_until is not None:
                self.hello()
            return out
        if now - self._heard_at >= self.silence_ms:
            self.hello()
            return out
        if now - self._acked_at >= self.keepalive_ms:
            self._send_ack()
        p = self._pending
        if p is not None and now - p[2] >= self.rto_ms:
            p[2] = now
            p[3] += 1
            self._send(fr.COMMAND, p[0], 0, p[1])
        return out

    # -- receiving -----------------------------------------------------------------------------
    def feed(self, data):
        out = []
        for raw in self._split.feed(data):
            try:
                f = fr.parse(raw)
            except fr.FrameError as e:
                out.append({"kind": "reject", "reason": e.reason, "detail": str(e), "raw": raw})
                continue
            rec = self._handle(f)
            rec["raw"] = raw
            rec["ftype"] = chr(f.ftype)
            out.append(rec)
        if self._split.overflow:
            out.append({"kind": "reject", "reason": "overflow", "detail": "%d over-long chunk(s)"
                        % self._split.overflow, "raw": b""})
            self._split.overflow = 0
        return out

    def _handle(self, f):
        if f.ftype == fr.WELCOME:
            return self._welcome(f)
        if f.ftype not in (fr.EVENT, fr.STATUS, fr.REPLY):
            return {"kind": "reject", "reason": "direction", "detail": "type %r is host-to-wheel" % chr(f.ftype)}
        if self._dn is None or not f.verify(self._hmac, self._dn, self._hn):
            for hn, dn in self._old:
                if f.verify(self._hmac, dn, hn):
                    return {"kind": "stale", "detail": "earlier session", "seq": f.seq}
            return {"kind": "reject", "reason": "mac", "detail": "not authentic for this session"}
        self._heard_at = self._clock()
        if f.ftype == fr.STATUS:
            try:
                body = status.decode(f.payload)
            except status.StatusError as e:
                return {"kind": "reject", "reason": "status", "detail": str(e)}
        else:
            try:
                body = json.loads(f.payload.decode())
            except Exception as e:
                return {"kind": "reject", "reason": "json", "detail": str(e)}
        if f.ftype == fr.EVENT:
            if f.seq == self.expected:
                self.expected += 1
                return {"kind": "event", "boot": self.boot, "seq": f.seq, "event": body}
            if f.seq < self.expected:
                self._send_ack()
                return {"kind": "duplicate", "boot": self.boot, "seq": f.seq}
            return {"kind": "gap", "seq": f.seq, "detail": "expected %d" % self.expected}
        if f.ftype == fr.STATUS:
            if f.seq <= self._status_seq:
                return {"kind": "stale", "detail": "status replayed", "seq": f.seq}
            self._status_seq = f.seq
            return {"kind": "status", "status": body}
        p = self._pending
        if p is None or f.seq != p[0]:
            return {"kind": "stale", "detail": "reply to no pending command", "seq": f.seq}
        self._pending = None
        return {"kind": "reply", "seq": f.seq, "cmd": p[4], "reply": body}

    def _welcome(self, f):
        try:
            info = json.loads(f.payload.decode())
            dn = unhexlify(info["nonce"])
            peer = unhexlify(info["peer"])
        except Exception as e:
            return {"kind": "reject", "reason": "json", "detail": str(e)}
        hello = None
        for h in self._hellos:
            if h[0] == peer:
                hello = h
        if self._hn is None or len(dn) != 8 or hello is None or (self._dn is not None and peer != self._hn):
            if f.verify(self._hmac, dn, peer):
                return {"kind": "stale", "detail": "welcome to an earlier hello"}
            return {"kind": "reject", "reason": "mac", "detail": "welcome not authentic"}
        if not f.verify(self._hmac, dn, peer):
            return {"kind": "reject", "reason": "mac", "detail": "welcome not authentic"}
        if hello[2]:
            # one WELCOME per HELLO: a second one (a replay of the first, or the wheel answering a
            # HELLO the line repeated) would rewind the expected event and the command numbering
            # of a live session. A wheel that really restarted answers our next HELLO, fresh nonce.
            self.replays += 1
            return {"kind": "stale", "detail": "welcome replayed"}
        hello[2] = True
        if self.wheel is not None and info.get("wheel") != self.wheel:
            return {"kind": "reject", "reason": "wheel", "answered": info.get("wheel"),
                    "detail": "wheel %r, expected %r" % (info.get("wheel"), self.wheel)}
        first = info.get("first")
        if not isinstance(first, int) or first < 1:
            return {"kind": "reject", "reason": "json", "detail": "welcome without a first seq"}
        now = self._clock()
        self.rtt_ms = now - hello[1]
        if peer != self._hn:
            # a slow line: our later HELLOs are still on their way and each will open the wheel's
            # session anew; its frames of this one are stale, and ours opens on the latest
            self._old = ([(peer, dn)] + self._old)[:2]
            latest = self._hellos[-1][1]
            self._wait_until = latest + self.rtt_ms + max(self.hello_ms, self.rtt_ms // 2)
            return {"kind": "stale", "slow": True, "rtt_ms": self.rtt_ms,
                    "detail": "welcome to an earlier hello (slow line: round trip %d ms)" % self.rtt_ms}
        self._wait_until = None
        self._dn = dn
        self.info = info
        self.boot = info.get("boot")
        self.expected = first
        self.acked = first - 1
        self._status_seq = 0
        self._cmd_seq = 0
        self._heard_at = self._clock()
        self.sessions += 1
        if self._pending is not None:   # a command of the old session: send it again in this one
            self._cmd_seq += 1
            self._pending[0] = self._cmd_seq
            self._pending[2] = self._clock()
            self._send(fr.COMMAND, self._pending[0], 0, self._pending[1])
        return {"kind": "welcome", "info": info}

    # -- sending -------------------------------------------------------------------------------
    def rewind(self, seq):
        """The caller could not make event `seq` durable: expect it again (the wheel resends it,
        as nothing from it on is acknowledged)."""
        if seq < self.expected:
            self.expected = max(seq, self.acked + 1)

    def acknowledge(self, seq):
        """Tell the wheel every event up to `seq` is durable here; it may forget them."""
        if seq > self.acked:
            self.acked = seq
        self._send_ack()

    def _send_ack(self):
        """ACK frames carry the host's clock (`h`, ms: fr.ACK_CLOCK); the wheel echoes the last one
        with its own clock in its STATUS frames, from which the host bounds the wheel-to-host
        offset."""
        if self._dn is None:
            return
        self._acked_at = self._clock()
        self._send(fr.ACK, 0, self.acked, struct.pack(fr.ACK_CLOCK, self._acked_at))

    def command(self, cmd, args=None):
        """Send a command; its `reply` (or `timeout`) comes back as a record. One at a time."""
        if self._pending is not None:
            raise RuntimeError("a command is already waiting for its reply")
        payload = _json({"cmd": cmd, "args": args or {}})
        if len(payload) > fr.MAX_PAYLOAD:
            raise ValueError("command too long")
        self._cmd_seq += 1
        now = self._clock()
        self._pending = [self._cmd_seq, payload, now, 1, cmd, now]
        if self._dn is not None:
            self._send(fr.COMMAND, self._cmd_seq, 0, payload)
        return self._cmd_seq

    @property
    def busy(self):
        return self._pending is not None

    def _send(self, ftype, seq, ack, payload):
        self._raw_send(fr.build(self._hmac, ftype, seq, ack, payload, self._hn, self._dn))

    def _raw_send(self, data):
        try:
            self._write(data)
        except Exception:
            pass  # the port is gone: silence detection re-opens a session later
