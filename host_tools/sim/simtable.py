"""A journal written by a simulated table, then its statistics: the firmware's code on the simulated
board (the real link protocol over a pseudo-terminal) and the real daemon journaling what it sends,
with croupiers rotating on duty; the wheel and the croupiers' throws from the simulator's presets
(`--wheel biased`, `--dealer NAME`: that croupier throws with the `dealer` signature).

    python -m host_tools.sim.simtable --spins 600 --wheel biased --journal build/biased.sqlite
    python -m host_tools.sim.simtable --spins 400 --dealer Marc --seeds 1-5

Prints, per seed, the games, the family's alarms and the smallest Holm p-value; at the end how
many runs raised an alarm (the detection rate with a bias, the false-alarm rate without one).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

CROUPIERS = ("Anne", "Marc", "Paul")


def run_table(journal, spins, seed=1, wheel=None, dealer=None, rotate=30, speed=300.0, log=None):
    """Play `spins` on a simulated board into the journal at `journal`, through the daemon; the
    croupier on duty changes every `rotate` spins (Anne, Marc, Paul). Returns (spins played, the
    daemon's link counters: frames, events, rejects, ...)."""
    from host_tools.table.wheel.keys import new_key
    from host_tools.table.daemon.host import TableHost
    from host_tools.sim.presets import DEALER, WHEEL, wheel_from
    from host_tools.sim.ptywheel import PtyPort, SimulatedBoard

    from host_tools.stats import duty

    journal = Path(journal)
    with tempfile.TemporaryDirectory(prefix="cylindre-key-") as kd:
        key = new_key(Path(kd) / "T1.key")      # this run's own wheel key
    pty = PtyPort()
    board = SimulatedBoard(pty, key, "T1", seed=seed, speed=speed, pause=0.0, log=lambda s: None)
    plain = dict(WHEEL, **(wheel_from(wheel) or {}))
    host = TableHost.build(pty.path, key, str(journal), open_table=True)
    with host.j.tx() as db:
        duty.create(db)
    d = host.d
    d.start()
    try:
        while not d.link.in_session:
            board.service()
            time.sleep(0.005)
        done = 0
        while done < spins:
            name = CROUPIERS[(done // rotate) % len(CROUPIERS)]
            if done % rotate == 0:
                board.drain(30)                 # the last turn's games journaled before the change
                with host.j.tx() as db:
                    duty.set_on_duty(db, "T1", name, time.time(), set_by="simtable")
                board.sim.wheel = dict(plain, **DEALER) if name == dealer else plain
            board.play(board.spins + min(rotate - done % rotate, spins - done))
            done = board.spins
            if log:
                log(f"  seed {seed}: {done}/{spins} spins")
        board.drain(10)                         # every event acknowledged: journaled by the daemon
    finally:
        d.stop()
        host.events.close()
        d.j.close()
        import os
        for fd in (pty.master, pty.slave):
            try:
                os.close(fd)
            except OSError:
                pass
    return done, dict(d.counts)


def main(argv=None) -> int:
    import logging
    from host_tools.stats import analysis, games

    logging.basicConfig(level=logging.ERROR)    # the link's recovered rejects are counted below, not logged
    p = argparse.ArgumentParser(prog="python -m host_tools.sim.simtable", description=__doc__.split("\n\n")[0])
    p.add_argument("--spins", type=int, default=400, help="spins per run (default 400)")
    p.add_argument("--seeds", default="1", help="a seed or a range A-B (one run each; default 1)")
    p.add_argument("--wheel", help="the simulator's wheel: a preset (biased, dealer) or a JSON object (docs/internals/simulator.md)")
    p.add_argument("--dealer", help="this croupier (Anne, Marc or Paul) throws with the dealer signature")
    p.add_argument("--rotate", type=int, default=30, help="spins per croupier's turn at the wheel (default 30)")
    p.add_argument("--alpha", type=float, default=analysis.ALPHA, help="family-wise alpha (default 0.01)")
    p.add_argument("--speed", type=float, default=300.0, help="simulated seconds per real second (default 300)")
    p.add_argument("--journal", help="keep the journal here (one seed); default a temporary file")
    a = p.parse_args(argv)
    lo, _, hi = a.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    if a.dealer and a.dealer not in CROUPIERS:
        p.error(f"--dealer: one of {', '.join(CROUPIERS)}")
    alarms = 0
    t0 = time.time()
    for seed in seeds:
        with tempfile.TemporaryDirectory(prefix="cylindre-simtable-") as tmp:
            path = Path(a.journal) if a.journal and len(seeds) == 1 else Path(tmp) / "journal.sqlite"
            _, counts = run_table(path, a.spins, seed=seed, wheel=a.wheel, dealer=a.dealer, rotate=a.rotate, speed=a.speed)
            res = analysis.analyse(games.read(path, "T1"), alpha=a.alpha)
        low = min(res["family"], key=lambda f: f["p_holm"]) if res["family"] else None
        alarms += bool(res["alarms"])
        print(json.dumps({"seed": seed, "games": res["games"], "voids": res["voids"]["voids"],
                          "frames_refused": counts["rejects"], "alarms": res["alarms"],
                          "lowest": low and {"test": low["test"], "p_holm": round(low["p_holm"], 6)}}, ensure_ascii=False), flush=True)
    print(f"{alarms}/{len(seeds)} runs raised an alarm at alpha {a.alpha} (Holm), {a.spins} spins each, "
          f"wheel {a.wheel or 'fair'}, dealer {a.dealer or 'none'}; {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
