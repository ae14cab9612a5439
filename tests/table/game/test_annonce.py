"""What the table says now (game/annonce.py): "faites vos jeux" only while a bet would be taken,
the rule POST /bets applies. One case per rule, then the law for any history of statuses: the
screens' words and their expiry are the betting window's own verdict."""

from hypothesis import given, settings, strategies as st

from host_tools.table.game import annonce as A
from host_tools.table.game.window import BETTING, CLOSED, NO_MORE, Window


def test_faites_vos_jeux_only_when_a_bet_would_be_taken():
    assert A.annonce(BETTING, None) == "betting"
    assert A.annonce(BETTING, "wheel_not_heard") == "suspended"      # a cable pulled, a wheel never heard
    assert A.annonce(BETTING, "wheel_unknown") == "suspended"
    assert A.annonce(BETTING, A.UNKNOWN) == "suspended"              # nobody said bets are taken


def test_the_call_and_a_closed_table_say_so_whatever_the_verdict():
    assert A.annonce(NO_MORE, "poussette") == "no_more_bets"
    assert A.annonce(NO_MORE, None) == "no_more_bets"
    assert A.annonce(CLOSED, "table_closed") == "closed"
    assert A.annonce(CLOSED, None) == "closed"
    assert A.annonce(None, None) == "suspended"                     # a phase nobody knows is no betting


def test_the_verdict_carries_the_refusal_code_of_post_bets():
    assert A.verdict(BETTING, ("open", None, ("b", 5))) == {"annonce": "betting", "accepting_bets": True, "refusing": None}
    assert A.verdict(BETTING, ("refused", "wheel_not_heard", ("b", None))) == \
        {"annonce": "suspended", "accepting_bets": False, "refusing": "wheel_not_heard"}
    assert A.verdict(NO_MORE, ("refused", "poussette", ("b", 5)))["annonce"] == "no_more_bets"


def _synced(boot="b1"):
    """A window whose clock knows the wheel's: host ms = wheel ms + 1000 (an echo says so)."""
    w = Window()
    w.on_status(boot, {"echo": [1000, 0], "at_ms": 0, "emitted": 0, "state": "called"}, taken=0, now_ms=1000)
    return w


STATUS = st.tuples(st.integers(0, 3000),                                  # host ms after the previous
                   st.integers(0, 1500),                                  # how old the status is on arrival
                   st.sampled_from(["idle", "ball_in_rim", "no_more_bets", "ball_dropped"]),
                   st.booleans())                                         # every event it emitted was taken


@settings(max_examples=300, deadline=None)
@given(st.lists(STATUS, min_size=1, max_size=12), st.sampled_from([BETTING, NO_MORE, CLOSED]),
       st.integers(0, 2500))
def test_the_screens_say_faites_vos_jeux_exactly_while_the_window_takes_a_bet(statuses, phase, later):
    """For any statuses received: the words are "betting" iff `admit` takes a bet now, and a screen
    that hears nothing more stops saying it when `open_for` runs out, the instant `admit` refuses."""
    w = _synced()
    now = 1000
    for gap, age, state, taken in statuses:
        now += gap
        at = now - 1000 - age                                             # the wheel's instant it was sent
        w.on_status("b1", {"at_ms": at, "emitted": 5, "state": state}, taken=5 if taken else 4, now_ms=now)
        admitted = w.admit(phase, now)
        said = A.verdict(phase, admitted)
        assert (said["annonce"] == "betting") == (admitted[0] == "open")
        assert said["accepting_bets"] == (admitted[0] == "open")
    t = now + later
    left = w.open_for(t)
    open_now = w.admit(BETTING, t)[0] == "open"
    assert (left > 0) == open_now or (left == 0 and not open_now)
    if left > 0:
        assert w.admit(BETTING, t + left - 1)[0] == "open"
        assert w.admit(BETTING, t + left + 1)[0] == "refused"


def test_a_window_that_never_heard_the_wheel_is_open_for_nothing():
    w = Window()
    assert w.open_for(5000) == 0.0
    assert A.verdict(BETTING, w.admit(BETTING, 5000))["annonce"] == "suspended"


def test_a_fresh_status_says_faites_vos_jeux_for_as_long_as_post_bets_takes_a_bet():
    w = _synced()
    w.on_status("b1", {"at_ms": 4000, "emitted": 5, "state": "idle"}, taken=5, now_ms=5000)     # sent just now
    left = w.open_for(5200)
    assert 790 <= left <= 800                     # 1 s of freshness, 200 ms gone, the clocks' 1 ms against the player
    assert A.verdict(BETTING, w.admit(BETTING, 5200))["annonce"] == "betting"
    assert w.admit(BETTING, 5200 + left - 1)[0] == "open"
    assert A.verdict(BETTING, w.admit(BETTING, 5200 + left + 1))["annonce"] == "suspended"   # no word since: a cut cable
    w.on_status("b1", {"at_ms": 4500, "emitted": 5, "state": "no_more_bets"}, taken=5, now_ms=5500)
    assert w.open_for(5500) == 0.0                # the call: no evidence any more
