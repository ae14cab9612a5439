"""Compiled bets settle to the cent as the per-bet settlement did before them
(`host_tools/bench/settle_before.py`, the code of commit ce0c694), and a cached shape accepts and
refuses exactly what `parse_bet` does, with the same message."""

import json
from pathlib import Path

from hypothesis import given, settings, strategies as st

from cylindre.rules.bets import BetError, parse_bet
from cylindre.rules.compiled import Book, compile_bet
from cylindre.rules.limits import Limits
from cylindre.rules.settle import book_of, settle_book, settle_spin
from host_tools.bench.settle import mixed_bets
from host_tools.bench.settle_before import settle_spin_before

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Tight limits: pleins, chevaux, even chances and chips of called bets over the maximum.
TIGHT = Limits().updated({"plein": [50, 700], "cheval": [100, 1500], "simple": [50, 1500],
                          "douzaine": [50, 1000], "transversale": [50, 300], "carre": [50, 900]})


def _same(number, bets, prisoners=(), choices=None, limits=None):
    before = settle_spin_before(number, bets, list(prisoners), choices, limits)
    after = settle_spin(number, bets, list(prisoners), choices, limits)
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True), number
    return after


def test_the_bench_list_settles_the_same_on_every_number_with_and_without_tight_limits():
    bets = mixed_bets(600, 7)
    for limits in (None, TIGHT):
        book = book_of(bets, limits)
        parsed = [parse_bet(b, limits or Limits()) for b in bets]
        for n in range(37):
            want = settle_spin_before(n, bets, [], None, limits)
            assert settle_book(book, n).to_json() == want, n
            assert settle_spin(n, parsed) == want, n          # parsed Bets give the same


