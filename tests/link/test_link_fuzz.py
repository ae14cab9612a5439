"""Fuzzing the frame decoder and both link ends with hypothesis: nothing but clean refusals."""

from hypothesis import given, settings, strategies as st

from cylindre.link import cobs, frame as fr
from cylindre.link.device import DeviceLink
from cylindre.link.host import HostLink
from cylindre.link.mac import Hmac

KEY = bytes(range(32))
H = Hmac(KEY)
SN, RN = b"\x11" * 8, b"\x22" * 8


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=2000))
def test_parse_refuses_random_bytes_cleanly(data):
    try:
        f = fr.parse(data)
    except fr.FrameError:
        return
    assert not f.verify(H, SN, RN)      # a random chunk never carries a valid MAC


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=1200))
def test_cobs_round_trip(data):
    enc = cobs.encode(data)
    assert b"\x00" not in enc
    assert cobs.decode(enc) == data


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=60), st.binary(max_size=300), st.integers(0, 2**32 - 1)), max_size=8),
       st.lists(st.integers(1, 200), max_size=20))
def test_frames_survive_garbage_between_them(items, cuts):
    """Garbage then a delimiter before each frame: every genuine frame comes out, in order,
    whatever the chunking of the stream."""
    stream = b""
    for garbage, payload, seq in items:
        stream += garbage + b"\x00" + fr.build(H, fr.EVENT, seq, 0, payload, SN, RN)
    s = fr.Splitter()
    got = []
    pos = 0
    for c in cuts + [len(stream)]:
        for raw in s.feed(stream[pos:pos + c]):
            try:
                f = fr.parse(raw)
            except fr.FrameError:
                continue
            if f.verify(H, SN, RN):
                got.append((f.seq, f.payload))
        pos += c
    for raw in s.feed(stream[pos:]):
        try:
            f = fr.parse(raw)
        except fr.FrameError:
            continue
        if f.verify(H, SN, RN):
            got.append((f.seq, f.payload))
    assert got == [(seq, payload) for _g, payload, seq in items]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000))
def test_both_ends_take_any_bytes(data):
    sent = []
    host = HostLink(sent.append, lambda: 0, KEY)
    recs = host.feed(data)
    assert all(r["kind"] in ("reject", "stale") for r in recs)
    dev = DeviceLink(sent.append, lambda: 0, KEY, "T1")
    dev.feed(data)
    assert not dev.in_session


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 7))
def test_flipping_any_bit_of_a_valid_frame_is_caught(pos, bit):
    wire = bytearray(fr.build(H, fr.EVENT, 5, 0, b'{"ev": "result", "number": 17, "spin": 3}', SN, RN)[:-1])
    pos %= len(wire)
    wire[pos] ^= 1 << bit
    chunks = fr.Splitter().feed(bytes(wire) + b"\x00")
    for raw in chunks:
        try:
            f = fr.parse(raw)
        except fr.FrameError:
            continue
        assert not f.verify(H, SN, RN)
