"""The ledger (registre des mises): every SQL statement on bets and settlements, in one place.

A settlement is one `settlements` row (the number, the totals, the announcements, the payment
order, the prisoners and bets carried on: `settle_spin`'s answer but for its per-bet results)
and one `spin_results` row holding every result of the spin, in order, as one JSON array of
rows `[bet, label, staked, outcome, won, returned, lost, imprisoned, more]` (format 4: `label`
the id of the result's type and label in `result_labels`, a few hundred pairs ever; money in
integer cents; `more` null, or an object with what few results have: a called bet's chips, an
excess, a prison, a replay). One INSERT a spin: at 10,000 bets, a row per result cost more than
the rest of the settlement, and the type and label written out in each row half of its bytes
(docs/internals/journal.md). The view `all_results` shows them as rows (`pos` the index), with those of
schema 3 (format 3: `[bet, type, label, staked, ...]`) and of schema 2, which wrote one
`results` row per result; the settlement row refers to its results (`"results_in": "results"`);
one written before schema 2 holds its results in its JSON and is read back as it is.

A bet settled is not written again at its settlement (at 10,000 bets that UPDATE was the
settlement's dearest statement): the settlement row is `pending` while the bets locked to its
spin still say `locked` in their rows, and every read here says `settled` for them (the view
`bets_now` does the same in SQL). The next change to the locked bets (a call, an unlock, a
hold: `tidy`), when no bet is locked, writes `settled` into those rows and clears `pending`, so
at most one spin's bets are ever read that way, and the indexes stay those of the rows' status.

Called inside the journal's transactions (`Journal.tx`) by the table; nothing here decides a
rule, it records what the table decided. A bet row keeps, beside its body, where it stands on the
wheel's clock (`wheel_boot`, `wheel_ms`: the latest wheel instant it can have arrived, see
flow.py) and, when its client gave one, its `Idempotency-Key` with the first answer given; who
placed it and who withdrew it (`placed_by`, `withdrawn_by`: the token's name and role, JSON).
"""

from __future__ import annotations

import json
import time

import numpy as np

from host_tools.table.game import resultats
from host_tools.table.journal.jsontext import sorted_text, text
from host_tools.table.game.reglement import REGISTRY, Reglement

MIGRATIONS = (("wheel_boot", "TEXT"), ("wheel_ms", "REAL"), ("idem_key", "TEXT"), ("answer", "TEXT"),
              ("placed_by", "TEXT"), ("withdrawn_by", "TEXT"), ("cancel_boot", "TEXT"), ("cancel_ms", "REAL"),
              ("slip", "TEXT"))
# a terminal's slips (slips.py): the bets as sent, the status, the key and the first answer
SLIPS = ("CREATE TABLE IF NOT EXISTS slips (id TEXT PRIMARY KEY, wheel TEXT NOT NULL, player TEXT NOT NULL, "
         "at REAL NOT NULL, body TEXT NOT NULL, n INTEGER NOT NULL, stake INTEGER NOT NULL, status TEXT NOT NULL, "
         "reason TEXT, wheel_boot TEXT, wheel_ms REAL, idem_key TEXT, answer TEXT, placed_by TEXT, withdrawn_by TEXT)",
         "CREATE UNIQUE INDEX IF NOT EXISTS slips_idem ON slips (wheel, idem_key) WHERE idem_key IS NOT NULL",
         "CREATE INDEX IF NOT EXISTS bets_slip ON bets (slip) WHERE slip IS NOT NULL")


