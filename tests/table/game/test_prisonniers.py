"""The prisoners a zero left, settled on the next number in columns (prisonniers.py), are the
reference's (`rules.settle.carried_prisoners`) to the dict and to the cent, and the ledger's
columns of them are those the reference's dicts give."""

from hypothesis import given, settings, strategies as st

from cylindre.rules import wheel
from cylindre.rules.bets import BetError
from cylindre.rules.settle import carried_prisoners, totals_of
from host_tools.table.game import resultats
from host_tools.table.game.prisonniers import Carried, settle_after

PRISONER = st.builds(lambda i, c, s, w: dict({"id": i if i % 2 else "p%d" % i, "chance": c, "stake": s},
                                             **({"wins_needed": w} if w else {})),
                     st.integers(0, 10 ** 6), st.sampled_from(list(wheel.CHANCES)),
                     st.integers(1, 10 ** 12), st.sampled_from([0, 1, 2, 3]))


class _Spin:
    def __init__(self, number):
        self.number, self.prisoners, self.carried_results = number, [], []


@settings(max_examples=200, deadline=None)
@given(st.lists(PRISONER, max_size=60, unique_by=lambda p: p["id"]), st.integers(1, 36))
def test_the_prisoners_settle_in_columns_as_the_rules_settle_them(prisoners, number):
    want = _Spin(number)
    carried_prisoners(want, [dict(p) for p in prisoners], {})
    kept = []
    got = settle_after([dict(p) for p in prisoners], number, kept)
    assert list(got) == want.carried_results
    assert [got[i] for i in range(-len(got), 0)] == want.carried_results      # read from the end alike
    assert got[1:3] == want.carried_results[1:3]
    assert kept == want.prisoners
    assert totals_of(0, 0, 0, 0, 0, [got.sums()]) == totals_of(0, 0, 0, 0, 0, want.carried_results)
    assert len(got) == len(prisoners) and bool(got) == bool(prisoners)


@settings(max_examples=100, deadline=None)
@given(st.lists(PRISONER, min_size=1, max_size=40, unique_by=lambda p: p["id"]), st.integers(1, 36))
def test_the_ledgers_columns_of_the_prisoners_are_those_of_their_dicts(prisoners, number):
    got = settle_after(prisoners, number, [])
    names = {}

    def label_id(kind, label):
        return names.setdefault((kind, label), len(names) + 1)

    fast, slow = resultats._Mores(), resultats._Mores()
    columns = resultats._carried_columns(got, label_id, fast)
    rows = [slow.add(resultats._carried_more(r)) for r in list(got)]     # the dicts' way
    assert columns["more"] == rows and list(fast) == list(slow)
    for k in ("staked", "returned", "lost", "imprisoned"):
        assert columns[k] == [r[k] for r in got]
    assert columns["id"] == [str(r["id"]) for r in got]
    assert columns["label"] == [names[(r["type"], r["label"])] for r in got]
    assert [resultats.OUTCOMES[k] for k in columns["outcome"]] == [r["outcome"] for r in got]
    assert isinstance(got, Carried)


IDS = st.lists(st.one_of(st.from_regex(r"[0-9a-f]{8}", fullmatch=True), st.text(max_size=9)), max_size=30, unique=True)


@settings(max_examples=200, deadline=None)
@given(IDS, IDS)
def test_the_ids_text_kept_as_bets_are_placed_is_the_one_made_at_the_result(ids, carried):
    """The ledger's id column from the book's columns (kept while the bets were placed) and the
    carried prisoners' ids after it is `_text` of them all, or None where `_text` is None."""
    from cylindre.rules.compiled import Book
    from host_tools.table.game.reglement import Colonnes
    book, cols = Book(None), Colonnes()
    for bid in ids:
        try:
            k = book.add({"id": bid, "type": "plein", "numbers": [7], "stake": 100})
        except BetError:
            continue                        # an id the rules refuse is never on the layout
        cols.add(book.shapes[k], book.mults[k], book.excess[k], bid)

    class Done:
        pass
    done = Done()
    done.cols = cols
    got = resultats._ids_text(done, list(book.ids), list(book.ids) + carried)
    assert got == resultats._text(list(book.ids) + carried)


def test_the_prisoners_a_settlement_made_are_settled_next_as_a_plain_list_of_them_is():
    """A settlement's prisoners are `Prisonniers` (made by the rules: not checked one by one
    again); the next spin settles them to the same dicts as a plain copy of them, which is
    checked; a plain list with a bad prisoner is still refused as the rules refuse it."""
    import json
    import pytest
    from cylindre.rules.compiled import Book
    from host_tools.table.game import reglement
    from host_tools.table.game.prisonniers import Prisonniers
    book = Book(None)
    for k, c in enumerate(wheel.CHANCES * 5):
        book.add({"id": "b%02d" % k, "type": c, "stake": 100 + k})
    made = reglement.settle(book, 0).prisoners
    assert type(made) is Prisonniers and len(made) == 30
    for n in (0, 7, 18, 36):
        fast = reglement.settle(Book(None), n, made)
        slow = reglement.settle(Book(None), n, [dict(p) for p in made])
        assert json.dumps(fast.to_json(), sort_keys=True) == json.dumps(slow.to_json(), sort_keys=True)
        assert type(fast.prisoners) is Prisonniers
    with_choice = reglement.settle(Book(None), 0, made, {made[0]["id"]: "partage"})      # a choice: checked whole
    assert with_choice.carried_results[0]["outcome"] == "partage"
    bad = [dict(p) for p in made]
    bad[3]["stake"] = -1
    with pytest.raises(BetError, match="stake must be positive"):
        reglement.settle(Book(None), 7, bad)
