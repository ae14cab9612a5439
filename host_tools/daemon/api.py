"""The local HTTP API (stdlib `http.server`, one thread per request) and its OpenAPI document.

JSON in, JSON out; errors are `{"error": code, "message": text}` with a 4xx status: 400 bad
request, 404 unknown bet or spin, 409 refused now (table closed, poussette, not open), 413 body too
large, 502/504 when the wheel answers no or does not answer. `GET /events` is a Server-Sent Events
stream of the table's live events.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from .table import Invalid, NotFound, Refused

log = logging.getLogger("cylindre.api")
MAX_BODY = 64 * 1024
MAX_DEPTH = 8               # JSON nesting a request may have (a bet needs 3)

_BET_SCHEMA = {
    "type": "object", "required": ["player", "type"],
    "properties": {
        "player": {"type": "string", "maxLength": 64},
        "type": {"type": "string", "description": "plein cheval transversale carre sixain douzaine colonne rouge noir pair "
                                                   "impair manque passe, or a called bet: voisins tiers orphelins nassa "
                                                   "jeu_zero voisins_numero finale finale_cheval finale_chevaux (docs/settle.md)"},
        "numbers": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 36}},
        "which": {"type": "integer", "description": "dozen or column 1..3"},
        "stake": {"type": "integer", "description": "cents (bets on the layout)"},
        "unit": {"type": "integer", "description": "cents per chip (called bets)"},
        "replay": {"type": "string", "description": "called bets: refaire, completer or tout"},
        "zero_choice": {"description": 'even chances only (refused on any other bet): at zero "prison" (default), "partage" or {"move": "<chance>"}'},
    },
}
_ERR = {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def openapi() -> dict:
    ok = {"description": "ok", "content": {"application/json": {}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Cylindre table daemon", "version": "1",
                 "description": "Bets, table state, live events, history and game recall of one roulette table. "
                                "Money is integer cents."},
        "components": {"schemas": {
            "Bet": _BET_SCHEMA,
            "Error": {"type": "object", "properties": {"error": {"type": "string"}, "message": {"type": "string"}}},
        }},
        "paths": {
            "/openapi.json": {"get": {"summary": "this document", "responses": {"200": ok}}},
            "/state": {"get": {"summary": "the link, the wheel and the table now", "responses": {"200": ok}}},
            "/bets": {
                "get": {"summary": "bets, newest first",
                        "parameters": [{"name": n, "in": "query", "schema": {"type": t}} for n, t in
                                       (("status", "string"), ("spin", "integer"), ("player", "string"), ("limit", "integer"))],
                        "responses": {"200": ok, "400": _ERR}},
                "post": {"summary": "place a bet (plain or called); 409 when refused (table_closed, poussette, wheel_not_heard: "
                                    "recorded); unknown fields and fields the table sets (carried, status, consent, ...) are 400; "
                                    "an Idempotency-Key header makes a retry return the first answer (422 idempotency_mismatch if "
                                    "the key was used for another request)",
                         "parameters": [{"name": "Idempotency-Key", "in": "header", "required": False,
                                         "schema": {"type": "string", "maxLength": 128}}],
                         "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Bet"}}}},
                         "responses": {"201": ok, "400": _ERR, "409": _ERR, "413": _ERR, "422": _ERR}}},
            "/bets/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "get": {"summary": "one bet with its result once settled", "responses": {"200": ok, "404": _ERR}},
                "delete": {"summary": "withdraw an open bet", "responses": {"200": ok, "404": _ERR, "409": _ERR}}},
            "/bets/{id}/consent": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "post": {"summary": "the chef de table's consent to a straddle awaiting it (two dozens or two columns): "
                                   "the bet joins the layout; 409 not_awaiting_consent otherwise",
                         "responses": {"200": ok, "404": _ERR, "409": _ERR}}},
            "/bets/{id}/resolve": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "post": {"summary": "the supervisor's decision on a held bet (result lost with the wheel's power): "
                                   "{\"action\": \"refund\"} or {\"action\": \"play\"} (plays the next spin)",
                         "responses": {"200": ok, "400": _ERR, "404": _ERR, "409": _ERR}}},
            "/events": {"get": {"summary": "live event stream (text/event-stream): announce, bet, cancel, settlement, wheel, status, link",
                                "responses": {"200": {"description": "SSE", "content": {"text/event-stream": {}}}}}},
            "/history": {"get": {"summary": "settled spins, newest first",
                                 "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer", "default": 10}}],
                                 "responses": {"200": ok, "400": _ERR}}},
            "/spins/{spin}": {"get": {"summary": "game recall: the wheel's events with their frames, the bets, the settlement",
                                      "parameters": [{"name": "spin", "in": "path", "required": True, "schema": {"type": "integer"}}],
                                      "responses": {"200": ok, "400": _ERR, "404": _ERR}}},
            "/table/open": {"post": {"summary": "open the table (tells the wheel)", "responses": {"200": ok, "504": _ERR}}},
            "/table/close": {"post": {"summary": "close the table (tells the wheel; a spin in progress is void)", "responses": {"200": ok, "504": _ERR}}},
            "/wheel/settings": {
                "get": {"summary": "the wheel's spin settings", "responses": {"200": ok, "504": _ERR}},
                "put": {"summary": "change one setting: {\"name\": ..., \"value\": ...}; the wheel enforces safe bounds",
                        "responses": {"200": ok, "400": _ERR, "502": _ERR, "504": _ERR}}},
            "/wheel/status": {"get": {"summary": "the wheel's status and link figures, asked now", "responses": {"200": ok, "504": _ERR}}},
            "/wheel/history": {"get": {"summary": "the wheel's last 10 games", "responses": {"200": ok, "504": _ERR}}},
            "/wheel/time": {"post": {"summary": "set the wheel's clock to the host's", "responses": {"200": ok, "504": _ERR}}},
        },
    }


class ApiError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def make_server(daemon, host="127.0.0.1", port=8737) -> ThreadingHTTPServer:
    table = daemon.table

    def wheel(cmd, args=None):
        reply = daemon.command(cmd, args)
        if reply is None:
            raise ApiError(504, "wheel_timeout", f"the wheel did not answer {cmd}")
        if not reply.get("ok"):
            raise ApiError(502 if cmd != "set_setting" else 400, "wheel_refused", reply.get("error") or "refused")
        return reply.get("result")

    def int_arg(q, name, default=None, lo=0, hi=10**9):
        v = q.get(name, [None])[0]
        if v is None:
            return default
        try:
            n = int(v)
        except ValueError:
            raise ApiError(400, "bad_parameter", f"{name} must be an integer") from None
        if not lo <= n <= hi:
            raise ApiError(400, "bad_parameter", f"{name} must be between {lo} and {hi}")
        return n

    routes = []

    def route(method, pattern):
        def deco(fn):
            routes.append((method, re.compile("^" + pattern + "$"), fn))
            return fn
        return deco

    @route("GET", "/openapi.json")
    def _doc(h, m, q):
        return 200, openapi()

    @route("GET", "/state")
    def _state(h, m, q):
        return 200, daemon.status()

    @route("POST", "/bets")
    def _place(h, m, q):
        body = h.json_body()
        try:
            return 201, table.place(body, idempotency_key=h.headers.get("Idempotency-Key"))
        except Invalid as e:
            raise ApiError(400, "invalid_bet", str(e)) from None
        except Refused as e:
            return e.http, {"error": e.code, "message": e.message, "bet": e.bet}

    @route("POST", r"/bets/(?P<id>[A-Za-z0-9._-]{1,40})/consent")
    def _consent(h, m, q):
        return 200, table.consent(m["id"])

    @route("GET", "/bets")
    def _bets(h, m, q):
        return 200, table.bets(status=q.get("status", [None])[0], spin=int_arg(q, "spin"),
                               player=q.get("player", [None])[0], limit=int_arg(q, "limit", 500, 1, 100000))

    @route("GET", r"/bets/(?P<id>[A-Za-z0-9._-]{1,40})")
    def _bet(h, m, q):
        return 200, table.bet(m["id"])

    @route("DELETE", r"/bets/(?P<id>[A-Za-z0-9._-]{1,40})")
    def _cancel(h, m, q):
        return 200, table.cancel(m["id"])

    @route("POST", r"/bets/(?P<id>[A-Za-z0-9._-]{1,40})/resolve")
    def _resolve(h, m, q):
        body = h.json_body()
        try:
            return 200, table.resolve_held(m["id"], body.get("action") if isinstance(body, dict) else None)
        except Invalid as e:
            raise ApiError(400, "bad_request", str(e)) from None

    @route("GET", "/history")
    def _history(h, m, q):
        return 200, table.history(int_arg(q, "limit", 10, 1, 10000))

    @route("GET", r"/spins/(?P<spin>-?\d{1,12})")
    def _recall(h, m, q):
        return 200, table.recall(int(m["spin"]))

    @route("POST", "/table/open")
    def _open(h, m, q):
        reply = daemon.open_table(True)
        return 200, {"table": table.state(), "wheel_confirmed": bool(reply and reply.get("ok"))}

    @route("POST", "/table/close")
    def _close(h, m, q):
        reply = daemon.open_table(False)
        return 200, {"table": table.state(), "wheel_confirmed": bool(reply and reply.get("ok"))}

    @route("GET", "/wheel/settings")
    def _settings(h, m, q):
        return 200, wheel("get_settings")

    @route("PUT", "/wheel/settings")
    def _set(h, m, q):
        body = h.json_body()
        if not isinstance(body, dict) or not isinstance(body.get("name"), str) or "value" not in body:
            raise ApiError(400, "bad_request", 'expected {"name": "<setting>", "value": <value>}')
        return 200, wheel("set_setting", {"name": body["name"], "value": body["value"]})

    @route("GET", "/wheel/status")
    def _wstatus(h, m, q):
        return 200, wheel("status")

    @route("GET", "/wheel/history")
    def _whist(h, m, q):
        return 200, wheel("history")

    @route("POST", "/wheel/time")
    def _time(h, m, q):
        import time as _t
        return 200, wheel("set_time", {"epoch_ms": int(_t.time() * 1000)})

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "cylindre/1"

        def log_message(self, fmt, *args):
            log.debug("%s %s", self.address_string(), fmt % args)

        def json_body(self):
            n = self.headers.get("Content-Length")
            if n is None:
                raise ApiError(400, "bad_request", "a JSON body with Content-Length is required")
            if not n.isdigit() or len(n) > 12:
                raise ApiError(400, "bad_request", "Content-Length must be a non-negative integer")
            n = int(n)
            if n > MAX_BODY:
                raise ApiError(413, "too_large", f"body over {MAX_BODY} bytes")
            raw = self.rfile.read(n)
            if _depth(raw) > MAX_DEPTH:
                raise ApiError(400, "bad_json", f"JSON nested deeper than {MAX_DEPTH} levels")
            try:
                return json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise ApiError(400, "bad_json", f"the body is not JSON: {e}") from None
            except (ValueError, RecursionError) as e:     # e.g. an integer over 4,300 digits
                raise ApiError(400, "bad_json", f"the body is not acceptable JSON: {str(e)[:120]}") from None

        def _send(self, status, obj):
            data = json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            if status >= 400:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def _dispatch(self, method):
            url = urlparse(self.path)
            if method == "GET" and url.path == "/events":
                return self._sse()
            q = parse_qs(url.query)
            allowed = False
            try:
                for meth, rx, fn in routes:
                    m = rx.match(url.path)
                    if m:
                        allowed = True
                        if meth == method:
                            status, obj = fn(self, m.groupdict(), q)
                            return self._send(status, obj)
                if allowed:
                    raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {url.path}")
                raise ApiError(404, "not_found", f"no such resource {url.path} (see /openapi.json)")
            except ApiError as e:
                self._send(e.status, {"error": e.code, "message": e.message})
            except NotFound as e:
                self._send(404, {"error": "not_found", "message": str(e)})
            except Refused as e:
                self._send(e.http, {"error": e.code, "message": e.message})
            except Invalid as e:
                self._send(400, {"error": "invalid", "message": str(e)})
            except (BrokenPipeError, ConnectionResetError):
                pass
            except Exception:
                log.exception("API error on %s %s", method, self.path)
                self._send(500, {"error": "internal", "message": "internal error (see the daemon log)"})

        def _sse(self):
            sub = daemon.broker.subscribe()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b": cylindre live events\n\n")
                self.wfile.flush()
                while not daemon.stop_flag.is_set():
                    try:
                        msg = sub.get(timeout=5)
                    except queue.Empty:
                        self.wfile.write(b": keep-alive\n\n")
                        self.wfile.flush()
                        continue
                    if msg is None:
                        break
                    mid, kind, data = msg
                    self.wfile.write(f"id: {mid}\nevent: {kind}\ndata: {data}\n\n".encode("utf-8"))
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                daemon.broker.unsubscribe(sub)
                self.close_connection = True

        def do_GET(self):
            self._dispatch("GET")

        def do_POST(self):
            self._dispatch("POST")

        def do_PUT(self):
            self._dispatch("PUT")

        def do_DELETE(self):
            self._dispatch("DELETE")

    srv = ThreadingHTTPServer((host, port), Handler)
    srv.daemon_threads = True
    return srv


def _depth(raw: bytes) -> int:
    """The deepest nesting of brackets in a JSON text, outside strings (checked before parsing)."""
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


def serve_in_thread(srv) -> threading.Thread:
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, name="cylindre-http", daemon=True)
    t.start()
    return t
