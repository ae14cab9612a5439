"""Bench part `rest`: how safe and how fast each confirmation rule is, on the simulator's bounce.

The wheel bench runs every sensor edge through the controller: 2,000 spins take half a minute,
too few to see a wrong number that comes once in 100,000. Here only what the confirmation rule
sees is modelled, straight from the simulator's own bounce model (`WheelSimulator._bounce`: the
ball's sits in pockets between the drop and its rest): for each spin, when the pocket holding the
ball passes each pocket sensor of the board, and how much of that pass the ball stayed in it.
A pass with the ball there for at least 60 % of the sensor's window is a sighting (the firmware's
threshold for a full pulse, spin/pockets.py); a shorter one breaks the run (a hopping ball). The
rule is then applied as the controller does: the last `need` sightings agree, from at least
`sensors` distinct sensors. 100,000 spins take about 10 s a rule.

Limits: the rotor turns at a constant speed over the bounce (the simulator's decays by under 1 %
there), no pulse is missed, no chatter, no landing pulse (a landing never confirms by itself in
the firmware); the drop is the simulator's own instant, not the controller's estimate. The wheel
bench checks the firmware itself; this part measures the rule against the model's rare sequences.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
from cylindre.spin.pockets import FULL_X10

from host_tools.sim.physics import BallTrack
from host_tools.sim.presets import WHEEL, geometry_from, wheel_from
from host_tools.sim.wheel import WheelSimulator

PITCH = 360.0 / 37
FULL = FULL_X10 / 10  # fraction of the window a sighting covers (the firmware's own threshold)


class _SteadyRotor:
    """What `_bounce` asks of the rotor: its direction, speed and the index mark's angle."""

    def __init__(self, rpm):
        self.direction = 1
        self.rpm = rpm

    def at(self, t):
        return 0.0

    def rpm_at(self, t):
        return self.rpm


def bounces(n, seed=1, wheel=None):
    """`n` bounces of the simulator: yields (sits, rest_s, rpm) with the last sit open-ended."""
    sim = WheelSimulator(seed=seed, wheel=wheel)
    W = sim.wheel
    rng = np.random.default_rng(seed + 1)
    wc = 2 * math.pi / W["critical_lap_s"]
    ball = BallTrack(2 * math.pi / 0.55, W["decel"], W["drag"], wc)
    for _ in range(n):
        rpm = float(rng.uniform(*W["rotor_rpm"]))
        sits, rest, _ = sim._bounce(_SteadyRotor(rpm), ball, -1, 1, 0.0, 0.0, wc)
        sits = list(sits)
        sits[-1] = (rest, rest + 60.0, sits[-1][2])
        yield sits, rest, rpm, float(rng.uniform(0.0, 360.0))


def sightings(sits, rpm, sensors, theta0, window=None, empties=False):
    """[(t_mid, sensor, pocket, ok)] in time order: each pass of a pocket holding the ball over a
    sensor; ok when the ball stayed in it over >= 60 % of the sensor's window. With `empties`, also
    each pass of a pocket the ball visits while the ball is not in it at all (ok None): what the
    encoder tells the firmware of a pocket that passed a sensor without a pulse."""
    wd = 6.0 * rpm                      # degrees a second
    turn = 360.0 / wd
    w = (window if window is not None else WHEEL["pocket_sensor_width"]) * PITCH / wd
    out = []
    for a, b, k in sits:
        for j, chi in enumerate(sensors):
            t = ((chi - theta0 - k * PITCH) % 360.0) / wd
            t += math.floor((a - w / 2 - t) / turn) * turn
            while t - w / 2 < b:
                inside = min(t + w / 2, b) - max(t - w / 2, a)
                if inside > 0:
                    out.append((t, j, k, inside >= FULL * w))
                t += turn
    if empties:
        start, end = sits[0][0], sits[-1][1]
        by = {}
        for a, b, k in sits:
            by.setdefault(k, []).append((a, b))
        for k, spans in by.items():
            for j, chi in enumerate(sensors):
                t = ((chi - theta0 - k * PITCH) % 360.0) / wd
                t += math.ceil((start - t) / turn) * turn
                while t < end:
                    if all(min(t + w / 2, b) <= max(t - w / 2, a) for a, b in spans):
                        out.append((t, j, k, None))
                    t += turn
    out.sort(key=lambda s: s[0])
    return out


