"""The marquee in a real browser against a running table: the number the wheel reported, in
its colour, the last-18 strip growing, and no number lost when the stream breaks."""

import time

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, shot
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
        assert page.locator("#phase").inner_text().lower() == "faites vos jeux"
        assert "token" not in page.url                      # the token left the address bar
        assert page.evaluate("sessionStorage.getItem('cylindre.token')") == table.tokens["display"]
        assert "plein" in page.locator("#limits").inner_text()            # GET /table/limits, as a display

        page.evaluate("""() => { window.__shown = []; new MutationObserver(() =>
            window.__shown.push([document.getElementById('number').textContent, Date.now()]))
            .observe(document.getElementById('number'), {childList: true, characterData: true, subtree: true});
            window.__said = []; new MutationObserver(() => window.__said.push(document.getElementById('phase').textContent))
            .observe(document.getElementById('phase'), {childList: true, characterData: true, subtree: true}); }""")
        for player, chance in (("ana", "rouge"), ("bo", "noir")):      # one of them wins unless zero comes
            assert table.bet({"player": player, "type": chance, "stake": 1000})[0] == 201
        table.play(2)
        page.wait_for_function("() => document.getElementById('marquee').dataset.phase === 'result'", timeout=20000)
        shot(page, "marquee_result")
        games = table.wait_results(2)
        page.wait_for_function("() => document.querySelectorAll('#strip li').length === 2")
        spin, number, settled_at = games[-1]
        assert page.locator("#number").inner_text() == str(number)
        assert page.locator("#number").get_attribute("data-colour") == colour_of(number)
        assert strip(page) == [g[1] for g in reversed(games)]
        want = []
        for g in sorted(table.api("GET", "/history")[1], key=lambda h: h["spin"]):
            want += ["rien ne va plus", f"{g['number']} {COLOUR_FR[colour_of(g['number'])]}"]
            want += ["tout est payé"] if g["paid"] else []   # said only when something was paid
            want += ["faites vos jeux"]
        page.wait_for_function("""n => window.__said.filter((x, i, a) => i === 0 || x !== a[i - 1]).length >= n""",
                               arg=len(want), timeout=20000)
        said = [x.lower() for x in page.evaluate("window.__said")]
        said = [x for i, x in enumerate(said) if i == 0 or x != said[i - 1]]
        assert said == want, (said, want)                    # the banner through both games
        shown = [at for text, at in page.evaluate("window.__shown") if text == str(number)]
        update_ms = shown[0] - settled_at * 1000
        shot(page, "marquee_live")

        # the stream breaks and stays broken while two games are played: nothing is lost
        page.route("**/events", lambda route: route.abort())
        table.drop_streams()
        page.wait_for_function("() => document.getElementById('link').className.includes('down')")
        table.play(2)
        games = table.wait_results(4)
        assert len(strip(page)) == 2
        page.unroute("**/events")
        page.wait_for_function("() => document.querySelectorAll('#strip li').length === 4", timeout=15000)
        assert strip(page) == [g[1] for g in reversed(games)]
        assert page.locator("#number").inner_text() == str(games[-1][1])     # the latest, played while away
        shot(page, "marquee_after_reconnect")
        print(f"marquee: load to live {load_ms:.0f} ms; settlement to number on screen {update_ms:.0f} ms")
        b.close()
