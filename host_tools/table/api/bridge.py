"""The fronts' bridge (les guichets): HTTP parsed in processes of their own, the table app in the daemon.

A daemon is one Python process: its committer and its HTTP loop take turns on one interpreter
lock, so parsing HTTP and recording bets share one core however many the machine has. With
`fronts = N` (docs/operators/configuration.md) the daemon starts N front processes
(api/front.py) that accept the connections on the daemon's own listening socket, parse HTTP,
apply the Guard (Host, Origin, JSON bodies of bounded size) and hand each request to the daemon
over a socket pair. The daemon runs it through the same app, every route and check as without
fronts (the Guard's work not done twice), and hands the answer back as it comes: the live
events stream through. A front decides nothing: no token is read, no bet judged there.

A frame on the pair: its length (4 bytes, big-endian, what follows), the header's length
(4 bytes), the header (JSON), the body (bytes).
- front to daemon: `{"i": id, "k": "req", ...the request...}` + its body; `{"i": id, "k": "gone"}`
  when the client has left (a stream's reader closed the page); `{"k": "ready"}` once it listens;
- daemon to front: `{"i": id, "k": "whole", "s": status, "h": headers}` + the body, or for an
  answer made in parts (the live events) `{"i": id, "k": "start", "s": status, "h": headers}`,
  then `{"i": id, "k": "body", "m": more}` + bytes, the last with `m` false.
"""

from __future__ import annotations

import asyncio
import logging
import struct

import orjson

from host_tools.table.api.fastpath import INTERNAL
from host_tools.table.api.guard import BODY, GUARDED

log = logging.getLogger("cylindre.fronts")

MAX_FRAME = 1 << 24             # a frame longer than this is a broken pair, not a request
_HEAD = struct.Struct(">II")


class BridgeError(Exception):
    """The other end sent what no front or daemon sends: the pair is closed."""


def frame(header: dict, body: bytes = b"") -> bytes:
    h = orjson.dumps(header)
    return _HEAD.pack(4 + len(h) + len(body), len(h)) + h + body


class Frames:
    """Frames out of a byte stream, whatever the cuts."""

    def __init__(self):
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[dict, bytes]]:
        buf = self.buf
        buf += data
        out, at = [], 0
        while len(buf) - at >= 8:
            n, hn = _HEAD.unpack_from(buf, at)
            if n > MAX_FRAME or hn > n - 4:
                raise BridgeError(f"a frame of {n} bytes with a header of {hn}")
            if len(buf) - at < 4 + n:
                break
            h = orjson.loads(bytes(buf[at + 8:at + 8 + hn]))
            if not isinstance(h, dict):
                raise BridgeError("a frame's header is not a JSON object")
            out.append((h, bytes(buf[at + 8 + hn:at + 4 + n])))
            at += 4 + n
        if at:
            del buf[:at]
        return out


def request_header(i: int, scope: dict) -> dict:
    """What the daemon needs of a request's scope, JSON-able (a front's side)."""
    return {"i": i, "k": "req", "m": scope["method"], "p": scope["path"],
            "rp": (scope.get("raw_path") or scope["path"].encode()).decode("latin-1"),
            "q": scope.get("query_string", b"").decode("latin-1"), "v": scope.get("http_version", "1.1"),
            "s": scope.get("scheme", "http"), "rt": scope.get("root_path", ""),
            "h": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
            "c": list(scope["client"]) if scope.get("client") else None,
            "sv": list(scope["server"]) if scope.get("server") else None,
            "j": BODY in scope}


def scope_of(h: dict, body: bytes) -> dict:
    """The request's ASGI scope again (the daemon's side), marked as passed by a front's Guard;
    the body the Guard parsed is parsed again here (orjson: microseconds), not trusted as sent."""
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": h["v"],
             "method": h["m"], "scheme": h["s"], "path": h["p"], "raw_path": h["rp"].encode("latin-1"),
             "query_string": h["q"].encode("latin-1"), "root_path": h["rt"],
             "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in h["h"]],
             "client": tuple(h["c"]) if h["c"] else None, "server": tuple(h["sv"]) if h["sv"] else None,
             GUARDED: True}
    if h["j"]:
        scope[BODY] = orjson.loads(body)
    return scope


