"""The STATUS payload: the controller's last status, stamped by the link, as JSON.

It goes twice a second, so on the Pico its cost counts: `json.dumps` of the whole status took
~0.9 ms of the core a frame. Between two statuses only the time, the rotor's speed and way and
the link's stamps change; the rest (state, spin, the sensors' health, last number, table open)
changes with the game. So the rest is serialised once per change, the changing fields are
formatted in, and a status of another shape (keys added or missing, a value not an int) is
serialised whole: the same JSON object either way, as the host reads it.
"""

import json

# the controller's status fields that change between two statuses (ints), and the rest
_MOVING = ("t", "rotor_rpm_x10", "rotor_dir")
_STEADY = ("state", "spin", "sensors", "last", "table_open")
_KEYS = len(_MOVING) + len(_STEADY) + 1        # and "ev"


class StatusJson:
    """`payload(status, at_ms, emitted, echo)`: the JSON bytes of `status` with the link's
    `at_ms`, `emitted` and `echo` (None or [host ms, wheel ms]) added; `status` is not changed."""

    def __init__(self):
        self._steady = None         # (state, spin, sensors, last, table_open) serialised in
        self._tail = ""             # '"state": ..., "table_open": ...}'

    def payload(self, st, at_ms, emitted, echo):
        t = st.get("t")
        rpm = st.get("rotor_rpm_x10")
        way = st.get("rotor_dir")
        if len(st) != _KEYS or st.get("ev") != "status" or type(t) is not int or type(rpm) is not int or type(way) is not int \
                or type(at_ms) is not int or type(emitted) is not int:
            return self._whole(st, at_ms, emitted, echo)
        steady = (st.get("state"), st.get("spin"), st.get("sensors"), st.get("last"),
                  st.get("table_open"))
        old = self._steady
        # the sensors' snapshot is made again only after a change (spin/health.py): `is`
        if old is None or old[2] is not steady[2] or old[0] != steady[0] or old[1] != steady[1] \
                or old[3] != steady[3] or old[4] != steady[4]:
            d = {}
            for i in range(len(_STEADY)):
                d[_STEADY[i]] = steady[i]
            self._tail = json.dumps(d)[1:]
            self._steady = steady
        if echo is None:
            e = "null"
        elif len(echo) == 2 and type(echo[0]) is int and type(echo[1]) is int:
            e = "[%d, %d]" % (echo[0], echo[1])
        else:
            return self._whole(st, at_ms, emitted, echo)
        return ('{"ev": "status", "t": %d, "rotor_rpm_x10": %d, "rotor_dir": %d, "at_ms": %d, '
                '"emitted": %d, "echo": %s, %s' % (t, rpm, way, at_ms, emitted, e,
                                                     self._tail)).encode()

    def _whole(self, st, at_ms, emitted, echo):
        out = {}
        out.update(st)      # a copy: the controller's event stays as it was told
        out["at_ms"] = at_ms
        out["emitted"] = emitted
        out["echo"] = echo
        return json.dumps(out).encode()
