"""Article 53 by property (CPython: hypothesis): over random sequences of the croupier's moves
(the rotor stopped and pushed either way, pushed the way it turns by 2 rpm or more (the firmware
sees a rise of 1 rpm and 1/32 of the speed), reversed without a stop, or
left alone) and coups (played to a result, or voided with the button), no two coups are paid
under one actuation, a paid coup's actuation turns opposite to the actuation before it, and
every coup the rule allows is paid with its number.

The truth is the croupier's own: the actuations as he made them, not as the controller saw them.
"""

import sys
from bisect import bisect_right
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parents[1] / "shared"))

from test_spin_kit import board, make  # noqa: E402
from cylindre.replay import MemoryStore  # noqa: E402
from cylindre.spin.geometry import WHEEL_ORDER  # noqa: E402

CPR = 1024
SLOT = 40_000_000            # one coup every 40 s: the croupier's move at the slot's start
LAUNCH = 3_000_000           # the ball launched 3 s into the slot
Z_COUNTS = 6                 # the index mark's width


def _cps(rpm):
    return int(rpm * CPR / 60)


class Rotor:
    """The rotor as (t_us, counts per second) segments, the count integrated (bisect: fast)."""

    def __init__(self):
        self.t = [0]
        self.v = [0]
        self.c = [100]

    def set(self, t, v):
        c = self.at(t)
        self.t.append(t)
        self.v.append(v)
        self.c.append(c)

    def at(self, t):
        i = bisect_right(self.t, t) - 1
        return self.c[i] + (t - self.t[i]) * self.v[i] // 1_000_000


moves = st.sampled_from(("stop_push", "push_along", "reverse", "none"))
coups = st.lists(st.tuples(moves, st.sampled_from((1, -1)), st.floats(12.0, 28.0), st.floats(2.0, 8.0),
                           st.sampled_from(("result", "result", "void")), st.integers(0, 36)),
                 min_size=1, max_size=4)


def play(plan):
    """Drive the controller through `plan`; returns (truth per coup, the controller's log)."""
    rot = Rotor()
    w, ctl, log = make(settings=board(status_us=5_000_000), store=MemoryStore())
    ctl.count = lambda: rot.at(w.now)
    acts = []                 # the croupier's actuations: [way]
    truth = []
    v = 0
    rests = []
    for k, (move, way, rpm, extra, outcome, number) in enumerate(plan):
        t0 = 1_000_000 + k * SLOT
        if v == 0 or move == "stop_push":
            rot.set(t0, 0)
            v = way * _cps(rpm)
            rot.set(t0 + 1_000_000, v)
            acts.append(way)
        elif move == "push_along":
            sign = 1 if v > 0 else -1
            v = sign * (abs(v) + _cps(extra))          # at most 52 rpm: under rotor_max_rpm_x10
            rot.set(t0 + 1_000_000, v)
            acts.append(sign)
        elif move == "reverse":
            v = -v
            rot.set(t0 + 1_000_000, v)
            acts.append(1 if v > 0 else -1)
        rotor_dir = 1 if v > 0 else -1
        t_launch = t0 + LAUNCH
        drop = w.add_ball(t_launch, -rotor_dir)
        if outcome == "void":
            w.add(t_launch + 6_000_000, "VOID", 1)
            w.add(t_launch + 6_300_000, "VOID", 0)
        else:
            rests.append((drop + 4_000_000, drop + 18_000_000, number))
        truth.append({"act": len(acts) - 1, "way": acts[-1], "before": acts[-2] if len(acts) > 1 else 0,
                      "outcome": outcome, "number": number})
    t_end = 1_000_000 + len(plan) * SLOT
    _pulses(w, rot, rests, ctl.s, t_end)
    ctl.boot(0)
    w.run(ctl, t_end)
    return truth, log


def _pulses(w, rot, rests, s, t_end):
    """The index over its mark, and POCKET0 over the resting ball's pocket."""
    z = False
    for t in range(1000, t_end, 1000):
        on = rot.at(t) % CPR < Z_COUNTS           # the mark spans a fixed angle, either way
        if on != z:
            w.add(t, "Z", 1 if on else 0)
            z = on
    for a, b, number in rests:
        k = WHEEL_ORDER.index(number)
        centre = ((s["pocket_sensors_deg"][0] - s["index_offset_deg"] - k * 360.0 / 37) % 360.0) * CPR / 360.0
        up = False
        for t in range(a, b, 1000):
            d = (rot.at(t) - centre + CPR / 2) % CPR - CPR / 2
            on = -11.4 <= d <= 11.4
            if on != up:
                w.add(t, "POCKET0", 1 if on else 0)
                up = on
        if up:
            w.add(b, "POCKET0", 0)


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(coups)
def test_no_two_coups_paid_under_one_actuation_and_each_opposite_to_the_one_before(plan):
    truth, log = play(plan)
    launches = log.of("launch")
    assert [e["spin"] for e in launches] == list(range(1, len(plan) + 1)), log.kinds()
    paid = {e["spin"]: e["number"] for e in log.of("result")}
    used = set()
    for i, tr in enumerate(truth):
        spin = i + 1
        lawful = tr["act"] not in used and tr["way"] != tr["before"]
        if spin in paid:
            # the property: a coup paid had an actuation of its own, opposite to the one before
            assert tr["act"] not in used, (plan, i, truth, log.kinds())
            assert tr["way"] != tr["before"], (plan, i, truth)
            assert tr["outcome"] == "result" and paid[spin] == tr["number"], (plan, i, paid)
            used.add(tr["act"])
        elif tr["outcome"] == "result":
            # and the rule voids nothing it allows
            assert not lawful, (plan, i, truth, [e for e in log.events if e.get("spin") == spin])
