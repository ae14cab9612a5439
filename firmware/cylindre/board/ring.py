"""A ring buffer of sensor edges, filled by hard pin interrupts, drained by the main loop.

Everything is preallocated: the handler stores a raw `ticks_us()` stamp, a signal code (index
<< 1 | level) and the encoder count at that instant into arrays and moves an index; it never
allocates, so it is safe as a hard IRQ. When full, an edge is counted in `lost` and dropped:
the controller then sees a sensor fault rather than a wrong order.
"""

from array import array


class Ring:
    def __init__(self, size, ticks_us, count=None):
        self.size = size
        self.t = array("i", [0] * size)
        self.code = bytearray(size)
        self.k = array("i", [0] * size)
        self.head = 0
        self.tail = 0
        self.lost = 0
        self._ticks = ticks_us
        self._count = count

    def put(self, code, with_count):
        """One edge (called from the interrupt handler)."""
        h = self.head
        n = h + 1
        if n == self.size:
            n = 0
        if n == self.tail:
            self.lost += 1
            return
        self.t[h] = self._ticks()
        self.code[h] = code
        if with_count and self._count is not None:
            self.k[h] = self._count()
        self.head = n

    def __len__(self):
        d = self.head - self.tail
        return d if d >= 0 else d + self.size
