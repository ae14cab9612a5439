"""A ring buffer of sensor edges, filled by hard pin interrupts, drained by the main loop.

Everything is preallocated: the handler stores a raw `ticks_us()` stamp, a signal code (index
<< 1 | level) and the encoder count at that instant into arrays and moves an index; it never
allocates, so it is safe as a hard IRQ. When full, an edge is counted in `lost` and dropped:
the controller then sees a sensor fault rather than a wrong order.

The rotor's speed samples, taken by a timer interrupt, go into the same ring (code `SAMPLE`),
so the loop gives them to the controller in time order with the edges; an edge sets `wake`
(the main loop waits for it), a sample does not: samples wait for the loop's next turn.
"""

from array import array

SAMPLE = 255            # the code of a speed sample; an edge's is (signal << 1) | level, under
                        # 255 for a board's few signals


class Ring:
    def __init__(self, size, ticks_us, count=None):
        self.size = size
        self.t = array("i", [0] * size)
        self.code = bytearray(size)
        self.k = array("i", [0] * size)
        self.head = 0
        self.tail = 0
        self.lost = 0
        self.wake = 0           # an edge came since the main loop last looked (EdgeWake)
        self._ticks = ticks_us
        self._count = count

    def put(self, code, with_count):
        """One edge (called from the interrupt handler); the main loop wakes for it."""
        self.wake = 1
        self.stamp(code, with_count)

    def stamp(self, code, with_count):
        """One entry the main loop takes at its next turn (the timer's speed samples)."""
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
