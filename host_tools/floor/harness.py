"""A floor started on one machine, for the bench and the tests: `cylindre floor` as its own process
(a SIGKILL is a crash, as in production; its CPU can be read from /proc) and the asyncio loop, in
a thread, that the simulated tables (simtables.py) and the test tables run on."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from host_tools.floor.natsrv import free_port


class FloorProcess:
    """`cylindre floor --db DB --nats URL` on a free port of 127.0.0.1, its output in `log` (a
    file under `work`). `start()` returns once the floor answers `/health` (`ready="up"`: up,
    broker or not) or once it consumes from the broker (`ready="connected"`)."""

    def __init__(self, work, db, nats_url, key=None, extra=(), log=None, ready="up"):
        self.work, self.db, self.nats_url = Path(work), str(db), nats_url
        self.key, self.extra, self.ready = key, list(extra), ready
        self.port = free_port()
        self.log = self.work / (log or f"floor-{self.port}.log")
        self.proc = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout=60.0) -> "FloorProcess":
        cmd = [sys.executable, "-m", "host_tools.cli", "floor", "--db", self.db, "--nats", self.nats_url,
               "--http", f"127.0.0.1:{self.port}"] + (["--floor-key", str(self.key)] if self.key else []) + self.extra
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            h = self.health()
            if h is not None and (self.ready == "up" or h.get("broker") == "connected"):
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"the floor exited {self.proc.returncode}: " + self.log.read_text()[-2000:])
            time.sleep(0.05)
        raise RuntimeError(f"the floor was not {self.ready} within {timeout:g} s: " + self.log.read_text()[-2000:])

    def health(self) -> dict | None:
        """`/health` as a dict (a 503 too: up, the broker not yet); None while nothing answers."""
        try:
            with urllib.request.urlopen(self.base + "/health", timeout=2) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            try:
                return json.loads(e.read() or b"{}")
            except ValueError:
                return {}
        except (OSError, ValueError):
            return None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self, timeout=20.0):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()


class LoopThread:
    """An asyncio loop in a thread of this process, for coroutines started from plain code."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def submit(self, coro):
        """Start `coro` on the loop: its concurrent future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro, timeout=60.0):
        """Run `coro` on the loop and wait for its result."""
        return self.submit(coro).result(timeout)

    def call(self, fn, *args):
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self):
        """Cancel what still runs on the loop, wait for it, then stop the loop."""
        async def cancel_all():
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        try:
            self.run(cancel_all())
        except Exception:                                # noqa: BLE001 - stopping anyway
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
