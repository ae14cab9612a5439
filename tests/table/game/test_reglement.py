"""The host's settlement in columns (host_tools/table/game/reglement.py) gives the cents of the
shared rules (firmware/cylindre/rules/settle.py, the reference) on every bet: the same results,
payment order, prisoners, carried bets, announcements and totals, and the same refusals, over
random layouts, zeros, prisons, calls and limits."""

import json

from hypothesis import given, settings, strategies as st

from cylindre.rules import layout, wheel
from cylindre.rules.bets import BetError
from cylindre.rules.compiled import Book
from cylindre.rules.limits import Limits
from cylindre.rules.settle import settle_book

from host_tools.bench.settle import mixed_bets
from host_tools.table.game import reglement
from host_tools.table.game.reglement import Colonnes, OUTCOMES

STAKES = st.sampled_from([1, 49, 50, 51, 100, 150, 333, 700, 999, 1000, 2500, 100001, 250000, 3000001])
CHANCES = st.sampled_from(list(wheel.CHANCES))
ZERO = st.sampled_from([None, "prison", "partage", {"move": "noir"}, {"move": "impair"}, "move to passe"])


def _plain(kind, pool):
    return st.builds(lambda ns, s: {"type": kind, "numbers": list(ns), "stake": s}, st.sampled_from(pool), STAKES)


def _simple(c, s, z):
    b = {"type": c, "stake": s}
    if z is not None:
        b["zero"] = z
    return b


BET = st.one_of(
    st.builds(lambda n, s: {"type": "plein", "numbers": [n], "stake": s}, st.integers(0, 36), STAKES),
    _plain("cheval", layout.all_chevaux()), _plain("transversale", layout.all_transversales()),
    _plain("carre", layout.all_carres()), _plain("sixain", layout.all_sixains()),
    st.builds(_simple, CHANCES, STAKES, ZERO),
    st.builds(lambda k, w, s: {"type": k, "which": w, "stake": s, "consent": True},
              st.sampled_from(["douzaine", "colonne"]), st.sampled_from([1, 2, 3, [1, 2], [2, 3]]), STAKES),
    st.builds(lambda t, u, r, p: dict({"type": t, "unit": u}, **({"replay": r} if r else {}),
                                      **({"a_placer": p} if p is not None else {})),
              st.sampled_from(["voisins", "tiers", "orphelins", "nassa", "jeu zero", "orphelins en plein",
                               "finale 3", "finale à cheval 8/9", "finale avec chevaux 1", "voisins 17"]),
              STAKES, st.sampled_from([None, None, "refaire", "completer", "tout"]), st.sampled_from([None, True, False])),
    st.builds(lambda t, s: {"type": t, "stake": s}, st.sampled_from(["voisins", "tiers", "orphelins"]),
              st.sampled_from([900, 1800, 901, 500, 45, 90000])),
)
LIMITS = st.one_of(st.just(None), st.fixed_dictionaries({
    k: st.tuples(st.sampled_from([1, 50, 100]), st.sampled_from([300, 700, 1500, 100000, 10 ** 9]))
    for k in ("plein", "cheval", "transversale", "carre", "sixain", "douzaine", "colonne", "simple")}).map(
    lambda d: Limits().updated({k: list(v) for k, v in d.items()})))
PRISONER = st.builds(lambda i, c, s, w: dict({"id": i if i >= 6 else "old%d" % i, "chance": c, "stake": s},
                                              **({"wins_needed": w} if w else {})),      # ids: text or integers
                     st.integers(0, 8), CHANCES, STAKES, st.sampled_from([0, 1, 2, 3]))
NUMBER = st.one_of(st.just(0), st.integers(0, 36))


def _book(bets, limits):
    book, cols = Book(limits), Colonnes()
    for i, b in enumerate(bets):
        try:
            k = book.add(dict(b, id="b%d" % i, **({"carried": True} if i % 7 == 6 else {})))
        except BetError:
            continue                        # refused when placed: not on the layout
        cols.add(book.shapes[k], book.mults[k], book.excess[k])
    return book, cols


