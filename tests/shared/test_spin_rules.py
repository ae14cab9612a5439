"""A valid spin on an ideal wheel: events, evidence, rien ne va plus, confirmation, status."""

from test_spin_kit import board, make, valid_spin as _valid_spin


def test_valid_spin_reports_the_number_once_with_its_evidence():
    w, ctl, log, drop, rest = _valid_spin()
    assert log.kinds() == ["boot", "launch", "rnvp", "drop", "result"], log.kinds()
    la = log.of("launch")[0]
    assert la["spin"] == 1 and la["ball_dir"] == -1 and la["rotor_dir"] == 1
    assert 195 <= la["rotor_rpm_x10"] <= 205, la
    assert 480000 < la["lap_us"] < 560000, la
    r = log.of("result")[0]
    assert r["number"] == 17 and r["spin"] == 1
    assert rest <= r["rest_t"] < rest + 3000000 + 100000, (rest, r)
    assert len(r["sightings"]) == 2 and r["sightings"][0][0] == r["rest_t"]
    for s in r["sightings"]:
        assert s[1] == 0 and 0 <= s[2] < 1024
    d = log.of("drop")[0]
    assert d["laps"] == r["laps"] and 13 <= d["laps"] <= 21, d
    assert len(d["lap_us"]) == d["laps"]
    assert d["t"] >= drop
    h = ctl.history()
    assert h == [{"spin": 1, "number": 17, "laps": r["laps"], "rotor_dir": 1, "ball_dir": -1}], h


def test_rien_ne_va_plus_before_the_drop_with_its_prediction():
    w, ctl, log, drop, rest = _valid_spin()
    rn = log.of("rnvp")[0]
    assert rn["t"] < drop, (rn, drop)
    # default lead: 3 laps; the last laps here take 1.0-2.3 s
    assert 2000000 < drop - rn["t"] < 8000000, drop - rn["t"]
    assert abs(rn["predicted_drop_t"] - drop) < 300000, (rn["predicted_drop_t"], drop)
    assert rn["lead_us"] == rn["predicted_drop_t"] - rn["t"]
    assert rn["lap_us"] and rn["laps"] >= 10


def test_rnvp_lead_is_configurable():
    s = board(rnvp_lead_laps_x10=10)
    w, ctl, log, drop, rest = _valid_spin(settings=s)
    rn = log.of("rnvp")[0]
    assert 0 < drop - rn["t"] < 2500000, drop - rn["t"]


def test_three_pocket_sensors_confirm_within_a_turn():
    s = board(pocket_sensors_deg=[60.0, 180.0, 300.0], confirm_sightings=3, confirm_sensors=3)
    w, ctl, log, drop, rest = _valid_spin(settings=s, rpm=15.0)
    r = log.of("result")[0]
    assert r["number"] == 17
    assert sorted([x[1] for x in r["sightings"]]) == [0, 1, 2]
    # one rotor turn at 15 rpm is 4 s: all three sensors within it
    assert r["t"] - r["rest_t"] < 4000000, r
    assert r["t"] - rest < 4000000 + 200000


def test_a_ball_landing_over_a_sensor_is_its_first_sighting():
    """The ball falls into its pocket while the pocket passes a sensor: that pulse starts late
    (narrow, cut at its start). It is the first of the three sightings the rule needs, so the
    result comes two sensors later, not three."""
    s = board(pocket_sensors_deg=[60.0, 180.0, 300.0], status_us=5000000)
    for rpm in (15.0, -15.0):
        w, ctl, log = make(settings=s, rpm=rpm)
        ctl.boot(0)
        ctl.pockets.full_w = 22          # a full pulse (8 degrees), as learnt from earlier results
        w.add_index(0, 30000000)
        drop = w.add_ball(3000000, -1 if rpm > 0 else 1)
        rest = drop + 4000000
        w.add_rest(rest, rest + 14000000, 17)
        pulses = sorted(e for e in w.events if e[1].startswith("POCKET"))
        rise, fall = pulses[0], pulses[1]
        assert rise[1] == fall[1] and rise[2] == 1 and fall[2] == 0
        w.events.remove(rise)
        w.add(rise[0] + (fall[0] - rise[0]) * 6 // 10, rise[1], 1)     # 40 % of the pulse is left
        falls = [e[0] for e in pulses if e[2] == 0]
        w.run(ctl, rest + 14000000)
        r = log.of("result")[0]
        assert r["number"] == 17 and r["t"] == falls[2], (rpm, r, falls)
        assert [x[1] for x in r["sightings"]] == [int(e[1][6:]) for e in pulses[:6:2]]
        assert ctl.pockets.landed == 1 and ctl.pockets.partial == 0


def test_status_is_periodic_and_carries_the_rotor():
    w, ctl, log, drop, rest = _valid_spin(settings=board())
    st = log.of("status")
    assert 75 <= len(st) <= 85, len(st)
    # every 500 ms; every second while the spin is called (no bet can be taken on it); the
    # result brings one at once
    called = ("no_more_bets", "ball_dropped")
    res = log.of("result")[0]
    for a, b in zip(st, st[1:]):
        gap = b["t"] - a["t"]
        if a["state"] in called and b["state"] == "result":
            assert 0 < gap <= 1000000 and 0 <= b["t"] - res["t"] <= 10000, (a, b, res)
        elif a["state"] in called:
            assert 1000000 <= gap < 1100000, (a, b)
        else:
            assert 500000 <= gap < 600000, (a, b)
    last = st[-1]
    assert last["state"] == "result" and last["last"] == 17 and last["spin"] == 1
    assert last["rotor_dir"] == 1 and 195 <= last["rotor_rpm_x10"] <= 205
    assert last["table_open"] is True
    assert last["sensors"] == {"Z": "ok", "BALL0": "ok", "BALL1": "ok", "POCKET0": "ok", "VOID": "ok"}
    states = [e["state"] for e in st]
    for a in ("idle", "ball_in_rim", "no_more_bets", "ball_dropped", "result"):
        assert a in states, (a, states)


def test_a_lap_over_the_limit_calls_rien_ne_va_plus_at_once():
    # a short lead, and the house's safety net: any lap of 1.2 s or more
    s = board(rnvp_lead_laps_x10=5, rnvp_max_lap_us=1200000, status_us=5000000)
    w, ctl, log, drop, rest = _valid_spin(settings=s)
    rn = log.of("rnvp")[0]
    assert rn["why"] == "slow_lap", rn
    laps = log.of("drop")[0]["lap_us"]
    # called during the first lap over the limit, before the prediction's half-lap lead
    assert laps[rn["laps"] - 1] < 1200000 <= laps[rn["laps"]], (rn, laps)
    assert rn["t"] < drop
    assert log.of("result")[0]["number"] == 17
