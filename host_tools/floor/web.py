"""The floor's HTTP app: the page `/floor` and its API under `/floor/api/`, `/health`, `/metrics`.

Every API call carries a floor token (`Authorization: Bearer cyl_...`); the page takes it once
from its address (`/floor#token=...`) as the table's pages do. Reads need the role surveillance;
the commands and acknowledgements pit_boss; approving a regulatory setting director; the audit
trail director. A refused attempt at a privileged action is audited too.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import generate_latest
from pydantic import BaseModel, Field

from .access import RANK
from .alerts import AlertError
from .store import is_floors, table_alert

ASSETS = Path(__file__).resolve().parent / "assets"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class Ack(BaseModel):
    comment: str = Field(min_length=1, max_length=500)


class KindLimit(BaseModel):
    min: int = Field(ge=0, description="the smallest stake, cents")
    max: int = Field(ge=1, description="the largest stake, cents")


class Setting(BaseModel):
    setting: str
    value: int | bool


DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FILE = re.compile(r"^(rapport|permanence-[A-Za-z0-9_-]{1,32})\.(json|csv|pdf)(\.sig)?$")


def _days(reports_dir) -> list[dict]:
    if reports_dir is None or not Path(reports_dir).is_dir():
        return []
    out = []
    for d in sorted(Path(reports_dir).iterdir(), reverse=True):
        if d.is_dir() and DAY.match(d.name):
            files = [{"name": f.name, "size": f.stat().st_size, "signed": (d / (f.name + ".sig")).is_file()}
                     for f in sorted(d.iterdir()) if FILE.match(f.name) and not f.name.endswith(".sig")]
            if files:
                out.append({"day": d.name, "files": files})
    return out


def _report_file(reports_dir, day, name):
    if reports_dir is None or not DAY.match(day) or not FILE.match(name):
        return None
    f = Path(reports_dir) / day / name
    return f if f.is_file() else None


def create_app(svc, reports_dir=None, report_key=None) -> FastAPI:
    app = FastAPI(title="Cylindre — la salle", docs_url=None, redoc_url=None)
    app.state.svc = svc
    def who(request: Request):
        h = request.headers.get("authorization", "")
        ident = svc.access.identify(h[7:].strip() if h.lower().startswith("bearer ") else None)
        if ident is None:
            raise HTTPException(401, {"error": "unauthorized", "message": "jeton absent, inconnu ou révoqué"})
        return ident

    def need(role):
        def dep(ident=Depends(who), request: Request = None):
            if RANK[ident.role] < RANK[role]:
                if request is not None and request.method != "GET":
                    svc.access.record(ident, "refused " + request.method + " " + request.url.path, done=False,
                                      answer={"need": role})
                raise HTTPException(403, {"error": "forbidden", "message": f"il faut le rôle {role}"})
            return ident
        return dep

    def refused(e):
        return JSONResponse({"error": e.code, "message": e.message}, status_code=getattr(e, "status", 400))

    # -- page and assets ------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    @app.get("/floor", include_in_schema=False)
    def page():
        return Response((ASSETS / "floor.html").read_bytes(), media_type=TYPES[".html"],
                        headers={"Cache-Control": "no-store"})

    @app.get("/floor/assets/{name}", include_in_schema=False)
    def asset(name: str):
        f = ASSETS / name
        if "/" in name or name.startswith(".") or f.suffix not in TYPES or not f.is_file():
            raise HTTPException(404)
        return Response(f.read_bytes(), media_type=TYPES[f.suffix], headers={"Cache-Control": "no-store"})

    # -- health and metrics ---------------------------------------------------------------------
    @app.get("/health")
    def health():
        h = svc.health()
        return JSONResponse(h, status_code=200 if h["status"] == "ok" else 503)

    @app.get("/metrics")
    def metrics():
        return Response(generate_latest(svc.metrics.registry), media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- reads ----------------------------------------------------------------------------------
    @app.get("/floor/api/me")
    def me(ident=Depends(who)):
        return {"name": ident.name, "role": ident.role}

    @app.get("/floor/api/state")
    async def state(since: int = -1, wait: float = 0.0, ident=Depends(need("surveillance"))):
        """The whole floor; with `since` (the last version seen) and `wait` (s, at most 25), answers as
        soon as something changed (long polling) or when the wait is over."""
        end = time.monotonic() + min(max(wait, 0.0), 25.0)
        while svc.version == since and time.monotonic() < end:
            await asyncio.sleep(0.25)
        return await asyncio.get_running_loop().run_in_executor(None, svc.snapshot)

    @app.get("/floor/api/wheels")
    def wheels(ident=Depends(need("surveillance"))):
        """Statistics per wheel serial over the last `--stats-days` days, as last computed by the
        service's statistics thread (every `--stats-every` s): a request never waits for them."""
        got = svc.wheel_stats()
        if got is None:
            return JSONResponse({"status": "computing", "message": "statistiques en cours de calcul"}, status_code=202)
        return got

    @app.get("/floor/api/report")
    def report(day: str | None = None, ident=Depends(need("surveillance"))):
        from .reports import day_report
        try:
            d = svc.gday.parse(day, time.time())
        except ValueError:
            raise HTTPException(400, {"error": "bad_day", "message": "jour attendu AAAA-MM-JJ"}) from None
        return day_report(svc.store, svc.gday, d)

    @app.post("/floor/api/report/{day}/files")
    def report_files(day: str, ident=Depends(need("pit_boss"))):
        """Write the day's signed report and permanences to the floor's reports folder."""
        if reports_dir is None or report_key is None:
            raise HTTPException(409, {"error": "no_reports", "message": "pas de dossier ou de clé de rapports configurés"})
        from .reports import write_day
        try:
            d = svc.gday.parse(day, time.time())
        except ValueError:
            raise HTTPException(400, {"error": "bad_day", "message": "jour attendu AAAA-MM-JJ"}) from None
        from .reports import NotReconciled
        try:
            files = write_day(svc.store, svc.gday, d, reports_dir, report_key)
        except NotReconciled as e:
            bad = {t: r for t, r in e.result["tables"].items() if not r["ok"]}
            svc.access.record(ident, "report.write", d.isoformat(), done=False,
                              answer={"error": "not_reconciled", "tables": sorted(bad)})
            with svc.lock:
                svc.version += 1
            return JSONResponse({"error": "not_reconciled", "message": "rapport non signé : la journée ne se réconcilie "
                                 "pas avec " + ", ".join(sorted(bad)) + " (" + " ; ".join(
                                     f"{t} : {' / '.join(r['why'])}" for t, r in sorted(bad.items())) + ")",
                                 "tables": bad}, status_code=409)
        svc.access.record(ident, "report.write", d.isoformat(), after={"files": [f.name for f in files]})
        return {"day": d.isoformat(), "files": [f.name for f in files]}

    @app.get("/floor/api/reports")
    def reports_list(ident=Depends(need("surveillance"))):
        """The signed reports written so far, newest day first: each file, its size, and whether its
        signature is beside it."""
        return {"days": _days(reports_dir)}

    @app.get("/floor/api/reports/{day}/{name}")
    def report_file(day: str, name: str, ident=Depends(need("surveillance"))):
        """One signed file (or its .sig) to download; only what the floor wrote in its reports folder."""
        f = _report_file(reports_dir, day, name)
        if f is None:
            raise HTTPException(404, {"error": "not_found", "message": "pas de tel fichier de rapport"})
        kind = {".json": "application/json", ".csv": "text/csv; charset=utf-8", ".pdf": "application/pdf",
                ".sig": "application/json"}.get(f.suffix, "application/octet-stream")
        return Response(f.read_bytes(), media_type=kind,
                        headers={"Content-Disposition": f'attachment; filename="{f.name}"', "Cache-Control": "no-store"})

    @app.get("/floor/api/audit")
    def audit(limit: int = 100, ident=Depends(need("director"))):
        return svc.access.rows(limit=min(max(limit, 1), 1000))

    # -- acknowledgements and commands ----------------------------------------------------------
    @app.post("/floor/api/alerts/{table}/{alert_id}/ack")
    def ack(table: str, alert_id: str, body: Ack, ident=Depends(need("pit_boss"))):
        try:
            row = svc.alerts.acknowledge(ident, table, alert_id, body.comment)
        except AlertError as e:
            return JSONResponse({"error": e.code, "message": str(e)}, status_code=404 if e.code == "not_found" else 409)
        told = "non transmis (commandes désactivées)"
        if is_floors(alert_id):
            told = "alerte de la salle : rien à dire à la table"
        elif svc.commands is not None:
            ans = svc.commands.send(ident, table, "ack_alert", dict(table_alert(alert_id), comment=body.comment),
                                    audit_target=f"{table}/{alert_id}")
            told = "transmis" if ans.get("ok") else f"refusé par la table: {ans.get('error')} {ans.get('message', '')}".strip()
            svc.alerts.told(table, alert_id, told)
        with svc.lock:
            svc.version += 1
        return dict(row, table_told=told)

    def command(table, op, args, ident):
        from .commands import CommandRefused
        if svc.commands is None:
            raise HTTPException(409, {"error": "no_commands", "message": "pas de clé de commande (--floor-key)"})
        try:
            ans = svc.commands.send(ident, table, op, args)
        except CommandRefused as e:
            return refused(e)
        return JSONResponse(ans, status_code=200 if ans.get("ok") else 502)

    @app.post("/floor/api/tables/{table}/open")
    def open_table(table: str, ident=Depends(need("pit_boss"))):
        return command(table, "open", {}, ident)

    @app.post("/floor/api/tables/{table}/close")
    def close_table(table: str, ident=Depends(need("pit_boss"))):
        return command(table, "close", {}, ident)

    @app.post("/floor/api/tables/{table}/limits")
    def limits(table: str, body: dict[str, KindLimit], ident=Depends(need("director"))):
        """New limits by kind of bet ({"plein": {"min": 100, "max": 10000}}, cents), as the table's
        PUT /table/limits."""
        if not body or any(v.max < v.min for v in body.values()):
            return JSONResponse({"error": "bad_limits", "message": "limites vides, ou un maximum sous son minimum"},
                                status_code=400)
        return command(table, "set_limits", {k: v.model_dump() for k, v in body.items()}, ident)

    @app.post("/floor/api/tables/{table}/settings")
    def request_setting(table: str, body: Setting, ident=Depends(need("director"))):
        from .commands import CommandRefused
        if svc.commands is None:
            raise HTTPException(409, {"error": "no_commands", "message": "pas de clé de commande (--floor-key)"})
        try:
            ans = svc.commands.request_setting(ident, table, body.setting, body.value)
        except CommandRefused as e:
            return refused(e)
        with svc.lock:
            svc.version += 1
        return JSONResponse(ans, status_code=200 if ans.get("ok") else 502)

    @app.post("/floor/api/pending/{pid}/approve")
    def approve(pid: str, ident=Depends(need("pit_boss"))):
        from .commands import CommandRefused
        if svc.commands is None:
            raise HTTPException(409, {"error": "no_commands", "message": "pas de clé de commande (--floor-key)"})
        try:
            ans = svc.commands.approve_setting(ident, pid)
        except CommandRefused as e:
            return refused(e)
        with svc.lock:
            svc.version += 1
        return JSONResponse(ans, status_code=200 if ans.get("ok") else 502)

    return app

