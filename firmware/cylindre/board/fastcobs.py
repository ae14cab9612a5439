"""COBS encoding in machine code, for the Pico's link (cylindre.link.cobs is the definition).

Every frame the wheel sends is COBS-encoded, and in bytecode that costs the RP2040's core about
0.7 ms for a status frame: a Python operation a run between zero bytes, and two buffers made. Here
the viper emitter compiles the byte loop to Thumb code (~0.2 ms), and the frame is written into
one buffer made at start-up, so no object is made a frame. Same bytes as `cobs.encode(data,
True)`: tests/firmware/test_fastcobs.py checks both on every kind of input, and the chip test decodes
every frame the firmware sends on the emulated RP2040 with the host's own decoder.

Only the Pico imports this (`wiring.make_link`): viper is MicroPython's, and neither CPython nor
the WebAssembly MicroPython the shared tests run on has it.
"""

import micropython

from cylindre.link.frame import MAX_WIRE


@micropython.viper
def _stuff(data, n: int, buf) -> int:
    """COBS of data[0:n] into buf, the delimiter 0x00 after it; returns the bytes written."""
    src = ptr8(data)
    dst = ptr8(buf)
    code = 0            # where the current run's code byte goes
    w = 1               # where the next byte goes
    run = 1             # the code byte of the run so far (1 + its length)
    i = 0
    while i < n:
        x = src[i]
        if x == 0:
            dst[code] = run
            code = w
            w += 1
            run = 1
        else:
            dst[w] = x
            w += 1
            run += 1
            if run == 255:          # a full run of 254: code 255, no zero implied after it
                dst[code] = run
                code = w
                w += 1
                run = 1
        i += 1
    dst[code] = run
    dst[w] = 0
    return w + 1


class Encoder:
    """`encode(data)`: the wire bytes of one frame body, delimited, as a memoryview of the
    encoder's own buffer, valid until its next call (the link writes it out at once)."""

    def __init__(self, size=MAX_WIRE):
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        room = size - 2
        while room + room // 254 + 2 > size:     # the longest body whose encoding fits
            room -= 1
        self._room = room

    def encode(self, data, delimit=True):
        n = len(data)
        if not delimit or n > self._room:
            from cylindre.link.cobs import encode
            return encode(data, delimit)
        return self._view[:_stuff(data, n, self._buf)]
