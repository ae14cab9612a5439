"""The gaming day's reports (rapports de la journée): per table, and the day's permanences.

`day_report` gives per table: games, voids by reason, turnover (mises), the house's win (résultat,
staked - paid, integer cents) and hold (win / turnover), Article 53 compliance, and the alerts
raised that day (acknowledged or not). `write_day` writes it as JSON and CSV, and each table's
permanence (the numbers of the day in the order they came out) as CSV and PDF, each file signed
with the floor's Ed25519 key (signing.py, a detached FILE.sig), checked with
`cylindre floor verify FILE --pub floor-report.pub`.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections import defaultdict
from pathlib import Path

from . import signing, wheelstats
from .tiles import colour


def _euros(c):
    return f"{c / 100:.2f}"


def day_report(store, gday, day: dt.date) -> dict:
    start, end = gday.bounds(day)
    events = store.events(kinds=("result", "void", "settlement"), since=start, until=end)
    tables = defaultdict(lambda: {"games": 0, "voids": 0, "voids_by_reason": defaultdict(int), "turnover": 0,
                                  "paid": 0, "settled": 0, "serials": set(), "croupiers": set()})
    for e in events:
        t, b = tables[e["table"]], e["body"]
        if e["serial"]:
            t["serials"].add(e["serial"])
        if e["kind"] == "result":
            t["games"] += 1
            if isinstance(b.get("croupier"), str):
                t["croupiers"].add(b["croupier"])
        elif e["kind"] == "void":
            t["voids"] += 1
            t["voids_by_reason"][b.get("reason") if isinstance(b.get("reason"), str) else "?"] += 1
        elif e["kind"] == "settlement":
            t["turnover"] += _cents(b.get("staked"))
            t["paid"] += _cents(b.get("paid"))
            t["settled"] += 1
    per_wheel = wheelstats.launches([e for e in events if e["kind"] in ("result", "void")])
    a53 = defaultdict(lambda: [0, 0])
    for seq in per_wheel.values():
        for g in seq:
            if g["a53"]:
                a53[g["table"]][0] += 1
                a53[g["table"]][1] += all(g["a53"].values())
    alerts = defaultdict(lambda: {"raised": 0, "acknowledged": 0, "escalated": 0})
    for table, acked, facked, esc in store.query(
            "SELECT table_id, acked_at, floor_acked_at, escalated_at FROM alerts WHERE raised_at >= ? AND raised_at < ?",
            (start, end)):
        a = alerts[table]
        a["raised"] += 1
        a["acknowledged"] += acked is not None or facked is not None
        a["escalated"] += esc is not None
    rows = []
    for name in sorted(set(tables) | set(alerts)):
        t = tables[name]
        win = t["turnover"] - t["paid"]
        checked, ok = a53[name]
        rows.append({"table": name, "serials": sorted(t["serials"]), "croupiers": sorted(t["croupiers"]),
                     "games": t["games"], "voids": t["voids"], "voids_by_reason": dict(t["voids_by_reason"]),
                     "turnover": t["turnover"], "paid": t["paid"], "win": win,
                     "hold": win / t["turnover"] if t["turnover"] else None,
                     "article53_checked": checked, "article53_compliant": ok,
                     "article53_rate": ok / checked if checked else None, "alerts": dict(alerts[name])})
    tot = {k: sum(r[k] for r in rows) for k in ("games", "voids", "turnover", "paid", "win")}
    tot["hold"] = tot["win"] / tot["turnover"] if tot["turnover"] else None
    return {"day": day.isoformat(), "from": start, "to": end, "tz": gday.tz_name,
            "day_starts": gday.start.strftime("%H:%M"), "tables": rows, "total": tot}


def permanence(store, gday, day: dt.date, table: str) -> list[dict]:
    start, end = gday.bounds(day)
    out = []
    for e in store.events(kinds=("result",), since=start, until=end, table=table):
        n = e["body"].get("number")
        if isinstance(n, int) and 0 <= n <= 36:
            out.append({"spin": e["body"].get("spin"), "at": e["at"], "number": n, "colour": colour(n),
                        "serial": e["serial"], "croupier": e["body"].get("croupier")})
    return out


def write_day(store, gday, day: dt.date, out_dir, key) -> list[Path]:
    """The day's report and every table's permanence under out_dir/DAY/, each signed."""
    out = Path(out_dir) / day.isoformat()
    out.mkdir(parents=True, exist_ok=True)
    rep = day_report(store, gday, day)
    files = [out / "rapport.json", out / "rapport.csv"]
    files[0].write_text(json.dumps(rep, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    files[1].write_text(_report_csv(rep))
    for row in rep["tables"]:
        nums = permanence(store, gday, day, row["table"])
        base = out / f"permanence-{row['table']}"
        csv_path, pdf_path = base.with_suffix(".csv"), base.with_suffix(".pdf")
        csv_path.write_text(_perm_csv(nums, gday))
        _perm_pdf(pdf_path, row["table"], day, nums, gday)
        files += [csv_path, pdf_path]
    for f in files:
        signing.sign_file(f, key)
    return files


def _report_csv(rep) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["journee", "table", "coups", "annulations", "annulations_par_motif", "mises_eur", "paye_eur",
                "resultat_eur", "hold", "article53_conformes", "article53_verifies", "alertes", "alertes_acquittees",
                "alertes_escaladees"])
    for r in rep["tables"]:
        w.writerow([rep["day"], r["table"], r["games"], r["voids"],
                    " ".join(f"{k}:{v}" for k, v in sorted(r["voids_by_reason"].items())),
                    _euros(r["turnover"]), _euros(r["paid"]), _euros(r["win"]),
                    "" if r["hold"] is None else f"{r['hold']:.4f}", r["article53_compliant"], r["article53_checked"],
                    r["alerts"].get("raised", 0), r["alerts"].get("acknowledged", 0), r["alerts"].get("escalated", 0)])
    t = rep["total"]
    w.writerow([rep["day"], "TOTAL", t["games"], t["voids"], "", _euros(t["turnover"]), _euros(t["paid"]),
                _euros(t["win"]), "" if t["hold"] is None else f"{t['hold']:.4f}", "", "", "", "", ""])
    return buf.getvalue()


def _local(gday, at):
    return dt.datetime.fromtimestamp(at, gday.tz).strftime("%Y-%m-%d %H:%M:%S")


def _perm_csv(nums, gday) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["rang", "coup", "heure", "numero", "couleur", "cylindre", "croupier"])
    for i, r in enumerate(nums, 1):
        w.writerow([i, r["spin"], _local(gday, r["at"]), r["number"], r["colour"], r["serial"] or "", r["croupier"] or ""])
    return buf.getvalue()


def _perm_pdf(path, table, day, nums, gday, per_col=50, cols=3):
    """The permanence as printed at the table: numbers in order, noirs left, zéro centre, rouges right."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_pdf import PdfPages
    import matplotlib.pyplot as plt
    ink = {"rouge": "#c8102e", "noir": "#111111", "zero": "#0a8f3c"}
    x_of = {"noir": 0.18, "zero": 0.5, "rouge": 0.82}
    per_page = per_col * cols
    pages = max(1, -(-len(nums) // per_page))
    with PdfPages(path, metadata={"Title": f"Permanence {table} {day.isoformat()}", "Creator": "cylindre floor",
                                  "CreationDate": None}) as pdf:
        for p in range(pages):
            fig = plt.figure(figsize=(8.27, 11.69))
            fig.text(0.5, 0.965, f"Permanence — table {table} — journée du {day.strftime('%d/%m/%Y')}",
                     ha="center", fontsize=14, weight="bold")
            fig.text(0.5, 0.945, f"{len(nums)} coups · début de journée {gday.start.strftime('%H:%M')} ({gday.tz_name})"
                     f" · page {p + 1}/{pages}", ha="center", fontsize=9, color="#555")
            chunk = nums[p * per_page:(p + 1) * per_page]
            for c in range(cols):
                col = chunk[c * per_col:(c + 1) * per_col]
                left = 0.06 + c * 0.31
                for i, r in enumerate(col):
                    y = 0.915 - i * 0.0175
                    fig.text(left, y, _local(gday, r["at"])[11:16], fontsize=7, color="#777")
                    fig.text(left + 0.055 + x_of[r["colour"]] * 0.2, y, str(r["number"]), fontsize=9,
                             color=ink[r["colour"]], weight="bold", ha="center")
            pdf.savefig(fig)
            plt.close(fig)


def _cents(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else 0