class Ledger:
    def __init__(self, journal, wheel):
        self.j = journal
        self.wheel = wheel
        self.labels = {}        # (type, label) -> its id in result_labels (committed ones only)
        self._pair_ids, self._pair_epoch = np.zeros(0, np.int64), None  # REGISTRY pair -> its id (committed)
        self.label_of = {}      # id -> [type, label]
        with self.j.tx() as db:
            have = {r[1] for r in db.execute("PRAGMA table_info(bets)")}
            for col, typ in MIGRATIONS:          # journals written before these columns existed
                if col not in have:
                    db.execute("ALTER TABLE bets ADD COLUMN %s %s" % (col, typ))
            db.execute("CREATE UNIQUE INDEX IF NOT EXISTS bets_idem ON bets (wheel, idem_key) WHERE idem_key IS NOT NULL")
            for statement in SLIPS:
                db.execute(statement)
            cols = [r[1] for r in db.execute("PRAGMA table_info(bets)")]
            for r in db.execute("SELECT id, type, label FROM result_labels"):
                self.labels[(r[1], r[2])] = r[0]
                self.label_of[r[0]] = [r[1], r[2]]
            db.execute("DROP VIEW IF EXISTS bets_now")
            db.execute("CREATE VIEW bets_now AS SELECT %s FROM bets b"
                       % ", ".join(STATUS + " AS status" if c == "status" else "b." + c for c in cols))

    @property
    def db(self):
        return self.j.db

    # -- bets ----------------------------------------------------------------------------------
    def add(self, bid, player, bet, stake, status, spin, reason, where, idem_key=None, answer=None, by=None):
        self.db.execute("INSERT INTO bets (id, wheel, player, at, body, stake, status, spin, reason, wheel_boot, "
                        "wheel_ms, idem_key, answer, placed_by) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (bid, self.wheel, player, time.time(), text(bet), stake, status, spin,
                         reason, where[0], where[1], idem_key,
                         None if answer is None else text(answer),
                         None if by is None else text(by)))

    def add_many(self, rows, status, where, by, slip):
        """Bets (id, player, bet, stake) of one slip, recorded with one statement."""
        at = time.time()
        by = None if by is None else text(by)
        self.db.executemany("INSERT INTO bets (id, wheel, player, at, body, stake, status, wheel_boot, wheel_ms, "
                            "placed_by, slip) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                            [(bid, self.wheel, player, at, text(bet), stake, status, where[0],
                              where[1], by, slip) for bid, player, bet, stake in rows])

    def slip_bets(self, slip):
        """The bets of a slip (id, status as it stands), in order of id."""
        rows = [dict(r) for r in self.db.execute("SELECT id, status, spin FROM bets WHERE wheel=? AND slip=? ORDER BY id",
                                                 (self.wheel, slip))]
        return self._now(rows, self.pending_in(self.db))

    def answer_for(self, idem_key):
        """The first answer given to this Idempotency-Key, or None."""
        r = self.db.execute("SELECT answer FROM bets WHERE wheel=? AND idem_key=?", (self.wheel, idem_key)).fetchone()
        return None if r is None or r[0] is None else json.loads(r[0])

    def row(self, bid):
        """A bet's row (a dict), its status as it stands (`settled` while its settlement is pending)."""
        r = self.db.execute("SELECT * FROM bets WHERE id=? AND wheel=?", (bid, self.wheel)).fetchone()
        return None if r is None else self._now([dict(r)], self.pending_in(self.db))[0]

    def pending_in(self, db):
        """The spins whose settlement is pending (their bets' rows still say `locked`): one at most."""
        return {r[0] for r in db.execute("SELECT spin FROM settlements WHERE wheel=? AND pending=1", (self.wheel,))}

    @staticmethod
    def _now(rows, pending):
        """Rows with their status as it stands: `locked` to a spin whose settlement is pending is `settled`."""
        if pending:
            for r in rows:
                if r is not None and r["status"] == "locked" and r["spin"] in pending:
                    r["status"] = "settled"
        return rows

    def tidy(self):
        """No bet is locked now (a call, an unlock or a hold is about to change the locked bets):
        the rows of the bets a pending settlement settled say `settled`, and none is pending."""
        if self.db.execute("SELECT 1 FROM settlements WHERE wheel=? AND pending=1 LIMIT 1", (self.wheel,)).fetchone():
            self.db.execute("UPDATE bets SET status='settled' WHERE wheel=? AND status='locked' AND spin IN "
                            "(SELECT spin FROM settlements WHERE wheel=? AND pending=1)", (self.wheel, self.wheel))
            self.db.execute("UPDATE settlements SET pending=0 WHERE wheel=? AND pending=1", (self.wheel,))

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
                        (where[0], where[1], None if by is None else text(by), bid))

    def withdrawn_since(self, boot, ms):
        """Bets taken back in wheel boot `boot` at or after its instant `ms` (a call may undo them)."""
        return self.db.execute("SELECT id, player, stake, body, wheel_boot, wheel_ms, cancel_boot, cancel_ms FROM bets "
                               "WHERE wheel=? AND status='cancelled' AND cancel_boot=? AND cancel_ms>=? ORDER BY id",
                               (self.wheel, boot, ms)).fetchall()

    def reinstate(self, bid, reason):
        self.db.execute("UPDATE bets SET status='open', reason=? WHERE id=? AND status='cancelled'", (reason, bid))
        self.db.execute("UPDATE slips SET status='open' WHERE id=(SELECT slip FROM bets WHERE id=?) AND status='withdrawn'",
                        (bid,))

    def reopen(self, bid, reason):
        self.db.execute("UPDATE bets SET status='open', spin=NULL, reason=? WHERE id=?", (reason, bid))

    def open_bets(self):
        return self.db.execute("SELECT id, player, wheel_boot, wheel_ms, stake, body FROM bets WHERE wheel=? AND status='open' "
                               "ORDER BY id", (self.wheel,)).fetchall()

    def on_layout(self):
        """Every open bet and every bet locked to a called spin (the table's `Tapis`), not those
        a pending settlement settled."""
        pending = self.pending_in(self.db)
        rows = self.db.execute("SELECT id, player, stake, wheel_boot, wheel_ms, body, status, spin FROM bets "
                               "WHERE wheel=? AND status IN ('open', 'locked') ORDER BY id", (self.wheel,)).fetchall()
        return [r for r in rows if not (r["status"] == "locked" and r["spin"] in pending)]

    def lock(self, spin, ids):
        """These open bets are locked to `spin` (the call found them on the layout before it)."""
        self.tidy()
        self.db.executemany("UPDATE bets SET status='locked', spin=? WHERE id=? AND wheel=? AND status='open'",
                            [(spin, bid, self.wheel) for bid in ids])

    def unlock(self):
        self.tidy()
        self.db.execute("UPDATE bets SET status='open', spin=NULL WHERE wheel=? AND status='locked'", (self.wheel,))

    def hold_locked(self, reason):
        self.tidy()
        self.db.execute("UPDATE bets SET status='held', reason=? WHERE wheel=? AND status='locked'", (reason, self.wheel))

    def with_zero_choice(self, ids):
        """{id: body} of these bets, the body read only where it names a choice at zero (None for
        the others: they have none). One statement for many: the stakes a zero imprisoned are
        read at the next result, 1,500 of them on a stadium's spin, most without a choice."""
        out = {}
        ids = list(ids)
        for k in range(0, len(ids), 500):
            part = ids[k:k + 500]
            for r in self.db.execute("SELECT id, body FROM bets WHERE id IN (%s) AND instr(body, '\"zero_choice\"') > 0"
                                     % ",".join("?" * len(part)), part):
                out[r[0]] = json.loads(r[1])
        for bid in ids:
            out.setdefault(bid, None)
        return out

    def body(self, bid):
        r = self.db.execute("SELECT body FROM bets WHERE id=?", (bid,)).fetchone()
        return None if r is None else json.loads(r[0])

    # -- settlements ---------------------------------------------------------------------------
    def settled(self, spin):
        return self.db.execute("SELECT 1 FROM settlements WHERE wheel=? AND spin=?", (self.wheel, spin)).fetchone() is not None

    def last_settled(self):
        return self.db.execute("SELECT MAX(spin) FROM settlements WHERE wheel=?", (self.wheel,)).fetchone()[0]

    def settle(self, spin, number, staked, paid, res, done=None):
        """Spin `spin` settled: `res` is settle_spin's answer without its `results` (and, from a
        `Reglement`, without its `payment_order`), `done` the `Settlement` (columns) they come
        from. The PRIMARY KEY (wheel, spin) makes a second settlement of a spin impossible.
        A `Reglement` is written in columns (format 5, resultats.py); `done` None: `res` holds
        its `results`, written as rows (format 4)."""
        packed = resultats.pack(done, self._label_id, self._labels_of) if isinstance(done, Reglement) else None
        if packed is None and isinstance(done, Reglement) and "payment_order" not in res:
            res = dict(res, payment_order=[done.payment(e) for e in done.pays])
        if packed is not None:
            header, data, mores, settled = packed
        else:
            rows, settled = (resultats.result_rows(done, self._label_id) if done is not None
                             else resultats.dict_rows(res, self._label_id))
        head = {k: v for k, v in res.items() if k not in ("results", "payment_order")}
        if packed is None:
            head["payments"] = [[p["id"], p["kind"], p["combination"], p["stake"], p["won"]] for p in res["payment_order"]]
        else:
            head["payments_in"] = "spin_results"
        head["results_in"] = "results"
        # the bets settled are exactly those locked to the spin (the table's layout in memory is
        # the journal's); should they differ, the step rolls back (and the table rebuilds its
        # layout from the journal) rather than settle the wrong bets. Their rows keep `locked`:
        # the settlement is `pending` (see the module docstring)
        n = self.db.execute("SELECT COUNT(*) FROM bets WHERE wheel=? AND spin=? AND status='locked'",
                            (self.wheel, spin)).fetchone()[0]
        if n != len(settled):
            raise RuntimeError("spin %s: %d bets locked in the journal, %d settled from the layout" % (spin, n, len(settled)))
        self.db.execute("INSERT INTO settlements (wheel, spin, number, at, staked, paid, result, pending) "
                        "VALUES (?,?,?,?,?,?,?,1)",
                        (self.wheel, spin, number, time.time(), staked, paid, sorted_text(head)))
        if packed is not None:
            self.db.execute("INSERT INTO spin_results (wheel, spin, n, rows, format, data) VALUES (?,?,?,?,5,?)",
                            (self.wheel, spin, json.loads(header)["n"], header, data))
            if mores:
                self.db.executemany("INSERT INTO result_mores (wheel, spin, k, more) VALUES (?,?,?,?)",
                                    [(self.wheel, spin, k, m) for k, m in enumerate(mores)])
            return
        self.db.execute("INSERT INTO spin_results (wheel, spin, n, rows, format) VALUES (?,?,?,?,4)",
                        (self.wheel, spin, len(rows), json.dumps(rows, ensure_ascii=False, separators=(",", ":"))))

    def _label_id(self, type_, label):
        """The `result_labels` id of (type, label), written now if new (kept in memory once its
        transaction commits: a rollback takes the row away)."""
        key = (type_, label)
        i = self.labels.get(key)
        if i is None:
            self.db.execute("INSERT OR IGNORE INTO result_labels (type, label) VALUES (?,?)", key)
            i = self.db.execute("SELECT id FROM result_labels WHERE type=? AND label=?", key).fetchone()[0]
            self.j.after_commit(lambda: (self.labels.__setitem__(key, i), self.label_of.__setitem__(i, list(key))))
        return i

    def _label_ids(self, keys):
        """`_label_id` of many (type, label) pairs at once: the new ones written with one statement
        and read back with one (a new table's first result names a couple of hundred)."""
        out = {k: self.labels[k] for k in keys if k in self.labels}
        todo = [k for k in keys if k not in out]
        if todo:
            self.db.executemany("INSERT OR IGNORE INTO result_labels (type, label) VALUES (?,?)", todo)
            want = set(todo)
            got = {(r[1], r[2]): r[0] for r in self.db.execute("SELECT id, type, label FROM result_labels")
                   if (r[1], r[2]) in want}
            out.update(got)

            def remember():             # once committed (a rollback takes the rows away)
                for k, i in got.items():
                    self.labels[k] = i
                    self.label_of[i] = list(k)
            self.j.after_commit(remember)
        return out

    def _labels_of(self, pairs):
        """The `result_labels` ids of the registry's (type, label) pairs (reglement.REGISTRY.pair
        numbers, an array): a gather from the ids known, `_label_ids` for the others."""
        if self._pair_epoch != REGISTRY.epoch:
            self._pair_ids, self._pair_epoch = np.zeros(0, np.int64), REGISTRY.epoch
        known = self._pair_ids
        if len(known) < len(REGISTRY.pair_names):
            known = self._pair_ids = np.concatenate((known, np.full(len(REGISTRY.pair_names) - len(known), -1, np.int64)))
        out = known[pairs]
        missing = np.flatnonzero(out < 0)
        if len(missing):
            names = REGISTRY.pair_names
            ks = np.unique(pairs[missing]).tolist()
            ids = self._label_ids([tuple(names[k]) for k in ks])
            fresh = {k: ids[tuple(names[k])] for k in ks}
            lut = known.copy()
            lut[ks] = [fresh[k] for k in ks]
            out = lut[pairs]
            epoch = REGISTRY.epoch

            def remember():             # once committed (a rollback takes the rows away)
                if self._pair_epoch == epoch:
                    for k, i in fresh.items():
                        self._pair_ids[k] = i
            self.j.after_commit(remember)
        return out

    def _named(self, i):
        """[type, label] of a `result_labels` id."""
        tl = self.label_of.get(i)
        if tl is None:
            r = self.j.one("SELECT type, label FROM result_labels WHERE id=?", (i,))
            tl = [None, None] if r is None else [r["type"], r["label"]]
        return tl

    def _rows3(self, rows, fmt):
        """`spin_results` rows as format 3's (type and label written out)."""
        if fmt == 3:
            return rows
        named = self._named
        return [[p[0], *named(p[1]), *p[2:]] for p in rows]

    def results(self, spin):
        """Spin `spin`'s results, in order (dicts, as settle_spin gives them)."""
        packed = self._packed(spin)
        if packed is not None:
            return [_result(r) for r in packed]
        rows = self.j.query("SELECT pos, %s FROM results WHERE wheel=? AND spin=?" % _RESULT, (self.wheel, spin))
        rows.sort(key=lambda r: r["pos"])
        return [result_of(r) for r in rows]

    def _packed(self, spin):
        """Spin `spin`'s `spin_results` rows (lists), or None if it has none (schema 1 or 2)."""
        r = self.j.one("SELECT rows, format, data FROM spin_results WHERE wheel=? AND spin=?", (self.wheel, spin))
        if r is None:
            return None
        if r["format"] == 5:
            return self._columns(spin, r)[0]
        return self._rows3(json.loads(r["rows"]), r["format"])

    def _more_of(self, spin):
        """Row k of spin `spin`'s `result_mores` (JSON text), read when asked."""
        def more(k):
            m = self.j.one("SELECT more FROM result_mores WHERE wheel=? AND spin=? AND k=?", (self.wheel, spin, k))
            return None if m is None else m["more"]
        return more

    def _columns(self, spin, r):
        """A format 5 `spin_results` row read back: (rows of format 3, payment rows)."""
        mores = {m["k"]: m["more"] for m in self.j.query("SELECT k, more FROM result_mores WHERE wheel=? AND spin=?",
                                                         (self.wheel, spin))}
        return resultats.unpack(r["rows"], r["data"], [mores[k] for k in range(len(mores))], self._named)

    def _packed_one(self, spin, bid):
        """Bet `bid`'s row in spin `spin`'s `spin_results` (its first, not carried: the bet's own;
        SQLite finds `["<id>",` in the text, Python decodes that row alone), or None."""
        r = self.j.one("SELECT rows, data, format FROM spin_results WHERE wheel=? AND spin=?", (self.wheel, spin))
        if r is not None and r["format"] == 5:        # its place in the ids' column, its fields at that place
            return resultats.one(r["rows"], r["data"], bid, self._more_of(spin), self._named)
        needle = "[" + json.dumps(bid, ensure_ascii=False) + ","
        r = self.j.one("SELECT substr(rows, instr(rows, ?), 65536) AS part, instr(rows, ?) AS at, format "
                       "FROM spin_results WHERE wheel=? AND spin=?", (needle, needle, self.wheel, spin))
        if r is None or not r["at"]:
            return None
        try:
            p = _DECODER.raw_decode(r["part"])[0]
        except ValueError:
            return None
        if isinstance(p, list) and r["format"] == 4 and len(p) == 9:
            p = self._rows3([p], 4)[0]
        if not isinstance(p, list) or len(p) != 10 or p[0] != bid or (p[9] or {}).get("carried"):
            return None
        return p

    def _with_results(self, rows):
        """Bet rows with their result as JSON text in `result`, wherever the journal keeps it:
        the bet row (schema 1), its `results` row (2), its spin's `spin_results` row (3), read
        once a spin."""
        spins = {}
        for r in rows:
            if r is None or r.get("result") or r.get("r_bet") is not None or r["status"] != "settled":
                continue
            spin = r["spin"]
            if len(rows) == 1:           # one bet: its row found in the spin's text (no decoding of all)
                p = self._packed_one(spin, r["id"])
                if p is not None:
                    r["result"] = json.dumps(_result(p))
                    continue
            if spin not in spins:
                packed = self._packed(spin)
                spins[spin] = {} if packed is None else {p[0]: p for p in packed if not (p[9] or {}).get("carried")}
            p = spins[spin].get(r["id"])
            if p is not None:
                r["result"] = json.dumps(_result(p))
        return [_with_result(r) for r in rows]

    # -- reads (outside transactions) -------------------------------------------------------------
    def on_table(self):
        agg = self.j.one("SELECT COUNT(*) AS n, COALESCE(SUM(stake),0) AS s FROM bets WHERE wheel=? AND status IN ('open','locked') "
                         "AND NOT (status='locked' AND spin IN (SELECT spin FROM settlements WHERE wheel=? AND pending=1))",
                         (self.wheel, self.wheel))
        held = self.j.one("SELECT COUNT(*) AS n FROM bets WHERE wheel=? AND status='held'", (self.wheel,))
        return agg["n"], agg["s"], held["n"]

    def get(self, bid):
        """A bet's row, with its result (the `result` column, or its `results` row as a dict)."""
        with self.j.lock:
            row = self.j.one(_BET_ROW + " WHERE b.id=? AND b.wheel=?", (bid, self.wheel))
            return self._with_results(self._now([row], self.pending_in(self.db)))[0]

    def find(self, status=None, spin=None, player=None, limit=500, slip=None):
        sql, args = _BET_ROW + " WHERE b.wheel=?", [self.wheel]
        if status == "settled":         # settled in its row, or locked to a spin whose settlement is pending
            sql += " AND (b.status='settled' OR (b.status='locked' AND b.spin IN (%s)))" % _PENDING
            args.append(self.wheel)
        elif status == "locked":
            sql += " AND b.status='locked' AND b.spin NOT IN (%s)" % _PENDING
            args.append(self.wheel)
        elif status is not None and status != "":
            sql += " AND b.status=?"
            args.append(status)
        for col, v in (("spin", spin), ("player", player), ("slip", slip)):
            if v is not None and v != "":
                sql += " AND b.%s=?" % col
                args.append(v)
        sql += " ORDER BY b.id DESC LIMIT ?"
        args.append(limit)
        with self.j.lock:
            return self._with_results(self._now(self.j.query(sql, args), self.pending_in(self.db)))

    def history(self, limit):
        return self.j.query("SELECT spin, number, at, staked, paid FROM settlements WHERE wheel=? ORDER BY spin DESC LIMIT ?",
                            (self.wheel, limit))

    def settlement(self, spin):
        """Spin `spin`'s settlement as settle_spin gave it (with `results` and `payment_order`),
        beside the row's `number`, `at`, `staked`, `paid`; None if it is not settled."""
        row = self.j.one("SELECT * FROM settlements WHERE wheel=? AND spin=?", (self.wheel, spin))
        if row is None:
            return None
        res = json.loads(row["result"])
        if res.pop("results_in", None) is not None:
            if res.pop("payments_in", None) is not None:            # format 5: both in the spin's columns
                r = self.j.one("SELECT rows, format, data FROM spin_results WHERE wheel=? AND spin=?", (self.wheel, spin))
                rows, pays = self._columns(spin, r)
                res["results"] = [_result(p) for p in rows]
                res["payment_order"] = [dict(zip(_PAYMENT, p)) for p in pays]
            else:
                res["results"] = self.results(spin)
                res["payment_order"] = [dict(zip(_PAYMENT, p)) for p in res.pop("payments")]
        return {"number": row["number"], "at": row["at"], "staked": row["staked"], "paid": row["paid"], **res}


