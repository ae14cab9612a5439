"""`cylindre settle [FILE|-]`: settle a JSON session of spins and print the result.

For table systems and audits: JSON in (a file or stdin), JSON out (default) or, with `--text`,
the croupier's announcements and a per-bet table for a person. Bad input (not UTF-8, bad JSON,
nested too deep, too large, a lone surrogate) or a bad bet: one line naming the problem (the spin
and the bet) on stderr, exit status 2, whatever the input. The rules are `cylindre.rules` (the same
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


# Input limits (docs/integrators/settle.md): a session is at most this many bytes, nested at most this deep
# (a session needs 7: session, spins, spin, bets, bet, numbers or a move at zero, and one spare
# level for callers that wrap it), and its strings are text (no lone surrogate such as "\\ud800").
MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 16


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read(MAX_BYTES + 1)
    with open(path, "rb") as f:
        return f.read(MAX_BYTES + 1)


def _fail(msg: str) -> int:
    print(f"cylindre settle: {msg}", file=sys.stderr)
    return 2


class InputError(ValueError):
    """The input is not a session this command reads; the message says why, on one line."""


def _check_tree(doc) -> None:
    """Refuse nesting deeper than MAX_DEPTH and strings that are not valid text (lone
    surrogates), walking the document without recursion."""
    stack = [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            _check_text(v)
            continue
        if not isinstance(v, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            for k, x in v.items():
                _check_text(k)
                stack.append((x, depth + 1))
        else:
            stack.extend((x, depth + 1) for x in v)


def _check_text(s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"a string holds a lone surrogate \\u{ord(s[exc.start]):04x}, "
                         "which is not text") from None


def load(data: bytes, name: str = "-"):
    """The session document in `data` (the bytes of a file or stdin), or InputError."""
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"bad JSON in {name}: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:          # CPython refuses integers of more than 4300 digits
        raise InputError(f"bad JSON in {name}: an integer too long (more than 4300 digits)") from None
    _check_tree(doc)
    return doc


def _one_line(msg: str) -> str:
    """The message with control characters (a newline in a bet id) written as escapes."""
    return "".join(ch if ch >= " " and ch != "\x7f" else f"\\x{ord(ch):02x}" for ch in msg)


def settle_bytes(data: bytes, name: str = "-", fmt: str = "json") -> tuple[int, bytes, str]:
    """The whole command on input bytes: (exit status, stdout bytes, stderr line or "").

    fmt: "json" (indented), "compact" or "text". Never raises for any input."""
    try:
        doc = load(data, name)
        out = settle_session(doc)
    except InputError as exc:
        return 2, b"", _one_line(f"cylindre settle: {exc}")
    except BetError as exc:
        return 2, b"", _one_line(f"cylindre settle: {exc.message}")
    if fmt == "text":
        text = format_text(out)
    elif fmt == "compact":
        text = json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n"
    else:
        text = json.dumps(out, ensure_ascii=False, indent=2) + "\n"
    return 0, text.encode("utf-8"), ""


def run(args) -> int:
    try:
        data = _read(args.file)
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}")
    fmt = "text" if args.text else "compact" if args.compact else "json"
    status, out, err = settle_bytes(data, args.file, fmt)
    if status:
        print(err, file=sys.stderr)
        return status
    sys.stdout.flush()
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
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
            f"{p['id']} {euros(p['stake'])} à {p['chance']} ({p.get('wins_needed', 1)} win(s) to free)"
            for p in out["prisoners"]))
    if out["carry"]:
        lines.append("Carried to the next spin: " + ", ".join(str(b["id"]) for b in out["carry"]))
    return "\n".join(lines) + "\n"
