"""The game at the table (le jeu) as pure rules: the betting window and the spin's life.

No I/O and no clock of its own. The shell (table.Table) hands in the wheel's STATUS frames, the
host instant of each bet, and for each event of the wheel the state and what the ledger knows
(`Facts`); `on_event` answers with the effects (lock, refuse, settle, hold, announce, publish,
save), which the shell applies in one journal transaction. The window's rules (docs/internals/betting-window.md,
"The betting window"):

- A bet is taken only while the table is open (`betting`), and only on *fresh evidence* from the
  wheel: a STATUS of the wheel's current boot, sent when every event the wheel had emitted was
  already taken here (its `emitted`), not saying the spin is called, and at most `FRESH_MS` old
  when the bet arrives, its age measured with the wheel's clock (`WheelClock`, uncertainty against
  the player). Otherwise 409 `wheel_not_heard`: a slow, cut or tampered link stops the betting.
- The wheel's call (*rien ne va plus*) ends the window at the wheel's instant (`at_ms`, its link
  clock), whatever the link did: every bet whose latest possible wheel instant of arrival is at or
  after the call is refused as a *poussette* when the call is taken, however late that is.
- Closed stays closed: nothing from the wheel reopens the table; only an explicit open does.
"""

from collections import namedtuple
from operator import itemgetter

from cylindre.link import protocol as pr
from cylindre.link.protocol import HISTORY
from cylindre.rules.bets import BetError
from cylindre.rules.compiled import Book

from host_tools.table import libelles
from host_tools.table.game import reglement
from host_tools.table.journal import jsontext
from host_tools.table.wheel.clock import WheelClock

CLOSED, BETTING, NO_MORE = "closed", "betting", "no_more_bets"
FRESH_MS = 1000         # two of the link's 500-ms status periods: one lost STATUS is tolerated
LATE_STATUSES = 4       # this many STATUS in a row too old on arrival (2 s): no bet is possible


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


class Window:
    """The evidence that betting is open now, and the wheel's clock it is measured with."""

    def __init__(self, fresh_ms=FRESH_MS):
        self.fresh_ms = fresh_ms
        self.clock = WheelClock()
        self.evidence = None        # (boot, wheel ms) of the last STATUS that says "not called"
        self.late = 0               # STATUS frames in a row already older than fresh_ms on arrival

    def on_status(self, boot, status, taken, now_ms=None):
        """A STATUS of wheel boot `boot`, received when events up to `taken` were taken here (at
        host instant `now_ms`: how old it is on arrival, as a bet would judge it)."""
        self.clock.echo(boot, status.get("echo"))
        at, emitted = status.get("at_ms"), status.get("emitted")
        w = None if now_ms is None else self.clock.latest_wheel_ms(now_ms)
        if _int(at) and w is not None and self.clock.boot == boot:
            self.late = self.late + 1 if w - at > self.fresh_ms else 0
        if not (_int(at) and _int(emitted)) or emitted > taken or status.get("state") in pr.NO_BETS_STATES:
            # the wheel said something we have not taken yet (maybe its call), or it says called
            # or in fault (a silent ball-track sensor may hide a spin under way)
            self.evidence = None
            return
        if self.evidence is None or self.evidence[0] != boot or at > self.evidence[1]:
            self.evidence = (boot, at)

    def too_late(self, n=LATE_STATUSES) -> bool:
        """Every STATUS of the last `n` arrived too old to take a bet on (a line so slow that the
        link is up and no bet is possible: told, the freshness rule is not loosened)."""
        return self.late >= n

    def lost(self):
        """The link lost an event (could not journal it): no evidence until the next STATUS."""
        self.evidence = None

    def admit(self, phase, now_ms):
        """(status, reason, (boot, latest wheel ms)) for a bet arriving at host instant `now_ms`."""
        boot = self.clock.boot
        w = self.clock.latest_wheel_ms(now_ms)
        where = (boot, w)
        if phase == CLOSED:
            return "refused", "table_closed", where
        if phase == NO_MORE:
            return "refused", "poussette", where
        ev = self.evidence
        if ev is None or w is None or ev[0] != boot or w - ev[1] > self.fresh_ms:
            return "refused", "wheel_not_heard", where
        return "open", None, where

    def open_for(self, now_ms) -> float:
        """How long (ms) from host instant `now_ms` the evidence stays fresh enough to take a bet
        without another STATUS: 0 when there is none (admit refuses whatever the phase). A screen
        saying "faites vos jeux" stops when this runs out, as `admit` starts refusing then."""
        ev, w = self.evidence, self.clock.latest_wheel_ms(now_ms)
        if ev is None or w is None or ev[0] != self.clock.boot:
            return 0.0
        return max(0.0, float(self.fresh_ms - (w - ev[1])))


