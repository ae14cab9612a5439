"""The stadium bench's rig (`make bench ARGS=stadium`): a terminal's keep-alive HTTP connection
(`Conn`, requests one after the other, bytes as a terminal sends them) and the daemon with its
simulated wheel, each its own process, on a fresh journal (`Rig`).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from host_tools.bench import procstat


# -- the HTTP client: one keep-alive connection, requests one after the other ---------------------------
class Conn:
    def __init__(self, port, token):
        self.port, self.auth = port, ("Bearer " + token).encode()
        self.r = self.w = None

    async def open(self):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        self.w.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def post(self, path, body: bytes, key=None):
        """(status, body); a connection the daemon closed while idle (keep-alive timeout) is opened
        again and the request sent once more (its Idempotency-Key makes that safe)."""
        for attempt in (0, 1):
            status, data = await self._post(path, body, key)
            if status or not key:
                break
        return status, data

    async def _post(self, path, body: bytes, key=None):
        if self.w is None:
            try:
                await self.open()
            except OSError:
                return 0, b""
        head = (b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n" % (path.encode(), self.auth, len(body)))
        if key:
            head += b"Idempotency-Key: %s\r\n" % key.encode()
        try:
            self.w.write(head + b"\r\n" + body)
            line = await self.r.readline()
            status = int(line.split()[1])
            length = 0
            while True:
                h = await self.r.readline()
                if h in (b"\r\n", b""):
                    break
                if h[:15].lower() == b"content-length:":
                    length = int(h[15:])
            data = await self.r.readexactly(length)
        except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
            self.close()
            return 0, b""
        return status, data

    def close(self):
        if self.w is not None:
            self.w.close()
        self.r = self.w = None


# -- the daemon and the wheel ---------------------------------------------------------------------------
class Rig:
    """The simulated wheel and the daemon, each its own process, on a fresh journal."""

    def __init__(self, terminals, croupiers, pause, speed, spins, fronts=0):
        self.fronts = fronts
        from host_tools.table.api.auth import Tokens
        from host_tools.table.journal.store import Journal
        from host_tools.table.wheel.keys import new_key
        self.work = Path(tempfile.mkdtemp(prefix="cylindre-bench-stadium-"))
        new_key(self.work / "T1.key")
        self.journal = self.work / "journal.sqlite"
        j = Journal(self.journal)
        tokens = Tokens(j.db, j.lock)
        with j.tx():
            self.terminals = [tokens.add("T%03d" % i, "terminal") for i in range(terminals)]
            self.croupiers = [tokens.add("C%03d" % i, "croupier") for i in range(croupiers)]
            self.display = tokens.add("board", "display")
        j.close()
        path_file = self.work / "wheel.path"
        args = ["--pause", str(pause), "--speed", str(speed)] if spins else ["--pause", "1e9"]
        self.wheel = subprocess.Popen([sys.executable, "-m", "host_tools.sim.ptywheel", "--key", str(self.work / "T1.key"),
                                       "--path-file", str(path_file), "--quiet", *args],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 20
        while not (path_file.exists() and path_file.read_text().strip()):
            if self.wheel.poll() is not None or time.monotonic() > end:
                raise RuntimeError("the simulated wheel did not start")
            time.sleep(0.05)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.daemon = subprocess.Popen([sys.executable, "-m", "host_tools.table", "--port", path_file.read_text().split()[0],
                                        "--key", str(self.work / "T1.key"), "--journal", str(self.journal),
                                        "--http", f"127.0.0.1:{self.port}", "--open", "--log", str(self.work / "daemon.log"),
                                        "--fronts", str(fronts)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_open(self, timeout=40):
        import http.client
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/state", headers={"Authorization": "Bearer " + self.display})
                r = c.getresponse()
                if r.status == 200 and json.loads(r.read())["table"].get("accepting_bets") and self._fronts_listening():
                    return True
            except (OSError, ValueError):
                pass
            if self.daemon.poll() is not None:
                break
            time.sleep(0.1)
        return False

    def _fronts_listening(self):
        """Every front listening (its log line): connections made before would all go to the first."""
        if not self.fronts:
            return True
        try:
            return f"all {self.fronts} listening" in (self.work / "daemon.log").read_text()
        except OSError:
            return False

    def cpu_s(self):
        """The daemon's CPU seconds with its fronts' (the HTTP processes it started, if any)."""
        return procstat.cpu_s_with_children(self.daemon.pid)

    def rss_bytes(self):
        return procstat.rss_bytes(self.daemon.pid)

    def db(self):
        c = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True)
        c.row_factory = sqlite3.Row
        return c

    def stop(self):
        for p in (self.daemon, self.wheel):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.work, ignore_errors=True)
