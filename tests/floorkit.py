"""The floor's test kit: a real PostgreSQL server (Debian's package, started by the test suite in a
temporary folder as the `postgres` user when the tests run as root). The floor service as its own
process and the loop the tables run on are host_tools/floor/harness.py's, as the bench's.

`make test` installs PostgreSQL first (`make postgres`: apt-get install postgresql); a test that
needs it fails loudly when the binaries are missing, unless CYLINDRE_NO_POSTGRES=1 says why not.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from host_tools.floor.link import command as C
from host_tools.floor.link import envelope as E
from host_tools.floor.link.stream import ensure_bucket, ensure_stream, kv_key
from host_tools.floor.natsrv import free_port

ROOT = Path(__file__).resolve().parent.parent


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


class TableToFloor:
    """A real table (apikit.Table) publishing to a real nats-server (FloorLink, `link_kw`) and the
    floor's link storing it (ingest.Link and a SQLite store): `srv`, `table`, `fl`, `store`."""

    def __init__(self, tmp, site="PARIS", **link_kw):
        from apikit import Table
        from host_tools.floor import natsrv
        from host_tools.floor.ingest import Link
        from host_tools.floor.store import Store
        from host_tools.table.floor.publisher import FloorLink
        self.srv = natsrv.Server(Path(tmp) / "js").start()
        self.store = Store(str(Path(tmp) / "floor.sqlite"))
        self.link = Link(self.srv.url, self.store).start()
        self.table = Table(Path(tmp) / "t1.sqlite")
        self.fl = FloorLink(self.table.host, self.srv.url, site, **link_kw).start()

    def close(self):
        self.fl.stop()
        self.link.stop()
        self.table.close()
        self.store.close()
        self.srv.close()


class FloorTable:
    """A table's command end: verifies each request, answers, and remembers what it took."""

    def __init__(self, url, key, site="CASINO", table="T1", answer=True, ops=C.OPS):
        self.url, self.key, self.site, self.table, self.answer, self.ops = url, key, site, table, answer, ops
        self.taken, self.replay, self.pending = [], C.Replay(), {}

    async def start(self):
        import nats
        self.nc = await nats.connect(self.url)
        self.js = self.nc.jetstream()
        await ensure_stream(self.js)
        kv = await ensure_bucket(self.js)
        await kv.put(kv_key(self.site, self.table), json.dumps({"open": False, "phase": "idle", "croupier": "ana",
                                                                 "last_numbers": [17, 0, 32], "link": "up"}).encode())
        await self.nc.subscribe(E.cmd_subject(self.site, self.table), cb=self.on_cmd)
        return self

    async def on_cmd(self, msg):
        if not self.answer:
            return
        try:
            req = json.loads(msg.data)
            if req.get("op") not in self.ops:
                raise C.CommandError("unknown_op", f"unknown op {req.get('op')!r}")
            req = C.verify(req, self.key, time.time(), self.replay)
        except C.CommandError as e:
            return await msg.respond(json.dumps(C.error(e.code, e.message)).encode())
        self.taken.append(req)
        result = {}
        if req["op"] == "request_setting":
            result = {"request": "t-" + req["id"][:8]}
            self.pending[result["request"]] = req["who"]
        elif req["op"] == "approve_setting" and self.pending.get(req["args"]["request"]) == req["who"]:
            return await msg.respond(json.dumps(C.error("same_user", "same user")).encode())
        await msg.respond(json.dumps(C.ok(result)).encode())

    async def publish(self, eid, kind, body):
        serial = "W-17" if self.table == "T1" else "W-" + self.table      # each table its own wheel
        data = E.build(self.site, self.table, serial, eid, kind, time.time(), body)
        await self.js.publish(E.subject(self.site, self.table, kind), data, headers={E.MSG_ID: E.msg_id(self.table, eid)})
