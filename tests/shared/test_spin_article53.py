"""Article 53: the rotor reverses every spin (remembered across power loss), the ball goes against it.

"L'employé chargé de la manoeuvre de l'appareil doit obligatoirement actionner chaque fois le
cylindre dans un sens opposé au précédent" (seed 001): every coup played to a result has an
actuation of its own, and each actuation turns opposite to the one before.
"""

from test_spin_kit import DrivenRotor, board, make, valid_spin as _valid_spin
from cylindre.replay import MemoryStore
from cylindre.spin.geometry import WHEEL_ORDER


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

def _void_then_relaunch(rotor_after, ball_dir_after):
    """Spin 1 (the last launch before was counter-clockwise) is launched clockwise and voided
    with the button; the croupier then does `rotor_after` and relaunches."""
    store = MemoryStore({"v": 1, "spin": 4, "dir": -1, "in_spin": None, "last": 3, "hist": []})
    w, ctl, log = make(store=store)
    rot = DrivenRotor([(0, 341)] + rotor_after)            # 20 rpm clockwise (1024 counts a turn)
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    ctl.boot(0)
    rot.index(w, 36000000)
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
    rot = DrivenRotor([(0, 0), (3000000, 341), (16000000, 0), (20000000, -341)])
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    ctl.boot(0)
    rot.index(w, 36000000)
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
    rot = DrivenRotor([(0, 0), (3000000, 341), (10000000, 0), (13000000, 341)])
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    ctl.boot(0)
    rot.index(w, 30000000)
    w.add_ball(18000000, -1)
    w.run(ctl, 24000000)
    launches = log.of("launch")
    assert launches[0]["rotor_dir"] == 1 and launches[0]["violations"] == ["rotor_not_reversed"]


# Every coup its own actuation (issue 20): a croupier who plays a coup, then launches again
# without touching the rotor, or pushes it the way it already turns, breaks the rule.

_CW = 341                   # counts a second: 20 rpm clockwise (1024 counts a turn)


class _Drive:
    """A wheel the croupier drives: the rotor as [(t_us, counts per second)] segments in wheel
    time (the controller's time plus `offset`: a restart starts its clock again), its index and
    pocket pulses scanned every ms; balls from the kit's wheel."""

    def __init__(self, segments, store, settings=None, offset=0):
        self.rot = DrivenRotor(segments)
        self.off = offset
        self.w, self.ctl, self.log = make(settings=settings, store=store)
        self.ctl.count = lambda: self.rot.at(self.w.now + offset)
        self.rests = []

    def coup(self, t, ball_dir, number=None):
        """A ball launched at t; with `number`, it rests there 4 s after its drop, for 14 s."""
        drop = self.w.add_ball(t, ball_dir)
        if number is not None:
            self.rests.append((drop + 4000000, drop + 18000000, number))
        return drop

    def run(self, t_end, reset_cause="power"):
        w = self.w
        cpr = 1024
        s = self.ctl.s
        centre = {}
        for r in self.rests:
            k = WHEEL_ORDER.index(r[2])
            centre[r] = ((s["pocket_sensors_deg"][0] - s["index_offset_deg"] - k * 360.0 / 37)
                         % 360.0) * cpr / 360.0
        up = False
        z = False
        for t in range(1000, t_end, 1000):
            c = self.rot.at(t + self.off)
            on = c % cpr < 6                       # the index mark, 6 counts wide either way
            if on != z:
                w.add(t, "Z", 1 if on else 0)
                z = on
            on = False
            for r in self.rests:
                if r[0] <= t < r[1]:
                    d = (c - centre[r] + cpr / 2) % cpr - cpr / 2
                    on = -11.4 <= d <= 11.4          # the pocket, 4 degrees either side
            if on != up:
                w.add(t, "POCKET0", 1 if on else 0)
                up = on
        self.ctl.boot(0, reset_cause)
        w.run(self.ctl, t_end)
        return self.log


