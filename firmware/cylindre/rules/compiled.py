"""Compiled bets (mises compilées): a bet validated and expanded once, when it is placed.

A compiled bet is a *shape* and a *multiplier*. The shape is the bet without its stake: its
family and type, its French label, its chips (kind, numbers, units, payout, label) and, for each
of the 37 numbers, what it wins, what it hands back and which chips win, in units. The
multiplier is the stake (a bet on the layout, an even chance) or the unit (a called bet). Bets
that differ only in id and stake share one shape, kept in a bounded cache, so a spin of 10 000
bets holds a few hundred shapes (`parse_bet` runs once per shape, not once per bet).

`Book` keeps the compiled bets of one spin, column by column; `settle.py` settles a book.
A chip capped by a table maximum gets a shape of its own (units = cents played, multiplier 1).
"""

from cylindre.rules import wheel
from cylindre.rules.bets import parse_bet, bet_id, stake_of, cents_text, BetError
from cylindre.rules.limits import Limits

# Fields of a bet dict that are not part of its shape.
PER_BET = ("id", "stake", "unit", "carried")
# At most this many shapes are cached (a new one past it empties the cache: only speed is lost).
MAX_SHAPES = 2048
# A field nested deeper than this, or a list longer, is not cached (such a bet is checked in
# full every time it is compiled).
_KEY_DEPTH = 4
_KEY_ITEMS = 64
_TAG = object()     # marks a value that is neither str nor int in a cache key (True is not 1)


class Shape:
    """A bet without its stake; see the module docstring. `chips`: tuples (kind, numbers, units,
    num, den, label, exempt); `count`: chip units for the output (the voisins: 9)."""

    def __init__(self, family, type_, label, chips, chance=None, count=0):
        self.family = family
        self.type = type_
        self.label = label
        self.chips = chips
        self.chance = chance
        self.count = count
        self.zero = None       # an even chance's standing choice at zero
        self.a_placer = False
        self.replay = None
        self.fill = None       # fields a type like "finale 3" adds to the bet it carries (replays)
        self.unit = None       # a capped call's own shape: its unit (its multiplier is 1) ...
        self.base = None       # ... and the uncapped shape it comes from
        units = 0
        den = 1
        won = [0] * 37
        back = [0] * 37
        winning = [()] * 37
        if family == "simple":
            units = 1
            for n in wheel.chance_numbers(chance):
                won[n] = 1
                back[n] = 1
        for ci in range(len(chips)):
            kind, numbers, u, num, d, _, _ = chips[ci]
            units += u
            den = d                # only a single-chip bet (a straddle) pays a fraction
            for n in numbers:
                won[n] += u * num
                back[n] += u
                winning[n] = winning[n] + (ci,)
        self.units = units
        self.den = den
        self.won = won
        self.back = back
        self.winning = winning
        # per kind: (fewest units on a chip, most units on a chip the maximum applies to)
        limits = {}
        for kind, _, u, _, _, _, exempt in chips:
            lo, hi = limits.get(kind, (u, 0))
            limits[kind] = (min(lo, u), hi if exempt else max(hi, u))
        if family == "simple":
            limits["simple"] = (1, 1)
        self.kinds = [(k, limits[k][0], limits[k][1]) for k in limits]


def shape_of(b, d=None):
    """The shape of parsed `Bet` b (with its multiplier and excess: (shape, mult, excess)).

    `d` is the dict b was parsed from (a type carrying its numbers adds fields to b.source)."""
    if b.family == "simple":
        s = Shape("simple", b.chance, b.label, (), b.chance, 1)
        s.zero = b.zero
        return s, b.played, b.excess
    exempt = b.type == "voisins"
    if b.family == "plain":
        c = b.chips[0]
        s = Shape("plain", b.type, b.label, ((c.kind, c.numbers, 1, c.num, c.den, c.label, False),), None, 1)
        return _with_fill(s, b, d), b.played, b.excess
    chips = []
    count = 0
    for c in b.chips:
        u = c.stake // b.unit
        count += u
        chips.append((c.kind, c.numbers, u, c.num, c.den, c.label, exempt and c.kind == "transversale"))
    s = _call_shape(b, tuple(chips), count)
    s = _with_fill(s, b, d)
    if not b.excess:
        return s, b.unit, 0
    return capped(s, b.unit, [c.played for c in b.chips]), 1, b.excess


def _call_shape(b, chips, count):
    s = Shape("annonce", b.type, b.label, chips, None, count)
    s.a_placer = b.a_placer
    s.replay = b.replay
    return s


def _with_fill(s, b, d):
    if d is not None and b.source is not d:
        s.fill = {}
        for k in b.source:
            if k not in d:
                s.fill[k] = b.source[k]
    return s


def capped(s, unit, played):
    """A called bet's own shape when a table maximum caps some of its chips: each chip's units
    are the cents it plays (`played`, in chip order), the multiplier 1."""
    chips = []
    for i in range(len(s.chips)):
        kind, numbers, _, num, den, label, exempt = s.chips[i]
        chips.append((kind, numbers, played[i], num, den, label, exempt))
    own = Shape(s.family, s.type, s.label, tuple(chips), None, s.count)
    own.a_placer = s.a_placer
    own.replay = s.replay
    own.fill = s.fill
    own.unit = unit
    own.base = s
    return own


