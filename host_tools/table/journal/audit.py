"""The audit trail (journal d'audit): who did what to the table or the wheel, and what it changed.

One row per privileged action, written durably before the answer goes back (a change of the
table's in the change's own transaction): when, the token's name and role, the action, its target
(a bet, a setting), the state before and after, the spin it touched, whether it was done, and for
wheel commands the wheel's own answer. A refused attempt (wrong role) is recorded too, `done` false.

Built with the table's event log (`publish`), each row is also journaled as an `audit` event in
the same transaction, and a change of the table's (open, close, limits, croupier on duty) as a
`table` event: the casino floor receives them from the journal (docs/floor/messages.md).
"""

from __future__ import annotations

import json
import threading
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, who TEXT NOT NULL, role TEXT NOT NULL,
    action TEXT NOT NULL, target TEXT, spin INTEGER, before TEXT, after TEXT, answer TEXT,
    done INTEGER NOT NULL)
"""
INDEX = "CREATE INDEX IF NOT EXISTS audit_spin ON audit (spin)"


# audit actions that change the table, as the floor's `table` events name them
TABLE_CHANGES = {"table_open": "open", "table_close": "close", "table_limits": "limits", "croupier_duty": "croupier",
                 "wheel_accept": "wheel"}


class Audit:
    def __init__(self, db, lock=None, clock=time.time, journal=None, publish=None):
        self.db = db
        self.lock = lock or threading.RLock()
        self.clock = clock
        self.journal = journal                  # with `publish`: a row and its events commit together
        self.publish = publish
        with self.lock:
            self.db.execute(SCHEMA)
            self.db.execute(INDEX)

    def record(self, who, role, action, target=None, before=None, after=None, answer=None, spin=None,
               done=True) -> int:
        """Journal one action (in the open transaction, or its own); returns its id."""
        row = (self.clock(), who, role, action, None if target is None else str(target),
               spin if isinstance(spin, int) and not isinstance(spin, bool) else None,
               _json(before), _json(after), _json(answer), 1 if done else 0)
        if self.publish is None or self.journal is None:
            with self.lock:
                cur = self.db.execute("INSERT INTO audit (at, who, role, action, target, spin, before, after, answer, done) "
                                      "VALUES (?,?,?,?,?,?,?,?,?,?)", row)
            return cur.lastrowid
        with self.journal.tx() as db:
            rid = db.execute("INSERT INTO audit (at, who, role, action, target, spin, before, after, answer, done) "
                             "VALUES (?,?,?,?,?,?,?,?,?,?)", row).lastrowid
            at = row[0]
            self.publish("audit", {"id": rid, "at": at, "who": who, "role": role, "action": action,
                                   "target": row[4], "spin": row[5], "before": before, "after": after,
                                   "answer": answer, "done": bool(done)})
            if done and action in TABLE_CHANGES:
                self.publish("table", {"what": TABLE_CHANGES[action], "before": before, "after": after,
                                       "who": who, "role": role, "at": at})
        return rid

    def answer(self, row_id, answer):
        """Add the wheel's answer to an action recorded before it was asked."""
        with self.lock:
            self.db.execute("UPDATE audit SET answer=? WHERE id=?", (_json(answer), row_id))

    def rows(self, limit=100, before_id=None, spin=None, who=None, action=None) -> list[dict]:
        """Newest first."""
        sql, args = "SELECT * FROM audit WHERE 1=1", []
        for col, val in (("spin", spin), ("who", who), ("action", action)):
            if val is not None:
                sql += f" AND {col}=?"
                args.append(val)
        if before_id is not None:
            sql += " AND id<?"
            args.append(before_id)
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(limit)
        with self.lock:
            rows = self.db.execute(sql, args).fetchall()
        return [_row(r) for r in rows]


def _json(v):
    return None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def _row(r):
    keys = ("id", "at", "who", "role", "action", "target", "spin", "before", "after", "answer", "done")
    d = dict(zip(keys, tuple(r)))
    for k in ("before", "after", "answer"):
        d[k] = None if d[k] is None else json.loads(d[k])
    d["done"] = bool(d["done"])
    return d
