"""Zero and en prison (issue 2 §4): partage, prison, move, release, three imprisonments, the split."""

from cylindre.rules import prison
from cylindre.rules.settle import settle_spin


def _one(res, bid):
    for r in res["results"]:
        if r["id"] == bid:
            return r
    raise AssertionError("no result for %s" % bid)


def _conserved(res):
    for r in res["results"]:
        assert r["staked"] == r["returned"] + r["lost"] + r["imprisoned"], r


def test_zero_columns_and_dozens_lose_zero_combinations_win():
    res = settle_spin(0, [{"id": "c", "type": "colonne", "which": 1, "stake": 1000},
                          {"id": "d", "type": "douzaine", "which": 1, "stake": 1000},
                          {"id": "p", "type": "cheval", "numbers": [0, 1], "stake": 1000},
                          {"id": "q", "type": "carre", "numbers": [0, 1, 2, 3], "stake": 1000}])
    assert _one(res, "c")["outcome"] == "lost" and _one(res, "d")["lost"] == 1000
    assert _one(res, "p")["won"] == 17000 and _one(res, "q")["won"] == 8000
    _conserved(res)


def test_even_chance_goes_en_prison_by_default():
    res = settle_spin(0, [{"id": "r", "type": "rouge", "stake": 1000}])
    r = _one(res, "r")
    assert r["outcome"] == "imprisoned" and r["imprisoned"] == 1000 and r["lost"] == 0
    assert res["prisoners"] == [{"id": "r", "chance": "rouge", "stake": 1000, "wins_needed": 1}]
    assert "en prison à rouge" in res["announcements"]
    _conserved(res)


def test_partage_returns_half_rounded_up_for_the_player():
    res = settle_spin(0, [{"id": "r", "type": "rouge", "stake": 1000}, {"id": "n", "type": "noir", "stake": 1001}],
                      choices={"r": "partage", "n": "partage"})
    assert _one(res, "r")["returned"] == 500 and _one(res, "r")["lost"] == 500
    assert _one(res, "n")["returned"] == 501 and _one(res, "n")["lost"] == 500
    assert res["prisoners"] == []
    _conserved(res)


def test_move_keeps_it_imprisoned_on_another_chance():
    res = settle_spin(0, [{"id": "r", "type": "rouge", "stake": 1000}], choices={"r": {"move": "pair"}})
    assert res["prisoners"] == [{"id": "r", "chance": "pair", "stake": 1000, "wins_needed": 1}]
    nxt = settle_spin(2, [], res["prisoners"])      # 2 is black and even
    assert _one(nxt, "r")["outcome"] == "released" and _one(nxt, "r")["returned"] == 1000


def test_imprisoned_once_released_by_a_win_taken_by_a_loss():
    p = [prison.new("r", "rouge", 1000)]
    win = settle_spin(19, [], p)
    assert _one(win, "r")["outcome"] == "released" and _one(win, "r")["won"] == 0
    assert win["prisoners"] == []
    loss = settle_spin(17, [], p)
    assert _one(loss, "r")["outcome"] == "lost" and _one(loss, "r")["lost"] == 1000
    _conserved(win)
    _conserved(loss)


def test_consecutive_zeros_need_as_many_wins_then_split_at_the_fourth():
    res = settle_spin(0, [{"id": "m", "type": "manque", "stake": 1001}])
    for level in (2, 3):
        res = settle_spin(0, [], res["prisoners"])
        assert res["prisoners"][0]["wins_needed"] == level
    fourth = settle_spin(0, [], res["prisoners"])
    r = _one(fourth, "m")
    assert r["outcome"] == "split" and r["returned"] == 501 and r["lost"] == 500
    assert fourth["prisoners"] == []
    # Three times imprisoned: three wins to be freed.
    p = res["prisoners"]
    for left in (2, 1):
        step = settle_spin(5, [], p)
        assert _one(step, "m")["outcome"] == "imprisoned"
        p = step["prisoners"]
        assert p[0]["wins_needed"] == left
    done = settle_spin(5, [], p)
    assert _one(done, "m")["outcome"] == "released" and _one(done, "m")["returned"] == 1001


def test_partage_of_a_prisoner_at_a_later_zero():
    p = [{"id": "x", "chance": "noir", "stake": 2000, "wins_needed": 2}]
    res = settle_spin(0, [], p, {"x": "partage"})
    r = _one(res, "x")
    assert r["outcome"] == "partage" and r["returned"] == 1000 and r["lost"] == 1000


def test_bad_prisoner_and_choice_are_refused():
    from cylindre.rules.bets import BetError
    for bad in ({"id": "x", "chance": "vert", "stake": 100}, {"id": "x", "chance": "rouge", "stake": 1.5},
                {"id": "x", "chance": "rouge", "stake": 100, "wins_needed": 4}):
        try:
            settle_spin(5, [], [bad])
        except BetError:
            continue
        raise AssertionError("accepted %r" % (bad,))
    try:
        settle_spin(0, [{"id": "p", "type": "plein", "numbers": [0], "stake": 100}], [], {"p": "partage"})
    except BetError as e:
        assert "only to even chances" in e.message
    else:
        raise AssertionError("a choice on a plein was accepted")


def test_the_ways_to_say_a_choice_at_zero():
    from cylindre.rules.bets import zero_choice
    assert zero_choice("Partage", "x") == "partage" and zero_choice("en prison", "x") == "prison"
    assert zero_choice({"action": "partage"}, "x") == "partage"
    assert zero_choice({"action": "move", "to": "black"}, "x") == ("move", "noir")
    assert zero_choice("move:noir", "x") == ("move", "noir")
    assert zero_choice("déplacer à manque", "x") == ("move", "manque")
    res = settle_spin(0, [{"id": "r", "type": "rouge", "stake": 1000}], [], [{"id": "r", "choice": "partage"}])
    assert _one(res, "r")["outcome"] == "partage"
