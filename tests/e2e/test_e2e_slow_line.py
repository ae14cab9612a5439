"""A slow line for real (issue 21, item 3): the simulated wheel and the daemon in its own process
over a pty, every byte held back 0.8 s each way by a relay (a 1.6 s round trip, past the
1 s HELLO period). The session opens, once, and every result is settled once."""

import time

import pytest

from e2ekit import check_settled_exactly_once
from relaykit import relay_rig

pytestmark = pytest.mark.slow


def test_a_session_opens_once_over_a_pty_with_a_1_6_s_round_trip(tmp_path):
    rig, relay = relay_rig(tmp_path, seed=7, speed=60.0, pause=0.3)
    relay.delay_s = 0.8
    try:
        rig.start_daemon()
        rig.play(3)
        state = rig.wait_link(timeout=60)
        assert state["link"]["sessions"] == 1
        rig.finish(timeout=120)
        rows = check_settled_exactly_once(rig)
        assert len(rows) == 3
        time.sleep(2.0)                 # the session holds on the slow line: no re-opening
        st, state = rig.api("GET", "/state")
        assert state["link"]["sessions"] == 1 and state["link"]["session"]
        assert state["link"]["rtt_ms"] >= 1500
        assert state["link"]["counts"]["rejects"] == 0
    finally:
        relay.stop()
        rig.stop_daemon()
