"""Where the firmware's cycles go on the emulated RP2040: `make bench ARGS=rp2prof`.

The `rp2` part gives the CPU by phase of whole spins; this one says what spends it. One spin of
the simulator is played on the emulated chip's pins (as in `rp2`), three windows are read:
the wheel idle with the rotor stopped, idle with the rotor turning, and the ball on the track
(from 0.5 s after the launch). Two runs of the same firmware and feed:

- **plain**: nothing but the firmware: the busy share of each window (executed cycles over
  125 MHz x emulated time) and the link's counts;
- **allocations**: a /boot.py holds the collector off in the ball window and reads
  `gc.mem_alloc()` at both ends: the bytes the firmware allocates there; then it times one
  collection (`gc.collect()`) and reads the heap left live and free: at the window's rate of
  allocation, how often the collector runs and its share of the core over a long run;
- **profiled**: the same /boot.py also wraps the main loop's calls (`PROFILED`) with
  `time.ticks_us` brackets. The brackets cost cycles of their own (~0.1 ms a call on this
  core): the per-call times are the call's share *with* its bracket, for ranking, not for
  adding up to the plain run's figure.

Calls nest (`Board.poll` holds `Controller.tick`, which holds `Controller._status`...): the
table gives each call's total, not an exclusive split.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from host_tools.rp2emu.chip import WATCHDOG_SCRATCH
from host_tools.rp2emu.table import Feed, Host, deploy, rest_levels

OUT = Path("bench/out")
# what the allocation run's probe reads at the end of the ball window -> the window's key
GC_KEYS = {"bytes allocated": "bytes_allocated", "collect us": "collect_us", "heap live": "heap_live",
           "heap free": "heap_free"}
FLAG = WATCHDOG_SCRATCH + 4        # SCRATCH1: the harness asks the probe for a dump

# (module, class, method) wrapped by the profile; `frame.build` and `frame.parse` are functions.
PROFILED = [
    ("cylindre.board.loop", "MainLoop", "step"), ("cylindre.board.shell", "Board", "poll"),
    ("cylindre.board.shell", "Board", "due"), ("cylindre.board.shell", "Board", "_led"),
    ("cylindre.board.shell", "Board", "_count"), ("cylindre.board.loop", "EdgeWake", "ioctl"),
    ("cylindre.spin.controller", "Controller", "tick"), ("cylindre.spin.controller", "Controller", "edge"),
    ("cylindre.spin.controller", "Controller", "next_due"), ("cylindre.spin.controller", "Controller", "_status"),
    ("cylindre.spin.controller", "Controller", "_save"), ("cylindre.spin.controller", "Controller", "_ball"),
    ("cylindre.spin.controller", "Controller", "_predict"), ("cylindre.spin.controller", "Controller", "_check_stuck"),
    ("cylindre.spin.controller", "Controller", "_check_index_health"),
    ("cylindre.spin.controller", "Controller", "_check_launch_wait"),
    ("cylindre.spin.controller", "Controller", "_check_vanished"),
    ("cylindre.spin.controller", "Controller", "_check_record"), ("cylindre.spin.controller", "Controller", "_timed"),
    ("cylindre.spin.controller", "Controller", "_rnvp"), ("cylindre.spin.controller", "Controller", "_launch"),
    ("cylindre.spin.controller", "Controller", "_off_track"), ("cylindre.spin.controller", "Controller", "_drop_wait"),
    ("cylindre.spin.controller", "Controller", "_pocket"), ("cylindre.spin.launch", "Launch", "window_over"),
    ("cylindre.spin.controller", "Controller", "sample"), ("cylindre.spin.rotor", "Rotor", "take"),
    ("cylindre.spin.ball", "Ball", "passed"),
    ("cylindre.spin.launch", "Launch", "passed"),
    ("cylindre.link.device", "DeviceLink", "feed"), ("cylindre.link.device", "DeviceLink", "poll"),
    ("cylindre.link.device", "DeviceLink", "emit"),
]

PROBE = """import micropython
micropython.kbd_intr(-1)
import gc
import machine
import time
_acc = {}
_n = {}
_us = time.ticks_us
_df = time.ticks_diff


def _count(label, d):
    _acc[label] = _acc.get(label, 0) + d
    _n[label] = _n.get(label, 0) + 1


def _wrap(owner, name, label):
    f = getattr(owner, name)

    def w(*a):
        t = _us()
        r = f(*a)
        _count(label, _df(_us(), t))
        return r
    setattr(owner, name, w)


%(imports)s
from cylindre.link import frame as _fr
%(frame)s
from cylindre.board import loop as _loop
_state = [0, 0]
_GC = ("bytes allocated", "collect us", "heap live", "heap free")


