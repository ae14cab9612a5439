"""The firmware on ball-track artefacts (issue 13): each failure mode an independent simulator's
feeds showed, reproduced on the project's simulator and replayed through the firmware. The goals:
every valid spin named right, *rien ne va plus* never more than one lap earlier than the
configured lead (3 laps) and never late; a weak throw is a void with a reason."""

from __future__ import annotations

import pytest

from cylindre.replay import Replay
from host_tools.sim import WheelSimulator
from host_tools.sim.analysis import assign, judge

LEAD_LAPS = 3.0


def _replay(imperfections, n, seed, board=None, scenario=None):
    from host_tools.sim.boards import load_board
    geometry, overrides = load_board(board) if board else (None, {})
    sim = WheelSimulator(geometry, seed=seed, imperfections=imperfections)
    events: list[dict] = []
    rp = Replay(sim.geometry, events.append, overrides=overrides)
    truths = []
    for i in range(n):
        sp = sim.spin(scenario if i % 2 and scenario else None)
        rp.run(sp.changes)
        truths.append(sp.truth)
    rp.finish(truths[-1]["end_us"])
    return [judge(tr, evs) for tr, evs in zip(truths, assign(events, truths))]


def _check_calls(records):
    valid = [r for r in records if r["valid"]]
    assert valid
    for r in valid:
        assert r["outcome"] == "correct", r
        assert not r["rnvp_late"], r
        assert 0 < r["lead_laps"] <= LEAD_LAPS + 1.0, r


@pytest.mark.parametrize("board", [None, "boards/pico.json"])
def test_a_stray_pulse_half_a_lap_after_the_second_pass_does_not_halve_the_laps(board):
    _check_calls(_replay({"stray": 1.0}, 16, seed=21, board=board))


@pytest.mark.parametrize("board", [None, "boards/pico.json"])
def test_one_lap_mis_timed_by_one_to_three_ms_does_not_flip_the_prediction(board):
    _check_calls(_replay({"lap_jitter": 1.0, "jitter_us": 40.0}, 16, seed=22, board=board))


def test_chattering_ball_pulses_count_once():
    _check_calls(_replay({"chatter": 4.0}, 12, seed=23))


def test_missed_passes_are_laps_still():
    _check_calls(_replay({"miss": 0.05}, 16, seed=24))


def test_a_weak_throw_is_a_void_with_a_reason():
    records = _replay(None, 24, seed=25, scenario="weak_throw")
    weak = [r for r in records if r["fault"] == "weak_throw"]
    assert len(weak) == 12
    for r in weak:
        assert r["outcome"] == "caught", r
    _check_calls(records)


def test_a_weak_throw_one_ball_sensor_alone_sees_twice_is_a_void_with_a_reason():
    # The bench's noisy run (seed 1, chunk 17, spin 28): the ball crawls 1.5 laps and BALL0 misses
    # it both times; BALL1 sees it twice, 2.35 s apart, in pulses 17-22 ms wide (a spurious pulse
    # is 0.5-3 ms). No two-sensor group, no direction: still a launch, voided, never silence.
    sim = WheelSimulator(None, seed=26)
    events: list[dict] = []
    rp = Replay(sim.geometry, events.append)
    truths, checked = [], set()
    for i in range(24):
        sp = sim.spin("weak_throw" if i % 2 else None)
        changes = sp.changes
        if sp.truth["fault"] == "weak_throw":
            changes = [c for c in changes if c[1] != "BALL0"]
            if sum(1 for c in changes if c[1] == "BALL1" and c[2] == 1) >= 2:
                checked.add(sp.truth["spin"])
        rp.run(changes)
        truths.append(sp.truth)
    rp.finish(truths[-1]["end_us"])
    records = [judge(tr, evs) for tr, evs in zip(truths, assign(events, truths))]
    assert len(checked) >= 3
    for r in records:
        if r["spin"] in checked:
            assert r["outcome"] == "caught", r
    _check_calls(records)


def _drop_pulses(changes, name, which):
    """The changes without the pulses of `name` numbered in `which` (0: its first pulse)."""
    out, k, skip = [], -1, False
    for c in changes:
        if c[1] == name:
            if c[2] == 1:
                k += 1
                skip = k in which
            if skip:
                continue
        out.append(c)
    return out


def test_lone_passes_from_each_sensor_in_turn_are_misses_not_a_dead_sensor():
    # The bench's --imperfect run (seed 1, chunk 32, spin 3): BALL1 missed the ball's first two
    # passes and BALL0 its third. Both sensors are alive: the launch waits for the next group of
    # two (the direction), and the laps run from the first pass.
    sim = WheelSimulator(None, seed=27)
    events: list[dict] = []
    rp = Replay(sim.geometry, events.append)
    truths = []
    for i in range(4):
        sp = sim.spin()
        changes = sp.changes
        if i == 2:
            changes = _drop_pulses(_drop_pulses(changes, "BALL1", (0, 1)), "BALL0", (2,))
        rp.run(changes)
        truths.append(sp.truth)
    rp.finish(truths[-1]["end_us"])
    per = assign(events, truths)
    records = [judge(tr, evs) for tr, evs in zip(truths, per)]
    _check_calls(records)
    drop = next(e for e in per[2] if e["ev"] == "drop")
    # complete laps from the first pass (which comes within a lap of the release): none lost
    assert truths[2]["laps"] - 2 < drop["laps"] <= truths[2]["laps"], (drop["laps"], truths[2]["laps"])
