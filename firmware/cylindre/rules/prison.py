"""En prison: what happens to an even-chance stake at zero and after (004, 002 §5).

An imprisoned stake is a plain dict, the form in which it is carried from spin to spin and
stored: {"id": bet id, "chance": "rouge", "stake": cents, "wins_needed": 1..3}.

Reading of the house rules (docs/internals/rules-readings.md): `wins_needed` counts the imprisonments still to be
undone. Each zero while imprisoned adds one (up to three, "a limit of three rounds"); each win of
the chance takes one off, and at none left the stake is released (returned, without winnings);
a loss gives it to the bank. A zero that finds it imprisoned three times (the fourth zero) splits
it: half back to the player, rounded up to the cent, the rest to the bank. At every zero the
player may instead take the partage (same split) or move the stake, still imprisoned, to another
even chance. Saying nothing leaves it en prison.
"""

from cylindre.rules import wheel
from cylindre.rules.names import show

MAX_IMPRISONMENTS = 3


def half_up(stake):
    """The player's half of a partage or split: rounded up to the cent (odd cent to the player)."""
    return (stake + 1) // 2


def new(bid, chance, stake):
    return {"id": bid, "chance": chance, "stake": stake, "wins_needed": 1}


def check(p):
    """Validate a carried prisoner dict; returns an error message or None."""
    if type(p) is not dict:
        return "an imprisoned stake must be an object, not %s" % show(p)
    if "id" not in p:
        return "an imprisoned stake has no id: %s" % show(p)
    if type(p["id"]) is not str and (type(p["id"]) is not int or not -10 ** 12 < p["id"] < 10 ** 12):
        return "an imprisoned stake's id must be a string or an integer, not %s" % show(p["id"])
    if p.get("chance") not in wheel.CHANCES:
        return "imprisoned stake %s: unknown even chance %s" % (p["id"], show(p.get("chance")))
    s = p.get("stake")
    if type(s) is not int or not 0 < s <= 10 ** 12:
        return "imprisoned stake %s: stake must be positive integer cents, not %s" % (p["id"], show(s))
    w = p.get("wins_needed", 1)
    if type(w) is not int or not 1 <= w <= MAX_IMPRISONMENTS:
        return "imprisoned stake %s: wins_needed must be 1 to 3, not %s" % (p["id"], show(w))
    return None


def at_zero(p, choice):
    """A zero finds prisoner p (or a fresh stake with wins_needed 0).

    Returns (outcome, returned, lost, prisoner-or-None). `choice` is None, 'prison', 'partage'
    or ('move', chance)."""
    s = p["stake"]
    w = p.get("wins_needed", 0)
    if choice == "partage" or w >= MAX_IMPRISONMENTS:
        h = half_up(s)
        return ("partage" if choice == "partage" else "split"), h, s - h, None
    chance = p["chance"]
    if type(choice) is tuple and choice[0] == "move":
        chance = choice[1]
    return "imprisoned", 0, 0, {"id": p["id"], "chance": chance, "stake": s, "wins_needed": w + 1}


def after(p, n):
    """A non-zero number n comes for prisoner p: (outcome, returned, lost, prisoner-or-None)."""
    s = p["stake"]
    if wheel.chance_wins(p["chance"], n):
        w = p.get("wins_needed", 1) - 1
        if w <= 0:
            return "released", s, 0, None
        return "imprisoned", 0, 0, {"id": p["id"], "chance": p["chance"], "stake": s, "wins_needed": w}
    return "lost", 0, s, None
