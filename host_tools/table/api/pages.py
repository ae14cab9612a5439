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

import json
import logging
import queue
import shutil
import tempfile
import threading
import hashlib
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Optional

from fastapi import Depends, FastAPI, Path as PathParam, Query
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route

from host_tools.table.api import assets as web_assets, explorer
from host_tools.stats import duty

from host_tools.table.alerts import rules as A
from host_tools.table.alerts.store import AlertStore

log = logging.getLogger("cylindre.pit")
CSP = ("default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'")
FILE_NAME = r"^[a-z]{1,20}\.(png|pdf|pdf\.sig)$"


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
        self._stats = None              # (journal key, analysis, None): the last analysis, for the alerts
        self._snapshots = OrderedDict()  # snapshot id -> (analysis, folder of its files or None)
        self._stats_at = 0.0
        self.casino = None                      # the casino's name on the report (config `casino`)
        self.table_name = None                  # the table's name on the report (config `table_name`)
        self.report_key = None                  # the key that signs the report (config `report_key`), or None
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

    def games(self, limit: int) -> list[dict]:
        """The last `limit` games, settled or void, newest first: a void spin is a game the pit sees
        (its reason beside it), not a hole between two numbers. A void of a spin settled since is
        not one (a restart's void after the result: the result stands)."""
        w = self.host.d.wheel
        rows = [dict(r, void=None) for r in self.host.history(limit)]
        voids = self.host.j.query(
            "SELECT e.spin, MAX(e.at) AS at, e.body FROM events e WHERE e.wheel=? AND e.ev='void' AND e.spin IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.wheel=e.wheel AND s.spin=e.spin) "
            "GROUP BY e.spin ORDER BY e.spin DESC LIMIT ?", (w, limit))
        for v in voids:
            try:
                reason = json.loads(v["body"]).get("reason") or "unknown"
            except (ValueError, AttributeError):
                reason = "unknown"
            rows.append({"spin": v["spin"], "at": v["at"], "number": None, "void": str(reason), "staked": 0, "paid": 0})
        rows.sort(key=lambda r: (r["spin"], r["void"] is None), reverse=True)
        return rows[:limit]

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
    # One analysis per state of the journal (a snapshot): every figure, chart, plot and the report
    # of one page come from the same one, named by its `snapshot`; the last few are kept so a page
    # still gets its own report after the wheel has played on.
    KEEP_SNAPSHOTS = 4

    def _journal_key(self):
        w = self.host.d.wheel
        e = self.host.j.one("SELECT COUNT(*) AS n, MAX(at) AS at FROM events WHERE wheel=?", (w,))
        c = self.host.j.one("SELECT COUNT(*) AS n FROM croupier_duty WHERE wheel=?", (w,))
        return (e["n"], e["at"], c["n"])

    def analysis(self) -> dict:
        """The statistics of this wheel's journal (host_tools.stats), recomputed only when it
        changed; its `snapshot` names that state of the journal."""
        from host_tools.stats import analysis, games
        with self._stats_lock:
            key = self._journal_key()
            snap = _snapshot_id(key)
            if snap in self._snapshots:
                self._snapshots.move_to_end(snap)
                return self._snapshots[snap][0]
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
            a["snapshot"] = snap
            self._snapshots[snap] = (a, None)
            while len(self._snapshots) > self.KEEP_SNAPSHOTS:
                _, (_, folder) = self._snapshots.popitem(last=False)
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)
            self._stats = (key, a, None)
            return a

    def snapshot(self, snap: str | None) -> dict | None:
        """The analysis named `snap` (None: the current one), or None once it is no longer kept."""
        if snap is None:
            return self.analysis()
        with self._stats_lock:
            got = self._snapshots.get(snap)
            return None if got is None else got[0]

    def stats_file(self, name: str, snap: str | None = None) -> Path | None:
        """A PNG plot or report.pdf of the snapshot `snap` (default the current one), written on
        first ask; None if there is no such file or the snapshot is no longer kept."""
        from host_tools.stats import report
        a = self.snapshot(snap)
        if a is None:
            return None
        with self._stats_lock:
            got = self._snapshots.get(a["snapshot"])
            if got is None:
                return None
            folder = got[1]
            if folder is None:
                folder = Path(tempfile.mkdtemp(prefix="cylindre-stats-"))
                self._snapshots[a["snapshot"]] = (a, folder)
            f = folder / name
            if not f.is_file():
                if name.endswith(".png"):
                    report.write_plots(a, folder)
                elif name.startswith("report.pdf"):
                    # NeedsNames without the casino's and the table's names (the route says where to set them)
                    report.write_report(a, folder, self.casino, self.table_name, sign_key=self.report_key)
        return f if f.is_file() else None

    def stats_files(self, a=None) -> list[str]:
        from host_tools.stats import report
        return [n + ".png" for n in report.names(a or self.analysis())] + ["report.pdf"] \
            + (["report.pdf.sig"] if self.report_key is not None else [])

    def _drop_files(self):
        for _, folder in self._snapshots.values():
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        self._snapshots.clear()

    def close(self):
        self.stop()
        with self._stats_lock:
            self._drop_files()
            self._stats = None


def _snapshot_id(key) -> str:
    """A short name for one state of the journal (events, last event's time, duty rows)."""
    return hashlib.sha256(repr(key).encode()).hexdigest()[:12]


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


