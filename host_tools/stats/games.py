"""A journal read back as the wheel told it: games, voids, launches — what the statistics use.

Reads the daemon's SQLite journal read-only (`events` as the wheel sent them, `frames` to leave
out results the daemon refused as anomalies, `settlements` for results recovered from the wheel's
flash after a power cut, `croupier_duty` for who was spinning). Nothing here trusts the bodies:
an event that is not a JSON object, or a result whose number is not 0..36, is counted in
`skipped` and left out, never a crash.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cylindre.rules import wheel as W

from .duty import Roster


class Record:
    """What one wheel's journal says: `games` (results in order), `voids`, `launches`."""

    def __init__(self, wheel, games, voids, launches, skipped=0, wheels=(), provenance=None):
        self.wheel = wheel
        self.games = games
        self.voids = voids
        self.launches = launches
        self.skipped = skipped
        self.wheels = list(wheels)
        self.provenance = provenance    # where these games come from (provenance()), for the report


def _int(v, lo=None, hi=None):
    if type(v) is not int:
        return None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        return None
    return v


def _dir(v):
    return v if v in (1, -1) else 0


def open_ro(path) -> sqlite3.Connection:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"pas de journal à {path}")
    db = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        db.execute("SELECT 1 FROM events LIMIT 1")
    except sqlite3.DatabaseError as e:
        db.close()
        raise ValueError(f"{path} n'est pas un journal Cylindre ({e})") from None
    return db


def read(path, wheel: str | None = None, until: float | None = None) -> Record:
    """The record of `wheel` (default: the wheel with the most events) in the journal at `path`,
    up to instant `until` (None: all of it)."""
    db = open_ro(path)
    try:
        return read_db(db, wheel, until)
    finally:
        db.close()


def read_db(db, wheel: str | None = None, until: float | None = None) -> Record:
    """The record, read in one transaction: its games and its provenance (the digest of the same
    rows) are one state of the journal, however busy the table is."""
    mine = not db.in_transaction
    if mine:
        db.execute("BEGIN")
    try:
        return _read(db, wheel, until)
    finally:
        if mine:
            db.execute("COMMIT")


