"""The settlement as it was before bets were compiled (commit ce0c694, `rules/settle.py`): one
`parse_bet` per bet on every spin, then a per-bet loop building a dict per bet.

Kept on the host only, for two uses: the *before* figure that `make bench ARGS=settle` prints
beside the compiled path in the same run, and the oracle the compiled settlement is tested equal
to (tests/test_compiled_*.py). Not used by the daemon or the CLI.
"""

from cylindre.rules import wheel, prison, replay, annonce_fr
from cylindre.rules.bets import parse_bet, zero_choice, BetError
from cylindre.rules.limits import Limits

# Payment order (001, 004): columns, dozens, even chances, then combinations from the widest.
PAY_ORDER = ("colonne", "douzaine", "simple", "sixain", "transversale", "carre", "cheval", "plein")
_RANK = {}
for _i in range(len(PAY_ORDER)):
    _RANK[PAY_ORDER[_i]] = _i
INSIDE = ("sixain", "transversale", "carre", "cheval", "plein")
# Sides of the layout (002 "lo zero"): the right croupier's chances and the left one's.
SIDE = {"noir": "droite", "pair": "droite", "passe": "droite",
        "rouge": "gauche", "impair": "gauche", "manque": "gauche"}


def paying_croupier(n):
    """Even number (and zero): the left croupier pays and the right one rakes; odd: swapped."""
    return "gauche" if n % 2 == 0 else "droite"


def _result(bid, type_, label, staked, outcome, won, returned, lost, imprisoned):
    return {"id": bid, "type": type_, "label": label, "staked": staked, "outcome": outcome,
            "won": won, "returned": returned, "lost": lost, "imprisoned": imprisoned,
            "paid": won + returned}


def _normalise_choices(choices):
    out = {}
    if choices is None:
        return out
    if type(choices) in (list, tuple):
        items = []
        for c in choices:
            if type(c) is not dict or "id" not in c:
                raise BetError("a choice at zero is {\"id\": BET, \"choice\": \"partage\"}, not %r" % (c,))
            items.append((str(c["id"]), c.get("choice", c.get("move") and {"move": c.get("move")})))
    elif type(choices) is dict:
        items = [(str(k), choices[k]) for k in choices]
    else:
        raise BetError("choices must map bet ids to \"prison\", \"partage\" or {\"move\": CHANCE}")
    for bid, v in items:
        out[bid] = zero_choice(v, "choice for bet %s" % bid)
    return out


def settle_spin_before(number, bets, prisoners=(), choices=None, limits=None):
    """Settle one spin. `bets`: parsed `Bet`s or bet dicts; `prisoners`: carried dicts (see
    `prison`); `choices`: {bet id: 'prison' | 'partage' | {'move': chance}} for this zero."""
    if not wheel.check_number(number):
        raise BetError("the winning number must be 0 to 36, not %r" % (number,))
    if limits is None:
        limits = Limits()
    parsed = []
    ids = {}
    for b in bets:
        if type(b) is dict:
            b = parse_bet(b, limits)
        if b.id in ids:
            raise BetError("bet %s: the same id is used twice in this spin" % b.id, b.id)
        ids[b.id] = b
        parsed.append(b)
    chosen = _normalise_choices(choices)
    for bid in chosen:
        b = ids.get(bid)
        if b is not None and b.family != "simple":
            raise BetError("bet %s: a choice at zero applies only to even chances" % bid, bid)
        if b is None and not [p for p in prisoners if type(p) is dict and str(p.get("id")) == bid]:
            raise BetError("choice for bet %s: no even-chance stake of that id in this spin" % bid, bid)

    results = []
    pays = []          # (rank, key, seq, entry)
    new_prisoners = []
    carry = []
    zero = number == 0
    payer = paying_croupier(number)
    for b in parsed:
        if b.family == "simple":
            results.append(_simple(b, number, chosen.get(b.id, b.zero), pays, new_prisoners, payer))
        else:
            results.append(_chips(b, number, pays, carry))
    for p in prisoners:
        msg = prison.check(p)
        if msg:
            raise BetError(msg, p.get("id") if type(p) is dict else None)
        if zero:
            outcome, ret, lost, q = prison.at_zero(p, chosen.get(str(p["id"])))
        else:
            outcome, ret, lost, q = prison.after(p, number)
        r = _result(p["id"], p["chance"], "%s (en prison)" % p["chance"], p["stake"], outcome, 0,
                    ret, lost, q["stake"] if q else 0)
        r["carried"] = True
        r["wins_needed_before"] = p.get("wins_needed", 1)
        if q:
            r["prison"] = {"chance": q["chance"], "wins_needed": q["wins_needed"]}
            new_prisoners.append(q)
        results.append(r)

    pays.sort(key=_pay_key)
    order = [e[3] for e in pays]
    labels = []
    inside_won = False
    for e in order:
        if e["kind"] != "simple" and e["combination"] not in labels:
            labels.append(e["combination"])
        if e["kind"] in INSIDE:
            inside_won = True
    said = [annonce_fr.number_line(number)]
    if zero:
        held = []
        for c in wheel.CHANCES:
            for q in new_prisoners:
                if q["chance"] == c and c not in held:
                    held.append(c)
        line = annonce_fr.prison_line(held)
        if line:
            said.append(line)
    if labels:
        said.append(annonce_fr.winning_line(labels))
    if not inside_won:
        said.append(annonce_fr.RIEN)
    if order:
        said.append(annonce_fr.TOUT_PAYE)

    totals = {"staked": 0, "won": 0, "returned": 0, "lost": 0, "imprisoned": 0, "paid": 0}
    for r in results:
        for k in totals:
            totals[k] += r[k]
    return {"number": number, "announcements": said, "paying_croupier": payer,
            "raking_croupier": "droite" if payer == "gauche" else "gauche",
            "payment_order": order, "results": results, "prisoners": new_prisoners,
            "carry": carry, "totals": totals}


