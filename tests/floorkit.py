"""The floor's test kit: a real PostgreSQL server (Debian's package, started by the test suite in a
temporary folder as the `postgres` user when the tests run as root), the floor service as its own
process (to kill it), and a fleet of simulated tables on a loop in a thread.

`make test` installs PostgreSQL first (`make postgres`: apt-get install postgresql); a test that
needs it fails loudly when the binaries are missing, unless CYLINDRE_NO_POSTGRES=1 says why not.
"""

from __future__ import annotations

import asyncio
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(cond, what, timeout=30.0, every=0.05):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            v = cond()
            if v:
                return v
        except Exception as e:                       # noqa: BLE001 - not yet
            last = e
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last})" if last else ""))


# -- PostgreSQL -----------------------------------------------------------------------------------
def pg_bindir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return str(Path(found[-1]).parent) if found else None


class Postgres:
    """A throwaway PostgreSQL cluster on 127.0.0.1:port, trust authentication, fsync on."""

    def __init__(self):
        self.bindir = pg_bindir()
        if self.bindir is None:
            raise RuntimeError("PostgreSQL is not installed: run `make postgres` (apt-get install postgresql)")
        self.dir = Path(tempfile.mkdtemp(prefix="cylindre-pg-"))
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:                        # initdb refuses root: run it as postgres (or nobody)
            for name in ("postgres", "nobody"):
                try:
                    pw = pwd.getpwnam(name)
                except KeyError:
                    continue
                self.user = name
                os.chown(self.dir, pw.pw_uid, pw.pw_gid)
                break
        os.chmod(self.dir, 0o700)

    def _run(self, *args, timeout=60):
        cmd = list(args)
        if self.user:
            cmd = ["runuser", "-u", self.user, "--"] + cmd
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout, cwd="/")

    def start(self):
        data = self.dir / "data"
        self._run(f"{self.bindir}/initdb", "-D", str(data), "-A", "trust", "-U", "cylindre", "-E", "UTF8", "--no-sync")
        self._run(f"{self.bindir}/pg_ctl", "-D", str(data), "-l", str(self.dir / "log"), "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1", "start")
        return self

    def url(self, db="postgres"):
        return f"postgresql://cylindre@127.0.0.1:{self.port}/{db}"

    def new_db(self, name):
        """A fresh schema of the cluster's database, as the store's URL (search_path): far quicker
        than a database per test, and as empty."""
        import psycopg
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f'CREATE SCHEMA "{name}"')
        return self.url() + f"?options=-csearch_path%3D{name}"

    def stop(self):
        try:
            self._run(f"{self.bindir}/pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    if pg_bindir() is None and os.environ.get("CYLINDRE_NO_POSTGRES"):
        pytest.skip("PostgreSQL NOT TESTED: not installed and CYLINDRE_NO_POSTGRES=" + os.environ["CYLINDRE_NO_POSTGRES"])
    pg = Postgres().start()
    try:
        yield pg
    finally:
        pg.stop()


_n = [0]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh store: a SQLite file, and a database on the suite's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "floor.sqlite")
    pg = request.getfixturevalue("postgres")
    _n[0] += 1
    return pg.new_db(f"floor_{os.getpid()}_{_n[0]}")


# -- the floor as a process -----------------------------------------------------------------------
class FloorProc:
    """`cylindre floor` as its own process (SIGKILL is a crash, as in production)."""

    def __init__(self, tmp, db, nats_url, key=None, extra=()):
        self.tmp, self.db, self.nats_url, self.key, self.extra = Path(tmp), db, nats_url, key, list(extra)
        self.port = free_port()
        self.proc = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        cmd = [sys.executable, "-m", "host_tools.cli", "floor", "--db", self.db, "--nats", self.nats_url,
               "--http", f"127.0.0.1:{self.port}"] + (["--floor-key", str(self.key)] if self.key else []) + self.extra
        log = open(self.tmp / f"floor-{self.port}.log", "ab")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        wait(lambda: self._up(), "the floor's /health", 30)
        return self

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"the floor exited {self.proc.returncode}: "
                                 + (self.tmp / f"floor-{self.port}.log").read_text()[-2000:])
        try:
            urllib.request.urlopen(self.base + "/health", timeout=1)
            return True
        except urllib.error.HTTPError:
            return True                                # 503: up, broker not yet
        except OSError:
            return False

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


# -- tables on a loop in a thread -----------------------------------------------------------------
class Background:
    """An asyncio loop in a thread running a coroutine (a Fleet) until stopped."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def submit(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn, *args):
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
