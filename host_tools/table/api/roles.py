"""Who may call a route: the bearer token's identity and its role (display < terminal < croupier < chef <
admin), refused with 401 or 403 (audited when the route names its action), and an address that
sent too many unknown tokens slowed (429, throttle.py)."""

from __future__ import annotations

import logging
from typing import Optional

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from host_tools.table.api.auth import Identity
from host_tools.table.api.errors import ApiError
from host_tools.table.api.throttle import client_of

log = logging.getLogger("cylindre.api")
bearer = HTTPBearer(auto_error=False, description="a token from `cylindre token add NAME --role ROLE`")


def needs(host, throttle, audit):
    """`need(role, action=None)`: a route's dependency on a token of `role` at least."""
    def need(role: str, action: str | None = None):
        """The route's dependency on a token of `role` at least. On the event loop: the token is read
        on its own connection (auth.py), which never waits for the journal; the audit row of a
        refusal is written on a worker thread (it takes the journal). An address that presented
        too many unknown tokens waits (429, throttle.py) before an unknown token of it is counted
        again; a live token from it is served all the same (tokens are 256-bit secrets: the
        throttle slows guessing and its logging, it never locks out the address's valid users). The
        address is the proxy's word for it only with --behind-proxy (uvicorn's proxy headers)."""
        async def check(request: Request, cred: Optional[HTTPAuthorizationCredentials] = Depends(bearer)) -> Identity:
            client = client_of(request.client.host if request.client else None)
            who = host.tokens.identify(cred.credentials if cred else None)
            if who is None:                     # the throttle slows unknown tokens, never a live one
                wait, line = throttle.check(client)
                if wait is not None:
                    if line:
                        log.warning("%s", line)
                    raise ApiError(429, "too_many_failures", f"too many unknown tokens from {client}: retry in {wait} s",
                                   headers={"Retry-After": str(wait)})
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
    return need
