"""Called bets: chips and placements (004, 002 §5 and §8)."""

from cylindre.rules import annonces, wheel
from cylindre.rules.bets import parse_bet


def _count(chips):
    return annonces.chip_count(chips)


def test_the_sectors_chips():
    assert _count(annonces.VOISINS) == 9
    assert annonces.covered(annonces.VOISINS) == tuple(sorted(wheel.VOISINS))
    assert _count(annonces.TIERS) == 6
    assert annonces.covered(annonces.TIERS) == tuple(sorted(wheel.TIERS))
    assert _count(annonces.ORPHELINS) == 5 and _count(annonces.ORPHELINS_PLEIN) == 8
    assert annonces.covered(annonces.ORPHELINS) == tuple(sorted(wheel.ORPHELINS))
    assert _count(annonces.NASSA) == 5 and len(annonces.covered(annonces.NASSA)) == 8
    assert _count(annonces.JEU_ZERO) == 4 and 19 not in annonces.covered(annonces.JEU_ZERO)
    two = [c for c in annonces.VOISINS if c[2] == 2]
    assert sorted([c[1] for c in two]) == [(0, 2, 3), (25, 26, 28, 29)]


def test_finales_en_plein():
    assert annonces.finale_numbers(1) == (1, 11, 21, 31)
    for d in range(7):
        assert len(annonces.finale_en_plein(d)) == 4
    for d in (7, 8, 9):
        assert len(annonces.finale_en_plein(d)) == 3


def test_finales_a_cheval_chip_counts_of_004():
    table = {(0, 1): 5, (1, 2): 5, (2, 3): 5, (4, 5): 5, (5, 6): 5, (7, 8): 4, (8, 9): 4,
             (0, 3): 4, (1, 4): 4, (2, 5): 4, (3, 6): 4, (4, 7): 3, (5, 8): 3, (6, 9): 3,
             (7, 10): 3, (8, 11): 3, (9, 12): 3}
    for pair in table:
        assert len(annonces.finale_a_cheval(pair[0], pair[1])) == table[pair], pair
    assert annonces.finale_a_cheval(8, 9) == (("cheval", (8, 9), 1), ("plein", (18,), 1),
                                               ("plein", (19,), 1), ("cheval", (28, 29), 1))
    assert [c[1] for c in annonces.finale_a_cheval(3, 6)] == [(3, 6), (13, 16), (23, 26), (33, 36)]
    assert [c[1] for c in annonces.finale_a_cheval(0, 1)] == [(0, 1), (10, 11), (20, 21), (30,), (31,)]
    assert [c[1] for c in annonces.finale_a_cheval(2, 3)] == [(2, 3), (12,), (13,), (22, 23), (32, 33)]


def test_finale_with_its_chevaux_counts_of_002():
    table = {1: 17, 2: 18, 3: 17, 4: 16, 5: 17, 6: 16, 7: 13, 8: 13, 9: 13}
    for d in table:
        assert _count(annonces.finale_avec_chevaux(d)) == table[d], d
    f4 = annonces.finale_avec_chevaux(4)
    assert ("plein", (34,), 1) in f4 and ("cheval", (31, 34), 1) in f4 and ("cheval", (34, 35), 1) in f4


def test_number_and_neighbours():
    chips = annonces.voisins_numero(17, 2)
    assert [c[1][0] for c in chips] == [2, 25, 17, 34, 6]
    assert [c[0] for c in chips] == ["plein"] * 5
    assert len(annonces.voisins_numero(0, 3)) == 7


def test_called_bets_parse_by_any_name():
    for name in ("voisins", "Voisins du zéro", "VOISINS_DU_ZERO", "vicini dello zero"):
        assert parse_bet({"id": "a", "type": name, "unit": 100}).type == "voisins"
    for name in ("tiers", "série 5/8", "serie 5/8", "Tiers du cylindre"):
        assert parse_bet({"id": "a", "type": name, "unit": 100}).type == "tiers"
    for name in ("jeu zéro", "zero spiel", "Zero-Spiel"):
        assert parse_bet({"id": "a", "type": name, "unit": 100}).type == "jeu_zero"
    assert parse_bet({"id": "a", "type": "orphelins", "form": "plein", "unit": 100}).type == "orphelins_plein"
    assert parse_bet({"id": "a", "type": "orphelins en plein", "unit": 100}).stake == 800
    b = parse_bet({"id": "a", "type": "finale", "final": "8/9", "unit": 100})
    assert b.type == "finale_cheval" and b.stake == 400
    b = parse_bet({"id": "a", "type": "voisins", "stake": 1800})
    assert b.unit == 200 and len(b.chips) == 7
    b = parse_bet({"id": "a", "type": "un numéro et deux voisins", "number": 0, "unit": 100})
    assert b.stake == 500


def test_voisins_of_a_number_versus_voisins_du_zero():
    b = parse_bet({"id": "a", "type": "voisins", "number": 17, "unit": 100})
    assert b.type == "voisins_numero" and b.stake == 500
    assert sorted(b.numbers()) == [2, 6, 17, 25, 34]
    b = parse_bet({"id": "a", "type": "voisins", "number": 17, "neighbours": 1, "unit": 100})
    assert b.stake == 300
    assert parse_bet({"id": "a", "type": "voisins du zéro", "unit": 100}).stake == 900
