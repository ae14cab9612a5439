"""The game at the table (le jeu): bets in, the wheel's events in, settlement exactly once.

Driven by three inputs: bets from the API (`place`, `cancel`, `consent`), the wheel's STATUS
frames (`on_status`: the evidence that betting is open, window.Window) and its events (`on_event`,
in order, as a source of wheel events delivers them). Each call is one journal transaction; the
state that must survive a restart (phase, spin, imprisoned stakes, carried replays) is saved in
the same transaction, so after a kill the daemon resumes exactly where the journal says. The
decisions are window.py's (the betting window) and flow.py's (the effects of each event: this
module reads the facts a step needs and applies its effects), the SQL ledger.py's.

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
from cylindre.rules.limits import Limits

from host_tools.table.game import annonce, flow as game, mise, resultats, window
from host_tools.table import libelles
from host_tools.table.heap import full_collect
from host_tools.table.game.gate import (  # noqa: F401  (the gate's names, as the table's callers import them)
    BET_FIELDS, CONSENT_FIELDS, MAX_STAKE, STATE_FIELDS, _KEPT, _REFUSALS, Invalid, Mismatch, NotFound, Receipt,
    Refused, _check_key, parse_bet_request, request_digest)
from host_tools.table.journal.store import Journal
from host_tools.table.game.ledger import Ledger
from host_tools.table.game.reglement import REGISTRY
from host_tools.table.game.tapis import Tapis, entry
from host_tools.table.game.window import CLOSED

log = logging.getLogger("cylindre.table")


class Table:
    def __init__(self, journal: Journal, wheel: str, limits: Limits | None = None, publish=None, clock=None):
        self.j = journal
        self.wheel = wheel
        self.tapis = Tapis()        # the open and locked bets, compiled (tapis.py)
        self._limits = limits or Limits()
        self.publish = publish or (lambda kind, body: None)
        # A publisher that journals what it is given (events_log.EventLog.publish) is called inside
        # the step's transaction, so an event commits with its change and a resumed stream never
        # misses one; it hands it to live subscribers itself once that commits. Any other is
        # called only after the commit (a stream must not show a change that rolls back).
        self.publish_in_tx = bool(getattr(publish, "in_transaction", False))
        self.clock = clock or (lambda: time.monotonic() * 1000.0)     # host ms, the link's clock
        self.lock = threading.RLock()
        self.ledger = Ledger(journal, wheel)
        self.window = window.Window()
        self.blocked = None         # a refusal code for every bet whatever the window says (wheel_unknown)
        self.deferred = False       # a group of placements saves the state once (committer.py)
        self.created = False
        with self.j.tx():
            st = self.j.load_state(wheel)
            if st is None:
                st = {"phase": CLOSED, "spin": None, "locked_spin": None, "prisoners": [],
                      "carry": [], "next_bet": 1, "boot": None, "last_number": None,
                      "last_launch": None}
                self.created = True
            # bet ids are the journal's, not the wheel's: a second wheel id on a journal numbers
            # its bets on after every bet there (else its first bet collides with B000001)
            top = self.j.one("SELECT MAX(CAST(substr(id, 2) AS INTEGER)) AS n FROM bets")
            renumber = bool(top and top["n"] and st.get("next_bet", 1) <= top["n"])
            if renumber:
                st = dict(st, next_bet=top["n"] + 1)
            if self.created or renumber:
                self.j.save_state(wheel, st)
            self.tapis.load(self.ledger.on_layout(), self._limits)
        self.st = st

    @property
    def limits(self) -> Limits:
        return self._limits

    @limits.setter
    def limits(self, new: Limits):
        """New limits (between spins): the bets on the layout are compiled again under them."""
        with self.lock:
            self._limits = new
            self.tapis.relimit(new)

    # -- bets --------------------------------------------------------------------------------
    def save_state(self):
        """The table's state to the journal, in the open transaction; once for a whole group
        when the committer holds it back (`deferred`: it saves it before the group commits)."""
        if not self.deferred:
            self.j.save_state(self.wheel, self.st)

    def receive(self, body: dict, idempotency_key=None):
        """A bet as it reaches the table, before anything is recorded (mise.py): checked (Invalid,
        400) and stamped with the host instant it was received and the betting window's verdict
        then; `place(received=...)` records it, at once or in a group (committer.py)."""
        return mise.receive(self, body, idempotency_key)

    def admit(self, now):
        """The window's verdict on a bet at host instant `now`, closed to every bet while the table
        does not know the wheel that answers (`blocked`, identity.py)."""
        v = self.window.admit(self.st["phase"], now)
        if self.blocked and (v[0] == "open" or v[1] == "wheel_not_heard"):
            return "refused", self.blocked, v[2]
        return v

    def place(self, body: dict, idempotency_key=None, by=None, received=None) -> dict:
        """Validate and record a bet (mise.py); raise Invalid (400) or Refused (409, recorded as
        refused); an Idempotency-Key's second call returns (or raises) the first answer."""
        return mise.place(self, body, idempotency_key, by, received)

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
            self.tapis.put(entry(dict(row, status="open"), self.limits, body))
        log.info("bet %s: the chef de table consents", bid)
        self.publish("bet", {"id": bid, "status": "open", "consent": True})
        return self.bet(bid)

    def cancel(self, bid: str, by=None) -> dict:
        """The player takes an open bet back: only on fresh word that the spin is not called
        (409 wheel_not_heard, no_more_bets); a withdrawal the wheel's call turns out to precede is
        undone when the call arrives (window.withdrawal). A straddle awaiting consent plays nothing:
        it may be taken back at any time."""
        with self.lock, self.j.tx():
            row = self.ledger.row(bid)
            if row is None:
                raise NotFound(f"no bet {bid}")
            if row["status"] not in ("open", "awaiting_consent"):
                raise Refused("not_open", f"bet {bid} is {row['status']}: only an open bet can be withdrawn")
            where = (None, None)
            if row["status"] == "open":
                status, reason, where = window.withdrawal(self.window, self.st["phase"], self.clock())
                if status != "open":
                    raise Refused(reason, _KEPT[reason])
            self.ledger.cancel(bid, where, by)
            self.tapis.drop(bid)
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
                self.tapis.put(entry(dict(row, status="open"), self.limits))
        log.warning("held bet %s resolved by the supervisor: %s", bid, action)
        self.publish("bet", {"id": bid, "status": "refunded" if action == "refund" else "open"})
        return self.bet(bid)

    # -- the wheel's statuses: the evidence that betting is open ---------------------------------
    def on_status(self, boot, status, taken):
        """A STATUS frame of wheel boot `boot`, taken when events up to `taken` were journaled."""
        with self.lock:
            self.window.on_status(boot, status, taken, self.clock())

    # -- the wheel's events ------------------------------------------------------------------------
    def on_event(self, boot, seq, ev, frame_rec) -> bool:
        """Journal one delivered event and act on it, atomically. False if it was a resend.
        `frame_rec` is the link's record (journaled here as the event's frame) or the id of a
        frame row the caller already wrote in the same transaction."""
        try:
            with self.lock, self.j.tx():        # the table's lock first, as every caller takes them
                fid = frame_rec if isinstance(frame_rec, int) else self.j.frame(self.wheel, frame_rec)
                return self._on_event(boot, seq, ev, fid)
        except BaseException:
            if self.j.depth == 0:
                self.reload()
            raise

    def reload(self):
        """The transaction rolled back: so does the state in memory (the table's state and the
        compiled bets on the layout, read again from the journal)."""
        with self.lock:
            self.st = self.j.load_state(self.wheel)
            self.tapis.load(self.ledger.on_layout(), self.limits)

    def _on_event(self, boot, seq, ev, fid):
        with self.lock, self.j.tx():
            if not self.j.event(self.wheel, boot, seq, ev, fid):
                return False
            effects = game.on_event(self.st, self._facts(boot, ev), boot, seq, ev, self.limits)
            after = self._apply(effects, fid)
            if self.publish_in_tx:
                self._stream(after)
            self.j.after_commit(lambda: self._after(after))     # the caller's transaction may hold it
            if any(isinstance(e, game.Lock) and e.bets for e in effects):
                self.j.after_commit(lambda: _collect(self.tapis))
                self.j.after_commit(self.j.checkpoint)
        return True

    def _facts(self, boot, ev):
        """What the ledger knows that the game's step on `ev` needs (game.Facts)."""
        kind, spin = ev.get("ev"), ev.get("spin")
        calls = kind in (pr.RNVP, pr.RESULT)            # a step that may lock the open bets
        floor = game.call_floor(self.st, boot, ev)
        settles = kind in (pr.RESULT, pr.BOOT)          # a step that may settle
        return game.Facts(
            open_bets=self.tapis.open_bets() if calls else (),
            locked=self.tapis.locked(),
            settled=[s for s in game.spins_of(self.st, ev) if self.ledger.settled(s)],
            last_settled=self.ledger.last_settled() if kind == pr.BOOT else None,
            voided=kind == pr.RESULT and isinstance(spin, int)
            and self.j.voided(self.wheel, spin, None if ev.get("restart") else boot),
            bodies=self.ledger.with_zero_choice([p["id"] for p in self.st["prisoners"] if p.get("id")])
            if settles and _may_choose(ev) else None,
            withdrawn=[dict(r, body=json.loads(r["body"])) for r in self.ledger.withdrawn_since(boot, floor)]
            if calls and floor is not None else (),
            book=self.tapis.spin_book if settles else None, ordered=True,
            book_exact=settles and self.tapis.locked_exact())

    def _apply(self, effects, fid=None):
        """The game's effects, in their order, inside the caller's transaction; returns those
        that go out only after it commits (stream, log)."""
        after = []
        for e in effects:
            if isinstance(e, game.Refuse):
                self.ledger.set_status(e.bet, "refused", reason=e.reason, spin=e.spin)
                self.tapis.drop(e.bet)
            elif isinstance(e, game.Reinstate):
                self.ledger.reinstate(e.bet, e.reason)
                self.tapis.put(entry(self.ledger.row(e.bet), self.limits))
            elif isinstance(e, game.Lock):
                self.ledger.lock(e.spin, e.bets)
                self.tapis.lock(e.spin, e.bets)
            elif isinstance(e, game.Unlock):
                self.ledger.unlock()
                self.tapis.unlock()
            elif isinstance(e, game.Hold):
                self.ledger.hold_locked(e.reason)
                self.tapis.drop_locked()
            elif isinstance(e, game.Settle):
                self.ledger.settle(e.spin, e.number, e.staked, e.paid, e.result, e.settlement)
                self.tapis.drop_locked(e.spin)
            elif isinstance(e, game.Anomaly):
                self.j.mark(fid, "anomaly", e.reason)
            elif isinstance(e, game.Announce):
                self.j.announce(self.wheel, e.spin, e.text)
                after.append(e)
            elif isinstance(e, game.Save):
                self.j.save_state(self.wheel, e.state)
                self.st = e.state
            else:
                after.append(e)
        return after

    def _stream(self, effects):
        """What the step says on the event stream, in the step's order."""
        for e in effects:
            if isinstance(e, game.Announce):
                self.publish("announce", {"spin": e.spin, "text": e.text})
            elif isinstance(e, game.Publish):
                self.publish(e.kind, e.body)

    def _after(self, effects):
        """What the committed step says: the log, and the live stream unless it went out with the
        transaction (publish_in_tx), in the step's order."""
        if not self.publish_in_tx:
            self._stream(effects)
        for e in effects:
            if isinstance(e, game.Announce):
                log.info("[%s] %s", "table" if e.spin is None else f"coup {e.spin}", e.text)
            elif isinstance(e, game.Log):
                log.log(e.level, "%s", e.text)

    def wheel_replaced(self, why):
        """A chef accepted another wheel or counter (Daemon.accept_wheel, in its transaction): the
        bets locked to the old wheel's called spin are held (game.wheel_replaced)."""
        with self.lock, self.j.tx():
            after = self._apply(game.wheel_replaced(self.st, why))
            if self.publish_in_tx:
                self._stream(after)
            self.j.after_commit(lambda: self._after(after))

    # -- table open / closed (the wheel is told by the daemon) --------------------------------------
    def set_open(self, is_open: bool):
        with self.lock, self.j.tx():
            change = window.open_close(self.st["phase"], is_open)
            if change is None:
                return
            st = dict(self.st, phase=change[0])
            after = self._apply([game.Announce(st["spin"], change[1]), game.Save(st)])
            if self.publish_in_tx:
                self._stream(after)
        self._after(after)

    def call(self) -> bool:
        """The croupier's rien ne va plus at the table (window.croupier_call): no bet from now,
        before the wheel is told. False when betting was not open."""
        with self.lock, self.j.tx():
            phase = window.croupier_call(self.st["phase"])
            if phase is None:
                return False
            st = dict(self.st, phase=phase)
            after = self._apply([game.Announce(st["spin"], "rien ne va plus"), game.Save(st)])
            if self.publish_in_tx:
                self._stream(after)
        self._after(after)
        return True

    # -- reads ---------------------------------------------------------------------------------
    def now(self) -> dict:
        """What every screen says of the table now (annonce.py): its phase and spin, the words
        ("faites vos jeux" only while `admit` takes a bet) and how long they stay good without
        new word from the wheel. No journal read: the daemon sends it with every wheel status."""
        with self.lock:
            st = self.st
            t = self.clock()
            out = annonce.verdict(st["phase"], self.admit(t))
            out["open_for_ms"] = round(self.window.open_for(t)) if out["accepting_bets"] else 0
            out.update(phase=st["phase"], spin=st["spin"], locked_spin=st["locked_spin"], last_number=st["last_number"])
        return out

    def state(self) -> dict:
        with self.lock:
            st = dict(self.st)
            n, stakes, held = self.ledger.on_table()
            now = self.now()
        return {"wheel": self.wheel, "phase": st["phase"], "spin": st["spin"], "locked_spin": st["locked_spin"],
                "last_number": st["last_number"], "bets_on_table": n, "stakes_on_table": stakes, "bets_held": held,
                "prisoners": st["prisoners"], "carry": st["carry"],
                "accepting_bets": now["accepting_bets"], "refusing": now["refusing"], "annonce": now["annonce"],
                "open_for_ms": now["open_for_ms"]}

    def bet(self, bid):
        r = self.ledger.get(bid)
        if r is None:
            raise NotFound(f"no bet {bid}")
        return _bet_row(r)

    def bets(self, status=None, spin=None, player=None, limit=500, slip=None):
        return [_bet_row(r) for r in self.ledger.find(status, spin, player, limit, slip)]

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
                "settlement": st,
                "bets": bets, "announcements": said}


