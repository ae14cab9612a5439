"""The settlement on the host (règlement en colonnes): the shared rules' settlement, computed
with NumPy over the bets' columns.

`firmware/cylindre/rules/settle.py` is the reference: it runs on the Pico and settles bet by bet
in Python. On the table host a spin holds thousands of bets, so this module settles the same
`Book` with array arithmetic: per bet one gather of its shape's row for the number (what it wins,
hands back, which chips win), per winning chip one entry of the payment order, sorted once. The
few bets that need a decision of their own (even chances at zero, replays of a winning call, the
stakes carried en prison) go through the reference's own functions. The answer is a
`Reglement`, a `Settlement` whose money sits in NumPy columns: the reference's output methods
(`result`, `results`, `summary`, `to_json`) read them, so the dicts it gives are the
reference's; the ledger writes the columns as they are (ledger.py, format 5).

Same cents as the reference on every bet: tests/table/game/test_reglement.py compares the two
on random layouts, zeros, prisons, calls and limits (hypothesis).

`Colonnes` are a book's columns kept as its bets are placed (tapis.py), so a settlement does not
convert ten thousand Python integers on the result's path; a book without them is converted then.
"""

from __future__ import annotations

from array import array

import numpy as np

from cylindre.rules import prison
from cylindre.rules.settle import (INSIDE, PAY_ORDER, SIDE, SIMPLE, Settlement, _RANK, _first, _replay,
                                   announcements_of, carried_prisoners, check, paying_croupier, totals_of)

# outcome codes of the column `outcome` (the reference's words, by index)
OUTCOMES = ("lost", "won", "imprisoned", "partage")
LOST, WON, IMPRISONED, PARTAGE = 0, 1, 2, 3
_INSIDE_RANKS = frozenset(_RANK[k] for k in INSIDE)
_SIMPLE_FAMILY = "simple"


class Colonnes:
    """A book's bets as columns: for each bet its shape's index (in `shapes`, first seen first),
    its multiplier and its excess, appended as the bets are (`add`, one bet in C arrays)."""
    __slots__ = ("shapes", "index", "gidx", "mult", "excess")

    def __init__(self):
        self.shapes = []          # distinct shapes, in order of first use
        self.index = {}           # shape -> its index in shapes
        self.gidx = array("q")
        self.mult = array("q")
        self.excess = array("q")

    def __len__(self):
        return len(self.gidx)

    def add(self, shape, mult, excess):
        g = self.index.get(shape)
        if g is None:
            g = self.index[shape] = len(self.shapes)
            self.shapes.append(shape)
        self.gidx.append(g)
        self.mult.append(mult)
        self.excess.append(excess)

    def catch_up(self, book):
        """Append the bets of `book` past the ones these columns hold (the carried bets a
        settlement adds to the book, or a whole book built without columns)."""
        add = self.add
        for i in range(len(self.gidx), len(book)):
            add(book.shapes[i], book.mults[i], book.excess[i])
        return self


class _Row:
    """What a shape settles to on one number (cached per shape and number): what a unit wins,
    hands back, the divisor, and the winning chips' (rank, units, chip index, label)."""
    __slots__ = ("won", "back", "den", "units", "simple", "chips", "far")

    def __init__(self, s, n):
        self.won = s.won[n]
        self.back = s.back[n]
        self.den = s.den
        self.units = s.units
        self.simple = s.family == _SIMPLE_FAMILY
        if self.simple:
            self.chips = ((SIMPLE, 0, -1, None),) if self.won else ()
            self.far = 0 if SIDE[s.chance] != paying_croupier(n) else 1
        else:
            self.chips = tuple((_RANK[s.chips[ci][0]], s.chips[ci][2], ci, s.chips[ci][5])
                               for ci in s.winning[n]) if self.won else ()
            self.far = 0


_rows = {}
MAX_ROWS = 20000        # shapes x numbers cached (a new one past it empties the cache)


def _row(s, n):
    key = (s, n)
    r = _rows.get(key)
    if r is None:
        if len(_rows) >= MAX_ROWS:
            _rows.clear()
        r = _rows[key] = _Row(s, n)
    return r


