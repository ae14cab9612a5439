"""Identities and roles (rôles): API tokens kept hashed in the journal.

A token is a random secret (`cyl_` + 32 bytes, url-safe) shown once, at `cylindre token add`.
The journal keeps only its SHA-256: a secret this long needs no slow hash, and a copy of the
journal gives no usable token. Roles are ordered: a role may do what every role below it may.

    display  < terminal < croupier < chef < admin
    (reads)    (its own   (bets)     (open/close, consent, held bets, audit)   (wheel settings, clock)
               slips)
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import threading
import time
from pathlib import Path

ROLES = ("display", "terminal", "croupier", "chef", "admin")
RANK = {r: i for i, r in enumerate(ROLES)}
PREFIX = "cyl_"
MAX_KNOWN = 100_000     # identities cached at most (a flood of live tokens reads the journal beyond)
LONGEST = 128           # a presented token longer than this is not one: never hashed nor looked up
NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")

SCHEMA = ("""CREATE TABLE IF NOT EXISTS tokens (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
    created REAL NOT NULL, revoked REAL)""",
          # the tokens' generation: one more at every change of the table, whoever makes it (the daemon,
          # `cylindre token` in another process, plain SQL), so a cached identity knows it is still good
          "CREATE TABLE IF NOT EXISTS tokens_gen (n INTEGER NOT NULL)",
          "INSERT INTO tokens_gen (n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM tokens_gen)",
          *("CREATE TRIGGER IF NOT EXISTS tokens_gen_%s AFTER %s ON tokens BEGIN UPDATE tokens_gen SET n = n + 1; END"
            % (op.lower(), op) for op in ("INSERT", "UPDATE", "DELETE")))


class TokenError(ValueError):
    pass


class Identity:
    """Who made a request: the token's name and role."""

    __slots__ = ("name", "role")

    def __init__(self, name: str, role: str):
        self.name, self.role = name, role

    def may(self, role: str) -> bool:
        return RANK[self.role] >= RANK[role]

    def __repr__(self):
        return f"Identity({self.name!r}, {self.role!r})"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    """A fresh token: `cyl_` and 32 random bytes, url-safe (shown once, never stored)."""
    return PREFIX + secrets.token_urlsafe(32)


def lookup_digest(secret: str | None) -> str | None:
    """The digest a presented token is kept under, or None for what cannot be a token (none, not
    `cyl_...`, over 128 characters): such a request is never looked up. The table's tokens and
    the floor's (host_tools/floor/access.py) are read through it."""
    if not secret or not secret.startswith(PREFIX) or len(secret) > LONGEST:
        return None
    return digest(secret)


def check_new(name: str, role: str, roles) -> None:
    """A new token's name and role, or TokenError saying what is wrong (the table's and the floor's)."""
    if not NAME.fullmatch(name or ""):
        raise TokenError("a token name is 1 to 64 letters, digits or . _ @ -")
    if role not in roles:
        raise TokenError(f"role must be one of {', '.join(roles)}, got {role!r}")


def check_case(name: str, others) -> None:
    """TokenError when a token name exists that differs from `name` by case alone (`others`: the
    names found for lower(name)): bob and BOB would be one person to the two-person rule and the
    auditors, and two in the audit rows."""
    for other in others:
        if other != name:
            raise TokenError(f"a token named {other} exists: a name may not differ from another by case alone")


