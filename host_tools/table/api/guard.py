"""The guard in front of the table app (pure ASGI): a foreign Host header is refused (421), a
cross-origin request (403), a body that is not JSON (415), too large (413), too deep or with too
large a number (400), before any route sees it."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

MAX_DEPTH = 8           # nesting of a request body (a bet needs 3)
MAX_INT_DIGITS = 15     # a number in a request body (cents up to 10^15 - 1)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")
UNSAFE = ("POST", "PUT", "DELETE", "PATCH")


BODY = "cylindre.json"      # the scope's key of the body as the guard parsed it (POST /bets reads it)
GUARDED = "cylindre.guarded"  # the scope's mark of a request a front's Guard has passed (set by the daemon only)


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
        if scope["type"] != "http" or scope.get(GUARDED):     # a front's Guard has passed it (api/bridge.py)
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



def _same_origin(origin, host, scope):
    scheme = "https" if scope.get("scheme") == "https" else "http"
    return origin.lower() in (f"{scheme}://{host}".lower(), f"https://{host}".lower())


_DIGIT_RUNS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))    # a digit -> 0, anything else -> space
_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST = re.compile(rb"\[\]|\{\}")


def _parse_json(body: bytes) -> tuple[str | None, Any]:
    """(None, the value) for an acceptable JSON body, (what is wrong, None) otherwise. The
    ordinary body is read in C (orjson; no run of digits longer than a number may be; its
    brackets' depth from its text outside strings); any other (invalid, deep, a long run of
    digits, a backslash) is read by `_parse_json_exact`, which says what is wrong in the same
    words whatever the path."""
    if b"\\" not in body and _LONG_RUN not in body.translate(_DIGIT_RUNS):
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _parse_json_exact(body)
        if _shallow(body):
            return None, value
    return _parse_json_exact(body)


def _shallow(valid: bytes) -> bool:
    """A valid JSON text without a backslash nested MAX_DEPTH levels at most: its brackets
    outside strings (every other piece between quotes), the innermost pairs taken away one
    level at a time."""
    brackets = b"".join(valid.split(b'"')[0::2]).translate(None, _NOT_BRACKET)
    for _ in range(MAX_DEPTH):
        if len(brackets) <= 2:
            return True
        brackets = _INNERMOST.sub(b"", brackets)
    return not brackets


def _parse_json_exact(body: bytes) -> tuple[str | None, Any]:
    """`_parse_json` in Python, number by number and bracket by bracket."""
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
