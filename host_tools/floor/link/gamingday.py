"""The gaming day (journée de jeu): the casino's accounting day, which starts at a set local hour
(06:00 by default) rather than at midnight, so that a night's play falls in one day. Part of the
contract: a table's published day totals and the floor's report cut the day at the same instant
(`cylindre daemon --day-start --tz` as `cylindre floor --day-start --tz`)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo


class GamingDay:
    def __init__(self, start: str = "06:00", tz: str = "Europe/Paris"):
        try:
            h, m = (int(x) for x in start.split(":"))
            self.start = dt.time(h, m)
        except ValueError:
            raise ValueError(f"the gaming day's start is HH:MM, got {start!r}") from None
        self.tz = ZoneInfo(tz)
        self.tz_name = tz

    def of(self, at: float) -> dt.date:
        """The gaming day an instant (epoch seconds) belongs to."""
        local = dt.datetime.fromtimestamp(at, self.tz)
        day = local.date()
        return day - dt.timedelta(days=1) if local.time() < self.start else day

    def bounds(self, day: dt.date) -> tuple[float, float]:
        """[start, end) of a gaming day in epoch seconds (23 or 25 hours on a change of clocks)."""
        a = dt.datetime.combine(day, self.start, self.tz)
        b = dt.datetime.combine(day + dt.timedelta(days=1), self.start, self.tz)
        return a.timestamp(), b.timestamp()

    def parse(self, text: str | None, now: float) -> dt.date:
        """A day given as YYYY-MM-DD, or 'today'/None (the current gaming day), 'yesterday'."""
        if text in (None, "", "today", "aujourdhui"):
            return self.of(now)
        if text in ("yesterday", "hier"):
            return self.of(now) - dt.timedelta(days=1)
        return dt.date.fromisoformat(text)
