"""Les prisonniers (the stakes carried en prison) settled on a number that is not zero, in columns.

The reference is `rules.settle.carried_prisoners` (`prison.after` on each stake, a result dict
each). A zero imprisons every even chance on the layout, 1,500 of a stadium's 10,000 bets, and
the next spin settles them all: that spin was the slowest of the table's result path. Here one
pass over the prisoners fills plain columns, and a prisoner's result dict is built only when one
is read (`Carried`, a sequence of them): the ledger writes the columns (resultats.py), the totals
are their sums. A zero that finds prisoners (choices, a split) goes through the reference.

Same dicts, same cents as the reference: tests/table/game/test_prisonniers.py and
test_reglement.py compare the two.
"""

from __future__ import annotations

from cylindre.rules import wheel

RELEASED, LOST, IMPRISONED = "released", "lost", "imprisoned"


class Prisonniers(list):
    """The prisoners a settlement of this process made (`prison.at_zero`, `prison.after`: sound by
    construction), as the next settlement receives them through the table's state, which shares
    them and never changes one (flow.py): it need not check them one by one again (1,500 after a
    zero). Prisoners read back from the journal are a plain list, and checked."""

    __slots__ = ()


class Carried:
    """The results of the carried prisoners, as the reference's `carried_results` reads (a
    sequence of its dicts, built when read), with their columns: `ids`, `chances`, `stakes`,
    `outcomes` (the reference's words), `returned`, `lost`, `imprisoned`, `before` (the wins
    they needed) and `prison` ({position: the prisoner still imprisoned})."""

    __slots__ = ("ids", "chances", "stakes", "outcomes", "returned", "lost", "imprisoned", "before", "prison")

    def __init__(self):
        self.ids, self.chances, self.stakes, self.outcomes = [], [], [], []
        self.returned, self.lost, self.imprisoned, self.before = [], [], [], []
        self.prison = {}

    def __len__(self):
        return len(self.ids)

    def __bool__(self):
        return bool(self.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        c, ret, lo = self.chances[i], self.returned[i], self.lost[i]
        r = {"id": self.ids[i], "type": c, "label": "%s (en prison)" % c, "staked": self.stakes[i],
             "outcome": self.outcomes[i], "won": 0, "returned": ret, "lost": lo, "imprisoned": self.imprisoned[i],
             "paid": ret, "carried": True, "wins_needed_before": self.before[i]}
        q = self.prison.get(i if i >= 0 else i + len(self))
        if q is not None:
            r["prison"] = {"chance": q["chance"], "wins_needed": q["wins_needed"]}
        return r

    def __iter__(self):
        for i in range(len(self.ids)):
            yield self[i]

    def sums(self):
        """The five sums `rules.settle.totals_of` adds from the carried results, as one of them."""
        s = sum(self.returned)
        return {"staked": sum(self.stakes), "won": 0, "returned": s, "lost": sum(self.lost),
                "imprisoned": sum(self.imprisoned)}


def settle_after(prisoners, number, out_prisoners) -> Carried:
    """The carried `prisoners` (checked by `rules.settle.check`, or `Prisonniers` a settlement
    made) settled on `number` (1 to 36) as
    `prison.after` settles each; those still imprisoned are appended to `out_prisoners`."""
    wins = {c: wheel.chance_wins(c, number) for c in wheel.CHANCES}
    out = Carried()
    ids, chances, stakes, outcomes = out.ids, out.chances, out.stakes, out.outcomes
    returned, lost, imprisoned, before, prison = out.returned, out.lost, out.imprisoned, out.before, out.prison
    for p in prisoners:
        s = p["stake"]
        c = p["chance"]
        w = p.get("wins_needed", 1)
        if wins[c]:
            if w <= 1:
                outcomes.append(RELEASED)
                returned.append(s)
                lost.append(0)
                imprisoned.append(0)
            else:
                q = {"id": p["id"], "chance": c, "stake": s, "wins_needed": w - 1}
                prison[len(ids)] = q
                out_prisoners.append(q)
                outcomes.append(IMPRISONED)
                returned.append(0)
                lost.append(0)
                imprisoned.append(s)
        else:
            outcomes.append(LOST)
            returned.append(0)
            lost.append(s)
            imprisoned.append(0)
        ids.append(p["id"])
        chances.append(c)
        stakes.append(s)
        before.append(w)
    return out
