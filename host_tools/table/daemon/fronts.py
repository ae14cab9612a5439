"""The daemon's fronts (les guichets): N processes of its HTTP, each on its socket pair.

`fronts = N` (N > 0): the daemon binds its HTTP address as always (with SO_REUSEPORT, and does
not listen on it), then starts N front processes (api/front.py), each listening on a socket of
its own at that address: the kernel spreads the connections over them (a socket shared by all
would give a burst of connections to whichever front woke first). Each hands every request to
the daemon (api/bridge.py); the daemon serves the pairs on its HTTP thread, where uvicorn ran
before. The address stays the daemon's while fronts come and go: SO_REUSEPORT lets only the same
user's sockets join it. A front that dies is
started again (its clients' connections drop, as with a restart of the daemon); the daemon's
stop stops them. Why: docs/internals/performance.md, "The fronts".
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys

from host_tools.table.api.bridge import DaemonSide

log = logging.getLogger("cylindre.fronts")

RESTART_S = (0.2, 1.0, 2.0, 5.0)  # a front that dies again and again is started less and less often
STEADY_S = 60.0         # a front that listened this long before it died is started again at once
STOP_S = 5.0


def restart_delay(restarts: int, up_s: float | None) -> tuple[float, int]:
    """(seconds before a front is started again, its count of restarts after this one): the delay
    grows with each death in a row, and starts over for a front that had listened STEADY_S or
    more (`up_s`; None: it never said it listened)."""
    if up_s is not None and up_s >= STEADY_S:
        restarts = 0
    return RESTART_S[min(restarts, len(RESTART_S) - 1)], restarts + 1


class Fronts:
    def __init__(self, app, sock: socket.socket, n: int, conf: dict):
        self.app = app
        self.sock = sock
        self.n = n
        self.conf = conf                # the front's --conf (api/front.py)
        self.procs: dict[int, subprocess.Popen] = {}
        self.restarts = [0] * n
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.listening: set[int] = set()  # the fronts that said they listen
        self.since: dict[int, float] = {}   # when each said it (the loop's clock)

    def run(self) -> None:
        """The HTTP thread: start the fronts, serve their pairs until `stop`."""
        asyncio.run(self._main())

    def stop(self) -> None:
        if self.loop is not None and self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)

    async def _main(self):
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        for k in range(self.n):
            await self._start(k)
        log.info("fronts: %d processes started (pids %s)", self.n, " ".join(str(p.pid) for p in self.procs.values()))
        await self._stop.wait()
        await self._stop_all()

    async def _start(self, k: int) -> None:
        mine, theirs = socket.socketpair()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "host_tools.table.api.front", "--bridge-fd", str(theirs.fileno()),
                 "--conf", json.dumps(dict(self.conf, bind=list(self.sock.getsockname()[:2]),
                                           family=int(self.sock.family)))],
                pass_fds=(theirs.fileno(),))
        except OSError as e:
            mine.close()
            log.error("fronts: front %d could not start (%s): tried again", k, e)
            self._again(k)
            return
        finally:
            theirs.close()
        self.procs[k] = proc
        mine.setblocking(False)
        await self.loop.connect_accepted_socket(
            lambda: DaemonSide(self.app, f"front {k} (pid {proc.pid})", lost=lambda exc: self._lost(k, proc),
                               ready=lambda: self._ready(k, proc)), mine)

    def _ready(self, k: int, proc: subprocess.Popen) -> None:
        self.listening.add(k)
        self.since[k] = self.loop.time()
        log.info("fronts: front %d (pid %d) listening%s", k, proc.pid,
                 f"; all {self.n} listening" if len(self.listening) == self.n else "")

    def _lost(self, k: int, proc: subprocess.Popen) -> None:
        """A front's pair closed: it exited, or is past use; reaped off the loop, started again."""
        if not self._stop.is_set():
            self.loop.create_task(self._reap(k, proc))

    async def _reap(self, k: int, proc: subprocess.Popen) -> None:
        try:
            code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 1.0)
        except asyncio.TimeoutError:
            proc.kill()
            code = await asyncio.to_thread(proc.wait)
        if self._stop.is_set():
            return
        self.listening.discard(k)
        since = self.since.pop(k, None)
        log.warning("fronts: front %d (pid %d) is gone (exit %s): started again", k, proc.pid, code)
        self._again(k, None if since is None else self.loop.time() - since)

    def _again(self, k: int, up_s: float | None = None) -> None:
        delay, self.restarts[k] = restart_delay(self.restarts[k], up_s)
        self.loop.call_later(delay, lambda: None if self._stop.is_set() else self.loop.create_task(self._start(k)))

    async def _stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                await asyncio.wait_for(asyncio.to_thread(p.wait), STOP_S)
            except asyncio.TimeoutError:
                log.warning("fronts: front pid %d did not stop in %.0f s: killed", p.pid, STOP_S)
                p.kill()
                p.wait()


def front_conf(c: dict, hosts) -> dict:
    """A front's settings, from the daemon's (the Guard's hosts as the app computed them)."""
    return {"hosts": sorted(hosts), "origins": list(c["cors_origins"]), "max_body": c["max_body"],
            "behind_proxy": bool(c["behind_proxy"]), "tls_cert": c["tls_cert"], "tls_key": c["tls_key"],
            "access_log": bool(c["verbose"])}
