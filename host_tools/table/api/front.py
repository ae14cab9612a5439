"""A front (un guichet): one process of the daemon's HTTP, started by the daemon (`fronts = N`).

It listens at the daemon's address (a socket of its own, SO_REUSEPORT), parses HTTP with uvicorn,
applies the Guard, and hands every request to the daemon over its socket pair (api/bridge.py);
the daemon's answer comes back as it is made, a stream included. When the daemon is gone (its
end of the pair closed) the front stops: it never answers on its own what the daemon decides.

    python -m host_tools.table.api.front --bridge-fd M --conf JSON
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import socket
import sys

from host_tools.table.api import bridge as B
from host_tools.table.api.guard import Guard
from host_tools.table.heap import Heap, collect_if_due

log = logging.getLogger("cylindre.front")

BACKLOG = 2048                  # uvicorn's own
HEAP_TURN_S = 1.0               # how often the front asks whether its whole heap is due a scan
UNAVAILABLE = b'{"error":"unavailable","message":"the table daemon is not answering: try again"}'


class FrontSide(asyncio.Protocol):
    """The front's end of the pair: answers routed to their request by id."""

    def __init__(self, closed):
        self.frames = B.Frames()
        self.waiting: dict[int, asyncio.Queue] = {}
        self.ids = itertools.count(1)
        self.transport = None
        self.out: list[bytes] = []
        self.closed = closed            # an asyncio.Event, set when the daemon's end is gone

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        try:
            got = self.frames.feed(data)
        except (B.BridgeError, ValueError) as e:
            log.error("front: the daemon sent a broken frame (%s)", e)
            self.transport.close()
            return
        for h, body in got:
            q = self.waiting.get(h.get("i"))
            if q is not None:
                q.put_nowait((h, body))

    def connection_lost(self, exc):
        for q in self.waiting.values():
            q.put_nowait(None)
        self.closed.set()

    def open(self) -> tuple[int, asyncio.Queue]:
        i = next(self.ids)
        q = self.waiting[i] = asyncio.Queue()
        return i, q

    def send(self, data: bytes) -> bool:
        """Queued for the pair; requests made in one turn of the loop go out in one write."""
        if self.transport is None or self.transport.is_closing():
            return False
        if not self.out:
            asyncio.get_running_loop().call_soon(self._flush)
        self.out.append(data)
        return True

    def _flush(self):
        out, self.out = self.out, []
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out))


class Forward:
    """The ASGI app of a front, inside its Guard: every request to the daemon, every answer back."""

    def __init__(self, side: FrontSide):
        self.side = side

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return                      # lifespan is off; the table serves no websockets
        body, more = b"", True
        while more:                     # the Guard has read it already and replays it whole
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        side = self.side
        i, q = side.open()
        watch = None
        try:
            if not side.send(B.frame(B.request_header(i, scope), body)):
                return await _unavailable(send)
            watch = asyncio.ensure_future(self._watch(i, receive))
            started = False
            while True:
                got = await q.get()
                if got is None:             # the daemon went away mid-answer
                    if not started:
                        await _unavailable(send)
                    return
                h, data = got
                if h["k"] == "whole":
                    await send({"type": "http.response.start", "status": h["s"],
                                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in h["h"]]})
                    await send({"type": "http.response.body", "body": data})
                    return
                if h["k"] == "start":
                    started = True
                    await send({"type": "http.response.start", "status": h["s"],
                                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in h["h"]]})
                elif h["k"] == "body":
                    await send({"type": "http.response.body", "body": data, "more_body": h["m"]})
                    if not h["m"]:
                        return
        finally:
            side.waiting.pop(i, None)
            if watch is not None:
                watch.cancel()

    async def _watch(self, i, receive):
        """The client leaving while its answer streams: the daemon is told, its stream stops."""
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                self.side.send(B.frame({"i": i, "k": "gone"}))
                return


async def _unavailable(send):
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1"),
                            (b"content-length", b"%d" % len(UNAVAILABLE))]})
    await send({"type": "http.response.body", "body": UNAVAILABLE})


async def serve(listen: socket.socket, pair: socket.socket, conf: dict) -> None:
    from host_tools.table.api.server import server as http_server

    loop = asyncio.get_running_loop()
    closed = asyncio.Event()
    _, side = await loop.connect_accepted_socket(lambda: FrontSide(closed), pair)
    app = Guard(Forward(side), hosts=conf["hosts"], origins=conf["origins"], max_body=conf["max_body"])
    server = http_server(app, behind_proxy=conf["behind_proxy"], tls_cert=conf["tls_cert"],
                         tls_key=conf["tls_key"], access_log=conf["access_log"])

    async def daemon_gone():
        await closed.wait()
        server.should_exit = True

    async def ready():
        while not server.started and not server.should_exit:
            await asyncio.sleep(0.01)
        side.send(B.frame({"k": "ready", "pid": os.getpid()}))

    async def whole_heap():
        while True:                     # the frozen heap's whole scan, every FULL_EVERY_S (heap.py)
            await asyncio.sleep(HEAP_TURN_S)
            collect_if_due()

    gone = asyncio.ensure_future(daemon_gone())
    told = asyncio.ensure_future(ready())
    heap = asyncio.ensure_future(whole_heap())
    try:
        await server.serve(sockets=[listen])
    finally:
        gone.cancel()
        told.cancel()
        heap.cancel()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m host_tools.table.api.front",
                                description="one HTTP front of a table daemon (started by the daemon: fronts = N)")
    p.add_argument("--bridge-fd", type=int, required=True, help="the front's end of its pair with the daemon")
    p.add_argument("--conf", required=True, help="JSON: bind [host, port], family, hosts, origins, max_body, behind_proxy, "
                                             "tls_cert, tls_key, access_log")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        conf = json.loads(args.conf)
        pair = socket.socket(fileno=args.bridge_fd)
        listen = socket.socket(conf["family"], socket.SOCK_STREAM)
        listen.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listen.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listen.bind(tuple(conf["bind"]))
        listen.listen(BACKLOG)          # the kernel queues this front's share of connections from now on
    except (ValueError, KeyError, OSError) as e:
        print(f"front: {e}", file=sys.stderr)
        return 2
    pair.setblocking(False)
    Heap().install()                    # as the daemon's: each collection scans what is new (heap.py)
    asyncio.run(serve(listen, pair, conf))
    log.info("front %d stopped", os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main())
