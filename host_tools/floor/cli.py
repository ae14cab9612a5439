"""`cylindre floor`: the casino floor service, and its tools.

    cylindre floor [--db floor.sqlite|postgresql://...] [--nats URL] [--http 127.0.0.1:8090] ...
    cylindre floor token add NAME --role surveillance|pit_boss|director|admin   (list, revoke NAME)
    cylindre floor new-key floor-report.key        (the Ed25519 key that signs the reports)
    cylindre floor report [DAY] --out DIR --report-key floor-report.key
    cylindre floor verify FILE --pub floor-report.pub
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HELP = "run the casino floor service (every table over NATS, the floor page, reports): serve, token, report, verify"
ACTIONS = ("serve", "token", "new-key", "report", "verify")


def add_arguments(p):
    p.add_argument("action", nargs="?", default="serve", choices=ACTIONS, help="what to do (default serve)")
    p.add_argument("words", nargs="*", help="token: add NAME | list | revoke NAME; report: DAY; verify: FILE; new-key: PATH")
    p.add_argument("--db", default="floor.sqlite", help="the floor's store: a SQLite file (default floor.sqlite) "
                                                        "or postgresql://user@host/db")
    p.add_argument("--nats", default="nats://127.0.0.1:4222", help="the broker, or a cluster's nodes comma-separated "
                   "(tls://nats1:4222,tls://nats2:4222,tls://nats3:4222; default nats://127.0.0.1:4222)")
    p.add_argument("--nats-creds", help="the floor's NATS credentials file (production, docs/floor/security.md)")
    p.add_argument("--nats-tls-ca", "--nats-ca", dest="nats_tls_ca", metavar="FILE",
                   help="the CA certificate the broker's TLS certificate is checked against (as the daemon's)")
    p.add_argument("--replicas", type=int, choices=(1, 3, 5), help="replicas of the stream and the bucket (3 on the "
                   "cluster): created so, raised to it if fewer, never lowered (default: 1 when created, else as is)")
    p.add_argument("--no-live", dest="live", action="store_false", help="hear the tables through the stream only "
                   "(without the live path that stores a result as it is published: docs/floor/ (the live path))")
    p.add_argument("--update-broker", action="store_true", help="apply the floor's configuration to a stream or "
                   "bucket that differs from it (never lowering replicas); without it they are only reported")
    p.add_argument("--http", default="127.0.0.1:8090", help="address of the page and API (default 127.0.0.1:8090)")
    p.add_argument("--floor-key", help="the command key shared with the tables (64 hex); without it no commands")
    p.add_argument("--layout", help="TOML: [tables.T1] pit = \"Pit A\", url = \"http://...\", target = 40")
    p.add_argument("--day-start", default="06:00", help="local hour the gaming day starts (default 06:00)")
    p.add_argument("--tz", default="Europe/Paris", help="the casino's time zone (default Europe/Paris)")
    p.add_argument("--escalate-after", type=float, default=300.0, help="seconds an alert may stay unacknowledged "
                                                                       "before it is escalated (default 300)")
    p.add_argument("--stats-days", type=int, default=30, help="days of games in the per-wheel statistics (default 30)")
    p.add_argument("--stats-every", type=float, default=600.0, help="seconds between two computations of the "
                                                                    "per-wheel statistics (default 600)")
    p.add_argument("--reports", help="folder for the signed reports (written from the page or `report`)")
    p.add_argument("--report-key", help="the floor's Ed25519 private key (cylindre floor new-key)")
    p.add_argument("--role", help="token add: the role")
    p.add_argument("--out", help="report: the folder (default --reports or ./reports)")
    p.add_argument("--pub", help="verify: the floor's public key (.pub, PEM)")


def load_layout(path):
    if not path:
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:              # Python 3.10
        import tomli as tomllib
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    return {str(k): dict(v) for k, v in (doc.get("tables") or {}).items()}


def run(args) -> int:
    return {"serve": serve, "token": token, "new-key": new_key, "report": report, "verify": verify}[args.action](args)


def _fail(msg) -> int:
    print(f"cylindre floor: {msg}", file=sys.stderr)
    return 2


def token(args) -> int:
    from host_tools.table.api.auth import TokenError
    from .access import Access
    from .store import Store
    words = args.words
    access = Access(Store(args.db))
    if words[:1] == ["add"] and len(words) == 2:
        try:
            print(access.add(words[1], args.role or ""))
        except TokenError as e:
            return _fail(str(e))
        return 0
    if words[:1] == ["list"]:
        for t in access.list():
            print(f"{t['name']:24} {t['role']:12} {'révoqué' if t['revoked'] else 'actif'}")
        return 0
    if words[:1] == ["revoke"] and len(words) == 2:
        return 0 if access.revoke(words[1]) else _fail(f"no live token named {words[1]}")
    return _fail("token add NAME --role ROLE | token list | token revoke NAME")


def new_key(args) -> int:
    from .signing import new_key as make
    if len(args.words) != 1:
        return _fail("new-key PATH")
    try:
        pub = make(args.words[0])
    except FileExistsError as e:
        return _fail(str(e))
    print(f"clé privée {args.words[0]} (0600), clé publique à publier {pub}")
    return 0


def report(args) -> int:
    from host_tools.floor.link.gamingday import GamingDay
    from .reports import write_day
    from .signing import load_private
    from .store import Store
    if not args.report_key:
        return _fail("report needs --report-key (cylindre floor new-key PATH makes one)")
    from .reports import NotReconciled
    gday = GamingDay(args.day_start, args.tz)
    day = gday.parse(args.words[0] if args.words else "yesterday", time.time())
    try:
        files = write_day(Store(args.db), gday, day, args.out or args.reports or "reports", load_private(args.report_key))
    except NotReconciled as e:
        print(f"cylindre floor: NON SIGNÉ : la journée du {day.isoformat()} ne se réconcilie pas avec les tables :",
              file=sys.stderr)
        for table, r in sorted(e.result["tables"].items()):
            if not r["ok"]:
                print(f"  {table} : " + " ; ".join(r["why"]), file=sys.stderr)
        return 1
    for f in files:
        print(f"{f}  (+ {f.name}.sig)")
    return 0


def verify(args) -> int:
    from .signing import SignatureError, describe, load_public, verify_file
    if len(args.words) != 1 or not args.pub:
        return _fail("verify FILE --pub floor-report.pub")
    try:
        doc = verify_file(args.words[0], load_public(args.pub))
    except (SignatureError, OSError) as e:
        print(f"INVALIDE : {e}")
        return 1
    print(f"valide : {Path(args.words[0]).name} ({doc['place']}) : {describe(doc)} ; signé par la clé {doc['key']} "
          f"(sha256 {doc['sha256']})")
    return 0


def connect_options(args) -> dict:
    opts = {}
    if args.nats_creds:                 # the JSON file `cylindre floor-creds` writes (user, password; mode 0600)
        from host_tools.table.floor.publisher import CredsError, load_creds
        try:
            creds = load_creds(args.nats_creds)
        except CredsError as e:
            raise SystemExit(f"cylindre floor: {e}") from None
        opts["user"], opts["password"] = creds["user"], creds["password"]
    ca = getattr(args, "nats_tls_ca", None) or getattr(args, "nats_ca", None)
    if ca:
        import ssl
        if not Path(ca).is_file():
            raise SystemExit(f"cylindre floor: --nats-tls-ca {ca} does not exist")
        opts["tls"] = ssl.create_default_context(cafile=ca)
    elif any(u.strip().startswith("tls://") for u in str(getattr(args, "nats", "") or "").split(",")):
        import ssl
        opts["tls"] = ssl.create_default_context()          # the system's CAs
    return opts


def serve(args) -> int:
    import uvicorn

    from .service import FloorService
    from .web import create_app
    key = None
    if args.floor_key:
        from host_tools.floor.link.command import load_key
        key = load_key(args.floor_key)
    report_key = None
    if args.report_key:
        from .signing import load_private
        report_key = load_private(args.report_key)
    import logging
    from .ingest import servers
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        urls = servers(args.nats)
    except ValueError as e:
        return _fail(f"--nats: {e}")
    bad = [u for u in urls if not u.startswith(("nats://", "tls://"))]
    if bad:
        return _fail(f"--nats: {bad[0]!r} is no nats:// or tls:// URL (a cluster's nodes are comma-separated)")
    svc = FloorService.build(args.db, args.nats, key, load_layout(args.layout), args.day_start, args.tz,
                             args.escalate_after, connect=connect_options(args), stats_days=args.stats_days,
                             stats_every_s=args.stats_every, replicas=args.replicas, update_broker=args.update_broker,
                             live=args.live)
    host, _, port = args.http.rpartition(":")
    app = create_app(svc, args.reports, report_key)
    svc.start()
    print(f"la salle : http://{host or '127.0.0.1'}:{port}/floor  (store {'PostgreSQL' if svc.store.pg else args.db}, "
          f"courtier {args.nats})", flush=True)
    try:
        uvicorn.run(app, host=host or "127.0.0.1", port=int(port), log_level="warning", access_log=False)
    finally:
        svc.stop()
    return 0
