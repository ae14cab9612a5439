"""The controller's time origin (spin/origin.py): moved forward at every idle moment, the
controller says exactly what it says with its clock from boot, whatever it kept across the move
(a sensor held active, the rotor's speed samples, the status deadline). On both runtimes; the
simulator's feeds, faults included, are in tests/firmware/test_firmware_origin.py.

MicroPython subset."""

from cylindre.spin.origin import OLDEST_US, back
from test_spin_kit import board, make


def _run(w, ctl, t_end, at=None, step=1, tick_us=10000):
    """Feed the wheel's changes as the Pico's shell does: controller time is feed time less the
    origin, moved (`Controller.rebase`) after each tick when `at` is given. Returns the moves."""
    ev = sorted(w.events)
    w.events = []
    i = 0
    n = len(ev)
    t = 0
    origin = 0
    moves = 0
    while t <= t_end:
        while i < n and ev[i][0] <= t:
            w.now = ev[i][0]
            ctl.signal(ev[i][0] - origin, ev[i][1], ev[i][2])
            i += 1
        w.now = t
        ctl.tick(t - origin)
        if at is not None:
            d = ctl.rebase(at, step)
            if d:
                origin += d
                moves += 1
        t += tick_us
    return moves


def _both(build, t_end, step, stuck_us=1000000):
    """The events of the same wheel run from boot and with the origin moved at every idle tick.
    The kit's rotor never stops between coups: Article 53 reported only, so every coup plays."""
    w, ctl, log = make(board(status_us=5000000, stuck_us=stuck_us, void_rotor_not_reversed=0))
    ctl.boot(0)
    build(w)
    _run(w, ctl, t_end)
    w2, ctl2, log2 = make(board(status_us=5000000, stuck_us=stuck_us, void_rotor_not_reversed=0))
    ctl2.boot(0)
    build(w2)
    moves = _run(w2, ctl2, t_end, at=1, step=step)
    return log.events, log2.events, moves, ctl2


def _two_spins(w):
    w.add_index(0, 80000000)
    w.spin(3000000, -1, 17)
    w.spin(45000000, -1, 4)


def test_two_spins_with_the_origin_moved_at_every_idle_tick():
    want, got, moves, ctl = _both(_two_spins, 80000000, 1)
    assert [e["ev"] for e in want if e["ev"] in ("launch", "result")] == ["launch", "result"] * 2
    assert moves > 1000 and got == want
    assert ctl.epoch > 70000000 and ctl.t < 10000      # times since the origin, small


def _held(w):
    """Between spins, a ball sensor held active for 8 s and the void button for 52 s: both
    stuck (stuck_us 5 s; the button 10 times that). The ball sensor's one pass is off the track
    3 s later (no lap came): from then on the origin moves while it is held."""
    w.add_index(0, 110000000)
    w.add(4000000, "BALL0", 1)
    w.add(12000000, "BALL0", 0)
    w.add(15000000, "VOID", 1)
    w.add(67000000, "VOID", 0)
    w.spin(75000000, -1, 26)


def test_sensors_held_across_moves_of_the_origin_are_stuck_at_the_same_instant():
    want, got, moves, _ = _both(_held, 110000000, 2000000, stuck_us=5000000)
    faults = [(e["code"], e["signal"], e["t"]) for e in want if e["ev"] == "fault"]
    # stuck once held over stuck_us, told at the next of the checks made every 500 ms
    assert [f[:2] for f in faults] == [("sensor_stuck", "BALL0"), ("sensor_stuck", "VOID")]
    assert 9000000 < faults[0][2] <= 9510000 and 65000000 < faults[1][2] <= 65510000, faults
    assert [e["ev"] for e in want if e["ev"] in ("launch", "result")] == ["launch", "result"]
    assert moves > 30 and got == want


def test_a_time_kept_too_long_is_held_at_the_oldest():
    assert back(5000, 2000) == 3000 and back(-1, 10) == -11
    assert back(OLDEST_US + 10, 20) == OLDEST_US and back(OLDEST_US, 2000000) == OLDEST_US