def _freeze(v, depth):
    """v as a hashable cache key that only equal JSON values share (1, 1.0 and true differ);
    None when v is too large or too deep to be worth caching."""
    t = type(v)
    if t is str or t is int:
        return v
    if depth >= _KEY_DEPTH:
        return None
    if t is list or t is tuple:
        if len(v) > _KEY_ITEMS:
            return None
        out = []
        for x in v:
            tx = type(x)
            if tx is not str and tx is not int:
                x = _freeze(x, depth + 1)
                if x is None:
                    return None
            out.append(x)
        return tuple(out)
    if t is dict:
        if len(v) > _KEY_ITEMS:
            return None
        out = [_TAG, "dict"]
        for k in v:
            x = _freeze(v[k], depth + 1)
            if x is None or type(k) is not str:
                return None
            out.append((k, x))
        return tuple(out)
    if v is None or t is bool or t is float:
        return (_TAG, v, t is float)
    return None


def shape_key(d):
    """The cache key of bet dict d: every field but PER_BET, frozen; None if not cacheable."""
    out = []
    for k in d:
        if k == "id" or k == "stake" or k == "unit" or k == "carried":
            continue
        v = d[k]
        t = type(v)
        if t is list:                  # the common case, a list of numbers: no call
            for x in v:
                if type(x) is not int:
                    v = _freeze(v, 1)
                    break
            else:
                v = tuple(v)
        elif t is not str and t is not int:
            v = _freeze(v, 1)
        if v is None:
            return None
        out.append((k, v))
    return tuple(out)


_shapes = {}


def compile_bet(d, limits):
    """Validate bet dict d under `limits`: (id, shape, multiplier, excess), or `BetError`.

    The same bets are accepted and refused, with the same messages, as `parse_bet`."""
    if type(d) is not dict:
        parse_bet(d, limits)          # raises the error naming what a bet is
    bid = bet_id(d)
    key = shape_key(d)
    s = _shapes.get(key) if key is not None else None
    if s is None:
        b = parse_bet(d, limits)
        s, mult, excess = shape_of(b, d)
        if key is not None:
            if len(_shapes) >= MAX_SHAPES:
                _shapes.clear()
            _shapes[key] = s if s.base is None else s.base
        return bid, s, mult, excess
    if s.family != "annonce":
        stake = stake_of(d, bid)
        kind = s.kinds[0][0]
        lo = limits.min(kind)
        if stake < lo:
            raise BetError("bet %s: stake %s on %s is below the table minimum %s"
                           % (bid, cents_text(stake), s.label, cents_text(lo)), bid)
        played, excess = limits.cap(kind, stake)
        return bid, s, played, excess
    count = s.count
    unit = d.get("unit")
    if unit is not None:
        unit = stake_of(d, bid, "unit")
        if "stake" in d and d["stake"] != unit * count:
            _refuse(d, limits, bid)    # the stake does not match the chips
    else:
        if d.get("stake") is None:
            _refuse(d, limits, bid)    # no unit
        total = stake_of(d, bid)
        if total % count:
            _refuse(d, limits, bid)    # not a whole number of chips
        unit = total // count
    capped_ = False
    for kind, lo_units, hi_units in s.kinds:
        lo, hi = limits.table[kind]
        if unit * lo_units < lo:
            _refuse(d, limits, bid)    # names the first chip below the minimum
        if unit * hi_units > hi:
            capped_ = True
    if not capped_:
        return bid, s, unit, 0
    played = []
    excess = 0
    for kind, _, u, _, _, _, exempt in s.chips:
        p, x = limits.cap(kind, u * unit, exempt)
        played.append(p)
        excess += x
    return bid, capped(s, unit, played), 1, excess


def _refuse(d, limits, bid):
    """Raise the error `parse_bet` gives for d (the cached shape already told it is refused)."""
    parse_bet(d, limits)
    raise BetError("bet %s: refused" % bid, bid)


class Book:
    """The compiled bets of one spin, column by column (the input order is kept).

    `add(d)` compiles a bet dict (raises `BetError`, the book unchanged); `add_bet(b)` takes a
    bet already parsed by `parse_bet`, `add_compiled` one already compiled. `groups` lists
    (shape, indexes of its bets)."""

    def __init__(self, limits=None):
        self.limits = limits if limits is not None else Limits()
        self.ids = []
        self.shapes = []
        self.mults = []
        self.excess = []
        self.played = []
        self.carried = {}      # position -> True for the bets carried from the last spin
        self.sources = {}      # position -> bet dict, for the calls that may be replayed
        self.index = {}        # id -> position
        self.groups = []       # [shape, [positions]]
        self._group_of = {}    # shape -> its entry in groups

    def __len__(self):
        return len(self.ids)

    def add(self, d):
        bid, s, mult, excess = compile_bet(d, self.limits)
        return self.add_compiled(bid, s, mult, excess, d, d.get("carried") is True)

    def add_bet(self, b):
        s, mult, excess = shape_of(b)
        return self.add_compiled(b.id, s, mult, excess, b.source, b.carried)

    def add_compiled(self, bid, s, mult, excess, source=None, carried=False):
        """A bet compiled before (`compile_bet`'s answer under this book's limits), e.g. when it
        was placed; `source`: its dict, which a replayed call is carried from. (One call a bet,
        no inner one: a daemon's spin adds 10,000 of them on the settlement's path.)"""
        index = self.index
        if bid in index:
            raise BetError("bet %s: the same id is used twice in this spin" % bid, bid)
        i = len(self.ids)
        index[bid] = i
        self.ids.append(bid)
        self.shapes.append(s)
        self.mults.append(mult)
        self.excess.append(excess)
        self.played.append(mult * s.units)
        if carried:
            self.carried[i] = True
        if s.replay is not None:
            self.sources[i] = source
        g = self._group_of.get(s)
        if g is None:
            g = [s, []]
            self._group_of[s] = g
            self.groups.append(g)
        g[1].append(i)
        return i

    def family(self, bid):
        """'plain', 'simple' or 'annonce' for the bet of that id in this book, or None."""
        i = self.index.get(bid)
        return None if i is None else self.shapes[i].family
