"""The simulated wheel against WHEEL.md's figures and against its own truth."""

import math

import numpy as np
import pytest

from cylindre.spin.geometry import WHEEL_ORDER
from host_tools.sim import DEFAULT_GEOMETRY, WheelSimulator
from host_tools.sim.decode import encoder_counts, pulses, sightings
from host_tools.sim.physics import BallTrack

N = 120


@pytest.fixture(scope="module")
def spins():
    sim = WheelSimulator(seed=2024)
    return sim, [sim.spin() for _ in range(N)]


def _rises(sp, name):
    k = sp.names.index(name)
    return sp.t_us[(sp.code == k) & (sp.level == 1)]


def test_ball_closed_form_matches_integration():
    """s(t), ω(t) and t(s) agree with a fine Runge-Kutta integration of dω/dt = -a - cω²."""
    a, c, w0 = 0.225, 0.007, 2 * math.pi / 0.5
    ball = BallTrack(w0, a, c, 2 * math.pi / 2.55)
    dt, w, s, t = 1e-4, w0, 0.0, 0.0
    f = lambda x: -a - c * x * x
    while t < ball.t_drop - 1e-9:
        k1 = f(w); k2 = f(w + dt / 2 * k1); k3 = f(w + dt / 2 * k2); k4 = f(w + dt * k3)
        s += dt * (w + dt / 6 * (k1 + 2 * k2 + 2 * k3))      # exact to O(dt^3) for the angle
        w += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    assert abs(float(ball.speed(t)) - w) < 1e-6
    assert abs(float(ball.angle(t)) - s) < 1e-3
    assert abs(float(ball.time_at(s)) - t) < 1e-3                     # 1e-3 rad at ~2.5 rad/s
    for tt in (0.0, 1.0, 7.5, ball.t_drop):
        assert abs(float(ball.time_at(ball.angle(tt))) - tt) < 1e-7        # t(s) inverts s(t)
    assert abs(ball.s_drop / (2 * math.pi) - BallTrack.laps_for(w0, a, c, 2 * math.pi / 2.55)) < 1e-9
    w_back = BallTrack.omega0_for_laps(3.0, a, c, 2 * math.pi / 2.55)
    assert abs(BallTrack.laps_for(w_back, a, c, 2 * math.pi / 2.55) - 3.0) < 1e-9


def test_lap_counts_and_times_in_wheel_md_ranges(spins):
    _, sp = spins
    laps = [s.truth["laps"] for s in sp]
    flight = [(s.truth["drop_us"] - s.truth["launch_us"]) / 1e6 for s in sp]
    assert 13 <= min(laps) and max(laps) <= 21, (min(laps), max(laps))
    assert 15 <= min(flight) and max(flight) <= 20, (min(flight), max(flight))
    firsts, lasts = [], []
    for s in sp:
        per = np.diff(_rises(s, "BALL0")) / 1e6
        firsts.append(per[0])
        lasts.append(per[-1])
        # lap time rises lap after lap, slowly first then sharply in the last laps
        assert np.all(np.diff(per) > 0)
        assert per[-1] - per[-2] > 3 * (per[1] - per[0])
    assert 0.43 <= min(firsts) and max(firsts) <= 0.7, (min(firsts), max(firsts))
    assert 1.8 <= min(lasts) and max(lasts) <= 2.4, (min(lasts), max(lasts))
    assert 2.0 <= float(np.mean(lasts)) <= 2.3


def test_rotor_and_bounces_in_range(spins):
    _, sp = spins
    rpm = [s.truth["rotor_rpm_x10"] / 10 for s in sp]
    assert 10 <= min(rpm) and max(rpm) <= 30
    bounced = [s.truth["bounced_pockets"] for s in sp]
    assert 8 <= min(bounced) and max(bounced) <= 20
    assert 14.5 <= float(np.mean(bounced)) <= 17.5
    rest = [(s.truth["rest_us"] - s.truth["drop_us"]) / 1e6 for s in sp]
    assert 0.5 < min(rest) and max(rest) < 8


def test_feed_is_sorted_and_every_signal_alternates(spins):
    _, sp = spins
    for s in sp[:20]:
        assert np.all(np.diff(s.t_us) >= 0)
        for k, name in enumerate(s.names):
            lv = s.level[s.code == k]
            assert np.all(lv[1:] != lv[:-1]), name
    # the whole run is one continuous feed
    for a, b in zip(sp, sp[1:]):
        assert a.truth["end_us"] == b.truth["start_us"] and a.t_us[-1] <= b.t_us[0]


