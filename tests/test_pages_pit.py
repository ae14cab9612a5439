"""The pit page in a real browser against a running table: the bets by player, a held bet
refunded, an alert acknowledged with a comment, the last games with their evidence."""

import time

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, shot
from host_tools.daemon import alerts as A


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path).start()
    yield t
    t.close()


def test_pit_resolves_a_held_bet_and_acknowledges_an_alert(table):
    table.play(1)
    table.wait_results(1)
    st, held = table.api("POST", "/bets", {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000})
    assert st == 201
    # the recovery after a power cut would hold it (docs/daemon.md): the chef must decide
    with table.daemon.j.tx() as db:
        db.execute("UPDATE bets SET status='held', spin=99 WHERE id=?", (held["id"],))
    for player, kind, stake in (("bo", "rouge", 2000), ("bo", "pair", 500), ("cy", "noir", 1500)):
        assert table.api("POST", "/bets", {"player": player, "type": kind, "stake": stake})[0] == 201
    launches = [{"spin": 1, "at": 0, "violations": ["rotor_not_reversed"]}]
    [alert] = table.alerts.sync(A.evaluate({"launches": launches}, A.thresholds({}), time.time()))

    with pw.sync_playwright() as p:
        b = browser(p)
        page = b.new_page(viewport={"width": 1600, "height": 1000})
        t0 = time.time()
        page.goto(table.base + "/pit#token=chef-token")
        page.wait_for_selector("body[data-loaded]")
        load_ms = (time.time() - t0) * 1000
        assert page.locator("#t-link").inner_text() == "liaison établie"
        assert page.locator("#n-held").inner_text() == "1" and page.locator("#n-alerts").inner_text() == "1"
        rows = {r.locator("td").nth(0).inner_text(): r.locator("td").nth(2).inner_text()
                for r in page.locator("#bets tr").all()}
        assert rows == {"bo": "25,00 €", "cy": "15,00 €"}
        games = page.locator("#games tr")
        assert games.count() == 1
        shot(page, "pit_before")

        page.locator(f"[data-alert='{alert['id']}'] button").click()           # no comment: refused here
        assert "commentaire est obligatoire" in page.locator("#error").inner_text()
        page.locator(f"[data-alert='{alert['id']}'] input").fill("rotor vérifié, inversé à la main; croupier prévenu")
        page.locator(f"[data-alert='{alert['id']}'] button").click()
        page.wait_for_selector(f"[data-alert='{alert['id']}'].done")
        assert table.alerts.get(alert["id"])["comment"] == "rotor vérifié, inversé à la main; croupier prévenu"

        page.locator(f"[data-bet='{held['id']}'] button.stop").click()         # Rembourser
        page.wait_for_function("document.getElementById('n-held').textContent === ''")
        assert table.api("GET", f"/bets/{held['id']}")[1]["status"] == "refunded"

        spin = int(games.nth(0).locator("td").nth(0).inner_text())
        games.nth(0).locator("button").click()
        page.wait_for_selector("#evidence:not([hidden])")
        ev = page.locator("#evidence").inner_text()
        assert f"coup {spin}" in ev and '"ev":"launch"' in ev and "trame " in ev

        page.evaluate("""() => { const g = document.getElementById('games'); new MutationObserver(() => {
            if (g.querySelectorAll('tr').length === 2 && !window.__row) window.__row = Date.now(); })
            .observe(g, {childList: true}); }""")
        table.play(1)
        settled_at = table.wait_results(2)[-1][2]
        page.wait_for_function("document.querySelectorAll('#games tr').length === 2")
        update_ms = page.evaluate("window.__row") - settled_at * 1000
        shot(page, "pit_after")

        page.once("dialog", lambda d: d.accept())                                # "Fermer la table ?"
        page.locator("#b-close").click()
        page.wait_for_function("document.getElementById('t-open').textContent === 'fermée'")
        assert table.api("GET", "/state")[1]["table"]["phase"] == "closed"
        page.locator("#b-open").click()
        page.wait_for_function("document.getElementById('t-open').textContent.startsWith('ouverte')")
        print(f"\npit: load {load_ms:.0f} ms; settlement to the new game's row on the page {update_ms:.0f} ms")
        b.close()
