"""Bets (mises): one dict in, one validated `Bet` out, or a `BetError` that names the problem.

The dict is the shape of `cylindre settle` (docs/integrators/settle.md): {"id", "type", "numbers", "stake"}
for bets on the layout, {"id", "type", "unit"} for called bets. Every bet is made of chips
(`Chip`: kind, numbers, stake); even chances have none (they go en prison at zero instead).
Stakes are integer cents.
"""

from cylindre.rules import wheel, layout, annonces
from cylindre.rules.names import canonical, chance_of, CHANCE_NAMES, compact, show
from cylindre.rules.limits import Limits, KINDS, MAX_CENTS

KIND_LABEL = {"plein": "plein", "cheval": "cheval", "transversale": "transversale",
              "carre": "carré", "sixain": "sixain", "douzaine": "douzaine", "colonne": "colonne",
              "simple": "chance simple"}
DOZEN_LABEL = ("", "première douzaine", "moyenne douzaine", "dernière douzaine")
REPLAY_MODES = {"refaire": "refaire", "rifare": "refaire", "replay": "refaire", "repeat": "refaire",
                "completer": "completer", "completare": "completer", "complete": "completer",
                "tout": "tout", "parletout": "tout", "pourletout": "tout", "perilTutto": "tout",
                "periltutto": "tout", "all": "tout", "playall": "tout", "toplayall": "tout",
                "toreplay": "refaire", "tocomplete": "completer"}


class BetError(ValueError):
    """A bet (or the request around it) is not acceptable; the message says why and names it."""

    def __init__(self, message, bet=None):
        super().__init__(message)
        self.message = message
        self.bet = bet


class Chip:
    """One stake on one combination: kind, numbers covered, stake and what plays after limits.

    `num`/`den` is the payout ratio (17/1 for a cheval; 1/2 for the straddling dozens)."""

    def __init__(self, kind, numbers, stake, played, excess, num, den, label):
        self.kind = kind
        self.numbers = numbers
        self.stake = stake
        self.played = played
        self.excess = excess
        self.num = num
        self.den = den
        self.label = label


class Bet:
    """A validated bet. `family` is 'plain' (layout), 'simple' (even chance) or 'annonce'."""

    def __init__(self, id, family, type, label, stake, chips=None, chance=None):
        self.id = id
        self.family = family
        self.type = type
        self.label = label
        self.stake = stake
        self.chips = chips or []
        self.chance = chance
        self.played = stake
        self.excess = 0
        self.unit = 0
        self.a_placer = False
        self.zero = None  # type: object  # even chances: the player's standing choice at zero
        self.replay = None  # type: object  # annonces: refaire / completer / tout when the call wins
        self.source = None      # the dict it came from (to carry it to the next spin)
        self.carried = False

    def numbers(self):
        """Every number the bet covers, ascending."""
        if self.family == "simple":
            return wheel.chance_numbers(self.chance)
        return annonces.covered([(c.kind, c.numbers, 1) for c in self.chips])


def _err(bid, msg):
    """The error for bet `bid`: raise _err(bid, "why")."""
    return BetError("bet %s: %s" % (bid, msg), bid)


def _is_int(v):
    return type(v) is int


def word(v):
    """A name given as text (or as a small integer, like "form": 8) folded by `compact`; None
    for anything else (a list, an object, a huge number)."""
    if type(v) is str:
        return compact(v)
    if _is_int(v) and -10 ** 9 < v < 10 ** 9:
        return str(v)
    return None


def bet_id(d):
    """The id of bet dict d as a string: a string, or an integer (turned into its digits).

    Anything else (a list, an object, true, a float, a huge integer) is refused."""
    bid = d.get("id")
    if bid is None:
        raise BetError("a bet has no \"id\": %s" % show(d))
    if type(bid) is str:
        return bid
    if _is_int(bid) and -MAX_CENTS < bid < MAX_CENTS:
        return str(bid)
    raise BetError("a bet id must be a string or an integer, not %s" % show(bid))


