"""Result frame -> settlement durable: the daemon's settlement path timed, with N bets on the table.

`settlement_latency(nbets, spins)` places `nbets` bets (the bench's mix of plain bets, even
chances and called bets, in one transaction: the setup), has the wheel call the spin, then times
a result frame's bytes through HostLink, the journal, the game's step, the settlement and its
rows, the events it publishes (journaled in the same transaction, as the table app's publisher does)
up to COMMIT (SQLite WAL, synchronous FULL: fsync). Spin ZERO_AT falls on zero, so the figures
hold a zero's prisons and the next spin's carried prisoners. It uses only interfaces every daemon
since issue 8 has (Journal, Table.place / on_event, HostLink, DeviceLink), so it also runs on an
older tree: `python durable.py NBETS SPINS` prints the figures as JSON with whatever
`host_tools` and `cylindre` come first on PYTHONPATH (bench/settle.py runs it on the commit
before issue 12's daemon side, extracted with `git archive`, for the before figure).
"""

from __future__ import annotations

import json
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

KEY = bytes(range(32))
ZERO_AT = 2     # this spin's number is zero: its even chances go en prison, and the next spin
                # settles them carried (the two slowest steps; 1 spin in 18 at a real table)


def _result_event(spin, number):
    """A realistic result event: the pocket sensors' sightings, as the controller sends it."""
    return {"ev": "result", "t": 41_000_000 + spin, "spin": spin, "number": number, "rest_t": 40_100_000,
            "sightings": [[40_100_000 + 350_000 * i, i % 3, 1000 + 37 * i] for i in range(8)], "laps": 17}


def mix(n, seed):
    """The bench's 10,000-bet mix (bench/settle.py, mixed_bets), with players, without ids."""
    from cylindre.rules import layout, wheel
    rnd = random.Random(seed)
    chevaux, trans, carres, sixains = (layout.all_chevaux(), layout.all_transversales(),
                                       layout.all_carres(), layout.all_sixains())
    calls = ["voisins", "tiers", "orphelins", "nassa", "jeu zero", "orphelins en plein"]
    out = []
    for _ in range(n):
        k = rnd.random()
        stake = rnd.choice([100, 200, 500, 1000, 2500, 5000])
        if k < 0.25:
            b = {"type": "plein", "numbers": [rnd.randrange(37)], "stake": stake}
        elif k < 0.40:
            b = {"type": "cheval", "numbers": list(rnd.choice(chevaux)), "stake": stake}
        elif k < 0.47:
            b = {"type": "transversale", "numbers": list(rnd.choice(trans)), "stake": stake}
        elif k < 0.55:
            b = {"type": "carré", "numbers": list(rnd.choice(carres)), "stake": stake}
        elif k < 0.60:
            b = {"type": "sixain", "numbers": list(rnd.choice(sixains)), "stake": stake}
        elif k < 0.70:
            b = {"type": rnd.choice(["douzaine", "colonne"]), "which": rnd.randint(1, 3), "stake": stake}
        elif k < 0.85:
            b = {"type": rnd.choice(wheel.CHANCES), "stake": stake}
        else:
            b = {"type": rnd.choice(calls), "unit": rnd.choice([100, 200, 500])}
        b["player"] = "p%d" % rnd.randrange(50)
        out.append(b)
    return out


