"""A real nats-server for the floor's tests (host_tools/natsrv.py), and a helper to run a coroutine.

`from natskit import nats_server` in a test module makes the fixture available: a server with
JetStream in the test's temporary directory, stopped after the test."""

import asyncio
import subprocess
from pathlib import Path

import pytest

from host_tools import natsrv


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
    """A CA and certificates for 127.0.0.1 signed by it (openssl), as a casino's IT would make:
    `server.pem` for the client port, `route.pem` for the cluster's routes (no extended key usage:
    good for both ends of a route)."""
    def ssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=casino CA",
        "-keyout", str(d / "ca-key.pem"), "-out", str(d / "ca.pem"))
    (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "route"):
        ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", str(d / f"{name}-key.pem"),
            "-out", str(d / f"{name}.csr"))
        ssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca-key.pem"),
            "-CAcreateserial", "-days", "2", "-extfile", str(d / "san.cnf"), "-out", str(d / f"{name}.pem"))
