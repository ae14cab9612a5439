"""Serving the table app: uvicorn with our HTTP/1.1 protocols (a JSON 400 for a request the
parser cannot take, a gentle close, TCP_NODELAY on every connection)."""

from __future__ import annotations

import json
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol


class _GentleBadRequest:
    """Part of our HTTP/1.1 protocols: a request the parser cannot take (a negative or malformed
    Content-Length, a bad header line) is answered with our JSON error instead of uvicorn's text/plain
    one. The connection then closes gently: our side first (FIN), the rest of the client's request
    read and dropped for up to LINGER_S, so the client reads the answer instead of a connection reset.
    And every connection gets TCP_NODELAY (`_no_delay`)."""

    LINGER_S = 2.0
    _lingering = False
    BAD_REQUEST = json.dumps({"error": "bad_request", "message": "malformed HTTP request (request line, a header, "
                              "or a Content-Length that is not a non-negative integer)"}).encode()

    def connection_made(self, transport) -> None:
        _no_delay(transport)
        super().connection_made(transport)

    def send_400_response(self, msg: str) -> None:
        data = self.BAD_REQUEST
        self.transport.write(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (len(data), data))
        self._lingering = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(self.LINGER_S, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if not self._lingering:
            super().data_received(data)

    def eof_received(self) -> None:
        if self._lingering:
            self.transport.close()
        else:
            super().eof_received()


class JsonH11(_GentleBadRequest, H11Protocol):
    """uvicorn's pure-Python HTTP/1.1 protocol (h11), with our 400 and TCP_NODELAY."""


def http_protocol():
    """The HTTP/1.1 protocol the daemon serves with: uvicorn's on httptools (the C parser of
    Node's llhttp: 0.55 against 0.64 ms of daemon CPU a bet with h11, docs/internals/performance.md) when it is
    installed (a dependency), else the one on h11; both with our JSON 400 and TCP_NODELAY."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:                 # httptools has no wheel for this platform: h11 serves
        return JsonH11

    class JsonHttpTools(_GentleBadRequest, HttpToolsProtocol):
        """uvicorn's HTTP/1.1 protocol on httptools, with our 400 and TCP_NODELAY."""

    return JsonHttpTools


def _no_delay(transport) -> None:
    """TCP_NODELAY on a connection. asyncio sets it only on sockets made with proto IPPROTO_TCP,
    and the daemon's listening socket (cli.py) is made with proto 0: without it an answer's
    head and body went as two segments, the body held (Nagle) until the client's delayed ACK of
    the head, 40 ms later, so every request took at least 44 ms (docs/internals/performance.md)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:                 # the connection is already gone: nothing to speed up
            pass


# an idle keep-alive connection is kept this long: a betting terminal holds one from coup to coup
# (uvicorn's default, 5 s, closed it between coups and every slip paid a new connection)
KEEP_ALIVE_S = 75


def server(app, *, behind_proxy=False, tls_cert=None, tls_key=None, access_log=False, http=None):
    """The uvicorn server of the app (run it with `.run(sockets=[...])`); `http`: the protocol class
    (default `http_protocol()`)."""
    import uvicorn
    return uvicorn.Server(uvicorn.Config(
        app, http=http or http_protocol(), log_config=None, access_log=access_log, proxy_headers=behind_proxy,
        ssl_certfile=tls_cert, ssl_keyfile=tls_key, timeout_graceful_shutdown=2, server_header=False,
        timeout_keep_alive=KEEP_ALIVE_S,
        lifespan="off"))
