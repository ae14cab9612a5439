"""The daemon's heap and Python's cyclic collector: a full collection scans what is new.

CPython's collector runs a full collection each time the objects that survived the last one grew
by a quarter, and it scans every live object. A table taking bets grows its heap all through the
betting window (the layout, the bets' rows and answers), so the full collections come again and
again, each longer than the last: at a stadium's pace they stopped the daemon for 90 ms at 2,700
single bets a second, and that pause was the placements' p99.

While the daemon runs (`installed`), what survives a full collection is frozen (`gc.freeze`): the
next one scans only what came after it. Nothing is kept alive by this: an object whose last
reference goes is freed as before. What a frozen object cannot be is collected as part of a
reference cycle, so the whole heap is scanned again at the wheel's call (`full`: the bets are
locked, none is taken for seconds; game/table.py), and by the next automatic full collection
when no call came for `FULL_EVERY_S` (a table left closed).
"""

from __future__ import annotations

import gc
import time

FULL_EVERY_S = 600.0    # the longest the frozen part goes unscanned (a table with no coup)

_installed: "Heap | None" = None


class Heap:
    """The collector's policy for one process (`install`); `full()` at a quiet moment."""

    def __init__(self, clock=time.monotonic, full_every_s: float = FULL_EVERY_S):
        self.clock = clock
        self.full_every_s = full_every_s
        self.last_full = clock()
        self.frozen = 0             # full collections followed by a freeze (the tests read these two)
        self.thawed = 0             # full collections that scanned the whole heap

    def install(self) -> "Heap":
        global _installed
        if _installed is not None:
            raise RuntimeError("the heap's policy is already installed in this process")
        gc.callbacks.append(self._on_gc)
        _installed = self
        return self

    def uninstall(self) -> None:
        """Back to CPython's own policy, the frozen objects scanned again."""
        global _installed
        if _installed is self:
            gc.callbacks.remove(self._on_gc)
            _installed = None
            gc.unfreeze()

    def _on_gc(self, phase: str, info: dict) -> None:
        """gc's callback, around every collection (in the thread that set it off). A full one
        scans the frozen part too when the last scan of everything is too old; after it, what
        survived is frozen."""
        if info.get("generation") != 2:
            return
        if phase == "start":
            if self.clock() - self.last_full >= self.full_every_s:
                gc.unfreeze()
                self.last_full = self.clock()
                self.thawed += 1
        elif phase == "stop":
            gc.freeze()
            self.frozen += 1

    def full(self) -> None:
        """A collection of the whole heap now (frozen part included), then its survivors frozen."""
        gc.unfreeze()
        gc.collect()                    # its "stop" freezes what survived
        self.last_full = self.clock()
        self.thawed += 1


def full_collect() -> None:
    """A full collection at a quiet moment: the whole heap, with or without the daemon's policy."""
    if _installed is not None:
        _installed.full()
    else:
        gc.collect()