def _may_choose(ev):
    """Whether a step on `ev` may read a prisoner's choice at zero: a result on zero (or one whose
    number the step will refuse), or a boot whose history it settles; a result on another number
    releases or loses the prisoners whatever they chose (rules/prison.after)."""
    number = ev.get("number")
    return ev.get("ev") != pr.RESULT or type(number) is not int or number == 0


def _collect(tapis):
    """Python's full garbage collection, run when the wheel's call has locked the bets: no bet is
    taken then and the ball runs for seconds. Left to itself it starts when enough objects were
    made, as often as not on the result's path (10,000 bets make it 20 ms long); after this one
    the result's step, which makes tens of thousands, stays short of the next (docs/internals/performance.md).
    And what each number settles the shapes on the layout to, and the called bets' results,
    made now rather than on the result's step."""
    REGISTRY.warm()
    book = tapis.spin_book
    try:
        if book is not None:
            resultats.warm_calls(getattr(book[1], "cols", None))
    except Exception:                   # a cache: the result's step makes what it lacks
        log.exception("the called bets' results were not made at the call")
    full_collect()                      # the frozen part too, where the daemon freezes (heap.py)


def _bet_row(r):
    out = {"id": r["id"], "player": r["player"], "placed_at": r["at"], "bet": json.loads(r["body"]),
           "stake": r["stake"], "status": r["status"], "spin": r["spin"], "reason": r["reason"]}
    out["label"] = libelles.bet_label(out["bet"])
    for k in ("placed_by", "withdrawn_by"):
        if r.get(k):
            out[k] = json.loads(r[k])
    if r.get("slip"):
        out["slip"] = r["slip"]
    if r.get("result"):
        out["result"] = json.loads(r["result"])
    return out
