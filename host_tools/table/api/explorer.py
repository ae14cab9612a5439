"""The API explorer (`/docs`): Swagger UI on this daemon's own /openapi.json, served from the
packaged files, for the integrators who connect tills and tote boards (docs/integrators/http-api.md).
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import Response
from starlette.routing import Route

log = logging.getLogger("cylindre.pit")

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
