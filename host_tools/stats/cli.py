"""`cylindre stats`: the wheel's integrity statistics from a journal (docs/pit/statistics.md)."""

from __future__ import annotations

import json
import sys

HELP = "wheel statistics from a journal: summary, PNG plots and a PDF report"


def add_arguments(p):
    p.add_argument("--journal", required=True, help="the daemon's SQLite journal (opened read-only)")
    p.add_argument("--wheel", help="the wheel to analyse (default: the one with the most events)")
    p.add_argument("--out", help="folder for the PNG plots and report.pdf (none written without it)")
    p.add_argument("--casino", help="the casino's name, on the report's title block (the PDF needs it)")
    p.add_argument("--table", help="the table's name on the report (the PDF needs it)")
    p.add_argument("--until", type=float, metavar="EPOCH",
                   help="read the journal up to this instant only (epoch seconds, as a report's 'Journal' line gives "
                        "it): the same games and the same digest as the report made then")
    p.add_argument("--sign-key", metavar="FILE",
                   help="sign report.pdf with this Ed25519 private key (PEM, mode 0600; cylindre floor new-key makes "
                        "one): report.pdf.sig beside it, checked by cylindre floor verify report.pdf --pub KEY.pub")
    p.add_argument("--alpha", type=float, default=None, help="family-wise error rate of an alarm (default 0.01)")
    p.add_argument("--hot", type=int, default=5, help="how many hot and cold numbers to list (default 5)")
    p.add_argument("--json", action="store_true", help="print the whole analysis as JSON instead of the summary")


def run(args) -> int:
    from . import analysis, games, report

    if args.alpha is not None and not 0 < args.alpha < 1:
        print("cylindre stats : --alpha doit être entre 0 et 1", file=sys.stderr)
        return 2
    key = None
    if args.sign_key:
        from host_tools.table.journal.seal import SignatureError, load_private
        try:
            key = load_private(args.sign_key)
        except (OSError, ValueError, SignatureError) as e:
            print(f"cylindre stats : --sign-key {args.sign_key} : {e}", file=sys.stderr)
            return 2
    try:
        rec = games.read(args.journal, args.wheel, args.until)
    except (FileNotFoundError, ValueError) as e:
        print(f"cylindre stats : {e}", file=sys.stderr)
        return 2
    a = analysis.analyse(rec, alpha=args.alpha or analysis.ALPHA, hot=max(1, args.hot))
    print(json.dumps(a, indent=1) if args.json else report.text(a))
    if args.out:
        try:
            paths = report.write(a, args.out, casino=args.casino, table=args.table, sign_key=key)
        except report.NeedsNames as e:
            print(f"cylindre stats : {e} : donnez --casino et --table (les graphiques sont écrits dans {args.out}, "
                  "le rapport PDF non)", file=sys.stderr)
            return 2
        except ImportError as e:
            print(f"cylindre stats : --out demande {e.name or 'matplotlib et reportlab'}, une dépendance de cylindre : "
                  "réinstallez-le (pip install .)",
                  file=sys.stderr)
            return 2
        except OSError as e:
            print(f"cylindre stats : impossible d'écrire dans {args.out} : {e}", file=sys.stderr)
            return 2
        for p in paths:
            print(f"écrit {p}", file=sys.stderr)
    return 1 if a["alarms"] else 0
