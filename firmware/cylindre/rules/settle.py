"""After the ball stops: the settlement of one spin (règlement d'un coup).

`settle_book` settles the compiled bets of a `Book` (compiled.py) into a `Settlement`: money in
columns, one entry per bet (won, returned, lost, imprisoned; staked = returned + lost +
imprisoned), the payment order, the French announcements, the stakes to carry en prison and the
bets to carry (replays). Per bet it is one look-up in its shape's table of the number; only the
winning bets are touched one by one. `Settlement.to_json()` builds the per-bet dicts for output.

`settle_spin` is the one-call form (bet dicts or parsed `Bet`s in, the JSON-ready dict out).
"""

from cylindre.rules import wheel, prison, replay, annonce_fr
from cylindre.rules.bets import zero_choice, BetError, Bet
from cylindre.rules.compiled import Book
from cylindre.rules.limits import Limits
from cylindre.rules.names import show

# Payment order (001, 004): columns, dozens, even chances, then combinations from the widest.
PAY_ORDER = ("colonne", "douzaine", "simple", "sixain", "transversale", "carre", "cheval", "plein")
_RANK = {}
for _i in range(len(PAY_ORDER)):
    _RANK[PAY_ORDER[_i]] = _i
SIMPLE = _RANK["simple"]
INSIDE = ("sixain", "transversale", "carre", "cheval", "plein")
# Sides of the layout (002 "lo zero"): the right croupier's chances and the left one's.
SIDE = {"noir": "droite", "pair": "droite", "passe": "droite",
        "rouge": "gauche", "impair": "gauche", "manque": "gauche"}
_TOTALS = ("staked", "won", "returned", "lost", "imprisoned", "paid")


def paying_croupier(n):
    """Even number (and zero): the left croupier pays and the right one rakes; odd: swapped."""
    return "gauche" if n % 2 == 0 else "droite"


def _result(bid, type_, label, staked, outcome, won, returned, lost, imprisoned):
    return {"id": bid, "type": type_, "label": label, "staked": staked, "outcome": outcome,
            "won": won, "returned": returned, "lost": lost, "imprisoned": imprisoned,
            "paid": won + returned}


def _choice_id(v):
    if type(v) is str:
        return v
    if type(v) is int and -10 ** 12 < v < 10 ** 12:
        return str(v)
    raise BetError("a choice at zero names its bet by a string or an integer id, not %s" % show(v))


def normalise_choices(choices):
    """{bet id: 'prison' | 'partage' | ('move', chance)} from a spin's choices at zero."""
    out = {}
    if choices is None:
        return out
    if type(choices) in (list, tuple):
        items = []
        for c in choices:
            if type(c) is not dict or "id" not in c:
                raise BetError("a choice at zero is {\"id\": BET, \"choice\": \"partage\"}, not %s" % show(c))
            items.append((_choice_id(c["id"]), c.get("choice", c.get("move") and {"move": c.get("move")})))
    elif type(choices) is dict:
        items = [(_choice_id(k), choices[k]) for k in choices]
    else:
        raise BetError("choices must map bet ids to \"prison\", \"partage\" or {\"move\": CHANCE}")
    for bid, v in items:
        out[bid] = zero_choice(v, "choice for bet %s" % bid)
    return out


