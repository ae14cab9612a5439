"""COBS (Consistent Overhead Byte Stuffing): frames never contain 0x00, so 0x00 delimits them.

A receiver that joins the line at any point, or sees garbage, resynchronises at the next 0x00.
Overhead is one byte per 254, plus the delimiter. Slices, not byte loops: it runs on the Pico.
"""


def encode(data):
    """COBS-encode `data` (no delimiter added)."""
    out = bytearray()
    parts = bytes(data).split(b"\x00")
    for part in parts:
        while len(part) >= 254:
            out.append(255)
            out.extend(part[:254])
            part = part[254:]
        out.append(len(part) + 1)
        out.extend(part)
    return bytes(out)


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
