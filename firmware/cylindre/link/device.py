"""The wheel's end of the link: a bounded outbox (boîte d'envoi) of events, acks, commands.

Transport-agnostic: bytes in through `feed`, bytes out through the injected `write`, time from
the injected `clock_ms` (a non-wrapping millisecond count). Wiring on the Pico (firmware/main.py)::

    from cylindre.link.device import DeviceLink
    from cylindre.spin.controller import Controller

    key = open("/wheel.key", "rb").read()          # the key file (64 hex chars), copied by the flash step
    link = DeviceLink(write=usb.write, clock_ms=clock.ms, key=key,
                      wheel="T1", fw="0.1.0", cammegh=CammeghOutput(uart2.write))
    ctl = Controller(settings, link.emit, store=store)   # every event goes through the link
    link.attach(ctl, now_us)                       # commands call the controller at now_us()
    ctl.boot(now_us(), reset_cause=cause)
    while True:
        data = usb.read()                          # whatever arrived, b"" or None if nothing
        if data:
            link.feed(data)
        ctl.tick(now_us())
        link.poll()                                # (re)sends, Cammegh status, set_accepting
        time.sleep_ms(5)

`now_us()` is the controller's own microsecond clock, from the time origin it moves forward while
idle (board/clock.py, spin/origin.py); `clock.ms()` counts milliseconds since boot.
`write(data)` may raise or drop bytes (USB CDC with no reader drops after ~500 ms): nothing is
lost, the outbox keeps every event until the host's ACK says it is durable.

When the outbox nears its capacity (`capacity - reserve` events), at the end of the spin running
(its result or void) the link calls `controller.set_accepting(False, "outbox_full")` so no new
spin starts (at once if only 4 places are left); it calls `set_accepting(True)` once the host has drained it. A result, a
void, a boot or a rien ne va plus is never dropped: if the outbox is completely full, the oldest
informational event (launch, drop, fault) is shrunk to an `{"ev": "evicted"}` tombstone instead
(counted in `evicted`); with nothing left to shrink the outbox grows past capacity (`overrun`).

The outbox dies with the power; the controller's flash does not. So the `boot` event leaves with
the games the flash kept (`history`), from which the host settles a result it never received.
The controller writes a result, or a void after the launch, to flash only when the host has not
acknowledged it in time: the link tells it (`durable()`) once no result or void is left in the outbox.
"""

import json
import os
import struct
from binascii import hexlify, unhexlify

from cylindre.link import frame as fr
from cylindre.link import protocol as pr
from cylindre.link import status
from cylindre.link.mac import Hmac, parse_key

try:
    from micropython import const
except ImportError:  # CPython
    const = int

_CAPACITY = const(64)
_RESERVE = const(16)
_WINDOW = const(8)
_RTO_MS = const(400)
_EVICTABLE = (pr.LAUNCH, pr.DROP, pr.FAULT)
_SPIN_END = (pr.RESULT, pr.VOID, pr.BOOT)
_HELD = (pr.RESULT, pr.VOID)    # what the controller holds in RAM until the host has it (durable)
COMMANDS = pr.COMMANDS


_SEPARATORS = (",", ":")     # no spaces: an event is shorter to serialise, MAC, stuff, check
                             # and send


_UNKNOWN = {"ev": pr.STATUS, "state": "unknown"}     # before the controller's first status


def _json(obj):
    return json.dumps(obj, separators=_SEPARATORS).encode()


def _no_clock():
    return 0


def _shrunk(payload):
    """An event too long for one frame (never seen: the longest, a drop's 64 laps, is half the
    limit) keeps its scalar fields (kind, spin, number, reason...) and says it was cut; a frame
    that cannot be built must never stop the wheel."""
    ev = json.loads(payload)
    out = {}
    for k in ev:
        v = ev[k]
        if v is None or isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) <= 200):
            out[k] = v
    out["truncated"] = len(payload)
    return _json(out)


