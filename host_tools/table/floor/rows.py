"""The journal's rows the floor wants, read under the journal's lock and built into envelopes:
the reading half of the table's link to the floor (publisher.py is the shell that sends them).

Each row carries what the floor needs to trust it without asking back: the coup's evidence (boot,
launch, drop), the croupier on duty, the wheel the table had when it was journaled (a wheel moved
away keeps its events' serial), the settlement's own totals, and `prev` — the row sent before it
under the same journal identity (journal/identity.py)."""

from __future__ import annotations

import bisect
import json
import logging
import sqlite3

from host_tools.floor.link import envelope as E

from host_tools.table.floor import outbox as O
from host_tools.table.journal import identity as JI

log = logging.getLogger("cylindre.floor")


class OutboxRows:
    """Reads `event_log` after a cursor for one table (`host`: its journal and its wheel now)."""

    def __init__(self, host, site: str, table: str, serial: str | None = None):
        self.host = host
        self.j = host.j
        self.site, self.table = site, table
        self.given_serial = serial              # --wheel-serial, the last resort

    @property
    def wheel(self) -> str:
        return self.host.d.wheel

    def read(self, cursor: int, limit: int):
        """The outbox rows after `cursor` as (id, (kind, payload, journal) or None), the journal's
        newest id when read, and how many rows were read."""
        out = []
        with self.j.lock:
            db = self.j.db
            ids = JI.Identities.read(db)
            hi = db.execute("SELECT COALESCE(MAX(id), 0) FROM event_log").fetchone()[0]
            rows = db.execute(f"SELECT id, at, kind, data FROM event_log WHERE id > ? AND id <= ? AND ({O.ROW_FILTER}) "
                              "ORDER BY id LIMIT ?", (cursor, hi, limit)).fetchall()
            before = None                       # (id, journal) of the row before, in this batch
            for eid, at, kind, data in rows:
                prev = self._prev(db, ids, eid, before)
                before = (eid, ids.of(eid))
                serial, epoch = self._wheel_at(db, at)
                try:
                    body = json.loads(data)
                except ValueError:
                    out.append((eid, None))
                    continue
                spin = O.wants_evidence(kind, body)
                evidence = croupier = settled = None
                if spin is not None:
                    evidence = dict(self._evidence(db, spin, body.get("ev")), epoch=epoch)
                    croupier = self._croupier(db, at)
                if kind == "settlement" and isinstance(body, dict):
                    settled = db.execute("SELECT staked, paid, at FROM settlements WHERE wheel=? AND spin=?",
                                         (self.wheel, body.get("spin"))).fetchone()
                msg = O.to_message(kind, body, at, evidence, croupier, serial,
                                   tuple(settled) if settled is not None else None)
                if msg is None:
                    out.append((eid, None))
                    continue
                try:
                    journal = ids.of(eid)
                    payload = E.build(self.site, self.table, serial, eid, msg[0], at, msg[1], journal, prev)
                    if len(payload) > E.MAX_PAYLOAD:
                        raise E.EnvelopeError(f"{len(payload)} bytes (the floor takes {E.MAX_PAYLOAD} at most)")
                except (E.EnvelopeError, ValueError) as e:
                    log.error("floor: event %d cannot be sent (%s); skipped", eid, e)
                    out.append((eid, None))
                    continue
                out.append((eid, (msg[0], payload, journal)))
        return out, hi, len(rows)

    @staticmethod
    def _prev(db, ids, eid, before) -> int:
        """The outbox row published before `eid` under the same journal identity (0: none)."""
        journal = ids.of(eid)
        if before is not None and before[1] == journal:
            return before[0]
        i = bisect.bisect_right(ids.firsts, eid) - 1
        first = ids.firsts[i] if i >= 0 else 0
        r = db.execute(f"SELECT MAX(id) FROM event_log WHERE id < ? AND id >= ? AND ({O.ROW_FILTER})",
                       (eid, first)).fetchone()
        return int(r[0] or 0)

    def last_sent(self, cursor):
        """(event id, journal) of the last outbox row at or below the cursor: the broker has it."""
        with self.j.lock:
            r = self.j.db.execute(f"SELECT MAX(id) FROM event_log WHERE id <= ? AND ({O.ROW_FILTER})",
                                  (cursor,)).fetchone()
            if not r or not r[0]:
                return None
            return int(r[0]), JI.Identities.read(self.j.db).of(r[0])

    def _evidence(self, db, spin, ev):
        """The boot, launch and drop of the coup `spin` (the wheel's events of the same boot)."""
        wheel = self.wheel
        r = db.execute("SELECT boot FROM events WHERE wheel=? AND spin=? AND ev=? ORDER BY rowid DESC LIMIT 1",
                       (wheel, spin, ev)).fetchone()
        if r is None:
            return {"boot": None}
        boot = r[0]
        out = {"boot": boot or None}
        for kind in ("launch", "drop"):
            x = db.execute("SELECT body FROM events WHERE wheel=? AND boot=? AND spin=? AND ev=? ORDER BY seq DESC LIMIT 1",
                           (wheel, boot, spin, kind)).fetchone()
            out[kind] = json.loads(x[0]) if x else None
        return out

    def _croupier(self, db, at):
        try:
            r = db.execute("SELECT croupier FROM croupier_duty WHERE wheel=? AND at <= ? ORDER BY at DESC, id DESC LIMIT 1",
                           (self.wheel, at)).fetchone()
        except sqlite3.OperationalError:        # no duty table: no croupier was ever named
            return None
        return (r[0] or None) if r else None

    def serial(self):
        """The serial of the wheel now: the one the table accepted (its journal's `wheels`), else
        what the wheel said in its WELCOME, else --wheel-serial."""
        ident = getattr(self.host.d, "wheel_identity", None)
        ident = ident() if callable(ident) else ident
        for s in ((ident or {}).get("serial"), (self.host.d.welcome or {}).get("serial"), self.given_serial):
            if isinstance(s, str) and E.SERIAL.fullmatch(s):
                return s
        return None

    def _wheel_at(self, db, at):
        """(serial, counter epoch) of the wheel the table had when a row was journaled (a wheel
        moved away keeps its events' serial), else the wheel's now."""
        try:
            r = db.execute("SELECT serial, epoch FROM wheels WHERE wheel=? AND since <= ? "
                           "ORDER BY n DESC LIMIT 1", (self.wheel, at)).fetchone()
        except sqlite3.OperationalError:        # a journal without the wheels' book
            r = None
        if r is None:
            return self.serial(), None
        serial = r[0] if isinstance(r[0], str) and E.SERIAL.fullmatch(r[0]) else None
        return (serial or self.serial()), r[1]

    def backlog(self, cursor: int) -> int:
        """How many rows the floor wants after `cursor`."""
        with self.j.lock:
            return self.j.db.execute(f"SELECT COUNT(*) FROM event_log WHERE id > ? AND ({O.ROW_FILTER})",
                                     (cursor,)).fetchone()[0]
