"""Misspins from the launch and the rotor: few laps, slow launch, slow rotor, closed table; a ccw rotor."""

from test_spin_kit import board, make, valid_spin as _valid_spin


def test_fewer_than_four_laps_is_void():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 30000000)
    drop = w.add_ball(3000000, -1, lap0_us=650000, decel=0.4)
    w.add_rest(drop + 3000000, drop + 14000000, 9)
    w.run(ctl, 30000000)
    v = log.of("void")
    assert [e["reason"] for e in v] == ["few_laps"], log.events
    assert log.of("drop")[0]["laps"] < 4
    assert not log.of("result")


def test_min_laps_is_a_setting():
    w, ctl, log = make(settings=board(min_laps=20))
    ctl.boot(0)
    w.add_index(0, 45000000)
    w.spin(3000000, -1, 4)
    w.run(ctl, 45000000)
    assert [e["reason"] for e in log.of("void")] == ["few_laps"]


def test_slow_launch_is_void():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 30000000)
    drop = w.add_ball(3000000, -1, lap0_us=1200000, decel=0.02, drop_lap_us=2300000)
    w.run(ctl, 12000000)
    assert [e["reason"] for e in log.of("void")] == ["launch_slow"], log.events


def test_slow_or_stopped_rotor_is_void():
    for rpm in (0.0, 3.0):
        w, ctl, log, drop, rest = _valid_spin(rpm=rpm)
        assert [e["reason"] for e in log.of("void")] == ["rotor_slow"], (rpm, log.events)
        assert not log.of("result")


def test_closed_table_takes_no_spin():
    w, ctl, log = make()
    ctl.boot(0)
    ctl.close_table(0)
    w.add_index(0, 40000000)
    w.spin(3000000, -1, 17)
    w.run(ctl, 40000000)
    assert log.kinds() == ["boot"], log.kinds()
    assert log.of("status")[-1]["table_open"] is False


def test_every_number_is_named_from_the_encoder():
    for number in (0, 26, 5):
        w, ctl, log, drop, rest = _valid_spin(number=number, rpm=-25.0, ball_dir=1)
        r = log.of("result")
        assert r and r[0]["number"] == number, (number, log.kinds())
