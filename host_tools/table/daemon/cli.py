"""`cylindre daemon`: run the table from a wheel on a serial port or pseudo-terminal.

Settings come from `--config table.toml` (keys in config.py and docs/operators/configuration.md), each flag given
on the command line overriding the file. The HTTP API is the ASGI app of api/app.py on uvicorn.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

HELP = "run the table host: serial link to the wheel, journal, game flow, HTTP API"
LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def add_arguments(p):
    # every setting defaults to None here: the config file's value, or its default, applies
    p.add_argument("--config", metavar="FILE", help="TOML file of settings (docs/operators/configuration.md); flags override it")
    p.add_argument("--port", help="serial device (/dev/ttyACM0), pseudo-terminal, or pyserial URL")
    p.add_argument("--port-fd", type=int, metavar="FD",
                   help="an inherited descriptor of --port that holds its exclusive lock (the demo's pseudo-terminals): "
                        "the daemon keeps it, so no other program can take the port, and opens --port without "
                        "locking it again")
    p.add_argument("--source", help="cylindre (default: the Cylindre link on --port) or cammegh:PORT (an installed "
                                    "Cammegh reader's lines at 9600 8N1, docs/integrators/cammegh-reader.md; no key needed)")
    p.add_argument("--key", help="the wheel's link key file (64 hex chars, mode 0600; default keys/T1.key)")
    p.add_argument("--new-key", metavar="FILE", help="write a fresh random wheel key to FILE (mode 0600) and exit")
    p.add_argument("--wheel", help="the wheel's id, as provisioned in its firmware (default T1)")
    p.add_argument("--journal", help="SQLite journal, created 0600 (default var/journal.sqlite)")
    p.add_argument("--http", help="HOST:PORT of the HTTP API (default 127.0.0.1:8737); a non-loopback HOST "
                                  "needs --tls-cert/--tls-key or --behind-proxy")
    p.add_argument("--tls-cert", help="PEM certificate: serve HTTPS")
    p.add_argument("--tls-key", help="PEM private key of --tls-cert (mode 0600)")
    p.add_argument("--behind-proxy", action="store_true", default=None,
                   help="a reverse proxy on this host terminates TLS (allows a non-loopback --http; "
                        "trusts its X-Forwarded-For)")
    p.add_argument("--allowed-host", dest="allowed_hosts", action="append", metavar="HOST",
                   help="a Host header to serve besides the loopback names and the bind address (repeatable)")
    p.add_argument("--cors-origin", dest="cors_origins", action="append", metavar="ORIGIN",
                   help="an origin allowed to call the API from a browser (repeatable; default: CORS off)")
    p.add_argument("--fronts", type=int, metavar="N",
                   help="HTTP fronts: N processes parse HTTP for the daemon on its address, so a stadium's requests "
                        "use more than one core (default 0: the daemon serves HTTP itself)")
    p.add_argument("--limits", help="JSON file of table limits (docs/integrators/rules-api.md), default the house limits")
    p.add_argument("--casino", help="the casino's name, on the statistics report and the marquee")
    p.add_argument("--table-name", help="the table's name on the marquee and the report (default: the wheel's id)")
    p.add_argument("--report-key", metavar="FILE", help="Ed25519 private key (PEM, mode 0600) that signs the statistics "
                                                       "report (cylindre floor new-key FILE makes one)")
    p.add_argument("--open", action="store_true", default=None, help="open the table at start")
    p.add_argument("--baud", type=int, help="serial speed (default 115200; 9600 with --source cammegh)")
    p.add_argument("--silence-ms", type=int,
                   help="re-open the session after this long without a valid frame (default 3000; 2500 to 60000)")
    p.add_argument("--log", help="also write the log to this file (created 0640)")
    p.add_argument("--log-format", choices=("text", "json"), help="text (default) or json: one JSON object a line")
    p.add_argument("--verbose", "-v", action="store_true", default=None, help="debug logging, HTTP access log")
    p.add_argument("--nats", metavar="URL", help="publish to the casino floor's NATS broker (nats://HOST:4222 or "
                                                "tls://...; a cluster's nodes comma-separated; docs/floor/table-side.md); "
                                                "default: no floor")
    p.add_argument("--site", help="the casino's site id on the floor's subjects (default casino)")
    p.add_argument("--nats-creds", metavar="FILE", help="this table's NATS credentials (cylindre floor-creds, mode 0600)")
    p.add_argument("--nats-tls-ca", metavar="FILE", help="CA certificate of the broker's TLS certificate")
    p.add_argument("--floor-key", metavar="FILE", help="the floor's command key (64 hex chars, mode 0600): take signed "
                                                       "commands from the floor; default: none taken")
    p.add_argument("--day-start", metavar="HH:MM", help="local hour the gaming day starts (default 06:00; as the floor's)")
    p.add_argument("--tz", help="the casino's time zone (default Europe/Paris; as the floor's)")
    p.add_argument("--wheel-serial", metavar="SERIAL", help="the wheel's board serial, when the wheel does not report one")
    p.add_argument("--dump-statuses", action="store_true",
                   help="print every status frame in --journal (rows and compressed blocks) as JSON lines and exit")


class JsonFormatter(logging.Formatter):
    """One JSON object a line: at (UTC, ISO 8601), level, logger, msg, and exc when there is one."""

    def format(self, record):
        out = {"at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + ".%03dZ" % record.msecs,
               "level": record.levelname, "logger": record.name, "msg": record.getMessage()}
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def setup_logging(path=None, verbose=False, fmt="text"):
    handlers = [logging.StreamHandler(sys.stderr)]
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        # reopened when logrotate (or anyone) moves the file away: the log never fills the disk unseen
        handlers.append(logging.handlers.WatchedFileHandler(path, encoding="utf-8"))
        from host_tools.table.wheel.keys import secure_file
        secure_file(path, 0o640)
    formatter = JsonFormatter() if fmt == "json" else logging.Formatter(LOG_FORMAT)
    for h in handlers:
        h.setFormatter(formatter)
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, handlers=handlers, force=True)


def parse_hostport(text):
    from host_tools.table.config import ConfigError, hostport
    try:
        return hostport(text)
    except ConfigError as e:
        raise SystemExit(f"--{e}") from None


def settings(args) -> dict:
    """The config file overlaid with the flags given (ConfigError if either is wrong)."""
    from host_tools.table import config
    flags = {k: getattr(args, k, None) for k in config.KEYS}
    return config.merge(config.load(args.config), flags)


def run(args) -> int:
    from host_tools.table.config import ConfigError
    from host_tools.table.wheel.keys import KeyError_, load_key, new_key
    if args.new_key:
        try:
            new_key(args.new_key)
        except FileExistsError:
            print(f"cylindre daemon : {args.new_key} existe déjà : une clé de cylindre n'est jamais écrasée", file=sys.stderr)
            return 2
        print(f"nouvelle clé de cylindre écrite dans {args.new_key} (à copier sur le Pico sous /wheel.key)")
        return 0
    try:
        c = settings(args)
    except ConfigError as e:
        print(f"cylindre daemon: {e}", file=sys.stderr)
        return 2
    if args.dump_statuses:
        return dump_statuses(c["journal"])
    if not c["port"]:
        print("cylindre daemon : --port ou --source cammegh:PORT (ou port dans le fichier de configuration) est requis", file=sys.stderr)
        return 2
    cammegh = c["source"] == "cammegh"
    os.umask(0o027)                     # the log 0640 at most; the journal and keys 0600 below
    setup_logging(c["log"], c["verbose"], c["log_format"])
    log = logging.getLogger("cylindre.daemon")
    try:
        key = None if cammegh else load_key(c["key"])     # a reader's lines carry no MAC
        if c["tls_key"]:
            from host_tools.table.wheel.keys import private
            private(c["tls_key"])
    except KeyError_ as e:
        print(f"cylindre daemon: {e}", file=sys.stderr)
        return 2
    if c["report_key"]:
        from host_tools.table.journal.seal import SignatureError, load_private
        try:
            load_private(c["report_key"])
        except (OSError, ValueError, SignatureError) as e:
            print(f"cylindre daemon: report_key {c['report_key']}: {e}", file=sys.stderr)
            return 2
    limits = None
    if c["limits"]:
        from cylindre.rules.limits import Limits, LimitError
        try:
            limits = Limits().updated(json.loads(Path(c["limits"]).read_text()))
        except (OSError, ValueError, LimitError) as e:
            print(f"cylindre daemon: --limits {c['limits']}: {e}", file=sys.stderr)
            return 2
    from host_tools.table.daemon.journal_lock import JournalBusy, JournalLock
    host, port = parse_hostport(c["http"])
    try:
        # one daemon per journal: a second one stops here, naming the first (journal_lock.py)
        lock = JournalLock(c["journal"]).acquire(http=f"{'https' if c['tls_cert'] else 'http'}://{host}:{port}/")
    except JournalBusy as e:
        print(f"cylindre daemon : {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"cylindre daemon : impossible de verrouiller le journal {c['journal']} ({lock_file(c['journal'])}) : {e}",
              file=sys.stderr)
        return 2
    wheel_port = None
    if getattr(args, "port_fd", None) is not None:
        wheel_port = held_port(args.port_fd, c)
        if wheel_port is None:
            return 2
    from host_tools.table.heap import Heap
    heap = Heap().install()             # each collection scans what is new (heap.py)
    try:
        return _serve(c, key, limits, lock, log, wheel_port)
    finally:
        heap.uninstall()
        lock.release()                  # (the process's end would drop it too: a test runs this in-process)


def _serve(c, key, limits, lock, log, wheel_port=None) -> int:
    """The daemon on its locked journal until SIGTERM or Ctrl-C."""
    from host_tools.table.api.app import create_app
    from host_tools.table.daemon.host import TableHost
    from host_tools.table.wheel.keys import secure_file
    import sqlite3
    cammegh = c["source"] == "cammegh"
    host, port = parse_hostport(c["http"])
    try:
        _create_private(c["journal"])
        th = TableHost.build(wheel_port or c["port"], key, c["journal"], wheel=c["wheel"], limits=limits, open_table=c["open"],
                            baud=c["baud"], silence_ms=c["silence_ms"], source=c["source"])
        d = th.d
        secure_file(c["journal"])
        app = create_app(th, c)
    except (sqlite3.Error, OSError, RuntimeError) as e:
        print(f"cylindre daemon: cannot open the journal {c['journal']}: {e}", file=sys.stderr)
        return 2
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if c["fronts"]:                 # each front listens on a socket of its own at this address (daemon/fronts.py)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError as e:
        print(f"cylindre daemon: cannot serve HTTP on {host}:{port}: {e}", file=sys.stderr)
        return 2
    from host_tools.table.api.server import server as http_server
    server = http_server(app, behind_proxy=bool(c["behind_proxy"]), tls_cert=c["tls_cert"], tls_key=c["tls_key"],
                         access_log=bool(c["verbose"]))
    done = threading.Event()

    def _stop(signum, frame):
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    floor = None
    if c["nats"]:
        floor = start_floor(th, c)
        if floor is None:
            return 2
    d.start()
    app.state.pit.start()                   # the alert watch (web_pages.Pit)
    if floor is not None:
        floor.start()
    fronts = None
    if c["fronts"]:
        from host_tools.table.daemon.fronts import Fronts, front_conf
        fronts = Fronts(app, sock, c["fronts"], front_conf(c, app.state.guard_hosts))
        web = threading.Thread(target=fronts.run, name="cylindre-http", daemon=True)
    else:
        web = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="cylindre-http", daemon=True)
    web.start()
    scheme = "https" if c["tls_cert"] else "http"
    lock.tell(http=f"{scheme}://{host}:{sock.getsockname()[1]}/")        # the port a second daemon is told
    log.info("daemon up: wheel %s on %s (%s, %d baud), journal %s, API %s://%s:%d/ (OpenAPI at /openapi.json)%s",
             c["wheel"], c["port"], "a Cammegh reader" if cammegh else "the Cylindre link", c["baud"], c["journal"],
             scheme, host, sock.getsockname()[1], f", {c['fronts']} HTTP fronts" if c["fronts"] else "")
    done.wait()
    log.info("stopping")
    if floor is not None:
        floor.stop()
    app.state.pit.close()
    th.events.close()
    server.should_exit = True
    if fronts is not None:
        fronts.stop()
    web.join(timeout=8 if fronts is not None else 5)
    d.stop()
    th.tokens.close()
    d.j.close()
    return 0


def start_floor(th, c):
    """The link to the casino floor (floor_publisher.FloorLink), built from the settings; None
    (and why, on stderr) when a file it needs is missing or open to others."""
    from host_tools.table.floor.publisher import CredsError, FloorLink, load_creds
    from host_tools.table.wheel.keys import KeyError_, load_key
    try:
        creds = load_creds(c["nats_creds"]) if c["nats_creds"] else None
        key = load_key(c["floor_key"]) if c["floor_key"] else None
    except (CredsError, KeyError_) as e:
        print(f"cylindre daemon: {e}", file=sys.stderr)
        return None
    if c["nats_tls_ca"] and not Path(c["nats_tls_ca"]).is_file():
        print(f"cylindre daemon: nats_tls_ca {c['nats_tls_ca']} does not exist", file=sys.stderr)
        return None
    from host_tools.floor.link.gamingday import GamingDay
    return FloorLink(th, c["nats"], c["site"], table=c["wheel"], serial=c["wheel_serial"], creds=creds,
                     tls_ca=c["nats_tls_ca"], floor_key=key, gday=GamingDay(c["day_start"], c["tz"]))


def held_port(fd: int, c):
    """--port-fd: the port whose lock this daemon inherited, kept for its life (no other program can
    take the port, and a pseudo-terminal's number cannot go to another program while it lives); the
    port is opened without locking it again. None (and why, on stderr) if the descriptor is not that."""
    import fcntl
    from host_tools.table.wheel.port import SerialPort
    try:
        if not os.isatty(fd):
            raise OSError(0, "pas un terminal")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)      # already ours: a no-op; not ours: refused now
    except OSError as e:
        print(f"cylindre daemon : --port-fd {fd} n'est pas le port verrouillé qu'il doit être ({e.strerror or e})",
              file=sys.stderr)
        return None
    return SerialPort(c["port"], c["baud"], exclusive=False)


def lock_file(journal) -> str:
    from host_tools.table.daemon.journal_lock import lock_path
    return str(lock_path(journal))


def _create_private(path):
    """Create the journal file 0600 before SQLite does (its -wal and -shm copy that mode)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def dump_statuses(path) -> int:
    """One JSON line per status frame received: id, receipt time, wheel, seq, the status, raw hex."""
    import sqlite3
    from cylindre.link import frame as fr, status
    from host_tools.table.journal.store import Journal
    if not Path(path).exists():
        print(f"cylindre daemon : pas de journal à {path}", file=sys.stderr)
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
            seq, body = f.seq, status.decode(f.payload)
        except (fr.FrameError, ValueError):     # status.StatusError is a ValueError
            seq, body = None, None
        print(json.dumps({"id": r["id"], "at": r["at"], "wheel": r["wheel"], "seq": seq, "status": body,
                          "raw": raw.hex()}, ensure_ascii=False))
    j.close()
    return 0
