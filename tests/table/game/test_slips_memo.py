"""The slips' receipt memo (game/slips.py, `Memo`): a slip read from the bets it kept says
exactly what reading it in full says, under the same limits only, and never shares a bet's
dict between two slips."""

import copy

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from cylindre.rules.bets import Limits
from host_tools.table.game import slips
from host_tools.table.game.gate import Invalid
from host_tools.table.game.table import Table
from host_tools.table.journal.store import Journal

SHAPE_FIELDS = ("family", "type", "label", "chips", "chance", "count", "zero", "a_placer", "replay",
                "fill", "unit", "units")


@pytest.fixture
def t(tmp_path):
    table = Table(Journal(tmp_path / "j.sqlite"), "T1")
    table.set_open(True)
    yield table
    table.j.close()


def read(t, body, decoded):
    """(parsed, compiled as plain values) of a receipt, or the 400's message."""
    try:
        r = slips.receive(t, body, decoded=decoded)
    except Invalid as e:
        return "400: " + str(e)
    compiled = r.compiled_under(t.limits)
    return r.parsed, None if compiled is None else [
        (bet, tuple(getattr(shape, f, None) for f in SHAPE_FIELDS), mult, excess)
        for bet, shape, mult, excess in compiled]


VALUE = st.one_of(st.integers(-5, 40), st.sampled_from([0.5, 1.0, True, False, None, "x", "partage", "prison"]))
NUMBERS = st.one_of(st.lists(st.integers(0, 38), max_size=4), VALUE)
TAKEN = st.one_of(                      # bets the rules take (most of a stadium's)
    st.builds(lambda n, s: {"type": "plein", "numbers": [n], "stake": s}, st.integers(0, 36), st.sampled_from([100, 500])),
    st.builds(lambda c, s: {"type": c, "stake": s}, st.sampled_from(["rouge", "noir", "pair", "manque"]),
              st.sampled_from([100, 200])),
    st.builds(lambda c, z: {"type": c, "stake": 100, "zero_choice": z}, st.sampled_from(["rouge", "impair"]),
              st.sampled_from(["partage", "prison", {"move": "noir"}])),
    st.builds(lambda c, u: {"type": c, "unit": u}, st.sampled_from(["voisins", "tiers", "orphelins"]),
              st.sampled_from([100, 200])))
ANY = st.one_of(                        # anything a client may send
    st.fixed_dictionaries({"type": st.sampled_from(["plein", "cheval", "transversale", "carre"]), "numbers": NUMBERS,
                           "stake": st.sampled_from([5, 10, 100, 5000, 10 ** 9, 100.0, True, "100"])}),
    st.fixed_dictionaries({"type": st.sampled_from(["rouge", "noir", "pair", "manque", "douzaine", "vert"]),
                           "stake": st.sampled_from([100, 200, 0])},
                          optional={"zero_choice": st.sampled_from(["partage", "prison", {"move": "noir"},
                                                                    {"move": "vert"}, 3]),
                                    "which": st.sampled_from([1, 2, 3, 4, [1, 2]])}),
    st.fixed_dictionaries({"type": st.sampled_from(["voisins", "tiers", "orphelins", "finale"]),
                           "unit": st.sampled_from([10, 100, 250, -1])},
                          optional={"stake": st.sampled_from([900, 1000]), "numbers": NUMBERS}),
    st.dictionaries(st.sampled_from(["type", "stake", "status", "player", "carried", "color"]), VALUE, max_size=3),
    VALUE)
BET = st.one_of(TAKEN, TAKEN, TAKEN, ANY)
PLAYER = st.one_of(st.just("ana"), st.just("T042"), st.sampled_from(["", " ", "a" * 65, "tab\there", 7, None]))
SLIP = st.fixed_dictionaries({"player": PLAYER, "bets": st.lists(BET, min_size=0, max_size=5)},
                             optional={"terminal": st.just("x")})


