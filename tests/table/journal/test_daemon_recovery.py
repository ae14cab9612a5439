"""The wheel loses power: results whose events died in its RAM are settled once from the games its
flash kept (the `history` of its next `boot` event); nothing is paid twice, nothing is invented,
and bets locked to a spin with no result play again or, when nobody can know, are held."""


import pytest

from host_tools.sim.tablewheel import Wheel, game


@pytest.fixture
def table(open_table):
    return open_table


def settled(t):
    return [(r["spin"], r["number"]) for r in t.j.query("SELECT spin, number FROM settlements ORDER BY spin")]


def started(t, w, spin, *bets):
    """A first boot, spins 1 .. spin-1 with result 2, then `bets` placed and spin `spin` launched
    and locked (rien ne va plus). Returns the bets' ids."""
    w.send({"ev": "boot", "t": 0, "reset_cause": "power", "spin": 0, "interrupted": None, "history": []})
    for n in range(1, spin):
        w.send({"ev": "launch", "t": 1, "spin": n})
        w.send({"ev": "rnvp", "t": 2, "spin": n})
        w.send({"ev": "result", "t": 3, "spin": n, "number": 2})
    ids = [t.place(b)["id"] for b in bets]
    w.send({"ev": "launch", "t": 1, "spin": spin})
    w.send({"ev": "rnvp", "t": 2, "spin": spin})
    return ids


def test_a_result_lost_in_the_wheels_ram_is_settled_once_from_its_flash(table):
    w = Wheel(table)
    a, = started(table, w, 2, {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    assert table.bet(a)["status"] == "locked"
    # the result of spin 2 was emitted, the power went before the frame left: a new boot
    assert w.reboot("b1", 2, [(1, 2), (2, 17)])
    assert settled(table) == [(1, 2), (2, 17)]
    bet = table.bet(a)
    assert bet["status"] == "settled" and bet["spin"] == 2 and bet["result"]["won"] == 35000
    rec = table.ledger.settlement(2)
    assert rec["recovered"] == {"from": "history", "boot": "b1", "seq": 1}
    assert table.state()["phase"] == "betting" and table.state()["locked_spin"] is None
    said = [r["text"] for r in table.j.query("SELECT text FROM announcements ORDER BY id")]
    assert any("retrouvé" in s for s in said) and said[-1] == "faites vos jeux"
    # the same boot event again (the daemon died before its ack), then a third boot: nothing more
    assert not table.on_event("b1", 1, {"ev": "boot", "spin": 2, "history": [game(1, 2), game(2, 17)]},
                              {"kind": "event", "raw": b"x"})
    w.reboot("b2", 2, [(1, 2), (2, 17)])
    assert settled(table) == [(1, 2), (2, 17)]
    # play goes on with the next spin
    b = table.place({"player": "bo", "type": "rouge", "stake": 500})
    w.send({"ev": "launch", "t": 1, "spin": 3})
    w.send({"ev": "rnvp", "t": 2, "spin": 3})
    w.send({"ev": "result", "t": 3, "spin": 3, "number": 1})
    assert table.bet(b["id"])["result"]["won"] == 500 and settled(table)[-1] == (3, 1)


def test_a_result_the_host_has_is_not_settled_again_after_a_restart(table):
    w = Wheel(table)
    a, = started(table, w, 1, {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 17})   # journaled; the ack died with the power
    b = table.place({"player": "bo", "type": "rouge", "stake": 500})
    w.reboot("b1", 1, [(1, 17)])
    assert settled(table) == [(1, 17)]
    assert table.bet(a)["result"]["won"] == 35000
    assert table.bet(b["id"])["status"] == "open"              # placed after: plays the next spin


def test_a_restart_mid_spin_voids_it_and_its_bets_play_on_the_relaunch(table):
    w = Wheel(table)
    a, = started(table, w, 3, {"player": "ana", "type": "douzaine", "which": 1, "stake": 1000})
    assert table.bet(a)["status"] == "locked" and table.bet(a)["spin"] == 3
    w.reboot("b1", 3, [(1, 2), (2, 2)], interrupted=3)
    assert table.bet(a)["status"] == "locked"             # until the wheel's own void ...
    w.send({"ev": "void", "t": 0, "spin": 3, "reason": "restart", "detail": "power"})
    assert table.bet(a)["status"] == "open" and table.state()["phase"] == "betting"
    w.send({"ev": "launch", "t": 1, "spin": 4})
    w.send({"ev": "rnvp", "t": 2, "spin": 4})
    w.send({"ev": "result", "t": 3, "spin": 4, "number": 5})
    bet = table.bet(a)
    assert bet["status"] == "settled" and bet["spin"] == 4 and bet["result"]["won"] == 2000
    assert settled(table) == [(1, 2), (2, 2), (4, 5)]


def test_a_void_lost_with_the_power_releases_the_bets(table):
    w = Wheel(table)
    a, = started(table, w, 2, {"player": "ana", "type": "rouge", "stake": 1000})
    # spin 2 was voided (say, few laps) and saved; its void event died in RAM
    w.reboot("b1", 2, [(1, 2)])
    assert table.bet(a)["status"] == "open" and settled(table) == [(1, 2)]


def test_a_void_after_a_result_the_host_settled_is_ignored(table):
    """The power went between the result on the wire and the controller's flash record: the wheel
    voids the spin (restart) that the host has already paid. The result stands."""
    w = Wheel(table)
    started(table, w, 1)
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 8})
    b = table.place({"player": "bo", "type": "noir", "stake": 500})
    w.reboot("b1", 1, [], interrupted=1)
    w.send({"ev": "void", "t": 0, "spin": 1, "reason": "restart", "detail": "power"})
    assert settled(table) == [(1, 8)] and table.bet(b["id"])["status"] == "open"
    said = [r["text"] for r in table.j.query("SELECT text FROM announcements ORDER BY id")]
    assert not any(s.startswith("coup nul") for s in said)


