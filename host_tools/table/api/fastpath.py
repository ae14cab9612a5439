"""The placements' fast path: `POST /bets` and `POST /slips` answered without FastAPI's routing.

A stadium's terminals send hundreds of slips a second in the last seconds before the call; on one
core, FastAPI's routing, dependency solving and response classes cost more than recording the
bets. This pure ASGI middleware sits inside the Guard (Host, Origin, a bounded JSON body: already
checked and parsed) and in front of the app. It serves the ordinary request only: exactly one
`Authorization: Bearer` of a live token whose role may place (croupier for a bet, terminal for a
slip), at most one Idempotency-Key of at most 128 characters, no query string, a body. That
request goes to the same `TableHost` calls as the routes (api/app.py, api/slips.py) and gets the
same answers: 201 with the table's dict, 409/422 with the refusal and its bet or slip, 400
invalid_bet / invalid_slip. Anything else (no token, an unknown or revoked one, a role too low,
a duplicated header, a query string) goes on to the app, whose guard (roles.py) answers it:
401, 403 with its audit row, 429 from the throttle, 400 for a bad parameter — one place decides
those. The token is read through the tokens' cache (auth.py `Tokens.vouch`); the group that
records the placement checks it again in its transaction, and a token revoked meanwhile places
nothing: the request then goes on to the app, which reads the token afresh (401).
"""

from __future__ import annotations

import asyncio
import logging

import orjson

from host_tools.table.api.guard import BODY
from host_tools.table.game.committer import Unvouched
from host_tools.table.game.gate import Invalid, Refused

log = logging.getLogger("cylindre.api")

INTERNAL = b'{"error":"internal","message":"internal error (see the daemon log)"}'   # errors.py's 500
MAX_KEY = 128           # the routes' Header(max_length=128): a longer key is the app's 400
JSON_HEADERS = [(b"content-type", b"application/json")]


class Placements:
    """The ordinary placement answered (see the module): for the middleware below, and for the
    daemon's fronts (api/bridge.py), which hand it the request's parts without an ASGI scope."""

    # path -> (the role it needs, a slip?, the refusal's key for the bet or slip, the 400's code)
    ROUTES = {"/bets": ("croupier", False, "bet", "invalid_bet"),
              "/slips": ("terminal", True, "slip", "invalid_slip")}

    def __init__(self, host, served=None):
        self.host = host
        self.served = served if served is not None else [0]    # requests answered here (tests: which path answered)

    def _ordinary(self, path: str, headers):
        """(route, who, voucher, key) of an ordinary placement to `path` with `headers` ((name,
        value) bytes pairs), else None: the app's guard must answer it."""
        route = self.ROUTES.get(path)
        if route is None:
            return None
        auth = key = None
        for name, value in headers:
            if name == b"authorization":
                if auth is not None:
                    return None
                auth = value
            elif name == b"idempotency-key":
                if key is not None:
                    return None
                key = value
        if auth is None or (key is not None and len(key) > MAX_KEY):
            return None
        scheme, _, secret = auth.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer":
            return None
        who, voucher = self.host.tokens.vouch(secret.strip())
        if who is None or not who.may(route[0]):
            return None
        return route, who, voucher, None if key is None else key.decode("latin-1")

    async def answer(self, path: str, headers, body) -> tuple[int, bytes] | None:
        """(status, JSON) of an ordinary POST to `path` with `headers` and the parsed `body`;
        None when the app's guard must answer it (`start`, awaited)."""
        fut = asyncio.get_running_loop().create_future()
        if not self.start(path, headers, body, lambda status, data: fut.set_result((status, data))):
            return None
        status, data = await fut
        return None if status is None else (status, data)

    def start(self, path: str, headers, body, done) -> bool:
        """The placement begun without a coroutine (the fronts' bridge, api/bridge.py, takes hundreds
        a second on the daemon's one event loop): False when the app's guard must answer; else
        `done(status, JSON)` is called on the loop once answered, or `done(None, None)` when the
        token was revoked since it was cached (the app's guard then reads it again)."""
        got = self._ordinary(path, headers)
        if got is None:
            return False
        (role, slip, what, invalid), who, voucher, key = got
        try:
            fut, finish = self.host.place_begin(body, key, who, voucher, slip)
        except Invalid as e:
            self.served[0] += 1
            done(400, orjson.dumps({"error": invalid, "message": str(e)}))
            return True

        def over(_fut):
            try:
                out, status = finish(), 201
            except Refused as e:
                out, status = {"error": e.code, "message": e.message, what: e.bet}, e.http
            except Invalid as e:
                out, status = {"error": invalid, "message": str(e)}, 400
            except Unvouched:
                return done(None, None)
            except Exception:           # the group did not commit (its error is in the log): as the app's 500
                log.exception("a placement did not commit")
                return done(500, INTERNAL)
            self.served[0] += 1
            done(status, orjson.dumps(out))
        fut.add_done_callback(over)
        return True


class FastPlacements:
    """ASGI middleware: the ordinary `POST /bets` and `POST /slips` served here (see the module)."""

    def __init__(self, app, placements: Placements):
        self.app = app
        self.placements = placements

    async def __call__(self, scope, receive, send):
        if (scope["type"] != "http" or scope["method"] != "POST" or scope["query_string"] or scope.get("root_path")
                or BODY not in scope):
            return await self.app(scope, receive, send)
        got = await self.placements.answer(scope["path"], scope["headers"], scope[BODY])
        if got is None:
            return await self.app(scope, receive, send)
        status, data = got
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-length", b"%d" % len(data)), *JSON_HEADERS]})
        await send({"type": "http.response.body", "body": data})
