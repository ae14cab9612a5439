"""Who may do what at the floor (rôles) and the floor's audit trail (journal d'audit).

Tokens as at the table (host_tools/table/api/auth.py): a random secret `cyl_...` shown once, only its
SHA-256 kept, revocation read at each request. The floor's roles, ordered (a role may do what every
role below it may):

    surveillance < pit_boss < director < admin
    (reads, reports)  (open/close, limits, acknowledge alerts, request a setting)
                      (approve a setting)  (tokens)

Every privileged action is one audit row written before the answer goes back, refused attempts
included (`done` false). Both live in the floor's store (SQLite or PostgreSQL).
"""

from __future__ import annotations

import json

from host_tools.table.api.auth import TokenError, check_case, check_new, digest, lookup_digest, new_secret

ROLES = ("surveillance", "pit_boss", "director", "admin")
RANK = {r: i for i, r in enumerate(ROLES)}
# what the table calls the floor's role (the contract's mapping, docs/floor/commands.md)
TABLE_ROLE = {"surveillance": "display", "pit_boss": "chef", "director": "admin", "admin": "admin"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
    created DOUBLE PRECISION NOT NULL, revoked DOUBLE PRECISION);
CREATE TABLE IF NOT EXISTS floor_audit (
    id {ID}, at DOUBLE PRECISION NOT NULL, who TEXT NOT NULL, role TEXT NOT NULL, action TEXT NOT NULL,
    target TEXT, before TEXT, after TEXT, answer TEXT, done INTEGER NOT NULL);
"""


class Identity:
    __slots__ = ("name", "role")

    def __init__(self, name, role):
        self.name, self.role = name, role

    def may(self, role: str) -> bool:
        return RANK[self.role] >= RANK[role]

    def __repr__(self):
        return f"Identity({self.name!r}, {self.role!r})"


SYSTEM = Identity("floor", "admin")         # the service itself (escalations)


class Access:
    def __init__(self, store):
        self.store = store
        with store.tx() as c:
            for stmt in SCHEMA.format(ID="BIGSERIAL PRIMARY KEY" if store.pg else "INTEGER PRIMARY KEY").split(";"):
                if stmt.strip():
                    c.execute(stmt)

    # -- tokens ---------------------------------------------------------------------------------
    def add(self, name: str, role: str) -> str:
        check_new(name, role, ROLES)
        secret = new_secret()
        with self.store.tx() as c:
            check_case(name, [r[0] for r in c.execute("SELECT name FROM tokens WHERE lower(name)=lower(?)", (name,)).fetchall()])
            row = c.execute("SELECT revoked FROM tokens WHERE name=?", (name,)).fetchone()
            if row is not None and row[0] is None:
                raise TokenError(f"a token named {name} exists (revoke it first)")
            c.execute("DELETE FROM tokens WHERE name=?", (name,))
            c.execute("INSERT INTO tokens (name, role, hash, created, revoked) VALUES (?,?,?,?,NULL)",
                      (name, role, digest(secret), self.store.clock()))
        return secret

    def revoke(self, name: str) -> bool:
        return self.store.execute("UPDATE tokens SET revoked=? WHERE name=? AND revoked IS NULL",
                                  (self.store.clock(), name)) == 1

    def list(self) -> list[dict]:
        return [{"name": r[0], "role": r[1], "created": r[2], "revoked": r[3]}
                for r in self.store.query("SELECT name, role, created, revoked FROM tokens ORDER BY name")]

    def identify(self, secret: str | None) -> Identity | None:
        h = lookup_digest(secret)
        if h is None:
            return None
        rows = self.store.query("SELECT name, role FROM tokens WHERE hash=? AND revoked IS NULL", (h,))
        return Identity(*rows[0]) if rows else None

    # -- audit ----------------------------------------------------------------------------------
    def record(self, who: Identity, action, target=None, before=None, after=None, answer=None, done=True, c=None) -> None:
        row = (self.store.clock(), who.name, who.role, action, None if target is None else str(target),
               _json(before), _json(after), _json(answer), 1 if done else 0)
        sql = "INSERT INTO floor_audit (at, who, role, action, target, before, after, answer, done) VALUES (?,?,?,?,?,?,?,?,?)"
        if c is not None:
            c.execute(sql, row)
        else:
            self.store.execute(sql, row)

    def rows(self, limit=100, action=None, who=None) -> list[dict]:
        sql, args = "SELECT id, at, who, role, action, target, before, after, answer, done FROM floor_audit WHERE 1=1", []
        for col, val in (("action", action), ("who", who)):
            if val is not None:
                sql += f" AND {col}=?"
                args.append(val)
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(int(limit))
        keys = ("id", "at", "who", "role", "action", "target", "before", "after", "answer", "done")
        out = []
        for r in self.store.query(sql, args):
            d = dict(zip(keys, r))
            for k in ("before", "after", "answer"):
                d[k] = None if d[k] is None else json.loads(d[k])
            d["done"] = bool(d["done"])
            out.append(d)
        return out


def _json(v):
    return None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)