class Settlement:
    """One spin settled, in columns indexed like the book's bets; `extra` holds what only a few
    bets have (a prison entry, a replay), `carried_results` the results of carried prisoners."""

    def __init__(self, book, number):
        n = len(book)
        self.book = book
        self.number = number
        self.payer = paying_croupier(number)
        self.won = [0] * n
        self.returned = list(book.excess)
        self.lost = list(book.played)
        self.imprisoned = [0] * n
        self.outcome = ["lost"] * n
        self.extra = {}
        self.pays = []               # (rank, key, bet position, chip index): sorted, the payment order
        self.prisoners = []
        self.carry = []
        self.carried_results = []
        self.announcements = []
        self.totals = {}

    def staked(self, i):
        return self.book.played[i] + self.book.excess[i]

    def payment(self, e):
        """One entry of the payment order as a dict."""
        book = self.book
        i = e[2]
        s = book.shapes[i]
        if e[3] < 0:
            return {"id": book.ids[i], "kind": "simple", "combination": s.chance, "stake": book.played[i],
                    "won": book.played[i]}
        kind, _, u, num, den, label, _ = s.chips[e[3]]
        played = u * book.mults[i]
        return {"id": book.ids[i], "kind": kind, "combination": label, "stake": played, "won": played * num // den}

    def result(self, i):
        """The result dict of the book's bet at position i."""
        book = self.book
        s = book.shapes[i]
        excess = book.excess[i]
        won = self.won[i]
        if s.family == "simple":
            r = _result(book.ids[i], s.chance, s.label, self.staked(i), self.outcome[i], won,
                        self.returned[i], self.lost[i], self.imprisoned[i])
            q = self.extra.get(i)
            if q:
                r["prison"] = {"chance": q["chance"], "wins_needed": q["wins_needed"]}
            if excess:
                r["excess"] = excess
            return r
        r = _result(book.ids[i], s.type, s.label, self.staked(i), self.outcome[i], won, self.returned[i],
                    self.lost[i], 0)
        if excess:
            r["excess"] = excess
        if s.family == "annonce":
            m = book.mults[i]
            r["unit"] = s.unit if s.unit is not None else m
            r["chips"] = s.count
            winners = []
            for ci in s.winning[self.number]:
                _, _, u, num, den, label, _ = s.chips[ci]
                winners.append({"combination": label, "stake": u * m, "won": u * m * num // den})
            r["winning"] = winners
            if s.a_placer:
                r["a_placer"] = True
                r["placed"] = [w["combination"] for w in winners]
            rp = self.extra.get(i)
            if rp is not None:
                r["replay"] = rp
        if book.carried.get(i):
            r["carried"] = True
        return r

    def results(self):
        """Every bet's result dict (input order), then the carried prisoners'."""
        results = [self.result(i) for i in range(len(self.book))]
        results.extend(self.carried_results)
        return results

    def summary(self):
        """The settlement as `settle_spin` returns it, but for the per-bet `results`."""
        return {"number": self.number, "announcements": self.announcements,
                "paying_croupier": self.payer,
                "raking_croupier": "droite" if self.payer == "gauche" else "gauche",
                "payment_order": [self.payment(e) for e in self.pays],
                "prisoners": self.prisoners, "carry": self.carry, "totals": self.totals}

    def to_json(self):
        """The settlement as `settle_spin` returns it (docs/integrators/rules-api.md)."""
        out = self.summary()
        out["results"] = self.results()
        return out


def check(book, number, prisoners, choices):
    """The inputs of a settlement checked (`BetError` naming the bad one): the players' choices
    at zero, normalised ({bet id: choice})."""
    if not wheel.check_number(number):
        raise BetError("the winning number must be 0 to 36, not %s" % show(number))
    if type(prisoners) not in (list, tuple):
        raise BetError("prisoners must be a list of imprisoned stakes")
    chosen = normalise_choices(choices)
    for bid in chosen:
        fam = book.family(bid)
        if fam is not None and fam != "simple":
            raise BetError("bet %s: a choice at zero applies only to even chances" % bid, bid)
        if fam is None and not [p for p in prisoners if type(p) is dict and p.get("id") is not None
                                and (p.get("id") == bid or show(p.get("id")) == bid)]:
            raise BetError("choice for bet %s: no even-chance stake of that id in this spin" % bid, bid)
    for p in prisoners:
        msg = prison.check(p)
        if msg:
            raise BetError(msg, p.get("id") if type(p) is dict else None)
    return chosen


def settle_book(book, number, prisoners=(), choices=None):
    """Settle the bets of `book` on `number`, with the carried `prisoners` (dicts, see `prison`)
    and the players' `choices` at a zero; returns a `Settlement`. Raises `BetError` for a bad
    number, prisoner or choice."""
    chosen = check(book, number, prisoners, choices)
    st = Settlement(book, number)
    n = number
    mults = book.mults
    won, returned, lost, outcome, pays = st.won, st.returned, st.lost, st.outcome, st.pays
    later = []           # (position, prisoner) and (position, carried bets): kept in bet order
    for s, members in book.groups:
        w = s.won[n]
        if s.family == "simple":
            if n == 0:
                _simple_at_zero(st, s, members, chosen, later)
                continue
            if not w:
                continue
            far = 0 if SIDE[s.chance] != st.payer else 1
            for i in members:
                m = mults[i]
                won[i] = m
                returned[i] += m
                lost[i] = 0
                outcome[i] = "won"
                pays.append((SIMPLE, far, i, -1))
            continue
        if not w:
            continue
        bk = s.back[n]
        den = s.den
        chips = [(_RANK[s.chips[ci][0]], s.chips[ci][2], ci) for ci in s.winning[n]]
        for i in members:
            m = mults[i]
            won[i] = m * w // den
            returned[i] += m * bk
            lost[i] -= m * bk
            outcome[i] = "won"
            for rank, u, ci in chips:
                pays.append((rank, u * m, i, ci))
        if s.replay:
            for i in members:
                _replay(st, s, i, later)
    pays.sort()
    carry_on(st, later)
    carried_prisoners(st, prisoners, chosen)
    st.announcements = _announcements(st)
    st.totals = totals_of(sum(book.played) + sum(book.excess), sum(won), sum(returned), sum(lost),
                          sum(st.imprisoned), st.carried_results)
    return st


def carry_on(st, later):
    """What the spin carries to the next, in bet order: the stakes it imprisoned (`st.prisoners`)
    and the bets its replays carry (`st.carry`); `later` holds (position, prisoner, bets)."""
    if later:
        later.sort(key=_first)
        for i, q, bets in later:
            if q is not None:
                st.prisoners.append(q)
            if bets:
                st.carry.extend(bets)


def carried_prisoners(st, prisoners, chosen):
    """The stakes carried en prison from the last spin, settled on st's number: their results
    to `st.carried_results`, those still imprisoned to `st.prisoners`."""
    zero = st.number == 0
    for p in prisoners:
        if zero:
            if "wins_needed" not in p:      # carried without it: imprisoned once (prison.check)
                p = {"id": p["id"], "chance": p["chance"], "stake": p["stake"], "wins_needed": 1}
            oc, ret, lo, q = prison.at_zero(p, chosen.get(_prisoner_id(p)))
        else:
            oc, ret, lo, q = prison.after(p, st.number)
        r = _result(p["id"], p["chance"], "%s (en prison)" % p["chance"], p["stake"], oc, 0,
                    ret, lo, q["stake"] if q else 0)
        r["carried"] = True
        r["wins_needed_before"] = p.get("wins_needed", 1)
        if q:
            r["prison"] = {"chance": q["chance"], "wins_needed": q["wins_needed"]}
            st.prisoners.append(q)
        st.carried_results.append(r)


def totals_of(staked, won, returned, lost, imprisoned, carried_results):
    """The spin's totals: the sums over its bets, plus those of the carried prisoners."""
    t = {"staked": staked, "won": won, "returned": returned, "lost": lost, "imprisoned": imprisoned}
    for r in carried_results:
        for k in ("staked", "won", "returned", "lost", "imprisoned"):
            t[k] += r[k]
    t["paid"] = t["won"] + t["returned"]
    out = {}
    for k in _TOTALS:
        out[k] = t[k]
    return out


def _first(e):
    return e[0]


def _prisoner_id(p):
    v = p["id"]
    return v if type(v) is str else str(v)


def _simple_at_zero(st, s, members, chosen, later):
    """Even chances at zero: en prison, or the partage or the move the player chose."""
    book = st.book
    for i in members:
        played = book.played[i]
        fresh = {"id": book.ids[i], "chance": s.chance, "stake": played, "wins_needed": 0}
        oc, ret, lo, q = prison.at_zero(fresh, chosen.get(book.ids[i], s.zero))
        st.outcome[i] = oc
        st.returned[i] = ret + book.excess[i]
        st.lost[i] = lo
        if q:
            st.imprisoned[i] = q["stake"]
            st.extra[i] = q
            later.append((i, q, None))


def _replay(st, s, i, later):
    """Plan a replay of winning call i and carry the new call (and, for refaire, the stakes left
    where they won) to the next spin."""
    book = st.book
    m = book.mults[i]
    unit = s.unit if s.unit is not None else m
    win_stake = 0
    won_chips = []
    for ci in s.winning[st.number]:
        kind, numbers, u, _, _, _, _ = s.chips[ci]
        win_stake += u * m
        won_chips.append((kind, numbers, u * m))
    p = replay.plan(s.replay, unit * s.count, unit, st.won[i], win_stake)
    if p is None:
        st.extra[i] = {"mode": s.replay, "refused": "the win does not cover the replay"}
        return
    source = book.sources[i]
    bid = book.ids[i]
    src = {}
    for k in source:
        if k not in ("stake", "unit", "replay", "rejouer", "id", "carried"):
            src[k] = source[k]
    if s.fill:
        for k in s.fill:
            src[k] = s.fill[k]
    src["id"] = bid + ".r"
    src["unit"] = p["unit"]
    src["carried"] = True
    carry = [src]
    p["bet"] = src["id"]
    if p["left"]:
        left = []
        k = 0
        for kind, numbers, played in won_chips:
            k += 1
            lid = bid + ".s" + (str(k) if len(won_chips) > 1 else "")
            left.append(lid)
            carry.append({"id": lid, "type": kind, "numbers": list(numbers), "stake": played, "carried": True})
        p["left_bets"] = left
    st.extra[i] = p
    later.append((i, None, carry))


def _announcements(st):
    """What the croupier says: the number, at zero the chances en prison, the winning
    combinations in the order paid (or "rien au numéro"), then "tout est payé"."""
    labels = []
    seen = {}
    inside_won = False
    shapes = st.book.shapes
    for e in st.pays:
        if e[0] == SIMPLE:
            continue
        label = shapes[e[2]].chips[e[3]][5]
        if label not in seen:
            seen[label] = True
            labels.append(label)
        if not inside_won and PAY_ORDER[e[0]] in INSIDE:
            inside_won = True
    return announcements_of(st.number, st.prisoners, labels, inside_won, len(st.pays) > 0)


def announcements_of(number, prisoners, labels, inside_won, paid):
    """The croupier's words for `number`: `prisoners` held after it, the winning combinations'
    `labels` in the order paid, whether an inside one won, whether anything was paid."""
    said = [annonce_fr.number_line(number)]
    if number == 0:
        held = []
        for c in wheel.CHANCES:
            for q in prisoners:
                if q["chance"] == c:
                    held.append(c)
                    break
        line = annonce_fr.prison_line(held)
        if line:
            said.append(line)
    if labels:
        said.append(annonce_fr.winning_line(labels))
    if not inside_won:
        said.append(annonce_fr.RIEN)
    if paid:
        said.append(annonce_fr.TOUT_PAYE)
    return said


def book_of(bets, limits=None):
    """A `Book` of bet dicts and/or parsed `Bet`s, compiled under `limits` (defaults if None)."""
    book = Book(limits if limits is not None else Limits())
    for b in bets:
        if type(b) is dict:
            book.add(b)
        elif isinstance(b, Bet):
            book.add_bet(b)
        else:
            book.add(b)        # raises: a bet must be an object
    return book


def settle_spin(number, bets, prisoners=(), choices=None, limits=None):
    """Settle one spin. `bets`: parsed `Bet`s or bet dicts; `prisoners`: carried dicts (see
    `prison`); `choices`: {bet id: 'prison' | 'partage' | {'move': chance}} for this zero.
    Returns the JSON-ready dict of docs/integrators/rules-api.md."""
    if not wheel.check_number(number):
        raise BetError("the winning number must be 0 to 36, not %s" % show(number))
    return settle_book(book_of(bets, limits), number, prisoners, choices).to_json()


def chip_units(b):
    """How many unit chips a called bet (a parsed `Bet`) takes (the voisins: 9)."""
    t = 0
    for c in b.chips:
        t += c.stake // b.unit
    return t
