"""The floor's tokens and the table's are one kind of secret, checked by one set of helpers
(host_tools/table/api/auth.py): the same shape, the same refusals, only the SHA-256 kept."""

import sqlite3

import pytest
from hypothesis import given, settings, strategies as st

from host_tools.floor.access import Access
from host_tools.floor.store import Store
from host_tools.table.api.auth import LONGEST, PREFIX, TokenError, Tokens, digest, lookup_digest


@pytest.fixture
def both(tmp_path):
    table = Tokens(sqlite3.connect(tmp_path / "j.sqlite", check_same_thread=False))
    floor = Access(Store(str(tmp_path / "floor.sqlite")))
    return table, floor


def test_what_cannot_be_a_token_is_never_looked_up():
    assert lookup_digest(None) is None and lookup_digest("") is None
    assert lookup_digest("Bearer cyl_x") is None                     # not `cyl_...`
    longest = PREFIX + "a" * (LONGEST - len(PREFIX))
    assert lookup_digest(longest) == digest(longest)
    assert lookup_digest(longest + "a") is None                      # one character over


def test_both_sides_refuse_the_same_names(both):
    for side, role in zip(both, ("chef", "pit_boss")):
        for name in ("", "a b", "x" * 65, "é"):
            with pytest.raises(TokenError, match="1 to 64"):
                side.add(name, role)
        with pytest.raises(TokenError, match="role must be one of"):
            side.add("marie", "croupier" if side is both[1] else "pit_boss")


def test_both_sides_refuse_a_name_that_differs_from_another_by_case_alone(both):
    """bob and BOB are one person to the two-person rule (twoperson.person) and to an auditor:
    neither side lets both exist, live or revoked; the same name again after its revocation is fine."""
    for side, role in zip(both, ("chef", "pit_boss")):
        side.add("bob", role)
        for other in ("BOB", "Bob", "boB"):
            with pytest.raises(TokenError, match="a token named bob exists: a name may not differ"):
                side.add(other, role)
        assert side.revoke("bob")
        with pytest.raises(TokenError, match="by case alone"):
            side.add("BOB", role)
        side.add("bob", role)
        assert [t["name"] for t in side.list()] == ["bob"]


@settings(max_examples=25, deadline=None)
@given(presented=st.one_of(st.none(), st.text(max_size=140), st.text(max_size=140).map(lambda s: PREFIX + s)))
def test_a_token_of_one_side_opens_nothing_on_the_other_and_junk_opens_neither(tmp_path_factory, presented):
    tmp = tmp_path_factory.mktemp("t")
    table = Tokens(sqlite3.connect(tmp / "j.sqlite", check_same_thread=False))
    floor = Access(Store(str(tmp / "floor.sqlite")))
    at_table, at_floor = table.add("marie", "chef"), floor.add("marie", "pit_boss")
    assert table.identify(at_table).role == "chef" and floor.identify(at_floor).role == "pit_boss"
    assert table.identify(at_floor) is None and floor.identify(at_table) is None
    assert table.identify(presented) is None and floor.identify(presented) is None
