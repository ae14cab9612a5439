"""`cylindre daemon --port PORT`: run the table from a wheel on a serial port or pseudo-terminal."""

from __future__ import annotations

import json
import logging
import logging.handlers
import signal
import sys
import threading
from pathlib import Path

HELP = "run the table host: serial link to the wheel, journal, game flow, HTTP API"
LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def add_arguments(p):
    p.add_argument("--port", help="serial device (/dev/ttyACM0), pseudo-terminal, or pyserial URL")
    p.add_argument("--key", default="keys/T1.key", help="the wheel's link key file (64 hex chars; default keys/T1.key)")
    p.add_argument("--new-key", metavar="FILE", help="write a fresh random wheel key to FILE and exit")
    p.add_argument("--wheel", default="T1", help="the wheel's id, as provisioned in its firmware (default T1)")
    p.add_argument("--journal", default="var/journal.sqlite", help="SQLite journal (default var/journal.sqlite)")
    p.add_argument("--http", default="127.0.0.1:8737", help="HOST:PORT of the HTTP API (default 127.0.0.1:8737)")
    p.add_argument("--limits", help="JSON file of table limits (docs/rules-api.md), default the house limits")
    p.add_argument("--open", action="store_true", help="open the table at start")
    p.add_argument("--baud", type=int, default=115200)
    p.add_argument("--silence-ms", type=int, default=3000,
                   help="re-open the session after this long without a valid frame (default 3000; 1500 to 60000)")
    p.add_argument("--log", help="also write the log to this file")
    p.add_argument("--verbose", "-v", action="store_true", help="debug logging")
    p.add_argument("--dump-statuses", action="store_true",
                   help="print every status frame in --journal (rows and compressed blocks) as JSON lines and exit")


def setup_logging(path=None, verbose=False):
    handlers = [logging.StreamHandler(sys.stderr)]
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        # reopened when logrotate (or anyone) moves the file away: the log never fills the disk unseen
        handlers.append(logging.handlers.WatchedFileHandler(path, encoding="utf-8"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format=LOG_FORMAT, handlers=handlers, force=True)


def parse_hostport(text):
    host, _, port = text.rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise SystemExit(f"--http: expected HOST:PORT, got {text!r}") from None


def run(args) -> int:
    from .keys import KeyError_, load_key, new_key
    if args.new_key:
        try:
            new_key(args.new_key)
        except FileExistsError:
            print(f"cylindre daemon: {args.new_key} exists; not overwriting a wheel key", file=sys.stderr)
            return 2
        print(f"new wheel key written to {args.new_key} (copy it to the Pico as /wheel.key)")
        return 0
    if args.dump_statuses:
        return dump_statuses(args.journal)
    if not args.port:
        print("cylindre daemon: --port is required", file=sys.stderr)
        return 2
    if not 1500 <= args.silence_ms <= 60000:
        print("cylindre daemon: --silence-ms must be 1500 to 60000 (the wheel speaks every 500 ms)", file=sys.stderr)
        return 2
    setup_logging(args.log, args.verbose)
    log = logging.getLogger("cylindre.daemon")
    try:
        key = load_key(args.key)
    except KeyError_ as e:
        print(f"cylindre daemon: {e}", file=sys.stderr)
        return 2
    limits = None
    if args.limits:
        from cylindre.rules.limits import Limits, LimitError
        try:
            limits = Limits().updated(json.loads(Path(args.limits).read_text()))
        except (OSError, ValueError, LimitError) as e:
            print(f"cylindre daemon: --limits {args.limits}: {e}", file=sys.stderr)
            return 2
    from .api import make_server, serve_in_thread
    from .service import Daemon
    host, port = parse_hostport(args.http)
    import sqlite3
    try:
        d = Daemon(args.port, key, args.journal, wheel=args.wheel, limits=limits, open_table=args.open, baud=args.baud,
                   silence_ms=args.silence_ms)
    except (sqlite3.Error, OSError, RuntimeError) as e:
        print(f"cylindre daemon: cannot open the journal {args.journal}: {e}", file=sys.stderr)
        return 2
    try:
        srv = make_server(d, host, port)
    except OSError as e:
        print(f"cylindre daemon: cannot serve HTTP on {host}:{port}: {e}", file=sys.stderr)
        return 2
    done = threading.Event()

    def _stop(signum, frame):
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    d.start()
    serve_in_thread(srv)
    log.info("daemon up: wheel %s on %s, journal %s, API http://%s:%d/ (OpenAPI at /openapi.json)",
             args.wheel, args.port, args.journal, host, srv.server_address[1])
    done.wait()
    log.info("stopping")
    srv.shutdown()
    d.stop()
    d.j.close()
    return 0


def dump_statuses(path) -> int:
    """One JSON line per status frame received: id, receipt time, wheel, seq, the status, raw hex."""
    import sqlite3
    from cylindre.link import frame as fr
    from .journal import Journal
    if not Path(path).exists():
        print(f"cylindre daemon: no journal at {path}", file=sys.stderr)
        return 2
    try:
        j = Journal(path)
        rows = j.statuses()
    except (sqlite3.Error, OSError, RuntimeError, ValueError) as e:
        print(f"cylindre daemon: cannot read the journal {path}: {e}", file=sys.stderr)
        return 2
    for r in rows:
        raw = r["raw"]
        try:
            f = fr.parse(raw[:-1] if raw.endswith(b"\x00") else raw)
            seq, body = f.seq, json.loads(f.payload.decode())
        except (fr.FrameError, ValueError):
            seq, body = None, None
        print(json.dumps({"id": r["id"], "at": r["at"], "wheel": r["wheel"], "seq": seq, "status": body,
                          "raw": raw.hex()}, ensure_ascii=False))
    j.close()
    return 0
