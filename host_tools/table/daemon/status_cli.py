"""`cylindre status`: the link, the wheel and the table, as the running daemon sees them.

Exit status: 0 the link is up; 1 the daemon answers and the link is down; 2 no daemon answers at
the address; 3 the daemon refused the token (none given, unknown or revoked, too low a role, or
the address throttled after too many unknown tokens); 4 the daemon answered another error.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request

HELP = "show the link, the wheel and the table of a running daemon"
LINK_UP, LINK_DOWN, NO_DAEMON, NO_TOKEN, DAEMON_ERROR = 0, 1, 2, 3, 4


def add_arguments(p):
    p.epilog = ("exit status: 0 link up; 1 link down; 2 no daemon at the address; 3 token refused (none, unknown, "
                "revoked, too low a role, or this address throttled); 4 another error from the daemon")
    p.add_argument("--http", default="127.0.0.1:8737", help="the daemon's HOST:PORT (default 127.0.0.1:8737)")
    p.add_argument("--json", action="store_true", help="print the raw JSON")
    p.add_argument("--token", default=os.environ.get("CYLINDRE_TOKEN"),
                   help="an API token of role display or above (default $CYLINDRE_TOKEN; cylindre token add)")
    p.add_argument("--https", action="store_true", help="the daemon serves HTTPS (tls_cert in its config)")


def _eur(cents):
    return f"{cents / 100:,.2f} €".replace(",", " ")


def run(args) -> int:
    url = f"{'https' if getattr(args, 'https', False) else 'http'}://{args.http}/state"
    token = getattr(args, "token", None)
    headers = {"Authorization": "Bearer " + token} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
            st = json.loads(r.read())
    except urllib.error.HTTPError as e:
        why = {401: "give a live token: --token or $CYLINDRE_TOKEN (cylindre token add)",
               429: "too many unknown tokens from this address: retry later"}.get(e.code, e.reason)
        print(f"cylindre status: {url}: {e.code} ({why})", file=sys.stderr)
        return NO_TOKEN if e.code in (401, 403, 429) else DAEMON_ERROR
    except (urllib.error.URLError, OSError, ValueError) as e:
        print(f"cylindre status: no daemon at {url}: {e}", file=sys.stderr)
        return NO_DAEMON
    if args.json:
        print(json.dumps(st, indent=2, ensure_ascii=False))
        return LINK_UP if st["link"].get("up", st["link"].get("session")) else LINK_DOWN
    link, wheel, table = st["link"], st["wheel"], st["table"]
    heard = link.get("last_heard")
    ago = f"{time.time() - heard:.1f} s ago" if heard else "never"
    c = link["counts"]
    up = link.get("up", link["session"])
    word = "UP" if up else "SLOW" if link.get("session") and (link.get("problem") or {}).get("code") == "slow_line" else "DOWN"
    print(f"link   {word} on {link['port']} (port {'open' if link['port_open'] else 'closed'}); "
          f"last heard {ago}; wheel boot {link['boot']}; events acked to {link['acked']}"
          + (f"; round trip {link['rtt_ms']:.0f} ms" if link.get("rtt_ms") else ""))
    problem = link.get("problem")
    if problem:
        print(f"       PROBLÈME : {problem['text']}")
        if problem.get("advice"):
            print(f"       à faire : {problem['advice']}")
    print(f"       frames {c['frames']}, events {c['events']}, resent {c['duplicates']}, refused {c['rejects']}, "
          f"stale {c['stale']}, out of order {c['gaps']}")
    ws = wheel.get("status") or {}
    if ws:
        sensors = ws.get("sensors") or {}
        bad = sorted(k for k, v in sensors.items() if v != "ok")
        print(f"wheel  {wheel['id']}: {ws.get('state')}, spin {ws.get('spin')}, "
              f"rotor {(ws.get('rotor_rpm_x10') or 0) / 10:.1f} rpm {'cw' if ws.get('rotor_dir') == 1 else 'ccw'}, "
              f"table {'open' if ws.get('table_open') else 'closed'}; sensors {'all ok' if not bad else 'FAULT ' + ', '.join(bad)}")
    else:
        print(f"wheel  {wheel['id']}: no status received yet")
    ident = wheel.get("identity") or {}
    if ident.get("state") == "known":
        print(f"       serial {ident.get('serial')}, key {ident.get('key')}, counter epoch {ident.get('epoch')}, "
              f"its spin s is the table's {ident.get('base')} + s; taken {ident.get('accepted_by')}")
    refusing = "" if table.get("accepting_bets", True) else f" (bets refused: {table.get('refusing')})"
    print(f"table  {table['phase']}{refusing}; spin {table['spin']}; last number {table['last_number']}; "
          f"{table['bets_on_table']} bets on the table, {_eur(table['stakes_on_table'])}; "
          f"{len(table['prisoners'])} en prison"
          + (f"; {table['bets_held']} bets HELD for the supervisor (GET /bets?status=held)" if table.get("bets_held") else ""))
    return LINK_UP if up else LINK_DOWN
