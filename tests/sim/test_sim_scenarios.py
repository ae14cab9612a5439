"""Each fault scenario and imperfection leaves its mark in the feed, and its name in the truth."""

import numpy as np
import pytest

from host_tools.sim import EXPECTED, REALISTIC, SCENARIOS, WheelSimulator
from host_tools.sim.decode import encoder_counts, sightings
from host_tools.sim.scenarios import parse_list


def _pair(scenario, seed=3):
    """A valid spin, then the scenario's spin, then a valid spin."""
    sim = WheelSimulator(seed=seed)
    return sim, list(sim.spins([None, scenario, None]))


def _sig(sp, name):
    k = sp.names.index(name)
    m = sp.code == k
    return sp.t_us[m], sp.level[m]


def test_every_scenario_has_a_description_and_expected_reports():
    assert set(SCENARIOS) == set(EXPECTED)
    assert len(SCENARIOS) == 14
    assert parse_list("all") == sorted(SCENARIOS)
    assert parse_list("none") == [] and parse_list("") == []
    assert parse_list("power_cut, void_button") == ["power_cut", "void_button"]
    with pytest.raises(ValueError, match="bogus"):
        parse_list("power_cut,bogus")
    with pytest.raises(ValueError):
        WheelSimulator(seed=1).spin("bogus")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_truth(scenario):
    sim, (before, sp, after) = _pair(scenario)
    tr = sp.truth
    assert tr["fault"] == scenario and tr["valid"] is False
    assert before.truth["valid"] and after.truth["valid"]
    # every spin is an actuation, played or voided: the next one reverses it
    assert after.truth["rotor_dir"] == -tr["rotor_dir"]
    if scenario == "same_direction":
        assert tr["ball_dir"] == tr["rotor_dir"]
    else:
        assert tr["ball_dir"] == -tr["rotor_dir"]
    if scenario in ("rotor_not_reversed", "rotor_not_actuated", "rotor_pushed_same_way"):
        assert tr["rotor_dir"] == before.truth["rotor_dir"]
    elif scenario != "same_direction":
        assert tr["rotor_dir"] == -before.truth["rotor_dir"]
    if scenario == "few_laps":
        assert tr["laps"] < 4
    if scenario == "launch_slow":
        assert tr["first_lap_us"] > 1_000_000
    if scenario == "weak_throw":
        assert 1.5 <= tr["laps"] <= 1.7
    if scenario in ("ball_off_wheel", "void_button"):
        assert tr["number"] is None and tr["rest_us"] is None
        for j in range(len(sim.geometry["pocket_sensors_deg"])):
            t, _ = _sig(sp, "POCKET%d" % j)
            assert len(t) == 0
    else:
        assert tr["number"] is not None
    if scenario == "void_button":
        t, lv = _sig(sp, "VOID")
        assert list(lv) == [1, 0] and tr["launch_us"] < t[0]
    if scenario == "power_cut":
        t, lv = _sig(sp, "RESET")
        assert list(lv) == [1, 0] and t[0] == tr["cut_us"]
    if scenario == "sensor_dead":
        t, _ = _sig(sp, tr["sensor"])
        assert len(t) <= 1          # the index may show its real level again at the repair
    if scenario == "sensor_stuck":
        t, lv = _sig(sp, tr["sensor"])
        assert lv[-1] == 0 and lv[-2] == 1 and t[-1] - t[-2] > 5_000_000
    if scenario == "rotor_stopping":
        a, b = sp.names.index("A"), sp.names.index("B")
        enc = sp.t_us[(sp.code == a) | (sp.code == b)]
        assert enc[-1] < tr["drop_us"]                 # the rotor stood still before the drop ...
        assert tr["end_us"] - enc[-1] > 5_000_000      # ... and until the end of the spin
    if scenario == "encoder_loss":
        a, b, z = (sp.names.index(n) for n in ("A", "B", "Z"))
        count = encoder_counts(sp.code, sp.level.astype(np.int64), a, b)
        rows = np.nonzero((sp.code == z) & (sp.level == 1))[0]
        per_turn = set(np.abs(np.diff(count[rows])).tolist())
        cpr = sim.geometry["cpr"]
        assert cpr in per_turn and any(x % 4 == 0 and x < cpr for x in per_turn)
    if scenario in ("rotor_not_actuated", "rotor_pushed_same_way"):
        # the rotor never stopped between the two spins: counts keep coming across the boundary
        a, b = sp.names.index("A"), sp.names.index("B")
        last = before.t_us[(before.code == a) | (before.code == b)][-1]
        first = sp.t_us[(sp.code == a) | (sp.code == b)][0]
        assert first - last < 50_000 and tr["start_us"] - last < 50_000
        end = before.truth["end_us"] - before.truth["start_us"]
        rpm = tr["rotor_rpm_x10"]
        if scenario == "rotor_not_actuated":       # friction only: slower than at the last launch
            assert rpm < before.truth["rotor_rpm_x10"]
        else:                                      # pushed along by 2-8 rpm over the 1 s ramp
            enc = sp.t_us[(sp.code == a) | (sp.code == b)]
            n0 = np.count_nonzero(enc < tr["start_us"] + 500_000)
            n1 = np.count_nonzero((enc >= tr["start_us"] + 1_500_000) & (enc < tr["start_us"] + 2_000_000))
            assert n1 > n0 * 1.05, (n0, n1, end)


