"""The API's errors: `ApiError` (a status, a stable code, a message), the handlers that turn every
refusal into `{"error": code, "message": text}`, and the generated document's error responses."""

from __future__ import annotations

import json
import logging

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from host_tools.table.game.table import Invalid, NotFound, Refused

log = logging.getLogger("cylindre.api")


class ApiError(Exception):
    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers



def install(app) -> None:
    """The exception handlers of the table app: each refusal as its JSON error."""
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
        code = {"/bets": "invalid_bet", "/slips": "invalid_slip"}.get(request.url.path, "bad_request")
        return JSONResponse({"error": code, "message": str(e)}, 400)

    @app.exception_handler(RequestValidationError)
    async def _validation(request, e: RequestValidationError):
        errs = e.errors()
        where = errs[0]["loc"][0] if errs and errs[0].get("loc") else "body"
        code = "bad_parameter" if where in ("query", "path", "header") else (
            {"/bets": "invalid_bet", "/slips": "invalid_slip"}.get(request.url.path, "bad_request"))
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



def document(app, bet_model):
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
        bet = bet_model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(bet.pop("$defs", {}))
        schemas["BetIn"] = bet
        app.openapi_schema = doc
        return doc

    app.openapi = openapi

