"""Les annonces (called bets): each call expanded to its chips, in units of the player's unit.

A chip is (kind, numbers, units): numbers sorted, units the number of unit stakes on it (the
voisins du zéro put 2 on 0/2/3 and 2 on the carré 25/29). Placements follow the house rules
(004) and the croupier's manual (002, sections 5 and 8).
"""

from cylindre.rules import wheel
from cylindre.rules.names import show
from cylindre.rules.layout import is_cheval, chevaux_of


class AnnonceError(ValueError):
    pass


def _c(*numbers):
    return tuple(sorted(numbers))


VOISINS = (("transversale", _c(0, 2, 3), 2), ("cheval", _c(4, 7), 1), ("cheval", _c(12, 15), 1),
           ("cheval", _c(18, 21), 1), ("cheval", _c(19, 22), 1), ("cheval", _c(32, 35), 1),
           ("carre", _c(25, 26, 28, 29), 2))
TIERS = (("cheval", _c(5, 8), 1), ("cheval", _c(10, 11), 1), ("cheval", _c(13, 16), 1),
         ("cheval", _c(23, 24), 1), ("cheval", _c(27, 30), 1), ("cheval", _c(33, 36), 1))
ORPHELINS = (("plein", (1,), 1), ("cheval", _c(6, 9), 1), ("cheval", _c(14, 17), 1),
             ("cheval", _c(17, 20), 1), ("cheval", _c(31, 34), 1))
ORPHELINS_PLEIN = tuple(("plein", (n,), 1) for n in sorted(wheel.ORPHELINS))
NASSA = (("cheval", _c(0, 3), 1), ("cheval", _c(12, 15), 1), ("plein", (19,), 1),
         ("plein", (26,), 1), ("cheval", _c(32, 35), 1))
JEU_ZERO = (("cheval", _c(0, 3), 1), ("cheval", _c(12, 15), 1), ("plein", (26,), 1),
            ("cheval", _c(32, 35), 1))

FIXED = {"voisins": VOISINS, "tiers": TIERS, "orphelins": ORPHELINS,
         "orphelins_plein": ORPHELINS_PLEIN, "nassa": NASSA, "jeu_zero": JEU_ZERO}
LABELS = {"voisins": "voisins du zéro", "tiers": "tiers du cylindre", "orphelins": "orphelins",
          "orphelins_plein": "orphelins en plein", "nassa": "nassa", "jeu_zero": "jeu zéro",
          "voisins_numero": "voisins", "finale": "finale en plein",
          "finale_cheval": "finale à cheval", "finale_chevaux": "finale avec ses chevaux"}
# Calls that may be kept "payés à placer" (002 §8: série and voisins; orphelins and nassa only
# with the chef de table's consent) and the calls "par le tout" applies to (004, 002 §9).
A_PLACER = ("voisins", "tiers", "orphelins", "orphelins_plein", "nassa")
PAR_LE_TOUT = ("voisins", "tiers")

# Finales à cheval accepted at the table (004): horizontal and vertical.
FINALES_HORIZONTALES = ((0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (7, 8), (8, 9))
FINALES_VERTICALES = ((0, 3), (1, 4), (2, 5), (3, 6), (4, 7), (5, 8), (6, 9), (7, 10), (8, 11),
                      (9, 12))


def finale_numbers(d):
    """Numbers ending in digit d (finale en plein d): 4 numbers for 0..6, 3 for 7..9."""
    if type(d) is not int or not 0 <= d <= 9:
        raise AnnonceError("a finale is a last digit 0 to 9, not %s" % show(d))
    return tuple(range(d, 37, 10))


def finale_en_plein(d):
    return tuple(("plein", (n,), 1) for n in finale_numbers(d))


def finale_a_cheval(a, b):
    """Finale à cheval a/b: the pair shifted by 10, 20, 30; a pair not side by side on the layout
    is played as its two pleins (horizontal finales: 8/9 = 8/9, 18, 19, 28/29)."""
    if a > b:
        a, b = b, a
    if (a, b) not in FINALES_HORIZONTALES and (a, b) not in FINALES_VERTICALES:
        raise AnnonceError("finale à cheval %d/%d does not exist: horizontal finales are %s, vertical %s"
                           % (a, b, _pairs(FINALES_HORIZONTALES), _pairs(FINALES_VERTICALES)))
    chips = []
    for t in (0, 10, 20, 30):
        x, y = a + t, b + t
        if y > 36:
            break
        if is_cheval(x, y):
            chips.append(("cheval", (x, y), 1))
        else:
            chips.append(("plein", (x,), 1))
            chips.append(("plein", (y,), 1))
    return tuple(chips)


def _pairs(ps):
    return " ".join("%d/%d" % p for p in ps)


def finale_avec_chevaux(d):
    """Each number of finale d with its plein and all its chevaux (finale 1 = 17 chips).

    No two numbers of a finale touch on the layout, so no cheval is counted twice."""
    chips = []
    for n in finale_numbers(d):
        chips.append(("plein", (n,), 1))
        for c in chevaux_of(n):
            chips.append(("cheval", c, 1))
    return tuple(chips)


def voisins_numero(n, k):
    """Un numéro et ses k voisins: 2k+1 pleins around n on the wheel."""
    if not wheel.check_number(n):
        raise AnnonceError("voisins: the centre number must be 0 to 36, not %s" % show(n))
    if type(k) is not int or not 1 <= k <= 18:
        raise AnnonceError("voisins: the number of neighbours each side must be 1 to 18, not %s" % show(k))
    return tuple(("plein", (m,), 1) for m in wheel.neighbours(n, k))


def chip_count(chips):
    t = 0
    for c in chips:
        t += c[2]
    return t


def covered(chips):
    """The numbers a call covers, ascending."""
    seen = bytearray(37)
    for c in chips:
        for n in c[1]:
            seen[n] = 1
    return tuple(n for n in range(37) if seen[n])