def test_ball_off_wheel_stops_the_ball_passes():
    _, (_, sp, _) = _pair("ball_off_wheel", seed=8)
    t, _ = _sig(sp, "BALL0")
    assert t[-1] < sp.truth["off_us"]


def test_imperfections_keep_the_spin_valid_and_decodable():
    clean = WheelSimulator(seed=4)
    rough = WheelSimulator(seed=4, imperfections=dict(REALISTIC, miss=0.05, spurious=2.0))
    n_clean = n_rough = 0
    for _ in range(8):
        c, r = clean.spin(), rough.spin()
        assert r.truth["valid"]
        assert np.all(np.diff(r.t_us) >= 0)
        for k in range(len(r.names)):
            lv = r.level[r.code == k]
            assert np.all(lv[1:] != lv[:-1])
        n_clean += len(c)
        n_rough += len(r)
        seen = sightings(rough.geometry, r.names, r.t_us, r.code, r.level.astype(np.int64))
        final = [x[2] for x in seen if x[0] >= r.truth["rest_us"] + 100_000]
        assert final.count(r.truth["number"]) >= len(final) - 2
    assert n_rough != n_clean
    with pytest.raises(ValueError):
        WheelSimulator(seed=1, imperfections={"wobble": 1})
    with pytest.raises(ValueError):
        WheelSimulator(seed=1, imperfections={"miss": 2})


def test_contact_bounce_adds_short_pulses():
    sim = WheelSimulator(seed=4, imperfections={"bounce": True})
    sp = sim.spin("void_button")
    t, lv = _sig(sp, "VOID")
    assert len(t) > 2
    widths = (t[1::2] - t[0::2])
    assert widths.min() < 1000 and widths.max() > 250_000


def test_the_croupier_reverses_the_rotor_at_every_actuation_played_or_voided():
    sim = WheelSimulator(seed=5)
    a = sim.spin()
    b = sim.spin()
    assert b.truth["rotor_dir"] == -a.truth["rotor_dir"]
    sim.counted(False)                 # the wheel voided b: b was an actuation all the same
    c = sim.spin()
    assert c.truth["rotor_dir"] == -b.truth["rotor_dir"]
    d = sim.spin("power_cut")
    e = sim.spin()
    assert e.truth["rotor_dir"] == -d.truth["rotor_dir"]
    f = sim.spin("rotor_not_reversed")
    assert f.truth["rotor_dir"] == e.truth["rotor_dir"]


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([None] + sorted(SCENARIOS)), st.booleans())
def test_any_seed_gives_a_well_formed_spin(seed, scenario, imperfect):
    """Whatever the seed, scenario and imperfections: sorted times, alternating levels, a real pocket."""
    sim = WheelSimulator(seed=seed, imperfections=REALISTIC if imperfect else None)
    sp = list(sim.spins([None, scenario]))[1]
    assert np.all(np.diff(sp.t_us) >= 0)
    assert sp.t_us[0] >= sp.truth["start_us"] and sp.t_us[-1] <= sp.truth["end_us"]
    for k in range(len(sp.names)):
        lv = sp.level[sp.code == k]
        assert np.all(lv[1:] != lv[:-1])
    tr = sp.truth
    if tr["number"] is not None:
        assert tr["launch_us"] < tr["drop_us"] < tr["rest_us"] < tr["end_us"]
        if scenario is None and not imperfect:
            seen = sightings(sim.geometry, sp.names, sp.t_us, sp.code, sp.level.astype(np.int64))
            assert {x[2] for x in seen if x[0] >= tr["rest_us"]} == {tr["number"]}


@pytest.mark.parametrize("scenario", ["sensor_dead", "sensor_stuck"])
def test_the_index_sensor_can_fail_too(scenario):
    sim = WheelSimulator(seed=1)
    for _ in range(60):
        sp = sim.spin(scenario)
        if sp.truth["sensor"] == "Z":
            break
    assert sp.truth["sensor"] == "Z"
    t, lv = _sig(sp, "Z")
    inside = (t > sp.truth["start_us"] + 200_000) & (t < sp.truth["end_us"] - 300_000)
    if scenario == "sensor_dead":
        assert not inside.any()
    else:
        stuck = sp.truth["stuck_us"]
        during = (t >= stuck) & (t < sp.truth["end_us"] - 300_000)
        assert list(lv[during]) in ([1], [])    # one rise at the fault (none if already on), then nothing
        assert len(t[t < stuck]) >= 2           # the index worked before
    nxt = sim.spin()                           # the next spin is clean again
    t2, lv2 = _sig(nxt, "Z")
    assert len(t2) > 4


def test_encoder_loss_always_loses_counts():
    """However close to the index the loss falls, whole cycles are lost (seen between index pulses)."""
    for seed in range(40):
        sim = WheelSimulator(seed=seed)
        sp = sim.spin("encoder_loss")
        a, b, z = (sp.names.index(n) for n in ("A", "B", "Z"))
        count = encoder_counts(sp.code, sp.level.astype(np.int64), a, b)
        rows = np.nonzero((sp.code == z) & (sp.level == 1))[0]
        turns = np.abs(np.diff(count[rows]))
        assert np.any(turns < sim.geometry["cpr"]), seed
        assert np.all(turns % 4 == 0)
