"""The floor's store: every table's events, once each, in SQLite (default) or PostgreSQL.

`events` is keyed (table_id, journal, event_id), the table being the one whose subject the message
came on: a message the broker or a table delivers twice is inserted once (`ON CONFLICT DO
NOTHING`), so the floor may ack late and take redeliveries without fear, while a table's new
journal (or restored backup) numbering its events again from ids the floor holds comes under
another journal identity and is stored (host_tools/table/journal/identity.py). A store made before
journal identities is migrated at open: its rows get the journal "" (the identity of the events
tables journaled before them), still unique.
Beside it, the floor's own tables: the last state of each table (`tables`), the alerts with their
acknowledgement at the floor (`alerts`), tokens and the floor's audit trail (`tokens`, `floor_audit`,
in access.py), the settings waiting for a second person (`pending`), the messages the floor could
not store (`dead_letters`: their bytes as they came, the reason, with an alert naming the table),
the events a table's chain or heartbeat says exist and the floor has not got (`gaps`), and each
table's own day totals as its heartbeats publish them (`table_days`, reconcile.py).

The same SQL runs on both engines: `?` placeholders (turned into `%s` for psycopg), `ON CONFLICT`,
types both accept. SQLite runs in WAL mode with synchronous=FULL: a committed batch survives a
power cut, which is what an ack to the broker promises. Every text a table sent is cleaned before
it is bound (`_s`): no NUL (PostgreSQL refuses it), no lone surrogate (no UTF-8 for it).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time

from host_tools.floor.link import envelope as E

from . import wheels as W

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL, journal TEXT NOT NULL DEFAULT '', event_id BIGINT NOT NULL, site TEXT NOT NULL,
    kind TEXT NOT NULL, serial TEXT, at DOUBLE PRECISION NOT NULL, body TEXT NOT NULL,
    received_at DOUBLE PRECISION NOT NULL, wheel TEXT,
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
CREATE TABLE IF NOT EXISTS dead_letters (
    id {ID}, table_id TEXT, site TEXT, subject TEXT, reason TEXT NOT NULL, data {BLOB}, size BIGINT NOT NULL,
    sha256 TEXT NOT NULL, stream_seq BIGINT, tries INTEGER NOT NULL, received_at DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS dead_letters_table ON dead_letters (table_id, received_at);
CREATE TABLE IF NOT EXISTS gaps (
    table_id TEXT NOT NULL, journal TEXT NOT NULL, event_id BIGINT NOT NULL, site TEXT NOT NULL,
    told_by BIGINT, seen_at DOUBLE PRECISION NOT NULL, filled_at DOUBLE PRECISION, alerted_at DOUBLE PRECISION,
    PRIMARY KEY (table_id, journal, event_id));
CREATE TABLE IF NOT EXISTS table_days (
    table_id TEXT NOT NULL, day TEXT NOT NULL, ledger TEXT NOT NULL, site TEXT NOT NULL, journals TEXT NOT NULL,
    day_from DOUBLE PRECISION, day_to DOUBLE PRECISION, as_of DOUBLE PRECISION NOT NULL,
    settlements BIGINT NOT NULL, turnover BIGINT NOT NULL, paid BIGINT NOT NULL,
    received_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (table_id, day, ledger));
""" + W.SCHEMA + ";"
KEEP_BYTES = 64 * 1024          # of a dead letter's bytes (its size and SHA-256 are of the whole)
TEXT_MAX = 2000                 # of a text a table sent (an alert's message, ...)


class BadEnvelope(ValueError):
    pass


def parse(data: bytes, subject: str | None = None) -> dict:
    """The envelope of one message, checked against the contract (floor/link/envelope.py) and
    against its subject, which names the table (the broker lets a table publish on its own
    subjects only). Raises BadEnvelope with the reason, whatever the bytes."""
    try:
        env = E.parse(data)
        if subject is not None and E.parse_subject(subject) != (env["site"], env["table"], env["kind"]):
            raise E.EnvelopeError(f"subject {str(subject)[:120]} does not match the envelope")
    except E.EnvelopeError as e:
        raise BadEnvelope(str(e)) from None
    return env


def whose(subject) -> tuple[str | None, str | None]:
    """(site, table) of a subject the broker let a table publish on, (None, None) if it is none."""
    try:
        site, table, _ = E.parse_subject(subject)
        return site, table
    except E.EnvelopeError:
        return None, None


