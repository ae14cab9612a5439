"""Le tableau (the layout): which inside combinations exist, and what each bet type pays.

Rows of the layout are 1-2-3, 4-5-6, … 34-35-36; zero sits above the first row, touching 1, 2
and 3. A combination is given as its numbers in any order; `kind_of` says what it is.
"""

# Payout "to 1" (the stake stays the player's), as integers.
PAYS = {"plein": 35, "cheval": 17, "transversale": 11, "carre": 8, "sixain": 5,
        "douzaine": 2, "colonne": 2, "simple": 1}
# How many numbers each inside kind covers.
SIZE = {"plein": 1, "cheval": 2, "transversale": 3, "carre": 4, "sixain": 6}
# The zero combinations.
ZERO_CHEVAUX = ((0, 1), (0, 2), (0, 3))
ZERO_TRANSVERSALES = ((0, 1, 2), (0, 2, 3))
QUATRE_PREMIERS = (0, 1, 2, 3)


def _col(n):
    return (n - 1) % 3


def is_cheval(a, b):
    """Two numbers side by side or one above the other, or zero with 1, 2 or 3."""
    if a > b:
        a, b = b, a
    if a == 0:
        return 1 <= b <= 3
    if a < 1 or b > 36:
        return False
    if b - a == 3:
        return True
    return b - a == 1 and _col(a) != 2


def is_transversale(t):
    """t sorted: a full row, or 0/1/2, 0/2/3."""
    if t[0] == 0:
        return t == (0, 1, 2) or t == (0, 2, 3)
    return t[0] >= 1 and _col(t[0]) == 0 and t[1] == t[0] + 1 and t[2] == t[0] + 2 and t[2] <= 36


def is_carre(c):
    """c sorted: four numbers in a square, or 0/1/2/3 (quatre premiers)."""
    if c[0] == 0:
        return c == QUATRE_PREMIERS
    a = c[0]
    return (a >= 1 and _col(a) != 2 and c[1] == a + 1 and c[2] == a + 3 and c[3] == a + 4
            and c[3] <= 36)


def is_sixain(s):
    """s sorted: two adjacent rows."""
    a = s[0]
    if a < 1 or _col(a) != 0 or s[5] > 36:
        return False
    for i in range(6):
        if s[i] != a + i:
            return False
    return True


def kind_of(numbers):
    """The inside kind ('plein', 'cheval', …) of a sorted tuple of numbers, or None."""
    k = len(numbers)
    if k == 1:
        return "plein"
    if k == 2:
        return "cheval" if is_cheval(numbers[0], numbers[1]) else None
    if k == 3:
        return "transversale" if is_transversale(numbers) else None
    if k == 4:
        return "carre" if is_carre(numbers) else None
    if k == 6:
        return "sixain" if is_sixain(numbers) else None
    return None


def all_chevaux():
    out = list(ZERO_CHEVAUX)
    for a in range(1, 37):
        if _col(a) != 2:
            out.append((a, a + 1))
        if a + 3 <= 36:
            out.append((a, a + 3))
    return out


def all_transversales():
    return list(ZERO_TRANSVERSALES) + [(r, r + 1, r + 2) for r in range(1, 37, 3)]


def all_carres():
    out = []
    out.append(QUATRE_PREMIERS)
    for a in range(1, 33):
        if _col(a) != 2:
            out.append((a, a + 1, a + 3, a + 4))
    return out


def all_sixains():
    return [tuple(range(r, r + 6)) for r in range(1, 32, 3)]


def chevaux_of(n):
    """Every cheval containing n, as sorted pairs."""
    out = []
    for c in all_chevaux():
        if n in c:
            out.append(c)
    return out
