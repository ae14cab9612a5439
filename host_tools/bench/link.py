"""Bench part `link`: frames per second through the decoder and authenticator, and its parts.
(The time from a result frame's bytes to its settlement durable is bench part `settle`'s.)

Prints the figures and writes bench/out/link.json.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from cylindre.link import frame as fr
from cylindre.link.device import DeviceLink
from cylindre.link.host import HostLink
from cylindre.link.mac import Hmac

OUT = Path("bench/out/link.json")
KEY = bytes(range(32))


def add_arguments(p):
    p.add_argument("--frames", type=int, default=20000, help="frames for the decoder figure (default 20000)")
    p.add_argument("--no-micropython", action="store_true", help="skip the MicroPython (device side) figures")
    p.add_argument("--out", default=str(OUT))


def _result_event(spin, number):
    """A realistic result event: three pocket sensors' sightings, as the controller sends it."""
    return {"ev": "result", "t": 41_000_000 + spin, "spin": spin, "number": number, "rest_t": 40_100_000,
            "sightings": [[40_100_000 + 350_000 * i, i % 3, 1000 + 37 * i] for i in range(8)], "laps": 17}


def _plain_hmac(key):
    """The HMAC on the Pico's path (no keyed-state copy, byte-loop compare): the *before*."""
    h = Hmac(key)
    h._inner = None
    return h


def decoder_parts(frames, h, sn, rn, plain):
    """Microseconds per frame of each stage of the decoder, the fast and the plain MAC."""
    from cylindre.link import cobs
    from cylindre.link.mac import equal, equal_loop
    n = len(frames)
    stream = b"".join(frames)

    def per_frame(f):
        t0 = time.perf_counter()
        f()
        return round((time.perf_counter() - t0) / n * 1e6, 2)

    raws = []
    parts = {"split": per_frame(lambda: raws.extend(fr.Splitter().feed(stream)))}
    parts["cobs_decode"] = per_frame(lambda: [cobs.decode(r) for r in raws])
    got = []
    parts["parse_all"] = per_frame(lambda: got.extend(fr.parse(r) for r in raws))
    parts["hmac_fast"] = per_frame(lambda: [h.digest(fr.DOMAIN, sn, rn, f.signed) for f in got])
    parts["hmac_plain"] = per_frame(lambda: [plain.digest(fr.DOMAIN, sn, rn, f.signed) for f in got])
    tags = [f.tag for f in got]
    parts["compare_digest"] = per_frame(lambda: [equal(t, t) for t in tags])
    parts["compare_loop"] = per_frame(lambda: [equal_loop(t, t) for t in tags])
    return parts


def _decode_verify(chunks, h, sn, rn, verify):
    t0 = time.perf_counter()
    sp = fr.Splitter()
    ok = 0
    for c in chunks:
        for raw in sp.feed(c):
            f = fr.parse(raw)
            ok += verify(f)
    return ok, time.perf_counter() - t0


def decoder_rate(n):
    """Bytes -> Splitter -> parse (COBS, CRC) -> HMAC verify, with the host's fast MAC and with
    the Pico's plain one (the before), its parts, and the whole HostLink path."""
    from cylindre.link.mac import equal_loop
    h = Hmac(KEY)
    plain = _plain_hmac(KEY)
    sn, rn = os.urandom(8), os.urandom(8)
    frames = [fr.build(h, fr.EVENT, i + 1, 0, json.dumps(_result_event(i, i % 37)).encode(), sn, rn) for i in range(n)]
    stream = b"".join(frames)
    size = len(stream) / n
    chunks = [stream[i:i + 4096] for i in range(0, len(stream), 4096)]
    ok, dt = _decode_verify(chunks, h, sn, rn, lambda f: f.verify(h, sn, rn))
    assert ok == n
    ok, dt_plain = _decode_verify(chunks, h, sn, rn,
                                  lambda f: equal_loop(plain.digest(fr.DOMAIN, sn, rn, f.signed), f.tag))
    assert ok == n
    parts = decoder_parts(frames, h, sn, rn, plain)
    # the host's whole receive path: session check, in-order delivery, JSON decode
    wire = []
    clock = [0]
    dev = DeviceLink(wire.append, lambda: clock[0], KEY, "T1", capacity=n + 64, window=n + 64)
    host = HostLink(wire.append, lambda: clock[0], KEY, wheel="T1")
    host.hello()
    dev.feed(wire.pop())
    host.feed(b"".join(wire))
    wire.clear()
    for i in range(n):
        dev.emit(_result_event(i, i % 37))
    data = b"".join(wire)
    t1 = time.perf_counter()
    recs = []
    for i in range(0, len(data), 4096):
        recs += host.feed(data[i:i + 4096])
    dt2 = time.perf_counter() - t1
    assert sum(r["kind"] == "event" for r in recs) == n
    return {"frames": n, "mean_frame_bytes": round(size, 1), "decode_verify_fps": round(n / dt),
            "decode_verify_fps_plain_mac": round(n / dt_plain), "parts_us_per_frame": parts,
            "host_link_fps": round(n / dt2), "decode_verify_MBps": round(len(stream) / dt / 1e6, 2)}