def _pay_key(e):
    return (e[0], e[1], e[2])


def _simple(b, n, choice, pays, new_prisoners, payer):
    played = b.played
    if n != 0:
        if wheel.chance_wins(b.chance, n):
            r = _result(b.id, b.chance, b.label, b.stake, "won", played, played + b.excess, 0, 0)
            far = 0 if SIDE[b.chance] != payer else 1
            pays.append((_RANK["simple"], far, len(pays),
                         {"id": b.id, "kind": "simple", "combination": b.chance, "stake": played,
                          "won": played}))
        else:
            r = _result(b.id, b.chance, b.label, b.stake, "lost", 0, b.excess, played, 0)
    else:
        fresh = {"id": b.id, "chance": b.chance, "stake": played, "wins_needed": 0}
        outcome, ret, lost, q = prison.at_zero(fresh, choice)
        r = _result(b.id, b.chance, b.label, b.stake, outcome, 0, ret + b.excess, lost,
                    q["stake"] if q else 0)
        if q:
            r["prison"] = {"chance": q["chance"], "wins_needed": q["wins_needed"]}
            new_prisoners.append(q)
    if b.excess:
        r["excess"] = b.excess
    return r


def _chips(b, n, pays, carry):
    won = 0
    returned = b.excess
    lost = 0
    win_stake = 0
    winners = []
    won_chips = []
    for c in b.chips:
        if n in c.numbers:
            w = c.played * c.num // c.den
            won += w
            returned += c.played
            win_stake += c.played
            won_chips.append(c)
            winners.append({"combination": c.label, "stake": c.played, "won": w})
            pays.append((_RANK[c.kind], c.played, len(pays),
                         {"id": b.id, "kind": c.kind, "combination": c.label, "stake": c.played,
                          "won": w}))
        else:
            lost += c.played
    r = _result(b.id, b.type, b.label, b.stake, "won" if winners else "lost", won, returned, lost, 0)
    if b.excess:
        r["excess"] = b.excess
    if b.family == "annonce":
        r["unit"] = b.unit
        r["chips"] = chip_units(b)
        r["winning"] = winners
        if b.a_placer:
            r["a_placer"] = True
            r["placed"] = [w["combination"] for w in winners]
        if b.replay and winners:
            r["replay"] = _replay(b, won, win_stake, won_chips, carry)
    if b.carried:
        r["carried"] = True
    return r


def _replay(b, won, win_stake, won_chips, carry):
    """Plan a replay of winning call b and put the new call (and, for refaire, the stakes left
    where they won) in `carry` for the next spin."""
    cost = b.unit * chip_units(b)
    p = replay.plan(b.replay, cost, b.unit, won, win_stake)
    if p is None:
        return {"mode": b.replay, "refused": "the win does not cover the replay"}
    src = {}
    for k in b.source:
        if k not in ("stake", "unit", "replay", "rejouer", "id", "carried"):
            src[k] = b.source[k]
    src["id"] = b.id + ".r"
    src["unit"] = p["unit"]
    src["carried"] = True
    carry.append(src)
    p["bet"] = src["id"]
    if p["left"]:
        left = []
        k = 0
        for c in won_chips:
            k += 1
            lid = b.id + ".s" + (str(k) if len(won_chips) > 1 else "")
            left.append(lid)
            carry.append({"id": lid, "type": c.kind, "numbers": list(c.numbers),
                          "stake": c.played, "carried": True})
        p["left_bets"] = left
    return p


def chip_units(b):
    """How many unit chips a called bet takes (the voisins: 9)."""
    t = 0
    for c in b.chips:
        t += c.stake // b.unit
    return t
