"""Frames of the link: byte layout, CRC-32, MAC, and the stream splitter that resynchronises.

On the wire a frame is `COBS(body) 0x00` with
`body = header(12) | payload | mac(32) | crc32(4)`, header = `>BBIIH`:
version, type, seq, ack, payload length. The CRC-32 (binascii, C code on both sides) covers
header+payload+mac and rejects line noise cheaply; the MAC is HMAC-SHA256 over
`b"CYL1" | sender nonce(8) | receiver nonce(8) | header | payload`, binding every frame to one
session so a frame recorded earlier cannot be replayed later. See docs/integrators/link-protocol.md.
"""

import struct
from binascii import crc32

from cylindre.link import cobs
from cylindre.link.mac import SIZE as MAC_SIZE, equal

VERSION = 2             # 2: STATUS and ACK payloads in binary (link/status.py, ACK_CLOCK)
HEADER = ">BBIIH"
HEADER_SIZE = 12
CRC_SIZE = 4
MAX_PAYLOAD = 1536
MAX_BODY = HEADER_SIZE + MAX_PAYLOAD + MAC_SIZE + CRC_SIZE
# COBS adds one byte per 254, plus the first code byte
MAX_WIRE = MAX_BODY + MAX_BODY // 254 + 2
DOMAIN = b"CYL1"
ACK_CLOCK = ">q"        # an ACK's payload: the host's clock in ms (or empty)
ACK_CLOCK_SIZE = 8
NO_NONCE = bytes(8)

# frame types (one ASCII letter, readable in a hex dump)
HELLO = 0x48    # 'H' host -> wheel: open a session (payload: host nonce)
WELCOME = 0x57  # 'W' wheel -> host: session accepted (payload: wheel nonce, identity, first seq)
EVENT = 0x45    # 'E' wheel -> host: one controller event, reliable (seq = event number)
ACK = 0x41      # 'A' host -> wheel: every event up to `ack` is durable on the host
STATUS = 0x53   # 'S' wheel -> host: periodic status, unreliable (seq strictly increasing)
COMMAND = 0x43  # 'C' host -> wheel: a command (seq = command number of the session)
REPLY = 0x52    # 'R' wheel -> host: the reply to command `seq`
TYPES = (HELLO, WELCOME, EVENT, ACK, STATUS, COMMAND, REPLY)


class FrameError(ValueError):
    """A frame that must be refused; `reason` is a short code journaled by the host."""

    def __init__(self, reason, detail=""):
        super().__init__(reason + (": " + detail if detail else ""))
        self.reason = reason


def mac_input_prefix(sender_nonce, receiver_nonce):
    return DOMAIN + sender_nonce + receiver_nonce


def build(hmac, ftype, seq, ack, payload, sender_nonce, receiver_nonce, encode=None):
    """Return the wire bytes (COBS-encoded, with the 0x00 delimiter) of one frame. `encode`:
    another implementation of `cobs.encode` (the Pico's machine-code one, board/fastcobs.py)."""
    return build_keyed(hmac.keyed(mac_input_prefix(sender_nonce, receiver_nonce)), ftype, seq, ack,
                       payload, encode)


def build_keyed(mac_of, ftype, seq, ack, payload, encode=None):
    """`build` with the session's MAC already keyed to its prefix (`Hmac.keyed`): the wheel's
    link keys it once a session, for every frame it sends."""
    if len(payload) > MAX_PAYLOAD:
        raise FrameError("too_long", "payload of %d bytes" % len(payload))
    # one buffer, the parts written in place: each join or concatenation was a copy and an
    # allocation, for every frame the Pico sends
    n = len(payload)
    end = HEADER_SIZE + n
    body = bytearray(end + MAC_SIZE + CRC_SIZE)
    view = memoryview(body)
    struct.pack_into(HEADER, body, 0, VERSION, ftype, seq, ack, n)
    body[HEADER_SIZE:end] = payload
    signed = view[:end]                 # header and payload: one slice for the MAC and the CRC
    mac = mac_of.digest(signed)
    body[end:end + MAC_SIZE] = mac
    struct.pack_into(">I", body, end + MAC_SIZE, crc32(mac, crc32(signed)) & 0xFFFFFFFF)
    return (encode or cobs.encode)(body, True)


class Frame:
    """A frame that passed the CRC and layout checks; its MAC is checked by `verify`."""

    __slots__ = ("ftype", "seq", "ack", "payload", "tag", "signed", "raw")

    def __init__(self, ftype, seq, ack, payload, tag, signed, raw):
        self.ftype = ftype
        self.seq = seq
        self.ack = ack
        self.payload = payload
        self.tag = tag
        self.signed = signed
        self.raw = raw

    def verify(self, hmac, sender_nonce, receiver_nonce):
        """True when the MAC is right for this session's nonces (constant-time compare)."""
        return equal(hmac.digest(DOMAIN, sender_nonce, receiver_nonce, self.signed), self.tag)

    def verify_keyed(self, mac_of):
        """`verify` with the session's MAC already keyed to its prefix (`Hmac.keyed`)."""
        return equal(mac_of.digest(self.signed), self.tag)


def parse(raw):
    """Decode one delimited chunk (without its 0x00) into a Frame, or raise FrameError."""
    try:
        body = cobs.decode(raw)
    except ValueError as e:
        raise FrameError("cobs", str(e))
    if len(body) < HEADER_SIZE + MAC_SIZE + CRC_SIZE:
        raise FrameError("short", "%d bytes" % len(body))
    if len(body) > MAX_BODY:
        raise FrameError("too_long", "%d bytes" % len(body))
    (want,) = struct.unpack(">I", body[-CRC_SIZE:])
    if crc32(body[:-CRC_SIZE]) & 0xFFFFFFFF != want:
        raise FrameError("crc")
    version, ftype, seq, ack, length = struct.unpack(HEADER, body[:HEADER_SIZE])
    if version != VERSION:
        raise FrameError("version", str(version))
    if ftype not in TYPES:
        raise FrameError("type", str(ftype))
    if HEADER_SIZE + length + MAC_SIZE + CRC_SIZE != len(body):
        raise FrameError("length", "header says %d, frame holds %d" % (
            length, len(body) - HEADER_SIZE - MAC_SIZE - CRC_SIZE))
    end = HEADER_SIZE + length
    return Frame(ftype, seq, ack, body[HEADER_SIZE:end], body[end:end + MAC_SIZE], body[:end], raw)


class Splitter:
    """Cuts a byte stream at 0x00 delimiters, whatever came before.

    `feed(data)` returns the chunks completed by `data`. A chunk longer than a frame can be is
    cut short and reported as garbage (`overflow` counts them); the splitter then waits for the
    next delimiter, which is where the next genuine frame starts.
    """

    def __init__(self, limit=MAX_WIRE):
        self._buf = bytearray()
        self._limit = limit
        self._skipping = False
        self.overflow = 0

    def feed(self, data):
        if not isinstance(data, bytes):
            data = bytes(data)
        out = []
        start = 0
        n = len(data)
        while start < n:
            end = data.find(b"\x00", start)
            if end < 0:
                self._take(data[start:])
                break
            self._take(data[start:end])
            if self._skipping:
                self._skipping = False
            elif self._buf:
                out.append(bytes(self._buf))
            self._buf = bytearray()
            start = end + 1
        return out

    def _take(self, piece):
        if self._skipping:
            return
        self._buf.extend(piece)
        if len(self._buf) > self._limit:
            self._buf = bytearray()
            self._skipping = True
            self.overflow += 1