class Display(BaseModel):
    """What a tote board shows besides the numbers (the marquee)."""
    table: str = Field(description="the table's name (setting table_name; default the wheel's id)")
    casino: Optional[str] = Field(default=None, description="the casino's name (setting casino)")
    history: int = Field(description="games the marquee's figures cover (setting marquee_history)")
    sectors: dict[str, list[int]] = Field(description="the wheel's sectors, from the rules: voisins, tiers, orphelins")
    columns: dict[str, list[int]] = Field(description="the three columns of the layout, from the rules")


class Me(BaseModel):
    name: str = Field(description="the token's name")
    role: str = Field(description="display, croupier, chef or admin")
    may: list[str] = Field(description="the roles this token covers (a page shows only what they may see or do)")


class Game(BaseModel):
    spin: int
    at: float = Field(description="when the table settled or voided it (epoch s)")
    number: Optional[int] = Field(default=None, description="the winning number; null for a void")
    void: Optional[str] = Field(default=None, description="the void's reason code (docs/integrators/wheel-events.md); null when settled")
    staked: int = Field(0, description="cents staked on it (0 for a void: its bets play the next spin)")
    paid: int = Field(0, description="cents paid")


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
    snapshot: str = Field(description="names this analysis (one state of the journal): /stats/files/NAME?snapshot= "
                                      "gives the plots and the report of this one, not a later one")


def add_pages(app: FastAPI, host, need, conf: dict) -> Pit:
    """The pages' and the pit's routes on `app`; the Pit (its watch is started by the daemon)."""
    from host_tools.table.api.errors import ApiError
    from host_tools.table.api.models import ERRORS, E
    pit = Pit(host, conf.get("alerts") or {})
    pit.casino = conf.get("casino")             # printed on the statistics report's title block
    pit.table_name = conf.get("table_name")
    if conf.get("report_key"):
        from host_tools.table.journal.seal import load_private
        pit.report_key = load_private(conf["report_key"])       # (cli.py checks it before the daemon starts)
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
    explorer.add_docs(app)

    @app.get("/table/display", response_model=Display, responses=ERRORS, tags=["table"],
             summary="what a tote board shows besides the numbers: the table's name, how many games its figures "
                     "cover, the wheel's sectors and the columns (display)")
    def display(who=Depends(need("display"))):
        from cylindre.rules import wheel as W
        return {"table": conf.get("table_name") or host.d.wheel, "casino": conf.get("casino"),
                "history": conf.get("marquee_history") or 500,
                "sectors": {"voisins": sorted(W.VOISINS), "tiers": sorted(W.TIERS), "orphelins": sorted(W.ORPHELINS)},
                "columns": {str(c): list(W.column_numbers(c)) for c in (1, 2, 3)}}

    @app.get("/me", response_model=Me, responses=ERRORS, tags=["table"],
             summary="the token's own name and role: a page shows only what that role may see or do")
    def me(who=Depends(need("display"))):
        from host_tools.table.api.auth import RANK
        return {"name": who.name, "role": who.role, "may": [r for r in RANK if who.may(r)]}

    @app.get("/games", response_model=list[Game], responses=ERRORS, tags=["pit"],
             summary="the last games, settled or void (with the void's reason), newest first (display)")
    def last_games(who=Depends(need("display")), limit: int = Query(10, ge=1, le=10000)):
        return pit.games(limit)

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
        from cylindre.rules import wheel as W
        from host_tools.stats.wording import SECTEURS
        a = await run_in_threadpool(pit.analysis)
        # what the page draws its charts with, beside the figures: the wheel's order (the rules)
        # and the sectors' names; every chart of the page from this one analysis (its snapshot)
        return {**a, "files": pit.stats_files(a), "wheel_order": list(W.ORDER), "sector_names": SECTEURS}

    @app.get("/stats/files/{name}", response_class=FileResponse, tags=["pit"],
             responses={200: {"content": {"image/png": {"schema": {"type": "string", "format": "binary"}},
                                          "application/pdf": {"schema": {"type": "string", "format": "binary"}}}},
                        **ERRORS, 404: E, 409: E, 410: E},
             summary="a plot (PNG) or the report (report.pdf) of the current statistics, or of the snapshot named "
                     "(410 once it is no longer kept)")
    async def stats_file(name: str = PathParam(pattern=FILE_NAME), who=Depends(need("chef")),
                         snapshot: Optional[str] = Query(None, pattern=r"^[0-9a-f]{12}$",
                                                         description="the analysis the file shows (GET /stats/analysis's "
                                                                     "snapshot); none: the current one")):
        if snapshot is not None and pit.snapshot(snapshot) is None:
            raise ApiError(410, "snapshot_gone", f"the statistics {snapshot} are no longer kept: reload the page")
        from host_tools.stats.report import NeedsNames
        try:
            f = await run_in_threadpool(pit.stats_file, name, snapshot)
        except NeedsNames:
            raise ApiError(409, "report_needs_names", "a report to file names its casino and its table: set casino and "
                           "table_name in the daemon's settings (its config file, or --casino and --table-name)") from None
        if f is None:
            raise ApiError(404, "not_found", f"no file {name} in the statistics"
                           + (" (the report is not signed: set report_key in the daemon's settings)" if name.endswith(".sig") else ""))
        kind = {"pdf": "application/pdf", "png": "image/png", "sig": "application/json"}[name.rsplit(".", 1)[1]]
        return FileResponse(f, media_type=kind, headers={"Cache-Control": "no-store"},
                            content_disposition_type="inline" if kind == "image/png" else "attachment",
                            filename=name)

    return pit
