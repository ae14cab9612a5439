"""The wheel bench's arithmetic on known inputs, and a small end-to-end run of the bench."""

import argparse
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools.bench import wheel as bench
from host_tools.sim import WheelSimulator
from host_tools.sim.analysis import (aggregate, assign, ball_laps, confirm_rule, judge, percentile, rule_bound,
                                     summary)
from host_tools.sim.physics import BallTrack


def test_percentile_on_known_values():
    xs = [15, 20, 35, 40, 50]
    assert percentile(xs, 0) == 15 and percentile(xs, 100) == 50
    assert percentile(xs, 50) == 35
    assert percentile(xs, 40) == 29.0          # 20 + 0.6 * (35 - 20)
    assert percentile([7], 99) == 7
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(xs, 101)
    s = summary([1, 2, 3, 4, 100])
    assert (s["n"], s["min"], s["median"], s["max"], s["mean"]) == (5, 1, 3, 100, 22)
    assert s["p99"] == pytest.approx(96.16)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-10 ** 9, 10 ** 9), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_is_numpys(xs, q):
    assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)), rel=1e-9, abs=1e-6)


def _truth(spin, start, launch, drop=None, rest=None, number=None, fault=None, seen=None):
    return {"spin": spin, "start_us": start, "launch_us": launch, "drop_us": drop, "rest_us": rest, "number": number,
            "fault": fault, "valid": fault is None, "seen_us": seen, "rotor_rpm_x10": 200}


def test_events_go_to_their_spin():
    truths = [_truth(1, 1_000, 2_000), _truth(2, 10_000, 12_000), _truth(3, 20_000, 22_000)]
    evs = [{"ev": "boot", "t": 0},
           {"ev": "launch", "t": 2_500, "spin": 7}, {"ev": "status", "t": 9_000, "spin": 7},
           {"ev": "launch", "t": 12_500, "spin": 8},
           {"ev": "void", "t": 13_000, "spin": 7, "reason": "rotor_slow"},    # late, but spin 7's
           {"ev": "fault", "t": 14_000, "code": "sensor_stuck"},
           {"ev": "result", "t": 25_000, "spin": 9, "number": 4}]             # no launch seen: by time
    per = assign(evs, truths)
    assert [e["t"] for e in per[0]] == [2_500, 9_000, 13_000]
    assert [e["t"] for e in per[1]] == [12_500, 14_000]
    assert [e["t"] for e in per[2]] == [25_000]
    # without start_us, a window opens 1 s before the launch
    bare = [{"launch_us": 5_000_000}, {"launch_us": 9_000_000}]
    per = assign([{"ev": "x", "t": 4_100_000}, {"ev": "x", "t": 7_999_999}, {"ev": "x", "t": 8_000_000}], bare)
    assert [len(p) for p in per] == [2, 1]


def test_judging_valid_spins():
    tr = _truth(1, 0, 1_000_000, drop=18_000_000, rest=20_000_000, number=17, seen=20_400_000)
    rnvp = {"ev": "rnvp", "t": 13_000_000}
    good = judge(tr, [rnvp, {"ev": "result", "t": 21_000_000, "number": 17}])
    assert good["outcome"] == "correct" and good["lead_us"] == 5_000_000 and not good["rnvp_late"]
    assert good["latency_us"] == 1_000_000 and good["bound_us"] == 400_000
    assert judge(tr, [{"ev": "result", "t": 21_000_000, "number": 3}])["outcome"] == "wrong"
    voided = judge(tr, [{"ev": "void", "t": 5, "reason": "few_laps"}, {"ev": "result", "t": 9, "number": 17}])
    assert voided["outcome"] == "void" and "latency_us" not in voided and "lead_us" not in voided
    assert judge(tr, [])["outcome"] == "missing"
    late = judge(tr, [{"ev": "rnvp", "t": 18_500_000}])
    assert late["rnvp_late"] and late["lead_us"] == -500_000
    never = judge(tr, [])
    assert never["rnvp_late"] and never["lead_us"] is None
    assert judge(tr, [{"ev": "result", "t": 20_200_000, "number": 17}], bound_us=150_000)["bound_us"] == 150_000


