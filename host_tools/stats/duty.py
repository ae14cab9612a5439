"""Le croupier de service (croupier on duty): who spun the wheel when, as the chef records it.

One journal row per change: from `at` on, `croupier` is on duty at `wheel` until the next row
for that wheel. Croupiers rotate about every 30 minutes (the course manual); a dealer's signature
is looked for per croupier, so every game is attributed to whoever was on duty at its launch.
The daemon's host service writes these rows when the chef sets the croupier (phase 2); the
statistics only read them, and the synthetic journals write them the same way.
"""

from __future__ import annotations

import bisect

SCHEMA = """CREATE TABLE IF NOT EXISTS croupier_duty (
    id INTEGER PRIMARY KEY, wheel TEXT NOT NULL, at REAL NOT NULL, croupier TEXT NOT NULL, set_by TEXT)"""
INDEX = "CREATE INDEX IF NOT EXISTS croupier_duty_at ON croupier_duty (wheel, at)"


def create(db):
    db.execute(SCHEMA)
    db.execute(INDEX)


def set_on_duty(db, wheel: str, croupier: str, at: float, set_by: str | None = None):
    """Record that `croupier` takes the wheel at `at` (epoch seconds); "" means nobody."""
    db.execute("INSERT INTO croupier_duty (wheel, at, croupier, set_by) VALUES (?,?,?,?)",
               (wheel, float(at), str(croupier), set_by))


class Roster:
    """The duty rows of one wheel; `at(t)` is the croupier on duty at time t (None: unknown)."""

    def __init__(self, rows):
        rows = sorted((float(at), name) for at, name in rows)
        self._t = [r[0] for r in rows]
        self._who = [r[1] or None for r in rows]

    @classmethod
    def read(cls, db, wheel: str) -> "Roster":
        have = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='croupier_duty'").fetchone()
        if not have:
            return cls([])
        return cls(db.execute("SELECT at, croupier FROM croupier_duty WHERE wheel=? ORDER BY at, id", (wheel,)).fetchall())

    def at(self, t: float):
        i = bisect.bisect_right(self._t, t) - 1
        return self._who[i] if i >= 0 else None

    def __len__(self):
        return len(self._t)
