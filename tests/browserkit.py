"""Pages in a real browser: Debian's Chromium driven by playwright (never a browser download),
against the real daemon serving them: the table app (api/app.py, with the pages and the pit's routes
of api/pages.py) on uvicorn, as `cylindre daemon` runs it, its alert watch started, fed by the
simulated wheel over a pseudo-terminal. `make browser` installs /usr/bin/chromium when it is
missing (`make test` runs it first).

A `wait_for_function` predicate is written as an arrow function (`"() => ..."`): playwright evals a
string once under the debugger, then at every poll in the page, where the pages' policy (no
'unsafe-eval') refuses it; a function is evaluated once and then called.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from host_tools.table.api.auth import ROLES
from host_tools.table.wheel.keys import new_key
from host_tools.table.api.app import create_app
from host_tools.table.daemon.host import TableHost
from host_tools.table.api.server import server
from host_tools.sim.ptywheel import PtyPort, SimulatedBoard

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


def shot(page, name, full=False):
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full)
    return path


class Table:
    """A simulated wheel and the daemon with its HTTP app and pages on 127.0.0.1; one token per role
    (`tokens[role]`)."""

    def __init__(self, tmp: Path, seed=3, speed=60.0, pause=0.3, alerts=None, silence_ms=3000):
        self.key = new_key(tmp / "T1.key")
        self.pty = PtyPort()
        self.board = SimulatedBoard(self.pty, self.key, "T1", seed=seed, speed=speed, pause=pause, log=lambda s: None)
        self.host = TableHost.build(self.pty.path, self.key, str(tmp / "journal.sqlite"), open_table=True,
                                 silence_ms=silence_ms)
        self.daemon = self.host.d
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.app = create_app(self.host, {"http": "127.0.0.1:%d" % sock.getsockname()[1], "alerts": alerts or {}})
        self.pit = self.app.state.pit
        self.tokens = {r: self.host.tokens.add(f"{r}-1", r) for r in ROLES}
        self.srv = server(self.app)
        self._sock = sock
        self.base = "http://127.0.0.1:%d" % sock.getsockname()[1]
        self.stop_board = threading.Event()
        self._board_thread = None

    def start(self):
        self.daemon.start()
        threading.Thread(target=self.srv.run, kwargs={"sockets": [self._sock]}, daemon=True).start()
        self.wait(lambda: self.srv.started, "the HTTP server never started")
        self.pit.start()
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
        self._board_thread.join(30)
        self.stop_board = threading.Event()
        self._serve_board(self.board.spins + spins)

    def settled(self):
        return [(r["spin"], r["number"], r["at"]) for r in self.daemon.j.query("SELECT * FROM settlements ORDER BY spin")]

    def wait_results(self, n, timeout=60):
        """Until the journal holds `n` settled games; their (spin, number, at)."""
        self.wait(lambda: len(self.settled()) >= n, f"{n} games never settled", timeout)
        return self.settled()

    def drop_streams(self):
        """Hang up every live event stream, as a broken network would."""
        self.host.events.close()

    def api(self, method, path, body=None, timeout=5, role="admin"):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Content-Type": "application/json", "Authorization": "Bearer " + self.tokens[role]})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def bet(self, body, role="croupier", timeout=20):
        """POST /bets once the table takes bets. After a result (or a boot) the daemon takes a bet
        only on the wheel's next fresh status, up to 500 ms later, and refuses it `wheel_not_heard`
        before: a test that bets on the heels of a result waits for that word, as a player waits
        for the croupier's "faites vos jeux". Any other answer is returned as it came."""
        end = time.monotonic() + timeout
        while True:
            self.wait(lambda: self.api("GET", "/state")[1]["table"]["accepting_bets"], "the table never took bets",
                      max(0.1, end - time.monotonic()))
            st, body_out = self.api("POST", "/bets", body, role=role)
            if not (st == 409 and body_out.get("error") == "wheel_not_heard") or time.monotonic() > end:
                return st, body_out

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
            self._board_thread.join(30)
        self.pit.close()
        self.host.events.close()
        self.srv.should_exit = True
        self.daemon.stop()
        for fd in (self.pty.master, self.pty.slave):
            try:
                os.close(fd)
            except OSError:
                pass