def _same(book, cols, number, prisoners, choices):
    """The reference and the columns settle `book` alike, to the cent, or refuse it alike."""
    try:
        want = settle_book(book, number, [dict(p) for p in prisoners], choices)
    except BetError as e:
        try:
            reglement.settle(book, number, [dict(p) for p in prisoners], choices, cols)
        except BetError as f:
            assert f.message == e.message
            return None
        raise AssertionError("refused by the rules, settled in columns: " + e.message)
    one = reglement.settle(book, number, [dict(p) for p in prisoners], choices, cols)
    for i in range(len(book)):              # one bet's result read before any column is a list
        assert one.result(i) == want.result(i), i
    got = reglement.settle(book, number, [dict(p) for p in prisoners], choices, cols)
    assert got.a_won.tolist() == want.won
    assert got.a_returned.tolist() == want.returned
    assert got.a_lost.tolist() == want.lost
    assert got.a_imprisoned.tolist() == want.imprisoned
    assert [OUTCOMES[c] for c in got.a_outcome.tolist()] == want.outcome
    assert got.pays == want.pays
    assert got.totals == want.totals
    assert json.dumps(got.to_json(), sort_keys=True) == json.dumps(want.to_json(), sort_keys=True)
    return got


@settings(max_examples=300, deadline=None)
@given(st.lists(BET, min_size=0, max_size=40), NUMBER, LIMITS, st.lists(PRISONER, max_size=6, unique_by=lambda p: p["id"]),
       st.data())
def test_columns_settle_every_bet_to_the_cent_of_the_rules(bets, number, limits, prisoners, data):
    book, cols = _book(bets, limits)
    choices = None
    if number == 0 and data.draw(st.booleans()):
        ids = [book.ids[i] for i in range(len(book)) if book.shapes[i].family == "simple"] + [p["id"] for p in prisoners]
        picked = data.draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
        choices = {bid: data.draw(ZERO.filter(lambda z: z is not None)) for bid in picked}
    _same(book, cols, number, prisoners, choices)


@settings(max_examples=40, deadline=None)
@given(st.lists(BET, min_size=1, max_size=10), st.integers(1, 36))
def test_a_choice_the_rules_refuse_is_refused_alike(bets, number):
    book, cols = _book(bets, None)
    if not len(book):
        return
    _same(book, cols, 0, [], {book.ids[0]: "partage"})           # refused unless an even chance
    _same(book, cols, number, [], {"nobody": "partage"})
    _same(book, cols, number, [{"id": "x", "chance": "vert", "stake": 100}], None)


def test_the_bench_spin_on_every_number_and_a_book_without_columns():
    bets = mixed_bets(3000, 11)
    for limits in (None, Limits().updated({"plein": [50, 700], "simple": [50, 1500], "douzaine": [50, 1000]})):
        book, cols = _book(bets, limits)
        for n in range(37):
            _same(book, cols, n, [{"id": "p1", "chance": "rouge", "stake": 500, "wins_needed": 2}], None)
        got = reglement.settle(book, 17)             # columns built from the book
        assert got.to_json() == settle_book(book, 17).to_json()


def test_carried_bets_appended_to_the_book_join_its_columns():
    book, cols = _book([{"type": "plein", "numbers": [5], "stake": 100}], None)
    book.add({"id": "r1", "type": "voisins", "unit": 100, "carried": True})      # a replay carried on
    got = _same(book, cols, 26, [], None)
    assert got.result(1)["carried"] is True and len(cols) == 2


def test_an_empty_book_settles_only_its_prisoners():
    got = _same(Book(), Colonnes(), 7, [{"id": "q", "chance": "rouge", "stake": 100}], None)
    assert got.totals["staked"] == 100 and got.totals["paid"] == 100 and got.payments() == 0


def test_the_journals_view_names_the_outcome_codes_of_the_columns():
    from host_tools.table.journal import store
    assert store.OUTCOMES == OUTCOMES
