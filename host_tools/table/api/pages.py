"""What people at the table look at, on the table app: the pages, the alerts, the croupier on duty,
the wheel statistics (docs/pit/pages.md, docs/pit/statistics.md).

Pages and their assets (`/`, `/marquee`, `/pit`, `/stats`, `/assets/<file>`) are files of the
project served without a token: they hold no data; every figure they show comes from a route that
needs the page's role (`Authorization: Bearer`). `Pit` is the table app's part for the pit: the alert
store and its watch (thresholds checked every `every_s` and at each game's end, raised on the
event stream in the transaction that journals them, counted in /metrics), the chef's
acknowledgements and croupier changes (audited in the same transaction), the statistics cached
per state of the journal.
"""

from __future__ import annotations

import logging
import queue
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

from fastapi import Depends, FastAPI, Path as PathParam, Query
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route

from host_tools.table.api import assets as web_assets
from host_tools.stats import duty

from host_tools.table.alerts import rules as A
from host_tools.table.alerts.store import AlertStore

log = logging.getLogger("cylindre.pit")
CSP = ("default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'")
FILE_NAME = r"^[a-z]{1,20}\.(png|pdf)$"


class Pit:
    """Alerts, croupier on duty and statistics of one table host (a `web.TableHost`)."""

    def __init__(self, host, alert_conf: dict | None = None, clock=time.time):
        self.host = host
        self.clock = clock
        self.th = A.thresholds(alert_conf)
        self.store = AlertStore(host.j, host.d.wheel)
        with host.j.tx() as db:
            duty.create(db)
        self.started = clock()
        self._stop = threading.Event()
        self._thread = None
        self._q = None                          # the watch's subscription (stop() wakes it)
        self._stats_lock = threading.Lock()
        self._stats = None              # (journal key, analysis, folder of its files or None)
        self._stats_at = 0.0
        self.casino = None                      # the casino's name on the report (config `casino`)
        host.metrics.registry.register(_AlertCollector(self.store))

    # -- the table, as the pages need it -------------------------------------------------------------
    def on_duty(self) -> dict:
        r = self.host.j.one("SELECT at, croupier, set_by FROM croupier_duty WHERE wheel=? ORDER BY at DESC, id DESC LIMIT 1",
                             (self.host.d.wheel,))
        if r is None or not r["croupier"]:
            return {"croupier": None, "since": None if r is None else r["at"], "set_by": None if r is None else r["set_by"]}
        return {"croupier": r["croupier"], "since": r["at"], "set_by": r["set_by"]}

    def table_state(self) -> dict:
        d = self.on_duty()
        return {"croupier": d["croupier"], "croupier_since": d["since"], "session_since": self.store.opened_at()}

    def set_croupier(self, name: str, who) -> dict:
        """The chef names the croupier on duty ("" for nobody): a duty row the statistics read,
        audited before -> after, in one transaction."""
        name = name.strip()
        with self.host.step():
            before = self.on_duty()["croupier"]
            now = self.clock()
            duty.set_on_duty(self.host.j.db, self.host.d.wheel, name, now, set_by=who.name)
            self.host.audit.record(who.name, who.role, "croupier_duty", name or None, before, name or None,
                                    spin=self.host.table.st.get("spin"))
        return self.on_duty()

    # -- alerts --------------------------------------------------------------------------------------
    def check(self, now: float | None = None, stats: bool = False) -> list:
        """Evaluate the thresholds now; journal and publish the alerts raised. `stats`: with the
        wheel statistics (costly: the whole journal), else the last ones computed."""
        now = self.clock() if now is None else now
        d = self.host.d
        st = None
        if stats or now - self._stats_at >= self.th["stats_every_s"]:
            self._stats_at = now
            st = self.analysis()
        elif self._stats is not None:
            st = self._stats[1]
        sig = self.store.signals(now, table_open=d.table.st["phase"] != "closed", link_up=d.link.in_session,
                                 last_heard=d.last_heard or self.started, stats=st)
        sig["link_problem"] = d.problem() if hasattr(d, "problem") else None
        current = A.evaluate(sig, self.th, now)
        with self.host.table.lock, self.host.j.tx():
            return self.store.sync(current, now, publish=self.host.events.publish)

    def acknowledge(self, aid: int, comment: str, who) -> dict:
        from host_tools.table.api.errors import ApiError
        with self.host.step():
            row = self.store.get(aid)
            if row is None:
                raise ApiError(404, "not_found", f"no alert {aid}")
            if row["acked_at"] is not None:
                raise ApiError(409, "already_acknowledged", f"alert {aid} was acknowledged by {row['acked_by']}")
            try:
                out = self.store.acknowledge(aid, who.name, comment, self.clock(), publish=self.host.events.publish)
            except ValueError as e:
                raise ApiError(400, "bad_request", str(e)) from None
            self.host.audit.record(who.name, who.role, "alert_ack", aid, {"code": row["code"], "message": row["message"]},
                                    {"comment": out["comment"]})
        return out

    def start(self):
        """The watch: the thresholds at each game's end (result, void, launch), at each link
        change, and every `every_s` seconds otherwise."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="cylindre-alerts", daemon=True)
            self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        q = self._q
        if q is not None:
            try:
                q.put_nowait(None)              # wake the watch now, not at its next every_s
            except queue.Full:
                pass                            # full: it is about to wake anyway
        if self._thread is not None:
            self._thread.join(5)

    def _watch(self):
        q = self._q = self.host.events.subscribe(kinds=["settlement", "wheel", "link"])
        try:
            while not (self._stop.is_set() or self.host.stopping()):
                try:
                    msg = q.get(timeout=self.th["every_s"])
                    if msg is None and not self._stop.is_set():     # hung up on (too slow): subscribe again
                        q = self._q = self.host.events.subscribe(kinds=["settlement", "wheel", "link"])
                    while True:                 # one check for a burst of events
                        q.get_nowait()
                except queue.Empty:
                    pass
                if self._stop.is_set():
                    break
                try:
                    self.check()
                except Exception:
                    log.exception("alert check failed; trying again in %s s", self.th["every_s"])
        finally:
            self.host.events.unsubscribe(q)

    # -- the wheel statistics ------------------------------------------------------------------------
    def _journal_key(self):
        w = self.host.d.wheel
        e = self.host.j.one("SELECT COUNT(*) AS n, MAX(at) AS at FROM events WHERE wheel=?", (w,))
        c = self.host.j.one("SELECT COUNT(*) AS n FROM croupier_duty WHERE wheel=?", (w,))
        return (e["n"], e["at"], c["n"])

    def analysis(self) -> dict:
        """The statistics of this wheel's journal (host_tools.stats), recomputed only when it changed."""
        from host_tools.stats import analysis, games
        with self._stats_lock:
            key = self._journal_key()
            if self._stats is not None and self._stats[0] == key:
                return self._stats[1]
            path = self.host.j.path
            if path != ":memory:":
                db = games.open_ro(path)        # its own connection: the money path is not held up
                try:
                    rec = games.read_db(db, self.host.d.wheel)
                finally:
                    db.close()
            else:
                with self.host.j.lock:
                    rec = games.read_db(self.host.j.db, self.host.d.wheel)
            a = analysis.analyse(rec, alpha=self.th["p_value"])
            self._drop_files()
            self._stats = (key, a, None)
            return a

    def stats_file(self, name: str) -> Path | None:
        """A PNG plot or report.pdf of the current statistics (written on first ask)."""
        from host_tools.stats import report
        a = self.analysis()
        with self._stats_lock:
            key, a, folder = self._stats
            if folder is None:
                folder = Path(tempfile.mkdtemp(prefix="cylindre-stats-"))
                report.write(a, folder, casino=self.casino)
                self._stats = (key, a, folder)
        f = folder / name
        return f if f.is_file() else None

    def stats_files(self) -> list[str]:
        from host_tools.stats import report
        return [n + ".png" for n in report.names(self.analysis())] + ["report.pdf"]

    def _drop_files(self):
        if self._stats is not None and self._stats[2] is not None:
            shutil.rmtree(self._stats[2], ignore_errors=True)

    def close(self):
        self.stop()
        with self._stats_lock:
            self._drop_files()
            self._stats = None


