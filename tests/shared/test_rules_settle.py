"""Settlement: payouts, payment order, croupiers, announcements, limits, replays (issue 2 §3, §5, §6)."""

from cylindre.rules.settle import settle_spin
from cylindre.rules.limits import Limits
from cylindre.rules import annonce_fr


def _one(res, bid):
    for r in res["results"]:
        if r["id"] == bid:
            return r
    raise AssertionError("no result for %s" % bid)


def test_every_plain_bet_pays_its_table():
    bets = [{"id": "p", "type": "plein", "numbers": [17], "stake": 1000},
            {"id": "c", "type": "cheval", "numbers": [17, 20], "stake": 1000},
            {"id": "t", "type": "transversale", "numbers": [16, 17, 18], "stake": 1000},
            {"id": "k", "type": "carre", "numbers": [13, 14, 16, 17], "stake": 1000},
            {"id": "s", "type": "sixain", "numbers": [13, 14, 15, 16, 17, 18], "stake": 1000},
            {"id": "d", "type": "douzaine", "which": 2, "stake": 1000},
            {"id": "o", "type": "colonne", "which": 2, "stake": 1000},
            {"id": "n", "type": "noir", "stake": 1000},
            {"id": "i", "type": "impair", "stake": 1000},
            {"id": "m", "type": "manque", "stake": 1000},
            {"id": "r", "type": "rouge", "stake": 1000}]
    res = settle_spin(17, bets)
    won = {}
    for r in res["results"]:
        won[r["id"]] = r["won"]
        assert r["staked"] == r["returned"] + r["lost"] + r["imprisoned"]
    assert won == {"p": 35000, "c": 17000, "t": 11000, "k": 8000, "s": 5000, "d": 2000, "o": 2000,
                   "n": 1000, "i": 1000, "m": 1000, "r": 0}
    assert _one(res, "r")["lost"] == 1000 and _one(res, "p")["returned"] == 1000


def test_payment_order_and_croupiers():
    bets = [{"id": "p2", "type": "plein", "numbers": [17], "stake": 2000},
            {"id": "p1", "type": "plein", "numbers": [17], "stake": 500},
            {"id": "c", "type": "cheval", "numbers": [14, 17], "stake": 100},
            {"id": "n", "type": "noir", "stake": 100},
            {"id": "m", "type": "manque", "stake": 100},
            {"id": "d2", "type": "douzaine", "which": 2, "stake": 3000},
            {"id": "d1", "type": "douzaine", "which": 2, "stake": 1000},
            {"id": "col", "type": "colonne", "which": 2, "stake": 9000},
            {"id": "s", "type": "sixain", "numbers": [16, 17, 18, 19, 20, 21], "stake": 100}]
    res = settle_spin(17, bets)
    # 17 is odd: the right croupier pays, so the left-hand chance (manque) is farthest, paid first.
    assert [e["id"] for e in res["payment_order"]] == ["col", "d1", "d2", "m", "n", "s", "c", "p1", "p2"]
    assert res["paying_croupier"] == "droite" and res["raking_croupier"] == "gauche"
    assert settle_spin(20, [])["paying_croupier"] == "gauche"
    assert settle_spin(0, [])["paying_croupier"] == "gauche"
    # The left pays on 20: the right-hand chances (noir, pair, passe) are farthest, paid first.
    res = settle_spin(20, [{"id": "p", "type": "pair", "stake": 100}, {"id": "n", "type": "noir", "stake": 100},
                           {"id": "pa", "type": "passe", "stake": 100}, {"id": "ro", "type": "rouge", "stake": 100}])
    assert [e["id"] for e in res["payment_order"]] == ["p", "n", "pa"]


def test_announcements():
    assert annonce_fr.number_line(17) == "dix-sept, noir, impair et manque"
    assert annonce_fr.number_words(21) == "vingt et un" and annonce_fr.number_words(36) == "trente-six"
    assert annonce_fr.number_words(0) == "zéro" and annonce_fr.number_words(19) == "dix-neuf"
    res = settle_spin(17, [{"id": "c", "type": "cheval", "numbers": [14, 17], "stake": 100},
                           {"id": "p", "type": "plein", "numbers": [17], "stake": 100}])
    assert res["announcements"] == ["dix-sept, noir, impair et manque", "gagnent : cheval 14/17, plein 17",
                                    "tout est payé, au numéro"]
    res = settle_spin(5, [{"id": "p", "type": "plein", "numbers": [17], "stake": 100},
                          {"id": "r", "type": "rouge", "stake": 100}])
    assert res["announcements"] == ["cinq, rouge, impair et manque", annonce_fr.RIEN, annonce_fr.TOUT_PAYE]
    assert settle_spin(5, [])["announcements"] == ["cinq, rouge, impair et manque", "rien au numéro"]


