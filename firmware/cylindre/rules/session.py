"""A session: spins settled in a row, with limits changed between spins, stakes carried en
prison and replayed calls carried to the next spin. This is what `cylindre settle` runs.

Input (docs/integrators/settle.md): a list of spins, or {"spins": [...], "limits": {...}, "prisoners": [...],
"carry": [...]}. A spin is {"number": n, "bets": [...], "choices": {...}, "limits": {...}} or a
bare number. Errors are `BetError`s whose message starts with the spin ("spin 2: bet b3: …").
"""

from cylindre.rules.bets import BetError, bet_id
from cylindre.rules.limits import Limits, LimitError
from cylindre.rules.settle import settle_spin
from cylindre.rules import prison
from cylindre.rules.names import show

_TOTALS = ("staked", "won", "returned", "lost", "imprisoned", "paid")


def _digits(s):
    """Only ASCII digits (str.isdigit also takes "²", which int() refuses)."""
    for ch in s:
        if not "0" <= ch <= "9":
            return False
    return True


def _spin_error(i, e):
    return BetError("spin %d: %s" % (i, e.message if isinstance(e, BetError) else str(e)),
                    getattr(e, "bet", None))


def _id_order(b):
    """Sort key of a bet given keyed by id: its id as text (a bet that is no object first)."""
    if type(b) is not dict:
        return ""
    v = b.get("id")
    return v if type(v) is str else show(v)


def settle_session(doc):
    """Settle every spin of `doc`; returns {"spins", "prisoners", "carry", "totals", "limits"}."""
    limits = Limits()
    prisoners = []
    carry = []
    if type(doc) is list:
        spins = doc
    elif type(doc) is dict:
        spins = doc.get("spins")
        if spins is None and "number" in doc:
            spins = [doc]             # a single spin
        if type(spins) is not list:
            raise BetError("a session is a list of spins or an object with \"spins\": [...]")
        try:
            limits = limits.updated(doc.get("limits"))
        except LimitError as e:
            raise BetError(str(e))
        prisoners = doc.get("prisoners", doc.get("en_prison", [])) or []
        if type(prisoners) is not list:
            raise BetError("\"prisoners\" must be a list of imprisoned stakes")
        for p in prisoners:
            msg = prison.check(p)
            if msg:
                raise BetError("prisoners: " + msg)
        carry = doc.get("carry", []) or []
        if type(carry) is not list:
            raise BetError("\"carry\" must be a list of bets")
        for b in carry:
            if type(b) is not dict:
                raise BetError("carry: a carried bet must be an object like the bets of a spin, not %s" % show(b))
            try:
                bet_id(b)
            except BetError as e:
                raise BetError("carry: " + e.message)
    else:
        raise BetError("a session is a list of spins or an object with \"spins\": [...]")
    out = []
    totals = {}
    for k in _TOTALS:
        totals[k] = 0
    initial = 0
    for p in prisoners:
        initial += p["stake"]
    i = 0
    for spin in spins:
        i += 1
        if type(spin) is int and type(spin) is not bool:
            spin = {"number": spin}
        if type(spin) is not dict:
            raise BetError("spin %d: a spin is {\"number\": N, \"bets\": [...]}, not %s" % (i, show(spin)))
        number = spin.get("number", spin.get("result", spin.get("winning_number")))
        if number is None:
            raise BetError("spin %d: no winning \"number\"" % i)
        if type(number) is str and 0 < len(number.strip()) <= 2 and _digits(number.strip()):
            number = int(number.strip())
        bets = spin.get("bets", [])
        if type(bets) is dict:        # {"b1": {...}, ...}: the keys are the ids
            keyed = []
            for k in bets:
                b = bets[k]
                if type(b) is dict and "id" not in b:
                    c = {"id": k}
                    for f in b:
                        c[f] = b[f]
                    b = c
                keyed.append(b)
            keyed.sort(key=_id_order)
            bets = keyed
        if type(bets) is not list:
            raise BetError("spin %d: \"bets\" must be a list" % i)
        try:
            if "limits" in spin:
                limits = limits.updated(spin["limits"])
            choices = spin.get("choices", spin.get("zero_choices", spin.get("prison_choices")))
            r = settle_spin(number, carry + bets, prisoners, choices, limits)
        except (BetError, LimitError) as e:
            raise _spin_error(i, e)
        r["spin"] = spin.get("spin", i)
        out.append(r)
        prisoners = r["prisoners"]
        carry = r["carry"]
        for res in r["results"]:
            for k in ("won", "returned", "lost", "paid"):
                totals[k] += res[k]
            if "wins_needed_before" not in res:
                totals["staked"] += res["staked"]
    held = 0
    for p in prisoners:
        held += p["stake"]
    totals["imprisoned"] = held
    totals["imprisoned_at_start"] = initial
    return {"spins": out, "prisoners": prisoners, "carry": carry, "totals": totals,
            "limits": limits.to_json()}
