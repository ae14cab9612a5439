"""Replaying a winning call from its win (002 §9, 004): refaire, compléter, par le tout.

With W the win and s the stake on the winning combination(s), C the call's cost (chips × unit):
- refaire: a new call of C is taken from W; s stays where it won; change W − C.
- compléter: the winning stake is taken back into the new call: C − s from W; change W − C + s.
- par le tout (série and voisins only): W + s buys as many whole calls as it can (a série
  triples, the voisins double); the change is the rest (three times the stake on 0/2/3).
Returns a dict or None when the win does not cover the replay.
"""


def plan(mode, cost, unit, win, stake):
    if mode == "refaire":
        if win < cost:
            return None
        return {"mode": mode, "multiplier": 1, "unit": unit, "stake": cost, "left": stake,
                "change": win - cost}
    if mode == "completer":
        if win + stake < cost:
            return None
        return {"mode": mode, "multiplier": 1, "unit": unit, "stake": cost, "left": 0,
                "change": win + stake - cost}
    if mode == "tout":
        k = (win + stake) // cost
        if k < 1:
            return None
        return {"mode": mode, "multiplier": k, "unit": unit * k, "stake": cost * k, "left": 0,
                "change": win + stake - cost * k}
    return None
