"""The settlement on the host (règlement en colonnes): the shared rules' settlement, computed
with NumPy over the bets' columns.

`firmware/cylindre/rules/settle.py` is the reference: it runs on the Pico and settles bet by bet
in Python. On the table host a spin holds thousands of bets, so this module settles the same
`Book` with array arithmetic: per bet one gather of its shape's row for the number (what it wins,
hands back, which chips win), per winning chip one entry of the payment order, sorted once. The
few bets that need a decision of their own (even chances at zero, replays of a winning call, the
stakes carried en prison at a zero) go through the reference's own functions; the prisoners a
zero left, settled on the next number, are columns of their own (prisonniers.py). The answer is a
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
from cylindre.rules.settle import (INSIDE, PAY_ORDER, SIDE, SIMPLE, Settlement, _RANK, _replay, announcements_of,
                                   carried_prisoners, carry_on, check, paying_croupier, totals_of)
from host_tools.table.game.prisonniers import Prisonniers, settle_after

# outcome codes of the column `outcome` (the reference's words, by index; the last two are a
# carried prisoner's only)
OUTCOMES = ("lost", "won", "imprisoned", "partage", "released", "split")
LOST, WON, IMPRISONED, PARTAGE = 0, 1, 2, 3
_INSIDE_RANKS = frozenset(_RANK[k] for k in INSIDE)
_SIMPLE_FAMILY = "simple"


class _Registry:
    """Every shape the host has settled with, numbered once (`gid`), and per number the tables
    of what each shape settles to there, as NumPy arrays grown with the shapes: a settlement
    gathers from them with no Python work per shape. Emptied past MAX_SHAPES (a capped call
    makes a shape of its own), at the start of a settlement only; `epoch` then changes, and
    columns numbered before it are built again from their book."""

    def __init__(self):
        self.epoch = 0
        self.clear()

    def clear(self):
        self.epoch += 1
        self.shapes = []
        self.index = {}
        self.labels = {}            # a winning combination's label -> its number
        self.names = []
        self.pairs = {}             # (type, label) -> its number: a result's and a payment's names
        self.pair_names = []
        self.gpair = array("q")     # per shape, its result's (type, label)
        self.gcall = array("b")     # per shape, 1 for a called bet
        self.numbers = [_Number(self, n) for n in range(37)]

    def gid(self, s):
        g = self.index.get(s)
        if g is None:
            g = self.index[s] = len(self.shapes)
            self.shapes.append(s)
            self.gpair.append(self.pair(s.chance if s.family == _SIMPLE_FAMILY else s.type, s.label))
            self.gcall.append(s.family == "annonce")
        return g

    def warm(self):
        """Every number's tables made for the shapes known: the call does it while the ball runs
        (the result's step then only gathers; a number's first sight cost it 9 ms)."""
        for num in self.numbers:
            num.tables()

    def pair(self, type_, label):
        k = self.pairs.get((type_, label))
        if k is None:
            k = self.pairs[(type_, label)] = len(self.pair_names)
            self.pair_names.append((type_, label))
        return k

    def label(self, text):
        k = self.labels.get(text)
        if k is None:
            k = self.labels[text] = len(self.names)
            self.names.append(text)
        return k


MAX_SHAPES = 50000


class _Number:
    """What each shape settles to on one number, in arrays by gid: a unit's win, what it hands
    back, the divisor, the units, even chance or not, a replay that plays; and its winning
    chips, flattened (`off`, `nch`): rank, units, chip index, label, the side of an even chance."""

    def __init__(self, reg, n):
        self.reg, self.n = reg, n
        self.payer = paying_croupier(n)
        self.lists = {k: [] for k in ("won", "back", "den", "units", "simple", "replay", "nch", "off",
                                      "f_rank", "f_units", "f_ci", "f_lab", "f_far", "f_simple", "f_num", "f_den", "f_pair")}
        self.done = 0               # shapes in the lists
        self.arrays = None          # the lists as arrays, for `done` shapes

    def tables(self):
        shapes = self.reg.shapes
        if self.done < len(shapes):
            L = self.lists
            n = self.n
            for s in shapes[self.done:]:
                w = s.won[n]
                simple = s.family == _SIMPLE_FAMILY
                L["won"].append(w)
                L["back"].append(s.back[n])
                L["den"].append(s.den)
                L["units"].append(s.units)
                L["simple"].append(simple)
                L["replay"].append(bool(w and s.replay))
                L["off"].append(len(L["f_rank"]))
                if not w:
                    chips = ()
                elif simple:
                    chips = ((SIMPLE, 0, -1, self.reg.label(s.chance), 0 if SIDE[s.chance] != self.payer else 1, 1, 1,
                              self.reg.pair("simple", s.chance)),)
                else:
                    chips = [(_RANK[c[0]], c[2], ci, self.reg.label(c[5]), 0, c[3], c[4], self.reg.pair(c[0], c[5]))
                             for ci, c in ((ci, s.chips[ci]) for ci in s.winning[n])]
                L["nch"].append(len(chips))
                for rank, u, ci, lab, far, num, den, pair in chips:
                    L["f_pair"].append(pair)
                    L["f_num"].append(num)
                    L["f_den"].append(den)
                    L["f_rank"].append(rank)
                    L["f_units"].append(u)
                    L["f_ci"].append(ci)
                    L["f_lab"].append(lab)
                    L["f_far"].append(far)
                    L["f_simple"].append(simple)
            self.done = len(shapes)
            self.arrays = None
        if self.arrays is None:
            self.arrays = {k: np.array(v, dtype=bool if k in ("simple", "replay", "f_simple") else np.int64)
                           for k, v in self.lists.items()}
        return self.arrays


REGISTRY = _Registry()


class Colonnes:
    """A book's bets as columns: for each bet its shape's number (`REGISTRY.gid`), its
    multiplier and its excess, appended as the bets are (`add`: one bet in C arrays); and their
    ids as the ledger's fixed-width text (`id_text`), when given and alike (resultats.py)."""
    __slots__ = ("gidx", "mult", "excess", "epoch", "ids", "width")

    def __init__(self):
        self.gidx = array("q")
        self.mult = array("q")
        self.excess = array("q")
        self.epoch = REGISTRY.epoch
        self.ids = bytearray()
        self.width = 0              # every id's length; -1: not every bet's id is here alike

    def __len__(self):
        return len(self.gidx)

    def add(self, shape, mult, excess, bid=None):
        self.gidx.append(REGISTRY.gid(shape))
        self.mult.append(mult)
        self.excess.append(excess)
        w = self.width
        if w >= 0:
            if type(bid) is str and bid.isascii() and bid.isprintable() and " " not in bid \
                    and (w == len(bid) or (w == 0 and bid and len(self.gidx) == 1)):
                self.ids += bid.encode("ascii")
                self.width = len(bid)
            else:
                self.width = -1

    def id_text(self, ids):
        """The ledger's id column of `ids` (the book these columns are of): (bytes, width) as
        resultats._text makes it, or None where the ids were not all kept alike."""
        w = self.width
        n = len(ids)
        if w <= 0 or n != len(self.gidx) or len(self.ids) != n * w \
                or (n and (self.ids[:w].decode("ascii") != ids[0] or self.ids[-w:].decode("ascii") != ids[-1])):
            return None
        return bytes(self.ids), w

    def catch_up(self, book):
        """Append the bets of `book` past the ones these columns hold (the carried bets a
        settlement adds to the book, or a whole book built without columns)."""
        add = self.add
        ids = book.ids
        for i in range(len(self.gidx), len(book)):
            add(book.shapes[i], book.mults[i], book.excess[i], ids[i])
        return self


