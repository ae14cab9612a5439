"""Names of bet types as people write them: French, English, Italian, with or without accents;
and `show`, how a value the player gave is named in an error message.

`compact` folds a name to lower-case ASCII letters and digits only, so "Voisins du zéro",
"voisins_du_zero" and "VOISINS-DU-ZERO" meet. `canonical` maps it to one type name.
"""

_ACCENTS = {"à": "a", "â": "a", "ä": "a", "á": "a", "ç": "c", "é": "e", "è": "e", "ê": "e",
            "ë": "e", "î": "i", "ï": "i", "í": "i", "ì": "i", "ô": "o", "ö": "o", "ó": "o",
            "ò": "o", "ù": "u", "û": "u", "ü": "u", "ú": "u", "À": "a", "Â": "a", "Ç": "c",
            "É": "e", "È": "e", "Ê": "e", "Î": "i", "Ô": "o", "Ù": "u", "Û": "u"}


def compact(s):
    out = []
    for ch in s.lower():
        if ch in _ACCENTS:
            ch = _ACCENTS[ch]
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            out.append(ch)
    return "".join(out)


def _table(pairs):
    t = {}
    for name, aliases in pairs:
        for a in aliases:
            t[compact(a)] = name
    return t


# Plain bets (mises simples sur le tableau) and even chances.
PLAIN = _table((
    ("plein", ("plein", "pleine", "straight", "straight up", "number", "numero", "pieno", "single")),
    ("cheval", ("cheval", "chevaux", "split", "cavallo", "a cheval")),
    ("transversale", ("transversale", "transversale pleine", "transversal", "transversal pleine",
                      "street", "terzina", "trio", "transversale du zero", "trois premiers")),
    ("carre", ("carre", "corner", "square", "quadrato", "quatre premiers", "carre du zero")),
    ("sixain", ("sixain", "sixaine", "six line", "sixline", "line", "transversale simple",
                "transversal simple", "sestina", "double street")),
    ("douzaine", ("douzaine", "douzaines", "dozen", "dozzina", "dozzine")),
    ("colonne", ("colonne", "colonnes", "column", "colonna", "colonne")),
    ("simple", ("simple", "chance", "chances", "chance simple", "chances simples", "even chance",
                "even money")),
    ("rouge", ("rouge", "red", "rosso")),
    ("noir", ("noir", "black", "nero")),
    ("pair", ("pair", "even", "pari")),
    ("impair", ("impair", "odd", "dispari")),
    ("manque", ("manque", "low", "1-18", "1 a 18", "1 to 18")),
    ("passe", ("passe", "high", "19-36", "19 a 36", "19 to 36")),
))

# Called bets (annonces).
ANNONCES = _table((
    ("voisins", ("voisins", "voisins du zero", "voisins zero", "vicini", "vicini dello zero",
                 "neighbours of zero", "neighbors of zero", "grand serie", "grande serie",
                 "voisins du zero 0/2/3")),
    ("tiers", ("tiers", "tiers du cylindre", "serie 5/8", "series 5/8", "la serie",
               "serie du cinq huit", "5/8", "serie", "tiers 5/8", "le tiers", "third")),
    ("orphelins", ("orphelins", "orphelins a cheval", "orphelins cheval", "orphans", "orfanelli",
                   "orfanelli a cavallo", "orphelins chevaux", "orphans split")),
    ("orphelins_plein", ("orphelins en plein", "orphelins plein", "orphelins pleins",
                         "orphans straight", "orphans plein", "orfanelli in pieno",
                         "orphelins 8", "orphelins huit pleins")),
    ("nassa", ("nassa",)),
    ("jeu_zero", ("jeu zero", "jeu du zero", "zero spiel", "zero spil", "zerospiel", "0 spiel",
                  "0 spil", "zero game", "spiel")),
    ("voisins_numero", ("voisins numero", "voisins du numero", "numero et voisins",
                        "un numero et deux voisins", "un numero et ses voisins", "number and neighbours",
                        "number and neighbors", "neighbours", "neighbors", "voisins de",
                        "5 number sector", "sector", "secteur", "numero e vicini", "settore")),
    ("finale", ("finale", "finales", "final", "finals", "finale en plein", "finales en plein",
                "finale plein", "straight up final", "straight final", "finale in pieno")),
    ("finale_cheval", ("finale a cheval", "finales a cheval", "finale cheval", "split final",
                       "split finals", "finale a cavallo", "finale horizontale", "finale verticale",
                       "finale a cheval horizontale", "finale a cheval verticale")),
    ("finale_chevaux", ("finale avec chevaux", "finale et chevaux", "finale avec ses chevaux",
                        "finale et ses chevaux", "finale chevaux", "finale with chevaux",
                        "finale with splits", "finale con cavalli", "finale e cavalli",
                        "finale plus chevaux", "finale plein et chevaux")),
))

CHANCE_NAMES = ("rouge", "noir", "pair", "impair", "manque", "passe")


def canonical(name):
    """('plain'|'annonce', canonical name) or (None, None)."""
    if type(name) is not str:
        return None, None
    c = compact(name)
    if c in PLAIN:
        return "plain", PLAIN[c]
    if c in ANNONCES:
        return "annonce", ANNONCES[c]
    return None, None


def chance_of(name):
    """The canonical even chance named by `name`, or None."""
    if type(name) is not str:
        return None
    k = PLAIN.get(compact(name))
    return k if k in CHANCE_NAMES else None


def show(v):
    """A value as it may appear in a one-line error message: its repr, cut at 60 characters.

    Never fails: an integer too long to print or a structure too deep to walk is described."""
    try:
        r = repr(v)
    except (ValueError, RuntimeError):      # CPython's int digit limit; recursion (also on MicroPython)
        return "<%s too large to show>" % type(v).__name__
    if len(r) > 60:
        r = r[:57] + "..."
    return r
