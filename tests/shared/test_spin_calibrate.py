"""The calibration routine on the test wheel: ball resting in a known pocket, rotor turning."""

from cylindre.spin.calibrate import Calibration
from cylindre.spin.controller import Controller
from test_spin_kit import Wheel, Log, board


def _run(true_offset, true_sensors, number, rpm, nominal):
    s = board(index_offset_deg=true_offset, pocket_sensors_deg=true_sensors)
    w = Wheel(s, rotor_rpm=rpm)
    w.add_index(0, 20000000)
    w.add_rest(500000, 20000000, number)
    cal = Calibration(1024, nominal, number=number, count=w.count)
    for t, name, level in sorted(w.events):
        w.now = t
        cal.signal(t, name, level)
    return cal


def test_offset_and_angles_are_measured():
    cal = _run(23.0, [60.0, 181.5, 299.0], 17, 9.0, [60.0, 180.0, 300.0])
    r = cal.result()
    assert abs(r["index_offset_deg"] - 23.0) < 0.6, r
    assert abs(r["pocket_sensors_deg"][1] - 181.5) < 0.6 and abs(r["pocket_sensors_deg"][2] - 299.0) < 0.6
    assert r["pocket_sensors_deg"][0] == 60.0        # the reference keeps its measured angle
    assert r["spread_deg"] < 0.6 and min(r["passes"]) >= 2


def test_counter_clockwise_and_calibrated_wheel_names_the_pocket():
    cal = _run(340.0, [200.0], 0, -12.0, [200.0])
    r = cal.result()
    assert abs((r["index_offset_deg"] - 340.0 + 180) % 360 - 180) < 0.6, r
    # the controller with the measured offset names the resting pocket right
    s = board(index_offset_deg=r["index_offset_deg"], pocket_sensors_deg=r["pocket_sensors_deg"])
    w = Wheel(board(index_offset_deg=340.0, pocket_sensors_deg=[200.0]), rotor_rpm=-12.0)
    log = Log()
    ctl = Controller(s, log, count=w.count)
    ctl.boot(0)
    w.add_index(0, 60000000)
    drop = w.add_ball(3000000, 1)
    w.add_rest(drop + 3000000, drop + 20000000, 0)
    w.run(ctl, drop + 20000000)
    assert [e["number"] for e in log.of("result")] == [0], log.kinds()


def test_too_few_passes_is_a_clear_message():
    cal = _run(23.0, [60.0], 5, 9.0, [60.0])
    assert "turn the rotor" in Calibration(1024, [60.0], number=5, count=lambda: 0).result()
    try:
        Calibration(1024, [60.0], number=37)
    except ValueError as e:
        assert "0-36" in str(e)
    else:
        raise AssertionError("pocket 37 accepted")
    assert cal.result(passes=100).startswith("POCKET0")
