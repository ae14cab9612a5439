"""The bets on the layout (le tapis), compiled, in memory: the open bets and those locked to a
called spin, each validated and compiled once, when it is placed (`compile_bet`).

The journal stays the authority: this is a copy the table keeps in step with every change it
makes to an open or locked bet, in the same transaction, and rebuilds from the journal when it
starts and whenever a transaction rolls back (`Table.reload`). A spin is then settled from the
compiled bets (game.py builds a `Book` of them) with no bet read back or parsed again.

An entry is the dict the game's `Facts` carry: `id`, `player`, `stake`, `wheel_boot`,
`wheel_ms`, `body` (the bet as placed, a dict), `spin` (None while open) and `compiled`
(`(shape, multiplier, excess)` under the limits in force, or None when the bet does not pass
them any more: the settlement then compiles it again and refuses it, "invalid at settlement").
"""

from __future__ import annotations

import json
from operator import itemgetter

from cylindre.rules.bets import BetError
from cylindre.rules.compiled import compile_bet


def compiled(body, limits):
    """A placed bet's (shape, multiplier, excess) under `limits`, or None if they refuse it."""
    bet = {k: v for k, v in body.items() if k != "zero_choice"}
    try:
        _, shape, mult, excess = compile_bet(bet, limits)
    except BetError:
        return None
    return shape, mult, excess


class Tapis:
    def __init__(self):
        self.bets = {}          # id -> entry (see the module docstring), open or locked

    def __len__(self):
        return len(self.bets)

    def load(self, rows, limits):
        """Every open and locked bet of the journal (ledger.on_layout rows), compiled."""
        self.bets = {}
        for r in rows:
            self.put(entry(r, limits))

    def put(self, e):
        self.bets[e["id"]] = e

    def drop(self, bid):
        self.bets.pop(bid, None)

    def lock(self, spin, ids):
        for bid in ids:
            e = self.bets.get(bid)
            if e is not None and e["spin"] is None:
                e["spin"] = spin

    def unlock(self):
        for e in self.bets.values():
            e["spin"] = None

    def drop_locked(self, spin=None):
        """The bets locked (to `spin`, or to any spin) leave the layout: settled or held."""
        bets = self.bets
        if spin is None:
            self.bets = {b: e for b, e in bets.items() if e["spin"] is None}
        else:
            self.bets = {b: e for b, e in bets.items() if e["spin"] != spin}

    def relimit(self, limits):
        """New limits: every bet compiled again under them (None where they refuse it)."""
        for e in self.bets.values():
            e["compiled"] = compiled(e["body"], limits)

    def open_bets(self):
        return sorted((e for e in self.bets.values() if e["spin"] is None), key=_id)

    def locked(self):
        return sorted((e for e in self.bets.values() if e["spin"] is not None), key=_id)

    def snapshot(self):
        """What the layout holds, without the compiled shapes: for comparing with a rebuild."""
        return {bid: {k: v for k, v in e.items() if k != "compiled"} for bid, e in self.bets.items()}


def entry(row, limits, body=None):
    """The entry of a bet row (id, player, stake, wheel_boot, wheel_ms, body, status, spin)."""
    body = json.loads(row["body"]) if body is None else body
    return {"id": row["id"], "player": row["player"], "stake": row["stake"], "wheel_boot": row["wheel_boot"],
            "wheel_ms": row["wheel_ms"], "body": body, "spin": row["spin"] if row["status"] == "locked" else None,
            "compiled": compiled(body, limits)}


_id = itemgetter("id")
