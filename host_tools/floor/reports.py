"""The gaming day's reports (rapports de la journée): per table, and the day's permanences.

`day_report` gives per table: games, voids by reason, turnover (mises), paid, the house's win
(résultat) and hold, counted as host_tools/table/game/money.py defines them (an en-prison stake once,
when placed), Article 53 compliance, the alerts raised that day (acknowledged or not), the journal
identities its figures come from, and whether the day reconciles with the table's own totals
(reconcile.py). `write_day` refuses a day that does not reconcile (`NotReconciled`, with an alert
per table saying by how much); otherwise it writes the report as JSON and CSV and each table's
permanence (every coup of the day in the order it came out, numbered 1, 2, ... within the table's
day whatever its journals, with the table's own coup number and journal beside it) as CSV and PDF,
each file signed with the floor's Ed25519 key saying what it is (signing.py, a detached FILE.sig),
checked with `cylindre floor verify FILE --pub floor-report.pub`.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections import defaultdict
from pathlib import Path

from host_tools.table.game import money as M

from . import reconcile, signing, wheelstats
from .tiles import colour


class NotReconciled(Exception):
    """A day whose figures do not reconcile with the tables' own: no signed report."""

    def __init__(self, result: dict, tables: list[str]):
        self.result, self.tables = result, tables
        bad = {t: r["why"] for t, r in result["tables"].items() if not r["ok"]}
        super().__init__(f"day {result['day']} does not reconcile: "
                         + "; ".join(f"{t}: {' / '.join(w)}" for t, w in sorted(bad.items())))


def _euros(c):
    return f"{c / 100:.2f}"


def day_report(store, gday, day: dt.date, now: float | None = None) -> dict:
    import time
    start, end = gday.bounds(day)
    events = store.events(kinds=("result", "void"), since=start, until=end)
    tables = defaultdict(lambda: {"games": 0, "voids": 0, "voids_by_reason": defaultdict(int), "money": M.Totals(),
                                  "serials": set(), "croupiers": set(), "journals": set()})
    for e in events:
        t, b = tables[e["table"]], e["body"]
        t["journals"].add(e["journal"])
        if e["serial"]:
            t["serials"].add(e["serial"])
        if e["kind"] == "result":
            t["games"] += 1
            if isinstance(b.get("croupier"), str):
                t["croupiers"].add(b["croupier"])
        else:
            t["voids"] += 1
            t["voids_by_reason"][b.get("reason") if isinstance(b.get("reason"), str) else "?"] += 1
    for r in reconcile.settlements(store, start, end):
        tables[r["table"]]["money"].add(r["turnover"], r["paid"])
        tables[r["table"]]["journals"].add(r["journal"])
    rec = reconcile.reconcile(store, gday, day, time.time() if now is None else now)
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
    total = M.Totals()
    for name in sorted(set(tables) | set(alerts)):
        t = tables[name]
        money = t["money"]
        total += money
        checked, ok = a53[name]
        r = rec["tables"].get(name)
        rows.append({"table": name, "serials": sorted(t["serials"]), "croupiers": sorted(t["croupiers"]),
                     "journals": sorted(t["journals"]), "games": t["games"], "voids": t["voids"],
                     "voids_by_reason": dict(t["voids_by_reason"]), "settlements": money.settlements,
                     "turnover": money.turnover, "paid": money.paid, "win": money.win, "hold": money.hold,
                     "article53_checked": checked, "article53_compliant": ok,
                     "article53_rate": ok / checked if checked else None, "alerts": dict(alerts[name]),
                     "reconciled": r["ok"] if r else True, "table_totals": r["table"] if r else None,
                     "not_reconciled_why": r["why"] if r else []})
    tot = {"games": sum(r["games"] for r in rows), "voids": sum(r["voids"] for r in rows),
           "settlements": total.settlements, "turnover": total.turnover, "paid": total.paid, "win": total.win,
           "hold": total.hold}
    return {"day": day.isoformat(), "from": start, "to": end, "tz": gday.tz_name,
            "day_starts": gday.start.strftime("%H:%M"), "tables": rows, "total": tot, "reconciled": rec["ok"],
            "sites": sorted({r[0] for r in store.query("SELECT DISTINCT site FROM tables")} |
                            {e["site"] for e in events})}


def permanence(store, gday, day: dt.date, table: str) -> list[dict]:
    """Every coup of the table's day in the order it came out (the table's clock, then its journal's
    order): `coup` 1, 2, ... unique within the table's day even across a new journal (which numbers
    its own coups from 1 again: `spin` and `journal` say which)."""
    start, end = gday.bounds(day)
    out = []
    for e in store.events(kinds=("result",), since=start, until=end, table=table):
        n = e["body"].get("number")
        if type(n) is int and 0 <= n <= 36:
            spin = e["body"].get("spin")
            out.append({"coup": len(out) + 1, "table": table, "journal": e["journal"],
                        "spin": spin if type(spin) is int else None, "at": e["at"], "number": n, "colour": colour(n),
                        "serial": e["serial"], "croupier": _text(e["body"].get("croupier"))})
    return out


