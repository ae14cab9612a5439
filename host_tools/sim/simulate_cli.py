"""`cylindre simulate` — write N simulated spins to a feed file and its truth file beside it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .scenarios import SCENARIOS, parse_list
from .feedfile import FeedWriter, truth_path
from .presets import NOISY, REALISTIC, wheel_from
from .wheel import WheelSimulator

HELP = "simulate a wheel: write N spins to a sensor feed (and FEED.truth.jsonl beside it)"


def add_arguments(p) -> None:
    p.add_argument("feed", type=Path, nargs="?", help="feed file to write")
    p.add_argument("-n", "--spins", type=int, default=10, help="number of spins (default 10)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1): same seed, same feed")
    p.add_argument("--geometry", "--board", dest="geometry", type=Path,
                   help="JSON file with the wheel's geometry: a board file (boards/*.json) or a feed header dict")
    p.add_argument("--scenarios", default="none",
                   help="fault scenarios to inject, comma-separated, 'all' or 'none' (default); see --list")
    p.add_argument("--fault-every", type=int, default=3,
                   help="with --scenarios, one spin in this many carries a fault, in turn (default 3)")
    p.add_argument("--imperfect", action="store_true",
                   help="switch on realistic imperfections (jitter, missed/spurious pulses, contact bounce)")
    p.add_argument("--noisy", action="store_true",
                   help="--imperfect plus three ball-track artefacts (a stray pulse, a mis-timed lap, chatter)")
    p.add_argument("--wheel", help="wheel constants: a preset (dealer, biased) or a JSON object (docs/internals/simulator.md)")
    p.add_argument("--imperfections", help='imperfections as JSON, e.g. \'{"jitter_us": 40, "miss": 0.01}\'')
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")


def plan(n: int, scenarios: list[str], every: int) -> list[str | None]:
    """Which spin carries which scenario: every `every`-th spin from the 2nd, scenarios in turn."""
    out: list[str | None] = []
    k = 0
    for i in range(n):
        if scenarios and every > 0 and i % every == every - 1:
            out.append(scenarios[k % len(scenarios)])
            k += 1
        else:
            out.append(None)
    return out


def feed_errors():
    from cylindre.feed import FeedError
    return FeedError


def run(args) -> int:
    if args.list:
        for name in sorted(SCENARIOS):
            print("%-20s %s" % (name, SCENARIOS[name]))
        return 0
    try:
        if args.feed is None:
            raise ValueError("the feed file to write is missing (cylindre simulate FEED ...)")
        scen = parse_list(args.scenarios)
        geometry = json.loads(args.geometry.read_text()) if args.geometry else None
        imp = REALISTIC if args.imperfect else None
        if args.noisy:
            imp = NOISY
        if args.imperfections:
            imp = json.loads(args.imperfections)
        if args.spins < 1:
            raise ValueError("--spins must be at least 1")
        sim = WheelSimulator(geometry, seed=args.seed, imperfections=imp, wheel=wheel_from(args.wheel))
    except (ValueError, OSError, feed_errors()) as exc:
        print("cylindre simulate: %s" % exc, file=sys.stderr)
        return 2
    header = dict(sim.header(), generator="cylindre simulate", seed=args.seed)
    try:
        with FeedWriter(args.feed, header) as w:
            for sp in sim.spins(plan(args.spins, scen, args.fault_every)):
                w.add(sp)
    except OSError as exc:
        print("cylindre simulate: %s" % exc, file=sys.stderr)
        return 2
    print("%s: %d spins, %d lines; truth in %s" % (args.feed, args.spins, w.lines, truth_path(args.feed)))
    return 0
