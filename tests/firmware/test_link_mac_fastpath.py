"""The host's HMAC fast path (copied keyed states, `hmac.compare_digest`) gives the results of
the plain path the Pico runs, and of CPython's own `hmac`, for every key length and message."""

import hashlib
import hmac

from hypothesis import given, strategies as st

from cylindre.link.mac import Hmac, equal, equal_loop


def plain(key):
    """An Hmac on the MicroPython path (no state copy)."""
    h = Hmac(key)
    h._inner = None
    return h


@given(st.binary(min_size=16, max_size=100), st.lists(st.binary(max_size=300), max_size=5))
def test_fast_and_plain_digests_equal_cpythons_hmac(key, parts):
    want = hmac.new(key, b"".join(parts), hashlib.sha256).digest()
    fast = Hmac(key)
    assert fast._inner is not None          # CPython takes the fast path
    assert fast.digest(*parts) == want == plain(key).digest(*parts)
    assert fast.digest(*parts) == want      # the kept states are not consumed by a digest


@given(st.binary(min_size=32, max_size=32), st.binary(min_size=32, max_size=32))
def test_both_compares_agree(a, b):
    assert equal(a, b) == equal_loop(a, b) == (a == b)
    assert equal(a, a) and equal_loop(a, a)
    assert not equal(a, a[:31])
