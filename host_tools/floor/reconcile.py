"""Money that reconciles to the cent: the floor's figures of a gaming day, per table, against the
table's own day totals (docs/floor.md, "Money").

A table's heartbeat publishes its totals for the gaming day in progress and the days before it
(`days`: for each, the day, its bounds, `as_of` the instant they were counted at, the journal's
`ledger` (its first identity) and every identity the journal file holds (`journals`), and the
settlements, turnover and paid of its `settlements` table, host_tools/table/game/money.py). The floor
keeps the newest of each (store `table_days`). A table's day reconciles when, for each of its
journal files, the settlements the floor holds under those identities, settled within the day up
to `as_of`, add up to the table's figures exactly (count, turnover, paid), every journal the floor
has a settlement of that day from is covered by a file's totals, every settlement says its
turnover (money.of_settlement), and, for a day that is over, the totals were counted after its
end (final). The floor signs no report of a day that does not reconcile, and raises an alert per
table saying by how much.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict

from host_tools.floor.link import envelope as E
from host_tools.table.game import money as M

MAX_DAYS = 16            # records a heartbeat may carry
MARGIN_S = 300.0         # a settlement's event time and its own may differ by this at most
CLOSE_AFTER_S = 120.0    # a day is reconciled this long after its end: the tables' final totals have come


def records(days) -> list[dict]:
    """The day records of a heartbeat body, checked (a record that is not one is left out)."""
    out = []
    if not isinstance(days, list):
        return out
    for r in days[:MAX_DAYS]:
        if not isinstance(r, dict):
            continue
        try:
            day = dt.date.fromisoformat(r["day"]).isoformat() if isinstance(r.get("day"), str) else None
        except ValueError:
            day = None
        journals = r.get("journals")
        ledger = r.get("ledger")
        nums = [M.cents(r.get(k)) for k in ("settlements", "turnover", "paid")]
        times = [r.get(k) for k in ("from", "to", "as_of")]
        if day is None or not isinstance(ledger, str) or not E.JOURNAL.fullmatch(ledger) \
                or not isinstance(journals, list) or len(journals) > 1000 \
                or not all(isinstance(j, str) and E.JOURNAL.fullmatch(j) for j in journals) \
                or None in nums or not all(type(t) in (int, float) and 0 <= t < 1e11 for t in times):
            continue
        out.append({"day": day, "ledger": ledger, "journals": sorted(set(journals)), "from": float(times[0]),
                    "to": float(times[1]), "as_of": float(times[2]), "settlements": nums[0], "turnover": nums[1],
                    "paid": nums[2]})
    return out


def settlements(store, start, end) -> list[dict]:
    """The floor's settlements of [start, end), each counted at its own instant (money.settled_at)."""
    out = []
    for e in store.events(kinds=("settlement",), since=start - MARGIN_S, until=end + MARGIN_S):
        at = M.settled_at(e["body"], e["at"])
        if start <= at < end:
            turnover, paid, exact = M.of_settlement(e["body"])
            out.append({"table": e["table"], "journal": e["journal"], "at": at, "turnover": turnover, "paid": paid,
                        "exact": exact})
    return out


def floor_totals(rows) -> dict:
    """{table: Totals} of settlement rows (`settlements()`)."""
    out = defaultdict(M.Totals)
    for r in rows:
        out[r["table"]].add(r["turnover"], r["paid"])
    return dict(out)


def table_records(store, day: dt.date) -> dict:
    """{table: [record]} of the totals the tables published for `day`."""
    out = defaultdict(list)
    for t, ledger, journals, f, to, as_of, n, turnover, paid in store.query(
            "SELECT table_id, ledger, journals, day_from, day_to, as_of, settlements, turnover, paid FROM table_days "
            "WHERE day=?", (day.isoformat(),)):
        out[t].append({"ledger": ledger, "journals": json.loads(journals), "from": f, "to": to, "as_of": as_of,
                       "totals": M.Totals(int(n), int(turnover), int(paid))})
    return dict(out)


def _euros(c):
    return f"{c / 100:+,.2f} €".replace(",", " ")


def reconcile(store, gday, day: dt.date, now: float) -> dict:
    """{"day", "ok", "tables": {table: {"ok", "floor", "table", "difference", "why": [...]}}}."""
    start, end = gday.bounds(day)
    rows = settlements(store, start, end)
    recs = table_records(store, day)
    by_table = defaultdict(list)
    for r in rows:
        by_table[r["table"]].append(r)
    out = {}
    for table in sorted(set(by_table) | set(recs)):
        mine, theirs, why = by_table.get(table, []), recs.get(table, []), []
        covered = set()
        told = M.Totals()
        counted = M.Totals()
        for rec in theirs:
            covered |= set(rec["journals"])
            until = min(end, rec["as_of"])
            f = M.Totals()
            for r in mine:
                if r["journal"] in rec["journals"] and r["at"] < until:
                    f.add(r["turnover"], r["paid"])
            told += rec["totals"]
            counted += f
            if abs(rec["from"] - start) > 1 or abs(rec["to"] - end) > 1:
                why.append(f"la journée de la table ({_hm(gday, rec['from'])}) n'est pas celle de la salle "
                           f"({_hm(gday, start)})")
            if now >= end and rec["as_of"] < end:
                why.append(f"totaux définitifs non reçus (journal {rec['ledger'] or '—'} compté à "
                           f"{_hm(gday, rec['as_of'])})")
            if f != rec["totals"]:
                why.append(f"journal {rec['ledger'] or '—'} : la salle a {f.settlements} règlements, "
                           f"{_euros(f.turnover)} de mises, {_euros(f.win)} de résultat ; la table "
                           f"{rec['totals'].settlements}, {_euros(rec['totals'].turnover)}, {_euros(rec['totals'].win)}")
        stray = sorted({r["journal"] for r in mine} - covered)
        if stray:
            why.append("aucun total de la table pour le(s) journal(aux) " + ", ".join(j or "—" for j in stray))
        inexact = sum(1 for r in mine if not r["exact"])
        if inexact:
            why.append(f"{inexact} règlement(s) sans mise comptée une fois (table à mettre à jour)")
        floor = floor_totals(mine).get(table, M.Totals())
        out[table] = {"ok": not why, "why": why, "floor": floor.to_json(), "table": told.to_json() if theirs else None,
                      "difference": {"settlements": counted.settlements - told.settlements,
                                     "turnover": counted.turnover - told.turnover, "paid": counted.paid - told.paid,
                                     "win": counted.win - told.win}}
    return {"day": day.isoformat(), "from": start, "to": end, "ok": all(t["ok"] for t in out.values()), "tables": out}


def _hm(gday, at):
    return dt.datetime.fromtimestamp(at, gday.tz).strftime("%d/%m %H:%M")


def alert(store, result: dict, now: float) -> list[str]:
    """An alert per table whose day does not reconcile (one per table and day, its message
    replaced by the latest finding); the tables named."""
    named = []
    with store.tx() as c:
        for table, r in result["tables"].items():
            if r["ok"]:
                continue
            site = (store.query("SELECT site FROM tables WHERE table_id=?", (table,)) or [("?",)])[0][0]
            d = r["difference"]
            message = (f"journée du {result['day']} non réconciliée : écart de {_euros(d['win'])} de résultat, "
                       f"{_euros(d['turnover'])} de mises, {d['settlements']:+d} règlements (salle - table). "
                       + " ; ".join(r["why"]))
            store.floor_alert(c, table, site, "not_reconciled", f"floor:reconcile:{result['day']}", message,
                              "critical", now)
            named.append(table)
    return named