def withdrawal(window, phase, now_ms):
    """(status, reason, where) for taking an open bet back at host instant `now_ms`: like a bet,
    only on fresh word that the spin is not called (a cut line must not let a losing bet be taken
    back once the ball has landed), also at a closed table; `where` is the latest wheel instant it
    can be, against which the call judges it (`call`: a withdrawal at or after it is undone)."""
    status, reason, where = window.admit(BETTING if phase == CLOSED else phase, now_ms)
    return status, ("no_more_bets" if reason == "poussette" else reason), where


def call_floor(state, boot, ev):
    """The earliest wheel instant the call of a step on `ev` can be (the shell reads the
    withdrawals from then on): the spin's launch in this boot, else the event's own instant."""
    la = state.get("launch_at")
    cands = [x for x in (ev.get("at_ms"), la[1] if la and la[0] == boot else None) if _int(x)]
    return min(cands) if cands else None


def after_call(phase):
    """Rien ne va plus: betting stops; a closed table stays closed."""
    return NO_MORE if phase == BETTING else phase


def croupier_call(phase):
    """The croupier's *rien ne va plus* (the pit, or the wheel's button through the wheel): no bet
    from now, whatever the wheel's sensors say; the wheel's call locks the bets to its spin, the
    spin's end opens the table again. None when betting is not open."""
    return after_call(phase) if phase == BETTING else None


def after_spin(phase):
    """A result or a void ends the spin: betting reopens unless the table is closed."""
    return BETTING if phase == NO_MORE else phase


def late(bet_boot, bet_wheel_ms, call_boot, call_ms):
    """Was a bet placed at or after the call? A bet of an earlier boot of the wheel came before
    every call of a later boot (a new boot must launch a ball and see it lap before it can call,
    seconds, far more than FRESH_MS); one without a wheel instant was placed before this rule."""
    if bet_boot != call_boot or bet_wheel_ms is None or not _int(call_ms):
        return False
    return bet_wheel_ms >= call_ms


def open_close(phase, is_open):
    """Open or close the table: (new phase, the croupier's words), or None if nothing changes.
    Bets locked to a called spin stay locked when it closes: its result or void decides them."""
    if is_open and phase == CLOSED:
        return BETTING, "faites vos jeux"
    if not is_open and phase != CLOSED:
        return CLOSED, "la table est fermée"
    return None


# -- the spin's life: the wheel's events in, effects out --------------------------------------------
# The shell (table.Table) reads the Facts a step needs from the ledger, calls `on_event`, and
# applies the effects in their order in one journal transaction: Refuse, Lock, Unlock, Hold,
# Settle, Anomaly and Announce (its row) and Save inside it; Publish, Announce (its stream) and
# Log after it commits. The order of the list is the order of the stream: the wheel's event, the
# poussettes its call refused, then the croupier's words with each settlement where the rules put
# the payments; nothing reads the French text to find that place.
Refuse = namedtuple("Refuse", "bet reason spin")            # one bet refused (spin None: unchanged)
Reinstate = namedtuple("Reinstate", "bet reason")            # a withdrawal after the call is undone: open
Lock = namedtuple("Lock", "spin bets")                       # these open bets are locked to the spin
Unlock = namedtuple("Unlock", "")                            # every locked bet goes back on the layout
Hold = namedtuple("Hold", "reason")                          # every locked bet waits for the supervisor
# once, keyed by (wheel, spin): `result` settle_spin's dict but for its per-bet `results`, which
# `settlement` (rules.settle.Settlement, in columns) holds
Settle = namedtuple("Settle", "spin number staked paid result settlement")
Anomaly = namedtuple("Anomaly", "reason")                    # the event's frame is re-marked, not acted on
Announce = namedtuple("Announce", "spin text")               # the croupier's words: journaled and streamed
Publish = namedtuple("Publish", "kind body")                 # the live stream, after commit
Log = namedtuple("Log", "level text")                        # the daemon's log, after commit
Save = namedtuple("Save", "state")                           # the table's state, in the same transaction