def write_day(store, gday, day: dt.date, out_dir, key, now: float | None = None) -> list[Path]:
    """The day's report and every table's permanence under out_dir/DAY/, each signed, once the day
    reconciles with every table's own totals; NotReconciled (and an alert per table) otherwise."""
    import time
    now = time.time() if now is None else now
    rep = day_report(store, gday, day, now)
    if not rep["reconciled"]:
        result = reconcile.reconcile(store, gday, day, now)
        raise NotReconciled(result, reconcile.alert(store, result, now))
    out = Path(out_dir) / day.isoformat()
    out.mkdir(parents=True, exist_ok=True)
    site = ",".join(rep["sites"])
    journals = {r["table"]: r["journals"] for r in rep["tables"]}
    files = [(out / "rapport.json", {"kind": "rapport", "tables": sorted(journals), "journals": journals}),
             (out / "rapport.csv", {"kind": "rapport", "tables": sorted(journals), "journals": journals})]
    files[0][0].write_text(json.dumps(rep, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    files[1][0].write_text(_report_csv(rep))
    for row in rep["tables"]:
        nums = permanence(store, gday, day, row["table"])
        base = out / f"permanence-{row['table']}"
        csv_path, pdf_path = base.with_suffix(".csv"), base.with_suffix(".pdf")
        csv_path.write_text(_perm_csv(nums, gday))
        _perm_pdf(pdf_path, row["table"], day, nums, gday, site)
        subject = {"kind": "permanence", "tables": [row["table"]],
                   "journals": {row["table"]: sorted({r["journal"] for r in nums})}}
        files += [(csv_path, subject), (pdf_path, subject)]
    for f, subject in files:
        signing.sign_file(f, key, dict(subject, site=site, day=day.isoformat()))
    return [f for f, _ in files]


def _text(v):
    return v if isinstance(v, str) else None


def _report_csv(rep) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["journee", "table", "journaux", "coups", "annulations", "annulations_par_motif", "reglements",
                "mises_eur", "paye_eur", "resultat_eur", "hold", "reconcilie", "article53_conformes",
                "article53_verifies", "alertes", "alertes_acquittees", "alertes_escaladees"])
    for r in rep["tables"]:
        w.writerow([rep["day"], r["table"], " ".join(j or "-" for j in r["journals"]), r["games"], r["voids"],
                    " ".join(f"{k}:{v}" for k, v in sorted(r["voids_by_reason"].items())), r["settlements"],
                    _euros(r["turnover"]), _euros(r["paid"]), _euros(r["win"]),
                    "" if r["hold"] is None else f"{r['hold']:.4f}", "oui" if r["reconciled"] else "non",
                    r["article53_compliant"], r["article53_checked"],
                    r["alerts"].get("raised", 0), r["alerts"].get("acknowledged", 0), r["alerts"].get("escalated", 0)])
    t = rep["total"]
    w.writerow([rep["day"], "TOTAL", "", t["games"], t["voids"], "", t["settlements"], _euros(t["turnover"]),
                _euros(t["paid"]), _euros(t["win"]), "" if t["hold"] is None else f"{t['hold']:.4f}",
                "oui" if rep["reconciled"] else "non", "", "", "", "", ""])
    return buf.getvalue()


def _local(gday, at):
    return dt.datetime.fromtimestamp(at, gday.tz).strftime("%Y-%m-%d %H:%M:%S")


def _perm_csv(nums, gday) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["coup", "table", "journal", "coup_table", "heure", "numero", "couleur", "cylindre", "croupier"])
    for r in nums:
        w.writerow([r["coup"], r["table"], r["journal"] or "-", "" if r["spin"] is None else r["spin"],
                    _local(gday, r["at"]), r["number"], r["colour"], r["serial"] or "", r["croupier"] or ""])
    return buf.getvalue()


def _perm_pdf(path, table, day, nums, gday, site="", per_col=50, cols=3):
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
            fig.text(0.5, 0.965, f"Permanence — {site + ' — ' if site else ''}table {table} — journée du "
                     f"{day.strftime('%d/%m/%Y')}", ha="center", fontsize=14, weight="bold")
            journals = ", ".join(sorted({r["journal"] or "—" for r in nums})) or "—"
            fig.text(0.5, 0.945, f"{len(nums)} coups · début de journée {gday.start.strftime('%H:%M')} ({gday.tz_name})"
                     f" · journal {journals} · page {p + 1}/{pages}", ha="center", fontsize=9, color="#555")
            chunk = nums[p * per_page:(p + 1) * per_page]
            for c in range(cols):
                col = chunk[c * per_col:(c + 1) * per_col]
                left = 0.06 + c * 0.31
                for i, r in enumerate(col):
                    y = 0.915 - i * 0.0175
                    fig.text(left - 0.035, y, str(r["coup"]), fontsize=6, color="#999")
                    fig.text(left, y, _local(gday, r["at"])[11:16], fontsize=7, color="#777")
                    fig.text(left + 0.055 + x_of[r["colour"]] * 0.2, y, str(r["number"]), fontsize=9,
                             color=ink[r["colour"]], weight="bold", ha="center")
            pdf.savefig(fig)
            plt.close(fig)