# Everything on the page stays in its box: walk the DOM; an element whose content is wider or taller
# than its box (scrollWidth > clientWidth: cut when its overflow is hidden, spilling otherwise),
# or whose rectangle leaves the viewport or its panel (the nearest ancestor matching `panels`), is
# reported with its size. Scroll containers (overflow auto/scroll) may hold more than they show.
# `scroll_y`: a page that scrolls down (the pit) is checked across only.
_PROBE = """([panels, scrollY]) => {
  const bad = [], eps = 1.5, vw = document.documentElement.clientWidth, vh = innerHeight;
  const boxes = [...document.querySelectorAll(panels)];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
    + (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\\s+/).join('.') : '')
    + (e.textContent ? ' «' + e.textContent.trim().slice(0, 40) + '»' : '');
  const scroller = (e) => { for (let a = e.parentElement; a; a = a.parentElement) {
    const s = getComputedStyle(a); if (/(auto|scroll)/.test(s.overflowX + s.overflowY) && a !== document.documentElement && a !== document.body) return a; }
    return null; };
  if (document.documentElement.scrollWidth > vw + eps) bad.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + vw);
  for (const e of document.body.querySelectorAll('*')) {
    if (['SCRIPT', 'STYLE', 'OPTION'].includes(e.tagName) || e.closest('[hidden]')) continue;
    if (e.checkVisibility && !e.checkVisibility()) continue;          // in a closed <details>, display none
    const cs = getComputedStyle(e);
    if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const own = /(auto|scroll)/.test(cs.overflowX + cs.overflowY);
    if (!own && cs.display !== 'inline' && e.tagName !== 'TABLE' && e.tagName !== 'TBODY' && e.tagName !== 'THEAD' && e.tagName !== 'TR') {
      if (e.scrollWidth > e.clientWidth + eps && e.clientWidth > 0) bad.push(name(e) + ': content ' + e.scrollWidth + ' px wide in a box of ' + e.clientWidth);
      if (!scrollY && e.scrollHeight > e.clientHeight + eps && e.clientHeight > 0) bad.push(name(e) + ': content ' + e.scrollHeight + ' px tall in a box of ' + e.clientHeight);
    }
    const sc = scroller(e);
    if (sc) continue;
    if (r.left < -eps || r.right > vw + eps || (!scrollY && (r.top < -eps || r.bottom > vh + eps)))
      bad.push(name(e) + ' leaves the screen: ' + [r.left, r.top, r.right, r.bottom].map(Math.round) + ' in ' + vw + 'x' + vh);
    const box = boxes.filter((b) => b !== e && b.contains(e)).pop();
    if (box && getComputedStyle(box).position !== 'fixed') {
      const p = box.getBoundingClientRect();
      if (r.left < p.left - eps || r.right > p.right + eps || r.top < p.top - eps || r.bottom > p.bottom + eps)
        bad.push(name(e) + ' leaves its panel ' + name(box).slice(0, 30) + ': ' + [r.left, r.top, r.right, r.bottom].map(Math.round)
                 + ' in ' + [p.left, p.top, p.right, p.bottom].map(Math.round));
    }
  }
  return bad;
}"""


def overflows(page, panels: str, scroll_y=False) -> list:
    """What is cut or spills out of its box on `page` now (empty: everything fits)."""
    return page.evaluate(_PROBE, [panels, scroll_y])


# The marquee against the table's truth, every 100 ms in the page: the screen read, GET /state and the
# last settled game fetched, the screen read again. A sample counts only when the screen held still
# while the truth was on its way (then both were so at once). `window.__truth` collects them until
# `window.__stop`.
_TRUTH = """async () => {
  const h = {Authorization: 'Bearer ' + sessionStorage.getItem('cylindre.token')};
  const dom = () => [document.getElementById('phase').textContent, document.getElementById('number').textContent];
  window.__truth = [];
  while (!window.__stop) {
    const before = dom();
    const [st, hist] = await Promise.all([fetch('/state', {headers: h}).then(r => r.json()),
                                          fetch('/history?limit=1', {headers: h}).then(r => r.json())]);
    const after = dom();
    if (before[0] === after[0] && before[1] === after[1])
      window.__truth.push({at: Date.now(), banner: after[0].trim().toLowerCase(), number: after[1],
        accepting: st.table.accepting_bets, phase: st.table.phase, locked: st.table.locked_spin,
        latest: hist.length ? String(hist[0].number) : null});
    await new Promise(r => setTimeout(r, 100));
  }
}"""


def watch_truth(page):
    """Start sampling the marquee against the table's truth (runs on in the page)."""
    page.evaluate("() => { window.__stop = false; (" + _TRUTH + ")(); }")


def untrue(page) -> tuple[int, dict]:
    """Stop sampling; (samples, what the marquee said that was not so: {kind: [runs]}). A run is two
    samples or more in a row that disagree the same way, ~0.2 s at least: one sample alone can fall
    between the table's change and its event reaching the page (milliseconds), which is no lag."""
    page.evaluate("() => { window.__stop = true; }")
    rows = page.evaluate("window.__truth")

    def wrong(r):
        first = r["banner"].split()[0] if r["banner"] else ""
        if first.isdigit() and first != r["number"]:
            return "banner_number_is_not_the_big_number"
        if r["latest"] is not None and r["number"] != r["latest"]:
            return "big_number_is_not_the_last_settled"
        if r["banner"] == "faites vos jeux" and not r["accepting"]:
            return "faites_vos_jeux_while_bets_are_refused"
        if r["banner"] == "rien ne va plus" and r["phase"] == "betting" and r["locked"] is None:
            return "rien_ne_va_plus_while_betting"
        return None
    bad, run = {}, []
    for r in rows + [None]:
        kind = wrong(r) if r is not None else None
        if run and (r is None or kind != wrong(run[0]) or r["banner"] != run[0]["banner"]):
            if len(run) >= 2:
                bad.setdefault(wrong(run[0]), []).append(run)
            run = []
        if kind:
            run.append(r)
    return len(rows), bad
