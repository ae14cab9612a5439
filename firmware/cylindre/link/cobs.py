"""COBS (Consistent Overhead Byte Stuffing): frames never contain 0x00, so 0x00 delimits them.

A receiver that joins the line at any point, or sees garbage, resynchronises at the next 0x00.
Overhead is one byte per 254, plus the delimiter. Slices, not byte loops: it runs on the Pico.
"""


def encode(data, delimit=False):
    """COBS-encode `data` (bytes); with `delimit`, the 0x00 that ends the frame is appended.

    Two passes over the input with `find` and one exactly sized output: the only allocations are
    the output and small memoryviews (this runs for every frame on the Pico)."""
    n = len(data)
    size = n + 1 + (1 if delimit else 0)
    pos = 0
    while True:                         # pass 1: one extra code byte per full 254-byte run
        z = data.find(b"\x00", pos)
        end = n if z < 0 else z
        size += (end - pos) // 254
        if z < 0:
            break
        pos = z + 1
    out = bytearray(size)
    mv = memoryview(data)
    o = 0
    pos = 0
    while True:                         # pass 2: fill
        z = data.find(b"\x00", pos)
        end = n if z < 0 else z
        while end - pos >= 254:
            out[o] = 255
            out[o + 1:o + 255] = mv[pos:pos + 254]
            o += 255
            pos += 254
        k = end - pos
        out[o] = k + 1
        out[o + 1:o + 1 + k] = mv[pos:end]
        o += k + 1
        if z < 0:
            break
        pos = z + 1
    return out if delimit else bytes(out)


def decode(data):
    """Decode one COBS block (delimiter excluded); raise ValueError if it is malformed."""
    data = bytes(data)
    if data.find(b"\x00") >= 0:
        raise ValueError("zero byte inside a COBS frame")
    out = bytearray()
    idx = 0
    n = len(data)
    while idx < n:
        code = data[idx]
        end = idx + code
        if end > n:
            raise ValueError("COBS block runs past the frame")
        out.extend(data[idx + 1:end])
        idx = end
        if code < 255 and idx < n:
            out.append(0)
    return bytes(out)
