"""The bets on the layout (le tapis), compiled, in memory: the open bets and those locked to a
called spin, each validated and compiled once, when it is placed (`compile_bet`).

The journal stays the authority: this is a copy the table keeps in step with every change it
makes to an open or locked bet, in the same transaction, and rebuilds from the journal when it
starts and whenever a transaction rolls back (`Table.reload`). A spin is then settled from the
compiled bets (flow.py builds a `Book` of them) with no bet read back or parsed again.

The tapis also keeps the bets in a `Book` (rules/compiled.py, the settlement's input, in columns)
as they are placed: a bet placed is appended to the open bets' book (ids only grow), the call
hands that book to its spin when it locks exactly those bets, and the result settles it with no
book built on its path (`spin_book`). Any other change (a withdrawal, a poussette, an unlock, new
limits) drops the book concerned, and the next call builds it from the entries; the game builds
its own when it has none that matches (flow.py, `_Step.book`).

An entry is the dict the game's `Facts` carry: `id`, `player`, `stake`, `wheel_boot`,
`wheel_ms`, `body` (the bet as placed, a dict), `spin` (None while open) and `compiled`
(`(shape, multiplier, excess)` under the limits in force, or None when the bet does not pass
them any more: the settlement then compiles it again and refuses it, "invalid at settlement").
"""

from __future__ import annotations

import json
from operator import itemgetter

from cylindre.rules.bets import BetError
from cylindre.rules.compiled import Book, compile_bet
from cylindre.rules.limits import Limits