def test_judging_fault_spins():
    tr = _truth(1, 0, 1, fault="power_cut", number=5)
    assert judge(tr, [{"ev": "void", "t": 1, "reason": "restart"}])["outcome"] == "caught"
    assert judge(tr, [{"ev": "void", "t": 1, "reason": "rotor_slow"}])["outcome"] == "other_void"
    # after the boot the ball's own number is the coup's result: right is caught, another number paid wrongly
    assert judge(tr, [{"ev": "result", "t": 1, "number": 5}])["outcome"] == "caught"
    assert judge(tr, [{"ev": "result", "t": 1, "number": 6}])["outcome"] == "paid"
    assert judge(tr, [])["outcome"] == "missed"
    st_ = judge(_truth(2, 0, 1, fault="sensor_stuck"), [{"ev": "fault", "t": 1, "code": "sensor_stuck"},
                                                       {"ev": "result", "t": 2, "number": 1}])
    assert st_["caught"] and st_["paid"] and st_["outcome"] == "caught"


def test_aggregate_counts_and_table():
    ok = dict(_truth(1, 0, 1, drop=10, rest=20, number=1, seen=25))
    recs = [judge(ok, [{"ev": "rnvp", "t": 10 - lead}, {"ev": "result", "t": 20 + lat, "number": 1}])
            for lead, lat in [(4, 10), (6, 20), (8, 30), (-1, 40)]]
    recs.append(judge(ok, [{"ev": "result", "t": 50, "number": 2}]))
    recs.append(judge(_truth(9, 0, 1, fault="void_button"), [{"ev": "void", "t": 3, "reason": "void_button"}]))
    recs.append(judge(_truth(9, 0, 1, fault="void_button"), []))
    recs.append(judge(_truth(9, 0, 1, fault="power_cut", number=4), [{"ev": "result", "t": 3, "number": 4}]))
    f = aggregate(recs)
    assert f["spins"] == 8 and f["valid"] == 5
    assert f["valid_outcomes"] == {"correct": 4, "wrong": 1, "void": 0, "missing": 0}
    assert f["correct_rate"] == 0.8
    assert f["rnvp_lead_us"]["min"] == -1 and f["rnvp_lead_us"]["median"] == 5 and f["rnvp_lead_us"]["max"] == 8
    assert f["rnvp_late"] == 2 and f["rnvp_missing"] == 1
    assert f["result_latency_us"]["n"] == 4 and f["result_latency_us"]["median"] == 25
    assert f["result_bound_us"]["median"] == 5
    assert f["latency_over_bound_us"]["min"] == 5 and f["latency_below_bound"] == 0
    assert f["faults"]["void_button"] == {"spins": 2, "caught": 1, "other_void": 0, "paid": 0, "missed": 1,
                                          "with_result": 0, "reports": {"void:void_button": 1, "(nothing)": 1}}
    assert f["faults"]["power_cut"]["caught"] == 1 and f["faults"]["power_cut"]["paid"] == 0
    assert f["latency_by_rotor_rpm"] == {"20-25": {"n": 4, "latency_median_us": 25, "bound_median_us": 5,
                                                   "bound_max_us": 5, "rule_median_us": None}}
    assert f["result_rule_bound_us"]["n"] == 0 and f["latency_rule_unknown"] == 4
    assert f["valid_failures"][0]["outcome"] == "wrong"