def test_a_result_named_again_after_a_restart_is_not_paid_twice(table):
    """The host acknowledged the result, so the wheel never wrote it; the power went before the
    next launch, and after the boot the ball still in its pocket names the spin again."""
    w = Wheel(table)
    a, = started(table, w, 1, {"player": "ana", "type": "plein", "numbers": [8], "stake": 1000})
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 8})
    paid = table.bet(a)
    w.reboot("b1", 1, [], interrupted=1)
    w.send({"ev": "result", "t": 5, "spin": 1, "number": 8, "restart": "power", "laps": None})
    assert settled(table) == [(1, 8)] and table.bet(a) == paid
    said = [r["text"] for r in table.j.query("SELECT text FROM announcements ORDER BY id")]
    assert sum(1 for s in said if "huit" in s) == 1, said          # announced once


def test_prisoners_meet_every_lost_result_in_order(table):
    w = Wheel(table)
    a, = started(table, w, 1, {"player": "ana", "type": "rouge", "stake": 1000})
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 0})     # en prison
    w.send({"ev": "launch", "t": 1, "spin": 2})
    w.send({"ev": "rnvp", "t": 2, "spin": 2})
    # results 2 (red) and 3 (zero), and spin 3's launch, all died in RAM
    w.reboot("b1", 3, [(1, 0), (2, 1), (3, 0)])
    assert settled(table) == [(1, 0), (2, 1), (3, 0)]
    st2 = table.ledger.settlement(2)
    st3 = table.ledger.settlement(3)
    assert [(r["outcome"], r["returned"]) for r in st2["results"] if r["id"] == a] == [("released", 1000)]
    assert [r for r in st3["results"] if r["id"] == a] == []    # freed at 2, not judged again at 3
    assert table.state()["prisoners"] == [] and table.state()["spin"] == 3


