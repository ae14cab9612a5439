"""Le cylindre (the wheel): pocket order, colours, even chances, dozens, columns, sectors.

Pure data and small lookups; numbers are ints 0..36. Zero is neither red nor black, neither
even nor odd for the game, and in no dozen, column, manque or passe.
"""

from cylindre.spin.geometry import WHEEL_ORDER

# Clockwise as seen from above, starting at zero: the order the Pico's code names pockets by,
# defined once (spin/geometry.py).
ORDER = WHEEL_ORDER
RED = (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36)

# Position of each number on the wheel (index into ORDER).
_POS = bytearray(37)
for _i in range(37):
    _POS[ORDER[_i]] = _i

_IS_RED = bytearray(37)
for _n in RED:
    _IS_RED[_n] = 1

# Chances simples (even chances), by their French names.
CHANCES = ("rouge", "noir", "pair", "impair", "manque", "passe")
OPPOSITE = {"rouge": "noir", "noir": "rouge", "pair": "impair", "impair": "pair",
            "manque": "passe", "passe": "manque"}


def check_number(n):
    """True when n is a pocket of the wheel (an int 0..36, not a bool)."""
    return type(n) is int and 0 <= n <= 36


def is_red(n):
    return n != 0 and _IS_RED[n] == 1


def is_black(n):
    return n != 0 and _IS_RED[n] == 0


def colour(n):
    """'rouge', 'noir' or None for zero."""
    if n == 0:
        return None
    return "rouge" if _IS_RED[n] else "noir"


def chance_wins(chance, n):
    """Does the even chance `chance` win on number n? Never on zero."""
    if n == 0:
        return False
    if chance == "rouge":
        return _IS_RED[n] == 1
    if chance == "noir":
        return _IS_RED[n] == 0
    if chance == "pair":
        return n % 2 == 0
    if chance == "impair":
        return n % 2 == 1
    if chance == "manque":
        return n <= 18
    if chance == "passe":
        return n >= 19
    raise ValueError("unknown even chance: %r" % (chance,))


def chance_numbers(chance):
    """The 18 numbers an even chance covers, ascending."""
    return tuple(n for n in range(1, 37) if chance_wins(chance, n))


def even_chances(n):
    """The three winning even chances of n, as said: colour, parity, manque/passe; () for zero."""
    if n == 0:
        return ()
    return (colour(n), "pair" if n % 2 == 0 else "impair", "manque" if n <= 18 else "passe")


def dozen(n):
    """1, 2 or 3 (première, moyenne, dernière douzaine); 0 for zero."""
    return 0 if n == 0 else (n - 1) // 12 + 1


def column(n):
    """1, 2 or 3: the column of 1 (…34), of 2 (…35), of 3 (…36); 0 for zero."""
    return 0 if n == 0 else (n - 1) % 3 + 1


def dozen_numbers(d):
    return tuple(range(12 * (d - 1) + 1, 12 * d + 1))


def column_numbers(c):
    return tuple(range(c, 37, 3))


def position(n):
    """Index of n on the wheel, clockwise from zero."""
    return _POS[n]


def neighbours(n, k):
    """n with its k neighbours each side on the wheel, in wheel order (2k+1 numbers)."""
    if k < 0 or 2 * k + 1 > 37:
        raise ValueError("neighbours: k must be 0..18")
    p = _POS[n]
    return tuple(ORDER[(p + i) % 37] for i in range(-k, k + 1))


def _arc(first, last):
    """The numbers from `first` to `last` clockwise, both included."""
    i = _POS[first]
    out = []
    while True:
        out.append(ORDER[i])
        if ORDER[i] == last:
            return tuple(out)
        i = (i + 1) % 37


# The three sectors (secteurs) of the wheel.
VOISINS = _arc(22, 25)     # voisins du zéro, 17 numbers, 22 … 0 … 25
TIERS = _arc(27, 33)       # tiers du cylindre / série 5/8, 12 numbers
ORPHELINS = _arc(17, 6) + _arc(1, 9)   # 17 34 6 and 1 20 14 31 9
