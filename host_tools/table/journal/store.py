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
import zlib
from contextlib import contextmanager
from pathlib import Path

from host_tools.table.journal.jsontext import sorted_text

SCHEMA_VERSION = 5       # 5: a spin's results in columns (`spin_results.format` 5: the
                         # columns in `spin_results.data`, the few `more` in `result_mores`,
                         # game/resultats.py); 4: a settled bet's row is not rewritten at its settlement (`pending`,
                         # the view `bets_now`), a result row names its type and label by a
                         # `result_labels` id (`spin_results.format` 4); 3: a spin's results in
                         # one `spin_results` row (2: a `results` row each; 1: inside the
                         # settlement's JSON); `all_results` shows 2, 3 and 4 as rows

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
CREATE INDEX IF NOT EXISTS bets_spin_status ON bets (wheel, spin, status);
CREATE TABLE IF NOT EXISTS settlements (
    wheel TEXT NOT NULL, spin INTEGER NOT NULL, number INTEGER NOT NULL, at REAL NOT NULL,
    staked INTEGER NOT NULL, paid INTEGER NOT NULL, result TEXT NOT NULL, pending INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (wheel, spin));
CREATE TABLE IF NOT EXISTS results (
    wheel TEXT NOT NULL, spin INTEGER NOT NULL, pos INTEGER NOT NULL, bet TEXT NOT NULL,
    type TEXT NOT NULL, label TEXT NOT NULL, staked INTEGER NOT NULL, outcome TEXT NOT NULL,
    won INTEGER NOT NULL, returned INTEGER NOT NULL, lost INTEGER NOT NULL, imprisoned INTEGER NOT NULL,
    more TEXT,
    PRIMARY KEY (wheel, spin, bet, pos)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spin_results (
    wheel TEXT NOT NULL, spin INTEGER NOT NULL, n INTEGER NOT NULL, rows TEXT NOT NULL, format INTEGER NOT NULL DEFAULT 3,
    data BLOB, PRIMARY KEY (wheel, spin));
CREATE TABLE IF NOT EXISTS result_mores (
    wheel TEXT NOT NULL, spin INTEGER NOT NULL, k INTEGER NOT NULL, more TEXT NOT NULL,
    PRIMARY KEY (wheel, spin, k)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS result_labels (
    id INTEGER PRIMARY KEY, type TEXT NOT NULL, label TEXT NOT NULL, UNIQUE (type, label));
CREATE TABLE IF NOT EXISTS announcements (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, wheel TEXT NOT NULL, spin INTEGER, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS state (
    wheel TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS frames_kind ON frames (kind, id);
CREATE TABLE IF NOT EXISTS status_blocks (
    id INTEGER PRIMARY KEY, wheel TEXT, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL,
    first_at REAL NOT NULL, last_at REAL NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS status_blocks_at ON status_blocks (first_at);
"""

# after the migrations: what needs the columns they add
SCHEMA_AFTER = """
CREATE INDEX IF NOT EXISTS settlements_pending ON settlements (wheel, spin) WHERE pending=1;
DROP INDEX IF EXISTS bets_spin;
DROP VIEW IF EXISTS all_results;
CREATE VIEW all_results AS
    WITH RECURSIVE k(i) AS (
        SELECT 0 WHERE EXISTS (SELECT 1 FROM spin_results WHERE format = 5 AND n > 0)
        UNION ALL SELECT i + 1 FROM k WHERE i + 1 < (SELECT MAX(n) FROM spin_results WHERE format = 5))
    SELECT wheel, spin, pos, bet, type, label, staked, outcome, won, returned, lost, imprisoned, more FROM results
    UNION ALL
    SELECT s.wheel, s.spin, CAST(r.key AS INTEGER), json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]'),
           json_extract(r.value, '$[2]'), json_extract(r.value, '$[3]'), json_extract(r.value, '$[4]'),
           json_extract(r.value, '$[5]'), json_extract(r.value, '$[6]'), json_extract(r.value, '$[7]'),
           json_extract(r.value, '$[8]'), json_extract(r.value, '$[9]')
    FROM spin_results s, json_each(s.rows) r WHERE s.format = 3
    UNION ALL
    SELECT s.wheel, s.spin, CAST(r.key AS INTEGER), json_extract(r.value, '$[0]'), l.type, l.label,
           json_extract(r.value, '$[2]'), json_extract(r.value, '$[3]'), json_extract(r.value, '$[4]'),
           json_extract(r.value, '$[5]'), json_extract(r.value, '$[6]'), json_extract(r.value, '$[7]'),
           json_extract(r.value, '$[8]')
    FROM spin_results s, json_each(s.rows) r, result_labels l
    WHERE s.format = 4 AND l.id = json_extract(r.value, '$[1]')
    UNION ALL
    SELECT s.wheel, s.spin, k.i, %s, l.type, l.label, %s, %s, %s, %s, %s, %s, m.more
    FROM spin_results s JOIN k ON k.i < s.n JOIN result_labels l ON l.id = %s
    LEFT JOIN result_mores m ON m.wheel = s.wheel AND m.spin = s.spin AND m.k = %s - 1
    WHERE s.format = 5;
"""

# format 5: a result's field read at its place in `spin_results.data` (game/resultats.py)
def _field(name, text=False):
    off, w = "json_extract(s.rows, '$.c.%s[0]')" % name, "json_extract(s.rows, '$.c.%s[1]')" % name
    part = "CAST(substr(s.data, %s + k.i * %s + 1, %s) AS TEXT)" % (off, w, w)
    return "rtrim(%s, ' ')" % part if text else "CAST(%s AS INTEGER)" % part


OUTCOMES = ("lost", "won", "imprisoned", "partage", "released", "split")    # format 5's codes (reglement.OUTCOMES)
SCHEMA_AFTER = SCHEMA_AFTER % (
    _field("id", True), _field("staked"),
    "CASE %s %s END" % (_field("outcome"), " ".join("WHEN %d THEN '%s'" % kv for kv in enumerate(OUTCOMES))),
    _field("won"), _field("returned"), _field("lost"), _field("imprisoned"), _field("label"), _field("more"))

WAL_PAGES = 25000         # SQLite's own checkpoint past this many pages in the WAL (~100 MB)

STATUS_AGE_S = 600        # status frames stay rows this long, then move into compressed blocks
STATUS_BLOCK = 1200       # frames per block (10 minutes of statuses)
BLOCK_FORMAT = 1


class _Tx:
    """`Journal.tx()`: a class, not a generator: a bet's recording opens it several times (its
    row, its event, its slip), and a generator's context costs several times a class's."""
    __slots__ = ("j", "depth")

    def __init__(self, journal):
        self.j = journal

    def __enter__(self):
        j = self.j
        j.lock.acquire()
        try:
            depth = self.depth = j._depth
            if depth == 0:
                j.db.execute("BEGIN IMMEDIATE")
                j._then = []
            j._depth = depth + 1
        except BaseException:
            j.lock.release()
            raise
        return j.db

    def __exit__(self, kind, exc, tb):
        j = self.j
        depth = self.depth
        try:
            j._depth = depth
            if depth == 0:
                if kind is not None:
                    j._then = []
                    j.db.execute("ROLLBACK")
                else:
                    j.db.execute("COMMIT")
                    then, j._then = j._then, []
                    for fn in then:
                        fn()
        finally:
            j.lock.release()
        return False


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
        # a checkpoint (the WAL copied into the file, fsync) on a commit of the result's path
        # cost more than the settlement: the table asks for one where no bet waits (`checkpoint`),
        # SQLite's own at this size is the backstop (docs/daemon.md)
        self.db.execute("PRAGMA wal_autocheckpoint=%d" % WAL_PAGES)
        self.lock = threading.RLock()
        self._checkpointer = None
        self._depth = 0
        self._then = []
        with self.tx():
            for statement in _statements(SCHEMA):
                self.db.execute(statement)
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) in (1, 2, 3, 4):
                # schema 1 -> 2 added the `results` table, 2 -> 3 `spin_results` and the view
                # (created above); the settlements written before keep their results where they
                # were written (the settlement's JSON, `results` rows) and are read back as they
                # are. 3 -> 4: `settlements.pending` (0: the bets of every settlement written
                # before are marked `settled` in their rows already), `spin_results.format` (3 for
                # the rows written before), `result_labels` (created above), the view again
                have = {r[1] for r in self.db.execute("PRAGMA table_info(settlements)")}
                if "pending" not in have:
                    self.db.execute("ALTER TABLE settlements ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
                have = {r[1] for r in self.db.execute("PRAGMA table_info(spin_results)")}
                if "format" not in have:        # (its rows are schema 3's: 10 fields, type and label)
                    self.db.execute("ALTER TABLE spin_results ADD COLUMN format INTEGER NOT NULL DEFAULT 3")
                if "data" not in have:          # 4 -> 5: format 5's columns (result_mores created above)
                    self.db.execute("ALTER TABLE spin_results ADD COLUMN data BLOB")
                self.db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise RuntimeError(f"journal {self.path} has schema {row[0]}, this daemon needs {SCHEMA_VERSION}")
            for statement in _statements(SCHEMA_AFTER):
                self.db.execute(statement)

    def tx(self):
        """One atomic, durable transaction (re-entrant: inner blocks join the outer one)."""
        return _Tx(self)

    @contextmanager
    def savepoint(self):
        """Inside a transaction, a part that rolls back alone if it raises (with the after-commit
        calls it asked for); the transaction goes on. Group commit runs each placement in one."""
        with self.lock:
            if self._depth == 0:
                raise RuntimeError("a savepoint is part of an open transaction")
            then = len(self._then)
            self.db.execute("SAVEPOINT part")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK TO part")
                self.db.execute("RELEASE part")
                del self._then[then:]
                raise
            self.db.execute("RELEASE part")

    def after_commit(self, fn):
        """Call `fn` once the outermost transaction open now has committed (never if it rolls
        back): what a transaction says to the world (the live stream, the log) waits for it."""
        if self._depth == 0:
            fn()
        else:
            self._then.append(fn)

    def checkpoint(self):
        """Copy the WAL into the file now, on a connection and a thread of their own (PASSIVE:
        the writer goes on meanwhile): asked when the wheel's call has locked the bets, so the
        result's commit does not carry one. Nothing when one is already running."""
        if self.path == ":memory:" or (self._checkpointer is not None and self._checkpointer.is_alive()):
            return
        path = self.path

        def run():
            try:
                db = sqlite3.connect(path, isolation_level=None)
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                finally:
                    db.close()
            except sqlite3.Error:
                pass                    # SQLite's own checkpoint remains
        self._checkpointer = threading.Thread(target=run, name="checkpoint", daemon=True)
        self._checkpointer.start()

    @property
    def depth(self):
        """How many nested `tx()` blocks are open (0: none)."""
        return self._depth

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

    def voided(self, wheel, spin, boot=None) -> bool:
        """Has `boot` of the wheel (any boot: None) sent a void for the table's spin `spin`?
        Any boot for a result a controller named after a restart: it holds a void in RAM until
        this journal has it, so after a power cut the ball at rest may name a spin voided in the
        boot before; and a table's spin numbers go on across a counter that starts again
        (wheel/identity.py)."""
        if boot is None:
            q, args = "SELECT 1 FROM events WHERE wheel=? AND spin=? AND ev='void' LIMIT 1", (wheel, spin)
        else:
            q, args = ("SELECT 1 FROM events WHERE wheel=? AND boot=? AND spin=? AND ev='void' LIMIT 1",
                       (wheel, boot or "", spin))
        return self.db.execute(q, args).fetchone() is not None

    def mark(self, frame_id, kind, reason):
        """Re-mark a journaled frame (an event taken but not acted on: kind `anomaly`)."""
        self.db.execute("UPDATE frames SET kind=?, reason=? WHERE id=?", (kind, reason, frame_id))

    def announce(self, wheel, spin, text):
        self.db.execute("INSERT INTO announcements (at, wheel, spin, text) VALUES (?,?,?,?)",
                        (time.time(), wheel, spin, text))

    def load_state(self, wheel) -> dict | None:
        row = self.db.execute("SELECT body FROM state WHERE wheel=?", (wheel,)).fetchone()
        return json.loads(row[0]) if row else None

    def save_state(self, wheel, state: dict):
        self.db.execute("INSERT OR REPLACE INTO state (wheel, body) VALUES (?,?)",
                        (wheel, sorted_text(state)))

    # -- status frames, kept compactly -----------------------------------------------------------
    def compact_statuses(self, older_than_s=STATUS_AGE_S, block=STATUS_BLOCK, now=None, partial=False) -> int:
        """Move `block` status frames received over `older_than_s` ago out of `frames` into one
        compressed `status_blocks` row, losslessly (id, receipt time to the microsecond, raw
        bytes); one transaction. Fewer than `block` are left alone unless `partial`. Returns how
        many frames moved (0: not enough old enough).

        Two statuses a second are 170,000 rows a day; nearly all their bytes repeat (only the
        controller time, the sequence number, the MAC and the CRC change), so a block holds them in
        about a seventh of the space. `statuses()` reads both places back."""
        cutoff = (time.time() if now is None else now) - older_than_s
        with self.tx():
            rows = self.db.execute("SELECT id, at, wheel, raw FROM frames WHERE kind='status' AND at < ? "
                                   "ORDER BY id LIMIT ?", (cutoff, block)).fetchall()
            if not rows or (len(rows) < block and not partial):
                return 0
            wheel = rows[0]["wheel"]
            rows = [r for r in rows if r["wheel"] == wheel]      # one wheel per block
            self.db.execute("INSERT INTO status_blocks (wheel, first_id, last_id, first_at, last_at, n, data) "
                            "VALUES (?,?,?,?,?,?,?)",
                            (wheel, rows[0]["id"], rows[-1]["id"], rows[0]["at"], rows[-1]["at"], len(rows),
                             pack_statuses([(r["id"], r["at"], bytes(r["raw"] or b"")) for r in rows])))
            self.db.executemany("DELETE FROM frames WHERE id=?", [(r["id"],) for r in rows])
        return len(rows)

    def statuses(self, wheel=None, since=None, until=None):
        """Every status frame received, old (in blocks) and recent (rows), in order of receipt:
        dicts with `id`, `at`, `wheel`, `raw`."""
        lo = float("-inf") if since is None else since
        hi = float("inf") if until is None else until
        with self.lock:
            blocks = self.db.execute("SELECT wheel, data FROM status_blocks WHERE last_at >= ? AND first_at <= ? "
                                     "ORDER BY first_id", (lo, hi)).fetchall()
            rows = self.db.execute("SELECT id, at, wheel, raw FROM frames WHERE kind='status' AND at BETWEEN ? AND ? "
                                   "ORDER BY id", (lo, hi)).fetchall()
        out = []
        for b in blocks:
            if wheel is None or b["wheel"] == wheel:
                out += [{"id": i, "at": at, "wheel": b["wheel"], "raw": raw}
                        for i, at, raw in unpack_statuses(b["data"]) if lo <= at <= hi]
        out += [{"id": r["id"], "at": r["at"], "wheel": r["wheel"], "raw": bytes(r["raw"] or b"")}
                for r in rows if wheel is None or r["wheel"] == wheel]
        out.sort(key=lambda r: r["id"])
        return out

    # -- reads ----------------------------------------------------------------------------------
    def query(self, sql, args=()):
        with self.lock:
            return [dict(r) for r in self.db.execute(sql, args).fetchall()]

    def one(self, sql, args=()):
        with self.lock:
            r = self.db.execute(sql, args).fetchone()
            return dict(r) if r else None


def pack_statuses(frames) -> bytes:
    """[(id, at, raw)] -> one block: a version byte, then zlib of, per frame, the id and the
    receipt time in microseconds (each as a signed delta from the previous, varint), the raw
    length (varint) and the raw bytes."""
    out = bytearray()
    pid, pus = 0, 0
    for fid, at, raw in frames:
        us = round(at * 1_000_000)
        _varint(out, _zigzag(fid - pid))
        _varint(out, _zigzag(us - pus))
        _varint(out, len(raw))
        out += raw
        pid, pus = fid, us
    return bytes([BLOCK_FORMAT]) + zlib.compress(bytes(out), 9)


def unpack_statuses(data: bytes):
    """The inverse of pack_statuses: [(id, at, raw)]."""
    if not data or data[0] != BLOCK_FORMAT:
        raise ValueError("status block of an unknown format %r" % (data[:1],))
    buf = zlib.decompress(data[1:])
    i, out, fid, us = 0, [], 0, 0
    while i < len(buf):
        d, i = _unvarint(buf, i)
        fid += _unzigzag(d)
        d, i = _unvarint(buf, i)
        us += _unzigzag(d)
        n, i = _unvarint(buf, i)
        out.append((fid, us / 1_000_000, bytes(buf[i:i + n])))
        i += n
    return out


def _zigzag(n):
    return n * 2 if n >= 0 else -n * 2 - 1


def _unzigzag(n):
    return n // 2 if n % 2 == 0 else -(n + 1) // 2


def _varint(out, n):
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _unvarint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i
        shift += 7


def _statements(script):
    return [s.strip() for s in script.split(";") if s.strip()]
