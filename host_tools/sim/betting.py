"""When the wheel's word lets the table take bets (la fenêtre des mises, vue du cylindre).

The table takes a bet only on the wheel's fresh word that the spin is not called (docs/internals/betting-window.md,
"The betting window"): its call (`rnvp`) closes betting at once; a result or a void closes it
until the status that follows says what now; a status closes it when its state is one of
`NO_BETS` (the spin called, or the wheel in fault) and opens it otherwise. Pure: the property
tests and the bench read a controller's events with it.
"""

from __future__ import annotations

from cylindre.link.protocol import NO_BETS_STATES


def closed_at(events: list[dict], t: int) -> bool:
    """Is betting closed at controller time `t` by the wheel's events up to it?"""
    closed = False
    for ev in events:
        if ev["t"] > t:
            break
        closed = _after(closed, ev)
    return closed


def first_open(events: list[dict], a: int, b: int) -> int | None:
    """The first instant in [a, b) at which the wheel's word lets the table take bets, or None
    when betting stays closed all through (events in time order)."""
    if a >= b:
        return None
    closed = False
    i = 0
    while i < len(events) and events[i]["t"] <= a:
        closed = _after(closed, events[i])
        i += 1
    if not closed:
        return a
    while i < len(events) and events[i]["t"] < b:
        closed = _after(closed, events[i])
        if not closed:
            return events[i]["t"]
        i += 1
    return None


def _after(closed: bool, ev: dict) -> bool:
    kind = ev.get("ev")
    if kind == "rnvp" or kind in ("result", "void"):
        return True
    if kind == "status":
        return ev.get("state") in NO_BETS_STATES or not ev.get("table_open", True)
    return closed
