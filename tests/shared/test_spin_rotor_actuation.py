"""Each actuation of the rotor is counted once (Article 53 reads the way of each one).

A rotor that slows to a stop, or is stopped by hand and pushed the other way, shows for about a
second two pictures: the last 200 ms at rest, the 1 s speed window still turning the old way.
That second must not count actuations of its own: each would shift the way of "the previous
actuation" (the rule's reference), clear the coup played under it, and write the flash.
"""

from cylindre.spin.rotor import Rotor

CPR = 1024


def _drive(segments, until_us):
    """Sample a rotor every 100 ms as the controller does; `segments` are (t_us, counts per
    second) pieces with linear change between their speeds (a hand does not stop a rotor dead).
    Returns the rotor and the actuations counted as (t_us, way)."""
    r = Rotor(CPR, 2)
    seen = []
    count = 100.0
    t = 0
    while t <= until_us:
        r.sample(t, int(count))
        if r.act > len(seen):
            seen.append((t, r.act_dir))
        # integrate the speed over the next 100 ms, 1 ms at a time
        for _ in range(100):
            count += _speed(segments, t) / 1000.0
            t += 1000
    return r, seen


def _speed(segments, t):
    for i in range(len(segments) - 1):
        t0, v0 = segments[i]
        t1, v1 = segments[i + 1]
        if t0 <= t < t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return segments[-1][1]


def test_a_rotor_that_slows_to_a_stop_is_not_actuated_again():
    # 20 rpm clockwise, slowed by hand to a stop over 0.6 s, then left at rest
    r, seen = _drive([(0, 341), (3000000, 341), (3600000, 0), (9000000, 0)], 9000000)
    assert [w for _, w in seen] == [1], seen
    assert r.act == 1 and r.act_dir == 1


def test_stopped_then_pushed_the_other_way_is_one_actuation():
    # clockwise, stopped (0.6 s), at rest 1.5 s, pushed counter-clockwise to 20 rpm in 0.3 s
    r, seen = _drive([(0, 341), (3000000, 341), (3600000, 0), (5100000, 0), (5400000, -341),
                      (12000000, -341)], 12000000)
    assert [w for _, w in seen] == [1, -1], seen
    assert r.act == 2 and r.act_dir == -1 and r.prev_dir == 1


def test_reversed_without_a_rest_is_one_actuation():
    # clockwise, braked through zero and pushed counter-clockwise in one move (0.5 s)
    r, seen = _drive([(0, 341), (3000000, 341), (3250000, 0), (3500000, -341), (10000000, -341)],
                     10000000)
    assert [w for _, w in seen] == [1, -1], seen
    assert r.act == 2 and r.prev_dir == 1


def test_stopped_and_pushed_the_same_way_is_one_forbidden_actuation():
    r, seen = _drive([(0, 341), (3000000, 341), (3600000, 0), (5100000, 0), (5400000, 341),
                      (12000000, 341)], 12000000)
    assert [w for _, w in seen] == [1, 1], seen
    assert r.act_dir == 1 and r.prev_dir == 1