@settings(max_examples=300, deadline=None)
@given(st.lists(SLIP, min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_a_slip_read_from_the_memo_is_read_as_in_full(tmp_path_factory, bodies, rnd):
    """Whatever the slips, in whatever order, with the memo or without: the same bets, the same
    shapes, multipliers and excesses, the same 400s. The memo learns from the slips before."""
    t = Table(Journal(tmp_path_factory.mktemp("j") / "j.sqlite"), "T1")
    t.set_open(True)
    slips.MEMO = slips.Memo()
    try:
        for body in bodies + [rnd.choice(bodies) for _ in range(4)]:
            body = orjson.loads(orjson.dumps(body))          # as the HTTP layer decodes it
            want = read(t, copy.deepcopy(body), decoded=False)
            assert read(t, copy.deepcopy(body), decoded=True) == want
            assert read(t, copy.deepcopy(body), decoded=True) == want
    finally:
        slips.MEMO = slips.Memo()
        t.j.close()


def test_a_slip_seen_before_is_read_from_the_memo(t, monkeypatch):
    body = {"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100},
                                      {"type": "rouge", "stake": 500, "zero_choice": "partage"}]}
    slips.MEMO = slips.Memo()
    first = slips.receive(t, copy.deepcopy(body), decoded=True)
    assert len(slips.MEMO.seen) == 2

    def not_again(*a, **k):
        raise AssertionError("read in full again")
    monkeypatch.setattr(slips, "parse_slip_request", not_again)
    monkeypatch.setattr(slips, "_compile", not_again)
    again = slips.receive(t, copy.deepcopy(body), decoded=True)
    assert again.parsed == first.parsed
    assert [c[1:] for c in again.compiled_under(t.limits)] == [c[1:] for c in first.compiled_under(t.limits)]


def test_the_memo_is_of_one_limits_object_only(t):
    """New limits (a raised minimum): a bet kept under the old ones is compiled again, and refused."""
    body = {"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100}]}
    slips.MEMO = slips.Memo()
    assert slips.receive(t, copy.deepcopy(body), decoded=True).compiled_under(t.limits) is not None
    t.limits = Limits().updated({"plein": {"min": 500, "max": 100000}})
    r = slips.receive(t, copy.deepcopy(body), decoded=True)
    assert r.compiled_under(t.limits) is None, "refused by the rules under the new limits"


def test_a_body_not_decoded_from_json_is_never_looked_up(t):
    """A tuple is not a list to the gate, but JSON would write both alike: only decoded bodies."""
    slips.MEMO = slips.Memo()
    slips.receive(t, {"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100}]}, decoded=True)
    odd = {"player": "ana", "bets": [{"type": "plein", "numbers": (17,), "stake": 100}]}
    assert slips.MEMO.read(odd, t.limits) is not None, "the memo alone would take it..."
    assert read(t, odd, decoded=False) == "400: bets[0]: numbers: tuple is not allowed here", "... the gate does not"


def test_two_slips_never_share_a_bets_dict(t):
    body = {"player": "ana", "bets": [{"type": "plein", "numbers": [17], "stake": 100}]}
    slips.MEMO = slips.Memo()
    a = slips.receive(t, copy.deepcopy(body), decoded=True)
    b = slips.receive(t, copy.deepcopy(body), decoded=True)
    bet_a, bet_b = a.parsed[1][0][0], b.parsed[1][0][0]
    assert bet_a is not bet_b and a.compiled_under(t.limits)[0][0] is bet_a
    bet_b["id"] = "B000002"                 # as the placement names it
    assert "id" not in bet_a
    assert all(b"id" not in k for k in slips.MEMO.seen)


def test_the_memo_holds_at_most_its_size(t):
    slips.MEMO = slips.Memo(size=8)
    try:
        for n in range(37):
            slips.receive(t, {"player": "ana", "bets": [{"type": "plein", "numbers": [n], "stake": 100}]}, decoded=True)
            assert len(slips.MEMO.seen) <= 8
    finally:
        slips.MEMO = slips.Memo()
