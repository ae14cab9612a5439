"""The link's bytes: HMAC-SHA256, COBS, frame layout, CRC, and resynchronisation after garbage."""

from binascii import unhexlify

from cylindre.link import cobs
from cylindre.link import frame as fr
from cylindre.link.mac import Hmac, equal, equal_loop

KEY = b"0123456789abcdef0123456789abcdef"
HN = b"\x01" * 8
DN = b"\x02" * 8


def test_hmac_matches_rfc4231_case_1():
    tag = Hmac(b"\x0b" * 20).digest(b"Hi ", b"There")
    assert tag == unhexlify("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")


def test_hmac_long_key_is_hashed_first_rfc4231_case_6():
    tag = Hmac(b"\xaa" * 131).digest(b"Test Using Larger Than Block-Size Key - Hash Key First")
    assert tag == unhexlify("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")


def test_short_key_refused():
    try:
        Hmac(b"short")
    except ValueError:
        return
    assert False, "a 5-byte key was accepted"


def test_constant_time_compare():
    assert equal(b"abc", b"abc")
    assert not equal(b"abc", b"abd")
    assert not equal(b"abc", b"ab")


def test_the_picos_compare_tells_every_one_bit_difference():
    # equal_loop is what MicroPython runs (no hmac.compare_digest): a MAC with leading zeros,
    # one of all zeros, one of all ones, each bit of each byte flipped
    for tag in (bytes(32), b"\xff" * 32, bytes(5) + bytes(range(27)), bytes(range(200, 232))):
        assert equal_loop(tag, bytes(tag))
        for i in range(32):
            for bit in (1, 0x80):
                other = bytearray(tag)
                other[i] ^= bit
                assert not equal_loop(tag, bytes(other)), (tag, i, bit)


def test_cobs_round_trip_edges():
    for data in (b"", b"\x00", b"\x00\x00", b"a\x00b", b"x" * 253, b"x" * 254, b"x" * 255,
                 b"x" * 254 + b"\x00", bytes(range(256)) * 2):
        enc = cobs.encode(data)
        assert enc.find(b"\x00") < 0
        assert cobs.decode(enc) == data


def test_cobs_wire_bytes_are_the_published_examples():
    """Cheshire and Baker's encoding (the examples of its Wikipedia page, delimiter included):
    the host and the Pico share this module, so a round trip alone would not catch a change of
    the bytes on the wire."""
    h = unhexlify
    for data, wire in ((h("00"), h("010100")), (h("0000"), h("01010100")),
                       (h("001100"), h("0102110100")), (h("11220033"), h("031122023300")),
                       (h("11223344"), h("051122334400")), (h("11000000"), h("021101010100")),
                       (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255)) + h("0100")),
                       (bytes(range(0, 255)), h("01ff") + bytes(range(1, 255)) + h("0100"))):
        assert cobs.encode(data, True) == wire
        assert cobs.decode(wire[:-1]) == data


def test_cobs_rejects_overrun():
    try:
        cobs.decode(b"\x05ab")
    except ValueError:
        return
    assert False


def _frame(seq=7, payload=b'{"ev": "result", "number": 17}'):
    return fr.build(Hmac(KEY), fr.EVENT, seq, 3, payload, DN, HN)


def test_frame_round_trip_and_mac():
    wire = _frame()
    assert wire[-1:] == b"\x00" and wire[:-1].find(b"\x00") < 0
    f = fr.parse(wire[:-1])
    assert (f.ftype, f.seq, f.ack) == (fr.EVENT, 7, 3)
    assert f.payload == b'{"ev": "result", "number": 17}'
    assert f.verify(Hmac(KEY), DN, HN)
    assert not f.verify(Hmac(KEY), HN, DN)              # other direction
    assert not f.verify(Hmac(b"another key of 32 bytes........"), DN, HN)


def _reason(raw):
    try:
        fr.parse(raw)
    except fr.FrameError as e:
        return e.reason
    return None


def test_every_single_bit_flip_is_refused():
    wire = _frame()[:-1]
    bad = bytearray(wire)
    for i in range(len(wire)):
        bit = i % 8         # one bit per byte, every bit position in turn (heap-light on MicroPython)
        bad[i] ^= 1 << bit
        if bad[i] != 0:     # a zero would be a delimiter: the splitter cuts there instead
            assert _reason(bytes(bad)) is not None, (i, bit)
        bad[i] ^= 1 << bit


def test_truncated_and_short_frames_refused():
    wire = _frame()[:-1]
    assert _reason(wire[:10]) is not None
    assert _reason(wire[:-1]) is not None
    assert _reason(b"") is not None


def test_splitter_resynchronises_after_garbage():
    s = fr.Splitter()
    one = _frame(1)
    two = _frame(2)
    chunks = s.feed(b"\xff\xfe garbage" + one[:5])
    assert chunks == []
    got = s.feed(one[5:] + b"noise\x00" + two)
    frames = []
    for c in chunks + got:
        try:
            frames.append(fr.parse(c).seq)
        except fr.FrameError:
            pass
    assert frames == [2], frames   # the first frame was glued to garbage: lost, never misread


def test_splitter_drops_over_long_chunk():
    s = fr.Splitter(limit=100)
    assert s.feed(b"x" * 500) == []
    assert s.overflow == 1
    out = s.feed(b"more\x00" + _frame(9))
    assert len(out) == 1 and fr.parse(out[0]).seq == 9


def test_worked_example_of_the_protocol_doc():
    """docs/integrators/link-protocol.md quotes this frame in hex: it must stay what the code builds."""
    key = bytes(range(32))
    wire = fr.build(Hmac(key), fr.EVENT, 1, 0, b'{"ev":"result","number":17}',
                    b"\xd0" * 8, b"\xa0" * 8)
    from binascii import hexlify
    h = hexlify(wire).decode()
    assert h == ("0302450101020101010101411b7b226576223a22726573756c74222c226e756d626572223a31377d"
                 "73830a632376530a3b9869e0236d2d7034516cabdd022f7d483dfbc2af22edbacfa561ce00"), h


def test_key_file_is_read_the_same_on_both_sides():
    from cylindre.link.mac import parse_key
    raw = bytes(range(32))
    text = b"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
    assert parse_key(text) == raw and parse_key(raw) == raw and parse_key(text.decode()) == raw
    for bad in (b"abc", b"zz" * 32, bytes(31)):
        try:
            parse_key(bad)
        except ValueError:
            continue
        assert False, bad


def test_device_link_takes_the_key_file_as_read():
    from cylindre.link.device import DeviceLink
    text = b"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
    dev = DeviceLink(lambda d: None, lambda: 0, text, "T1", urandom=lambda k: bytes(k))
    assert dev._hmac.digest(b"x") == Hmac(bytes(range(32))).digest(b"x")