from host_tools.table.game.reglement import Colonnes


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
        self.limits = Limits()
        self._open = _Shelf(self.limits)        # the open bets' book, in order of id (None: to build)
        self.spin_book = None   # (spin, book) of the bets locked to `spin`, or None
        self._locked = None     # (shelf, its entries in order of id): `locked()` while spin_book holds

    def __len__(self):
        return len(self.bets)

    def load(self, rows, limits):
        """Every open and locked bet of the journal (ledger.on_layout rows), compiled."""
        self.bets = {}
        self.limits = limits
        self._open = _Shelf(limits)
        self.spin_book = None
        for r in rows:
            self.put(entry(r, limits))
        spins = {e["spin"] for e in self.bets.values() if e["spin"] is not None}
        if len(spins) == 1:
            spin = spins.pop()
            self.spin_book = (spin, self._build(spin))
        self._open = self._build(None)

    def put(self, e):
        self.bets[e["id"]] = e
        if e["spin"] is not None:
            self._locked = None                 # the locked bets are no longer those the call kept
        elif self._open is not None and not self._open.append(e):
            self._open = None

    def drop(self, bid):
        e = self.bets.pop(bid, None)
        if e is None:
            return
        if e["spin"] is None:
            self._open = None
        elif self.spin_book is not None and self.spin_book[0] == e["spin"]:
            self.spin_book = None

    def lock(self, spin, ids):
        for bid in ids:
            e = self.bets.get(bid)
            if e is not None and e["spin"] is None:
                e["spin"] = spin
        shelf = self._open
        if shelf is not None and shelf.book.ids == ids and all(self.bets[b]["spin"] == spin for b in ids):
            self.spin_book = (spin, shelf)      # the book built as the bets were placed
        else:
            self.spin_book = (spin, self._build(spin))
        self._open = self._build(None)
        shelf = self.spin_book[1]
        if shelf is not None:                   # the locked bets in order, if they are exactly its book's
            out = self.locked()
            if [e["id"] for e in out] == shelf.book.ids:
                self._locked = (shelf, out)

    def unlock(self):
        for e in self.bets.values():
            e["spin"] = None
        self.spin_book = None
        self._open = None

    def drop_locked(self, spin=None):
        """The bets locked (to `spin`, or to any spin) leave the layout: settled or held. When
        the layout is exactly the open bets' book and the bets the call locked to `spin`, the
        open ones are kept by their ids (no pass over ten thousand locked ones)."""
        bets = self.bets
        sb, lk, shelf = self.spin_book, self._locked, self._open
        if (spin is not None and sb is not None and sb[0] == spin and lk is not None and lk[0] is sb[1]
                and shelf is not None and len(bets) == len(shelf.book) + len(lk[1])):
            self.bets = {bid: bets[bid] for bid in shelf.book.ids}
            self.spin_book = None
            return
        if spin is None:
            self.bets = {b: e for b, e in bets.items() if e["spin"] is None}
        else:
            self.bets = {b: e for b, e in bets.items() if e["spin"] != spin}
        if spin is None or (self.spin_book is not None and self.spin_book[0] == spin):
            self.spin_book = None

    def relimit(self, limits):
        """New limits: every bet compiled again under them (None where they refuse it)."""
        self.limits = limits
        for e in self.bets.values():
            e["compiled"] = compiled(e["body"], limits)
        self._open = None
        self.spin_book = None

    def book_of(self, spin):
        """The book of the bets locked to `spin` and their choices at zero (`Shelf`), built as
        they were placed; None if the tapis has none (the game then builds its own). Its
        settlement appends the bets carried from the last spin to it: it serves once."""
        sb = self.spin_book
        return sb[1] if sb is not None and sb[0] == spin else None

    def _build(self, spin):
        """A shelf of the bets locked to `spin` (None: the open bets), in order of id, or None
        if one of them does not pass the limits in force (the game refuses it at settlement)."""
        shelf = _Shelf(self.limits)
        for e in sorted((e for e in self.bets.values() if e["spin"] == spin), key=_id):
            if not shelf.append(e):
                return None
        return shelf

    def open_bets(self):
        if self._open is not None and not self._open.book.ids:
            return []                           # the open bets' shelf holds every open bet: none
        return sorted((e for e in self.bets.values() if e["spin"] is None), key=_id)

    def locked_exact(self) -> bool:
        """`locked()` answers the bets the call locked, exactly its spin book's, in its order."""
        sb = self.spin_book
        return sb is not None and self._locked is not None and self._locked[0] is sb[1]

    def locked(self):
        """The locked bets in order of id (kept from the call that locked them, when it locked
        exactly its book's: a result's step reads them without sorting ten thousand again)."""
        sb = self.spin_book
        if sb is not None and self._locked is not None and self._locked[0] is sb[1]:
            return self._locked[1]
        return sorted((e for e in self.bets.values() if e["spin"] is not None), key=_id)

    def snapshot(self):
        """What the layout holds, without the compiled shapes: for comparing with a rebuild."""
        return {bid: {k: v for k, v in e.items() if k != "compiled"} for bid, e in self.bets.items()}


class _Shelf:
    """Bets in a `Book` in order of id, with the choices at zero of its even chances and the
    book's columns (reglement.Colonnes: what flow.py's `_Step.book` gives the settlement)."""
    __slots__ = ("book", "choices", "cols")

    def __init__(self, limits):
        self.book = Book(limits)
        self.choices = {}
        self.cols = Colonnes()

    def append(self, e):
        """Add entry `e` after the others; False if it cannot be (compiled None, an id not after the last)."""
        c = e["compiled"]
        ids = self.book.ids
        if c is None or (ids and e["id"] <= ids[-1]):
            return False
        body = e["body"]
        self.book.add_compiled(e["id"], c[0], c[1], c[2], body)
        self.cols.add(c[0], c[1], c[2], e["id"])
        zc = body.get("zero_choice")
        if zc is not None and c[0].family == "simple":
            self.choices[e["id"]] = zc
        return True


def entry(row, limits, body=None):
    """The entry of a bet row (id, player, stake, wheel_boot, wheel_ms, body, status, spin)."""
    body = json.loads(row["body"]) if body is None else body
    return {"id": row["id"], "player": row["player"], "stake": row["stake"], "wheel_boot": row["wheel_boot"],
            "wheel_ms": row["wheel_ms"], "body": body, "spin": row["spin"] if row["status"] == "locked" else None,
            "compiled": compiled(body, limits)}


_id = itemgetter("id")
