"""End to end over real pseudo-terminals (issue 8): the simulated wheel, a relay that delays,
cuts, replays and corrupts its line, the daemon, and players betting all along. No bet sent after
its spin's call is ever played, money balances to the cent, every result is settled once."""

import random
import time

from relaykit import Players, audit, calls_of, chaos, relay_rig


def test_no_bet_after_the_call_is_played_through_a_hostile_relay(tmp_path):
    rig, relay = relay_rig(tmp_path, seed=3)
    calls = calls_of(rig)
    rig.start_daemon()
    players = Players(rig, seed=3)
    try:
        rig.play(12)
        rig.wait_link()
        players.start()
        chaos(rig, relay, 8.0, random.Random(3))
        rig.finish(60)
        players.stop()
        time.sleep(0.5)
        out = audit(rig, players, calls)
    finally:
        players.stop()
        relay.stop()
        rig.stop_daemon()
    assert out["played"] > 0 and out["settled_spins"] > 0, out
    assert out["played_after_call"] == 0, out
    assert out["money_delta"] == 0, out