def test_bets_are_held_when_the_result_may_be_beyond_the_wheels_memory(table):
    w = Wheel(table)
    a, = started(table, w, 2, {"player": "ana", "type": "plein", "numbers": [4], "stake": 1000})
    # the host was away for 10 results after spin 2: the wheel keeps only the last 10
    w.reboot("b1", 14, [(s, 4) for s in range(5, 15)])
    bet = table.bet(a)
    assert bet["status"] == "held" and "unknown" in bet["reason"]
    assert table.state()["bets_held"] == 1 and table.state()["phase"] == "betting"
    assert settled(table) == [(1, 2)]                           # never guessed, nothing out of order
    w.send({"ev": "launch", "t": 1, "spin": 15})                # a new spin does not replay them
    assert table.bet(a)["status"] == "held"


def test_bets_are_held_when_the_wheel_lost_its_flash_record(table):
    w = Wheel(table)
    a, = started(table, w, 3, {"player": "ana", "type": "plein", "numbers": [4], "stake": 1000})
    w.reboot("b1", 0, [])                                       # counter back to 0: a blank record
    assert table.bet(a)["status"] == "held" and "went back" in table.bet(a)["reason"]


def test_a_boot_without_history_recovers_nothing(table):
    w = Wheel(table)
    a, = started(table, w, 2, {"player": "ana", "type": "plein", "numbers": [4], "stake": 1000})
    w.boot, w.seq = "b1", 0
    w.send({"ev": "boot", "t": 0, "reset_cause": "power", "spin": 2, "interrupted": None})   # older firmware
    assert table.bet(a)["status"] == "held" and settled(table) == [(1, 2)]


def test_a_new_journal_takes_no_old_games_for_lost_results(table):
    w = Wheel(table)
    w.reboot("b0", 40, [(s, 7) for s in range(31, 41)])         # the first boot this journal sees
    w.reboot("b1", 40, [(s, 7) for s in range(31, 41)])         # and a power cut before any spin
    assert settled(table) == []


def test_bets_locked_to_a_spin_number_settled_before_are_held_not_left_locked(table):
    """A replaced flash record restarts the wheel's counter: spin 1 comes again. Never paid twice,
    never stuck: the bets are held and the table takes bets again."""
    w = Wheel(table)
    started(table, w, 2)
    w.send({"ev": "result", "t": 3, "spin": 2, "number": 9})
    w.reboot("b1", 0, [])
    a, = [table.place({"player": "ana", "type": "plein", "numbers": [9], "stake": 1000})["id"]]
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 9})
    bet = table.bet(a)
    assert bet["status"] == "held" and "went back" in bet["reason"]
    assert settled(table) == [(1, 2), (2, 9)] and table.state()["phase"] == "betting"


def test_the_supervisor_refunds_or_replays_a_held_bet(table):
    from host_tools.table.game.table import Invalid, Refused
    w = Wheel(table)
    a, b = started(table, w, 2, {"player": "ana", "type": "plein", "numbers": [4], "stake": 1000},
                   {"player": "bo", "type": "rouge", "stake": 700})
    w.reboot("b1", 2, [])                                       # no games in flash: result unknown
    assert table.bet(a)["status"] == table.bet(b)["status"] == "held"
    with pytest.raises(Invalid):
        table.resolve_held(a, "pay")
    r = table.resolve_held(a, "refund")
    assert r["status"] == "refunded" and r["result"]["returned"] == 1000 and "supervisor: refund" in r["reason"]
    with pytest.raises(Refused):
        table.resolve_held(a, "play")                           # decided once
    assert table.resolve_held(b, "play")["status"] == "open"
    w.send({"ev": "launch", "t": 1, "spin": 3})
    w.send({"ev": "rnvp", "t": 2, "spin": 3})
    w.send({"ev": "result", "t": 3, "spin": 3, "number": 1})
    assert table.bet(b)["status"] == "settled" and table.bet(b)["result"]["won"] == 700
    assert table.state()["bets_held"] == 0


def test_a_history_without_a_spin_settled_here_is_not_trusted(table):
    w = Wheel(table)
    a, = started(table, w, 3, {"player": "ana", "type": "plein", "numbers": [4], "stake": 1000})
    w.reboot("b1", 3, [(1, 2), (3, 4)])                         # spin 2 was settled here with 2
    bet = table.bet(a)
    assert bet["status"] == "held" and "lacks spin 2" in bet["reason"] and (3, 4) not in settled(table)
