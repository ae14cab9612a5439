"""The durable journal (journal de table) in SQLite: frames, events, bets, settlements, state.

WAL mode with `synchronous=FULL`: a transaction is on disk when COMMIT returns, so a kill at any
instant leaves either all of a transaction or none of it. The daemon makes each received event,
what it does to the bets and the settlement one transaction, and acknowledges the event to the
wheel only after COMMIT: a result is settled exactly once, keyed by (wheel, spin).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS frames (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, wheel TEXT, kind TEXT NOT NULL, ftype TEXT,
    seq INTEGER, reason TEXT, raw BLOB);
CREATE TABLE IF NOT EXISTS events (
    wheel TEXT NOT NULL, boot TEXT NOT NULL, seq INTEGER NOT NULL, at REAL NOT NULL,
    ev TEXT NOT NULL, spin INTEGER, body TEXT NOT NULL, frame_id INTEGER,
    PRIMARY KEY (wheel, boot, seq));
CREATE INDEX IF NOT EXISTS events_spin ON events (wheel, spin);
CREATE TABLE IF NOT EXISTS bets (
    id TEXT PRIMARY KEY, wheel TEXT NOT NULL, player TEXT NOT NULL, at REAL NOT NULL,
    body TEXT NOT NULL, stake INTEGER NOT NULL, status TEXT NOT NULL, spin INTEGER,
    reason TEXT, result TEXT);
CREATE INDEX IF NOT EXISTS bets_status ON bets (wheel, status);
CREATE INDEX IF NOT EXISTS bets_spin ON bets (wheel, spin);
CREATE TABLE IF NOT EXISTS settlements (
    wheel TEXT NOT NULL, spin INTEGER NOT NULL, number INTEGER NOT NULL, at REAL NOT NULL,
    staked INTEGER NOT NULL, paid INTEGER NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (wheel, spin));
CREATE TABLE IF NOT EXISTS announcements (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, wheel TEXT NOT NULL, spin INTEGER, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS state (
    wheel TEXT PRIMARY KEY, body TEXT NOT NULL);
"""


class Journal:
    """One SQLite file; every method runs under the journal's lock (the daemon is threaded)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.lock = threading.RLock()
        self._depth = 0
        with self.tx():
            for statement in _statements(SCHEMA):
                self.db.execute(statement)
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise RuntimeError(f"journal {self.path} has schema {row[0]}, this daemon needs {SCHEMA_VERSION}")

    @contextmanager
    def tx(self):
        """One atomic, durable transaction (re-entrant: inner blocks join the outer one)."""
        with self.lock:
            depth = self._depth
            if depth == 0:
                self.db.execute("BEGIN IMMEDIATE")
            self._depth = depth + 1
            try:
                yield self.db
            except BaseException:
                self._depth = depth
                if depth == 0:
                    self.db.execute("ROLLBACK")
                raise
            self._depth = depth
            if depth == 0:
                self.db.execute("COMMIT")

    def close(self):
        with self.lock:
            self.db.close()

    # -- writes (call inside tx) ------------------------------------------------------------
    def frame(self, wheel, rec) -> int:
        cur = self.db.execute(
            "INSERT INTO frames (at, wheel, kind, ftype, seq, reason, raw) VALUES (?,?,?,?,?,?,?)",
            (time.time(), wheel, rec.get("kind"), rec.get("ftype"), rec.get("seq"),
             rec.get("reason") or rec.get("detail"), bytes(rec.get("raw") or b"")))
        return cur.lastrowid

    def event(self, wheel, boot, seq, ev, frame_id) -> bool:
        """Record an event; False if (wheel, boot, seq) is already journaled (a resend)."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO events (wheel, boot, seq, at, ev, spin, body, frame_id) VALUES (?,?,?,?,?,?,?,?)",
            (wheel, boot or "", seq, time.time(), str(ev.get("ev")), ev.get("spin") if isinstance(ev.get("spin"), int) else None,
             json.dumps(ev, sort_keys=True), frame_id))
        return cur.rowcount == 1

    def announce(self, wheel, spin, text):
        self.db.execute("INSERT INTO announcements (at, wheel, spin, text) VALUES (?,?,?,?)",
                        (time.time(), wheel, spin, text))

    def load_state(self, wheel) -> dict | None:
        row = self.db.execute("SELECT body FROM state WHERE wheel=?", (wheel,)).fetchone()
        return json.loads(row[0]) if row else None

    def save_state(self, wheel, state: dict):
        self.db.execute("INSERT OR REPLACE INTO state (wheel, body) VALUES (?,?)",
                        (wheel, json.dumps(state, sort_keys=True)))

    # -- reads ----------------------------------------------------------------------------------
    def query(self, sql, args=()):
        with self.lock:
            return [dict(r) for r in self.db.execute(sql, args).fetchall()]

    def one(self, sql, args=()):
        with self.lock:
            r = self.db.execute(sql, args).fetchone()
            return dict(r) if r else None


def _statements(script):
    return [s.strip() for s in script.split(";") if s.strip()]
