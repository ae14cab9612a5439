"""The firmware on the simulator's wheel (host_tools/sim): every fault scenario, with and without
the realistic imperfections, judged against the truth the way the bench does; and a simulated
feed replayed on MicroPython gives exactly the events it gives on CPython."""

from __future__ import annotations

import pytest

from cylindre.replay import Replay
from host_tools.sim import REALISTIC, WheelSimulator
from host_tools.sim.analysis import assign, judge
from host_tools.sim.scenarios import EXPECTED, SCENARIOS, parse_list
from host_tools.sim.simulate_cli import plan


def _run(seed, n, imperfect, every=2):
    sim = WheelSimulator(None, seed=seed, imperfections=REALISTIC if imperfect else None)
    events: list[dict] = []
    rp = Replay(sim.geometry, events.append)
    truths = []
    for sp in sim.spins(plan(n, parse_list("all"), every)):
        rp.run(sp.changes)
        truths.append(sp.truth)
    rp.finish(truths[-1]["end_us"])
    return truths, [judge(tr, evs) for tr, evs in zip(truths, assign(events, truths))], events


@pytest.mark.parametrize("seed,imperfect", [(3, False), (5, True)])
def test_every_scenario_on_the_simulated_wheel(seed, imperfect):
    truths, records, events = _run(seed, 2 * 2 * len(SCENARIOS), imperfect)
    seen = set()
    for r in records:
        if r["valid"]:
            assert r["outcome"] == "correct", r
        else:
            assert r["outcome"] == "caught", r          # one of EXPECTED[fault]; never paid
            seen.add(r["fault"])
    assert seen == set(SCENARIOS) == set(EXPECTED)
    # rien ne va plus before the real drop on every valid spin, a few laps ahead
    leads = [r["lead_us"] for r in records if r["valid"] and "lead_us" in r]
    assert leads and min(leads) > 3_000_000 and not any(r.get("rnvp_late") for r in records)
    # the events are JSON-able dicts with a time that never decreases
    ts = [e["t"] for e in events]
    assert ts == sorted(ts)


@pytest.mark.micropython
def test_simulated_feed_gives_the_same_events_on_micropython(tmp_path):
    from host_tools.sim.guest import run_feed

    sim = WheelSimulator(None, seed=9, imperfections=REALISTIC)
    spins = [sim.spin(None), sim.spin("same_direction"), sim.spin(None), sim.spin("power_cut")]
    feed = sim.write_feed(tmp_path / "four.feed", spins)
    events, _, _ = run_feed(feed, skip=("status",))
    host: list[dict] = []
    rp = Replay(sim.header(), lambda e: host.append(e) if e["ev"] != "status" else None)
    for sp in spins:
        rp.run(sp.changes)
    assert events == host
    kinds = [e["ev"] for e in events]
    assert kinds.count("result") == 2 and kinds.count("boot") == 2
    assert [e["reason"] for e in events if e["ev"] == "void"] == ["same_direction", "restart"]
    numbers = [e["number"] for e in events if e["ev"] == "result"]
    assert numbers == [spins[0].truth["number"], spins[2].truth["number"]]
