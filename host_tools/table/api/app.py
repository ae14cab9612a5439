"""The table's HTTP API as an ASGI app (FastAPI on uvicorn): routes, typed models, roles, audit.

The routes and their meaning are in docs/integrators/http-api.md; every request except `/health` and
`/openapi.json` carries `Authorization: Bearer <token>` with a role high enough for the route
(401 without a live token, 403 with too low a role). Errors are `{"error": code, "message": text}`.
A guard in front of the app refuses a foreign Host header (421), a cross-origin request (403),
a body that is not JSON (415), too large (413), too deep or with too large a number (400).

The app sees the daemon through `TableHost` (table/daemon/host.py), the one adapter: every call
into `Daemon`/`Table` goes through it, so a change of the daemon's interface is met there alone.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from host_tools.table.api import errors, sse
from host_tools.table.api.errors import ApiError
from host_tools.table.api.guard import BODY, LOOPBACK_HOSTS, Guard
from host_tools.table.api.metrics import CONTENT_TYPE
from host_tools.table.api.models import (E, ERRORS, AuditRow, BetIn, BetRow, Cancelled, Health, HistoryRow, KindLimit,
                                         KindLimitIn, Placed, Recall, RefusedBet, ResolveIn, SettingIn, State,
                                         TableChange, WheelAccepted, WheelAcceptIn)
from host_tools.table.api.roles import needs
from host_tools.table.api.throttle import Throttle
from host_tools.table import config as cfg
from host_tools.table.game.table import Refused
from host_tools.table.journal.events_log import EPHEMERAL, KINDS

from cylindre.rules.limits import KINDS as LIMIT_KINDS

BET_ID = r"^[A-Za-z0-9._-]{1,40}$"
BET_KINDS = frozenset(("bet", "cancel", "slip"))    # events naming a player and a stake: croupier and above


def create_app(host, conf: dict | None = None, fast_path: bool = True) -> FastAPI:
    """The table app on `host`, a `TableHost` (table/daemon/host.py: the daemon as the app sees it).
    `fast_path`: the ordinary POST /bets and POST /slips served in front of FastAPI (api/fastpath.py;
    False only for the tests that compare both)."""
    conf = cfg.validate({**cfg.defaults(), **(conf or {})})
    bind_host, _ = cfg.hostport(conf["http"])
    from host_tools import version
    import inspect
    quiet = ({"telemetry": {"tracing": False, "metrics": False, "logs": False}}   # no OpenTelemetry: not looked
             if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {})   # for at every request
    app = FastAPI(title="Cylindre table daemon", version=version(), **quiet,
                  description="Bets, table state, live events, history, game recall and audit of one roulette "
                              "table. Money is integer cents. Every route but /health and /openapi.json needs "
                              "a bearer token whose role is high enough: display < terminal < croupier < chef < admin. A display "
                              "token (a public screen's) reads what a tote board shows, never a bet. A bet is "
                              "withdrawn by the token that placed it, a chef or an admin. An address that sends "
                              "too many unknown tokens is answered 429 with Retry-After.",
                  docs_url=None, redoc_url=None, openapi_url="/openapi.json",
                  openapi_tags=[
                      {"name": "table", "description": "For tills, betting terminals and tote boards (integrators): the "
                                                       "table's state, bets, results, live events. Croupier or display tokens."},
                      {"name": "pit", "description": "For the chef de table: open and close, held bets and consents, "
                                                     "alerts, the croupier on duty, the last games, the wheel's statistics "
                                                     "and their report, the audit. Chef tokens."},
                      {"name": "operations", "description": "For the technical team: health, metrics, the wheel's settings, "
                                                            "status and clock, the table limits. Admin tokens for changes."}])
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
    need = needs(host, throttle, audit)

    errors.install(app)

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

    @app.get("/state", tags=["table"], response_model=State, responses=ERRORS, summary="the link, the wheel and the table now")
    def state(who=display):
        st = host.state()
        if not who.may("croupier"):         # a public screen: no bet id, no stake of a player's bet
            table = st["table"] = dict(st["table"])
            for key in ("prisoners", "carry"):
                table[key] = [{k: v for k, v in p.items() if k not in ("id", "stake", "player")} for p in table[key]]
        return st

    @app.get("/bets", tags=["table"], response_model=list[BetRow], responses=ERRORS, summary="bets, newest first (croupier: a display "
             "token, a public screen's, reads no bet)")
    def bets(who=croupier, status: Optional[str] = Query(None, max_length=20), spin: Optional[int] = Query(None, ge=0, le=10**9),
             player: Optional[str] = Query(None, max_length=64), limit: int = Query(500, ge=1, le=100000)):
        return host.bets(status=status, spin=spin, player=player, limit=limit)

    @app.get("/bets/{bid}", tags=["table"], response_model=BetRow, responses={**ERRORS, 404: E}, summary="one bet with its result once settled (croupier)")
    def bet(who=croupier, bid: str = Path(pattern=BET_ID)):
        return host.bet(bid)

    @app.get("/history", tags=["table"], response_model=list[HistoryRow], responses=ERRORS, summary="settled spins, newest first")
    def history(who=display, limit: int = Query(10, ge=1, le=10000)):
        return host.history(limit)

    @app.get("/spins/{spin}", tags=["table"], response_model=Recall, responses={**ERRORS, 404: E},
             summary="game recall: the wheel's events with their frames, the bets, the settlement, the audit rows "
                     "(croupier)")
    def recall(who=croupier, spin: int = Path(ge=-10**12, le=10**12)):
        return host.recall(spin)

    @app.get("/wheel/settings", tags=["operations"], response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
             summary="the wheel's spin settings")
    def settings(who=display):
        return host.wheel("get_settings")

    @app.get("/wheel/status", tags=["operations"], response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
             summary="the wheel's status and link figures, asked now")
    def wheel_status(who=display):
        return host.wheel("status")

    @app.get("/wheel/history", tags=["operations"], response_model=list[dict[str, Any]], responses={**ERRORS, 502: E, 504: E},
             summary="the wheel's last 10 games, oldest first")
    def wheel_history(who=display):
        return host.wheel("history") or []

    @app.get("/events", tags=["table"], response_class=StreamingResponse,
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
        return StreamingResponse(sse.stream(host, chosen, after), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    # -- bets (croupier) -------------------------------------------------------------------------------
    @app.post("/bets", tags=["table"], status_code=201, response_model=Placed, responses={**ERRORS, 409: {"model": RefusedBet}, 422: {"model": RefusedBet}},
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

    @app.delete("/bets/{bid}", tags=["table"], response_model=Cancelled, responses={**ERRORS, 404: E, 409: E},
                summary="withdraw an open bet: the token that placed it, a chef or an admin (403 not_your_bet "
                        "otherwise, audited)")
    def cancel(bid: str = Path(pattern=BET_ID), who=Depends(need("croupier", "bet_cancel"))):
        return host.cancel(bid, who)

    # -- the table (chef) ------------------------------------------------------------------------------
    @app.post("/table/open", tags=["pit"], response_model=TableChange, responses=ERRORS, summary="open the table (tells the wheel)")
    def table_open(who=Depends(need("chef", "table_open"))):
        return host.set_open(True, who)

    @app.post("/table/close", tags=["pit"], response_model=TableChange, responses=ERRORS,
              summary="close the table (tells the wheel; a spin in progress is void)")
    def table_close(who=Depends(need("chef", "table_close"))):
        return host.set_open(False, who)

    @app.post("/table/call", tags=["table"], response_model=TableChange, responses=ERRORS,
              summary="rien ne va plus, called by the croupier: the table takes no bet from now whatever the wheel's "
                      "sensors say (tells the wheel: it calls the spin on its track, or the next one it sees); audited")
    def table_call(who=Depends(need("croupier", "table_call"))):
        return host.call(who)

    @app.post("/wheel/accept", tags=["pit"], response_model=WheelAccepted, responses={**ERRORS, 409: E},
              summary="accept the wheel that answers and that the table does not know (another board, key or "
                      "counter: docs/operators/wheel-identity.md, swapping the wheel); audited")
    def wheel_accept(body: Optional[WheelAcceptIn] = None, who=Depends(need("chef", "wheel_accept"))):
        return host.accept_wheel(who, body.model_dump() if body is not None else None)

    @app.get("/table/limits", tags=["table"], response_model=dict[str, KindLimit], responses=ERRORS,
             summary="the table limits in force, by kind: " + ", ".join(LIMIT_KINDS) + " (cents)")
    def limits(who=display):
        return host.table.limits.to_json()

    @app.put("/table/limits", tags=["operations"], response_model=dict[str, KindLimit], responses={**ERRORS, 409: E},
             summary="change the limits of some kinds ({kind: {min, max}}, cents; even-chance names mean simple), "
                     "between spins only (409 spin_in_progress); audited before -> after")
    def set_limits(body: dict[str, KindLimitIn], who=Depends(need("admin", "table_limits"))):
        return host.set_limits({k: v.model_dump(exclude_none=True) for k, v in body.items()}, who)

    @app.post("/bets/{bid}/resolve", tags=["pit"], response_model=BetRow, responses={**ERRORS, 404: E, 409: E},
              summary="the supervisor's decision on a held bet: refund, or play the next spin")
    def resolve(body: ResolveIn, bid: str = Path(pattern=BET_ID), who=Depends(need("chef", "bet_resolve"))):
        return host.resolve(bid, body.action, who)

    @app.post("/bets/{bid}/consent", tags=["pit"], response_model=BetRow, responses={**ERRORS, 404: E, 409: E},
              summary="the chef de table's consent to a straddle awaiting it (two dozens or two columns): "
                      "the bet joins the layout; 409 not_awaiting_consent otherwise")
    def consent(bid: str = Path(pattern=BET_ID), who=Depends(need("chef", "bet_consent"))):
        return host.consent(bid, who)

    @app.get("/audit", tags=["pit"], response_model=list[AuditRow], responses=ERRORS, summary="privileged actions, newest first")
    def audit_rows(who=Depends(need("chef")), limit: int = Query(100, ge=1, le=10000),
                   before: Optional[int] = Query(None, ge=1, le=2**62, description="rows with a smaller id"),
                   spin: Optional[int] = Query(None, ge=-10**12, le=10**12),
                   by: Optional[str] = Query(None, max_length=64, description="token name"),
                   action: Optional[str] = Query(None, max_length=40)):
        return audit.rows(limit=limit, before_id=before, spin=spin, who=by, action=action)

    # -- the wheel (admin) -----------------------------------------------------------------------------
    @app.put("/wheel/settings", tags=["operations"], response_model=dict[str, Any], responses={**ERRORS, 202: {"model": dict[str, Any]},
             502: E, 504: E}, summary="change one setting; the wheel enforces safe bounds (502 when it refuses); a "
             "regulatory setting is only requested (202): another admin approves it")
    def set_setting(body: SettingIn, who=Depends(need("admin", "wheel_setting"))):
        from host_tools.table.api.twoperson import TwoPersonError, is_regulatory
        if is_regulatory(body.name):
            try:
                out = host.two_person.request(body.name, body.value, who, via="api")
            except TwoPersonError as e:
                raise ApiError(e.status, e.code, e.message) from None
            return JSONResponse(dict(out, message="réglage réglementaire : appliqué quand une autre personne "
                                     f"l'approuve (POST /wheel/settings/requests/{out['request']}/approve)"),
                                status_code=202)
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

    @app.get("/wheel/settings/requests", tags=["operations"], response_model=list[dict[str, Any]], responses=ERRORS,
             summary="the regulatory settings requested, pending or decided, newest first")
    def setting_requests(who=Depends(need("admin"))):
        return host.two_person.list()

    @app.post("/wheel/settings/requests/{rid}/approve", tags=["operations"], response_model=dict[str, Any],
              responses={**ERRORS, 502: E, 504: E}, summary="approve another person's request: applied to the wheel")
    def approve_setting(rid: str = Path(max_length=64), who=Depends(need("admin", "setting_approve"))):
        from host_tools.table.api.twoperson import TwoPersonError
        try:
            return host.two_person.approve(rid, who, host.wheel_setting)
        except TwoPersonError as e:
            audit.record(who.name, who.role, "setting_approve", rid, answer={"refused": e.code, "message": e.message},
                         done=False)
            raise ApiError(e.status, e.code, e.message) from None

    @app.post("/wheel/time", tags=["operations"], response_model=dict[str, Any], responses={**ERRORS, 502: E, 504: E},
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

    from host_tools.table.api.slips import add_slips           # POST /slips, GET and DELETE /slips/{slip}: terminals
    add_slips(app, host, need)
    from host_tools.table.api.pages import add_pages           # /, /marquee, /pit, /stats, assets, alerts, croupier, statistics
    app.state.pit = add_pages(app, host, need, conf)
    errors.document(app, BetIn)
    hosts = set(LOOPBACK_HOSTS) | {bind_host} | set(conf["allowed_hosts"])
    app.state.fast_served = [0]
    app.state.placements = None
    if fast_path:                       # inside the Guard and CORS, in front of the routes
        from host_tools.table.api.fastpath import FastPlacements, Placements
        app.state.placements = Placements(host, served=app.state.fast_served)   # the fronts' too (api/bridge.py)
        app.add_middleware(FastPlacements, placements=app.state.placements)
    if conf["cors_origins"]:
        from starlette.middleware.cors import CORSMiddleware
        app.add_middleware(CORSMiddleware, allow_origins=conf["cors_origins"], allow_methods=["GET", "POST", "PUT", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "Last-Event-ID"])
    app.add_middleware(Guard, hosts=hosts, origins=conf["cors_origins"], max_body=conf["max_body"])
    app.state.guard_hosts = hosts       # a front's Guard takes the same (daemon/fronts.py)
    app.state.host = host
    return app

