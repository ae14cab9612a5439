"""bench rest: the confirmation rules against the simulator's bounce, sighting by sighting."""

from host_tools.bench import rest

SENSORS = [90.0, 210.0, 330.0]
RPM = 20.0                      # a turn in 3 s, a pocket over a sensor for 49 ms


def test_a_resting_ball_is_seen_by_each_sensor_once_a_turn():
    sg = rest.sightings([(0.0, 10.0, 5)], RPM, SENSORS, theta0=0.0)
    assert all(s[2] == 5 and s[3] for s in sg)
    by_sensor = [[s[0] for s in sg if s[1] == j] for j in range(3)]
    for times in by_sensor:
        assert len(times) == 3 or len(times) == 4
        assert all(abs(b - a - 3.0) < 1e-9 for a, b in zip(times, times[1:]))
    # the sensors 120 degrees apart see the pocket a third of a turn apart
    assert abs(sorted(s[0] for s in sg)[1] - sorted(s[0] for s in sg)[0] - 1.0) < 1e-9


def test_a_short_sit_over_a_sensor_is_not_a_sighting():
    sg = rest.sightings([(0.0, 10.0, 5)], RPM, SENSORS, theta0=0.0)
    t = sg[0][0]                            # the pocket's first pass over a sensor
    w = 0.6 * rest.PITCH / (6.0 * RPM)      # the sensor's window, seconds
    inside = rest.sightings([(t - w / 2 - 0.01, t + w / 2 + 0.01, 5)], RPM, SENSORS, 0.0)
    cut = rest.sightings([(t + 0.1 * w, t + w / 2 + 0.01, 5)], RPM, SENSORS, 0.0)
    assert [s[3] for s in inside] == [True]
    assert [s[3] for s in cut] == [False]   # the ball there for 40 % of the window: hopping


def test_a_hop_and_back_fools_two_sensors_but_not_three():
    sg0 = rest.sightings([(0.0, 10.0, 5)], RPM, SENSORS, theta0=0.0)
    t1, t2 = sg0[0][0], sg0[1][0]           # pocket 5 over the first two sensors, 1 s apart
    sits = [(t1 - 0.1, t1 + 0.1, 5), (t1 + 0.3, t1 + 0.45, 6), (t2 - 0.1, t2 + 0.1, 5), (t2 + 0.3, 30.0, 7)]
    sg = rest.sightings(sits, RPM, SENSORS, 0.0)
    m2 = rest.confirm(sg, 2, 2)
    m3 = rest.confirm(sg, 3, 3)
    assert sg[m2][2] == 5                    # two agreeing sightings from two sensors: wrong
    assert sg[m3][2] == 7                    # all three sensors: the resting pocket


def test_measure_counts_every_spin_once():
    res, stats = rest.measure(300, SENSORS, [(3, 3), (2, 2)], seed=4)
    for r in res.values():
        assert r["wrong"] + r["none"] + len(r["lat"]) == 300
        assert min(r["lat"]) > 0
    assert stats["longest_bouncing_sit_s"] <= 0.2 + 1e-9
    assert 0.5 < stats["drop_to_rest_s"]["median"] < 5.0


def test_the_pocket_passing_a_sensor_empty_breaks_a_strict_run():
    sg0 = rest.sightings([(0.0, 10.0, 5)], RPM, SENSORS, theta0=0.0)
    t1, t2, t3 = sg0[0][0], sg0[1][0], sg0[2][0]
    # the ball sits in 5 at the first and third passes of pocket 5, in flight at the second
    sits = [(t1 - 0.1, t1 + 0.1, 5), (t3 - 0.1, t3 + 0.1, 5), (t3 + 0.3, 30.0, 7)]
    sg = rest.sightings(sits, RPM, SENSORS, 0.0, empties=True)
    assert any(s[3] is None and s[2] == 5 and abs(s[0] - t2) < 1e-9 for s in sg)
    assert sg[rest.confirm(sg, 2, 2)][2] == 5            # two agreeing sightings: wrong
    assert sg[rest.confirm(sg, 2, 2, strict=True)][2] == 7


def test_a_span_outlasts_a_ping_pong():
    sg0 = rest.sightings([(0.0, 10.0, 5)], RPM, SENSORS, theta0=0.0)
    t1, t2, t3 = sg0[0][0], sg0[1][0], sg0[2][0]
    sits = [(t1 - 0.1, t1 + 0.1, 5), (t2 - 0.1, t2 + 0.1, 5), (t2 + 0.3, 30.0, 7)]
    sg = rest.sightings(sits, RPM, SENSORS, 0.0, empties=True)
    assert sg[rest.confirm(sg, 2, 2, strict=True)][2] == 5
    m = rest.confirm(sg, 2, 2, strict=True, span=(t2 - t1) + 0.5)
    assert sg[m][2] == 7 and sg[m][0] - t2 > 0.5


def test_false_runs_are_the_pockets_the_ball_left():
    sg0 = rest.sightings([(0.0, 10.0, 5)], RPM, SENSORS, theta0=0.0)
    t1, t2 = sg0[0][0], sg0[1][0]
    sits = [(t1 - 0.1, t1 + 0.1, 5), (t2 - 0.1, t2 + 0.1, 5), (t2 + 0.3, 30.0, 7)]
    sg = rest.sightings(sits, RPM, SENSORS, 0.0, empties=True)
    assert rest.false_spans(sg, 7) == [t2 - t1]


def test_rules_read_from_the_command_line():
    assert rest._rule("3:3") == (3, 3, 0, 0)
    assert rest._rule("2:1:s:3000") == (2, 1, 1, 3000)
    assert rest._name((2, 1, 1, 3000)) == "2:1:s:3000"
