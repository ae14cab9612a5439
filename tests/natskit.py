"""A real nats-server for the floor's tests (host_tools/natsrv.py), and a helper to run a coroutine.

`from natskit import nats_server` in a test module makes the fixture available: a server with
JetStream in the test's temporary directory, stopped after the test."""

import asyncio

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
