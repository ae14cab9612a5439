"""The replay driver (cylindre.replay) on a small hand-made feed, on both runtimes.

MicroPython subset. The controller's own behaviour is tested by the test_spin_* modules; here:
A/B go to the quadrature counter, ticks every 10 ms of feed time, RESET is a power cut.
"""

from cylindre.replay import Replay, settings_from

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
    assert len(boots) == 2 and boots[1]["t"] == 500000 and boots[1]["reset_cause"] == "power"
    # the counter restarted at 0 from the levels on the wires (A=0, B=1): the next edge counts, cleanly
    assert rp.quad.count == 0
    rp.run([(600000, "B", 0)])
    assert rp.quad.count == 1 and rp.quad.errors == 0
    assert rp.boots == 2


def test_no_ticks_while_the_power_is_off():
    rp, _ = _replay()
    rp.run([(1000, "RESET", 1), (1000000, "RESET", 0)])
    assert rp.ticks == 0
    rp.run([(1050000, "A", 1)])
    assert rp.ticks == 5
