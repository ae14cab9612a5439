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


ROLE_FR = {"display": "afficheur", "croupier": "croupier", "chef": "chef de table", "admin": "administrateur"}


def _when(at) -> str:
    return time.strftime("%d/%m/%Y %H:%M", time.localtime(at))


def run(args) -> int:
    from host_tools.table.api.auth import NAME, TokenError, Tokens
    from host_tools.table.journal.store import Journal
    from host_tools.table.wheel.keys import secure_file
    from pathlib import Path
    if not Path(args.journal).is_file() and not getattr(args, "create", False):
        print(f"cylindre token : pas de journal à {args.journal}"
              + (" (ajoutez --create pour en créer un, pour une nouvelle table)" if args.action == "add" else ""),
              file=sys.stderr)
        return 2
    try:
        j = Journal(args.journal)
        secure_file(args.journal)
        tokens = Tokens(j.db, j.lock)
    except (sqlite3.Error, OSError, RuntimeError) as e:
        print(f"cylindre token : impossible d'ouvrir le journal {args.journal} : {e}", file=sys.stderr)
        return 2
    try:
        if args.action == "add":
            if not NAME.match(args.name or ""):
                print("cylindre token : un nom de jeton a de 1 à 64 lettres, chiffres ou . _ @ -", file=sys.stderr)
                return 2
            if any(r["name"] == args.name and r["revoked"] is None for r in tokens.list()):
                print(f"cylindre token : un jeton nommé {args.name} existe déjà (révoquez-le d'abord : "
                      f"cylindre token revoke {args.name})", file=sys.stderr)
                return 2
            try:
                secret = tokens.add(args.name, args.role)
            except TokenError as e:                     # (checked above; a race with another writer)
                print(f"cylindre token : refusé ({e})", file=sys.stderr)
                return 2
            print(secret)
            print(f"jeton de {args.name} ({args.role} : {ROLE_FR[args.role]}) : à donner en « Authorization: Bearer "
                  "<jeton> », ou dans l'adresse d'une page (…#token=<jeton>). Il ne sera plus montré.", file=sys.stderr)
        elif args.action == "list":
            rows = tokens.list()
            if args.json:
                print(json.dumps(rows, indent=2))
            for r in [] if args.json else rows:
                gone = "" if r["revoked"] is None else f"  RÉVOQUÉ le {_when(r['revoked'])}"
                print(f"{r['name']:<24} {r['role']:<9} {ROLE_FR.get(r['role'], ''):<15} créé le {_when(r['created'])}{gone}")
            if not rows and not args.json:
                print("aucun jeton dans ce journal (cylindre token add NOM --role RÔLE)")
        else:
            if not tokens.revoke(args.name):
                print(f"cylindre token : pas de jeton actif nommé {args.name}", file=sys.stderr)
                return 1
            print(f"jeton de {args.name} révoqué : refusé dès la prochaine requête")
        return 0
    finally:
        j.close()