class _AlertCollector:
    """`cylindre_alerts{code,state}`: alerts raised, by code, pending (not acknowledged) or acknowledged."""

    def __init__(self, store):
        self.store = store

    def describe(self):
        return []

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily
        m = GaugeMetricFamily("cylindre_alerts", "alerts raised, by code and state (pending: not yet acknowledged)",
                              labels=["code", "state"])
        counts = self.store.metrics()
        for code in sorted({c for c, _ in counts} | set(A.CODES)):
            for state in ("pending", "acknowledged"):
                m.add_metric([code, state], counts.get((code, state), 0))
        yield m


# -- models ---------------------------------------------------------------------------------------------
class Alert(BaseModel):
    id: int
    wheel: str
    raised_at: float
    code: str = Field(description="run_length, void_rate, article53, games_per_hour, link_down, statistics")
    key: str = Field(description="the occurrence: one alert per key")
    level: str = Field(description="warning or critical")
    message: str = Field(description="in French, for the pit")
    value: Any = None
    threshold: Any = None
    cleared_at: Optional[float] = Field(default=None, description="its condition ended (it stays until acknowledged)")
    acked_at: Optional[float] = None
    acked_by: Optional[str] = None
    comment: Optional[str] = None


class AckIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    comment: StrictStr = Field(min_length=1, max_length=1000, description="what was checked, what was done")


class CroupierIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    croupier: StrictStr = Field(max_length=64, pattern=r"^[^\x00-\x1f\x7f]*$",
                                description='the croupier now spinning the wheel; "" for nobody')


class OnDuty(BaseModel):
    croupier: Optional[str] = None
    since: Optional[float] = None
    set_by: Optional[str] = Field(default=None, description="the token of the chef who set it")


class StatsTest(BaseModel):
    model_config = ConfigDict(extra="allow")
    test: str
    p: float
    p_holm: float
    significant: bool


class Stats(BaseModel):
    """host_tools.stats.analysis.analyse's dict (docs/pit/statistics.md); the main fields typed."""
    model_config = ConfigDict(extra="allow")
    wheel: str
    games: int
    alpha: float
    correction: str
    family: list[StatsTest]
    alarms: list[str]
    files: list[str] = Field(description="names under /stats/files/: PNG plots and report.pdf")


# -- the API explorer ------------------------------------------------------------------------------------
SWAGGER_FILES = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8"}


def swagger_dir() -> Path:
    """Swagger UI's files as the swagger-ui-bundle-v2 package ships them (Apache-2.0)."""
    import swagger_ui_bundle
    return Path(swagger_ui_bundle.swagger_ui_path)


def add_docs(app: FastAPI):
    """`/docs`: Swagger UI on this daemon's /openapi.json, its script and style served by the daemon
    itself from the packaged files (`/assets/swagger/...`): a casino's network has no internet.
    Like the pages, it holds no data and needs no token (the API's routes still do: *Authorize*
    takes one). Its one inline script is allowed by its hash, nothing else."""
    import base64
    import hashlib
    import re

    from fastapi.openapi.docs import get_swagger_ui_html

    try:
        files = swagger_dir()
    except ImportError:                 # an environment installed before the dependency: the API still runs
        log.warning("/docs: swagger-ui-bundle-v2 is not installed (pip install swagger-ui-bundle-v2); "
                    "the API's document stays at %s", app.openapi_url)

        async def missing(request):
            return Response(f"The API explorer needs the swagger-ui-bundle-v2 package (pip install swagger-ui-bundle-v2); "
                            f"the API's document is at {app.openapi_url}.\n", status_code=503, media_type="text/plain")
        app.router.routes.append(Route("/docs", missing, methods=["GET", "HEAD"]))
        return
    html = get_swagger_ui_html(
        openapi_url=app.openapi_url, title=f"{app.title} {app.version} — API",
        swagger_js_url="/assets/swagger/swagger-ui-bundle.js", swagger_css_url="/assets/swagger/swagger-ui.css",
        swagger_favicon_url="/assets/icon.svg", oauth2_redirect_url=None,
        swagger_ui_parameters={"validatorUrl": None, "tryItOutEnabled": False, "persistAuthorization": False},
    ).body
    inline = re.findall(rb"<script>(.*?)</script>", html, re.S)
    hashes = " ".join("'sha256-%s'" % base64.b64encode(hashlib.sha256(s).digest()).decode() for s in inline)
    csp = (f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
           "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
    headers = {"Cache-Control": "no-cache", "Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff",
               "Referrer-Policy": "no-referrer"}

    async def docs(request):
        return Response(html, media_type="text/html", headers=headers)

    async def asset(request):
        name = request.path_params["name"]
        kind = SWAGGER_FILES.get(name)
        f = files / name
        if kind is None or not f.is_file():
            from host_tools.table.api.errors import ApiError
            raise ApiError(404, "not_found", f"no file {name[:80]}")
        return Response(f.read_bytes(), media_type=kind.split(";")[0],
                        headers={"Cache-Control": "max-age=86400", "X-Content-Type-Options": "nosniff"})

    app.router.routes.append(Route("/docs", docs, methods=["GET", "HEAD"]))
    app.router.routes.append(Route("/assets/swagger/{name}", asset, methods=["GET", "HEAD"]))


def add_pages(app: FastAPI, host, need, conf: dict) -> Pit:
    """The pages' and the pit's routes on `app`; the Pit (its watch is started by the daemon)."""
    from host_tools.table.api.errors import ApiError
    from host_tools.table.api.models import ERRORS, E
    pit = Pit(host, conf.get("alerts") or {})
    pit.casino = conf.get("casino")             # printed on the statistics report's title block
    host.pit = pit

    def page(path: str):
        found = web_assets.resolve(path)
        if found is None:
            raise ApiError(404, "not_found", f"no page {path[:80]}")
        kind, data = found
        return Response(data, media_type=kind.split(";")[0], headers={
            "Cache-Control": "no-cache", "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"})

    # plain Starlette routes: out of the API's document and of its query check (a page reads its
    # own parameters, ?n=100&strip=18), no token (a page holds no data)
    async def serve(request):
        return page(request.url.path if request.url.path in web_assets.PAGES else "/assets/" + request.path_params["name"])

    for route in web_assets.PAGES:
        app.router.routes.append(Route(route, serve, methods=["GET", "HEAD"]))
    app.router.routes.append(Route("/assets/{name}", serve, methods=["GET", "HEAD"]))
    add_docs(app)

    @app.get("/alerts", response_model=list[Alert], responses=ERRORS, tags=["pit"],
             summary="alerts, newest first (pending: not yet acknowledged only)")
    def alert_rows(who=Depends(need("chef")), pending: bool = Query(False), limit: int = Query(200, ge=1, le=10000)):
        return pit.store.list(pending_only=pending, limit=limit)

    @app.post("/alerts/{aid}/ack", response_model=Alert, responses={**ERRORS, 404: E, 409: E}, tags=["pit"],
              summary="a chef acknowledges an alert with a comment (audited); 409 when already acknowledged")
    def alert_ack(body: AckIn, aid: int = PathParam(ge=1, le=2**62), who=Depends(need("chef", "alert_ack"))):
        return pit.acknowledge(aid, body.comment, who)

    @app.get("/table/croupier", response_model=OnDuty, responses=ERRORS, tags=["pit"], summary="the croupier on duty")
    def croupier(who=Depends(need("display"))):
        return pit.on_duty()

    @app.put("/table/croupier", response_model=OnDuty, responses=ERRORS, tags=["pit"],
             summary="the chef names the croupier on duty (a duty row the statistics read; audited)")
    def set_croupier(body: CroupierIn, who=Depends(need("chef", "croupier_duty"))):
        return pit.set_croupier(body.croupier, who)

    @app.get("/stats/analysis", response_model=Stats, responses=ERRORS, tags=["pit"],
             summary="the wheel statistics of this journal (docs/pit/statistics.md), recomputed when it changed")
    async def stats(who=Depends(need("chef"))):
        a = await run_in_threadpool(pit.analysis)
        files = await run_in_threadpool(pit.stats_files)
        return {**a, "files": files}

    @app.get("/stats/files/{name}", response_class=FileResponse, tags=["pit"],
             responses={200: {"content": {"image/png": {"schema": {"type": "string", "format": "binary"}},
                                          "application/pdf": {"schema": {"type": "string", "format": "binary"}}}},
                        **ERRORS, 404: E},
             summary="a plot (PNG) or the report (report.pdf) of the current statistics")
    async def stats_file(name: str = PathParam(pattern=FILE_NAME), who=Depends(need("chef"))):
        f = await run_in_threadpool(pit.stats_file, name)
        if f is None:
            raise ApiError(404, "not_found", f"no file {name} in the statistics")
        kind = "application/pdf" if name.endswith(".pdf") else "image/png"
        return FileResponse(f, media_type=kind, headers={"Cache-Control": "no-store"},
                            content_disposition_type="inline" if kind == "image/png" else "attachment",
                            filename=name)

    return pit
