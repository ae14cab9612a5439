"""The ledger (registre des mises): every SQL statement on bets and settlements, in one place.

Called inside the journal's transactions (`Journal.tx`) by the table; nothing here decides a
rule, it records what the table decided. A bet row keeps, beside its body, where it stands on the
wheel's clock (`wheel_boot`, `wheel_ms`: the latest wheel instant it can have arrived, see
game.py) and, when its client gave one, its `Idempotency-Key` with the first answer given; who
placed it and who withdrew it (`placed_by`, `withdrawn_by`: the token's name and role, JSON).
"""

from __future__ import annotations

import json
import time

MIGRATIONS = (("wheel_boot", "TEXT"), ("wheel_ms", "REAL"), ("idem_key", "TEXT"), ("answer", "TEXT"),
              ("placed_by", "TEXT"), ("withdrawn_by", "TEXT"), ("cancel_boot", "TEXT"), ("cancel_ms", "REAL"))


class Ledger:
    def __init__(self, journal, wheel):
        self.j = journal
        self.wheel = wheel
        with self.j.tx() as db:
            have = {r[1] for r in db.execute("PRAGMA table_info(bets)")}
            for col, typ in MIGRATIONS:          # journals written before these columns existed
                if col not in have:
                    db.execute("ALTER TABLE bets ADD COLUMN %s %s" % (col, typ))
            db.execute("CREATE UNIQUE INDEX IF NOT EXISTS bets_idem ON bets (wheel, idem_key) WHERE idem_key IS NOT NULL")

    @property
    def db(self):
        return self.j.db

    # -- bets ----------------------------------------------------------------------------------
    def add(self, bid, player, bet, stake, status, spin, reason, where, idem_key=None, answer=None, by=None):
        self.db.execute("INSERT INTO bets (id, wheel, player, at, body, stake, status, spin, reason, wheel_boot, "
                        "wheel_ms, idem_key, answer, placed_by) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (bid, self.wheel, player, time.time(), json.dumps(bet, sort_keys=True), stake, status, spin,
                         reason, where[0], where[1], idem_key,
                         None if answer is None else json.dumps(answer, sort_keys=True, default=str),
                         None if by is None else json.dumps(by, sort_keys=True)))

    def answer_for(self, idem_key):
        """The first answer given to this Idempotency-Key, or None."""
        r = self.db.execute("SELECT answer FROM bets WHERE wheel=? AND idem_key=?", (self.wheel, idem_key)).fetchone()
        return None if r is None or r[0] is None else json.loads(r[0])

    def row(self, bid):
        return self.db.execute("SELECT * FROM bets WHERE id=? AND wheel=?", (bid, self.wheel)).fetchone()

    def set_status(self, bid, status, reason=None, spin=None, result=None, body=None):
        sets, args = ["status=?"], [status]
        for col, v in (("reason", reason), ("spin", spin), ("body", body)):
            if v is not None:
                sets.append(col + "=?")
                args.append(v if col != "body" else json.dumps(v, sort_keys=True))
        if result is not None:
            sets.append("result=?")
            args.append(json.dumps(result, sort_keys=True))
        self.db.execute("UPDATE bets SET %s WHERE id=?" % ", ".join(sets), args + [bid])

    def cancel(self, bid, where, by=None):
        """The bet was taken back, at the latest wheel instant `where` (boot, ms), by whom."""
        self.db.execute("UPDATE bets SET status='cancelled', cancel_boot=?, cancel_ms=?, withdrawn_by=? WHERE id=?",
                        (where[0], where[1], None if by is None else json.dumps(by, sort_keys=True), bid))

    def withdrawn_since(self, boot, ms):
        """Bets taken back in wheel boot `boot` at or after its instant `ms` (a call may undo them)."""
        return self.db.execute("SELECT id, player, stake, body, wheel_boot, wheel_ms, cancel_boot, cancel_ms FROM bets "
                               "WHERE wheel=? AND status='cancelled' AND cancel_boot=? AND cancel_ms>=? ORDER BY id",
                               (self.wheel, boot, ms)).fetchall()

    def reinstate(self, bid, reason):
        self.db.execute("UPDATE bets SET status='open', reason=? WHERE id=? AND status='cancelled'", (reason, bid))

    def reopen(self, bid, reason):
        self.db.execute("UPDATE bets SET status='open', spin=NULL, reason=? WHERE id=?", (reason, bid))

    def open_bets(self):
        return self.db.execute("SELECT id, player, wheel_boot, wheel_ms, stake, body FROM bets WHERE wheel=? AND status='open' "
                               "ORDER BY id", (self.wheel,)).fetchall()

    def on_layout(self):
        """Every open bet and every bet locked to a called spin (the table's `Tapis`)."""
        return self.db.execute("SELECT id, player, stake, wheel_boot, wheel_ms, body, status, spin FROM bets "
                               "WHERE wheel=? AND status IN ('open', 'locked') ORDER BY id", (self.wheel,)).fetchall()

    def lock(self, spin, ids):
        """These open bets are locked to `spin` (the call found them on the layout before it)."""
        self.db.executemany("UPDATE bets SET status='locked', spin=? WHERE id=? AND wheel=? AND status='open'",
                            [(spin, bid, self.wheel) for bid in ids])

    def unlock(self):
        self.db.execute("UPDATE bets SET status='open', spin=NULL WHERE wheel=? AND status='locked'", (self.wheel,))

    def hold_locked(self, reason):
        self.db.execute("UPDATE bets SET status='held', reason=? WHERE wheel=? AND status='locked'", (reason, self.wheel))

    def locked(self):
        """Every bet locked to a called spin (normally that one spin's), with its spin."""
        return self.db.execute("SELECT id, spin, body FROM bets WHERE wheel=? AND status='locked' ORDER BY id",
                               (self.wheel,)).fetchall()

    def body(self, bid):
        r = self.db.execute("SELECT body FROM bets WHERE id=?", (bid,)).fetchone()
        return None if r is None else json.loads(r[0])

    # -- settlements ---------------------------------------------------------------------------
    def settled(self, spin):
        return self.db.execute("SELECT 1 FROM settlements WHERE wheel=? AND spin=?", (self.wheel, spin)).fetchone() is not None

    def last_settled(self):
        return self.db.execute("SELECT MAX(spin) FROM settlements WHERE wheel=?", (self.wheel,)).fetchone()[0]

    def settle(self, spin, number, staked, paid, res):
        """The PRIMARY KEY (wheel, spin) makes a second settlement of a spin impossible."""
        self.db.execute("INSERT INTO settlements (wheel, spin, number, at, staked, paid, result) VALUES (?,?,?,?,?,?,?)",
                        (self.wheel, spin, number, time.time(), staked, paid, json.dumps(res, sort_keys=True)))
        for r in res["results"]:
            if not r.get("carried"):
                self.set_status(r["id"], "settled", result=r)

    # -- reads (outside transactions) -------------------------------------------------------------
    def on_table(self):
        agg = self.j.one("SELECT COUNT(*) AS n, COALESCE(SUM(stake),0) AS s FROM bets WHERE wheel=? AND status IN ('open','locked')",
                         (self.wheel,))
        held = self.j.one("SELECT COUNT(*) AS n FROM bets WHERE wheel=? AND status='held'", (self.wheel,))
        return agg["n"], agg["s"], held["n"]

    def get(self, bid):
        return self.j.one("SELECT * FROM bets WHERE id=? AND wheel=?", (bid, self.wheel))

    def find(self, status=None, spin=None, player=None, limit=500):
        sql, args = "SELECT * FROM bets WHERE wheel=?", [self.wheel]
        for col, v in (("status", status), ("spin", spin), ("player", player)):
            if v is not None and v != "":
                sql += " AND %s=?" % col
                args.append(v)
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(limit)
        return self.j.query(sql, args)

    def history(self, limit):
        return self.j.query("SELECT spin, number, at, staked, paid FROM settlements WHERE wheel=? ORDER BY spin DESC LIMIT ?",
                            (self.wheel, limit))

    def settlement(self, spin):
        return self.j.one("SELECT * FROM settlements WHERE wheel=? AND spin=?", (self.wheel, spin))