def stake_of(d, bid, key="stake"):
    v = d.get(key)
    if v is None:
        raise _err(bid, "no %s (integer cents) given" % key)
    if not _is_int(v):
        raise _err(bid, "%s must be an integer number of cents, not %s" % (key, show(v)))
    if v <= 0:
        raise _err(bid, "%s must be positive, got %s" % (key, show(v)))
    if v > MAX_CENTS:
        raise _err(bid, "%s of %s cents is over the largest amount accepted, %d" % (key, show(v), MAX_CENTS))
    return v


def _split_text(s):
    for sep in ("-", ",", " ", ";", "+"):
        s = s.replace(sep, "/")
    return [p for p in s.split("/") if p]


def numbers_of(d, bid):
    """The numbers of a bet, sorted, validated 0..36 and distinct; () if none are given."""
    v = d.get("numbers")
    if v is None:
        v = d.get("number")
    if v is None:
        return ()
    if _is_int(v):
        v = [v]
    elif type(v) is str:
        parts = _split_text(v)
        v = []
        for p in parts:
            try:
                v.append(int(p))
            except ValueError:
                raise _err(bid, "%s is not a number of the wheel (0 to 36)" % show(p))
    elif type(v) not in (list, tuple):
        raise _err(bid, "numbers must be a list of numbers 0 to 36, not %s" % show(v))
    out = []
    for n in v:
        if not wheel.check_number(n):
            raise _err(bid, "unknown number %s: the wheel has 0 to 36" % show(n))
        if n in out:
            raise _err(bid, "number %d is given twice" % n)
        out.append(n)
    out.sort()
    return tuple(out)


def _slash(ns):
    return "/".join([str(n) for n in ns])


def _combination_label(kind, ns):
    if kind == "sixain":
        return "sixain %d-%d" % (ns[0], ns[-1])
    return "%s %s" % (KIND_LABEL[kind], _slash(ns))


_WHY = {"cheval": "two numbers side by side or one above the other on the layout (or 0/1, 0/2, 0/3)",
        "transversale": "a row of three (1/2/3 … 34/35/36) or 0/1/2, 0/2/3",
        "carre": "four numbers in a square on the layout, or 0/1/2/3",
        "sixain": "two adjacent rows of three (1-6, 4-9, … 31-36)"}


def _inside(kind, ns, bid):
    """Validate an inside combination; returns its (possibly corrected) kind."""
    if kind == "transversale" and len(ns) == 6:
        kind = "sixain"      # "transversale simple"
    if kind == "carre" and not ns:
        ns = layout.QUATRE_PREMIERS
    if not ns:
        raise _err(bid, "a %s needs its numbers" % KIND_LABEL[kind])
    size = layout.SIZE[kind]
    if len(ns) != size:
        raise _err(bid, "a %s covers %d number%s, got %d (%s)" % (KIND_LABEL[kind], size,
                                                           "s" if size > 1 else "", len(ns), _slash(ns)))
    if layout.kind_of(ns) != kind:
        raise _err(bid, "%s %s is not a %s: a %s is %s" % (KIND_LABEL[kind], _slash(ns), KIND_LABEL[kind],
                                                     KIND_LABEL[kind], _WHY[kind]))
    return kind, ns


_DOZEN_WORDS = {"1st": 1, "2nd": 2, "3rd": 3, "p": 1, "premiere": 1, "first": 1, "12p": 1, "112": 1, "m": 2, "moyenne": 2,
                "second": 2, "middle": 2, "12m": 2, "1324": 2, "d": 3, "derniere": 3, "third": 3,
                "last": 3, "12d": 3, "2536": 3, "prima": 1, "seconda": 2, "terza": 3}
_COLUMN_WORDS = {"1st": 1, "2nd": 2, "3rd": 3, "34": 1, "35": 2, "36": 3, "first": 1, "second": 2, "third": 3,
                 "premiere": 1, "deuxieme": 2, "troisieme": 3}