class Tokens:
    """The tokens table on the journal's connection, under the journal's lock (never inside
    another thread's transaction): add, list, revoke, identify.

    With `reader` (the journal's file), `identify` reads on a connection of its own, read-only:
    in WAL mode it never waits for the journal's lock, which a group of bets holds through its
    fsync, and it still reads the table as last committed by any process (`cylindre token revoke`
    included), so a revocation takes effect at the next request.

    `vouch` is the cached lookup of the placements' fast path (api/fastpath.py): an identity read
    once is kept with the tokens' generation (`tokens_gen`, bumped by a trigger at every change of
    the table, from any process) it was read under, and served while no newer generation has been
    seen. Its answer is a voucher; the group that records the placement checks the voucher in its
    own transaction (`unvouched`): a token changed since is read again there, and a revoked one
    places nothing. So a revocation is never outrun, and a placement costs no journal read."""

    def __init__(self, db: sqlite3.Connection, lock=None, reader: str | None = None):
        self.db = db
        self.lock = lock or threading.RLock()
        with self.lock, _tx(self.db):
            for statement in SCHEMA:
                self.db.execute(statement)
        self._reader = self._reader_lock = None
        self.gen = None                 # the newest generation of the tokens read (vouch, unvouched)
        self._known: dict[str, tuple[Identity, int]] = {}      # digest -> (identity, generation read under)
        if reader and reader != ":memory:":
            uri = Path(reader).resolve().as_uri() + "?mode=ro"       # quoted: a '?' or '#' in a path is a name
            self._reader = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            self._reader_lock = threading.Lock()

    def add(self, name: str, role: str) -> str:
        """A new token for NAME with ROLE; returns the secret (shown once, never stored)."""
        check_new(name, role, ROLES)
        secret = new_secret()
        with self.lock:
            check_case(name, [r[0] for r in self.db.execute("SELECT name FROM tokens WHERE lower(name)=lower(?)", (name,))])
            row = self.db.execute("SELECT revoked FROM tokens WHERE name=?", (name,)).fetchone()
            if row is not None and row[0] is None:
                raise TokenError(f"a token named {name} exists (revoke it first)")
            self.db.execute("INSERT OR REPLACE INTO tokens (name, role, hash, created, revoked) VALUES (?,?,?,?,NULL)",
                            (name, role, digest(secret), time.time()))
        return secret

    def revoke(self, name: str) -> bool:
        with self.lock:
            cur = self.db.execute("UPDATE tokens SET revoked=? WHERE name=? AND revoked IS NULL", (time.time(), name))
        return cur.rowcount == 1

    def list(self) -> list[dict]:
        with self.lock:
            rows = self.db.execute("SELECT name, role, created, revoked FROM tokens ORDER BY name").fetchall()
        return [{"name": r[0], "role": r[1], "created": r[2], "revoked": r[3]} for r in rows]

    def identify(self, secret: str | None) -> Identity | None:
        """The identity of a live token, or None. Read each time: a revocation takes effect at once."""
        h = lookup_digest(secret)
        if h is None:
            return None
        db, lock = (self._reader, self._reader_lock) if self._reader is not None else (self.db, self.lock)
        with lock:
            row = db.execute("SELECT name, role FROM tokens WHERE hash=? AND revoked IS NULL", (h,)).fetchone()
        return None if row is None else Identity(row[0], row[1])

    def vouch(self, secret: str | None) -> tuple[Identity | None, tuple | None]:
        """(the identity of a live token, its voucher (digest, generation)), or (None, None): from
        the cache while the generation it was read under is the newest seen, else read afresh."""
        h = lookup_digest(secret)
        if h is None:
            return None, None
        known = self._known.get(h)
        if known is not None and known[1] == self.gen:
            return known[0], (h, known[1])
        db, lock = (self._reader, self._reader_lock) if self._reader is not None else (self.db, self.lock)
        with lock:
            row = db.execute("SELECT t.name, t.role, g.n FROM tokens_gen g LEFT JOIN tokens t "
                             "ON t.hash=? AND t.revoked IS NULL", (h,)).fetchone()
        self._saw(row[2])
        if row[0] is None:
            return None, None
        who = Identity(row[0], row[1])
        if len(self._known) < MAX_KNOWN:
            self._known[h] = (who, row[2])
        return who, (h, row[2])

    def unvouched(self, db: sqlite3.Connection, vouchers) -> set:
        """The vouchers of `vouchers` (vouch's) whose token is no longer live, read in the caller's
        transaction on `db` (the journal's: the group's own): a voucher of the current generation
        is good as is; any other is checked against the table."""
        n = db.execute("SELECT n FROM tokens_gen").fetchone()[0]
        self._saw(n)
        stale = {v[0] for v in vouchers if v is not None and v[1] != n}
        if not stale:
            return set()
        live = {r[0] for r in db.execute("SELECT hash FROM tokens WHERE revoked IS NULL AND hash IN (%s)"
                                         % ",".join("?" * len(stale)), tuple(stale))}
        return {v for v in vouchers if v is not None and v[0] in stale - live}

    def _saw(self, n):
        if self.gen is None or n > self.gen:        # the table changed: what was cached is read again
            self._known = {}                        # (a generation only grows: an older one read late is ignored)
            self.gen = n

    def close(self):
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class _tx:
    """A transaction of its own unless the connection is already in one. It takes the write lock
    at its start (IMMEDIATE): a deferred one that read first and then wrote could meet a daemon's
    commit in between and fail at once ("database is locked") instead of waiting its turn."""

    def __init__(self, db):
        self.db, self.mine = db, False

    def __enter__(self):
        if not self.db.in_transaction:
            self.db.execute("BEGIN IMMEDIATE")
            self.mine = True

    def __exit__(self, kind, *_):
        if self.mine:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def issue(journal_path, name: str, role: str) -> str:
    """A fresh token for NAME in the journal file (revoking NAME's live one): for tools that start a
    daemon of their own, such as `cylindre demo`."""
    from host_tools.table.journal.store import Journal
    j = Journal(journal_path)
    try:
        t = Tokens(j.db, j.lock)
        t.revoke(name)
        return t.add(name, role)
    finally:
        j.close()
