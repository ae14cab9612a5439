"""The Pico's COBS in machine code (board/fastcobs.py) writes the bytes `cobs.encode` writes.

Viper runs only on the Pico's MicroPython, so here its function runs as plain Python (a pointer
`ptr8(x)` indexes bytes as the buffer does): the loop's logic is checked for every kind of input,
and tests/pico/test_rp2_chip.py checks the compiled code on the emulated RP2040 against the same
decoder."""

import types
from pathlib import Path

from hypothesis import given, strategies as st

from cylindre.link import cobs
from cylindre.link.frame import MAX_BODY, MAX_WIRE

SOURCE = Path(cobs.__file__).resolve().parent.parent / "board" / "fastcobs.py"


def load():
    """fastcobs as CPython can run it: `micropython.viper` a plain decorator, `ptr8` the buffer."""
    mod = types.ModuleType("fastcobs_as_python")
    mod.__dict__["ptr8"] = lambda buf: buf
    fake = types.ModuleType("micropython")
    fake.viper = lambda f: f
    import sys
    saved = sys.modules.get("micropython")
    sys.modules["micropython"] = fake
    try:
        exec(compile(SOURCE.read_text(), str(SOURCE), "exec"), mod.__dict__)
    finally:
        if saved is None:
            del sys.modules["micropython"]
        else:
            sys.modules["micropython"] = saved
    return mod


FAST = load()
ENC = FAST.Encoder()

# runs around the 254-byte block, zeros at both ends and in a row, the longest frame
EDGES = [b"", b"\x00", b"\x00\x00", b"\x01", bytes(range(1, 254)), bytes(range(1, 255)),
         bytes(range(1, 256)), b"\x00" + bytes(range(1, 255)) + b"\x00", b"\x11" * 508,
         b"\x11" * 509, b"\x22" * 253 + b"\x00" + b"\x33" * 254, bytes(MAX_BODY), b"\x7f" * MAX_BODY]


def test_the_edges_give_the_same_bytes():
    for data in EDGES:
        assert bytes(ENC.encode(data)) == cobs.encode(data, True), data[:8]
        assert cobs.decode(bytes(ENC.encode(data))[:-1]) == data


@given(st.lists(st.sampled_from([b"\x00", b"\x01", b"\xff", b"\x55" * 60, b"\x66" * 254, b"\x77" * 253]),
                max_size=12).map(b"".join))
def test_runs_and_zeros_in_any_order(data):
    assert bytes(ENC.encode(data)) == cobs.encode(data, True)


@given(st.binary(max_size=MAX_BODY))
def test_any_body_of_a_frame(data):
    assert bytes(ENC.encode(data)) == cobs.encode(data, True)


def test_the_buffer_is_the_encoders_own_and_too_long_a_body_falls_back():
    a = ENC.encode(b"abc")
    assert bytes(a) == b"\x04abc\x00"
    ENC.encode(b"xyz")
    assert bytes(a) == b"\x04xyz\x00"        # valid until the next call: the link writes it at once
    too_long = b"\x01" * (MAX_BODY + 1)
    assert bytes(ENC.encode(too_long)) == cobs.encode(too_long, True)
    assert bytes(ENC.encode(b"a\x00b", False)) == cobs.encode(b"a\x00b") == b"\x02a\x02b"
    small = FAST.Encoder(40)
    for n in range(0, 60):
        data = b"\x01" * n
        assert bytes(small.encode(data)) == cobs.encode(data, True)
    assert ENC._room == MAX_BODY and len(ENC._buf) == MAX_WIRE