def _played_then(rotor_after, ball_dir_after, settings=None, number_after=None, t_end=46000000):
    """Coup 5 launched clockwise (the last launch before was counter-clockwise) and played to a
    result (17); the croupier then does `rotor_after` and launches again at 40 s."""
    store = MemoryStore({"v": 1, "spin": 4, "dir": -1, "pdir": 1, "in_spin": None, "last": 3,
                         "hist": []})
    d = _Drive([(0, 0), (1000000, _CW)] + rotor_after, store, settings)
    d.coup(3000000, -1, 17)
    d.coup(40000000, ball_dir_after, number_after)
    log = d.run(t_end)
    launches = log.of("launch")
    assert [e["spin"] for e in launches] == [5, 6], log.kinds()
    assert launches[0]["violations"] == [] and log.of("result")[0]["spin"] == 5, log.kinds()
    assert log.of("result")[0]["number"] == 17
    return launches[1], [e["reason"] for e in log.of("void")], log, store


def test_launched_again_under_the_actuation_of_a_coup_played_is_void():
    """The commonest way the rule is broken: the rotor left turning after a coup played, the
    ball launched again. Before issue 20 this coup was paid."""
    launch, voids, log, store = _played_then([], -1)
    assert launch["rotor_dir"] == 1 and launch["violations"] == ["rotor_not_actuated"], launch
    assert voids == ["rotor_not_actuated"]
    assert [e["spin"] for e in log.of("result")] == [5]


def test_pushed_the_same_way_without_a_stop_after_a_coup_played_is_void():
    """The rotor sped up (friction only slows it): an actuation, the same way as the one
    before it."""
    launch, voids, log, store = _played_then([(38000000, 420)], -1)
    assert launch["rotor_dir"] == 1 and launch["violations"] == ["rotor_not_reversed"], launch
    assert voids == ["rotor_not_reversed"]


def test_stopped_and_pushed_the_other_way_after_a_coup_played_is_paid():
    launch, voids, log, store = _played_then([(36000000, 0), (37000000, -_CW)], 1, number_after=8,
                                             t_end=80000000)
    assert launch["rotor_dir"] == -1 and launch["violations"] == [] and voids == [], log.kinds()
    assert [(e["spin"], e["number"]) for e in log.of("result")] == [(5, 17), (6, 8)]
    assert store.record["dir"] == -1 and store.record["pdir"] == 1 and store.record["used"] is True


def test_reversed_without_a_stop_after_a_coup_played_is_valid():
    launch, voids, log, store = _played_then([(37000000, -_CW)], 1)
    assert launch["rotor_dir"] == -1 and launch["violations"] == [] and voids == [], log.kinds()


def test_pushed_the_same_way_without_a_stop_after_a_void_is_void():
    """Issue 13 keeps a relaunch under a voided coup's actuation valid; pushing the rotor the
    way it turns before it is an actuation the same way as that one, so the rule is broken."""
    launch, voids = _void_then_relaunch([(20000000, 430)], -1)
    assert launch["rotor_dir"] == 1 and launch["violations"] == ["rotor_not_reversed"]
    assert voids == ["rotor_not_reversed"]


def test_a_coup_played_under_the_actuation_is_remembered_across_a_restart():
    """Report only (`void_rotor_not_reversed` 0), so that a coup can be in progress under an
    actuation already played: the power is cut in it, the rotor keeps turning, and the launch
    after the restart is still under the actuation of coup 5, played (flash: `used`)."""
    s = board(void_rotor_not_reversed=0, status_us=5000000)
    launch, voids, log, store = _played_then([], -1, settings=s, t_end=42000000)
    assert launch["violations"] == ["rotor_not_actuated"] and voids == []
    assert store.record["in_spin"] == 6 and store.record["used"] is True
    d = _Drive([(0, 0), (1000000, _CW)], store, s, offset=42000000)
    d.coup(3000000, -1)
    log = d.run(8000000)
    assert [e["reason"] for e in log.of("void")] == ["restart"], log.kinds()
    launches = log.of("launch")
    assert [e["spin"] for e in launches] == [7], log.kinds()
    assert launches[0]["violations"] == ["rotor_not_actuated"], launches