def _run(self):
    m = machine.mem32
    while True:
        self.step()
        if m[0x%(flag)X]:
            if _state[0]:
                _acc["bytes allocated"] = gc.mem_alloc() - _state[1]
                gc.enable()
                t = time.ticks_us()
                gc.collect()
                _acc["collect us"] = time.ticks_diff(time.ticks_us(), t)
                _acc["heap live"] = gc.mem_alloc()
                _acc["heap free"] = gc.mem_free()
                for k in _GC:
                    _n[k] = 1
            with open("/prof.json", "w") as f:
                f.write(repr([_acc, _n]))
            if not _state[0] and m[0x%(flag)X + 4]:
                gc.collect()
                gc.disable()
                _state[1] = gc.mem_alloc()
                _state[0] = 1
            elif _state[0]:
                _state[0] = 0
            m[0x%(flag)X + 4] = 0
            m[0x%(flag)X] = 0           # last: the harness reads the file once this is clear


_loop.MainLoop.run = _run
"""


def probe_source(wrap: bool = True) -> bytes:
    lines = []
    for i, (mod, cls, meth) in enumerate(PROFILED if wrap else []):
        lines.append("from %s import %s as _c%d" % (mod, cls, i))
        lines.append('_wrap(_c%d, "%s", "%s.%s")' % (i, meth, cls, meth))
    frame = ('_wrap(_fr, "build_keyed", "frame.build_keyed")\n_wrap(_fr, "parse", "frame.parse")'
             if wrap else "")
    return (PROBE % {"imports": "\n".join(lines), "flag": FLAG, "frame": frame}).encode()


def add_arguments(p) -> None:
    p.add_argument("--seed", type=int, default=1, help="simulator seed (default 1)")
    p.add_argument("--ball-seconds", type=float, default=4.0,
                   help="emulated seconds of the ball window (default 4; the collector is held off in it)")
    p.add_argument("--out", type=Path, default=OUT, help="output folder (default bench/out)")


def _read_prof(chip) -> dict:
    from host_tools.rp2emu import flash

    # MicroPython's repr of two dicts of str -> int: JSON once the quotes are double
    acc, n = json.loads(flash.read(chip.mcu.flash, "/prof.json").decode().replace("'", '"'))
    return {"us": acc, "calls": n}


def _session(mode: str, seed: int, ball_s: float, log=print) -> dict:
    """One emulated spin read in the three windows; `mode` plain, alloc or profiled."""
    from host_tools.bench.rp2 import spins

    profiled = mode != "plain"
    chip = deploy(boot_py=probe_source(wrap=mode == "profiled") if profiled else None)
    for g, v in rest_levels(chip.board).items():
        chip.pin(g, v)
    host = Host(chip)
    wall = time.time()
    if not chip.run_while(lambda: host.status is None, 10):
        raise RuntimeError("no session with the emulated board in 10 emulated s")
    chip.run_for(0.5)
    windows = {}

    def dump():
        """Ask the probe for its figures: it writes them at the main loop's next turn."""
        chip.set_scratch(1, 1)
        if not chip.run_while(lambda: chip.scratch(1) != 0, 3.0):
            raise RuntimeError("the probe on the emulated board did not answer in 3 emulated s")
        return _read_prof(chip)

    def window(label, secs, hold_gc=False):
        if profiled:
            chip.set_scratch(2, 1 if hold_gc else 0)
            before = dump()
        c0, t0 = chip.busy_cycles(), chip.ns
        chip.run_for(secs)
        w = {"seconds": secs, "busy_percent": round(100 * (chip.busy_cycles() - c0) / 125e6 / ((chip.ns - t0) / 1e9), 2)}
        if profiled:
            after = dump()
            calls = []
            for k, v in after["us"].items():
                n = after["calls"].get(k, 0) - before["calls"].get(k, 0)
                if k in GC_KEYS:
                    w[GC_KEYS[k]] = v
                    continue
                calls.append({"call": k, "us": v - before["us"].get(k, 0), "calls": n})
            w["calls"] = sorted(calls, key=lambda c: -c["us"])
        windows[label] = w
        log("[rp2prof] %s run, %s: busy %.2f %% over %.1f s" % (mode, label, w["busy_percent"], secs))

    window("idle, rotor stopped", 3.0)
    changes, truths = spins(Path(__file__).resolve().parents[2] / "boards" / "pico.json", 1, seed, False)
    t0 = chip.ns
    Feed(chip, chip.board, changes, t0)
    launch_ns = t0 + truths[0]["launch_us"] * 1e3
    chip.run_until(launch_ns - 1.5e9)
    window("idle, rotor turning", 1.5)
    chip.run_until(launch_ns + 0.5e9)
    window("ball on the track", ball_s, hold_gc=mode == "alloc")
    return {"windows": windows, "link": dict(host.counts), "resets": len(chip.resets),
            "wall_s": round(time.time() - wall, 1)}


