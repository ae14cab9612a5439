"""The daemon's heap and Python's cyclic collector: each collection scans what is new.

CPython's collector scans the objects that survived a young collection again in the middle
generation's collections, and again in every full collection, which scans every live object.
A table taking bets grows its heap all through the betting window (the layout, the bets' rows
and answers), so these scans grow with it: at a stadium's pace they took about 15 % of the
daemon's CPU and stopped it for 4–30 ms at a time (docs/internals/performance.md).

While the daemon runs (`installed`), what survives any collection is frozen (`gc.freeze`): the
next one scans only what came after it, so an object is scanned about once, by the young
collection that finds it alive. Nothing is kept alive by this: an object whose last reference
goes is freed as before. What a frozen object cannot be is collected as part of a reference
cycle, so the whole heap is scanned again at the wheel's call (`full`: the bets are locked, none
is taken for seconds; game/table.py), and every `FULL_EVERY_S` when no call came (a table left
closed: `collect_if_due`, from the daemon's I/O thread). The placements themselves leave no
cycles behind; what does (a settlement, a page) waits for the next call.
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
        self.frozen = 0             # collections followed by a freeze (the tests read these two)
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
        """gc's callback, around every collection (in the thread that set it off): what survived
        it is frozen. A full one (`gc.collect()`) scans the frozen part too when the last scan of
        everything is too old."""
        if phase == "stop":
            gc.freeze()
            self.frozen += 1
        elif info.get("generation") == 2 and self.due():
            gc.unfreeze()
            self.last_full = self.clock()
            self.thawed += 1

    def due(self) -> bool:
        """Is the last scan of the whole heap `full_every_s` old?"""
        return self.clock() - self.last_full >= self.full_every_s

    def full(self) -> None:
        """A collection of the whole heap now (frozen part included), then its survivors frozen."""
        gc.unfreeze()
        self.last_full = self.clock()   # (before: its "start" must not count it a second time)
        self.thawed += 1
        gc.collect()                    # its "stop" freezes what survived


def full_collect() -> None:
    """A full collection at a quiet moment: the whole heap, with or without the daemon's policy."""
    if _installed is not None:
        _installed.full()
    else:
        gc.collect()


def collect_if_due() -> None:
    """The whole heap scanned if the daemon's policy is installed and its last whole scan is
    `FULL_EVERY_S` old (no call of the wheel since): called every turn of the I/O thread."""
    h = _installed
    if h is not None and h.due():
        h.full()
