"""Software model of the 4x quadrature counter (compteur du codeur) the PIO runs on the Pico.

Clockwise rotation runs (A,B) = 00 -> 10 -> 11 -> 01 -> 00 (docs/integrators/feed-format.md), +1 per edge;
counter-clockwise runs it backwards, -1 per edge. A jump where both bits change at once is a lost
edge: it counts 0 and is tallied in `errors`. The PIO program is tested against this table.
"""

# Index: (previous state << 2) | new state, state = (A << 1) | B.
# cw order of states: 0 (00) -> 2 (10) -> 3 (11) -> 1 (01) -> 0.
DELTA = (
    0, -1, 1, 0,    # from 00: to 00, 01 (ccw), 10 (cw), 11 (invalid)
    1, 0, 0, -1,    # from 01: to 00 (cw), 01, 10 (invalid), 11 (ccw)
    -1, 0, 0, 1,    # from 10: to 00 (ccw), 01 (invalid), 10, 11 (cw)
    0, 1, -1, 0,    # from 11: to 00 (invalid), 01 (cw), 10 (ccw), 11
)
INVALID = (3, 6, 9, 12)


class Quadrature:
    """Counts A/B edges exactly as the PIO counter does; `count` is signed and never wraps here."""

    def __init__(self, count=0):
        self.count = count
        self.a = 0
        self.b = 0
        self.errors = 0

    def edge(self, name, level):
        """Apply one change of `A` or `B`; return the new count."""
        prev = (self.a << 1) | self.b
        if name == "A":
            self.a = 1 if level else 0
        elif name == "B":
            self.b = 1 if level else 0
        else:
            raise ValueError("not an encoder signal: %r" % (name,))
        i = (prev << 2) | (self.a << 1) | self.b
        if i in INVALID:
            self.errors += 1
        self.count += DELTA[i]
        return self.count

    def __call__(self):
        return self.count


def wrap32(n):
    """A 32-bit two's-complement register value as a signed int (what `array('i')` holds)."""
    n &= 0xFFFFFFFF
    return n - 0x100000000 if n & 0x80000000 else n
