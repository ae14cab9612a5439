"""Fixtures of the table host's tests."""

import pytest

from host_tools.table.game.table import Table
from host_tools.table.journal.store import Journal

from loopkit import Loopback


@pytest.fixture
def open_table(tmp_path):
    """A table on a new journal, open (no wheel yet: tablewheel.Wheel(table) gives it one)."""
    t = Table(Journal(tmp_path / "j.sqlite"), "T1")
    t.set_open(True)
    return t


@pytest.fixture
def loopback():
    """`loopback(key=, wheel=, serial=, ctl=)`: the daemon's port wired to the firmware's DeviceLink
    (tests/loopkit.py; `cls=` a Loopback of another line); every wheel made is stopped when the
    test ends."""
    made = []

    def make(cls=Loopback, **kw):
        made.append(cls(**kw))
        return made[-1]

    yield make
    for lb in made:
        lb.close_wheel()