def run(args) -> int:
    plain = _session("plain", args.seed, args.ball_seconds)
    alloc = _session("alloc", args.seed, args.ball_seconds)
    prof = _session("profiled", args.seed, args.ball_seconds)
    ball = alloc["windows"]["ball on the track"]
    figures = {"command": "make bench ARGS='rp2prof'" + (" --seed %d" % args.seed if args.seed != 1 else "")
               + (" --ball-seconds %g" % args.ball_seconds if args.ball_seconds != 4.0 else ""),
               "seed": args.seed, "plain": plain, "profiled": prof,
               "ball_bytes_allocated": ball.get("bytes_allocated", 0),
               "ball_busy_without_collector": ball["busy_percent"],
               "collector": collector(ball)}
    print(text(figures))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rp2prof.json").write_text(json.dumps(figures, indent=1) + "\n")
    print("[rp2prof] figures written to %s" % (out / "rp2prof.json"))
    return 0


def collector(ball: dict) -> dict | None:
    """The collector over a long run at the ball window's rate of allocation: one collection's
    time (measured after the window), how often the free heap runs out, its share of the core."""
    if not ball.get("collect_us") or not ball.get("heap_free"):
        return None
    rate = ball.get("bytes_allocated", 0) / ball["seconds"]
    every = ball["heap_free"] / rate if rate else None
    return {"collect_ms": ball["collect_us"] / 1000, "heap_live": ball["heap_live"], "heap_free": ball["heap_free"],
            "every_s": round(every, 1) if every else None,
            "percent": round(100 * ball["collect_us"] / 1e6 / every, 3) if every else 0.0}


def _collector_line(figures: dict) -> str:
    c = figures.get("collector")
    if not c:
        return ""
    return ("One collection after that window took %.1f ms with %s bytes live and %s free: at that rate of "
            "allocation one every %s s, %.2f %% of the core." % (
                c["collect_ms"], "{:,}".format(c["heap_live"]), "{:,}".format(c["heap_free"]),
                c["every_s"], c["percent"]))


def text(figures: dict) -> str:
    out = ["rp2prof: where the firmware's cycles go (emulated RP2040, file system deployment)"]
    for label, w in figures["plain"]["windows"].items():
        out.append("  %-22s busy %.2f %% (plain run)" % (label, w["busy_percent"]))
    ball = figures["profiled"]["windows"]["ball on the track"]
    out.append("  ball on the track, collector held off: %s bytes allocated in %.1f s, busy %.2f %%"
               % ("{:,}".format(figures["ball_bytes_allocated"]), ball["seconds"], figures["ball_busy_without_collector"]))
    if figures.get("collector"):
        out.append("  " + _collector_line(figures))
    for c in _calls(ball):
        out.append("    %-34s %9d us %6d calls %7.0f us/call" % (c["call"], c["us"], c["calls"], c["us"] / max(1, c["calls"])))
    return "\n".join(out)


def _calls(window: dict) -> list[dict]:
    """The timed calls that ran, without the loop's turn (its total includes the wait)."""
    return [c for c in window.get("calls", []) if c["calls"] and c["call"] != "MainLoop.step"]


def markdown(figures: dict) -> str:
    plain = figures["plain"]["windows"]
    ball = figures["profiled"]["windows"]["ball on the track"]
    secs = ball["seconds"]
    out = ["## Where the firmware's cycles go (`rp2prof`)", "",
           "`%s`: one simulated spin on the emulated RP2040 (stock UF2, the firmware on its file system), "
           "read in three windows. The busy share is from a run of the firmware alone; the calls from another "
           "run with `ticks_us` brackets around the main loop's calls (for ranking: the brackets cost cycles of "
           "their own, and calls nest, so totals overlap)." % figures.get("command", "make bench ARGS=rp2prof"), "",
           "| window | busy (firmware alone) |", "|---|---|"]
    for label, w in plain.items():
        out.append("| %s (%.1f s) | %.2f %% |" % (label, w["seconds"], w["busy_percent"]))
    b = figures["ball_bytes_allocated"]
    out += ["", "Ball on the track, %.1f s, in a run with the collector held off: %s bytes allocated (%s a "
            "second), busy %.2f %% (%.2f %% with the collector, firmware alone): whether a collection "
            "falls in a short window moves its figure." % (
                secs, "{:,}".format(b), "{:,}".format(int(b / secs)), figures["ball_busy_without_collector"],
                plain["ball on the track"]["busy_percent"])
            + ((" " + _collector_line(figures)) if figures.get("collector") else ""), "",
            "Calls in that window (profiled run, busy %.2f %% with its brackets):" % ball["busy_percent"], "",
            "| call | total ms | calls | ms a call | calls a second |", "|---|---|---|---|---|"]
    for c in _calls(ball):
        out.append("| `%s` | %.1f | %d | %.2f | %.1f |" % (c["call"], c["us"] / 1000, c["calls"],
                                                        c["us"] / 1000 / max(1, c["calls"]), c["calls"] / secs))
    out.append("")
    return "\n".join(out)
