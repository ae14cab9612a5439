"""Fixtures of the table host's tests."""

import pytest

from loopkit import Loopback


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
