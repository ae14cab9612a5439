"""The game at the table (le jeu): the betting window, the wheel's events, settlement, exactly once.

Driven by two inputs only: bets from the API (`place`, `cancel`) and the wheel's events
(`on_event`, in order, as the link delivers them). Each call is one journal transaction; the
state that must survive a restart (phase, spin, imprisoned stakes, carried replays) is saved in
the same transaction, so after a kill the daemon resumes exactly where the journal says.

Phases: `closed` (table closed: bets refused) -> `betting` ("faites vos jeux": bets accepted,
also while the ball runs) -> `no_more_bets` (the wheel called rien ne va plus for spin N: open
bets are locked to N, new ones are refused as poussette and recorded) -> the result settles N
and betting reopens; a void (misspin) unlocks N's bets, which play on the relaunch.
"""

from __future__ import annotations

import json
import logging
import threading
import time

from cylindre.rules.bets import BetError, parse_bet, zero_choice
from cylindre.rules.limits import Limits
from cylindre.rules.settle import settle_spin
from cylindre.spin.controller import HISTORY

from .journal import Journal

log = logging.getLogger("cylindre.table")

CLOSED, BETTING, NO_MORE = "closed", "betting", "no_more_bets"
MAX_STAKE = 10**11           # cents: refuse absurd amounts before they reach the rules
CHOICES = ("prison", "partage")


