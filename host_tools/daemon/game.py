"""The betting window (le jeu), as pure rules: when a bet may be taken, where the call cuts it.

No I/O and no clock of its own: the shell hands in the wheel's STATUS frames, the events it has
taken and the host instant of each bet. The rules (docs/daemon.md, "The betting window"):

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

from cylindre.link import protocol as pr

from .wheelclock import WheelClock

CLOSED, BETTING, NO_MORE = "closed", "betting", "no_more_bets"
FRESH_MS = 1000         # two of the link's 500-ms status periods: one lost STATUS is tolerated


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


class Window:
    """The evidence that betting is open now, and the wheel's clock it is measured with."""

    def __init__(self, fresh_ms=FRESH_MS):
        self.fresh_ms = fresh_ms
        self.clock = WheelClock()
        self.evidence = None        # (boot, wheel ms) of the last STATUS that says "not called"

    def on_status(self, boot, status, taken):
        """A STATUS of wheel boot `boot`, received when events up to `taken` were taken here."""
        self.clock.echo(boot, status.get("echo"))
        at, emitted = status.get("at_ms"), status.get("emitted")
        if not (_int(at) and _int(emitted)) or emitted > taken or status.get("state") in pr.CALLED_STATES:
            # the wheel said something we have not taken yet (maybe its call), or it says called
            self.evidence = None
            return
        if self.evidence is None or self.evidence[0] != boot or at > self.evidence[1]:
            self.evidence = (boot, at)

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


def after_call(phase):
    """Rien ne va plus: betting stops; a closed table stays closed."""
    return NO_MORE if phase == BETTING else phase


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
