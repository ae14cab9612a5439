"""The game at the table (le jeu): bets in, the wheel's events in, settlement exactly once.

Driven by three inputs: bets from the API (`place`, `cancel`, `consent`), the wheel's STATUS
frames (`on_status`: the evidence that betting is open, game.Window) and its events (`on_event`,
in order, as a source of wheel events delivers them). Each call is one journal transaction; the
state that must survive a restart (phase, spin, imprisoned stakes, carried replays) is saved in
the same transaction, so after a kill the daemon resumes exactly where the journal says. The
rules of the window are in game.py, the SQL in ledger.py.

Phases: `closed` (bets refused; only an explicit open reopens) -> `betting` (bets accepted on
fresh evidence from the wheel, also while the ball runs) -> `no_more_bets` (the wheel called rien
ne va plus for spin N: open bets placed before the call are locked to N, those at or after it,
however late the call arrives, are refused as poussette) -> the result settles N and betting
reopens; a void (misspin) unlocks N's bets, which play on the relaunch.
"""

from __future__ import annotations

import json
import logging
import threading
import time

from cylindre.link import protocol as pr
from cylindre.link.protocol import HISTORY
from cylindre.rules.bets import BetError, parse_bet, zero_choice
from cylindre.rules.limits import Limits
from cylindre.rules.settle import settle_spin

from . import game
from .game import BETTING, CLOSED, NO_MORE
from .journal import Journal
from .ledger import Ledger

log = logging.getLogger("cylindre.table")

MAX_STAKE = 10**11           # cents: refuse absurd amounts before they reach the rules
CHOICES = ("prison", "partage")

# what a player may say in a bet (the rules' words and their aliases); anything else is refused
BET_FIELDS = ("player", "type", "bet", "numbers", "number", "which", "stake", "unit", "replay", "rejouer",
              "zero_choice", "chance", "chances", "final", "form", "forme", "k", "neighbours", "neighbors",
              "voisins", "numero", "centre", "center", "a_placer", "payes_a_placer", "paye_a_placer", "placed")
# what only the table (or the chef de table) sets
STATE_FIELDS = ("id", "carried", "status", "locked", "spin", "result", "reason", "played", "label", "at",
                "placed_at", "wheel_boot", "wheel_ms", "consent", "supervisor_consent", "chef_consent", "chef")
CONSENT_FIELDS = ("consent", "supervisor_consent", "chef_consent", "chef")
MAX_TEXT = 64
MAX_LIST = 37
MAX_KEY = 128
_REFUSALS = {
    "table_closed": "the table is closed",
    "poussette": "rien ne va plus: the bet came after the call (poussette), it is refused",
    "wheel_not_heard": "no fresh word from the wheel that betting is open (link slow or down): the bet is refused",
}


