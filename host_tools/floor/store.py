"""The floor's store: every table's events, once each, in SQLite (default) or PostgreSQL.

`events` is keyed (table_id, journal, event_id): a message the broker or a table delivers twice is
inserted once (`ON CONFLICT DO NOTHING`), so the floor may ack late and take redeliveries without
fear, while a table's new journal (or restored backup) numbering its events again from ids the
floor holds comes under another journal identity and is stored (host_tools/table/journal/identity.py). A
store made before journal identities is migrated at open: its rows get the journal "" (the
identity of the events tables journaled before them), still unique.
Beside it, the floor's own tables: the last state of each table (`tables`), the alerts with their
acknowledgement at the floor (`alerts`), tokens and the floor's audit trail (`tokens`, `floor_audit`,
in auth.py and audit.py), the settings waiting for a second person (`pending`), and the messages
that were not a valid envelope (`rejects`, kept for the record, never silently dropped).

The same SQL runs on both engines: `?` placeholders (turned into `%s` for psycopg), `ON CONFLICT`,
types both accept. SQLite runs in WAL mode with synchronous=FULL: a committed batch survives a
power cut, which is what an ack to the broker promises.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time

from host_tools.floor.link import envelope as E

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL, journal TEXT NOT NULL DEFAULT '', event_id BIGINT NOT NULL, site TEXT NOT NULL,
    kind TEXT NOT NULL, serial TEXT, at DOUBLE PRECISION NOT NULL, body TEXT NOT NULL,
    received_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (table_id, journal, event_id));
CREATE INDEX IF NOT EXISTS events_kind_at ON events (kind, at);
CREATE INDEX IF NOT EXISTS events_serial ON events (serial, kind);
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY, site TEXT NOT NULL, state TEXT NOT NULL, heard_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS alerts (
    table_id TEXT NOT NULL, alert_id TEXT NOT NULL, site TEXT NOT NULL, code TEXT, message TEXT, level TEXT,
    raised_at DOUBLE PRECISION, acked_at DOUBLE PRECISION, acked_by TEXT, comment TEXT,
    floor_acked_at DOUBLE PRECISION, floor_acked_by TEXT, floor_comment TEXT, table_told TEXT,
    escalated_at DOUBLE PRECISION,
    PRIMARY KEY (table_id, alert_id));
CREATE TABLE IF NOT EXISTS pending (
    id TEXT PRIMARY KEY, table_id TEXT NOT NULL, site TEXT NOT NULL, setting TEXT NOT NULL, value TEXT NOT NULL,
    requested_by TEXT NOT NULL, requested_at DOUBLE PRECISION NOT NULL, table_ref TEXT,
    approved_by TEXT, approved_at DOUBLE PRECISION, outcome TEXT);
CREATE TABLE IF NOT EXISTS rejects (
    id {ID}, subject TEXT, reason TEXT NOT NULL, data TEXT, received_at DOUBLE PRECISION NOT NULL);
"""



class BadEnvelope(ValueError):
    pass


def parse(data: bytes, subject: str | None = None) -> dict:
    """The envelope of one message, checked against the contract (floor/link/envelope.py) and
    against its subject. Raises BadEnvelope with the reason."""
    try:
        env = E.parse(data)
        if env["kind"] != "heartbeat" and (isinstance(env["event_id"], bool) or not isinstance(env["event_id"], int)
                                           or env["event_id"] < 0):
            raise E.EnvelopeError("event_id must be a journal id (an integer >= 0)")
        if isinstance(env["at"], bool) or not isinstance(env["at"], (int, float)):
            raise E.EnvelopeError("at must be epoch seconds")
        if not isinstance(env["body"], dict):
            raise E.EnvelopeError("body must be an object")
        if subject is not None and E.parse_subject(subject) != (env["site"], env["table"], env["kind"]):
            raise E.EnvelopeError(f"subject {subject} does not match the envelope")
    except E.EnvelopeError as e:
        raise BadEnvelope(str(e)) from None
    return env


