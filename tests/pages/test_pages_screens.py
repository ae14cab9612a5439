"""The pages on the screens a table has, in a real browser against the running daemon: the marquee
at 1920×1080, 1280×720, 1600×1000, 1366×768 and a portrait kiosk's 1080×1920 with its 18-number
strip full, nothing cut or spilling out of its box (the DOM walked: browserkit.overflows); a bad
token told on the screen in French and retried quietly, never a dialog; the API explorer at /docs
from the daemon's own files, with every request to anywhere else blocked; one version number."""

import re
import threading
import time
from urllib.parse import urlparse

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, overflows, shot
from host_tools import version

SIZES = [(1920, 1080), (1280, 720), (1600, 1000), (1366, 768), (1080, 1920)]
PANELS = "#marquee > *"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    t = Table(tmp_path_factory.mktemp("screens"), pause=0.1).start()
    t.play(18)
    t.wait_results(18, timeout=120)
    yield t
    t.close()


@pytest.fixture(scope="module")
def chromium():
    """One browser for the file; each test opens its own pages."""
    with pw.sync_playwright() as p:
        b = browser(p)
        yield b
        b.close()


def test_the_marquee_fits_every_screen_with_its_strip_full(table, chromium):
    b = chromium
    page = b.new_page(viewport={"width": 1920, "height": 1080}, bypass_csp=True)   # the test evaluates its probe
    page.goto(table.base + "/marquee#token=" + table.tokens["display"])
    page.wait_for_selector("#link.up")
    page.wait_for_function("() => document.querySelectorAll('#strip li').length === 18")
    page.wait_for_function("() => document.getElementById('limits').textContent.includes('plein')")
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[w, h])
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")  # the fit ran
        shot(page, f"marquee_{w}x{h}")
        assert overflows(page, PANELS) == [], (w, h)
        # the strip: 18 numbers, in one row in landscape, two in portrait, each readable
        chips = page.locator("#strip li:not(:first-child) .num").evaluate_all(
            "es => es.map((e) => e.getBoundingClientRect()).map((r) => [Math.round(r.top), r.width])")
        rows = len({top for top, _ in chips})
        assert len(chips) == 17 and rows <= (2 if h > w else 1), (w, h, rows)
        assert min(width for _, width in chips) >= 0.04 * min(w, h), (w, h, chips)      # readable from afar
        page.wait_for_function("() => [...document.querySelectorAll('.bars span')].some((s) => s.textContent.includes('%'))")
    page.close()
    # the bilingual board for the casino's foreign players: French and English, still uncut everywhere
    page = b.new_page(viewport={"width": 1920, "height": 1080}, bypass_csp=True)
    page.goto(table.base + "/marquee?lang=fr,en#token=" + table.tokens["display"])
    page.wait_for_selector("#link.up")
    page.wait_for_function("() => document.getElementById('phase-en').textContent.length > 0")
    assert "Hot" in page.locator("#h-hot").inner_text()
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[w, h])
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        shot(page, f"marquee_fr_en_{w}x{h}")
        assert overflows(page, PANELS) == [], (w, h)
    page.close()


def test_a_refused_token_is_told_on_screen_and_retried_quietly(table, chromium):
    b = chromium
    page = b.new_page(viewport={"width": 1080, "height": 1920}, bypass_csp=True)
    dialogs, asked = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: asked.append(urlparse(r.url).path) if urlparse(r.url).path in ("/events", "/state") else None)
    page.goto(table.base + "/marquee#token=cyl_expired-or-revoked")
    notice = page.locator("#cyl-notice [data-notice='token']")
    notice.wait_for()
    assert "Jeton d'accès refusé" in notice.inner_text() and "réessaie" in notice.inner_text()
    assert page.locator("#link").get_attribute("class") == "link down"
    n = len(asked)
    page.wait_for_timeout(2500)                       # a dead kiosk loops; this one waits its 10 s
    assert len(asked) - n <= 1, asked
    assert dialogs == []
    shot(page, "marquee_bad_token")
    assert overflows(page, PANELS) == []
    # a good token typed in the notice (or a new #token=): the screen comes back at once
    notice.locator("input").fill(table.tokens["display"])
    notice.locator("button").click()
    page.wait_for_selector("#link.up", timeout=15000)
    page.wait_for_function("() => document.querySelectorAll('#strip li').length === 18")
    assert page.locator("#cyl-notice [data-notice='token']").count() == 0
    page.close()


