"""Compiled bets on both runtimes: a shape shared by bets that differ in stake, the settlement in
columns, the result dicts built on demand, the cache that tells 1 from true."""

from cylindre.rules.bets import BetError
from cylindre.rules.compiled import Book, compile_bet
from cylindre.rules.limits import Limits
from cylindre.rules.settle import settle_book


def test_bets_that_differ_in_stake_share_a_shape_and_pay_by_their_stake():
    book = Book()
    book.add({"id": "a", "type": "cheval", "numbers": [14, 17], "stake": 1000})
    book.add({"id": "b", "type": "cheval", "numbers": [14, 17], "stake": 300})
    book.add({"id": "v", "type": "voisins", "unit": 200})
    book.add({"id": "r", "type": "rouge", "stake": 500})
    assert book.shapes[0] is book.shapes[1] and len(book.groups) == 3
    s = settle_book(book, 17)
    assert s.won[:3] == [17000, 5100, 0] and s.lost[:3] == [0, 0, 1800]
    assert (s.won[3], s.returned[3], s.outcome[3]) == (0, 0, "lost")
    assert s.totals["staked"] == 1000 + 300 + 1800 + 500
    assert s.totals["paid"] == 18000 + 5400
    r = s.result(0)
    assert r["label"] == "cheval 14/17" and r["paid"] == 18000
    assert s.to_json()["payment_order"][0] == {"id": "b", "kind": "cheval", "combination": "cheval 14/17",
                                               "stake": 300, "won": 5100}


def test_a_capped_call_pays_what_its_chips_play():
    limits = Limits().updated({"cheval": [50, 1000]})
    book = Book(limits)
    book.add({"id": "t", "type": "tiers", "unit": 1500})
    s = settle_book(book, 5)
    assert (s.won[0], s.returned[0], s.lost[0]) == (17000, 500 * 6 + 1000, 5000)
    assert s.result(0)["excess"] == 3000 and s.result(0)["unit"] == 1500


def test_even_chances_at_zero_go_en_prison_or_take_the_partage():
    book = Book()
    book.add({"id": "r", "type": "rouge", "stake": 1001})
    book.add({"id": "p", "type": "pair", "stake": 1001, "zero": "partage"})
    s = settle_book(book, 0)
    assert s.outcome == ["imprisoned", "partage"] and s.imprisoned[0] == 1001
    assert (s.returned[1], s.lost[1]) == (501, 500)
    assert s.prisoners == [{"id": "r", "chance": "rouge", "stake": 1001, "wins_needed": 1}]


def test_a_cached_shape_still_tells_one_from_true():
    compile_bet({"id": "a", "type": "plein", "numbers": [1], "stake": 100}, Limits())
    try:
        compile_bet({"id": "a", "type": "plein", "numbers": [True], "stake": 100}, Limits())
        assert False
    except BetError as e:
        assert "unknown number" in e.message
