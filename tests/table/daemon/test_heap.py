"""The daemon's collector policy (host_tools/table/heap.py): every collection freezes what
survived it, so the next scans only what is new; the wheel's call and a long quiet scan all."""

import gc
import weakref

import pytest

from host_tools.table import heap
from host_tools.table.heap import Heap, collect_if_due, full_collect


class Node:
    pass


def cycle(holder):
    """A reference cycle, held in `holder` until it is cleared, and a weak reference that tells
    when the collector freed it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    holder.append(a)
    return weakref.ref(a)


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.fixture
def policy():
    clock = Clock()
    h = Heap(clock=clock, full_every_s=600).install()
    h.clock_ = clock
    try:
        yield h
    finally:
        h.uninstall()


def test_a_full_collection_freezes_what_survived_it(policy):
    kept = [Node() for _ in range(100)]
    gc.collect()
    assert policy.frozen >= 1
    assert gc.get_freeze_count() >= len(kept)


def test_a_young_collection_freezes_what_survived_it_too(policy):
    """The survivors are not scanned again by the middle and old generations' collections, which
    at a stadium's pace scanned the same bets' objects again and again."""
    before = gc.get_freeze_count()
    kept = [[i] for i in range(1000)]           # lists: tracked by the collector
    gc.collect(0)
    assert gc.get_freeze_count() >= before + len(kept)
    assert gc.get_count()[0] < len(kept)        # none of them waits in the young generation


def test_a_cycle_frozen_alive_is_not_collected_until_the_whole_heap_is_scanned(policy):
    held = []
    ref = cycle(held)
    gc.collect()                        # it survives (held) and is frozen
    held.clear()                        # garbage now, but only a cycle's references keep it
    gc.collect()
    assert ref() is not None, "frozen: the full collections scan only what is new"
    full_collect()                      # the wheel's call (game/table.py)
    assert ref() is None
    assert policy.thawed == 1


def test_an_object_frozen_is_still_freed_when_its_last_reference_goes(policy):
    n = Node()
    ref = weakref.ref(n)
    gc.collect()
    assert gc.get_freeze_count() > 0
    del n
    assert ref() is None


def test_with_no_call_for_full_every_s_the_next_full_collection_scans_everything(policy):
    held = []
    ref = cycle(held)
    gc.collect()
    held.clear()
    policy.clock_.t += 599
    gc.collect()
    assert ref() is not None and policy.thawed == 0
    policy.clock_.t += 2
    gc.collect()
    assert ref() is None
    assert policy.thawed == 1


def test_uninstalled_the_process_is_back_to_cpythons_own_policy():
    h = Heap().install()
    gc.collect()
    assert gc.get_freeze_count() > 0
    h.uninstall()
    assert gc.get_freeze_count() == 0
    assert h._on_gc not in gc.callbacks
    assert heap._installed is None


def test_one_policy_a_process():
    h = Heap().install()
    try:
        with pytest.raises(RuntimeError, match="already installed"):
            Heap().install()
    finally:
        h.uninstall()


def test_without_the_policy_full_collect_is_a_plain_collection():
    held = []
    ref = cycle(held)
    gc.collect()
    held.clear()
    full_collect()
    assert ref() is None
    assert gc.get_freeze_count() == 0


def test_with_no_call_the_io_thread_scans_everything_once_full_every_s(policy):
    """No automatic collection scans the frozen part: the I/O thread's `collect_if_due` does,
    once the last whole scan is `full_every_s` old."""
    held = []
    ref = cycle(held)
    gc.collect(0)
    held.clear()
    collect_if_due()
    assert ref() is not None and policy.thawed == 0, "not due yet"
    policy.clock_.t += 600
    collect_if_due()
    assert ref() is None and policy.thawed == 1
    collect_if_due()
    assert policy.thawed == 1, "due again only full_every_s later"


def test_without_the_policy_collect_if_due_does_nothing():
    collect_if_due()
    assert heap._installed is None and gc.get_freeze_count() == 0