class Refused(Exception):
    """A bet the table refuses now (HTTP 409): `code` is table_closed, poussette, wheel_not_heard, not_open..."""

    def __init__(self, code, message, bet=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.bet = bet


class Invalid(Exception):
    """A malformed request (HTTP 400)."""


class NotFound(Exception):
    """No such bet or spin (HTTP 404)."""


def esc(text) -> str:
    """A client's string as it may appear in a log line: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def parse_bet_request(body) -> tuple:
    """A client's bet, checked before anything is recorded: (player, bet dict, zero choice).

    Framework-free (the HTTP layer only hands over the decoded JSON). Refuses, naming the field:
    a field the rules do not know, a field only the table sets (`carried`, `status`, `consent`,
    ...: consent for a straddle is the chef de table's, POST /bets/{id}/consent), wrong types,
    control characters in the player's name, strings over 64 characters, lists over 37 items."""
    if not isinstance(body, dict):
        raise Invalid("a bet is a JSON object")
    for k in body:
        if k in CONSENT_FIELDS:
            raise Invalid("%s: consent to a straddle is the chef de table's, given with POST /bets/{id}/consent" % k)
        if k in STATE_FIELDS:
            raise Invalid("%s: set by the table, never by a player" % k)
        if k not in BET_FIELDS:
            raise Invalid("%s: unknown field (a bet has %s)" % (esc(k)[:40], ", ".join(BET_FIELDS)))
    player = body.get("player")
    if not isinstance(player, str) or not player.strip() or len(player) > MAX_TEXT:
        raise Invalid("player: a name of 1 to 64 characters is required")
    if not player.isprintable():
        raise Invalid("player: control characters (newline, tab, ...) are not allowed in a name")
    bet = {k: v for k, v in body.items() if k != "player"}
    for k in ("stake", "unit"):
        if k in bet and (not isinstance(bet[k], int) or isinstance(bet[k], bool)):
            raise Invalid(f"{k}: integer cents are required (got {bet[k]!r})"[:200])
        if k in bet and not 0 < bet[k] <= MAX_STAKE:
            raise Invalid(f"{k}: must be between 1 and {MAX_STAKE} cents")
    for k, v in body.items():
        _check_value(k, v, 0)
    choice = bet.get("zero_choice")
    if choice is not None:
        if not (choice in CHOICES or (isinstance(choice, dict) and set(choice) == {"move"}
                                       and isinstance(choice["move"], str))):
            raise Invalid('zero_choice: "prison", "partage" or {"move": "<even chance>"}')
        try:
            zero_choice(choice, "zero_choice")      # the rules' own reading ({"move": "vert"} is refused)
        except BetError as e:
            raise Invalid(e.message) from None
    return player, bet, choice


def _check_value(k, v, depth):
    if depth > 2:
        raise Invalid("%s: nested too deep" % k)
    if isinstance(v, str):
        if len(v) > MAX_TEXT:
            raise Invalid("%s: at most %d characters" % (k, MAX_TEXT))
    elif isinstance(v, list):
        if len(v) > MAX_LIST:
            raise Invalid("%s: at most %d items" % (k, MAX_LIST))
        for x in v:
            _check_value(k, x, depth + 1)
    elif isinstance(v, dict):
        if len(v) > 4:
            raise Invalid("%s: too many keys" % k)
        for x in v.values():
            _check_value(k, x, depth + 1)
    elif isinstance(v, int) and not isinstance(v, bool):
        if abs(v) > MAX_STAKE:
            raise Invalid("%s: number out of range" % k)
    elif not (v is None or isinstance(v, bool)):
        raise Invalid("%s: %s is not allowed here" % (k, type(v).__name__))


def _check_key(key):
    if key is None:
        return None
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY or not all(33 <= ord(c) < 127 for c in key):
        raise Invalid("Idempotency-Key: 1 to 128 printable ASCII characters, no spaces")
    return key


class Table:
    def __init__(self, journal: Journal, wheel: str, limits: Limits | None = None, publish=None, clock=None):
        self.j = journal
        self.wheel = wheel
        self.limits = limits or Limits()
        self.publish = publish or (lambda kind, body: None)
        self.clock = clock or (lambda: time.monotonic() * 1000.0)     # host ms, the link's clock
        self.lock = threading.RLock()
        self.ledger = Ledger(journal, wheel)
        self.window = game.Window()
        self.created = False
        with self.j.tx():
            st = self.j.load_state(wheel)
            if st is None:
                st = {"phase": CLOSED, "spin": None, "locked_spin": None, "prisoners": [],
                      "carry": [], "next_bet": 1, "boot": None, "last_number": None,
                      "last_launch": None}
                self.j.save_state(wheel, st)
                self.created = True
        self.st = st

    # -- bets --------------------------------------------------------------------------------
    def place(self, body: dict, idempotency_key=None, by=None) -> dict:
        """Validate and record a bet; raise Invalid (400) or Refused (409, recorded as refused).
        With an `idempotency_key`, a second call returns (or raises) the first answer, stored
        with the bet in the same transaction. `by`: who placed it ({"name", "role"}), kept on its row."""
        key = _check_key(idempotency_key)
        player, bet, choice = parse_bet_request(body)
        with self.lock, self.j.tx():
            if key is not None:
                first = self.ledger.answer_for(key)
                if first is not None:
                    return self._replay(first)
            now = self.clock()
            bid = "B%06d" % self.st["next_bet"]
            bet["id"] = bid
            rules_bet = {k: v for k, v in bet.items() if k != "zero_choice"}
            status, reason, where = self.window.admit(self.st["phase"], now)
            try:
                parsed = parse_bet(rules_bet, self.limits)
            except BetError as e:
                parsed = self._needs_consent(rules_bet, e)
                if status == "open":
                    status = "awaiting_consent"
            if choice is not None and parsed.family != "simple":
                # the rules settle a choice at zero on even chances only (settle_spin refuses it)
                raise Invalid("zero_choice: %s is not an even chance; a choice at zero (prison, partage, "
                              "move) applies only to rouge, noir, pair, impair, manque and passe" % parsed.label)
            self.st["next_bet"] += 1
            out = {"id": bid, "player": player, "label": parsed.label, "stake": parsed.stake,
                   "played": getattr(parsed, "played", parsed.stake), "status": status, "bet": bet}
            if status == "refused":
                answer = {"http": 409, "error": reason, "message": _REFUSALS[reason], "bet": dict(out, reason=reason)}
            else:
                answer = {"http": 201, "bet": out}
            self.ledger.add(bid, player, bet, parsed.stake, status, self.st["locked_spin"] if status == "refused" else None,
                            reason, where, key, answer if key is not None else None, by)
            self.j.save_state(self.wheel, self.st)
        if status == "refused":
            log.warning("bet %s of %s refused (%s): %s %d cents", bid, esc(player), reason, parsed.label, parsed.stake)
            self.publish("bet", {**out, "reason": reason})
            raise Refused(reason, _REFUSALS[reason], out)
        log.info("bet %s of %s: %s, %d cents%s", bid, esc(player), parsed.label, parsed.stake,
                 " (awaiting the chef de table's consent)" if status == "awaiting_consent" else "")
        self.publish("bet", out)
        return out

    def _replay(self, first):
        if first["http"] == 201:
            return first["bet"]
        raise Refused(first["error"], first["message"], first["bet"])

    def _needs_consent(self, rules_bet, err):
        """A straddle the rules refuse without consent is recorded as awaiting it; anything
        else the rules refuse is a 400."""
        try:
            parsed = parse_bet(dict(rules_bet, consent=True), self.limits)
        except BetError:
            raise Invalid(err.message) from None
        return parsed

    def consent(self, bid: str) -> dict:
        """The chef de table's consent to a straddle awaiting it: the bet joins the layout (open)."""
        with self.lock, self.j.tx():
            row = self.ledger.row(bid)
            if row is None:
                raise NotFound(f"no bet {bid}")
            if row["status"] != "awaiting_consent":
                raise Refused("not_awaiting_consent", f"bet {bid} is {row['status']}: only a straddle awaiting consent takes it")
            body = json.loads(row["body"])
            body["consent"] = True
            self.ledger.set_status(bid, "open", body=body)
        log.info("bet %s: the chef de table consents", bid)
        self.publish("bet", {"id": bid, "status": "open", "consent": True})
        return self.bet(bid)

    def cancel(self, bid: str, by=None) -> dict:
        with self.lock, self.j.tx():
            row = self.ledger.row(bid)
            if row is None:
                raise NotFound(f"no bet {bid}")
            if row["status"] not in ("open", "awaiting_consent"):
                raise Refused("not_open", f"bet {bid} is {row['status']}: only an open bet can be withdrawn")
            self.ledger.withdrawn(bid, by)
        log.info("bet %s withdrawn", bid)
        self.publish("cancel", {"id": bid})
        return {"id": bid, "status": "cancelled"}

    def resolve_held(self, bid, action) -> dict:
        """The supervisor's decision on a `held` bet (its result was lost with the wheel's power):
        `refund` (the stake goes back to the player, status `refunded`) or `play` (back on the
        layout, status `open`: it plays the next spin)."""
        if action not in ("refund", "play"):
            raise Invalid('action: "refund" or "play"')
        with self.lock, self.j.tx():
            row = self.ledger.row(bid)
            if row is None:
                raise NotFound(f"no bet {bid}")
            if row["status"] != "held":
                raise Refused("not_held", f"bet {bid} is {row['status']}: only a held bet is resolved by hand")
            reason = "%s; supervisor: %s" % (row["reason"], action)
            if action == "refund":
                result = {"id": bid, "outcome": "refunded", "staked": row["stake"], "returned": row["stake"],
                          "lost": 0, "won": 0, "imprisoned": 0}
                self.ledger.set_status(bid, "refunded", reason=reason, result=result)
            else:
                self.ledger.reopen(bid, reason)
        log.warning("held bet %s resolved by the supervisor: %s", bid, action)
        self.publish("bet", {"id": bid, "status": "refunded" if action == "refund" else "open"})
        return self.bet(bid)

    # -- the wheel's statuses: the evidence that betting is open ---------------------------------
    def on_status(self, boot, status, taken):
        """A STATUS frame of wheel boot `boot`, taken when events up to `taken` were journaled."""
        with self.lock:
            self.window.on_status(boot, status, taken)

    # -- the wheel's events ------------------------------------------------------------------------
    def on_event(self, boot, seq, ev, frame_rec) -> bool:
        """Journal one delivered event and act on it, atomically. False if it was a resend.
        `frame_rec` is the link's record (journaled here as the event's frame) or the id of a
        frame row the caller already wrote in the same transaction."""
        try:
            with self.j.tx():
                fid = frame_rec if isinstance(frame_rec, int) else self.j.frame(self.wheel, frame_rec)
                return self._on_event(boot, seq, ev, fid)
        except BaseException:
            if self.j.depth == 0:
                self.reload()
            raise

    def reload(self):
        """The transaction rolled back: so does the state in memory."""
        with self.lock:
            self.st = self.j.load_state(self.wheel)

    def _on_event(self, boot, seq, ev, fid):
        said = []
        paid = self._paid = []
        self._late = []
        with self.lock, self.j.tx() as db:
            if not self.j.event(self.wheel, boot, seq, ev, fid):
                return False
            kind = ev.get("ev")
            spin = ev.get("spin")
            st = self.st
            before = st.get("boot")
            st["boot"] = boot or before     # the wheel boot of the last event taken
            if kind == pr.BOOT:
                if before is not None and boot != before:
                    said += self._recover(db, boot, seq, ev)
                if isinstance(spin, int):
                    st["boot_spin"] = spin
            elif kind == pr.LAUNCH:
                if st["locked_spin"] is not None and st["locked_spin"] != spin:
                    log.warning("launch of spin %s while spin %s has no result: its bets play again", spin, st["locked_spin"])
                    self._unlock(db)
                st["spin"] = spin
                st["last_launch"] = spin
                st["launch_at"] = [boot, ev.get("at_ms")]
            elif kind == pr.RNVP:
                if st["locked_spin"] != spin:
                    self._unlock(db)
                    self._lock_bets(db, spin, boot, ev.get("at_ms"))
                    said.append("rien ne va plus")
            elif kind == pr.RESULT and self._voided(db, boot, spin):
                self._anomaly(db, fid, spin, "result %r of spin %s, which the wheel voided: ignored (the bets"
                              " of the relaunch are not settled with it)" % (ev.get("number"), spin))
            elif kind == pr.RESULT:
                said += self._settle(db, spin, ev.get("number"), call=self._launch_at(boot, spin, ev))
            elif kind == pr.VOID and self._settled(db, spin):
                # a restart just after a result the host already has: the result stands
                log.warning("void (%s) of spin %s, which is already settled: ignored", ev.get("reason"), spin)
            elif kind == pr.VOID:
                if st["locked_spin"] == spin:
                    self._unlock(db)
                st["phase"] = game.after_spin(st["phase"])
                said.append("coup nul (%s) : les mises restent en jeu pour le prochain lancer" % ev.get("reason"))
            said = [x if isinstance(x, tuple) else (spin, x) for x in said]
            for x in said:
                self.j.announce(self.wheel, x[0], x[1])
            self.j.save_state(self.wheel, st)
        self.publish("wheel", ev)
        for body in self._late:
            self.publish("bet", body)
        for x in said:
            if len(x) > 2 and paid:     # the payments go where the settlement put them (PAY)
                for body in paid:
                    self.publish("settlement", body)
                paid = []
            log.info("[spin %s] %s", x[0], x[1])
            self.publish("announce", {"spin": x[0], "text": x[1]})
        for body in paid:
            self.publish("settlement", body)
        return True

    def _lock_bets(self, db, spin, boot=None, call_ms=None):
        """The call of spin `spin` at wheel instant `call_ms` of boot `boot`: the open bets placed
        before it are locked to the spin, those at or after it are refused (poussette), however
        late the call reached us. A closed table stays closed."""
        self.st["phase"] = game.after_call(self.st["phase"])
        self.st["locked_spin"] = spin
        for r in self.ledger.open_bets():
            if game.late(r["wheel_boot"], r["wheel_ms"], boot, call_ms):
                self.ledger.set_status(r["id"], "refused", reason="poussette", spin=spin)
                self._late.append({"id": r["id"], "player": r["player"], "stake": r["stake"], "status": "refused",
                                   "reason": "poussette"})
                log.warning("bet %s of %s refused (poussette): it reached the table %.0f ms after the wheel's call of spin %s",
                            r["id"], esc(r["player"]), r["wheel_ms"] - call_ms, spin)
        self.ledger.lock_open(spin)

    def _unlock(self, db):
        self.ledger.unlock()
        self.st["locked_spin"] = None

    def _settled(self, db, spin):
        return self.ledger.settled(spin)

    def _voided(self, db, boot, spin):
        """Did this boot of the wheel void `spin`? (A boot's counter only goes up, so a void and a
        result of one spin number in one boot are the same spin; another boot may reuse the number
        after its flash record was lost.) A void of a spin already settled changed nothing."""
        if not isinstance(spin, int) or self._settled(db, spin):
            return False
        return self.j.voided(self.wheel, boot, spin)

    def _anomaly(self, db, fid, spin, why):
        """An event the table must not act on (the wheel contradicts itself): its frame stays in
        the journal as kind `anomaly` with the reason, and the log says it loudly."""
        self.j.mark(fid, "anomaly", why)
        log.error("anomaly from the wheel: %s", why)

    # -- a power cut of the wheel (docs/daemon.md, "Recovery") -------------------------------------
    def _recover(self, db, boot, seq, ev):
        """The wheel booted anew: what its old boot had not yet delivered died in its RAM. Its
        `boot` event lists the games its flash kept (`history`); settle from it, in spin order,
        every result the journal lacks, and release or hold the bets locked to a lost spin."""
        st = self.st
        locked = st["locked_spin"]
        last_settled = self.ledger.last_settled()
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
                st["phase"] = game.after_spin(st["phase"])
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
            said += [x if isinstance(x, tuple) else (spin, x) for x in self._settle(db, spin, number, lock_open=False,
                                                           source={"from": "history", "boot": boot, "seq": seq})]
            if spin > (st.get("spin") or 0):
                st["spin"] = spin
        return said

    def _hold(self, db, spin, why):
        """Bets locked to a spin whose result is unknown: neither paid nor played again."""
        reason = "result of spin %s unknown after the wheel restarted: %s" % (spin, why)
        self.ledger.hold_locked(reason)
        self.st["locked_spin"] = None
        self.st["phase"] = game.after_spin(self.st["phase"])
        log.error("bets of spin %s are held for the supervisor: %s", spin, why)
        return (spin, "coup %s : mises retenues pour le chef de table (résultat inconnu)" % spin)

    def _launch_at(self, boot, spin, ev):
        """A result without its call (never from a correct controller): the window is taken to
        have closed at the spin's launch (the earliest it can have), or else at the result."""
        la = self.st.get("launch_at")
        if self.st.get("last_launch") == spin and la and la[0] == boot:
            return boot, la[1]
        return boot, ev.get("at_ms")

    def _settle(self, db, spin, number, lock_open=True, source=None, call=(None, None)):
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
            self._lock_bets(db, spin, *call)
        rows = self.ledger.locked(spin)
        bets, choices = [], {}
        for r in rows:
            b = json.loads(r["body"])
            zc = b.pop("zero_choice", None)
            if zc is not None and _even_chance(b, self.limits):
                choices[b["id"]] = zc   # (a journal from before placing checked it may hold others: moot)
            bets.append(b)
        bets += st["carry"]
        for p in st["prisoners"]:       # a prisoner keeps the choice its player gave with the bet
            body = self.ledger.body(p.get("id"))
            if body is not None:
                zc = body.get("zero_choice")
                if zc is not None:
                    choices[p["id"]] = zc
        try:
            res = settle_spin(number, bets, st["prisoners"], choices or None, self.limits)
        except BetError as e:
            # a bet valid when placed but not now (limits changed): refuse it and settle the rest
            log.error("spin %s: %s; that bet is returned", spin, e.message)
            bad = e.bet
            self.ledger.set_status(bad, "refused", reason="invalid at settlement: " + e.message)
            bets = [b for b in bets if b.get("id") != bad]
            res = settle_spin(number, bets, st["prisoners"], {k: v for k, v in choices.items() if k != bad} or None, self.limits)
        if source is not None:
            res = dict(res, recovered=source)
        fresh = [r for r in res["results"] if not r.get("carried")]
        staked = sum(r["staked"] for r in fresh)
        paid = sum(r["paid"] for r in res["results"])
        self.ledger.settle(spin, number, staked, paid, res)
        st["prisoners"] = res["prisoners"]
        st["carry"] = res["carry"]
        if st["locked_spin"] == spin:
            st["locked_spin"] = None
        st["last_number"] = number
        if st["locked_spin"] is None:
            st["phase"] = game.after_spin(st["phase"])
        t = res["totals"]
        log.info("spin %s settled: number %d, %d bets, staked %d, paid %d, lost %d, en prison %d (cents)",
                 spin, number, len(res["results"]), t["staked"], t["paid"], t["lost"], t["imprisoned"])
        # the payments go between the winners and the rules' closing "tout est payé" (there is
        # one when something was paid), else before "faites vos jeux": marked, never read from text
        said = list(res["announcements"]) + ["faites vos jeux"]
        pay_at = len(said) - (2 if res["payment_order"] else 1)
        said[pay_at] = (spin, said[pay_at], "PAY")
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
                # bets locked to a spin the wheel has called stay locked: its result or its void
                # (a close that reaches the wheel voids the spin) decides them
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
            n, stakes, held = self.ledger.on_table()
            admit = self.window.admit(st["phase"], self.clock())
        return {"wheel": self.wheel, "phase": st["phase"], "spin": st["spin"], "locked_spin": st["locked_spin"],
                "last_number": st["last_number"], "bets_on_table": n, "stakes_on_table": stakes, "bets_held": held,
                "prisoners": st["prisoners"], "carry": st["carry"],
                "accepting_bets": admit[0] == "open", "refusing": admit[1]}

    def bet(self, bid):
        r = self.ledger.get(bid)
        if r is None:
            raise NotFound(f"no bet {bid}")
        return _bet_row(r)

    def bets(self, status=None, spin=None, player=None, limit=500):
        return [_bet_row(r) for r in self.ledger.find(status, spin, player, limit)]

    def history(self, limit=10):
        return self.ledger.history(limit)

    def recall(self, spin: int) -> dict:
        """A spin with its evidence (the wheel's events, the raw frames) and its settlement."""
        evs = self.j.query("SELECT e.boot, e.seq, e.at, e.ev, e.body, f.raw FROM events e LEFT JOIN frames f ON f.id = e.frame_id "
                           "WHERE e.wheel=? AND e.spin=? ORDER BY e.at, e.seq", (self.wheel, spin))
        st = self.ledger.settlement(spin)
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
    for k in ("placed_by", "withdrawn_by"):
        if r.get(k):
            out[k] = json.loads(r[k])
    if r.get("result"):
        out["result"] = json.loads(r["result"])
    return out
