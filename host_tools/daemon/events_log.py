"""The published events, numbered and journaled, so a display that reconnects misses nothing.

Every event the table publishes (announce, bet, cancel, settlement, wheel, link) gets the next id
of the `event_log` table and is then handed to the live subscribers in id order; an SSE client
that reconnects with `Last-Event-ID: N` is sent the journaled events after N, then the live ones.
Status events (the wheel's heartbeat, twice a second) are a live gauge: sent only to clients that
ask for them, never journaled, and without an id, so they never move a client's resume point.

The log has its own connection to the journal file with `synchronous=NORMAL`: an event row costs
no fsync of its own (the money is in the journal's tables, which stay `FULL`; the next journal
commit makes the event rows durable too). The oldest rows beyond `KEEP` are pruned.
"""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
import time

EPHEMERAL = frozenset({"status"})
KINDS = ("announce", "bet", "cancel", "settlement", "wheel", "link", "status")
KEEP = 100_000
PRUNE_EVERY = 1000

SCHEMA = """
CREATE TABLE IF NOT EXISTS event_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL)
"""


class _Sub:
    __slots__ = ("q", "loop", "kinds")

    def __init__(self, q, loop, kinds):
        self.q, self.loop, self.kinds = q, loop, kinds


class EventLog:
    """Drop-in for the daemon's broker (`subscribe`, `unsubscribe`, `publish`), with ids that persist."""

    def __init__(self, journal, maxsize=2000, keep=KEEP, clock=time.time):
        path = getattr(journal, "path", ":memory:")
        if path == ":memory:":
            self.db, self.lock = journal.db, journal.lock      # a test journal: one connection
            self._own = False
        else:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.lock = threading.RLock()
            self._own = True
        self.maxsize, self.keep, self.clock = maxsize, keep, clock
        self._subs: list[_Sub] = []
        self._n = 0
        with self.lock:
            self.db.execute(SCHEMA)

    # -- publishing ------------------------------------------------------------------------------
    def publish(self, kind, body):
        data = json.dumps(body, ensure_ascii=False, default=str)
        with self.lock:
            eid = None
            if kind not in EPHEMERAL:
                eid = self.db.execute("INSERT INTO event_log (at, kind, data) VALUES (?,?,?)",
                                      (self.clock(), kind, data)).lastrowid
                self._n += 1
                if self._n % PRUNE_EVERY == 0:
                    self.db.execute("DELETE FROM event_log WHERE id <= ?", (eid - self.keep,))
            msg = (eid, kind, data)
            for sub in list(self._subs):
                if sub.kinds is not None and kind not in sub.kinds:
                    continue
                if sub.loop is None:
                    try:
                        sub.q.put_nowait(msg)
                    except queue.Full:
                        self._drop(sub)
                else:
                    try:
                        sub.loop.call_soon_threadsafe(self._put_async, sub, msg)
                    except RuntimeError:        # its event loop is gone
                        self._subs.remove(sub)
        return eid

    def _put_async(self, sub, msg):
        try:
            sub.q.put_nowait(msg)
        except asyncio.QueueFull:
            with self.lock:
                self._drop(sub)

    def _drop(self, sub):
        """A client too slow to keep up is hung up on, never waited for (it resumes from its id)."""
        if sub in self._subs:
            self._subs.remove(sub)
        while True:
            try:
                sub.q.get_nowait()
            except (queue.Empty, asyncio.QueueEmpty):
                break
        sub.q.put_nowait(None)

    # -- subscribing -----------------------------------------------------------------------------
    def subscribe(self, kinds=None, loop=None):
        """A queue of (id, kind, data) tuples, None when dropped. `loop`: an asyncio queue fed on it.
        `kinds` None: every kind but status."""
        kinds = frozenset(kinds) if kinds is not None else frozenset(KINDS) - EPHEMERAL
        q = asyncio.Queue(self.maxsize) if loop is not None else queue.Queue(self.maxsize)
        sub = _Sub(q, loop, kinds)
        with self.lock:
            self._subs.append(sub)
        q.sub = sub
        return q

    def unsubscribe(self, q):
        with self.lock:
            sub = getattr(q, "sub", None)
            if sub in self._subs:
                self._subs.remove(sub)

    # -- reading back ----------------------------------------------------------------------------
    def since(self, after: int, kinds=None, limit=10_000) -> list[tuple]:
        """The journaled events after id `after`, oldest first, as (id, kind, data)."""
        sql, args = "SELECT id, kind, data FROM event_log WHERE id > ?", [after]
        if kinds is not None:
            kinds = [k for k in kinds if k not in EPHEMERAL]
            sql += " AND kind IN (%s)" % ",".join("?" * len(kinds))
            args += kinds
        sql += " ORDER BY id LIMIT ?"
        args.append(limit)
        with self.lock:
            return [tuple(r) for r in self.db.execute(sql, args).fetchall()]

    def bounds(self) -> tuple[int, int]:
        """(oldest kept id, newest id); (0, 0) when empty."""
        with self.lock:
            r = self.db.execute("SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM event_log").fetchone()
        return r[0], r[1]

    def close(self):
        """Hang up on every subscriber; close the log's own connection."""
        with self.lock:
            for sub in list(self._subs):
                if sub.loop is None:
                    self._drop(sub)
                else:
                    try:
                        sub.loop.call_soon_threadsafe(sub.q.put_nowait, None)
                    except RuntimeError:
                        pass
            self._subs.clear()
            if self._own:
                self.db.close()