def confirm(sg, need, distinct, strict=False, span=0.0):
    """Index of the sighting at which the rule confirms, or -1: the last `need` sightings are ok,
    name the same pocket and come from at least `distinct` sensors. `strict`: a pass of the run's
    pocket over any sensor with the ball not in it (an empty pass, from `sightings(empties=True)`)
    breaks the run: the sightings must be consecutive passes of that pocket. `span` (s): the run
    must also reach back that long from its last sighting to its first."""
    run = []
    for m, s in enumerate(sg):
        if s[3] is None:
            if strict and run and run[-1][2] == s[2]:
                run = []
            continue
        if not s[3]:
            run = []
            continue
        if run and run[-1][2] != s[2]:
            run = []
        run.append(s)
        if len(run) >= need and len(set(x[1] for x in run[-need:])) >= distinct and s[0] - run[0][0] >= span:
            return m
    return -1


def false_spans(sg, final):
    """Spans (s) of the runs of a pocket the ball later leaves: sightings of it at consecutive
    passes (no empty pass, no other pocket seen, no partial pulse between), two or more."""
    out, run = [], []
    for s in sg + [(0.0, -1, -1, False)]:
        if s[3] is None and not (run and run[-1][2] == s[2]):
            continue
        if s[3] and run and run[-1][2] == s[2]:
            run.append(s)
            continue
        if len(run) >= 2 and run[0][2] != final:
            out.append(run[-1][0] - run[0][0])
        run = [s] if s[3] else []
    return out


def measure(n, sensors, rules, seed=1, wheel=None):
    """For each rule (need, distinct): wrong numbers, no confirmation, latencies after rest (s),
    and the bounce statistics the rules face."""
    out = {r: {"wrong": 0, "none": 0, "lat": []} for r in rules}
    settle, longest_sit, returns, span, false = [], 0.0, 0, 0.0, []
    w = WHEEL["pocket_sensor_width"]
    for sits, rest, rpm, theta0 in bounces(n, seed, wheel):
        settle.append(rest)
        final = sits[-1][2]
        seen = {}
        for a, b, k in sits[:-1]:
            longest_sit = max(longest_sit, b - a)
            if k in seen and k != final:
                returns += 1
                span = max(span, b - seen[k])
            seen.setdefault(k, a)
        sg = sightings(sits, rpm, sensors, theta0, empties=True)
        false += false_spans(sg, final)
        end = w * PITCH / (12.0 * rpm)          # the pulse's end, after its middle
        for r in rules:
            m = confirm(sg, r[0], r[1], bool(r[2] if len(r) > 2 else 0), (r[3] if len(r) > 3 else 0) / 1000.0)
            if m < 0:
                out[r]["none"] += 1
            elif sg[m][2] != final:
                out[r]["wrong"] += 1
            else:
                out[r]["lat"].append(sg[m][0] + end - rest)
    st = np.array(settle)
    stats = {"spins": n, "drop_to_rest_s": {"median": float(np.median(st)), "p99": float(np.percentile(st, 99)),
                                            "max": float(st.max())},
             "longest_bouncing_sit_s": longest_sit, "returns_to_a_pocket_left": returns,
             "longest_return_span_s": span,
             "false_runs": len(false), "false_run_span_s": {
                 "p99": float(np.percentile(false, 99)) if false else 0.0,
                 "p99.9": float(np.percentile(false, 99.9)) if false else 0.0,
                 "max": max(false) if false else 0.0}}
    return out, stats


def add_arguments(p):
    p.add_argument("--spins", type=int, default=100000, help="bounces to sample (default 100000)")
    p.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    p.add_argument("--board", default=None, help="board file (boards/*.json): its pocket sensors and "
                   "confirm_* settings (default: the simulator's 3-pocket-sensor wheel)")
    p.add_argument("--rules", default=None, help="rules to compare as need:sensors,... (default: the "
                   "board's rule, 2:2 (two sensors, the reverted proof of rest) and need+1)")
    p.add_argument("--wheel", default=None, help="wheel constants of the simulator (as bench wheel)")
    p.add_argument("--out", default="bench/out", help="output folder (default bench/out)")