def _which(d, bid, kind):
    """The dozens or columns a stake is on: a list of 1..3 (two for a straddle)."""
    v = None
    for key in ("which", kind, "dozen" if kind == "douzaine" else "column", "index", "dozens",
                "columns", "douzaines", "colonnes"):
        if key in d:
            v = d[key]
            break
    if v is None and ("numbers" in d or "number" in d):
        ns = numbers_of(d, bid)
        groups = []
        for g in (1, 2, 3):
            members = wheel.dozen_numbers(g) if kind == "douzaine" else wheel.column_numbers(g)
            inside = [n for n in ns if n in members]
            if inside and len(inside) != 12:
                groups = None
                break
            if inside:
                groups.append(g)
        if not groups or sum([12 for _ in groups]) != len(ns):
            raise _err(bid, "the numbers of a %s must be all of one %s (or of two, straddling)"
                  % (KIND_LABEL[kind], KIND_LABEL[kind]))
        return groups
    if v is None:
        raise _err(bid, "say which %s: \"which\": 1, 2 or 3" % KIND_LABEL[kind])
    items = v if type(v) in (list, tuple) else [v]
    out = []
    for it in items:
        g = None
        if _is_int(it):
            g = it if 1 <= it <= 3 else (it - 33 if kind == "colonne" and 34 <= it <= 36 else None)
        elif type(it) is str:
            c = compact(it)
            table = _DOZEN_WORDS if kind == "douzaine" else _COLUMN_WORDS
            if c in ("1", "2", "3"):
                g = int(c)
            else:
                g = table.get(c)
        if g is None:
            raise _err(bid, "unknown %s %s: use 1, 2 or 3" % (KIND_LABEL[kind], show(it)))
        if g in out:
            raise _err(bid, "%s %d is given twice" % (KIND_LABEL[kind], g))
        out.append(g)
    out.sort()
    return out


def _truthy(d, keys):
    for k in keys:
        if k in d:
            v = d[k]
            if type(v) is not bool:
                raise BetError("%s must be true or false, not %s" % (k, show(v)))
            return v
    return False


def _outside(kind, d, bid, stake, limits):
    groups = _which(d, bid, kind)
    if len(groups) == 1:
        g = groups[0]
        ns = wheel.dozen_numbers(g) if kind == "douzaine" else wheel.column_numbers(g)
        label = DOZEN_LABEL[g] if kind == "douzaine" else "colonne du %d" % (33 + g)
        num, den = layout.PAYS[kind], 1
    elif len(groups) == 2:
        if groups[1] - groups[0] != 1:
            raise _err(bid, "a stake cannot straddle %ss %d and %d: they are not side by side"
                  % (KIND_LABEL[kind], groups[0], groups[1]))
        try:
            consent = _truthy(d, ("consent", "supervisor_consent", "chef_consent", "chef"))
        except BetError as e:
            raise _err(bid, e.message)
        if not consent:
            raise _err(bid, "a stake straddling two %ss is refused without the chef de table's consent "
                       "(give \"consent\": true)" % KIND_LABEL[kind])
        ns = []
        for g in groups:
            ns.extend(wheel.dozen_numbers(g) if kind == "douzaine" else wheel.column_numbers(g))
        ns.sort()
        ns = tuple(ns)
        if kind == "douzaine":
            label = "24 premiers" if groups[0] == 1 else "24 derniers"
        else:
            label = "colonnes %d et %d" % (33 + groups[0], 33 + groups[1])
        num, den = 1, 2
    else:
        raise _err(bid, "a stake on all three %ss is not a bet" % KIND_LABEL[kind])
    return _plain_chip(kind, ns, stake, limits, bid, num, den, label)


def _plain_chip(kind, ns, stake, limits, bid, num, den, label, exempt=False):
    lo = limits.min(kind)
    if stake < lo:
        raise _err(bid, "stake %s on %s is below the table minimum %s" % (cents_text(stake), label,
                                                                       cents_text(lo)))
    played, excess = limits.cap(kind, stake, exempt)
    return Chip(kind, ns, stake, played, excess, num, den, label)


