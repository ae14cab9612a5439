"""An event a table published that never reached the floor is told, not silent.

Each journaled message names the one its table published before it under the same journal
(`prev`), and each heartbeat the last one the broker acknowledged (`last_event_id`,
`last_journal`). The store notes every such event it does not hold (`gaps`, store.py) and crosses
it off when it comes: a message still on its way, a batch redelivered, the two messages of one
batch stored in the other order. One still missing `GRACE_S` after it was noted, while the floor
is consuming, will not come by itself (dropped as a "duplicate", lost by a broker, never sent): an
alert on its table names it, once.
"""

from __future__ import annotations

GRACE_S = 60.0


def alert(store, now: float, grace_s: float = GRACE_S, delivered_at: float | None = None) -> int:
    """Raise the alerts of the gaps the stream has delivered past for `grace_s` (`delivered_at`:
    when it last delivered; None: now), one per table naming its missing events; the number told."""
    upto = min(now, now if delivered_at is None else delivered_at) - grace_s
    rows = store.query("SELECT table_id, journal, event_id, site FROM gaps WHERE filled_at IS NULL AND alerted_at IS NULL "
                       "AND seen_at <= ? ORDER BY table_id, journal, event_id", (upto,))
    if not rows:
        return 0
    by_table: dict[str, list] = {}
    for table, journal, eid, site in rows:
        by_table.setdefault(table, []).append((journal, eid, site))
    with store.tx() as c:
        for table, missing in by_table.items():
            site = missing[0][2]
            first = missing[0]
            names = ", ".join(f"{eid}" + (f" (journal {j})" if j else "") for j, eid, _ in missing[:10])
            more = f" et {len(missing) - 10} autres" if len(missing) > 10 else ""
            store.floor_alert(c, table, site, "floor_gap", f"floor:gap:{first[0] or '-'}:{first[1]}",
                              f"{len(missing)} événement(s) publié(s) par la table jamais arrivé(s) à la salle : "
                              f"{names}{more}", "critical", now)
            for journal, eid, _ in missing:
                c.execute("UPDATE gaps SET alerted_at=? WHERE table_id=? AND journal=? AND event_id=?",
                          (now, table, journal, eid))
    return len(rows)


def missing(store, table=None) -> list[dict]:
    """The events the floor still lacks (the page and the tests)."""
    sql = "SELECT table_id, journal, event_id, seen_at, alerted_at FROM gaps WHERE filled_at IS NULL"
    args = []
    if table is not None:
        sql += " AND table_id=?"
        args.append(table)
    return [{"table": r[0], "journal": r[1], "event_id": r[2], "seen_at": r[3], "alerted_at": r[4]}
            for r in store.query(sql + " ORDER BY table_id, journal, event_id", args)]
