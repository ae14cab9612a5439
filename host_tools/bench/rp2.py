"""Bench part `rp2`: the firmware on an emulated RP2040, measured (host_tools/rp2emu).

The real MicroPython v1.28.0 rp2 port (the stock RPI_PICO UF2, or a UF2 with the firmware frozen
in) runs in the `rp2040py` emulator; the firmware is on its file system as `make flash` leaves it
(or frozen); simulated spins (host_tools.sim, the same spins a feed file holds) are played as
edges on its pins, and the project's host link (cylindre.link.host, as the daemon drives it)
talks to it on the emulated USB serial from power-up, acknowledging every event at once.

Measured, for each deployment:
- CPU: cycles of executed instructions over 125 MHz x the emulated time, by phase of the spin:
  idle (before the launch and after the rest), ball on the track (launch to drop), ball in the
  pockets (drop to rest); the heap probe's own cycles are taken out;
- heap: the live heap (gc.collect(); gc.mem_alloc() on the port) every 0.5 s of emulated time
  (`--heap-every`) and at the probe's first mark after the boot; its peak;
- outcomes (each spin's result or void against the simulator's truth) and the link's counts;
- the wall time per emulated second (the emulator's cost follows the firmware's busy share).
`--power-cut` adds a spin in which the power goes while the ball runs and comes back, the host
talking all through: the restart is reported, the cut spin voided `restart`, nothing lost or
doubled. `--cuts launch,track,bounce,rest,confirmed` adds a spin cut at each of those phases (just
after the launch, mid-track, the ball bouncing, at rest before the confirmation, after the
result): a spin whose ball had not dropped is void (`restart`), one whose ball rests in its
pocket is that number (docs/internals/spin-logic.md, "Restart"); after the result, the host
having acknowledged it (not in flash), the ball still in its pocket names it again (`restart`),
which the table ignores (a `repeat`, not a double).
- flash wear: the records written per coup (their numbers read from the emulated flash), the
  file system's sector erases and page programs per coup, counted at the chip's flash peripheral
  (host_tools/rp2emu/wear.py), and the years of service at 600 coups a day from littlefs's own
  levelling of the record the board wrote, as many times a coup as it did here (`lifetime`).

    make bench ARGS='rp2 [--spins N] [--seed S] [--uf2 PATH] [--power-cut] [--cuts PHASES] [--only fs|frozen]'
"""

from __future__ import annotations

import json
import time
from pathlib import Path

OUT = Path("bench/out")
HZ = 125e6
# "cut": the spin cut by a power failure, from its launch to its end: the reboot is in it, so it
# is kept out of the normal spins' phases.
PHASES = ("idle", "ball", "pockets", "cut")
CUTS = ("launch", "track", "bounce", "rest", "confirmed")
OFF_US = 155_000            # the power stays off this long
LABEL = {"idle": "idle (between spins)", "ball": "ball on the track (launch to drop)",
         "pockets": "ball in the pockets (drop to rest)", "spin": "spin (launch to rest)",
         "cut": "spin cut by power, reboot in it"}


def add_arguments(p) -> None:
    p.add_argument("--spins", type=int, default=2, help="normal spins per deployment (default 2, ~45 s each)")
    p.add_argument("--seed", type=int, default=1, help="simulator seed (default 1)")
    p.add_argument("--uf2", type=Path, default=None,
                   help="frozen UF2 (default build/uf2/pico/cylindre-pico.uf2, else the shared artefact)")
    p.add_argument("--only", choices=("fs", "frozen"), default=None, help="one deployment only")
    p.add_argument("--power-cut", action="store_true", help="add a spin cut by a power failure")
    p.add_argument("--cuts", default="", help="comma-separated phases, a spin cut at each: " + ",".join(CUTS))
    p.add_argument("--wear-writes", type=int, default=30000,
                   help="records written in littlefs-python for the years of service (default 30000)")
    p.add_argument("--firmware", type=Path, default=None,
                   help="an existing `make firmware` folder (default: built now from firmware/)")
    p.add_argument("--heap-every", type=float, default=0.5,
                   help="emulated seconds between heap marks (default 0.5; a mark, a gc.collect() of "
                        "the port's heap, costs ~2.8 M cycles: taken out of the CPU figures, not of the wall time)")
    p.add_argument("--out", type=Path, default=OUT, help="output folder (default bench/out)")


