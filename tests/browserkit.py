"""Pages in a real browser: Debian's Chromium driven by playwright (never a browser download),
against a real daemon fed by the simulated wheel.

Phase 1 rig: the daemon runs in this process (its own `make_server`), with a test-only route that
serves `host_tools.web_assets` on the same origin; the simulated board plays on a pseudo-terminal.
`make browser` installs /usr/bin/chromium when it is missing (`make test` runs it first).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from host_tools import web_assets
from host_tools.daemon.alert_store import AlertStore
from host_tools.daemon.api import make_server, serve_in_thread
from host_tools.daemon.keys import new_key
from host_tools.daemon.service import Daemon
from host_tools.simwheel import PtyPort, SimulatedBoard

CHROMIUM = os.environ.get("CYLINDRE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "screenshots"


def browser(playwright):
    """Chromium from the OS packages, headless, with the flags this machine needs."""
    if not Path(CHROMIUM).is_file():
        raise AssertionError(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


class Table:
    """A simulated wheel, the real daemon and its HTTP API plus the pages, on 127.0.0.1."""

    def __init__(self, tmp: Path, seed=3, speed=60.0, pause=0.3):
        self.key = new_key(tmp / "T1.key")
        self.pty = PtyPort()
        self.board = SimulatedBoard(self.pty, self.key, "T1", seed=seed, speed=speed, pause=pause, log=lambda s: None)
        self.daemon = Daemon(self.pty.path, self.key, str(tmp / "journal.sqlite"), open_table=True)
        self.srv = make_server(self.daemon, "127.0.0.1", 0)
        api_handler = self.srv.RequestHandlerClass
        self.alerts = store = AlertStore(self.daemon.j, "T1")

        class WithPages(api_handler):           # the test-only routes (phase 1): pages, alerts
            def do_GET(self):
                path = self.path.split("?", 1)[0]
                if path == "/alerts":
                    return self._send(200, store.list())
                found = web_assets.resolve(path)
                if found is None:
                    return super().do_GET()
                kind, data = found
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                m = re.fullmatch(r"/alerts/(\d+)/ack", self.path)
                if not m:
                    return super().do_POST()
                body = self.json_body()
                try:
                    return self._send(200, store.acknowledge(int(m[1]), "chef", (body or {}).get("comment")))
                except KeyError as e:
                    return self._send(404, {"error": "not_found", "message": str(e)})
                except ValueError as e:
                    return self._send(400, {"error": "bad_request", "message": str(e)})

        self.srv.RequestHandlerClass = WithPages
        self.base = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.stop_board = threading.Event()
        self._board_thread = None

    def start(self):
        self.daemon.start()
        serve_in_thread(self.srv)
        self._serve_board()
        self.wait(lambda: self.api("GET", "/state")[1]["link"]["session"], "the daemon never reached the wheel")
        return self

    def _serve_board(self, spins=None):
        def run():
            if spins:
                self.board.play(spins, stop=self.stop_board.is_set)
            while not self.stop_board.is_set():
                self.board.service()
                time.sleep(0.005)
        self._board_thread = threading.Thread(target=run, daemon=True)
        self._board_thread.start()

    def play(self, spins):
        """The croupier spins `spins` more times (in the background); returns at once."""
        self.stop_board.set()
        self._board_thread.join(5)
        self.stop_board = threading.Event()
        self._serve_board(self.board.spins + spins)

    def wait_results(self, n, timeout=60):
        """Until the journal holds `n` settled games; their (spin, number, at)."""
        self.wait(lambda: len(self.daemon.j.query("SELECT spin FROM settlements")) >= n, f"{n} games never settled", timeout)
        return [(r["spin"], r["number"], r["at"]) for r in self.daemon.j.query("SELECT * FROM settlements ORDER BY spin")]

    def drop_streams(self):
        """Hang up every live event stream, as a broken network would."""
        with self.daemon.broker._lock:
            subs = list(self.daemon.broker._subs)
        for q in subs:
            q.put(None)

    def api(self, method, path, body=None, timeout=5):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    @staticmethod
    def wait(cond, what, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if cond():
                    return
            except (OSError, KeyError, urllib.error.URLError):
                pass
            time.sleep(0.05)
        raise AssertionError(what)

    def close(self):
        self.stop_board.set()
        if self._board_thread:
            self._board_thread.join(5)
        self.srv.shutdown()
        self.daemon.stop()
        for fd in (self.pty.master, self.pty.slave):
            try:
                os.close(fd)
            except OSError:
                pass
