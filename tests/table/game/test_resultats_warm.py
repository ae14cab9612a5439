"""The called bets' results made at the wheel's call (resultats.warm_calls): the very texts the
result's step makes for them, so the step's columns are the same bytes whether the call warmed
them or not, and a warmed step makes none of its own."""

import pytest

from cylindre.rules.compiled import Book, compile_bet
from host_tools.bench.settle import mixed_bets
from host_tools.table.game import resultats
from host_tools.table.game.reglement import REGISTRY, Colonnes, settle
from host_tools.table.game.table import Table
from host_tools.table.journal.store import Journal


def _layout(n, seed):
    book, cols = Book(), Colonnes()
    for b in mixed_bets(n, seed):
        bid, s, m, x = compile_bet(b, book.limits)
        book.add_compiled(bid, s, m, x, b)
        cols.add(s, m, x, bid)
    return book, cols


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_called_bets_results_made_at_the_call_are_those_the_result_makes(tmp_path, seed):
    ledger = Table(Journal(tmp_path / "j.sqlite"), "T1").ledger
    book, cols = _layout(3000, seed)
    calls = {(REGISTRY.shapes[g], m) for g, m, x in zip(cols.gidx, cols.mult, cols.excess)
             if REGISTRY.gcall[g] and not x}
    assert 4 <= len(calls) <= resultats.MAX_WARM          # the layout has called bets to warm, all of them
    for number in (0, 5, 17, 26, 32, 36):
        resultats._CALLS.clear()
        cold = resultats.pack(settle(book, number, cols=cols), ledger._label_id, ledger._labels_of)
        made_cold = dict(resultats._CALLS)
        resultats._CALLS.clear()
        assert resultats.warm_calls(cols) >= len(made_cold) > 0
        warmed = dict(resultats._CALLS)
        assert {k: v for k, v in warmed.items() if k in made_cold} == made_cold      # the same texts
        hot = resultats.pack(settle(book, number, cols=cols), ledger._label_id, ledger._labels_of)
        assert hot == cold                                  # the same columns, byte for byte
        assert resultats._CALLS == warmed                   # and the step made none of its own
    resultats._CALLS.clear()


def test_a_layout_without_a_called_bet_or_columns_of_another_registry_warms_nothing():
    book, cols = Book(), Colonnes()
    for b in ({"id": "a", "type": "plein", "numbers": [7], "stake": 100}, {"id": "b", "type": "rouge", "stake": 500}):
        bid, s, m, x = compile_bet(b, book.limits)
        book.add_compiled(bid, s, m, x, b)
        cols.add(s, m, x, bid)
    assert resultats.warm_calls(cols) == 0 and resultats.warm_calls(None) == 0
    _, called = _layout(200, 4)
    called.epoch = REGISTRY.epoch - 1                       # (the registry was cleared since: its gids mean other shapes)
    assert resultats.warm_calls(called) == 0


def test_a_called_bet_with_a_replay_is_left_to_the_result_and_the_others_are_warmed():
    """A call with its replay (refaire, compléter, tout) settles with its own bet's dict: the
    call's warming leaves it out (it raised there, and the call's results went unmade)."""
    book, cols = Book(), Colonnes()
    for b in ({"id": "a", "type": "voisins", "unit": 100, "replay": "refaire"},
              {"id": "b", "type": "tiers", "unit": 200, "replay": "tout"},
              {"id": "c", "type": "orphelins", "unit": 100}):
        bid, s, m, x = compile_bet(b, book.limits)
        book.add_compiled(bid, s, m, x, b)
        cols.add(s, m, x, bid)
    resultats._CALLS.clear()
    assert resultats.warm_calls(cols) == 37                 # the orphelins on every number, alone
    assert {(s.label, u) for s, u, _ in resultats._CALLS} == {(book.shapes[2].label, book.mults[2])}
    resultats._CALLS.clear()