class DeadLetter:
    """A message set aside: where it came from, why, its bytes, how often it was tried."""

    __slots__ = ("subject", "reason", "data", "seq", "tries")

    def __init__(self, subject, reason, data, seq=None, tries=1):
        self.subject, self.reason, self.data, self.seq, self.tries = subject, reason, data, seq, tries


class Store:
    """One store, opened from a path (SQLite) or a postgresql:// URL. Thread-safe: the writer and
    the readers each have their connection and lock."""

    def __init__(self, url: str, clock=time.time):
        self.url = url
        self.clock = clock
        self.pg = url.startswith(("postgresql://", "postgres://"))
        self._wlock, self._rlock = threading.RLock(), threading.RLock()
        self._beats: dict[str, dict] = {}   # what each table's last heartbeat did (_heard)
        self._bound: dict[tuple, tuple] = {}    # (table, serial) -> (wheel key, when bound)
        self._last: dict[tuple, int] = {}       # (table, journal) -> the last event stored: a `prev` it is
        self._gapped: set[str] = set()          # tables with gaps open (a stored event may fill one)
        self._w = self._connect()
        self._r = self._connect()
        with self.tx() as c:
            self._migrate(c)
            for stmt in SCHEMA.format(ID="BIGSERIAL PRIMARY KEY" if self.pg else "INTEGER PRIMARY KEY",
                                      BLOB="BYTEA" if self.pg else "BLOB").split(";"):
                if stmt.strip():
                    c.execute(self.sql(stmt))
            self._gapped = {r[0] for r in c.execute("SELECT DISTINCT table_id FROM gaps WHERE filled_at IS NULL").fetchall()}

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
        if cols and "wheel" not in cols and "journal" in cols:
            c.execute("ALTER TABLE events ADD COLUMN wheel TEXT")
        if not cols or "journal" in cols:
            return
        if self.pg:
            c.execute("ALTER TABLE events ADD COLUMN journal TEXT NOT NULL DEFAULT ''")
            c.execute("ALTER TABLE events ADD COLUMN wheel TEXT")
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

    def ping(self) -> None:
        """Raises unless the store takes a write transaction now (is the store down, or was it the message?)."""
        with self.tx() as c:
            c.execute("SELECT 1").fetchall()

    # -- ingest ---------------------------------------------------------------------------------
    def ingest(self, envelopes: list[dict], dead=()) -> list[dict]:
        """Store a batch in one transaction; returns the envelopes that were new (a redelivered or
        resent event is not). Heartbeats update the table's last state, and its day totals; a
        journaled event's `prev`, and a heartbeat's last acknowledged event, that the store lacks
        are noted in `gaps` (and crossed off when they come). `dead` (DeadLetter) are kept in the
        same commit, each with an alert naming its table."""
        fresh = []
        now = self.clock()
        beats = {}                          # a table's newest heartbeat of the batch is its state
        remember = []                       # what the heartbeats did, kept once committed
        remember_bound = []                 # the wheels the coups were bound to, likewise
        last_here = {}                      # (table, journal) -> the last event stored in this batch
        with self.tx() as c:
            for env in envelopes:
                if env["kind"] == "heartbeat":
                    last = beats.get(env["table"])
                    if last is None or float(env["at"]) >= float(last["at"]):
                        beats[env["table"]] = env
                    continue
                key = (env["table"], env.get("journal") or E.LEGACY, env["event_id"])
                cur = c.execute("INSERT INTO events (table_id, journal, event_id, site, kind, serial, at, body, "
                                "received_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                                (*key, env["site"], env["kind"], env["serial"], float(env["at"]),
                                 json.dumps(env["body"], sort_keys=True), now))
                if cur.rowcount != 1:
                    continue
                fresh.append(env)
                if env["table"] in self._gapped:            # a table with gaps open: is this one of them?
                    c.execute("UPDATE gaps SET filled_at=? WHERE table_id=? AND journal=? AND event_id=? "
                              "AND filled_at IS NULL", (now, *key))
                prev = env.get("prev")
                if prev and self._last.get(key[:2]) != prev and last_here.get(key[:2]) != prev:
                    self._expect(c, env["table"], key[1], prev, env["site"], env["event_id"], now)
                last_here[key[:2]] = key[2]
                if env["kind"] in ("result", "void", "table") and env["serial"]:
                    bound = self._bound.get((env["table"], env["serial"]))
                    if bound is not None and now - bound[1] <= W.CLAIM_S / 3 and env["kind"] != "table":
                        wheel = bound[0]            # bound moments ago: the same answer (see _heard)
                    else:
                        wheel = W.bind(self, c, env["table"], env["site"], env["serial"], now)
                        remember_bound.append(((env["table"], env["serial"]), (wheel, now)))
                    if wheel is not None and wheel != env["serial"]:
                        c.execute("UPDATE events SET wheel=? WHERE table_id=? AND journal=? AND event_id=?", (wheel, *key))
                if env["kind"] == "alert":
                    self._alert(c, env)
            for env in beats.values():
                self._heard(c, env, dict(env["body"]), now, remember)
            for d in dead:
                self._dead(c, d, now)
        with self._wlock:                   # committed: what the heartbeats did is remembered
            self._beats.update(remember)
            self._bound.update(remember_bound)
            self._last.update(last_here)
        return fresh

    def _expect(self, c, table, journal, event_id, site, told_by, now):
        """An event a table says it published: a gap until the store has it."""
        if c.execute("SELECT 1 FROM events WHERE table_id=? AND journal=? AND event_id=?",
                     (table, journal, event_id)).fetchone() is None:
            c.execute("INSERT INTO gaps (table_id, journal, event_id, site, told_by, seen_at) VALUES (?,?,?,?,?,?) "
                      "ON CONFLICT DO NOTHING", (table, journal, event_id, site, told_by, now))
            self._gapped.add(table)         # (kept on a rollback too: at worst one UPDATE too many)

    def _heard(self, c, env, state: dict, now, remember=None):
        """A table's heartbeat: its last state, its wheel, the last event its broker acknowledged, its
        day totals. One older than the state held (the stream's copy of a heartbeat the live path
        brought, a redelivery) changes nothing."""
        table = env["table"]
        held = c.execute("SELECT heard_at FROM tables WHERE table_id=?", (table,)).fetchone()
        if held is not None and held[0] >= float(env["at"]):
            return
        # what the last heartbeat of this table already did is not done again (a table says the same
        # things every 5 s): its wheel bound within a third of the claim's window, the same last
        # event expected, the same day totals (a day becoming final is a change)
        seen = self._beats.get(table, {})
        now_seen = dict(seen)
        serial = env.get("serial")
        state.setdefault("serial", serial)
        if seen.get("serial") != serial or now - seen.get("bound_at", 0.0) > W.CLAIM_S / 3:
            W.release(c, table, serial)
            W.bind(self, c, table, env["site"], serial, now)
            now_seen.update(serial=serial, bound_at=now)
        c.execute("INSERT INTO tables (table_id, site, state, heard_at) VALUES (?,?,?,?) "
                  "ON CONFLICT (table_id) DO UPDATE SET site=excluded.site, state=excluded.state, heard_at=excluded.heard_at",
                  (table, env["site"], json.dumps(state, sort_keys=True, default=str), float(env.get("at") or now)))
        last, journal = state.get("last_event_id"), state.get("last_journal")
        if isinstance(journal, str) and E.JOURNAL.fullmatch(journal) and type(last) is int and 0 < last <= E.MAX_ID \
                and seen.get("last") != (journal, last):
            self._expect(c, table, journal, last, env["site"], None, now)
            now_seen["last"] = (journal, last)
        from .reconcile import records
        days = records(state.get("days"))
        digest = [(r["day"], r["ledger"], r["journals"], r["settlements"], r["turnover"], r["paid"], r["as_of"] >= r["to"])
                  for r in days]
        if digest != seen.get("days"):
            now_seen["days"] = digest
        else:
            days = []
        if remember is not None:
            remember.append((table, now_seen))
        for r in days:
            c.execute("INSERT INTO table_days (table_id, day, ledger, site, journals, day_from, day_to, as_of, settlements, "
                      "turnover, paid, received_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (table_id, day, ledger) "
                      "DO UPDATE SET journals=excluded.journals, day_from=excluded.day_from, day_to=excluded.day_to, "
                      "as_of=excluded.as_of, settlements=excluded.settlements, turnover=excluded.turnover, "
                      "paid=excluded.paid, received_at=excluded.received_at WHERE table_days.as_of <= excluded.as_of",
                      (env["table"], r["day"], r["ledger"], env["site"], json.dumps(r["journals"]), r["from"], r["to"],
                       r["as_of"], r["settlements"], r["turnover"], r["paid"], now))

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

    def _dead(self, c, d: DeadLetter, now):
        site, table = whose(d.subject)
        data = d.data if isinstance(d.data, (bytes, bytearray)) else str(d.data).encode("utf-8", "replace")
        row = c.execute("INSERT INTO dead_letters (table_id, site, subject, reason, data, size, sha256, stream_seq, tries, "
                        "received_at) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING id",
                        (table, site, _s(d.subject, 300), _s(d.reason) or "?", bytes(data[:KEEP_BYTES]), len(data),
                         hashlib.sha256(data).hexdigest(), d.seq, int(d.tries), now)).fetchone()
        n = c.execute("SELECT COUNT(*) FROM dead_letters WHERE table_id IS NOT DISTINCT FROM ?" if self.pg else
                      "SELECT COUNT(*) FROM dead_letters WHERE table_id IS ?", (table,)).fetchone()[0]
        message = (f"{n} message(s) de la table mis de côté (lettres mortes), le dernier : {_s(d.reason, 300)}")
        self.floor_alert(c, table or "?", site or "?", "dead_letter", f"floor:dead_letter:{row[0]}", message, "warning",
                         now, merge=True)

    def floor_alert(self, c, table, site, code, alert_id, message, level, now, merge=False) -> str:
        """An alert the floor raises about a table (its id has a ':', which no table's id has). With
        `merge`, an open alert of the same code for the table takes the new message instead."""
        if merge:
            r = c.execute("SELECT alert_id FROM alerts WHERE table_id=? AND code=? AND acked_at IS NULL "
                          "AND floor_acked_at IS NULL AND alert_id LIKE ? ORDER BY raised_at DESC LIMIT 1",
                          (table, code, "floor:%")).fetchone()
            if r is not None:
                c.execute("UPDATE alerts SET message=? WHERE table_id=? AND alert_id=?", (_s(message), table, r[0]))
                return r[0]
        c.execute("INSERT INTO alerts (table_id, alert_id, site, code, message, level, raised_at) VALUES (?,?,?,?,?,?,?) "
                  "ON CONFLICT (table_id, alert_id) DO UPDATE SET message=excluded.message",
                  (table, alert_id, site, code, _s(message), level, now))
        return alert_id

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
        sql, args = ("SELECT table_id, event_id, site, kind, serial, at, body, received_at, journal, wheel FROM events "
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
                 "body": json.loads(r[6]), "received_at": r[7], "journal": r[8], "wheel": r[9] or r[4]}
                for r in self.query(sql, args)]

    def tables(self) -> dict:
        return {r[0]: {"site": r[1], "state": json.loads(r[2]), "heard_at": r[3]}
                for r in self.query("SELECT table_id, site, state, heard_at FROM tables")}

    def count(self, kind=None) -> int:
        if kind is None:
            return self.query("SELECT COUNT(*) FROM events")[0][0]
        return self.query("SELECT COUNT(*) FROM events WHERE kind=?", (kind,))[0][0]


def alert_key(table_alert_id, journal) -> str:
    """The floor's id of a table's alert: the table's own id, with `@<journal>` when the table's
    journal has an identity (a new journal numbers its alerts from 1 again). Only A-Z a-z 0-9 _ -
    of the table's id are kept: a table cannot name an alert as the floor names its own."""
    aid = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "_" for ch in str(table_alert_id)[:64])
    return f"{aid}@{journal}" if journal else aid


def is_floors(alert_id: str) -> bool:
    """Whether the floor raised the alert (a gap, a dead letter, a disputed serial, a day that does
    not reconcile): the table has nothing to acknowledge."""
    return ":" in str(alert_id)


def table_alert(alert_key: str) -> dict:
    """What an `ack_alert` command names: the table's id and the journal it was raised under."""
    aid, _, journal = str(alert_key).partition("@")
    return {"id": aid, "journal": journal} if journal else {"id": aid}


def _s(v, limit=TEXT_MAX):
    """A table's text as both engines take it: no NUL, no lone surrogate, at most `limit` characters."""
    if v is None:
        return None
    text = v if isinstance(v, str) else json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v)
    return text[:limit].replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _f(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
