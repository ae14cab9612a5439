"""Bet slips (game/slips.py): a terminal's bets taken or refused whole, under the single bet's
rules, limits, window and keys; the wheel's call locks a slip whole or refuses it whole."""

import threading

import pytest
from hypothesis import given, settings, strategies as st

from host_tools.table.game import slips
from host_tools.table.game.committer import Committer
from host_tools.table.game.table import Invalid, Mismatch, Refused, Table
from host_tools.table.journal.store import Journal
from host_tools.sim.tablewheel import Wheel
from test_daemon_committer import _consistent

SLIP = {"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100},
                                  {"type": "rouge", "stake": 500, "zero_choice": "partage"},
                                  {"type": "voisins", "unit": 200}]}


@pytest.fixture
def t(open_table):
    return open_table


def test_a_slip_is_recorded_whole_with_its_bets_open_and_named_by_it(t):
    Wheel(t)
    out = slips.place(t, SLIP, by={"name": "T042", "role": "terminal"})
    assert out["status"] == "open" and out["slip"] == "S000001" and len(out["bets"]) == 3
    assert out["stake"] == 100 + 500 + 9 * 200 == sum(b["stake"] for b in out["bets"])
    for b in out["bets"]:
        row = t.bet(b["id"])
        assert row["status"] == "open" and row["slip"] == "S000001" and row["player"] == "ana"
        assert row["placed_by"] == {"name": "T042", "role": "terminal"}
    assert slips.get(t, "S000001")["bets"][0]["id"] == out["bets"][0]["id"]
    _consistent(t)


