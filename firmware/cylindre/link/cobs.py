"""COBS (Consistent Overhead Byte Stuffing): frames never contain 0x00, so 0x00 delimits them.

A receiver that joins the line at any point, or sees garbage, resynchronises at the next 0x00.
Overhead is one byte per 254, plus the delimiter. It runs for every frame on the Pico, where a
Python operation costs microseconds: the data is copied once (C code) into a buffer made to the
largest size, then each zero byte found (`find`, C code) is overwritten by the distance to the
next, in place; a run of 254 bytes without a zero inserts a code byte and moves the rest one
place on. The Python loop turns once a zero byte (a status frame has about seven, in its header).
"""


def encode(data, delimit=False):
    """COBS-encode `data` (bytes-like); with `delimit`, the 0x00 that ends the frame is appended."""
    if not isinstance(data, (bytes, bytearray)):
        data = bytes(data)
    n = len(data)
    out = bytearray(n + n // 254 + 2)   # a code byte per 254 data bytes, the first, the delimiter
    src = memoryview(data)
    out[1:n + 1] = data
    shift = 1               # data[i] is at out[i + shift]
    code = 0                # where the current run's code byte goes
    i = 0                   # where the current run starts in data
    find = data.find
    while True:
        z = find(b"\x00", i)
        end = n if z < 0 else z
        while end - i >= 254:           # a full block: code 255, no zero implied after it
            out[code] = 255
            i += 254
            code = i + shift            # a code byte inserted here: the rest moves on
            shift += 1
            out[i + shift:n + shift] = src[i:]
        out[code] = end - i + 1
        if z < 0:
            break
        code = z + shift                # the zero's place takes the next run's code
        i = z + 1
    # out[n + shift] was never written: with `delimit` it is the 0x00 that ends the frame
    return bytes(memoryview(out)[:n + shift + 1 if delimit else n + shift])


def decode(data):
    """Decode one COBS block (delimiter excluded); raise ValueError if it is malformed.

    Without a full block (code 255) the decoded bytes are the block without its first byte,
    each later code byte standing where its zero goes: one copy, one store a zero."""
    if not isinstance(data, (bytes, bytearray)):
        data = bytes(data)
    if data.find(b"\x00") >= 0:
        raise ValueError("zero byte inside a COBS frame")
    n = len(data)
    if not n:
        return b""
    idx = data[0]
    if idx == 255:
        return _decode_blocks(data)
    out = bytearray(memoryview(data)[1:])
    while idx < n:
        code = data[idx]
        if code == 255:
            return _decode_blocks(data)
        out[idx - 1] = 0
        idx += code
    if idx > n:
        raise ValueError("COBS block runs past the frame")
    return bytes(out)


def _decode_blocks(data):
    """The general decode (a block with code 255 implies no zero after it)."""
    n = len(data)
    out = bytearray(n)      # the decoded block is shorter; its zero bytes are the buffer's own
    src = memoryview(data)
    idx = 0
    w = 0
    while idx < n:
        code = data[idx]
        end = idx + code
        if end > n:
            raise ValueError("COBS block runs past the frame")
        k = code - 1
        if k:
            out[w:w + k] = src[idx + 1:end]
            w += k
        idx = end
        if code < 255 and idx < n:
            w += 1          # the zero the code byte stands for
    return bytes(memoryview(out)[:w])
