"""Bets are validated with messages that name the bet and the problem (issue 2 §2, §5)."""

from cylindre.rules.bets import parse_bet, BetError
from cylindre.rules.limits import Limits


def _error(d, limits=None):
    try:
        parse_bet(d, limits)
    except BetError as e:
        return e.message
    raise AssertionError("accepted: %r" % (d,))


def test_plain_bets_parse():
    b = parse_bet({"id": "b1", "type": "plein", "numbers": [17], "stake": 1000})
    assert b.type == "plein" and b.played == 1000 and b.chips[0].numbers == (17,)
    assert parse_bet({"id": "b2", "type": "Carré", "numbers": [21, 17, 18, 20], "stake": 500}).type == "carre"
    assert parse_bet({"id": "b3", "type": "transversale simple", "numbers": [25, 26, 27, 28, 29, 30],
                      "stake": 500}).type == "sixain"
    assert parse_bet({"id": "b4", "type": "cheval", "numbers": "0/2", "stake": 500}).chips[0].numbers == (0, 2)
    assert parse_bet({"id": "b5", "type": "quatre premiers", "stake": 500}).chips[0].numbers == (0, 1, 2, 3)
    assert parse_bet({"id": "b6", "type": "red", "stake": 500}).chance == "rouge"
    assert parse_bet({"id": "b7", "type": "colonne", "which": 35, "stake": 500}).chips[0].numbers[0] == 2
    assert parse_bet({"id": "b8", "type": "douzaine", "which": "M", "stake": 500}).label == "moyenne douzaine"


def test_bad_combinations_are_named():
    m = _error({"id": "b1", "type": "cheval", "numbers": [1, 5], "stake": 1000})
    assert m.startswith("bet b1: cheval 1/5 is not a cheval")
    m = _error({"id": "b2", "type": "carre", "numbers": [1, 2, 3, 5], "stake": 1000})
    assert "bet b2" in m and "carré 1/2/3/5 is not a carré" in m
    assert "not a transversale" in _error({"id": "t", "type": "transversale", "numbers": [0, 1, 3], "stake": 100})
    assert "covers 2 numbers" in _error({"id": "c", "type": "cheval", "numbers": [1], "stake": 100})


def test_unknown_numbers_and_types():
    assert "unknown number 37" in _error({"id": "b", "type": "plein", "numbers": [37], "stake": 100})
    assert "unknown number" in _error({"id": "b", "type": "plein", "numbers": [-1], "stake": 100})
    assert "unknown bet type" in _error({"id": "b", "type": "roulette russe", "stake": 100})
    assert "no \"id\"" in _error({"type": "plein", "numbers": [1], "stake": 100})


def test_stakes_are_integer_cents():
    assert "integer number of cents" in _error({"id": "b", "type": "plein", "numbers": [1], "stake": 10.5})
    assert "integer number of cents" in _error({"id": "b", "type": "plein", "numbers": [1], "stake": "10"})
    assert "positive" in _error({"id": "b", "type": "plein", "numbers": [1], "stake": 0})
    assert "no stake" in _error({"id": "b", "type": "plein", "numbers": [1]})


def test_minimum_and_maximum():
    lim = Limits().updated({"plein": {"min": 500, "max": 10000}, "cheval": [500, 20000]})
    m = _error({"id": "b9", "type": "plein", "numbers": [1], "stake": 400}, lim)
    assert m.startswith("bet b9:") and "below the table minimum 5.00" in m
    b = parse_bet({"id": "b", "type": "plein", "numbers": [1], "stake": 12000}, lim)
    assert b.played == 10000 and b.excess == 2000
    # A called bet's chips respect the limits of their combinations.
    m = _error({"id": "v", "type": "tiers", "unit": 400}, lim)
    assert "below the table minimum" in m


def test_even_chance_straddles_are_refused():
    assert "straddling even chances" in _error({"id": "s", "type": "rouge/pair", "stake": 1000})
    assert "straddling even chances" in _error({"id": "s", "type": "simple", "chances": ["rouge", "noir"],
                                                "stake": 1000})


def test_dozen_straddle_needs_the_chefs_consent():
    m = _error({"id": "d", "type": "douzaine", "which": [1, 2], "stake": 1000})
    assert "consent" in m and "bet d" in m
    b = parse_bet({"id": "d", "type": "douzaine", "which": [1, 2], "stake": 1000, "consent": True})
    assert b.label == "24 premiers" and len(b.chips[0].numbers) == 24
    assert b.chips[0].num == 1 and b.chips[0].den == 2
    b = parse_bet({"id": "c", "type": "colonne", "which": [35, 36], "stake": 1000, "consent": True})
    assert b.label == "colonnes 35 et 36"
    assert "not side by side" in _error({"id": "d", "type": "douzaine", "which": [1, 3], "stake": 1000,
                                         "consent": True})


def test_replay_and_zero_choices_are_checked():
    assert "par le tout" in _error({"id": "o", "type": "orphelins", "unit": 100, "replay": "tout"})
    assert "unknown replay" in _error({"id": "o", "type": "tiers", "unit": 100, "replay": "twice"})
    assert "unknown choice at zero" in _error({"id": "r", "type": "rouge", "stake": 100, "zero": "maybe"})
    assert parse_bet({"id": "r", "type": "rouge", "stake": 100, "zero": "partage"}).zero == "partage"
    assert parse_bet({"id": "r", "type": "rouge", "stake": 100, "zero": {"move": "black"}}).zero == ("move", "noir")


def test_types_that_carry_their_numbers():
    assert parse_bet({"id": "a", "type": "plein 17", "stake": 100}).chips[0].numbers == (17,)
    assert parse_bet({"id": "a", "type": "cheval 14/17", "stake": 100}).label == "cheval 14/17"
    assert parse_bet({"id": "a", "type": "douzaine 2", "stake": 100}).label == "moyenne douzaine"
    assert parse_bet({"id": "a", "type": "finale 3", "unit": 100}).stake == 400
    assert parse_bet({"id": "a", "type": "finale à cheval 8/9", "unit": 100}).stake == 400
    assert parse_bet({"id": "a", "type": "voisins 17", "unit": 100}).type == "voisins_numero"
    assert "straddling even chances" in _error({"id": "s", "type": "rouge et pair", "stake": 1000})
