"""The alerts in the journal (table `alerts`): raised, cleared, acknowledged — and the signals
`alerts.evaluate` needs, read from the journal's own tables.

One row per alert raised: `raised_at`, `code`, `key`, `level`, `message`, `body` (JSON: value,
threshold), `cleared_at` (its condition ended; NULL while it holds), `acked_at`, `acked_by`,
`comment` (the chef's acknowledgement). A row is never deleted. `sync` runs in one transaction.
"""

from __future__ import annotations

import json
import time

from host_tools.table.alerts import rules as A

SCHEMA = """CREATE TABLE IF NOT EXISTS alerts (
    id INTEGER PRIMARY KEY, wheel TEXT NOT NULL, raised_at REAL NOT NULL, code TEXT NOT NULL, key TEXT NOT NULL,
    level TEXT NOT NULL, message TEXT NOT NULL, body TEXT NOT NULL, cleared_at REAL,
    acked_at REAL, acked_by TEXT, comment TEXT)"""
INDEX = "CREATE INDEX IF NOT EXISTS alerts_open ON alerts (wheel, acked_at, cleared_at)"

CLOSED_TEXT = "la table est fermée"
RECENT = 200                 # results and launches the signals look back over


class AlertStore:
    def __init__(self, journal, wheel: str):
        self.j = journal
        self.wheel = wheel
        with self.j.tx() as db:
            db.execute(SCHEMA)
            db.execute(INDEX)

    def sync(self, current: list, now: float | None = None, publish=None) -> list:
        """Record the alerts of `current` not raised yet and mark ended ones cleared; the new rows.
        `publish(kind, body)` (the table app's event log) is told of each new row inside the same
        transaction, so the stream says an alert exactly when the journal holds it."""
        now = time.time() if now is None else now
        with self.j.tx() as db:
            live = {r["key"]: r["id"] for r in db.execute(
                "SELECT id, key FROM alerts WHERE wheel=? AND cleared_at IS NULL", (self.wheel,)).fetchall()}
            raise_, ended = A.changes(set(live), current)
            for k in ended:
                db.execute("UPDATE alerts SET cleared_at=? WHERE id=?", (now, live[k]))
            ids = []
            for a in raise_:
                ids.append(db.execute(
                    "INSERT INTO alerts (wheel, raised_at, code, key, level, message, body) VALUES (?,?,?,?,?,?,?)",
                    (self.wheel, now, a["code"], a["key"], a["level"], a["message"],
                     json.dumps({"value": a["value"], "threshold": a["threshold"]}))).lastrowid)
            rows = [self.get(i) for i in ids]
            for r in rows if publish else ():
                publish("alert", r)
        return rows

    def get(self, aid: int) -> dict | None:
        r = self.j.one("SELECT * FROM alerts WHERE id=? AND wheel=?", (aid, self.wheel))
        return _row(r) if r else None

    def list(self, pending_only=False, limit=200) -> list:
        """Newest first; `pending_only`: not yet acknowledged (what the pit page shows in red)."""
        sql = "SELECT * FROM alerts WHERE wheel=?" + (" AND acked_at IS NULL" if pending_only else "") + " ORDER BY id DESC LIMIT ?"
        return [_row(r) for r in self.j.query(sql, (self.wheel, limit))]

    def acknowledge(self, aid: int, by: str, comment: str, now: float | None = None, publish=None) -> dict:
        """The chef acknowledges alert `aid`; KeyError if there is none, ValueError if refused.
        Called inside the caller's transaction when it audits the acknowledgement with it."""
        now = time.time() if now is None else now
        with self.j.tx() as db:
            row = self.get(aid)
            if row is None:
                raise KeyError(f"no alert {aid}")
            ack = A.acknowledgement(row, by, comment, now)
            db.execute("UPDATE alerts SET acked_at=?, acked_by=?, comment=? WHERE id=?",
                       (ack["acked_at"], ack["acked_by"], ack["comment"], aid))
            row = self.get(aid)
            if publish:
                publish("alert", row)
        return row

    def metrics(self) -> dict:
        """Counts for /metrics: {(code, state): n}, state `pending` (not acknowledged) or `acknowledged`."""
        out = {}
        for r in self.j.query("SELECT code, acked_at IS NULL AS pending, COUNT(*) AS n FROM alerts WHERE wheel=? "
                              "GROUP BY code, pending", (self.wheel,)):
            out[(r["code"], "pending" if r["pending"] else "acknowledged")] = r["n"]
        return out

    def signals(self, now: float, table_open: bool, link_up: bool = True, last_heard: float | None = None,
                stats: dict | None = None) -> dict:
        """What `alerts.evaluate` needs, from the journal (the link and the statistics come from the
        daemon, which knows them)."""
        results = [(r["spin"], r["number"]) for r in reversed(self.j.query(
            "SELECT spin, number FROM settlements WHERE wheel=? ORDER BY at DESC, spin DESC LIMIT ?", (self.wheel, RECENT)))]
        launches, voids = [], []
        for r in reversed(self.j.query("SELECT ev, spin, at, body FROM events WHERE wheel=? AND ev IN ('launch','void') "
                                       "ORDER BY at DESC, seq DESC LIMIT ?", (self.wheel, 2 * RECENT))):
            try:
                body = json.loads(r["body"])
            except (TypeError, ValueError):
                continue
            if not isinstance(body, dict):
                continue
            if r["ev"] == "launch":
                v = body.get("violations")
                launches.append({"spin": r["spin"], "at": r["at"],
                                 "violations": [x for x in v if isinstance(x, str)] if isinstance(v, list) else []})
            else:
                voids.append({"spin": r["spin"], "at": r["at"], "reason": body.get("reason")})
        hour = self.j.one("SELECT COUNT(*) AS n FROM settlements WHERE wheel=? AND at > ?", (self.wheel, now - 3600))
        return {"results": results, "launches": launches, "voids": voids, "table_open": table_open,
                "open_since": self.opened_at(), "results_last_hour": hour["n"], "link_up": link_up,
                "link_down_since": last_heard, "stats": stats}

    def opened_at(self) -> float | None:
        """When the table last opened (its session's start): the first thing the croupier said
        after the last "la table est fermée"; None when the journal has never said anything."""
        closed = self.j.one("SELECT MAX(at) AS at FROM announcements WHERE wheel=? AND text=?", (self.wheel, CLOSED_TEXT))
        first = self.j.one("SELECT MIN(at) AS at FROM announcements WHERE wheel=? AND at > ?",
                           (self.wheel, (closed or {}).get("at") or 0))
        return (first or {}).get("at")


def _row(r) -> dict:
    out = dict(r)
    body = json.loads(out.pop("body") or "{}")
    out.update(value=body.get("value"), threshold=body.get("threshold"))
    return out