class DeviceLink:
    """One wheel's link state: session nonces, outbox, command sequence, last reply."""

    def __init__(self, write, clock_ms, key, wheel, fw="", capacity=_CAPACITY, reserve=_RESERVE,
                 window=_WINDOW, rto_ms=_RTO_MS, urandom=None, cammegh=None, on_set_time=None, serial=None,
                 cobs_encode=None):
        if capacity < reserve + 4:
            raise ValueError("outbox capacity must exceed its reserve by 4 or more")
        self._write = write
        self._clock = clock_ms
        self._hmac = Hmac(key if len(key) == 32 else parse_key(key))   # raw, or the key file as read
        self._urandom = urandom or os.urandom
        self.wheel = wheel
        self.fw = fw
        self.serial = serial        # the board's serial number (machine.unique_id, hex), told in WELCOME
        self.boot = hexlify(self._urandom(8)).decode()
        self.capacity = capacity
        self.high_water = capacity - reserve
        self.low_water = self.high_water // 2
        self.window = window
        self.rto_ms = rto_ms
        self.cammegh = cammegh
        self.on_set_time = on_set_time
        self._split = fr.Splitter()
        self._encode = cobs_encode  # None: cylindre.link.cobs (the Pico: board/fastcobs.py)
        self._ctl = None
        self._now_us = _no_clock
        # session: host nonce and our nonce, None until a valid HELLO
        self._hn = None
        self._dn = None
        self._mac_in = None         # the session's MACs (Hmac.keyed), set with its nonces
        self._mac_out = None
        self._cmd_seq = 0
        self._reply = None
        self._status_seq = 0
        # outbox: parallel lists of seq, kind and payload, oldest first
        self._seqs = []
        self._kinds = []
        self._payloads = []
        self._next_seq = 1
        self._sent = 0              # entries from the head sent since the last go-back
        self._progress_ms = 0
        self.accepting = True
        self._tell = False
        self.evicted = 0
        self.overrun = 0
        self.rejected = 0
        self.last_status = None
        self._status_at = 0
        self._status_every = pr.STATUS_MS   # the heartbeat's period for the last status's state
        self._sensors = None        # the last status's `sensors` map, and its codes (link/status.py)
        self._codes = None
        self._echo = None           # [host ms of the last ACK's stamp, our clock when it came]
        self.wall_offset_ms = None

    # -- wiring ---------------------------------------------------------------------------
    def attach(self, controller, now_us, clock_ms=None):
        """Give the link the controller that commands drive and the controller's clock; and
        `clock_ms`, the board's own millisecond clock, once it exists (the link reads it at
        every loop turn: a bound method, not a closure around it, saves a call each time)."""
        self._ctl = controller
        self._now_us = now_us
        if clock_ms is not None:
            self._clock = clock_ms

    @property
    def in_session(self):
        return self._dn is not None

    def outbox_len(self):
        return len(self._seqs)

    # -- events from the controller ------------------------------------------------------
    def emit(self, event):
        """The Controller's `emit`: statuses go out as they are, other events via the outbox."""
        kind = event.get("ev")
        now = self._clock()
        if self.cammegh is not None:
            self.cammegh.event(event, now)
        if kind == pr.STATUS:
            self.last_status = event
            self._status_every = pr.CALLED_STATUS_MS if event.get("state") in pr.CALLED_STATES \
                else pr.STATUS_MS
            self._send_status(now)
            return
        # the instant the controller handed it over, on the link's clock (the host maps the call
        # of rien ne va plus onto its own time with it; on the Pico this is `t` in ms)
        event["at_ms"] = now
        if kind == "boot" and self._ctl is not None and "history" not in event:
            # the games kept in flash as this boot found them: the host settles from them a
            # result whose event died in RAM with the power (docs/integrators/link-protocol.md section 6)
            event = dict(event)
            event["history"] = self._ctl.history()
            payload = _json(event)
            if len(payload) > fr.MAX_PAYLOAD:   # never with 10 games; no partial list either
                event["history"] = None
                payload = _json(event)
            self._enqueue(kind, payload)
            self._pump()
            return
        self._enqueue(kind, _json(event))
        self._pump()

    def _enqueue(self, kind, payload):
        if len(payload) > fr.MAX_PAYLOAD:
            payload = _shrunk(payload)
        if len(self._seqs) >= self.capacity:
            # full: shrink the oldest informational event to a tombstone (its sequence number
            # stays, so the host sees no gap); results, voids, rnvp and boots are never touched
            for i in range(len(self._kinds)):
                if self._kinds[i] in _EVICTABLE:
                    self._payloads[i] = _json({"ev": "evicted", "was": self._kinds[i]})
                    self._kinds[i] = "evicted"
                    self.evicted += 1
                    break
            else:
                self.overrun += 1
        self._seqs.append(self._next_seq)
        self._kinds.append(kind)
        self._payloads.append(payload)
        self._next_seq += 1
        n = len(self._seqs)
        # stop between spins (after a result, a void, a boot), so the spin running can finish on
        # the reserve; stop at once if the reserve itself is nearly used
        if self.accepting and n >= self.high_water and (kind in _SPIN_END or n >= self.capacity - 4):
            self.accepting = False
            self._tell = True   # told from poll(), never from inside the controller's own emit

    # -- bytes from the host ------------------------------------------------------------------
    def feed(self, data):
        """Take whatever bytes arrived; act on every complete, authentic frame."""
        for raw in self._split.feed(data):
            try:
                f = fr.parse(raw)
            except fr.FrameError:
                self.rejected += 1
                continue
            try:
                self._handle(f)
            except Exception:   # a frame must never stop the wheel
                self.rejected += 1

    def _handle(self, f):
        t = f.ftype
        if t == fr.HELLO:
            msg = json.loads(f.payload.decode())
            hn = unhexlify(msg["nonce"])
            if len(hn) != 8 or not f.verify(self._hmac, hn, fr.NO_NONCE):
                self.rejected += 1
                return
            self._open_session(hn)
            return
        if self._dn is None or not f.verify_keyed(self._mac_in):
            self.rejected += 1
            return
        if t == fr.ACK:
            self._stamp(f.payload, self._clock())
            self._acked(f.ack)
        elif t == fr.COMMAND:
            self._command(f)
        else:
            self.rejected += 1

    def _open_session(self, hn):
        """A fresh nonce for every HELLO: frames of any earlier session can no longer verify."""
        self._hn = hn
        self._dn = self._urandom(8)
        # the MACs of this session's frames, keyed once to their domain and nonces
        self._mac_in = self._hmac.keyed(fr.mac_input_prefix(hn, self._dn))
        self._mac_out = self._hmac.keyed(fr.mac_input_prefix(self._dn, hn))
        self._cmd_seq = 0
        self._reply = None
        self._status_seq = 0
        self._echo = None
        first = self._seqs[0] if self._seqs else self._next_seq
        info = {"wheel": self.wheel, "nonce": hexlify(self._dn).decode(),
                "peer": hexlify(hn).decode(), "boot": self.boot, "first": first,
                "next": self._next_seq, "fw": self.fw, "capacity": self.capacity,
                "commands": list(COMMANDS)}
        ctl = self._ctl
        if self.serial is not None:
            info["serial"] = self.serial
        if ctl is not None:     # who the host talks to: the counter's epoch and where it stands
            info["epoch"] = getattr(ctl, "count_epoch", None)
            info["spin"] = getattr(ctl, "spin", None)
        self._send(fr.WELCOME, 0, 0, _json(info))
        self._sent = 0
        self._progress_ms = self._clock()
        self._pump()

    def _send_status(self, now):
        """A STATUS frame: the controller's last status, stamped by the link with its clock
        (`at_ms`), the last event number emitted so far (`emitted`: the host knows it has every
        event said before this instant) and the echo of the host's last ACK stamp."""
        if self._dn is None:
            return
        st = self.last_status or _UNKNOWN
        s = st.get("sensors")
        try:
            if s is not self._sensors:      # a new map only when a signal's health changed
                self._codes = None if s is None else status.sensor_codes(s)
                self._sensors = s
            payload = status.encode(st, now, self._next_seq - 1, self._echo, self._codes)
        except Exception:   # not a controller's status (a field out of range): never stop the wheel
            self._sensors = self._codes = None
            payload = status.encode(_UNKNOWN, now, self._next_seq - 1, self._echo)
        self._status_at = now
        self._status_seq += 1
        self._send(fr.STATUS, self._status_seq, 0, payload)

    def _stamp(self, payload, now):
        """An ACK may carry the host's clock (`h`, fr.ACK_CLOCK): kept with ours, echoed in STATUS."""
        if len(payload) == fr.ACK_CLOCK_SIZE:
            self._echo = [struct.unpack(fr.ACK_CLOCK, payload)[0], now]

    def _acked(self, ack):
        if ack >= self._next_seq:
            self.rejected += 1      # acks an event never sent: ignore
            return
        n = 0
        told = False                # a result or a void among the events acknowledged
        while n < len(self._seqs) and self._seqs[n] <= ack:
            if self._kinds[n] in _HELD:
                told = True
            n += 1
        if n:
            del self._seqs[:n]
            del self._kinds[:n]
            del self._payloads[:n]
            self._sent = max(0, self._sent - n)
            self._progress_ms = self._clock()
            if told and pr.RESULT not in self._kinds and pr.VOID not in self._kinds and self._ctl is not None:
                # every result and void said is durable at the host: the controller need not write it
                self._ctl.durable()
        if not self.accepting and len(self._seqs) <= self.low_water:
            self.accepting = True
            self._tell = True
        self._pump()

    def _command(self, f):
        if f.seq == self._cmd_seq and self._reply is not None:
            self._send(fr.REPLY, f.seq, 0, self._reply)   # our reply was lost: same answer again
            return
        if f.seq <= self._cmd_seq:
            self.rejected += 1      # replay inside the session
            return
        try:
            msg = json.loads(f.payload.decode())
            reply = self._run(msg.get("cmd"), msg.get("args") or {})
        except Exception as e:
            reply = {"ok": False, "error": "bad command: %s" % e}
        self._cmd_seq = f.seq
        self._reply = _json(reply)
        self._send(fr.REPLY, f.seq, 0, self._reply)

    def _run(self, cmd, args):
        ctl = self._ctl
        if cmd not in COMMANDS:
            return {"ok": False, "error": "unknown command %r" % (cmd,)}
        if cmd == "set_time":
            epoch_ms = args.get("epoch_ms")
            if not isinstance(epoch_ms, int) or epoch_ms < 0:
                return {"ok": False, "error": "set_time needs epoch_ms, a non-negative integer"}
            self.wall_offset_ms = epoch_ms - self._clock()
            if self.on_set_time is not None:
                self.on_set_time(epoch_ms)
            return {"ok": True, "result": {"wall_offset_ms": self.wall_offset_ms}}
        if cmd == "status":
            return {"ok": True, "result": {"status": self.last_status, "link": self.info()}}
        if ctl is None:
            return {"ok": False, "error": "no controller attached"}
        if cmd == "open_table":
            ctl.open_table(self._now_us())
            return {"ok": True}
        if cmd == "close_table":
            ctl.close_table(self._now_us())
            return {"ok": True}
        if cmd == "call":
            ctl.call(self._now_us())
            return {"ok": True}
        if cmd == "get_settings":
            return {"ok": True, "result": ctl.get_settings()}
        if cmd == "history":
            return {"ok": True, "result": ctl.history()}
        # set_setting
        name = args.get("name")
        if not isinstance(name, str):
            return {"ok": False, "error": "set_setting needs a setting name"}
        if "value" not in args:
            return {"ok": False, "error": "set_setting needs a value"}
        err = ctl.set_setting(name, args["value"])
        if err:
            return {"ok": False, "error": str(err)}
        return {"ok": True, "result": ctl.get_settings()}

    def info(self):
        """The link's own figures, for the status command."""
        return {"wheel": self.wheel, "boot": self.boot, "outbox": len(self._seqs),
                "capacity": self.capacity, "accepting": self.accepting, "next": self._next_seq,
                "evicted": self.evicted, "overrun": self.overrun, "rejected": self.rejected,
                "session": self._dn is not None, "wall_offset_ms": self.wall_offset_ms}

    # -- sending -----------------------------------------------------------------------------
    def poll(self):
        """Call often (every loop): retransmits after a silent `rto_ms`, drives Cammegh status."""
        now = self._clock()
        if self._tell and self._ctl is not None:
            self._tell = False
            self._ctl.set_accepting(self.accepting, None if self.accepting else "outbox_full")
        if self.cammegh is not None:
            self.cammegh.poll(now)
        if self._dn is None:
            return
        if now - self._status_at >= self._status_every:
            # the controller's own status comes every 500 ms by default (1 s while the spin is
            # called); if it falls silent (table closed on a simulated board, a stalled loop, a
            # longer status_us) the link repeats the last one, freshly stamped: the host takes
            # bets only on fresh evidence from the wheel
            self._send_status(now)
        if self._sent and now - self._progress_ms >= self.rto_ms:
            self._sent = 0           # go back to the oldest unacknowledged event
            self._progress_ms = now
        if self._sent < len(self._seqs):
            self._pump()

    def _pump(self):
        if self._dn is None:
            return
        limit = min(len(self._seqs), self.window)
        if self._sent == 0 and limit:
            self._progress_ms = self._clock()
        while self._sent < limit:
            i = self._sent
            self._send(fr.EVENT, self._seqs[i], 0, self._payloads[i])
            self._sent += 1

    def _send(self, ftype, seq, ack, payload):
        data = fr.build_keyed(self._mac_out, ftype, seq, ack, payload, self._encode)
        try:
            self._write(data)
        except Exception:
            pass  # the line is down: the outbox and the host's retries make up for it