def cut_at(truth: dict, phase: str) -> int:
    """The feed instant (us) of a power cut at `phase` of a spin (its truth)."""
    launch, drop, rest = truth["launch_us"], truth["drop_us"], truth["rest_us"]
    # the ball's first pass may come up to a lap after its release: its first lap is complete
    # (the launch taken and written) at the latest two laps after it
    return {"launch": launch + 2 * truth["first_lap_us"] + 300_000, "track": (launch + drop) // 2,
            "bounce": (drop + rest) // 2, "rest": rest + 1_000_000, "confirmed": rest + 7_000_000}[phase]


def spins(board_path: Path, n: int, seed: int, power_cut: bool, cuts=()):
    """The simulator's spins: (changes, truths), times in us from the feed's start; each of
    `cuts` a normal spin with the power cut at that phase for OFF_US."""
    from host_tools.sim import WheelSimulator
    from host_tools.sim.boards import load_board

    geometry, _ = load_board(board_path)
    sim = WheelSimulator(geometry, seed=[seed, 0])
    changes, truths = [], []
    plan = [(s, None) for s in [None] * n + (["power_cut", None] if power_cut else [])]
    plan += [(None, c) for c in cuts]
    for scenario, cut in plan:
        sp = sim.spin(scenario)
        ch = sp.changes
        tr = dict(sp.truth)
        if cut is not None:
            t = cut_at(tr, cut)
            ch = sorted(ch + [(t, "RESET", 1), (t + OFF_US, "RESET", 0)], key=lambda c: c[0])
            tr["cut_us"] = t
            tr["cut"] = cut
        changes.extend(ch)
        tr.pop("ball_track", None)
        tr["scenario"] = scenario
        truths.append(tr)
    return changes, truths


def full_record(spins: int = 60, seed: int = 1) -> bytes:
    """The flash record as the board writes it once full: the controller replayed on `spins`
    simulated spins of the pico board (48 drops learnt, 10 games kept), encoded by the store."""
    from cylindre.board.store import encode
    from cylindre.replay import MemoryStore, Replay
    from host_tools.sim import WheelSimulator
    from host_tools.sim.boards import load_board

    geometry, overrides = load_board(Path(__file__).resolve().parents[2] / "boards" / "pico.json")
    sim = WheelSimulator(geometry, seed=[seed, 7])
    store = MemoryStore()
    rp = Replay(sim.geometry, lambda ev: None, overrides=overrides, store=store)
    for _ in range(spins):
        rp.run(sim.spin().changes)
    rec = dict(store.record)
    rec["seq"] = 10 ** 6            # a number of a year's saves
    return encode(rec)


def run_one(name: str, uf2: Path | None, frozen: bool, folder: Path, changes, truths, log=print,
            heap_every: float = 0.5, wear_writes: int = 30000) -> dict:
    from host_tools.rp2emu import flash
    from host_tools.rp2emu.table import Feed, HeapProbe, Host, deploy, rest_levels
    from host_tools.rp2emu.wear import FlashOps, lifetime

    wall0 = time.monotonic()
    chip = deploy(uf2, frozen=frozen, probe=True, folder=folder)
    ops = FlashOps(chip)
    board = chip.board
    for g, v in rest_levels(board).items():
        chip.pin(g, v)
    host = Host(chip)
    probe = HeapProbe(chip)
    probe.every(heap_every)
    chip.run_while(lambda: host.status is None, 10.0)
    boot_s, boot_wall = chip.seconds, time.monotonic() - wall0
    boot_cycles = chip.busy_cycles() - probe.cycles
    after_boot = probe.marks[-1][1] if probe.marks else None
    log("[rp2] %s: session after %.2f emulated s (%.1f wall s), boot %.1f M cycles, heap %s B"
        % (name, boot_s, boot_wall, boot_cycles / 1e6, after_boot))
    # phase boundaries (emulated ns) from the truths; the feed starts 0.5 s after the session
    t0 = chip.ns + 0.5e9
    bounds = []
    for tr in truths:
        if (tr.get("scenario") == "power_cut" or tr.get("cut")) and tr.get("launch_us") is not None:
            bounds.append((t0 + tr["launch_us"] * 1e3, "cut"))
            bounds.append((t0 + (tr.get("rest_us") or tr["end_us"]) * 1e3, "idle"))
        elif tr.get("launch_us") is not None:
            bounds.append((t0 + tr["launch_us"] * 1e3, "ball"))
            if tr.get("drop_us") is not None:
                bounds.append((t0 + tr["drop_us"] * 1e3, "pockets"))
            rest = tr.get("rest_us") or tr.get("end_us")
            bounds.append((t0 + rest * 1e3, "idle"))
    end_ns = t0 + truths[-1]["end_us"] * 1e3
    acc = {p: [0, 0.0] for p in PHASES}         # cycles, seconds
    state = {"phase": "idle", "c": chip.busy_cycles() - probe.cycles, "t": chip.ns}

    def switch(to):
        c, t = chip.busy_cycles() - probe.cycles, chip.ns
        a = acc[state["phase"]]
        a[0] += c - state["c"]
        a[1] += (t - state["t"]) / 1e9
        state.update(phase=to, c=c, t=t)

    for ns, ph in bounds:
        chip.at(ns, lambda ph=ph: switch(ph))
    # flash wear: the normal spins' erases and programs (from the first launch to the end of the
    # last normal spin: the boot's writes and the cut spins' reboots apart)
    played = [tr for tr in truths if tr.get("scenario") is None and not tr.get("cut")]
    plain_end = next((i for i, tr in enumerate(truths) if tr.get("scenario") or tr.get("cut")), len(truths))
    wear_marks: dict = {}
    if played and plain_end:
        def mark(k):
            wear_marks[k] = ops.totals() + (stored_seq(chip),)
        chip.at(t0 + truths[0]["start_us"] * 1e3, lambda: mark("a"))
        chip.at(t0 + truths[plain_end - 1]["end_us"] * 1e3, lambda: mark("b"))
    feed = Feed(chip, board, changes, t0)
    wall1 = time.monotonic()
    step = 5.0
    while chip.ns < end_ns:
        chip.run_until(min(end_ns, chip.ns + step * 1e9))
        log("[rp2] %s: %.0f / %.0f emulated s, %.0f wall s" % (name, (chip.ns - t0) / 1e9, (end_ns - t0) / 1e9,
                                                              time.monotonic() - wall1))
    switch("idle")
    chip.run_for(1.0)
    wall = time.monotonic() - wall1
    emulated = (end_ns - t0) / 1e9 + 1.0
    cpu = {p: (100.0 * c / (HZ * s) if s else None) for p, (c, s) in acc.items()}
    sc = acc["ball"][0] + acc["pockets"][0]
    ss = acc["ball"][1] + acc["pockets"][1]
    cpu["spin"] = 100.0 * sc / (HZ * ss) if ss else None
    heap = [b for _, b in probe.marks]
    outcomes = host.outcomes()
    wear = None
    if "a" in wear_marks and "b" in wear_marks:
        coups = plain_end
        er = wear_marks["b"][0] - wear_marks["a"][0]
        pr = wear_marks["b"][1] - wear_marks["a"][1]
        # the store numbers its records (`seq`): the writes, read from the emulated flash
        writes = wear_marks["b"][2] - wear_marks["a"][2]
        record = b""
        for path in ("/cylindre.rec", "/cylindre.rec.b"):
            try:
                got = flash.read(bytes(chip.mcu.flash), path)
            except Exception:
                continue
            record = got if len(got) > len(record) else record
        # the record grows over the first 48 spins (the drop learnt, the games kept): the years
        # are those of the full record, written as many times a coup as the chip wrote it here
        full = full_record()
        rec = full if len(full) > len(record) else record
        life = lifetime(flash.files_of(folder, None, frozen=frozen), rec, wear_writes,
                        writes_per_coup=writes / coups) if wear_writes and writes > 0 else None
        share = (life["worst_block_erases"] / life["erases"]) if life and life["erases"] else None
        wear = {"coups": coups, "writes": writes, "writes_a_coup": writes / coups,
                "erases": er, "programs": pr, "erases_a_coup": er / coups,
                "programs_a_coup": pr / coups, "record_bytes": len(record), "full_record_bytes": len(rec),
                "littlefs": life, "worst_block_share": share,
                "years_at_600_a_day": life["years"] if life else None}
        log("[rp2] %s: flash %d records written, %d erases, %d programs over %d coups; years at 600 a day: %s"
            % (name, writes, er, pr, coups, "-" if wear["years_at_600_a_day"] is None else "%.0f" % wear["years_at_600_a_day"]))
    return {
        "deployment": name, "uf2": str(uf2) if uf2 else None, "frozen": frozen,
        "boot": {"emulated_s": round(boot_s, 3), "wall_s": round(boot_wall, 1),
                 "cycles": boot_cycles},
        "cpu_percent": {k: (round(v, 2) if v is not None else None) for k, v in cpu.items()},
        "cycles": {p: acc[p][0] for p in PHASES}, "seconds": {p: round(acc[p][1], 3) for p in PHASES},
        "heap": {"after_boot": after_boot, "peak": max(heap) if heap else None,
                 "last": heap[-1] if heap else None, "marks": len(heap)},
        "probe_cycles": probe.cycles,
        "outcomes": check_outcomes(truths, outcomes, host),
        "link": {"sessions": host.link.sessions, "records": dict(host.counts), "bytes_in": host.bytes_in,
                 "bytes_out": host.bytes_out, "frames_out": host.frames_out, "dropped_out": chip.dropped},
        "resets": [[round(t / 1e9, 3), k] for t, k in chip.resets],
        "flash": wear,
        "flash_total": {"erases": ops.totals()[0], "programs": ops.totals()[1]},
        "emulated_s": round(emulated, 1), "wall_s": round(wall, 1),
        "wall_per_emulated_s": round(wall / emulated, 2),
    }


def stored_seq(chip) -> int:
    """The newest record's number (board/store.py stamps `seq` into each) in the emulated flash."""
    from cylindre.board.store import decode
    from host_tools.rp2emu import flash

    image = bytes(chip.mcu.flash)
    best = 0
    for path in ("/cylindre.rec", "/cylindre.rec.b"):
        try:
            rec = decode(flash.read(image, path))
        except Exception:
            continue
        if rec is not None and isinstance(rec.get("seq"), int):
            best = max(best, rec["seq"])
    return best


def repeat(first: dict, later: dict) -> bool:
    """An outcome after a spin's first that the table ignores and that changes nothing: after a
    restart, its result named again (the same number: the host had it, the flash did not), or a
    void `restart` of a spin already paid (daemon: game/flow.py)."""
    if first.get("ev") != "result":
        return False
    if later.get("ev") == "result":
        return later.get("number") == first.get("number") and bool(later.get("restart"))
    return later.get("ev") == "void" and later.get("reason") == "restart"


def check_outcomes(truths, outcomes, host) -> dict:
    """Each spin's result or void against its truth: right, wrong, missing, doubled (a second
    outcome that is not a `repeat` of the first)."""
    by_spin: dict[int, list] = {}
    for ev in outcomes:
        by_spin.setdefault(ev.get("spin"), []).append(ev)
    rows, right = [], 0
    boots = [e["event"] for e in host.events if e["event"].get("ev") == "boot"]
    for i, tr in enumerate(truths, 1):
        got = by_spin.get(i, [])
        cut = tr.get("cut")
        if tr.get("scenario") == "power_cut" or cut in ("launch", "track"):
            want = "void:restart"               # the ball had not dropped
        elif tr.get("valid"):
            want = "result:%d" % tr["number"]   # a cut once it dropped: its ball names it
        else:
            want = "void"
        seen = ["%s:%s" % (e["ev"], e.get("number") if e["ev"] == "result" else e.get("reason")) for e in got]
        again = all(repeat(got[0], e) for e in got[1:])
        ok = bool(seen) and again and (seen[0] == want or (want == "void" and seen[0].startswith("void:")))
        right += ok
        rows.append({"spin": i, "want": want, "got": seen, "ok": ok, "cut": cut, "repeated": len(got) - 1 if again else 0})
    spins = {e.get("spin") for e in outcomes}
    return {"spins": len(truths), "right": right, "rows": rows,
            "doubled": sum(1 for v in by_spin.values() if not all(repeat(v[0], e) for e in v[1:])),
            "repeated": sum(len(v) - 1 for v in by_spin.values() if all(repeat(v[0], e) for e in v[1:])),
            "unknown": sorted(s for s in spins if not (isinstance(s, int) and 1 <= s <= len(truths))),
            "boots": [{"reset_cause": b.get("reset_cause"), "interrupted": b.get("interrupted")} for b in boots]}


def run(args) -> int:
    from host_tools.rp2emu import flash
    from host_tools.rp2emu.table import STOCK_UF2, uf2_default

    root = Path(__file__).resolve().parents[2]
    folder = args.firmware or flash.build_firmware("pico")
    cuts = [c for c in args.cuts.split(",") if c]
    bad = [c for c in cuts if c not in CUTS]
    if bad:
        print("[rp2] unknown cut phase(s) %s: %s" % (", ".join(bad), ",".join(CUTS)))
        return 2
    changes, truths = spins(root / "boards" / "pico.json", args.spins, args.seed, args.power_cut, cuts)
    runs = []
    if args.only in (None, "fs"):
        runs.append(("file system (stock UF2)", STOCK_UF2, False))
    frozen = args.uf2 or uf2_default()
    if args.only in (None, "frozen"):
        if frozen is None:
            print("[rp2] no frozen UF2 (make uf2): the frozen deployment is skipped")
        else:
            runs.append(("frozen UF2", frozen, True))
    figures = {"command": "make bench ARGS='rp2" + (" --only %s" % args.only if args.only else "")
               + (" --power-cut" if args.power_cut else "")
               + (" --cuts %s" % args.cuts if cuts else "")
               + (" --spins %d" % args.spins if args.spins != 2 else "")
               + (" --heap-every %g" % args.heap_every if args.heap_every != 0.5 else "") + "'",
               "spins": args.spins, "seed": args.seed, "power_cut": args.power_cut, "cuts": cuts,
               "heap_every": args.heap_every, "runs": []}
    status = 0
    for name, uf2, fz in runs:
        r = run_one(name, uf2, fz, folder, changes, truths, heap_every=args.heap_every, wear_writes=args.wear_writes)
        figures["runs"].append(r)
        o = r["outcomes"]
        if o["right"] != o["spins"] or o["doubled"] or o["unknown"]:
            status = 1
        print(text(r))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rp2.json").write_text(json.dumps(figures, indent=1) + "\n")
    print("[rp2] figures written to %s" % (args.out / "rp2.json"))
    return status


def text(r: dict) -> str:
    c, h, o, ln = r["cpu_percent"], r["heap"], r["outcomes"], r["link"]
    lines = ["rp2 bench: %s" % r["deployment"],
             "  boot: session after %.2f emulated s, %.1f M cycles" % (r["boot"]["emulated_s"], r["boot"]["cycles"] / 1e6)]
    for k in ("spin", "ball", "pockets", "idle", "cut"):
        if k == "cut" and c.get(k) is None:
            continue
        lines.append("  CPU %-38s %s %%" % (LABEL[k], "-" if c.get(k) is None else "%.2f" % c[k]))
    lines.append("  heap live: %s B after boot, peak %s B (%d marks)" % (h["after_boot"], h["peak"], h["marks"]))
    lines.append("  outcomes: %d of %d right, %d doubled, %d repeated after a restart; %s" % (
                 o["right"], o["spins"], o["doubled"], o.get("repeated", 0),
                 "; ".join("%d %s->%s" % (w["spin"], w["want"], ",".join(w["got"]) or "none") for w in o["rows"])))
    lines.append("  boots: %s; resets %s" % (o["boots"], r["resets"]))
    w = r.get("flash")
    if w:
        lf = w.get("littlefs") or {}
        lines.append("  flash: %s record writes, %.2f erases and %.1f page programs a coup (%d coups, a %d B record); the full "
                     "%d B record in littlefs over %s writes: %.2f erases a write, the most worn block %.2f %% of them: %s "
                     "years at 600 coups a day"
                     % ("%.2f" % w["writes_a_coup"] if "writes_a_coup" in w else "?",
                        w["erases_a_coup"], w["programs_a_coup"], w["coups"], w["record_bytes"],
                        w.get("full_record_bytes") or 0, lf.get("writes"),
                        lf.get("erases_a_write") or 0, 100 * (w["worst_block_share"] or 0),
                        "-" if w["years_at_600_a_day"] is None else "%.0f" % w["years_at_600_a_day"]))
    lines.append("  link: %d session(s), records %s, %d B in, %d B out" % (ln["sessions"], ln["records"], ln["bytes_in"],
                                                                       ln["bytes_out"]))
    lines.append("  wall: %.1f s for %.1f emulated s (%.2f wall s per emulated s)" % (r["wall_s"], r["emulated_s"],
                                                                                     r["wall_per_emulated_s"]))
    return "\n".join(lines)


def markdown(figures: dict) -> str:
    """The benchmarks page's section: CPU by phase, heap, outcomes, link, per deployment."""
    out = ["## The firmware on the emulated RP2040 (rp2)", "",
           "`%s`: the real MicroPython v1.28.0 rp2 port in the `rp2040py` emulator, %d simulated spin(s)%s "
           "(seed %d) played on its pins, the project's host link on its USB serial. CPU is executed cycles "
           "over 125 MHz x emulated time; heap is `gc.mem_alloc()` after `gc.collect()` on the port, every "
           "%g s. Those collections are taken out of the CPU figures%s." % (
               figures.get("command", "make bench ARGS=rp2"), figures.get("spins", 0),
               " and a spin cut by a power failure" if figures.get("power_cut") else "", figures.get("seed", 1),
               figures.get("heap_every", 0.5),
               " and stand in for the firmware's own (none runs with a mark every 0.5 s): the collector's work "
               "is not in them (`rp2prof` measures a spin with it)" if figures.get("heap_every", 0.5) <= 0.5 else
               "; with marks that far apart the firmware's own collections may run between them, and their "
               "cycles are then in the figures"),
           "", "| deployment | CPU in a spin | ball on the track | in the pockets | idle | heap after boot | "
           "heap peak | outcomes right | wall s per emulated s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in figures.get("runs", []):
        c, h, o = r["cpu_percent"], r["heap"], r["outcomes"]

        def pc(k):
            return "-" if c.get(k) is None else "%.2f %%" % c[k]

        out.append("| %s | %s | %s | %s | %s | %s B | %s B | %d / %d | %.1f |" % (
            r["deployment"], pc("spin"), pc("ball"), pc("pockets"), pc("idle"),
            "{:,}".format(h["after_boot"]) if h["after_boot"] else "-", "{:,}".format(h["peak"]) if h["peak"] else "-",
            o["right"], o["spins"], r["wall_per_emulated_s"]))
    out.append("")
    for r in figures.get("runs", []):
        w = r.get("flash")
        if not w:
            continue
        lf = w.get("littlefs") or {}
        out.append("Flash wear (%s): %s record writes, %.2f sector erases and %.1f page programs of the file system "
                   "a coup over the %d normal spins, read from the chip's flash (the record's number) and counted at its "
                   "flash peripheral (the record %d B); the record once full (%d B: the drop learnt from 48 spins, 10 "
                   "games) written %s times in littlefs as the rp2 port configures it: %.2f erases a write over %d of "
                   "its %d blocks, the most worn block %.2f %% of them: **%s years** at 600 coups a day, at the writes "
                   "a coup measured, before a sector reaches its 100,000 erase cycles." % (
                       r["deployment"], "%.2f" % w["writes_a_coup"] if "writes_a_coup" in w else "?",
                       w["erases_a_coup"], w["programs_a_coup"], w["coups"], w["record_bytes"],
                       w.get("full_record_bytes") or 0,
                       "{:,}".format(lf.get("writes") or 0), lf.get("erases_a_write") or 0, lf.get("blocks_erased") or 0,
                       lf.get("blocks") or 0, 100 * (w.get("worst_block_share") or 0),
                       "-" if w.get("years_at_600_a_day") is None else "%.0f" % w["years_at_600_a_day"]))
        out.append("")
    cut_rows = [(r, w) for r in figures.get("runs", []) for w in r["outcomes"]["rows"] if w.get("cut")]
    if cut_rows:
        out += ["Spins cut by a power failure at each phase (off 155 ms, the rotor and the ball running on, the "
                "host talking all through): a ball that had not dropped voids its spin, a ball that had is its "
                "number. Cut after the result (the host has it: not in flash), the ball is named again if "
                "still in its pocket, else the spin is voided `restart`; the table ignores either "
                "(counted as repeated, not doubled).", "", "| deployment | cut | spin | outcome | right |", "|---|---|---|---|---|"]
        for r, w in cut_rows:
            out.append("| %s | %s | %d | %s | %s |" % (r["deployment"], w["cut"], w["spin"], ",".join(w["got"]) or "none",
                                                     "yes" if w.get("ok") else "no, want " + w["want"]))
        out.append("")
    if figures.get("power_cut"):
        out += ["The spin cut by a power failure (the ball on the track, the host talking all through), then a "
                "normal spin: what the host saw.", "",
                "| deployment | sessions | boots (reset cause, spin interrupted) | outcomes | delivered twice | "
                "CPU from the cut spin's launch to its end (the reboot in it) |", "|---|---|---|---|---|---|"]
        for r in figures.get("runs", []):
            o, c = r["outcomes"], r["cpu_percent"]
            out.append("| %s | %d | %s | %s | %d | %s |" % (
                r["deployment"], r["link"]["sessions"],
                "; ".join(b["reset_cause"] + ("" if b["interrupted"] is None else ", spin %s interrupted" % b["interrupted"])
                          for b in o["boots"]),
                "; ".join("spin %d %s (%s)" % (w["spin"], ",".join(w["got"]) or "none",
                                               "right" if w.get("ok") else "want " + w["want"]) for w in o["rows"]),
                o["doubled"], "-" if c.get("cut") is None else "%.2f %%" % c["cut"]))
        out.append("")
    return "\n".join(out)