_ID = itemgetter("id")        # sort key of the bets (a C call: 10,000 bets a spin)
_SPIN = itemgetter("spin")
DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40       # logging's levels, without importing it


class Facts:
    """What the ledger knows that one step needs, read by the shell before the step: the core
    reads nothing itself. Bets are dicts with `id`, `body` (the bet, a dict) and for open bets
    `player`, `stake`, `wheel_boot`, `wheel_ms`; locked bets carry their `spin`; withdrawn bets
    (`withdrawn`, those the call may judge) also `cancel_boot`, `cancel_ms`."""

    def __init__(self, open_bets=(), locked=(), settled=(), last_settled=None, voided=False, bodies=None,
                 withdrawn=(), book=None, ordered=False, book_exact=False):
        self.open_bets = list(open_bets)
        self.withdrawn = list(withdrawn)
        self.locked = list(locked)
        self.settled = set(settled)         # among the spins the step may touch, those settled
        self.last_settled = last_settled    # the highest spin settled for this wheel
        self.voided = voided                # this boot of the wheel voided the event's spin
        self.bodies = dict(bodies or {})    # the prisoners' bets with a choice at zero, by id
        # (spin, shelf): the locked bets of `spin` already in a Book, in order of id, with their
        # choices at zero (`shelf.book`, `shelf.choices`: tapis.py), or None. The settlement
        # appends the carried bets to that book: it serves one step
        self.book = book
        self.ordered = ordered              # the open and locked bets come in order of id already
        # the locked bets are exactly `book`'s, in its order (the shell checked it when the call
        # locked them): a step that has not changed them need not compare ten thousand ids again
        self.book_exact = bool(book_exact and book is not None and ordered)

def spins_of(state, ev):
    """The spins whose settlement a step on event `ev` may ask about (the shell reads those)."""
    out = {state.get("locked_spin"), ev.get("spin")}
    if ev.get("ev") == pr.BOOT:
        out |= {g[0] for g in games(ev.get("history")) or ()}
    return {s for s in out if _int(s)}


def on_event(state, facts, boot, seq, ev, limits):
    """One new event of wheel boot `boot` (number `seq`), taken in order: the list of effects."""
    return _Step(state, facts, limits).event(boot, seq, ev)


