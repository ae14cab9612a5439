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

from host_tools.table import libelles as L

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


def _ago(heard, now=None) -> str:
    if not isinstance(heard, (int, float)):
        return "jamais entendu"
    ago = max(0.0, (now or time.time()) - heard)
    return "à l'instant" if ago < 0.5 else f"il y a {L.nombre(ago, 1) if ago < 10 else L.nombre(ago)}\u202fs"


def _or(value, none: str) -> str:
    """A value as a person reads it; `none` in words when there is none (never "None")."""
    return none if value is None else str(value)


def run(args) -> int:
    url = f"{'https' if getattr(args, 'https', False) else 'http'}://{args.http}/state"
    token = getattr(args, "token", None)
    headers = {"Authorization": "Bearer " + token} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
            st = json.loads(r.read())
    except urllib.error.HTTPError as e:
        why = {401: "donnez un jeton valide : --token ou $CYLINDRE_TOKEN (cylindre token add)",
               403: "ce jeton n'a pas le rôle qu'il faut (display au moins)",
               429: "trop de jetons inconnus depuis cette adresse : réessayez plus tard"}.get(e.code, e.reason)
        print(f"cylindre status : {url} : {e.code} ({why})", file=sys.stderr)
        return NO_TOKEN if e.code in (401, 403, 429) else DAEMON_ERROR
    except (urllib.error.URLError, OSError, ValueError) as e:
        print(f"cylindre status : aucun démon à {url} : {e}", file=sys.stderr)
        return NO_DAEMON
    if args.json:
        print(json.dumps(st, indent=2, ensure_ascii=False))
        return LINK_UP if st["link"].get("up", st["link"].get("session")) else LINK_DOWN
    for line in lines(st):
        print(line)
    link = st["link"]
    return LINK_UP if link.get("up", link["session"]) else LINK_DOWN


def lines(st: dict, now=None) -> list[str]:
    """The state in French, numbers the French way, never "None" (pure: the test reads it)."""
    link, wheel, table = st["link"], st["wheel"], st["table"]
    c = link["counts"]
    up = link.get("up", link["session"])
    slow = link.get("session") and (link.get("problem") or {}).get("code") == "slow_line"
    word = "ÉTABLIE" if up else "LENTE" if slow else "COUPÉE"
    n = L.nombre
    out = [f"liaison  {word} sur {link['port']} (port {'ouvert' if link['port_open'] else 'fermé'}) ; "
           f"dernier signal {_ago(link.get('last_heard'), now)} ; "
           + (f"démarrage du cylindre {link['boot']}" if link.get("boot") else "aucun démarrage du cylindre entendu")
           + (f" ; événements acquittés jusqu'au n° {n(link['acked'])}" if link.get("acked") is not None else "")
           + (f" ; aller-retour {n(link['rtt_ms'])}\u202fms" if link.get("rtt_ms") else "")]
    problem = link.get("problem")
    if problem:
        out.append(f"         PROBLÈME : {problem['text']}")
        if problem.get("advice"):
            out.append(f"         à faire : {problem['advice']}")
    out.append(f"         trames {n(c['frames'])}, événements {n(c['events'])}, renvoyés {n(c['duplicates'])}, "
               f"refusées {n(c['rejects'])}, périmées {n(c['stale'])}, hors d'ordre {n(c['gaps'])}")
    ws = wheel.get("status") or {}
    if ws:
        sensors = ws.get("sensors") or {}
        bad = sorted(k for k, v in sensors.items() if v != "ok")
        rpm = (ws.get("rotor_rpm_x10") or 0) / 10
        out.append(f"cylindre {wheel['id']} : {L.label('state', ws.get('state')) if ws.get('state') else 'état inconnu'}, "
                   + (f"coup {ws['spin']}" if ws.get("spin") is not None else "aucun coup encore")
                   + f", rotor {n(rpm, 1)}\u202ftr/min {L.direction(ws.get('rotor_dir'))}, "
                   f"table {'ouverte' if ws.get('table_open') else 'fermée'} pour le cylindre ; "
                   + ("capteurs tous bons" if not bad else "CAPTEURS EN DÉFAUT : " + ", ".join(
                       f"{k} {L.label('sensor', sensors[k])}" for k in bad)))
    else:
        out.append(f"cylindre {wheel['id']} : aucun état reçu encore")
    ident = wheel.get("identity") or {}
    if ident.get("state") == "known":
        out.append(f"         numéro de série {_or(ident.get('serial'), 'non annoncé')}, clé {_or(ident.get('key'), '—')}, "
                   f"compteur {_or(ident.get('epoch'), '—')} ; son coup s est le coup {_or(ident.get('base'), 0)} + s de la "
                   f"table ; accepté {'' if ident.get('accepted_by') == 'first contact' else 'par '}{L.accepted_by(ident.get('accepted_by'))}")
    said = table.get("annonce")
    if table["phase"] == "closed":
        head = "fermée"
    elif said:
        head = "ouverte — " + L.label("annonce", said) + (
            f" ({L.label('suspendu', table.get('refusing'))})" if said == "suspended" and table.get("refusing") else "")
    else:
        head = "ouverte — " + L.label("phase", table["phase"])
    bets = table["bets_on_table"]
    out.append(f"table    {head} ; " + (f"coup {table['spin']}" if table.get("spin") is not None else "aucun coup encore")
               + " ; " + (f"dernier numéro {table['last_number']}" if table.get("last_number") is not None
                          else "aucun numéro encore")
               + f" ; {n(bets)} {'mise' if bets < 2 else 'mises'} sur le tapis, {L.euros(table['stakes_on_table'])} ; "
               f"{n(len(table['prisoners']))} en prison"
               + (f" ; {n(table['bets_held'])} MISES RETENUES pour le chef de table (GET /bets?status=held)"
                  if table.get("bets_held") else ""))
    return out
