"""The Guard's reading of a body in C (orjson, then the depth of its brackets from its text)
takes and refuses exactly what the reading in Python takes and refuses, in the same words."""

import json

from hypothesis import given, settings, strategies as st

from host_tools.table.api.guard import MAX_DEPTH, _parse_json, _parse_json_exact

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 17, 10 ** 17),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                    st.sampled_from(['[[[', '{"', '\\', '"', '\\"[', '12345678901234567', 'é😀\u2028']))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                      max_leaves=30)


def _same(body: bytes):
    fast, exact = _parse_json(body), _parse_json_exact(body)
    assert fast[0] == exact[0], body
    assert json.dumps(fast[1]) == json.dumps(exact[1]), body       # (json.dumps: NaN-safe, key order kept)


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from([None, ",", ", ", ":"]))
def test_any_json_value_is_read_alike(value, seps):
    text = json.dumps(value, ensure_ascii=False) if seps is None else json.dumps(value, separators=(seps, ":"))
    _same(text.encode())


@settings(max_examples=400, deadline=None)
@given(values, st.integers(0, 200), st.binary(max_size=3))
def test_any_broken_text_is_refused_alike(value, at, junk):
    text = json.dumps(value).encode()
    at = min(at, len(text))
    _same(text[:at] + junk + text[at:])


@given(st.integers(0, 12), st.sampled_from("[{"))
def test_depth_at_the_limit_and_beyond(depth, bracket):
    close = {"[": "]", "{": "}"}[bracket]
    inner = '{"k":1}' if bracket == "[" else "[1]"
    body = ((bracket + ('"a":' if bracket == "{" else "")) * depth + inner + close * depth).encode()
    _same(body)
    refused = _parse_json(body)[0]
    assert (refused is not None) == (depth + 1 > MAX_DEPTH), body


def test_what_is_refused_is_said_in_the_readers_words():
    assert _parse_json(b'{"n":1234567890123456}')[0] == "the body is not acceptable JSON: a number of more than 15 digits"
    assert _parse_json(b"[" * 5000 + b"]" * 5000)[0] == "JSON nested deeper than 8 levels"
    assert _parse_json(b"NaN")[0] == "the body is not acceptable JSON: NaN is not JSON"
    assert _parse_json(b'{"s":"[[[[[[[[[[[[[[[[[[[["}') == (None, {"s": "[[[[[[[[[[[[[[[[[[[["})