class _Row:
    """What the reference's `Settlement.result(i)` reads of a `Reglement`, at position i alone."""
    __slots__ = ("_r", "book", "extra", "number", "won", "returned", "lost", "imprisoned", "outcome")

    def __init__(self, r, i):
        self._r, self.book, self.extra, self.number = r, r.book, r.extra, r.number
        self.won, self.returned = {i: int(r.a_won[i])}, {i: int(r.a_returned[i])}
        self.lost, self.imprisoned = {i: int(r.a_lost[i])}, {i: int(r.a_imprisoned[i])}
        self.outcome = {i: OUTCOMES[int(r.a_outcome[i])]}

    def staked(self, i):
        return self._r.staked(i)


class Reglement(Settlement):
    """A spin settled in columns (NumPy int64: `a_won`, `a_returned`, `a_lost`, `a_imprisoned`,
    `a_staked`, and the bets' `a_gid`, `a_mult`, `a_excess`; int8 `a_outcome`, codes of
    OUTCOMES; the payment order `p_pos`, `p_ci`, `p_rank`, `p_key` sorted, `p_f` its entries in
    `p_tables`, the number's tables). The reference's list attributes (`won`, `outcome`, `pays`, ...)
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
        self.cols = None            # the book's Colonnes (their ids' text: resultats.pack)

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

    def result(self, i):
        """One bet's result, by the reference's code; while no column was made a list, from its
        row of the arrays (a few called bets' results on the result's path must not turn ten
        thousand of every column into lists)."""
        if "won" in self._lists:
            return Settlement.result(self, i)
        return Settlement.result(_Row(self, i), i)

    def results(self):
        self.won                        # every result: the columns as lists once
        return Settlement.results(self)

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
    # the prisoners this process's settlement made are sound (Prisonniers): the number and the
    # choices are checked, not each prisoner again, unless a choice may name one
    made = type(prisoners) is Prisonniers
    if made and choices:
        prisoners, made = list(prisoners), False    # (the rules take a list or a tuple, no subclass)
    chosen = check(book, number, () if made else prisoners, choices)
    if len(REGISTRY.shapes) > MAX_SHAPES:
        REGISTRY.clear()
    if cols is None or len(cols) > len(book) or cols.epoch != REGISTRY.epoch:
        cols = Colonnes()
    cols.catch_up(book)
    st = Reglement(book, number)
    st.cols = cols
    n = number
    t = REGISTRY.numbers[n].tables()
    count = len(cols)
    g = _column(cols.gidx, count)
    mult = _column(cols.mult, count)
    excess = _column(cols.excess, count)
    w = t["won"][g]
    back = mult * t["back"][g]
    played = mult * t["units"][g]
    won = mult * w // t["den"][g]
    returned = excess + back
    lost = played - back
    imprisoned = np.zeros(count, np.int64)
    winner = w != 0
    st.a_won, st.a_returned, st.a_lost, st.a_imprisoned = won, returned, lost, imprisoned
    st.a_outcome = winner.astype(np.int8)
    st.a_staked = played + excess
    st.a_gid, st.a_mult, st.a_excess = g.copy(), mult.copy(), excess.copy()
    later = []
    if n == 0:
        at_zero = np.flatnonzero(t["simple"][g])      # even chances at zero: prison or partage
        if len(at_zero):
            _even_chances_at_zero(st, g, at_zero, played, excess, chosen, later)
    _payments(st, t, g, mult, winner)
    replays = np.flatnonzero(t["replay"][g])
    if len(replays):
        st._lists["won"] = won.tolist()            # _replay reads st.won[i] as an int
        shapes = REGISTRY.shapes
        for i in replays.tolist():
            _replay(st, shapes[g[i]], i, later)
    carry_on(st, later)
    if prisoners and n != 0:            # a zero's 1,500 prisoners on the next number: in columns
        st.carried_results = settle_after(prisoners, n, st.prisoners)
        sums = [st.carried_results.sums()]
    else:
        carried_prisoners(st, prisoners, chosen)
        sums = st.carried_results
    st.prisoners = Prisonniers(st.prisoners)
    st.announcements = _announcements(st)
    st.totals = totals_of(int(st.a_staked.sum()), int(won.sum()), int(returned.sum()), int(lost.sum()),
                          int(imprisoned.sum()), sums)
    return st


def _column(a, count):
    return np.frombuffer(a, dtype=np.int64, count=count) if count else np.zeros(0, np.int64)


def _even_chances_at_zero(st, g, where, played, excess, chosen, later):
    """Even chances at zero (prison.at_zero on a fresh stake): en prison, unless the player's
    choice (`chosen`, else the bet's standing one) is the partage, or a move to another chance."""
    ids = st.book.ids
    shapes = REGISTRY.shapes
    out, ret, lost, imp = st.a_outcome, st.a_returned, st.a_lost, st.a_imprisoned
    gl = g[where].tolist()
    kinds = {gi: shapes[gi] for gi in set(gl)}
    if not chosen and all(s.zero is None or s.zero == "prison" for s in kinds.values()):
        # no choice anywhere: every one en prison (a zero's 1,500 at a stadium), built at once
        wl = where.tolist()
        qs = [{"id": ids[i], "chance": kinds[gi].chance, "stake": stake, "wins_needed": 1}
              for i, gi, stake in zip(wl, gl, played[where].tolist())]
        out[where] = IMPRISONED
        lost[where] = 0
        imp[where] = played[where]
        st.extra.update(zip(wl, qs))
        later.extend((i, q, None) for i, q in zip(wl, qs))
        return
    for i, gi, stake in zip(where.tolist(), gl, played[where].tolist()):
        s = shapes[gi]
        c = chosen.get(ids[i], s.zero) if chosen else s.zero
        if c is None or c == "prison":               # en prison (prison.at_zero, wins_needed 0)
            q = {"id": ids[i], "chance": s.chance, "stake": stake, "wins_needed": 1}
        else:
            oc, r, lo, q = prison.at_zero({"id": ids[i], "chance": s.chance, "stake": stake, "wins_needed": 0}, c)
            if q is None:
                out[i] = OUTCOMES.index(oc)
                ret[i] = r + excess[i]
                lost[i] = lo
                continue
        out[i] = IMPRISONED
        lost[i] = 0
        imp[i] = stake
        st.extra[i] = q
        later.append((i, q, None))


def _payments(st, t, g, mult, winner):
    """The payment order (rank, key, bet position, chip index) of the winning bets, sorted as
    the reference sorts its list: one entry per winning chip, an even chance's key its side."""
    pos = np.flatnonzero(winner)
    gw = g[pos]
    rep = t["nch"][gw]
    total = int(rep.sum())
    st.p_tables = t
    if total == 0:
        st.p_rank = st.p_key = st.p_pos = st.p_ci = st.p_lab = st.p_f = np.zeros(0, np.int64)
        return
    e_pos = np.repeat(pos, rep)
    starts = np.cumsum(rep) - rep
    f = np.repeat(t["off"][gw] - starts, rep) + np.arange(total)
    rank = t["f_rank"][f]
    ci = t["f_ci"][f]
    key = np.where(t["f_simple"][f], t["f_far"][f], t["f_units"][f] * mult[e_pos])
    order = np.lexsort((ci, e_pos, key, rank))
    st.p_rank, st.p_key, st.p_pos, st.p_ci = rank[order], key[order], e_pos[order], ci[order]
    st.p_f = f[order]
    st.p_lab = t["f_lab"][st.p_f]


_INSIDE_LIST = sorted(_INSIDE_RANKS)


def _announcements(st):
    """The croupier's words (rules.settle.announcements_of) from the sorted payment order: the
    winning combinations' labels in the order paid, first seen first."""
    labels = []
    inside_won = False
    if len(st.p_pos):
        lab = st.p_lab[st.p_rank != SIMPLE]
        if len(lab):
            _, first = np.unique(lab, return_index=True)
            names = REGISTRY.names
            labels = [names[k] for k in lab[np.sort(first)].tolist()]
        inside_won = bool(np.isin(st.p_rank, _INSIDE_LIST).any())
    return announcements_of(st.number, st.prisoners, labels, inside_won, len(st.p_pos) > 0)


__all__ = ("Colonnes", "Reglement", "settle", "OUTCOMES", "PAY_ORDER")