@pytest.mark.parametrize("bad, where", [
    ({"player": "ana", "bets": []}, "bets: a list"),
    ({"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100}] * 51}, "bets: a list"),
    ({"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100}, {"type": "plein", "numbers": [37],
                                                                                   "stake": 100}]}, "bets[1]"),
    ({"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100, "status": "settled"}]}, "bets[0]"),
    ({"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100, "player": "bob"}]}, "bets[0].player"),
    ({"player": "ana", "bets": [{"type": "cheval", "numbers": [1, 2], "stake": 10}]}, "bets[0]"),     # below the minimum
    ({"player": "ana", "bets": [{"type": "douzaine", "which": [1, 2], "stake": 100}]}, "consent"),
    ({"player": "ana", "bets": [{"type": "plein", "numbers": [3], "stake": 100, "zero_choice": "partage"}]}, "zero_choice"),
    ({"player": "", "bets": [{"type": "plein", "numbers": [3], "stake": 100}]}, "player"),
    ({"player": "ana", "bets": [{"type": "plein", "numbers": [3], "stake": 100}], "terminal": "x"}, "terminal"),
])
def test_a_bad_bet_refuses_the_slip_naming_it_and_records_nothing(t, bad, where):
    Wheel(t)
    with pytest.raises(Invalid, match=where.replace("[", r"\[").replace("]", r"\]")):
        slips.place(t, bad)
    assert t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 0
    assert t.j.one("SELECT COUNT(*) AS n FROM slips")["n"] == 0
    _consistent(t)


def test_a_closed_window_refuses_the_slip_whole_and_records_it_refused(t):
    w = Wheel(t)
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    with pytest.raises(Refused) as e:
        slips.place(t, SLIP)
    assert e.value.code == "poussette" and e.value.bet["bets"] == []
    row = t.j.one("SELECT status, reason, n FROM slips")
    assert (row["status"], row["reason"], row["n"]) == ("refused", "poussette", 3)
    assert t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 0
    _consistent(t)


def test_a_call_taken_late_refuses_every_bet_of_a_slip_sent_after_it(t):
    """The wheel's call at wheel instant c reaches the table after a slip received at c + 5 ms:
    the call refuses all its bets as poussette, none is locked; a slip before it plays whole."""
    w = Wheel(t)
    w.send({"ev": "launch", "t": 1, "spin": 1})
    before = slips.place(t, SLIP)
    call_at = w.now() + 5
    t.clock.advance(10)
    late = slips.place(t, dict(SLIP, player="bob"))             # the window still looks open here
    w.send({"ev": "rnvp", "t": 2, "spin": 1}, at=call_at)
    assert {t.bet(b["id"])["status"] for b in before["bets"]} == {"locked"}
    assert {(t.bet(b["id"])["status"], t.bet(b["id"])["reason"]) for b in late["bets"]} == {("refused", "poussette")}
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 17})
    assert {t.bet(b["id"])["status"] for b in before["bets"]} == {"settled"}
    _consistent(t)


def test_a_key_answers_the_first_answer_and_refuses_another_slip(t):
    Wheel(t)
    a = slips.place(t, SLIP, "k-1")
    assert slips.place(t, SLIP, "k-1") == a
    with pytest.raises(Mismatch):
        slips.place(t, dict(SLIP, player="bob"), "k-1")
    assert t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 3
    _consistent(t)


def test_a_withdrawal_takes_every_bet_back_or_none(t):
    w = Wheel(t)
    a = slips.place(t, SLIP)
    out = slips.withdraw(t, a["slip"], by={"name": "T042", "role": "terminal"})
    assert out["status"] == "withdrawn" and {t.bet(b)["status"] for b in out["bets"]} == {"cancelled"}
    with pytest.raises(Refused, match="only an open slip"):
        slips.withdraw(t, a["slip"])
    b = slips.place(t, SLIP)
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    with pytest.raises(Refused) as e:
        slips.withdraw(t, b["slip"])
    assert e.value.code in ("not_open", "no_more_bets")
    assert {t.bet(x["id"])["status"] for x in b["bets"]} == {"locked"}
    _consistent(t)


def test_slips_and_single_bets_in_one_group_each_answered_after_its_commit(t):
    Wheel(t)
    c = Committer(t)
    answers, errors = [], []

    def terminal(n):
        try:
            answers.append(c.place_slip(dict(SLIP, player="p%d" % n), "key-%d" % n))
        except Exception as e:           # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=terminal, args=(n,)) for n in range(12)]
    threads += [threading.Thread(target=lambda: answers.append(c.place({"player": "x", "type": "noir", "stake": 100})))]
    with t.lock:
        for th in threads:
            th.start()
        while c.received < 13:
            threading.Event().wait(0.005)
    for th in threads:
        th.join(10)
    assert not errors and len(answers) == 13
    assert t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 12 * 3 + 1
    assert len({a["slip"] for a in answers if "slip" in a}) == 12
    _consistent(t)


BETS = st.lists(st.one_of(
    st.builds(lambda n, s: {"type": "plein", "numbers": [n], "stake": s}, st.integers(0, 37), st.sampled_from([10, 100, 5000])),
    st.builds(lambda c, s: {"type": c, "stake": s}, st.sampled_from(["rouge", "noir", "vert"]), st.sampled_from([100, 200])),
    st.builds(lambda u: {"type": "tiers", "unit": u}, st.sampled_from([10, 100]))), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(st.lists(BETS, min_size=1, max_size=6))
def test_every_slip_is_all_or_nothing_whatever_its_bets(tmp_path_factory, slips_sent):
    """Whatever the bets, each slip leaves all of its bets in the journal or none of them."""
    t = Table(Journal(tmp_path_factory.mktemp("j") / "j.sqlite"), "T1")
    t.set_open(True)
    Wheel(t)
    for k, bets in enumerate(slips_sent):
        try:
            out = slips.place(t, {"player": "p", "bets": bets})
            assert len(out["bets"]) == len(bets)
        except Invalid:
            pass
        n = t.j.one("SELECT COUNT(*) AS n FROM bets")["n"]
        assert n == sum(len(r["n"] and [1] * r["n"]) for r in t.j.query("SELECT n FROM slips WHERE status='open'"))
    _consistent(t)
    t.j.close()


def test_the_table_and_the_floor_count_what_the_slips_staked(tmp_path):
    """The table's state (what the pages show) counts a slip's bets on the layout; the settlement
    event (what the floor receives) counts them in its totals."""
    events = []
    t = Table(Journal(tmp_path / "j.sqlite"), "T1", publish=lambda kind, body: events.append((kind, body)))
    t.set_open(True)
    w = Wheel(t)
    a = slips.place(t, SLIP)
    b = slips.place(t, dict(SLIP, player="bob"))
    single = t.place({"player": "cy", "type": "noir", "stake": 300})
    st_ = t.state()
    assert st_["bets_on_table"] == 7 and st_["stakes_on_table"] == a["stake"] + b["stake"] + single["stake"]
    assert [k for k, _ in events].count("slip") == 2
    w.spin(1, 26)
    settled = [body for kind, body in events if kind == "settlement"]
    assert settled[0]["totals"]["staked"] == a["stake"] + b["stake"] + single["stake"] and settled[0]["bets"] == 7


def test_a_group_holds_at_most_its_size_in_bets_counting_a_slips(t):
    """Slips of 20 bets each: a group of 256 bets at most takes 12 of them, the next the rest."""
    Wheel(t)
    c = Committer(t)
    slip = {"player": "ana", "bets": [{"type": "plein", "numbers": [n], "stake": 100} for n in range(20)]}
    jobs = [slips.receive(t, slip) for _ in range(30)]
    from host_tools.table.game.committer import _Job
    with c._cv:
        for r in jobs:
            c._waiting.append(_Job(slip, None, None, r, slip=True))
    sizes = []
    real = c.commit
    c.commit = lambda js: (sizes.append(len(js)), real(js))
    c.stop()
    c._run()
    assert sizes == [12, 12, 6] and t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 600
