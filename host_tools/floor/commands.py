"""Commands from the floor to a table (item 8, floor end): open, close, change limits, acknowledge
an alert, and the wheel's regulatory settings by two people (one requests, another approves).

Each goes as a NATS request on `cylindre.<site>.<table>.cmd`, signed with the floor's command key
(host_tools/floor/link/command.py: HMAC-SHA256 over the canonical JSON), carrying the floor user's
name and role; the table checks it and audits it as `floor:<name>`. The floor audits it too, with
the table's answer (or why none came: broker unreachable, no answer in time), before answering
the user. A setting requested at the floor is kept in `pending` until another user approves it:
the floor refuses an approval by the requester before anything is sent.
"""

from __future__ import annotations

import json
import uuid

from host_tools.floor.link import command as C

# op -> the least floor role that may send it
# (the table maps pit_boss to its chef and director to its admin, and asks admin for limits and settings)
NEED = {"open": "pit_boss", "close": "pit_boss", "ack_alert": "pit_boss", "set_limits": "director",
        "request_setting": "director", "approve_setting": "director"}
TIMEOUT_S = 12.0         # a table answers open/close once its wheel is told (up to 5 s)


class CommandRefused(Exception):
    def __init__(self, code, message, status=400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


class Commands:
    """`send` one command and audit it; `link` is the floor's NATS link (ingest.Link)."""

    def __init__(self, store, access, link, key: bytes, sites: dict | None = None):
        self.store, self.access, self.link, self.key = store, access, link, key
        self.sites = sites if sites is not None else {}       # table -> site, from the events seen
        self.timeout = TIMEOUT_S

    def site(self, table):
        site = self.sites.get(table)
        if site is None:
            rows = self.store.query("SELECT site FROM tables WHERE table_id=?", (table,)) or \
                self.store.query("SELECT site FROM events WHERE table_id=? LIMIT 1", (table,))
            if not rows:
                raise CommandRefused("unknown_table", f"table {table} inconnue de la salle", 404)
            site = rows[0][0]
        return site

    def send(self, who, table, op, args, audit_target=None) -> dict:
        """Sign, send, wait for the table's answer, audit at the floor; the answer (ok or not)."""
        need = NEED.get(op)
        if need is None:
            raise CommandRefused("unknown_op", f"commande inconnue {op!r}")
        if not who.may(need):
            self.access.record(who, "cmd." + op, audit_target or table, after=args, done=False,
                               answer={"error": "forbidden", "need": need})
            raise CommandRefused("forbidden", f"il faut le rôle {need} pour {op}", 403)
        site = self.site(table)
        # the table knows the floor roles pit_boss, director, surveillance: an admin acts as director
        role = who.role if who.role in C.ROLES else "director"
        req = C.request(op, args, who.name, role, self.key, now=self.store.clock())
        try:
            raw = self.link.call(self.link.request(f"cylindre.{site}.{table}.cmd", C.canonical(req), self.timeout),
                                 self.timeout + 2)
            answer = json.loads(raw)
            if not isinstance(answer, dict):
                answer = {"ok": False, "error": "bad_answer", "message": "la table a répondu autre chose qu'un objet"}
        except Exception as e:                       # noqa: BLE001 - no answer: said, audited, never hidden
            answer = {"ok": False, "error": "no_answer", "message": f"la table n'a pas répondu ({type(e).__name__}: {e})"}
        self.access.record(who, "cmd." + op, audit_target or table, after=dict(args, request=req["id"]),
                           answer=answer, done=bool(answer.get("ok")))
        return answer

    # -- two people ---------------------------------------------------------------------------
    def request_setting(self, who, table, setting, value) -> dict:
        if setting not in C.SETTINGS:
            raise CommandRefused("bad_setting", f"réglage inconnu {setting!r} (connus : {', '.join(C.SETTINGS)})")
        pid = str(uuid.uuid4())
        answer = self.send(who, table, "request_setting", {"name": setting, "value": value},
                           audit_target=f"{table}/{setting}")
        if answer.get("ok"):
            result = answer.get("result") or {}
            ref = result.get("request") or result.get("id") or pid
            self.store.execute("INSERT INTO pending (id, table_id, site, setting, value, requested_by, requested_at, table_ref) "
                               "VALUES (?,?,?,?,?,?,?,?)", (pid, table, self.site(table), setting, json.dumps(value),
                                                            who.name, self.store.clock(), str(ref)))
            answer = dict(answer, pending=pid)
        return answer

    def approve_setting(self, who, pending_id) -> dict:
        rows = self.store.query("SELECT table_id, setting, value, requested_by, table_ref, outcome FROM pending WHERE id=?",
                                (pending_id,))
        if not rows:
            raise CommandRefused("not_found", f"pas de demande {pending_id}", 404)
        table, setting, value, requester, ref, outcome = rows[0]
        if outcome is not None:
            raise CommandRefused("already_decided", f"demande déjà traitée ({outcome})", 409)
        from host_tools.table.api.twoperson import person
        if person(who.name) == person(requester):      # BOB is bob: another person, not another spelling
            self.access.record(who, "cmd.approve_setting", f"{table}/{setting}", after={"pending": pending_id},
                               done=False, answer={"error": "same_person"})
            raise CommandRefused("same_person", "une autre personne que le demandeur doit approuver", 409)
        answer = self.send(who, table, "approve_setting", {"request": ref}, audit_target=f"{table}/{setting}")
        if answer.get("ok"):
            self.store.execute("UPDATE pending SET approved_by=?, approved_at=?, outcome=? WHERE id=?",
                               (who.name, self.store.clock(), "applied", pending_id))
        return answer

    def pending(self) -> list[dict]:
        keys = ("id", "table", "setting", "value", "requested_by", "requested_at", "approved_by", "approved_at", "outcome")
        rows = self.store.query("SELECT id, table_id, setting, value, requested_by, requested_at, approved_by, approved_at, "
                                "outcome FROM pending ORDER BY requested_at DESC LIMIT 200")
        return [dict(zip(keys, r), value=json.loads(r[3])) for r in rows]
