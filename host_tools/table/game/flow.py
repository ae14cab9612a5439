"""The game at the table (le jeu) as pure rules: the spin's life.

No I/O and no clock of its own. The shell (table.Table) hands in, for each event of the wheel,
the state and what the ledger knows (`Facts`); `on_event` answers with the effects (lock, refuse,
settle, hold, announce, publish, save), which the shell applies in one journal transaction. The
betting window the call closes, its phases and when a bet came after the call: window.py.
"""

from collections import namedtuple
from operator import itemgetter

from cylindre.link import protocol as pr
from cylindre.link.protocol import HISTORY
from cylindre.rules.bets import BetError
from cylindre.rules.compiled import Book

from host_tools.table import libelles
from host_tools.table.game import reglement
from host_tools.table.game.window import BETTING, after_call, after_spin, is_int, late
from host_tools.table.journal import jsontext


def call_floor(state, boot, ev):
    """The earliest wheel instant the call of a step on `ev` can be (the shell reads the
    withdrawals from then on): the spin's launch in this boot, else the event's own instant."""
    la = state.get("launch_at")
    cands = [x for x in (ev.get("at_ms"), la[1] if la and la[0] == boot else None) if is_int(x)]
    return min(cands) if cands else None


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
        self.voided = voided                # the wheel voided the event's spin (in this boot; in any
                                            # boot for a result named after a restart)
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
    return {s for s in out if is_int(s)}


def on_event(state, facts, boot, seq, ev, limits):
    """One new event of wheel boot `boot` (number `seq`), taken in order: the list of effects."""
    return _Step(state, facts, limits).event(boot, seq, ev)


class _Step:
    def __init__(self, state, facts, limits):
        # a copy: the caller's state is never touched. Its prisoners (1,500 after a zero, three
        # copies a coup) are shared, not copied: a step replaces the list whole, with the new
        # dicts the settlement makes, and changes no prisoner in place (test_money_game.py)
        self.st = jsontext.copy({k: v for k, v in state.items() if k != "prisoners"})
        if "prisoners" in state:
            self.st["prisoners"] = state["prisoners"]
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
            if is_int(spin):
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
            if is_int(spin) and st["locked_spin"] == spin and spin not in self.settled:
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
        """Did the wheel void `spin`? In this boot (a boot's counter only goes up, so a void and a
        result of one spin number in one boot are the same spin), or in any boot for a result the
        controller named after a restart (`restart`: the spin its flash said was in progress,
        whose void it held in RAM until the host had it; Journal.voided). A void of a spin
        already settled changed nothing."""
        return is_int(spin) and spin not in self.settled and self.facts.voided

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
        if not is_int(number) or not 0 <= number <= 36:
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
                             None if st.get("boot_spin") is None else st["boot_spin"] + 1) if is_int(v)]
        if not known:
            return      # this journal has followed no spin of this wheel: nothing it could lose
        floor = max(known)
        kept = games(ev.get("history"))
        counter = ev.get("spin")
        lacks = (kept is not None and last_settled is not None and ev.get("interrupted") != last_settled
                 and (len(kept) < HISTORY or kept[0][0] <= last_settled)
                 and last_settled not in [g[0] for g in kept])
        if kept is None or not is_int(counter) or counter < floor - 1 or lacks:
            if kept is None or not is_int(counter):
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
        if not (is_int(spin) and is_int(number) and 0 <= number <= 36):
            return None
        out.append((spin, number))
    out.sort()
    return out


def esc(text) -> str:
    """A client's string as it may appear in a log line: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
