"""The replay driver (cylindre.replay) on a small hand-made feed, on both runtimes.

MicroPython subset. The controller's own behaviour is tested by the test_spin_* modules; here:
A/B go to the quadrature counter, ticks every 10 ms of feed time, RESET is a power cut.
"""

from cylindre.replay import Replay, settings_from, shift_times

HEADER = {"cpr": 1024, "index_offset_deg": 0.0, "ball_sensors_deg": [0.0, 6.0],
          "pocket_sensors_deg": [180.0], "signals": ["A", "B", "Z", "BALL0", "BALL1", "POCKET0", "VOID", "RESET"],
          "generator": "hand"}

CW = [("A", 1), ("B", 1), ("A", 0), ("B", 0)]      # 00 -> 10 -> 11 -> 01 -> 00, +1 each


def _replay():
    events = []
    return Replay(HEADER, events.append), events


def test_settings_take_the_geometry_and_overrides_only():
    s = settings_from(HEADER, {"confirm_sightings": 3})
    assert sorted(s) == ["ball_sensors_deg", "confirm_sightings", "cpr", "index_offset_deg", "pocket_sensors_deg"]
    assert s["confirm_sightings"] == 3


def test_boot_then_encoder_counts_both_ways():
    rp, events = _replay()
    t = 1000
    changes = []
    for _ in range(3):
        for sig, lv in CW:
            changes.append((t, sig, lv))
            t += 1000
    rp.run(changes)
    assert events[0]["ev"] == "boot" and events[0]["reset_cause"] == "power"
    assert rp.quad.count == 12
    back = []
    for sig, lv in reversed(CW):
        back.append((t, sig, 1 - lv))
        t += 1000
    rp.run(back)
    assert rp.quad.count == 8
    assert rp.quad.errors == 0


def test_ticks_every_10_ms_of_feed_time():
    rp, _ = _replay()
    rp.run([(5000, "A", 1), (995000, "A", 0)])
    assert rp.ticks == 99          # 10 ms ... 990 ms
    rp.finish(1000000)
    assert rp.ticks == 100


def test_reset_is_a_power_cut_with_the_store_kept():
    rp, events = _replay()
    rp.run([(1000, "A", 1), (2000, "B", 1), (3000, "RESET", 1), (4000, "A", 0), (500000, "RESET", 0)])
    boots = [e for e in events if e["ev"] == "boot"]
    # events come in feed time; the controller itself restarted its clock at 0 (next test)
    assert len(boots) == 2 and boots[1]["t"] == 500000 and boots[1]["reset_cause"] == "power"
    assert rp.boot_at == 500000
    # the counter restarted at 0 from the levels on the wires (A=0, B=1): the next edge counts, cleanly
    assert rp.quad.count == 0
    rp.run([(600000, "B", 0)])
    assert rp.quad.count == 1 and rp.quad.errors == 0
    assert rp.boots == 2


def test_controller_clock_restarts_at_each_boot():
    """As on the Pico, controller time is microseconds since its boot; feed_clock=False shows it."""
    raw = []
    rp = Replay(HEADER, raw.append, feed_clock=False)
    rp.run([(7000, "VOID", 1)], start_us=2000)
    assert rp.boot_at == 2000 and raw[0]["ev"] == "boot" and raw[0]["t"] == 0
    rp.run([(30000, "RESET", 1), (40000, "RESET", 0), (45000, "VOID", 0)])
    assert rp.boot_at == 40000
    assert [e["t"] for e in raw if e["ev"] == "boot"] == [0, 0]
    # ticks run every 10 ms of the new boot's time: 40000 + 10000 is its first, at controller 10000
    rp.finish(50000)
    assert rp.ctl.t == 10000
    # by default the same events come in feed time
    rp2, events = _replay()
    rp2.run([(7000, "VOID", 1)], start_us=2000)
    rp2.run([(30000, "RESET", 1), (40000, "RESET", 0), (45000, "VOID", 0)])
    rp2.finish(50000)
    assert [e["t"] for e in events if e["ev"] == "boot"] == [2000, 40000]
    assert [e["t"] for e in events] == [2000, 12000, 40000, 50000]
    assert [e["t"] for e in raw] == [0, 10000, 0, 10000]


def test_shift_times_moves_every_controller_time():
    ev = {"ev": "result", "t": 5000, "rest_t": 4000, "number": 3, "sightings": [[4100, 0, 12], [4900, 1, 500]]}
    moved = shift_times(ev, 1000000)
    assert moved["t"] == 1005000 and moved["rest_t"] == 1004000 and moved["number"] == 3
    assert moved["sightings"] == [[1004100, 0, 12], [1004900, 1, 500]]
    assert ev["t"] == 5000                           # the event itself is left alone
    rn = shift_times({"ev": "rnvp", "t": 10, "predicted_drop_t": 60, "lead_us": 50}, 7)
    assert rn["t"] == 17 and rn["predicted_drop_t"] == 67 and rn["lead_us"] == 50   # a duration stays
    assert shift_times({"ev": "rnvp", "t": 10, "predicted_drop_t": None}, 7)["predicted_drop_t"] is None
    dr = shift_times({"ev": "drop", "t": 10, "last_pass_t": 8, "laps": 12}, 5)
    assert dr["last_pass_t"] == 13 and dr["laps"] == 12
    assert shift_times(ev, 0) is ev


def test_shift_times_in_place_moves_the_event_itself():
    """The controller's own events are fresh: it moves them in place, the same times as a copy."""
    ev = {"ev": "result", "t": 5000, "rest_t": 4000, "number": 3, "lead_us": 9, "sightings": [[4100, 0, 12]]}
    copy = shift_times(ev, 1000000)
    assert shift_times(ev, 1000000, True) is ev
    assert ev == copy and ev["t"] == 1005000 and ev["lead_us"] == 9 and ev["sightings"] == [[1004100, 0, 12]]


def test_no_ticks_while_the_power_is_off():
    rp, _ = _replay()
    rp.run([(1000, "RESET", 1), (1000000, "RESET", 0)])
    assert rp.ticks == 0
    rp.run([(1050000, "A", 1)])
    assert rp.ticks == 5