def test_truth_matches_the_feed(spins):
    """Decoding encoder and pocket pulses with the geometry gives the truth's number, from seen_us on."""
    sim, sp = spins
    for s in sp:
        tr = s.truth
        assert tr["number"] in WHEEL_ORDER
        seen = sightings(sim.geometry, s.names, s.t_us, s.code, s.level.astype(np.int64))
        after = [x for x in seen if x[0] >= tr["rest_us"]]
        assert after, tr
        assert {x[2] for x in after} == {tr["number"]}
        # seen_us: the rising edge of the first sighting of the resting ball
        first = min(x[0] for x in after)
        assert tr["rest_us"] <= tr["seen_us"] <= first


def test_directions_in_the_feed_and_article_53(spins):
    sim, sp = spins
    for s in sp:
        tr = s.truth
        assert tr["ball_dir"] == -tr["rotor_dir"]
        b0, b1 = _rises(s, "BALL0"), _rises(s, "BALL1")
        # BALL0 then BALL1 a little later: clockwise
        i = np.searchsorted(b1, b0[2])
        gap_after = b1[i] - b0[2]
        gap_before = b0[2] - b1[i - 1]
        assert (1 if gap_after < gap_before else -1) == tr["ball_dir"]
        a, b = s.names.index("A"), s.names.index("B")
        count = encoder_counts(s.code, s.level.astype(np.int64), a, b)
        assert np.sign(count[-1]) == tr["rotor_dir"]
    dirs = [s.truth["rotor_dir"] for s in sp]
    assert all(x == -y for x, y in zip(dirs, dirs[1:]))


def test_index_once_a_revolution(spins):
    sim, sp = spins
    s = sp[0]
    a, b, z = (s.names.index(n) for n in ("A", "B", "Z"))
    count = encoder_counts(s.code, s.level.astype(np.int64), a, b)
    rows = np.nonzero((s.code == z) & (s.level == 1))[0]
    assert len(rows) >= 5
    assert set(np.abs(np.diff(count[rows])).tolist()) == {sim.geometry["cpr"]}


def test_pocket_pulse_centre_is_the_pocket_centre(spins):
    """At the middle of a pulse of the resting ball, its pocket's centre is at the sensor (within a count)."""
    sim, sp = spins
    g = sim.geometry
    s = sp[1]
    k = s.names.index("POCKET0")
    z = s.names.index("Z")
    count = encoder_counts(s.code, s.level.astype(np.int64), s.names.index("A"), s.names.index("B"))
    zr = np.nonzero((s.code == z) & (s.level == 1))[0]
    idx = WHEEL_ORDER.index(s.truth["number"])
    for r1, r2 in pulses(s.t_us, s.code, s.level, k):
        if s.t_us[r1] < s.truth["rest_us"]:
            continue
        mid = (s.t_us[r1] + s.t_us[r2]) // 2
        row = np.searchsorted(s.t_us, mid, side="right") - 1
        zi = zr[np.searchsorted(zr, row, side="right") - 1]
        theta0 = g["index_offset_deg"] + 360.0 * (count[row] - count[zi]) / g["cpr"]
        centre = theta0 + idx * 360.0 / 37
        err = (centre - g["pocket_sensors_deg"][0] + 180) % 360 - 180
        assert abs(err) < 2 * 360.0 / g["cpr"] + 0.3, err


def test_reproducible_from_the_seed():
    a = WheelSimulator(seed=5).spin()
    b = WheelSimulator(seed=5).spin()
    c = WheelSimulator(seed=6).spin()
    assert np.array_equal(a.t_us, b.t_us) and a.truth == b.truth
    assert not np.array_equal(a.t_us[:100], c.t_us[:100]) or a.truth != c.truth


def test_other_geometry():
    g = dict(DEFAULT_GEOMETRY, cpr=400, index_offset_deg=-40.0, ball_sensors_deg=[100.0, 104.0, 220.0],
             pocket_sensors_deg=[15.0])
    sim = WheelSimulator(g, seed=9)
    assert sim.geometry["signals"] == ["A", "B", "Z", "BALL0", "BALL1", "BALL2", "POCKET0", "VOID", "RESET"]
    for _ in range(5):
        s = sim.spin()
        seen = sightings(sim.geometry, s.names, s.t_us, s.code, s.level.astype(np.int64))
        assert {x[2] for x in seen if x[0] >= s.truth["rest_us"]} == {s.truth["number"]}
    with pytest.raises(ValueError):
        WheelSimulator({"cpr": 1024}, seed=1)