def test_stake_over_the_maximum_plays_up_to_it():
    lim = Limits().updated({"plein": {"min": 100, "max": 10000}})
    res = settle_spin(8, [{"id": "p", "type": "plein", "numbers": [8], "stake": 15000}], [], None, lim)
    r = _one(res, "p")
    assert r["won"] == 350000 and r["returned"] == 15000 and r["excess"] == 5000
    res = settle_spin(9, [{"id": "p", "type": "plein", "numbers": [8], "stake": 15000}], [], None, lim)
    r = _one(res, "p")
    assert r["lost"] == 10000 and r["returned"] == 5000


def test_voisins_zero_trio_may_exceed_the_maximum():
    lim = Limits().updated({"transversale": [100, 1000], "carre": [100, 1000]})
    res = settle_spin(0, [{"id": "v", "type": "voisins", "unit": 1000}], [], None, lim)
    r = _one(res, "v")
    assert r["won"] == 2000 * 11
    # The carré 25/29 (2 chips of 10.00 = 20.00) is capped at 10.00; the 0/2/3 is not.
    assert r["excess"] == 1000
    res = settle_spin(0, [{"id": "t", "type": "transversale", "numbers": [0, 2, 3], "stake": 2000}], [], None, lim)
    assert _one(res, "t")["won"] == 11000


def test_straddled_dozens_pay_one_to_two():
    res = settle_spin(14, [{"id": "d", "type": "douzaine", "which": [1, 2], "stake": 1000, "consent": True}])
    assert _one(res, "d")["won"] == 500 and _one(res, "d")["returned"] == 1000
    res = settle_spin(30, [{"id": "d", "type": "douzaine", "which": [1, 2], "stake": 1000, "consent": True}])
    assert _one(res, "d")["lost"] == 1000


def test_called_bet_pays_its_winning_chips():
    res = settle_spin(26, [{"id": "v", "type": "voisins", "unit": 500}])
    r = _one(res, "v")
    assert r["won"] == 2 * 500 * 8 and r["returned"] == 1000 and r["lost"] == 3500
    assert r["placed"] == ["carré 25/26/28/29"] and r["chips"] == 9
    res = settle_spin(17, [{"id": "o", "type": "orphelins", "unit": 100}])
    assert _one(res, "o")["won"] == 3400         # 14/17 and 17/20 both win
    res = settle_spin(8, [{"id": "t", "type": "tiers", "unit": 100}])
    assert _one(res, "t")["won"] == 1700 and _one(res, "t")["lost"] == 500


def _replay(kind, number, mode, unit=1000):
    res = settle_spin(number, [{"id": "a", "type": kind, "unit": unit, "replay": mode}])
    return res, _one(res, "a")["replay"]


def test_replays_of_the_serie_manual_section_9():
    u = 1000
    res, p = _replay("tiers", 8, "refaire")
    assert p["stake"] == 6 * u and p["change"] == 11 * u and p["left"] == u
    assert [b["id"] for b in res["carry"]] == ["a.r", "a.s"]
    res, p = _replay("tiers", 8, "completer")
    assert p["stake"] == 6 * u and p["change"] == 12 * u and p["left"] == 0
    assert [b["id"] for b in res["carry"]] == ["a.r"]
    res, p = _replay("tiers", 8, "tout")
    assert p["multiplier"] == 3 and p["stake"] == 18 * u and p["change"] == 0
    assert res["carry"][0]["unit"] == 3 * u


def test_replays_of_the_voisins_manual_section_9():
    u = 1000
    for number, refaire, completer, tout in ((4, 8, 9, 0), (26, 7, 9, 0), (0, 13, 15, 6)):
        p = _replay("voisins", number, "refaire")[1]
        assert p["stake"] == 9 * u and p["change"] == refaire * u, (number, p)
        p = _replay("voisins", number, "completer")[1]
        assert p["change"] == completer * u, (number, p)
        p = _replay("voisins", number, "tout")[1]
        assert p["multiplier"] == 2 and p["change"] == tout * u, (number, p)
    # Refaire on the carré leaves its 2 chips: with the new call's 2, 4 chips if it repeats.
    res, p = _replay("voisins", 26, "refaire")
    nxt = settle_spin(26, res["carry"])
    won = 0
    for r in nxt["results"]:
        won += r["won"]
    assert won == 4 * u * 8


def test_lost_call_is_not_replayed():
    res = settle_spin(1, [{"id": "a", "type": "voisins", "unit": 100, "replay": "tout"}])
    assert res["carry"] == [] and "replay" not in _one(res, "a")


def test_par_le_tout_tables_of_the_manual():
    # 002 §9: série 5.00 -> 15.00 (total 90.00) ... 200.00 -> 600.00 (3 600.00);
    # voisins 5.00 -> 10.00 (total 90.00) ... 200.00 -> 400.00 (3 600.00).
    for euro in (5, 10, 15, 20, 30, 40, 50, 100, 200):
        u = euro * 100
        p = _replay("tiers", 13, "tout", u)[1]
        assert p["unit"] == 3 * u and p["stake"] == 18 * u
        p = _replay("voisins", 19, "tout", u)[1]
        assert p["unit"] == 2 * u and p["stake"] == 18 * u
