"""The floor's commands at the table: checked, mapped to the table's roles, carried out through the
same `TableHost` methods the HTTP API calls, audited (docs/floor/commands.md).

A request is taken only if signed with the floor's command key, within 30 s of this table's
clock, and never seen before, even across a restart of the daemon (its id is kept in the journal
for the freshness window; host_tools/floor/link/command.py); every refusal is audited too. The
floor user acts as `floor:<name>` with the table role its floor role maps to (pit_boss -> chef,
director -> admin, surveillance -> display), so the audit says who, from where, with what right.

The wheel's regulatory settings take two people, here as at the table's API and under the same
rule (host_tools/table/api/twoperson.py, one table of requests): `request_setting` journals a
pending change, `approve_setting` by another person sends it to the wheel. Runs on a worker
thread of the floor link (a command may wait for the wheel's answer, up to 5 s).
"""

from __future__ import annotations

import json
import logging
import time

from host_tools.floor.link import command as C

from host_tools.table.api.auth import Identity
from host_tools.table.game.table import Invalid, NotFound, Refused

log = logging.getLogger("cylindre.floor")

NEEDS = {"open": "chef", "close": "chef", "set_limits": "admin", "request_setting": "admin",
         "approve_setting": "admin", "ack_alert": "chef"}
ACTIONS = {"open": "table_open", "close": "table_close", "set_limits": "table_limits",
           "request_setting": "setting_request", "approve_setting": "setting_approve", "ack_alert": "alert_ack"}
SCHEMA_SEEN = """
CREATE TABLE IF NOT EXISTS floor_commands_seen (id TEXT PRIMARY KEY, at REAL NOT NULL)
"""


class FloorCommands:
    def __init__(self, host, key: bytes, clock=time.time, fresh_s: float = C.FRESH_S):
        self.host = host
        self.key = key
        self.clock = clock
        self.fresh_s = fresh_s
        self.replay = C.Replay(fresh_s)
        with host.j.tx() as db:
            db.execute(SCHEMA_SEEN)

    def handle(self, payload: bytes) -> dict:
        """The reply to one request (never raises)."""
        try:
            req = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            return self._refused(None, "bad_request", "the command is not JSON")
        try:
            C.verify(req, self.key, self.clock(), self.replay, self.fresh_s)
        except C.CommandError as e:
            return self._refused(req, e.code, e.message)
        if not self._first_time(req["id"]):
            return self._refused(req, "replayed", f"command {req['id']} was taken already (before a restart)")
        who = Identity("floor:" + req["who"], C.table_role(req["role"]))
        op = req["op"]
        if not who.may(NEEDS[op]):
            return self._refused(req, "forbidden", f"{req['role']} ({who.role} at the table) may not {op}: it needs "
                                                   f"{NEEDS[op]}", who)
        try:
            return C.ok(getattr(self, "_" + op)(req["args"], who))
        except C.CommandError as e:
            return self._refused(req, e.code, e.message, who)
        except Refused as e:
            return C.error(e.code, e.message)
        except (Invalid, NotFound) as e:
            return C.error("bad_request", str(e))
        except Exception as e:                  # the table keeps going; the floor is told
            code = getattr(e, "code", None)
            if code is not None and hasattr(e, "message"):      # web.ApiError: wheel_timeout, wheel_refused
                return C.error(code, e.message)
            log.exception("floor command %s failed", op)
            return C.error("internal", "the table could not carry out the command (see its log)")

    def _first_time(self, rid: str) -> bool:
        """Remember a command's id in the journal (a restarted daemon still refuses it within its
        freshness window); ids older than twice the window are forgotten."""
        now = self.clock()
        with self.host.j.tx() as db:
            db.execute("DELETE FROM floor_commands_seen WHERE at < ?", (now - 2 * self.fresh_s - 60,))
            return db.execute("INSERT OR IGNORE INTO floor_commands_seen (id, at) VALUES (?,?)", (rid, now)).rowcount == 1

    def _refused(self, req, code, message, who: Identity | None = None) -> dict:
        """Audit a refused request (`who` unverified when the signature was not checked) and answer."""
        if who is None:
            name = req.get("who") if isinstance(req, dict) else None
            role = req.get("role") if isinstance(req, dict) else None
            who = Identity("floor-unverified:" + str(name)[:64], C.ROLES.get(role, "none") if isinstance(role, str) else "none")
        op = req.get("op") if isinstance(req, dict) else None
        try:
            self.host.audit.record(who.name, who.role, ACTIONS.get(op, "floor_command"),
                                   req.get("id") if isinstance(req, dict) and isinstance(req.get("id"), str) else None,
                                   answer={"refused": code, "message": message}, done=False)
        except Exception:
            log.exception("could not audit a refused floor command")
        log.warning("floor command refused (%s): %s", code, message)
        return C.error(code, message)

    # -- the operations ----------------------------------------------------------------------------
    def _open(self, args, who):
        return _change(self.host.set_open(True, who))

    def _close(self, args, who):
        return _change(self.host.set_open(False, who))

    def _set_limits(self, args, who):
        spec = {}
        for kind, lim in args.items():
            if not isinstance(lim, dict) or set(lim) - {"min", "max"} or not all(
                    isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10**11 for v in lim.values()):
                raise C.CommandError("bad_request", f"limits of {kind!r}: {{min, max}} in cents, 1 to 10^11")
            spec[kind] = lim
        if not spec:
            raise C.CommandError("bad_request", "set_limits needs {kind: {min, max}}")
        return {"limits": self.host.set_limits(spec, who)}

    def _ack_alert(self, args, who):
        """An alert acknowledged from the floor, with its comment, as the pit page does."""
        aid, comment = args.get("id"), args.get("comment")
        if isinstance(aid, str) and aid.isdigit():
            aid = int(aid)
        if not isinstance(aid, int) or isinstance(aid, bool) or aid < 1:
            raise C.CommandError("bad_request", "ack_alert needs the alert's id (args.id)")
        if not isinstance(comment, str) or not comment.strip():
            raise C.CommandError("bad_request", "ack_alert needs a comment (args.comment)")
        if self.host.pit is None:
            raise C.CommandError("unavailable", "this table keeps no alerts")
        journal = args.get("journal")
        if journal:                             # an alert of another journal (the host's replaced) is not ours
            with self.host.j.lock:
                known = self.host.j.db.execute("SELECT 1 FROM journal_ids WHERE journal=?", (str(journal),)).fetchone()
            if known is None:
                raise C.CommandError("not_found", f"alert {aid} was raised under journal {journal}, not this table's journal")
        return {"alert": self.host.pit.acknowledge(aid, comment, who)}

    def _request_setting(self, args, who):
        from host_tools.table.api.twoperson import TwoPersonError
        try:
            return self.host.two_person.request(args.get("name"), args.get("value"), who, via="floor")
        except TwoPersonError as e:
            raise C.CommandError(e.code, e.message) from None

    def _approve_setting(self, args, who):
        from host_tools.table.api.twoperson import TwoPersonError
        try:
            return self.host.two_person.approve(args.get("request"), who, self.host.wheel_setting)
        except TwoPersonError as e:
            raise C.CommandError(e.code, e.message) from None


def _change(out: dict) -> dict:
    t = out["table"]
    return {"phase": t["phase"], "spin": t.get("spin"), "wheel_confirmed": out["wheel_confirmed"]}