def _read(db, wheel, until) -> Record:
    lim = float("inf") if until is None else until
    wheels = [r[0] for r in db.execute("SELECT wheel, COUNT(*) AS n FROM events GROUP BY wheel ORDER BY n DESC, wheel")]
    if wheel is None:
        wheel = wheels[0] if wheels else ""
    roster = Roster.read(db, wheel)
    rows = db.execute(
        "SELECT e.at, e.ev, e.spin, e.body, f.kind FROM events e LEFT JOIN frames f ON f.id = e.frame_id "
        "WHERE e.wheel=? AND e.at<=? ORDER BY e.at, e.boot, e.seq", (wheel, lim)).fetchall()
    games, voids, launches = [], [], []
    skipped = 0
    open_spins: dict = {}           # spin -> its game in the making (launch seen, no end yet)
    for r in rows:
        try:
            ev = json.loads(r["body"])
        except (TypeError, ValueError):
            skipped += 1
            continue
        if not isinstance(ev, dict):
            skipped += 1
            continue
        kind, spin = r["ev"], _int(ev.get("spin"))
        if kind == "launch" and spin is not None:
            g = {"spin": spin, "at": r["at"], "launch_at": r["at"], "number": None, "source": "event",
                 "ball_dir": _dir(ev.get("ball_dir")), "rotor_dir": _dir(ev.get("rotor_dir")),
                 "rotor_rpm_x10": _int(ev.get("rotor_rpm_x10"), 0), "launch_lap_us": _int(ev.get("lap_us"), 1),
                 "release_pocket": _int(ev.get("release_pocket"), 0, 36), "laps": None,
                 "drop_angle_x10": None, "drop_pocket": None,
                 "violations": [v for v in ev.get("violations") or [] if isinstance(v, str)]
                 if isinstance(ev.get("violations"), list) else [],
                 "croupier": roster.at(r["at"])}
            open_spins[spin] = g
            launches.append(g)
        elif kind == "drop" and spin in open_spins:
            g = open_spins[spin]
            g["laps"] = _int(ev.get("laps"), 0)
            a = _int(ev.get("drop_angle_x10"), 0, 3599)
            g["drop_angle_x10"] = a
            g["drop_pocket"] = _int(ev.get("drop_pocket"), 0, 36)
        elif kind == "result":
            number = _int(ev.get("number"), 0, 36)
            if number is None or spin is None:
                skipped += 1
                continue
            if r["kind"] == "anomaly":      # the daemon refused it (a result for a voided spin)
                continue
            g = open_spins.pop(spin, None)
            if g is None:                   # a result whose launch is not journaled
                g = {"spin": spin, "launch_at": None, "source": "event", "ball_dir": 0, "rotor_dir": 0,
                     "rotor_rpm_x10": None, "launch_lap_us": None, "release_pocket": None, "laps": None,
                     "drop_angle_x10": None, "drop_pocket": None, "violations": [], "croupier": roster.at(r["at"])}
            g["number"] = number
            g["at"] = r["at"]
            if g["laps"] is None:
                g["laps"] = _int(ev.get("laps"), 0)
            games.append(g)
        elif kind == "void" and spin is not None:
            g = open_spins.pop(spin, None)
            reason = ev.get("reason") if isinstance(ev.get("reason"), str) else "?"
            voids.append({"spin": spin, "at": r["at"], "reason": reason,
                          "croupier": g["croupier"] if g else roster.at(r["at"])})
    # results recovered from the wheel's flash after a power cut: no result event, a settlement
    have = {g["spin"] for g in games}
    for s in db.execute("SELECT spin, number, at, result FROM settlements WHERE wheel=? AND at<=? ORDER BY spin", (wheel, lim)):
        if s["spin"] in have or _int(s["number"], 0, 36) is None:
            continue
        try:
            recovered = "recovered" in (json.loads(s["result"]) or {})
        except (TypeError, ValueError, AttributeError):
            recovered = False
        if recovered:
            games.append({"spin": s["spin"], "at": s["at"], "launch_at": None, "number": s["number"], "source": "history",
                          "ball_dir": 0, "rotor_dir": 0, "rotor_rpm_x10": None, "launch_lap_us": None,
                          "release_pocket": None, "laps": None, "drop_angle_x10": None, "drop_pocket": None,
                          "violations": [], "croupier": roster.at(s["at"])})
    games.sort(key=lambda g: (g["at"], g["spin"]))
    return Record(wheel, games, voids, launches, skipped, wheels, provenance(db, wheel, until))


def provenance(db, wheel: str, until: float | None = None) -> dict:
    """Where a report's games come from: the journal's digest of them (table/journal/seal.py), the
    wheels the table knew under this id (serial, key, counter, since when, accepted by), the
    firmware its boots announced, and this software's version."""
    from host_tools import version
    from host_tools.table.journal.seal import digest
    lim = float("inf") if until is None else until
    known = []
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='wheels'").fetchone():
        known = [{"n": r["n"], "serial": r["serial"], "key": r["key"], "epoch": r["epoch"], "since": r["since"],
                  "accepted_by": r["accepted_by"], "first_spin": r["first_spin"]}
                 for r in db.execute("SELECT * FROM wheels WHERE wheel=? AND since<=? ORDER BY n", (wheel, lim))]
    firmware = {}
    for r in db.execute("SELECT at, body FROM events WHERE wheel=? AND ev='boot' AND at<=? ORDER BY at", (wheel, lim)):
        try:
            ev = json.loads(r["body"])
        except (TypeError, ValueError):
            continue
        if not isinstance(ev, dict):
            continue
        fw = " ".join(str(ev[k]) for k in ("fw", "board") if isinstance(ev.get(k), str) and ev[k]) or "non annoncé"
        f = firmware.setdefault(fw, {"firmware": fw, "first_at": r["at"], "last_at": r["at"], "boots": 0})
        f["last_at"], f["boots"] = r["at"], f["boots"] + 1
    return {"seal": digest(db, wheel, until), "wheels": known, "firmware": list(firmware.values()),
            "software": f"Cylindre {version()}"}


def pocket_distance(frm: int, to: int, direction: int) -> int:
    """Pockets from `frm` to `to` counted the way the ball runs (clockwise for 1 or 0)."""
    d = W.position(to) - W.position(frm)
    return (d if direction >= 0 else -d) % 37
