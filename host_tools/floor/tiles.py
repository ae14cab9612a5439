"""The floor at a glance: one tile per table, folded from its events (the functional core of the
page). A tile says whether the table is open, its phase, its last numbers, its link and backlog,
its games per hour against the target, today's turnover and result, its croupier and open alerts.

`Tiles.apply(env)` takes one envelope (journaled event or heartbeat); `Tiles.seed(...)` starts from
the store and the key-value bucket's last state, so the page shows the floor at once after a restart.
"""

from __future__ import annotations

import time
from collections import deque

from cylindre.rules import wheel as W

from host_tools.table.game import money as M

# the last state's fields a tile takes, and the types it takes them of (anything else: ignored)
STATE = {"open": bool, "phase": str, "link": str, "backlog": int, "clock": (int, float), "croupier": str,
         "limits": dict, "serial": str}
from host_tools.table.game.annonce import UNKNOWN, annonce
LAST = 12                 # numbers shown on a tile
SILENT_S = 20.0           # no heartbeat for this long: the table's link is shown lost


def colour(n):
    return "zero" if n == 0 else ("rouge" if W.is_red(n) else "noir")


class Tile:
    def __init__(self, table, site, pit="Salle", url=None, target=40):
        self.table, self.site, self.pit, self.url, self.target = table, site, pit, url, target
        self.serial = None
        self.open = None
        self.phase = None
        self.refusing = UNKNOWN                   # the table's window on a bet now (its heartbeat); None: taken
        self.link = None
        self.backlog = None
        self.heard_at = None
        self.clock = None
        self.croupier = None
        self.limits = None
        self.numbers = deque(maxlen=LAST)          # (number, at), newest last
        self.from_snapshot = False                 # numbers from a last state, replaced by the first result
        self.recent = deque()                      # result times within the last hour
        self.games = self.voids = 0
        self.money = M.Totals()                    # today's, as money.py counts it

    def view(self, now, alerts=0):
        while self.recent and self.recent[0] < now - 3600:
            self.recent.popleft()
        silent = self.heard_at is None or now - self.heard_at > SILENT_S
        refusing = "silent" if silent else self.refusing
        return {"table": self.table, "site": self.site, "pit": self.pit, "url": self.url, "serial": self.serial,
                "open": self.open, "phase": self.phase, "link": "silent" if silent else self.link,
                # "faites vos jeux" only while the table would take a bet: the rule POST /bets applies
                "annonce": annonce(self.phase, refusing), "refusing": refusing,
                "backlog": self.backlog, "heard_at": self.heard_at, "croupier": self.croupier, "limits": self.limits,
                "numbers": [{"n": n, "colour": colour(n)} for n, _ in reversed(self.numbers)],
                "games_per_hour": len(self.recent), "target": self.target,
                "games": self.games, "voids": self.voids, "turnover": self.money.turnover, "result": self.money.win,
                "alerts": alerts}


class Tiles:
    """Every table's tile; `day_start` is the current gaming day's start (today's totals)."""

    def __init__(self, layout=None, day_start=0.0):
        self.layout = layout or {}       # table -> {"pit", "url", "target"}
        self.day_start = day_start
        self.tiles: dict[str, Tile] = {}

    def tile(self, table, site):
        t = self.tiles.get(table)
        if t is None:
            conf = self.layout.get(table, {})
            t = self.tiles[table] = Tile(table, site, conf.get("pit") or "Salle", conf.get("url"),
                                         int(conf.get("target") or 40))
        return t

    def new_day(self, day_start):
        """At the turn of the gaming day, today's totals start again."""
        self.day_start = day_start
        for t in self.tiles.values():
            t.games = t.voids = 0
            t.money = M.Totals()

    def state(self, site, table, st: dict, heard_at: float):
        """The last state from a heartbeat or the key-value bucket."""
        t = self.tile(table, site)
        if t.heard_at is not None and heard_at < t.heard_at:
            return
        t.heard_at = heard_at
        for k, types in STATE.items():
            if k in st and st[k] is not None and isinstance(st[k], types) and not (types is int and st[k] is True):
                setattr(t, k, st[k] if not isinstance(st[k], str) else st[k][:200])
        if "refusing" in st:                        # a heartbeat's verdict (None: a bet would be taken)
            t.refusing = st["refusing"][:200] if isinstance(st["refusing"], str) else None if st["refusing"] is None else UNKNOWN
        elif "phase" in st:                         # a state without one: nobody said bets are taken
            t.refusing = UNKNOWN
        if isinstance(st.get("last_numbers"), list) and (not t.numbers or t.from_snapshot):
            t.numbers.clear()                       # newest first in the state
            for n in reversed(st["last_numbers"][:LAST]):
                if isinstance(n, int) and 0 <= n <= 36:
                    t.numbers.append((n, heard_at))
            t.from_snapshot = bool(t.numbers)

    def apply(self, env: dict):
        kind, b = env["kind"], env["body"]
        t = self.tile(env["table"], env["site"])
        if env.get("serial"):
            t.serial = env["serial"]
        if not isinstance(b, dict):
            return
        if kind == "heartbeat":
            self.state(env["site"], env["table"], b, float(env["at"]))
            return
        at = float(env["at"])
        today = at >= self.day_start
        if kind == "result" and isinstance(b.get("number"), int) and 0 <= b["number"] <= 36:
            if t.from_snapshot:                     # the events say it all from here: no number twice
                t.numbers.clear()
                t.from_snapshot = False
            t.numbers.append((b["number"], at))
            t.recent.append(at)
            if isinstance(b.get("croupier"), str) and b["croupier"]:
                t.croupier = b["croupier"][:64]
            t.games += today
        elif kind == "void":
            t.voids += today
        elif kind == "settlement" and M.settled_at(b, at) >= self.day_start:
            turnover, paid, _ = M.of_settlement(b)
            t.money.add(turnover, paid)
        elif kind == "table":
            what, after = b.get("what"), b.get("after")
            if what in ("open", "close"):
                t.open = what == "open"
            elif isinstance(after, dict) and "open" in after:
                t.open = bool(after["open"])
            if what == "croupier":
                c = after if isinstance(after, str) else (after.get("croupier") if isinstance(after, dict) else None)
                t.croupier = c[:64] if isinstance(c, str) else t.croupier
            elif what == "limits" and isinstance(after, dict):
                t.limits = after

    def views(self, open_alerts: dict, now=None):
        now = time.time() if now is None else now
        return [t.view(now, open_alerts.get(k, 0)) for k, t in sorted(self.tiles.items(), key=lambda kv: (kv[1].pit, kv[0]))]

