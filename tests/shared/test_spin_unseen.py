"""No spin unseen (issue 33): a ball-track head that stops seeing is found before it can hide a
spin, and the croupier's *rien ne va plus* closes betting whatever the sensors say.

A cut cable to the ball-track head: the rotor actuated for the coup and no launch seen in
`launch_wait_us`, or a ball at rest in a pocket that no run on the track explains, is a fault
naming the ball-track sensors (no bet until they see a ball again). MicroPython subset.
"""

from test_spin_kit import DrivenRotor, board, make


def _driven(segments, settings=None):
    """(wheel, controller, log) with the rotor driven by `segments`, index pulses added."""
    w, ctl, log = make(settings=settings)
    rot = DrivenRotor(segments)
    ctl.count = lambda: rot.at(w.now)
    ctl.rotor = type(ctl.rotor)(1024, 2)
    rot.index(w, 60000000)
    return w, ctl, log


def _silent(log):
    return [(e["signal"], e["t"]) for e in log.of("fault") if e["code"] == "sensor_silent"]


def _states(log, t0, t1):
    return [e["state"] for e in log.of("status") if t0 <= e["t"] < t1]


def test_a_rotor_actuated_with_no_launch_seen_closes_betting_naming_the_ball_sensors():
    # pushed at 2 s from rest (the actuation counts at ~2.6 s); the ball-track head is dead
    w, ctl, log = _driven([(0, 0), (2000000, 341)], board(status_us=500000))
    ctl.boot(0)
    w.run(ctl, 14000000)
    silent = _silent(log)
    assert [s for s, _ in silent] == ["BALL0", "BALL1"], log.events
    t = silent[0][1]
    assert 2000000 + 8000000 <= t <= 2600000 + 8000000 + 500000, t
    assert "no launch was seen" in log.of("fault")[0]["detail"]
    assert _states(log, t, 14000000) and set(_states(log, t, 14000000)) == {"fault"}
    assert log.of("status")[-1]["sensors"]["BALL0"] == "silent"


def test_the_launch_seen_clears_it_and_the_spin_runs():
    w, ctl, log = _driven([(0, 0), (2000000, 341)], board(status_us=500000))
    ctl.boot(0)
    w.add_ball(14000000, -1)
    w.run(ctl, 20000000)
    assert len(_silent(log)) == 2 and log.of("launch")
    assert log.of("status")[-1]["state"] == "ball_in_rim" and set(log.of("status")[-1]["sensors"].values()) == {"ok"}


def test_the_wait_can_be_turned_off():
    w, ctl, log = _driven([(0, 0), (2000000, 341)], board(launch_wait_us=0))
    ctl.boot(0)
    w.run(ctl, 14000000)
    assert not _silent(log)


def test_a_rotor_found_turning_at_boot_is_no_actuation_to_wait_on():
    w, ctl, log = make(settings=board(status_us=500000))      # turning from t = 0
    ctl.boot(0)
    w.add_index(0, 20000000)
    w.run(ctl, 20000000)
    assert not _silent(log) and set(_states(log, 0, 20000000)) == {"idle"}


def test_a_ball_at_rest_with_no_run_on_the_track_is_a_spin_unseen():
    # the ball-track head dead and the wait off: the ball rests in 23 at 40 s, unexplained
    w, ctl, log = make(settings=board(launch_wait_us=0, status_us=500000))
    ctl.boot(0)
    w.add_index(0, 50000000)
    w.add_rest(40000000, 50000000, 23)
    w.run(ctl, 50000000)
    silent = _silent(log)
    assert [s for s, _ in silent] == ["BALL0", "BALL1"], log.events
    assert "came to rest in 23 with no launch seen" in log.of("fault")[0]["detail"]
    # two sightings a turn apart (20 rpm: 3 s), the first within a turn of the rest: told at
    # the second
    assert 40000000 + 3000000 < silent[0][1] < 40000000 + 2 * 3000000 + 400000, silent
    assert log.of("status")[-1]["state"] == "fault"


def test_the_last_result_s_ball_still_in_its_pocket_is_no_spin_unseen():
    w, ctl, log = make(settings=board(status_us=500000))
    ctl.boot(0)
    w.add_index(0, 90000000)
    drop, rest = w.spin(3000000, -1, 17, rest_us=50000000)   # left in its pocket 50 s
    w.run(ctl, 90000000)
    assert log.of("result") and not log.of("fault")


def test_a_voided_spin_s_ball_at_rest_is_no_spin_unseen():
    w, ctl, log = make(settings=board(status_us=500000))
    ctl.boot(0)
    w.add_index(0, 60000000)
    w.add(5000000, "VOID", 1)
    w.add(5300000, "VOID", 0)
    drop, rest = w.spin(3000000, -1, 17)                    # voided, the ball runs its course
    w.run(ctl, 60000000)
    assert [e["reason"] for e in log.of("void")] == ["void_button"] and not log.of("fault")


def test_the_croupier_s_call_before_the_launch_closes_betting_and_calls_the_spin():
    w, ctl, log = make(settings=board(status_us=500000))
    ctl.boot(0)
    w.add_index(0, 45000000)
    w.add(2900000, "CALL", 1)                # the ball thrown; not a lap yet
    w.add(3000000, "CALL", 0)
    drop, rest = w.spin(3000000, -1, 17)
    w.run(ctl, 45000000)
    assert _states(log, 2900000, 3500000)[0] == "no_more_bets"
    launch, rnvp = log.of("launch")[0], log.of("rnvp")[0]
    assert rnvp["why"] == "croupier" and rnvp["t"] == launch["t"]
    assert [e["ev"] for e in log.events if e["ev"] in ("launch", "rnvp", "drop", "result")] == \
        ["launch", "rnvp", "drop", "result"]
    assert log.of("status")[-1]["state"] == "result"


def test_the_croupier_s_call_on_a_running_ball_calls_it_at_once():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 45000000)
    drop, rest = w.spin(3000000, -1, 17)
    w.run(ctl, 6000000)
    ctl.call(6000000)
    w.add_index(0, 45000000)
    w.spin(3000000, -1, 17)
    w.events = [e for e in w.events if e[0] > 6000000]
    w.run(ctl, 45000000, t_start=6000000)
    rnvp = log.of("rnvp")
    assert len(rnvp) == 1 and rnvp[0]["why"] == "croupier" and rnvp[0]["t"] == 6000000
    assert log.of("result")[0]["number"] == 17


def test_a_ball_vanishing_at_speed_holds_betting_closed_until_a_pocket_sees_it():
    # gone 8 laps in: it left the wheel, or the head stopped seeing it; nothing in the pockets
    w, ctl, log = make(settings=board(status_us=500000))
    ctl.boot(0)
    w.add_index(0, 40000000)
    w.add_ball(3000000, -1, laps_max=8)
    w.run(ctl, 40000000)
    v = log.of("void")[0]
    assert v["reason"] == "ball_off_wheel"
    after = _states(log, v["t"], 40000000)
    assert after and set(after) == {"fault"}, after
    assert [s for s, _ in _silent(log)] == ["BALL0", "BALL1"]
