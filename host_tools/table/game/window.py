"""The betting window (faites vos jeux … rien ne va plus) as pure rules.

No I/O and no clock of its own: the shell (table.Table) hands in the wheel's STATUS frames and the
host instant of each bet. The rules (docs/internals/betting-window.md, "The betting window"):

- A bet is taken only while the table is open (`betting`), and only on *fresh evidence* from the
  wheel: a STATUS of the wheel's current boot, sent when every event the wheel had emitted was
  already taken here (its `emitted`), not saying the spin is called, and at most `FRESH_MS` old
  when the bet arrives, its age measured with the wheel's clock (`WheelClock`, uncertainty against
  the player). Otherwise 409 `wheel_not_heard`: a slow, cut or tampered link stops the betting.
- The wheel's call (*rien ne va plus*) ends the window at the wheel's instant (`at_ms`, its link
  clock), whatever the link did: every bet whose latest possible wheel instant of arrival is at or
  after the call is refused as a *poussette* when the call is taken (`late`), however late that is.
- Closed stays closed: nothing from the wheel reopens the table; only an explicit open does.
"""

from cylindre.link import protocol as pr

from host_tools.table.wheel.clock import WheelClock

CLOSED, BETTING, NO_MORE = "closed", "betting", "no_more_bets"
FRESH_MS = 1000         # two of the link's 500-ms status periods: one lost STATUS is tolerated
LATE_STATUSES = 4       # this many STATUS in a row too old on arrival (2 s): no bet is possible


def is_int(x):
    """An integer that is not a bool (a wheel instant, a spin number)."""
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
        if is_int(at) and w is not None and self.clock.boot == boot:
            self.late = self.late + 1 if w - at > self.fresh_ms else 0
        if not (is_int(at) and is_int(emitted)) or emitted > taken or status.get("state") in pr.NO_BETS_STATES:
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
    if bet_boot != call_boot or bet_wheel_ms is None or not is_int(call_ms):
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