class Store:
    """One store, opened from a path (SQLite) or a postgresql:// URL. Thread-safe: the writer and
    the readers each have their connection and lock."""

    def __init__(self, url: str, clock=time.time):
        self.url = url
        self.clock = clock
        self.pg = url.startswith(("postgresql://", "postgres://"))
        self._wlock, self._rlock = threading.RLock(), threading.RLock()
        self._w = self._connect()
        self._r = self._connect()
        with self.tx() as c:
            self._migrate(c)
            for stmt in SCHEMA.format(ID="BIGSERIAL PRIMARY KEY" if self.pg else "INTEGER PRIMARY KEY").split(";"):
                if stmt.strip():
                    c.execute(self.sql(stmt))

    def _migrate(self, c):
        """A store from before journal identities: `events` gets `journal` "" on every row and the
        key (table_id, journal, event_id), in the opening transaction (both engines roll it back
        whole if anything fails)."""
        if self.pg:
            r = c.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                          "AND table_name = 'events'").fetchall()
        else:
            r = c.execute("SELECT name FROM pragma_table_info('events')").fetchall()
        cols = {x[0] for x in r}
        if not cols or "journal" in cols:
            return
        if self.pg:
            c.execute("ALTER TABLE events ADD COLUMN journal TEXT NOT NULL DEFAULT ''")
            c.execute("ALTER TABLE events DROP CONSTRAINT events_pkey")
            c.execute("ALTER TABLE events ADD PRIMARY KEY (table_id, journal, event_id)")
            return
        c.execute("DROP INDEX IF EXISTS events_kind_at")
        c.execute("DROP INDEX IF EXISTS events_serial")
        c.execute("ALTER TABLE events RENAME TO events_before_journal")
        c.execute(SCHEMA.split(";")[0])
        c.execute("INSERT INTO events (table_id, journal, event_id, site, kind, serial, at, body, received_at) "
                  "SELECT table_id, '', event_id, site, kind, serial, at, body, received_at FROM events_before_journal")
        c.execute("DROP TABLE events_before_journal")

    # -- plumbing -------------------------------------------------------------------------------
    def _connect(self):
        if self.pg:
            import psycopg
            return psycopg.connect(self.url, autocommit=True)
        db = sqlite3.connect(self.url, isolation_level=None, check_same_thread=False, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return db

    def sql(self, s: str) -> str:
        return s.replace("?", "%s") if self.pg else s

    class _Tx:
        def __init__(self, store):
            self.s = store

        def __enter__(self):
            self.s._wlock.acquire()
            self.cur = self.s._w.cursor()
            self.cur.execute("BEGIN")
            return self

        def execute(self, sql, args=()):
            self.cur.execute(self.s.sql(sql), args)
            return self.cur

        def __exit__(self, et, ev, tb):
            try:
                self.cur.execute("ROLLBACK" if et else "COMMIT")
            finally:
                self.cur.close()
                self.s._wlock.release()
            return False

    def tx(self):
        """A write transaction (commits on leaving, rolls back on an exception)."""
        return Store._Tx(self)

    def query(self, sql: str, args=()) -> list[tuple]:
        with self._rlock:
            cur = self._r.cursor()
            try:
                cur.execute(self.sql(sql), args)
                return cur.fetchall()
            finally:
                cur.close()

    def execute(self, sql: str, args=()) -> int:
        """One statement in its own transaction; its row count."""
        with self.tx() as c:
            return c.execute(sql, args).rowcount

    def close(self):
        for lock, conn in ((self._wlock, self._w), (self._rlock, self._r)):
            with lock:
                conn.close()

    # -- ingest ---------------------------------------------------------------------------------
    def ingest(self, envelopes: list[dict], rejects=()) -> list[dict]:
        """Store a batch in one transaction; returns the envelopes that were new (a redelivered or
        resent event is not). Heartbeats update the table's last state only. `rejects`
        ((subject, reason, data) for messages that were no envelope) are kept in the same commit."""
        fresh = []
        now = self.clock()
        beats = {}                          # a table's newest heartbeat of the batch is its state
        with self.tx() as c:
            for env in envelopes:
                if env["kind"] == "heartbeat":
                    last = beats.get(env["table"])
                    if last is None or float(env["at"]) >= float(last["at"]):
                        beats[env["table"]] = env
                    continue
                cur = c.execute("INSERT INTO events (table_id, journal, event_id, site, kind, serial, at, body, "
                                "received_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                                (env["table"], env.get("journal", E.LEGACY), env["event_id"], env["site"], env["kind"], env["serial"],
                                 float(env["at"]), json.dumps(env["body"], sort_keys=True), now))
                if cur.rowcount != 1:
                    continue
                fresh.append(env)
                if env["kind"] == "alert":
                    self._alert(c, env)
            for env in beats.values():
                self._heard(c, env, dict(env["body"]), now)
            for subject, reason, data in rejects:
                c.execute("INSERT INTO rejects (subject, reason, data, received_at) VALUES (?,?,?,?)",
                          (subject, reason, data[:4000].decode("utf-8", "replace") if isinstance(data, bytes) else str(data)[:4000], now))
        return fresh

    def _heard(self, c, env, state: dict, now):
        state.setdefault("serial", env.get("serial"))
        c.execute("INSERT INTO tables (table_id, site, state, heard_at) VALUES (?,?,?,?) "
                  "ON CONFLICT (table_id) DO UPDATE SET site=excluded.site, state=excluded.state, heard_at=excluded.heard_at",
                  (env["table"], env["site"], json.dumps(state, sort_keys=True, default=str), float(env.get("at") or now)))

    def _alert(self, c, env):
        b = env["body"]
        aid = alert_key(b.get("id"), env.get("journal"))
        c.execute("INSERT INTO alerts (table_id, alert_id, site, code, message, level, raised_at, acked_at, acked_by, comment) "
                  "VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (table_id, alert_id) DO UPDATE SET "
                  "acked_at=COALESCE(excluded.acked_at, alerts.acked_at), acked_by=COALESCE(excluded.acked_by, alerts.acked_by), "
                  "comment=COALESCE(excluded.comment, alerts.comment), level=COALESCE(excluded.level, alerts.level)",
                  (env["table"], aid, env["site"], _s(b.get("code")), _s(b.get("message")), _s(b.get("level")),
                   _f(b.get("raised_at")) or float(env["at"]), _f(b.get("acked_at")), _s(b.get("acked_by")),
                   _s(b.get("comment"))))

    def remember_state(self, site: str, table: str, state: dict, heard_at: float):
        """The last state of a table from the key-value bucket, kept unless a newer one is here."""
        with self.tx() as c:
            c.execute("INSERT INTO tables (table_id, site, state, heard_at) VALUES (?,?,?,?) "
                      "ON CONFLICT (table_id) DO UPDATE SET site=excluded.site, state=excluded.state, heard_at=excluded.heard_at "
                      "WHERE tables.heard_at < excluded.heard_at",
                      (table, site, json.dumps(state, sort_keys=True, default=str), heard_at))

    # -- reads ----------------------------------------------------------------------------------
    def events(self, kinds=None, since=None, until=None, table=None, serial=None) -> list[dict]:
        """Events as envelopes, oldest first (by the table's clock, then event id)."""
        sql, args = ("SELECT table_id, event_id, site, kind, serial, at, body, received_at, journal FROM events "
                     "WHERE 1=1", [])
        if kinds:
            sql += " AND kind IN (%s)" % ",".join("?" * len(kinds))
            args += list(kinds)
        for col, op, val in (("at", ">=", since), ("at", "<", until), ("table_id", "=", table), ("serial", "=", serial)):
            if val is not None:
                sql += f" AND {col} {op} ?"
                args.append(val)
        sql += " ORDER BY at, table_id, event_id"
        return [{"table": r[0], "event_id": r[1], "site": r[2], "kind": r[3], "serial": r[4], "at": r[5],
                 "body": json.loads(r[6]), "received_at": r[7], "journal": r[8]} for r in self.query(sql, args)]

    def tables(self) -> dict:
        return {r[0]: {"site": r[1], "state": json.loads(r[2]), "heard_at": r[3]}
                for r in self.query("SELECT table_id, site, state, heard_at FROM tables")}

    def count(self, kind=None) -> int:
        if kind is None:
            return self.query("SELECT COUNT(*) FROM events")[0][0]
        return self.query("SELECT COUNT(*) FROM events WHERE kind=?", (kind,))[0][0]


def alert_key(table_alert_id, journal) -> str:
    """The floor's id of a table's alert: the table's own id, with `@<journal>` when the table's
    journal has an identity (a new journal numbers its alerts from 1 again)."""
    return f"{table_alert_id}@{journal}" if journal else str(table_alert_id)


def table_alert(alert_key: str) -> dict:
    """What an `ack_alert` command names: the table's id and the journal it was raised under."""
    aid, _, journal = str(alert_key).partition("@")
    return {"id": aid, "journal": journal} if journal else {"id": aid}


def _s(v):
    return None if v is None else str(v)


def _f(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