MPY_CODE = """
import gc, json
from cylindre.link.device import DeviceLink
from cylindre.link.host import HostLink
sent = []
clock = [0]
def w(d):
    sent.append(len(d))
key = bytes(range(32))
n = %d
dev = DeviceLink(w, lambda: clock[0], key, "T1", urandom=lambda k: bytes(range(1, k + 1)),
                 capacity=n + 64, reserve=16, window=n + 8)
wire = []
host = HostLink(wire.append, lambda: clock[0], key, wheel="T1", urandom=lambda k: bytes(range(9, k + 9)))
host.hello()
dev.feed(wire.pop())
ev = %s
a = gc.mem_alloc()
for i in range(n):
    ev["spin"] = i
    dev.emit(ev)
    dev.feed(b"")
b = gc.mem_alloc()
print(json.dumps({"events": n, "alloc_per_event": (b - a) // n, "frame_bytes": sent[-1]}))
"""


def micropython_cost(n=40):
    """On MicroPython (the WASI build): heap bytes allocated to send one result event."""
    from host_tools.pico.micropython import MicroPythonRuntime
    with MicroPythonRuntime() as rt:
        res = rt.run(MPY_CODE % (n, json.dumps(_result_event(1, 17))))
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["fuel_per_event"] = res.fuel_used // n
    return out


def run(args) -> int:
    d = decoder_rate(args.frames)
    print(f"link decoder: {d['decode_verify_fps']:,} frames/s through COBS+CRC-32+HMAC-SHA256 "
          f"({d['mean_frame_bytes']} bytes a frame, {d['decode_verify_MBps']} MB/s); "
          f"{d['host_link_fps']:,} frames/s through the whole host link (session, order, JSON)")
    print(f"  before (the Pico's plain MAC path on CPython): {d['decode_verify_fps_plain_mac']:,} frames/s")
    p = d["parts_us_per_frame"]
    print(f"  us a frame: split {p['split']}, parse {p['parse_all']} (of which COBS {p['cobs_decode']}), "
          f"HMAC {p['hmac_fast']} (plain {p['hmac_plain']}), compare {p['compare_digest']} "
          f"(byte loop {p['compare_loop']})")
    out = {"part": "link", "python": platform.python_version(), "machine": platform.machine(),
           "cpus": os.cpu_count(), "decoder": d, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if not args.no_micropython:
        m = micropython_cost()
        out["micropython_device"] = m
        print(f"device side on MicroPython: {m['alloc_per_event']} heap bytes allocated and {m['fuel_per_event']:,} "
              f"fuel units per result event sent ({m['frame_bytes']} bytes on the wire, {m['events']} events)")
    p = Path(args.out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written {p}")
    return 0


def markdown(figures: dict) -> str:
    """This part's section of docs/benchmarks.md (host_tools/bench/page.py)."""
    d = figures["decoder"]
    L = ["## Serial link (`link`)", "",
         f"Frames of {d['mean_frame_bytes']:.0f} bytes on average (a result event), {d['frames']:,} of them "
         "(`make bench ARGS='link'`).", "",
         "| what | frames/s |", "|---|---|",
         f"| decode and verify (COBS, CRC-32, HMAC-SHA256), host's HMAC | {d['decode_verify_fps']:,} |",
         f"| the same with the Pico's plain HMAC code | {d['decode_verify_fps_plain_mac']:,} |",
         f"| through the whole host link (session, order, JSON) | {d['host_link_fps']:,} |"]
    m = figures.get("micropython_device")
    if m:
        L += ["", f"Device side on MicroPython: {m['alloc_per_event']:,} heap bytes allocated a result event sent, "
                  f"{m['frame_bytes']} bytes on the wire."]
    return "\n".join(L) + "\n"
