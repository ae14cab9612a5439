"""`make drill`: rounds of the simulated wheel through a hostile relay (delays, cuts, replays,
noise, daemon kills) with players betting all along; prints per round and in total the counts
that matter: bets played after their spin's call, forged/replayed frames refused, money delta.

    .venv/bin/python tests/drill.py [--rounds 5] [--seconds 20] [--spins 25] [--speed 20] [--kill]
"""

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from relaykit import Players, audit, calls_of, chaos, relay_rig  # noqa: E402


def one(seed, seconds, spins, speed, kill):
    with tempfile.TemporaryDirectory() as tmp:
        rig, relay = relay_rig(Path(tmp), seed=seed, speed=speed)
        calls = calls_of(rig)
        rig.start_daemon()
        players = Players(rig, seed=seed)
        try:
            rig.play(spins)
            rig.wait_link()
            players.start()
            faults = chaos(rig, relay, seconds, random.Random(seed), kill=kill)
            rig.finish(120)
            players.stop()
            time.sleep(0.5)
            out = audit(rig, players, calls)
            c = sqlite3.connect(rig.journal)
            out["frames_refused"] = dict(c.execute("SELECT kind, COUNT(*) FROM frames WHERE kind IN "
                                                   "('reject','stale','gap') GROUP BY kind").fetchall())
            c.close()
            out["faults"] = faults
            out["results_wheel"] = len(rig.board_results())
        finally:
            players.stop()
            relay.stop()
            rig.stop_daemon()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=20.0, help="seconds of faults a round")
    p.add_argument("--spins", type=int, default=25, help="spins a round")
    p.add_argument("--speed", type=float, default=20.0, help="simulated wheel speed")
    p.add_argument("--kill", action="store_true", help="also kill and restart the daemon")
    a = p.parse_args(argv)
    total = {"bets": 0, "played": 0, "played_after_call": 0, "money_delta": 0}
    for r in range(a.rounds):
        out = one(r + 1, a.seconds, a.spins, a.speed, a.kill)
        print(json.dumps(out, sort_keys=True), flush=True)
        for k in total:
            total[k] += out[k]
    print("TOTAL " + json.dumps(total, sort_keys=True))
    return 1 if total["played_after_call"] or total["money_delta"] else 0


if __name__ == "__main__":
    sys.exit(main())
