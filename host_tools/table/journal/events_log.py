"""The published events, numbered and journaled, so a display that reconnects misses nothing.

Every event the table publishes (announce, bet, cancel, slip, settlement, wheel, link; and the pit's
alerts, raised or acknowledged: api/pages.py) becomes a row of
the `event_log` table *in the transaction of the change it reports* (the daemon and the host call
the table inside one `Journal.tx`): an event and its money change commit together or not at all.
Live subscribers get it only once that transaction has committed (`Journal.after_commit`), in
commit order, so a client never sees an event whose change rolled back; an SSE client that
reconnects with `Last-Event-ID: N` is sent the journaled events after N, then the live ones.
Status events (the wheel's heartbeat, twice a second) are a live gauge: sent only to clients that
ask for them, never journaled, and without an id, so they never move a client's resume point.
The oldest rows beyond `KEEP` are pruned, never one the casino floor has not yet acknowledged
when the table publishes to a floor (`hold_for_floor`: the rows above `meta('floor_cursor')`, the
floor's outbox, floor/publisher.py). Each opening of the journal gives the events from then on a
new identity on the floor (journal/identity.py). Two kinds are journaled for the floor only and never sent
to a display: `audit` (every audit row, audit.py) and `table` (open/close, limits, croupier).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time

from host_tools.table.journal import identity as journal_identity
from host_tools.table.journal.jsontext import event_text

EPHEMERAL = frozenset({"status"})
KINDS = ("announce", "bet", "cancel", "slip", "settlement", "wheel", "link", "alert", "status")
FLOOR_ONLY = frozenset({"audit", "table"})      # journaled for the floor, never streamed to a display
CURSOR = "floor_cursor"                         # meta key: the highest event id the floor's broker acknowledged
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
    """The publisher the daemon is built with (`publish`), and the subscriptions of the live stream."""

    def __init__(self, journal, maxsize=2000, keep=KEEP, clock=time.time):
        self.j = journal
        self.lock = threading.RLock()           # the subscribers; the rows are under the journal's lock
        self.maxsize, self.keep, self.clock = maxsize, keep, clock
        self._subs: list[_Sub] = []
        self._n = 0
        self.hold_for_floor = False             # pruning keeps the rows the floor has not acknowledged
        with self.j.tx() as db:
            db.execute(SCHEMA)
            self.journal_id = journal_identity.open_journal(db, clock)   # this opening's identity

    # -- publishing ------------------------------------------------------------------------------
    def publish(self, kind, body):
        """Journal the event in the open transaction (or its own) and hand it to the live
        subscribers once that commits; a status is handed over at once, never journaled."""
        data = event_text(body)
        if kind in EPHEMERAL:
            self._deliver((None, kind, data))
            return None
        with self.j.tx() as db:
            eid = db.execute("INSERT INTO event_log (at, kind, data) VALUES (?,?,?)",
                             (self.clock(), kind, data)).lastrowid
            self._n += 1
            if self._n % PRUNE_EVERY == 0:
                upto = eid - self.keep
                if self.hold_for_floor:
                    upto = min(upto, self._cursor(db))
                db.execute("DELETE FROM event_log WHERE id <= ?", (upto,))
            self.j.after_commit(lambda msg=(eid, kind, data): self._deliver(msg))
        return eid

    publish.in_transaction = True   # the Table calls it inside the change's transaction (table.py)

    def _deliver(self, msg):
        kind = msg[1]
        with self.lock:
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
        """The journaled (committed) events after id `after`, oldest first, as (id, kind, data).
        `kinds` None: every kind a display may see (not the floor's own, FLOOR_ONLY)."""
        sql, args = "SELECT id, kind, data FROM event_log WHERE id > ?", [after]
        if kinds is None:
            sql += " AND kind NOT IN (%s)" % ",".join("?" * len(FLOOR_ONLY))
            args += sorted(FLOOR_ONLY)
        else:
            kinds = [k for k in kinds if k not in EPHEMERAL]
            sql += " AND kind IN (%s)" % ",".join("?" * len(kinds))
            args += kinds
        sql += " ORDER BY id LIMIT ?"
        args.append(limit)
        with self.j.lock:                       # never inside another thread's open transaction
            return [tuple(r) for r in self.j.db.execute(sql, args).fetchall()]

    def floor_cursor(self) -> int:
        """The highest event id the floor's broker acknowledged, in order (0: none yet)."""
        with self.j.lock:
            return self._cursor(self.j.db)

    def advance_floor_cursor(self, eid: int) -> int:
        """Move the floor's cursor up to `eid` (never down), durably; returns the cursor."""
        with self.j.tx() as db:
            now = self._cursor(db)
            if eid > now:
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (CURSOR, str(int(eid))))
                now = eid
        return now

    @staticmethod
    def _cursor(db) -> int:
        r = db.execute("SELECT value FROM meta WHERE key=?", (CURSOR,)).fetchone()
        return int(r[0]) if r else 0

    def identities(self) -> "journal_identity.Identities":
        """Which journal identity each event id was journaled under (journal/identity.py)."""
        with self.j.lock:
            return journal_identity.Identities.read(self.j.db)

    def bounds(self) -> tuple[int, int]:
        """(oldest kept id, newest id); (0, 0) when empty."""
        with self.j.lock:
            r = self.j.db.execute("SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM event_log").fetchone()
        return r[0], r[1]

    def close(self):
        """Hang up on every subscriber."""
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
