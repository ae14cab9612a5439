"""Property tests over all 37 numbers (CPython only: fractions, hypothesis).

- every bet type returns 36/37 of its stake on average;
- an even chance with the partage returns 73/74; left en prison, exactly the value of the
  Markov chain of our reading (docs/internals/rules-readings.md), computed here from the rules as written and
  compared with the chain built by enumerating the engine over the 37 numbers;
- a called bet returns what its chips return, number by number;
- conservation: staked = returned + lost + imprisoned for every bet of every spin.
"""

from fractions import Fraction

from hypothesis import given, settings, strategies as st

from cylindre.rules import annonces, layout, wheel
from cylindre.rules.bets import BetError, parse_bet
from cylindre.rules.session import settle_session
from cylindre.rules.settle import settle_spin

STAKE = 1000


def _paid_over_wheel(bet, choices=None):
    total = 0
    for n in range(37):
        res = settle_spin(n, [bet], [], choices)
        (r,) = [x for x in res["results"] if x["id"] == bet["id"]]
        assert r["staked"] == r["returned"] + r["lost"] + r["imprisoned"]
        total += r["paid"]
    return total


def _all_plain_bets():
    for n in range(37):
        yield {"type": "plein", "numbers": [n]}
    for c in layout.all_chevaux():
        yield {"type": "cheval", "numbers": list(c)}
    for t in layout.all_transversales():
        yield {"type": "transversale", "numbers": list(t)}
    for c in layout.all_carres():
        yield {"type": "carre", "numbers": list(c)}
    for s in layout.all_sixains():
        yield {"type": "sixain", "numbers": list(s)}
    for g in (1, 2, 3):
        yield {"type": "douzaine", "which": g}
        yield {"type": "colonne", "which": g}
    for pair in ([1, 2], [2, 3]):
        yield {"type": "douzaine", "which": pair, "consent": True}
        yield {"type": "colonne", "which": pair, "consent": True}


def test_every_layout_bet_returns_36_37_of_its_stake():
    count = 0
    for b in _all_plain_bets():
        b.update(id="b", stake=STAKE)
        # Average return over the 37 equally likely numbers is paid/37 = 36/37 of the stake.
        assert Fraction(_paid_over_wheel(b), 37) == Fraction(36, 37) * STAKE, b
        count += 1
    assert count == 37 + 60 + 14 + 23 + 11 + 6 + 4


def test_even_chance_with_partage_returns_73_74():
    for c in wheel.CHANCES:
        b = {"id": "e", "type": c, "stake": STAKE, "zero": "partage"}
        assert Fraction(_paid_over_wheel(b), 37) == Fraction(73, 74) * STAKE


# --- en prison: the exact expected return of our reading -------------------------------------

def _solve(rows):
    """Gauss-Jordan over Fractions: rows are [a1..ak, rhs]."""
    rows = [[Fraction(x) for x in r] for r in rows]
    k = len(rows)
    for i in range(k):
        piv = next(j for j in range(i, k) if rows[j][i] != 0)
        rows[i], rows[piv] = rows[piv], rows[i]
        rows[i] = [x / rows[i][i] for x in rows[i]]
        for j in range(k):
            if j != i and rows[j][i] != 0:
                f = rows[j][i]
                rows[j] = [a - f * b for a, b in zip(rows[j], rows[i])]
    return [r[-1] for r in rows]


def prison_value_closed_form():
    """V(w): value (per unit stake) of a stake imprisoned w times, read from the rules:
    a win (18/37) takes one imprisonment off (none left: the stake is returned), a loss (18/37)
    loses it, a zero (1/37) adds one, and at a fourth the stake is split (half back)."""
    p, z = Fraction(18, 37), Fraction(1, 37)
    # V1 = p*1 + z*V2 ; V2 = p*V1 + z*V3 ; V3 = p*V2 + z*(1/2)
    v = _solve([[1, -z, 0, p], [-p, 1, -z, 0], [0, -p, 1, z / 2]])
    return {1: v[0], 2: v[1], 3: v[2]}


def prison_value_enumerated(chance="rouge", stake=STAKE):
    """The same chain with its transitions taken from the engine, number by number."""
    rows = []
    for w in (1, 2, 3):
        row = [Fraction(0)] * 4
        row[w - 1] += 1
        for n in range(37):
            res = settle_spin(n, [], [{"id": "x", "chance": chance, "stake": stake, "wins_needed": w}])
            (r,) = res["results"]
            assert r["staked"] == r["returned"] + r["lost"] + r["imprisoned"]
            row[3] += Fraction(r["returned"], 37 * stake)
            if res["prisoners"]:
                row[res["prisoners"][0]["wins_needed"] - 1] -= Fraction(1, 37)
        rows.append(row)
    v = _solve(rows)
    return {1: v[0], 2: v[1], 3: v[2]}


def test_prison_chain_matches_enumeration_over_the_37_numbers():
    closed = prison_value_closed_form()
    assert closed == {1: Fraction(48637, 98642), 2: Fraction(649, 2666), 3: Fraction(13015, 98642)}
    for c in wheel.CHANCES:
        assert prison_value_enumerated(c) == closed


def test_even_chance_left_en_prison_returns_the_chain_value():
    v1 = prison_value_closed_form()[1]
    expected = Fraction(18, 37) * 2 + Fraction(1, 37) * v1
    assert expected == Fraction(3599749, 3649754)      # ≈ 0.98630, just under the partage's 73/74
    assert Fraction(36, 37) < expected < Fraction(73, 74)
    for c in wheel.CHANCES:
        total = Fraction(0)
        for n in range(37):
            res = settle_spin(n, [{"id": "e", "type": c, "stake": STAKE}])
            r = res["results"][0]
            total += r["paid"]
            if res["prisoners"]:
                total += v1 * r["imprisoned"]
        assert total / 37 == expected * STAKE


