"""The floor's HTTP app around today's daemon, with no wheel: tokens for every role, a test client."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from host_tools.daemon.auth import ROLES
from host_tools.daemon.service import Daemon
from host_tools.daemon.web import Floor, create_app


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


class Table:
    """The app, its floor and one token per role; `call(role, method, path, **kw)`."""

    def __init__(self, path, conf=None, open_table=True, command=None):
        self.daemon = Daemon(NoPort(), bytes(32), path, open_table=open_table)
        if command is not None:
            self.daemon.command = command
        self.floor = Floor(self.daemon)
        self.app = create_app(self.floor, {"allowed_hosts": ["testserver"], **(conf or {})})
        self.client = TestClient(self.app, raise_server_exceptions=False)
        self.tokens = {r: self.floor.tokens.add(f"{r}-1", r) for r in ROLES}

    def call(self, role, method, path, **kw):
        headers = dict(kw.pop("headers", {}) or {})
        if role is not None:
            headers["Authorization"] = "Bearer " + self.tokens[role]
        return self.client.request(method, path, headers=headers, **kw)

    def event(self, seq, ev, boot="boot0"):
        return self.daemon.table.on_event(boot, seq, ev, {"kind": "event", "ftype": "E", "seq": seq, "raw": b"\x01\x02"})

    def close(self):
        self.floor.events.close()
        self.daemon.stop_flag.set()
        self.daemon.j.close()


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    yield t
    t.close()