def settlement_latency(nbets, spins, seed=1):
    from cylindre.link.device import DeviceLink
    from cylindre.link.host import HostLink
    from host_tools.table.journal.events_log import EventLog
    from host_tools.table.journal.store import Journal
    from host_tools.table.game.table import Table
    logging.disable(logging.WARNING)
    rng = random.Random(seed)
    times, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        clock = [1000]                      # ms: the host's clock and the wheel's (no transit)
        journal = Journal(Path(tmp) / "bench.sqlite")
        # the table app's publisher: every event the table publishes journaled in its transaction
        table = Table(journal, "T1", clock=lambda: clock[0], publish=EventLog(journal).publish)
        table.set_open(True)
        wire = []
        dev = DeviceLink(wire.append, lambda: clock[0], KEY, "T1")
        host = HostLink(wire.append, lambda: clock[0], KEY, wheel="T1")
        host.hello()
        dev.feed(wire.pop())
        host.feed(b"".join(wire))
        wire.clear()

        cpu = []

        def deliver(data):
            t0, c0 = time.perf_counter(), time.thread_time()
            for rec in host.feed(data):
                if rec["kind"] == "event":
                    table.on_event(rec["boot"], rec["seq"], rec["event"], rec)
                    host.acknowledge(rec["seq"])
            cpu.append(time.thread_time() - c0)         # (the step's own CPU: what the machine's load does not stretch)
            return time.perf_counter() - t0

        for spin in range(1, spins + 1):
            bets = mix(nbets, seed * 1000 + spin)
            clock[0] += 100
            # a STATUS saying betting is open, every event taken, sent now
            table.on_status(host.boot, {"at_ms": clock[0], "emitted": 0, "state": "idle",
                                        "echo": [clock[0], clock[0]]}, 0)
            with table.lock, table.j.tx():
                for b in bets:
                    table.place(b)
            for ev in ({"ev": "launch", "t": 1, "spin": spin}, {"ev": "rnvp", "t": 2, "spin": spin}):
                clock[0] += 10
                dev.emit(ev)
                deliver(b"".join(wire))
                wire.clear()
            # the ball runs for seconds after the call: what the call set going meanwhile (the
            # journal's checkpoint, where the daemon has one) is over before the result
            busy = getattr(table.j, "_checkpointer", None)
            if busy is not None:
                busy.join(30)
            number = rng.randrange(37)
            dev.emit(_result_event(spin, 0 if spin == ZERO_AT else number))
            data = b"".join(wire)
            wire.clear()
            times.append(deliver(data))
            cpus.append(cpu[-1])
            dev.feed(b"".join(wire))        # the ack
            wire.clear()
            assert _settled(table.j, spin) == nbets, (_settled(table.j, spin), nbets)
        table.j.close()
    ms = sorted(t * 1000 for t in times)
    return {"bets": nbets, "spins": spins, "median_ms": round(statistics.median(ms), 1),
            "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1), "max_ms": round(ms[-1], 1),
            "min_ms": round(ms[0], 1), "cpu_median_ms": round(statistics.median(cpus) * 1000, 1),
            "cpu_max_ms": round(max(cpus) * 1000, 1),
            "journal": "SQLite WAL, synchronous=FULL, on " + tempfile.gettempdir()}


def _settled(j, spin):
    """How many bets spin `spin` settled: the view `bets_now` (journal schema 4: a settled bet's
    row may still say `locked`), or the rows (a daemon before it)."""
    import sqlite3
    try:
        return j.one("SELECT COUNT(*) AS n FROM bets_now WHERE spin=? AND status='settled'", (spin,))["n"]
    except sqlite3.OperationalError:
        return j.one("SELECT COUNT(*) AS n FROM bets WHERE spin=? AND status='settled'", (spin,))["n"]


BEFORE = "bb83dd9"       # main before issue 12's daemon side (compiled layout, results rows, group commit)


def before_tree(commit=BEFORE):
    """The daemon and rules of `commit`, extracted with `git archive` into build/before-<commit>
    (kept for the next run): a folder to put first on PYTHONPATH (with its `firmware`), or None
    outside a git checkout."""
    import subprocess
    root = Path(__file__).resolve().parents[2]
    out = root / "build" / ("before-" + commit)
    if (out / "host_tools" / "daemon" / "table.py").exists():
        return out
    try:
        data = subprocess.run(["git", "-C", str(root), "archive", commit, "host_tools", "firmware"],
                              check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    import io
    import tarfile
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(out, filter="data")
    return out


def run_in(tree, *args):
    """`settlement_latency(*args)` run by this Python with `tree`'s daemon and rules first on
    PYTHONPATH (None: this checkout's): its figures."""
    import os
    import subprocess
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), str(Path(tree) / "firmware")])
    cwd = tree if tree is not None else Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), *map(str, args)], cwd=cwd, env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


if __name__ == "__main__":
    print(json.dumps(settlement_latency(int(sys.argv[1]), int(sys.argv[2]))))
