"""Alerts from every table in one list (alertes): each stays until an authorised user acknowledges
it with a comment, and is escalated (escaladée) when left unacknowledged longer than the floor's
`escalate_after_s`. An acknowledgement is audited at the floor and sent to the table as a command
(`ack_alert`), so the table's own audit has it too; the table's answer is kept beside the alert.
An alert acknowledged at the table (its `alert` event with `acked_at`) is closed at the floor too.
"""

from __future__ import annotations

from .access import SYSTEM

COLUMNS = ("table_id", "alert_id", "site", "code", "message", "level", "raised_at", "acked_at", "acked_by", "comment",
           "floor_acked_at", "floor_acked_by", "floor_comment", "table_told", "escalated_at")


class AlertError(ValueError):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _row(r):
    d = dict(zip(COLUMNS, r))
    d["table"] = d.pop("table_id")
    d["id"] = d.pop("alert_id")
    d["open"] = d["acked_at"] is None and d["floor_acked_at"] is None
    return d


class Alerts:
    def __init__(self, store, access, escalate_after_s=300.0):
        self.store, self.access, self.after = store, access, float(escalate_after_s)

    def list(self, open_only=False, limit=500) -> list[dict]:
        sql = "SELECT " + ", ".join(COLUMNS) + " FROM alerts"
        if open_only:
            sql += " WHERE acked_at IS NULL AND floor_acked_at IS NULL"
        sql += " ORDER BY raised_at DESC LIMIT ?"
        return [_row(r) for r in self.store.query(sql, (int(limit),))]

    def open_counts(self) -> dict:
        return {r[0]: r[1] for r in self.store.query(
            "SELECT table_id, COUNT(*) FROM alerts WHERE acked_at IS NULL AND floor_acked_at IS NULL GROUP BY table_id")}

    def get(self, table, alert_id):
        rows = self.store.query("SELECT " + ", ".join(COLUMNS) + " FROM alerts WHERE table_id=? AND alert_id=?",
                                (table, str(alert_id)))
        return _row(rows[0]) if rows else None

    def acknowledge(self, who, table, alert_id, comment) -> dict:
        """Close an alert at the floor (audited); the caller tells the table (`told`)."""
        comment = (comment or "").strip()
        if not comment:
            raise AlertError("comment_required", "un commentaire est obligatoire pour acquitter une alerte")
        if len(comment) > 500:
            raise AlertError("bad_request", "commentaire trop long (500 caractères au plus)")
        with self.store.tx() as c:
            row = c.execute("SELECT floor_acked_at, acked_at FROM alerts WHERE table_id=? AND alert_id=?",
                            (table, str(alert_id))).fetchone()
            if row is None:
                raise AlertError("not_found", f"pas d'alerte {alert_id} à la table {table}")
            if row[0] is not None or row[1] is not None:
                raise AlertError("already_acked", "alerte déjà acquittée")
            now = self.store.clock()
            c.execute("UPDATE alerts SET floor_acked_at=?, floor_acked_by=?, floor_comment=? WHERE table_id=? AND alert_id=?",
                      (now, who.name, comment, table, str(alert_id)))
            self.access.record(who, "alert.ack", f"{table}/{alert_id}", before={"open": True},
                               after={"open": False, "comment": comment}, c=c)
        return self.get(table, alert_id)

    def told(self, table, alert_id, outcome: str):
        self.store.execute("UPDATE alerts SET table_told=? WHERE table_id=? AND alert_id=?",
                           (outcome[:200], table, str(alert_id)))

    def escalate(self, now: float) -> list[dict]:
        """Mark the alerts open longer than the limit as escalated (once each, audited)."""
        rows = self.store.query("SELECT table_id, alert_id FROM alerts WHERE acked_at IS NULL AND floor_acked_at IS NULL "
                                "AND escalated_at IS NULL AND raised_at <= ?", (now - self.after,))
        out = []
        for table, aid in rows:
            with self.store.tx() as c:
                n = c.execute("UPDATE alerts SET escalated_at=? WHERE table_id=? AND alert_id=? AND escalated_at IS NULL",
                              (now, table, aid)).rowcount
                if n:
                    self.access.record(SYSTEM, "alert.escalate", f"{table}/{aid}",
                                       after={"unacknowledged_for_s": self.after}, c=c)
            if n:
                out.append(self.get(table, aid))
        return out
