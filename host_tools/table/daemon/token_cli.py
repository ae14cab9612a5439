"""`cylindre token add NAME --role ROLE | list | revoke NAME`: the API's identities, in the journal.

Works on the journal file whether the daemon runs or not (SQLite's lock orders the writes); a
new or revoked token takes effect at the daemon's next request. A journal that does not exist is
refused (exit 2: a typo would otherwise make an empty journal the daemon never reads), unless
`add --create` is given, for the first token of a new table.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

HELP = "manage the API's tokens in the journal: add NAME --role ROLE, list, revoke NAME"


def add_arguments(p):
    p.add_argument("--journal", default="var/journal.sqlite", help="the daemon's SQLite journal (default var/journal.sqlite)")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = sub.add_parser("add", help="make a token for NAME with ROLE and print it (shown once, kept hashed)")
    a.add_argument("name", help="who holds it: a person or a machine (1 to 64 of A-Z a-z 0-9 . _ @ -)")
    a.add_argument("--role", required=True, choices=("display", "terminal", "croupier", "chef", "admin"),
                   help="display: reads; croupier: bets; chef: open/close, consent, held bets, audit; admin: the wheel")
    ls = sub.add_parser("list", help="every token's name, role, creation and revocation time (never the secret)")
    ls.add_argument("--json", action="store_true", help="print JSON")
    a.add_argument("--create", action="store_true", help="create the journal if it does not exist (a new table)")
    r = sub.add_parser("revoke", help="revoke NAME's token at once")
    r.add_argument("name")


def run(args) -> int:
    from host_tools.table.api.auth import TokenError, Tokens
    from host_tools.table.journal.store import Journal
    from host_tools.table.wheel.keys import secure_file
    from pathlib import Path
    if not Path(args.journal).is_file() and not getattr(args, "create", False):
        print(f"cylindre token: no journal at {args.journal}" + (" (add --create to make a new one)" if args.action == "add" else ""),
              file=sys.stderr)
        return 2
    try:
        j = Journal(args.journal)
        secure_file(args.journal)
        tokens = Tokens(j.db, j.lock)
    except (sqlite3.Error, OSError, RuntimeError) as e:
        print(f"cylindre token: cannot open the journal {args.journal}: {e}", file=sys.stderr)
        return 2
    try:
        if args.action == "add":
            try:
                secret = tokens.add(args.name, args.role)
            except TokenError as e:
                print(f"cylindre token: {e}", file=sys.stderr)
                return 2
            print(secret)
            print(f"token of {args.name} ({args.role}); give it as 'Authorization: Bearer <token>'. "
                  "It is not shown again.", file=sys.stderr)
        elif args.action == "list":
            rows = tokens.list()
            if args.json:
                print(json.dumps(rows, indent=2))
            for r in [] if args.json else rows:
                made = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"]))
                gone = "" if r["revoked"] is None else "  REVOKED " + time.strftime("%Y-%m-%d %H:%M", time.localtime(r["revoked"]))
                print(f"{r['name']:<24} {r['role']:<9} {made}{gone}")
        else:
            if not tokens.revoke(args.name):
                print(f"cylindre token: no live token named {args.name}", file=sys.stderr)
                return 1
            print(f"token of {args.name} revoked")
        return 0
    finally:
        j.close()