class _Step:
    def __init__(self, state, facts, limits):
        self.st = jsontext.copy(state)                  # a copy: the caller's state is never touched
        self.facts = facts
        self.limits = limits
        self.open = facts.open_bets if facts.ordered else sorted(facts.open_bets, key=_ID)
        self.locked = facts.locked if facts.ordered else sorted(facts.locked, key=_ID)
        self.settled = set(facts.settled)
        self.fx = []
        self._exact = self.locked if facts.book_exact else None     # the list the book is exactly

    def say(self, spin, text):
        self.fx.append(Announce(spin, text))

    def log(self, level, text):
        self.fx.append(Log(level, text))

    def event(self, boot, seq, ev):
        st = self.st
        kind, spin = ev.get("ev"), ev.get("spin")
        self.fx.append(Publish("wheel", ev))
        before = st.get("boot")
        st["boot"] = boot or before     # the wheel boot of the last event taken
        if kind == pr.BOOT:
            if before is not None and boot != before:
                self.recover(boot, seq, ev)
            if _int(spin):
                st["boot_spin"] = spin
        elif kind == pr.LAUNCH:
            if st["locked_spin"] is not None and st["locked_spin"] != spin:
                self.log(WARNING, "launch of spin %s while spin %s has no result: its bets play again"
                         % (spin, st["locked_spin"]))
                self.unlock()
            st["spin"] = spin
            st["last_launch"] = spin
            st["launch_at"] = [boot, ev.get("at_ms")]
        elif kind == pr.RNVP:
            if st["locked_spin"] != spin:
                self.unlock()
                self.call(spin, boot, ev.get("at_ms"))
                self.say(spin, "rien ne va plus")
        elif kind == pr.RESULT and self.voided(spin):
            why = ("result %r of spin %s, which the wheel voided: ignored (the bets of the relaunch are not"
                   " settled with it)" % (ev.get("number"), spin))
            self.fx.append(Anomaly(why))
            self.log(ERROR, "anomaly from the wheel: " + why)
        elif kind == pr.RESULT:
            self.settle(spin, ev.get("number"), call=self.launch_at(boot, spin, ev))
        elif kind == pr.FAULT and ev.get("code") == "result_lost":
            # a source that can miss a line (a Cammegh reader) lost the number of a called spin:
            # its bets wait for the supervisor, never voided nor settled (docs/internals/journal.md)
            if _int(spin) and st["locked_spin"] == spin and spin not in self.settled:
                self.hold(spin, ev.get("detail") or "its result was not heard", lost="not heard from the reader")
        elif kind == pr.VOID and spin in self.settled:
            # a restart just after a result the host already has: the result stands
            self.log(WARNING, "void (%s) of spin %s, which is already settled: ignored" % (ev.get("reason"), spin))
        elif kind == pr.VOID:
            if st["locked_spin"] == spin:
                self.unlock()
            st["phase"] = after_spin(st["phase"])
            self.say(spin, libelles.coup_nul(ev.get("reason")) + " ; les mises restent en jeu pour le prochain lancer")
        if kind == pr.RESULT and not any(isinstance(e, Settle) and e.spin == spin for e in self.fx):
            # a result the table did not settle (ignored, already settled, invalid): the stream
            # says it came, never its number, so no page shows a number that was not settled
            self.fx[0] = Publish("wheel", unsettled(ev))
        self.fx.append(Save(st))
        return self.fx

    # -- the bets on the layout ----------------------------------------------------------------
    def call(self, spin, boot=None, call_ms=None):
        """The call of spin `spin` at wheel instant `call_ms` of boot `boot`: the open bets placed
        before it are locked to the spin, those at or after it are refused (poussette), however
        late the call reached us; a bet taken back at or after it (and placed before it) is put
        back and locked: it plays. A closed table stays closed."""
        st = self.st
        st["phase"] = after_call(st["phase"])
        st["locked_spin"] = spin
        keep = []
        for b in self.facts.withdrawn:
            if (late(b.get("cancel_boot"), b.get("cancel_ms"), boot, call_ms)
                    and not late(b.get("wheel_boot"), b.get("wheel_ms"), boot, call_ms)):
                self.fx.append(Reinstate(b["id"], "withdrawn %.0f ms after the wheel's call of spin %s: it plays"
                                         % (b["cancel_ms"] - call_ms, spin)))
                self.fx.append(Publish("bet", {"id": b["id"], "player": b.get("player"), "stake": b.get("stake"),
                                               "status": "locked", "reason": "withdrawn after the call"}))
                self.log(WARNING, "bet %s of %s: its withdrawal came %.0f ms after the wheel's call of spin %s;"
                         " it is put back and plays" % (b["id"], esc(b.get("player")), b["cancel_ms"] - call_ms, spin))
                self.open.append(b)
        self.open.sort(key=_ID)
        late_ms = []
        for b in self.open:
            if late(b.get("wheel_boot"), b.get("wheel_ms"), boot, call_ms):
                self.fx.append(Refuse(b["id"], "poussette", spin))
                self.fx.append(Publish("bet", {"id": b["id"], "player": b.get("player"), "stake": b.get("stake"),
                                               "status": "refused", "reason": "poussette"}))
                self.log(DEBUG, "bet %s of %s refused (poussette): it reached the table %.0f ms after the wheel's"
                         " call of spin %s" % (b["id"], esc(b.get("player")), b["wheel_ms"] - call_ms, spin))
                late_ms.append(b["wheel_ms"] - call_ms)
            else:
                keep.append(dict(b, spin=spin))
        if late_ms:
            # one line a call (a stadium's terminals make hundreds at once; each bet's row says it)
            self.log(WARNING, "%d bet%s refused (poussette): %s reached the table %.0f to %.0f ms after the wheel's"
                     " call of spin %s" % (len(late_ms), "s" if len(late_ms) > 1 else "", "they" if len(late_ms) > 1
                                           else "it", min(late_ms), max(late_ms), spin))
        self.open = []
        self.locked = sorted(self.locked + keep, key=_ID)
        self.fx.append(Lock(spin, [b["id"] for b in keep]))

    def unlock(self):
        if self.locked:
            self.open = sorted(self.open + [dict(b, spin=None) for b in self.locked], key=_ID)
            self.locked = []
            self.fx.append(Unlock())
        self.st["locked_spin"] = None

    def hold(self, spin, why, lost="after the wheel restarted"):
        """Bets locked to a spin whose result is unknown: neither paid nor played again."""
        reason = "result of spin %s unknown %s: %s" % (spin, lost, why)
        self.fx.append(Hold(reason))
        self.locked = []
        self.st["locked_spin"] = None
        self.st["phase"] = after_spin(self.st["phase"])
        self.log(ERROR, "bets of spin %s are held for the supervisor: %s" % (spin, why))
        self.say(spin, "coup %s : mises retenues pour le chef de table (résultat inconnu)" % spin)

    def voided(self, spin):
        """Did this boot of the wheel void `spin`? (A boot's counter only goes up, so a void and a
        result of one spin number in one boot are the same spin; another boot may reuse the number
        after its flash record was lost.) A void of a spin already settled changed nothing."""
        return _int(spin) and spin not in self.settled and self.facts.voided

    def launch_at(self, boot, spin, ev):
        """A result without its call (never from a correct controller): the window is taken to
        have closed at the spin's launch (the earliest it can have), or else at the result."""
        la = self.st.get("launch_at")
        if self.st.get("last_launch") == spin and la and la[0] == boot:
            return boot, la[1]
        return boot, ev.get("at_ms")

    # -- a result --------------------------------------------------------------------------------
    def settle(self, spin, number, lock_open=True, source=None, call=(None, None)):
        """Settle spin `spin` once (the ledger's key (wheel, spin) refuses a second time)."""
        st = self.st
        if not _int(number) or not 0 <= number <= 36:
            self.log(ERROR, "result of spin %s without a valid number: %r" % (spin, number))
            return
        if spin in self.settled:
            self.log(WARNING, "spin %s is already settled: result ignored" % spin)
            if st["locked_spin"] == spin:
                # bets locked to a spin number settled before: the wheel's counter went back (its
                # flash record was replaced). Never pay twice, never leave them hanging.
                self.hold(spin, "spin %s was settled before: the wheel's spin counter went back"
                                " (its flash record was lost or replaced)" % spin)
            return
        if st["locked_spin"] != spin and lock_open:
            if st["phase"] == BETTING:
                self.log(WARNING, "result of spin %s without rien ne va plus: locking the open bets now" % spin)
            self.unlock()
            self.call(spin, *call)
        if self.locked is self._exact and self.facts.book[0] == spin:
            every = True                                # the book's bets: every one locked to `spin`
        else:
            try:
                spins = list(map(_SPIN, self.locked))      # (C loops: 10,000 bets on the result's path)
            except KeyError:
                spins = [b.get("spin") for b in self.locked]
            every = spins.count(spin) == len(spins)
        mine = self.locked if every else [b for b in self.locked if b.get("spin") == spin]
        try:
            book, choices, cols = self.book(spin, mine)
            done = reglement.settle(book, number, st["prisoners"], choices or None, cols)
        except BetError as e:
            # a prisoner or a choice the rules refuse: that bet is returned, the rest settled
            self.refuse(spin, e)
            book, choices, cols = self.book(spin, mine, skip=e.bet)
            done = reglement.settle(book, number, st["prisoners"], choices or None, cols)
        # the shared rules' settlement, in columns (reglement.py); the per-bet results and the
        # payment order stay in them (the ledger writes them as they are)
        res = done.head()
        if source is not None:
            res["recovered"] = source
        staked = sum(book.played) + sum(book.excess)       # the carried bets were staked before
        for i in book.carried:
            staked -= done.staked(i)
        paid = res["totals"]["paid"]
        self.fx.append(Settle(spin, number, staked, paid, res, done))
        self.settled.add(spin)
        self.locked = [] if every else [b for b in self.locked if b.get("spin") != spin]
        st["prisoners"] = res["prisoners"]
        st["carry"] = res["carry"]
        if st["locked_spin"] == spin:
            st["locked_spin"] = None
        st["last_number"] = number
        if st["locked_spin"] is None:
            st["phase"] = after_spin(st["phase"])
        t = res["totals"]
        self.log(INFO, "spin %s settled: number %d, %d bets, staked %d, paid %d, lost %d, imprisoned %d (cents)"
                 % (spin, number, len(book) + len(done.carried_results), t["staked"], t["paid"], t["lost"], t["imprisoned"]))
        # the payments go between the winners and the rules' closing "tout est payé" (there is
        # one when something was paid), else before "faites vos jeux": placed, never read from text
        said = list(res["announcements"]) + ["faites vos jeux"]
        pay_at = len(said) - (2 if done.payments() else 1)
        for i, text in enumerate(said):
            if i == pay_at:
                self.fx.append(Publish("settlement", announced(spin, done, res)))
            self.say(spin, text)

    def book(self, spin, mine, skip=None):
        """The locked bets of `spin` (compiled when placed; compiled now if the limits changed
        since) and the bets carried from the last spin, in a `Book`; with the choices at zero
        of its even chances and of the prisoners. A bet the limits in force refuse is refused
        (returned) and left out."""
        shelf = self.facts.book
        cols = None
        if skip is None and shelf is not None and shelf[0] == spin and shelf[1] is not None \
                and (mine is self._exact or shelf[1].book.ids == list(map(_ID, mine))):
            book, choices = shelf[1].book, dict(shelf[1].choices)    # built as the bets were placed
            cols = shelf[1].cols
            mine = ()
        else:
            book, choices = Book(self.limits), {}
        add = book.add_compiled
        for r in mine:                  # (when the tapis has no book of them: built here)
            body = r["body"]
            bid = body.get("id")
            if bid == skip:
                continue
            c = r.get("compiled")
            try:
                if c is None:
                    i = book.add({k: v for k, v in body.items() if k != "zero_choice"})
                else:
                    i = add(bid, c[0], c[1], c[2], body)
            except BetError as e:
                self.refuse(spin, e)
                continue
            if "zero_choice" in body:
                zc = body["zero_choice"]
                if zc is not None and book.shapes[i].family == "simple":
                    choices[bid] = zc   # (a journal from before placing checked it may hold others: moot)
        for b in self.st["carry"]:
            if b.get("id") == skip:
                continue
            try:
                book.add(b)
            except BetError as e:
                self.refuse(spin, e)
        for p in self.st["prisoners"]:   # a prisoner keeps the choice its player gave with the bet
            zc = (self.facts.bodies.get(p.get("id")) or {}).get("zero_choice")
            if zc is not None and p.get("id") != skip:
                choices[p["id"]] = zc
        return book, choices, cols

    def refuse(self, spin, e):
        """A bet valid when placed but not now (the limits changed): refused, its stake returned."""
        self.log(ERROR, "spin %s: %s; that bet is returned" % (spin, e.message))
        self.fx.append(Refuse(e.bet, "invalid at settlement: " + e.message, None))

    # -- a power cut of the wheel (docs/internals/journal.md, "Recovery") -------------------------------------
    def recover(self, boot, seq, ev):
        """The wheel booted anew: what its old boot had not yet delivered died in its RAM. Its
        `boot` event lists the games its flash kept (`history`); settle from it, in spin order,
        every result the journal lacks, and release or hold the bets locked to a lost spin."""
        st = self.st
        locked = st["locked_spin"]
        last_settled = self.facts.last_settled
        # lost results can only be of spins from `floor` on: every result before the last launch
        # heard (or the last settlement, or the previous boot's counter) came in order before it
        known = [v for v in (st.get("spin"), None if last_settled is None else last_settled + 1,
                             None if st.get("boot_spin") is None else st["boot_spin"] + 1) if _int(v)]
        if not known:
            return      # this journal has followed no spin of this wheel: nothing it could lose
        floor = max(known)
        kept = games(ev.get("history"))
        counter = ev.get("spin")
        lacks = (kept is not None and last_settled is not None and ev.get("interrupted") != last_settled
                 and (len(kept) < HISTORY or kept[0][0] <= last_settled)
                 and last_settled not in [g[0] for g in kept])
        if kept is None or not _int(counter) or counter < floor - 1 or lacks:
            if kept is None or not _int(counter):
                why = "the wheel sent no readable history of its games"
            elif counter < floor - 1:
                why = "the wheel's spin counter went back to %d (its flash record was lost)" % counter
            else:
                why = "the wheel's history lacks spin %s, settled here (its flash record is not the one it had)" % last_settled
            self.log(ERROR, "the wheel restarted (boot %s) and %s: results of spins from %d on cannot be recovered"
                     % (boot, why, floor))
            if locked is not None and ev.get("interrupted") != locked:
                self.hold(locked, why)
            return
        complete = len(kept) < HISTORY or kept[0][0] <= floor
        if locked is not None and locked not in {g[0] for g in kept}:
            if not complete:
                self.hold(locked, "its result may be older than the %d games the wheel keeps" % HISTORY)
            elif ev.get("interrupted") != locked:
                # the spin ended without a result (a void the power cut kept from us)
                self.unlock()
                st["phase"] = after_spin(st["phase"])
                self.log(WARNING, "spin %s ended without a result before the wheel restarted: its bets play again" % locked)
                self.say(locked, "coup nul : les mises restent en jeu pour le prochain lancer")
            # interrupted by this restart: the void (restart) that follows releases the bets
        if not complete:
            # results the wheel no longer holds came before these: settling these would judge the
            # imprisoned stakes and replays out of order; the supervisor reads GET /wheel/history
            self.log(ERROR, "the wheel restarted (boot %s): results of spins from %d on may be older than its last %d"
                     " games; nothing settled from its history; imprisoned stakes and replays need the supervisor's"
                     " check" % (boot, floor, HISTORY))
            return
        for spin, number in kept:
            if spin < floor or spin in self.settled:
                continue
            self.log(WARNING, "spin %s: result %s recovered from the wheel's flash after its restart" % (spin, number))
            self.say(spin, "coup %d : résultat retrouvé dans la mémoire du cylindre après une coupure" % spin)
            self.settle(spin, number, lock_open=False, source={"from": "history", "boot": boot, "seq": seq})
            if spin > (st.get("spin") or 0):
                st["spin"] = spin


