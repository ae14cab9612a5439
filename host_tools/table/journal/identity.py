"""The journal's identity on the floor: which events are the same events.

A table's events are numbered by its journal (`event_log.id`). Those ids alone do not name an
event for good: a table started again on a new, empty journal numbers from 1 again, and a journal
restored from a backup numbers again from where the backup stopped, over ids the floor already
holds for other events. So every opening of the journal file gives the events journaled from then
on a new random identity (`journal_ids`: the first event id it covers, the identity). An event keeps
the identity it was journaled under for ever, so a resend after a restart or an outage is the
same message (`<table>:<journal>:<event id>`, dropped by the broker and the floor), while the
events of a new journal or of a restored backup's next life never collide with anything the floor
holds. A journal that already had events before identities existed keeps "" for them (the
floor's rows from those days have it too). `meta('journal_id')` is the identity now in use.
"""

from __future__ import annotations

import bisect
import secrets
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS journal_ids (
    first_id INTEGER PRIMARY KEY, journal TEXT NOT NULL, opened_at REAL NOT NULL)
"""
LEGACY = ""


def new_identity() -> str:
    """16 hex characters from the OS's random source: 64 bits, never equal by chance in practice."""
    return secrets.token_hex(8)


def last_id(db) -> int:
    """The highest event id the journal ever gave (AUTOINCREMENT's counter: survives pruning)."""
    r = db.execute("SELECT seq FROM sqlite_sequence WHERE name='event_log'").fetchone()
    m = db.execute("SELECT COALESCE(MAX(id), 0) FROM event_log").fetchone()[0]
    return max(int(r[0]) if r else 0, int(m))


def open_journal(db, clock=time.time, identity=None) -> str:
    """Called once when the daemon opens its journal (inside a transaction, after event_log
    exists): a new identity for the events from the next id on. Returns it."""
    db.execute(SCHEMA)
    first = last_id(db) + 1
    known = db.execute("SELECT COUNT(*) FROM journal_ids").fetchone()[0]
    if not known and first > 1:                  # events journaled before identities: the legacy one
        db.execute("INSERT INTO journal_ids (first_id, journal, opened_at) VALUES (1, ?, ?)", (LEGACY, clock()))
    ident = identity or new_identity()
    # no event has an id >= first: an identity opened at the same point and never used is replaced
    db.execute("INSERT OR REPLACE INTO journal_ids (first_id, journal, opened_at) VALUES (?,?,?)",
               (first, ident, clock()))
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('journal_id', ?)", (ident,))
    return ident


class Identities:
    """Event id -> the journal identity it was journaled under (the table is small: one row per
    opening of the journal)."""

    def __init__(self, rows):
        rows = sorted((int(f), j) for f, j in rows)
        self.firsts = [f for f, _ in rows]
        self.names = [j for _, j in rows]

    @classmethod
    def read(cls, db) -> "Identities":
        return cls(db.execute("SELECT first_id, journal FROM journal_ids").fetchall())

    def of(self, event_id: int) -> str:
        i = bisect.bisect_right(self.firsts, int(event_id)) - 1
        return self.names[i] if i >= 0 else LEGACY

    @property
    def current(self) -> str:
        return self.names[-1] if self.names else LEGACY
