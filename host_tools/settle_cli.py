"""`cylindre settle [FILE|-]`: settle a JSON session of spins and print the result.

For table systems and audits: JSON in (a file or stdin), JSON out (default) or, with `--text`,
the croupier's announcements and a per-bet table for a person. Bad JSON or a bad bet: a message
naming the spin and the bet on stderr, exit status 2. The rules are `cylindre.rules` (the same
files the Pico runs); this module only reads, formats and writes.
"""

from __future__ import annotations

import json
import sys

from cylindre.rules.bets import BetError
from cylindre.rules.session import settle_session

HELP = "settle a JSON session of spins (bets, zero choices, limits) and print the results"


def add_arguments(p) -> None:
    p.add_argument("file", nargs="?", default="-", help="session JSON file, or - for stdin (default)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--text", action="store_true",
                     help="print the announcements and a per-bet table for a person instead of JSON")
    fmt.add_argument("--compact", action="store_true", help="JSON on one line")


def euros(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    c = abs(cents)
    return f"{sign}{c // 100:,}.{c % 100:02d}".replace(",", " ")


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def _fail(msg: str) -> int:
    print(f"cylindre settle: {msg}", file=sys.stderr)
    return 2


def run(args) -> int:
    try:
        text = _read(args.file)
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        return _fail(f"{args.file} is not UTF-8 text: {exc}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return _fail(f"bad JSON in {args.file}: {exc.msg} at line {exc.lineno} column {exc.colno}")
    try:
        out = settle_session(doc)
    except BetError as exc:
        return _fail(exc.message)
    if args.text:
        sys.stdout.write(format_text(out))
    elif args.compact:
        sys.stdout.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0


_COLS = ("staked", "won", "returned", "lost", "imprisoned")


def format_text(out: dict) -> str:
    lines: list[str] = []
    for s in out["spins"]:
        lines.append(f"Spin {s['spin']}: {s['number']}")
        for a in s["announcements"]:
            lines.append(f"  « {a} »")
        side = {"gauche": "left", "droite": "right"}
        lines.append(f"  the croupier on the {side[s['paying_croupier']]} ({s['paying_croupier']}) pays, "
                     f"the one on the {side[s['raking_croupier']]} ({s['raking_croupier']}) rakes")
        if s["results"]:
            lines.append("  " + f"{'bet':<10} {'what':<28} {'outcome':<11}"
                         + "".join(f"{c:>12}" for c in _COLS))
            for r in s["results"]:
                what = r["label"]
                if r.get("unit"):
                    what += f" ×{r['chips']} @{euros(r['unit'])}"
                note = ""
                if r.get("prison"):
                    note = f"  en prison à {r['prison']['chance']}, {r['prison']['wins_needed']} win(s) to free"
                if r.get("excess"):
                    note += f"  ({euros(r['excess'])} over the maximum returned)"
                if r.get("replay"):
                    rp = r["replay"]
                    note += (f"  replay {rp['mode']} refused: {rp['refused']}" if "refused" in rp else
                             f"  replay {rp['mode']}: {euros(rp['stake'])} on {rp['bet']}, change {euros(rp['change'])}")
                lines.append("  " + f"{str(r['id'])[:10]:<10} {what[:28]:<28} {r['outcome']:<11}"
                             + "".join(f"{euros(r[c]):>12}" for c in _COLS) + note)
        if s["payment_order"]:
            lines.append("  payment order: " + "; ".join(
                f"{p['combination']} ({p['id']}) {euros(p['won'])}" for p in s["payment_order"]))
        t = s["totals"]
        lines.append(f"  spin totals: staked {euros(t['staked'])}, paid {euros(t['paid'])} "
                     f"(won {euros(t['won'])} + returned {euros(t['returned'])}), bank keeps {euros(t['lost'])}, "
                     f"en prison {euros(t['imprisoned'])}")
        lines.append("")
    t = out["totals"]
    lines.append(f"Session: {len(out['spins'])} spins; staked {euros(t['staked'])}, paid {euros(t['paid'])}, "
                 f"bank kept {euros(t['lost'])}, bank paid in winnings {euros(t['won'])}, "
                 f"still en prison {euros(t['imprisoned'])}")
    if out["prisoners"]:
        lines.append("Still en prison: " + ", ".join(
            f"{p['id']} {euros(p['stake'])} à {p['chance']} ({p['wins_needed']} win(s) to free)"
            for p in out["prisoners"]))
    if out["carry"]:
        lines.append("Carried to the next spin: " + ", ".join(str(b["id"]) for b in out["carry"]))
    return "\n".join(lines) + "\n"