class Refused(Exception):
    """A bet the table refuses now (HTTP 409): `code` is table_closed, poussette or not_open."""

    def __init__(self, code, message, bet=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.bet = bet


class Invalid(Exception):
    """A malformed request (HTTP 400)."""


class NotFound(Exception):
    """No such bet or spin (HTTP 404)."""


class Table:
    def __init__(self, journal: Journal, wheel: str, limits: Limits | None = None, publish=None):
        self.j = journal
        self.wheel = wheel
        self.limits = limits or Limits()
        self.publish = publish or (lambda kind, body: None)
        self.lock = threading.RLock()
        with self.j.tx():
            st = self.j.load_state(wheel)
            if st is None:
                st = {"phase": CLOSED, "spin": None, "locked_spin": None, "prisoners": [],
                      "carry": [], "next_bet": 1, "boot": None, "last_number": None,
                      "last_launch": None}
                self.j.save_state(wheel, st)
        self.st = st

    # -- bets --------------------------------------------------------------------------------
    def place(self, body: dict) -> dict:
        """Validate and record a bet; raise Invalid (400) or Refused (409, recorded as refused)."""
        if not isinstance(body, dict):
            raise Invalid("a bet is a JSON object")
        player = body.get("player")
        if not isinstance(player, str) or not player.strip() or len(player) > 64:
            raise Invalid("player: a name of 1 to 64 characters is required")
        bet = {k: v for k, v in body.items() if k not in ("player", "id")}
        for k in ("stake", "unit"):
            if k in bet and (not isinstance(bet[k], int) or isinstance(bet[k], bool)):
                raise Invalid(f"{k}: integer cents are required (got {bet[k]!r})")
            if k in bet and not 0 < bet[k] <= MAX_STAKE:
                raise Invalid(f"{k}: must be between 1 and {MAX_STAKE} cents")
        choice = bet.get("zero_choice")
        if choice is not None:
            if not (choice in CHOICES or (isinstance(choice, dict) and set(choice) == {"move"}
                                           and isinstance(choice["move"], str))):
                raise Invalid('zero_choice: "prison", "partage" or {"move": "<even chance>"}')
            try:
                zero_choice(choice, "zero_choice")      # the rules' own reading ({"move": "vert"} is refused)
            except BetError as e:
                raise Invalid(e.message) from None
        with self.lock, self.j.tx() as db:
            bid = "B%06d" % self.st["next_bet"]
            bet["id"] = bid
            rules_bet = {k: v for k, v in bet.items() if k != "zero_choice"}
            try:
                parsed = parse_bet(rules_bet, self.limits)
            except BetError as e:
                raise Invalid(e.message) from None
            if choice is not None and parsed.family != "simple":
                # the rules settle a choice at zero on even chances only (settle_spin refuses it)
                raise Invalid("zero_choice: %s is not an even chance; a choice at zero (prison, partage, "
                              "move) applies only to rouge, noir, pair, impair, manque and passe" % parsed.label)
            phase = self.st["phase"]
            status, reason = "open", None
            if phase == CLOSED:
                status, reason = "refused", "table_closed"
            elif phase == NO_MORE:
                status, reason = "refused", "poussette"
            self.st["next_bet"] += 1
            db.execute("INSERT INTO bets (id, wheel, player, at, body, stake, status, spin, reason) "
                       "VALUES (?,?,?,?,?,?,?,?,?)",
                       (bid, self.wheel, player, time.time(), json.dumps(bet, sort_keys=True),
                        parsed.stake, status, self.st["locked_spin"] if status == "refused" else None, reason))
            self.j.save_state(self.wheel, self.st)
            out = {"id": bid, "player": player, "label": parsed.label, "stake": parsed.stake,
                   "played": getattr(parsed, "played", parsed.stake), "status": status, "bet": bet}
        if status == "refused":
            msg = ("rien ne va plus: the bet came after the call (poussette), it is refused"
                   if reason == "poussette" else "the table is closed")
            log.warning("bet %s of %s refused (%s): %s %d cents", bid, player, reason, parsed.label, parsed.stake)
            self.publish("bet", {**out, "reason": reason})
            raise Refused(reason, msg, out)
        log.info("bet %s of %s: %s, %d cents", bid, player, parsed.label, parsed.stake)
        self.publish("bet", out)
        return out

    def cancel(self, bid: str) -> dict:
        with self.lock, self.j.tx() as db:
            row = db.execute("SELECT * FROM bets WHERE id=? AND wheel=?", (bid, self.wheel)).fetchone()
            if row is None:
                raise NotFound(f"no bet {bid}")
            if row["status"] != "open":
                raise Refused("not_open", f"bet {bid} is {row['status']}: only an open bet can be withdrawn")
            db.execute("UPDATE bets SET status='cancelled' WHERE id=?", (bid,))
        log.info("bet %s withdrawn", bid)
        self.publish("cancel", {"id": bid})
        return {"id": bid, "status": "cancelled"}

    def resolve_held(self, bid, action) -> dict:
        """The supervisor's decision on a `held` bet (its result was lost with the wheel's power):
        `refund` (the stake goes back to the player, status `refunded`) or `play` (back on the
        layout, status `open`: it plays the next spin)."""
        if action not in ("refund", "play"):
            raise Invalid('action: "refund" or "play"')
        with self.lock, self.j.tx() as db:
            row = db.execute("SELECT * FROM bets WHERE id=? AND wheel=?", (bid, self.wheel)).fetchone()
            if row is None:
                raise NotFound(f"no bet {bid}")
            if row["status"] != "held":
                raise Refused("not_held", f"bet {bid} is {row['status']}: only a held bet is resolved by hand")
            reason = "%s; supervisor: %s" % (row["reason"], action)
            if action == "refund":
                result = {"id": bid, "outcome": "refunded", "staked": row["stake"], "returned": row["stake"],
                          "lost": 0, "won": 0, "imprisoned": 0}
                db.execute("UPDATE bets SET status='refunded', reason=?, result=? WHERE id=?",
                           (reason, json.dumps(result, sort_keys=True), bid))
            else:
                db.execute("UPDATE bets SET status='open', spin=NULL, reason=? WHERE id=?", (reason, bid))
        log.warning("held bet %s resolved by the supervisor: %s", bid, action)
        self.publish("bet", {"id": bid, "status": "refunded" if action == "refund" else "open"})
        return self.bet(bid)

    # -- the wheel's events ------------------------------------------------------------------------
    def on_event(self, boot, seq, ev, frame_rec) -> bool:
        """Journal one delivered event and act on it, atomically. False if it was a resend."""
        try:
            return self._on_event(boot, seq, ev, frame_rec)
        except BaseException:
            with self.lock:     # the transaction rolled back: so does the state in memory
                self.st = self.j.load_state(self.wheel)
            raise

    def _on_event(self, boot, seq, ev, frame_rec):
        said = []
        paid = self._paid = []
        with self.lock, self.j.tx() as db:
            fid = self.j.frame(self.wheel, frame_rec)
            if not self.j.event(self.wheel, boot, seq, ev, fid):
                return False
            kind = ev.get("ev")
            spin = ev.get("spin")
            st = self.st
            before = st.get("boot")
            st["boot"] = boot or before     # the wheel boot of the last event taken
            if kind == "boot":
                if before is not None and boot != before:
                    said += self._recover(db, boot, seq, ev)
                if isinstance(spin, int):
                    st["boot_spin"] = spin
            elif kind == "launch":
                if st["locked_spin"] is not None and st["locked_spin"] != spin:
                    log.warning("launch of spin %s while spin %s has no result: its bets play again", spin, st["locked_spin"])
                    self._unlock(db)
                st["spin"] = spin
                st["last_launch"] = spin
            elif kind == "rnvp":
                if st["phase"] == BETTING:
                    self._lock_bets(db, spin)
                    said.append("rien ne va plus")
            elif kind == "result" and self._voided(db, boot, spin):
                self._anomaly(db, fid, spin, "result %r of spin %s, which the wheel voided: ignored (the bets"
                              " of the relaunch are not settled with it)" % (ev.get("number"), spin))
            elif kind == "result":
                said += self._settle(db, spin, ev.get("number"))
            elif kind == "void" and self._settled(db, spin):
                # a restart just after a result the host already has: the result stands
                log.warning("void (%s) of spin %s, which is already settled: ignored", ev.get("reason"), spin)
            elif kind == "void":
                if st["locked_spin"] == spin:
                    self._unlock(db)
                if st["phase"] != CLOSED:
                    st["phase"] = BETTING
                said.append("coup nul (%s) : les mises restent en jeu pour le prochain lancer" % ev.get("reason"))
            said = [x if isinstance(x, tuple) else (spin, x) for x in said]
            for n, text in said:
                self.j.announce(self.wheel, n, text)
            self.j.save_state(self.wheel, st)
        self.publish("wheel", ev)
        for n, text in said:
            log.info("[spin %s] %s", n, text)
            if text.startswith("tout est payé") or text == "faites vos jeux":
                for body in paid:       # the payments go between the winners and "tout est payé"
                    self.publish("settlement", body)
                paid = []
            self.publish("announce", {"spin": n, "text": text})
        for body in paid:
            self.publish("settlement", body)
        return True

    def _lock_bets(self, db, spin):
        self.st["phase"] = NO_MORE
        self.st["locked_spin"] = spin
        db.execute("UPDATE bets SET status='locked', spin=? WHERE wheel=? AND status='open'", (spin, self.wheel))

    def _unlock(self, db):
        db.execute("UPDATE bets SET status='open', spin=NULL WHERE wheel=? AND status='locked'", (self.wheel,))
        self.st["locked_spin"] = None

    def _settled(self, db, spin):
        return db.execute("SELECT 1 FROM settlements WHERE wheel=? AND spin=?", (self.wheel, spin)).fetchone() is not None

    def _voided(self, db, boot, spin):
        """Did this boot of the wheel void `spin`? (A boot's counter only goes up, so a void and a
        result of one spin number in one boot are the same spin; another boot may reuse the number
        after its flash record was lost.) A void of a spin already settled changed nothing."""
        if not isinstance(spin, int) or self._settled(db, spin):
            return False
        return db.execute("SELECT 1 FROM events WHERE wheel=? AND boot=? AND spin=? AND ev='void' LIMIT 1",
                          (self.wheel, boot or "", spin)).fetchone() is not None

    def _anomaly(self, db, fid, spin, why):
        """An event the table must not act on (the wheel contradicts itself): its frame stays in
        the journal as kind `anomaly` with the reason, and the log says it loudly."""
        db.execute("UPDATE frames SET kind='anomaly', reason=? WHERE id=?", (why, fid))
        log.error("anomaly from the wheel: %s", why)

    # -- a power cut of the wheel (docs/daemon.md, "Recovery") -------------------------------------
    def _recover(self, db, boot, seq, ev):
        """The wheel booted anew: what its old boot had not yet delivered died in its RAM. Its
        `boot` event lists the games its flash kept (`history`); settle from it, in spin order,
        every result the journal lacks, and release or hold the bets locked to a lost spin."""
        st = self.st
        locked = st["locked_spin"]
        row = db.execute("SELECT MAX(spin) FROM settlements WHERE wheel=?", (self.wheel,)).fetchone()
        last_settled = row[0]
        # lost results can only be of spins from `floor` on: every result before the last launch
        # heard (or the last settlement, or the previous boot's counter) came in order before it
        known = [v for v in (st.get("spin"), None if last_settled is None else last_settled + 1,
                             None if st.get("boot_spin") is None else st["boot_spin"] + 1) if isinstance(v, int)]
        if not known:
            return []       # this journal has followed no spin of this wheel: nothing it could lose
        floor = max(known)
        games = _games(ev.get("history"))
        said = []
        counter = ev.get("spin")
        lacks = (games is not None and last_settled is not None and ev.get("interrupted") != last_settled
                 and (len(games) < HISTORY or games[0][0] <= last_settled)
                 and last_settled not in [g[0] for g in games])
        if games is None or not isinstance(counter, int) or counter < floor - 1 or lacks:
            if games is None or not isinstance(counter, int):
                why = "the wheel sent no readable history of its games"
            elif counter < floor - 1:
                why = "the wheel's spin counter went back to %d (its flash record was lost)" % counter
            else:
                why = "the wheel's history lacks spin %s, settled here (its flash record is not the one it had)" % last_settled
            log.error("the wheel restarted (boot %s) and %s: results of spins from %d on cannot be recovered",
                      boot, why, floor)
            if locked is not None and ev.get("interrupted") != locked:
                said.append(self._hold(db, locked, why))
            return said
        complete = len(games) < HISTORY or games[0][0] <= floor
        mine = {g[0] for g in games}
        if locked is not None and locked not in mine:
            if not complete:
                said.append(self._hold(db, locked, "its result may be older than the %d games the wheel keeps" % HISTORY))
            elif ev.get("interrupted") != locked:
                # the spin ended without a result (a void the power cut kept from us)
                self._unlock(db)
                if st["phase"] != CLOSED:
                    st["phase"] = BETTING
                log.warning("spin %s ended without a result before the wheel restarted: its bets play again", locked)
                said.append((locked, "coup nul : les mises restent en jeu pour le prochain lancer"))
            # interrupted by this restart: the void (restart) that follows releases the bets
        if not complete:
            # results the wheel no longer holds came before these: settling these would judge the
            # imprisoned stakes and replays out of order; the supervisor reads GET /wheel/history
            log.error("the wheel restarted (boot %s): results of spins from %d on may be older than its last %d games;"
                      " nothing settled from its history; imprisoned stakes and replays need the supervisor's check",
                      boot, floor, HISTORY)
            return said
        for spin, number in games:
            if spin < floor or self._settled(db, spin):
                continue
            log.warning("spin %s: result %s recovered from the wheel's flash after its restart", spin, number)
            said.append((spin, "coup %d : résultat retrouvé dans la mémoire du cylindre après une coupure" % spin))
            said += [(spin, text) for text in self._settle(db, spin, number, lock_open=False,
                                                           source={"from": "history", "boot": boot, "seq": seq})]
            if spin > (st.get("spin") or 0):
                st["spin"] = spin
        return said

    def _hold(self, db, spin, why):
        """Bets locked to a spin whose result is unknown: neither paid nor played again."""
        reason = "result of spin %s unknown after the wheel restarted: %s" % (spin, why)
        db.execute("UPDATE bets SET status='held', reason=? WHERE wheel=? AND status='locked'", (reason, self.wheel))
        self.st["locked_spin"] = None
        if self.st["phase"] != CLOSED:
            self.st["phase"] = BETTING
        log.error("bets of spin %s are held for the supervisor: %s", spin, why)
        return (spin, "coup %s : mises retenues pour le chef de table (résultat inconnu)" % spin)

    def _settle(self, db, spin, number, lock_open=True, source=None):
        """Settle spin `spin` once: the PRIMARY KEY (wheel, spin) makes a second time impossible."""
        if not isinstance(number, int) or not 0 <= number <= 36:
            log.error("result of spin %s without a valid number: %r", spin, number)
            return []
        if self._settled(db, spin):
            log.warning("spin %s is already settled: result ignored", spin)
            if self.st["locked_spin"] == spin:
                # bets locked to a spin number settled before: the wheel's counter went back (its
                # flash record was replaced). Never pay twice, never leave them hanging.
                return [self._hold(db, spin, "spin %s was settled before: the wheel's spin counter went back"
                                   " (its flash record was lost or replaced)" % spin)[1]]
            return []
        st = self.st
        if st["locked_spin"] != spin and lock_open:
            if st["phase"] == BETTING:
                log.warning("result of spin %s without rien ne va plus: locking the open bets now", spin)
            self._unlock(db)
            self._lock_bets(db, spin)
        rows = db.execute("SELECT id, body FROM bets WHERE wheel=? AND status='locked' AND spin=? ORDER BY id",
                          (self.wheel, spin)).fetchall()
        bets, choices = [], {}
        for r in rows:
            b = json.loads(r["body"])
            zc = b.pop("zero_choice", None)
            if zc is not None and _even_chance(b, self.limits):
                choices[b["id"]] = zc   # (a journal from before placing checked it may hold others: moot)
            bets.append(b)
        bets += st["carry"]
        for p in st["prisoners"]:       # a prisoner keeps the choice its player gave with the bet
            row = db.execute("SELECT body FROM bets WHERE id=?", (p.get("id"),)).fetchone()
            if row is not None:
                zc = json.loads(row["body"]).get("zero_choice")
                if zc is not None:
                    choices[p["id"]] = zc
        try:
            res = settle_spin(number, bets, st["prisoners"], choices or None, self.limits)
        except BetError as e:
            # a bet valid when placed but not now (limits changed): refuse it and settle the rest
            log.error("spin %s: %s; that bet is returned", spin, e.message)
            bad = e.bet
            db.execute("UPDATE bets SET status='refused', reason=? WHERE id=?", ("invalid at settlement: " + e.message, bad))
            bets = [b for b in bets if b.get("id") != bad]
            res = settle_spin(number, bets, st["prisoners"], {k: v for k, v in choices.items() if k != bad} or None, self.limits)
        if source is not None:
            res = dict(res, recovered=source)
        fresh = [r for r in res["results"] if not r.get("carried")]
        staked = sum(r["staked"] for r in fresh)
        paid = sum(r["paid"] for r in res["results"])
        db.execute("INSERT INTO settlements (wheel, spin, number, at, staked, paid, result) VALUES (?,?,?,?,?,?,?)",
                   (self.wheel, spin, number, time.time(), staked, paid, json.dumps(res, sort_keys=True)))
        for r in res["results"]:
            if r.get("carried"):
                continue
            db.execute("UPDATE bets SET status='settled', result=? WHERE id=?", (json.dumps(r, sort_keys=True), r["id"]))
        st["prisoners"] = res["prisoners"]
        st["carry"] = res["carry"]
        if st["locked_spin"] == spin:
            st["locked_spin"] = None
        st["last_number"] = number
        if st["phase"] != CLOSED and st["locked_spin"] is None:
            st["phase"] = BETTING
        t = res["totals"]
        log.info("spin %s settled: number %d, %d bets, staked %d, paid %d, lost %d, en prison %d (cents)",
                 spin, number, len(res["results"]), t["staked"], t["paid"], t["lost"], t["imprisoned"])
        said = list(res["announcements"])
        said.append("faites vos jeux")
        self._paid.append({"spin": spin, "number": number, "totals": res["totals"],
                           "results": res["results"], "payment_order": res["payment_order"],
                           "paying_croupier": res["paying_croupier"]})
        return said

    # -- table open / closed (the wheel is told by the daemon) --------------------------------------
    def set_open(self, is_open: bool):
        with self.lock, self.j.tx():
            st = self.st
            if is_open and st["phase"] == CLOSED:
                st["phase"] = BETTING
                text = "faites vos jeux"
            elif not is_open and st["phase"] != CLOSED:
                if st["locked_spin"] is not None:
                    self._unlock(self.j.db)
                st["phase"] = CLOSED
                text = "la table est fermée"
            else:
                return
            self.j.announce(self.wheel, st["spin"], text)
            self.j.save_state(self.wheel, st)
        log.info(text)
        self.publish("announce", {"spin": self.st["spin"], "text": text})

    # -- reads ---------------------------------------------------------------------------------
    def state(self) -> dict:
        with self.lock:
            st = dict(self.st)
            agg = self.j.one("SELECT COUNT(*) AS n, COALESCE(SUM(stake),0) AS s FROM bets WHERE wheel=? AND status IN ('open','locked')",
                             (self.wheel,))
            held = self.j.one("SELECT COUNT(*) AS n FROM bets WHERE wheel=? AND status='held'", (self.wheel,))
        return {"wheel": self.wheel, "phase": st["phase"], "spin": st["spin"], "locked_spin": st["locked_spin"],
                "last_number": st["last_number"], "bets_on_table": agg["n"], "stakes_on_table": agg["s"], "bets_held": held["n"],
                "prisoners": st["prisoners"], "carry": st["carry"]}

    def bet(self, bid):
        r = self.j.one("SELECT * FROM bets WHERE id=? AND wheel=?", (bid, self.wheel))
        if r is None:
            raise NotFound(f"no bet {bid}")
        return _bet_row(r)

    def bets(self, status=None, spin=None, player=None, limit=500):
        sql, args = "SELECT * FROM bets WHERE wheel=?", [self.wheel]
        if status:
            sql += " AND status=?"
            args.append(status)
        if spin is not None:
            sql += " AND spin=?"
            args.append(spin)
        if player:
            sql += " AND player=?"
            args.append(player)
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(limit)
        return [_bet_row(r) for r in self.j.query(sql, args)]

    def history(self, limit=10):
        rows = self.j.query("SELECT spin, number, at, staked, paid FROM settlements WHERE wheel=? ORDER BY spin DESC LIMIT ?",
                            (self.wheel, limit))
        return rows

    def recall(self, spin: int) -> dict:
        """A spin with its evidence (the wheel's events, the raw frames) and its settlement."""
        evs = self.j.query("SELECT e.boot, e.seq, e.at, e.ev, e.body, f.raw FROM events e LEFT JOIN frames f ON f.id = e.frame_id "
                           "WHERE e.wheel=? AND e.spin=? ORDER BY e.at, e.seq", (self.wheel, spin))
        st = self.j.one("SELECT * FROM settlements WHERE wheel=? AND spin=?", (self.wheel, spin))
        if not evs and st is None:
            raise NotFound(f"no spin {spin} in the journal")
        bets = self.bets(spin=spin, limit=100000)
        said = self.j.query("SELECT at, text FROM announcements WHERE wheel=? AND spin=? ORDER BY id", (self.wheel, spin))
        return {"wheel": self.wheel, "spin": spin,
                "events": [{"boot": e["boot"], "seq": e["seq"], "received_at": e["at"], "event": json.loads(e["body"]),
                            "frame_hex": (e["raw"] or b"").hex()} for e in evs],
                "settlement": None if st is None else {"number": st["number"], "at": st["at"], "staked": st["staked"],
                                                        "paid": st["paid"], **json.loads(st["result"])},
                "bets": bets, "announcements": said}


def _even_chance(bet, limits):
    try:
        return parse_bet(bet, limits).family == "simple"
    except BetError:
        return False            # settle_spin says what is wrong with it


def _games(history):
    """The wheel's `history` as sorted (spin, number) pairs, or None if absent or malformed."""
    if not isinstance(history, list):
        return None
    out = []
    for g in history:
        if not isinstance(g, dict):
            return None
        spin, number = g.get("spin"), g.get("number")
        if not (isinstance(spin, int) and isinstance(number, int) and 0 <= number <= 36) or isinstance(spin, bool):
            return None
        out.append((spin, number))
    out.sort()
    return out


def _bet_row(r):
    out = {"id": r["id"], "player": r["player"], "placed_at": r["at"], "bet": json.loads(r["body"]),
           "stake": r["stake"], "status": r["status"], "spin": r["spin"], "reason": r["reason"]}
    if r.get("result"):
        out["result"] = json.loads(r["result"])
    return out