class DaemonSide(asyncio.Protocol):
    """The daemon's end of one front's pair: an ordinary placement begun at once (`_place`), any
    other request run through `app` in a task of its own (`_serve`)."""

    def __init__(self, app, name: str, lost=None, ready=None):
        self.app = app
        self.placements = getattr(app.state, "placements", None)   # the ordinary placement's own path (api/fastpath.py)
        self.name = name
        self.lost = lost                # called with the error (or None) when the pair closes
        self.ready = ready              # called when the front says it is listening
        self.frames = Frames()
        self.gone: dict[int, asyncio.Event] = {}
        self.tasks: set[asyncio.Task] = set()
        self.transport = None
        self.out: list[bytes] = []

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        try:
            got = self.frames.feed(data)
        except (BridgeError, ValueError) as e:
            log.error("fronts: %s sent a broken frame (%s): its pair is closed", self.name, e)
            self.transport.close()
            return
        for h, body in got:
            kind = h.get("k")
            if kind == "req":
                if self._ordinary(h) and self._place(h, body):
                    continue
                self._task(h, body)
            elif kind == "ready":
                if self.ready is not None:
                    self.ready()
            elif kind == "gone":
                ev = self.gone.get(h.get("i"))
                if ev is not None:
                    ev.set()

    def connection_lost(self, exc):
        for ev in self.gone.values():
            ev.set()                    # every stream of that front ends: its clients are gone with it
        if self.lost is not None:
            self.lost(exc)

    def _ordinary(self, h) -> bool:
        """A placement the app's FastPlacements would answer itself, with no browser's Origin (whose
        answer the CORS middleware, outside it, dresses): answered by `_place`, without the app."""
        return (self.placements is not None and h.get("k") == "req" and h.get("m") == "POST"
                and h.get("p") in self.placements.ROUTES and not h.get("q") and not h.get("rt") and h.get("j")
                and not any(k == "origin" for k, _ in h.get("h", ())))

    def _place(self, h, body) -> bool:
        """An ordinary placement begun here, without a task (`fastpath.Placements.start`), its
        answer written when its group is over; False when the whole app must answer it (a token
        unknown or too low, a duplicated header...), which it then does in a task of its own."""
        i = h["i"]

        def done(status, data):
            if status is None:          # the token was revoked since it was cached: the app reads it again
                return self._task(h, body)
            self._write(frame({"i": i, "k": "whole", "s": status,
                               "h": [["content-length", str(len(data))], ["content-type", "application/json"]]}, data))
        try:
            return self.placements.start(h["p"], [(k.encode("latin-1"), v.encode("latin-1")) for k, v in h["h"]],
                                         orjson.loads(body), done)
        except Exception:
            log.exception("fronts: a placement from %s ended on an error", self.name)
            done(500, INTERNAL)
            return True

    def _task(self, h, body):
        gone = self.gone[h["i"]] = asyncio.Event()
        t = asyncio.get_running_loop().create_task(self._serve(h, body, gone))
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    async def _serve(self, h, body, gone):
        i = h["i"]
        started = ended = False
        try:
            scope = scope_of(h, body)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            log.error("fronts: %s sent a request the daemon cannot read (%s)", self.name, e)
            self._write(frame({"i": i, "k": "start", "s": 500, "h": [["content-type", "application/json"]]}))
            self._write(frame({"i": i, "k": "body", "m": False},
                              b'{"error":"internal","message":"the front sent a request the daemon could not read"}'))
            self.gone.pop(i, None)
            return
        sent = False

        async def receive():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        head = None

        async def send(msg):
            nonlocal started, ended, head
            if gone.is_set() and started:
                raise OSError("the client is gone")     # a stream's generator stops here
            t = msg["type"]
            if t == "http.response.start":
                started = True
                head = {"i": i, "k": "start", "s": msg["status"],
                        "h": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in msg.get("headers", ())]}
            elif t == "http.response.body":
                more = bool(msg.get("more_body", False))
                ended = not more
                body = bytes(msg.get("body", b""))
                if head is not None:
                    if not more:                # the usual answer: head and body in one frame
                        head["k"] = "whole"
                        self._write(frame(head, body))
                        head = None
                        return
                    self._write(frame(head))
                    head = None
                self._write(frame({"i": i, "k": "body", "m": more}, body))

        try:
            await self.app(scope, receive, send)
        except Exception:
            if not gone.is_set():
                log.exception("fronts: a request from %s ended on an error", self.name)
        finally:
            self.gone.pop(i, None)
            if head is not None:
                self._write(frame(head))
            if not started:
                self._write(frame({"i": i, "k": "start", "s": 500, "h": [["content-type", "application/json"]]}))
            if not ended:
                self._write(frame({"i": i, "k": "body", "m": False},
                                  b"" if started else b'{"error":"internal","message":"the daemon gave no answer"}'))

    def _write(self, data: bytes):
        """Frames made in one turn of the loop go out in one write (one system call, not one each)."""
        if not self.out:
            asyncio.get_running_loop().call_soon(self._flush)
        self.out.append(data)

    def _flush(self):
        out, self.out = self.out, []
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out))