def unsettled(ev):
    """A result event as the stream tells it when the table did not settle it: without its number."""
    out = {k: v for k, v in ev.items() if k != "number"}
    out["settled"] = False
    return out


def wheel_replaced(state, why):
    """A chef de table accepted another wheel, or the same wheel with a new spin counter
    (identity.py): bets locked to a called spin of the old one wait for the supervisor (its
    result will never come: held, never voided nor settled), and nothing of the old wheel's boot
    is used to judge the new one's (its recovery, its launch instant). The effects."""
    step = _Step(state, Facts(), None)
    st = step.st
    if st.get("locked_spin") is not None:
        step.hold(st["locked_spin"], why, lost="with the wheel replaced")
    for k in ("boot", "boot_spin", "launch_at"):
        st[k] = None
    step.fx.append(Save(st))
    return step.fx


def announced(spin, done, res):
    """The settlement event (the live stream, journaled with the settlement): the number, the
    totals and how many bets won or lost, and where the per-bet results are (the spin's
    `spin_results` row: `GET /spins/{spin}`, `GET /bets?spin=`). At 10,000 bets a copy of every
    winning result here was half a megabyte of JSON on the result's path."""
    return {"spin": spin, "number": done.number, "totals": res["totals"], "paying_croupier": res["paying_croupier"],
            "bets": len(done.book) + len(done.carried_results), "won_bets": done.won_bets(),
            "lost_bets": done.lost_bets(), "payments": done.payments(),
            "results_in": {"spin_results": spin, "api": "/spins/%s" % spin}}


def games(history):
    """The wheel's `history` as sorted (spin, number) pairs, or None if absent or malformed."""
    if not isinstance(history, list):
        return None
    out = []
    for g in history:
        if not isinstance(g, dict):
            return None
        spin, number = g.get("spin"), g.get("number")
        if not (_int(spin) and _int(number) and 0 <= number <= 36):
            return None
        out.append((spin, number))
    out.sort()
    return out


def esc(text) -> str:
    """A client's string as it may appear in a log line: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
