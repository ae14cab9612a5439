"""The game's state machine (game.on_event) on its own: no journal, no clock, no I/O. It is given
the state and what the ledger knows (Facts) and says what to do (effects), in the order the table
applies and streams them."""

import json

from cylindre.rules.limits import Limits
from host_tools.table.game import flow as game
from host_tools.table.game.flow import Announce, Facts, Lock, Publish, Refuse, Save, Settle

STATE = {"phase": "betting", "spin": 1, "locked_spin": None, "prisoners": [], "carry": [], "next_bet": 9,
         "boot": "b0", "last_number": None, "last_launch": 1, "launch_at": ["b0", 900]}


def bet(bid, number=17, stake=1000, at=None, spin=None):
    return {"id": bid, "player": "ana", "stake": stake, "wheel_boot": "b0", "wheel_ms": at, "spin": spin,
            "body": {"id": bid, "type": "plein", "numbers": [number], "stake": stake}}


def step(ev, state=STATE, **facts):
    ev = dict(ev, at_ms=ev.get("at_ms", 1000))
    return game.on_event(state, Facts(**facts), "b0", 7, ev, Limits())


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def test_the_call_locks_the_bets_before_it_and_refuses_those_at_or_after_it():
    fx = step({"ev": "rnvp", "spin": 1, "at_ms": 1000},
              open_bets=[bet("B1", at=999.9), bet("B2", at=1000), bet("B3", at=1500)])
    assert of(fx, Refuse) == [Refuse("B2", "poussette", 1), Refuse("B3", "poussette", 1)]
    assert of(fx, Lock) == [Lock(1, ["B1"])]
    st = of(fx, Save)[0].state
    assert st["phase"] == "no_more_bets" and st["locked_spin"] == 1


def test_the_step_touches_nothing_it_was_given():
    state = json.loads(json.dumps(STATE))
    facts = Facts(open_bets=[bet("B1", at=10)])
    game.on_event(state, facts, "b0", 7, {"ev": "rnvp", "spin": 1, "at_ms": 1000}, Limits())
    assert state == STATE and facts.open_bets == [bet("B1", at=10)]


def test_no_step_changes_the_prisoners_it_was_given_which_it_shares_with_its_new_state():
    """The step shares the state's prisoners instead of copying them: every kind of step, at a
    zero (choices: partage, a move, prison) and on a number, leaves the given ones as they were."""
    prisoners = [{"id": "P%d" % k, "chance": c, "stake": 100 * (k + 1), **({"wins_needed": w} if w else {})}
                 for k, (c, w) in enumerate([("rouge", 1), ("noir", 0), ("pair", 2), ("impair", 3), ("manque", 1)])]
    called = dict(STATE, phase="no_more_bets", locked_spin=1, prisoners=prisoners)
    bodies = {"P0": {"id": "P0", "type": "rouge", "stake": 100, "zero_choice": "partage"},
              "P1": {"id": "P1", "type": "noir", "stake": 200, "zero_choice": {"move": "pair"}}}
    steps = [({"ev": "result", "spin": 1, "number": n}, dict(locked=[bet("B1", spin=1)], bodies=b))
             for n in (0, 17, 2) for b in (bodies, None)]
    steps += [({"ev": "rnvp", "spin": 1}, dict(open_bets=[bet("B2", at=10)])), ({"ev": "launch", "spin": 2}, {})]
    for ev, facts in steps:
        state = json.loads(json.dumps(called))
        fx = step(ev, state=state, **facts)
        assert state == called, ev
        assert state["prisoners"] == prisoners
        assert ev["ev"] != "result" or len(of(fx, Settle)) == 1          # settled, prisoners and all


def test_a_result_settles_the_locked_bets_once_and_reopens_betting():
    called = dict(STATE, phase="no_more_bets", locked_spin=1)
    fx = step({"ev": "result", "spin": 1, "number": 17}, state=called, locked=[bet("B1", spin=1), bet("B2", 5, spin=1)])
    (s,) = of(fx, Settle)
    assert (s.spin, s.number, s.staked, s.paid) == (1, 17, 2000, 36000)
    assert of(fx, Save)[0].state["phase"] == "betting"
    assert of(step({"ev": "result", "spin": 1, "number": 17}, state=called, settled=[1]), Settle) == []


def test_a_closed_table_stays_closed_through_a_late_result():
    late = dict(STATE, phase="closed", locked_spin=1)
    fx = step({"ev": "result", "spin": 1, "number": 3}, state=late, locked=[bet("B1", spin=1)])
    assert of(fx, Save)[0].state["phase"] == "closed"


def test_the_stream_puts_the_payments_where_the_rules_do_not_where_the_text_says():
    called = dict(STATE, phase="no_more_bets", locked_spin=1)
    fx = step({"ev": "result", "spin": 1, "number": 17}, state=called, locked=[bet("B1", spin=1)])
    out = [("announce", e.text) if isinstance(e, Announce) else e.kind for e in fx if isinstance(e, (Announce, Publish))]
    assert out[0] == "wheel" and out.count("settlement") == 1
    pay = out.index("settlement")
    assert out[pay + 1:] == [("announce", "tout est payé, au numéro"), ("announce", "faites vos jeux")]
    # nothing won: the settlement goes just before "faites vos jeux"
    fx = step({"ev": "result", "spin": 1, "number": 4}, state=called, locked=[bet("B1", spin=1)])
    out = [("announce", e.text) if isinstance(e, Announce) else e.kind for e in fx if isinstance(e, (Announce, Publish))]
    assert out[-2:] == ["settlement", ("announce", "faites vos jeux")]


def test_results_recovered_after_a_power_cut_each_stream_their_own_settlement_in_place():
    called = dict(STATE, phase="no_more_bets", locked_spin=1, boot_spin=0)
    history = [{"spin": 1, "number": 17}, {"spin": 2, "number": 17}]
    fx = game.on_event(called, Facts(locked=[bet("B1", spin=1)], last_settled=None),
                       "b1", 1, {"ev": "boot", "spin": 2, "history": history, "at_ms": 5}, Limits())
    assert [(s.spin, s.number) for s in of(fx, Settle)] == [(1, 17), (2, 17)]
    stream = [e for e in fx if isinstance(e, (Announce, Publish)) and getattr(e, "kind", "") != "wheel"]
    # every settlement is streamed among its own spin's words, before that spin's "faites vos jeux"
    for i, e in enumerate(stream):
        if isinstance(e, Publish):
            spin = e.body["spin"]
            assert stream[i + 1].spin == spin
            nxt = [x for x in stream[i:] if isinstance(x, Announce) and x.text == "faites vos jeux"][0]
            assert nxt.spin == spin
