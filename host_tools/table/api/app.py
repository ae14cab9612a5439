"""The table's HTTP API as an ASGI app (FastAPI on uvicorn): routes, typed models, roles, audit.

Same routes and meaning as before (docs/daemon.md); every request except `/health` and
`/openapi.json` carries `Authorization: Bearer <token>` with a role high enough for the route
(401 without a live token, 403 with too low a role). Errors are `{"error": code, "message": text}`.
A guard in front of the app refuses a foreign Host header (421), a cross-origin request (403),
a body that is not JSON (415), too large (413), too deep or with too large a number (400).

`TableHost` is the one adapter between this app and the daemon: every call into `Daemon`/`Table`
goes through it, so a change of the daemon's interface is met here alone.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from contextlib import contextmanager
from typing import Annotated, Any, Literal, Optional, Union

from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

from host_tools.table.daemon import config as cfg
from host_tools.table.journal.audit import Audit
from host_tools.table.api.auth import Identity, Tokens
from host_tools.table.game.committer import Committer
from host_tools.table.journal.events_log import EPHEMERAL, KINDS, EventLog
from host_tools.table.journal.store import Journal
from host_tools.table.game.limits import LimitsStore
from host_tools.table.api.metrics import CONTENT_TYPE, Metrics
from host_tools.table.daemon.service import Daemon
from host_tools.table.game.table import Invalid, NotFound, Refused
from host_tools.table.api.throttle import Throttle, client_of

from cylindre.rules.limits import KINDS as LIMIT_KINDS, LimitError, Limits

log = logging.getLogger("cylindre.api")
MAX_DEPTH = 8           # nesting of a request body (a bet needs 3)
MAX_INT_DIGITS = 15     # a number in a request body (cents up to 10^15 - 1)
BET_ID = r"^[A-Za-z0-9._-]{1,40}$"
BET_KINDS = frozenset(("bet", "cancel"))    # events naming a player and a stake: croupier and above


class ApiError(Exception):
    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


# -- the adapter to the daemon ------------------------------------------------------------------------
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
        self.committer = Committer(self.table)
        self.pit = None                         # the pit's part (web_pages.Pit), set by create_app
        self.floor = None                       # the link to the casino floor (floor_publisher.FloorLink), if any
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

    async def place_async(self, body, idempotency_key=None, who: Identity | None = None) -> dict:
        """`place` on the server's event loop: awaits the bet's group without holding a thread."""
        with self._counted():
            return await self.committer.place_async(body, idempotency_key, _by(who))

    @contextmanager
    def _counted(self):
        try:
            yield
        except Refused as e:
            self.metrics.refused.labels(e.code).inc()
            raise
        except Invalid:
            self.metrics.refused.labels("invalid").inc()
            raise
        self.metrics.placed.inc()

    def cancel(self, bid, who: Identity):
        """Withdraw an open bet. A bet belongs to the token that placed it (`placed_by`): a croupier
        (a terminal, a croupier's tablet) withdraws its own; the chef and the admin any. A refusal is
        403 not_your_bet, audited (done false). The owner never changes, so it is read first."""
        owner = (self.table.bet(bid).get("placed_by") or {}).get("name")
        if not who.may("chef") and owner != who.name:
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


# -- models -------------------------------------------------------------------------------------------
class Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class Error(BaseModel):
    error: str = Field(description="a stable code: bad_request, invalid_bet, unauthorized, forbidden, not_found, ...")
    message: str


class ZeroMove(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    move: StrictStr = Field(max_length=16)


Pocket = Annotated[StrictInt, Field(ge=0, le=36)]


class BetIn(BaseModel):
    """A bet (docs/settle.md), as the generated document shows it. The gate is the table's own
    `parse_bet_request` (framework-free): it refuses, naming it, a field not listed here or one only
    the table sets (`carried`, `status`, `consent`, ...). Money is integer cents."""
    model_config = ConfigDict(extra="forbid", strict=True)
    player: StrictStr = Field(min_length=1, max_length=64, description="no control characters")
    type: StrictStr = Field(max_length=64, description="plein cheval transversale carre sixain douzaine colonne rouge "
                            "noir pair impair manque passe, or a called bet: voisins tiers orphelins nassa jeu_zero "
                            "voisins_numero finale finale_cheval finale_chevaux")
    bet: Optional[StrictStr] = Field(default=None, max_length=64, description="alias of type")
    numbers: Optional[Union[list[StrictInt], StrictInt]] = Field(default=None, description="the numbers covered (0..36)")
    number: Optional[StrictInt] = Field(default=None, description="alias of numbers (one number); voisins: the centre")
    which: Optional[Union[StrictInt, list[StrictInt]]] = Field(
        default=None, description="dozen or column 1..3; two of them is a straddle, awaiting the chef's consent")
    stake: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents (bets on the layout)")
    unit: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents per chip (called bets)")
    replay: Optional[StrictStr] = Field(default=None, max_length=64, description="called bets: refaire, completer or tout")
    rejouer: Optional[StrictStr] = Field(default=None, max_length=64, description="alias of replay")
    zero_choice: Optional[Union[Literal["prison", "partage"], ZeroMove]] = Field(
        default=None, description='even chances only: at zero "prison" (default), "partage" or {"move": "<chance>"}')
    chance: Optional[StrictStr] = Field(default=None, max_length=64, description="an even chance by name")
    chances: Optional[list[StrictStr]] = Field(default=None, max_length=37, description="even chances by name")
    final: Optional[Union[StrictInt, StrictStr, list[StrictInt]]] = Field(
        default=None, description='finales: a last digit, or a pair "8/9"')
    form: Optional[StrictStr] = Field(default=None, max_length=64, description='orphelins: "plein" for en plein')
    forme: Optional[StrictStr] = Field(default=None, max_length=64, description="alias of form")
    k: Optional[StrictInt] = Field(default=None, description="voisins of a number: how many neighbours each side")
    neighbours: Optional[StrictInt] = Field(default=None, description="alias of k")
    neighbors: Optional[StrictInt] = Field(default=None, description="alias of k")
    voisins: Optional[StrictInt] = Field(default=None, description="alias of k")
    numero: Optional[StrictInt] = Field(default=None, description="voisins of a number: the centre")
    centre: Optional[StrictInt] = Field(default=None, description="alias of numero")
    center: Optional[StrictInt] = Field(default=None, description="alias of numero")
    a_placer: Optional[bool] = Field(default=None, description="called bets: payés à placer")
    payes_a_placer: Optional[bool] = Field(default=None, description="alias of a_placer")
    paye_a_placer: Optional[bool] = Field(default=None, description="alias of a_placer")
    placed: Optional[bool] = Field(default=None, description="alias of a_placer")


class Placed(Model):
    id: str
    player: str
    label: str
    stake: int
    played: int
    status: str
    bet: dict[str, Any]


class RefusedBet(Error):
    bet: Optional[Placed] = None


class Who(BaseModel):
    name: str = Field(description="the token's name")
    role: str


class BetRow(Model):
    id: str
    player: str
    placed_at: float
    bet: dict[str, Any]
    label: Optional[str] = Field(default=None, description="the bet in the croupier's words: 'cheval 14/17', 'jeu zéro'")
    stake: int
    status: str = Field(description="open locked refused cancelled settled held refunded ...")
    spin: Optional[int] = None
    reason: Optional[str] = None
    result: Optional[dict[str, Any]] = None
    placed_by: Optional[Who] = Field(default=None, description="the token that placed it")
    withdrawn_by: Optional[Who] = Field(default=None, description="the token that withdrew it")


class Cancelled(Model):
    id: str
    status: str


class TableState(Model):
    wheel: str
    phase: str = Field(description="closed, betting or no_more_bets")
    spin: Optional[int] = None
    locked_spin: Optional[int] = None
    last_number: Optional[int] = None
    bets_on_table: int
    stakes_on_table: int = Field(description="cents")
    bets_held: int
    prisoners: list[Any]
    carry: list[Any]
    croupier: Optional[str] = Field(default=None, description="the croupier on duty, as the chef set it (PUT /table/croupier)")
    croupier_since: Optional[float] = None
    session_since: Optional[float] = Field(default=None, description="when the table last opened (None while closed)")


class LinkProblem(Model):
    code: str = Field(description="port_missing, wrong_wheel, wheel_unknown, not_authentic, garbage, slow_line, silent, down")
    text: str = Field(description="what the host sees, in French (the pit, cylindre status)")
    advice: str = Field(description="what to check or do, in French")


class LinkState(Model):
    port: Optional[str] = None
    port_open: bool
    session: bool
    boot: Optional[str] = None
    next_event: Optional[int] = None
    acked: Optional[int] = None
    last_heard: Optional[float] = None
    counts: dict[str, int]
    sessions: int
    up: bool = Field(True, description="a session with the wheel is up and the wheel is the one the table knows")
    problem: Optional[LinkProblem] = Field(None, description="why the link is not up (null while it is)")
    rtt_ms: Optional[float] = Field(None, description="the round trip of the last HELLO answered, ms")


class WheelState(Model):
    id: str
    welcome: Optional[dict[str, Any]] = None
    status: Optional[dict[str, Any]] = None


class State(Model):
    link: LinkState
    wheel: WheelState
    table: TableState


class TableChange(Model):
    table: TableState
    wheel_confirmed: bool = Field(description="the wheel acknowledged the change (false: told at its next connection)")


class HistoryRow(Model):
    spin: int
    number: int
    at: float
    staked: int
    paid: int


class RecallEvent(Model):
    boot: str
    seq: int
    received_at: float
    event: dict[str, Any]
    frame_hex: str


class Said(Model):
    at: float
    text: str


class AuditRow(Model):
    id: int
    at: float
    who: str
    role: str
    action: str
    target: Optional[str] = None
    spin: Optional[int] = None
    before: Any = None
    after: Any = None
    answer: Any = None
    done: bool


class Recall(Model):
    wheel: str
    spin: int
    events: list[RecallEvent]
    settlement: Optional[dict[str, Any]] = None
    bets: list[BetRow]
    announcements: list[Said]
    audit: list[AuditRow] = Field(description="privileged actions that touched this spin")


class ResolveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["refund", "play"]


class WheelAcceptIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    serial: Optional[str] = Field(None, max_length=64, description="the board serial the chef checked (refused if another waits)")
    epoch: Optional[str] = Field(None, max_length=64, description="the counter epoch the chef checked")


class WheelAccepted(Model):
    before: Optional[dict[str, Any]] = Field(None, description="the wheel the table knew")
    wheel: dict[str, Any] = Field(description="the wheel the table knows now (Daemon.wheel_identity)")


class SettingIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: StrictStr = Field(min_length=1, max_length=40)
    value: Union[StrictInt, bool, StrictStr] = Field(description="the wheel enforces its safe bounds")


class KindLimit(BaseModel):
    min: int = Field(description="cents")
    max: int = Field(description="cents")


class KindLimitIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    min: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents; left out: unchanged")
    max: Optional[StrictInt] = Field(default=None, ge=1, le=10**11, description="cents; left out: unchanged")


class Health(Model):
    ok: bool
    reasons: list[str]


# -- the guard in front of the app --------------------------------------------------------------------
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")
UNSAFE = ("POST", "PUT", "DELETE", "PATCH")


BODY = "cylindre.json"      # the scope's key of the body as the guard parsed it (POST /bets reads it)


class Guard:
    """Pure ASGI middleware: Host and Origin checks (DNS rebinding, cross-site requests), JSON bodies
    only, of bounded size, depth and numbers, before any route sees them. The body it parsed is
    left in the scope (`BODY`), so a route need not parse it again."""

    def __init__(self, app, hosts, origins, max_body):
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.origins = set(origins)
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        hostname = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if hostname.lower() not in self.hosts:
            return await _error(send, 421, "misdirected", f"this daemon does not serve the host {host[:80]!r}")
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins and not _same_origin(origin, host, scope):
            return await _error(send, 403, "cross_origin", f"requests from {origin[:80]!r} are not allowed")
        if scope["method"] not in UNSAFE:
            return await self.app(scope, receive, send)
        ctype = headers.get("content-type")
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or len(length) > 12):
            return await _error(send, 400, "bad_request", "Content-Length must be a non-negative integer")
        if length is not None and int(length) > self.max_body:
            return await _error(send, 413, "too_large", f"body over {self.max_body} bytes")
        body, more = b"", True
        while more:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
            if len(body) > self.max_body:
                return await _error(send, 413, "too_large", f"body over {self.max_body} bytes")
        if (body or ctype is not None) and (ctype or "").split(";")[0].strip().lower() != "application/json":
            return await _error(send, 415, "unsupported_media_type", "the body must be application/json")
        if body:
            problem, value = _parse_json(body)
            if problem:
                return await _error(send, 400, "bad_json", problem)
            scope[BODY] = value
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


def _by(who: Identity | None):
    """Who, as the ledger keeps it on a bet row."""
    return None if who is None else {"name": who.name, "role": who.role}


def _same_origin(origin, host, scope):
    scheme = "https" if scope.get("scheme") == "https" else "http"
    return origin.lower() in (f"{scheme}://{host}".lower(), f"https://{host}".lower())


def _parse_json(body: bytes) -> tuple[str | None, Any]:
    """(None, the value) for an acceptable JSON body, (what is wrong, None) otherwise."""
    def bounded_int(text):
        if len(text.lstrip("-")) > MAX_INT_DIGITS:
            raise ValueError(f"a number of more than {MAX_INT_DIGITS} digits")
        return int(text)

    def bad_constant(name):
        raise ValueError(f"{name} is not JSON")

    if _bracket_depth(body) > MAX_DEPTH:            # before parsing: 5,000 brackets cost no recursion
        return f"JSON nested deeper than {MAX_DEPTH} levels", None
    try:
        return None, json.loads(body.decode("utf-8"), parse_int=bounded_int, parse_constant=bad_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        return f"the body is not acceptable JSON: {str(e)[:200]}", None


def _bracket_depth(raw: bytes) -> int:
    """The deepest nesting of brackets in a JSON text, outside strings."""
    depth = top = 0
    in_str = esc = False
    for b in raw:
        if in_str:
            if esc:
                esc = False
            elif b == 0x5C:
                esc = True
            elif b == 0x22:
                in_str = False
        elif b == 0x22:
            in_str = True
        elif b in (0x5B, 0x7B):
            depth += 1
            top = max(top, depth)
        elif b in (0x5D, 0x7D):
            depth -= 1
    return top


async def _error(send, status, code, message):
    data = json.dumps({"error": code, "message": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})


# -- the app ------------------------------------------------------------------------------------------
E = {"model": Error}
ERRORS = {400: E, 401: E, 403: E, 413: E, 415: E, 421: E, 429: E}
bearer = HTTPBearer(auto_error=False, description="a token from `cylindre token add NAME --role ROLE`")


def create_app(host: TableHost, conf: dict | None = None) -> FastAPI:
    conf = cfg.validate({**cfg.defaults(), **(conf or {})})
    bind_host, _ = cfg.hostport(conf["http"])
    from host_tools import version
    app = FastAPI(title="Cylindre table daemon", version=version(),
                  description="Bets, table state, live events, history, game recall and audit of one roulette "
                              "table. Money is integer cents. Every route but /health and /openapi.json needs "
                              "a bearer token whose role is high enough: display < croupier < chef < admin. A display "
                              "token (a public screen's) reads what a tote board shows, never a bet. A bet is "
                              "withdrawn by the token that placed it, a chef or an admin. An address that sends "
                              "too many unknown tokens is answered 429 with Retry-After.",
                  docs_url=None, redoc_url=None, openapi_url="/openapi.json")
    audit = host.audit

    known_of: dict[int, frozenset] = {}        # a route's query parameters, found at its first request

    async def known_query(request: Request):
        """An unknown or repeated query parameter is refused, not ignored (a typo in a filter would widen it)."""
        if not request.scope.get("query_string"):
            return
        route = request.scope.get("route")
        known = known_of.get(id(route))
        if known is None:
            known = {p.alias for p in route.dependant.query_params} if route is not None else set()
            for dep in (route.dependant.dependencies if route is not None else ()):
                known |= {p.alias for p in dep.query_params}
            known = known_of[id(route)] = frozenset(known)
        keys = [k for k, _ in request.query_params.multi_items()]
        if len(keys) != len(set(keys)):
            raise ApiError(400, "bad_parameter", "a query parameter is given twice")
        unknown = sorted(set(keys) - known)
        if unknown:
            raise ApiError(400, "bad_parameter", f"unknown query parameter {unknown[0][:40]!r}"
                           + (f"; known: {', '.join(sorted(known))}" if known else ""))

    app.router.dependencies.append(Depends(known_query))

    throttle = app.state.throttle = Throttle()

    def need(role: str, action: str | None = None):
        """The route's dependency on a token of `role` at least. On the event loop: the token is read
        on its own connection (auth.py), which never waits for the journal; the audit row of a
        refusal is written on a worker thread (it takes the journal). An address that presented
        too many unknown tokens waits (429, throttle.py) before any token of it is read again; the
        address is the proxy's word for it only with --behind-proxy (uvicorn's proxy headers)."""
        async def check(request: Request, cred: Optional[HTTPAuthorizationCredentials] = Depends(bearer)) -> Identity:
            client = client_of(request.client.host if request.client else None)
            wait, line = throttle.check(client)
            if wait is not None:
                if line:
                    log.warning("%s", line)
                raise ApiError(429, "too_many_failures", f"too many unknown tokens from {client}: retry in {wait} s",
                               headers={"Retry-After": str(wait)})
            who = host.tokens.identify(cred.credentials if cred else None)
            if who is None:
                if cred is not None and cred.credentials:       # a token given, and not a live one: a guess
                    line, throttled = throttle.failed(client)
                    if line:
                        log.warning("%s", line)
                    host.metrics.auth_refused.labels("throttled" if throttled else "unknown_token").inc()
                    if throttled:
                        await run_in_threadpool(audit.record, "-", "-", "auth_throttled", client, None, throttled,
                                                {"refused": "429 until the address's bucket refills"}, None, False)
                raise ApiError(401, "unauthorized", "a live token is needed: Authorization: Bearer <token>")
            if not who.may(role):
                if action:
                    await run_in_threadpool(audit.record, who.name, who.role, action, done=False,
                                            answer={"refused": f"needs {role}"})
                raise ApiError(403, "forbidden", f"{who.role} may not do this: it needs {role}")
            return who
        return check

    # -- errors ----------------------------------------------------------------------------------------
    @app.exception_handler(ApiError)
    async def _api_error(request, e: ApiError):
        return JSONResponse({"error": e.code, "message": e.message}, e.status,
                            headers={"WWW-Authenticate": "Bearer"} if e.status == 401 else e.headers)

    @app.exception_handler(NotFound)
    async def _not_found(request, e):
        return JSONResponse({"error": "not_found", "message": str(e)}, 404)

    @app.exception_handler(Refused)
    async def _refused(request, e: Refused):
        return JSONResponse({"error": e.code, "message": e.message}, e.http)

    @app.exception_handler(Invalid)
    async def _invalid(request, e):
        code = "invalid_bet" if request.url.path == "/bets" else "bad_request"
        return JSONResponse({"error": code, "message": str(e)}, 400)

    @app.exception_handler(RequestValidationError)
    async def _validation(request, e: RequestValidationError):
        errs = e.errors()
        where = errs[0]["loc"][0] if errs and errs[0].get("loc") else "body"
        code = "bad_parameter" if where in ("query", "path", "header") else (
            "invalid_bet" if request.url.path == "/bets" else "bad_request")
        text = "; ".join(f"{'.'.join(str(x) for x in er.get('loc', ())[1:]) or where}: {er.get('msg')}" for er in errs[:5])
        return JSONResponse({"error": code, "message": text[:500]}, 400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request, e):
        code = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code, "bad_request")
        msg = f"no such resource {request.url.path[:80]} (see /openapi.json)" if e.status_code == 404 else str(e.detail)
        headers = getattr(e, "headers", None)
        if e.status_code == 405:        # every method of the path, not only the first route's
            methods = {m for r in app.routes if getattr(r, "path_regex", None) and r.path_regex.match(request.url.path)
                       for m in (getattr(r, "methods", None) or ())}
            headers = {"Allow": ", ".join(sorted(methods))}
            msg = f"{request.method} is not allowed on {request.url.path[:80]}"
        return JSONResponse({"error": code, "message": msg}, e.status_code, headers=headers)

    @app.exception_handler(Exception)
    async def _internal(request, e):
        log.error("API error on %s %s", request.method, request.url.path, exc_info=e)
        return JSONResponse({"error": "internal", "message": "internal error (see the daemon log)"}, 500)

    # -- public ----------------------------------------------------------------------------------------
    @app.get("/health", response_model=Health, responses={503: {"model": Health}}, tags=["operations"],
             summary="200 when the link is up and the journal writable, 503 with the reasons otherwise (no token)")
    def health():
        ok, reasons = host.health()
        return JSONResponse({"ok": ok, "reasons": reasons}, 200 if ok else 503)

    # -- reads (display: what a tote board shows; the bets themselves need croupier) ----------------------
    display = Depends(need("display"))
    croupier = Depends(need("croupier"))

    @app.get("/metrics", tags=["operations"], summary="Prometheus text format, cylindre_ series",
             responses={200: {"content": {CONTENT_TYPE.split(";")[0]: {"schema": {"type": "string"}}}}, **ERRORS},
             response_class=Response)
    def metrics(who=display):
        return Response(host.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/state", response_model=State, responses=ERRORS, summary="the link, the wheel and the table now")
    def state(who=display):
        st = host.state()
        if not who.may("croupier"):         # a public screen: no bet id, no stake of a player's bet
            table = st["table"] = dict(st["table"])
            for key in ("prisoners", "carry"):
                table[key] = [{k: v for k, v in p.items() if k not in ("id", "stake", "player")} for p in table[key]]
        return st

    @app.get("/bets", response_model=list[BetRow], responses=ERRORS, summary="bets, newest first (croupier: a display "
             "token, a public screen's, reads no bet)")
    def bets(who=croupier, status: Optional[str] = Query(None, max_length=20), spin: Optional[int] = Query(None, ge=0, le=10**9),
             player: Optional[str] = Query(None, max_length=64), limit: int = Query(500, ge=1, le=100000)):
        return host.bets(status=status, spin=spin, player=player, limit=limit)

    @app.get("/bets/{bid}", response_model=BetRow, responses={**ERRORS, 404: E}, summary="one bet with its result once settled (croupier)")
    def bet(who=croupier, bid: str = Path(pattern=BET_ID)):
        return host.bet(bid)

    @app.get("/history", response_model=list[HistoryRow], responses=ERRORS, summary="settled spins, newest first")
    def history(who=display, limit: int = Query(10, ge=1, le=10000)):
        return host.history(limit)

    @app.get("/spins/{spin}", response_model=Recall, responses={**ERRORS, 404: E},
             summary="game recall: the wheel's events with their frames, the bets, the settlement, the audit rows "
                     "(croupier)")
    def recall(who=croupier, spin: int = Path(ge=-10**12, le=10**12)):
        return host.recall(spin)

    @app.get("/wheel/settings", response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
             summary="the wheel's spin settings")
    def settings(who=display):
        return host.wheel("get_settings")

    @app.get("/wheel/status", response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
             summary="the wheel's status and link figures, asked now")
    def wheel_status(who=display):
        return host.wheel("status")

    @app.get("/wheel/history", response_model=list[dict[str, Any]], responses={**ERRORS, 502: E, 504: E},
             summary="the wheel's last 10 games, oldest first")
    def wheel_history(who=display):
        return host.wheel("history") or []

    @app.get("/events", tags=["events"], response_class=StreamingResponse,
             responses={200: {"description": "Server-Sent Events: `id:` (journaled kinds), `event:` kind, `data:` JSON",
                              "content": {"text/event-stream": {"schema": {"type": "string"}}}}, **ERRORS},
             summary="live events; with Last-Event-ID the journaled ones after it first. kinds=a,b (default all but "
                     "status). A display token is streamed no bet: bet and cancel need croupier (403 if asked)")
    async def events(request: Request, who=display,
                     kinds: Optional[str] = Query(None, max_length=200, description="comma-separated: " + ",".join(KINDS)),
                     last_event_id: Optional[str] = Header(None, max_length=20)):
        chosen = None
        if kinds is not None:
            chosen = [k.strip() for k in kinds.split(",") if k.strip()]
            bad = [k for k in chosen if k not in KINDS]
            if bad or not chosen:
                raise ApiError(400, "bad_parameter", f"kinds: unknown {bad or kinds!r}; known: {', '.join(KINDS)}")
        if not who.may("croupier"):
            if chosen is not None and BET_KINDS & set(chosen):
                raise ApiError(403, "forbidden", f"{who.role} may not read the bets: kinds "
                               f"{', '.join(sorted(BET_KINDS))} need croupier")
            chosen = [k for k in (chosen or [k for k in KINDS if k not in EPHEMERAL]) if k not in BET_KINDS]
        after = None
        if last_event_id is not None:
            if not last_event_id.strip().isdigit():
                raise ApiError(400, "bad_parameter", "Last-Event-ID must be an event id (an integer)")
            after = int(last_event_id)
        return StreamingResponse(_stream(host, chosen, after), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    # -- bets (croupier) -------------------------------------------------------------------------------
    @app.post("/bets", status_code=201, response_model=Placed, responses={**ERRORS, 409: {"model": RefusedBet}, 422: {"model": RefusedBet}},
              summary="place a bet (plain or called); 409 when refused (table_closed, poussette, wheel_not_heard: "
                      "recorded); an unknown field or one the table sets (carried, status, consent, ...) is 400; "
                      "a retry with the same Idempotency-Key gets the first answer, with another request 422 "
                      "idempotency_mismatch",
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                  "schema": {"$ref": "#/components/schemas/BetIn"}}}}})
    async def place(request: Request, who=Depends(need("croupier", "bet_place")),
                    idempotency_key: Optional[str] = Header(None, max_length=128, description="1 to 128 printable "
                                                            "ASCII characters: a retry with it returns the first answer")):
        # the body as the guard parsed it (the document's requestBody is set above); the table's own
        # gate checks it; the answer is the table's dict as is (it is a `Placed`: a test holds it)
        if BODY not in request.scope:
            raise ApiError(400, "invalid_bet", "body: a bet is required (a JSON object)")
        try:
            return JSONResponse(await host.place_async(request.scope[BODY], idempotency_key, who), 201)
        except Refused as e:
            return JSONResponse({"error": e.code, "message": e.message, "bet": e.bet}, e.http)

    @app.delete("/bets/{bid}", response_model=Cancelled, responses={**ERRORS, 404: E, 409: E},
                summary="withdraw an open bet: the token that placed it, a chef or an admin (403 not_your_bet "
                        "otherwise, audited)")
    def cancel(bid: str = Path(pattern=BET_ID), who=Depends(need("croupier", "bet_cancel"))):
        return host.cancel(bid, who)

    # -- the table (chef) ------------------------------------------------------------------------------
    @app.post("/table/open", response_model=TableChange, responses=ERRORS, summary="open the table (tells the wheel)")
    def table_open(who=Depends(need("chef", "table_open"))):
        return host.set_open(True, who)

    @app.post("/table/close", response_model=TableChange, responses=ERRORS,
              summary="close the table (tells the wheel; a spin in progress is void)")
    def table_close(who=Depends(need("chef", "table_close"))):
        return host.set_open(False, who)

    @app.post("/wheel/accept", response_model=WheelAccepted, responses={**ERRORS, 409: E},
              summary="accept the wheel that answers and that the table does not know (another board, key or "
                      "counter: docs/daemon.md, swapping the wheel); audited")
    def wheel_accept(body: Optional[WheelAcceptIn] = None, who=Depends(need("chef", "wheel_accept"))):
        return host.accept_wheel(who, body.model_dump() if body is not None else None)

    @app.get("/table/limits", response_model=dict[str, KindLimit], responses=ERRORS,
             summary="the table limits in force, by kind: " + ", ".join(LIMIT_KINDS) + " (cents)")
    def limits(who=display):
        return host.table.limits.to_json()

    @app.put("/table/limits", response_model=dict[str, KindLimit], responses={**ERRORS, 409: E},
             summary="change the limits of some kinds ({kind: {min, max}}, cents; even-chance names mean simple), "
                     "between spins only (409 spin_in_progress); audited before -> after")
    def set_limits(body: dict[str, KindLimitIn], who=Depends(need("admin", "table_limits"))):
        return host.set_limits({k: v.model_dump(exclude_none=True) for k, v in body.items()}, who)

    @app.post("/bets/{bid}/resolve", response_model=BetRow, responses={**ERRORS, 404: E, 409: E},
              summary="the supervisor's decision on a held bet: refund, or play the next spin")
    def resolve(body: ResolveIn, bid: str = Path(pattern=BET_ID), who=Depends(need("chef", "bet_resolve"))):
        return host.resolve(bid, body.action, who)

    @app.post("/bets/{bid}/consent", response_model=BetRow, responses={**ERRORS, 404: E, 409: E},
              summary="the chef de table's consent to a straddle awaiting it (two dozens or two columns): "
                      "the bet joins the layout; 409 not_awaiting_consent otherwise")
    def consent(bid: str = Path(pattern=BET_ID), who=Depends(need("chef", "bet_consent"))):
        return host.consent(bid, who)

    @app.get("/audit", response_model=list[AuditRow], responses=ERRORS, summary="privileged actions, newest first")
    def audit_rows(who=Depends(need("chef")), limit: int = Query(100, ge=1, le=10000),
                   before: Optional[int] = Query(None, ge=1, le=2**62, description="rows with a smaller id"),
                   spin: Optional[int] = Query(None, ge=-10**12, le=10**12),
                   by: Optional[str] = Query(None, max_length=64, description="token name"),
                   action: Optional[str] = Query(None, max_length=40)):
        return audit.rows(limit=limit, before_id=before, spin=spin, who=by, action=action)

    # -- the wheel (admin) -----------------------------------------------------------------------------
    @app.put("/wheel/settings", response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
             summary="change one setting; the wheel enforces safe bounds (502 when it refuses)")
    def set_setting(body: SettingIn, who=Depends(need("admin", "wheel_setting"))):
        before = None
        try:
            before = (host.wheel("get_settings") or {}).get(body.name)
        except ApiError:
            pass
        try:
            out = host.wheel("set_setting", {"name": body.name, "value": body.value})
        except ApiError as e:
            audit.record(who.name, who.role, "wheel_setting", body.name, before, body.value,
                         answer={"error": e.code, "message": e.message}, done=False)
            raise
        audit.record(who.name, who.role, "wheel_setting", body.name, before, (out or {}).get(body.name),
                     answer={"ok": True})
        return out

    @app.post("/wheel/time", response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
              summary="set the wheel's clock to the host's")
    def set_time(who=Depends(need("admin", "wheel_time"))):
        epoch_ms = int(time.time() * 1000)
        try:
            out = host.wheel("set_time", {"epoch_ms": epoch_ms})
        except ApiError as e:
            audit.record(who.name, who.role, "wheel_time", None, None, epoch_ms,
                         answer={"error": e.code, "message": e.message}, done=False)
            raise
        audit.record(who.name, who.role, "wheel_time", None, None, epoch_ms, answer=out)
        return out

    from host_tools.table.api.pages import add_pages           # /, /marquee, /pit, /stats, assets, alerts, croupier, statistics
    app.state.pit = add_pages(app, host, need, conf)
    _document_errors(app)
    hosts = set(LOOPBACK_HOSTS) | {bind_host} | set(conf["allowed_hosts"])
    if conf["cors_origins"]:
        from starlette.middleware.cors import CORSMiddleware
        app.add_middleware(CORSMiddleware, allow_origins=conf["cors_origins"], allow_methods=["GET", "POST", "PUT", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "Last-Event-ID"])
    app.add_middleware(Guard, hosts=hosts, origins=conf["cors_origins"], max_body=conf["max_body"])
    app.state.host = host
    return app


def _document_errors(app):
    """The generated document, with our 400 in place of FastAPI's 422 and an Error for any other status."""
    base = app.openapi

    def openapi():
        if app.openapi_schema:
            return app.openapi_schema
        doc = base()
        for item in doc.get("paths", {}).values():
            for op in item.values():
                if not isinstance(op, dict) or "responses" not in op:
                    continue
                r = op["responses"]
                if "HTTPValidationError" in json.dumps(r.get("422", {})):
                    r.pop("422")            # FastAPI's own: our validation errors are 400s
                r["default"] = {"description": "an error", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Error"}}}}
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        bet = BetIn.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(bet.pop("$defs", {}))
        schemas["BetIn"] = bet
        app.openapi_schema = doc
        return doc

    app.openapi = openapi


async def _stream(host: TableHost, kinds, after):
    """SSE: journaled events after `after` (if given), then live ones; never one twice, none lost."""
    loop = asyncio.get_running_loop()
    q = host.events.subscribe(kinds=kinds, loop=loop)      # first: nothing published from now is missed
    try:
        yield b": cylindre live events\n\n"
        last = after
        if after is not None:
            oldest, _ = await run_in_threadpool(host.events.bounds)
            if oldest and after < oldest - 1:
                yield _sse(None, "resync", json.dumps({"oldest": oldest, "asked": after}))
            while True:
                rows = await run_in_threadpool(host.events.since, last, kinds, 1000)
                for eid, kind, data in rows:
                    yield _sse(eid, kind, data)
                    last = eid
                if len(rows) < 1000:
                    break
        while not host.stopping():
            try:
                msg = await asyncio.wait_for(q.get(), 15)
            except asyncio.TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if msg is None:
                break
            eid, kind, data = msg
            if eid is not None and last is not None and eid <= last:
                continue                                     # already sent from the journal
            yield _sse(eid, kind, data)
            if eid is not None:
                last = eid
    finally:
        host.events.unsubscribe(q)


def _sse(eid, kind, data) -> bytes:
    head = f"id: {eid}\n" if eid is not None else ""
    return f"{head}event: {kind}\ndata: {data}\n\n".encode("utf-8")


# -- serving -------------------------------------------------------------------------------------------
class _GentleBadRequest:
    """Part of our HTTP/1.1 protocols: a request the parser cannot take (a negative or malformed
    Content-Length, a bad header line) is answered with our JSON error instead of uvicorn's text/plain
    one. The connection then closes gently: our side first (FIN), the rest of the client's request
    read and dropped for up to LINGER_S, so the client reads the answer instead of a connection reset.
    And every connection gets TCP_NODELAY (`_no_delay`)."""

    LINGER_S = 2.0
    _lingering = False
    BAD_REQUEST = json.dumps({"error": "bad_request", "message": "malformed HTTP request (request line, a header, "
                              "or a Content-Length that is not a non-negative integer)"}).encode()

    def connection_made(self, transport) -> None:
        _no_delay(transport)
        super().connection_made(transport)

    def send_400_response(self, msg: str) -> None:
        data = self.BAD_REQUEST
        self.transport.write(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (len(data), data))
        self._lingering = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(self.LINGER_S, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if not self._lingering:
            super().data_received(data)

    def eof_received(self) -> None:
        if self._lingering:
            self.transport.close()
        else:
            super().eof_received()


class JsonH11(_GentleBadRequest, H11Protocol):
    """uvicorn's pure-Python HTTP/1.1 protocol (h11), with our 400 and TCP_NODELAY."""


def http_protocol():
    """The HTTP/1.1 protocol the daemon serves with: uvicorn's on httptools (the C parser of
    Node's llhttp: 0.55 against 0.64 ms of daemon CPU a bet with h11, docs/daemon.md "Benchmark") when it is
    installed (a dependency), else the one on h11; both with our JSON 400 and TCP_NODELAY."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:                 # httptools has no wheel for this platform: h11 serves
        return JsonH11

    class JsonHttpTools(_GentleBadRequest, HttpToolsProtocol):
        """uvicorn's HTTP/1.1 protocol on httptools, with our 400 and TCP_NODELAY."""

    return JsonHttpTools


def _no_delay(transport) -> None:
    """TCP_NODELAY on a connection. asyncio sets it only on sockets made with proto IPPROTO_TCP,
    and the daemon's listening socket (cli.py) is made with proto 0: without it an answer's
    head and body went as two segments, the body held (Nagle) until the client's delayed ACK of
    the head, 40 ms later, so every request took at least 44 ms (docs/daemon.md, "Benchmark")."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:                 # the connection is already gone: nothing to speed up
            pass


def server(app, *, behind_proxy=False, tls_cert=None, tls_key=None, access_log=False, http=None):
    """The uvicorn server of the app (run it with `.run(sockets=[...])`); `http`: the protocol class
    (default `http_protocol()`)."""
    import uvicorn
    return uvicorn.Server(uvicorn.Config(
        app, http=http or http_protocol(), log_config=None, access_log=access_log, proxy_headers=behind_proxy,
        ssl_certfile=tls_cert, ssl_keyfile=tls_key, timeout_graceful_shutdown=2, server_header=False,
        lifespan="off"))