def test_the_api_explorer_is_served_by_the_daemon_with_no_outside_request(table, chromium):
    st, doc = table.api("GET", "/openapi.json")
    assert st == 200 and doc["info"]["version"] == version() and re.match(r"^\d+\.\d+", version())
    b = chromium
    ctx = b.new_context(viewport={"width": 1366, "height": 768})          # its own policy holds
    outside, broken = [], []

    def gate(route):
        host = urlparse(route.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            return route.continue_()
        outside.append(route.request.url)
        return route.abort()
    ctx.route("**/*", gate)
    page = ctx.new_page()
    page.on("console", lambda m: broken.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: broken.append(str(e)))
    page.goto(table.base + "/docs")
    page.wait_for_function("() => document.querySelectorAll('.opblock').length >= 10", timeout=30000)
    ops = page.locator(".opblock-summary-path").all_inner_texts()
    for path in ("/bets", "/state", "/history", "/spins/{spin}", "/health"):
        assert any(o.replace("\u200b", "") == path for o in ops), (path, ops[:5])
    assert version() in page.locator(".info .version").first.inner_text()
    # the routes grouped by who uses them, none left under "default"
    groups = [t.split("\n")[0].strip() for t in page.locator(".opblock-tag").all_inner_texts()]
    assert groups == ["table", "pit", "operations"], groups
    shot(page, "docs")
    assert outside == [] and broken == [], (outside, broken)
    ctx.close()


def test_a_cut_link_is_told_on_the_marquee_and_the_pit(table, chromium):
    """Last in this file: it leaves the wheel unheard."""
    table.wait(lambda: table.api("GET", "/state")[1]["link"]["session"], "the link was not up to begin with")
    b = chromium
    marquee = b.new_page(viewport={"width": 1080, "height": 1920}, bypass_csp=True)
    marquee.goto(table.base + "/marquee#token=" + table.tokens["display"])
    marquee.wait_for_selector("#link.up")
    pit = b.new_page(viewport={"width": 1024, "height": 768}, bypass_csp=True)
    pit.goto(table.base + "/pit#token=" + table.tokens["chef"])
    pit.wait_for_selector("body[data-loaded]")
    assert pit.locator("#t-link").inner_text() == "liaison établie"
    marquee.wait_for_function("() => document.getElementById('phase').textContent === 'Faites vos jeux'")
    pit.wait_for_function("() => document.getElementById('t-open').textContent === 'ouverte — faites vos jeux'")
    table.board._mute = True                                   # nothing leaves the wheel: a cut cable
    # "faites vos jeux" leaves both screens when POST /bets starts refusing, not when the link is declared down
    t0, refused, gone = time.monotonic(), None, {}
    while time.monotonic() - t0 < 10 and (refused is None or len(gone) < 2):
        now = time.monotonic() - t0
        if refused is None and not table.api("GET", "/state")[1]["table"]["accepting_bets"]:
            refused = now
        if "marquee" not in gone and marquee.locator("#phase").text_content() != "Faites vos jeux":
            gone["marquee"] = now
        if "pit" not in gone and "faites vos jeux" not in pit.locator("#t-open").inner_text():
            gone["pit"] = now
        time.sleep(0.05)
    assert refused is not None and refused < 3, refused
    assert set(gone) == {"marquee", "pit"} and all(at < refused + 1.0 for at in gone.values()), (refused, gone)
    assert marquee.locator("#phase").text_content() == "Mises suspendues — en attente du cylindre"
    assert pit.locator("#t-open").inner_text() == "ouverte — mises suspendues (en attente du cylindre)"
    table.wait(lambda: not table.api("GET", "/state")[1]["link"]["session"], "the daemon never saw the link go", 30)
    notice = marquee.locator("#cyl-notice [data-notice='link']")
    notice.wait_for(timeout=15000)
    assert notice.inner_text().startswith("Liaison coupée") and "pas être à jour" in notice.inner_text()
    assert marquee.locator("#link").get_attribute("class") == "link down"
    shot(marquee, "marquee_link_cut")
    assert overflows(marquee, PANELS) == []
    # the notice pushes the board down, it does not cover the banner (it hid "FAITES VOS JEUX" half)
    for size in ({"width": 1080, "height": 1920}, {"width": 1280, "height": 720}):
        marquee.set_viewport_size(size)
        marquee.wait_for_function("() => document.getElementById('cyl-notice').getBoundingClientRect().bottom"
                                  " <= document.getElementById('banner').getBoundingClientRect().top + 0.5", timeout=5000)
        assert overflows(marquee, PANELS) == [], size
    pit.wait_for_function("() => document.getElementById('t-link').textContent.startsWith('liaison coupée')", timeout=20000)
    assert "bad" in pit.locator("#t-link").get_attribute("class")
    assert marquee.locator("#phase").text_content() == "Mises suspendues — en attente du cylindre"   # never back to FVJ
    shot(pit, "pit_link_cut", full=True)
    marquee.close()
    pit.close()


def test_a_daemon_that_never_heard_a_wheel_says_no_bet_is_taken(tmp_path_factory, chromium):
    """No wheel on its port: no "faites vos jeux" (a bet would be refused wheel_not_heard), and no
    figures made up (no equal thirds, no green zero of 33 %)."""
    t = Table(tmp_path_factory.mktemp("nowheel"))
    t.daemon.start()
    threading.Thread(target=t.srv.run, kwargs={"sockets": [t._sock]}, daemon=True).start()
    t.wait(lambda: t.srv.started, "the HTTP server never started")
    try:
        assert t.api("GET", "/state")[1]["table"]["refusing"] == "wheel_not_heard"
        page = chromium.new_page(viewport={"width": 1366, "height": 768}, bypass_csp=True)
        page.goto(t.base + "/marquee#token=" + t.tokens["display"])
        page.wait_for_function("() => document.getElementById('marquee').dataset.phase === 'suspended'")
        assert page.locator("#phase").text_content() == "Mises suspendues — en attente du cylindre"
        for bar in ("b-colour", "b-parity", "b-dozen", "b-sector"):
            assert "empty" in page.locator("#" + bar).get_attribute("class")
            assert page.locator(f"#{bar} span").evaluate_all("es => es.map((e) => e.textContent).join('')") == ""
        assert page.locator("#over").inner_text().startswith("aucun coup encore")
        shot(page, "marquee_no_wheel")
        assert overflows(page, PANELS) == []
        page.close()
    finally:
        t.stop_board.set()
        t.close()
