"""The table's own day totals, published with each heartbeat so the floor can reconcile its figures
with the table's to the cent (docs/floor.md, "Money"; the floor's side is host_tools/floor/reconcile.py).

For the gaming day in progress and the `DAYS_BACK` before it that had settlements, the journal's
`settlements` counted by host_tools/table/game/money.py: settlements, turnover, paid, with the day's
bounds, the instant they were counted at (`as_of`, read under the journal's lock, so every
settlement made before it is counted and none after it), and which journal this is: its first
identity (`ledger`) and every identity it holds (`journals`: the floor holds its events under
those). A day that is over does not change any more: counted once, then kept.
"""

from __future__ import annotations

import datetime as dt
import time

from host_tools.floor.link.gamingday import GamingDay

from host_tools.table.game import money as M

DAYS_BACK = 7


class DayTotals:
    def __init__(self, journal, wheel: str, gday: GamingDay | None = None, clock=time.time):
        self.j, self.wheel, self.clock = journal, wheel, clock
        self.gday = gday or GamingDay()
        self._final: dict[dt.date, M.Totals] = {}
        with journal.tx() as db:
            M.prepare(db)

    def records(self) -> list[dict]:
        """The `days` of the heartbeat's body, newest first."""
        out = []
        with self.j.lock:
            db = self.j.db
            as_of = self.clock()
            journals = [r[0] for r in db.execute("SELECT journal FROM journal_ids ORDER BY first_id")]
            today = self.gday.of(as_of)
            for back in range(DAYS_BACK + 1):
                day = today - dt.timedelta(days=back)
                start, end = self.gday.bounds(day)
                t = self._final.get(day)
                if t is None:
                    t = M.day_totals(db, self.wheel, start, end)
                    if as_of >= end:
                        self._final[day] = t
                if back and not t.settlements:
                    continue
                out.append({"day": day.isoformat(), "from": start, "to": end, "as_of": as_of,
                            "ledger": journals[0] if journals else "", "journals": journals, **t.to_json()})
        for day in [d for d in self._final if d < today - dt.timedelta(days=DAYS_BACK + 1)]:
            del self._final[day]
        return out