def cents_text(c):
    return "%d.%02d" % (c // 100, c % 100)


_ZERO_CHOICES = {"prison": "prison", "enprison": "prison", "imprison": "prison", "laisser": "prison",
                 "leave": "prison", "keep": "prison", "partage": "partage", "partager": "partage",
                 "share": "partage", "split": "partage", "half": "partage", "lapartage": "partage",
                 "surrender": "partage"}


def zero_choice(v, where):
    """Normalise a player's choice at zero: 'prison', 'partage' or ('move', chance)."""
    if v is None:
        return None
    if type(v) is dict:
        action = v.get("action", v.get("choice"))
        if action is not None and type(action) is str and compact(action) in _ZERO_CHOICES:
            return _ZERO_CHOICES[compact(action)]
        target = v.get("move", v.get("to", v.get("deplacer", v.get("chance"))))
        ch = chance_of(target) if target is not None else None
        if ch is None:
            raise BetError("%s: a move at zero needs an even chance, e.g. {\"move\": \"noir\"}" % where)
        return ("move", ch)
    if type(v) is str:
        c = compact(v)
        if c in _ZERO_CHOICES:
            return _ZERO_CHOICES[c]
        for pre in ("moveto", "move", "deplacer", "deplacera", "deplace", "to"):
            if c.startswith(pre) and chance_of(c[len(pre):]):
                return ("move", chance_of(c[len(pre):]))
        if chance_of(v):
            return ("move", chance_of(v))
    raise BetError("%s: unknown choice at zero %s: say \"prison\", \"partage\" or {\"move\": CHANCE}"
                   % (where, show(v)))


def _digit_or_pair(d, bid):
    v = None
    for key in ("final", "finale", "digit", "numbers", "number", "which"):
        if key in d:
            v = d[key]
            break
    if v is None:
        raise _err(bid, "a finale needs its last digit (\"final\": 3) or pair (\"final\": \"8/9\")")
    if _is_int(v):
        return (v,)
    if type(v) is str:
        parts = _split_text(v)
        try:
            return tuple([int(p) for p in parts])
        except ValueError:
            raise _err(bid, "finale %s is not a digit or a pair of digits" % show(v))
    if type(v) in (list, tuple) and all([_is_int(x) for x in v]):
        return tuple(v)
    raise _err(bid, "finale %s is not a digit or a pair of digits" % show(v))


_CENTRE_KEYS = ("number", "numero", "centre", "center", "neighbours", "neighbors", "k")


def _annonce_chips(name, d, bid):
    """(name, label, chip tuples) of a called bet."""
    try:
        if name == "voisins" and "zero" not in (word(d.get("type", d.get("bet", ""))) or ""):
            for key in _CENTRE_KEYS:
                if key in d:
                    name = "voisins_numero"      # "voisins" of a number: that number and neighbours
                    break
        if name == "orphelins":
            form = d.get("form", d.get("forme"))
            if form is not None and word(form) in ("plein", "pleins", "enplein", "straight", "8"):
                name = "orphelins_plein"
        if name in annonces.FIXED:
            return name, annonces.LABELS[name], annonces.FIXED[name]
        if name == "voisins_numero":
            n = None
            for key in ("number", "numero", "centre", "center", "numbers"):
                if key in d:
                    n = d[key]
                    break
            if isinstance(n, (list, tuple)) and len(n) == 1:
                n = n[0]
            k = d.get("neighbours", d.get("neighbors", d.get("voisins", d.get("k", 2))))
            chips = annonces.voisins_numero(n, k)
            return name, "%d et %d voisins" % (n, k), chips
        if name in ("finale", "finale_cheval"):
            ds = _digit_or_pair(d, bid)
            if len(ds) == 1 and name == "finale":
                return "finale", "finale %d en plein" % ds[0], annonces.finale_en_plein(ds[0])
            if len(ds) == 2:
                a, b = ds
                return "finale_cheval", "finale à cheval %d/%d" % (min(a, b), max(a, b)), \
                    annonces.finale_a_cheval(a, b)
            raise _err(bid, "a finale à cheval is a pair of last digits such as \"8/9\" or \"3/6\"")
        if name == "finale_chevaux":
            ds = _digit_or_pair(d, bid)
            if len(ds) != 1:
                raise _err(bid, "a finale with its chevaux is one last digit")
            return name, "finale %d avec ses chevaux" % ds[0], annonces.finale_avec_chevaux(ds[0])
    except annonces.AnnonceError as e:
        raise _err(bid, str(e))
    raise _err(bid, "unknown called bet %s" % show(name))


def _annonce(name, d, bid, limits):
    name, label, specs = _annonce_chips(name, d, bid)
    count = annonces.chip_count(specs)
    unit = d.get("unit")
    if unit is not None:
        unit = stake_of(d, bid, "unit")
        if "stake" in d and d["stake"] != unit * count:
            raise _err(bid, "stake %s does not match %d chips of unit %d" % (show(d["stake"]), count, unit))
    else:
        total = d.get("stake")
        if total is None:
            raise _err(bid, "a called bet needs its unit stake per chip (\"unit\": cents)")
        total = stake_of(d, bid)
        if total % count:
            raise _err(bid, "%s takes %d chips: stake %s is not a whole number of chips"
                  % (label, count, cents_text(total)))
        unit = total // count
    chips = []
    for kind, ns, units in specs:
        clabel = _combination_label(kind, ns)
        exempt = name == "voisins" and kind == "transversale"
        lo = limits.min(kind)
        s = units * unit
        if s < lo:
            raise _err(bid, "%s at %s a chip: %s would stake %s, below the table minimum %s"
                  % (label, cents_text(unit), clabel, cents_text(s), cents_text(lo)))
        played, excess = limits.cap(kind, s, exempt)
        chips.append(Chip(kind, ns, s, played, excess, layout.PAYS[kind], 1, clabel))
    b = Bet(bid, "annonce", name, label, unit * count, chips)
    b.unit = unit
    try:
        placer = _truthy(d, ("a_placer", "payes_a_placer", "paye_a_placer", "placed"))
    except BetError as e:
        raise _err(bid, e.message)
    if ("a_placer" not in d and "payes_a_placer" not in d and "paye_a_placer" not in d
            and "placed" not in d):
        placer = name in ("voisins", "tiers")
    if placer and name not in annonces.A_PLACER:
        raise _err(bid, "only the série, the voisins (and with consent orphelins and nassa) are payés à placer")
    b.a_placer = placer
    mode = d.get("replay", d.get("rejouer"))
    if mode is not None:
        m = REPLAY_MODES.get(word(mode) or "")
        if m is None:
            raise _err(bid, "unknown replay %s: say \"refaire\", \"completer\" or \"tout\"" % show(mode))
        if m == "tout" and name not in annonces.PAR_LE_TOUT:
            raise _err(bid, "par le tout replays only the série (tiers) and the voisins du zéro")
        b.replay = m
    return b


def _with_parameter(t, d):
    """A type that carries its numbers: "plein 17", "cheval 14/17", "finale 3", "finale à cheval
    8/9", "voisins 17", "douzaine 2". Returns (family, name, dict with the numbers filled in)."""
    words = t.split()
    for i in range(len(words) - 1, 0, -1):
        family, name = canonical(" ".join(words[:i]))
        if family is None:
            continue
        tail = " ".join(words[i:])
        try:
            ints = [int(x) for x in _split_text(tail)]
        except ValueError:
            return None, None, d
        if not ints:
            return None, None, d
        e = {}
        for k in d:
            e[k] = d[k]
        if name in ("finale", "finale_cheval", "finale_chevaux") and "final" not in d:
            e["final"] = ints if len(ints) > 1 else ints[0]
        elif name in ("voisins", "voisins_numero") and "number" not in d and len(ints) == 1:
            e["number"] = ints[0]
        elif name in ("douzaine", "colonne") and "which" not in d:
            e["which"] = ints if len(ints) > 1 else ints[0]
        elif name in layout.SIZE and "numbers" not in d and "number" not in d:
            e["numbers"] = ints
        else:
            return None, None, d
        return family, name, e
    return None, None, d


def parse_bet(d, limits=None):
    """Validate one bet dict; returns a `Bet` or raises `BetError` naming the bet and the problem."""
    if limits is None:
        limits = Limits()
    if type(d) is not dict:
        raise BetError("a bet must be an object like {\"id\": \"b1\", \"type\": \"plein\", "
                       "\"numbers\": [17], \"stake\": 1000}, not %s" % show(d))
    bid = bet_id(d)
    t = d.get("type", d.get("bet"))
    if t is None:
        raise _err(bid, "no \"type\"")
    if type(t) is not str:
        raise _err(bid, "type must be a name such as \"plein\" or \"voisins\", not %s" % show(t))
    chances = d.get("chances")
    family, name = canonical(t)
    if family is None:
        family, name, d = _with_parameter(t, d)
    if family is None:
        parts = _split_text(t.replace("&", "/"))
        if len(parts) > 1 and chance_of(parts[0]) and chance_of(parts[-1]):
            chances = parts
        elif len(parts) > 1 and canonical(parts[0])[1] in ("douzaine", "colonne"):
            raise _err(bid, "a straddle is {\"type\": \"%s\", \"which\": [1, 2], \"consent\": true}"
                  % canonical(parts[0])[1])
        else:
            raise _err(bid, "unknown bet type %s" % show(t))
    if chances is not None:
        if type(chances) is str:
            chances = [chances]
        if type(chances) in (list, tuple) and len(chances) > 1:
            names = [show(c) for c in chances]
            raise _err(bid, "a stake straddling even chances (%s) is not accepted: "
                       "split stakes on chances simples are refused" % " and ".join(names))
        if type(chances) in (list, tuple) and len(chances) == 1:
            name = chance_of(chances[0])
            family = "plain"
            if name is None:
                raise _err(bid, "unknown even chance %s" % show(chances[0]))
    if family == "annonce":
        return _finish(_annonce(name, d, bid, limits), d)
    stake = stake_of(d, bid)
    if name == "simple":
        name = chance_of(d.get("chance"))
        if name is None:
            raise _err(bid, "say which even chance: \"chance\": rouge, noir, pair, impair, manque or passe")
    if name in CHANCE_NAMES:
        lo = limits.min("simple")
        if stake < lo:
            raise _err(bid, "stake %s on %s is below the table minimum %s" % (cents_text(stake), name,
                                                                        cents_text(lo)))
        b = Bet(bid, "simple", name, name, stake, None, name)
        b.played, b.excess = limits.cap("simple", stake)
        for key in ("zero", "at_zero", "on_zero", "choice"):
            if key in d:
                try:
                    b.zero = zero_choice(d[key], "bet %s" % bid)
                except BetError as e:
                    raise BetError(e.message, bid)
                break
        return _finish(b, d)
    if name in ("douzaine", "colonne"):
        chip = _outside(name, d, bid, stake, limits)
    else:
        kind, ns = _inside(name, numbers_of(d, bid), bid)
        chip = _plain_chip(kind, ns, stake, limits, bid, layout.PAYS[kind], 1,
                           _combination_label(kind, ns))
        name = kind
    b = Bet(bid, "plain", name, chip.label, stake, [chip])
    b.played, b.excess = chip.played, chip.excess
    return _finish(b, d)


def _finish(b, d):
    if b.family == "annonce":
        p = 0
        x = 0
        for c in b.chips:
            p += c.played
            x += c.excess
        b.played, b.excess = p, x
    b.source = d
    b.carried = d.get("carried") is True
    return b


__all__ = ("BetError", "Bet", "Chip", "parse_bet", "zero_choice", "KINDS")
