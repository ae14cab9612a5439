"""A real nats-server for the floor's tests (host_tools/floor/natsrv.py), and a helper to run a coroutine.

`from natskit import nats_server` in a test module makes the fixture available: a server with
JetStream in the test's temporary directory, stopped after the test."""

import asyncio
from pathlib import Path

import pytest

from host_tools.floor import natsrv


@pytest.fixture
def nats_server(tmp_path):
    srv = natsrv.Server(tmp_path / "jetstream")
    srv.start()
    try:
        yield srv
    finally:
        srv.close()


def run(coro, timeout=30):
    """Run a coroutine to its end on a fresh event loop, within `timeout` seconds."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def until(predicate, timeout=15.0, every=0.02, what="condition"):
    """Wait (async) until `predicate()` (sync or async) is true."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        v = predicate()
        if asyncio.iscoroutine(v):
            v = await v
        if v:
            return v
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(every)


def make_tls(d: Path):
    """A CA and certificates for 127.0.0.1 (host_tools/floor/natscluster.py)."""
    from host_tools.floor.natscluster import make_tls as make
    return make(d)


class Cable:
    """A TCP relay between a client and the broker whose line can be cut without a word: `cut()`
    stops carrying bytes both ways (no FIN, no RST: what a pulled cable or a dead switch does;
    the bytes wait in the sockets), `mend()` carries them again. `url` is the client's side."""

    def __init__(self, upstream_port: int):
        import socket
        import threading
        self.up = upstream_port
        self.flowing = threading.Event()
        self.flowing.set()
        self.closed = threading.Event()
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.port = self.srv.getsockname()[1]
        self.url = f"nats://127.0.0.1:{self.port}"
        self.socks = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import socket
        import threading
        while not self.closed.is_set():
            try:
                a, _ = self.srv.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(("127.0.0.1", self.up), timeout=2)
            except OSError:
                a.close()
                continue
            self.socks += [a, b]
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src, dst):
        import select
        while not self.closed.is_set():
            if not self.flowing.wait(0.05):
                continue
            try:
                r, _, _ = select.select([src], [], [], 0.05)
            except (OSError, ValueError):   # the other direction ended and closed both sockets
                break
            if not r or not self.flowing.is_set():
                continue
            try:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
            except OSError:
                break
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass

    def cut(self):
        self.flowing.clear()

    def mend(self):
        self.flowing.set()

    def close(self):
        self.closed.set()
        self.srv.close()
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass
