"""The wheel: order, colours, even chances, dozens, columns, sectors and neighbours (RULES.md, 002 §5)."""

from cylindre.rules import wheel


def test_order_is_a_permutation_of_0_to_36():
    assert len(wheel.ORDER) == 37
    assert sorted(wheel.ORDER) == list(range(37))
    assert wheel.ORDER[:5] == (0, 32, 15, 19, 4)
    assert wheel.ORDER[-1] == 26


def test_colours():
    assert len(wheel.RED) == 18
    assert wheel.colour(0) is None
    assert wheel.colour(17) == "noir" and wheel.colour(19) == "rouge"
    assert wheel.colour(11) == "noir" and wheel.colour(29) == "noir"
    # Red and black alternate around the wheel after zero.
    for i in range(1, 36):
        assert wheel.colour(wheel.ORDER[i]) != wheel.colour(wheel.ORDER[i + 1])
    assert len([n for n in range(37) if wheel.is_black(n)]) == 18


def test_even_chances_of_a_number():
    assert wheel.even_chances(17) == ("noir", "impair", "manque")
    assert wheel.even_chances(32) == ("rouge", "pair", "passe")
    assert wheel.even_chances(0) == ()
    for c in wheel.CHANCES:
        assert len(wheel.chance_numbers(c)) == 18
        assert not wheel.chance_wins(c, 0)


def test_dozens_and_columns():
    assert wheel.dozen(12) == 1 and wheel.dozen(13) == 2 and wheel.dozen(36) == 3
    assert wheel.column(34) == 1 and wheel.column(35) == 2 and wheel.column(36) == 3
    assert wheel.dozen(0) == 0 and wheel.column(0) == 0
    assert wheel.column_numbers(1)[-1] == 34 and len(wheel.column_numbers(2)) == 12
    assert wheel.dozen_numbers(2) == tuple(range(13, 25))


def test_sectors():
    assert len(wheel.VOISINS) == 17 and wheel.VOISINS[0] == 22 and wheel.VOISINS[-1] == 25
    assert 0 in wheel.VOISINS
    assert sorted(wheel.TIERS) == [5, 8, 10, 11, 13, 16, 23, 24, 27, 30, 33, 36]
    assert sorted(wheel.ORPHELINS) == [1, 6, 9, 14, 17, 20, 31, 34]
    assert sorted(wheel.VOISINS + wheel.TIERS + wheel.ORPHELINS) == list(range(37))


def test_neighbours_match_the_manual_table():
    # 002 §5 "tabella dei settori più giocati": a number and its two neighbours.
    table = {0: (0, 3, 15, 26, 32), 26: (0, 3, 26, 32, 35), 7: (7, 12, 18, 28, 29),
             4: (2, 4, 15, 19, 21), 34: (6, 17, 25, 27, 34), 14: (1, 9, 14, 20, 31),
             8: (8, 10, 11, 23, 30), 16: (1, 5, 16, 24, 33), 36: (11, 13, 27, 30, 36)}
    for n in table:
        assert tuple(sorted(wheel.neighbours(n, 2))) == table[n], n
    assert tuple(sorted(wheel.neighbours(0, 3))) == (0, 3, 15, 19, 26, 32, 35)
    assert len(wheel.neighbours(5, 18)) == 37