def test_every_example_spin_settles_the_same():
    from cylindre.rules.session import settle_session
    for f in sorted(EXAMPLES.glob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        out = settle_session(doc)
        limits = Limits().updated(doc.get("limits")) if type(doc) is dict else Limits()
        prisoners = doc.get("prisoners", []) if type(doc) is dict else []
        carry = doc.get("carry", []) if type(doc) is dict else []
        for spin, got in zip(doc["spins"] if type(doc) is dict else doc, out["spins"]):
            if "limits" in spin:
                limits = limits.updated(spin["limits"])
            want = settle_spin_before(spin["number"], carry + spin.get("bets", []), prisoners,
                                      spin.get("choices"), limits)
            want["spin"] = got["spin"]
            assert got == want, (f.name, spin["number"])
            prisoners, carry = got["prisoners"], got["carry"]


def test_replays_zero_choices_and_carried_prisoners_settle_the_same():
    bets = [{"id": "v", "type": "voisins", "unit": 500, "replay": "tout"},
            {"id": "t", "type": "tiers", "unit": 100, "replay": "refaire"},
            {"id": "o", "type": "orphelins", "stake": 500, "replay": "completer"},
            {"id": "f", "type": "finale 2", "unit": 100, "replay": "refaire"},
            {"id": "r", "type": "rouge", "stake": 1000, "zero": "partage"},
            {"id": "p", "type": "pair", "stake": 2001},
            {"id": "m", "type": "manque", "stake": 700, "carried": True}]
    prisoners = [{"id": "old", "chance": "noir", "stake": 999, "wins_needed": 3},
                 {"id": 7, "chance": "passe", "stake": 100, "wins_needed": 1}]
    for n in range(37):
        _same(n, bets, prisoners, {"p": {"move": "impair"}, "old": "prison"} if n == 0 else None)
        _same(n, bets, prisoners, None, TIGHT)


STAKES = st.sampled_from([50, 100, 150, 700, 999, 1000, 2500, 100000, 250000, 3000001])
VALID = st.one_of(
    st.builds(lambda n, s: {"type": "plein", "numbers": [n], "stake": s}, st.integers(0, 36), STAKES),
    st.builds(lambda c, s: {"type": c, "stake": s}, st.sampled_from(["rouge", "noir", "pair", "impair",
                                                                     "manque", "passe"]), STAKES),
    st.builds(lambda w, s: {"type": "douzaine", "which": w, "stake": s, "consent": True},
              st.sampled_from([1, 2, 3, [1, 2], [2, 3]]), STAKES),
    st.builds(lambda t, u: {"type": t, "unit": u}, st.sampled_from(
        ["voisins", "tiers", "orphelins", "nassa", "jeu zero", "orphelins en plein", "finale 3",
         "finale à cheval 8/9", "finale avec chevaux 1", "voisins 17"]), STAKES),
    st.builds(lambda t, s: {"type": t, "stake": s}, st.sampled_from(["voisins", "tiers", "orphelins"]),
              st.sampled_from([900, 1800, 901, 500, 45, 90000])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(VALID, min_size=1, max_size=12), st.integers(0, 36), st.booleans())
def test_any_mix_of_bets_settles_the_same(bets, number, tight):
    bets = [dict(b, id="b%d" % i) for i, b in enumerate(bets)]
    limits = TIGHT if tight else None
    try:
        want = settle_spin_before(number, bets, [], None, limits)
    except BetError as e:
        try:
            settle_spin(number, bets, [], None, limits)
        except BetError as f:
            assert f.message == e.message
            return
        raise AssertionError("refused before, accepted after: " + e.message)
    assert settle_spin(number, bets, [], None, limits) == want


def test_a_cached_shape_refuses_with_parse_bets_message():
    limits = Limits().updated({"plein": [500, 1000], "cheval": [300, 2000]})
    ok = {"id": "a", "type": "voisins", "unit": 500}
    compile_bet(ok, limits)                            # the shape is now cached
    for bad in ({"id": "b", "type": "voisins", "unit": 100},       # 4/7 at 1.00 below the minimum
                {"id": "b", "type": "voisins", "unit": 0},
                {"id": "b", "type": "voisins", "stake": 4501},      # not a whole number of chips
                {"id": "b", "type": "voisins", "unit": 500, "stake": 4000},
                {"id": "b", "type": "voisins"},
                {"id": "b", "type": "voisins", "unit": 10 ** 13},
                {"id": ["b"], "type": "voisins", "unit": 500}):
        try:
            parse_bet(bad, limits)
            raise AssertionError(bad)
        except BetError as e:
            want = e.message
        try:
            compile_bet(bad, limits)
            raise AssertionError(bad)
        except BetError as e:
            assert e.message == want
    compile_bet({"id": "p", "type": "plein", "numbers": [17], "stake": 600}, limits)
    for stake in (100, 499, 0, "600", 1.5, True):
        bad = {"id": "q", "type": "plein", "numbers": [17], "stake": stake}
        try:
            parse_bet(bad, limits)
        except BetError as e:
            want = e.message
        try:
            compile_bet(bad, limits)
            raise AssertionError(bad)
        except BetError as e:
            assert e.message == want


def test_one_and_true_are_not_the_same_shape():
    compile_bet({"id": "a", "type": "plein", "numbers": [1], "stake": 100}, Limits())
    for numbers in ([True], [1.0]):
        try:
            compile_bet({"id": "a", "type": "plein", "numbers": numbers, "stake": 100}, Limits())
            raise AssertionError(numbers)
        except BetError as e:
            assert "unknown number" in e.message


def test_a_book_refuses_a_duplicate_id_and_stays_unchanged():
    book = Book()
    book.add({"id": "x", "type": "plein", "numbers": [3], "stake": 100})
    for bad in ({"id": "x", "type": "rouge", "stake": 100}, {"id": "y", "type": "cheval", "numbers": [1, 5],
                                                            "stake": 100}, [1], "x"):
        try:
            book.add(bad)
            raise AssertionError(bad)
        except BetError:
            pass
    assert len(book) == 1 and book.family("x") == "plain" and book.family("y") is None
    st_ = settle_book(book, 3)
    assert (st_.won[0], st_.returned[0], st_.lost[0], st_.outcome[0]) == (3500, 100, 0, "won")