# --- called bets -----------------------------------------------------------------------------

def _all_calls():
    for name in ("voisins", "tiers", "orphelins", "orphelins_plein", "nassa", "jeu_zero"):
        yield {"type": name}
    for n in (0, 17, 26, 36):
        for k in (1, 2, 3):
            yield {"type": "voisins du numéro", "number": n, "neighbours": k}
    for d in range(10):
        yield {"type": "finale", "final": d}
        yield {"type": "finale avec chevaux", "final": d}
    for a, b in annonces.FINALES_HORIZONTALES + annonces.FINALES_VERTICALES:
        yield {"type": "finale à cheval", "final": [a, b]}


def test_called_bets_return_what_their_chips_return():
    for call in _all_calls():
        for unit in (50, 300):
            call.update(id="a", unit=unit)
            bet = parse_bet(call)
            chips = [{"id": "c%d" % i, "type": c.kind, "numbers": list(c.numbers), "stake": c.stake}
                     for i, c in enumerate(bet.chips)]
            for n in range(37):
                whole = settle_spin(n, [call])["results"][0]
                parts = settle_spin(n, chips)["results"]
                for key in ("won", "returned", "lost"):
                    assert whole[key] == sum(p[key] for p in parts), (call, n, key)
            assert Fraction(_paid_over_wheel(call), 37) == Fraction(36, 37) * bet.stake


# --- conservation over random sessions -------------------------------------------------------

_numbers = st.integers(0, 36)
_stakes = st.integers(50, 100000)
_plain = st.one_of(
    st.builds(lambda n, s: {"type": "plein", "numbers": [n], "stake": s}, _numbers, _stakes),
    st.builds(lambda c, s: {"type": "cheval", "numbers": list(c), "stake": s},
              st.sampled_from(layout.all_chevaux()), _stakes),
    st.builds(lambda c, s: {"type": "carre", "numbers": list(c), "stake": s},
              st.sampled_from(layout.all_carres()), _stakes),
    st.builds(lambda c, s: {"type": "transversale", "numbers": list(c), "stake": s},
              st.sampled_from(layout.all_transversales()), _stakes),
    st.builds(lambda c, s: {"type": "sixain", "numbers": list(c), "stake": s},
              st.sampled_from(layout.all_sixains()), _stakes),
    st.builds(lambda g, s: {"type": "douzaine", "which": g, "stake": s}, st.integers(1, 3), _stakes),
    st.builds(lambda g, s: {"type": "colonne", "which": g, "stake": s}, st.integers(1, 3), _stakes),
    st.builds(lambda c, s: {"type": c, "stake": s}, st.sampled_from(wheel.CHANCES),
              st.integers(50, 5000000)),
    st.builds(lambda c, u, r: dict({"type": c, "unit": u}, **({"replay": r} if r else {})),
              st.sampled_from(["voisins", "tiers"]), st.integers(50, 20000),
              st.sampled_from([None, "refaire", "completer", "tout"])),
    st.builds(lambda c, u: {"type": c, "unit": u},
              st.sampled_from(["orphelins", "nassa", "jeu zero", "orphelins en plein"]),
              st.integers(50, 20000)),
)
_choice = st.sampled_from(["prison", "partage", {"move": "noir"}, {"move": "pair"}, None])


@st.composite
def _sessions(draw):
    spins = []
    for i in range(draw(st.integers(1, 8))):
        bets = draw(st.lists(_plain, max_size=8))
        for j, b in enumerate(bets):
            b["id"] = "s%db%d" % (i, j)
        number = draw(st.one_of(_numbers, st.just(0)))
        spin = {"number": number, "bets": bets}
        if number == 0:
            ids = [b["id"] for b in bets if b["type"] in wheel.CHANCES]
            ch = {}
            for bid in ids:
                c = draw(_choice)
                if c is not None:
                    ch[bid] = c
            spin["choices"] = ch
        spins.append(spin)
    return spins


@settings(max_examples=150, deadline=None)
@given(_sessions())
def test_conservation_in_every_spin_and_over_the_session(spins):
    out = settle_session(spins)
    for s in out["spins"]:
        for r in s["results"]:
            assert r["staked"] == r["returned"] + r["lost"] + r["imprisoned"], r
            assert min(r["won"], r["returned"], r["lost"], r["imprisoned"]) >= 0
            assert r["paid"] == r["won"] + r["returned"]
        assert s["totals"]["imprisoned"] == sum(p["stake"] for p in s["prisoners"])
        assert sum(e["won"] for e in s["payment_order"]) == s["totals"]["won"]
    t = out["totals"]
    assert t["staked"] + t["imprisoned_at_start"] == t["returned"] + t["lost"] + t["imprisoned"]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "type", "numbers", "stake", "unit", "which", "final",
                                        "number", "chances", "consent", "replay", "zero", "form"]),
                       st.one_of(st.integers(-5, 40), st.text(max_size=12), st.none(), st.booleans(),
                                 st.floats(allow_nan=True), st.lists(st.integers(-2, 40), max_size=7),
                                 st.sampled_from(["plein", "cheval", "voisins", "finale", "douzaine",
                                                  "rouge", "carré", "8/9", "tout"]))))
def test_bad_input_is_a_bet_error_never_a_crash(d):
    try:
        parse_bet(d)
    except BetError as e:
        assert e.message
