"""The wheel's regulatory settings take two people, wherever they are changed (quatre yeux).

Which settings are regulatory is said once, in the floor's contract (host_tools/floor/link/command.py,
`SETTINGS`: the minimum laps, Article 53's voids, the rien ne va plus lead, how a number is
confirmed). A change of one is a request first (`request`: journaled pending, audited
`setting_request`), applied to the wheel only when another person approves it (`approve`: audited
by the change itself, `wheel_setting`, with who requested it; a refusal is audited by the caller,
the API's route or the floor's command). The same table holds the requests
made over the table's HTTP API and those the floor sends as commands, so both paths obey one rule;
a request not approved within an hour is void. People are compared by name without case and
without the `floor:` a floor user carries at the table: `BOB` does not approve `bob`'s request, nor
`floor:bob` a request `bob` made at the table.
"""

from __future__ import annotations

import json
import time
import uuid

from host_tools.floor.link.command import SETTINGS as REGULATORY

PENDING_S = 3600.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS setting_requests (
    id TEXT PRIMARY KEY, at REAL NOT NULL, name TEXT NOT NULL, value INTEGER NOT NULL,
    requested_by TEXT NOT NULL, requested_role TEXT NOT NULL, via TEXT NOT NULL, state TEXT NOT NULL,
    decided_by TEXT, decided_at REAL, answer TEXT)
"""
FIELDS = ("id", "at", "name", "value", "requested_by", "requested_role", "via", "state", "decided_by", "decided_at",
          "answer")


class TwoPersonError(Exception):
    """A request or an approval refused: `code` (bad_request, not_found, not_pending, expired,
    same_user) and why."""

    def __init__(self, code, message, status=409):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def person(name: str) -> str:
    """Who a name is, for the two-person rule: no case, no `floor:` prefix."""
    name = str(name or "")
    if name.startswith("floor:"):
        name = name[len("floor:"):]
    return name.casefold()


def is_regulatory(name) -> bool:
    return name in REGULATORY


def check(name, value) -> int:
    """The request's value as the wheel takes it, within the setting's bounds; TwoPersonError otherwise."""
    if name not in REGULATORY:
        raise TwoPersonError("bad_request", f"setting {name!r}: the regulatory settings are {', '.join(REGULATORY)}", 400)
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int):
        raise TwoPersonError("bad_request", f"{name} must be an integer", 400)
    from cylindre.spin import settings as S
    _, lo, hi = S.bounds(name)
    if not lo <= value <= hi:
        raise TwoPersonError("bad_request", f"{name} must be {lo} to {hi}, got {value}", 400)
    return value


class TwoPerson:
    def __init__(self, journal, audit, clock=time.time):
        self.j, self.audit, self.clock = journal, audit, clock
        with journal.tx() as db:
            db.execute(SCHEMA)

    def request(self, name, value, who, via: str = "api") -> dict:
        """A pending change of `name` to `value` requested by `who` (audited)."""
        value = check(name, value)
        rid = uuid.uuid4().hex[:16]
        with self.j.tx() as db:
            db.execute("INSERT INTO setting_requests (id, at, name, value, requested_by, requested_role, via, state) "
                       "VALUES (?,?,?,?,?,?,?,?)", (rid, self.clock(), name, value, who.name, who.role, via, "pending"))
            self.audit.record(who.name, who.role, "setting_request", name, None, value,
                              answer={"request": rid, "via": via, "state": "pending"})
        return {"request": rid, "name": name, "value": value, "state": "pending", "requested_by": who.name,
                "via": via}

    def get(self, rid) -> dict | None:
        with self.j.lock:
            r = self.j.db.execute("SELECT " + ", ".join(FIELDS) + " FROM setting_requests WHERE id=?", (rid,)).fetchone()
        return _row(r) if r else None

    def list(self, limit=100) -> list[dict]:
        with self.j.lock:
            rows = self.j.db.execute("SELECT " + ", ".join(FIELDS) + " FROM setting_requests ORDER BY at DESC LIMIT ?",
                                     (int(limit),)).fetchall()
        return [_row(r) for r in rows]

    def approve(self, rid, who, apply) -> dict:
        """Approve request `rid` as `who` (another person than its requester) and `apply(name, value,
        who, requested_by=..., request=...)` it to the wheel, once; the request and the wheel's answer."""
        if not isinstance(rid, str) or not 1 <= len(rid) <= 64:
            raise TwoPersonError("bad_request", "the request's id is needed", 400)
        row = self.get(rid)
        if row is None:
            raise TwoPersonError("not_found", f"no setting request {rid}", 404)
        if row["state"] != "pending":
            raise TwoPersonError("not_pending", f"setting request {rid} is {row['state']}")
        if person(row["requested_by"]) == person(who.name):
            raise TwoPersonError("same_user", f"{who.name} requested this change ({row['requested_by']}): another "
                                              f"person must approve it")
        if self.clock() - row["at"] > PENDING_S:
            with self.j.tx() as db:
                db.execute("UPDATE setting_requests SET state='expired' WHERE id=? AND state='pending'", (rid,))
            raise TwoPersonError("expired", f"setting request {rid} is over {PENDING_S / 3600:.0f} h old")
        with self.j.tx() as db:          # claimed before the wheel is asked: approved once only
            claimed = db.execute("UPDATE setting_requests SET state='approving', decided_by=?, decided_at=? "
                                 "WHERE id=? AND state='pending'", (who.name, self.clock(), rid)).rowcount
        if not claimed:
            raise TwoPersonError("not_pending", f"setting request {rid} is being approved by someone else")
        ok, answer = False, None
        try:
            answer = apply(row["name"], row["value"], who, requested_by=row["requested_by"], request=rid)
            ok = True
            return {"request": rid, "name": row["name"], "value": row["value"], "state": "applied",
                    "requested_by": row["requested_by"], "approved_by": who.name, "wheel": answer}
        finally:
            with self.j.tx() as db:
                db.execute("UPDATE setting_requests SET state=?, answer=? WHERE id=?",
                           ("applied" if ok else "failed", json.dumps(answer, default=str), rid))


def _row(r) -> dict:
    d = dict(zip(FIELDS, tuple(r)))
    d["answer"] = json.loads(d["answer"]) if d["answer"] else None
    return d