_PENDING = "SELECT spin FROM settlements WHERE wheel=? AND pending=1"
# a bet's status as it stands, in SQL (the view `bets_now`)
STATUS = ("CASE WHEN b.status='locked' AND EXISTS (SELECT 1 FROM settlements s WHERE s.wheel=b.wheel "
          "AND s.spin=b.spin AND s.pending=1) THEN 'settled' ELSE b.status END")
_PAYMENT = ("id", "kind", "combination", "stake", "won")
_RESULT = "bet, type, label, staked, outcome, won, returned, lost, imprisoned, more"
_BET_ROW = ("SELECT b.*, r.bet AS r_bet, r.type AS r_type, r.label AS r_label, r.staked AS r_staked, "
            "r.outcome AS r_outcome, r.won AS r_won, r.returned AS r_returned, r.lost AS r_lost, "
            "r.imprisoned AS r_imprisoned, r.more AS r_more FROM bets b "
            "LEFT JOIN results r ON r.wheel=b.wheel AND r.bet=b.id AND r.spin=b.spin AND b.status='settled'")


def result_of(r, p=""):
    """A `results` row (columns named with prefix `p`) as settle_spin's result dict."""
    out = {"id": r[p + "bet"], "type": r[p + "type"], "label": r[p + "label"], "staked": r[p + "staked"],
           "outcome": r[p + "outcome"], "won": r[p + "won"], "returned": r[p + "returned"], "lost": r[p + "lost"],
           "imprisoned": r[p + "imprisoned"], "paid": r[p + "won"] + r[p + "returned"]}
    if r[p + "more"]:
        out.update(json.loads(r[p + "more"]))
    return out


def _with_result(r):
    """A bet row with its result as JSON text in `result`, wherever the journal keeps it."""
    if r is None:
        return None
    if r.get("r_bet") is not None and not r.get("result"):
        r["result"] = json.dumps(result_of(r, "r_"))
    for k in [k for k in r if k.startswith("r_")]:
        del r[k]
    return r


_DECODER = json.JSONDecoder()


def _result(p):
    """A `spin_results` row (list) as settle_spin's result dict."""
    out = {"id": p[0], "type": p[1], "label": p[2], "staked": p[3], "outcome": p[4], "won": p[5], "returned": p[6],
           "lost": p[7], "imprisoned": p[8], "paid": p[5] + p[6]}
    if p[9]:
        out.update(p[9])
    return out
