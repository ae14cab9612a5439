"""No spin unseen, by property (CPython: hypothesis over the simulator's spins).

A wheel's sensors fail at random moments: one ball-track sensor or both (a cut cable to the
ball-track head), or a pocket sensor; dead, stuck active, or bouncing, for the whole spin or from
any moment of it (host_tools/sim/sensorfail.py). The same two spins are replayed through the
firmware once as they were and once with the failure, and the betting window read off the
controller's events as the host reads it (host_tools/sim/betting.py):

- no spin runs with betting open past the point where the working wheel called it: from the
  working wheel's *rien ne va plus* to its result (or to the failed wheel's own verdict on the
  spin, a void: bets taken after it play the next spin), the failed wheel takes no bet, once the
  failure is NOTICE_US old (a head that dies just before the call is only seen to have died
  when the ball's next pass is missed, 1.3 laps on: called then, `unseen`, or on the last
  prediction it made, or when a stuck sensor is told at 1 s; the lateness over the working
  wheel's call measured at most 0.34 s over 1,000 random failures);
- every spin the failed wheel launched ends in a result or a void (with its reason) before the
  next launch;
- a result it gives is the number the ball rests in.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from cylindre.replay import Replay
from host_tools.sim import WheelSimulator
from host_tools.sim.betting import first_open
from host_tools.sim.boards import load_board
from host_tools.sim.sensorfail import fail

ROOT = Path(__file__).resolve().parents[2]
BOARDS = {"3pk": (None, {}), "pico": load_board(ROOT / "boards" / "pico.json")}
NOTICE_US = 2_000_000        # a failure is noticed within this (see the module's docstring)


def replay(geometry, overrides, changes, end_us):
    events: list[dict] = []
    rp = Replay(geometry, events.append, overrides=overrides)
    rp.run(changes)
    rp.finish(end_us)
    return events


def signals_of(geometry, what, pick):
    balls = ["BALL%d" % i for i in range(len(geometry["ball_sensors_deg"]))]
    pockets = ["POCKET%d" % i for i in range(len(geometry["pocket_sensors_deg"]))]
    if what == "ball_all":
        return balls
    if what == "ball_one":
        return [balls[pick % len(balls)]]
    return [pockets[pick % len(pockets)]]


def unended(events):
    """Spins launched that no result or void ended before the next launch (or the end)."""
    left, out = None, []
    for e in events:
        if e["ev"] == "launch":
            if left is not None:
                out.append(left)
            left = e["spin"]
        elif e["ev"] in ("result", "void") and e.get("spin") == left:
            left = None
    return out + ([left] if left is not None else [])


# 30 examples in the suite (~15 s); UNSEEN_EXAMPLES=500 for a deeper run
@settings(max_examples=int(os.environ.get("UNSEEN_EXAMPLES", 30)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), board=st.sampled_from(sorted(BOARDS)),
       what=st.sampled_from(("ball_all", "ball_one", "pocket")), mode=st.sampled_from(("dead", "stuck", "bounce")),
       when=st.one_of(st.none(), st.floats(0.0, 1.0)), pick=st.integers(0, 7))
def test_no_spin_runs_with_betting_open_past_the_working_wheels_call(seed, board, what, mode, when, pick):
    geometry, overrides = BOARDS[board]
    sim = WheelSimulator(geometry, seed=[seed, 33])
    first, second = sim.spin(), sim.spin()
    truth = second.truth
    # the failure from the second spin's start (the whole spin) or from a moment up to 3 s after
    # its ball came to rest
    t0, t1 = truth["start_us"], truth["rest_us"] + 3_000_000
    t_fail = t0 if when is None else int(t0 + when * (t1 - t0))
    changes = first.changes + second.changes
    end = truth["end_us"] + 35_000_000        # the longest wait for a result is 30 s
    working = replay(sim.geometry, overrides, changes, end)
    failed = replay(sim.geometry, overrides, fail(changes, signals_of(sim.geometry, what, pick), t_fail, mode, seed),
                    end)
    call = next(e["t"] for e in working if e["ev"] == "rnvp" and e["spin"] == 2)
    result = next(e for e in working if e["ev"] == "result" and e["spin"] == 2)
    assert result["number"] == truth["number"]
    verdict = next((e["t"] for e in failed if e["ev"] in ("result", "void") and e.get("spin") == 2), result["t"])
    opened = first_open(failed, max(call, t_fail + NOTICE_US), min(result["t"], verdict))
    assert opened is None, "betting open %.2f s after the working wheel's call (%s %s %s from %.2f s after the launch)" % (
        (opened - call) / 1e6, what, mode, "the start" if when is None else "", (t_fail - truth["launch_us"]) / 1e6)
    assert unended(failed) == []
    for r in (e for e in failed if e["ev"] == "result"):
        assert r["number"] == (truth if r["spin"] == 2 else first.truth)["number"], r
