"""Article 53: the rotor reverses every spin (remembered across power loss), the ball goes against it."""

from test_spin_kit import Wheel, Log, board, make, valid_spin as _valid_spin
from cylindre.spin.controller import Controller
from cylindre.replay import MemoryStore


def test_rotor_must_reverse_from_the_previous_spin_across_a_power_loss():
    store = MemoryStore()
    _valid_spin(rpm=20.0, ball_dir=-1, store=store)
    assert store.record["dir"] == 1 and store.record["in_spin"] is None
    # Power back: same rotor direction again is a violation (Article 53).
    w, ctl, log, drop, rest = _valid_spin(rpm=20.0, ball_dir=-1, store=store)
    v = log.of("void")
    assert [e["reason"] for e in v] == ["rotor_not_reversed"], log.events
    assert log.of("launch")[0]["violations"] == ["rotor_not_reversed"]
    assert log.of("launch")[0]["spin"] == 2
    assert not log.of("result")
    # Reversed: valid, spin 3.
    w, ctl, log, drop, rest = _valid_spin(rpm=-20.0, ball_dir=1, store=store)
    assert log.of("result")[0]["spin"] == 3
    assert store.record["dir"] == -1


def test_rotor_not_reversed_can_be_report_only():
    store = MemoryStore({"v": 1, "spin": 7, "dir": 1, "in_spin": None, "last": 3, "hist": []})
    s = board(void_rotor_not_reversed=0)
    w, ctl, log, drop, rest = _valid_spin(store=store, settings=s)
    assert log.of("launch")[0]["violations"] == ["rotor_not_reversed"]
    assert log.of("result")[0]["spin"] == 8


def test_ball_same_way_as_rotor_is_void():
    w, ctl, log, drop, rest = _valid_spin(rpm=20.0, ball_dir=1)
    assert [e["reason"] for e in log.of("void")] == ["same_direction"]
    assert not log.of("result") and not log.of("rnvp")


# Article 53 read by actuation (issue 13): "actionner chaque fois le cylindre dans un sens
# opposé au précédent" is about each actuation of the rotor, played or voided.

class _Rotor:
    """A rotor the croupier drives: [(t_us, counts per second)] segments, count integrated."""

    def __init__(self, segments):
        self.seg = segments

    def at(self, t):
        c = 100
        for i in range(len(self.seg)):
            t0, v = self.seg[i]
            t1 = self.seg[i + 1][0] if i + 1 < len(self.seg) else t
            if t <= t0:
                break
            c += (min(t, t1) - t0) * v // 1000000
        return c


def _void_then_relaunch(rotor_after, ball_dir_after):
    """Spin 1 (the last launch before was counter-clockwise) is launched clockwise and voided
    with the button; the croupier then does `rotor_after` and relaunches."""
    store = MemoryStore({"v": 1, "spin": 4, "dir": -1, "in_spin": None, "last": 3, "hist": []})
    w, ctl, log = make(store=store)
    rot = _Rotor([(0, 341)] + rotor_after)            # 20 rpm clockwise (1024 counts a turn)
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    ctl.boot(0)
    prev = rot.at(0)
    for t in range(1000, 36000000, 1000):            # the index where the count crosses a turn
        c = rot.at(t)
        if c // 1024 != prev // 1024:
            w.add(t, "Z", 1)
            w.add(t + 15000, "Z", 0)
        prev = c
    w.add_ball(2000000, -1)
    w.add(6000000, "VOID", 1)
    w.add(6300000, "VOID", 0)
    w.add_ball(30000000, ball_dir_after)
    w.run(ctl, 36000000)
    launches = log.of("launch")
    assert [e["spin"] for e in launches] == [5, 6], log.kinds()
    assert launches[0]["violations"] == [] and log.of("void")[0]["reason"] == "void_button"
    return launches[1], [e["reason"] for e in log.of("void")[1:]]


def test_a_relaunch_after_a_void_with_the_rotor_still_turning_is_no_actuation():
    launch, voids = _void_then_relaunch([], -1)
    assert launch["rotor_dir"] == 1 and launch["violations"] == [] and voids == []


def test_stopped_and_started_the_other_way_after_a_void_is_valid():
    launch, voids = _void_then_relaunch([(20000000, 0), (24000000, -341)], 1)
    assert launch["rotor_dir"] == -1 and launch["violations"] == [] and voids == []


def test_stopped_and_started_the_same_way_as_the_voided_spin_breaks_the_rule():
    launch, voids = _void_then_relaunch([(20000000, 0), (24000000, 341)], -1)
    assert launch["rotor_dir"] == 1 and launch["violations"] == ["rotor_not_reversed"]
    assert voids == ["rotor_not_reversed"]


def test_an_actuation_whose_throw_was_missed_still_counts():
    """Issue 13's noisy run: a throw the sensors never saw (no launch) under a clockwise
    actuation, then the rotor stopped and pushed counter-clockwise and the ball launched. The
    rule compares with the rotor's own previous actuation (clockwise), not the last launch
    (counter-clockwise, from flash): valid."""
    store = MemoryStore({"v": 1, "spin": 4, "dir": -1, "pdir": 1, "in_spin": None, "last": 3,
                         "hist": []})
    w, ctl, log = make(store=store)
    rot = _Rotor([(0, 0), (3000000, 341), (16000000, 0), (20000000, -341)])
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    ctl.boot(0)
    prev = rot.at(0)
    for t in range(1000, 36000000, 1000):
        c = rot.at(t)
        if c // 1024 != prev // 1024:
            w.add(t, "Z", 1)
            w.add(t + 15000, "Z", 0)
        prev = c
    w.add_ball(26000000, 1)
    w.run(ctl, 34000000)
    launches = log.of("launch")
    assert [e["spin"] for e in launches] == [5], log.kinds()
    assert launches[0]["rotor_dir"] == -1 and launches[0]["violations"] == [], launches
    assert [e["reason"] for e in log.of("void")] == [], log.of("void")
    assert store.record["dir"] == -1 and store.record["pdir"] == 1


def test_the_rotor_remembers_its_actuations_not_the_launches():
    """Stopped and pushed clockwise twice in a row with no launch between: the second push is
    the same way as the one before it, so a launch under it breaks the rule."""
    store = MemoryStore({"v": 1, "spin": 4, "dir": -1, "pdir": 1, "in_spin": None, "last": 3,
                         "hist": []})
    w, ctl, log = make(store=store)
    rot = _Rotor([(0, 0), (3000000, 341), (10000000, 0), (13000000, 341)])
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    ctl.boot(0)
    prev = rot.at(0)
    for t in range(1000, 30000000, 1000):
        c = rot.at(t)
        if c // 1024 != prev // 1024:
            w.add(t, "Z", 1)
            w.add(t + 15000, "Z", 0)
        prev = c
    w.add_ball(18000000, -1)
    w.run(ctl, 24000000)
    launches = log.of("launch")
    assert launches[0]["rotor_dir"] == 1 and launches[0]["violations"] == ["rotor_not_reversed"]
