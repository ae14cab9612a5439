"""The layout geometry and the payout table (RULES.md, 002 §6)."""

from cylindre.rules import layout


def test_counts_of_combinations():
    assert len(layout.all_chevaux()) == 60          # 57 on 1..36 plus 0/1 0/2 0/3
    assert len(layout.all_transversales()) == 14    # 12 rows plus 0/1/2 0/2/3
    assert len(layout.all_carres()) == 23           # 22 squares plus 0/1/2/3
    assert len(layout.all_sixains()) == 11


def test_kinds():
    assert layout.kind_of((17,)) == "plein"
    assert layout.kind_of((14, 17)) == "cheval" and layout.kind_of((11, 12)) == "cheval"
    assert layout.kind_of((12, 15)) == "cheval"
    assert layout.kind_of((1, 5)) is None and layout.kind_of((3, 4)) is None
    assert layout.kind_of((0, 1)) == "cheval" and layout.kind_of((0, 4)) is None
    assert layout.kind_of((13, 14, 15)) == "transversale" and layout.kind_of((0, 2, 3)) == "transversale"
    assert layout.kind_of((0, 1, 3)) is None and layout.kind_of((2, 3, 4)) is None
    assert layout.kind_of((17, 18, 20, 21)) == "carre" and layout.kind_of((0, 1, 2, 3)) == "carre"
    assert layout.kind_of((1, 2, 3, 5)) is None and layout.kind_of((3, 4, 6, 7)) is None
    assert layout.kind_of((25, 26, 27, 28, 29, 30)) == "sixain"
    assert layout.kind_of((26, 27, 28, 29, 30, 31)) is None


def test_every_combination_is_recognised():
    for c in layout.all_chevaux():
        assert layout.kind_of(tuple(sorted(c))) == "cheval"
    for c in layout.all_carres():
        assert layout.kind_of(c) == "carre"
    for c in layout.all_sixains():
        assert layout.kind_of(c) == "sixain"


def test_manual_payout_table():
    # 002 §6 "tabella pagamenti relative alla pezzatura", 5 to 100 euro. The manual prints
    # 615 for a 55-euro terzina: 55 × 11 is 605 (a misprint).
    rows = ((5, 175, 85, 55, 40, 25), (10, 350, 170, 110, 80, 50), (25, 875, 425, 275, 200, 125),
            (55, 1925, 935, 605, 440, 275), (100, 3500, 1700, 1100, 800, 500))
    for r in rows:
        cents = r[0] * 100
        assert cents * layout.PAYS["plein"] == r[1] * 100
        assert cents * layout.PAYS["cheval"] == r[2] * 100
        assert cents * layout.PAYS["transversale"] == r[3] * 100
        assert cents * layout.PAYS["carre"] == r[4] * 100
        assert cents * layout.PAYS["sixain"] == r[5] * 100
    assert layout.PAYS["douzaine"] == 2 and layout.PAYS["colonne"] == 2 and layout.PAYS["simple"] == 1
