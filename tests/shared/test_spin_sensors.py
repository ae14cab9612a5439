"""Sensor faults: the encoder against the index, stuck and silent sensors; each voids the spin."""

from test_spin_kit import board, make


def _reasons(log):
    return [e["reason"] for e in log.of("void")]


def _faults(log):
    return [(e["code"], e["signal"]) for e in log.of("fault")]


def test_index_disagreeing_with_the_count_is_a_fault_and_voids():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 60000000)
    drop, rest = w.spin(3000000, -1, 17)
    t = 9000000 + 750000      # a quarter turn after an index at 20 rpm: a spurious index
    w.add(t, "Z", 1)
    w.add(t + 5000, "Z", 0)
    w.run(ctl, 40000000)
    assert ("encoder_mismatch", "Z") in _faults(log), log.events
    assert _reasons(log) == ["encoder_mismatch"]
    assert not log.of("result")


def test_stuck_ball_sensor_is_a_fault_and_voids():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 40000000)
    w.add_ball(3000000, -1)
    w.events = [e for e in w.events if not (e[1] == "BALL1" and e[0] > 7000000)]
    w.add(7000000, "BALL1", 1)
    w.run(ctl, 20000000)
    assert ("sensor_stuck", "BALL1") in _faults(log)
    assert _reasons(log) == ["sensor_fault"]
    assert log.of("status")[-1]["sensors"]["BALL1"] == "stuck"


def test_silent_ball_sensor_cannot_give_a_direction():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 40000000)
    w.add_ball(3000000, -1, skip_sensor=1)
    w.run(ctl, 10000000)
    assert ("sensor_silent", "BALL1") in _faults(log)
    assert _reasons(log) == ["sensor_fault"]


def test_ball_sensor_going_silent_mid_spin_voids():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 40000000)
    w.add_ball(3000000, -1)
    w.events = [e for e in w.events if not (e[1] == "BALL0" and e[0] > 8000000)]
    w.run(ctl, 20000000)
    assert ("sensor_silent", "BALL0") in _faults(log), log.events
    assert _reasons(log) == ["sensor_fault"]


def test_silent_index_is_a_fault():
    w, ctl, log = make()
    ctl.boot(0)
    w.run(ctl, 8000000)     # 20 rpm: 2.7 turns and no index
    assert _faults(log) == [("sensor_silent", "Z")]
    assert log.of("status")[-1]["state"] == "fault"


def test_stuck_pocket_sensor_is_a_fault():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 8000000)
    w.add(2000000, "POCKET0", 1)
    w.run(ctl, 8000000)
    assert _faults(log) == [("sensor_stuck", "POCKET0")]


def test_silent_pocket_sensor_among_three():
    s = board(pocket_sensors_deg=[60.0, 180.0, 300.0], confirm_sightings=3, confirm_sensors=3)
    w, ctl, log = make(settings=s, rpm=15.0)
    ctl.boot(0)
    w.add_index(0, 60000000)
    drop = w.add_ball(3000000, -1)
    w.add_rest(drop + 3000000, drop + 30000000, 17, skip_sensor=2)
    w.run(ctl, drop + 30000000)
    assert ("sensor_silent", "POCKET2") in _faults(log), log.events
    assert _reasons(log) == ["sensor_fault"]
    assert not log.of("result")


def test_two_spurious_pulses_between_spins_are_no_launch():
    """Two ball sensors 6 degrees apart pulsing 60 ms apart: no ball at a launch's pace (at most
    17 ms at 1 s a lap) runs between them that slowly, and nothing comes round again. Before,
    that made a launch (void same_direction) ahead of the real spin."""
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 45000000)
    for t, name in ((2000000, "BALL1"), (2060000, "BALL0")):
        w.add(t, name, 1)
        w.add(t + 1500, name, 0)
    drop, rest = w.spin(6000000, -1, 17)
    w.run(ctl, 45000000)
    assert log.kinds() == ["boot", "launch", "rnvp", "drop", "result"], log.events
    assert log.of("launch")[0]["spin"] == 1 and log.of("result")[0]["number"] == 17


def test_a_ball_seen_once_at_launch_pace_then_gone_is_a_misspin():
    """The same two pulses 10 ms apart are a ball at a launch's pace: a launch, void."""
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 20000000)
    for t, name in ((2000000, "BALL1"), (2010000, "BALL0")):
        w.add(t, name, 1)
        w.add(t + 1500, name, 0)
    w.run(ctl, 20000000)
    assert [e["lap_us"] for e in log.of("launch")] == [0], log.events
    assert len(log.of("void")) == 1 and not log.of("result")


def test_the_count_of_signals_not_ok_follows_every_change():
    """`Health.nbad` (what the status asks) is the number of names `bad()` lists, whatever the
    order of the changes: a pseudo-random walk over every signal and state (MicroPython too)."""
    from cylindre.spin.health import Health, OK, STUCK, SILENT
    h = Health(["Z", "BALL0", "BALL1", "POCKET0", "VOID"])
    states = (OK, STUCK, SILENT)
    x = 12345
    for _ in range(400):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        h.set(x % 5, states[(x >> 8) % 3])
        assert h.nbad == len(h.bad())
    for i in range(5):
        h.set(i, OK)
    assert h.nbad == 0 and h.bad() == []
