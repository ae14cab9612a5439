"""The gate's quick judgement of a bet's values (by exact type) and the fingerprint of a request
(orjson) agree with their plain definitions on every input."""

import hashlib
import json

from hypothesis import example, given, settings, strategies as st

from host_tools.table.game.gate import Invalid, MAX_STAKE, _check_value, _judge, request_digest

leaves = st.one_of(st.none(), st.booleans(), st.integers(-2 * MAX_STAKE, 2 * MAX_STAKE), st.floats(allow_nan=False),
                   st.text(max_size=70), st.just(MAX_STAKE), st.just(-MAX_STAKE), st.just(MAX_STAKE + 1), st.just(-MAX_STAKE - 1),
                   st.just("x" * 64), st.just("x" * 65))
values = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=40),
                                                      st.dictionaries(st.text(max_size=5), inner, max_size=6)),
                      max_leaves=60)


def _verdict(check, v):
    try:
        check("k", v, 0)
    except Invalid as e:
        return str(e)
    return None


@settings(max_examples=600, deadline=None)
@given(values)
def test_the_quick_judgement_is_the_plain_one(v):
    assert _verdict(_check_value, v) == _verdict(_judge, v)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10 ** 15, 10 ** 15), st.text(max_size=10)),
                    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner,
                                                                                           max_size=4)), max_leaves=20))
@example({"player": "a\x7f", "type": "rouge"})        # DEL: ASCII that Python's json escapes
@example({"player": "é", "stake": 100})
def test_a_request_is_fingerprinted_as_python_json_always_did(body):
    plain = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert request_digest(body) == plain
