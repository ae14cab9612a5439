"""The table limits in force (minimum et maximum), journaled: a change made over HTTP
(`PUT /table/limits`) survives a restart of the daemon.

At start, a `--limits` file (or `limits` in the config) sets the limits and is journaled as the
limits in force; without one, the limits last journaled apply (or else the house defaults).
"""

from __future__ import annotations

import json
import time

SCHEMA = "CREATE TABLE IF NOT EXISTS table_limits (wheel TEXT PRIMARY KEY, at REAL NOT NULL, body TEXT NOT NULL)"


class LimitsStore:
    def __init__(self, journal, wheel, clock=time.time):
        self.j, self.wheel, self.clock = journal, wheel, clock
        with self.j.tx() as db:
            db.execute(SCHEMA)

    def load(self) -> dict | None:
        """The limits last journaled for this wheel ({kind: {"min", "max"}}), or None."""
        r = self.j.one("SELECT body FROM table_limits WHERE wheel=?", (self.wheel,))
        return None if r is None else json.loads(r["body"])

    def save(self, limits: dict):
        """Journal the limits in force (in the open transaction, or its own)."""
        with self.j.tx() as db:
            db.execute("INSERT OR REPLACE INTO table_limits (wheel, at, body) VALUES (?,?,?)",
                       (self.wheel, self.clock(), json.dumps(limits, sort_keys=True)))