def _sight(sensor, number, rise, fall):
    """A decoded sighting (t_mid, sensor, number, t_rise, t_fall)."""
    return ((rise + fall) // 2, sensor, number, rise, fall)


def test_rule_bound_on_known_sightings():
    rest = 1_000_000
    seen = [_sight(0, 7, 900_000, 960_000),            # before the rest: another pocket on the way
            _sight(1, 12, 990_000, 1_050_000),         # middle after the rest: counts (known at its fall)
            _sight(2, 12, 1_500_000, 1_502_000),       # 2 ms: chatter, shorter than pocket_min_us
            _sight(2, 12, 1_600_000, 1_660_000),
            _sight(0, 12, 2_200_000, 2_260_000),
            _sight(1, 12, 2_800_000, 2_860_000)]
    # three sightings from three sensors: the third ends at 2.26 s, 1.26 s after the rest
    assert rule_bound(seen, rest, 12, 3, 3, 5000) == 1_260_000
    assert rule_bound(seen, rest, 12, 2, 2, 5000) == 660_000
    assert rule_bound(seen, rest, 12, 2, 1, 5000) == 660_000
    assert rule_bound(seen, rest, 12, 1, 1, 5000) == 50_000
    # without the shortest-pulse filter the chatter counts as a sighting
    assert rule_bound(seen, rest, 12, 2, 2, 0) == 502_000
    # four from three: the fourth (sensor 1 again)
    assert rule_bound(seen, rest, 12, 4, 3, 5000) == 1_860_000
    # order of the list does not matter; a cut-off before the rule is met gives None
    assert rule_bound(list(reversed(seen)), rest, 12, 3, 3, 5000) == 1_260_000
    # the run must also reach back span_us from its last sighting to its first
    assert rule_bound(seen, rest, 12, 2, 2, 5000, span_us=1_200_000) == 1_260_000
    assert rule_bound(seen, rest, 12, 3, 3, 5000, until_us=2_000_000) is None
    assert rule_bound(seen, rest, 5, 1, 1, 5000) is None
    # a sighting of another number after the rest breaks the run (consecutive agreeing sightings)
    broken = seen + [_sight(2, 30, 1_200_000, 1_260_000)]      # the run starts again with 1.66 s
    assert rule_bound(broken, rest, 12, 3, 3, 5000) == 1_860_000
    assert rule_bound(broken, rest, 12, 2, 2, 5000) == 1_260_000


def test_confirm_rule_comes_from_the_firmware():
    three = {"cpr": 1024, "index_offset_deg": 17.5, "ball_sensors_deg": [0, 6], "pocket_sensors_deg": [90, 210, 330]}
    # auto: one sighting per sensor, all sensors, over 2.5 s (issue 13 round 4)
    assert confirm_rule(three) == (3, 3, 5000, 2500000)
    assert confirm_rule(dict(three, pocket_sensors_deg=[180])) == (2, 1, 5000, 2500000)   # one sensor: two sightings
    assert confirm_rule(three, {"confirm_sightings": 4, "confirm_sensors": 2, "pocket_min_us": 8000,
                                "confirm_span_us": 0}) == (4, 2, 8000, 0)
    with pytest.raises(ValueError, match="confirm_sensors"):
        confirm_rule(three, {"confirm_sightings": 2, "confirm_sensors": 3})


def test_latency_over_the_rule_bound_is_summed_up():
    tr = _truth(1, 0, 1, drop=10, rest=1_000_000, number=4, seen=1_100_000)
    recs = [judge(tr, [{"ev": "result", "t": 1_000_000 + lat, "number": 4}], rule_us=rule)
            for lat, rule in [(2_000_000, 2_000_000), (2_030_000, 2_000_000), (3_000_000, 2_000_000),
                              (1_500_000, 1_600_000), (900_000, None)]]
    assert recs[0]["rule_bound_us"] == 2_000_000 and recs[4]["rule_bound_us"] is None
    f = aggregate(recs)
    o = f["latency_over_rule_us"]
    assert o["n"] == 4 and (o["min"], o["median"], o["max"]) == (-100_000, 15_000, 1_000_000)
    assert f["latency_over_rule_late"] == 1 and f["latency_below_rule"] == 1 and f["latency_rule_unknown"] == 1
    assert f["result_rule_bound_us"]["median"] == 2_000_000
    assert [w["latency_us"] for w in f["latency_over_rule_worst"]] == [3_000_000]
    assert f["latency_by_rotor_rpm"]["20-25"]["rule_median_us"] == 2_000_000


def test_ball_laps_from_the_truths_closed_form():
    w0, a, c, wc = 2 * np.pi / 0.5, 0.225, 0.007, 2 * np.pi / 2.55
    ball = BallTrack(w0, a, c, wc)
    tr = {"launch_us": 3_000_000, "ball_track": {"w0": w0, "a": a, "c": c, "wc": wc}}
    assert ball_laps(tr, 3_000_000) == 0.0
    t10 = float(ball.time_at(10 * 2 * np.pi))        # the moment the ball completes its 10th lap
    assert ball_laps(tr, 3_000_000 + round(t10 * 1e6)) == pytest.approx(10.0, abs=1e-4)
    drop = 3_000_000 + round(ball.t_drop * 1e6)
    assert ball_laps(tr, drop) == pytest.approx(BallTrack.laps_for(w0, a, c, wc), abs=1e-4)
    assert ball_laps({"launch_us": 0}, 5) is None


def test_rnvp_precision_on_known_inputs():
    w0, a, c, wc = 2 * np.pi / 0.55, 0.23, 0.0072, 2 * np.pi / 2.5
    ball = BallTrack(w0, a, c, wc)
    launch = 2_000_000
    drop = launch + round(ball.t_drop * 1e6)
    tr = _truth(1, 0, launch, drop=drop, rest=drop + 3_000_000, number=8)
    tr["ball_track"] = {"w0": w0, "a": a, "c": c, "wc": wc}
    total = BallTrack.laps_for(w0, a, c, wc)
    at_call = launch + round(float(ball.time_at((total - 3) * 2 * np.pi)) * 1e6)   # 3 laps before the drop
    recs = []
    for err in (-400_000, -100_000, 0, 200_000, 300_000):
        recs.append(judge(tr, [{"ev": "rnvp", "t": at_call, "predicted_drop_t": drop + err},
                               {"ev": "result", "t": drop + 5_000_000, "number": 8}]))
    assert recs[0]["pred_error_us"] == -400_000 and recs[3]["pred_error_us"] == 200_000
    assert recs[0]["lead_laps"] == pytest.approx(3.0, abs=1e-4)
    # called on a slow lap with no prediction: a lead, no error
    recs.append(judge(tr, [{"ev": "rnvp", "t": drop - 1_000_000, "predicted_drop_t": None},
                           {"ev": "result", "t": drop + 5_000_000, "number": 8}]))
    # late: after the real drop, so fewer than zero laps ahead
    recs.append(judge(tr, [{"ev": "rnvp", "t": drop + 100_000, "predicted_drop_t": drop + 50_000}]))
    assert recs[-1]["rnvp_late"] and recs[-1]["lead_laps"] < 0
    f = aggregate(recs)
    e = f["rnvp_error_us"]
    assert e["n"] == 6 and f["rnvp_unpredicted"] == 1
    # signed errors -400, -100, 0, 50, 200, 300 ms
    assert e["median"] == 25_000
    assert e["p1"] == pytest.approx(-400_000 + 0.05 * 300_000)
    assert e["p99"] == pytest.approx(200_000 + 0.95 * 100_000)
    # absolute 0, 50, 100, 200, 300, 400 ms
    assert e["abs_median"] == 150_000 and e["abs_max"] == 400_000
    assert e["abs_p99"] == pytest.approx(300_000 + 0.95 * 100_000)
    L = f["rnvp_lead_laps"]
    assert L["n"] == 7 and L["min"] < 0 and L["median"] == pytest.approx(3.0, abs=1e-4)
    assert f["rnvp_late"] == 1


def test_events_after_a_power_cut_are_aligned_with_the_feed():
    """A RESET restarts the controller's clock: the replay moves events back to feed time, so the
    spins after a power cut keep their result, their lead and their prediction error."""
    from cylindre.replay import Replay

    sim = WheelSimulator(seed=5)
    spins = [sim.spin(None), sim.spin("power_cut"), sim.spin(None), sim.spin(None)]
    raw: list[dict] = []
    events: list[dict] = []
    rp = Replay(sim.geometry, events.append)
    rp_raw = Replay(sim.geometry, raw.append, feed_clock=False)
    for sp in spins:
        rp.run(sp.changes)
        rp_raw.run(sp.changes)
    boots = [e for e in raw if e["ev"] == "boot"]
    assert len(boots) == 2 and boots[1]["t"] == 0 and rp.boot_at > spins[1].truth["cut_us"]
    recs = [judge(sp.truth, evs) for sp, evs in zip(spins, assign(events, [sp.truth for sp in spins]))]
    assert [r["outcome"] for r in recs] == ["correct", "caught", "correct", "correct"]
    for r in (recs[0], recs[2], recs[3]):
        assert 2_000_000 < r["lead_us"] < 10_000_000 and abs(r["pred_error_us"]) < 1_500_000
        assert 1.0 < r["lead_laps"] < 6.0
    # the controller's own times of the later spins are far from the truth's feed times
    later = [e for e in raw if e["ev"] == "result"][-1]
    assert later["t"] == [e for e in events if e["ev"] == "result"][-1]["t"] - rp.boot_at
    assert later["t"] < spins[3].truth["rest_us"] - 1_000_000
    wrong = [judge(sp.truth, evs) for sp, evs in zip(spins, assign(raw, [sp.truth for sp in spins]))]
    assert [r["outcome"] for r in wrong] != ["correct", "caught", "correct", "correct"]


def _args(tmp_path, **kw):
    p = argparse.ArgumentParser()
    bench.add_arguments(p)
    a = p.parse_args([])
    a.out = tmp_path
    a.jobs = 1
    a.mpy_spins = 0
    a.no_plots = True
    for k, v in kw.items():
        setattr(a, k, v)
    return a


def test_bench_end_to_end_small(tmp_path, capsys):
    assert bench.run(_args(tmp_path, spins=24, fault_every=3, scenarios="void_button,power_cut")) == 0
    f = json.loads((tmp_path / "wheel.json").read_text())
    assert f["spins"] == 24 and f["valid"] == 16
    assert sum(f["valid_outcomes"].values()) == 16
    assert sum(row["spins"] for row in f["faults"].values()) == 8
    assert set(f["faults"]) == {"void_button", "power_cut"}
    assert f["run"]["sensor_events"] > 24 * 5000
    # a power cut restarts the controller's clock: the spins after one are still judged right
    assert f["valid_outcomes"]["correct"] == 16 and f["rnvp_late"] == 0
    assert f["faults"]["power_cut"]["caught"] == 4
    assert f["rnvp_error_us"]["n"] == 16 and f["rnvp_error_us"]["abs_max"] < 1_500_000
    assert 1.0 < f["rnvp_lead_laps"]["min"] <= f["rnvp_lead_laps"]["median"] < 6.0
    # every correct spin has the rule's bound; the firmware never beats it
    assert f["result_rule_bound_us"]["n"] == 16 and f["latency_over_rule_us"]["min"] >= 0
    assert f["result_rule_bound_us"]["min"] >= f["result_bound_us"]["min"]
    out = capsys.readouterr().out
    assert "valid spins:" in out and "rien ne va plus" in out and "lead in laps" in out
    assert "confirmation rule's bound (3 sightings from 3 sensors" in out


def test_bench_on_foreign_feeds(tmp_path):
    """--feeds reads FEED + FEED.truth.jsonl from a folder (here written with a sparse truth)."""
    feeds = tmp_path / "feeds"
    feeds.mkdir()
    sim = WheelSimulator(seed=31)
    spins = [sim.spin() for _ in range(3)]
    own_bounds = sorted(sp.truth["seen_us"] - sp.truth["rest_us"] for sp in spins)
    # the rule's bound as the simulated bench finds it (decoded spin by spin)
    from host_tools.sim.decode import Decoder
    dec = Decoder(sim.geometry)
    rule = confirm_rule(sim.geometry)
    own_rules = sorted(rule_bound(dec.feed(sp.t_us, sp.code, sp.level), sp.truth["rest_us"], sp.truth["number"], *rule)
                       for sp in spins)
    for sp in spins:      # another simulator need not write our extra truth keys
        for k in ("start_us", "end_us", "seen_us", "bounced_pockets", "first_lap_us", "rotor_rpm_x10", "valid"):
            sp.truth.pop(k, None)
    sim.write_feed(feeds / "other.feed", spins)
    out = tmp_path / "out"
    assert bench.run(_args(out, feeds=feeds)) == 0
    f = json.loads((out / "wheel.json").read_text())
    assert f["spins"] == 3 and f["valid"] == 3 and f["valid_outcomes"]["correct"] == 3
    assert f["result_bound_us"]["n"] == 3
    # the bound decoded from the feed is the simulator's own (first rising edge showing the ball)
    assert f["result_bound_us"]["min"] == own_bounds[0] and f["result_bound_us"]["max"] == own_bounds[-1]
    # and the rule's bound, decoded from the whole feed, is the one decoded spin by spin
    assert f["result_rule_bound_us"]["n"] == 3
    assert f["result_rule_bound_us"]["min"] == own_rules[0] and f["result_rule_bound_us"]["max"] == own_rules[-1]
    assert f["run"]["confirm_rule"] == [{"sightings": 3, "sensors": 3, "pocket_min_us": 5000, "span_us": 2500000}]
    assert bench.run(_args(tmp_path / "o2", feeds=tmp_path / "out")) == 2     # no feed there
    # a malformed feed is refused by name and line; the good ones are still measured
    bad = (feeds / "other.feed").read_text().splitlines()
    bad[100] = "oops"
    (feeds / "bad.feed").write_text("\n".join(bad) + "\n")
    (feeds / "bad.feed.truth.jsonl").write_text((feeds / "other.feed.truth.jsonl").read_text())
    assert bench.run(_args(tmp_path / "o3", feeds=feeds)) == 2
    f = json.loads((tmp_path / "o3" / "wheel.json").read_text())
    assert f["spins"] == 3 and "line 101" in f["run"]["errors"][0]


@pytest.mark.micropython
def test_micropython_cost_is_measured():
    m = bench.measure_micropython(seed=3, spins=1)
    assert m["spins"] == 1 and m["results"] == 1
    assert m["changes"] == m["encoder_edges"] + m["other_signal_changes"]
    # fuel is deterministic and ordered: parse < parse + quadrature < full replay
    assert 0 < m["fuel_parse_only"] < m["fuel_parse_and_quadrature"] < m["fuel_total"]
    assert m["fuel_firmware"] == m["fuel_total"] - m["fuel_parse_only"]
    assert m["fuel_per_event"] == pytest.approx(m["fuel_firmware"] / m["changes"])
    assert 10_000 < m["heap_after_import_bytes"] <= m["heap_peak_live_bytes"] < 200_000


def test_the_picos_schedule_gives_every_spin_the_same_verdict(tmp_path):
    """The Pico's shell samples the rotor by its timer every 100 ms and ticks the controller only
    at `next_due` (board/shell.py); the replay's default ticks every 10 ms. On spins mixing every
    fault, the two schedules must pay and void alike (`Replay(pico=True)`)."""
    out = {}
    for schedule in ("ticks", "pico"):
        d = tmp_path / schedule
        assert bench.run(_args(d, spins=56, fault_every=2, schedule=schedule)) == 0
        out[schedule] = json.loads((d / "wheel.json").read_text())
    ticks, pico = out["ticks"], out["pico"]
    assert pico["valid_outcomes"] == ticks["valid_outcomes"] and pico["valid_outcomes"]["correct"] == pico["valid"]
    # the same spins caught, paid, missed; a reason may differ where two checks race (the ball
    # unseen in the pockets against the rotor too slow: ball_off_wheel or no_result, both void)
    keys = ("spins", "caught", "other_void", "paid", "missed", "with_result")
    assert {k: [v[x] for x in keys] for k, v in pico["faults"].items()} == \
        {k: [v[x] for x in keys] for k, v in ticks["faults"].items()}
    assert len(pico["faults"]) >= 10 and pico["rnvp_late"] == 0