def _board(path):
    """The board's pocket sensors and its confirmation rule (need, sensors, strict, span_ms)."""
    from cylindre.spin.settings import build, confirm_sensors, confirm_sightings
    from host_tools.sim.boards import load_board
    geometry, overrides = load_board(path) if path else (geometry_from(None), {})
    given = {k: geometry[k] for k in ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg")}
    given.update(overrides or {})
    s, err = build(given)
    if s is None:
        raise SystemExit("board: %s" % err)
    return s["pocket_sensors_deg"], (confirm_sightings(s), confirm_sensors(s), 0, s["confirm_span_us"] // 1000)


def _rule(text):
    """'need:sensors[:s][:span_ms]' as a tuple (need, sensors, strict, span_ms); s: the sightings
    are consecutive passes of the pocket (no empty pass between them), span_ms: the run spans at
    least that long."""
    f = text.split(":")
    strict = 1 if "s" in f[2:] else 0
    span = [int(x) for x in f[2:] if x != "s"]
    return int(f[0]), int(f[1]), strict, span[0] if span else 0


def _name(r):
    return "%d:%d%s%s" % (r[0], r[1], ":s" if r[2] else "", ":%d" % r[3] if r[3] else "")


def run(args) -> int:
    sensors, own = _board(args.board)
    if args.rules:
        rules = [_rule(r) for r in args.rules.split(",")]
    else:
        rules = [own, (own[0], own[1], 0, 0), (2, min(2, len(sensors)), 0, 0), (own[0] + 1, own[1], 0, 0)]
    rules = list(dict.fromkeys(rules))
    t0 = time.time()
    res, stats = measure(args.spins, sensors, rules, args.seed, wheel_from(args.wheel) if args.wheel else None)
    print("%d bounces of the simulator (seed %d), pocket sensors at %s, %.1f s"
          % (args.spins, args.seed, sensors, time.time() - t0))
    d = stats["drop_to_rest_s"]
    print("bounce: drop to rest median %.2f s, p99 %.2f s, max %.2f s; longest sit before the rest %.3f s; "
          "%d returns to a pocket the ball then leaves for good, spanning up to %.2f s"
          % (d["median"], d["p99"], d["max"], stats["longest_bouncing_sit_s"],
             stats["returns_to_a_pocket_left"], stats["longest_return_span_s"]))
    f = stats["false_run_span_s"]
    print("runs of 2+ sightings at consecutive passes of a pocket the ball then leaves: %d, spanning p99 %.2f s, "
          "p99.9 %.2f s, max %.2f s" % (stats["false_runs"], f["p99"], f["p99.9"], f["max"]))
    figures = {"stats": stats, "sensors": sensors, "rules": {}}
    for r in rules:
        x = res[r]
        lat = np.array(x["lat"]) if x["lat"] else np.array([float("nan")])
        mark = " (the board's)" if r == own else ""
        print("rule %s (%d sightings from %d sensors%s)%s: wrong %d of %d (%.4f %%), none %d; after rest median %.2f s, "
              "p99 %.2f s, max %.2f s" % (_name(r), r[0], r[1], (", consecutive passes" if r[2] else "")
                                          + (", over at least %.1f s" % (r[3] / 1000) if r[3] else ""), mark, x["wrong"], args.spins, 100.0 * x["wrong"] / args.spins,
                                          x["none"], np.median(lat), np.percentile(lat, 99), lat.max()))
        figures["rules"][_name(r)] = {"wrong": x["wrong"], "none": x["none"], "median_s": float(np.median(lat)),
                                         "p99_s": float(np.percentile(lat, 99))}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rest.json").write_text(json.dumps(figures, indent=1))
    print("figures: %s" % (out / "rest.json"))
    return 0


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    st = figures["stats"]
    n = st["spins"]
    L = ["## The ball at rest (`rest`)", "",
         f"Confirmation rules (`need:sensors[:span_ms]`: sightings needed, from how many sensors, over at least how "
         f"long) applied to {n:,} of the simulator's bounces, pocket sensors at "
         f"{', '.join(f'{s:g}°' for s in figures['sensors'])} (`make bench ARGS='rest'`): the wrong numbers too rare "
         "for the `wheel` part to see.", "",
         "| rule | wrong numbers | result after rest, median | p99 |", "|---|---|---|---|"]
    for name, r in figures["rules"].items():
        L.append(f"| `{name}` | {r['wrong']:,} of {n:,} | {r['median_s']:.2f} s | {r['p99_s']:.2f} s |")
    f = st["false_run_span_s"]
    L += ["", f"The longest run of sightings of a pocket the ball then left: {f['max']:.2f} s "
              f"({st['false_runs']:,} such runs); drop to rest median {st['drop_to_rest_s']['median']:.2f} s."]
    return "\n".join(L) + "\n"
