"""The statistics page (/stats) and every page under the daemon's Content-Security-Policy, in a
real browser against the running daemon: every test with its sample (three games: none can run,
and the verdict says so instead of a green badge), the same count of games as the pit, the
croupier on duty, the plots and the PDF fetched with the chef's token; the index; no page breaks
its own policy."""

import time

import pytest

pw = pytest.importorskip("playwright.sync_api")

from browserkit import Table, browser, shot


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path).start()
    yield t
    t.close()


def test_stats_page_and_every_page_under_its_policy(table):
    table.pit.casino = "Casino de Test"             # the daemon's `casino` setting
    assert table.api("PUT", "/table/croupier", {"croupier": "Marie"}, role="chef")[0] == 200
    table.play(3)
    table.wait_results(3)
    with pw.sync_playwright() as p:
        b = browser(p)
        page = b.new_page(viewport={"width": 1400, "height": 1000})        # no bypass: the page's own policy holds
        broken = []
        page.on("console", lambda m: broken.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: broken.append(str(e)))
        t0 = time.time()
        page.goto(table.base + "/stats#token=" + table.tokens["chef"])
        page.wait_for_selector("body[data-loaded]", timeout=60000)
        load_ms = (time.time() - t0) * 1000
        assert page.locator("#t-games").inner_text() == "3 coups"
        assert page.locator("#t-counts").inner_text().startswith("3 lancers, dont 0 coup nul")
        verdict = page.locator("#t-verdict")
        assert verdict.inner_text().startswith("pas assez de coups (3 sur ")       # never a green badge on 0 tests
        assert "ok" not in verdict.get_attribute("class").split()
        assert "Ce rapport ne dit rien encore" in page.locator("#verdict").inner_text()
        rows = page.locator("#family tr")
        assert rows.count() >= 16
        assert "pas assez de coups (3 sur 185)" in page.locator("#family tr[data-test='numbers']").inner_text()
        assert "Marie" in page.locator("#family").inner_text()
        assert "Marie" in page.locator("#croupiers").inner_text()
        # a croupier's p before its sample is said in words (was a bare "—"), and no "test(s)"
        assert "pas assez de coups" in page.locator("#croupiers tr").first.inner_text()
        assert page.locator("#alpha").inner_text().startswith("Aucun test fait sur ")
        charts = page.locator("#plots figure svg.chart")          # drawn in the page from the one analysis
        assert charts.count() >= 5
        assert "(3 coups)" in page.locator("#plots figure[data-plot='numeros'] title").first.text_content()
        # the report to file names its casino and its table: without the table's name, refused, saying where
        page.locator("#pdf").click()
        page.wait_for_function("() => document.getElementById('error').textContent.includes('table_name')")
        assert "nom du casino et celui de la table" in page.locator("#error").inner_text()
        refused = [m for m in broken if "409" in m]
        assert len(refused) == 1, broken                   # that one answer, logged by the browser
        broken.remove(refused[0])
        table.pit.table_name = "Table 4"                 # the daemon's `table_name` setting
        with page.expect_download() as d:
            page.locator("#pdf").click()
        assert d.value.suggested_filename == "cylindre-T1-statistiques.pdf"
        assert open(d.value.path(), "rb").read(5) == b"%PDF-"
        pdfium = pytest.importorskip("pypdfium2")
        first = pdfium.PdfDocument(d.value.path())[0].get_textpage().get_text_range()
        assert "Casino de Test" in first and "Table 4" in first and "Pas assez de coups pour conclure" in first
        assert "page 1 sur " in first
        shot(page, "stats", full=True)

        page.goto(table.base + "/")
        assert page.locator("a[href='/marquee']").count() == 1
        page.goto(table.base + "/marquee#token=" + table.tokens["display"])
        page.wait_for_selector("#link.up")
        assert page.locator("#strip li").count() == 3
        page.goto(table.base + "/pit#token=" + table.tokens["chef"])
        page.wait_for_selector("body[data-loaded]")
        assert page.locator("#t-croupier").inner_text().startswith("croupier : Marie")
        day = page.locator("#money tr[data-row='jour'] td").first.inner_text()
        assert day == "3", day                      # the pit counts the same games as the statistics
        assert broken == [], broken                     # no script error, no Content-Security-Policy violation
        print(f"\nstats: load (analysis, 4+ plots and the PDF fetched) {load_ms:.0f} ms")
        b.close()
