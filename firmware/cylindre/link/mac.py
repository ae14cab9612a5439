"""HMAC-SHA256 (RFC 2104) and a constant-time compare, in the few lines MicroPython lacks.

micropython-lib's `hmac` is not frozen into the Pico build and has no `compare_digest`; this
module gives the same digests as CPython's `hmac.new(key, msg, 'sha256')`.

On CPython (the host) two fast paths, the same results: the hash states after the padded keys
are computed once and copied per message (`sha256().copy()`, which MicroPython lacks), and the
compare is `hmac.compare_digest` (C, constant time). The Pico keeps the plain path.

A session's frames all start their MAC's input with the same 20 bytes (the domain and the two
nonces, link/frame.py): `Hmac.keyed(prefix)` joins the padded key and that prefix once, so a
frame's MAC is two hash objects and an update each. The hash's state itself cannot be kept on
the Pico: the rp2 port's `hashlib.sha256` has no `copy` (v1.28.0: `update` and `digest` only),
so the padded key's block is hashed again for every frame (five SHA-256 blocks for a STATUS).
"""

import hashlib
from binascii import unhexlify

try:        # CPython; by name, as the Pico's stubs (rightly) know no hmac module
    _compare_digest = __import__("hmac").compare_digest
except ImportError:                                         # MicroPython: no hmac module
    _compare_digest = None

BLOCK = 64
SIZE = 32
KEY_BYTES = 32


def parse_key(data):
    """A wheel key from its file's content: 64 hex characters (whitespace around ignored), or
    the 32 raw bytes. Raises ValueError otherwise. The Pico and the host read the same file."""
    if isinstance(data, str):
        data = data.encode()
    text = bytes(data).strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return unhexlify(text)
        except ValueError:
            pass
    if len(data) == KEY_BYTES:
        return bytes(data)
    raise ValueError("a wheel key is %d hex characters (or %d raw bytes)" % (2 * KEY_BYTES, KEY_BYTES))


class Hmac:
    """A keyed HMAC-SHA256: the padded keys are computed once, per-message cost is two hashes."""

    def __init__(self, key):
        if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
            raise ValueError("link key must be at least 16 bytes")
        if len(key) > BLOCK:
            key = hashlib.sha256(key).digest()
        key = bytes(key) + bytes(BLOCK - len(key))
        self._ipad = bytes([b ^ 0x36 for b in key])
        self._opad = bytes([b ^ 0x5C for b in key])
        # CPython: keep the keyed states, copy them per message (MicroPython's sha256 has no copy)
        self._inner = getattr(hashlib.sha256(self._ipad), "copy", None)
        self._outer = getattr(hashlib.sha256(self._opad), "copy", None)

    def digest(self, *parts):
        """MAC of the concatenation of `parts` (bytes-like), without joining them first."""
        if self._inner is not None and self._outer is not None:
            inner = self._inner()
            for p in parts:
                inner.update(p)
            outer = self._outer()
            outer.update(inner.digest())
            return outer.digest()
        inner = hashlib.sha256(self._ipad)
        for p in parts:
            inner.update(p)
        outer = hashlib.sha256(self._opad)
        outer.update(inner.digest())
        return outer.digest()

    def keyed(self, prefix):
        """The MAC of messages that all start with `prefix` (a session's domain and nonces)."""
        return Keyed(self, prefix)


class Keyed:
    """HMAC-SHA256 of messages that all start with `prefix`: `digest(data)` is
    `Hmac.digest(prefix, data)`, the padded key and the prefix joined once."""

    __slots__ = ("_ip", "_op", "_inner", "_outer")

    def __init__(self, hmac, prefix):
        self._ip = hmac._ipad + bytes(prefix)
        self._op = hmac._opad
        # CPython: the states after the padded keys (and the prefix), copied per message
        self._inner = getattr(hashlib.sha256(self._ip), "copy", None)
        self._outer = getattr(hashlib.sha256(self._op), "copy", None)

    def digest(self, data):
        if self._inner is not None and self._outer is not None:
            inner = self._inner()
            inner.update(data)
            outer = self._outer()
            outer.update(inner.digest())
            return outer.digest()
        inner = hashlib.sha256(self._ip)
        inner.update(data)
        outer = hashlib.sha256(self._op)
        outer.update(inner.digest())
        return outer.digest()


def equal(a, b):
    """Compare two MACs in time independent of where they differ (no early exit)."""
    if len(a) != len(b):
        return False
    if _compare_digest is not None:
        return _compare_digest(a, b)
    return equal_loop(a, b)


def equal_loop(a, b):
    """The compare MicroPython runs (a and b of equal length): the two read as integers and
    xored, in C over every byte, no early exit; a leading 1 keeps both the same length
    whatever their leading zeros. A loop over the bytes in Python cost the Pico's core ~0.45 ms
    for a MAC."""
    one = b"\x01"
    return int.from_bytes(one + a, "big") ^ int.from_bytes(one + b, "big") == 0
