"""The STATUS frame's payload (docs/integrators/link-protocol.md, section 3): the controller's status in binary.

A status goes to the host twice a second for as long as the wheel runs, and it is the Pico's
dearest frame: as JSON (240 bytes) its text alone cost the RP2040's core ~0.9 ms, and its HMAC
six SHA-256 blocks. Packed here (`struct`, C code) it is 51 bytes and one per signal, and both
ends read it with this module. `decode` gives the dict the JSON gave (the controller's status
event plus `at_ms`, `emitted`, `echo`), with the keys the wheel's status had.

Layout, big-endian:

    mask B   which of t, spin, rotor_rpm_x10, rotor_dir, last, table_open, sensors, echo it has
    state B  index in STATES
    t q, spin i, rotor_rpm_x10 i, rotor_dir b, last b (-1: null), table_open B,
    at_ms q, emitted i, echo's h q, echo's r q,
    balls B, pockets B, then one byte a signal (index in HEALTH), in the controller's order:
    Z, BALL0.., POCKET0.., VOID

A field the mask leaves out is packed as 0 and not read.
"""

import struct

STATES = ("idle", "ball_in_rim", "no_more_bets", "ball_dropped", "result", "void", "fault", "unknown")
HEALTH = ("ok", "stuck", "silent")
FIELDS = ("t", "spin", "rotor_rpm_x10", "rotor_dir", "last", "table_open", "sensors", "echo")
LAYOUT = ">BBqiibbBqiqqBB"
HEAD = 51               # struct.calcsize(LAYOUT)
_STATE = {}             # state -> its index in STATES (a dict: one lookup, not a scan)
for _i in range(len(STATES)):
    _STATE[STATES[_i]] = _i
MAX_SIGNALS = 16        # balls + pockets, a bound for a payload read off the line


class StatusError(ValueError):
    """A STATUS payload that is not one (the host refuses the frame, reason `status`)."""


def names(balls, pockets):
    """The signals' names in their order: the controller's indices (spin/controller.py) and the
    sensors' bytes of a STATUS."""
    return ["Z"] + ["BALL%d" % i for i in range(balls)] + ["POCKET%d" % i for i in range(pockets)] + ["VOID"]


def sensor_codes(sensors):
    """(balls, pockets, bytes of HEALTH indices) of a status' `sensors` map; ValueError when its
    names are not the controller's. The link keeps it until the map changes (Health makes a new
    one at each change)."""
    balls = pockets = 0
    for k in sensors:
        if k.startswith("BALL"):
            balls += 1
        elif k.startswith("POCKET"):
            pockets += 1
    order = names(balls, pockets)
    if len(order) != len(sensors) or balls + pockets > MAX_SIGNALS:
        raise ValueError("sensors %r: not the controller's signals" % (sorted(sensors),))
    codes = bytearray(len(order))
    for i in range(len(order)):
        codes[i] = HEALTH.index(sensors[order[i]])      # KeyError, ValueError: not a status
    return balls, pockets, bytes(codes)


def encode(st, at_ms, emitted, echo, codes=None):
    """The payload of status `st` (the controller's event) sent at link clock `at_ms`, with the
    last event number `emitted` and the ACK `echo` ([h, r] or None). `codes`: sensor_codes of
    its `sensors`, if already made."""
    if codes is not None:
        try:
            # The controller's status has every field: each read once, the mask all ones.
            last = st["last"]
            h, r = (0, 0) if echo is None else echo
            head = struct.pack(LAYOUT, 0x7F if echo is None else 0xFF, _STATE[st["state"]],
                               st["t"] or 0, st["spin"] or 0, st["rotor_rpm_x10"] or 0,
                               st["rotor_dir"] or 0, -1 if last is None else last,
                               1 if st["table_open"] else 0, at_ms, emitted, h, r, codes[0], codes[1])
            if "sensors" in st:
                return head + codes[2]
        except KeyError:
            pass                        # a field left out: the mask says which (below)
    g = st.get
    # one expression, not a loop over FIELDS: a Python turn costs the Pico's core ~10 us
    mask = (("t" in st) | ("spin" in st) << 1 | ("rotor_rpm_x10" in st) << 2
            | ("rotor_dir" in st) << 3 | ("last" in st) << 4 | ("table_open" in st) << 5
            | ("sensors" in st) << 6)
    if mask & 0x40:
        balls, pockets, sig = codes if codes is not None else sensor_codes(st["sensors"])
    else:
        balls = pockets = 0
        sig = b""
    last = g("last")
    if echo is None:
        h = r = 0
    else:
        mask |= 0x80
        h, r = echo
    head = struct.pack(LAYOUT, mask, STATES.index(g("state", "unknown")), g("t") or 0,
                       g("spin") or 0, g("rotor_rpm_x10") or 0, g("rotor_dir") or 0,
                       -1 if last is None else last, 1 if g("table_open") else 0, at_ms, emitted,
                       h, r, balls, pockets)
    return head + sig if sig else head


def decode(payload):
    """The status dict of a payload, or StatusError."""
    n = len(payload)
    if n < HEAD:
        raise StatusError("%d bytes, under %d" % (n, HEAD))
    (mask, state, t, spin, rpm, rdir, last, tab, at_ms, emitted, h, r, balls,
     pockets) = struct.unpack(LAYOUT, bytes(payload[:HEAD]))
    if state >= len(STATES):
        raise StatusError("state %d" % state)
    out = {"ev": "status", "state": STATES[state]}
    values = (t, spin, rpm, rdir, None if last == -1 else last, tab == 1)
    bit = 1
    for i in range(6):
        if mask & bit:
            out[FIELDS[i]] = values[i]
        bit <<= 1
    want = HEAD
    if mask & 0x40:
        if balls + pockets > MAX_SIGNALS:
            raise StatusError("%d signals" % (balls + pockets + 2))
        want += balls + pockets + 2
        if n != want:
            raise StatusError("%d bytes for %d signals" % (n, balls + pockets + 2))
        sensors = {}
        order = names(balls, pockets)
        for i in range(len(order)):
            c = payload[HEAD + i]
            if c >= len(HEALTH):
                raise StatusError("signal %s in state %d" % (order[i], c))
            sensors[order[i]] = HEALTH[c]
        out["sensors"] = sensors
    elif n != want:
        raise StatusError("%d bytes without signals" % n)
    out["at_ms"] = at_ms
    out["emitted"] = emitted
    out["echo"] = [h, r] if mask & 0x80 else None
    return out
