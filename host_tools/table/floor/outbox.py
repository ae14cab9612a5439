"""The table's outbox to the casino floor, its functional core: what a journal row says to the
floor, how far the cursor may move on the broker's acknowledgements, when to try again, and what
the table tells about its link to the broker. No I/O here (floor/publisher.py is the shell).

The journal's `event_log` is the outbox: each row the floor wants (a coup's result or void, a
settlement, an alert, an audit row, a change of the table's) becomes one message keyed by its row
id. The cursor `meta('floor_cursor')` moves only over rows the broker has acknowledged (its
PubAck) with no unacknowledged row before them, so a crash or an outage at any instant resends
from the first row not known to be stored, and the broker (Nats-Msg-Id) and the floor (its key
(table, event id)) drop what was stored already.
"""

from __future__ import annotations

import time

# the journal's kinds that may say something to the floor (a `wheel` row only if a result or void)
ROW_KINDS = ("wheel", "settlement", "alert", "audit", "table")
WHEEL_EVENTS = ("result", "void")
# what a row's SQL filter keeps: the same test as `to_message`, so the backlog counts what is sent
# and the chain of a journal's messages (`prev`) names only rows that are sent
ROW_FILTER = ("(kind IN ('settlement', 'alert', 'audit', 'table') AND json_type(data) = 'object') OR "
              "(kind = 'wheel' AND json_type(data) = 'object' AND (json_extract(data, '$.ev') = 'void' OR "
              "(json_extract(data, '$.ev') = 'result' AND json_type(data, '$.number') = 'integer' "
              "AND json_extract(data, '$.number') BETWEEN 0 AND 36)))")
DIRECTION = {1: "cw", -1: "ccw"}
ALERT_FIELDS = ("id", "code", "message", "level", "raised_at", "acked_at", "acked_by", "comment")
AUDIT_FIELDS = ("id", "at", "who", "role", "action", "target", "spin", "before", "after", "done")


def direction(d):
    """The wheel's 1 / -1 as "cw" / "ccw" (None when it did not tell)."""
    return DIRECTION.get(d) if isinstance(d, int) and not isinstance(d, bool) else None


def wants_evidence(kind: str, data: dict):
    """The spin whose launch and drop a row's message needs (a result or a void), else None."""
    if kind == "wheel" and isinstance(data, dict) and data.get("ev") in WHEEL_EVENTS:
        spin = data.get("spin")
        return spin if isinstance(spin, int) and not isinstance(spin, bool) else None
    return None


def to_message(kind: str, data, at: float, evidence: dict | None = None, croupier=None, serial=None, settled=None):
    """(floor kind, body) of a journal row, or None when the floor does not want it.
    `evidence`: {"boot", "epoch", "launch", "drop"} of the coup (the wheel's events of that spin,
    its spin counter's epoch);
    `croupier`: who was on duty at the row's time; `serial`: the wheel's board serial;
    `settled`: the ledger's row of a settlement (staked, paid, at): its turnover, each stake counted
    once (host_tools/table/game/money.py), and the instant the table counts it at."""
    if not isinstance(data, dict):
        return None
    if kind == "wheel":
        ev = data.get("ev")
        if ev not in WHEEL_EVENTS:
            return None
        e = evidence or {}
        launch, drop = e.get("launch") or {}, e.get("drop") or {}
        common = {"spin": data.get("spin"), "boot": e.get("boot"), "epoch": e.get("epoch"), "serial": serial,
                  "rotor_dir": direction(launch.get("rotor_dir")), "ball_dir": direction(launch.get("ball_dir")),
                  "croupier": croupier, "at": at}
        if ev == "result":
            number = data.get("number")
            if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= 36:
                return None                     # a result the table did not play (no number): not a coup
            laps = data.get("laps", drop.get("laps"))
            return "result", {**common, "number": number, "rotor_rpm_x10": launch.get("rotor_rpm_x10"),
                              "laps": laps, "drop_angle_x10": drop.get("drop_angle_x10")}
        return "void", {**common, "reason": data.get("reason"), "detail": data.get("detail")}
    if kind == "settlement":
        t = data.get("totals") or {}
        staked, paid = t.get("staked"), t.get("paid")
        result = staked - paid if isinstance(staked, int) and isinstance(paid, int) else None
        body = {"spin": data.get("spin"), "number": data.get("number"), "staked": staked,
                "paid": paid, "result": result, "bets": data.get("bets"), "at": at}
        if settled is not None:
            turnover, paid_, settled_at = settled
            body.update(turnover=turnover, paid=paid_, result=turnover - paid_, settled_at=settled_at)
        return "settlement", body
    if kind == "alert":
        return "alert", {k: data.get(k) for k in ALERT_FIELDS}
    if kind == "audit":
        return "audit", {k: data.get(k) for k in AUDIT_FIELDS}
    if kind == "table":
        return "table", {k: data.get(k) for k in ("what", "before", "after", "who", "role", "at")}
    return None


