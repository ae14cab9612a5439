"""A void after the launch is never durable nowhere for long, by property (CPython: hypothesis).

The controller holds such a void in RAM until the host acknowledges it (spin/core.py,
`VOID_HOLD_US`): from the void on, at every tick, either the flash no longer says the spin is in
progress or the host has the void, once the hold has passed (the checks come at its end). Whatever
the acknowledgement's delay (or none), and however long the ball rests. And
the coup costs one write (its launch's) when the acknowledgement comes within the hold, two
otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parents[1] / "shared"))

from test_spin_flash import CountingStore  # noqa: E402
from test_spin_kit import Log, board, make  # noqa: E402
from cylindre.spin.core import VOID_HOLD_US  # noqa: E402

WINDOW_US = VOID_HOLD_US + 10000      # the hold, then one tick of the kit (the checks come at its end)


@settings(max_examples=60, deadline=None)
@given(ack_ms=st.one_of(st.none(), st.integers(0, 2000)), rest_s=st.integers(2, 40))
def test_a_void_is_in_flash_or_at_the_host_within_the_hold_and_one_write_when_heard(ack_ms, rest_s):
    store = CountingStore()
    w, ctl, _ = make(settings=board(min_laps=20), store=store)
    log = Log()
    ctl.out = log
    store.clock = ctl
    seen = {"void": None, "acked": False, "worst": 0}
    tick = ctl.tick

    def checked_tick(t):
        at = seen["void"]
        if at is not None and ack_ms is not None and not seen["acked"] and t >= at + ack_ms * 1000:
            seen["acked"] = True
            ctl.durable()                   # the link: the host's ACK of the void, come before this tick
        tick(t)
        v = log.of("void")
        if v and at is None:
            seen["void"] = at = v[0]["t"]
        if at is not None and store.record["in_spin"] == 1 and not seen["acked"]:
            seen["worst"] = max(seen["worst"], t - at)

    ctl.tick = checked_tick
    ctl.boot(0)
    w.add_index(0, 60000000)
    w.spin(3000000, -1, 4, rest_us=rest_s * 1000000)
    w.run(ctl, 45000000)
    assert [e["reason"] for e in log.of("void")] == ["few_laps"] and not log.of("result")
    assert seen["worst"] <= WINDOW_US, seen
    launch = log.of("launch")[0]["t"]
    writes = [a for a in store.at if a >= launch]
    if ack_ms is not None and ack_ms * 1000 < VOID_HOLD_US:
        assert len(writes) == 1 and store.record["in_spin"] == 1       # the launch's write alone
    elif ack_ms is None:
        assert len(writes) == 2 and store.record["in_spin"] is None    # the void written after the hold
