"""What the table says now (l'annonce), on every screen: the marquee, the pit, the floor's tile.

One rule for all of them and for `POST /bets`: "faites vos jeux" only while a bet would be accepted
now, that is while the betting window admits one (`window.Window.admit`, as `Table.admit` applies
it: fresh word from the wheel that the spin is not called, the table open, the wheel known). The
phase alone is not enough: an open table whose wheel is silent (a cable pulled, a daemon that never
heard a wheel) refuses every bet, and says so.

Pure: the phase and the window's verdict in, a code out; the pages and the floor word the code
(libelles.ANNONCE), never the phase.
"""

from __future__ import annotations

from host_tools.table.game.window import BETTING, CLOSED, NO_MORE

# the codes, in the API's English (GET /state `table.annonce`, the floor's tile)
FAITES_VOS_JEUX, RIEN_NE_VA_PLUS, FERMEE, SUSPENDUE = "betting", "no_more_bets", "closed", "suspended"
CODES = (FAITES_VOS_JEUX, RIEN_NE_VA_PLUS, FERMEE, SUSPENDUE)
UNKNOWN = "unknown"       # a verdict nobody gave (a source that does not send one): never "faites vos jeux"


def annonce(phase, refusing) -> str:
    """The table's words now. `refusing`: the window's refusal code for a bet arriving now, None
    when it would be accepted (`Table.admit`), UNKNOWN when no verdict is known.

    closed -> "closed"; the spin called -> "no_more_bets"; open and a bet would be taken ->
    "betting"; open and no bet can be taken (wheel not heard, wheel unknown, no verdict) ->
    "suspended"."""
    if phase == CLOSED:
        return FERMEE
    if phase == NO_MORE:
        return RIEN_NE_VA_PLUS
    if phase == BETTING and refusing is None:
        return FAITES_VOS_JEUX
    return SUSPENDUE


def verdict(phase, admitted) -> dict:
    """The part of the table's state every screen reads, from the phase and `Table.admit`'s answer
    `(status, reason, where)` with how long it stays good without new word from the wheel
    (`open_for_ms`, window.Window.open_for): a screen stops saying "faites vos jeux" when it runs
    out, as `POST /bets` starts refusing then."""
    status, reason, _ = admitted[:3]
    refusing = None if status == "open" else (reason or UNKNOWN)
    return {"annonce": annonce(phase, refusing), "accepting_bets": refusing is None, "refusing": refusing}