class Reglement(Settlement):
    """A spin settled in columns (NumPy int64: `a_won`, `a_returned`, `a_lost`, `a_imprisoned`,
    `a_staked`; int8 `a_outcome`, codes of OUTCOMES; the payment order `p_pos`, `p_ci`,
    `p_rank`, `p_key` sorted). The reference's list attributes (`won`, `outcome`, `pays`, ...)
    are built from them when first read, for the reference's output methods."""

    def __init__(self, book, number):
        self.book = book
        self.number = number
        self.payer = paying_croupier(number)
        self.extra = {}
        self.prisoners = []
        self.carry = []
        self.carried_results = []
        self.announcements = []
        self.totals = {}
        self._lists = {}

    def _list(self, name, make):
        v = self._lists.get(name)
        if v is None:
            v = self._lists[name] = make()
        return v

    # the reference's columns, as lists (read by Settlement.result, payment, summary)
    won = property(lambda self: self._list("won", self.a_won.tolist))
    returned = property(lambda self: self._list("returned", self.a_returned.tolist))
    lost = property(lambda self: self._list("lost", self.a_lost.tolist))
    imprisoned = property(lambda self: self._list("imprisoned", self.a_imprisoned.tolist))
    outcome = property(lambda self: self._list("outcome", lambda: [OUTCOMES[c] for c in self.a_outcome.tolist()]))
    pays = property(lambda self: self._list("pays", lambda: list(zip(
        self.p_rank.tolist(), self.p_key.tolist(), self.p_pos.tolist(), self.p_ci.tolist()))))

    def staked(self, i):
        return int(self.a_staked[i])

    def won_bets(self):
        return int(np.count_nonzero(self.a_outcome == WON))

    def lost_bets(self):
        return int(np.count_nonzero(self.a_outcome == LOST))

    def payments(self):
        return len(self.p_pos)

    def head(self):
        """`summary()` but for the payment order (the columns hold it: ledger.py writes them)."""
        return {"number": self.number, "announcements": self.announcements, "paying_croupier": self.payer,
                "raking_croupier": "droite" if self.payer == "gauche" else "gauche",
                "prisoners": self.prisoners, "carry": self.carry, "totals": self.totals}


def settle(book, number, prisoners=(), choices=None, cols=None):
    """Settle `book` on `number` as `rules.settle.settle_book` does (same arguments, same
    `BetError`s), in columns: a `Reglement`. `cols`: the book's `Colonnes` kept as it was
    filled (None: built now)."""
    chosen = check(book, number, prisoners, choices)
    if cols is None or len(cols) > len(book):
        cols = Colonnes()
    cols.catch_up(book)
    st = Reglement(book, number)
    n = number
    rows = [_row(s, n) for s in cols.shapes]
    count = len(cols)
    g = np.frombuffer(cols.gidx, dtype=np.int64, count=count) if count else np.zeros(0, np.int64)
    mult = np.frombuffer(cols.mult, dtype=np.int64, count=count) if count else np.zeros(0, np.int64)
    excess = np.frombuffer(cols.excess, dtype=np.int64, count=count) if count else np.zeros(0, np.int64)
    g_won = np.array([r.won for r in rows], dtype=np.int64)
    g_back = np.array([r.back for r in rows], dtype=np.int64)
    g_den = np.array([r.den for r in rows], dtype=np.int64)
    g_units = np.array([r.units for r in rows], dtype=np.int64)
    g_simple = np.array([r.simple for r in rows], dtype=bool)
    w = g_won[g]
    back = mult * g_back[g]
    played = mult * g_units[g]
    won = mult * w // g_den[g]
    returned = excess + back
    lost = played - back
    imprisoned = np.zeros(count, np.int64)
    winner = w != 0
    at_zero = None
    if n == 0 and g_simple.any():
        at_zero = g_simple[g]                       # even chances at zero: no win, prison or partage
        winner &= ~at_zero
        won[at_zero] = 0
        returned[at_zero] = excess[at_zero]
        lost[at_zero] = played[at_zero]
    outcome = winner.astype(np.int8)
    st.a_won, st.a_returned, st.a_lost, st.a_imprisoned, st.a_outcome = won, returned, lost, imprisoned, outcome
    st.a_staked = played + excess
    later = []
    if at_zero is not None:
        _even_chances_at_zero(st, cols, np.flatnonzero(at_zero), played, chosen, later)
    _payments(st, rows, g, mult, winner)
    replays = [k for k in range(len(rows)) if rows[k].won and cols.shapes[k].replay]
    if replays:
        st._lists["won"] = won.tolist()            # _replay reads st.won[i] as an int
        for i in np.flatnonzero(winner & np.isin(g, replays)).tolist():
            _replay(st, cols.shapes[g[i]], i, later)
    if later:
        later.sort(key=_first)
        for _, q, bets in later:
            if q is not None:
                st.prisoners.append(q)
            if bets:
                st.carry.extend(bets)
    carried_prisoners(st, prisoners, chosen)
    st.announcements = _announcements(st, rows, g)
    st.totals = totals_of(int(st.a_staked.sum()), int(won.sum()), int(returned.sum()), int(lost.sum()),
                          int(imprisoned.sum()), st.carried_results)
    return st


