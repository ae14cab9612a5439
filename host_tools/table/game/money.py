"""The house's money over a coup and a day, defined once: the table's pit, its demo summary, its
published day totals and the floor's tiles and signed reports all count with this module.

- **Turnover (mises)**: the money the players put on the layout, counted once, when it is placed:
  a coup's new stakes (`settlements.staked`, which the ledger writes without the stakes carried
  from the coup before). An en-prison stake is turnover at the coup it was placed on, never again
  at the coups it waits through; a replayed (carried) bet is turnover once too.
- **Paid (payé)**: what the table gave back to the players at that coup: winnings and the stakes
  returned with them, a freed prisoner's stake, a partage's half (`settlements.paid`).
- **Win (résultat)**: turnover - paid, the house's, in integer cents. A stake still en prison at
  the end of a day is in that day's win (placed, not yet given back); it comes out of the win of
  the day it is freed and returned.
- **Hold**: win / turnover (None without turnover).

A settlement message carries the coup's `turnover` (its `staked` is the layout's total, prisoners
included, for the announcements); a table built before this module sent `staked` only, which is
read in its place (and then counts a prisoner again: reconcile.py says so).
"""

from __future__ import annotations

MAX_CENTS = 10 ** 13        # a hundred billion euros: anything beyond is no amount a table sent


def cents(v) -> int | None:
    """An amount in integer cents, or None when it is no amount (a float, a bool, negative, huge)."""
    return v if type(v) is int and 0 <= v <= MAX_CENTS else None


class Totals:
    """Coups settled, turnover and paid (cents), added up; win and hold derived."""

    __slots__ = ("settlements", "turnover", "paid")

    def __init__(self, settlements=0, turnover=0, paid=0):
        self.settlements, self.turnover, self.paid = settlements, turnover, paid

    def add(self, turnover: int, paid: int, settlements: int = 1) -> "Totals":
        self.settlements += settlements
        self.turnover += turnover
        self.paid += paid
        return self

    def __iadd__(self, other: "Totals") -> "Totals":
        return self.add(other.turnover, other.paid, other.settlements)

    @property
    def win(self) -> int:
        return self.turnover - self.paid

    @property
    def hold(self) -> float | None:
        return self.win / self.turnover if self.turnover else None

    def to_json(self) -> dict:
        return {"settlements": self.settlements, "turnover": self.turnover, "paid": self.paid, "win": self.win,
                "hold": self.hold}

    def __eq__(self, other):
        return isinstance(other, Totals) and (self.settlements, self.turnover, self.paid) == \
            (other.settlements, other.turnover, other.paid)

    def __repr__(self):
        return f"Totals(settlements={self.settlements}, turnover={self.turnover}, paid={self.paid})"


def of_settlement(body: dict) -> tuple[int, int, bool]:
    """(turnover, paid, exact) of a settlement message's body: `exact` False when the table sent
    no `turnover` (a table from before this module) or an amount that is none."""
    turnover, paid = cents(body.get("turnover")), cents(body.get("paid"))
    exact = turnover is not None and paid is not None
    if turnover is None:
        turnover = cents(body.get("staked"))
    return turnover or 0, paid or 0, exact


def settled_at(body: dict, at: float) -> float:
    """The instant a settlement counts at: the table's own (`settled_at`, its `settlements.at`),
    else the message's."""
    v = body.get("settled_at")
    return float(v) if type(v) in (int, float) and v == v and abs(v) < 1e11 else float(at)


# -- the table's side: its journal's settlements ------------------------------------------------------
INDEX = "CREATE INDEX IF NOT EXISTS settlements_by_time ON settlements (wheel, at)"


def prepare(db) -> None:
    """The index the day's totals read by (in a transaction of the journal)."""
    db.execute(INDEX)


def day_totals(db, wheel: str, start: float, end: float) -> Totals:
    """The table's own totals of the settlements it made in [start, end) (its journal's
    `settlements`: what its players staked and were paid, to the cent)."""
    n, turnover, paid = db.execute("SELECT COUNT(*), COALESCE(SUM(staked), 0), COALESCE(SUM(paid), 0) FROM settlements "
                                   "WHERE wheel=? AND at >= ? AND at < ?", (wheel, start, end)).fetchone()
    return Totals(int(n), int(turnover), int(paid))


def table_day(journal, wheel: str, gday, now: float) -> dict:
    """The table's figures for the gaming day in progress (the pit's and the demo's summary):
    {day, from, to, settlements, turnover, paid, win, hold}. `gday`: floor.link.gamingday.GamingDay."""
    day = gday.of(now)
    start, end = gday.bounds(day)
    with journal.lock:
        t = day_totals(journal.db, wheel, start, end)
    return {"day": day.isoformat(), "from": start, "to": end, **t.to_json()}
