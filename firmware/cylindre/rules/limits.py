"""Table limits (minimum et maximum par type de mise), changeable between spins.

A stake below the minimum is refused; over the maximum it plays only up to the maximum and the
excess is returned ("la masse joue jusqu'à la concurrence du maximum"). Cents.
"""

from cylindre.rules.names import canonical, CHANCE_NAMES, show

KINDS = ("plein", "cheval", "transversale", "carre", "sixain", "douzaine", "colonne", "simple")

# House defaults: 0.50 euro (the smallest jeton) minimum everywhere; maxima that keep the
# largest single payout near 35 000 euro. A session or the daemon overrides them.
DEFAULTS = {
    "plein": (50, 100000), "cheval": (50, 200000), "transversale": (50, 300000),
    "carre": (50, 400000), "sixain": (50, 600000), "douzaine": (50, 1500000),
    "colonne": (50, 1500000), "simple": (50, 3000000),
}


# The largest amount in cents a stake, a unit or a limit may be: 10 000 000 000.00 euro, far above
# any table, and small enough that every sum of a spin stays an exact JSON number (< 2**53).
MAX_CENTS = 1000000000000


class LimitError(ValueError):
    pass


def _cents(v, what):
    if type(v) is not int or not 0 <= v <= MAX_CENTS:
        raise LimitError("%s must be an integer number of cents, 0 to %d, not %s" % (what, MAX_CENTS, show(v)))
    return v


class Limits:
    """min/max per kind. `updated(spec)` returns new Limits with some kinds changed."""

    def __init__(self, table=None):
        self.table = {}
        for k in KINDS:
            self.table[k] = DEFAULTS[k]
        if table:
            for k in table:
                self.table[k] = table[k]

    def min(self, kind):
        return self.table[kind][0]

    def max(self, kind):
        return self.table[kind][1]

    def cap(self, kind, stake, exempt=False):
        """(played, excess) of a stake of this kind; exempt skips the maximum."""
        mx = self.table[kind][1]
        if exempt or stake <= mx:
            return stake, 0
        return mx, stake - mx

    def updated(self, spec):
        """New Limits with the kinds in `spec` changed.

        spec: {kind: {"min": c, "max": c}} or {kind: [min, max]}; kind names as for bets
        (even chance names and "simple" all mean the even-chance limits). A part left out keeps
        its current value.
        """
        if spec is None:
            return self
        if type(spec) is not dict:
            raise LimitError("limits must be an object {kind: {min, max}}")
        table = {}
        for k in self.table:
            table[k] = self.table[k]
        for name in spec:
            family, kind = canonical(name)
            if kind in CHANCE_NAMES:
                kind = "simple"
            if family != "plain" or kind not in table:
                raise LimitError("limits: unknown bet type %s" % show(name))
            lo, hi = table[kind]
            v = spec[name]
            if type(v) is dict:
                for key in v:
                    if key not in ("min", "max", "minimum", "maximum"):
                        raise LimitError("limits %s: unknown field %s" % (name, show(key)))
                if "min" in v or "minimum" in v:
                    lo = _cents(v.get("min", v.get("minimum")), "limits %s min" % name)
                if "max" in v or "maximum" in v:
                    hi = _cents(v.get("max", v.get("maximum")), "limits %s max" % name)
            elif type(v) in (list, tuple) and len(v) == 2:
                lo = _cents(v[0], "limits %s min" % name)
                hi = _cents(v[1], "limits %s max" % name)
            else:
                raise LimitError("limits %s: give {\"min\": cents, \"max\": cents} or [min, max]" % name)
            if lo < 1 or hi < lo:
                raise LimitError("limits %s: need 0 < min <= max, got min %d max %d" % (name, lo, hi))
            table[kind] = (lo, hi)
        return Limits(table)

    def to_json(self):
        out = {}
        for k in KINDS:
            out[k] = {"min": self.table[k][0], "max": self.table[k][1]}
        return out
