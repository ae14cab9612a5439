"""The table app's HTTP app around the daemon, with no port: tokens for every role, a test client, a
stand-in wheel whose STATUS frames keep the betting window open (host_tools.sim.tablewheel.Wheel), a live server."""

from __future__ import annotations

import socket
import threading
import time
import warnings

import pytest
with warnings.catch_warnings():
    warnings.simplefilter("ignore")          # starlette's note on httpx versions
    from starlette.testclient import TestClient

from host_tools.table.api.auth import ROLES
from host_tools.table.api.app import create_app
from host_tools.table.daemon.host import TableHost
from host_tools.table.api.server import server

from host_tools.sim.tablewheel import Wheel


class NoPort:
    """A port that is never there: the API works without the wheel; commands time out."""

    url = "none"
    s = None

    def open(self):
        self.error = "no such port"
        return False

    def close(self):
        pass

    def write(self, data):
        pass


class FakeWheel:
    """Answers commands as the wheel's device link does (docs/integrators/link-protocol.md section 7), at once."""

    def __init__(self):
        self.settings = {"min_laps": 4, "void_rotor_not_reversed": 1}
        self.sent = []

    def __call__(self, cmd, args=None, timeout=5.0):
        self.sent.append((cmd, args))
        if cmd in ("open_table", "close_table"):
            return {"ok": True}
        if cmd == "get_settings":
            return {"ok": True, "result": dict(self.settings)}
        if cmd == "set_setting":
            if args["name"] not in self.settings or not isinstance(args["value"], int) or args["value"] < 1:
                return {"ok": False, "error": "refused: %s" % args["name"]}
            self.settings[args["name"]] = args["value"]
            return {"ok": True, "result": dict(self.settings)}
        if cmd == "status":
            return {"ok": True, "result": {"status": None, "link": {"wheel": "T1"}}}
        if cmd == "history":
            return {"ok": True, "result": [{"spin": 1, "number": 17, "laps": 15, "rotor_dir": 1, "ball_dir": -1}]}
        if cmd == "set_time":
            return {"ok": True, "result": {"wall_offset_ms": 5}}
        return {"ok": False, "error": "unknown command"}


class Table:
    """The app, its host and one token per role; `call(role, method, path, **kw)`."""

    def __init__(self, path, conf=None, open_table=True, command=None):
        self.host = TableHost.build(NoPort(), bytes(32), path, open_table=open_table)
        self.daemon = self.host.d
        self.feed = Wheel(self.daemon.table, boot="boot0")     # fresh evidence that betting is open
        self.wheel = FakeWheel() if command is None else command
        self.daemon.command = self.wheel
        self.app = create_app(self.host, {"allowed_hosts": ["testserver"], **(conf or {})})
        self.client = TestClient(self.app, raise_server_exceptions=False)
        self.tokens = {r: self.host.tokens.add(f"{r}-1", r) for r in ROLES}

    def call(self, role, method, path, **kw):
        headers = dict(kw.pop("headers", {}) or {})
        if role is not None:
            headers["Authorization"] = "Bearer " + self.tokens[role]
        return self.client.request(method, path, headers=headers, **kw)

    def event(self, seq, ev, boot="boot0"):
        """One event of the wheel, taken as the daemon's I/O thread takes it (Daemon._record)."""
        self.daemon._record({"kind": "event", "ftype": "E", "boot": boot, "seq": seq, "event": ev, "raw": b"\x01\x02"})

    def close(self):
        self.host.events.close()
        self.host.tokens.close()            # its read-only connection (a file descriptor a table)
        self.daemon.stop_flag.set()
        self.daemon.j.close()


class Served:
    """The app on a real uvicorn server (web.server, as the daemon runs it) on a free port."""

    def __init__(self, app, http=None):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.server = server(app, http=http)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        self.port = sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.server.should_exit = True
        self.thread.join(5)


@pytest.fixture
def served(tmp_path):
    """A Table whose app listens on 127.0.0.1:`t.port`."""
    t = Table(tmp_path / "j.sqlite", conf={"http": "127.0.0.1:0"})
    srv = Served(t.app)
    t.port, t.base, t.served = srv.port, srv.base, srv
    yield t
    t.host.events.close()
    srv.stop()
    t.close()


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    yield t
    t.close()


class _UpLink:
    """The daemon's link, said to be in session (no wheel is needed to read the rest of it)."""

    in_session = True

    def __init__(self, link):
        self._link = link

    def __getattr__(self, name):
        return getattr(self._link, name)


def link_up(t: Table):
    t.daemon.link = _UpLink(t.daemon.link)
