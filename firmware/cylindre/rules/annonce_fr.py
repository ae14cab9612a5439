"""What the croupier says, in French: the number with its even chances, the winning
combinations (or "rien au numéro"), "en prison" at zero, then "tout est payé, au numéro"."""

from cylindre.rules import wheel

_UNITS = ("zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix",
          "onze", "douze", "treize", "quatorze", "quinze", "seize")
_TENS = {2: "vingt", 3: "trente"}


def number_words(n):
    """French words for 0..36: 17 'dix-sept', 21 'vingt et un', 36 'trente-six'."""
    if n <= 16:
        return _UNITS[n]
    if n < 20:
        return "dix-" + _UNITS[n - 10]
    t, u = n // 10, n % 10
    if u == 0:
        return _TENS[t]
    if u == 1:
        return _TENS[t] + " et un"
    return _TENS[t] + "-" + _UNITS[u]


def number_line(n):
    """'dix-sept, noir, impair et manque'; 'zéro' for zero."""
    if n == 0:
        return "zéro"
    c = list(wheel.even_chances(n))
    return "%s, %s, %s et %s" % (number_words(n), c[0], c[1], c[2])


def prison_line(chances):
    """'en prison à rouge, pair et passe' for the chances holding imprisoned stakes."""
    if not chances:
        return None
    if len(chances) == 1:
        return "en prison à " + chances[0]
    return "en prison à " + ", ".join(chances[:-1]) + " et " + chances[-1]


def winning_line(labels):
    """The winning combinations, in the order they are paid."""
    return "gagnent : " + ", ".join(labels)


RIEN = "rien au numéro"
TOUT_PAYE = "tout est payé, au numéro"