def _even_chances_at_zero(st, cols, where, played, chosen, later):
    """Even chances at zero (prison.at_zero on a fresh stake): en prison, unless the player's
    choice (`chosen`, else the bet's standing one) is the partage, or a move to another chance."""
    book = st.book
    ids = book.ids
    shapes = cols.shapes
    gl = np.frombuffer(cols.gidx, dtype=np.int64, count=len(cols))
    fresh_choice = {}
    for i in where.tolist():
        s = shapes[gl[i]]
        c = chosen.get(ids[i], s.zero) if chosen else s.zero
        if c is not None and c != "prison":
            fresh_choice[i] = c
    plays = played[where].tolist()
    excess = np.frombuffer(cols.excess, dtype=np.int64, count=len(cols))
    out, ret, lost, imp = st.a_outcome, st.a_returned, st.a_lost, st.a_imprisoned
    for i, stake in zip(where.tolist(), plays):
        c = fresh_choice.get(i)
        if c is None:                               # en prison (prison.at_zero, wins_needed 0)
            q = {"id": ids[i], "chance": shapes[gl[i]].chance, "stake": stake, "wins_needed": 1}
        else:
            oc, r, lo, q = prison.at_zero({"id": ids[i], "chance": shapes[gl[i]].chance, "stake": stake,
                                           "wins_needed": 0}, c)
            if q is None:
                out[i] = PARTAGE if oc == "partage" else OUTCOMES.index(oc)
                ret[i] = r + excess[i]
                lost[i] = lo
                continue
        out[i] = IMPRISONED
        lost[i] = 0
        imp[i] = stake
        st.extra[i] = q
        later.append((i, q, None))


def _payments(st, rows, g, mult, winner):
    """The payment order (rank, key, bet position, chip index) of the winning bets, sorted as
    the reference sorts its list: one entry per winning chip, an even chance's key its side."""
    pos = np.flatnonzero(winner)
    gw = g[pos]
    nch = np.array([len(r.chips) for r in rows], dtype=np.int64)
    rep = nch[gw]
    total = int(rep.sum())
    if total == 0:
        st.p_rank = st.p_key = st.p_pos = st.p_ci = np.zeros(0, np.int64)
        st.p_lab = []
        return
    f_rank, f_units, f_ci, f_lab, f_far, f_simple = [], [], [], [], [], []
    labels = {}
    for r in rows:
        for rank, u, ci, label in r.chips:
            f_rank.append(rank)
            f_units.append(u)
            f_ci.append(ci)
            f_far.append(r.far)
            f_simple.append(r.simple)
            f_lab.append(-1 if label is None else labels.setdefault(label, len(labels)))
    off = np.concatenate(([0], np.cumsum(nch)[:-1]))
    e_pos = np.repeat(pos, rep)
    starts = np.cumsum(rep) - rep
    f = np.repeat(off[gw], rep) + (np.arange(total) - np.repeat(starts, rep))
    f_rank = np.array(f_rank, dtype=np.int64)[f]
    f_ci = np.array(f_ci, dtype=np.int64)[f]
    key = np.where(np.array(f_simple, dtype=bool)[f], np.array(f_far, dtype=np.int64)[f],
                   np.array(f_units, dtype=np.int64)[f] * mult[e_pos])
    order = np.lexsort((f_ci, e_pos, key, f_rank))
    st.p_rank, st.p_key, st.p_pos, st.p_ci = f_rank[order], key[order], e_pos[order], f_ci[order]
    st.p_lab = np.array(f_lab, dtype=np.int64)[f][order]
    st.p_labels = list(labels)


def _announcements(st, rows, g):
    """The croupier's words (rules.settle.announcements_of) from the sorted payment order: the
    winning combinations' labels in the order paid, first seen first."""
    labels = []
    inside_won = False
    if len(st.p_pos):
        lab = st.p_lab[st.p_rank != SIMPLE]
        if len(lab):
            _, first = np.unique(lab, return_index=True)
            names = st.p_labels
            labels = [names[k] for k in lab[np.sort(first)].tolist()]
        inside_won = bool(np.isin(st.p_rank, list(_INSIDE_RANKS)).any())
    return announcements_of(st.number, st.prisoners, labels, inside_won, len(st.p_pos) > 0)


__all__ = ("Colonnes", "Reglement", "settle", "OUTCOMES", "PAY_ORDER")