def advance(cursor: int, eids, acked, covered_to: int | None = None) -> int:
    """The cursor after a batch: the last of `eids` (ascending, all above `cursor`) before the first
    one not in `acked`. When every one is acknowledged and the batch read everything up to
    `covered_to` (the journal's newest id when it was read), the cursor goes there: rows the floor
    does not want hold no one back."""
    for eid in eids:
        if eid not in acked:
            return cursor
        cursor = eid
    if covered_to is not None and covered_to > cursor:
        return covered_to
    return cursor


class Backoff:
    """Waits between attempts while the broker fails: 0.2 s doubling to `cap`, reset by a success."""

    def __init__(self, first=0.2, cap=5.0):
        self.first, self.cap = first, cap
        self.delay = 0.0

    def failed(self) -> float:
        self.delay = self.first if self.delay == 0 else min(self.delay * 2, self.cap)
        return self.delay

    def ok(self):
        self.delay = 0.0


class LinkWatch:
    """The link to the broker as the table tells it: up, or down since when and why."""

    def __init__(self, clock=time.time):
        self.clock = clock
        self.up = False
        self.since = clock()
        self.why = "not connected yet"
        self.last_ack = None

    def connected(self):
        if not self.up:
            self.up, self.since, self.why = True, self.clock(), None

    def acked(self):
        self.last_ack = self.clock()
        self.connected()

    def lost(self, why: str):
        if self.up or self.why != why:
            if self.up:
                self.since = self.clock()
            self.up, self.why = False, why

    def state(self) -> str:
        return "up" if self.up else f"down: {self.why}"

    def warning(self, backlog: int) -> str | None:
        """/health's line while the broker is unreachable (a warning: the table keeps playing)."""
        if self.up:
            return None
        return ("floor: broker unreachable since %s UTC (%s; %d events waiting)"
                % (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.since)), self.why, backlog))


def heartbeat(link: str, phase, is_open: bool, backlog: int, clock: float, last_event_id: int, croupier=None,
              last_journal: str | None = None, days=None, refusing="unknown") -> dict:
    """The heartbeat's body. `last_event_id` (`last_journal`): the last message the broker
    acknowledged, which the floor must hold; `days`: the table's own day totals (daytotals.py);
    `refusing`: why a bet arriving now would be refused, None when it would be taken (the table's
    own window, game/annonce.py): the floor's tile says "faites vos jeux" only then."""
    return {"link": link, "phase": phase, "open": is_open, "backlog": backlog, "clock": clock,
            "last_event_id": last_event_id, "last_journal": last_journal, "croupier": croupier,
            "days": list(days or []), "refusing": refusing}


def table_state(site, table, serial, phase, last_numbers, link, croupier, limits, backlog, heard, wheel_heard) -> dict:
    """The value of the table's key in the bucket `cylindre_tables` (docs/floor/table-side.md). `link`: the
    table's link to its wheel ("up" or why not); `heard`: when the table wrote it (epoch s),
    `wheel_heard`: when the table last heard its wheel."""
    return {"site": site, "table": table, "serial": serial, "phase": phase, "open": phase != "closed",
            "last_numbers": list(last_numbers), "link": link, "croupier": croupier,
            "limits": limits, "backlog": backlog, "last_heard": heard, "wheel_heard": wheel_heard}


def same_state(a: dict | None, b: dict) -> bool:
    """Whether two states differ only in what changes by itself (last heard): no put needed."""
    if a is None:
        return False
    return {k: v for k, v in a.items() if k != "last_heard"} == {k: v for k, v in b.items() if k != "last_heard"}
