"""The marquee in a real browser against a running table: the number the wheel reported, in
its colour, the last-18 strip growing, and no number lost when the stream breaks."""

import time

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, shot


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
        page = b.new_page(viewport={"width": 1920, "height": 1080})
        t0 = time.time()
        page.goto(table.base + "/marquee#token=display-token")
        page.wait_for_function("document.getElementById('link').className.includes('up')")
        load_ms = (time.time() - t0) * 1000
        assert page.locator("#phase").inner_text().lower() == "faites vos jeux"
        assert "token" not in page.url                      # the token left the address bar
        assert page.evaluate("sessionStorage.getItem('cylindre.token')") == "display-token"

        page.evaluate("""() => { window.__shown = []; new MutationObserver(() =>
            window.__shown.push([document.getElementById('number').textContent, Date.now()]))
            .observe(document.getElementById('number'), {childList: true, characterData: true, subtree: true}); }""")
        table.play(2)
        games = table.wait_results(2)
        page.wait_for_function("document.querySelectorAll('#strip li').length === 2")
        spin, number, settled_at = games[-1]
        assert page.locator("#number").inner_text() == str(number)
        colour = "zero" if number == 0 else ("rouge" if number in (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36) else "noir")
        assert page.locator("#number").get_attribute("data-colour") == colour
        assert strip(page) == [g[1] for g in reversed(games)]
        page.wait_for_function("document.getElementById('phase').textContent.toLowerCase() !== ''")
        shown = [at for text, at in page.evaluate("window.__shown") if text == str(number)]
        update_ms = shown[0] - settled_at * 1000
        shot(page, "marquee_live")

        # the stream breaks and stays broken while two games are played: nothing is lost
        page.route("**/events", lambda route: route.abort())
        table.drop_streams()
        page.wait_for_function("document.getElementById('link').className.includes('down')")
        table.play(2)
        games = table.wait_results(4)
        assert len(strip(page)) == 2
        page.unroute("**/events")
        page.wait_for_function("document.querySelectorAll('#strip li').length === 4", timeout=15000)
        assert strip(page) == [g[1] for g in reversed(games)]
        assert page.locator("#number").inner_text() == str(games[-1][1])     # the latest, played while away
        shot(page, "marquee_after_reconnect")
        print(f"marquee: load to live {load_ms:.0f} ms; settlement to number on screen {update_ms:.0f} ms")
        b.close()
