"""The STATUS payload (cylindre.link.status): whatever part was serialised before and whatever
was formatted in, the host reads the same JSON object as a `json.dumps` of the whole status
with the link's stamps; a status of another shape is serialised whole.

MicroPython subset: plain asserts, a linear congruential generator instead of `random`."""

import json

from cylindre.link.status import StatusJson


class Lcg:
    def __init__(self, seed):
        self.n = seed

    def below(self, k):
        self.n = (self.n * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.n >> 8) % k


def _status(r, sensors):
    return {"ev": "status", "t": r.below(2 ** 29) - (r.below(2) * 2 ** 28),
            "state": ("idle", "ball_in_rim", "no_more_bets", "result", "fault", "é")[r.below(6)],
            "spin": r.below(5) if r.below(4) else None,
            "rotor_rpm_x10": r.below(600), "rotor_dir": r.below(3) - 1,
            "sensors": sensors, "last": r.below(37) if r.below(3) else None,
            "table_open": r.below(2) == 1}


def _whole(st, at_ms, emitted, echo):
    d = dict(st)
    d["at_ms"] = at_ms
    d["emitted"] = emitted
    d["echo"] = echo
    return d


def test_every_status_reads_as_the_whole_status_with_the_links_stamps():
    r = Lcg(7)
    sj = StatusJson()
    snaps = [{"Z": "ok", "BALL0": "ok", "BALL1": "silent", "POCKET0": "ok"},
             {"Z": "stuck", "BALL0": "ok", "BALL1": "ok", "POCKET0": "dead"}, {}]
    sensors = snaps[0]
    for i in range(400):
        if r.below(10) == 0:
            sensors = snaps[r.below(3)]          # a change of health: a new snapshot
        st = _status(r, sensors)
        keep = dict(st)
        echo = None if r.below(3) == 0 else [r.below(2 ** 30), r.below(2 ** 30)]
        at_ms, emitted = r.below(2 ** 30), r.below(10000) - 1
        got = json.loads(sj.payload(st, at_ms, emitted, echo))
        assert got == _whole(st, at_ms, emitted, echo), (i, got)
        assert st == keep                        # the controller's event is not changed


def test_a_steady_field_that_changes_is_read_at_once():
    sj = StatusJson()
    sensors = {"Z": "ok"}
    st = {"ev": "status", "t": 1, "state": "idle", "spin": 3, "rotor_rpm_x10": 0, "rotor_dir": 0,
          "sensors": sensors, "last": 17, "table_open": False}
    assert json.loads(sj.payload(st, 5, 4, None))["table_open"] is False
    for k, v in (("table_open", True), ("state", "ball_in_rim"), ("spin", 4), ("last", 0),
                 ("last", None), ("sensors", {"Z": "stuck"})):
        st = dict(st)
        st[k] = v
        assert json.loads(sj.payload(st, 6, 4, None)) == _whole(st, 6, 4, None), k


def test_a_status_of_another_shape_is_serialised_whole():
    sj = StatusJson()
    base = {"ev": "status", "t": 1, "state": "idle", "spin": 3, "rotor_rpm_x10": 0,
            "rotor_dir": 0, "sensors": {"Z": "ok"}, "last": 17, "table_open": False}
    odd = [{"ev": "status", "state": "unknown"},           # the link's own, before any status
           dict(base, extra=1), dict(base, t=1.5), dict(base, rotor_rpm_x10=None),
           dict(base, ev="other")]
    for st in odd:
        assert json.loads(sj.payload(st, 9, 2, [1, 2])) == _whole(st, 9, 2, [1, 2])
    assert json.loads(sj.payload(base, 9, 2, [1, 2.5])) == _whole(base, 9, 2, [1, 2.5])
    assert json.loads(sj.payload(base, 9, 2, [1, 2])) == _whole(base, 9, 2, [1, 2])
