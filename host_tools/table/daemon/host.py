"""`TableHost`: the one adapter between the table app and the daemon. Every call into
`Daemon`/`Table` goes through it, so a change of the daemon's interface is met here alone."""

from __future__ import annotations

import json
from contextlib import contextmanager

from host_tools.table.api.auth import Identity, Tokens
from host_tools.table.api.errors import ApiError
from host_tools.table.api.metrics import Metrics
from host_tools.table.daemon.service import Daemon
from host_tools.table.game import slips
from host_tools.table.game.committer import Committer, answer as committer_answer
from host_tools.table.game.limits import LimitsStore
from host_tools.table.game.table import Invalid, NotFound, Refused
from host_tools.table.journal.audit import Audit
from host_tools.table.journal.events_log import EventLog
from host_tools.table.journal.store import Journal

from cylindre.rules.limits import LimitError, Limits


class TableHost:
    """The daemon, its table and the table app's own parts (tokens, audit, event log, metrics).

    Every change goes through `step()`: one journal transaction holding the table's change, the
    events it publishes and its audit row, so they commit together or not at all."""

    @classmethod
    def build(cls, port, key, journal, **daemon_kw) -> "TableHost":
        """The daemon built with the table app's publisher (the journaled event log, counted by the
        metrics) and observer (the metrics)."""
        j = journal if isinstance(journal, Journal) else Journal(journal)
        events, metrics = EventLog(j), Metrics()

        def publish(kind, body):
            metrics.observe(kind, body)
            events.publish(kind, body)
        publish.in_transaction = True           # journaled with the change it reports (table.py)
        host = cls(Daemon(port, key, j, publish=publish, observer=metrics, **daemon_kw), events, metrics)
        host._start_limits(from_file=daemon_kw.get("limits") is not None)
        return host

    def __init__(self, daemon, events: EventLog, metrics: Metrics):
        self.d = daemon
        self.table = daemon.table
        self.j = daemon.j
        self.tokens = Tokens(self.j.db, self.j.lock, reader=self.j.path)
        self.audit = Audit(self.j.db, self.j.lock, journal=self.j, publish=events.publish)   # rows reach the floor too
        self.events = events
        self.metrics = metrics
        self.limits = LimitsStore(self.j, daemon.wheel)
        self.committer = Committer(self.table, unvouched=self.tokens.unvouched)
        self.pit = None                         # the pit's part (web_pages.Pit), set by create_app
        self.floor = None                       # the link to the casino floor (floor_publisher.FloorLink), if any
        from host_tools.table.api.twoperson import TwoPerson
        self.two_person = TwoPerson(self.j, self.audit)      # regulatory settings: a request, another's approval
        metrics.watch(daemon)

    def _start_limits(self, from_file: bool):
        """A limits file given at start is journaled as the limits in force; without one, the
        limits journaled last (a change over HTTP) apply."""
        stored = self.limits.load()
        if from_file or stored is None:
            self.limits.save(self.table.limits.to_json())
        else:
            self.table.limits = Limits().updated(stored)

    @contextmanager
    def step(self):
        """One transaction around table calls (the table's lock first, as the I/O thread takes
        them). A refused bet is recorded: it commits, then the refusal goes on; anything else
        raised rolls the transaction back, and the table's state in memory with it."""
        refused = None
        try:
            with self.table.lock, self.j.tx():
                try:
                    yield
                except Refused as e:
                    refused = e
        except (Invalid, NotFound, ApiError):
            raise                               # refused before anything changed
        except BaseException:
            self.table.reload()
            raise
        if refused is not None:
            raise refused

    # money and the game
    def place(self, body, idempotency_key=None, who: Identity | None = None) -> dict:
        """One bet, durable (with its event and who placed it) before this returns: placements
        arriving together are committed in one transaction (committer.py), each answered after it."""
        with self._counted():
            return self.committer.place(body, idempotency_key, _by(who))

    async def place_async(self, body, idempotency_key=None, who: Identity | None = None, voucher=None) -> dict:
        """`place` on the server's event loop: awaits the bet's group without holding a thread.
        `voucher`: `who` came from the tokens' cache (Tokens.vouch), checked again in the group."""
        with self._counted():
            return await self.committer.place_async(body, idempotency_key, _by(who), voucher=voucher)

    def place_begin(self, body, idempotency_key, who: Identity, voucher, slip: bool):
        """`place_async` or `place_slip_async` without a coroutine (the fronts' bridge): (future,
        finish); once the future is done, `finish()` is their answer, or raises as they do,
        counted in the metrics as they count. Invalid (400) is raised now. The body is JSON as
        the guard or the bridge decoded it."""
        try:
            fut, job = self.committer.begin(body, idempotency_key, _by(who), slip=slip, voucher=voucher, decoded=True)
        except Invalid:
            self.metrics.refused.labels("invalid").inc()
            raise

        def finish() -> dict:
            with self._counted() as placed:
                out = committer_answer(job)
                if slip:
                    placed[0] = len(out.get("bets") or ())
                return out
        return fut, finish

    async def place_slip_async(self, body, idempotency_key=None, who: Identity | None = None, voucher=None) -> dict:
        """A terminal's slip (game/slips.py), whole, durable before this returns (group commit)."""
        with self._counted() as placed:
            out = await self.committer.place_async(body, idempotency_key, _by(who), slip=True, voucher=voucher)
            placed[0] = len(out.get("bets") or ())
            return out

    def _mine(self, sid, who: Identity, action=None):
        """A slip a terminal may touch: its own (the token that placed it); croupier and above any.
        Another's is 403 not_your_slip (audited when `action` is a change)."""
        owner = (json.loads(slips.row(self.table, sid).get("placed_by") or "null") or {}).get("name")
        if not who.may("croupier") and owner != who.name:
            if action:
                self.audit.record(who.name, who.role, action, sid, answer={"refused": f"placed by {owner or 'no token'}"},
                                  done=False)
            raise ApiError(403, "not_your_slip", f"slip {sid} was placed by {owner or 'no recorded token'}: only that "
                           f"terminal, a croupier, a chef or an admin may {'withdraw' if action else 'read'} it")

    def slip(self, sid, who: Identity) -> dict:
        self._mine(sid, who)
        return slips.get(self.table, sid)

    def withdraw_slip(self, sid, who: Identity) -> dict:
        """Withdraw a slip whole (slips.withdraw), audited in the same transaction."""
        self._mine(sid, who, "slip_cancel")
        with self.step():
            out = slips.withdraw(self.table, sid, by=_by(who))
            self.audit.record(who.name, who.role, "slip_cancel", sid, {"status": "open"}, {"status": out["status"],
                              "bets": out["bets"]}, spin=self.table.st.get("spin"))
        return out

    @contextmanager
    def _counted(self):
        """The metrics of a placement: its refusal by code, or the bets it placed (one, or what
        the block sets in the list it is given: a slip's)."""
        placed = [1]
        try:
            yield placed
        except Refused as e:
            self.metrics.refused.labels(e.code).inc()
            raise
        except Invalid:
            self.metrics.refused.labels("invalid").inc()
            raise
        self.metrics.placed.inc(placed[0])

    def cancel(self, bid, who: Identity):
        """Withdraw an open bet. A bet belongs to the token that placed it (`placed_by`): a croupier
        (a terminal, a croupier's tablet) withdraws its own; the chef and the admin any. A refusal is
        403 not_your_bet, audited (done false). The owner never changes, so it is read first."""
        from host_tools.table.api.twoperson import person
        owner = (self.table.bet(bid).get("placed_by") or {}).get("name")
        if not who.may("chef") and (owner is None or person(owner) != person(who.name)):     # Ana is ana
            self.audit.record(who.name, who.role, "bet_cancel", bid, answer={"refused": f"placed by {owner or 'no token'}"},
                              done=False)
            raise ApiError(403, "not_your_bet", f"bet {bid} was placed by {owner or 'no recorded token'}: "
                           f"only that token, a chef or an admin may withdraw it")
        with self.step():
            before = self.table.bet(bid)
            out = self.table.cancel(bid, by=_by(who))
            self.audit.record(who.name, who.role, "bet_cancel", bid, {"status": before["status"]},
                              {"status": out["status"]}, spin=before.get("spin"))
        return out

    def resolve(self, bid, action, who: Identity):
        with self.step():
            before = self.table.bet(bid)
            out = self.table.resolve_held(bid, action)
            self.audit.record(who.name, who.role, "bet_resolve", bid, {"status": before["status"]},
                              {"status": out["status"], "action": action}, spin=before.get("spin"))
        return out

    def consent(self, bid, who: Identity):
        with self.step():
            before = self.table.bet(bid)
            out = self.table.consent(bid)
            self.audit.record(who.name, who.role, "bet_consent", bid, {"status": before["status"]},
                              {"status": out.get("status")}, spin=before.get("spin"))
        return out

    def set_open(self, is_open: bool, who: Identity) -> dict:
        """Open or close the table, audited in the same transaction; then the wheel is told
        (Daemon.open_table) and its answer added to the audit row."""
        with self.step():
            before = self.table.state()["phase"]
            self.d.want_open = is_open
            self.table.set_open(is_open)
            after = self.table.state()
            row = self.audit.record(who.name, who.role, "table_open" if is_open else "table_close", None,
                                    {"phase": before}, {"phase": after["phase"]}, spin=after["spin"])
        reply = self.d.open_table(is_open)      # the table is already so: this tells the wheel
        self.audit.answer(row, reply if reply is not None else {"timeout": "the wheel did not answer"})
        return {"table": self.table.state(), "wheel_confirmed": bool(reply and reply.get("ok"))}

    def call(self, who: Identity) -> dict:
        """The croupier's rien ne va plus from the pit: the table takes no bet from now (whatever
        the wheel's sensors say), audited in the same transaction; then the wheel is told
        (Daemon.call_wheel: it calls the spin on its track, or the next one it sees) and its
        answer added to the audit row."""
        with self.step():
            before = self.table.state()["phase"]
            self.table.call()
            after = self.table.state()
            row = self.audit.record(who.name, who.role, "table_call", None, {"phase": before},
                                    {"phase": after["phase"]}, spin=after["spin"])
        reply = self.d.call_wheel()
        self.audit.answer(row, reply if reply is not None else {"timeout": "the wheel did not answer"})
        return {"table": self.table.state(), "wheel_confirmed": bool(reply and reply.get("ok"))}

    def accept_wheel(self, who: Identity, expect: dict | None = None) -> dict:
        """The chef de table accepts the wheel that answers and that the table did not know
        (Daemon.accept_wheel), audited in the same transaction (before -> after)."""
        with self.d.lock:                       # the I/O thread's order: the daemon, the table, the journal
            try:
                with self.step():
                    before, now = self.d.accept_wheel(who.name, expect)
                    self.audit.record(who.name, who.role, "wheel_accept", now.get("serial"), before, now,
                                      spin=self.table.st.get("spin"))
            except ValueError as e:
                raise ApiError(409, "no_wheel_to_accept", str(e)) from None
        return {"before": before, "wheel": self.d.wheel_identity}

    def set_limits(self, spec: dict, who: Identity) -> dict:
        """New limits for the kinds in `spec`, between spins only (409 spin_in_progress while a
        spin is called); journaled and audited (before -> after) with the change."""
        old = self.table.limits
        try:
            with self.step():
                st = self.table.state()
                if st["phase"] == "no_more_bets" or st["locked_spin"] is not None:
                    raise Refused("spin_in_progress", "limits change between spins only: spin %s is called"
                                  % (st["locked_spin"] or st["spin"]))
                try:
                    new = old.updated(spec)
                except LimitError as e:
                    raise Invalid(str(e)) from None
                self.limits.save(new.to_json())
                self.audit.record(who.name, who.role, "table_limits", None, old.to_json(), new.to_json(), spin=st["spin"])
                self.table.limits = new
        except BaseException:
            with self.table.lock:
                self.table.limits = old
            raise
        return new.to_json()

    # reads
    def state(self):
        out = self.d.status()
        if self.pit is not None:
            out["table"].update(self.pit.table_state())
        if self.floor is not None:
            out["floor"] = self.floor.status()
        return out

    def bets(self, **kw):
        return self.table.bets(**kw)

    def bet(self, bid):
        return self.table.bet(bid)

    def history(self, n):
        return self.table.history(n)

    def recall(self, spin):
        out = self.table.recall(spin)
        out["audit"] = self.audit.rows(limit=1000, spin=spin)
        return out

    def wheel(self, cmd, args=None):
        """A command to the wheel: its result, 504 when it does not answer, 502 when it says no."""
        reply = self.d.command(cmd, args)
        if reply is None:
            raise ApiError(504, "wheel_timeout", f"the wheel did not answer {cmd}")
        if not reply.get("ok"):
            raise ApiError(502, "wheel_refused", str(reply.get("error") or "refused"))
        return reply.get("result")

    def wheel_setting(self, name, value, who: Identity, **context) -> dict:
        """One setting of the wheel's changed (the wheel enforces its bounds), audited before ->
        after with the wheel's answer and `context` (a floor change: who requested it); ApiError
        504/502 when the wheel does not answer or refuses (audited, not done)."""
        before = None
        try:
            before = (self.wheel("get_settings") or {}).get(name)
        except ApiError:
            pass
        try:
            out = self.wheel("set_setting", {"name": name, "value": value})
        except ApiError as e:
            self.audit.record(who.name, who.role, "wheel_setting", name, before, value,
                              answer={"error": e.code, "message": e.message, **context}, done=False)
            raise
        self.audit.record(who.name, who.role, "wheel_setting", name, before, (out or {}).get(name),
                          answer={"ok": True, **context})
        return out

    def health(self) -> tuple[bool, list[str]]:
        reasons = self.d.health_reasons()
        try:
            with self.d.j.tx() as db:
                db.execute("UPDATE meta SET value=value WHERE key='schema'")
        except Exception as e:
            reasons.append(f"journal not writable: {e}")
        ok = not reasons
        if self.floor is not None:              # a warning, not a failure: the table plays without its floor
            reasons += self.floor.warnings()
        return ok, reasons

    def stopping(self) -> bool:
        return self.d.stop_flag.is_set()


def _by(who: Identity | None):
    """Who, as the ledger keeps it on a bet row."""
    return None if who is None else {"name": who.name, "role": who.role}
