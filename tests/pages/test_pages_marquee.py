"""The marquee in a real browser against a running table: the number the wheel reported, in its
colour, the last-18 strip growing, no number lost when the stream breaks; and what it says is
always so: with a wheel faster than the banner's own timings, the banner and the big number name
the last settled spin, "rien ne va plus" only while the spin is called and "faites vos jeux" only
while POST /bets takes a bet (sampled against GET /state in the page: browserkit.untrue)."""

import statistics
import time

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, shot, untrue, watch_truth
from cylindre.rules import wheel as W

COLOUR_FR = {"rouge": "rouge", "noir": "noir", "zero": "zéro"}


def colour_of(n):
    return W.colour(n) or "zero"


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path).start()
    yield t
    t.close()


def strip(page):
    return [int(x) for x in page.locator("#strip li").all_inner_texts()]


def test_marquee_shows_each_number_and_keeps_them_through_a_broken_stream(table):
    with pw.sync_playwright() as p:
        b = browser(p)
        page = b.new_page(viewport={"width": 1920, "height": 1080}, bypass_csp=True)   # the test evaluates its own scripts
        t0 = time.time()
        page.goto(table.base + "/marquee?hold=1#token=" + table.tokens["display"])
        page.wait_for_function("() => document.getElementById('link').className.includes('up')")
        load_ms = (time.time() - t0) * 1000
        page.wait_for_function("() => document.getElementById('phase').textContent === 'Faites vos jeux'")
        assert "token" not in page.url                      # the token left the address bar
        assert page.evaluate("sessionStorage.getItem('cylindre.token')") == table.tokens["display"]
        limits = page.locator("#limits").inner_text()       # GET /table/limits, as a display: every kind
        assert all(k in limits for k in ("plein", "cheval", "transversale", "carré", "sixain", "douzaine", "colonne",
                                         "chances simples")), limits
        assert page.locator("#t-name").inner_text() == "T1"        # the table's name (setting table_name)
        assert page.locator("#b-colour").get_attribute("class").split()[-1] == "empty"   # no games: no equal thirds

        page.evaluate("""() => { window.__shown = []; new MutationObserver(() =>
            window.__shown.push([document.getElementById('number').textContent, Date.now()]))
            .observe(document.getElementById('number'), {childList: true, characterData: true, subtree: true}); }""")
        for player, chance in (("ana", "rouge"), ("bo", "noir")):      # one of them wins unless zero comes
            assert table.bet({"player": player, "type": chance, "stake": 1000})[0] == 201
        table.play(2)
        page.wait_for_function("() => document.getElementById('marquee').dataset.phase === 'result'", timeout=20000)
        assert "win" in page.locator("#number").get_attribute("class")      # the winning number's animation
        shot(page, "marquee_result")
        games = table.wait_results(2)
        page.wait_for_function("() => document.querySelectorAll('#strip li').length === 2")
        spin, number, settled_at = games[-1]
        page.wait_for_function("n => document.getElementById('number').textContent === String(n)", arg=number)
        assert page.locator("#number").get_attribute("data-colour") == colour_of(number)
        assert strip(page) == [g[1] for g in reversed(games)]
        assert page.locator("#spin").inner_text() == f"coup {spin}"
        # the wheel idle, the hold over: the banner says what the table says, a bet is taken
        page.wait_for_function("() => document.getElementById('phase').textContent === 'Faites vos jeux'", timeout=10000)
        assert table.api("GET", "/state")[1]["table"]["accepting_bets"]
        shown = [at for text, at in page.evaluate("window.__shown") if text == str(number)]
        update_ms = shown[0] - settled_at * 1000
        sectors = page.locator("#b-sector span").evaluate_all("es => es.map((e) => e.title)")
        assert sum(int(t.split("(")[1].split()[0]) for t in sectors if t) == 2      # every game in one sector
        assert page.locator("#absent .num").count() == 4
        shot(page, "marquee_live")

        # the stream breaks and stays broken while two games are played: nothing is lost
        page.route("**/events*", lambda route: route.abort())
        table.drop_streams()
        page.wait_for_function("() => document.getElementById('link').className.includes('down')")
        table.play(2)
        games = table.wait_results(4)
        assert len(strip(page)) == 2
        page.unroute("**/events*")
        page.wait_for_function("() => document.querySelectorAll('#strip li').length === 4", timeout=15000)
        assert strip(page) == [g[1] for g in reversed(games)]
        assert page.locator("#number").inner_text() == str(games[-1][1])     # the latest, played while away
        shot(page, "marquee_after_reconnect")
        print(f"marquee: load to live {load_ms:.0f} ms; settlement to number on screen {update_ms:.0f} ms")
        b.close()


def test_with_a_wheel_faster_than_the_banner_the_marquee_never_falls_behind(tmp_path):
    """A game every second or so against a banner that holds a number 4 s: the banner drops the
    number at the next call, never queues it; sampled for 12 s, nothing it says disagrees with the
    table for two samples in a row."""
    table = Table(tmp_path, pause=0.2, speed=60.0).start()
    try:
        with pw.sync_playwright() as p:
            b = browser(p)
            page = b.new_page(viewport={"width": 1280, "height": 720}, bypass_csp=True)
            page.goto(table.base + "/marquee#token=" + table.tokens["display"])          # hold: 4 s by default
            page.wait_for_selector("#link.up")
            table.play(1000)
            table.wait_results(2)
            watch_truth(page)
            time.sleep(12)
            n, bad = untrue(page)
            games = table.settled()
            gaps = [b_[2] - a[2] for a, b_ in zip(games, games[1:])]
            assert statistics.median(gaps) < 4.0, gaps             # the wheel is faster than the banner's hold
            assert n >= 30, n
            assert bad == {}, {k: [[(r["banner"], r["number"], r["latest"], r["accepting"]) for r in run] for run in v]
                               for k, v in bad.items()}
            # and the banner did show numbers and calls, not one state throughout
            said = set(page.evaluate("window.__truth.map((r) => r.banner.split(' ')[0])"))
            assert "rien" in said and any(w.isdigit() for w in said), said
            print(f"\nfast wheel: {len(games)} games, median {statistics.median(gaps):.2f} s apart; {n} samples, none untrue")
            b.close()
    finally:
        table.close()
